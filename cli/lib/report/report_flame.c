/*
 * report_flame.c - the flame graph engine (engine.h rpt_flame_fold and
 * rpt_flame_write), for dtreport flame and diff and dtsh's flame; their
 * command lines are cmd_flame.c's.
 *
 * Two passes.  The first walks the event columns only and counts samples
 * per (comm, kernel stack id, user stack id, process snapshot): no names,
 * no strings, one hash probe per event.  The second names each distinct
 * combination once (kernel stacks memoised per stack id, frames by dtsym's
 * own cache) and folds it into the tree.  That is what keeps 10 M samples
 * fast: symbolization cost grows with distinct stacks, not with events.
 *
 * Folded stack of one sample, root first:
 *	comm;[truncated];user outermost..innermost;--;[truncated];kernel outermost..innermost
 * "[truncated]" appears only on a side whose stack was cut (its outermost
 * frames are missing); "--" only when both sides are present.  Frames other
 * than the innermost of each stack are return addresses, named at pc - 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "dtsym.h"
#include "engine.h"
#include "filter.h"
#include "flame.h"
#include "report.h"
#include "scan_pool.h"
#include "util.h"

/* One combination's samples: 32 bytes, so the hot part stays in cache. */
struct agg {
	uint32_t	comm, kstack, ustack, pid, snap;
	uint64_t	count;
};

/* Process snapshot times of pids with more than one snapshot (exec). */
struct psnap {
	uint32_t	pid;
	uint32_t	n;
	uint64_t	*ts;
};

struct prof {
	struct dtcap_reader *r;
	uint8_t		*want;		/* by probe id */
	uint32_t	nwant;
	struct agg	*tab;		/* in order of first sample */
	size_t		cap, n;
	struct dt_htab	ht;		/* (comm, kstack, ustack, pid, snap) -> tab */
	struct psnap	*ps;		/* sorted by pid */
	size_t		nps;
	uint64_t	*ts;		/* by tab entry: its first sample's time,
					 * which picks the process snapshot */
	size_t		capts;
	uint64_t	samples;
	int		oom;
	int		rerr;		/* reading a ts column failed: tsb's error */

	/* prof_block's per-block scratch */
	uint32_t	*cnt, *first;	/* by context: rows, first row */
	uint32_t	*lsnap;		/* by context: K_ONE: its snapshot; K_SNAP:
					 * its last row's */
	uint32_t	*lent;		/* by K_SNAP context: lsnap's entry */
	uint8_t		*kind;		/* by context: K_* */
	size_t		dcap;
	uint64_t	*bits;		/* by row: rows to visit */
	uint32_t	*visit;		/* those rows, in order */
	size_t		rcap;
	struct dtcap_block *tsb;	/* the ts column of a block that needs it */
};

static uint64_t agg_hash(uint32_t comm, uint32_t k, uint32_t u, uint32_t pid, uint32_t snap)
{
	uint64_t h = ((uint64_t)k << 32 | u) * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)comm << 32 | pid) * 0xc2b2ae3d27d4eb4fULL;
	h ^= snap * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return h;
}

static uint64_t agg_rehash(const void *ctx, uint32_t e)
{
	const struct agg *a = &((const struct prof *)ctx)->tab[e];
	return agg_hash(a->comm, a->kstack, a->ustack, a->pid, a->snap);
}

static int pair_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int build_psnaps(struct prof *p)
{
	size_t n = dtcap_nprocs(p->r), na = 0;
	uint64_t *pairs = malloc((n ? n : 1) * 2 * sizeof(uint64_t));
	struct psnap *all = calloc(n ? n : 1, sizeof(*all));

	if (!pairs || !all) {
		free(pairs);
		free(all);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dtcap_proc *pr = dtcap_proc_at(p->r, i);
		pairs[2 * i] = pr ? pr->pid : 0;
		pairs[2 * i + 1] = pr ? pr->ts : 0;
	}
	/* Sorted by (pid, ts): pids with one snapshot need no lookup at all. */
	qsort(pairs, n, 2 * sizeof(uint64_t), pair_cmp);
	p->ps = all;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && pairs[2 * j] == pairs[2 * i])
			j++;
		if (j - i > 1) {
			uint64_t *ts = malloc((j - i) * sizeof(*ts));
			if (!ts) {
				free(pairs);
				p->nps = na;
				return -1;
			}
			for (size_t k = i; k < j; k++)
				ts[k - i] = pairs[2 * k + 1];
			all[na++] = (struct psnap){ (uint32_t)pairs[2 * i], (uint32_t)(j - i), ts };
		}
		i = j;
	}
	free(pairs);
	p->nps = na;
	return 0;
}

/* Which snapshot of pid is in force at ts (dtcap_proc_find's rule). */
static uint32_t snap_of(const struct prof *p, uint32_t pid, uint64_t ts)
{
	size_t lo = 0, hi = p->nps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nps || p->ps[lo].pid != pid)
		return 0;
	const struct psnap *s = &p->ps[lo];
	uint32_t k = 0;
	while (k < s->n && s->ts[k] <= ts)
		k++;
	return k ? k - 1 : 0;
}

