/*
 * dtsym.c - offline symbolization from a capture's own snapshots.
 *
 * Kernel: the kallsyms text is parsed once into an address-sorted table of
 * text symbols (binary search); a symbol covers addresses up to the next
 * symbol.  Module symbols are named "func [mod]" (perf's spelling, and
 * safe in folded stacks, which split frames on ';' only).  /proc/modules
 * gives each module's range, so an address in a module without a nearer
 * symbol becomes "mod+0xoff".  Every count here is the capture's to
 * choose, so nothing walks a list per line or per frame: one symbol per
 * address is kept (aliases: the first by name), module names are hashed,
 * module ranges sorted; loading is O(n log n), a lookup O(log n).
 *
 * User: pid's process snapshot in force at ts gives the maps; the map's
 * file carries its ELF symbols (sorted by the reader).  The file address is
 * pc - map.start + map.offset + load_bias_hint.  Addresses in a map
 * without a covering symbol become "basename+0xoff" (file offset).
 *
 * Every answer is cached by (kernel, process snapshot, pc), so the strings
 * we format live until dtsym_close() and repeated lookups are one hash
 * probe.  Strings from the capture's file symbols are returned as is: the
 * reader must outlive the dtsym.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "demangle.h"
#include "dtsym.h"
#include "util.h"

int dtsym_demangle = 1;
int dtsym_inline = 1;

struct ksym {
	uint64_t	addr;
	const char	*name;		/* "func" or "func [mod]" */
	int		mod;		/* index into mods + 1, 0: core kernel */
};

struct kmod {
	char		*name;
	uint64_t	start, size;
};

struct modrange {
	uint64_t	start;
	uint32_t	mod;		/* index into mods */
};

/* Maps of one process snapshot, sorted by start (copied pointers). */
struct pmaps {
	const struct dtcap_proc *proc;
	const struct dtcap_map **maps;
	uint32_t	n;
};

struct centry {
	uint64_t	pc;
	const void	*ctx;		/* NULL: kernel, else process snapshot */
	const char	*name;		/* as the symbol table spells it */
	const char	*dname;		/* demangled, or name itself */
	uint8_t		origin;
};

/* The reader's strings live as long as it: their address is the key. */
struct fentry {
	const char	*func;
	const char	*name[2][2];	/* [demangled][inlined] */
};

enum { O_KERNEL, O_MODULE, O_USER, O_UNKNOWN };
static const char *const origin_names[] = { "kernel", "module", "user", "unknown" };

struct arena {
	struct arena	*next;
	size_t		used, cap;
	char		data[];
};

struct dtsym {
	const struct dtcap_reader *r;
	struct ksym	*ks;
	size_t		nks;
	struct kmod	*mods;
	size_t		nmods, modcap;
	/* Counts here are the capture's to choose (a crafted one has tens
	 * of thousands of modules): names are found by hash, ranges by
	 * binary search, never by walking mods. */
	uint32_t	*modkey;	/* modix entry -> mods index (first of a name) */
	size_t		nmodkey, modkeycap;
	struct dt_htab	modix;		/* module name -> modkey entry */
	struct modrange	*byaddr;	/* mods with a range, by start */
	size_t		nbyaddr;
	char		*ktext;		/* our copy of kallsyms, names point in */

	struct pmaps	*pm;		/* process snapshots met, in order */
	size_t		npm, pmcap;
	struct dt_htab	pmix;		/* snapshot -> index in pm */

	struct centry	*cache;		/* answers, in order of first question */
	size_t		ccap, cn;
	struct dt_htab	cix;		/* (pc, ctx) -> index in cache */

	struct fentry	*fn;		/* DWARF function names met */
	size_t		fncap, nfn;
	struct dt_htab	fnix;		/* (func pointer) -> index in fn */

	struct arena	*arena;
	volatile sig_atomic_t *cancel;	/* while loading; NULL: none */
	int		cancelled;
};

