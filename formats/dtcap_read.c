/*
 * dtcap_read.c - the capture reader.
 *
 * The file is mapped read-only.  Open walks every chunk once (through the
 * footer index when the trailer is intact, else by scanning from the file
 * header), verifies both checksums of each, decodes the metadata and
 * records where each event block is.  Event blocks are decompressed only
 * when asked for, one column segment at a time.  Every length read from
 * the file is checked against the bytes that are really there and against
 * fixed limits before it sizes anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "dtcap.h"
#include "dtcap_int.h"

/* The fuzzer's second build skips checksums so that mutated inputs reach
 * the parsers behind them; nothing else may define this. */
#ifdef DTC_FUZZ_NO_CHECKSUM
#define NO_CHECKSUM 1
#else
#define NO_CHECKSUM 0
#endif

struct rstack {
	uint64_t	off;
	uint32_t	n;
	uint32_t	kind;
};

struct rcount {
	uint64_t	ts;
	uint32_t	ncpus;
	struct dtcap_count *percpu;
	struct dtcap_count rec;
};

struct rblock {
	const uint8_t	*dir;		/* column directory in the map */
	unsigned	ncols;		/* directory entries */
	unsigned	nslots;		/* argument columns */
	unsigned	dirlen;		/* bytes per entry: 10 (v2) or 18 (v3) */
	uint32_t	ndict;		/* contexts */
	const uint8_t	*pay;
	uint32_t	plen;
	uint8_t		pos[DTC_NCOLS + 1];	/* id -> entry, 255 absent;
						 * [DTC_NCOLS]: DTC_C_XCTX */
	/* its BSUM: lists at sumoff in r->sumv, nsum[] entries each; hassum 0
	 * when the file has none for it */
	uint64_t	sumoff;
	uint32_t	nsum[4];
	int		hassum;
};

struct rclock {
	uint64_t	mono;
	int64_t		real;
};

struct arena {
	struct arena	*next;
	size_t		used, cap;
	char		mem[];
};

struct rsrcl {
	uint32_t	file;
	struct dtcap_srcline s;
};

struct dtcap_reader {
	char		*path;
	const uint8_t	*map;
	size_t		size;
	char		err[512];
	char		warn[1024];
	int		has_warn;
	ZSTD_DCtx	*dctx;
	struct arena	*arena;
	uint32_t	version, compat, incompat;
	uint32_t	hdrlen;
	unsigned	oflags;		/* DTCAP_OPEN_* */
	struct dtcap_ident ident;	/* [I] the fstat at open (hash: dtcap_ident) */
	unsigned	status;		/* DTCAP_ST_* but EMPTY */
	int		fatal;		/* the last error is not damage (memory) */
	uint64_t	mem_limit, mem_used;
	struct dtcap_damage *damage;
	size_t		ndamage;
	struct rclock	*clocks;
	size_t		nclocks;
	struct { uint32_t type; uint64_t off; } *refs;	/* chunks seen */
	size_t		nrefs, refs_cap;

	struct dtcap_host host;
	struct dtcap_probe *probes;
	size_t		nprobes;
	struct dt_htab	probe_ht;	/* probe id -> index in probes */
	char		(*comms)[DTCAP_COMMLEN];
	uint32_t	ncomms;
	struct rstack	*stacks;
	uint32_t	nstacks;
	uint64_t	*frames;
	size_t		nframes, frames_cap;
	char		*kallsyms, *modules;	/* malloc'd: a later chunk frees */
	size_t		kallsyms_len, modules_len;
	struct dtcap_file *files;
	size_t		nfiles;
	struct dtcap_proc *procs;
	size_t		nprocs;
	struct rsrcl	*srcl;		/* sorted by (file, addr) once open */
	size_t		nsrcl, srcl_cap;
	void		**srcl_mem;	/* each SRCL chunk's frames */
	size_t		nsrcl_mem, srcl_mem_cap;
	uint32_t	*proc_idx;	/* procs sorted by (pid, ts, order) */
	struct rcount	*counts;
	size_t		ncounts;
	struct dtcap_blockinfo *blocks;
	struct rblock	*rblocks;
	size_t		nblocks, blocks_cap;
	uint64_t	nevents;
	uint64_t	*sumv;		/* the blocks' BSUM lists, back to back */
	size_t		nsumv, sumv_cap;
};

static _Thread_local char open_err[512];

static void rerr(struct dtcap_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rerr(struct dtcap_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dtc_vfmt(r->err, sizeof(r->err), r->path, fmt, ap);
	va_end(ap);
}

/* Warnings accumulate ("; " between), so damage skipped by salvage and a
 * cut at the end are both told; the first ones win when it is full. */
static void rwarn(struct dtcap_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rwarn(struct dtcap_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r->has_warn) {
		dtc_fmt(r->warn, sizeof(r->warn), r->path, "%s", msg);
	} else {
		size_t n = strlen(r->warn);
		snprintf(r->warn + n, sizeof(r->warn) - n, "; %s", msg);
	}
	r->has_warn = 1;
}

static void rwarn_trunc(struct dtcap_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void rwarn_trunc(struct dtcap_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	char msg[400];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rwarn(r, "truncated at offset %llu: %s", (unsigned long long)off, msg);
	r->status |= DTCAP_ST_TRUNCATED;
	r->has_warn = 1;
}

const char *dtcap_open_error(void) { return open_err; }
const char *dtcap_reader_error(const struct dtcap_reader *r) { return r ? r->err : open_err; }
const char *dtcap_reader_warning(const struct dtcap_reader *r)
{
	return r && r->has_warn ? r->warn : NULL;
}

/* Memory the metadata may hold: every allocation sized by the file asks
 * first, so a small crafted file cannot make the reader take gigabytes. */
static int charge(struct dtcap_reader *r, uint64_t n)
{
	if (n > r->mem_limit - r->mem_used) {
		rerr(r, "metadata needs more than %llu MiB of memory (the limit for this "
		     "file; damaged or hostile?)", (unsigned long long)(r->mem_limit >> 20));
		r->fatal = 1;
		return -1;
	}
	r->mem_used += n;
	return 0;
}

static void uncharge(struct dtcap_reader *r, uint64_t n)
{
	r->mem_used -= n < r->mem_used ? n : r->mem_used;
}

static int nomem(struct dtcap_reader *r)
{
	if (!r->fatal)
		rerr(r, "out of memory");
	r->fatal = 1;
	return -1;
}

static char *arena_dup(struct dtcap_reader *r, const char *s, size_t n)
{
	struct arena *a = r->arena;
	if (!a || a->cap - a->used < n + 1) {
		size_t cap = n + 1 > 65536 ? n + 1 : 65536;
		if (charge(r, cap))
			return NULL;
		a = malloc(sizeof(*a) + cap);
		if (!a)
			return NULL;
		a->used = 0;
		a->cap = cap;
		a->next = r->arena;
		r->arena = a;
	}
	char *p = a->mem + a->used;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	a->used += n + 1;
	return p;
}

/* Grow *arr (of elem-sized items) to hold need items, within the budget:
 * the growth is charged before it is allocated. */
static int rgrow(struct dtcap_reader *r, void *arrp, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	if (dt_grow_cap(*cap, need, elem, 16, SIZE_MAX, &nc))
		return nomem(r);
	if (nc == *cap)
		return 0;
	if (charge(r, (uint64_t)(nc - *cap) * elem))
		return -1;
	void *n = realloc(*(void **)arrp, nc * elem);
	if (!n)
		return nomem(r);
	*(void **)arrp = n;
	*cap = nc;
	return 0;
}

/* ------------------------------------------------------- metadata chunks */

struct chunk {
	uint64_t	off;
	uint32_t	type, flags, xlen, clen, ulen;
	const uint8_t	*xh, *pay;
};

#define DAMAGED(c) do { \
	char tn_[8]; \
	rerr(r, "damaged %s chunk at offset %llu", dtc_type_name((c)->type, tn_), \
	     (unsigned long long)(c)->off); \
	return -1; \
} while (0)

static int copy_str(struct dtc_cur *cu, char *dst, size_t dstsz)
{
	size_t n;
	const char *s = dtc_get_str(cu, dstsz - 1, &n);
	if (!s)
		return -1;
	memcpy(dst, s, n);
	dst[n] = 0;
	return 0;
}

static const char *dup_str(struct dtcap_reader *r, struct dtc_cur *cu, size_t max)
{
	size_t n;
	const char *s = dtc_get_str(cu, max, &n);
	if (!s)
		return NULL;
	const char *d = arena_dup(r, s, n);
	if (!d) {
		cu->err = 2;	/* ENOMEM or budget, not damage */
		nomem(r);
	}
	return d;
}

static int add_clock(struct dtcap_reader *r, uint64_t mono, int64_t real)
{
	size_t cap = r->nclocks;
	if (rgrow(r, &r->clocks, &cap, r->nclocks + 1, sizeof(*r->clocks)))
		return -1;
	r->clocks[r->nclocks++] = (struct rclock){mono, real};
	return 0;
}

/* Probe ids -> index through a hash table: a table of n probes is then
 * read in O(n) however often ids repeat. */
static uint64_t probe_hash(uint32_t id)
{
	return (id * 0x9e3779b97f4a7c15ULL) >> 32;
}

static uint64_t probe_rehash(const void *ctx, uint32_t e)
{
	return probe_hash(((const struct dtcap_reader *)ctx)->probes[e].id);
}

static uint32_t probe_find(const struct dtcap_reader *r, uint32_t id)
{
	uint32_t e;
	for (size_t j = dt_htab_first(&r->probe_ht, probe_hash(id));
	     (e = dt_htab_at(&r->probe_ht, j)) != DT_HTAB_NONE; j = dt_htab_next(&r->probe_ht, j))
		if (r->probes[e].id == id)
			return e;
	return DT_HTAB_NONE;
}

/* Room for n probes in the table, its slots charged to the budget. */
static int probe_ht_fit(struct dtcap_reader *r, size_t n)
{
	size_t old = r->probe_ht.slot ? r->probe_ht.mask + 1 : 0;
	size_t ns = dt_htab_slots_for(&r->probe_ht, n);
	if (ns == old)
		return 0;
	if (!ns || charge(r, ns * sizeof(uint32_t)))
		return -1;
	if (dt_htab_reserve(&r->probe_ht, n, probe_rehash, r)) {
		uncharge(r, ns * sizeof(uint32_t));
		return nomem(r);
	}
	uncharge(r, old * sizeof(uint32_t));
	return 0;
}

static int do_host(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	struct dtcap_host h = {0};
	if (copy_str(cu, h.kernel, sizeof(h.kernel)) ||
	    copy_str(cu, h.hostname, sizeof(h.hostname)))
		DAMAGED(c);
	h.ncpus = dtc_get_u32(cu);
	h.clock_mono_ns = dtc_get_u64(cu);
	h.clock_real_ns = (int64_t)dtc_get_u64(cu);
	h.start_ns = dtc_get_u64(cu);
	if (copy_str(cu, h.command, sizeof(h.command)) || cu->err)
		DAMAGED(c);
	/* version 3 appends; version 2 ends here.  Bytes after the fields
	 * this reader knows are a later version's additions: ignored. */
	if (cu->p < cu->end &&
	    (copy_str(cu, h.tool_version, sizeof(h.tool_version)) ||
	     copy_str(cu, h.kernel_build_id, sizeof(h.kernel_build_id)) ||
	     copy_str(cu, h.cpu_model, sizeof(h.cpu_model)) ||
	     copy_str(cu, h.boot_id, sizeof(h.boot_id))))
		DAMAGED(c);
	/* appended later in version 3: absent in the first version-3 files */
	if (cu->p < cu->end && copy_str(cu, h.source, sizeof(h.source)))
		DAMAGED(c);
	r->host = h;
	return add_clock(r, h.clock_mono_ns, h.clock_real_ns);
}

static int do_probes(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p))
		DAMAGED(c);
	size_t cap = r->nprobes;
	if (rgrow(r, &r->probes, &cap, r->nprobes + n, sizeof(*r->probes)))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct dtcap_probe p;
		memset(&p, 0, sizeof(p));
		uint64_t id = dtc_get_uv(cu), fl = dtc_get_uv(cu);
		if (id == 0 || id >= DTCAP_MAXPROBEID || fl > UINT32_MAX)
			DAMAGED(c);
		p.id = (uint32_t)id;
		p.flags = (uint32_t)fl;
		if (copy_str(cu, p.name, sizeof(p.name)))
			DAMAGED(c);
		uint64_t na = dtc_get_uv(cu);
		if (na > DTCAP_MAXARGS)
			DAMAGED(c);
		p.nargs = (uint32_t)na;
		for (uint32_t k = 0; k < p.nargs; k++) {
			if (copy_str(cu, p.args[k].name, sizeof(p.args[k].name)) ||
			    copy_str(cu, p.args[k].type, sizeof(p.args[k].type)))
				DAMAGED(c);
			p.args[k].slot = dtc_get_u8(cu);
			p.args[k].nslots = dtc_get_u8(cu);
		}
		if (cu->err)
			DAMAGED(c);
		/* a later table redefines an id rather than adding a twin */
		if (probe_ht_fit(r, r->nprobes + 1))
			return -1;
		uint32_t e = probe_find(r, p.id);
		if (e != DT_HTAB_NONE) {
			r->probes[e] = p;
		} else {
			r->probes[r->nprobes] = p;
			if (dt_htab_add(&r->probe_ht, probe_hash(p.id), (uint32_t)r->nprobes,
					probe_rehash, r))
				return nomem(r);
			r->nprobes++;
		}
	}
	return 0;
}

