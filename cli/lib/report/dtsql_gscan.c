/*
 * dtsql_gscan.c - the scan under events_grouped: the events of every
 * block that may match counted by the distinct key of the used columns
 * (and a ts bucket, and retval), in C over decoded column blocks, the
 * groups then handed to sqlite as rows.  dtsql_groupby.c writes the
 * statements that read it; doc/SQL.md gives the rules.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_events.h"
#include "dtsql_int.h"
#include "filter.h"
#include "scan_pool.h"

/* ----------------------------------------------------- events_grouped */

/* The grouped columns in key order, with their block and dict arrays. */
static const unsigned gkey_col[] = {
	DTCAP_COL_CPU, DTCAP_COL_PID, DTCAP_COL_TID, DTCAP_COL_PROBE,
	DTCAP_COL_COMM, DTCAP_COL_KSTACK, DTCAP_COL_USTACK, DTCAP_COL_FLAGS,
	DTCAP_COL_CTX,
};
#define NGKEY	(sizeof(gkey_col) / sizeof(gkey_col[0]))

/* Open addressing over packed keys of nk words; cnt 0 marks a free slot
 * (every group holds at least one event). */
struct ghash {
	unsigned	nk;
	size_t		cap, n;		/* cap a power of two */
	uint32_t	*key;		/* cap * nk */
	uint64_t	*cnt;
};

static uint64_t ghash_of(const uint32_t *k, unsigned nk)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < nk; i++)
		h = (h ^ k[i]) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

static int ghash_grow(struct ghash *g)
{
	size_t cap = g->cap ? g->cap * 2 : 256;
	uint32_t *key = malloc(cap * (g->nk ? g->nk : 1) * sizeof(*key));
	uint64_t *cnt = calloc(cap, sizeof(*cnt));
	if (key == NULL || cnt == NULL || cap > SIZE_MAX / 64) {
		free(key);
		free(cnt);
		return -1;
	}
	for (size_t i = 0; i < g->cap; i++) {
		if (g->cnt[i] == 0)
			continue;
		const uint32_t *k = g->key + i * g->nk;
		size_t s = ghash_of(k, g->nk) & (cap - 1);
		while (cnt[s])
			s = (s + 1) & (cap - 1);
		memcpy(key + s * g->nk, k, g->nk * sizeof(*k));
		cnt[s] = g->cnt[i];
	}
	free(g->key);
	free(g->cnt);
	g->key = key;
	g->cnt = cnt;
	g->cap = cap;
	return 0;
}

