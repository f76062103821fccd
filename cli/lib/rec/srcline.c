/*
 * srcline.c - source lines and inline chains of stored user addresses,
 * from DWARF (libdw), written as SRCL chunks (srcline.h).
 *
 * Only the addresses stacks hold are resolved, once each, at the end of
 * recording: a program's line table is megabytes, the addresses its
 * samples reach a few thousand.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_buildid.h"
#include "dt_grow.h"
#include "elfsyms.h"
#include "srcline.h"
#include "util.h"

struct sfile {
	struct dtcap_file f;	/* path and build id; no symbols */
	char		*open_path;
	uint64_t	*addr;
	size_t		n, cap;
};

struct srcl_set {
	struct sfile	*v;	/* by capture file id - 1 */
	uint32_t	n, cap;
};

struct srcl_set *
srcl_new(void)
{
	return calloc(1, sizeof(struct srcl_set));
}

void
srcl_free(struct srcl_set *s)
{
	if (s == NULL)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		free((void *)s->v[i].f.path);
		free(s->v[i].open_path);
		free(s->v[i].addr);
	}
	free(s->v);
	free(s);
}

int
srcl_file(struct srcl_set *s, uint32_t id, const struct dtcap_file *f, const char *open_path)
{
	if (id == 0)
		return 0;
	if (id > s->n) {
		if (DT_GROW(s->v, s->cap, s->n, id - s->n, 16))
			return -1;
		memset(&s->v[s->n], 0, (id - s->n) * sizeof(*s->v));
		s->n = id;
	}
	struct sfile *e = &s->v[id - 1];
	if (e->f.path != NULL)
		return 0;
	e->f = *f;
	e->f.syms = NULL;
	e->f.nsyms = 0;
	if ((e->f.path = strdup(f->path ? f->path : "")) == NULL ||
	    (e->open_path = strdup(open_path ? open_path : e->f.path)) == NULL)
		return -1;
	return 0;
}

uint32_t
srcl_lookup(struct srcl_set *s, const char *path, uint64_t *bias)
{
	/* the newest file of that path: a rebuilt program gets a new id */
	for (uint32_t i = s->n; i-- > 0;) {
		if (s->v[i].f.path && strcmp(s->v[i].f.path, path) == 0) {
			*bias = s->v[i].f.load_bias_hint;
			return i + 1;
		}
	}
	return 0;
}

int
srcl_add(struct srcl_set *s, uint32_t id, uint64_t vaddr)
{
	if (id == 0 || id > s->n || s->v[id - 1].f.path == NULL)
		return 0;
	struct sfile *e = &s->v[id - 1];
	/* the same address again and again (a hot loop's pcs): once */
	if (e->n && e->addr[e->n - 1] == vaddr)
		return 0;
	if (DT_GROW(e->addr, e->cap, e->n, 1, 256))
		return -1;
	e->addr[e->n++] = vaddr;
	return 0;
}

static int
u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* DWARF's name of a function: the linkage name where there is one (what
 * the symbol table and c++filt spell), else the plain name, through
 * abstract origins (an inlined instance names nothing itself). */
static const char *
die_func_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *n;

	if ((dwarf_attr_integrate(d, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a)) &&
	    (n = dwarf_formstring(&a)) != NULL)
		return n;
	if (dwarf_attr_integrate(d, DW_AT_name, &a) && (n = dwarf_formstring(&a)) != NULL)
		return n;
	return "";
}

/* CU address ranges of a file without .debug_aranges (clang's and rustc's
 * default), read once, sorted by start. */
struct curange {
	Dwarf_Addr	lo, hi;
	Dwarf_Off	die;
};
struct cutab {
	struct curange	*v;
	size_t		n, cap;
	int		built;
};