static int do_comms(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t first = dtc_get_uv(cu), n = dtc_get_uv(cu);
	if (cu->err || first != (uint64_t)r->ncomms + 1 ||
	    n > (uint64_t)(cu->end - cu->p))
		DAMAGED(c);
	size_t cap = r->ncomms;
	if (rgrow(r, &r->comms, &cap, r->ncomms + n, sizeof(*r->comms)))
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (copy_str(cu, r->comms[r->ncomms + i], DTCAP_COMMLEN))
			DAMAGED(c);
	r->ncomms += (uint32_t)n;
	return 0;
}

static int do_stacks(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t first = dtc_get_uv(cu), n = dtc_get_uv(cu);
	if (cu->err || first != (uint64_t)r->nstacks + 1 ||
	    n > (uint64_t)(cu->end - cu->p) || r->nstacks + n > UINT32_MAX / 2)
		DAMAGED(c);
	size_t cap = r->nstacks;
	if (rgrow(r, &r->stacks, &cap, r->nstacks + n, sizeof(*r->stacks)))
		return -1;
	uint64_t prev = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = dtc_get_uv(cu);
		uint32_t nf = (uint32_t)(v >> 2);
		if (cu->err || v >> 2 > DTCAP_MAXFRAMES ||
		    nf > (uint64_t)(cu->end - cu->p))
			DAMAGED(c);
		if (rgrow(r, &r->frames, &r->frames_cap, r->nframes + nf, 8))
			return -1;
		/* no frames yet and an empty stack: frames is still NULL */
		uint64_t *f = nf ? r->frames + r->nframes : NULL;
		for (uint32_t k = 0; k < nf; k++) {
			prev += (uint64_t)dtc_unzz(dtc_get_uv(cu));
			f[k] = prev;
		}
		if (cu->err)
			DAMAGED(c);
		if (nf)
			prev = f[0];
		r->stacks[r->nstacks + i] = (struct rstack){r->nframes, nf, (uint32_t)(v & 3)};
		r->nframes += nf;
	}
	r->nstacks += (uint32_t)n;
	return 0;
}

/* Takes t (malloc'd, n bytes + NUL, already charged); the text it
 * replaces is freed: only the last one counts. */
static void do_text(struct dtcap_reader *r, uint32_t type, char *t, size_t n)
{
	char **dst = type == DTC_KSYM ? &r->kallsyms : &r->modules;
	size_t *len = type == DTC_KSYM ? &r->kallsyms_len : &r->modules_len;
	if (*dst)
		uncharge(r, *len + 1);
	free(*dst);
	*dst = t;
	*len = n;
}

static int do_file(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	struct dtcap_file f;
	memset(&f, 0, sizeof(f));
	uint64_t id = dtc_get_uv(cu);
	if (cu->err || id != r->nfiles + 1)
		DAMAGED(c);
	f.id = (uint32_t)id;
	if (!(f.path = dup_str(r, cu, DTC_MAX_PATH)))
		goto bad;
	f.build_id_len = dtc_get_u8(cu);
	if (f.build_id_len > 20)
		DAMAGED(c);
	const uint8_t *bid = dtc_get_bytes(cu, f.build_id_len);
	if (bid)
		memcpy(f.build_id, bid, f.build_id_len);
	f.load_bias_hint = dtc_get_u64(cu);
	uint64_t ns = dtc_get_uv(cu);
	/* every symbol takes at least 3 bytes */
	if (cu->err || ns > (uint64_t)(cu->end - cu->p) / 3)
		DAMAGED(c);
	struct dtcap_sym *syms = NULL;
	if (ns) {
		if (charge(r, ns * sizeof(*syms)))
			return -1;
		syms = malloc(ns * sizeof(*syms));
		if (!syms)
			return nomem(r);
	}
	uint64_t addr = 0;
	for (uint64_t i = 0; i < ns; i++) {
		addr += dtc_get_uv(cu);
		syms[i].addr = addr;
		syms[i].size = dtc_get_uv(cu);
		if (!(syms[i].name = dup_str(r, cu, DTC_MAX_PATH))) {
			free(syms);
			goto bad;
		}
	}
	f.nsyms = (uint32_t)ns;
	f.syms = syms;
	size_t cap = r->nfiles;
	if (rgrow(r, &r->files, &cap, r->nfiles + 1, sizeof(*r->files))) {
		free(syms);
		return -1;
	}
	r->files[r->nfiles++] = f;
	return 0;
bad:
	if (cu->err == 2)
		return -1;
	DAMAGED(c);
}

/* SRCL: file, string table, then addresses with their inline chains. */
static int do_srcl(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t file = dtc_get_uv(cu);
	uint64_t ns = dtc_get_uv(cu);
	/* every string takes at least a byte, every address 5 */
	if (cu->err || file == 0 || file > r->nfiles || ns > (uint64_t)(cu->end - cu->p))
		DAMAGED(c);
	const char **strs = NULL;
	struct dtcap_srcframe *fr = NULL;
	int ret = -1;
	if (ns && (charge(r, ns * sizeof(*strs)) || !(strs = malloc(ns * sizeof(*strs)))))
		return r->fatal ? -1 : nomem(r);
	for (uint64_t i = 0; i < ns; i++)
		if (!(strs[i] = dup_str(r, cu, DTC_MAX_PATH)))
			goto bad;
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p) / 5)
		goto bad;
	/* a first pass checks the shape and counts the frames, so the
	 * second allocates exactly what it fills */
	struct dtc_cur c2 = *cu;
	uint64_t fmax = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d = dtc_get_uv(&c2), k = dtc_get_uv(&c2);
		if (c2.err || (i && d == 0) || k == 0 || k > DTCAP_MAXINLINE)
			goto bad;
		for (uint64_t j = 0; j < 3 * k; j++)
			dtc_get_uv(&c2);
		fmax += k;
	}
	if (c2.err || c2.p != c2.end)
		goto bad;
	if (n && (charge(r, fmax * sizeof(*fr)) || !(fr = malloc(fmax * sizeof(*fr))))) {
		if (!r->fatal)
			nomem(r);
		goto out;
	}
	if (n && (rgrow(r, &r->srcl_mem, &r->srcl_mem_cap, r->nsrcl_mem + 1,
			sizeof(*r->srcl_mem)) ||
		  rgrow(r, &r->srcl, &r->srcl_cap, r->nsrcl + n, sizeof(*r->srcl)))) {
		free(fr);
		goto out;
	}
	if (n)
		r->srcl_mem[r->nsrcl_mem++] = fr;	/* freed at close */
	uint64_t addr = 0, nf = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d = dtc_get_uv(cu);
		uint64_t k = dtc_get_uv(cu);
		if (cu->err || (i && d == 0) || k == 0 || k > DTCAP_MAXINLINE || nf + k > fmax)
			goto bad;
		addr += d;
		struct rsrcl *e = &r->srcl[r->nsrcl + i];
		e->file = (uint32_t)file;
		e->s = (struct dtcap_srcline){addr, (uint32_t)k, fr + nf};
		for (uint64_t j = 0; j < k; j++, nf++) {
			uint64_t fn = dtc_get_uv(cu), fl = dtc_get_uv(cu), ln = dtc_get_uv(cu);
			if (cu->err || fn >= ns || fl >= ns || ln > UINT32_MAX)
				goto bad;
			fr[nf] = (struct dtcap_srcframe){strs[fn], strs[fl], (uint32_t)ln};
		}
	}
	if (cu->p != cu->end)
		goto bad;
	r->nsrcl += n;
	ret = 0;
	goto out;
bad:
	if (cu->err != 2) {
		char tn[8];
		rerr(r, "damaged %s chunk at offset %llu", dtc_type_name(c->type, tn),
		     (unsigned long long)c->off);
	}
out:
	free(strs);
	uncharge(r, ns * sizeof(*strs));
	return ret;
}

static int do_procs(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p) / 8)
		DAMAGED(c);
	size_t cap = r->nprocs;
	if (rgrow(r, &r->procs, &cap, r->nprocs + n, sizeof(*r->procs)))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct dtcap_proc p;
		memset(&p, 0, sizeof(p));
		p.ts = dtc_get_u64(cu);
		uint64_t pid = dtc_get_uv(cu), ppid = dtc_get_uv(cu);
		if (pid > UINT32_MAX || ppid > UINT32_MAX)
			DAMAGED(c);
		p.pid = (uint32_t)pid;
		p.ppid = (uint32_t)ppid;
		if (copy_str(cu, p.comm, sizeof(p.comm)))
			DAMAGED(c);
		if (!(p.exe = dup_str(r, cu, DTC_MAX_PATH)))
			goto bad;
		uint64_t nm = dtc_get_uv(cu);
		if (cu->err || nm > (uint64_t)(cu->end - cu->p) / 6)
			DAMAGED(c);
		if (charge(r, nm * sizeof(struct dtcap_map)))
			return -1;
		struct dtcap_map *m = nm ? calloc(nm, sizeof(*m)) : NULL;
		if (nm && !m)
			return nomem(r);
		for (uint64_t k = 0; k < nm; k++) {
			m[k].start = dtc_get_uv(cu);
			m[k].end = m[k].start + dtc_get_uv(cu);
			m[k].offset = dtc_get_uv(cu);
			uint64_t file = dtc_get_uv(cu), prot = dtc_get_uv(cu);
			if (file > r->nfiles || prot > 7 || !(m[k].name = dup_str(r, cu, DTC_MAX_PATH))) {
				free(m);
				goto bad;
			}
			m[k].file = (uint32_t)file;
			m[k].prot = (uint32_t)prot;
		}
		p.nmaps = (uint32_t)nm;
		p.maps = m;
		r->procs[r->nprocs++] = p;
	}
	return 0;
