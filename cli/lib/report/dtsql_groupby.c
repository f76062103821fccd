/*
 * dtsql_groupby.c - the GROUP BY fast path of dtsql_exec.  See dtsql_int.h.
 *
 * SQLite steps through a virtual table one row at a time, a few dozen
 * nanoseconds a row whatever the table does, so a GROUP BY over tens of
 * millions of events spends its time in sqlite's loop.  A statement that
 * only groups and counts needs one row per distinct key with its event
 * count: events_grouped (dtsql_gscan.c) computes those in C, and this file
 * rewrites the statement to read it, when the result is provably the same.
 *
 * The rewrite is textual and only of one shape, checked token by token:
 *
 *	SELECT items FROM events [WHERE w] [GROUP BY c1, ...] [HAVING h]
 *	       [ORDER BY o] [LIMIT n [OFFSET m]]
 *
 * with c1... columns (by name, or the position or alias of a result column
 * that is a column: the same grouping), an aggregate among the items when
 * there is no GROUP BY (then one group of all), no subquery, join, window,
 * compound or parameter anywhere, and only the functions named below.  It
 * becomes
 *
 *	SELECT items' FROM (SELECT cols, _dt_rows FROM main.events_grouped)
 *	       AS events [WHERE w'] [GROUP BY ...] (the rest as written)
 *
 * where cols are every events column the text names.  Why it is the same:
 * every row of a group of events_grouped stands for _dt_rows events that
 * agree on every column the statement can see, so w (deterministic
 * functions only) keeps or drops all of them alike, and the groups of the
 * GROUP BY are the same sets of events.  In items', HAVING and ORDER BY
 * each aggregate becomes one of the same value over weighted rows:
 *	count(*), count()	-> coalesce(sum(_dt_rows), 0)
 *	count(x)		-> coalesce(sum(CASE WHEN (x) IS NULL THEN 0
 *				   ELSE _dt_rows END), 0)
 *	    (coalesce: with no GROUP BY and no rows, count() is 0, sum() NULL)
 *	count(DISTINCT x): unchanged (duplicates do not change it)
 *	min(c), max(c), min/max(DISTINCT c), c a column: unchanged (the
 *	    values of a column that compare equal are the same, so neither
 *	    duplicates nor the order of rows change them)
 * and any other aggregate (sum, avg, group_concat...: their result depends
 * on the order or the count of the rows they add) leaves the statement
 * alone.  Outside aggregates only GROUP BY columns may be named (the value
 * of another column would be that of an arbitrary event).  Each item that
 * changed gets "AS" its original column name.
 *
 * ts would make every event a group of its own, so it may only appear in
 * top-level conjuncts of w that compare it with integer literals ("ts >=
 * 5", "ts BETWEEN 1 AND 9", "9 > events.ts"): in w' those become "1" and
 * their range goes to events_grouped (WHERE _dt_ts_lo = .. AND _dt_ts_hi =
 * .. in the subquery), which counts only the events in it, comparing ts as
 * SQL sees it (signed 64 bits), exactly as the conjuncts would have.
 *
 * Then it is checked, not trusted: the original must read nothing but the
 * capture's events table (sqlite's authorizer: main.events, or through the
 * TEMP view of dtsql_attach_many, whose text must be exactly the UNION ALL
 * that function writes), the rewrite nothing but events_grouped, and the
 * two must have the same column names.  Anything else, any failure, and
 * the statement runs as written.  The authorizer of db is used and cleared
 * (dtsql does not use it elsewhere).
 *
 * DT_SQL_NO_GROUPED in the environment turns the fast path off, so that
 * tests compare both paths.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "dtsql_int.h"
#include "dtsql_tokens.h"

/* The column bit of an events column name (any case), 0 if none.  Bits
 * from E_NCOLS on: capture and host, the columns of several captures. */
#define COL_CAPTURE	(1ull << E_NCOLS)
#define COL_HOST	(1ull << (E_NCOLS + 1))

static const char *const col_name[E_NCOLS] = {
#define DTSQL_EVCOL(id, name, type, cols, pqt, pqopt) [E_##id] = #name,
#include "dtsql_events.def"
#undef DTSQL_EVCOL
};

static uint64_t col_bit(const struct tok *t)
{
	char buf[32];
	if (t->other)
		return 0;
	const char *s = dtsql_id_name(t, buf, sizeof(buf));
	if (s == NULL)
		return 0;
	for (int i = 0; i < E_NCOLS; i++)
		if (strcasecmp(s, col_name[i]) == 0)
			return 1ull << i;
	if (strcasecmp(s, "capture") == 0)
		return COL_CAPTURE;
	if (strcasecmp(s, "host") == 0)
		return COL_HOST;
	return 0;
}

/* Words that make any statement something other than the one shape. */
static int is_forbidden(const struct tok *t)
{
	static const char *const w[] = {
		"SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT",
		"WINDOW", "OVER", "FILTER", "UNION", "INTERSECT", "EXCEPT", "JOIN",
		"VALUES", "WITH", "EXISTS", "RAISE", "NATURAL", "USING", "ON",
		"INDEXED", "RECURSIVE", "MATERIALIZED", "CURRENT_TIME",
		"CURRENT_DATE", "CURRENT_TIMESTAMP", "ROWID", "OID", "_ROWID_",
	};
	if (is_kw_of(t, w, sizeof(w) / sizeof(w[0])))
		return 1;
	char buf[16];
	const char *s = dtsql_id_name(t, buf, sizeof(buf));
	return s && strcasecmp(s, E_ROWS_NAME) == 0;
}

/* Words after which '(' opens a plain parenthesis, not a call. */
static int is_paren_kw(const struct tok *t)
{
	static const char *const w[] = {
		"IN", "AND", "OR", "NOT", "IS", "WHEN", "THEN", "ELSE", "CASE",
		"BETWEEN", "LIKE", "GLOB", "ESCAPE", "DISTINCT", "ISNULL", "NOTNULL",
	};
	return is_kw_of(t, w, sizeof(w) / sizeof(w[0]));
}

/* Deterministic scalar functions: same arguments, same value. */
static int is_scalar_fn(const struct tok *t)
{
	static const char *const f[] = {
		"abs", "coalesce", "ifnull", "iif", "nullif", "instr", "length",
		"lower", "upper", "ltrim", "rtrim", "trim", "substr", "substring",
		"replace", "hex", "printf", "format", "quote", "round", "typeof",
		"unicode", "char", "like", "glob", "cast", "min", "max",
	};
	return is_kw_of(t, f, sizeof(f) / sizeof(f[0]));
}

struct rw {
	const struct toks *v;
	const char	*sql;
	sqlite3_str	*out;
	const char	*copied;	/* sql copied to out up to here */
	uint64_t	keys;		/* GROUP BY columns */
	int		changed;	/* the current item was rewritten */
	int		naggs;		/* aggregates seen */
	/* the ts buckets "(ts - K) / W" of the statement, all of one K and
	 * W: token i of each and its number of tokens */
	size_t		bks[16], bkl[16];
	int		nbk;
	int64_t		bkoff, bkw;
	/* a join with one small table: the names of its columns that are
	 * GROUP BY keys, and the result columns' aliases */
	int		join;
	const struct tok *okey[16];
	int		nokey;
	const struct tok *alias[64];
	int		nalias;
};

