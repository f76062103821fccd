/*
 * dtcap_bsum.c - block summaries (BSUM chunks, FORMAT.md): what an event
 * block holds by probe, CPU, comm and pid, built by the writer from the
 * block's contexts as it encodes them, and parsed and checked by the
 * reader, so whole-capture counts (dtreport stats) need no column decoded.
 */
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"
#include "dtcap_int.h"

/* One key's share of the block: its events, and for a pid the comm of its
 * latest row that has one (last: that row). */
struct bs_ent {
	uint32_t	key, comm;
	uint32_t	last;
	uint32_t	n;
	uint32_t	at;		/* its hash slot, emptied after the list */
};

static int ent_cmp(const void *a, const void *b)
{
	const struct bs_ent *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static uint32_t bs_hash(uint32_t k)
{
	return (k * 0x9e3779b1u) ^ (k >> 16);
}

/*
 * The contexts' counts (sc->cnt, sc->last by context) gathered by key[]
 * into sc->v, ascending by key, and written as (key, events[, comm]).
 * A context's comm names its pid only if the context has one and its last
 * row is the pid's latest such row.  Hashing keys, then sorting the few
 * distinct ones: a block has thousands of contexts but tens of probes.
 */
static void put_groups(struct dtc_buf *out, struct dtc_bsum_scratch *sc, const uint32_t *key,
		       uint32_t nd, const uint32_t *comm, int with_comm)
{
	uint32_t m = 0, mask = sc->nslot - 1;
	for (uint32_t d = 0; d < nd; d++) {
		if (!sc->cnt[d])
			continue;
		uint32_t k = key[d], j = bs_hash(k) & mask, e;
		while ((e = sc->slot[j]) && sc->v[e - 1].key != k)
			j = (j + 1) & mask;
		if (!e) {
			sc->v[m] = (struct bs_ent){ k, 0, 0, 0, j };
			sc->slot[j] = e = ++m;
		}
		struct bs_ent *x = &sc->v[e - 1];
		x->n += sc->cnt[d];
		if (with_comm && comm[d] && (!x->comm || sc->last[d] > x->last))
			x->comm = comm[d], x->last = sc->last[d];
	}
	/* empty the slots used: the next list starts from a clean table */
	for (uint32_t i = 0; i < m; i++)
		sc->slot[sc->v[i].at] = 0;
	qsort(sc->v, m, sizeof(*sc->v), ent_cmp);
	dtc_buf_uv(out, m);
	for (uint32_t i = 0; i < m; i++) {
		dtc_buf_uv(out, sc->v[i].key);
		dtc_buf_uv(out, sc->v[i].n);
		if (with_comm)
			dtc_buf_uv(out, sc->v[i].comm);
	}
}

int dtc_bsum_build(struct dtc_buf *out, uint64_t evnt_off, uint32_t rows, const uint32_t *cpu,
		   const uint32_t *idx, uint32_t nd, const uint32_t *pid, const uint32_t *probe,
		   const uint32_t *comm, struct dtc_bsum_scratch *sc)
{
	if (!sc->cpucnt && !(sc->cpucnt = calloc(DTCAP_MAXCPUS, sizeof(*sc->cpucnt))))
		return -1;
	if (sc->cap < nd) {
		uint32_t cap = nd > 64 ? nd : 64, ns = 128;
		while (ns < 2 * cap)
			ns *= 2;
		free(sc->v);
		free(sc->cnt);
		free(sc->last);
		free(sc->slot);
		sc->v = malloc(cap * sizeof(*sc->v));
		sc->cnt = malloc(cap * sizeof(*sc->cnt));
		sc->last = malloc(cap * sizeof(*sc->last));
		sc->slot = calloc(ns, sizeof(*sc->slot));
		sc->cap = sc->v && sc->cnt && sc->last && sc->slot ? cap : 0;
		sc->nslot = ns;
		if (!sc->cap)
			return -1;
	}
	memset(sc->cnt, 0, nd * sizeof(*sc->cnt));
	for (uint32_t i = 0; i < rows; i++) {
		sc->cnt[idx[i]]++;
		sc->last[idx[i]] = i;
	}
	out->len = 0;
	dtc_buf_u64(out, evnt_off);
	dtc_buf_uv(out, rows);
	put_groups(out, sc, probe, nd, NULL, 0);
	/* CPUs are per row: counted in a table by CPU (zero between blocks),
	 * the few seen then sorted */
	uint32_t *cc = sc->cpucnt, seen[64], nseen = 0, maxc = 0;
	int many = 0;
	for (uint32_t i = 0; i < rows; i++) {
		uint32_t x = cpu[i];
		if (!cc[x]++) {
			if (nseen < 64)
				seen[nseen] = x;
			else
				many = 1;
			nseen++;
		}
		maxc = x > maxc ? x : maxc;
	}
	dtc_buf_uv(out, nseen);
	if (!many) {
		qsort(seen, nseen, sizeof(*seen), u32_cmp);
		for (uint32_t k = 0; k < nseen; k++) {
			dtc_buf_uv(out, seen[k]);
			dtc_buf_uv(out, cc[seen[k]]);
			cc[seen[k]] = 0;
		}
	} else {
		for (uint32_t x = 0; x <= maxc; x++)
			if (cc[x]) {
				dtc_buf_uv(out, x);
				dtc_buf_uv(out, cc[x]);
				cc[x] = 0;
			}
	}
	put_groups(out, sc, comm, nd, NULL, 0);
	put_groups(out, sc, pid, nd, comm, 1);
	return out->err ? -1 : 0;
}

void dtc_bsum_scratch_free(struct dtc_bsum_scratch *sc)
{
	free(sc->cpucnt);
	free(sc->v);
	free(sc->cnt);
	free(sc->last);
	free(sc->slot);
	memset(sc, 0, sizeof(*sc));
}

/*
 * One list of a summary: n entries of width values (key, events[, comm]),
 * keys strictly ascending and below klim, events >= 1 summing to rows,
 * comms <= ncomms, into out (width values each).  0, or -1 when it does
 * not parse or does not add up.
 */
static int get_list(struct dtc_cur *cu, uint32_t rows, unsigned width, uint64_t klim,
		    uint64_t kmin, uint64_t kmax, uint32_t ncomms, uint64_t *out, uint32_t *n)
{
	uint64_t cnt = dtc_get_uv(cu), sum = 0, prev = 0;
	if (cu->err || cnt > rows)
		return -1;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t k = dtc_get_uv(cu), e = dtc_get_uv(cu);
		uint64_t nm = width == 3 ? dtc_get_uv(cu) : 0;
		if (cu->err || k >= klim || k < kmin || k > kmax || (i && k <= prev) || e == 0 ||
		    e > rows - sum || nm > ncomms)
			return -1;
		sum += e;
		prev = k;
		out[i * width] = k;
		out[i * width + 1] = e;
		if (width == 3)
			out[i * width + 2] = nm;
	}
	if (sum != rows)
		return -1;
	*n = (uint32_t)cnt;
	return 0;
}

int dtc_bsum_parse(struct dtc_cur *cu, uint32_t rows, uint32_t pid_min, uint32_t pid_max,
		   uint32_t ncomms, uint64_t *vals, uint32_t n[4])
{
	/* lists in payload order: probes, CPUs, comms (pairs), pids (triples);
	 * vals holds at most (2 + 2 + 2 + 3) * rows values */
	uint64_t *p = vals;
	if (dtc_get_uv(cu) != rows || cu->err)
		return -1;
	if (get_list(cu, rows, 2, DTCAP_MAXPROBEID, 0, UINT64_MAX, 0, p, &n[0]))
		return -1;
	p += 2 * (size_t)n[0];
	if (get_list(cu, rows, 2, DTCAP_MAXCPUS, 0, UINT64_MAX, 0, p, &n[1]))
		return -1;
	p += 2 * (size_t)n[1];
	if (get_list(cu, rows, 2, (uint64_t)ncomms + 1, 0, UINT64_MAX, 0, p, &n[2]))
		return -1;
	p += 2 * (size_t)n[2];
	if (get_list(cu, rows, 3, (uint64_t)UINT32_MAX + 1, pid_min, pid_max, ncomms, p, &n[3]))
		return -1;
	return 0;
}
