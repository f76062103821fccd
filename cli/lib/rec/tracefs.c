/* tracefs.c - see tracefs.h. */
#include "dt_grow.h"
#include "tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static int
has_events(const char *root)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", root);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *
dtt_root(char *err, size_t errlen)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char ev[64];
		struct stat st;
		if (has_events(roots[i]))
			return roots[i];
		/* mounted, but not for us: mounting again would not help */
		snprintf(ev, sizeof(ev), "%s/events", roots[i]);
		if (stat(ev, &st) < 0 && errno == EACCES) {
			dtu_seterr(err, errlen, "%s is not readable by this user (uid %u): "
				   "tracepoints, syscalls and kprobes need tracefs; run dtrec as "
				   "root, or have root give this user read access to %s", roots[i],
				   (unsigned)getuid(), roots[i]);
			return NULL;
		}
	}
	/* not mounted: what `mount -t tracefs nodev /sys/kernel/tracing` does */
	if (mount("nodev", roots[0], "tracefs", 0, NULL) == 0 && has_events(roots[0]))
		return roots[0];
	if (errno == EPERM || errno == EACCES)
		dtu_seterr(err, errlen, "tracefs is not mounted and mounting it needs root: "
			   "mount -t tracefs nodev /sys/kernel/tracing");
	else
		dtu_seterr(err, errlen, "tracefs is not mounted at /sys/kernel/tracing and "
			   "mounting it failed: %s", strerror(errno));
	return NULL;
}

static int
is_dir(const char *base, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, name);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted subdirectory names of dir (malloc'd), or NULL with errno. */
static char **
subdirs(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !is_dir(dir, de->d_name))
			continue;
		if (DT_GROW(v, cap, *n, 1, 64))
			goto nomem;
		if ((v[*n] = strdup(de->d_name)) == NULL)
			goto nomem;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmpstr);
	else {
		free(v);
		v = calloc(1, sizeof(*v));
	}
	return v;
nomem:
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	errno = ENOMEM;
	return NULL;
}

static void
free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
dtt_walk(const char *root, int (*cb)(const char *, const char *, void *), void *ctx,
	 char *err, size_t errlen)
{
	char base[256], sub[512];
	char **sys, **ev;
	size_t nsys, nev;
	int ret = 0;

	snprintf(base, sizeof(base), "%s/events", root);
	if ((sys = subdirs(base, &nsys)) == NULL) {
		dtu_seterr(err, errlen, "%s: %s", base, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < nsys && ret == 0; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", base, sys[i]);
		if ((ev = subdirs(sub, &nev)) == NULL)
			continue;	/* a subsystem we may not read: not ours to list */
		for (size_t j = 0; j < nev && ret == 0; j++)
			ret = cb(sys[i], ev[j], ctx);
		free_strs(ev, nev);
	}
	free_strs(sys, nsys);
	return ret;
}

/* "field:TYPE NAME[N];" -> type, name; arrays get "[N]" on the type. */
static int
parse_decl(const char *decl, struct dtt_field *f)
{
	char d[256], *name, *br;
	size_t l;

	snprintf(d, sizeof(d), "%s", decl);
	l = strlen(d);
	while (l && (d[l - 1] == ' ' || d[l - 1] == '\t'))
		d[--l] = '\0';
	br = NULL;
	if (l && d[l - 1] == ']') {
		br = strrchr(d, '[');
		if (br == NULL)
			return -1;
	}
	/* the name is the last identifier before any [N] */
	name = br ? br : d + l;
	while (name > d && (name[-1] == '_' || (name[-1] >= 'a' && name[-1] <= 'z') ||
			    (name[-1] >= 'A' && name[-1] <= 'Z') ||
			    (name[-1] >= '0' && name[-1] <= '9')))
		name--;
	if (name == d || (br ? br : d + l) == name)
		return -1;
	snprintf(f->name, sizeof(f->name), "%.*s", (int)((br ? br : d + l) - name), name);
	l = (size_t)(name - d);
	while (l && d[l - 1] == ' ')
		l--;
	snprintf(f->type, sizeof(f->type), "%.*s%s", (int)l, d, br ? br : "");
	return 0;
}

int
dtt_read_format(const char *root, const char *sys, const char *name,
		struct dtt_format *fmt, char *err, size_t errlen)
{
	char path[512], *text, *line, *save = NULL;

	memset(fmt, 0, sizeof(*fmt));
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, name);
	text = dtu_read_file(path, NULL);
	if (text == NULL) {
		if (errno == ENOENT)
			dtu_seterr(err, errlen, "no tracepoint %s:%s in this kernel", sys, name);
		else
			dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct dtt_field f;
		char *p = line, *semi;
		unsigned off, size, sgn;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "ID:", 3) == 0) {
			fmt->id = (uint32_t)strtoul(p + 3, NULL, 10);
			continue;
		}
		if (strncmp(p, "field:", 6) != 0 || (semi = strchr(p, ';')) == NULL)
			continue;
		*semi = '\0';
		memset(&f, 0, sizeof(f));
		if (sscanf(semi + 1, " offset:%u; size:%u; signed:%u;", &off, &size, &sgn) != 3 ||
		    parse_decl(p + 6, &f) < 0 || off > 0xffff || size > 0xffff)
			continue;
		if (strncmp(f.name, "common_", 7) == 0)
			continue;
		f.offset = (uint16_t)off;
		f.size = (uint16_t)size;
		f.is_signed = sgn != 0;
		if (strncmp(f.type, "__data_loc ", 11) == 0 || strncmp(f.type, "__rel_loc ", 10) == 0) {
			f.kind = f.type[2] == 'd' ? DTT_DATALOC : DTT_RELLOC;
			f.is_char = strstr(f.type, "char") != NULL;
		} else if (strchr(f.type, '[')) {
			f.kind = strncmp(f.type, "char", 4) == 0 || strncmp(f.type, "const char", 10) == 0 ||
				 strncmp(f.type, "unsigned char", 13) == 0 ? DTT_CHARS : DTT_BYTES;
		} else if (size >= 1 && size <= 8) {
			f.kind = DTT_SCALAR;	/* size 0 would be bytes of nothing: no slot */
		} else {
			f.kind = DTT_BYTES;
		}
		if (fmt->nfields < DTT_MAXFIELDS)
			fmt->f[fmt->nfields++] = f;
	}
	free(text);
	if (fmt->id == 0) {
		dtu_seterr(err, errlen, "%s: no ID line", path);
		return -1;
	}
	return 0;
}