/* Every few thousand lines: has the caller been asked to stop? */
static int stop(struct dtsym *s, size_t line)
{
	if ((line & 4095) == 0 && s->cancel && *s->cancel)
		s->cancelled = 1;
	return s->cancelled;
}

static char *arena_strdup(struct dtsym *s, const char *str)
{
	size_t len = strlen(str) + 1;
	struct arena *a = s->arena;

	if (!a || a->cap - a->used < len) {
		size_t cap = len > 65536 ? len : 65536;
		a = malloc(sizeof(*a) + cap);
		if (!a)
			return NULL;
		a->next = s->arena;
		a->used = 0;
		a->cap = cap;
		s->arena = a;
	}
	char *p = a->data + a->used;
	memcpy(p, str, len);
	a->used += len;
	return p;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer global names over local aliases at the same address; then
	 * by name, so the choice does not depend on the qsort. */
	return strcmp(x->name, y->name);
}

static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
	return dt_htab_hash_int(h);
}

static uint64_t modkey_hash(const void *ctx, uint32_t e)
{
	const struct dtsym *s = ctx;
	const char *n = s->mods[s->modkey[e]].name;

	return name_hash(n, strlen(n));
}

/* The module named name (len bytes) as index into mods + 1, 0: none. */
static int find_mod(struct dtsym *s, const char *name, size_t len)
{
	uint64_t h = name_hash(name, len);
	uint32_t e;

	for (size_t i = dt_htab_first(&s->modix, h); (e = dt_htab_at(&s->modix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&s->modix, i)) {
		const char *n = s->mods[s->modkey[e]].name;
		if (strlen(n) == len && !memcmp(n, name, len))
			return (int)s->modkey[e] + 1;
	}
	return 0;
}

/* Append a module; its name is found by find_mod from now on (the first
 * of a name wins, as a walk in order did).  0, or -1 on ENOMEM (nd is then
 * freed). */
static int add_mod(struct dtsym *s, char *nd, uint64_t start, uint64_t size)
{
	size_t len = strlen(nd);
	int dup = find_mod(s, nd, len) != 0;

	if (DT_GROW(s->mods, s->modcap, s->nmods, 1, 64) ||
	    (!dup && DT_GROW(s->modkey, s->modkeycap, s->nmodkey, 1, 64))) {
		free(nd);
		return -1;
	}
	s->mods[s->nmods] = (struct kmod){ nd, start, size };
	if (!dup) {
		s->modkey[s->nmodkey] = (uint32_t)s->nmods;
		if (dt_htab_add(&s->modix, name_hash(nd, len), (uint32_t)s->nmodkey,
				modkey_hash, s)) {
			free(nd);
			return -1;
		}
		s->nmodkey++;
	}
	s->nmods++;
	return 0;
}

static int byaddr_cmp(const void *a, const void *b)
{
	const struct modrange *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* mod_of takes the last of equal starts: the first listed goes last,
	 * so it wins, as in a walk in order */
	return x->mod > y->mod ? -1 : x->mod < y->mod;
}

/* The modules with a range, sorted by start for mod_of. */
static void index_ranges(struct dtsym *s)
{
	if (!s->nmods || !(s->byaddr = calloc(s->nmods, sizeof(*s->byaddr))))
		return;
	for (size_t i = 0; i < s->nmods; i++)
		if (s->mods[i].size)
			s->byaddr[s->nbyaddr++] = (struct modrange){ s->mods[i].start, (uint32_t)i };
	qsort(s->byaddr, s->nbyaddr, sizeof(*s->byaddr), byaddr_cmp);
}

static void parse_modules(struct dtsym *s)
{
	size_t len;
	const char *text = dtcap_modules(s->r, &len);

	if (!text)
		return;
	const char *p = text, *end = text + len;
	for (size_t line = 1; p < end && *p && !stop(s, line); line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[512], name[128], state[32], deps[256];
		unsigned long long size = 0, addr = 0;
		unsigned refs;
		if (ll < sizeof(line)) {
			memcpy(line, p, ll);
			line[ll] = 0;
			if (sscanf(line, "%127s %llu %u %255s %31s %llx", name, &size, &refs,
				   deps, state, &addr) == 6 && addr) {
				char *nd = strdup(name);
				if (!nd || add_mod(s, nd, addr, size))
					return;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}

static void parse_kallsyms(struct dtsym *s)
{
	size_t len;
	const char *text = dtcap_kallsyms(s->r, &len);

	if (!text || !len)
		return;
	s->ktext = malloc(len + 1);
	if (!s->ktext)
		return;
	memcpy(s->ktext, text, len);
	s->ktext[len] = 0;

	size_t cap = 0, nonzero = 0;
	char *p = s->ktext, *end = s->ktext + len;
	for (size_t line = 1; p < end && *p; line++) {
		if (stop(s, line))
			return;
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl)
			*nl = 0;
		/* "ffffffff81000000 T _stext" or "... t func\t[mod]" */
		char *q;
		unsigned long long addr = strtoull(p, &q, 16);
		if (q != p && q[0] == ' ' && q[1] && q[2] == ' ' &&
		    strchr("tTwW", q[1]) && q[3]) {
			char *name = q + 3;
			char *tab = strchr(name, '\t');
			int mod = 0;
			if (tab) {
				*tab = 0;
				char *m = tab + 1;
				size_t ml = strlen(m);
				if (ml > 2 && m[0] == '[' && m[ml - 1] == ']') {
					mod = find_mod(s, m + 1, ml - 2);
					if (!mod) {
						/* A module missing from /proc/modules:
						 * still name it, without a range. */
						char *nd = strndup(m + 1, ml - 2);
						if (nd && !add_mod(s, nd, 0, 0))
							mod = (int)s->nmods;
					}
					*tab = ' ';	/* "func [mod]" */
				}
			}
			if (DT_GROW(s->ks, cap, s->nks, 1, 4096))
				break;
			s->ks[s->nks++] = (struct ksym){ addr, name, mod };
			if (addr)
				nonzero++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	/* kallsyms read without privilege shows every address as 0. */
	if (!nonzero)
		s->nks = 0;
	if (s->nks)	/* no table at all: qsort must not see its NULL */
		qsort(s->ks, s->nks, sizeof(*s->ks), ksym_cmp);
	/* Aliases at one address: only the first (by name) is ever the
	 * answer, so the others go now rather than be walked over at every
	 * lookup (a capture may hold thousands of one address). */
	size_t n = 0;
	for (size_t i = 0; i < s->nks; i++)
		if (n == 0 || s->ks[n - 1].addr != s->ks[i].addr)
			s->ks[n++] = s->ks[i];
	s->nks = n;
}

struct dtsym *dtsym_open_cancel(const struct dtcap_reader *r, volatile sig_atomic_t *cancel)
{
	struct dtsym *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->r = r;
	s->cancel = cancel;
	parse_modules(s);
	/* kallsyms adds modules without a range only: the index is whole */
	index_ranges(s);
	parse_kallsyms(s);
	if (cancel && *cancel)	/* during the sort, not polled */
		s->cancelled = 1;
	s->cancel = NULL;
	if (s->cancelled) {
		dtsym_close(s);
		errno = EINTR;
		return NULL;
	}
	return s;
}

struct dtsym *dtsym_open(const struct dtcap_reader *r)
{
	return dtsym_open_cancel(r, NULL);
}

void dtsym_close(struct dtsym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->npm; i++)
		free(s->pm[i].maps);
	free(s->pm);
	dt_htab_free(&s->pmix);
	for (size_t i = 0; i < s->nmods; i++)
		free(s->mods[i].name);
	free(s->mods);
	free(s->modkey);
	dt_htab_free(&s->modix);
	free(s->byaddr);
	free(s->ks);
	free(s->ktext);
	free(s->cache);
	dt_htab_free(&s->cix);
	free(s->fn);
	dt_htab_free(&s->fnix);
	while (s->arena) {
		struct arena *n = s->arena->next;
		free(s->arena);
		s->arena = n;
	}
	free(s);
}

/* ------------------------------------------------------------ cache */

static uint64_t hash2(uint64_t pc, const void *ctx)
{
	return dt_htab_hash_int(pc ^ ((uint64_t)(uintptr_t)ctx * 0x9e3779b97f4a7c15ULL));
}

static uint64_t cache_hash(const void *ctx, uint32_t e)
{
	const struct dtsym *s = ctx;
	return hash2(s->cache[e].pc, s->cache[e].ctx);
}

static struct centry *cache_find(struct dtsym *s, uint64_t pc, const void *ctx)
{
	uint32_t e;
	for (size_t i = dt_htab_first(&s->cix, hash2(pc, ctx));
	     (e = dt_htab_at(&s->cix, i)) != DT_HTAB_NONE; i = dt_htab_next(&s->cix, i))
		if (s->cache[e].pc == pc && s->cache[e].ctx == ctx)
			return &s->cache[e];
	return NULL;
}

/* ----------------------------------------------------------- kernel */

static const struct kmod *mod_of(struct dtsym *s, uint64_t pc)
{
	/* The module starting last at or below pc; modules do not overlap
	 * (a crafted capture's that do get one answer of theirs). */
	size_t lo = DTU_UPPER_BOUND(s->nbyaddr, i, s->byaddr[i].start, pc);
	if (lo == 0)
		return NULL;
	const struct kmod *m = &s->mods[s->byaddr[lo - 1].mod];
	return pc - m->start < m->size ? m : NULL;
}

/* Beyond this distance from the nearest core symbol we do not trust it. */
#define KSYM_MAXDIST	(1ULL << 20)

static const char *kname(struct dtsym *s, uint64_t pc, uint8_t *origin)
{
	char buf[160];
	/* The last symbol with addr <= pc: ks[lo - 1]. */
	size_t lo = DTU_UPPER_BOUND(s->nks, i, s->ks[i].addr, pc);
	const struct kmod *m = mod_of(s, pc);
	if (lo > 0) {
		const struct ksym *k = &s->ks[lo - 1];	/* one per address */
		if (k->mod) {
			const struct kmod *km = &s->mods[k->mod - 1];
			if (!km->size || km == m) {
				*origin = O_MODULE;
				return k->name;
			}
		} else if (!m && pc - k->addr < KSYM_MAXDIST) {
			*origin = O_KERNEL;
			return k->name;
		}
	}
	if (m) {
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->name, pc - m->start);
		*origin = O_MODULE;
		return arena_strdup(s, buf);
	}
	snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
	*origin = O_UNKNOWN;
	return arena_strdup(s, buf);
}

/* ------------------------------------------------------------- user */

static int map_cmp(const void *a, const void *b)
{
	const struct dtcap_map *x = *(const struct dtcap_map *const *)a;
	const struct dtcap_map *y = *(const struct dtcap_map *const *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static uint64_t pm_hash(const void *ctx, uint32_t e)
{
	return hash2((uintptr_t)((const struct dtsym *)ctx)->pm[e].proc, NULL);
}

/* The sorted maps of snapshot p, made on first use; the pointer lasts
 * until the next call. */
static const struct pmaps *proc_maps(struct dtsym *s, const struct dtcap_proc *p)
{
	uint64_t h = hash2((uintptr_t)p, NULL);
	uint32_t e;

	for (size_t i = dt_htab_first(&s->pmix, h); (e = dt_htab_at(&s->pmix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&s->pmix, i))
		if (s->pm[e].proc == p)
			return &s->pm[e];
	if (DT_GROW(s->pm, s->pmcap, s->npm, 1, 64))
		return NULL;
	struct pmaps *pm = &s->pm[s->npm];
	pm->proc = p;
	pm->n = 0;
	pm->maps = calloc(p->nmaps ? p->nmaps : 1, sizeof(*pm->maps));
	if (!pm->maps)
		return NULL;
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].end > p->maps[i].start)
			pm->maps[pm->n++] = &p->maps[i];
	qsort(pm->maps, pm->n, sizeof(*pm->maps), map_cmp);
	if (dt_htab_add(&s->pmix, h, (uint32_t)s->npm, pm_hash, s)) {
		free(pm->maps);
		return NULL;
	}
	s->npm++;
	return pm;
}

static const char *basename_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	return sl && sl[1] ? sl + 1 : path;
}

/* The mapping of snapshot p (may be NULL) that holds pc, or NULL. */
static const struct dtcap_map *map_of(struct dtsym *s, const struct dtcap_proc *p, uint64_t pc)
{
	const struct pmaps *pm = p ? proc_maps(s, p) : NULL;

	if (pm) {
		size_t lo = DTU_UPPER_BOUND(pm->n, i, pm->maps[i]->start, pc);
		if (lo > 0 && pc < pm->maps[lo - 1]->end)
			return pm->maps[lo - 1];
	}
	return NULL;
}

/* The name a mapping goes by: its own, else its file's; basename only. */
static const char *map_basename(const struct dtcap_map *m, const struct dtcap_file *f)
{
	return m->name && m->name[0] ? basename_of(m->name)
	       : f && f->path ? basename_of(f->path) : NULL;
}

/* The symbol of f covering file virtual address v, or NULL. */
static const struct dtcap_sym *sym_at(const struct dtcap_file *f, uint64_t v)
{
	if (!f->nsyms)
		return NULL;
	size_t lo = DTU_UPPER_BOUND(f->nsyms, i, f->syms[i].addr, v);
	/* Several symbols may start at or below v (nested or sized
	 * zero); walk back over a few for one that covers v. */
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++) {
		const struct dtcap_sym *sy = &f->syms[i - 1];
		if (!sy->name || !sy->name[0])
			continue;
		if ((sy->size && v - sy->addr < sy->size) ||
		    (!sy->size && i == lo && v - sy->addr < 4096))
			return sy;
	}
	return NULL;
}

static const char *uname_(struct dtsym *s, const struct dtcap_proc *p, uint64_t pc,
			  uint8_t *origin)
{
	char buf[256];
	const struct dtcap_map *m = map_of(s, p, pc);

	if (!m) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
		*origin = O_UNKNOWN;
		return arena_strdup(s, buf);
	}
	uint64_t foff = pc - m->start + m->offset;
	const struct dtcap_file *f = m->file ? dtcap_file_by_id(s->r, m->file) : NULL;
	const struct dtcap_sym *sy = f ? sym_at(f, foff + f->load_bias_hint) : NULL;
	if (sy) {
		*origin = O_USER;
		return sy->name;
	}
	const char *base = map_basename(m, f);
	if (!base || !base[0]) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
		*origin = O_UNKNOWN;
	} else {
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base, foff);
		*origin = O_USER;
	}
	return arena_strdup(s, buf);
}