/* t, a column of the joined table, is a GROUP BY key. */
static int is_okey(const struct rw *w, const struct tok *t)
{
	for (int k = 0; k < w->nokey; k++)
		if (w->okey[k]->n == t->n && strncasecmp(w->okey[k]->p, t->p, t->n) == 0 &&
		    w->okey[k]->kind == t->kind)
			return 1;
	return 0;
}

/* A bare word of a join's statement that is no column: SQL's, or a
 * result column's alias. */
static int join_word_ok(const struct rw *w, const struct tok *t)
{
	static const char *const kw[] = {
		"AND", "OR", "NOT", "IS", "NULL", "IN", "LIKE", "GLOB", "BETWEEN",
		"CASE", "WHEN", "THEN", "ELSE", "END", "AS", "ASC", "DESC", "COLLATE",
		"NOCASE", "BINARY", "RTRIM", "ESCAPE", "DISTINCT", "ISNULL", "NOTNULL",
		"INTEGER", "TEXT", "REAL", "NUMERIC", "BLOB", "NULLS", "FIRST", "LAST",
	};
	if (t->kind == K_ID && is_kw_of(t, kw, sizeof(kw) / sizeof(kw[0])))
		return 1;
	for (int k = 0; k < w->nalias; k++)
		if (w->alias[k]->n == t->n && strncasecmp(w->alias[k]->p, t->p, t->n) == 0)
			return 1;
	return 0;
}

/* The key bit of the ts bucket (events_grouped's _dt_bucket). */
#define COL_BUCKET	(1ull << (E_NCOLS + 2))

/* The tokens of the bucket starting at token i, 0 if none does. */
static size_t bucket_len(const struct rw *w, size_t i)
{
	for (int k = 0; k < w->nbk; k++)
		if (w->bks[k] == i)
			return w->bkl[k];
	return 0;
}

/* Copy sql up to p, then replacement text, and go on from q. */
static void edit(struct rw *w, const char *p, const char *q, const char *text)
{
	sqlite3_str_append(w->out, w->copied, (int)(p - w->copied));
	sqlite3_str_appendall(w->out, text);
	w->copied = q;
	w->changed = 1;
}

/* The token after the ')' closing the '(' at i, or SIZE_MAX. */
static size_t close_paren(const struct toks *v, size_t i, size_t end)
{
	int depth = 0;
	for (; i < end; i++) {
		if (is_op(&v->t[i], "("))
			depth++;
		else if (is_op(&v->t[i], ")") && --depth == 0)
			return i + 1;
	}
	return SIZE_MAX;
}

/* The first top-level comma within [a, b), or b. */
static size_t top_comma(const struct toks *v, size_t a, size_t b)
{
	int depth = 0;
	for (; a < b; a++) {
		if (is_op(&v->t[a], "("))
			depth++;
		else if (is_op(&v->t[a], ")"))
			depth--;
		else if (depth == 0 && is_op(&v->t[a], ","))
			break;
	}
	return a;
}

/* Top-level commas within [a, b). */
static int commas(const struct toks *v, size_t a, size_t b)
{
	int n = 0;
	for (size_t i = top_comma(v, a, b); i < b; i = top_comma(v, i + 1, b))
		n++;
	return n;
}

/* A column named at i ("comm", "events.comm"): its tokens, 0 if not. */
static size_t col_ref(const struct toks *v, size_t i, size_t b)
{
	char buf[16];
	if (i < b && col_bit(&v->t[i]))
		return 1;
	const char *s = i + 2 < b ? dtsql_id_name(&v->t[i], buf, sizeof(buf)) : NULL;
	if (s && strcasecmp(s, v->eva[0] ? v->eva : "events") == 0 && is_op(&v->t[i + 1], ".") &&
	    col_bit(&v->t[i + 2]))
		return 3;
	return 0;
}

/* The inside of an aggregate kept as written: scalar functions only. */
static int check_inner(const struct toks *v, size_t a, size_t b)
{
	for (size_t i = a; i + 1 < b; i++)
		if (is_op(&v->t[i + 1], "(") && (v->t[i].kind == K_QID ||
		    (v->t[i].kind == K_ID && !is_paren_kw(&v->t[i]) && !is_scalar_fn(&v->t[i]))))
			return -1;
	return 0;
}

/* The columns a weighted sum or quantile may read: integers from 0 to
 * 2^32 - 1 (dtsql_aggs.c: every partial sum then lies between 0 and the
 * total), whatever the order of the rows. */
#define WEIGHT_COLS	((1ull << E_CPU) | (1ull << E_PID) | (1ull << E_TID) |	\
			 (1ull << E_PROBE) | (1ull << E_KSTACK) |		\
			 (1ull << E_USTACK) | (1ull << E_FLAGS))

/* The aggregates of one column that have weighted forms (dtsql_aggs.c),
 * in the order of wname[]; -1 for any other word. */
static const char *const wfn[] = {
	"sum", "total", "avg", "quantile_disc", "quantile_cont", "median",
};
static const char *const wname[] = {
	DT_WSUM, DT_WTOTAL, DT_WAVG, DT_WQDISC, DT_WQCONT, DT_WMEDIAN,
};

static int weighted_kind(const struct tok *t)
{
	for (size_t i = 0; i < sizeof(wfn) / sizeof(wfn[0]); i++)
		if (is_kw(t, wfn[i]))
			return (int)i;
	return -1;
}

/* Rewrite the aggregate t( [x, y) ) ending before token e into its
 * weighted form: its first argument one column of WEIGHT_COLS, a
 * quantile's fraction one number literal.  -1: not that shape. */
static int weighted(struct rw *w, const struct tok *t, size_t x, size_t y, size_t e, int kind)
{
	const struct toks *v = w->v;
	size_t c = col_ref(v, x, y);
	/* a quantile's value may be retval too (signed: its order, not its
	 * sum, is used) */
	uint64_t ok = kind >= 3 ? WEIGHT_COLS | 1ull << E_RETVAL : WEIGHT_COLS;
	if (c == 0 || !(col_bit(&v->t[x + c - 1]) & ok))
		return -1;
	int quant = kind == 3 || kind == 4;
	if (quant ? !(x + c + 2 == y && is_op(&v->t[x + c], ",") && v->t[x + c + 1].kind == K_NUM)
		  : x + c != y)
		return -1;
	const char *from = v->t[x].p, *to = v->t[y - 1].p + v->t[y - 1].n;
	char *s = sqlite3_mprintf("%s(%.*s, " E_ROWS_NAME ")", wname[kind], (int)(to - from), from);
	if (s == NULL)
		return -1;
	edit(w, t->p, v->t[e - 1].p + 1, s);
	sqlite3_free(s);
	return 0;
}

/*
 * Rewrite the aggregates of the expression tokens [a, b) (an item, HAVING
 * or ORDER BY) and check that outside them only GROUP BY columns are
 * named.  where: a WHERE clause (no aggregates, any column).  -1: not the
 * shape.
 */