/* Count n samples of one combination, whose agg_hash is h; ts: its first
 * sample's time (kept only when the combination is new).  Returns its
 * entry, or DT_HTAB_NONE when out of memory. */
static uint32_t agg_add_h(struct prof *p, uint64_t h, uint32_t comm, uint32_t k, uint32_t u,
			  uint32_t pid, uint32_t snap, uint64_t ts, uint64_t n)
{
	uint32_t e;

	p->samples += n;
	/* (the table outgrows L2 on big captures: callers prefetch) */
	for (size_t j = dt_htab_first(&p->ht, h); (e = dt_htab_at(&p->ht, j)) != DT_HTAB_NONE;
	     j = dt_htab_next(&p->ht, j)) {
		struct agg *a = &p->tab[e];
		if (a->comm == comm && a->kstack == k && a->ustack == u && a->pid == pid &&
		    a->snap == snap) {
			a->count += n;
			return e;
		}
	}
	if (DT_GROW(p->tab, p->cap, p->n, 1, 4096) || DT_GROW(p->ts, p->capts, p->n, 1, 4096))
		goto oom;
	p->tab[p->n] = (struct agg){ comm, k, u, pid, snap, n };
	p->ts[p->n] = ts;
	if (dt_htab_add(&p->ht, h, (uint32_t)p->n, agg_rehash, p))
		goto oom;
	return (uint32_t)p->n++;
oom:
	p->oom = 1;
	return DT_HTAB_NONE;
}

/* One row at a time: with filters (they select rows, not contexts). */
static int prof_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct prof *p = ctx;
	uint32_t probe = b->probe[i];

	if (probe >= p->nwant || !p->want[probe])
		return 0;
	uint32_t u = b->ustack[i], pid = 0, snap = 0;
	if (u) {
		/* Only user frames depend on the process. */
		pid = b->pid[i];
		if (p->nps)	/* then the TS column was decoded */
			snap = snap_of(p, pid, b->ts[i]);
	}
	return agg_add_h(p, agg_hash(b->comm[i], b->kstack[i], u, pid, snap), b->comm[i],
			 b->kstack[i], u, pid, snap, b->ts ? b->ts[i] : 0, 1) == DT_HTAB_NONE;
}

enum { K_SKIP, K_ONE, K_SNAP };	/* per context: not counted, one agg, by row */

static int has_psnap(const struct prof *p, uint32_t pid)
{
	size_t lo = 0, hi = p->nps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nps && p->ps[lo].pid == pid;
}

/*
 * A whole block by context (no filters).  Rows are counted per context,
 * and each context's first row found, in one branch-free pass; then the
 * rows that matter are visited in order: a context's first row adds all
 * its rows to its combination at once, and every row of a context whose
 * pid exec'd (the snapshot depends on the row's time) is added alone.
 * New combinations are thus inserted in the order a row-by-row walk
 * (prof_row) meets them, with the same first times: same table, same graph.
 */
