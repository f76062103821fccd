/*
 * pooltsan.c - the scan pool under ThreadSanitizer: counts per probe,
 * per CPU and per comm of a capture taken on N workers (by rows through a
 * filter, and by whole blocks) must equal one dtcap_iter walk's, and TSan
 * must find no race between workers sharing one reader.
 * usage: pooltsan CAPTURE THREADS
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"
#include "filter.h"
#include "scan_pool.h"

#define NK	(3 * 4096)

struct part {
	uint64_t	n[NK];
	uint64_t	rows;
};

static void *part_new(void *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct part));
}

static void part_free(void *ctx, void *part)
{
	(void)ctx;
	free(part);
}

static void count(struct part *p, uint32_t probe, uint32_t cpu, uint32_t comm)
{
	p->n[probe % 4096]++;
	p->n[4096 + cpu % 4096]++;
	p->n[8192 + comm % 4096]++;
	p->rows++;
}

static int by_row(void *part, const struct dtcap_block *b, uint32_t i, char *err, size_t len)
{
	(void)err, (void)len;
	count(part, b->probe[i], b->cpu[i], b->comm[i]);
	return 0;
}

static int by_block(void *part, const struct dtcap_block *b, size_t blk, char *err, size_t len)
{
	(void)blk, (void)err, (void)len;
	for (uint32_t i = 0; i < b->rows; i++)
		count(part, b->probe[i], b->cpu[i], b->comm[i]);
	return 0;
}

static int merge(void *ctx, void *part)
{
	struct part *m = ctx;
	const struct part *p = part;
	for (size_t k = 0; k < NK; k++)
		m->n[k] += p->n[k];
	m->rows += p->rows;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: pooltsan CAPTURE THREADS\n");
		return 2;
	}
	struct dtcap_reader *r = dtcap_open(argv[1]);
	if (!r) {
		printf("FAIL tsan-open: %s\n", dtcap_open_error());
		return 0;
	}
	static struct part ref, got;
	struct dtcap_iter *it = dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL);
	struct dtcap_event e;
	int rc;
	while ((rc = dtcap_iter_next(it, &e)) == 1)
		count(&ref, e.probe, e.cpu, e.comm);
	dtcap_iter_free(it);
	if (rc < 0 || !ref.rows) {
		printf("FAIL tsan-ref: no reference counts\n");
		return 0;
	}
	unsigned n;
	if (dtsp_parse_threads(argv[2], &n))
		return 2;
	dtsp_set_threads(n);
	struct flt_filter f;
	char err[512];
	flt_init(&f);
	flt_resolve(&f, r, err, sizeof(err));
	struct dtsp_job job = { .part_new = part_new, .part_free = part_free, .block = by_block,
				.merge = merge };
	if (dtsp_scan(r, &f, DTCAP_COL_PROBE | DTCAP_COL_CPU | DTCAP_COL_COMM, &job, &got, NULL,
		      NULL, err, sizeof(err)))
		printf("FAIL tsan-blocks-%u: %s\n", n, err);
	else if (memcmp(&got, &ref, sizeof(ref)))
		printf("FAIL tsan-blocks-%u: counts differ from one walk's\n", n);
	else
		printf("PASS tsan-blocks-%u\n", n);
	/* by rows, through a filter that passes every row: the row path */
	flt_free(&f);
	flt_init(&f);
	if (flt_option(&f, FLT_OPT_SINCE, "0", err, sizeof(err)) != 1 ||
	    flt_resolve(&f, r, err, sizeof(err))) {
		printf("FAIL tsan-rows-%u: filter: %s\n", n, err);
	} else {
		memset(&got, 0, sizeof(got));
		job = (struct dtsp_job){ .part_new = part_new, .part_free = part_free,
					 .row = by_row, .merge = merge };
		if (dtsp_scan(r, &f, DTCAP_COL_PROBE | DTCAP_COL_CPU | DTCAP_COL_COMM, &job,
			      &got, NULL, NULL, err, sizeof(err)))
			printf("FAIL tsan-rows-%u: %s\n", n, err);
		else if (memcmp(&got, &ref, sizeof(ref)))
			printf("FAIL tsan-rows-%u: counts differ from one walk's\n", n);
		else
			printf("PASS tsan-rows-%u\n", n);
	}
	flt_free(&f);
	/* decoding ahead: every block, in order, the same counts */
	memset(&got, 0, sizeof(got));
	struct dtsp_ahead *a = dtsp_ahead_new(r, NULL, DTCAP_COL_PROBE | DTCAP_COL_CPU |
					      DTCAP_COL_COMM, NULL, NULL, err, sizeof(err));
	const struct dtcap_block *b;
	size_t blk, want = 0;
	int got_one = 0, inorder = 1;
	while (a && (got_one = dtsp_ahead_next(a, &b, &blk, err, sizeof(err))) == 1) {
		inorder &= blk == want++;
		by_block(&got, b, blk, err, sizeof(err));
	}
	if (!a || got_one < 0)
		printf("FAIL tsan-ahead-%u: %s\n", n, err);
	else if (!inorder || want != dtcap_nblocks(r) || memcmp(&got, &ref, sizeof(ref)))
		printf("FAIL tsan-ahead-%u: blocks out of order or counts differ\n", n);
	else
		printf("PASS tsan-ahead-%u\n", n);
	dtsp_ahead_free(a);
	/* stopped midway: the helpers end, nothing leaks or races */
	a = dtsp_ahead_new(r, NULL, DTCAP_COL_PROBE, NULL, NULL, err, sizeof(err));
	if (a && dtsp_ahead_next(a, &b, &blk, err, sizeof(err)) == 1)
		printf("PASS tsan-ahead-stop-%u\n", n);
	else
		printf("FAIL tsan-ahead-stop-%u: %s\n", n, err);
	dtsp_ahead_free(a);
	/* the caller's cancel flag, set midway: the next call says so */
	volatile sig_atomic_t cancel = 0;
	a = dtsp_ahead_new(r, NULL, DTCAP_COL_PROBE, &cancel, NULL, err, sizeof(err));
	int k1 = a ? dtsp_ahead_next(a, &b, &blk, err, sizeof(err)) : -1;
	cancel = 1;
	int k2 = a ? dtsp_ahead_next(a, &b, &blk, err, sizeof(err)) : -1;
	if (k1 == 1 && k2 == FLT_SCAN_CANCELLED && !strcmp(err, "interrupted"))
		printf("PASS tsan-ahead-cancel-%u\n", n);
	else
		printf("FAIL tsan-ahead-cancel-%u: %d then %d: %s\n", n, k1, k2, err);
	dtsp_ahead_free(a);
	/* a filter: the blocks it skips are not given, the rest in order */
	size_t nb = dtcap_nblocks(r), mid = nb / 2, given = 0, expect = 0;
	char until[64];
	snprintf(until, sizeof(until), "@%" PRIu64 "ns",
		 nb ? dtcap_block_info(r, mid)->tmax : 0);
	flt_init(&f);
	int bad = flt_option(&f, FLT_OPT_UNTIL, until, err, sizeof(err)) != 1 ||
		  flt_resolve(&f, r, err, sizeof(err));
	for (size_t i = 0; i < nb && !bad; i++)
		expect += !flt_block_skip(&f, dtcap_block_info(r, i));
	a = bad ? NULL : dtsp_ahead_new(r, &f, DTCAP_COL_PROBE, NULL, NULL, err, sizeof(err));
	inorder = 1;
	size_t last = 0;
	while (a && (got_one = dtsp_ahead_next(a, &b, &blk, err, sizeof(err))) == 1) {
		inorder &= !flt_block_skip(&f, dtcap_block_info(r, blk)) && (given == 0 || blk > last);
		last = blk;
		given++;
	}
	if (!a || got_one < 0)
		printf("FAIL tsan-ahead-filter-%u: %s\n", n, err);
	else if (!inorder || given != expect || expect == 0 || expect == nb)
		printf("FAIL tsan-ahead-filter-%u: %zu of %zu blocks given, %zu expected\n", n,
		       given, nb, expect);
	else
		printf("PASS tsan-ahead-filter-%u\n", n);
	dtsp_ahead_free(a);
	flt_free(&f);
	dtcap_reader_close(r);
	return 0;
}
