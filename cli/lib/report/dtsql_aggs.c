/*
 * dtsql_aggs.c - the aggregates SQLite lacks (quantiles, median) and the
 * weighted twins of sum/total/avg/quantiles that dtsql_groupby.c puts in
 * place of the user's when it reads events_grouped, whose rows each stand
 * for _dt_rows events of one value.
 *
 * Quantiles, as DuckDB 1.5 computes them (checked against it): the n
 * non-NULL values sorted, q in [0, 1]; quantile_disc is the value at
 * 0-based position max(0, ceil(q * n) - 1) (the first value whose
 * cumulative share reaches q; q * n in double precision, as there),
 * quantile_cont interpolates linearly between the values at positions
 * floor and ceil of q * (n - 1) (a REAL), median(x) is quantile_cont(x,
 * 0.5).  Values must be numbers (text is refused with an error, NULLs are
 * skipped); no value: NULL.  The plain forms keep every value (memory grows
 * with the rows: they are the slow path's); the weighted forms keep one
 * entry per distinct (value, weight) row, so memory follows the groups.
 *
 * The weighted sums are exact (128-bit) so that they give what SQLite 3.40's
 * row-by-row sum gives, for the columns dtsql_groupby lets them see
 * (non-negative 32-bit integers, so every partial sum lies between 0 and
 * the total whatever the order of the rows): sum() the integer, or the
 * error "integer overflow" when the total passes 2^63 - 1 as SQLite's
 * sum() raises it then; total() and avg() the REAL of the exact sum,
 * which is what SQLite's double accumulation gives as long as the total
 * stays within 2^53 (every partial sum exact).  Above 2^53 SQLite's own
 * result depends on the order of the rows; doc/SQL.md says so.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dtsql_int.h"

/* ------------------------------------------------------------ sums */

/* sqlite's aggregate context is 8-aligned: no __int128 member, the sums
 * are kept in two words each */
struct wsum {
	uint64_t		pos[2], neg[2];	/* magnitudes of the two signs: lo, hi */
	uint64_t		cnt;		/* non-NULL rows weighted */
	int			real;		/* a non-integer was seen */
	double			rsum;		/* then their double sum */
};

static void add128(uint64_t *s, unsigned __int128 x)
{
	unsigned __int128 v = ((unsigned __int128)s[1] << 64 | s[0]) + x;
	s[0] = (uint64_t)v;
	s[1] = (uint64_t)(v >> 64);
}

static unsigned __int128 get128(const uint64_t *s)
{
	return (unsigned __int128)s[1] << 64 | s[0];
}

/* args: value, weight (1 when absent: the plain form). */
static void wsum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct wsum *s = sqlite3_aggregate_context(ctx, sizeof(*s));
	if (s == NULL)
		return;
	int t = sqlite3_value_numeric_type(argv[0]);
	if (t == SQLITE_NULL)
		return;
	int64_t w = argc > 1 ? sqlite3_value_int64(argv[1]) : 1;
	if (w <= 0) {
		sqlite3_result_error(ctx, "dt weighted aggregate: weight not positive", -1);
		return;
	}
	s->cnt += (uint64_t)w;
	if (t != SQLITE_INTEGER) {
		s->real = 1;
		s->rsum += sqlite3_value_double(argv[0]) * (double)w;
		return;
	}
	int64_t v = sqlite3_value_int64(argv[0]);
	if (v >= 0)
		add128(s->pos, (unsigned __int128)(uint64_t)v * (uint64_t)w);
	else
		add128(s->neg, (unsigned __int128)(0 - (uint64_t)v) * (uint64_t)w);
}

enum { WS_SUM, WS_TOTAL, WS_AVG };

static void wsum_final(sqlite3_context *ctx, int kind)
{
	struct wsum *s = sqlite3_aggregate_context(ctx, 0);
	if (s == NULL || s->cnt == 0) {
		if (kind == WS_TOTAL)
			sqlite3_result_double(ctx, 0.0);
		return;		/* NULL */
	}
	const unsigned __int128 pos = get128(s->pos), neg = get128(s->neg);
	if (s->real) {
		/* events_grouped's columns are integers: not reached through
		 * the rewrite, and no claim of equality is made for it */
		double r = s->rsum + (double)pos - (double)neg;
		sqlite3_result_double(ctx, kind == WS_AVG ? r / (double)s->cnt : r);
		return;
	}
	const unsigned __int128 max = INT64_MAX;
	if (kind == WS_SUM) {
		/* past these a partial sum overflowed in any order (one sign:
		 * what the rewrite sees) */
		if (pos > max || neg > max + 1) {
			sqlite3_result_error(ctx, "integer overflow", -1);
			return;
		}
		sqlite3_result_int64(ctx, (int64_t)((uint64_t)pos - (uint64_t)neg));
		return;
	}
	double r = pos >= neg ? (double)(pos - neg) : -(double)(neg - pos);
	sqlite3_result_double(ctx, kind == WS_AVG ? r / (double)s->cnt : r);
}

static void fin_sum(sqlite3_context *ctx) { wsum_final(ctx, WS_SUM); }
static void fin_total(sqlite3_context *ctx) { wsum_final(ctx, WS_TOTAL); }
static void fin_avg(sqlite3_context *ctx) { wsum_final(ctx, WS_AVG); }

/* ------------------------------------------------------- quantiles */

struct qent {
	long double	key;		/* exact for every int64 and double */
	int64_t		i;
	double		d;
	int		isint;
	uint64_t	w;
};