static int prof_block(void *ctx, const struct dtcap_block *b, size_t blk)
{
	struct prof *p = ctx;
	uint32_t nd = b->ndict, rows = b->rows, nw = (rows + 63) / 64;
	const uint32_t *cidx = b->cidx;
	const uint64_t *ts = NULL;	/* the rows' times, read only if needed */

	if (nd > p->dcap) {
		free(p->cnt);
		free(p->first);
		free(p->kind);
		free(p->lsnap);
		free(p->lent);
		p->cnt = malloc(nd * sizeof(*p->cnt));
		p->first = malloc(nd * sizeof(*p->first));
		p->kind = malloc(nd);
		p->lsnap = malloc(nd * sizeof(*p->lsnap));
		p->lent = malloc(nd * sizeof(*p->lent));
		p->dcap = p->cnt && p->first && p->kind && p->lsnap && p->lent ? nd : 0;
		if (!p->dcap)
			goto oom;
	}
	if (rows > p->rcap) {
		free(p->bits);
		free(p->visit);
		p->bits = malloc(((size_t)rows + 63) / 64 * sizeof(*p->bits));
		p->visit = malloc(rows * sizeof(*p->visit));
		p->rcap = p->bits && p->visit ? rows : 0;
		if (!p->rcap)
			goto oom;
	}
	uint32_t *cnt = p->cnt, *first = p->first;
	uint8_t *kind = p->kind;
	int snaps = 0;
	/*
	 * The block's time range (its header's: the reader checks it when
	 * the ts column is decoded), for pids that exec'd: a context whose
	 * pid has the same snapshot at both ends has it on every row between,
	 * and tlo stands for its first row's time (it picks the same
	 * snapshot).  Only a block that straddles an exec reads its ts column.
	 */
	const struct dtcap_blockinfo *bi = dtcap_block_info(p->r, blk);
	uint64_t tlo = bi ? bi->tmin : 0, thi = bi ? bi->tmax : UINT64_MAX;
	for (uint32_t c = 0; c < nd; c++) {
		uint32_t probe = b->dict.probe[c];
		p->lsnap[c] = 0;
		if (probe >= p->nwant || !p->want[probe]) {
			kind[c] = K_SKIP;
		} else if (b->dict.ustack[c] && p->nps && has_psnap(p, b->dict.pid[c])) {
			uint32_t s0 = snap_of(p, b->dict.pid[c], tlo);
			if (s0 == snap_of(p, b->dict.pid[c], thi)) {
				kind[c] = K_ONE;
				p->lsnap[c] = s0;
			} else {
				kind[c] = K_SNAP, snaps = 1, p->lsnap[c] = UINT32_MAX;
			}
		} else {
			kind[c] = K_ONE;
		}
		cnt[c] = 0;
	}
	for (uint32_t i = rows; i-- > 0;) {
		uint32_t c = cidx[i];
		first[c] = i;
		cnt[c]++;
	}
	if (snaps) {
		if (!p->tsb && !(p->tsb = dtcap_block_new()))
			goto oom;
		if (dtcap_read_block_mt(p->r, blk, DTCAP_COL_TS, p->tsb)) {
			p->rerr = 1;
			return 1;
		}
		ts = p->tsb->ts;
	}
	uint64_t *bits = p->bits;
	memset(bits, 0, nw * sizeof(*bits));
	for (uint32_t c = 0; c < nd; c++)
		if (kind[c] == K_ONE && cnt[c])
			bits[first[c] / 64] |= 1ULL << (first[c] % 64);
	if (snaps)	/* a word at a time, without branches */
		for (uint32_t w = 0; w < nw; w++) {
			uint32_t i0 = w * 64, m = rows - i0 < 64 ? rows - i0 : 64;
			uint64_t x = 0;
			for (uint32_t j = 0; j < m; j++)
				x |= (uint64_t)(kind[cidx[i0 + j]] == K_SNAP) << j;
			bits[w] |= x;
		}
	uint32_t nv = 0, *visit = p->visit;
	for (uint32_t w = 0; w < nw; w++)
		for (uint64_t x = bits[w]; x; x &= x - 1)
			visit[nv++] = w * 64 + (uint32_t)__builtin_ctzll(x);
	/*
	 * The table outgrows L2 on big captures, and a lookup is two misses
	 * (slot, then entry): hashes are computed 16 visits ahead and their
	 * slots prefetched, and 8 ahead the slot is read and its entry
	 * prefetched.  (A K_SNAP row's snapshot is not known ahead: its
	 * prefetch is for snapshot 0, a guess.)
	 */
	uint64_t hr[16];
#define VISIT_HASH(v) __extension__ ({ uint32_t c_ = cidx[visit[v]], u_ = b->dict.ustack[c_]; \
		agg_hash(b->dict.comm[c_], b->dict.kstack[c_], u_, u_ ? b->dict.pid[c_] : 0, \
			 kind[c_] == K_ONE ? p->lsnap[c_] : 0); })
	for (uint32_t v = 0; v < nv && v < 16; v++) {
		hr[v] = VISIT_HASH(v);
		__builtin_prefetch(&p->ht.slot[dt_htab_first(&p->ht, hr[v])]);
	}
	for (uint32_t v = 0; v < nv; v++) {
		uint32_t i = visit[v], c = cidx[i], u = b->dict.ustack[c];
		uint32_t pid = u ? b->dict.pid[c] : 0, snap = 0;
		uint64_t h = hr[v & 15];
		if (v + 16 < nv) {
			hr[(v + 16) & 15] = VISIT_HASH(v + 16);
			__builtin_prefetch(&p->ht.slot[dt_htab_first(&p->ht, hr[(v + 16) & 15])]);
		}
		if (v + 8 < nv) {
			uint32_t e8 = dt_htab_at(&p->ht, dt_htab_first(&p->ht, hr[(v + 8) & 15]));
			if (e8 != DT_HTAB_NONE)
				__builtin_prefetch(&p->tab[e8]);
		}
		if (kind[c] == K_SNAP) {
			/* rows of a pid that exec'd, one at a time; the same
			 * snapshot as the context's last row: the same entry */
			snap = snap_of(p, pid, ts[i]);
			if (snap == p->lsnap[c]) {
				p->tab[p->lent[c]].count++;
				p->samples++;
				continue;
			}
			uint32_t e = agg_add_h(p, agg_hash(b->dict.comm[c], b->dict.kstack[c], u,
							   pid, snap), b->dict.comm[c],
					       b->dict.kstack[c], u, pid, snap, ts[i], 1);
			if (e == DT_HTAB_NONE)
				return 1;
			p->lsnap[c] = snap;
			p->lent[c] = e;
			continue;
		}
		if (agg_add_h(p, h, b->dict.comm[c], b->dict.kstack[c], u, pid, p->lsnap[c],
			      ts ? ts[i] : tlo, cnt[c]) == DT_HTAB_NONE)
			return 1;
	}
#undef VISIT_HASH
	return 0;
oom:
	p->oom = 1;
	return 1;
}

/*
 * The first pass on the scan pool: each worker counts into a prof of its
 * own (sharing the caller's read-only want and snapshot tables), merged
 * in block order by agg_add_h, which keeps the first partial's first time:
 * the table one walk would have built.
 */