static struct centry *lookup(struct dtsym *s, uint64_t pc, int kernel, uint32_t pid,
			     uint64_t ts)
{
	const struct dtcap_proc *p = NULL;

	if (!kernel) {
		p = dtcap_proc_find(s->r, pid, ts);
		if (!p)
			p = (const void *)&origin_names;	/* "no process" context */
	}
	const void *ctx = kernel ? NULL : p;
	struct centry *e = cache_find(s, pc, ctx);
	if (e)
		return e;
	uint8_t origin;
	const char *name;
	if (kernel)
		name = kname(s, pc, &origin);
	else
		name = uname_(s, p == (const void *)&origin_names ? NULL : p, pc, &origin);
	if (!name || DT_GROW(s->cache, s->ccap, s->cn, 1, 1024))
		return NULL;
	/* Demangled once per cached answer, kept beside the raw name: both
	 * spellings stay a lookup away whichever one a command asks for. */
	const char *dname = name;
	char *d = origin == O_UNKNOWN ? NULL : dt_demangle(name);
	if (d) {
		dname = arena_strdup(s, d);
		free(d);
		if (!dname)
			return NULL;
	}
	e = &s->cache[s->cn];
	*e = (struct centry){ pc, ctx, name, dname, origin };
	if (dt_htab_add(&s->cix, hash2(pc, ctx), (uint32_t)s->cn, cache_hash, s))
		return NULL;
	s->cn++;
	return e;
}

