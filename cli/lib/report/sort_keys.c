/*
 * sort_keys.c - the sort of the analyses' models (engine.h rpt_key_sort):
 * millions of events put in time order, which qsort of the events
 * themselves did at a tenth of the speed (moving 40-byte rows, a call per
 * comparison).  An LSD radix sort of (key, index) pairs, 16 bits a pass,
 * passes where every key has the same digit skipped; stable.  And the
 * grouping of the latency and syscall tables: by key through a hash (the
 * groups are few), then each group's values sorted.
 */
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"

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

int
rpt_group_by(const uint64_t *key, const uint64_t *val, size_t n, struct rpt_groups *g)
{
	struct gmap m = { 0 };
	uint32_t *gid = NULL, *rank = NULL;
	const uint64_t **order = NULL;
	size_t *pos = NULL, maxg = 0;
	struct rpt_key *tmp = NULL;
	int rc = -1;

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
		if (m.count[e] > maxg)
			maxg = m.count[e];
	}
	g->start[m.n] = n;
	for (size_t i = 0; i < n; i++)
		g->idx[pos[rank[gid[i]]]++] = (uint32_t)i;
	/* each group by value */
	if ((tmp = malloc((maxg + 1) * sizeof(*tmp))) == NULL)
		goto out;
	for (size_t r = 0; r < m.n; r++) {
		size_t a = g->start[r], k = g->start[r + 1] - a;
		for (size_t j = 0; j < k; j++)
			tmp[j] = (struct rpt_key){ val[g->idx[a + j]], g->idx[a + j] };
		if (rpt_key_sort(tmp, k))
			goto out;
		for (size_t j = 0; j < k; j++)
			g->idx[a + j] = (uint32_t)tmp[j].i;
	}
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
	free(tmp);
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