bad:
	if (cu->err == 2)
		return -1;
	DAMAGED(c);
}

static int do_counters(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	struct rcount k;
	memset(&k, 0, sizeof(k));
	k.ts = dtc_get_u64(cu);
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p) / 6)
		DAMAGED(c);
	k.ncpus = (uint32_t)n;
	if (charge(r, (n + 1) * sizeof(*k.percpu)))
		return -1;
	k.percpu = calloc(n + 1, sizeof(*k.percpu));
	if (!k.percpu)
		return nomem(r);
	for (uint64_t i = 0; i <= n; i++) {
		struct dtcap_count *x = i < n ? &k.percpu[i] : &k.rec;
		x->produced = dtc_get_uv(cu);
		x->read = dtc_get_uv(cu);
		x->dropped = dtc_get_uv(cu);
		x->skipped = dtc_get_uv(cu);
		x->recursive = dtc_get_uv(cu);
		x->nested = dtc_get_uv(cu);
	}
	/* version 3: a (monotonic, wall) clock pair follows */
	uint64_t mono = 0, real = 0;
	int clock = !cu->err && cu->end - cu->p >= 16;
	if (clock) {
		mono = dtc_get_u64(cu);
		real = dtc_get_u64(cu);
	}
	size_t cap = r->ncounts;
	if (cu->err || rgrow(r, &r->counts, &cap, r->ncounts + 1, sizeof(*r->counts))) {
		free(k.percpu);
		if (cu->err)
			DAMAGED(c);
		return -1;
	}
	r->counts[r->ncounts++] = k;
	return clock ? add_clock(r, mono, (int64_t)real) : 0;
}

/*
 * The recorder's user-stack tally of the counter snapshot just read:
 * values beyond the three known are skipped, a tally without a snapshot
 * before it is ignored.
 */
static int do_ustack(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t v[3] = {0, 0, 0};
	(void)dtc_get_u64(cu);
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p))
		DAMAGED(c);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t x = dtc_get_uv(cu);
		if (i < 3)
			v[i] = x;
	}
	if (cu->err)
		DAMAGED(c);
	if (r->ncounts) {
		struct dtcap_count *rec = &r->counts[r->ncounts - 1].rec;
		rec->ustack_dwarf = v[0];
		rec->ustack_dwarf_trunc = v[1];
		rec->ustack_fp_behind = v[2];
	}
	return 0;
}

/*
 * A block summary: it belongs to the event block right before it (named
 * by offset).  One that names another block (the one before was damaged
 * and skipped by salvage) or a block already summarised is ignored; one
 * that does not parse or whose counts do not add up to its block is damage.
 */
static int do_bsum(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t off = dtc_get_u64(cu);
	if (cu->err)
		DAMAGED(c);
	if (!r->nblocks || r->blocks[r->nblocks - 1].offset != off ||
	    r->rblocks[r->nblocks - 1].hassum)
		return 0;
	const struct dtcap_blockinfo *bi = &r->blocks[r->nblocks - 1];
	struct rblock *rb = &r->rblocks[r->nblocks - 1];
	/* room for the longest lists: 9 values a row, and no more values
	 * than the payload has bytes left (each is one at least) */
	size_t room = 9 * (size_t)bi->rows, left = (size_t)(cu->end - cu->p);
	if (room > left)
		room = left;
	if (rgrow(r, &r->sumv, &r->sumv_cap, r->nsumv + room, sizeof(*r->sumv)))
		return -1;
	uint32_t n[4];
	if (dtc_bsum_parse(cu, bi->rows, bi->pid_min, bi->pid_max, r->ncomms,
			   r->sumv + r->nsumv, n))
		DAMAGED(c);
	rb->sumoff = r->nsumv;
	memcpy(rb->nsum, n, sizeof(n));
	rb->hassum = 1;
	r->nsumv += 2 * (size_t)n[0] + 2 * (size_t)n[1] + 2 * (size_t)n[2] + 3 * (size_t)n[3];
	return 0;
}

int dtcap_block_summary(const struct dtcap_reader *r, size_t i, struct dtcap_blocksum *s)
{
	if (i >= r->nblocks || !r->rblocks[i].hassum)
		return 0;
	const struct rblock *rb = &r->rblocks[i];
	const uint64_t *v = r->sumv + rb->sumoff;
	s->nprobe = rb->nsum[0];
	s->ncpu = rb->nsum[1];
	s->ncomm = rb->nsum[2];
	s->npid = rb->nsum[3];
	s->probe = v;
	s->cpu = s->probe + 2 * (size_t)s->nprobe;
	s->comm = s->cpu + 2 * (size_t)s->ncpu;
	s->pid = s->comm + 2 * (size_t)s->ncomm;
	return 1;
}

/* The column directory entry of id in block rb, or NULL if absent. */
static const uint8_t *dir_entry(const struct rblock *rb, unsigned id)
{
	unsigned k = id == DTC_C_XCTX ? DTC_NCOLS : id;
	if (k > DTC_NCOLS || rb->pos[k] == 255)
		return NULL;
	return rb->dir + (size_t)rb->pos[k] * rb->dirlen;
}

/* The stored bytes of directory entry k. */
static const uint8_t *seg_bytes(const struct rblock *rb, unsigned k)
{
	const uint8_t *seg = rb->pay;
	for (unsigned i = 0; i < k; i++)
		seg += dtc_rd32(rb->dir + (size_t)i * rb->dirlen + 6);
	return seg;
}

/* Every segment of a version-3 block against its directory checksum. */
static int block_sums_ok(const struct rblock *rb)
{
	if (rb->dirlen != DTC_BLK_COLDIR || NO_CHECKSUM)
		return 1;
	const uint8_t *seg = rb->pay;
	for (unsigned i = 0; i < rb->ncols; i++) {
		const uint8_t *d = rb->dir + (size_t)i * rb->dirlen;
		uint32_t stored = dtc_rd32(d + 6);
		if (XXH3_64bits(seg, stored) != dtc_rd64(d + 10))
			return 0;
		seg += stored;
	}
	return 1;
}

static int do_block(struct dtcap_reader *r, const struct chunk *c)
{
	struct dtc_cur cu = {c->xh, c->xh + c->xlen, 0};
	struct dtcap_blockinfo bi;
	int v3 = r->version >= 3;
	unsigned dirlen = v3 ? DTC_BLK_COLDIR : DTC_BLK_COLDIR_V2;
	bi.offset = c->off;
	bi.rows = dtc_get_u32(&cu);
	bi.tmin = dtc_get_u64(&cu);
	bi.tmax = dtc_get_u64(&cu);
	bi.pid_min = dtc_get_u32(&cu);
	bi.pid_max = dtc_get_u32(&cu);
	uint32_t ndict = dtc_get_u32(&cu);
	unsigned ncols = dtc_get_u8(&cu);
	if (cu.err || bi.rows == 0 || bi.rows > DTC_MAX_ROWS || bi.tmin > bi.tmax ||
	    ndict == 0 || ndict > bi.rows ||
	    bi.pid_min > bi.pid_max || ncols < DTC_C_ARG0 ||
	    ncols > (v3 ? DTC_MAX_COLS : DTC_NCOLS) ||
	    c->xlen != DTC_BLK_FIXED + ncols * dirlen ||
	    c->flags != (v3 ? DTC_CF_XSUM : 0))
		DAMAGED(c);
	struct rblock rb = {cu.p, ncols, 0, dirlen, ndict, c->pay, c->clen, {0}, 0, {0}, 0};
	memset(rb.pos, 255, sizeof(rb.pos));
	uint64_t total = 0;
	int last = -1;
	for (unsigned i = 0; i < ncols; i++) {
		const uint8_t *d = cu.p + (size_t)i * dirlen;
		uint32_t raw = dtc_rd32(d + 2), stored = dtc_rd32(d + 6);
		unsigned id = d[0];
		/* ids ascend; 0 .. NARGS all present, argument slots follow
		 * without gaps; ids a reader does not know are skipped unread */
		if ((int)id <= last || (id <= DTC_C_ARG0 && id != i) ||
		    (id > DTC_C_ARG0 && id < 32 && id != (unsigned)last + 1))
			DAMAGED(c);
		last = (int)id;
		total += stored;
		int known = id < DTC_NCOLS || id == DTC_C_XCTX;
		if (!known)
			continue;
		if (d[1] > DTC_M_ZSTD || raw > 9 + 8ull * bi.rows ||
		    (d[1] == DTC_M_RAW && raw != stored))
			DAMAGED(c);
		rb.pos[id == DTC_C_XCTX ? DTC_NCOLS : id] = (uint8_t)i;
		rb.nslots += id >= DTC_C_ARG0 && id < DTC_NCOLS;
	}
	if (last < DTC_C_NARGS || total != c->clen)
		DAMAGED(c);
	for (unsigned id = 0; id <= DTC_C_NARGS; id++)
		if (rb.pos[id] == 255)
			DAMAGED(c);
	/* salvage wants only blocks that will decode: it pays for the sums */
	if ((r->oflags & DTCAP_OPEN_SALVAGE) && !block_sums_ok(&rb)) {
		char tn[8];
		rerr(r, "damaged %s chunk at offset %llu: column checksum mismatch",
		     dtc_type_name(c->type, tn), (unsigned long long)c->off);
		return -1;
	}
	size_t cap = r->blocks_cap;
	if (rgrow(r, &r->blocks, &cap, r->nblocks + 1, sizeof(*r->blocks)) ||
	    rgrow(r, &r->rblocks, &r->blocks_cap, r->nblocks + 1, sizeof(*r->rblocks)))
		return -1;
	r->blocks[r->nblocks] = bi;
	r->rblocks[r->nblocks] = rb;
	r->nblocks++;
	r->nevents += bi.rows;
	return 0;
}

static int known_type(uint32_t t)
{
	switch (t) {
	case DTC_HOST: case DTC_PROB: case DTC_KSYM: case DTC_MODS: case DTC_KSYC:
	case DTC_FILE: case DTC_PROC: case DTC_COMM: case DTC_STCK: case DTC_EVNT:
	case DTC_CNTR: case DTC_USTK: case DTC_FOOT: case DTC_SRCL: case DTC_BSUM:
		return 1;
	}
	return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t zero[4096];
	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);
		if (memcmp(p, zero, k))
			return 0;
		p += k;
		n -= k;
	}
	return 1;
}

enum { CH_BAD = -1, CH_OK = 0, CH_CUT = 1 };

