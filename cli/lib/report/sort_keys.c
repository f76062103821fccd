/*
 * sort_keys.c - the sort of the analyses' models (engine.h rpt_key_sort):
 * millions of events put in time order, which qsort of the events
 * themselves did at a tenth of the speed (moving 40-byte rows, a call per
 * comparison).  An LSD radix sort of (key, index) pairs, 16 bits a pass,
 * passes where every key has the same digit skipped; stable.  And the
 * grouping of the latency and syscall tables: by key through a hash (the
 * groups are few), then each group's values sorted, the groups shared out
 * to the scan pool's threads (par_run.h): a group is sorted by one of
 * them whole, so the order is the same for any number.
 */
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "par_run.h"
#include "scan_pool.h"

/*
 * The same sort on P parts for large n: each pass counts each part's
 * share of the digits, places part k's items of a digit after those of
 * parts before it, and each part moves its own.  Stable like the one-part
 * sort, so the order is the same for any P.
 */
struct psort {
	struct rpt_key	*a, *b;		/* from, to: each part moves its own items */
	size_t		n;		/* [I] */
	unsigned	np, sh;		/* [I] parts, the pass's shift */
	size_t		*cnt;		/* by part: 65536 counts, then places */
};

static void
psort_count(void *ctx, unsigned k)
{
	struct psort *ps = ctx;
	size_t *c = ps->cnt + (size_t)k * 65536, lo = ps->n * k / ps->np, hi = ps->n * (k + 1) / ps->np;

	memset(c, 0, 65536 * sizeof(*c));
	for (size_t i = lo; i < hi; i++)
		c[(ps->a[i].k >> ps->sh) & 0xffff]++;
}

static void
psort_move(void *ctx, unsigned k)
{
	struct psort *ps = ctx;
	size_t *c = ps->cnt + (size_t)k * 65536, lo = ps->n * k / ps->np, hi = ps->n * (k + 1) / ps->np;

	for (size_t i = lo; i < hi; i++)
		ps->b[c[(ps->a[i].k >> ps->sh) & 0xffff]++] = ps->a[i];
}

static int
key_sort_par(struct rpt_key *v, size_t n, unsigned np, uint64_t diff)
{
	struct psort ps = { .a = v, .n = n, .np = np };

	if ((ps.b = malloc(n * sizeof(*ps.b))) == NULL)
		return -1;
	if ((ps.cnt = malloc((size_t)np * 65536 * sizeof(*ps.cnt))) == NULL) {
		free(ps.b);
		return -1;
	}
	for (ps.sh = 0; ps.sh < 64; ps.sh += 16) {
		if (((diff >> ps.sh) & 0xffff) == 0)
			continue;	/* the same digit everywhere */
		rpt_par_run(np, psort_count, &ps);
		size_t s = 0;
		for (size_t d = 0; d < 65536; d++)
			for (unsigned k = 0; k < np; k++) {
				size_t c = ps.cnt[(size_t)k * 65536 + d];
				ps.cnt[(size_t)k * 65536 + d] = s;
				s += c;
			}
		rpt_par_run(np, psort_move, &ps);
		struct rpt_key *t = ps.a;
		ps.a = ps.b;
		ps.b = t;
	}
	if (ps.a != v) {
		memcpy(v, ps.a, n * sizeof(*v));
		ps.b = ps.a;
	}
	free(ps.b);
	free(ps.cnt);
	return 0;
}

int
rpt_key_sort(struct rpt_key *v, size_t n)
{
	struct rpt_key *tmp, *a = v, *b;
	uint64_t or = 0, and = UINT64_MAX;
	size_t *cnt;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		or |= v[i].k;
		and &= v[i].k;
	}
	/* a part for every 2^20 items: below that the counts' table
	 * (65536 a part) and the threads cost more than they save */
	unsigned np = dtsp_threads();
	if (np > n >> 20)
		np = (unsigned)(n >> 20);
	if (np > 1)
		return key_sort_par(v, n, np, or ^ and);
	if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
		return -1;
	if ((cnt = malloc(65536 * sizeof(*cnt))) == NULL) {
		free(tmp);
		return -1;
	}
	b = tmp;
	for (unsigned sh = 0; sh < 64; sh += 16) {
		if ((((or ^ and) >> sh) & 0xffff) == 0)
			continue;	/* the same digit everywhere */
		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(a[i].k >> sh) & 0xffff]++;
		size_t s = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];
			cnt[d] = s;
			s += c;
		}
		for (size_t i = 0; i < n; i++)
			b[cnt[(a[i].k >> sh) & 0xffff]++] = a[i];
		struct rpt_key *t = a;
		a = b;
		b = t;
	}
	if (a != v)
		memcpy(v, a, n * sizeof(*v));
	free(tmp);
	free(cnt);
	return 0;
}

/* ---- grouping (rpt_group_by) */

struct gmap {
	uint64_t	*key;
	uint32_t	*count;
	size_t		n;
	uint32_t	cap, ccap;
	struct dt_htab	ix;
};

static uint64_t
gmap_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct gmap *)ctx)->key[e]);
}

static int
by_u64(const void *a, const void *b)
{
	uint64_t x = **(const uint64_t *const *)a, y = **(const uint64_t *const *)b;
	return x < y ? -1 : x > y;
}

