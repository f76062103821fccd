/*
 * jitmap.c - see jitmap.h.
 *
 * A perf map names code the kernel only knows as anonymous memory, so
 * it is laid over the snapshot's anonymous mappings: its symbols are
 * grouped into regions (symbols closer than JIT_GAP join one region),
 * each region a mapping of the map's capture file at offset == start, so
 * dtsym's file address (pc - start + offset + load_bias_hint, bias 0) is
 * the pc itself and the file's symbols hold runtime addresses.
 *
 * The file lives in /tmp, where anyone may write: it is opened without
 * following links or blocking on a FIFO, believed only when it is a
 * regular file owned by the process's user or root, and read only up to
 * JITMAP_MAX_BYTES.  Each version stored is a capture file of its own
 * (the writer keeps one file per path and build id, so the second
 * version of pid's map is "/tmp/perf-PID.map#2"); snapshots in time order
 * then name a region by the version in force at the sample's time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "jitdump.h"
#include "jitmap.h"
#include "util.h"

/* Symbols this close belong to one region (V8 and the JVM allocate code
 * in pages of a few hundred KiB; gaps within one stay small). */
#define JIT_GAP		(1ULL << 20)

struct jitent {
	uint32_t	pid;
	uid_t		uid;		/* the process's, learnt while it lived */
	int		uid_known;
	int		warned;
	/* identity of the version stored last: changes mean a new read */
	struct fid {
		dev_t		dev;
		ino_t		ino;
		off_t		size;
		struct timespec	mtime;
	}		map_id, dump_id;
	char		*dump;		/* path of its jitdump, as it mapped it */
	uint32_t	version;	/* capture files stored for it */
	char		name[4200];	/* the regions' mapping name */
	/*
	 * base: every address ever described, by the name it had first,
	 * for snapshots older than since; cur: the newest reading, from
	 * since on.  since is when a reading first renamed an address
	 * (code replaced in place): 0 while none has, and then cur is base.
	 */
	struct jver {
		uint32_t	file_id;	/* 0: none */
		uint64_t	*reg;		/* regions: start, end pairs */
		size_t		nreg;
	}		base, cur;
	struct dtcap_sym *bsyms;	/* base's symbols, names strdup'd */
	size_t		nb, bcap;
	uint64_t	since;
};

struct jitmap_cache {
	struct jitent	*v;
	size_t		cap, n;
	struct dt_htab	ix;		/* pid -> index in v */
};

struct jitmap_cache *jitmap_cache_new(void)
{
	return calloc(1, sizeof(struct jitmap_cache));
}

void jitmap_cache_free(struct jitmap_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		struct jitent *e = &c->v[i];
		free(e->base.reg);
		free(e->cur.reg);
		for (size_t k = 0; k < e->nb; k++)
			free((char *)e->bsyms[k].name);
		free(e->bsyms);
		free(e->dump);
	}
	free(c->v);
	dt_htab_free(&c->ix);
	free(c);
}

static uint64_t ent_hash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct jitmap_cache *)ctx)->v[e].pid);
}

/* pid's entry, made if create (NULL when absent or out of memory) */
static struct jitent *ent_get(struct jitmap_cache *c, uint32_t pid, int create)
{
	uint64_t h = dt_htab_hash_int(pid);
	uint32_t e;

	for (size_t i = dt_htab_first(&c->ix, h); (e = dt_htab_at(&c->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&c->ix, i))
		if (c->v[e].pid == pid)
			return &c->v[e];
	if (!create || DT_GROW(c->v, c->cap, c->n, 1, 16))
		return NULL;
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	c->v[c->n].pid = pid;
	if (dt_htab_add(&c->ix, h, (uint32_t)c->n, ent_hash, c))
		return NULL;
	return &c->v[c->n++];
}

/* ------------------------------------------------------------- parsing */

static int hexnum(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	int nd = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, nd++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (nd >= 16)
			return -1;	/* more than 64 bits */
		x = x << 4 | (uint64_t)d;
	}
	if (nd == 0)
		return -1;
	*pp = p;
	*v = x;
	return 0;
}

struct pline {
	uint64_t	start, size;
	size_t		line;		/* order in the file */
	const char	*name;
};