/*
 * Validate the chunk at off: CH_OK and *c filled if whole and intact,
 * CH_CUT if the file ends inside it, CH_BAD (error set) on damage; *hdr_ok
 * then says whether the 32-byte header itself checked out.  Unknown types
 * are only framed: their payload is neither hashed nor decompressed.
 */
static int read_chunk(struct dtcap_reader *r, uint64_t off, struct chunk *c, int *hdr_ok)
{
	const uint8_t *h = r->map + off;
	*hdr_ok = 0;
	if (r->size - off < DTC_CHDR_LEN)
		return CH_CUT;
	if (dtc_rd32(h + 28) != dtc_hdr_sum(h) && !NO_CHECKSUM) {
		/* a crash can leave zeros where the last writes were going:
		 * a cut, but only if nothing but zeros follows */
		if (all_zero(h, r->size - off))
			return CH_CUT;
		if (all_zero(h, DTC_CHDR_LEN))
			rerr(r, "zeroed chunk header at offset %llu with data after it",
			     (unsigned long long)off);
		else
			rerr(r, "damaged chunk header at offset %llu", (unsigned long long)off);
		return CH_BAD;
	}
	*hdr_ok = 1;
	c->off = off;
	c->type = dtc_rd32(h);
	c->flags = dtc_rd32(h + 4);
	c->xlen = dtc_rd32(h + 8);
	c->clen = dtc_rd32(h + 12);
	c->ulen = dtc_rd32(h + 16);
	char tn[8];
	int known = known_type(c->type);
	uint32_t okflags = DTC_CF_ZSTD | (c->type == DTC_EVNT && r->version >= 3 ? DTC_CF_XSUM : 0);
	if (c->xlen > DTC_MAX_XLEN ||
	    (known && (c->ulen > DTC_MAX_ULEN || (c->flags & ~okflags) ||
		       (!(c->flags & DTC_CF_ZSTD) && c->type != DTC_EVNT && c->ulen != c->clen)))) {
		rerr(r, "damaged %s chunk at offset %llu: bad lengths",
		     dtc_type_name(c->type, tn), (unsigned long long)off);
		return CH_BAD;
	}
	if ((uint64_t)c->xlen + c->clen > r->size - off - DTC_CHDR_LEN)
		return CH_CUT;
	c->xh = h + DTC_CHDR_LEN;
	c->pay = c->xh + c->xlen;
	if (!known)
		return CH_OK;
	size_t span = c->flags & DTC_CF_XSUM ? c->xlen : (size_t)c->xlen + c->clen;
	if (XXH3_64bits(c->xh, span) != dtc_rd64(h + 20) && !NO_CHECKSUM) {
		rerr(r, "damaged %s chunk at offset %llu: checksum mismatch",
		     dtc_type_name(c->type, tn), (unsigned long long)off);
		return CH_BAD;
	}
	return CH_OK;
}

static uint64_t chunk_end(const struct chunk *c)
{
	return c->off + DTC_CHDR_LEN + c->xlen + c->clen;
}

/* Decompress a metadata payload into a fresh buffer of exactly ulen bytes
 * plus a NUL, charged to the budget (the caller uncharges or keeps it). */