static int
cur_cmp(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int
cutab_build(Dwarf *dw, struct cutab *t)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	t->built = 1;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t k = 0;
		if (dwarf_offdie(dw, off + hsize, &cu) != NULL)
			while ((k = dwarf_ranges(&cu, k, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (DT_GROW(t->v, t->cap, t->n, 1, 256))
					return -1;
				t->v[t->n++] = (struct curange){ lo, hi, off + hsize };
			}
		off = next;
	}
	qsort(t->v, t->n, sizeof(*t->v), cur_cmp);
	return 0;
}

/* The CU holding addr: by .debug_aranges, else by the CUs' own ranges. */
static int
find_cu(Dwarf *dw, struct cutab *t, Dwarf_Addr addr, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, addr, cu) != NULL)
		return 0;
	if (!t->built && cutab_build(dw, t) < 0)
		return -1;
	/* the last range starting at or below addr; ranges rarely nest, so
	 * a few before it are tried too */
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, tries = 0; i > 0 && tries < 16; i--, tries++)
		if (addr < t->v[i - 1].hi)
			return dwarf_offdie(dw, t->v[i - 1].die, cu) != NULL ? 0 : -1;
	return -1;
}

struct chain {
	struct dtcap_srcline *sl;
	size_t		n, cap;
	struct dtcap_srcframe *fr;
	size_t		nf, fcap;
	/* source paths made absolute (as addr2line prints them), by the
	 * line table's string: a program has tens of source files */
	struct { const char *rel, *dir; char *abs; } *paths;
	size_t		np, pcap;
};

/* path as a reader elsewhere wants it: relative names of the line table
 * joined to the compilation directory.  NULL on ENOMEM. */
static const char *
abs_path(struct chain *c, Dwarf_Die *cu, const char *path)
{
	Dwarf_Attribute a;
	const char *dir;

	if (path[0] == '/' || path[0] == '\0' ||
	    (dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a))) == NULL || !dir[0])
		return path;
	for (size_t i = 0; i < c->np; i++)
		if (c->paths[i].rel == path && c->paths[i].dir == dir)
			return c->paths[i].abs;
	size_t n = strlen(dir) + strlen(path) + 2;
	char *t = malloc(n);
	if (t == NULL || DT_GROW(c->paths, c->pcap, c->np, 1, 16)) {
		free(t);
		return NULL;
	}
	snprintf(t, n, "%s/%s", dir, path);
	c->paths[c->np].rel = path;
	c->paths[c->np].dir = dir;
	c->paths[c->np++].abs = t;
	return t;
}

/* addr's inline chain into c (frames as offsets until the end): 1 if it
 * has a source line, 0 if not, -1 on ENOMEM. */
static int
resolve(Dwarf *dw, struct cutab *t, Dwarf_Addr addr, struct chain *c, uint64_t *inlined)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *ln;
	const char *file = "";
	int line = 0, ns;
	size_t f0 = c->nf;

	if (find_cu(dw, t, addr, &cu) < 0)
		return 0;
	if ((ln = dwarf_getsrc_die(&cu, addr)) != NULL) {
		const char *f = dwarf_linesrc(ln, NULL, NULL);
		if (f && (f = abs_path(c, &cu, f)) == NULL)
			return -1;
		file = f ? f : "";
		if (dwarf_lineno(ln, &line) != 0)
			line = 0;
	}
	if (file[0] == '\0' && line == 0)
		return 0;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		files = NULL;
	ns = dwarf_getscopes(&cu, addr, &scopes);
	int outer = 0;	/* the out-of-line function's frame is in */
	for (int i = 0; i < ns && c->nf - f0 < DTCAP_MAXINLINE; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		if (DT_GROW(c->fr, c->fcap, c->nf, 1, 1024)) {
			free(scopes);
			return -1;
		}
		c->fr[c->nf++] = (struct dtcap_srcframe){ die_func_name(&scopes[i]), file,
							  (uint32_t)(line > 0 ? line : 0) };
		if (tag == DW_TAG_subprogram) {
			outer = 1;
			break;
		}
		/* the enclosing function's position is this call's */
		Dwarf_Attribute a;
		Dwarf_Word v;
		const char *cf = NULL;
		if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &v) == 0)
			cf = dwarf_filesrc(files, v, NULL, NULL);
		if (cf && (cf = abs_path(c, &cu, cf)) == NULL) {
			free(scopes);
			return -1;
		}
		file = cf ? cf : "";
		line = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &v) == 0 &&
		       v <= INT32_MAX ? (int)v : 0;
	}
	free(scopes);
	/* GCC's clones (.isra, .constprop) leave the out-of-line function out
	 * of the scopes of what was inlined into it: the position the last
	 * inlined call was made from is its frame, named by the symbol table */
	if (!outer && c->nf > f0 && c->nf - f0 < DTCAP_MAXINLINE) {
		if (DT_GROW(c->fr, c->fcap, c->nf, 1, 1024))
			return -1;
		c->fr[c->nf++] = (struct dtcap_srcframe){ "", file, (uint32_t)line };
	}
	if (c->nf == f0) {	/* no function scope: the line alone */
		if (DT_GROW(c->fr, c->fcap, c->nf, 1, 1024))
			return -1;
		c->fr[c->nf++] = (struct dtcap_srcframe){ "", file, (uint32_t)line };
	}
	if (c->nf - f0 > 1)
		(*inlined)++;
	if (DT_GROW(c->sl, c->cap, c->n, 1, 256))
		return -1;
	/* frames may still move: their offset, made a pointer at the end */
	c->sl[c->n++] = (struct dtcap_srcline){ addr, (uint32_t)(c->nf - f0),
						(const struct dtcap_srcframe *)(uintptr_t)f0 };
	return 1;
}