static int pline_cmp(const void *a, const void *b)
{
	const struct pline *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int jitmap_parse(const char *text, size_t len, struct dtcap_sym **syms, size_t *nsyms,
		 char **names, size_t *bad)
{
	struct pline *pl = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *nm = malloc(len + 1);	/* every name fits in the text's bytes */
	char *np = nm;

	*syms = NULL;
	*nsyms = 0;
	*names = NULL;
	*bad = 0;
	if (!nm)
		return -1;
	for (const char *p = text, *end = text + len; p < end; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;
		uint64_t start, size;

		p = nl ? nl + 1 : end;
		while (le > q && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
			le--;
		if (le == q)
			continue;	/* blank lines are no error */
		if (hexnum(&q, le, &start) || q == le || (*q != ' ' && *q != '\t'))
			goto badline;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (hexnum(&q, le, &size) || q == le || (*q != ' ' && *q != '\t'))
			goto badline;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		/* a name with a NUL in it ends there: text, not bytes */
		size_t l = strnlen(q, (size_t)(le - q));
		if (l == 0 || size == 0 || start + size < start)
			goto badline;
		if (DT_GROW(pl, cap, n, 1, 256)) {
			free(pl);
			free(nm);
			return -1;
		}
		memcpy(np, q, l);
		np[l] = '\0';
		pl[n++] = (struct pline){ start, size, lineno, np };
		np += l + 1;
		continue;
badline:
		(*bad)++;
	}
	if (n)
		qsort(pl, n, sizeof(*pl), pline_cmp);
	struct dtcap_sym *sv = n ? malloc(n * sizeof(*sv)) : NULL;
	if (n && !sv) {
		free(pl);
		free(nm);
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		/* the same start again: the later line describes the code now there */
		if (k && sv[k - 1].addr == pl[i].start)
			k--;
		sv[k++] = (struct dtcap_sym){ pl[i].start, pl[i].size, pl[i].name };
	}
	free(pl);
	*syms = sv;
	*nsyms = k;
	*names = nm;
	return 0;
}

/* ------------------------------------------------------------- reading */

/* path opened if it can be believed (see jitmap_read_file), else -1 */
static int open_checked(const char *path, uid_t uid, struct stat *stp, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			dtu_seterr(err, errlen, "%s: a symbolic link, not read", path);
		else if (e != ENOENT)
			dtu_seterr(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		dtu_seterr(err, errlen, "%s: not a regular file, not read", path);
		goto fail;
	}
	if (st.st_uid != uid && st.st_uid != 0) {
		dtu_seterr(err, errlen, "%s: owned by uid %u, not the process's (%u) or root; "
			   "not believed", path, (unsigned)st.st_uid, (unsigned)uid);
		goto fail;
	}
	*stp = st;
	return fd;
fail:
	close(fd);
	errno = EINVAL;
	return -1;
}

char *jitmap_read_file(const char *path, uid_t uid, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	int fd = open_checked(path, uid, &st, err, errlen);

	if (fd < 0)
		return NULL;
	if (st.st_size < 0 || (uint64_t)st.st_size > JITMAP_MAX_BYTES) {
		dtu_seterr(err, errlen, "%s: %lld bytes, more than the %u read", path,
			   (long long)st.st_size, JITMAP_MAX_BYTES);
		goto fail;
	}
	/* it may grow while read: what was there at the fstat, no more */
	size_t want = (size_t)st.st_size, got = 0;
	buf = malloc(want + 1);
	if (!buf) {
		dtu_seterr(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	while (got < want) {
		ssize_t r = read(fd, buf + got, want - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
			free(buf);
			goto fail;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	/* a line cut by a writer still appending is left for the next read */
	while (got > 0 && buf[got - 1] != '\n')
		got--;
	buf[got] = '\0';
	close(fd);
	*len = got;
	return buf;
fail:
	close(fd);
	errno = EINVAL;
	return NULL;
}

/* ------------------------------------------------------------- applying */

static void map_path(char *buf, size_t len, uint32_t pid)
{
	snprintf(buf, len, "/tmp/perf-%" PRIu32 ".map", pid);
}

static void fid_set(struct fid *f, const struct stat *st)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
}

/* The identities of pid's perf map and jitdump now (zeroed: absent). */
static void current(const struct jitent *e, struct fid *map, struct fid *dump)
{
	char path[64];
	struct stat st;

	memset(map, 0, sizeof(*map));
	memset(dump, 0, sizeof(*dump));
	map_path(path, sizeof(path), e->pid);
	/* whatever is there: a link or a FIFO is refused when opened, and said */
	if (lstat(path, &st) == 0)
		fid_set(map, &st);
	if (e->dump && lstat(e->dump, &st) == 0)
		fid_set(dump, &st);
}

static int fid_eq(const struct fid *a, const struct fid *b)
{
	return !memcmp(a, b, sizeof(*a));
}

int jitmap_changed(struct jitmap_cache *c, uint32_t pid)
{
	struct jitent *e = ent_get(c, pid, 0);
	struct fid map, dump, none = { 0 };

	if (!e)
		return jitmap_exists(pid);	/* appeared since the last snapshot */
	current(e, &map, &dump);
	if (fid_eq(&map, &none) && fid_eq(&dump, &none))
		return 0;
	return !fid_eq(&map, &e->map_id) || !fid_eq(&dump, &e->dump_id);
}

/* pid's user, while it lives (its /proc directory belongs to its euid) */
static void learn_uid(struct jitent *e)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%" PRIu32, e->pid);
	if (stat(path, &st) == 0) {
		e->uid = st.st_uid;
		e->uid_known = 1;
	}
}

static void warn_once(struct jitent *e, char *err, size_t errlen, const char *msg)
{
	if (msg[0] && !e->warned) {
		e->warned = 1;
		dtu_seterr(err, errlen, "%s", msg);
	}
}

/* The symbols of pid's jitdump, if it can be believed; NULL/0 if not. */
static void read_dump(struct jitent *e, uid_t uid, struct dtcap_sym **syms, size_t *n,
		      char **names, char *err, size_t errlen)
{
	char msg[600] = "", why[256] = "";
	struct stat st;
	int fd = open_checked(e->dump, uid, &st, msg, sizeof(msg));

	*syms = NULL;
	*n = 0;
	*names = NULL;
	if (fd < 0) {
		warn_once(e, err, errlen, msg);
		return;
	}
	if (jitdump_read(fd, syms, n, names, why, sizeof(why)) < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", e->dump, why);
		warn_once(e, err, errlen, msg);
	}
	close(fd);
}

static int sym_addr_cmp(const void *a, const void *b)
{
	const struct dtcap_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Store syms (sorted) as a new capture file of e's: its id and regions in v. */
static int put_version(struct jitent *e, struct dtcap_writer *w, struct jver *v,
		       const struct dtcap_sym *syms, size_t nsyms)
{
	char fpath[4300];

	e->version++;
	if (e->version == 1)
		snprintf(fpath, sizeof(fpath), "%s", e->name);
	else
		snprintf(fpath, sizeof(fpath), "%s#%" PRIu32, e->name, e->version);
	struct dtcap_file f = { .path = fpath, .nsyms = (uint32_t)nsyms, .syms = syms };
	v->file_id = nsyms ? dtcap_put_file(w, &f) : 0;
	if (nsyms && !v->file_id)
		return -1;
	/* regions: symbols sorted by start, each extending the last region
	 * when it begins within JIT_GAP of its end */
	free(v->reg);
	v->reg = NULL;
	v->nreg = 0;
	size_t rcap = 0;
	for (size_t i = 0; i < nsyms; i++) {
		uint64_t s = syms[i].addr, en = s + syms[i].size;
		if (v->nreg && s <= v->reg[2 * v->nreg - 1] + JIT_GAP) {
			if (en > v->reg[2 * v->nreg - 1])
				v->reg[2 * v->nreg - 1] = en;
			continue;
		}
		if (DT_GROW(v->reg, rcap, 2 * v->nreg, 2, 16))
			break;
		v->reg[2 * v->nreg] = s;
		v->reg[2 * v->nreg + 1] = en;
		v->nreg++;
	}
	return 0;
}

/* Read and store pid's map and jitdump if either changed: versions in e. */
static int load(struct jitent *e, struct dtcap_writer *w, uint64_t now, char *err,
		size_t errlen)
{
	char path[64], msg[512] = "";
	struct fid map, dump, none = { 0 };
	size_t len, nmap = 0, ndump = 0, bad = 0;
	struct dtcap_sym *msyms = NULL, *dsyms = NULL;
	char *mnames = NULL, *dnames = NULL;
	/* gone before its user was learnt: only root's word is taken */
	uid_t uid = e->uid_known ? e->uid : 0;

	current(e, &map, &dump);
	if ((fid_eq(&map, &none) && fid_eq(&dump, &none)) ||
	    (e->base.file_id && fid_eq(&map, &e->map_id) && fid_eq(&dump, &e->dump_id)))
		return 0;
	map_path(path, sizeof(path), e->pid);
	if (!fid_eq(&map, &none)) {
		char *text = jitmap_read_file(path, uid, &len, msg, sizeof(msg));
		if (!text)
			warn_once(e, err, errlen, msg);
		else if (jitmap_parse(text, len, &msyms, &nmap, &mnames, &bad) < 0)
			nmap = 0;	/* memory: the frames stay unnamed */
		free(text);
		if (bad) {
			snprintf(msg, sizeof(msg),
				 "%s: %zu lines not of the form START SIZE NAME, skipped", path, bad);
			warn_once(e, err, errlen, msg);
		}
	}
	if (!fid_eq(&dump, &none))
		read_dump(e, uid, &dsyms, &ndump, &dnames, err, errlen);

	/* both sorted; at one start the jitdump's record wins (it is exact) */
	size_t nsyms = 0;
	struct dtcap_sym *syms = nmap + ndump ? malloc((nmap + ndump) * sizeof(*syms)) : NULL;
	for (size_t i = 0, j = 0; syms && (i < nmap || j < ndump);) {
		if (j < ndump && (i == nmap || dsyms[j].addr <= msyms[i].addr)) {
			if (i < nmap && msyms[i].addr == dsyms[j].addr)
				i++;
			syms[nsyms++] = dsyms[j++];
		} else {
			syms[nsyms++] = msyms[i++];
		}
	}
	snprintf(e->name, sizeof(e->name), "%s", !fid_eq(&map, &none) ? path : e->dump);
	/* into base, the addresses it did not know; a known one renamed
	 * makes this reading the truth from now on only */
	int renamed = 0;
	size_t nb0 = e->nb;
	for (size_t i = 0; i < nsyms; i++) {
		size_t lo = DTU_UPPER_BOUND(nb0, k, e->bsyms[k].addr, syms[i].addr);
		if (lo && e->bsyms[lo - 1].addr == syms[i].addr) {
			renamed |= strcmp(e->bsyms[lo - 1].name, syms[i].name) != 0;
			continue;
		}
		char *nm = strdup(syms[i].name);
		if (!nm || DT_GROW(e->bsyms, e->bcap, e->nb, 1, 64)) {
			free(nm);
			break;
		}
		e->bsyms[e->nb++] = (struct dtcap_sym){ syms[i].addr, syms[i].size, nm };
	}
	if (e->nb > nb0)
		qsort(e->bsyms, e->nb, sizeof(*e->bsyms), sym_addr_cmp);
	if (renamed)
		e->since = now ? now : 1;
	int ret = put_version(e, w, &e->base, e->bsyms, e->nb);
	if (ret == 0 && e->since)
		ret = put_version(e, w, &e->cur, syms, nsyms);
	free(syms);
	free(msyms);
	free(mnames);
	free(dsyms);
	free(dnames);
	e->map_id = map;
	e->dump_id = dump;
	return ret;
}

/* pid's jitdump, if it mapped one (perf finds it the same way), or NULL */
static const char *find_dump(uint32_t pid, const struct dtcap_map *mv, size_t nm)
{
	char want[32];
	size_t wl = (size_t)snprintf(want, sizeof(want), "/jit-%" PRIu32 ".dump", pid);

	for (size_t i = 0; i < nm; i++) {
		const char *n = mv[i].name;
		size_t l = n ? strlen(n) : 0;
		if (l > wl && n[0] == '/' && !strcmp(n + l - wl, want))
			return n;
	}
	return NULL;
}

static int file_backed(const struct dtcap_map *m)
{
	return m->file || (m->name && m->name[0] == '/' && m->name[1] != '/');
}

/* Append to out the parts of [s, e) outside the sorted pairs cut[]. */
static int subtract(struct dtcap_map **out, size_t *n, size_t *cap, const struct dtcap_map *m,
		    const uint64_t *cut, size_t ncut, int keep_offset)
{
	uint64_t s = m->start;

	for (size_t i = 0; i <= ncut && s < m->end; i++) {
		uint64_t cs = i < ncut ? cut[2 * i] : m->end, ce = i < ncut ? cut[2 * i + 1] : m->end;
		if (ce <= s)
			continue;
		uint64_t pe = cs < m->end ? cs : m->end;
		if (pe > s) {
			if (DT_GROW(*out, *cap, *n, 1, 16))
				return -1;
			struct dtcap_map *p = &(*out)[(*n)++];
			*p = *m;
			p->start = s;
			p->end = pe;
			p->offset = keep_offset ? m->offset + (s - m->start) : s;
		}
		if (ce > s)
			s = ce;
	}
	return 0;
}

/* mv with version v's regions laid over it, in *out (NULL: nothing to lay) */
static void build(const struct jitent *e, const struct jver *v, const struct dtcap_map *mv,
		  size_t nm, struct dtcap_map **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	if (!v->file_id || !v->nreg)
		return;
	/* file-backed mappings, sorted, cut the regions; regions cut the rest */
	uint64_t *fb = NULL;
	size_t nfb = 0, fcap = 0, n = 0, cap = 0;
	struct dtcap_map *o = NULL, *regs = NULL;
	size_t nregs = 0, regcap = 0;
	for (size_t i = 0; i < nm; i++) {
		if (!file_backed(&mv[i]) || mv[i].end <= mv[i].start)
			continue;
		if (DT_GROW(fb, fcap, 2 * nfb, 2, 16))
			goto oom;
		fb[2 * nfb] = mv[i].start;
		fb[2 * nfb + 1] = mv[i].end;
		nfb++;
	}
	/* sort pairs by start (insertion: a process maps tens of files) */
	for (size_t i = 1; i < nfb; i++)
		for (size_t j = i; j > 0 && fb[2 * j - 2] > fb[2 * j]; j--) {
			uint64_t s = fb[2 * j], en = fb[2 * j + 1];
			fb[2 * j] = fb[2 * j - 2];
			fb[2 * j + 1] = fb[2 * j - 1];
			fb[2 * j - 2] = s;
			fb[2 * j - 1] = en;
		}
	for (size_t i = 0; i < v->nreg; i++) {
		struct dtcap_map r = { .start = v->reg[2 * i], .end = v->reg[2 * i + 1],
				       .file = v->file_id, .prot = 5, .name = e->name };
		if (subtract(&regs, &nregs, &regcap, &r, fb, nfb, 0))
			goto oom;
	}
	/* the regions left, as start/end pairs (still sorted) */
	uint64_t *rp = nregs ? malloc(2 * nregs * sizeof(*rp)) : NULL;
	if (nregs && !rp)
		goto oom;
	for (size_t i = 0; i < nregs; i++) {
		rp[2 * i] = regs[i].start;
		rp[2 * i + 1] = regs[i].end;
	}
	for (size_t i = 0; i < nm; i++) {
		int rc;
		if (file_backed(&mv[i])) {
			rc = DT_GROW(o, cap, n, 1, 16);
			if (!rc)
				o[n++] = mv[i];
		} else {
			rc = subtract(&o, &n, &cap, &mv[i], rp, nregs, 1);
		}
		if (rc) {
			free(rp);
			goto oom;
		}
	}
	free(rp);
	if (DT_GROW(o, cap, n, nregs, 16))
		goto oom;
	if (nregs)
		memcpy(o + n, regs, nregs * sizeof(*regs));
	n += nregs;
	free(regs);
	free(fb);
	*out = o;
	*nout = n;
	return;
oom:
	free(regs);
	free(fb);
	free(o);	/* memory: the frames stay unnamed, the capture good */
}

int jitmap_apply(struct jitmap_cache *c, struct dtcap_writer *w, uint32_t pid, uint64_t ts,
		 uint64_t now, const struct dtcap_map *mv, size_t nm, struct dtcap_map **out,
		 size_t *nout, struct dtcap_map **out2, size_t *nout2, uint64_t *ts2, char *err,
		 size_t errlen)
{
	struct jitent *e;

	*out = *out2 = NULL;
	*nout = *nout2 = 0;
	*ts2 = 0;
	const char *dump = find_dump(pid, mv, nm);
	if (!dump && !jitmap_exists(pid) && !ent_get(c, pid, 0))
		return 0;	/* the common case: one lstat, no entry */
	if ((e = ent_get(c, pid, 1)) == NULL)
		return 0;
	if (dump && (!e->dump || strcmp(e->dump, dump))) {
		free(e->dump);
		e->dump = strdup(dump);
	}
	learn_uid(e);
	if (load(e, w, now, err, errlen) < 0)
		return -1;
	if (!e->since || ts < e->since) {
		build(e, &e->base, mv, nm, out, nout);
		if (e->since) {
			build(e, &e->cur, mv, nm, out2, nout2);
			*ts2 = e->since;
		}
	} else {
		build(e, &e->cur, mv, nm, out, nout);
	}
	return 0;
}