static int expr(struct rw *w, size_t a, size_t b, int where)
{
	const struct toks *v = w->v;
	for (size_t i = a; i < b; i++) {
		const struct tok *t = &v->t[i];
		size_t bl = bucket_len(w, i);
		if (bl && i + bl <= b) {
			/* a bucket outside aggregates is a key, as a column */
			if (!where && !(w->keys & COL_BUCKET))
				return -1;
			const struct tok *l = &v->t[i + bl - 1];
			edit(w, t->p, l->p + l->n, E_BUCKET_NAME);
			i += bl - 1;
			continue;
		}
		if (i + 1 < b && t->kind == K_QID && is_op(&v->t[i + 1], "("))
			return -1;	/* "f"(x): a call by a quoted name */
		if (t->other) {
			/* the joined table's: outside aggregates, a key */
			if (!where && !is_okey(w, t))
				return -1;
			continue;
		}
		if (w->join && (t->kind == K_ID || t->kind == K_QID) && !col_bit(t) &&
		    !(i + 1 < b && (is_op(&v->t[i + 1], "(") || is_op(&v->t[i + 1], "."))) &&
		    !(i > 0 && is_op(&v->t[i - 1], ".")) && !join_word_ok(w, t))
			return -1;	/* a column not qualified: whose? */
		if (i + 1 < b && t->kind == K_ID && !is_paren_kw(t) && is_op(&v->t[i + 1], "(")) {
			size_t e = close_paren(v, i + 1, b);	/* past ')' */
			if (e == SIZE_MAX)
				return -1;
			size_t x = i + 2, y = e - 1;		/* the arguments */
			int distinct = x < y && is_kw(&v->t[x], "DISTINCT");
			int agg1 = (is_kw(t, "min") || is_kw(t, "max")) && commas(v, x, y) == 0;
			if (!where && (is_kw(t, "count") || agg1))
				w->naggs++;
			if (!where && is_kw(t, "count")) {
				if (distinct) {
					if (check_inner(v, x + 1, y) < 0)
						return -1;
				} else if (x == y || (y == x + 1 && is_op(&v->t[x], "*"))) {
					edit(w, t->p, v->t[e - 1].p + 1,
				     "coalesce(sum(" E_ROWS_NAME "), 0)");
				} else {
					if (commas(v, x, y) || check_inner(v, x, y) < 0)
						return -1;
					const char *from = v->t[x].p;
					const char *to = v->t[y - 1].p + v->t[y - 1].n;
					char *s = sqlite3_mprintf("coalesce(sum(CASE WHEN (%.*s) IS NULL"
								  " THEN 0 ELSE " E_ROWS_NAME " END), 0)",
								  (int)(to - from), from);
					if (s == NULL)
						return -1;
					edit(w, t->p, v->t[e - 1].p + 1, s);
					sqlite3_free(s);
				}
				i = e - 1;
				continue;
			}
			int wk = where ? -1 : weighted_kind(t);
			if (wk >= 0) {
				if (weighted(w, t, x, y, e, wk) < 0)
					return -1;
				w->naggs++;
				i = e - 1;
				continue;
			}
			if (!where && agg1) {
				/* min, max: duplicates change nothing.  But of
				 * values equal yet unlike (1 and 1.0, 'A' and 'a'
				 * under NOCASE) they keep the first seen, and rows
				 * come in another order: a column only, whose
				 * equal values are the same */
				if (col_ref(v, x + distinct, y) != y - x - distinct)
					return -1;
				i = e - 1;
				continue;
			}
			if (!is_scalar_fn(t) || distinct)
				return -1;
			i++;	/* into the arguments, checked as the rest */
			continue;
		}
		if (is_kw(t, "DISTINCT"))
			return -1;
		uint64_t bit = col_bit(t);
		if (bit && !where && !(bit & w->keys))
			return -1;	/* a bare column not grouped by */
	}
	return 0;
}

/* An integer literal at i ("-5", "123": digits only) into *x: its tokens,
 * 0 if none there. */
static size_t int_lit(const struct toks *v, size_t i, size_t b, int64_t *x)
{
	int neg = 0;
	size_t n = 0;
	if (i < b && (is_op(&v->t[i], "-") || is_op(&v->t[i], "+"))) {
		neg = is_op(&v->t[i], "-");
		i++;
		n++;
	}
	if (i >= b || v->t[i].kind != K_NUM || v->t[i].n > 18)
		return 0;	/* 18 digits: no overflow */
	int64_t r = 0;
	for (size_t k = 0; k < v->t[i].n; k++) {
		if (!isdigit((unsigned char)v->t[i].p[k]))
			return 0;
		r = r * 10 + (v->t[i].p[k] - '0');
	}
	*x = neg ? -r : r;
	return n + 1;
}

/* "ts" or "events.ts" at i: its tokens, 0 if not. */
static size_t ts_ref(const struct toks *v, size_t i, size_t b)
{
	char buf[16];
	if (i < b && col_bit(&v->t[i]) == 1ull << E_TS)
		return 1;
	const char *s = i + 2 < b ? dtsql_id_name(&v->t[i], buf, sizeof(buf)) : NULL;
	if (s && strcasecmp(s, v->eva[0] ? v->eva : "events") == 0 && is_op(&v->t[i + 1], ".") &&
	    col_bit(&v->t[i + 2]) == 1ull << E_TS)
		return 3;
	return 0;
}

/*
 * "( ts - K ) / W" at token i (K an integer literal of up to 18 digits, so
 * |K| < 2^62; "ts + K" as offset -K; W one of digits, above 0): its tokens
 * and *k, *w, or 0.  Only where replacing it by one operand keeps the
 * parse: after a token that binds no tighter than '/' on its right ("(",
 * ",", "+", comparisons, clause and logic words), before one that binds no
 * tighter on its left (not "||", "->", COLLATE).
 */
static size_t bucket_at(const struct toks *v, size_t i, size_t b, int64_t *k, int64_t *w)
{
	static const char *const before_op[] = {
		"(", ",", "+", "=", "==", "!=", "<>", "<", "<=", ">", ">=",
	};
	static const char *const before_kw[] = {
		"SELECT", "BY", "WHERE", "HAVING", "AND", "OR", "WHEN", "THEN", "ELSE",
	};
	if (i == 0 || i >= b || !is_op(&v->t[i], "("))
		return 0;
	int ok = is_kw_of(&v->t[i - 1], before_kw, sizeof(before_kw) / sizeof(before_kw[0]));
	for (size_t q = 0; q < sizeof(before_op) / sizeof(before_op[0]); q++)
		ok |= is_op(&v->t[i - 1], before_op[q]);
	if (!ok)
		return 0;
	size_t j = i + 1, n = ts_ref(v, j, b);
	if (n == 0)
		return 0;
	j += n;
	if (j >= b || !(is_op(&v->t[j], "-") || is_op(&v->t[j], "+")))
		return 0;
	int minus = is_op(&v->t[j], "-");
	int64_t x, y;
	size_t m = int_lit(v, ++j, b, &x);
	if (m == 0)
		return 0;
	j += m;
	if (j + 2 >= b + 1 || !is_op(&v->t[j], ")") || !is_op(&v->t[j + 1], "/"))
		return 0;
	j += 2;
	if (j >= b || int_lit(v, j, b, &y) != 1 || y <= 0)
		return 0;
	j++;
	if (j < b && (is_op(&v->t[j], "||") || is_op(&v->t[j], "->") ||
		      is_op(&v->t[j], "->>") || is_kw(&v->t[j], "COLLATE")))
		return 0;
	*k = minus ? x : -x;
	*w = y;
	return j - i;
}