/* The groups' sorts, shared out by their items: part k sorts the groups
 * whose first item lies in its k-th of them. */
struct gsort {
	struct rpt_groups *g;		/* idx: each part writes its groups' only */
	const uint64_t	*val;		/* [I] */
	size_t		n;		/* [I] items */
	unsigned	nw;		/* [I] */
	int		*ret;		/* by part: -1 out of memory */
};

static void
gsort_part(void *ctx, unsigned k)
{
	struct gsort *gs = ctx;
	struct rpt_groups *g = gs->g;
	size_t lo = gs->n * k / gs->nw, hi = gs->n * (k + 1) / gs->nw, maxg = 0, r0, r1;
	struct rpt_key *tmp;

	/* its groups: those starting in [lo, hi) */
	for (r0 = 0; r0 < g->n && g->start[r0] < lo; r0++)
		;
	for (r1 = r0; r1 < g->n && g->start[r1] < hi; r1++)
		if (g->start[r1 + 1] - g->start[r1] > maxg)
			maxg = g->start[r1 + 1] - g->start[r1];
	if (r0 == r1)
		return;
	if ((tmp = malloc((maxg + 1) * sizeof(*tmp))) == NULL) {
		gs->ret[k] = -1;
		return;
	}
	for (size_t r = r0; r < r1; r++) {
		size_t a = g->start[r], m = g->start[r + 1] - a;
		for (size_t j = 0; j < m; j++)
			tmp[j] = (struct rpt_key){ gs->val[g->idx[a + j]], g->idx[a + j] };
		if (rpt_key_sort(tmp, m)) {
			gs->ret[k] = -1;
			break;
		}
		for (size_t j = 0; j < m; j++)
			g->idx[a + j] = (uint32_t)tmp[j].i;
	}
	free(tmp);
}

int
rpt_group_by(const uint64_t *key, const uint64_t *val, size_t n, struct rpt_groups *g)
{
	struct gmap m = { 0 };
	uint32_t *gid = NULL, *rank = NULL;
	const uint64_t **order = NULL;
	size_t *pos = NULL;
	int rc = -1, *pret = NULL;

	memset(g, 0, sizeof(*g));
	if ((gid = malloc((n + 1) * sizeof(*gid))) == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = dt_htab_hash_int(key[i]);
		uint32_t e;
		size_t j;
		for (j = dt_htab_first(&m.ix, h); (e = dt_htab_at(&m.ix, j)) != DT_HTAB_NONE;
		     j = dt_htab_next(&m.ix, j))
			if (m.key[e] == key[i])
				break;
		if (e == DT_HTAB_NONE) {
			size_t c2 = m.cap;
			if (DT_GROW(m.key, c2, m.n, 1, 64) || DT_GROW(m.count, m.ccap, m.n, 1, 64))
				goto out;
			m.cap = (uint32_t)c2;
			m.key[m.n] = key[i];
			m.count[m.n] = 0;
			if (dt_htab_add(&m.ix, h, (uint32_t)m.n, gmap_rehash, &m))
				goto out;
			e = (uint32_t)m.n++;
		}
		m.count[e]++;
		gid[i] = e;
	}
	/* groups in key order */
	g->n = m.n;
	if (!(order = malloc((m.n + 1) * sizeof(*order))) || !(rank = malloc((m.n + 1) * sizeof(*rank))) ||
	    !(g->key = malloc((m.n + 1) * sizeof(*g->key))) ||
	    !(g->start = malloc((m.n + 1) * sizeof(*g->start))) ||
	    !(pos = malloc((m.n + 1) * sizeof(*pos))) || !(g->idx = malloc((n + 1) * sizeof(*g->idx))))
		goto out;
	for (size_t e = 0; e < m.n; e++)
		order[e] = &m.key[e];
	qsort(order, m.n, sizeof(*order), by_u64);
	size_t s = 0;
	for (size_t r = 0; r < m.n; r++) {
		size_t e = (size_t)(order[r] - m.key);
		rank[e] = (uint32_t)r;
		g->key[r] = m.key[e];
		g->start[r] = pos[r] = s;
		s += m.count[e];
	}
	g->start[m.n] = n;
	for (size_t i = 0; i < n; i++)
		g->idx[pos[rank[gid[i]]]++] = (uint32_t)i;
	/* each group by value; a part for every 64k items at most */
	struct gsort gs = { .g = g, .val = val, .n = n, .nw = dtsp_threads() };
	if (gs.nw > 1 + n / 65536)
		gs.nw = (unsigned)(1 + n / 65536);
	if ((pret = calloc(gs.nw, sizeof(*pret))) == NULL)
		goto out;
	gs.ret = pret;
	rpt_par_run(gs.nw, gsort_part, &gs);
	for (unsigned k = 0; k < gs.nw; k++)
		if (pret[k])
			goto out;
	rc = 0;
out:
	if (rc)
		rpt_groups_free(g);
	free(m.key);
	free(m.count);
	dt_htab_free(&m.ix);
	free(gid);
	free(rank);
	free(order);
	free(pos);
	free(pret);
	return rc;
}

void
rpt_groups_free(struct rpt_groups *g)
{
	free(g->key);
	free(g->start);
	free(g->idx);
	memset(g, 0, sizeof(*g));
}