struct qstate {
	struct qent	*e;
	size_t		n, cap;
	uint64_t	total;
	double		q;
	int		qset, failed;
};

static int qent_cmp(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->isint < y->isint) - (x->isint > y->isint);	/* integers first */
}

/* args: value, q (absent: 0.5, median), weight (absent: 1). */
static void q_step_any(sqlite3_context *ctx, sqlite3_value *val, sqlite3_value *qv,
		       sqlite3_value *wv)
{
	struct qstate *s = sqlite3_aggregate_context(ctx, sizeof(*s));
	if (s == NULL || s->failed)
		return;
	double q = 0.5;
	if (qv) {
		int qt = sqlite3_value_numeric_type(qv);
		q = sqlite3_value_double(qv);
		if ((qt != SQLITE_INTEGER && qt != SQLITE_FLOAT) || !(q >= 0.0 && q <= 1.0)) {
			s->failed = 1;
			sqlite3_result_error(ctx, "quantile: the fraction must be a number from 0 to 1",
					     -1);
			return;
		}
	}
	if (s->qset && q != s->q) {
		s->failed = 1;
		sqlite3_result_error(ctx, "quantile: the fraction must be the same for every row", -1);
		return;
	}
	s->q = q;
	s->qset = 1;
	int t = sqlite3_value_numeric_type(val);
	if (t == SQLITE_NULL)
		return;
	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) {
		s->failed = 1;
		sqlite3_result_error(ctx, "quantile: the values must be numbers", -1);
		return;
	}
	int64_t w = wv ? sqlite3_value_int64(wv) : 1;
	if (w <= 0) {
		s->failed = 1;
		sqlite3_result_error(ctx, "dt weighted aggregate: weight not positive", -1);
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		/* malloc: long double wants 16-byte alignment, more than
		 * sqlite's allocator promises */
		struct qent *e = cap < SIZE_MAX / sizeof(*e) ? realloc(s->e, cap * sizeof(*e)) : NULL;
		if (e == NULL) {
			s->failed = 1;
			sqlite3_result_error_nomem(ctx);
			return;
		}
		s->e = e;
		s->cap = cap;
	}
	struct qent *e = &s->e[s->n++];
	e->isint = t == SQLITE_INTEGER;
	e->i = sqlite3_value_int64(val);
	e->d = sqlite3_value_double(val);
	e->key = e->isint ? (long double)e->i : (long double)e->d;
	e->w = (uint64_t)w;
	s->total += (uint64_t)w;
}

static void qdisc_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	q_step_any(ctx, argv[0], argv[1], argc > 2 ? argv[2] : NULL);
}

static void median_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	q_step_any(ctx, argv[0], NULL, argc > 1 ? argv[1] : NULL);
}

/* The entry holding 0-based position k of the sorted values. */
static const struct qent *q_at(const struct qstate *s, uint64_t k)
{
	uint64_t c = 0;
	for (size_t i = 0; i < s->n; i++) {
		c += s->e[i].w;
		if (k < c)
			return &s->e[i];
	}
	return &s->e[s->n - 1];
}

static void q_final(sqlite3_context *ctx, int cont)
{
	struct qstate *s = sqlite3_aggregate_context(ctx, 0);
	if (s == NULL)
		return;
	if (s->failed || s->total == 0) {
		free(s->e);
		s->e = NULL;
		return;		/* the error was set by the step; or NULL */
	}
	qsort(s->e, s->n, sizeof(*s->e), qent_cmp);
	long double rn = (long double)s->q * (long double)(s->total - 1);
	uint64_t lo = (uint64_t)floorl(rn), hi = (uint64_t)ceill(rn);
	if (!cont) {
		double c = ceil(s->q * (double)s->total);
		const struct qent *a = q_at(s, c >= 1 ? (uint64_t)c - 1 : 0);
		if (a->isint)
			sqlite3_result_int64(ctx, a->i);
		else
			sqlite3_result_double(ctx, a->d);
	} else {
		const struct qent *a = q_at(s, lo), *b = q_at(s, hi);
		double x = a->isint ? (double)a->i : a->d, y = b->isint ? (double)b->i : b->d;
		double f = (double)(rn - (long double)lo);
		sqlite3_result_double(ctx, lo == hi ? x : x + (y - x) * f);
	}
	free(s->e);
	s->e = NULL;
}

static void fin_qdisc(sqlite3_context *ctx) { q_final(ctx, 0); }
static void fin_qcont(sqlite3_context *ctx) { q_final(ctx, 1); }

int dtsql_agg_functions(sqlite3 *db)
{
	static const struct {
		const char *name;
		int nargs;
		void (*step)(sqlite3_context *, int, sqlite3_value **);
		void (*fin)(sqlite3_context *);
	} f[] = {
		{ "quantile_disc", 2, qdisc_step, fin_qdisc },
		{ "quantile_cont", 2, qdisc_step, fin_qcont },
		{ "median", 1, median_step, fin_qcont },
		{ DT_WQDISC, 3, qdisc_step, fin_qdisc },
		{ DT_WQCONT, 3, qdisc_step, fin_qcont },
		{ DT_WMEDIAN, 2, median_step, fin_qcont },
		{ DT_WSUM, 2, wsum_step, fin_sum },
		{ DT_WTOTAL, 2, wsum_step, fin_total },
		{ DT_WAVG, 2, wsum_step, fin_avg },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (sqlite3_create_function_v2(db, f[i].name, f[i].nargs,
					       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
					       NULL, NULL, f[i].step, f[i].fin, NULL) != SQLITE_OK)
			return -1;
	return 0;
}