void
dtt_layout(const struct dtt_format *fmt, unsigned skip, struct dtt_layout *lay,
	   struct dtcap_probe *out)
{
	unsigned scalars = 0, wide = 0, slot = 0, spare, each;

	memset(lay, 0, sizeof(*lay));
	for (unsigned i = skip; i < fmt->nfields; i++) {
		if (fmt->f[i].kind == DTT_SCALAR)
			scalars++;
		else
			wide++;
	}
	spare = scalars < DTCAP_MAXARGS ? DTCAP_MAXARGS - scalars : 0;
	each = wide ? spare / wide : 0;
	if (each > 8)
		each = 8;
	for (unsigned i = skip; i < fmt->nfields && lay->nargs < DTCAP_MAXARGS; i++) {
		const struct dtt_field *f = &fmt->f[i];
		unsigned n = 1;

		if (f->kind != DTT_SCALAR) {
			unsigned want = f->kind == DTT_CHARS || f->kind == DTT_BYTES ?
					(f->size + 7u) / 8u : 8u;
			n = want < each ? want : each;
			if (n == 0)
				continue;	/* no room: the scalars come first */
		}
		if (slot + n > DTCAP_MAXARGS)
			break;
		lay->a[lay->nargs].field = (uint16_t)i;
		lay->a[lay->nargs].slot = (uint8_t)slot;
		lay->a[lay->nargs].nslots = (uint8_t)n;
		if (out) {
			unsigned k = lay->nargs;
			snprintf(out->args[k].name, DTCAP_ARGNAMELEN, "%.*s", DTCAP_ARGNAMELEN - 1,
				 f->name);
			if (f->kind == DTT_SCALAR)
				snprintf(out->args[k].type, DTCAP_ARGNAMELEN, "%.*s",
					 DTCAP_ARGNAMELEN - 1, f->type);
			else if (f->kind == DTT_BYTES || (f->kind != DTT_CHARS && !f->is_char))
				snprintf(out->args[k].type, DTCAP_ARGNAMELEN, "u8[%u]", n * 8);
			else
				snprintf(out->args[k].type, DTCAP_ARGNAMELEN, "char[%u]", n * 8);
			out->args[k].slot = (uint8_t)slot;
			out->args[k].nslots = (uint8_t)n;
		}
		lay->nargs++;
		slot += n;
	}
	lay->nslots = slot;
	if (out)
		out->nargs = lay->nargs;
}

unsigned
dtt_decode(const struct dtt_format *fmt, const struct dtt_layout *lay, const void *raw,
	   size_t rawlen, uint64_t *slots)
{
	const unsigned char *r = raw;

	memset(slots, 0, DTCAP_MAXARGS * sizeof(*slots));
	for (unsigned k = 0; k < lay->nargs; k++) {
		const struct dtt_field *f = &fmt->f[lay->a[k].field];
		unsigned char *dst = (unsigned char *)&slots[lay->a[k].slot];
		size_t room = 8u * lay->a[k].nslots, off = f->offset, len = f->size;

		if (off + len > rawlen)
			continue;
		switch (f->kind) {
		case DTT_SCALAR: {
			uint64_t v = 0;
			memcpy(&v, r + off, len);	/* little-endian host */
			if (f->is_signed && len < 8 && (v >> (8 * len - 1)) & 1)
				v |= ~0ULL << (8 * len);
			slots[lay->a[k].slot] = v;
			break;
		}
		case DTT_DATALOC:
		case DTT_RELLOC: {
			uint32_t loc;
			if (len < 4)
				continue;
			memcpy(&loc, r + off, 4);
			off = (loc & 0xffff) + (f->kind == DTT_RELLOC ? off + len : 0);
			len = loc >> 16;
			if (off > rawlen || len > rawlen - off)
				continue;
		}
			/* FALLTHROUGH */
		default:
			if (len > room)
				len = room;
			memcpy(dst, r + off, len);
			/* text stays NUL-terminated within its slots */
			if ((f->kind == DTT_CHARS || f->is_char) && len == room)
				dst[room - 1] = '\0';
			break;
		}
	}
	return lay->nslots;
}
