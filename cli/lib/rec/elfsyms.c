/* elfsyms.c - see elfsyms.h. */
#include "dt_buildid.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "elfsyms.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct owned {
	struct elfsyms_file ef;
	struct dtcap_sym *syms;
	char	*names;		/* one block holding every symbol name */
	char	*path;
};

struct centry {
	char	*path;
	dev_t	dev;
	ino_t	ino;
	struct timespec mtime;
	struct owned *file;	/* NULL: could not be read */
	char	*err;
};

struct elfsyms_cache {
	struct centry	**v;		/* every file read, oldest first */
	size_t		n, cap;
	struct dt_htab	ix;		/* path -> index in v */
};


static int
symcmp(const void *a, const void *b)
{
	const struct dtcap_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases at one address: prefer the longer (usually sized) symbol */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
elfsyms_file_free(struct elfsyms_file *f)
{
	struct owned *o = (struct owned *)f;

	if (o == NULL)
		return;
	free(o->syms);
	free(o->names);
	free(o->path);
	free(o);
}

static void
read_build_id(Elf *e, struct dtcap_file *f)
{
	const void *id;
	size_t n;

	if (!dt_elf_build_id(e, &id, &n))
		return;
	if (n > sizeof(f->build_id))
		n = sizeof(f->build_id);
	memcpy(f->build_id, id, n);
	f->build_id_len = (uint32_t)n;
}

/*
 * Symbols are gathered from several tables into one growing array whose
 * names live in one growing block; name pointers are offsets until the
 * block stops moving.
 */
struct acc {
	struct dtcap_sym *v;
	size_t	n, cap;
	char	*names;
	size_t	used, ncap;
	int	symtab;		/* a full .symtab was seen */
};

static int
acc_add(struct acc *a, uint64_t addr, uint64_t size, const char *name)
{
	size_t l = strlen(name) + 1;

	if (DT_GROW(a->v, a->cap, a->n, 1, 256) ||
	    DT_GROW(a->names, a->ncap, a->used, l, 4096))
		return -1;
	memcpy(a->names + a->used, name, l);
	a->v[a->n].addr = addr;
	a->v[a->n].size = size;
	a->v[a->n].name = (const char *)(uintptr_t)a->used;
	a->used += l;
	a->n++;
	return 0;
}

/* Every function symbol of e's .symtab and .dynsym into a. */
static int
add_elf_syms(struct acc *a, Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *data;
		size_t nsyms;

		if (gelf_getshdr(scn, &sh) == NULL ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (data == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			a->symtab = 1;
		nsyms = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < nsyms; i++) {
			GElf_Sym s;
			const char *name;
			int t;
			if (gelf_getsym(data, (int)i, &s) == NULL)
				continue;
			t = GELF_ST_TYPE(s.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
			    s.st_value == 0)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (name == NULL || *name == '\0')
				continue;
			if (acc_add(a, s.st_value, s.st_size, name) < 0)
				return -1;
		}
	}
	return 0;
}

static Elf_Scn *
section_named(Elf *e, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *name;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/* Upper bound of a decompressed MiniDebugInfo: a symbol table, not a program. */
#define MINIDEBUG_MAX	(256U << 20)

/*
 * MiniDebugInfo (.gnu_debugdata): an xz-compressed ELF file holding the
 * .symtab entries that .dynsym lacks (Fedora, RHEL, CentOS binaries).
 */
static int
add_minidebuginfo(struct acc *a, Elf *e)
{
	Elf_Scn *scn = section_named(e, ".gnu_debugdata");
	lzma_stream zs = LZMA_STREAM_INIT;
	unsigned char *out = NULL;
	size_t cap = 0;
	Elf_Data *data;
	Elf *inner;
	lzma_ret lr;
	int r = 0;

	if (scn == NULL || (data = elf_rawdata(scn, NULL)) == NULL || data->d_size == 0)
		return 0;
	if (lzma_stream_decoder(&zs, MINIDEBUG_MAX, 0) != LZMA_OK)
		return 0;
	zs.next_in = data->d_buf;
	zs.avail_in = data->d_size;
	do {
		if (zs.avail_out == 0) {
			/* doubling, from four times the packed size, up to
			 * MINIDEBUG_MAX: past that the section is not read */
			size_t done = cap;
			unsigned char *no = dt_grow_array(out, &cap, cap + 1, 1,
							  data->d_size * 4 + 4096, MINIDEBUG_MAX);
			if (no == NULL) {
				lr = LZMA_MEM_ERROR;
				break;
			}
			out = no;
			zs.next_out = out + done;
			zs.avail_out = cap - done;
		}
		lr = lzma_code(&zs, LZMA_FINISH);
	} while (lr == LZMA_OK);
	/* a damaged section only costs its names */
	if (lr == LZMA_STREAM_END && (inner = elf_memory((char *)out, zs.total_out)) != NULL) {
		if (elf_kind(inner) == ELF_K_ELF)
			r = add_elf_syms(a, inner);
		elf_end(inner);
	}
	lzma_end(&zs);
	free(out);
	return r;
}

/* Root of separate debug files; tests point it elsewhere. */
static const char *
debug_root(void)
{
	const char *d = getenv("DT_DEBUG_DIR");

	return d && d[0] == '/' ? d : "/usr/lib/debug";
}

/*
 * The separate debug file: by build id under .build-id/xx/rest.debug,
 * else by .gnu_debuglink next to the file's path under the debug root.
 * prefix ("/proc/PID/root" or "") is tried first, then the host's.
 */
int
elfsyms_debug_open(Elf *e, const struct dtcap_file *f, const char *prefix, Elf **out)
{
	char cand[3][4400], hex[41];
	int ncand = 0;
	Elf_Scn *scn;

	*out = NULL;
	if (f->build_id_len >= 2) {
		for (uint32_t i = 0; i < f->build_id_len && i < 20; i++)
			snprintf(hex + 2 * i, 3, "%02x", f->build_id[i]);
		snprintf(cand[ncand++], sizeof(cand[0]), "%s/.build-id/%.2s/%s.debug",
			 debug_root(), hex, hex + 2);
	}
	if ((scn = section_named(e, ".gnu_debuglink")) != NULL) {
		Elf_Data *d = elf_rawdata(scn, NULL);
		const char *slash = strrchr(f->path, '/');
		if (d && d->d_size > 4 && memchr(d->d_buf, '\0', d->d_size) && slash &&
		    strchr(d->d_buf, '/') == NULL) {
			snprintf(cand[ncand++], sizeof(cand[0]), "%s%.*s/%s", debug_root(),
				 (int)(slash - f->path), f->path, (const char *)d->d_buf);
			snprintf(cand[ncand++], sizeof(cand[0]), "%.*s/.debug/%s",
				 (int)(slash - f->path), f->path, (const char *)d->d_buf);
		}
	}
	for (int i = 0; i < ncand; i++) {
		for (int root = 0; root < 2; root++) {
			char p[4600];
			struct dtcap_file df = { 0 };
			Elf *de;
			int fd;

			if (root == 0 && (prefix == NULL || prefix[0] == '\0'))
				continue;
			if ((size_t)snprintf(p, sizeof(p), "%s%s", root == 0 ? prefix : "",
					     cand[i]) >= sizeof(p) ||
			    (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
				continue;
			de = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			if (de && elf_kind(de) == ELF_K_ELF) {
				/* a debug file of another build names wrong functions */
				read_build_id(de, &df);
				if (f->build_id_len == 0 || (df.build_id_len == f->build_id_len &&
				    memcmp(df.build_id, f->build_id, f->build_id_len) == 0)) {
					*out = de;
					return fd;
				}
			}
			if (de)
				elf_end(de);
			close(fd);
		}
	}
	return -1;
}

static int
add_debugfile(struct acc *a, Elf *e, const struct dtcap_file *f, const char *prefix)
{
	Elf *de;
	int r, fd = elfsyms_debug_open(e, f, prefix, &de);

	if (fd < 0)
		return 0;
	r = add_elf_syms(a, de);
	elf_end(de);
	close(fd);
	return r;
}

static int
read_elf(Elf *e, struct owned *o, const char *prefix, char *err, size_t errlen)
{
	struct acc a = { 0 };
	size_t nph, k = 0;

	/* load bias: p_vaddr - p_offset of the first executable PT_LOAD */
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) == NULL)
				continue;
			if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				o->ef.f.load_bias_hint = ph.p_vaddr - ph.p_offset;
				break;
			}
		}
	}
	read_build_id(e, &o->ef.f);

	/* .symtab and .dynsym; a stripped file's local functions (_start,
	 * static helpers) only in MiniDebugInfo or a separate debug file */
	if (add_elf_syms(&a, e) < 0 ||
	    (!a.symtab && add_minidebuginfo(&a, e) < 0) ||
	    (!a.symtab && add_debugfile(&a, e, &o->ef.f, prefix) < 0)) {
		dtu_seterr(err, errlen, "%s: out of memory", o->path);
		free(a.v);
		free(a.names);
		return -1;
	}
	for (size_t i = 0; i < a.n; i++)
		a.v[i].name = a.names + (uintptr_t)a.v[i].name;
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), symcmp);
	/* one symbol seen in several tables is kept once */
	for (size_t i = 0; i < a.n; i++) {
		if (k > 0 && a.v[k - 1].addr == a.v[i].addr && a.v[k - 1].size == a.v[i].size &&
		    strcmp(a.v[k - 1].name, a.v[i].name) == 0)
			continue;
		a.v[k++] = a.v[i];
	}
	o->syms = a.v;
	o->names = a.names;
	o->ef.f.syms = a.v;
	o->ef.f.nsyms = (uint32_t)k;
	return 0;
}