const char *dtsym_name(struct dtsym *s, uint64_t pc, int kernel, uint32_t pid, uint64_t ts)
{
	struct centry *e = lookup(s, pc, kernel, pid, ts);

	return e ? (dtsym_demangle ? e->dname : e->name) : "?";
}

const char *dtsym_raw_name(struct dtsym *s, uint64_t pc, int kernel, uint32_t pid,
			   uint64_t ts)
{
	struct centry *e = lookup(s, pc, kernel, pid, ts);

	return e ? e->name : "?";
}

const char *dtsym_dso(struct dtsym *s, uint64_t pc, int kernel, uint32_t pid, uint64_t ts)
{
	if (kernel) {
		const struct kmod *m = mod_of(s, pc);
		char buf[160];
		if (!m)
			return "[kernel.kallsyms]";
		snprintf(buf, sizeof(buf), "[%s]", m->name);
		const char *d = arena_strdup(s, buf);
		return d ? d : "?";
	}
	const struct dtcap_map *m = map_of(s, dtcap_proc_find(s->r, pid, ts), pc);
	if (m) {
		const struct dtcap_file *f = m->file ? dtcap_file_by_id(s->r, m->file) : NULL;
		const char *base = map_basename(m, f);
		if (base && base[0])
			return base;
	}
	return "[unknown]";
}

