/*
 * pqgen.c - drive formats/parquet/parquet.c directly with the values a trace rarely
 * has: integer extremes, deltas that wrap around 2^64, whole row groups of
 * NULL, one-value dictionaries, multi-byte UTF-8, quotes and newlines, long
 * strings, empty strings, a file without rows; and mostly-zero columns put
 * through pq_put_scatter64 (kept sparse), alone and mixed with plain puts
 * in one row group.  Writes OUT.parquet and the
 * rows it was given as CSV (the format of hyp.mjs and duck.mjs: header,
 * NULL as an empty field, quotes only when needed) so independent readers
 * can be compared with what went in.
 *
 * usage: pqgen OUT.parquet OUT.csv ROWS ROWGROUP
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet.h"
#include "../xorshift.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
	return xorshift64(&rng);
}

static void csv_str(FILE *f, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: pqgen OUT.parquet OUT.csv ROWS ROWGROUP\n");
		return 2;
	}
	long rows = atol(argv[3]);
	static const struct pq_column cols[] = {
		{ "i32", PQ_INT32, 1 },		/* extremes, NULL every 7th */
		{ "wrap", PQ_INT64, 0 },	/* rising by up to 2^60: wraps */
		{ "rnd", PQ_INT64, 0 },		/* 64 random bits */
		{ "few", PQ_INT64, 0 },		/* 3 values far apart */
		{ "one", PQ_INT32, 0 },		/* a single value */
		{ "s", PQ_STRING, 1 },		/* mixed, NULLs */
		{ "nulls", PQ_STRING, 1 },	/* NULL in whole row groups */
		{ "e", PQ_STRING, 0 },		/* always "": a dictionary of no bytes */
		{ "big", PQ_STRING, 0 },	/* long and unique now and then */
		{ "sp", PQ_INT64, 1 },		/* scattered: 0 but every 9th */
		{ "spr", PQ_INT64, 0 },		/* scattered, random: no dictionary */
		{ "mix", PQ_INT64, 0 },		/* scattered and plain puts in turn */
	};
	enum { NCOLS = sizeof(cols) / sizeof(cols[0]) };
	struct pq_opts o = { .rowgroup_rows = (uint32_t)atol(argv[4]) };
	char *err = NULL;
	struct pq_writer *w = pq_create(argv[1], cols, NCOLS, &o, &err);
	FILE *csv = fopen(argv[2], "w");
	if (w == NULL || csv == NULL) {
		fprintf(stderr, "pqgen: %s\n", err ? err : "cannot create the CSV");
		return 1;
	}
	fputs("i32,wrap,rnd,few,one,s,nulls,e,big,sp,spr,mix\n", csv);
	static const int64_t spv[] = { 5, -7, INT64_MAX, 0, INT64_MIN };
	static const int32_t ext32[] = { INT32_MIN, -1, 0, 1, INT32_MAX };
	static const int64_t few[] = { INT64_MIN, 0, INT64_MAX };
	static const char *strs[] = { "plain", "with,comma", "with \"quote\"", "two\nlines",
				      "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "x" };
	uint64_t wrap = (uint64_t)INT64_MAX - 1000000;
	char big[12000];
	for (long i = 0; i < rows; i++) {
		int null32 = i % 7 == 3;
		int32_t v32 = i % 11 < 5 ? ext32[i % 5] : (int32_t)(uint32_t)next();
		wrap += next() >> 4;
		int64_t rnd = (int64_t)next();
		int64_t f = few[(next() >> 20) % 3];
		const char *s = i % 13 == 0 ? NULL : strs[(next() >> 9) % 6];
		/* NULL for the first two row groups' worth of rows, then "n" */
		const char *nl = i < 2 * (long)o.rowgroup_rows ? NULL : (i % 2 ? "n" : NULL);
		size_t bl = i % 5000 == 0 ? 10000 : (size_t)(i % 17);
		for (size_t k = 0; k < bl; k++)
			big[k] = (char)('a' + (i + k) % 26);
		big[bl] = 0;
		if (pq_put_i64(w, 0, v32, null32) < 0 ||
		    pq_put_int(w, 1, &wrap, 8, 1, NULL, 1) < 0 ||
		    pq_put_i64(w, 2, rnd, 0) < 0 || pq_put_i64(w, 3, f, 0) < 0 ||
		    pq_put_i64(w, 4, -42, 0) < 0 ||
		    pq_put_str(w, 5, s, s ? strlen(s) : 0) < 0 ||
		    pq_put_str(w, 6, nl, nl ? 1 : 0) < 0 ||
		    pq_put_str(w, 7, "", 0) < 0 ||
		    pq_put_str(w, 8, big, bl) < 0) {
			fprintf(stderr, "pqgen: %s\n", pq_error(w));
			return 1;
		}
		/* one row per call: m is 0 or 1, the row 0 of the call */
		uint64_t sp = i % 9 == 0 ? (uint64_t)spv[(i / 9) % 5] : 0;
		uint64_t spr = i % 3 == 0 ? next() : 0;
		uint64_t mix = i % 4 == 0 ? (uint64_t)i * 1000003 : 0;
		uint32_t row0 = 0;
		int rc = pq_put_scatter64(w, 9, 1, &row0, &sp, sp != 0) < 0 ||
			 pq_put_scatter64(w, 10, 1, &row0, &spr, spr != 0) < 0;
		if ((i / 5) % 2 == 0)
			rc |= pq_put_scatter64(w, 11, 1, &row0, &mix, mix != 0) < 0;
		else
			rc |= pq_put_i64(w, 11, (int64_t)mix, 0) < 0;
		if (rc || pq_rows_done(w) < 0) {
			fprintf(stderr, "pqgen: %s\n", pq_error(w));
			return 1;
		}
		if (!null32)
			fprintf(csv, "%" PRId32, v32);
		fprintf(csv, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",-42,", (int64_t)wrap, rnd, f);
		csv_str(csv, s);
		fputc(',', csv);
		csv_str(csv, nl);
		fputs(",,", csv);
		csv_str(csv, big);
		fprintf(csv, ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n", (int64_t)sp, (int64_t)spr,
			(int64_t)mix);
	}
	if (fclose(csv) != 0 || pq_close(w, &err) < 0) {
		fprintf(stderr, "pqgen: %s\n", err ? err : "writing the CSV");
		return 1;
	}
	/* misuse is refused: an existing file, wrong types, uneven columns */
	if (pq_create(argv[1], cols, NCOLS, &o, &err) != NULL) {
		fprintf(stderr, "pqgen: an existing file was opened for writing\n");
		return 1;
	}
	free(err);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.misuse", argv[1]);
	struct pq_writer *m = pq_create(tmp, cols, NCOLS, &o, NULL);
	if (m == NULL || pq_put_i64(m, 5, 1, 0) == 0) {
		fprintf(stderr, "pqgen: an integer into a string column was accepted\n");
		return 1;
	}
	pq_abort(m);
	remove(tmp);
	m = pq_create(tmp, cols, NCOLS, &o, NULL);
	if (m == NULL || pq_put_i64(m, 1, 1, 0) < 0 || pq_rows_done(m) == 0 ||
	    pq_put_i64(m, 4, 0, 1) == 0) {
		fprintf(stderr, "pqgen: uneven columns or a NULL in a required column accepted\n");
		return 1;
	}
	pq_abort(m);
	remove(tmp);
	/* scattered rows must rise and fit the call; INT64 columns only */
	m = pq_create(tmp, cols, NCOLS, &o, NULL);
	uint32_t badrows[] = { 3, 1 };
	uint64_t two[] = { 1, 2 };
	if (m == NULL || pq_put_scatter64(m, 9, 4, badrows, two, 2) == 0) {
		fprintf(stderr, "pqgen: scattered rows out of order accepted\n");
		return 1;
	}
	pq_abort(m);
	remove(tmp);
	m = pq_create(tmp, cols, NCOLS, &o, NULL);
	if (m == NULL || pq_put_scatter64(m, 9, 2, (uint32_t[]){ 2 }, two, 1) == 0) {
		fprintf(stderr, "pqgen: a scattered row past the call's rows accepted\n");
		return 1;
	}
	pq_abort(m);
	remove(tmp);
	m = pq_create(tmp, cols, NCOLS, &o, NULL);
	if (m == NULL || pq_put_scatter64(m, 0, 1, badrows, two, 0) == 0) {
		fprintf(stderr, "pqgen: a scatter into an INT32 column accepted\n");
		return 1;
	}
	pq_abort(m);
	remove(tmp);
	return 0;
}