struct elfsyms_file *
elfsyms_read(const char *path, const char *open_path, char *err, size_t errlen)
{
	struct owned *o;
	Elf *e;
	int fd, r;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		dtu_seterr(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	fd = open(open_path ? open_path : path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL || (o->path = strdup(path)) == NULL) {
		free(o);
		close(fd);
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	o->ef.f.path = o->path;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF) {
		dtu_seterr(err, errlen, "%s: not an ELF file", path);
		if (e)
			elf_end(e);
		close(fd);
		elfsyms_file_free(&o->ef);
		return NULL;
	}
	{
		/* "/proc/PID/root" when open_path is path seen from there */
		char prefix[64] = "";
		size_t ol = open_path ? strlen(open_path) : 0, pl = strlen(path);
		if (ol > pl && ol - pl < sizeof(prefix) && strcmp(open_path + ol - pl, path) == 0 &&
		    strncmp(open_path, "/proc/", 6) == 0)
			snprintf(prefix, sizeof(prefix), "%.*s", (int)(ol - pl), open_path);
		r = read_elf(e, o, prefix, err, errlen);
	}
	elf_end(e);
	close(fd);
	if (r < 0) {
		elfsyms_file_free(&o->ef);
		return NULL;
	}
	return &o->ef;
}

struct elfsyms_cache *
elfsyms_cache_new(void)
{
	return calloc(1, sizeof(struct elfsyms_cache));
}

void
elfsyms_cache_free(struct elfsyms_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		struct centry *e = c->v[i];
		elfsyms_file_free(e->file ? &e->file->ef : NULL);
		free(e->err);
		free(e->path);
		free(e);
	}
	free(c->v);
	dt_htab_free(&c->ix);
	free(c);
}

