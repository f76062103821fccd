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

/* One context's share of the block, for sorting by a key. */
struct bs_ent {
	uint32_t	key, comm;
	uint32_t	last;		/* its last row: a pid's latest name */
	uint32_t	n;
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

/* (key, sum of n) of sorted v, ascending keys. */
static void put_sums(struct dtc_buf *out, struct bs_ent *v, uint32_t n)
{
	uint32_t groups = 0;
	for (uint32_t i = 0; i < n; i++)
		groups += i == 0 || v[i].key != v[i - 1].key;
	dtc_buf_uv(out, groups);
	for (uint32_t i = 0; i < n;) {
		uint64_t s = 0;
		uint32_t j = i;
		for (; j < n && v[j].key == v[i].key; j++)
			s += v[j].n;
		dtc_buf_uv(out, v[i].key);
		dtc_buf_uv(out, s);
		i = j;
	}
}

int dtc_bsum_build(struct dtc_buf *out, uint64_t evnt_off, uint32_t rows, const uint32_t *cpu,
		   const uint32_t *idx, uint32_t nd, const uint32_t *pid, const uint32_t *probe,
		   const uint32_t *comm)
{
	struct bs_ent *v = malloc((nd ? nd : 1) * sizeof(*v));
	uint32_t *c = malloc((rows ? rows : 1) * sizeof(*c));
	if (!v || !c) {
		free(v);
		free(c);
		return -1;
	}
	for (uint32_t d = 0; d < nd; d++)
		v[d] = (struct bs_ent){ 0, comm[d], 0, 0 };
	for (uint32_t i = 0; i < rows; i++) {
		v[idx[i]].n++;
		v[idx[i]].last = i;
	}
	out->len = 0;
	dtc_buf_u64(out, evnt_off);
	dtc_buf_uv(out, rows);
	for (uint32_t d = 0; d < nd; d++)
		v[d].key = probe[d];
	qsort(v, nd, sizeof(*v), ent_cmp);
	put_sums(out, v, nd);
	/* CPUs are per row: sorted copies, counted in runs */
	memcpy(c, cpu, rows * sizeof(*c));
	qsort(c, rows, sizeof(*c), u32_cmp);
	uint32_t runs = 0;
	for (uint32_t i = 0; i < rows; i++)
		runs += i == 0 || c[i] != c[i - 1];
	dtc_buf_uv(out, runs);
	for (uint32_t i = 0; i < rows;) {
		uint32_t j = i;
		while (j < rows && c[j] == c[i])
			j++;
		dtc_buf_uv(out, c[i]);
		dtc_buf_uv(out, j - i);
		i = j;
	}
	for (uint32_t d = 0; d < nd; d++)
		v[d].key = v[d].comm;
	qsort(v, nd, sizeof(*v), ent_cmp);
	put_sums(out, v, nd);
	/* pids, each with the comm of its latest row that has one (the
	 * sorts shuffled the entries: rebuilt by context) */
	for (uint32_t d = 0; d < nd; d++)
		v[d] = (struct bs_ent){ pid[d], comm[d], 0, 0 };
	for (uint32_t i = 0; i < rows; i++) {
		v[idx[i]].n++;
		v[idx[i]].last = i;
	}
	qsort(v, nd, sizeof(*v), ent_cmp);
	uint32_t groups = 0;
	for (uint32_t i = 0; i < nd; i++)
		groups += i == 0 || v[i].key != v[i - 1].key;
	dtc_buf_uv(out, groups);
	for (uint32_t i = 0; i < nd;) {
		uint64_t s = 0;
		uint32_t j = i, name = 0, at = 0;
		int named = 0;
		for (; j < nd && v[j].key == v[i].key; j++) {
			s += v[j].n;
			if (v[j].comm && (!named || v[j].last > at))
				name = v[j].comm, at = v[j].last, named = 1;
		}
		dtc_buf_uv(out, v[i].key);
		dtc_buf_uv(out, s);
		dtc_buf_uv(out, name);
		i = j;
	}
	free(v);
	free(c);
	return out->err ? -1 : 0;
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