/* [lo, hi] narrowed by "ts OP x". */
static int ts_apply(const struct tok *op, int64_t x, int flip, int64_t *lo, int64_t *hi)
{
	static const char *const ops[] = { "=", "==", "<", "<=", ">", ">=" };
	int k = 0;
	while (k < 6 && !is_op(op, ops[k]))
		k++;
	if (k == 6)
		return -1;
	if (flip && k >= 2)	/* x < ts is ts > x */
		k = k < 4 ? k + 2 : k - 2;
	switch (k) {
	case 0: case 1:
		if (x > *lo) *lo = x;
		if (x < *hi) *hi = x;
		break;
	case 2:	/* ts < x: ts <= x - 1 */
		if (x == INT64_MIN) { *lo = 1; *hi = 0; break; }
		if (x - 1 < *hi) *hi = x - 1;
		break;
	case 3:
		if (x < *hi) *hi = x;
		break;
	case 4:
		if (x == INT64_MAX) { *lo = 1; *hi = 0; break; }
		if (x + 1 > *lo) *lo = x + 1;
		break;
	case 5:
		if (x > *lo) *lo = x;
		break;
	}
	return 0;
}

/*
 * A conjunct [a, b) of WHERE that names ts must be a range of integers:
 * "ts OP n", "n OP ts" (OP one of = == < <= > >=) or "ts BETWEEN n AND m";
 * then events_grouped applies it exactly (ts as SQL sees it, a signed
 * number) and it is not grouped by.  1: such a range, narrowing [*lo, *hi];
 * 0: names no ts; -1: names ts otherwise (no rewrite).
 */
static int ts_conj(const struct toks *v, size_t a, size_t b, int64_t *lo, int64_t *hi)
{
	int names = 0;
	for (size_t i = a; i < b; i++)
		names |= col_bit(&v->t[i]) == 1ull << E_TS;
	if (!names)
		return 0;
	int64_t x, y;
	size_t r = ts_ref(v, a, b), n, m;
	if (r && a + r < b) {
		size_t i = a + r;
		if ((n = int_lit(v, i + 1, b, &x)) && i + 1 + n == b)
			return ts_apply(&v->t[i], x, 0, lo, hi) < 0 ? -1 : 1;
		if (is_kw(&v->t[i], "BETWEEN") && (n = int_lit(v, i + 1, b, &x)) &&
		    i + 1 + n < b && is_kw(&v->t[i + 1 + n], "AND") &&
		    (m = int_lit(v, i + 2 + n, b, &y)) && i + 2 + n + m == b) {
			if (x > *lo) *lo = x;
			if (y < *hi) *hi = y;
			return 1;
		}
		return -1;
	}
	if ((n = int_lit(v, a, b, &x)) && a + n + 1 < b && (r = ts_ref(v, a + n + 1, b)) &&
	    a + n + 1 + r == b)
		return ts_apply(&v->t[a + n], x, 1, lo, hi) < 0 ? -1 : 1;
	return -1;
}

/*
 * The conjuncts of WHERE [a, b): split at its top-level ANDs (not those
 * of BETWEEN, or inside parentheses or CASE), unless it has a top-level
 * OR (which binds looser).  Their ends into end[], up to max; the count,
 * -1 when more.
 */
static int conjuncts(const struct toks *v, size_t a, size_t b, size_t *end, int max)
{
	int n = 0, depth = 0, between = 0, over = 0;
	for (size_t i = a; i < b; i++) {
		const struct tok *t = &v->t[i];
		if (is_op(t, "(") || is_kw(t, "CASE"))
			depth++;
		else if (is_op(t, ")") || is_kw(t, "END"))
			depth--;
		else if (depth == 0 && is_kw(t, "OR")) {
			end[0] = b;
			return 1;
		} else if (depth == 0 && is_kw(t, "BETWEEN"))
			between = 1;
		else if (depth == 0 && is_kw(t, "AND")) {
			if (between)
				between = 0;
			else if (n == max)
				over = 1;	/* still -1 only if no OR follows */
			else
				end[n++] = i;
		}
	}
	if (over || n == max)
		return -1;
	end[n++] = b;
	return n;
}

/*
 * The TEMP view events of dtsql_attach_many, exactly as written there:
 * "CREATE VIEW events AS SELECT *, 'C' AS capture, 'H' AS host FROM
 * main.events__cI" for I = 0, 1, ..., joined by " UNION ALL ".  Writes
 * the same union over events_grouped__cI, of cols, each with where, to
 * out.  -1: not that.
 */