/* Whether e is the build the capture names (the file may have been
 * replaced since it was mapped). */
static int
same_build(Elf *e, const struct dtcap_file *f)
{
	const void *id;
	size_t n;

	if (f->build_id_len == 0)
		return 1;
	return dt_elf_build_id(e, &id, &n) && n == f->build_id_len &&
	       !memcmp(id, f->build_id, n);
}

static int
has_lines(Dwarf *dw)
{
	Dwarf_Off next;
	size_t hsize;
	return dw && dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL) == 0;
}

static int
write_file(struct sfile *f, uint32_t id, struct dtcap_writer *w, struct srcl_stats *st)
{
	char err[512];
	int fd = dtu_open_regular(f->open_path, 0, err, sizeof(err)), dfd = -1, ret = 0;
	Elf *e = NULL, *de = NULL;
	Dwarf *dw = NULL;
	struct chain c = { 0 };
	struct cutab cus = { 0 };

	st->files++;
	qsort(f->addr, f->n, sizeof(*f->addr), u64cmp);
	if (fd < 0 || (e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL ||
	    elf_kind(e) != ELF_K_ELF || !same_build(e, &f->f))
		goto nodwarf;
	dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!has_lines(dw)) {
		if (dw)
			dwarf_end(dw);
		dw = NULL;
		if ((dfd = elfsyms_debug_open(e, &f->f, NULL, &de)) >= 0)
			dw = dwarf_begin_elf(de, DWARF_C_READ, NULL);
		if (!has_lines(dw))
			goto nodwarf;
	}
	for (size_t i = 0; i < f->n; i++) {
		if (i && f->addr[i] == f->addr[i - 1])
			continue;
		st->addrs++;
		int r = resolve(dw, &cus, f->addr[i], &c, &st->inlined);
		if (r < 0) {
			ret = -1;
			goto out;
		}
		st->resolved += (uint64_t)r;
	}
	for (size_t i = 0; i < c.n; i++)
		c.sl[i].frames = c.fr + (uintptr_t)c.sl[i].frames;
	if (c.n && dtcap_put_srclines(w, id, c.sl, c.n) < 0)
		ret = -1;
	goto out;
nodwarf:
	st->files_nodwarf++;
	for (size_t i = 0; i < f->n; i++)
		st->addrs += !i || f->addr[i] != f->addr[i - 1];
out:
	free(cus.v);
	free(c.sl);
	free(c.fr);
	for (size_t i = 0; i < c.np; i++)
		free(c.paths[i].abs);
	free(c.paths);
	if (dw)
		dwarf_end(dw);
	if (de)
		elf_end(de);
	if (dfd >= 0)
		close(dfd);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return ret;
}

int
srcl_write(struct srcl_set *s, struct dtcap_writer *w, struct srcl_stats *st)
{
	memset(st, 0, sizeof(*st));
	elf_version(EV_CURRENT);
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->v[i].f.path == NULL || s->v[i].n == 0)
			continue;
		if (write_file(&s->v[i], i + 1, w, st) < 0)
			return -1;
	}
	return 0;
}