static void *prof_part_new(void *ctx)
{
	const struct prof *m = ctx;
	struct prof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->r = m->r;
	p->want = m->want;
	p->nwant = m->nwant;
	p->ps = m->ps;
	p->nps = m->nps;
	/* slots before the first block: prof_block prefetches into them */
	if (dt_htab_reserve(&p->ht, 4096, agg_rehash, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void prof_scratch_free(struct prof *p)
{
	free(p->cnt);
	free(p->first);
	free(p->kind);
	free(p->lsnap);
	free(p->lent);
	dtcap_block_free(p->tsb);
	free(p->bits);
	free(p->visit);
}

static void prof_part_free(void *ctx, void *part)
{
	struct prof *p = part;

	(void)ctx;
	free(p->tab);
	free(p->ts);
	dt_htab_free(&p->ht);
	prof_scratch_free(p);
	free(p);
}

static int prof_part_err(struct prof *p, char *err, size_t errlen)
{
	if (p->rerr)
		snprintf(err, errlen, "%s", dtcap_block_error(p->tsb));
	else if (p->oom)
		snprintf(err, errlen, "out of memory");
	return 1;
}

static int prof_part_block(void *part, const struct dtcap_block *b, size_t blk, char *err,
			   size_t errlen)
{
	return prof_block(part, b, blk) ? prof_part_err(part, err, errlen) : 0;
}

static int prof_part_row(void *part, const struct dtcap_block *b, uint32_t row, char *err,
			 size_t errlen)
{
	return prof_row(part, b, row) ? prof_part_err(part, err, errlen) : 0;
}

static int prof_merge(void *ctx, void *part)
{
	struct prof *m = ctx;
	const struct prof *p = part;

	for (size_t e = 0; e < p->n; e++) {
		const struct agg *a = &p->tab[e];
		if (agg_add_h(m, agg_hash(a->comm, a->kstack, a->ustack, a->pid, a->snap),
			      a->comm, a->kstack, a->ustack, a->pid, a->snap, p->ts[e],
			      a->count) == DT_HTAB_NONE)
			return -1;
	}
	return 0;
}

static enum flame_kind kind_of(const char *origin, int kernel)
{
	if (!strcmp(origin, "module"))
		return FLAME_MODULE;
	return kernel ? FLAME_KERNEL : FLAME_USER;
}

/* Interned names of a stack's frames, outermost first, memoised by id. */
struct kmemo {
	uint32_t	*off;		/* by stack id: offset + 1 into ids */
	uint32_t	*len;
	uint32_t	*ids;
	size_t		n, cap;
};

/*
 * Named user stacks, memoised by (stack id, process snapshot): names
 * depend on nothing else (dtsym), and the same user stack recurs under
 * many kernel stacks and comms.  An entry's number is its id for pmemo.
 */
struct umemo_ent {
	const struct dtcap_proc *proc;
	uint32_t	ustack;
	uint32_t	off, len;	/* into kmemo.ids */
};
struct umemo {
	struct umemo_ent *tab;
	size_t		cap, n;
	struct dt_htab	ht;
};

static uint64_t umemo_hash(uint32_t u, const struct dtcap_proc *proc)
{
	uint64_t h = ((uint64_t)u * 0x9e3779b97f4a7c15ULL) ^
		     ((uint64_t)(uintptr_t)proc * 0xc2b2ae3d27d4eb4fULL);
	return h ^ h >> 31;
}

static uint64_t umemo_rehash(const void *ctx, uint32_t e)
{
	const struct umemo_ent *x = &((const struct umemo *)ctx)->tab[e];
	return umemo_hash(x->ustack, x->proc);
}

static uint32_t umemo_find(const struct umemo *m, uint32_t u, const struct dtcap_proc *proc)
{
	uint32_t e;
	for (size_t j = dt_htab_first(&m->ht, umemo_hash(u, proc));
	     (e = dt_htab_at(&m->ht, j)) != DT_HTAB_NONE; j = dt_htab_next(&m->ht, j))
		if (m->tab[e].ustack == u && m->tab[e].proc == proc)
			return e;
	return DT_HTAB_NONE;
}

static int umemo_add(struct umemo *m, struct umemo_ent x)
{
	if (DT_GROW(m->tab, m->cap, m->n, 1, 1024))
		return -1;
	m->tab[m->n] = x;
	if (dt_htab_add(&m->ht, umemo_hash(x.ustack, x.proc), (uint32_t)m->n, umemo_rehash, m))
		return -1;
	m->n++;
	return 0;
}

/*
 * The graph node where (comm, named user stack) ends, memoised: many
 * kernel stacks hang below one such prefix, and walking it from the root
 * is most of adding a path.  Key: comm id (or UINT32_MAX), umemo id (or
 * UINT32_MAX).  The same table also keeps the leaf below (prefix node,
 * kernel stack id).
 */
struct pmemo_ent {
	uint32_t	comm, ustk, node;
};
struct pmemo {
	struct pmemo_ent *tab;
	size_t		cap, n;
	struct dt_htab	ht;
};

static uint64_t pmemo_hash(uint32_t comm, uint32_t ustk)
{
	uint64_t h = ((uint64_t)comm << 32 | ustk) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 29;
}

static uint64_t pmemo_rehash(const void *ctx, uint32_t e)
{
	const struct pmemo_ent *x = &((const struct pmemo *)ctx)->tab[e];
	return pmemo_hash(x->comm, x->ustk);
}

/* The node memoised for (comm, ustk), or 0 (the root is never one). */
static uint32_t pmemo_find(const struct pmemo *m, uint32_t comm, uint32_t ustk)
{
	uint32_t e;
	for (size_t j = dt_htab_first(&m->ht, pmemo_hash(comm, ustk));
	     (e = dt_htab_at(&m->ht, j)) != DT_HTAB_NONE; j = dt_htab_next(&m->ht, j))
		if (m->tab[e].comm == comm && m->tab[e].ustk == ustk)
			return m->tab[e].node;
	return 0;
}

static int pmemo_add(struct pmemo *m, uint32_t comm, uint32_t ustk, uint32_t node)
{
	if (DT_GROW(m->tab, m->cap, m->n, 1, 1024))
		return -1;
	m->tab[m->n] = (struct pmemo_ent){ comm, ustk, node };
	if (dt_htab_add(&m->ht, pmemo_hash(comm, ustk), (uint32_t)m->n, pmemo_rehash, m))
		return -1;
	m->n++;
	return 0;
}

/*
 * Frame names, memoised by (pc, process snapshot, kernel, innermost): the
 * name id a frame gets depends on nothing else, and the same frames recur
 * in thousands of stacks.  One probe here instead of two dtsym lookups
 * (name and origin, each finding the process again) and an intern of the
 * name's text, per frame of every distinct stack.
 */
struct fmemo_ent {
	uint64_t	pc;
	const struct dtcap_proc *proc;	/* NULL: kernel, or no process */
	uint32_t	how;		/* kernel | innermost << 1 */
	uint32_t	fid;
};
struct fmemo {
	struct fmemo_ent *tab;
	size_t		cap, n;
	struct dt_htab	ht;
	int		by_dso;		/* [I] frames named by object, not symbol */
	int		by_srcline;	/* [I] user frames by "file:line" */
};

static uint64_t fmemo_hash(uint64_t pc, const struct dtcap_proc *proc, uint32_t how)
{
	uint64_t h = (pc ^ how) * 0x9e3779b97f4a7c15ULL ^
		     (uint64_t)(uintptr_t)proc * 0xc2b2ae3d27d4eb4fULL;
	return h ^ h >> 29;
}

static uint64_t fmemo_rehash(const void *ctx, uint32_t e)
{
	const struct fmemo_ent *x = &((const struct fmemo *)ctx)->tab[e];
	return fmemo_hash(x->pc, x->proc, x->how);
}

static int push_id(struct kmemo *m, uint32_t id)
{
	if (DT_GROW(m->ids, m->cap, m->n, 1, 4096))
		return -1;
	m->ids[m->n++] = id;
	return 0;
}

/* The name id of frame k of a stack (pcs[k]); proc: dtcap_proc_find(pid, ts). */
static int64_t name_frame(struct flame *fl, struct dtsym *sym, struct fmemo *fm,
			  const uint64_t *pcs, unsigned k, int kernel, uint32_t pid,
			  uint64_t ts, const struct dtcap_proc *proc)
{
	uint32_t how = (uint32_t)!!kernel | (uint32_t)(k == 0) << 1, e;
	uint64_t h = fmemo_hash(pcs[k], proc, how);
	for (size_t j = dt_htab_first(&fm->ht, h); (e = dt_htab_at(&fm->ht, j)) != DT_HTAB_NONE;
	     j = dt_htab_next(&fm->ht, j)) {
		const struct fmemo_ent *x = &fm->tab[e];
		if (x->pc == pcs[k] && x->proc == proc && x->how == how)
			return x->fid;
	}
	/* Every frame but the innermost is a return address: it follows a
	 * call, and after a call to a noreturn function it is already the
	 * next function's first byte.  Name pc - 1, as perf does; but show
	 * unnamed addresses as they are, not one byte off. */
	uint64_t pc = k && pcs[k] ? pcs[k] - 1 : pcs[k];
	const char *nm = fm->by_dso ? dtsym_dso(sym, pc, kernel, pid, ts)
				    : dtsym_name(sym, pc, kernel, pid, ts);
	const char *org = dtsym_origin(sym, pc, kernel, pid, ts);
	if (pc != pcs[k] && !fm->by_dso && (!strcmp(org, "unknown") || strstr(nm, "+0x"))) {
		nm = dtsym_name(sym, pcs[k], kernel, pid, ts);
		org = dtsym_origin(sym, pcs[k], kernel, pid, ts);
	}
	char sl[4200];
	if (fm->by_srcline && rpt_srcline_text(sym, pcs, k, kernel, pid, ts, sl, sizeof(sl)))
		nm = sl;
	int64_t fid = flame_intern(fl, nm, kind_of(org, kernel));
	if (fid < 0 || DT_GROW(fm->tab, fm->cap, fm->n, 1, 1024))
		return -1;
	fm->tab[fm->n] = (struct fmemo_ent){ pcs[k], proc, how, (uint32_t)fid };
	if (dt_htab_add(&fm->ht, h, (uint32_t)fm->n, fmemo_rehash, fm))
		return -1;
	fm->n++;
	return fid;
}

/* Append the named frames of stack id (outermost first) to buf. */
static int name_stack(struct flame *fl, struct dtsym *sym, struct fmemo *fm,
		      const struct dtcap_reader *r, uint32_t id, int kernel, uint32_t pid,
		      uint64_t ts, const struct dtcap_proc *proc, uint32_t *buf,
		      unsigned *nb, uint32_t trunc_id)
{
	unsigned n;
	int kflag, trunc;
	const uint64_t *pcs = dtcap_stack(r, id, &n, &kflag, &trunc);

	if (!pcs)
		return 0;	/* an unknown id: the writer's loss, name nothing */
	if (n > DTCAP_MAXFRAMES) {
		/* Not from a real recorder; keep the innermost frames. */
		n = DTCAP_MAXFRAMES;
		trunc = 1;
	}
	if (trunc)
		buf[(*nb)++] = trunc_id;
	unsigned inl0 = *nb + n;	/* inlined frames take the room beyond */
	for (unsigned k = n; k-- > 0;) {
		int64_t fid = name_frame(fl, sym, fm, pcs, k, kernel, pid, ts, proc);
		if (fid < 0)
			return -1;
		buf[(*nb)++] = (uint32_t)fid;
		if (!kernel && !fm->by_dso &&
		    rpt_inline_frames(fl, sym, pcs, k, pid, ts, fm->by_srcline, buf, nb,
				      RPT_INLINE_ROOM - (*nb + k - inl0)) < 0)
			return -1;
	}
	return 0;
}

uint8_t *rpt_sample_probes(const struct dtcap_reader *r, const struct flt_filter *filt,
			   const char *cmd, const char *path, char *probedesc, size_t pdlen)
{
	size_t np = dtcap_nprobes(r);
	uint8_t *want = calloc(dtcap_max_probe_id(r) + 1, 1);
	if (!want)
		return NULL;
	size_t nwanted = 0, ntimer = 0;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(r, i);
		if (pr && (pr->flags & DT_PF_TIMER))
			ntimer++;
	}
	probedesc[0] = 0;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(r, i);
		if (!pr)
			continue;
		int w = filt->probe_ok ? pr->id < filt->nprobe_ok && filt->probe_ok[pr->id]
			: ntimer ? !!(pr->flags & DT_PF_TIMER) : 1;
		if (w) {
			want[pr->id] = 1;
			size_t l = strlen(probedesc);
			if (nwanted < 4)
				snprintf(probedesc + l, pdlen - l, "%s%s", nwanted ? ", " : "",
					 pr->name);
			else if (nwanted == 4)
				snprintf(probedesc + l, pdlen - l, ", ...");
			nwanted++;
		}
	}
	if (!filt->probe_ok && !ntimer && np)
		rpt_err(cmd, "%s: no profile/interval probe recorded; "
			"counting the events of every probe (choose with --probe)", path);
	return want;
}

int rpt_flame_fold(const struct rpt_cap *c, struct flt_filter *filt,
		   const struct rpt_flame_opts *fo, struct flame *fl, int side, uint64_t *nsamples,
		   char *probedesc, size_t pdlen, volatile sig_atomic_t *cancel)
{
	char err[512];
	struct prof p = { 0 };
	struct dtsym *sym = c->sym, *own_sym = NULL;
	struct kmemo km = { 0 };
	struct umemo um = { 0 };
	struct pmemo pm = { 0 }, lm = { 0 };
	struct fmemo fm = { .by_dso = fo->by_dso, .by_srcline = fo->by_srcline };
	uint32_t *buf = NULL;
	const char *cmd = fo->cmd, *path = c->path;
	int ret = RPT_EXIT_ERROR;

	if (fo->mode != RPT_FLAME_SAMPLES)
		return rpt_offcpu_fold(c, filt, fo, fl, side, nsamples, probedesc, pdlen, cancel);
	p.r = c->r;
	if (flt_resolve(filt, p.r, err, sizeof(err))) {
		rpt_err(cmd, "%s: %s", path, err);
		goto out;
	}

	p.nwant = dtcap_max_probe_id(p.r) + 1;
	if (!(p.want = rpt_sample_probes(p.r, filt, cmd, path, probedesc, pdlen)))
		goto oom;

	if (build_psnaps(&p))
		goto oom;
	/* slots before the first block: prof_block prefetches into them */
	if (dt_htab_reserve(&p.ht, 4096, agg_rehash, &p))
		goto oom;
	/* Times matter only to choose between snapshots of a pid that exec'd
	 * (and to filters, which add the column themselves): with one
	 * snapshot per pid, time 0 finds it, and the column is not decoded.
	 * By blocks, only a block that straddles an exec reads it. */
	unsigned cols = DTCAP_COL_PROBE | DTCAP_COL_COMM | DTCAP_COL_KSTACK |
			DTCAP_COL_USTACK | DTCAP_COL_PID | (p.nps ? DTCAP_COL_TS : 0);
	const char *what = rpt_shell ? "dtsh: reading" : "dtreport: reading";
	struct dtsp_job job = { .part_new = prof_part_new, .part_free = prof_part_free,
				.merge = prof_merge };
	if (flt_active(filt))
		job.row = prof_part_row;
	else
		job.block = prof_part_block, cols = (cols & ~DTCAP_COL_TS) | DTCAP_COL_BYCTX;
	int sr = dtsp_scan(p.r, filt, cols, &job, &p, cancel, what, err, sizeof(err));
	if (p.oom)
		goto oom;
	if (sr) {
		rpt_err(cmd, "%s", err);
		goto out;
	}
	rpt_note_empty(cmd, path, p.samples, flt_active(filt));

	/* Second pass: name each distinct combination once. */
	if (!sym && !(sym = own_sym = dtsym_open(p.r)))
		goto oom;
	uint32_t nst = dtcap_nstacks(p.r);
	km.off = calloc((size_t)nst + 1, sizeof(uint32_t));
	km.len = calloc((size_t)nst + 1, sizeof(uint32_t));
	buf = malloc((2 * DTCAP_MAXFRAMES + RPT_INLINE_ROOM + 8) * sizeof(uint32_t));
	if (!km.off || !km.len || !buf)
		goto oom;
	int64_t trunc_id = flame_intern(fl, "[truncated]", FLAME_SPECIAL);
	int64_t sep_id = flame_intern(fl, "--", FLAME_SPECIAL);
	int64_t nocomm_id = flame_intern(fl, "[unknown]", FLAME_SPECIAL);
	int64_t nostack_id = flame_intern(fl, "[no stack]", FLAME_SPECIAL);
	if (trunc_id < 0 || sep_id < 0 || nocomm_id < 0 || nostack_id < 0)
		goto oom;
	for (size_t i = 0; i < p.n; i++) {
		const struct agg *a = &p.tab[i];
		unsigned nb = 0;
		if ((i & 255) == 0 && cancel && *cancel) {
			rpt_err(cmd, "interrupted");
			goto out;
		}
		const char *c = dtcap_comm(p.r, a->comm);
		/* Without the root, a comm is not interned: its name may be a
		 * frame's too ("main", an object by --by dso), and the first
		 * kind interned sticks. */
		int64_t cid = !fo->no_comm && c && c[0] ? flame_intern(fl, c, FLAME_SPECIAL)
			      : nocomm_id;
		if (cid < 0)
			goto oom;
		if (!fo->no_comm)
			buf[nb++] = (uint32_t)cid;
		unsigned ustart = nb;
		uint32_t ukey = UINT32_MAX;
		if (a->ustack && fo->only != RPT_ONLY_KERNEL) {
			uint64_t ts = p.ts[i];
			const struct dtcap_proc *proc = dtcap_proc_find(p.r, a->pid, ts);
			ukey = umemo_find(&um, a->ustack, proc);
			if (ukey == DT_HTAB_NONE) {
				if (name_stack(fl, sym, &fm, p.r, a->ustack, 0, a->pid, ts, proc,
					       buf, &nb, (uint32_t)trunc_id))
					goto oom;
				ukey = (uint32_t)um.n;
				if (umemo_add(&um, (struct umemo_ent){ proc, a->ustack,
								       (uint32_t)km.n,
								       nb - ustart }))
					goto oom;
				for (unsigned k = ustart; k < nb; k++)
					if (push_id(&km, buf[k]))
						goto oom;
			} else {
				const struct umemo_ent *e = &um.tab[ukey];
				memcpy(buf + nb, km.ids + e->off, e->len * sizeof(uint32_t));
				nb += e->len;
			}
		}
		unsigned uend = nb;
		if (a->kstack && a->kstack <= nst && fo->only != RPT_ONLY_USER) {
			if (!km.off[a->kstack]) {
				unsigned kn = 0;
				uint32_t kb[DTCAP_MAXFRAMES + 2];
				if (name_stack(fl, sym, &fm, p.r, a->kstack, 1, 0, 0, NULL, kb,
					       &kn, (uint32_t)trunc_id))
					goto oom;
				km.off[a->kstack] = (uint32_t)km.n + 1;
				km.len[a->kstack] = kn;
				for (unsigned k = 0; k < kn; k++)
					if (push_id(&km, kb[k]))
						goto oom;
			}
			if (nb > ustart && km.len[a->kstack])
				buf[nb++] = (uint32_t)sep_id;
			memcpy(buf + nb, km.ids + km.off[a->kstack] - 1,
			       km.len[a->kstack] * sizeof(uint32_t));
			nb += km.len[a->kstack];
		}
		/* A sample is counted even when nothing of it is left to name. */
		if (!nb)
			buf[nb++] = (uint32_t)nostack_id;
		if (fo->reverse)
			for (unsigned x = 0, y = nb - 1; x < y; x++, y--) {
				uint32_t t = buf[x];
				buf[x] = buf[y];
				buf[y] = t;
			}
		if (fo->reverse || uend == 0) {
			if (flame_add(fl, buf, nb, a->count, side))
				goto oom;
			continue;
		}
		/* the prefix buf[0..uend) is comm and user stack: its node is
		 * memoised, the rest added below it */
		uint32_t ckey = fo->no_comm ? UINT32_MAX : buf[0];
		uint32_t prefix = pmemo_find(&pm, ckey, ukey);
		if (!prefix) {
			/* node 0 is the root, for an empty prefix only */
			int64_t node = flame_node(fl, buf, uend);
			if (node < 0 || pmemo_add(&pm, ckey, ukey, (uint32_t)node))
				goto oom;
			prefix = (uint32_t)node;
		}
		/* and the leaf below that prefix for this kernel stack: aggs
		 * that differ only in pid or snapshot share it */
		uint32_t kkey = fo->only != RPT_ONLY_USER ? a->kstack : 0;
		uint32_t leaf = pmemo_find(&lm, prefix, kkey);
		if (leaf) {
			if (flame_add_at(fl, leaf, NULL, 0, a->count, side) < 0)
				goto oom;
			continue;
		}
		int64_t nl = flame_add_at(fl, prefix, buf + uend, nb - uend, a->count, side);
		if (nl < 0 || pmemo_add(&lm, prefix, kkey, (uint32_t)nl))
			goto oom;
	}
	*nsamples = p.samples;
	ret = 0;
	goto out;
oom:
	rpt_err(cmd, "%s: out of memory", path);
	ret = RPT_EXIT_ERROR;
out:
	free(buf);
	free(km.off);
	free(km.len);
	free(km.ids);
	dtsym_close(own_sym);
	for (size_t i = 0; i < p.nps; i++)
		free(p.ps[i].ts);
	free(p.ps);
	free(p.tab);
	dt_htab_free(&p.ht);
	free(p.ts);
	free(p.want);
	prof_scratch_free(&p);
	free(um.tab);
	dt_htab_free(&um.ht);
	free(pm.tab);
	dt_htab_free(&pm.ht);
	free(lm.tab);
	dt_htab_free(&lm.ht);
	free(fm.tab);
	dt_htab_free(&fm.ht);
	return ret;
}


void rpt_flame_opts_init(struct rpt_flame_opts *o, const char *cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->minwidth = 0.1;
	o->width = 1200;
}

void rpt_flame_subtitle(char *buf, size_t len, const struct rpt_flame_opts *o, int ncaps,
			const char *path, uint64_t n, const char *probes, int filtered)
{
	if (ncaps > 1)
		snprintf(buf, len, "%d captures: %" PRIu64 " %s of %s%s", ncaps, n,
			 o->countname ? o->countname : "samples", probes[0] ? probes : "no probe",
			 filtered ? " (filtered)" : "");
	else
		snprintf(buf, len, "%s: %" PRIu64 " %s of %s%s", path, n,
			 o->countname ? o->countname : "samples", probes[0] ? probes : "no probe",
			 filtered ? " (filtered)" : "");
}

int rpt_flame_write(const struct flame *fl, const struct rpt_flame_opts *fo, const char *sub,
		    int diff, FILE *out)
{
	const char *title = fo->title ? fo->title : diff ? "Differential Flame Graph" :
			    fo->inverted ? "Icicle Graph" : "Flame Graph";
	struct flame_svg_opts so = {
		.title = title,
		.subtitle = sub, .width = fo->width ? fo->width : 1200, .minwidth = fo->minwidth,
		.inverted = fo->inverted, .diff = diff,
		.countname = fo->countname ? fo->countname : "samples",
		.frameheight = fo->height, .fontsize = fo->fontsize, .colors = fo->colors,
	};
	errno = 0;
	return fo->folded ? flame_write_folded(fl, out, diff) : flame_write_svg(fl, out, &so);
}

int rpt_flame(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_flame_opts *o,
	      FILE *out, const char *outname, volatile sig_atomic_t *cancel)
{
	char probes[256], sub[400];
	uint64_t n = 0;
	struct flame *fl = flame_new();
	int ret;

	if (!fl) {
		rpt_err(o->cmd, "out of memory");
		return RPT_EXIT_ERROR;
	}
	if ((ret = rpt_flame_fold(c, f, o, fl, 0, &n, probes, sizeof(probes), cancel)) == 0) {
		rpt_flame_subtitle(sub, sizeof(sub), o, 1, c->path, n, probes, flt_active(f));
		if (rpt_flame_write(fl, o, sub, 0, out)) {
			rpt_err(o->cmd, "%s: %s", outname, errno ? strerror(errno) : "write error");
			ret = RPT_EXIT_ERROR;
		} else if (cancel && *cancel) {
			/* while the graph was written: the caller drops the file */
			rpt_err(o->cmd, "interrupted");
			ret = RPT_EXIT_ERROR;
		}
	}
	flame_free(fl);
	return ret;
}