static int many_view(sqlite3 *db, const char *cols, const char *where, sqlite3_str *out)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;
	if (sqlite3_prepare_v2(db, "SELECT sql FROM temp.sqlite_master WHERE type = 'view'"
			       " AND name = 'events'", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		goto out;
	const char *p = (const char *)sqlite3_column_text(st, 0);
	static const char head[] = "CREATE VIEW events AS ";
	if (p == NULL || strncmp(p, head, sizeof(head) - 1))
		goto out;
	p += sizeof(head) - 1;
	for (int i = 0;; i++) {
		const char *q[2];
		int qn[2];
		static const char sel[] = "SELECT *, ";
		if (strncmp(p, sel, sizeof(sel) - 1))
			goto out;
		p += sizeof(sel) - 1;
		for (int k = 0; k < 2; k++) {
			/* a %Q string: quotes doubled inside */
			q[k] = p;
			if (*p++ != '\'')
				goto out;
			for (;;) {
				if (*p == 0)
					goto out;
				if (p[0] == '\'' && p[1] == '\'') {
					p += 2;
					continue;
				}
				if (*p++ == '\'')
					break;
			}
			qn[k] = (int)(p - q[k]);
			static const char *const as[] = { " AS capture, ", " AS host FROM " };
			if (strncmp(p, as[k], strlen(as[k])))
				goto out;
			p += strlen(as[k]);
		}
		char want[64];
		snprintf(want, sizeof(want), "main.events__c%d", i);
		if (strncmp(p, want, strlen(want)))
			goto out;
		p += strlen(want);
		sqlite3_str_appendf(out, "%sSELECT %s" E_ROWS_NAME ", %.*s AS capture, %.*s AS host"
				    " FROM main." EVENTS_GROUPED "__c%d%s", i ? " UNION ALL " : "",
				    cols, qn[0], q[0], qn[1], q[1], i, where);
		if (*p == 0)
			break;
		static const char un[] = " UNION ALL ";
		if (strncmp(p, un, sizeof(un) - 1))
			goto out;
		p += sizeof(un) - 1;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* What a statement reads, as told by sqlite's authorizer. */
struct reads {
	const char	*table;		/* events or events_grouped */
	int		one, many, other;
	char		jt[64];		/* the one other table of main read */
	int		jtn;
};

static int on_auth(void *arg, int action, const char *a3, const char *a4, const char *a5,
		   const char *a6)
{
	(void)a4;
	struct reads *r = arg;
	size_t n = strlen(r->table);
	if (action == SQLITE_SELECT || action == SQLITE_FUNCTION)
		return SQLITE_OK;
	/* sqlite's own look at the schema when a table is first used; the
	 * shape checked in rewrite() names no other table */
	if (a3 && (strcmp(a3, "sqlite_master") == 0 || strcmp(a3, "sqlite_temp_master") == 0))
		return SQLITE_OK;
	/* a table named but none of its columns read (count(*)): where
	 * "events" leads is then told by the probe of dtsql_groupby */
	if (action == SQLITE_READ && a4 && a4[0] == 0)
		return SQLITE_OK;
	/* the TEMP view of several captures (its text is checked apart) */
	if (action == SQLITE_READ && a3 && a5 && a6 == NULL && strcmp(r->table, "events") == 0 &&
	    strcmp(a3, "events") == 0 && strcmp(a5, "temp") == 0) {
		r->many++;
		return SQLITE_OK;
	}
	if (action != SQLITE_READ || a3 == NULL || a5 == NULL || strcmp(a5, "main")) {
		r->other++;
		return SQLITE_OK;
	}
	if (a6 == NULL && strcmp(a3, r->table) == 0) {
		r->one++;
	} else if (a6 == NULL && strcmp(a3, "events") && strcmp(a3, EVENTS_GROUPED) &&
		   strncmp(a3, "events_", 7) && strlen(a3) < sizeof(r->jt) &&
		   (r->jt[0] == 0 || strcmp(r->jt, a3) == 0)) {
		strcpy(r->jt, a3);	/* a join's small table */
		r->jtn++;
	} else if (strncmp(a3, r->table, n) == 0 && strncmp(a3 + n, "__c", 3) == 0 &&
		   a3[n + 3] && strspn(a3 + n + 3, "0123456789") == strlen(a3 + n + 3) &&
		   (a6 == NULL ? strcmp(r->table, EVENTS_GROUPED) == 0
			       : strcmp(a6, "events") == 0 && strcmp(r->table, "events") == 0)) {
		r->many++;
	} else {
		r->other++;
	}
	return SQLITE_OK;
}

static sqlite3_stmt *prepare_reading(sqlite3 *db, const char *sql, struct reads *r)
{
	sqlite3_stmt *st = NULL;
	sqlite3_set_authorizer(db, on_auth, r);
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	/* the user's connection keeps its guard (dtsql_guard.c) */
	dtsql_guard_restore(db);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/* A real table or view named events or events_grouped in main (it would
 * stand for the capture's). */
static int main_shadowed(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int n = 1;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_master WHERE name"
			       " IN ('events', '" EVENTS_GROUPED "') COLLATE NOCASE", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n != 0;
}

/* The clause starting at token i: the index of its first token past the
 * keyword(s), or 0 if t[i] starts none of the wanted one. */
static size_t clause(const struct toks *v, size_t i, const char *kw)
{
	if (i >= v->n || !is_kw(&v->t[i], kw))
		return 0;
	if (!strcmp(kw, "GROUP") || !strcmp(kw, "ORDER"))
		return i + 1 < v->n && is_kw(&v->t[i + 1], "BY") ? i + 2 : 0;
	return i + 1;
}

/* The end of the clause from i: the next top-level clause word or the end. */
static size_t clause_end(const struct toks *v, size_t i)
{
	static const char *const next[] = { "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT" };
	int depth = 0;
	for (; i < v->n; i++) {
		const struct tok *t = &v->t[i];
		if (is_op(t, "("))
			depth++;
		else if (is_op(t, ")"))
			depth--;
		if (depth)
			continue;
		if (is_op(t, ";") || is_kw_of(t, next, sizeof(next) / sizeof(next[0])))
			return i;
	}
	return i;
}

/*
 * The FROM clause [from, end): "events" alone, or "events [AS] A [INNER]
 * JOIN T [AS] B ON expr" (T any table but events, named once).  Sets
 * *ev_end past the events table and its alias, v->eva, *on to ON's
 * expression (0: none), jt to T, and marks B's columns.  -1: neither.
 */
static int from_clause(struct toks *v, size_t from, size_t end, size_t *ev_end, size_t *on,
		       char *jt, size_t jtsize)
{
	char buf[64], ab[64];
	const char *name = dtsql_id_name(&v->t[from], buf, sizeof(buf));
	static const char *const nota[] = {
		"AS", "JOIN", "INNER", "ON", "LEFT", "CROSS", "NATURAL", "OUTER", "FULL", "RIGHT",
	};
	if (name == NULL || strcasecmp(name, "events"))
		return -1;
	size_t i = from + 1;
	*on = 0;
	jt[0] = 0;
	v->eva[0] = 0;
	if (i < end && is_kw(&v->t[i], "AS"))
		i++;
	if (i < end && (v->t[i].kind == K_ID || v->t[i].kind == K_QID) &&
	    !is_kw_of(&v->t[i], nota, sizeof(nota) / sizeof(nota[0]))) {
		const char *a = dtsql_id_name(&v->t[i], ab, sizeof(ab));
		if (a == NULL || strlen(a) >= sizeof(v->eva) || strlen(a) >= 16)
			return -1;
		strcpy(v->eva, a);
		i++;
	} else if (i > from + 1) {
		return -1;	/* AS and no name */
	}
	*ev_end = i;
	if (i == end)
		return v->eva[0] ? -1 : 0;	/* an alias alone: the old shape is without */
	if (i < end && is_kw(&v->t[i], "INNER"))
		i++;
	if (i >= end || !is_kw(&v->t[i], "JOIN"))
		return -1;
	i++;
	const char *t = i < end ? dtsql_id_name(&v->t[i], buf, sizeof(buf)) : NULL;
	if (t == NULL || strcasecmp(t, "events") == 0 || strlen(t) >= jtsize ||
	    (i + 1 < end && is_op(&v->t[i + 1], ".")))
		return -1;
	strcpy(jt, t);
	i++;
	const struct tok *bq = &v->t[i - 1];
	if (i < end && is_kw(&v->t[i], "AS"))
		i++;
	if (i < end && !is_kw(&v->t[i], "ON"))
		bq = &v->t[i++];
	if (i >= end || !is_kw(&v->t[i], "ON") || i + 1 >= end)
		return -1;
	*on = i + 1;
	char qb[64], eb[64];
	const char *bn = dtsql_id_name(bq, eb, sizeof(eb));
	if (bn == NULL || (v->eva[0] ? strcasecmp(bn, v->eva) : strcasecmp(bn, "events")) == 0)
		return -1;
	/* every qualified name is of one of the two */
	for (size_t k = 0; k + 2 < v->n; k++) {
		if (!is_op(&v->t[k + 1], "."))
			continue;
		const char *q = dtsql_id_name(&v->t[k], qb, sizeof(qb));
		if (q == NULL)
			return -1;
		if (strcasecmp(q, bn) == 0)
			v->t[k + 2].other = 1;
		else if (strcasecmp(q, v->eva[0] ? v->eva : "events"))
			return -1;
	}
	return 1;
}

static char *rewrite(sqlite3 *db, sqlite3_stmt *orig, struct toks *v, int many, char *jt,
		     size_t jtsize)
{
	struct rw w = { .v = v, .sql = sqlite3_sql(orig) };
	size_t n = v->n;
	if (n && is_op(&v->t[n - 1], ";"))
		n--;
	/* the clause words at the top level only, the others nowhere */
	for (size_t i = 1, depth = 0; i < n; i++) {
		const struct tok *t = &v->t[i];
		depth += is_op(t, "(");
		if (is_op(t, ")") && depth-- == 0)
			return NULL;
		int cw = is_kw(t, "FROM") || is_kw(t, "WHERE") || is_kw(t, "GROUP") ||
			 is_kw(t, "HAVING") || is_kw(t, "ORDER") || is_kw(t, "LIMIT") ||
			 is_kw(t, "JOIN") || is_kw(t, "ON");	/* the FROM's: checked there */
		if (is_op(t, ";") || (is_forbidden(t) && (!cw || depth)))
			return NULL;
	}
	if (n < 6 || !is_kw(&v->t[0], "SELECT"))
		return NULL;

	/* the clauses, in order, each once at the top level */
	size_t sel = 1 + is_kw(&v->t[1], "ALL"), sel_end = clause_end(v, sel);
	size_t from = clause(v, sel_end, "FROM"), from_end = from ? clause_end(v, from) : 0;
	size_t ev_end = 0, on = 0;
	int join;
	if (from == 0 || (join = from_clause(v, from, from_end, &ev_end, &on, jt, jtsize)) < 0 ||
	    (join && many))
		return NULL;
	w.join = join;
	size_t i = from_end, where = clause(v, i, "WHERE"), where_end = 0;
	if (where)
		i = where_end = clause_end(v, where);
	/* no GROUP BY: one group of all (then an aggregate must make it one) */
	size_t group = clause(v, i, "GROUP"), group_end = i;
	if (group)
		group_end = i = clause_end(v, group);
	size_t having = clause(v, i, "HAVING"), having_end = 0;
	if (having)
		i = having_end = clause_end(v, having);
	size_t order = clause(v, i, "ORDER"), order_end = 0;
	if (order)
		i = order_end = clause_end(v, order);
	size_t limit = clause(v, i, "LIMIT");
	if (limit)
		i = clause_end(v, limit);
	if (i != n)
		return NULL;	/* a clause twice, or out of order */

	/* the result columns: item i is [ia, ib), its expression [ia, ie)
	 * (then "AS alias" or "alias") */
	size_t ia[64], ib[64], ie[64];
	int nitem = 0;
	for (size_t a = sel; a < sel_end; nitem++) {
		size_t b = top_comma(v, a, sel_end);
		if (b == a || nitem == 64 || nitem >= sqlite3_column_count(orig))
			return NULL;
		size_t e = b;
		const char *cn = sqlite3_column_name(orig, nitem);
		char nb[256];
		const char *last = b - a >= 2 ? dtsql_id_name(&v->t[b - 1], nb, sizeof(nb)) : NULL;
		if (b - a >= 3 && is_kw(&v->t[b - 2], "AS")) {
			e = b - 2;
		} else if (last && cn && strcmp(last, cn) == 0 && !is_op(&v->t[b - 2], ".")) {
			/* "expr alias": the name sqlite gave is the last word */
			e = b - 1;
		}
		/* an alias that is a column name could be taken for the column */
		if (e < b && col_bit(&v->t[b - 1]))
			return NULL;
		if (e < b)
			w.alias[w.nalias++] = &v->t[b - 1];
		ia[nitem] = a;
		ib[nitem] = b;
		ie[nitem] = e;
		a = b < sel_end ? b + 1 : b;
	}
	if (nitem != sqlite3_column_count(orig))
		return NULL;

	/* the ts buckets, all of one offset and width */
	for (size_t k = 0; k < n; k++) {
		int64_t bo, bw;
		size_t bl = bucket_at(v, k, n, &bo, &bw);
		if (bl == 0)
			continue;
		if (w.nbk == 16 || (w.nbk && (bo != w.bkoff || bw != w.bkw)))
			return NULL;
		w.bkoff = bo;
		w.bkw = bw;
		w.bks[w.nbk] = k;
		w.bkl[w.nbk++] = bl;
		k += bl - 1;
	}

	/* GROUP BY: columns, named, or as the result column that is one (by
	 * its position or alias: "GROUP BY 1", "SELECT comm AS c ... GROUP BY c") */
	for (size_t k = group; group && k < group_end; k += 2) {
		const struct tok *t = &v->t[k];
		size_t bl = bucket_len(&w, k);
		if (bl) {
			w.keys |= COL_BUCKET;
			k += bl - 1;
			if (k + 1 < group_end && !is_op(&v->t[k + 1], ","))
				return NULL;
			continue;
		}
		if (k + 2 < group_end && is_op(&v->t[k + 1], ".") && v->t[k + 2].other) {
			if (w.nokey == 16)
				return NULL;
			w.okey[w.nokey++] = &v->t[k + 2];
			k += 2;
			if (k + 1 < group_end && !is_op(&v->t[k + 1], ","))
				return NULL;
			continue;
		}
		if (col_ref(v, k, group_end) == 3) {
			w.keys |= col_bit(&v->t[k + 2]);
			k += 2;
			if (k + 1 < group_end && !is_op(&v->t[k + 1], ","))
				return NULL;
			continue;
		}
		uint64_t bit = col_bit(t);
		int64_t pos;
		int it = -1;
		if (bit == 0 && int_lit(v, k, k + 1, &pos) == 1 && pos >= 1 && pos <= nitem) {
			it = (int)pos - 1;
		} else if (bit == 0) {
			char nb[256], ab[256];
			const char *g = dtsql_id_name(t, nb, sizeof(nb));
			for (int i = 0; g && i < nitem && it < 0; i++) {
				const char *al = ie[i] < ib[i] ? dtsql_id_name(&v->t[ib[i] - 1], ab, sizeof(ab))
							       : NULL;
				if (al && strcasecmp(al, g) == 0)
					it = i;
			}
		}
		if (it >= 0 && ie[it] == ia[it] + 3 && is_op(&v->t[ia[it] + 1], ".") &&
		    v->t[ia[it] + 2].other) {
			if (w.nokey == 16)
				return NULL;
			w.okey[w.nokey++] = &v->t[ia[it] + 2];
			if (k + 1 < group_end && !is_op(&v->t[k + 1], ","))
				return NULL;
			continue;
		}
		if (it >= 0 && bucket_len(&w, ia[it]) == ie[it] - ia[it]) {
			w.keys |= COL_BUCKET;
			if (k + 1 < group_end && !is_op(&v->t[k + 1], ","))
				return NULL;
			continue;
		}
		if (it >= 0) {
			size_t r = col_ref(v, ia[it], ie[it]);
			if (r == 0 || ia[it] + r != ie[it])
				return NULL;
			bit = col_bit(&v->t[ie[it] - 1]);
		}
		if (bit == 0 || (!many && (bit & (COL_CAPTURE | COL_HOST))))
			return NULL;
		w.keys |= bit;
		if (k + 1 < group_end && !is_op(&v->t[k + 1], ","))
			return NULL;
	}
	/* LIMIT: numbers */
	for (size_t k = limit; limit && k < n; k++)
		if (v->t[k].kind != K_NUM && !is_op(&v->t[k], ",") && !is_op(&v->t[k], "-") &&
		    !is_op(&v->t[k], "+") && !is_kw(&v->t[k], "OFFSET"))
			return NULL;

	/* WHERE: its conjuncts, those on ts a range the table applies */
	size_t cend[64];
	int nconj = 0, tsc[64];
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	if (where && (nconj = conjuncts(v, where, where_end, cend, 64)) < 0)
		return NULL;
	for (int c = 0; c < nconj; c++) {
		size_t ca = c ? cend[c - 1] + 1 : where;
		if ((tsc[c] = ts_conj(v, ca, cend[c], &lo, &hi)) < 0)
			return NULL;
	}

	/* every column named (but in those ranges), for the grouped table's
	 * select list */
	uint64_t used = 0;
	for (size_t k = 0; k < n; k++) {
		size_t bl = bucket_len(&w, k);
		if (bl) {
			k += bl - 1;
			continue;
		}
		int in_ts = 0;
		for (int c = 0; c < nconj; c++)
			in_ts |= tsc[c] && k >= (c ? cend[c - 1] + 1 : where) && k < cend[c];
		if (!in_ts)
			used |= col_bit(&v->t[k]);
	}
	char range[192] = "";
	int anyts = 0;
	for (int c = 0; c < nconj; c++)
		anyts |= tsc[c];
	if (anyts && lo != INT64_MIN && hi != INT64_MAX)
		snprintf(range, sizeof(range), " WHERE " E_TSLO_NAME " = %lld AND " E_TSHI_NAME
			 " = %lld", (long long)lo, (long long)hi);
	else if (anyts && lo != INT64_MIN)
		snprintf(range, sizeof(range), " WHERE " E_TSLO_NAME " = %lld", (long long)lo);
	else if (anyts && hi != INT64_MAX)
		snprintf(range, sizeof(range), " WHERE " E_TSHI_NAME " = %lld", (long long)hi);
	if (w.nbk) {
		size_t rl = strlen(range);
		snprintf(range + rl, sizeof(range) - rl, "%s" E_BKOFF_NAME " = %lld AND " E_BKW_NAME
			 " = %lld", rl ? " AND " : " WHERE ", (long long)w.bkoff, (long long)w.bkw);
		used |= COL_BUCKET;
	}

	w.out = sqlite3_str_new(db);
	w.copied = w.sql;
	for (int col = 0; col < nitem; col++) {
		size_t a = ia[col], b = ib[col], e = ie[col];
		const char *cn = sqlite3_column_name(orig, col);
		if (b - a == 1 && is_op(&v->t[a], "*"))
			goto fail;
		w.changed = 0;
		if (expr(&w, a, e, 0) < 0)
			goto fail;
		if (w.changed && e == b) {
			const struct tok *lt = &v->t[b - 1];
			if (cn == NULL)
				goto fail;
			sqlite3_str_append(w.out, w.copied, (int)(lt->p + lt->n - w.copied));
			w.copied = lt->p + lt->n;
			sqlite3_str_appendf(w.out, " AS \"%w\"", cn);
		}
	}

	/* FROM events: the grouped rows of the columns named */
	sqlite3_str *cs = sqlite3_str_new(db);
	for (int k = 0; k < E_NCOLS; k++)
		if (used & (1ull << k))
			sqlite3_str_appendf(cs, "%s, ", col_name[k]);
	if (used & COL_BUCKET)
		sqlite3_str_appendall(cs, E_BUCKET_NAME ", ");
	int bad = sqlite3_str_errcode(cs) != SQLITE_OK;
	char *cols = sqlite3_str_finish(cs);	/* NULL when empty (count(*)) */
	sqlite3_str *fs = sqlite3_str_new(db);
	sqlite3_str_appendall(fs, "(");
	if (many)
		bad = bad || many_view(db, cols ? cols : "", range, fs) < 0;
	else
		sqlite3_str_appendf(fs, "SELECT %s" E_ROWS_NAME " FROM main." EVENTS_GROUPED "%s",
				    cols ? cols : "", range);
	sqlite3_str_appendf(fs, ") AS \"%w\"", v->eva[0] ? v->eva : "events");
	sqlite3_free(cols);
	char *fromtext = sqlite3_str_finish(fs);
	if (bad || fromtext == NULL) {
		sqlite3_free(fromtext);
		goto fail;
	}
	edit(&w, v->t[from].p, v->t[ev_end - 1].p + v->t[ev_end - 1].n, fromtext);
	sqlite3_free(fromtext);
	if (on && expr(&w, on, from_end, 1) < 0)
		goto fail;

	if (!group && w.naggs == 0)
		goto fail;	/* not an aggregate: a row per event */
	for (int c = 0; c < nconj; c++) {
		size_t ca = c ? cend[c - 1] + 1 : where, cb = cend[c];
		if (tsc[c])	/* applied by the table: true for every group */
			edit(&w, v->t[ca].p, v->t[cb - 1].p + v->t[cb - 1].n, "1");
		else if (expr(&w, ca, cb, 1) < 0)
			goto fail;
	}
	for (size_t k = group; group && k < group_end; k++) {
		size_t bl = bucket_len(&w, k);
		if (bl) {
			edit(&w, v->t[k].p, v->t[k + bl - 1].p + v->t[k + bl - 1].n, E_BUCKET_NAME);
			k += bl - 1;
		}
	}
	if (having && expr(&w, having, having_end, 0) < 0)
		goto fail;
	if (order && expr(&w, order, order_end, 0) < 0)
		goto fail;
	sqlite3_str_appendall(w.out, w.copied);
	return sqlite3_str_finish(w.out);
fail:
	sqlite3_free(sqlite3_str_finish(w.out));
	return NULL;
}

static sqlite3_stmt *groupby_at(sqlite3 *db, sqlite3_stmt *orig, int depth);

/* The fast form of orig, whose result columns must be named as those of
 * names (the statement the user wrote: orig may be it with its scalar
 * subqueries replaced by their values). */
static sqlite3_stmt *grouped(sqlite3 *db, sqlite3_stmt *orig, sqlite3_stmt *names)
{
	const char *sql = sqlite3_sql(orig);
	struct toks v = { 0 };
	sqlite3_stmt *fast = NULL, *again = NULL;
	char *text = NULL;
	if (sql == NULL || dtsql_tokenize(sql, &v) < 0)
		goto out;
	/* cheap refusals first: most statements do not aggregate */
	int agg = 0;
	for (size_t i = 0; i < v.n; i++)
		agg |= is_kw(&v.t[i], "GROUP") || is_kw(&v.t[i], "count") ||
		       is_kw(&v.t[i], "min") || is_kw(&v.t[i], "max") ||
		       weighted_kind(&v.t[i]) >= 0;
	if (!agg)
		goto out;

	struct reads ro = { .table = "events" };
	again = prepare_reading(db, sql, &ro);
	if (again == NULL)
		goto out;
	/* what "events" stands for, also when the statement reads none of its
	 * columns (count(*)): the rewrite names it in the same place */
	sqlite3_finalize(again);
	again = prepare_reading(db, "SELECT ts FROM events", &ro);
	if (again == NULL || ro.other || !!ro.one == !!ro.many || (ro.one && main_shadowed(db)))
		goto out;
	char jt[64];
	if ((text = rewrite(db, orig, &v, ro.many != 0, jt, sizeof(jt))) == NULL)
		goto out;
	/* a join reads the table it names, and so does its rewrite */
	if (jt[0] ? !ro.jtn || strcasecmp(jt, ro.jt) : ro.jtn != 0)
		goto out;
	struct reads rf = { .table = EVENTS_GROUPED };
	fast = prepare_reading(db, text, &rf);
	if (fast == NULL || rf.other || (ro.one ? rf.many || !rf.one : rf.one || !rf.many) ||
	    (jt[0] ? !rf.jtn || strcasecmp(jt, rf.jt) : rf.jtn != 0) ||
	    sqlite3_column_count(fast) != sqlite3_column_count(names))
		goto fail;
	for (int i = 0; i < sqlite3_column_count(names); i++) {
		const char *a = sqlite3_column_name(names, i), *b = sqlite3_column_name(fast, i);
		if (a == NULL || b == NULL || strcmp(a, b))
			goto fail;
	}
	goto out;
fail:
	sqlite3_finalize(fast);
	fast = NULL;
out:
	sqlite3_finalize(again);
	sqlite3_free(text);
	free(v.t);
	return fast;
}

/*
 * The value of the scalar subquery sql[0, n) as SQL text that compares
 * the same ("NULL", "(5)", "CAST(5 AS INTEGER)"), into out; -1 when it is
 * not one this can stand for: it must prepare on its own (so it refers
 * to nothing outside it: a correlated one is an error alone, since a name
 * resolves inside first), read only, give one column and at most one row,
 * that row an integer or NULL.  It runs once here, as sqlite runs an
 * uncorrelated one once, itself through the fast path when it can.  The
 * literal keeps the affinity the subquery's column had (a column's
 * declared type: INTEGER; an expression: none), so comparisons convert
 * as they would have.
 */
static int subst_value(sqlite3 *db, const char *sql, int n, sqlite3_str *out, int depth)
{
	sqlite3_stmt *st = NULL, *fast = NULL;
	const char *tail = NULL;
	int ret = -1;
	if (sqlite3_prepare_v2(db, sql, n, &st, &tail) != SQLITE_OK || st == NULL ||
	    !sqlite3_stmt_readonly(st) || sqlite3_column_count(st) != 1)
		goto out;
	for (const char *p = tail; p && p < sql + n; p++)
		if (!strchr(" \t\n\r", *p))
			goto out;
	const char *decl = sqlite3_column_decltype(st, 0);
	if (decl && strcasecmp(decl, "INTEGER"))
		goto out;
	fast = depth < 4 ? groupby_at(db, st, depth + 1) : NULL;
	sqlite3_stmt *run = fast ? fast : st;
	int rc = sqlite3_step(run);
	if (rc == SQLITE_DONE) {
		sqlite3_str_appendall(out, "NULL");
		ret = 0;
	} else if (rc == SQLITE_ROW && sqlite3_column_type(run, 0) == SQLITE_INTEGER) {
		long long x = sqlite3_column_int64(run, 0);
		if (sqlite3_step(run) != SQLITE_DONE)
			goto out;
		if (decl)
			sqlite3_str_appendf(out, "CAST(%lld AS INTEGER)", x);
		else
			sqlite3_str_appendf(out, "(%lld)", x);
		ret = 0;
	} else if (rc == SQLITE_ROW && sqlite3_column_type(run, 0) == SQLITE_NULL) {
		if (sqlite3_step(run) != SQLITE_DONE)
			goto out;
		sqlite3_str_appendall(out, "NULL");
		ret = 0;
	}
out:
	sqlite3_finalize(fast);
	sqlite3_finalize(st);
	return ret;
}

/*
 * sql with each scalar subquery compared with something ("pid = (SELECT
 * ...)", any of = == != <> < <= > >= before its parenthesis) replaced by
 * its value; NULL when there is none or one cannot be (then the statement
 * is rewritten, or not, as written).
 */
static char *subst_scalars(sqlite3 *db, const char *sql, int depth)
{
	struct toks v = { 0 };
	sqlite3_str *out = NULL;
	int nsub = 0;
	if (dtsql_tokenize(sql, &v) < 0)
		goto fail;
	out = sqlite3_str_new(db);
	const char *copied = sql;
	static const char *const cmp[] = { "=", "==", "!=", "<>", "<", "<=", ">", ">=" };
	for (size_t i = 1; i + 2 < v.n; i++) {
		int after_cmp = 0;
		for (size_t k = 0; k < sizeof(cmp) / sizeof(cmp[0]); k++)
			after_cmp |= is_op(&v.t[i - 1], cmp[k]);
		if (!after_cmp || !is_op(&v.t[i], "(") || !is_kw(&v.t[i + 1], "SELECT"))
			continue;
		size_t e = close_paren(&v, i, v.n);	/* past ')' */
		if (e == SIZE_MAX)
			goto fail;
		const char *a = v.t[i + 1].p, *b = v.t[e - 1].p;
		sqlite3_str_append(out, copied, (int)(v.t[i].p - copied));
		if (subst_value(db, a, (int)(b - a), out, depth) < 0)
			goto fail;
		copied = b + 1;
		nsub++;
		i = e - 1;
	}
	if (nsub == 0)
		goto fail;
	sqlite3_str_appendall(out, copied);
	free(v.t);
	return sqlite3_str_finish(out);
fail:
	free(v.t);
	sqlite3_free(sqlite3_str_finish(out));
	return NULL;
}

static sqlite3_stmt *groupby_at(sqlite3 *db, sqlite3_stmt *orig, int depth)
{
	if (orig == NULL || sqlite3_column_count(orig) == 0 || !sqlite3_stmt_readonly(orig))
		return NULL;
	const char *sql = sqlite3_sql(orig);
	/* cheap: a subquery at all, and an aggregate or GROUP BY outside
	 * it?  (Else the statement runs as written, and its subquery would
	 * run twice.) */
	const char *s1 = sql ? strcasestr(sql, "select") : NULL;
	char *sub = NULL;
	if (s1 && strcasestr(s1 + 6, "select")) {
		struct toks v = { 0 };
		int agg = 0, depth0 = 0;
		if (dtsql_tokenize(sql, &v) == 0) {
			for (size_t i = 0; i < v.n; i++) {
				if (is_op(&v.t[i], "("))
					depth0++;
				else if (is_op(&v.t[i], ")"))
					depth0--;
				else if (depth0 == 0)
					agg |= is_kw(&v.t[i], "GROUP") || is_kw(&v.t[i], "count") ||
					       is_kw(&v.t[i], "min") || is_kw(&v.t[i], "max") ||
					       weighted_kind(&v.t[i]) >= 0;
			}
		}
		free(v.t);
		if (agg)
			sub = subst_scalars(db, sql, depth);
	}
	if (sub == NULL)
		return grouped(db, orig, orig);
	sqlite3_stmt *st = NULL, *fast = NULL;
	const char *tail = NULL;
	if (sqlite3_prepare_v2(db, sub, -1, &st, &tail) == SQLITE_OK && st &&
	    (tail == NULL || tail[strspn(tail, " \t\n\r;")] == 0) && sqlite3_stmt_readonly(st) &&
	    sqlite3_column_count(st) == sqlite3_column_count(orig))
		fast = grouped(db, st, orig);
	sqlite3_finalize(st);
	sqlite3_free(sub);
	return fast;
}

sqlite3_stmt *dtsql_groupby(sqlite3 *db, sqlite3_stmt *orig)
{
	const char *env = getenv("DT_SQL_NO_GROUPED");
	if (env && *env)
		return NULL;
	return groupby_at(db, orig, 0);
}