static uint64_t
hash(const char *s)
{
	uint64_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h ^ h >> 29;
}

static uint64_t
rehash(const void *ctx, uint32_t i)
{
	return hash(((const struct elfsyms_cache *)ctx)->v[i]->path);
}

int
elfsyms_known(const struct elfsyms_cache *c, const char *path)
{
	uint32_t k;
	int ret = 0;

	for (size_t i = dt_htab_first(&c->ix, hash(path)); (k = dt_htab_at(&c->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&c->ix, i)) {
		if (strcmp(c->v[k]->path, path) != 0)
			continue;
		if (c->v[k]->file && c->v[k]->file->ef.cap_id)
			return 1;
		if (c->v[k]->file == NULL)
			ret = -1;
	}
	return ret;
}

struct elfsyms_file *
elfsyms_get(struct elfsyms_cache *c, const char *path, const char *open_path,
	    char *err, size_t errlen)
{
	struct centry *e = NULL;
	struct stat st;
	uint64_t h = hash(path);
	int have_st = stat(open_path ? open_path : path, &st) == 0;
	uint32_t k;

	/* the newest entry of the path that is still this file */
	for (size_t i = dt_htab_first(&c->ix, h); (k = dt_htab_at(&c->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&c->ix, i)) {
		struct centry *x = c->v[k];
		if (strcmp(x->path, path) != 0)
			continue;
		/* same path, different file (rebuilt): read it again */
		if (have_st && (x->dev != st.st_dev || x->ino != st.st_ino ||
				x->mtime.tv_sec != st.st_mtim.tv_sec ||
				x->mtime.tv_nsec != st.st_mtim.tv_nsec))
			continue;
		e = x;
	}
	if (e) {
		if (e->file == NULL)
			dtu_seterr(err, errlen, "%s", e->err ? e->err : path);
		return e->file ? &e->file->ef : NULL;
	}
	if (DT_GROW(c->v, c->cap, c->n, 1, 64)) {
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->path = strdup(path)) == NULL) {
		free(e);
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (have_st) {
		e->dev = st.st_dev;
		e->ino = st.st_ino;
		e->mtime = st.st_mtim;
	}
	{
		char msg[512] = "";
		struct elfsyms_file *f = elfsyms_read(path, open_path, msg, sizeof(msg));
		e->file = (struct owned *)f;
		if (f == NULL) {
			e->err = strdup(msg);
			dtu_seterr(err, errlen, "%s", msg);
		}
	}
	c->v[c->n] = e;
	if (dt_htab_add(&c->ix, h, (uint32_t)c->n, rehash, c)) {
		/* the index could not take it: nothing is kept, nothing leaks */
		elfsyms_file_free(e->file ? &e->file->ef : NULL);
		free(e->err);
		free(e->path);
		free(e);
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	c->n++;
	return e->file ? &e->file->ef : NULL;
}