static uint8_t *inflate(struct dtcap_reader *r, const struct chunk *c)
{
	char tn[8];
	/* zstd cannot expand more than ~32000x; beyond that it is a lie.
	 * The frame header must also agree, before we allocate for it. */
	if ((uint64_t)c->ulen > (uint64_t)c->clen * 32768 + 4096 ||
	    ZSTD_getFrameContentSize(c->pay, c->clen) != c->ulen) {
		rerr(r, "damaged %s chunk at offset %llu: bad size",
		     dtc_type_name(c->type, tn), (unsigned long long)c->off);
		return NULL;
	}
	if (charge(r, (uint64_t)c->ulen + 1))
		return NULL;
	uint8_t *out = malloc((size_t)c->ulen + 1);
	if (!out) {
		uncharge(r, (uint64_t)c->ulen + 1);
		nomem(r);
		return NULL;
	}
	size_t n = ZSTD_decompressDCtx(r->dctx, out, c->ulen, c->pay, c->clen);
	if (ZSTD_isError(n) || n != c->ulen) {
		rerr(r, "damaged %s chunk at offset %llu: %s",
		     dtc_type_name(c->type, tn), (unsigned long long)c->off,
		     ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
		free(out);
		uncharge(r, (uint64_t)c->ulen + 1);
		return NULL;
	}
	out[c->ulen] = 0;
	return out;
}

static int handle_chunk(struct dtcap_reader *r, const struct chunk *c)
{
	if (c->type == DTC_EVNT)
		return do_block(r, c);
	/* FOOT is checked by the scan; a newer writer's chunk types are
	 * skippable by design, and skipped unread */
	if (c->type == DTC_FOOT || !known_type(c->type))
		return 0;
	const uint8_t *p = c->pay;
	uint8_t *mem = NULL;
	if (c->flags & DTC_CF_ZSTD) {
		if (!(mem = inflate(r, c)))
			return -1;
		p = mem;
	}
	struct dtc_cur cu = {p, p + c->ulen, 0};
	int rc = 0;
	switch (c->type) {
	case DTC_HOST: rc = do_host(r, c, &cu); break;
	case DTC_PROB: rc = do_probes(r, c, &cu); break;
	case DTC_COMM: rc = do_comms(r, c, &cu); break;
	case DTC_STCK: rc = do_stacks(r, c, &cu); break;
	case DTC_KSYM:
	case DTC_MODS:
		if (!mem) {
			if (charge(r, (uint64_t)c->ulen + 1))
				return -1;
			if (!(mem = malloc((size_t)c->ulen + 1)))
				return nomem(r);
			memcpy(mem, p, c->ulen);
			mem[c->ulen] = 0;
		}
		do_text(r, c->type, (char *)mem, c->ulen);
		return 0;	/* mem is kept */
	case DTC_KSYC: {
		size_t tl;
		/* the rebuilt text is at most 21 bytes per payload byte */
		uint64_t bound = (uint64_t)c->ulen * 21 + 1;
		if (charge(r, bound)) {
			rc = -1;
			break;
		}
		char *t = dtc_ksym_decode(p, c->ulen, &tl);
		uncharge(r, bound);
		if (!t) {
			char tn[8];
			rerr(r, "damaged %s chunk at offset %llu", dtc_type_name(c->type, tn),
			     (unsigned long long)c->off);
			rc = -1;
			break;
		}
		if (charge(r, (uint64_t)tl + 1)) {
			free(t);
			rc = -1;
			break;
		}
		do_text(r, DTC_KSYM, t, tl);
		break;
	}
	case DTC_FILE: rc = do_file(r, c, &cu); break;
	case DTC_PROC: rc = do_procs(r, c, &cu); break;
	case DTC_CNTR: rc = do_counters(r, c, &cu); break;
	case DTC_USTK: rc = do_ustack(r, c, &cu); break;
	case DTC_SRCL: rc = do_srcl(r, c, &cu); break;
	case DTC_BSUM: rc = do_bsum(r, c, &cu); break;
	}
	if (mem) {
		free(mem);
		uncharge(r, (uint64_t)c->ulen + 1);
	}
	return rc;
}

/* ------------------------------------------------------------- open */

/* The footer's index against the chunks the scan met: 0 if it agrees. */
static int footer_agrees(struct dtcap_reader *r, const struct chunk *fc)
{
	if (!(fc->flags & DTC_CF_ZSTD))
		return -1;
	uint8_t *mem = inflate(r, fc);
	if (!mem)
		return -1;
	struct dtc_cur cu = {mem, mem + fc->ulen, 0};
	uint64_t n = dtc_get_uv(&cu), off = 0;
	int ok = !cu.err && n == r->nrefs;
	for (uint64_t i = 0; ok && i < n; i++) {
		uint32_t type = dtc_get_u32(&cu);
		off += dtc_get_uv(&cu);
		ok = !cu.err && type == r->refs[i].type && off == r->refs[i].off;
	}
	free(mem);
	uncharge(r, (uint64_t)fc->ulen + 1);
	return ok ? 0 : -1;
}

/* The footer is the last chunk: what follows it should be the trailer. */
static void check_end(struct dtcap_reader *r, const struct chunk *fc)
{
	uint64_t end = chunk_end(fc), left = r->size - end;
	const uint8_t *t = r->map + end;
	if (left < DTC_TRAILER_LEN) {
		rwarn_trunc(r, end, left ? "incomplete trailer" : "trailer missing");
		return;
	}
	if (memcmp(t, DTC_TRAILER_MAGIC, 8) ||
	    (XXH3_64bits(t, 24) != dtc_rd64(t + 24) && !NO_CHECKSUM))
		rwarn(r, "damaged trailer at offset %llu (every chunk before it is intact)",
		      (unsigned long long)end);
	else if (dtc_rd64(t + 8) != fc->off || dtc_rd64(t + 16) != r->nrefs ||
		 footer_agrees(r, fc))
		rwarn(r, "footer at offset %llu does not index the chunks before it "
		      "(they were read by scanning)", (unsigned long long)fc->off);
	if (left > DTC_TRAILER_LEN)
		rwarn(r, "%llu bytes after the trailer at offset %llu ignored",
		      (unsigned long long)(left - DTC_TRAILER_LEN), (unsigned long long)end);
}

/* The next offset from `from` on that holds a chunk header whose checksum
 * checks (a type of four capitals first, which is cheap), or 0. */
static uint64_t resync(const struct dtcap_reader *r, uint64_t from)
{
	for (uint64_t o = from; o + DTC_CHDR_LEN <= r->size; o++) {
		const uint8_t *h = r->map + o;
		if ((unsigned)(h[0] - 'A') > 25 || (unsigned)(h[1] - 'A') > 25 ||
		    (unsigned)(h[2] - 'A') > 25 || (unsigned)(h[3] - 'A') > 25)
			continue;
		if (dtc_rd32(h + 28) == dtc_hdr_sum(h))
			return o;
	}
	return 0;
}

/* A trailer at the very end whose footer offset is foot. */
static int trailer_points_at(const struct dtcap_reader *r, uint64_t foot)
{
	if (r->size < r->hdrlen + DTC_TRAILER_LEN)
		return 0;
	const uint8_t *t = r->map + r->size - DTC_TRAILER_LEN;
	return !memcmp(t, DTC_TRAILER_MAGIC, 8) && XXH3_64bits(t, 24) == dtc_rd64(t + 24) &&
	       dtc_rd64(t + 8) == foot;
}

enum { SC_FAIL = -1, SC_STOP = 0, SC_GO = 1 };

/*
 * Damage at off (r->err says what; c is the chunk if its header checked).
 * Nothing intact after it: the last chunk is damaged, which is how a crash
 * or power loss ends a file, so it is a cut.  Else: an error, or with
 * salvage a skipped range (the scan goes on at *next).
 */
static int damage(struct dtcap_reader *r, uint64_t off, const struct chunk *c, uint64_t *next)
{
	if (r->fatal)
		return SC_FAIL;
	uint64_t end = c && chunk_end(c) <= r->size ? chunk_end(c) : off + 1;
	uint64_t nx = resync(r, end);
	if (!nx) {
		if (trailer_points_at(r, off)) {
			rwarn(r, "damaged footer at offset %llu (every chunk before it is intact)",
			      (unsigned long long)off);
			return SC_STOP;
		}
		char what[512];
		const char *e = r->err + strlen(r->path);
		snprintf(what, sizeof(what), "%s", e[0] == ':' ? e + 2 : r->err);
		rwarn_trunc(r, off, "the last chunk is damaged (%s)", what);
		r->err[0] = 0;
		return SC_STOP;
	}
	if (!(r->oflags & DTCAP_OPEN_SALVAGE))
		return SC_FAIL;
	struct dtcap_damage d = {off, nx - off, UINT64_MAX, UINT32_MAX, ""};
	char tn[8];
	if (c) {
		d.blocks_lost = c->type == DTC_EVNT;
		d.events_lost = 0;
		if (c->type == DTC_EVNT) {
			uint32_t rows = c->xlen >= 4 ? dtc_rd32(c->xh) : 0;
			d.events_lost = rows && rows <= DTC_MAX_ROWS ? rows : UINT64_MAX;
		}
		snprintf(d.what, sizeof(d.what), "damaged %s chunk", dtc_type_name(c->type, tn));
	} else {
		snprintf(d.what, sizeof(d.what), "damaged chunk header");
	}
	size_t cap = r->ndamage;
	if (rgrow(r, &r->damage, &cap, r->ndamage + 1, sizeof(*r->damage)))
		return SC_FAIL;
	r->damage[r->ndamage++] = d;
	r->status |= DTCAP_ST_SALVAGED;
	if (r->ndamage <= 3)
		rwarn(r, "salvage: skipped bytes %llu..%llu (%s)", (unsigned long long)off,
		      (unsigned long long)nx, d.what);
	r->err[0] = 0;
	*next = nx;
	return SC_GO;
}

/* The capture ends without its footer: if the last chunk read is an event
 * block, its columns are checked now (cheap: one block), because a crash
 * can leave it with a good header over bad data. */
static void check_last_block(struct dtcap_reader *r)
{
	if (!r->nrefs || r->refs[r->nrefs - 1].type != DTC_EVNT || !r->nblocks)
		return;
	const struct rblock *rb = &r->rblocks[r->nblocks - 1];
	if (block_sums_ok(rb))
		return;
	const struct dtcap_blockinfo *bi = &r->blocks[r->nblocks - 1];
	rwarn_trunc(r, bi->offset, "the last event block is damaged (%u events lost)", bi->rows);
	r->nevents -= bi->rows;
	r->nblocks--;
}

static int note_ref(struct dtcap_reader *r, uint32_t type, uint64_t off)
{
	size_t cap = r->refs_cap;
	if (rgrow(r, &r->refs, &cap, r->nrefs + 1, sizeof(*r->refs)))
		return -1;
	r->refs_cap = cap;
	r->refs[r->nrefs].type = type;
	r->refs[r->nrefs++].off = off;
	return 0;
}

/*
 * Walk the chunks from the file header.  They are back to back, so this is
 * all an index could tell; the footer is then checked against what was
 * met.  Only chunk headers, metadata and event-block directories are read.
 */
static int scan(struct dtcap_reader *r)
{
	uint64_t off = r->hdrlen;
	char tn[8];
	while (off < r->size) {
		struct chunk c;
		int hdr_ok;
		uint64_t next;
		int k = read_chunk(r, off, &c, &hdr_ok);
		if (k == CH_CUT) {
			if (r->size - off < DTC_CHDR_LEN)
				rwarn_trunc(r, off, "incomplete chunk header (%llu bytes)",
					    (unsigned long long)(r->size - off));
			else if (dtc_rd32(r->map + off + 28) != dtc_hdr_sum(r->map + off))
				rwarn_trunc(r, off, "zeros to the end of the file");
			else
				rwarn_trunc(r, off, "incomplete %s chunk%s",
					    dtc_type_name(dtc_rd32(r->map + off), tn),
					    dtc_rd32(r->map + off) == DTC_FOOT ? " (footer)" :
					    "; what followed is lost");
			check_last_block(r);
			return 0;
		}
		if (k == CH_OK && c.type == DTC_FOOT) {
			check_end(r, &c);
			return r->fatal ? -1 : 0;
		}
		if (k == CH_OK) {
			if (note_ref(r, c.type, off))
				return -1;
			if (!handle_chunk(r, &c)) {
				off = chunk_end(&c);
				continue;
			}
			if (r->fatal)
				return -1;
		}
		/* damaged here */
		k = damage(r, off, hdr_ok ? &c : NULL, &next);
		if (k == SC_FAIL)
			return -1;
		if (k == SC_STOP)
			return 0;
		off = next;
	}
	rwarn_trunc(r, off, "no footer (recording did not finish)");
	check_last_block(r);
	return 0;
}

static int proc_cmp(const void *a, const void *b, void *arg)
{
	const struct dtcap_proc *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (p[x].pid != p[y].pid)
		return p[x].pid < p[y].pid ? -1 : 1;
	if (p[x].ts != p[y].ts)
		return p[x].ts < p[y].ts ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* By (file, addr), then file order: a later chunk's duplicate sorts after */
static int srcl_cmp(const void *a, const void *b)
{
	const struct rsrcl *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->s.addr != y->s.addr)
		return x->s.addr < y->s.addr ? -1 : 1;
	return x->s.frames < y->s.frames ? -1 : x->s.frames > y->s.frames;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct dtcap_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The file header: version 2 (16 bytes) or 3 (32, with feature bits and
 * its own checksum).  0, 1 if the file ends inside it, -1 on error. */
static int file_header(struct dtcap_reader *r)
{
	const uint8_t *m = r->map;
	size_t n = r->size < DTC_MAGIC_LEN ? r->size : DTC_MAGIC_LEN;
	if (n && memcmp(m, DTC_MAGIC, n)) {
		rerr(r, "not a dt capture (bad magic at offset 0)");
		return -1;
	}
	if (r->size < 12)
		return 1;
	r->version = dtc_rd32(m + 8);
	if (r->version != DTC_VERSION && r->version != DTC_VERSION_OLD) {
		rerr(r, "unsupported format version %u at offset 8 (this reader reads %u and %u)",
		     r->version, DTC_VERSION_OLD, DTC_VERSION);
		return -1;
	}
	r->hdrlen = r->version == DTC_VERSION ? DTC_FILEHDR_LEN : DTC_FILEHDR_LEN_V2;
	if (r->size < r->hdrlen)
		return 1;
	if (r->version == DTC_VERSION_OLD) {
		if (dtc_rd32(m + 12)) {
			rerr(r, "damaged file header at offset 12 (reserved bytes not zero)");
			return -1;
		}
		return 0;
	}
	if (dtc_rd32(m + 28) != (uint32_t)XXH3_64bits(m, 28) && !NO_CHECKSUM) {
		rerr(r, "damaged file header at offset 0 (checksum mismatch)");
		return -1;
	}
	r->compat = dtc_rd32(m + 16);
	r->incompat = dtc_rd32(m + 20);
	if (dtc_rd32(m + 12) != DTC_FILEHDR_LEN || dtc_rd32(m + 24)) {
		rerr(r, "damaged file header at offset 12 (header length or reserved bytes)");
		return -1;
	}
	if (r->incompat & ~DTC_FI_KNOWN) {
		rerr(r, "needs format features %#x this reader lacks (incompatible feature "
		     "bits at offset 20): read it with a newer dt", r->incompat & ~DTC_FI_KNOWN);
		return -1;
	}
	return 0;
}

static int damage_cmp(const void *a, const void *b)
{
	const struct dtcap_damage *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Salvage: a block that does not decode (its columns, or ids whose
 * definitions were in a skipped range) is dropped and reported, so the
 * tools see only readable blocks. */
static int drop_bad_blocks(struct dtcap_reader *r)
{
	struct dtcap_block *b = dtcap_block_new();
	if (!b)
		return nomem(r);
	size_t keep = 0;
	for (size_t i = 0; i < r->nblocks; i++) {
		if (!dtcap_read_block(r, i, DTCAP_COL_ALL, b)) {
			r->blocks[keep] = r->blocks[i];
			r->rblocks[keep++] = r->rblocks[i];
			continue;
		}
		const struct dtcap_blockinfo *bi = &r->blocks[i];
		const struct rblock *rb = &r->rblocks[i];
		uint64_t end = (uint64_t)(rb->pay - r->map) + rb->plen;
		struct dtcap_damage d = {bi->offset, end - bi->offset, bi->rows, 1,
					 "undecodable EVNT chunk"};
		size_t cap = r->ndamage;
		if (rgrow(r, &r->damage, &cap, r->ndamage + 1, sizeof(*r->damage))) {
			dtcap_block_free(b);
			return -1;
		}
		r->damage[r->ndamage++] = d;
		r->status |= DTCAP_ST_SALVAGED;
		r->nevents -= bi->rows;
		rwarn(r, "salvage: dropped the event block at offset %llu (%u events): %s",
		      (unsigned long long)bi->offset, bi->rows, "it does not decode");
	}
	r->nblocks = keep;
	r->err[0] = 0;
	dtcap_block_free(b);
	if (r->ndamage > 1)
		qsort(r->damage, r->ndamage, sizeof(*r->damage), damage_cmp);
	return 0;
}

struct dtcap_reader *dtcap_open(const char *path)
{
	return dtcap_open_opts(path, NULL);
}

struct dtcap_reader *dtcap_open_opts(const char *path, const struct dtcap_read_opts *o)
{
	struct dtcap_reader *r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		dtc_fmt(open_err, sizeof(open_err), path, "out of memory");
		free(r);
		return NULL;
	}
	r->oflags = o ? o->flags : 0;
	/* O_NONBLOCK: a FIFO or a device given as a capture is refused, not
	 * waited on (opening a FIFO blocks until a writer comes) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		rerr(r, "%s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rerr(r, "%s, not a regular file", S_ISFIFO(st.st_mode) ? "a FIFO" :
		     S_ISCHR(st.st_mode) ? "a character device" : S_ISBLK(st.st_mode) ?
		     "a block device" : S_ISDIR(st.st_mode) ? "a directory" : "a special file");
		goto fail;
	}
	r->size = (size_t)st.st_size;
	r->ident = (struct dtcap_ident){ (uint64_t)st.st_dev, (uint64_t)st.st_ino,
		(uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec * 1000000000u +
		(uint64_t)st.st_mtim.tv_nsec, 0 };
	r->mem_limit = o && o->mem_limit ? o->mem_limit : (64ull << 20) + 256ull * r->size;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			rerr(r, "mmap: %s", strerror(errno));
			goto fail;
		}
		r->map = m;
	}
	close(fd);
	fd = -1;
	if (!(r->dctx = ZSTD_createDCtx())) {
		rerr(r, "out of memory");
		goto fail;
	}
	int k = file_header(r);
	if (k < 0)
		goto fail;
	if (k > 0) {
		rwarn_trunc(r, r->size, "file header incomplete");
		goto done;
	}
	if (scan(r))
		goto fail;
	if ((r->oflags & DTCAP_OPEN_SALVAGE) && drop_bad_blocks(r))
		goto fail;

	for (size_t i = 0; i < r->nfiles; i++) {
		struct dtcap_file *f = &r->files[i];
		int sorted = 1;
		for (uint32_t j = 1; j < f->nsyms && sorted; j++)
			sorted = f->syms[j - 1].addr <= f->syms[j].addr;
		if (!sorted)
			qsort((void *)f->syms, f->nsyms, sizeof(*f->syms), sym_cmp);
	}
	if (r->nsrcl)
		qsort(r->srcl, r->nsrcl, sizeof(*r->srcl), srcl_cmp);
	if (r->nprocs) {
		if (charge(r, r->nprocs * sizeof(*r->proc_idx)) ||
		    !(r->proc_idx = malloc(r->nprocs * sizeof(*r->proc_idx)))) {
			nomem(r);
			goto fail;
		}
		for (size_t i = 0; i < r->nprocs; i++)
			r->proc_idx[i] = (uint32_t)i;
		qsort_r(r->proc_idx, r->nprocs, sizeof(*r->proc_idx), proc_cmp, r->procs);
	}
done:
	return r;
fail:
	if (fd >= 0)
		close(fd);
	snprintf(open_err, sizeof(open_err), "%s", r->err);
	dtcap_reader_close(r);
	return NULL;
}

unsigned dtcap_reader_status(const struct dtcap_reader *r)
{
	return r->status | (r->nevents ? 0 : DTCAP_ST_EMPTY);
}

size_t dtcap_ndamage(const struct dtcap_reader *r) { return r->ndamage; }

const struct dtcap_damage *dtcap_damage_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->ndamage ? &r->damage[i] : NULL;
}

uint32_t dtcap_format_version(const struct dtcap_reader *r, uint32_t *compat,
			      uint32_t *incompat)
{
	if (compat)
		*compat = r->compat;
	if (incompat)
		*incompat = r->incompat;
	return r->version;
}

size_t dtcap_nclocks(const struct dtcap_reader *r) { return r->nclocks; }

int dtcap_clock_at(const struct dtcap_reader *r, size_t i, uint64_t *mono_ns,
		   int64_t *real_ns)
{
	if (i >= r->nclocks)
		return -1;
	if (mono_ns)
		*mono_ns = r->clocks[i].mono;
	if (real_ns)
		*real_ns = r->clocks[i].real;
	return 0;
}

void dtcap_reader_close(struct dtcap_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->size);
	ZSTD_freeDCtx(r->dctx);
	while (r->arena) {
		struct arena *a = r->arena;
		r->arena = a->next;
		free(a);
	}
	free(r->probes);
	dt_htab_free(&r->probe_ht);
	free(r->comms);
	free(r->stacks);
	free(r->frames);
	free(r->kallsyms);
	free(r->modules);
	for (size_t i = 0; i < r->nfiles; i++)
		free((void *)r->files[i].syms);
	free(r->files);
	for (size_t i = 0; i < r->nprocs; i++)
		free((void *)r->procs[i].maps);
	free(r->procs);
	free(r->proc_idx);
	for (size_t i = 0; i < r->nsrcl_mem; i++)
		free(r->srcl_mem[i]);
	free(r->srcl_mem);
	free(r->srcl);
	for (size_t i = 0; i < r->ncounts; i++)
		free(r->counts[i].percpu);
	free(r->counts);
	free(r->blocks);
	free(r->rblocks);
	free(r->sumv);
	free(r->damage);
	free(r->clocks);
	free(r->refs);
	free(r->path);
	free(r);
}


/* ------------------------------------------------------------ accessors */

const struct dtcap_host *dtcap_host(const struct dtcap_reader *r) { return &r->host; }
uint64_t dtcap_nevents(const struct dtcap_reader *r) { return r->nevents; }
const char *dtcap_path(const struct dtcap_reader *r) { return r->path; }

void dtcap_ident(const struct dtcap_reader *r, struct dtcap_ident *id)
{
	size_t k = r->size < (64u << 10) ? r->size : (64u << 10);
	XXH3_state_t st;

	*id = r->ident;
	XXH3_64bits_reset(&st);
	if (k) {
		XXH3_64bits_update(&st, r->map, k);
		XXH3_64bits_update(&st, r->map + r->size - k, k);
	}
	id->hash = XXH3_64bits_digest(&st);
}
size_t dtcap_nprobes(const struct dtcap_reader *r) { return r->nprobes; }

const struct dtcap_probe *dtcap_probe_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->nprobes ? &r->probes[i] : NULL;
}

uint32_t dtcap_max_probe_id(const struct dtcap_reader *r)
{
	uint32_t m = 0;
	for (size_t i = 0; i < r->nprobes; i++)
		m = r->probes[i].id > m ? r->probes[i].id : m;
	return m;
}

const struct dtcap_probe *dtcap_probe_by_id(const struct dtcap_reader *r, uint32_t id)
{
	uint32_t e = probe_find(r, id);
	return e != DT_HTAB_NONE ? &r->probes[e] : NULL;
}

const char *dtcap_comm(const struct dtcap_reader *r, uint32_t id)
{
	return id && id <= r->ncomms ? r->comms[id - 1] : NULL;
}

uint32_t dtcap_ncomms(const struct dtcap_reader *r) { return r->ncomms; }
uint32_t dtcap_nstacks(const struct dtcap_reader *r) { return r->nstacks; }

const uint64_t *dtcap_stack(const struct dtcap_reader *r, uint32_t id,
			    unsigned *n, int *kernel, int *truncated)
{
	if (!id || id > r->nstacks)
		return NULL;
	const struct rstack *s = &r->stacks[id - 1];
	if (n)
		*n = s->n;
	if (kernel)
		*kernel = s->kind & 1;
	if (truncated)
		*truncated = (s->kind >> 1) & 1;
	/* a valid pointer even for an empty stack */
	return r->frames ? r->frames + s->off : (const uint64_t *)r;
}

const char *dtcap_kallsyms(const struct dtcap_reader *r, size_t *len)
{
	if (len)
		*len = r->kallsyms_len;
	return r->kallsyms;
}

const char *dtcap_modules(const struct dtcap_reader *r, size_t *len)
{
	if (len)
		*len = r->modules_len;
	return r->modules;
}

size_t dtcap_nfiles(const struct dtcap_reader *r) { return r->nfiles; }

const struct dtcap_srcline *dtcap_srcline_find(const struct dtcap_reader *r, uint32_t file,
					       uint64_t addr)
{
	size_t lo = 0, hi = r->nsrcl;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct rsrcl *e = &r->srcl[mid];
		if (e->file < file || (e->file == file && e->s.addr < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nsrcl && r->srcl[lo].file == file && r->srcl[lo].s.addr == addr)
		return &r->srcl[lo].s;
	return NULL;
}

size_t dtcap_nsrclines(const struct dtcap_reader *r) { return r->nsrcl; }

const struct dtcap_srcline *dtcap_srcline_at(const struct dtcap_reader *r, size_t i,
					     uint32_t *file)
{
	if (i >= r->nsrcl)
		return NULL;
	if (file)
		*file = r->srcl[i].file;
	return &r->srcl[i].s;
}

const struct dtcap_file *dtcap_file_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->nfiles ? &r->files[i] : NULL;
}

const struct dtcap_file *dtcap_file_by_id(const struct dtcap_reader *r, uint32_t id)
{
	return id && id <= r->nfiles ? &r->files[id - 1] : NULL;
}

size_t dtcap_nprocs(const struct dtcap_reader *r) { return r->nprocs; }

const struct dtcap_proc *dtcap_proc_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->nprocs ? &r->procs[i] : NULL;
}

const uint32_t *dtcap_proc_snapshots(const struct dtcap_reader *r, uint32_t pid, size_t *n)
{
	/* first index entry of pid */
	size_t lo = 0, hi = r->nprocs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->procs[r->proc_idx[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < r->nprocs && r->procs[r->proc_idx[end]].pid == pid)
		end++;
	*n = end - lo;
	return *n ? r->proc_idx + lo : NULL;
}

const struct dtcap_proc *dtcap_proc_find(const struct dtcap_reader *r,
					 uint32_t pid, uint64_t ts)
{
	size_t n;
	const uint32_t *v = dtcap_proc_snapshots(r, pid, &n);
	if (v == NULL)
		return NULL;
	const struct dtcap_proc *best = &r->procs[v[0]];
	for (size_t i = 1; i < n && r->procs[v[i]].ts <= ts; i++)
		best = &r->procs[v[i]];
	return best;
}

size_t dtcap_ncounters(const struct dtcap_reader *r) { return r->ncounts; }

const struct dtcap_count *dtcap_counters_at(const struct dtcap_reader *r, size_t i,
					    uint64_t *ts, uint32_t *ncpus,
					    struct dtcap_count *recorder)
{
	if (i >= r->ncounts)
		return NULL;
	const struct rcount *c = &r->counts[i];
	if (ts)
		*ts = c->ts;
	if (ncpus)
		*ncpus = c->ncpus;
	if (recorder)
		*recorder = c->rec;
	return c->percpu;
}

size_t dtcap_nblocks(const struct dtcap_reader *r) { return r->nblocks; }

const struct dtcap_blockinfo *dtcap_block_info(const struct dtcap_reader *r, size_t i)
{
	return i < r->nblocks ? &r->blocks[i] : NULL;
}

/* ----------------------------------------------------------- blocks */

struct bpriv {
	ZSTD_DCtx	*dctx;
	uint32_t	cap;		/* rows the arrays hold */
	uint8_t		*region;	/* the arrays below, one mapping */
	size_t		region_len;
	uint64_t	*ts, *args, *argtmp;
	uint32_t	*u32[8];	/* cpu pid tid probe comm kstack ustack flags */
	uint32_t	*idx, *dtmp;
	uint8_t		*nargs, *xctx;
	uint8_t		*scratch;
	size_t		scratch_cap;
	uint32_t	*dict[7];	/* per context: pid .. flags */
	uint8_t		*dxctx;
	uint32_t	dcap;		/* contexts they hold */
	char		err[512];	/* dtcap_read_block_mt's last failure */
};

struct dtcap_block *dtcap_block_new(void)
{
	struct dtcap_block *b = calloc(1, sizeof(*b));
	struct bpriv *p = calloc(1, sizeof(*p));
	if (!b || !p || !(p->dctx = ZSTD_createDCtx())) {
		free(b);
		free(p);
		return NULL;
	}
	b->priv = p;
	return b;
}

static void bpriv_free_arrays(struct bpriv *p)
{
	if (p->region)
		munmap(p->region, p->region_len);
	p->region = NULL;
	p->region_len = 0;
	p->xctx = NULL;
	p->idx = p->dtmp = NULL;
	p->ts = p->args = p->argtmp = NULL;
	p->nargs = NULL;
	memset(p->u32, 0, sizeof(p->u32));
	p->cap = 0;
}

void dtcap_block_free(struct dtcap_block *b)
{
	if (!b)
		return;
	struct bpriv *p = b->priv;
	if (p) {
		bpriv_free_arrays(p);
		for (int i = 0; i < 7; i++)
			free(p->dict[i]);
		free(p->dxctx);
		free(p->scratch);
		ZSTD_freeDCtx(p->dctx);
		free(p);
	}
	free(b);
}

/*
 * The row arrays live in one mapping, 2 MiB aligned and marked for huge
 * pages: a block's arrays (a few MiB) are then a handful of TLB entries
 * and physically contiguous, so how well they share the caches no longer
 * depends on which pages the allocator happened to hand out (the read
 * benchmark's speed swung by a fifth between runs with malloc'd arrays).
 * Pages are touched only for the columns a caller decodes.
 */
#define DTC_HUGE	(2u << 20)

static int ensure_rows(struct bpriv *p, uint32_t rows)
{
	if (rows <= p->cap)
		return 0;
	bpriv_free_arrays(p);
	/* hot columns first; each array starts on its own cache line */
	size_t sz[] = {
		rows * sizeof(uint64_t),			/* ts */
		rows * sizeof(uint32_t),			/* idx */
		8 * (rows * sizeof(uint32_t) + 64),		/* u32[8] */
		rows, rows,					/* xctx, nargs */
		rows * sizeof(uint32_t),			/* dtmp */
		(size_t)rows * DTCAP_MAXARGS * sizeof(uint64_t),	/* args */
		(size_t)rows * DTCAP_MAXARGS * sizeof(uint64_t),	/* argtmp */
	};
	size_t total = 0, off[sizeof(sz) / sizeof(sz[0])];
	for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
		off[k] = total;
		total += (sz[k] + 63) & ~(size_t)63;
	}
	total = (total + 4095) & ~(size_t)4095;
	size_t len = total + DTC_HUGE;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	/* keep the 2 MiB aligned part */
	uintptr_t a = ((uintptr_t)m + DTC_HUGE - 1) & ~(uintptr_t)(DTC_HUGE - 1);
	size_t head = a - (uintptr_t)m;
	if (head)
		munmap(m, head);
	if (len - head > total)
		munmap((uint8_t *)a + total, len - head - total);
	m = (uint8_t *)a;
	madvise(m, total, MADV_HUGEPAGE);	/* a hint: fine if refused */
	p->region = m;
	p->region_len = total;
	p->ts = (uint64_t *)(m + off[0]);
	p->idx = (uint32_t *)(m + off[1]);
	for (int i = 0; i < 8; i++)
		p->u32[i] = (uint32_t *)(m + off[2] + (size_t)i * (rows * sizeof(uint32_t) + 64));
	p->xctx = m + off[3];
	p->nargs = m + off[4];
	p->dtmp = (uint32_t *)(m + off[5]);
	p->args = (uint64_t *)(m + off[6]);
	p->argtmp = (uint64_t *)(m + off[7]);
	p->cap = rows;
	return 0;
}

/* Rows per tile when spreading context values to rows. */
#define DTC_TILE	2048

/* Room for nd contexts in the per-context value arrays (grown to the
 * largest block's contexts). */
static int ensure_dict(struct bpriv *p, uint32_t nd)
{
	if (nd <= p->dcap)
		return 0;
	for (int i = 0; i < 7; i++) {
		free(p->dict[i]);
		p->dict[i] = NULL;
	}
	free(p->dxctx);
	p->dcap = 0;
	int ok = (p->dxctx = malloc(nd)) != NULL;
	for (int i = 0; i < 7; i++)
		ok = ok && (p->dict[i] = malloc(nd * sizeof(uint32_t)));
	if (!ok)
		return -1;
	p->dcap = nd;
	return 0;
}

/* The decoded bytes of one column segment (in the map or in scratch),
 * checked against its checksum first (version 3: open did not). */
static const uint8_t *segment(const struct dtcap_reader *r, size_t bi, unsigned col,
			      struct bpriv *p, size_t *len)
{
	const struct rblock *rb = &r->rblocks[bi];
	const uint8_t *d = dir_entry(rb, col);
	if (!d)
		return NULL;
	const uint8_t *seg = seg_bytes(rb, (unsigned)((d - rb->dir) / rb->dirlen));
	uint32_t raw = dtc_rd32(d + 2), stored = dtc_rd32(d + 6);
	if (rb->dirlen == DTC_BLK_COLDIR && !NO_CHECKSUM &&
	    XXH3_64bits(seg, stored) != dtc_rd64(d + 10))
		return NULL;
	*len = raw;
	if (d[1] == DTC_M_RAW)
		return seg;
	if (p->scratch_cap < raw) {
		uint8_t *s = realloc(p->scratch, raw);
		if (!s)
			return NULL;
		p->scratch = s;
		p->scratch_cap = raw;
	}
	size_t n = ZSTD_decompressDCtx(p->dctx, p->scratch, raw, seg, stored);
	if (ZSTD_isError(n) || n != raw)
		return NULL;
	return p->scratch;
}

/*
 * Why read_block failed, for its two callers to word: it writes nothing of
 * the reader, so several threads may decode blocks of one reader at once.
 */
enum { RB_OK, RB_NOBLOCK, RB_NOMEM, RB_DAMAGE };

static int read_block(const struct dtcap_reader *r, size_t i, unsigned cols,
		      struct dtcap_block *b);

static void rb_word(const struct dtcap_reader *r, size_t i, int why, char *buf, size_t len)
{
	if (why == RB_NOBLOCK)
		dtc_fmt(buf, len, r->path, "no block %zu (of %zu)", i, r->nblocks);
	else if (why == RB_NOMEM)
		dtc_fmt(buf, len, r->path, "out of memory");
	else
		dtc_fmt(buf, len, r->path,
			"damaged EVNT chunk at offset %llu: column data does not decode",
			(unsigned long long)r->blocks[i].offset);
}

int dtcap_read_block(struct dtcap_reader *r, size_t i, unsigned cols,
		     struct dtcap_block *b)
{
	int why = read_block(r, i, cols, b);
	if (why != RB_OK) {
		rb_word(r, i, why, r->err, sizeof(r->err));
		return -1;
	}
	return 0;
}

int dtcap_read_block_mt(const struct dtcap_reader *r, size_t i, unsigned cols,
			struct dtcap_block *b)
{
	int why = read_block(r, i, cols, b);
	struct bpriv *p = b->priv;
	if (why != RB_OK) {
		rb_word(r, i, why, p->err, sizeof(p->err));
		return -1;
	}
	p->err[0] = 0;
	return 0;
}

const char *dtcap_block_error(const struct dtcap_block *b)
{
	const struct bpriv *p = b->priv;
	return p->err;
}

static int read_block(const struct dtcap_reader *r, size_t i, unsigned cols,
		      struct dtcap_block *b)
{
	if (i >= r->nblocks)
		return RB_NOBLOCK;
	struct bpriv *p = b->priv;
	const struct dtcap_blockinfo *bi = &r->blocks[i];
	const struct rblock *rb = &r->rblocks[i];
	uint32_t n = bi->rows;
	if (ensure_rows(p, n))
		return RB_NOMEM;
	memset(b, 0, offsetof(struct dtcap_block, priv));
	b->rows = n;
	const uint8_t *s;
	size_t len;
	if (cols & DTCAP_COL_TS) {
		uint64_t lo, hi;
		if (!(s = segment(r, i, DTC_C_TS, p, &len)) ||
		    dtc_dec_ts(s, len, p->ts, n, bi->tmin, &lo, &hi))
			goto bad;
		/* block skipping trusts the header: the rows must agree */
		if (lo != bi->tmin || hi != bi->tmax)
			goto bad;
		b->ts = p->ts;
	}
	if (cols & DTCAP_COL_CPU) {
		if (!(s = segment(r, i, DTC_C_CPU, p, &len)) || dtc_dec_u32(s, len, p->u32[0], n))
			goto bad;
		/* tools index per-CPU tables by it: the limit is the contract.
		 * The column's base and width bound its values (len was
		 * checked by the decoder): a pass over the rows (a tenth of a
		 * selective scan's time) only when they do not settle it */
		uint64_t bound = (uint64_t)dtc_rd32(s + 1) + (s[0] ? (1ull << (8 * s[0])) - 1 : 0);
		if (bound >= DTCAP_MAXCPUS) {
			uint32_t maxc = 0;
			for (uint32_t k = 0; k < n; k++)
				maxc = p->u32[0][k] > maxc ? p->u32[0][k] : maxc;
			if (maxc >= DTCAP_MAXCPUS)
				goto bad;
		}
		b->cpu = p->u32[0];
	}
	/* the per-context columns, in DTC_C_PID.. order */
	static const struct { unsigned bit; size_t off, doff; } dcols[DTC_NDICT] = {
		{DTCAP_COL_PID, offsetof(struct dtcap_block, pid), offsetof(struct dtcap_block, dict.pid)},
		{DTCAP_COL_TID, offsetof(struct dtcap_block, tid), offsetof(struct dtcap_block, dict.tid)},
		{DTCAP_COL_PROBE, offsetof(struct dtcap_block, probe),
		 offsetof(struct dtcap_block, dict.probe)},
		{DTCAP_COL_COMM, offsetof(struct dtcap_block, comm),
		 offsetof(struct dtcap_block, dict.comm)},
		{DTCAP_COL_KSTACK, offsetof(struct dtcap_block, kstack),
		 offsetof(struct dtcap_block, dict.kstack)},
		{DTCAP_COL_USTACK, offsetof(struct dtcap_block, ustack),
		 offsetof(struct dtcap_block, dict.ustack)},
		{DTCAP_COL_FLAGS, offsetof(struct dtcap_block, flags),
		 offsetof(struct dtcap_block, dict.flags)},
	};
	if (cols & (DTCAP_COL_PID | DTCAP_COL_TID | DTCAP_COL_PROBE | DTCAP_COL_COMM |
		    DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_FLAGS | DTCAP_COL_CTX |
		    DTCAP_COL_CIDX)) {
		uint32_t nd = rb->ndict, *idx = p->idx;
		int byctx = !!(cols & DTCAP_COL_BYCTX);
		if (ensure_dict(p, nd))
			return RB_NOMEM;
		/* each selected column's context values, checked */
		const uint32_t *dv[DTC_NDICT];
		uint32_t *ov[DTC_NDICT];
		unsigned nsel = 0;
		for (unsigned c = 0; c < DTC_NDICT; c++) {
			if (!(cols & dcols[c].bit))
				continue;
			uint32_t *d = p->dict[c];
			if (!(s = segment(r, i, DTC_C_PID + c, p, &len)) ||
			    dtc_dec_u32(s, len, d, nd))
				goto bad;
			/* ids index tools' tables and the string and stack
			 * tables: an id beyond what exists is damage */
			uint32_t lim = UINT32_MAX;
			if (DTC_C_PID + c == DTC_C_PROBE)
				lim = DTCAP_MAXPROBEID - 1;
			else if (DTC_C_PID + c == DTC_C_COMM)
				lim = r->ncomms;
			else if (DTC_C_PID + c == DTC_C_KSTACK || DTC_C_PID + c == DTC_C_USTACK)
				lim = r->nstacks;
			for (uint32_t k = 0; k < nd && lim != UINT32_MAX; k++)
				if (d[k] > lim)
					goto bad;
			if (byctx) {
				*(uint32_t **)((char *)b + dcols[c].doff) = d;
			} else {
				dv[nsel] = d;
				ov[nsel++] = p->u32[1 + c];
				*(uint32_t **)((char *)b + dcols[c].off) = p->u32[1 + c];
			}
		}
		if (cols & DTCAP_COL_CTX) {
			uint32_t *d = p->dtmp;
			if (!dir_entry(rb, DTC_C_XCTX)) {
				memset(p->dxctx, DTCAP_CTX_UNKNOWN, nd);
			} else {
				if (!(s = segment(r, i, DTC_C_XCTX, p, &len)) ||
				    dtc_dec_u32(s, len, d, nd))
					goto bad;
				for (uint32_t k = 0; k < nd; k++)
					if (d[k] > 255)
						goto bad;
				for (uint32_t k = 0; k < nd; k++)
					p->dxctx[k] = (uint8_t)d[k];
			}
			if (byctx)
				b->dict.ctx = p->dxctx;
			else
				b->ctx = p->xctx;
		}
		b->ndict = nd;
		if (byctx && (cols & DTCAP_COL_NOINDEX))
			goto args;	/* the contexts alone: no row's number */
		/*
		 * The rows' context numbers last (their segment may be in the
		 * scratch buffer the columns above used): decoded, checked and
		 * spread to rows a tile at a time, so each tile of the index
		 * is written and read by every column in L1 (a block's arrays
		 * overflow L2).
		 */
		struct dtc_u32col cc;
		if (!(s = segment(r, i, DTC_C_CTX, p, &len)) || dtc_u32col_open(&cc, s, len, n))
			goto bad;
		int xc = !byctx && (cols & DTCAP_COL_CTX);
		for (uint32_t t0 = 0; t0 < n; t0 += DTC_TILE) {
			uint32_t t1 = n - t0 < DTC_TILE ? n : t0 + DTC_TILE;
			if (dtc_u32col_get(&cc, idx, t0, t1) >= nd)
				goto bad;
			for (unsigned c = 0; c < nsel; c++) {
				const uint32_t *d = dv[c];
				uint32_t *out = ov[c];
				for (uint32_t k = t0; k < t1; k++)
					out[k] = d[idx[k]];
			}
			if (xc)
				for (uint32_t k = t0; k < t1; k++)
					p->xctx[k] = p->dxctx[idx[k]];
		}
		b->cidx = idx;
	}
args:
	if (cols & DTCAP_COL_ARGS) {
		unsigned nslots = rb->nslots;
		if (!(s = segment(r, i, DTC_C_NARGS, p, &len)) || len != n)
			goto bad;
		memcpy(p->nargs, s, n);
		for (uint32_t k = 0; k < n; k++)
			if (p->nargs[k] > nslots)
				goto bad;
		/* decode each slot's column into its run of argtmp, then fill
		 * the row-major array in one pass */
		uint32_t hist[DTCAP_MAXARGS + 1] = {0};
		for (uint32_t k = 0; k < n; k++)
			hist[p->nargs[k]]++;
		size_t off[DTCAP_MAXARGS + 1] = {0}, pos[DTCAP_MAXARGS];
		uint32_t ge = n;
		for (unsigned j = 0; j < DTCAP_MAXARGS; j++) {
			ge -= hist[j];
			off[j + 1] = off[j] + ge;
		}
		unsigned ndec = (cols & (DTCAP_COL_ARGSLOTS | DTCAP_COL_ARGS2)) ==
				(DTCAP_COL_ARGSLOTS | DTCAP_COL_ARGS2) && nslots > 2 ? 2 : nslots;
		for (unsigned j = 0; j < ndec; j++)
			if (!(s = segment(r, i, DTC_C_ARG0 + j, p, &len)) ||
			    dtc_dec_u64(s, len, p->argtmp + off[j], (uint32_t)(off[j + 1] - off[j])))
				goto bad;
		if (cols & DTCAP_COL_ARGSLOTS) {
			for (unsigned j = 0; j < ndec; j++) {
				b->argslot[j] = p->argtmp + off[j];
				b->nargslot[j] = (uint32_t)(off[j + 1] - off[j]);
			}
			b->nargs = p->nargs;
			b->args = NULL;
			return RB_OK;
		}
		memcpy(pos, off, sizeof(pos));
		for (uint32_t k = 0; k < n; k++) {
			uint64_t *row = p->args + (size_t)k * DTCAP_MAXARGS;
			unsigned na = p->nargs[k], j = 0;
			for (; j < na; j++)
				row[j] = p->argtmp[pos[j]++];
			for (; j < DTCAP_MAXARGS; j++)
				row[j] = 0;
		}
		b->nargs = p->nargs;
		b->args = p->args;
	}
	return RB_OK;
bad:
	return RB_DAMAGE;
}

/*
 * The rows of block i whose context passes (ok[d] for each of its ndict
 * contexts): the context numbers decoded a tile at a time (in L1, checked
 * against ndict) and the passing rows picked without a branch; then only
 * their values of ts and cpu kept, so a thread's few rows of a block cost
 * no block-sized arrays.  Every segment read is checked as read_block
 * checks it.
 */
static int read_rows(const struct dtcap_reader *r, size_t i, unsigned cols, const uint8_t *ok,
		     struct dtcap_block *b)
{
	if (i >= r->nblocks)
		return RB_NOBLOCK;
	struct bpriv *p = b->priv;
	const struct dtcap_blockinfo *bi = &r->blocks[i];
	const struct rblock *rb = &r->rblocks[i];
	uint32_t n = bi->rows, nd = rb->ndict, m = 0;
	if (ensure_rows(p, n))
		return RB_NOMEM;
	memset(b, 0, offsetof(struct dtcap_block, priv));
	uint32_t *sel = p->dtmp, *cidx = p->idx, tile[DTC_TILE];
	const uint8_t *s;
	size_t len;
	struct dtc_u32col cc;
	if (!(s = segment(r, i, DTC_C_CTX, p, &len)) || dtc_u32col_open(&cc, s, len, n))
		return RB_DAMAGE;
	for (uint32_t t0 = 0; t0 < n; t0 += DTC_TILE) {
		uint32_t t1 = n - t0 < DTC_TILE ? n : t0 + DTC_TILE;
		if (dtc_u32col_tile(&cc, tile, t0, t1) >= nd)
			return RB_DAMAGE;
		uint32_t m0 = m;
		for (uint32_t k = 0; k < t1 - t0; k++) {
			sel[m] = t0 + k;
			m += ok[tile[k]] != 0;
		}
		for (uint32_t x = m0; x < m; x++)	/* the few kept */
			cidx[x] = tile[sel[x] - t0];
	}
	if (cols & DTCAP_COL_TS) {
		uint64_t lo, hi;
		if (!(s = segment(r, i, DTC_C_TS, p, &len)) ||
		    dtc_dec_ts(s, len, p->ts, n, bi->tmin, &lo, &hi))
			return RB_DAMAGE;
		if (lo != bi->tmin || hi != bi->tmax)
			return RB_DAMAGE;
		for (uint32_t x = 0; x < m; x++)	/* sel[x] >= x: in place */
			p->ts[x] = p->ts[sel[x]];
		b->ts = p->ts;
	}
	if (cols & DTCAP_COL_CPU) {
		if (!(s = segment(r, i, DTC_C_CPU, p, &len)) || len < 5)
			return RB_DAMAGE;
		unsigned w = s[0];
		uint32_t lo = dtc_rd32(s + 1), *cpu = p->u32[0];
		if (w > 4 || len != 5 + (size_t)w * n)
			return RB_DAMAGE;
		const uint8_t *pl = s + 5;
		for (uint32_t x = 0; x < m; x++) {
			uint32_t j = sel[x], v = 0;
			for (unsigned k = 0; k < w; k++)
				v |= (uint32_t)pl[(size_t)k * n + j] << (8 * k);
			cpu[x] = lo + v;
			/* the contract, as read_block checks it */
			if (cpu[x] >= DTCAP_MAXCPUS)
				return RB_DAMAGE;
		}
		b->cpu = cpu;
	}
	b->rows = m;
	b->ndict = nd;
	b->cidx = cidx;
	return RB_OK;
}

int dtcap_read_rows_mt(const struct dtcap_reader *r, size_t i, unsigned cols, const uint8_t *ok,
		       struct dtcap_block *b)
{
	struct bpriv *p = b->priv;
	if (cols & ~(unsigned)(DTCAP_COL_TS | DTCAP_COL_CPU)) {
		dtc_fmt(p->err, sizeof(p->err), r->path, "dtcap_read_rows_mt reads ts and cpu only");
		return -1;
	}
	int why = read_rows(r, i, cols, ok, b);
	if (why != RB_OK) {
		rb_word(r, i, why, p->err, sizeof(p->err));
		return -1;
	}
	p->err[0] = 0;
	return 0;
}

/* ------------------------------------------------------------ iterator */

struct dtcap_iter {
	struct dtcap_reader *r;
	struct dtcap_block *b;
	uint64_t	tmin, tmax;
	unsigned	cols;
	size_t		blk;		/* next block to load */
	uint32_t	row;
	int		loaded;
};

struct dtcap_iter *dtcap_iter_new(struct dtcap_reader *r, uint64_t tmin,
				  uint64_t tmax, unsigned cols)
{
	struct dtcap_iter *it = calloc(1, sizeof(*it));
	if (!it || !(it->b = dtcap_block_new())) {
		free(it);
		rerr(r, "out of memory");
		return NULL;
	}
	it->r = r;
	it->tmin = tmin;
	it->tmax = tmax;
	it->cols = (cols & DTCAP_COL_ALL) | DTCAP_COL_TS;
	return it;
}

int dtcap_iter_next(struct dtcap_iter *it, struct dtcap_event *e)
{
	struct dtcap_block *b = it->b;
	for (;;) {
		if (it->loaded && it->row < b->rows) {
			uint32_t i = it->row++;
			uint64_t ts = b->ts[i];
			if (ts < it->tmin || ts > it->tmax)
				continue;
			e->ts = ts;
			e->cpu = b->cpu ? b->cpu[i] : 0;
			e->pid = b->pid ? b->pid[i] : 0;
			e->tid = b->tid ? b->tid[i] : 0;
			e->probe = b->probe ? b->probe[i] : 0;
			e->comm = b->comm ? b->comm[i] : 0;
			e->kstack = b->kstack ? b->kstack[i] : 0;
			e->ustack = b->ustack ? b->ustack[i] : 0;
			e->flags = b->flags ? b->flags[i] : 0;
			e->ctx = b->ctx ? b->ctx[i] : DTCAP_CTX_UNKNOWN;
			if (b->nargs) {
				e->nargs = b->nargs[i];
				memcpy(e->args, b->args + (size_t)i * DTCAP_MAXARGS,
				       sizeof(e->args));
			} else {
				e->nargs = 0;
				memset(e->args, 0, sizeof(e->args));
			}
			return 1;
		}
		it->loaded = 0;
		while (it->blk < it->r->nblocks) {
			const struct dtcap_blockinfo *bi = &it->r->blocks[it->blk];
			if (bi->tmax >= it->tmin && bi->tmin <= it->tmax)
				break;
			it->blk++;
		}
		if (it->blk >= it->r->nblocks)
			return 0;
		if (dtcap_read_block(it->r, it->blk++, it->cols, b))
			return -1;
		it->loaded = 1;
		it->row = 0;
	}
}

void dtcap_iter_free(struct dtcap_iter *it)
{
	if (!it)
		return;
	dtcap_block_free(it->b);
	free(it);
}