/* Keys are a few words: compared inline, not through memcmp's call. */
static inline int keq(const uint32_t *a, const uint32_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* Add n events to the group of key k. */
static int ghash_add(struct ghash *g, const uint32_t *k, uint64_t n)
{
	if (2 * (g->n + 1) > g->cap && ghash_grow(g) < 0)
		return -1;
	size_t s = ghash_of(k, g->nk) & (g->cap - 1);
	for (;; s = (s + 1) & (g->cap - 1)) {
		if (g->cnt[s] == 0) {
			memcpy(g->key + s * g->nk, k, g->nk * sizeof(*k));
			g->cnt[s] = n;
			g->n++;
			return 0;
		}
		if (keq(g->key + s * g->nk, k, g->nk)) {
			g->cnt[s] += n;
			return 0;
		}
	}
}

/* The key of context d (and cpu, when grouped by it) into k. */
static void ctx_key(const struct dtcap_block *b, unsigned gcols, uint32_t d, uint32_t cpu,
		    uint32_t *k)
{
	unsigned n = 0;
	if (gcols & DTCAP_COL_CPU) k[n++] = cpu;
	if (gcols & DTCAP_COL_PID) k[n++] = b->dict.pid[d];
	if (gcols & DTCAP_COL_TID) k[n++] = b->dict.tid[d];
	if (gcols & DTCAP_COL_PROBE) k[n++] = b->dict.probe[d];
	if (gcols & DTCAP_COL_COMM) k[n++] = b->dict.comm[d];
	if (gcols & DTCAP_COL_KSTACK) k[n++] = b->dict.kstack[d];
	if (gcols & DTCAP_COL_USTACK) k[n++] = b->dict.ustack[d];
	if (gcols & DTCAP_COL_FLAGS) k[n++] = b->dict.flags[d];
	if (gcols & DTCAP_COL_CTX) k[n++] = b->dict.ctx[d];
}

/*
 * Where block bi stands against the ts range [lo, hi] (signed, as SQL
 * sees ts): -1 none of its events, 1 all of them, 0 some (check each).
 */
static int ts_block(const struct dtcap_blockinfo *bi, int64_t lo, int64_t hi)
{
	if ((bi->tmin >> 63) != (bi->tmax >> 63))
		return 0;	/* crosses from positive to negative */
	int64_t a = (int64_t)bi->tmin, b = (int64_t)bi->tmax;
	if (b < lo || a > hi)
		return -1;
	return lo <= a && b <= hi ? 1 : 0;
}

/* The per-block numbering of contexts by key of cpu_hist. */
struct cpuh {
	struct ghash	ids;		/* key -> number + 1 (in cnt) */
	uint32_t	*lid, *rep;	/* context -> number; number -> a context */
	uint8_t		*ok;		/* context passes the pushed-down sets */
	size_t		cap;		/* of lid, rep, ok */
};

static void cpuh_free(struct cpuh *h)
{
	free(h->ids.key);
	free(h->ids.cnt);
	free(h->lid);
	free(h->rep);
	free(h->ok);
}

/* The number of key k in g (cnt holds number + 1), a new one if absent. */
static int64_t ghash_id(struct ghash *g, const uint32_t *k, uint64_t next)
{
	if (2 * (g->n + 1) > g->cap && ghash_grow(g) < 0)
		return -1;
	size_t s = ghash_of(k, g->nk) & (g->cap - 1);
	for (;; s = (s + 1) & (g->cap - 1)) {
		if (g->cnt[s] == 0) {
			memcpy(g->key + s * g->nk, k, g->nk * sizeof(*k));
			g->cnt[s] = next + 1;
			g->n++;
			return (int64_t)next;
		}
		if (memcmp(g->key + s * g->nk, k, g->nk * sizeof(*k)) == 0)
			return (int64_t)g->cnt[s] - 1;
	}
}

/*
 * Count block b's events (those in [lo, hi] unless inside) whose context
 * passes (okd[d]; okd NULL: all) into g by
 * (context key, cpu) through a dense table.  1 done, 0 not worth it (the
 * table would outgrow the block: the caller counts per event), -1 out of
 * memory.
 */
static int cpu_hist(const uint8_t *okd, const struct dtcap_block *b, struct ghash *g,
		    unsigned gcols, int inside, int64_t lo, int64_t hi, struct cpuh *h,
		    uint64_t **hist, size_t *nhist)
{
	int ctxc = (gcols & CTX_COLS) != 0;
	size_t nd = ctxc ? b->ndict : 1;
	uint32_t maxcpu = 0, k[NGKEY];
	for (uint32_t j = 0; j < b->rows; j++)
		maxcpu = b->cpu[j] > maxcpu ? b->cpu[j] : maxcpu;
	size_t nc = (size_t)maxcpu + 1;
	if (nc > 4096)
		return 0;
	if (nd > h->cap) {
		free(h->lid);
		free(h->rep);
		free(h->ok);
		h->lid = malloc(nd * sizeof(*h->lid));
		h->rep = malloc(nd * sizeof(*h->rep));
		h->ok = malloc(nd);
		h->cap = nd;
		if (h->lid == NULL || h->rep == NULL || h->ok == NULL) {
			h->cap = 0;
			return -1;
		}
	}
	/* number the contexts by their key without cpu */
	h->ids.nk = g->nk - 1;
	if (h->ids.cap)
		memset(h->ids.cnt, 0, h->ids.cap * sizeof(*h->ids.cnt));
	h->ids.n = 0;
	uint64_t nl = 0;
	for (size_t d = 0; d < nd; d++) {
		h->ok[d] = !ctxc || !okd || okd[d];
		if (!h->ok[d]) {	/* never counted: needs no number */
			h->lid[d] = 0;
			continue;
		}
		if (!ctxc) {
			h->lid[d] = 0;
			h->rep[0] = 0;
			nl = 1;
			continue;
		}
		ctx_key(b, gcols & ~DTCAP_COL_CPU, (uint32_t)d, 0, k);
		int64_t id = h->ids.nk ? ghash_id(&h->ids, k, nl) : 0;
		if (id < 0)
			return -1;
		if ((uint64_t)id == nl) {
			h->rep[nl] = (uint32_t)d;
			nl++;
		}
		h->lid[d] = (uint32_t)id;
		if (!h->ids.nk)
			nl = 1;
	}
	if (nl * nc > (size_t)b->rows * 2 + 4096)
		return 0;
	if (nl * nc > *nhist) {
		free(*hist);
		*nhist = nl * nc;
		if ((*hist = calloc(*nhist, sizeof(**hist))) == NULL) {
			*nhist = 0;
			return -1;
		}
	}
	uint64_t *t = *hist;
	for (uint32_t j = 0; j < b->rows; j++) {
		uint32_t d = ctxc ? b->cidx[j] : 0;
		if (h->ok[d] && (inside || ((int64_t)b->ts[j] >= lo && (int64_t)b->ts[j] <= hi)))
			t[h->lid[d] * nc + b->cpu[j]]++;
	}
	for (size_t l = 0; l < nl; l++) {
		for (size_t c = 0; c < nc; c++) {
			uint64_t *x = &t[l * nc + c];
			if (*x == 0)
				continue;
			if (ctxc)
				ctx_key(b, gcols, h->rep[l], (uint32_t)c, k);
			else
				k[0] = (uint32_t)c;
			if (ghash_add(g, k, *x) < 0)
				return -1;
			*x = 0;
		}
	}
	return 1;
}

/*
 * Return values are mostly small (errnos from -4095, counts and sizes up to
 * a page or so): grouped by retval and contexts only, those are counted in
 * a dense histogram per context key, an increment per event where a hash
 * lookup per event (a cache miss once the groups outgrow the caches) was
 * most of the scan; the others, and the keys past RV_MAXG, go through the
 * hash.  Both are added by key in the end, so which path an event took
 * does not change the groups.
 */
#define RV_LO		(-4096)
#define RV_W		8192
#define RV_MAXG		512		/* at most 32 MiB of counts */

struct rvh {
	struct ghash	ids;		/* context key -> number + 1 (in cnt) */
	uint32_t	*keys;		/* number -> its key, nk words */
	uint64_t	*cnt[RV_MAXG];	/* number -> RV_W counts, by value - RV_LO */
	size_t		n;
	int32_t		*lid;		/* per context of the block: its number,
					 * -1 filtered out, -2 not in the table */
	size_t		caplid;
};

static void rvh_free(struct rvh *h)
{
	free(h->ids.key);
	free(h->ids.cnt);
	free(h->keys);
	for (size_t i = 0; i < h->n; i++)
		free(h->cnt[i]);
	free(h->lid);
}

/*
 * A grouped scan on scan_pool.c's workers: each worker counts its run of
 * blocks into groups of its own (struct gpart), merged into the job's on
 * the calling thread in block order; the groups are then sorted by key,
 * so the rows sqlite gets are the same for any number of threads.
 */
struct gjob {
	const struct ecur *e;	/* [I] the cursor: its pushed-down filters */
	unsigned	gcols;	/* [I] the capture columns grouped by */
	int		tsr;	/* [I] a ts range: [lo, hi] */
	int		bucket, gret, split;	/* [I] see dtsql_group_scan */
	/* [I] the columns the cursor's filter tests once per context
	 * (flt_ctx_columns; 0: none, every context passes) */
	unsigned	fcols;
	int64_t		lo, hi;	/* [I] */
	unsigned	nk, rk, bk0;	/* [I] key words: all; before retval's;
					 * before the bucket's */
	struct ghash	g;	/* [c] the merged groups (calling thread) */
	/* [I] filtered by context: the pool reads the filters' columns
	 * alone (their context values), the block function the rest of a
	 * block (these columns) when a context passes; 0: one read */
	unsigned	rest;
	int		(*inner)(void *part, const struct dtcap_block *b, size_t blk,
				 char *err, size_t errlen);	/* [I] with rest */
};

struct gpart {
	const struct gjob *j;	/* [I] */
	/* the rest is the worker's alone until it returns */
	struct ghash	g;	/* its groups */
	uint64_t	*hist;	/* per context of a block: events counted */
	size_t		nhist;
	uint8_t		*okd;	/* per context of a block: passes */
	size_t		okcap;
	uint32_t	*sel;	/* rows of a block that pass */
	size_t		selcap;
	size_t		okblk;	/* okd is block okblk - 1's (0: none) */
	uint32_t	oknok;	/* how many of its contexts pass */
	struct dtcap_block *b2;	/* the rest of a block (gjob.rest) */
	struct dtcap_block *b3;	/* its other per-context columns, apart */
	struct cpuh	lg;
	struct rvh	rv;
	/* rows_block's run of events of one key (prev): it goes on from one
	 * of the worker's blocks into the next */
	uint32_t	prev[NGKEY + 5];
	uint64_t	run;
	int64_t		pbk;	/* prev's bucket, when grouped by nothing else */
};

static int nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Whether each context of block b passes the cursor's filter, into
 * p->okd, and how many do into *nok (flt_ctx_pass, once a block: the
 * first read of two_read_block and the counting share it).  -1 out of
 * memory. */
static int ctx_pass(struct gpart *p, const struct dtcap_block *b, size_t blk, uint32_t *nok)
{
	if (p->okblk == blk + 1) {	/* the first read's, same contexts */
		*nok = p->oknok;
		return 0;
	}
	if (b->ndict > p->okcap) {
		free(p->okd);
		p->okcap = b->ndict;
		if ((p->okd = malloc(p->okcap)) == NULL) {
			p->okcap = 0;
			return -1;
		}
	}
	*nok = p->oknok = flt_ctx_pass(&p->j->e->flt, b, p->okd);
	p->okblk = blk + 1;
	return 0;
}

/*
 * A block of a scan filtered by context: the pool read the filters'
 * columns' context values alone (no row decoded); a block none of whose
 * contexts passes is done here, unread, as a thread's events are in few
 * of a long capture's blocks.  Else the rest of it is read, joined with
 * the first read's context values, and counted: without arguments only
 * the rows whose context passes (dtcap_read_rows_mt: a thread's rows of
 * a block where every thread has some), else the whole block.
 */
static int two_read_block(void *part, const struct dtcap_block *b, size_t blk, char *err,
			  size_t errlen)
{
	struct gpart *p = part;
	const struct gjob *j = p->j;
	uint32_t nok;

	p->okblk = 0;
	if (ctx_pass(p, b, blk, &nok) < 0)
		return nomem(err, errlen);
	if (nok == 0)
		return 0;
	const struct dtcap_reader *r = j->e->c->r;
	if (!p->b2 && !(p->b2 = dtcap_block_new()))
		return nomem(err, errlen);
	/* without arguments: the passing rows alone (their contexts, cpu
	 * and ts), the other per-context columns read apart (per context) */
	const unsigned rowc = DTCAP_COL_TS | DTCAP_COL_CPU;
	const int byrows = !(j->rest & ~(rowc | CTX_COLS | DTCAP_COL_CIDX | DTCAP_COL_BYCTX));
	const unsigned dictc = j->rest & CTX_COLS;
	if (byrows ? dtcap_read_rows_mt(r, blk, j->rest & rowc, p->okd, p->b2) :
		     dtcap_read_block_mt(r, blk, j->rest, p->b2)) {
		snprintf(err, errlen, "%s", dtcap_block_error(p->b2));
		return -1;
	}
	struct dtcap_block cb = *p->b2;
	if (byrows && dictc) {
		if (!p->b3 && !(p->b3 = dtcap_block_new()))
			return nomem(err, errlen);
		if (dtcap_read_block_mt(r, blk, dictc | DTCAP_COL_BYCTX | DTCAP_COL_NOINDEX, p->b3)) {
			snprintf(err, errlen, "%s", dtcap_block_error(p->b3));
			return -1;
		}
		cb.dict = p->b3->dict;
		if (p->b3->ndict != b->ndict)
			goto differs;
	}
	if (cb.ndict != b->ndict || (!byrows && cb.rows != b->rows))
		goto differs;
	if (cb.rows == 0)
		return 0;
#define TAKE(f) do { if (b->dict.f) cb.dict.f = b->dict.f; } while (0)
	TAKE(pid); TAKE(tid); TAKE(probe); TAKE(comm); TAKE(kstack); TAKE(ustack); TAKE(flags);
#undef TAKE
	return j->inner(part, &cb, blk, err, errlen);
differs:
	snprintf(err, errlen, "%s", EVENTS_GROUPED ": a block read twice differs");
	return -1;
}

/*
 * Count block b's events into the worker's groups (the blocks of no ts
 * bucket nor retval): per context of the block where the key allows it,
 * an increment per event.
 */
static int group_block(void *part, const struct dtcap_block *b, size_t blk, char *err,
		       size_t errlen)
{
	struct gpart *p = part;
	const struct gjob *jb = p->j;
	const struct ecur *e = jb->e;
	struct ghash *g = &p->g;
	const unsigned gcols = jb->gcols;
	const int64_t lo = jb->lo, hi = jb->hi;
	const int inside = jb->tsr ? ts_block(dtcap_block_info(e->c->r, blk), lo, hi) : 1;
	uint32_t k[NGKEY];

	/* the pushed-down filters once per context of the block (okd[d]),
	 * never per row; a block none of whose contexts passes is done */
	const uint8_t *okd = NULL;
	uint32_t nok = b->ndict;
	if (jb->fcols) {
		if (ctx_pass(p, b, blk, &nok) < 0)
			return nomem(err, errlen);
		if (nok == 0)
			return 0;
		okd = p->okd;
	}
#define OK(d) (!okd || okd[d])
	/* is row j in the ts range (when the block is not all in it)? */
#define TS_OK(j) (inside || ((int64_t)b->ts[j] >= lo && (int64_t)b->ts[j] <= hi))
	if (gcols == 0) {
		uint64_t n = 0;
		for (uint32_t j = 0; j < b->rows; j++)
			n += TS_OK(j);
		if (n && ghash_add(g, k, n) < 0)
			return nomem(err, errlen);
		return 0;
	}
	/* cpu is per event: the block's contexts are numbered by their
	 * key without cpu (a hash per context, not per event), then
	 * events counted per (number, cpu) in a dense table, so that an
	 * event costs one increment */
	/* a filter few contexts pass (a thread of many): the rows that pass
	 * are picked without a branch (a selection vector: the row's number
	 * written always, kept when its context passes), then those alone
	 * looked up, where a table by cpu would want the block's largest cpu
	 * first; unless they are many after all (common contexts) */
	if ((gcols & DTCAP_COL_CPU) && (gcols & CTX_COLS) && b->rows && okd &&
	    (uint64_t)nok * 8 <= b->ndict) {
		if (b->rows > p->selcap) {
			free(p->sel);
			p->selcap = b->rows;
			if ((p->sel = malloc(p->selcap * sizeof(*p->sel))) == NULL) {
				p->selcap = 0;
				return nomem(err, errlen);
			}
		}
		uint32_t *sel = p->sel, m = 0;
		const uint32_t *cidx = b->cidx;
		if (inside) {
			for (uint32_t j = 0; j < b->rows; j++) {
				sel[m] = j;
				m += okd[cidx[j]];
			}
		} else {
			for (uint32_t j = 0; j < b->rows; j++) {
				sel[m] = j;
				m += okd[cidx[j]] & TS_OK(j);
			}
		}
		if ((uint64_t)m * 8 <= b->rows) {
			for (uint32_t x = 0; x < m; x++) {
				uint32_t j = sel[x];
				ctx_key(b, gcols, cidx[j], b->cpu[j], k);
				if (ghash_add(g, k, 1) < 0)
					return nomem(err, errlen);
			}
			return 0;
		}
	}
	if ((gcols & DTCAP_COL_CPU) && b->rows) {
		int r = cpu_hist(okd, b, g, gcols, inside, lo, hi, &p->lg, &p->hist, &p->nhist);
		if (r < 0)
			return nomem(err, errlen);
		if (r > 0)
			return 0;
	}
	if (!(gcols & CTX_COLS)) {	/* cpu alone */
		for (uint32_t j = 0; j < b->rows; j++) {
			if (!TS_OK(j))
				continue;
			k[0] = b->cpu[j];
			if (ghash_add(g, k, 1) < 0)
				return nomem(err, errlen);
		}
		return 0;
	}
	if (gcols & DTCAP_COL_CPU) {
		for (uint32_t j = 0; j < b->rows; j++) {
			uint32_t d = b->cidx[j];
			if (!TS_OK(j) || !OK(d))
				continue;
			ctx_key(b, gcols, d, b->cpu[j], k);
			if (ghash_add(g, k, 1) < 0)
				return nomem(err, errlen);
		}
		return 0;
	}
	if (b->ndict > p->nhist) {
		free(p->hist);
		p->nhist = b->ndict;
		if ((p->hist = calloc(p->nhist, sizeof(*p->hist))) == NULL)
			return nomem(err, errlen);
	}
	if (inside) {
		for (uint32_t j = 0; j < b->rows; j++)
			p->hist[b->cidx[j]]++;
	} else {
		for (uint32_t j = 0; j < b->rows; j++)
			p->hist[b->cidx[j]] += TS_OK(j);
	}
#undef TS_OK
	for (uint32_t d = 0; d < b->ndict; d++) {
		if (p->hist[d] == 0)
			continue;
		if (OK(d)) {
			ctx_key(b, gcols, d, 0, k);
			if (ghash_add(g, k, p->hist[d]) < 0)
				return nomem(err, errlen);
		}
		p->hist[d] = 0;
	}
#undef OK
	return 0;
}

/* The bucket of ts, (ts - o) / w as SQL computes it on integers; -1 when
 * ts - o overflows (SQL would then compute in floating point). */
static int bucket_of(int64_t ts, int64_t o, int64_t w, int64_t *out)
{
	int64_t d;
	if (__builtin_sub_overflow(ts, o, &d))
		return -1;
	*out = d / w;	/* w > 0 (ev_filter): no overflow, truncated as SQL */
	return 0;
}

/* Number block b's contexts into h->lid (those okd fails -1; okd NULL:
 * all pass).  -1 out of memory. */
static int rvh_block(const uint8_t *okd, const struct dtcap_block *b, unsigned gcols,
		     struct rvh *h)
{
	uint32_t k[NGKEY];
	if (b->ndict > h->caplid) {
		free(h->lid);
		if ((h->lid = malloc(b->ndict * sizeof(*h->lid))) == NULL) {
			h->caplid = 0;
			return -1;
		}
		h->caplid = b->ndict;
	}
	for (uint32_t d = 0; d < b->ndict; d++) {
		if (okd && !okd[d]) {
			h->lid[d] = -1;
			continue;
		}
		if (!(b->dict.flags[d] & DTR_RETURN) || h->n >= RV_MAXG) {
			h->lid[d] = -2;
			continue;
		}
		ctx_key(b, gcols, d, 0, k);
		int64_t id = ghash_id(&h->ids, k, h->n);
		if (id < 0)
			return -1;
		if ((size_t)id == h->n) {
			uint32_t *nk = realloc(h->keys, (h->n + 1) * h->ids.nk * sizeof(*nk));
			if (nk == NULL)
				return -1;
			h->keys = nk;
			if ((h->cnt[h->n] = calloc(RV_W, sizeof(**h->cnt))) == NULL)
				return -1;
			memcpy(h->keys + h->n * h->ids.nk, k, h->ids.nk * sizeof(*k));
			h->n++;
		}
		h->lid[d] = (int32_t)id;
	}
	return 0;
}

/* Add h's counts to g: key, then retval (low, high half) and 1 (a return). */
static int rvh_flush(struct rvh *h, struct ghash *g)
{
	uint32_t k[NGKEY + 5];
	unsigned rk = h->ids.nk;
	for (size_t l = 0; l < h->n; l++) {
		memcpy(k, h->keys + l * rk, rk * sizeof(*k));
		for (int64_t v = 0; v < RV_W; v++) {
			if (h->cnt[l][v] == 0)
				continue;
			uint64_t x = (uint64_t)(v + RV_LO);
			k[rk] = (uint32_t)x;
			k[rk + 1] = (uint32_t)(x >> 32);
			k[rk + 2] = 1;
			if (ghash_add(g, k, h->cnt[l][v]) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Count block b's events into the worker's groups by their key and
 * bucket (the key's last two words, low then high half) and retval (the
 * three after).  Events of one key and bucket come in runs (a block is
 * mostly in time order), so a run is added once (and goes on into the
 * worker's next block); a block wholly in the range whose first and last
 * timestamps share a bucket, grouped by nothing else, is added whole.
 */
static int rows_block(void *part, const struct dtcap_block *b, size_t blk, char *err,
		      size_t errlen)
{
	struct gpart *p = part;
	const struct gjob *jb = p->j;
	const struct ecur *e = jb->e;
	const struct dtcap_blockinfo *bi = dtcap_block_info(e->c->r, blk);
	struct ghash *g = &p->g;
	const unsigned gcols = jb->gcols, nk = jb->nk, rk = jb->rk, bk0 = jb->bk0;
	const int bucket = jb->bucket, gret = jb->gret, split = jb->split;
	const int64_t lo = jb->lo, hi = jb->hi;
	/* without a range every row is inside (b->ts is not read) */
	const int inside = jb->tsr ? ts_block(bi, lo, hi) :
			   bucket ? ts_block(bi, INT64_MIN, INT64_MAX) : 1;
	uint32_t k[NGKEY + 5];

	/* the filters once per context, as group_block does */
	const uint8_t *okd = NULL;
	if (jb->fcols && (gcols & CTX_COLS)) {
		uint32_t nok;
		if (ctx_pass(p, b, blk, &nok) < 0)
			return nomem(err, errlen);
		if (nok == 0)
			return 0;
		okd = p->okd;
	}
	int64_t b0, b1;
	if (inside > 0 && gcols == 0 && bucket && !gret &&
	    bucket_of((int64_t)bi->tmin, e->bko, e->bkw, &b0) == 0 &&
	    bucket_of((int64_t)bi->tmax, e->bko, e->bkw, &b1) == 0 && b0 == b1) {
		k[0] = (uint32_t)(uint64_t)b0;
		k[1] = (uint32_t)((uint64_t)b0 >> 32);
		if (b->rows && ghash_add(g, k, b->rows) < 0)
			return nomem(err, errlen);
		return 0;
	}
	if (split && b->ndict > p->nhist) {
		free(p->hist);
		p->nhist = b->ndict;
		if ((p->hist = calloc(p->nhist, sizeof(*p->hist))) == NULL)
			return nomem(err, errlen);
	}
	if (split && rvh_block(okd, b, gcols, &p->rv) < 0)
		return nomem(err, errlen);
	uint32_t a0 = 0;	/* the row's place in slot 0's column */
	int64_t bkcur = 0, bklo = 1, bkhi = 0;	/* the last bucket's ts - K */
	const int onlybk = bucket && gcols == 0 && !gret;
	/* every row is inside when ts is not read: t is then unused */
	static const uint64_t ts0[1];
	const uint64_t *tsv = b->ts ? b->ts : ts0;
	const uint32_t tsm = b->ts ? UINT32_MAX : 0;
	for (uint32_t j = 0; j < b->rows; j++) {
		int64_t t = (int64_t)tsv[j & tsm], bk;
		uint64_t arg0 = 0;
		if (gret && b->nargs[j] > 0) {
			if (a0 >= b->nargslot[0]) {
				snprintf(err, errlen, "%s", EVENTS_GROUPED ": argument slots");
				return -1;
			}
			arg0 = b->argslot[0][a0++];
		}
		if (!inside && (t < lo || t > hi))
			continue;
		uint32_t d = 0;
		if (split) {
			d = b->cidx[j];
			if (!(b->dict.flags[d] & DTR_RETURN)) {
				p->hist[d]++;
				continue;
			}
			int32_t l = p->rv.lid[d];
			if (l == -1)
				continue;
			int64_t v = (int64_t)arg0;
			if (l >= 0 && v >= RV_LO && v < RV_LO + RV_W) {
				p->rv.cnt[l][v - RV_LO]++;
				continue;
			}
		}
		if (gcols & CTX_COLS) {
			d = b->cidx[j];
			if (!split && okd && !okd[d])
				continue;
			ctx_key(b, gcols, d, gcols & DTCAP_COL_CPU ? b->cpu[j] : 0, k);
		} else if (gcols & DTCAP_COL_CPU) {
			k[0] = b->cpu[j];
		}
		/* a run of rows in one bucket (the block is mostly in
		 * time order) costs no division: the bucket's range of
		 * ts - K is kept, for buckets of ts - K >= 0 (where
		 * truncation is floor) */
		int64_t dk;
		if (bucket && !__builtin_sub_overflow(t, e->bko, &dk) &&
		    dk >= bklo && dk <= bkhi) {
			bk = bkcur;
		} else if (bucket && bucket_of(t, e->bko, e->bkw, &bk) < 0) {
			snprintf(err, errlen, "%s", EVENTS_GROUPED ": ts - " E_BKOFF_NAME
				 " overflows 64 bits (DT_SQL_NO_GROUPED=1 computes it in"
				 " floating point)");
			return -1;
		} else if (bucket) {
			bkcur = bk;
			bklo = 1, bkhi = 0;	/* none, unless below */
			if (bk >= 0 && t - e->bko >= 0) {	/* no overflow: done above */
				bklo = bk * e->bkw;	/* <= ts - K */
				if (__builtin_add_overflow(bklo, e->bkw - 1, &bkhi))
					bkhi = INT64_MAX;
			}
		}
		if (bucket) {
			/* the bucket the whole key: the run's, or a new one */
			if (onlybk && p->run && bk == p->pbk) {
				p->run++;
				continue;
			}
			p->pbk = bk;
			k[bk0] = (uint32_t)(uint64_t)bk;
			k[bk0 + 1] = (uint32_t)((uint64_t)bk >> 32);
		}
		if (gret) {	/* FLAGS is a key column with it: by context */
			int ret = (b->dict.flags[d] & DTR_RETURN) != 0;
			uint64_t x = ret ? arg0 : 0;
			k[rk] = (uint32_t)x;
			k[rk + 1] = (uint32_t)(x >> 32);
			k[rk + 2] = (uint32_t)ret;
		}
		if (p->run && keq(k, p->prev, nk)) {
			p->run++;
			continue;
		}
		if (p->run && ghash_add(g, p->prev, p->run) < 0)
			return nomem(err, errlen);
		memcpy(p->prev, k, nk * sizeof(*k));
		p->run = 1;
	}
	for (uint32_t d = 0; split && d < b->ndict; d++) {
		if (p->hist[d] == 0)
			continue;
		if (!okd || okd[d]) {
			ctx_key(b, gcols, d, 0, k);
			k[rk] = k[rk + 1] = k[rk + 2] = 0;	/* retval NULL */
			if (ghash_add(g, k, p->hist[d]) < 0)
				return nomem(err, errlen);
		}
		p->hist[d] = 0;
	}
	return 0;
}

static void *part_new(void *ctx)
{
	struct gjob *j = ctx;
	struct gpart *p = calloc(1, sizeof(*p));

	if (p) {
		p->j = j;
		p->g.nk = j->nk;
		p->rv.ids.nk = j->rk;
	}
	return p;
}

static void part_free(void *ctx, void *part)
{
	struct gpart *p = part;

	(void)ctx;
	free(p->g.key);
	free(p->g.cnt);
	free(p->hist);
	free(p->okd);
	free(p->sel);
	dtcap_block_free(p->b2);
	dtcap_block_free(p->b3);
	cpuh_free(&p->lg);
	rvh_free(&p->rv);
	free(p);
}

/* A worker's groups into the job's: its last run and its dense retval
 * counts first (what it would have added at the end of its blocks). */
static int part_merge(void *ctx, void *part)
{
	struct gjob *j = ctx;
	struct gpart *p = part;

	if (p->run && ghash_add(&p->g, p->prev, p->run) < 0)
		return -1;
	p->run = 0;
	if (rvh_flush(&p->rv, &p->g) < 0)
		return -1;
	for (size_t s = 0; s < p->g.cap; s++)
		if (p->g.cnt[s] && ghash_add(&j->g, p->g.key + s * p->g.nk, p->g.cnt[s]) < 0)
			return -1;
	return 0;
}

/* Blocks that cannot hold an event of the statement are not read. */
static int gskip(void *ctx, const struct dtcap_blockinfo *bi)
{
	const struct gjob *j = ctx;

	if (j->lo > j->hi || !block_may_match(j->e, bi))
		return 1;
	return j->tsr && ts_block(bi, j->lo, j->hi) < 0;
}

/* Slots of g's groups in the order of their keys, word by word. */
static int cmp_slot(const void *a, const void *b, void *arg)
{
	const struct ghash *g = arg;
	const uint32_t *x = g->key + *(const size_t *)a * g->nk;
	const uint32_t *y = g->key + *(const size_t *)b * g->nk;

	for (unsigned i = 0; i < g->nk; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/*
 * events_grouped's xFilter: count the events of each distinct key of the
 * used columns on scan_pool.c's workers, then hand the groups over as
 * rows in key order (sqlite sorts or groups them itself; there are few).
 */
int dtsql_group_scan(struct ecur *e)
{
	/* ts is read for a range or a bucket only, not grouped by; the
	 * arguments for retval only */
	int bucket = e->bko_set && e->bkw_set, gret = (e->cols & DTCAP_COL_ARGS) != 0;
	unsigned gcols = e->cols & ~(e->glo_set || e->ghi_set || bucket ? DTCAP_COL_TS : 0u) &
			 ~DTCAP_COL_ARGS;
	if (gret && !(gcols & DTCAP_COL_FLAGS)) {
		set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": retval without flags");
		return SQLITE_ERROR;
	}
	if (gcols & ~GROUP_COLS) {
		/* a row filter on a column not grouped by (best_index refuses
		 * plans that use one; this is a guard) */
		set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": not a column to group by");
		return SQLITE_ERROR;
	}
	struct gjob j = {
		.e = e, .gcols = gcols, .bucket = bucket, .gret = gret,
		.tsr = e->glo_set || e->ghi_set,
		.lo = e->glo_set ? e->glo : INT64_MIN, .hi = e->ghi_set ? e->ghi : INT64_MAX,
		.fcols = flt_ctx_columns(&e->flt),
	};
	for (unsigned i = 0; i < NGKEY; i++)
		j.nk += (gcols & gkey_col[i]) != 0;
	j.nk += (bucket ? 2 : 0) + (gret ? 3 : 0);
	j.rk = j.nk - 3 * !!gret;
	j.bk0 = j.rk - 2 * !!bucket;
	/* grouped by retval and contexts only: the events that are not
	 * returns (retval NULL) are counted per context, not per event */
	j.split = gret && !bucket && !(gcols & DTCAP_COL_CPU) && (gcols & CTX_COLS);
	struct ghash *g = &j.g;
	g->nk = j.nk;
	size_t *order = NULL;
	int rc = SQLITE_OK;
	if (dtsql_cancel && *dtsql_cancel) {
		set_err(e->base.pVtab, "%s", "interrupted");
		rc = SQLITE_INTERRUPT;
		goto out;
	}
	if (gcols == 0 && !j.tsr && !bucket && !gret) {
		/* count(*) and friends: the index knows the row counts */
		struct dtcap_reader *r = e->c->r;
		uint64_t n = 0;
		for (size_t i = 0; i < dtcap_nblocks(r); i++) {
			const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
			n += gskip(&j, bi) ? 0 : bi->rows;
		}
		uint32_t k0[1] = { 0 };
		if (n && ghash_add(g, k0, n) < 0)
			goto nomem;
	} else {
		/*
		 * retval: the first slot's column alone, not the row-major
		 * array of every argument nor the other slots' columns (most
		 * of the decoding's time when filled).  ts only for a range
		 * or a bucket: with neither no block is skipped by its time
		 * index, so there is none to check.  The per-context columns
		 * come once per context of a block.
		 */
		unsigned rcols = gcols | (gcols & CTX_COLS ? DTCAP_COL_BYCTX : 0) |
				 (j.tsr || bucket ? DTCAP_COL_TS : 0) |
				 (gret ? DTCAP_COL_ARGS | DTCAP_COL_ARGSLOTS | DTCAP_COL_ARGS2 : 0);
		struct dtsp_job job = {
			.part_new = part_new, .part_free = part_free, .merge = part_merge,
			.skip = gskip, .block = bucket || gret ? rows_block : group_block,
		};
		/* filtered by context: the filters' columns read first, alone */
		const unsigned fcols = j.fcols;
		const char *one = getenv("DT_SQL_ONE_READ");
		if (fcols && (gcols & CTX_COLS) && (fcols & ~gcols) == 0 && !(one && *one)) {
			j.inner = job.block;
			j.rest = (rcols & ~fcols) | DTCAP_COL_CIDX;
			job.block = two_read_block;
			rcols = fcols | DTCAP_COL_BYCTX | DTCAP_COL_NOINDEX;
		}
		struct flt_filter none;
		char err[512];
		flt_init(&none);
		int sr = dtsp_scan(e->c->r, &none, rcols, &job, &j, dtsql_cancel, NULL, err,
				   sizeof(err));
		flt_free(&none);
		if (sr) {
			if (sr == -1 && !strcmp(err, "out of memory"))
				goto nomem;
			set_err(e->base.pVtab, "%s", err);
			rc = sr == FLT_SCAN_CANCELLED ? SQLITE_INTERRUPT : SQLITE_ERROR;
			goto out;
		}
	}
	/* key order: the rows do not depend on how the blocks were shared */
	if (g->n && (order = malloc(g->n * sizeof(*order))) == NULL)
		goto nomem;
	size_t no = 0;
	for (size_t s = 0; s < g->cap; s++)
		if (g->cnt[s])
			order[no++] = s;
	if (no > 1)
		qsort_r(order, no, sizeof(*order), cmp_slot, g);
	size_t n = g->n ? g->n : 1;
	struct cols *m = &e->mat;
#define AL(f, c) do {							\
		if ((gcols & (c)) && (m->f = malloc(n * sizeof(*m->f))) == NULL) \
			goto nomem;					\
	} while (0)
	AL(cpu, DTCAP_COL_CPU); AL(pid, DTCAP_COL_PID); AL(tid, DTCAP_COL_TID);
	AL(probe, DTCAP_COL_PROBE); AL(comm, DTCAP_COL_COMM);
	AL(kstack, DTCAP_COL_KSTACK); AL(ustack, DTCAP_COL_USTACK);
	AL(flags, DTCAP_COL_FLAGS); AL(ctx, DTCAP_COL_CTX);
#undef AL
	if ((e->gcount = malloc(n * sizeof(*e->gcount))) == NULL ||
	    (bucket && (e->gbucket = malloc(n * sizeof(*e->gbucket))) == NULL) ||
	    (gret && ((e->gret = malloc(n * sizeof(*e->gret))) == NULL ||
		      (e->gretok = malloc(n)) == NULL)))
		goto nomem;
	size_t row = 0;
	for (size_t o = 0; o < no; o++) {
		size_t s = order[o];
		const uint32_t *k = g->key + s * g->nk;
		unsigned w = 0;
		if (m->cpu) m->cpu[row] = k[w++];
		if (m->pid) m->pid[row] = k[w++];
		if (m->tid) m->tid[row] = k[w++];
		if (m->probe) m->probe[row] = k[w++];
		if (m->comm) m->comm[row] = k[w++];
		if (m->kstack) m->kstack[row] = k[w++];
		if (m->ustack) m->ustack[row] = k[w++];
		if (m->flags) m->flags[row] = k[w++];
		if (m->ctx) m->ctx[row] = (uint8_t)k[w++];
		if (bucket) {
			e->gbucket[row] = (int64_t)((uint64_t)k[w] | (uint64_t)k[w + 1] << 32);
			w += 2;
		}
		if (gret) {
			e->gret[row] = (int64_t)((uint64_t)k[w] | (uint64_t)k[w + 1] << 32);
			e->gretok[row] = (uint8_t)k[w + 2];
		}
		e->gcount[row++] = g->cnt[s];
	}
	e->cv = e->mat;
	e->cols = gcols;	/* the columns held: ts was only read */
	e->grouped = 1;
	e->nmat = row;
	e->pos = 0;
	e->row = 0;
	e->eof = row == 0;
	goto out;
nomem:
	rc = SQLITE_NOMEM;
out:
	free(order);
	free(g->key);
	free(g->cnt);
	return rc;
}