const char *dtsym_origin(struct dtsym *s, uint64_t pc, int kernel, uint32_t pid,
			 uint64_t ts)
{
	struct centry *e = lookup(s, pc, kernel, pid, ts);

	return origin_names[e ? e->origin : O_UNKNOWN];
}

const struct dtcap_srcline *dtsym_srcline(struct dtsym *s, uint64_t pc, int kernel,
					  uint32_t pid, uint64_t ts)
{
	if (kernel)
		return NULL;
	const struct dtcap_map *m = map_of(s, dtcap_proc_find(s->r, pid, ts), pc);
	const struct dtcap_file *f = m && m->file ? dtcap_file_by_id(s->r, m->file) : NULL;
	if (!f)
		return NULL;
	return dtcap_srcline_find(s->r, m->file, pc - m->start + m->offset + f->load_bias_hint);
}

static uint64_t fn_hash(const void *ctx, uint32_t e)
{
	const struct dtsym *s = ctx;
	return dt_htab_hash_int((uint64_t)(uintptr_t)s->fn[e].func);
}

const char *dtsym_func_name(struct dtsym *s, const char *func, int inlined)
{
	uint64_t h = dt_htab_hash_int((uint64_t)(uintptr_t)func);
	uint32_t e;
	struct fentry *x = NULL;
	int dm = !!dtsym_demangle, il = !!inlined;

	for (size_t i = dt_htab_first(&s->fnix, h); (e = dt_htab_at(&s->fnix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&s->fnix, i))
		if (s->fn[e].func == func) {
			x = &s->fn[e];
			break;
		}
	if (!x) {
		if (DT_GROW(s->fn, s->fncap, s->nfn, 1, 256))
			return NULL;
		x = &s->fn[s->nfn];
		memset(x, 0, sizeof(*x));
		x->func = func;
		if (dt_htab_add(&s->fnix, h, (uint32_t)s->nfn, fn_hash, s))
			return NULL;
		s->nfn++;
	}
	if (!x->name[dm][il]) {
		char *d = dm ? dt_demangle(func) : NULL;
		const char *base = d ? d : func[0] ? func : "[unknown]";
		size_t n = strlen(base) + sizeof(" (inlined)");
		char *t = malloc(n);
		if (!t) {
			free(d);
			return NULL;
		}
		snprintf(t, n, "%s%s", base, il ? " (inlined)" : "");
		x->name[dm][il] = arena_strdup(s, t);
		free(t);
		free(d);
	}
	return x->name[dm][il];
}

int dtsym_frame_src(struct dtsym *s, uint64_t pc, unsigned depth, int kernel, uint32_t pid,
		    uint64_t ts, const char **file, uint32_t *line, const char **inlined)
{
	const struct dtcap_srcline *sl = pc ? dtsym_srcline(s, depth ? pc - 1 : pc, kernel, pid, ts)
					    : NULL;
	*file = NULL;
	*line = 0;
	*inlined = NULL;
	if (!sl)
		return 0;
	*file = sl->frames[0].file;
	*line = sl->frames[0].line;
	if (sl->nframes < 2)
		return 1;
	/* a chain is named once: its key is the reader's srcline, which
	 * no function name string shares */
	const char *key = (const char *)sl;
	uint64_t h = dt_htab_hash_int((uint64_t)(uintptr_t)key);
	uint32_t e;
	struct fentry *x = NULL;
	int dm = !!dtsym_demangle;
	for (size_t i = dt_htab_first(&s->fnix, h); (e = dt_htab_at(&s->fnix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&s->fnix, i))
		if (s->fn[e].func == key) {
			x = &s->fn[e];
			break;
		}
	if (!x) {
		if (DT_GROW(s->fn, s->fncap, s->nfn, 1, 256))
			return 1;
		x = &s->fn[s->nfn];
		memset(x, 0, sizeof(*x));
		x->func = key;
		if (dt_htab_add(&s->fnix, h, (uint32_t)s->nfn, fn_hash, s))
			return 1;
		s->nfn++;
	}
	size_t xi = (size_t)(x - s->fn);	/* dtsym_func_name may move fn */
	if (!x->name[dm][0]) {
		size_t len = 1;
		char *t;
		for (uint32_t j = 0; j + 1 < sl->nframes; j++) {
			const char *nm = dtsym_func_name(s, sl->frames[j].func, 0);
			len += (nm ? strlen(nm) : 0) + 1;
		}
		if ((t = malloc(len)) == NULL)
			return 1;
		t[0] = '\0';
		for (uint32_t j = sl->nframes - 1; j-- > 0;) {
			const char *nm = dtsym_func_name(s, sl->frames[j].func, 0);
			if (t[0])
				strcat(t, ";");
			strcat(t, nm ? nm : "");
		}
		x = &s->fn[xi];
		x->name[dm][0] = arena_strdup(s, t);
		free(t);
	}
	*inlined = s->fn[xi].name[dm][0];
	return 1;
}

int dtsym_locate(struct dtsym *s, uint64_t pc, uint32_t pid, uint64_t ts,
		 const struct dtcap_file **f, uint64_t *vaddr, const struct dtcap_sym **sym)
{
	const struct dtcap_map *m = map_of(s, dtcap_proc_find(s->r, pid, ts), pc);

	*f = m && m->file ? dtcap_file_by_id(s->r, m->file) : NULL;
	*sym = NULL;
	if (!*f)
		return -1;
	*vaddr = pc - m->start + m->offset + (*f)->load_bias_hint;
	*sym = sym_at(*f, *vaddr);
	return 0;
}
