/*
 * dtsql_events.c - the events virtual table's cursor: a capture read
 * block by block and column by column (only the columns the statement
 * uses, as told by colUsed), whole blocks skipped when their index (time
 * and pid ranges) cannot match, xColumn a plain array load.  When the
 * statement orders or groups by one cheap column (comm, pid, tid, cpu,
 * probe, probe_name, ts) it hands rows over in order (dtsql_order.c), so
 * sqlite needs no sorter of its own: a GROUP BY then streams.  events_grouped (dtsql_int.h) is the same
 * cursor with its scan in dtsql_gscan.c.  See doc/SQL.md.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_events.h"
#include "dtsql_int.h"
#include "util.h"

/* The capture columns each events column needs. */
static const unsigned ecol_need[E_NCOLS] = {
#define DTSQL_EVCOL(id, name, type, cols, pqt, pqopt) [E_##id] = (cols),
#include "dtsql_events.def"
#undef DTSQL_EVCOL
};

/* ------------------------------------------------------------- events */



static int xcol_of(int ecol)
{
	for (int x = 0; x < XC_N; x++)
		if (xcols[x].ecol == ecol)
			return x;
	return -1;
}

/* idxNum layout */
#define IX_COLS		0x07ff		/* DTCAP_COL_* */
#define IX_ORDERED	0x0800		/* order terms follow '|' in idxStr */

static int ord_ok(const struct dtsql *c, int col)
{
	if (col == E_PROBE_NAME && c->probe_sparse)
		return 0;	/* ranks cover the dense ids only */
	return col == E_COMM || col == E_PID || col == E_TID ||
	       col == E_CPU || col == E_PROBE || col == E_PROBE_NAME ||
	       col == E_TS;
}


/* Materializing more than this (bytes) is left to sqlite's sorter.
 * DT_SQL_MAT_MAX sets it for the tests: the choice at a size they write. */
#define MAT_MAX		(768ull << 20)

static double mat_max(void)
{
	const char *m = getenv("DT_SQL_MAT_MAX");
	return m && *m ? atof(m) : (double)MAT_MAX;
}

static size_t col_bytes(unsigned cols)
{
	size_t n = 0;
	if (cols & DTCAP_COL_TS) n += 8;
	for (unsigned m = DTCAP_COL_CPU; m <= DTCAP_COL_FLAGS; m <<= 1)
		if (cols & m) n += 4;
	if (cols & DTCAP_COL_ARGS) n += 1 + 8 * DTCAP_MAXARGS;
	if (cols & DTCAP_COL_CTX) n += 1;
	return n;
}

static int ev_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct tab *t = (struct tab *)v;
	int gtab = t->kind == T_EVENTS_GROUPED;
	double rows = (double)dtcap_nevents(t->c->r) + 1;
	unsigned cols = 0;
	/* retval is grouped by (its value, or NULL when the event is not a
	 * return): few values, unlike the other arguments */
	int gret = gtab && (info->colUsed & ((sqlite3_uint64)1 << E_RETVAL));
	for (int i = 0; i < E_NCOLS; i++)
		if (info->colUsed & ((sqlite3_uint64)1 << i))
			cols |= gret && i == E_RETVAL ? DTCAP_COL_FLAGS : ecol_need[i];
	/* a group per timestamp or argument value would be a copy of the
	 * table: such plans are not offered (dtsql_groupby falls back) */
	if (gtab && (cols & ~GROUP_COLS))
		return SQLITE_CONSTRAINT;
	if (gret)
		cols |= DTCAP_COL_ARGS;
	/* (the ts range constraints below add DTCAP_COL_TS: checked for
	 * colUsed alone, above) */
	int bucket = gtab && (info->colUsed & ((sqlite3_uint64)1 << E_BUCKET));
	int bko = 0, bkw = 0;
	/* colUsed's last bit stands for every column from 63 up: not ours. */
	char ops[64];
	int nops = 0, argv = 0, ts_lo = 0, ts_hi = 0, ts_eq = 0, pid = 0, pin = 0, prb = 0;
	int cmf = 0, xeq = 0, xrg = 0;
	for (int i = 0; i < info->nConstraint && nops < 60; i++) {
		const struct sqlite3_index_constraint *k = &info->aConstraint[i];
		/* a ts range it cannot apply: not a plan (counts of every ts) */
		if (!k->usable && gtab && (k->iColumn == E_TSLO || k->iColumn == E_TSHI ||
					   k->iColumn == E_BKOFF || k->iColumn == E_BKW) &&
		    k->op == SQLITE_INDEX_CONSTRAINT_EQ)
			return SQLITE_CONSTRAINT;
		if (!k->usable)
			continue;
		char code = 0;
		if (gtab && (k->iColumn == E_TSLO || k->iColumn == E_TSHI)) {
			if (k->op != SQLITE_INDEX_CONSTRAINT_EQ)
				continue;
			code = k->iColumn == E_TSLO ? 'L' : 'H';
			info->aConstraintUsage[i].argvIndex = ++argv;
			info->aConstraintUsage[i].omit = 1;
			ops[nops++] = code;
			cols |= DTCAP_COL_TS;	/* read to verify the block index */
			continue;
		}
		if (gtab && (k->iColumn == E_BKOFF || k->iColumn == E_BKW)) {
			if (k->op != SQLITE_INDEX_CONSTRAINT_EQ)
				continue;
			code = k->iColumn == E_BKOFF ? 'O' : 'W';
			bko |= code == 'O';
			bkw |= code == 'W';
			info->aConstraintUsage[i].argvIndex = ++argv;
			info->aConstraintUsage[i].omit = 1;
			ops[nops++] = code;
			cols |= DTCAP_COL_TS;
			continue;
		}
		if (k->iColumn == E_TS) {
			switch (k->op) {
			case SQLITE_INDEX_CONSTRAINT_EQ: code = '='; ts_eq = 1; break;
			case SQLITE_INDEX_CONSTRAINT_GT: code = '>'; ts_lo = 1; break;
			case SQLITE_INDEX_CONSTRAINT_GE: code = 'g'; ts_lo = 1; break;
			case SQLITE_INDEX_CONSTRAINT_LT: code = '<'; ts_hi = 1; break;
			case SQLITE_INDEX_CONSTRAINT_LE: code = 'l'; ts_hi = 1; break;
			}
		} else if (k->op == SQLITE_INDEX_CONSTRAINT_EQ &&
			   (k->iColumn == E_PID || k->iColumn == E_PROBE)) {
			int in = sqlite3_vtab_in(info, i, -1);
			if (in)
				sqlite3_vtab_in(info, i, 1);
			if (k->iColumn == E_PID) {
				code = in ? 'P' : 'p';
				pid = 1;
				pin |= in;
			} else {
				code = in ? 'R' : 'r';
				prb = 1;
			}
		} else if (k->op == SQLITE_INDEX_CONSTRAINT_EQ &&
			   (k->iColumn == E_TID || k->iColumn == E_KSTACK ||
			    k->iColumn == E_USTACK)) {
			int in = sqlite3_vtab_in(info, i, -1);
			if (in)
				sqlite3_vtab_in(info, i, 1);
			code = k->iColumn == E_TID ? 't' : k->iColumn == E_KSTACK ? 's' : 'u';
			if (in)
				code = (char)toupper(code);
			xeq = 1;
		} else if ((k->op == SQLITE_INDEX_CONSTRAINT_GT ||
			    k->op == SQLITE_INDEX_CONSTRAINT_GE ||
			    k->op == SQLITE_INDEX_CONSTRAINT_LT ||
			    k->op == SQLITE_INDEX_CONSTRAINT_LE) && xcol_of(k->iColumn) >= 0) {
			int o = k->op == SQLITE_INDEX_CONSTRAINT_GT ? 0 :
				k->op == SQLITE_INDEX_CONSTRAINT_GE ? 1 :
				k->op == SQLITE_INDEX_CONSTRAINT_LT ? 2 : 3;
			code = xr_codes[xcol_of(k->iColumn) * 4 + o];
			xrg = 1;
		} else if ((k->op == SQLITE_INDEX_CONSTRAINT_LIKE ||
			    k->op == SQLITE_INDEX_CONSTRAINT_GLOB) &&
			   (k->iColumn == E_PROBE_NAME || k->iColumn == E_COMM)) {
			/* matched against the small dictionaries here */
			int like = k->op == SQLITE_INDEX_CONSTRAINT_LIKE;
			if (k->iColumn == E_COMM) {
				code = like ? 'k' : 'j';
				cmf = 1;
			} else {
				code = like ? 'K' : 'J';
				prb = 1;
			}
		} else if (k->op == SQLITE_INDEX_CONSTRAINT_EQ &&
			   (k->iColumn == E_COMM || k->iColumn == E_PROBE_NAME) &&
			   strcmp(sqlite3_vtab_collation(info, i), "BINARY") == 0) {
			int in = sqlite3_vtab_in(info, i, -1);
			if (in)
				sqlite3_vtab_in(info, i, 1);
			if (k->iColumn == E_COMM) {
				code = in ? 'C' : 'c';
				cmf = 1;
			} else {
				code = in ? 'N' : 'n';
				prb = 1;
			}
		}
		if (code == 0)
			continue;
		info->aConstraintUsage[i].argvIndex = ++argv;
		ops[nops++] = code;
		if (strchr(xr_codes, code))
			cols |= xcols[(strchr(xr_codes, code) - xr_codes) / 4].col;
		else if (code == 't' || code == 'T')
			cols |= DTCAP_COL_TID;
		else if (code == 's' || code == 'S')
			cols |= DTCAP_COL_KSTACK;
		else if (code == 'u' || code == 'U')
			cols |= DTCAP_COL_USTACK;
		else if (code == '=' || code == '>' || code == 'g' || code == '<' || code == 'l')
			cols |= DTCAP_COL_TS;
		else if (code == 'p' || code == 'P')
			cols |= DTCAP_COL_PID;
		else if (code == 'c' || code == 'C' || code == 'k' || code == 'j')
			cols |= DTCAP_COL_COMM;
		else
			cols |= DTCAP_COL_PROBE;
	}
	ops[nops] = 0;
	/* a bucket is of a given offset and width, or not a plan */
	if (bucket && !(bko && bkw))
		return SQLITE_CONSTRAINT;
	double est = rows;
	if (ts_eq)
		est /= 1000;
	else if (ts_lo && ts_hi)
		est /= 20;
	else if (ts_lo || ts_hi)
		est /= 3;
	if (pid)
		est /= pin ? 10 : 30;
	if (prb)
		est /= 3;
	if (cmf)
		est /= 3;
	/* the other per-context filters (xeq, xrg) narrow nothing here: a
	 * join on them (e.kstack = f.stack_id) must not look cheaper with the
	 * capture inside, a scan per row of the other table */
	(void)xeq;
	(void)xrg;
	if (est < 1)
		est = 1;
	int idx = (int)cols;
	/* ORDER BY (or GROUP BY, or a window's PARTITION BY .. ORDER BY) on
	 * up to 4 cheap columns: "|" then a column letter and +/- per term
	 * after the constraint codes.  Sized on every row, not the estimate:
	 * a constraint may not narrow. */
	char ord[16] = "";
	int nob = info->nOrderBy, okob = nob >= 1 && nob <= 4;
	unsigned need = cols;
	for (int i = 0; okob && i < nob; i++) {
		int oc = info->aOrderBy[i].iColumn;
		okob = ord_ok(t->c, oc);
		if (okob)
			need |= ecol_need[oc];
	}
	/* row numbers are kept in 32 bits; ORDER BY ts alone is streamed,
	 * holding the rows stream_peak says, not every row */
	double fit = mat_max() / (double)(col_bytes(need) + 20);
	int sdir = okob && nob == 1 && info->aOrderBy[0].iColumn == E_TS;
	if (okob && !gtab && rows <= (double)UINT32_MAX &&
	    (rows <= fit ||
	     (sdir && (double)dtev_stream_peak(t->c, info->aOrderBy[0].desc) <= fit))) {
		ord[0] = '|';
		for (int i = 0; i < nob; i++) {
			ord[1 + 2 * i] = (char)('a' + info->aOrderBy[i].iColumn);
			ord[2 + 2 * i] = info->aOrderBy[i].desc ? '-' : '+';
		}
		ord[1 + 2 * nob] = 0;
		idx |= IX_ORDERED;
		info->orderByConsumed = 1;
	}
	info->idxNum = idx;
	info->idxStr = sqlite3_mprintf("%s%s", ops, ord);
	info->needToFreeIdxStr = 1;
	/* Reading a whole capture must look dearer than any index of a real
	 * table joined with it, so that joins drive from the other side.
	 * events_grouped reads the whole capture whatever it is given, and its
	 * rows' rowids are only their place in one scan: priced as a whole
	 * scan always, so that no plan runs it per row of another table nor
	 * once per branch of an OR (whose union sqlite takes by rowid). */
	info->estimatedCost = (gtab ? rows : est) * 10;
	info->estimatedRows = (sqlite3_int64)(gtab && est > 1000 ? 1000 : est);
	return info->idxStr ? SQLITE_OK : SQLITE_NOMEM;
}

static int ev_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct ecur *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return SQLITE_NOMEM;
	e->c = ((struct tab *)v)->c;
	e->gtab = ((struct tab *)v)->kind == T_EVENTS_GROUPED;
	e->b_blk = SIZE_MAX;
	*out = &e->base;
	return SQLITE_OK;
}

/* Stop the helpers (also midway: LIMIT, xClose).  DT_SQL_DEBUG says how
 * far ahead of the statement they went (tests/sql: an early stop). */
static void ahead_end(struct ecur *e)
{
	if (!e->ahead)
		return;
	const char *d = getenv("DT_SQL_DEBUG");
	if (d && *d)
		fprintf(stderr, "dtsql: events read ahead: %zu of %zu blocks decoded, "
			"%zu by their contexts alone\n", dtsp_ahead_decoded(e->ahead),
			e->ablocks, dtsp_ahead_ctx_only(e->ahead));
	dtsp_ahead_free(e->ahead);
	e->ahead = NULL;
}

static void ev_reset(struct ecur *e)
{
	ahead_end(e);
	/* (a join's lookups reset per row: the environment only for a stream) */
	const char *d = e->stream ? getenv("DT_SQL_DEBUG") : NULL;
	if (d && *d)
		fprintf(stderr, "dtsql: ORDER BY ts streamed: at most %zu rows held (bound %llu)\n",
			e->sheld, (unsigned long long)e->c->speak[e->sdesc]);
	flt_free(&e->flt);
	free(e->mat.ts); free(e->mat.cpu); free(e->mat.pid); free(e->mat.tid);
	free(e->mat.probe); free(e->mat.comm); free(e->mat.kstack);
	free(e->mat.ustack); free(e->mat.flags); free(e->mat.nargs); free(e->mat.ctx);
	free(e->mat.args);
	free(e->perm);
	free(e->sufmin);
	free(e->mrid);
	free(e->gcount);
	free(e->gbucket);
	free(e->gret);
	free(e->gretok);
	int gtab = e->gtab;
	struct dtcap_block *b = e->b;
	size_t b_blk = e->b_blk;
	unsigned b_cols = e->b_cols;
	struct dtsql *c = e->c;
	sqlite3_vtab_cursor base = e->base;
	memset(e, 0, sizeof(*e));
	e->b = b;
	e->b_blk = b_blk;
	e->b_cols = b_cols;
	e->c = c;
	e->base = base;
	e->gtab = gtab;
	flt_init(&e->flt);
}

static int ev_close(sqlite3_vtab_cursor *cur)
{
	struct ecur *e = (struct ecur *)cur;
	ev_reset(e);
	dtcap_block_free(e->b);
	free(e);
	return SQLITE_OK;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Has column x (FLT_X_*) a constraint already?  The first one given is
 * kept: sqlite checks every one of them again. */
static int x_taken(const struct flt_filter *f, int x)
{
	if (x == FLT_X_PROBE && f->probe_ok)
		return 1;
	if (x == FLT_X_COMM && f->comm_ok)
		return 1;
	return f->xset >> x & 1;
}

/*
 * What set_collect or pattern_collect gave (r, the sorted set of n values,
 * taken over) as the filter's test of column x (FLT_X_*): probe and comm
 * ids an id table (probe_ok, comm_ok), unless ids far beyond the
 * capture's would make it huge (then a set, as the others).  -1 out of
 * memory.
 */
static int take_set(struct ecur *e, int x, int r, uint32_t *set, size_t n)
{
	struct flt_filter *f = &e->flt;
	if (r <= 0) {
		free(set);
		return r;
	}
	if (n == 0)
		e->empty = 1;
	if (x == FLT_X_PROBE || x == FLT_X_COMM) {
		uint32_t top = n ? set[n - 1] : 0;
		uint32_t known = x == FLT_X_PROBE ? dtcap_max_probe_id(e->c->r) : e->c->ncomms;
		if (top < known)
			top = known;
		if (top < (1u << 24)) {
			uint8_t *tab = calloc((size_t)top + 1, 1);
			if (tab == NULL) {
				free(set);
				return -1;
			}
			for (size_t i = 0; i < n; i++)
				tab[set[i]] = 1;
			free(set);
			if (x == FLT_X_PROBE)
				f->probe_ok = tab, f->nprobe_ok = top + 1;
			else
				f->comm_ok = tab, f->ncomm_ok = top + 1;
			return 0;
		}
	}
	f->xv[x] = set;
	f->nxv[x] = n;
	f->xset |= 1u << x;
	return 0;
}

/*
 * Streaming on the pool pays when there are blocks to share: not for the
 * few a join's lookup (ts = ?) reads per row of its other table.  With one
 * thread the scan is the same without helpers (this thread decodes, and
 * selects rows a context at a time: flt_select).  DT_SQL_NO_READAHEAD=1
 * keeps every scan on this thread, row by row (the tests' reference).
 */
static int ahead_start(struct ecur *e)
{
	const char *no = getenv("DT_SQL_NO_READAHEAD");
	struct dtcap_reader *r = e->c->r;
	size_t n = 0;
	if ((no && *no && strcmp(no, "0")) || e->cols == 0)
		return SQLITE_OK;
	for (size_t i = 0; i < dtcap_nblocks(r) && n < 4; i++)
		n += block_may_match(e, dtcap_block_info(r, i));
	if (n < 4)
		return SQLITE_OK;
	char err[512];
	e->ahead = dtsp_ahead_new_rows(r, &e->flt, e->cols, e->sdesc, dtsql_cancel, NULL, err,
				       sizeof(err));
	if (!e->ahead) {
		if (!strcmp(err, "out of memory"))
			return SQLITE_NOMEM;
		set_err(e->base.pVtab, "%s", err);
		return SQLITE_ERROR;
	}
	e->ablocks = 0;
	for (size_t i = 0; i < dtcap_nblocks(r); i++)
		e->ablocks += block_may_match(e, dtcap_block_info(r, i));
	return SQLITE_OK;
}

/* Narrow the filter's [tmin, tmax] by "ts OP v"; non-numeric values
 * narrow nothing. */
static void ts_narrow(struct ecur *e, char op, sqlite3_value *v)
{
	int t = sqlite3_value_type(v);
	double d;
	if (t == SQLITE_INTEGER)
		d = (double)sqlite3_value_int64(v);
	else if (t == SQLITE_FLOAT)
		d = sqlite3_value_double(v);
	else
		return;
	if (isnan(d))
		return;
	uint64_t lo = 0, hi = UINT64_MAX;
	int64_t iv;
	int exact = t == SQLITE_INTEGER;
	iv = exact ? sqlite3_value_int64(v) : 0;
	/* Doubles are rounded outward so the range only ever widens. */
#define CLAMP(x) ((x) <= 0 ? 0 : (x) >= 1.8e19 ? UINT64_MAX : (uint64_t)(x))
	switch (op) {
	case '=':
		if (exact) {
			if (iv < 0) { e->empty = 1; return; }
			lo = hi = (uint64_t)iv;
		} else {
			lo = CLAMP(floor(d));
			hi = CLAMP(ceil(d));
		}
		break;
	case '>':
		if (exact) lo = iv < 0 ? 0 : (uint64_t)iv + 1;
		else lo = CLAMP(floor(d));
		break;
	case 'g':
		if (exact) lo = iv < 0 ? 0 : (uint64_t)iv;
		else lo = CLAMP(floor(d));
		break;
	case '<':
		if (exact) {
			if (iv <= 0) { e->empty = 1; return; }
			hi = (uint64_t)iv - 1;
		} else hi = CLAMP(ceil(d));
		break;
	case 'l':
		if (exact) {
			if (iv < 0) { e->empty = 1; return; }
			hi = (uint64_t)iv;
		} else hi = CLAMP(ceil(d));
		break;
	}
#undef CLAMP
	struct flt_filter *f = &e->flt;
	if (lo > f->tmin) f->tmin = lo;
	if (hi < f->tmax) f->tmax = hi;
	f->has_since = f->has_until = 1;
	f->since = f->tmin;
	f->until = f->tmax;
	if (f->tmin > f->tmax)
		e->empty = 1;
}

/*
 * Narrow per-context column c / 4's range by "col OP v", OP c % 4; values
 * that are not integers narrow nothing (sqlite re-checks every row), NULL
 * matches nothing.
 */
static void x_narrow(struct ecur *e, unsigned c, sqlite3_value *v)
{
	struct flt_filter *f = &e->flt;
	unsigned x = c / 4, o = c % 4;
	int64_t iv, lo = 0, hi = UINT32_MAX;
	if (x >= XC_N)
		return;
	if (sqlite3_value_type(v) == SQLITE_NULL) {
		e->empty = 1;
		return;
	}
	if (!dtsql_val_int(v, &iv))
		return;
	switch (o) {
	case 0: lo = iv >= INT64_MAX ? INT64_MAX : iv + 1; break;
	case 1: lo = iv; break;
	case 2: hi = iv <= INT64_MIN ? INT64_MIN : iv - 1; break;
	default: hi = iv; break;
	}
	if (!(f->xrng >> x & 1)) {
		f->xlo[x] = 0;
		f->xhi[x] = UINT32_MAX;
		f->xrng |= 1u << x;
	}
	if (lo > (int64_t)UINT32_MAX || hi < 0 || lo > hi) {
		e->empty = 1;
		return;
	}
	if (lo > (int64_t)f->xlo[x])
		f->xlo[x] = (uint32_t)lo;
	if (hi < (int64_t)f->xhi[x])
		f->xhi[x] = (uint32_t)hi;
	if (f->xlo[x] > f->xhi[x])
		e->empty = 1;
}

/*
 * Collect the u32 values of "col = v" or "col IN (...)" into a sorted set.
 * Returns 0 when the constraint cannot be used (a value that is not an
 * integer: sqlite's affinity rules may still match it), 1 when used.
 * For probe names, text values are looked up to probe ids.
 */
static int set_collect(struct ecur *e, sqlite3_value *v, int in, int byname,
		       uint32_t **set, size_t *n)
{
	size_t cap = 0;
	*n = 0;
	sqlite3_value *x = NULL;
	int rc = in ? sqlite3_vtab_in_first(v, &x) : (x = v, SQLITE_OK);
	for (; rc == SQLITE_OK && x != NULL;
	     rc = in ? sqlite3_vtab_in_next(v, &x) : (x = NULL, SQLITE_OK)) {
		uint32_t id;
		if (byname == 2) {
			/* comm: the dictionary is small; ids are interned, unique */
			if (sqlite3_value_type(x) != SQLITE_TEXT)
				return 0;
			const char *s = (const char *)sqlite3_value_text(x);
			uint32_t k = 1;
			for (; s && k <= e->c->ncomms; k++)
				if (e->c->comm[k] && strcmp(e->c->comm[k], s) == 0)
					break;
			if (s == NULL || k > e->c->ncomms)
				continue;
			id = k;
		} else if (byname) {
			if (sqlite3_value_type(x) != SQLITE_TEXT)
				return 0;
			const char *s = (const char *)sqlite3_value_text(x);
			const struct dtcap_probe *p = NULL;
			for (size_t i = 0; s && i < dtcap_nprobes(e->c->r); i++)
				if (strcmp(dtcap_probe_at(e->c->r, i)->name, s) == 0)
					p = dtcap_probe_at(e->c->r, i);
			if (p == NULL)
				continue;
			id = p->id;
		} else {
			int64_t iv;
			if (sqlite3_value_type(x) == SQLITE_NULL)
				continue;	/* = NULL matches nothing */
			if (!dtsql_val_int(x, &iv))
				return 0;
			if (iv < 0 || iv > UINT32_MAX)
				continue;
			id = (uint32_t)iv;
		}
		if (DT_GROW(*set, cap, *n, 1, 8))
			return -1;
		(*set)[(*n)++] = id;
	}
	if (*n > 1)
		qsort(*set, *n, sizeof(**set), cmp_u32);
	return 1;
}

/*
 * "comm/probe_name LIKE/GLOB pattern": the ids whose text matches, a
 * sorted set into *out (n of them), as set_collect's.  LIKE is matched
 * case-insensitively, a superset of what PRAGMA case_sensitive_like may
 * ask for (sqlite re-checks rows).
 */
static int pattern_collect(struct ecur *e, sqlite3_value *v, int like, int comm,
			   uint32_t **out, size_t *nout)
{
	if (sqlite3_value_type(v) != SQLITE_TEXT)
		return 0;
	const char *pat = (const char *)sqlite3_value_text(v);
	if (pat == NULL)
		return 0;
	size_t n = 0, max = comm ? e->c->ncomms : dtcap_nprobes(e->c->r);
	uint32_t *set = malloc((max ? max : 1) * sizeof(*set));
	if (set == NULL)
		return -1;
	for (size_t i = 0; i < max; i++) {
		const char *t;
		uint32_t id;
		if (comm) {
			id = (uint32_t)i + 1;
			t = e->c->comm[id];
		} else {
			id = dtcap_probe_at(e->c->r, i)->id;
			t = dtcap_probe_at(e->c->r, i)->name;
		}
		if (t && (like ? sqlite3_strlike(pat, t, 0) : sqlite3_strglob(pat, t)) == 0)
			set[n++] = id;
	}
	if (n > 1)
		qsort(set, n, sizeof(*set), cmp_u32);
	*out = set;
	*nout = n;
	return 1;
}


static void cols_from_block(struct cols *cv, const struct dtcap_block *b)
{
	cv->ts = b->ts; cv->cpu = b->cpu; cv->pid = b->pid; cv->tid = b->tid;
	cv->probe = b->probe; cv->comm = b->comm; cv->kstack = b->kstack;
	cv->ustack = b->ustack; cv->flags = b->flags; cv->nargs = b->nargs;
	cv->ctx = b->ctx;
	cv->args = b->args;
}

/* The next block the helpers give with a row the filter passes; 0 with
 * e->eof set at the end, -3 interrupted, -1 with the message set. */
static int ev_next_block_ahead(struct ecur *e)
{
	for (;;) {
		const struct dtcap_block *b;
		size_t blk;
		char err[512];
		int r = dtsp_ahead_next(e->ahead, &b, &blk, err, sizeof(err));
		if (r == 0) {
			e->eof = 1;
			e->nrows = e->nsel = e->si = 0;
			return 0;
		}
		if (r < 0) {
			set_err(e->base.pVtab, "%s", err);
			return r == FLT_SCAN_CANCELLED ? -3 : -1;
		}
		e->sel = dtsp_ahead_rows(e->ahead, &e->nsel);
		if (e->nsel == 0)
			continue;
		e->si = 0;
		e->cur_blk = blk;
		e->rbase = e->c->block_base[blk];
		e->nrows = b->rows;
		cols_from_block(&e->cv, b);
		return 0;
	}
}

/* Load the next block that may match; 0 with e->eof set at the end. */
static int ev_next_block(struct ecur *e)
{
	struct dtcap_reader *r = e->c->r;
	size_t nb = dtcap_nblocks(r);
	if (e->ahead)
		return ev_next_block_ahead(e);
	/* a filter that passes no row of many blocks never returns to
	 * sqlite's loop, whose progress handler would see a Ctrl-C */
	if (dtsql_cancel && *dtsql_cancel) {
		set_err(e->base.pVtab, "%s", "interrupted");
		return -3;
	}
	while (e->blk < nb) {
		size_t i = e->blk++;
		if (e->sdesc)	/* ORDER BY ts DESC streamed: last first */
			i = nb - 1 - i;
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if (!block_may_match(e, bi))
			continue;
		e->rbase = e->c->block_base[i];
		e->cur_blk = i;
		e->row = 0;
		if (e->cols == 0) {
			/* count(*) and friends: the index knows the row count */
			e->nrows = bi->rows;
			return 0;
		}
		if (e->b == NULL && (e->b = dtcap_block_new()) == NULL)
			return -2;
		if (e->b_blk != i || (e->b_cols & e->cols) != e->cols) {
			e->b_blk = SIZE_MAX;
			if (dtcap_read_block(r, i, e->cols, e->b) < 0)
				return -1;
			e->b_blk = i;
			e->b_cols = e->cols;
		}
		e->nrows = e->b->rows;
		cols_from_block(&e->cv, e->b);
		return 0;
	}
	e->eof = 1;
	e->nrows = 0;
	return 0;
}

static int rowfilter(const struct ecur *e)
{
	return flt_active(&e->flt);
}

int dtev_seek(struct ecur *e)
{
	int rf = rowfilter(e);
	for (;;) {
		if (e->ahead) {
			if (e->si < e->nsel) {
				e->row = e->sel[e->si];
				return SQLITE_OK;
			}
		} else {
			while (e->row < e->nrows) {
				if (!rf || flt_match_row(&e->flt, e->b, e->row))
					return SQLITE_OK;
				e->row++;
			}
		}
		int rc = ev_next_block(e);
		if (rc == -2)
			return SQLITE_NOMEM;
		if (rc == -3)
			return SQLITE_INTERRUPT;
		if (rc < 0) {
			if (!e->ahead)
				set_err(e->base.pVtab, "%s", dtcap_reader_error(e->c->r));
			return SQLITE_ERROR;
		}
		if (e->eof)
			return SQLITE_OK;
	}
}

/* Append the matching rows of the current block to the materialization. */
/* Room for need rows in the materialization (and row ids: only with row
 * filters; without, row i of it is row i of the capture). */
int dtev_mat_reserve(struct ecur *e, size_t need)
{
	if (need > e->capmat) {
		size_t cap;
		/* parallel arrays, one capacity: the widest (args) sets the bound */
		if (dt_grow_cap(e->capmat, need, DTCAP_MAXARGS * sizeof(uint64_t), 65536, SIZE_MAX,
				&cap))
			return -1;
#define GROW(f, n) do {							\
		if (e->cols & (n)) {						\
			void *p = realloc(e->mat.f, cap * sizeof(*e->mat.f));	\
			if (p == NULL)						\
				return -1;					\
			e->mat.f = p;						\
		}								\
	} while (0)
		GROW(ts, DTCAP_COL_TS); GROW(cpu, DTCAP_COL_CPU);
		GROW(pid, DTCAP_COL_PID); GROW(tid, DTCAP_COL_TID);
		GROW(probe, DTCAP_COL_PROBE); GROW(comm, DTCAP_COL_COMM);
		GROW(kstack, DTCAP_COL_KSTACK); GROW(ustack, DTCAP_COL_USTACK);
		GROW(flags, DTCAP_COL_FLAGS); GROW(nargs, DTCAP_COL_ARGS);
		GROW(ctx, DTCAP_COL_CTX);
#undef GROW
		if (rowfilter(e) || e->stream) {
			void *q = realloc(e->mrid, cap * sizeof(*e->mrid));
			if (q == NULL)
				return -1;
			e->mrid = q;
		}
		if (e->cols & DTCAP_COL_ARGS) {
			void *p = realloc(e->mat.args, cap * DTCAP_MAXARGS * sizeof(uint64_t));
			if (p == NULL)
				return -1;
			e->mat.args = p;
		}
		e->capmat = cap;
	}
	return 0;
}

/* Append the matching rows of the current block to the materialization. */
int dtev_mat_append(struct ecur *e)
{
	if (dtev_mat_reserve(e, e->nmat + e->nrows) < 0)
		return -1;
	int rf = rowfilter(e);
	const struct cols *s = &e->cv;
	struct cols *d = &e->mat;
	size_t n = e->nmat;
	if (!rf) {
		size_t k = e->nrows;
#define CP(f) do { if (d->f) memcpy(d->f + n, s->f, k * sizeof(*d->f)); } while (0)
		CP(ts); CP(cpu); CP(pid); CP(tid); CP(probe); CP(comm);
		CP(kstack); CP(ustack); CP(flags); CP(nargs); CP(ctx);
#undef CP
		if (d->args)
			memcpy(d->args + n * DTCAP_MAXARGS, s->args,
			       k * DTCAP_MAXARGS * sizeof(uint64_t));
		if (e->stream)	/* rows from many reads: their ids kept */
			for (size_t j = 0; j < k; j++)
				e->mrid[n + j] = (uint32_t)(e->rbase + j);
		e->nmat += k;
		return 0;
	}
	uint32_t nr = e->ahead ? e->nsel : e->nrows;
	for (uint32_t k = 0; k < nr; k++) {
		uint32_t i = e->ahead ? e->sel[k] : k;
		if (!e->ahead && !flt_match_row(&e->flt, e->b, i))
			continue;
#define CP(f) do { if (d->f) d->f[n] = s->f[i]; } while (0)
		CP(ts); CP(cpu); CP(pid); CP(tid); CP(probe); CP(comm);
		CP(kstack); CP(ustack); CP(flags); CP(nargs); CP(ctx);
#undef CP
		if (d->args)
			memcpy(d->args + n * DTCAP_MAXARGS, s->args + (size_t)i * DTCAP_MAXARGS,
			       DTCAP_MAXARGS * sizeof(uint64_t));
		e->mrid[n] = (uint32_t)(e->rbase + i);
		n++;
	}
	e->nmat = n;
	return 0;
}


static int ev_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	struct ecur *e = (struct ecur *)cur;
	ev_reset(e);
	e->cols = idxNum & IX_COLS;
	for (int i = 0; i < argc && idxStr && idxStr[i]; i++) {
		char op = idxStr[i];
		uint32_t *set = NULL;
		size_t n = 0;
		int r;
		switch (op) {
		case '=': case '>': case 'g': case '<': case 'l':
			ts_narrow(e, op, argv[i]);
			break;
		case 'p': case 'P':
			if (x_taken(&e->flt, FLT_X_PID))
				break;
			r = set_collect(e, argv[i], op == 'P', 0, &set, &n);
			if (take_set(e, FLT_X_PID, r, set, n) < 0)
				return SQLITE_NOMEM;
			break;
		case 'k': case 'j': case 'K': case 'J': {
			int comm = op == 'k' || op == 'j';
			if (x_taken(&e->flt, comm ? FLT_X_COMM : FLT_X_PROBE))
				break;
			r = pattern_collect(e, argv[i], op == 'k' || op == 'K', comm, &set, &n);
			if (take_set(e, comm ? FLT_X_COMM : FLT_X_PROBE, r, set, n) < 0)
				return SQLITE_NOMEM;
			break;
		}
		case 'c': case 'C':
			if (x_taken(&e->flt, FLT_X_COMM))
				break;
			r = set_collect(e, argv[i], op == 'C', 2, &set, &n);
			if (take_set(e, FLT_X_COMM, r, set, n) < 0)
				return SQLITE_NOMEM;
			break;
		case 'L': case 'H':
			if (sqlite3_value_type(argv[i]) != SQLITE_INTEGER) {
				set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": the ts bounds are integers");
				return SQLITE_ERROR;
			}
			if (op == 'L') {
				int64_t x = sqlite3_value_int64(argv[i]);
				e->glo = e->glo_set && e->glo > x ? e->glo : x;
				e->glo_set = 1;
			} else {
				int64_t x = sqlite3_value_int64(argv[i]);
				e->ghi = e->ghi_set && e->ghi < x ? e->ghi : x;
				e->ghi_set = 1;
			}
			break;
		case 'O': case 'W': {
			if (sqlite3_value_type(argv[i]) != SQLITE_INTEGER ||
			    (op == 'W' && sqlite3_value_int64(argv[i]) <= 0)) {
				set_err(e->base.pVtab, "%s", EVENTS_GROUPED
					": the bucket offset is an integer, its width one above 0");
				return SQLITE_ERROR;
			}
			int64_t x = sqlite3_value_int64(argv[i]);
			if ((op == 'O' ? e->bko_set && e->bko != x : e->bkw_set && e->bkw != x)) {
				set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": two bucket sizes");
				return SQLITE_ERROR;
			}
			if (op == 'O')
				e->bko = x, e->bko_set = 1;
			else
				e->bkw = x, e->bkw_set = 1;
			break;
		}
		case 't': case 'T': case 's': case 'S': case 'u': case 'U': {
			unsigned x = op == 't' || op == 'T' ? XC_TID :
				     op == 's' || op == 'S' ? XC_KSTACK : XC_USTACK;
			if (x_taken(&e->flt, (int)x))
				break;
			r = set_collect(e, argv[i], isupper((unsigned char)op), 0, &set, &n);
			if (take_set(e, (int)x, r, set, n) < 0)
				return SQLITE_NOMEM;
			break;
		}
		default:
			if (strchr(xr_codes, op))
				x_narrow(e, (unsigned)(strchr(xr_codes, op) - xr_codes), argv[i]);
			break;
		case 'r': case 'R': case 'n': case 'N':
			if (x_taken(&e->flt, FLT_X_PROBE))
				break;
			r = set_collect(e, argv[i], op == 'R' || op == 'N',
					op == 'n' || op == 'N', &set, &n);
			if (take_set(e, FLT_X_PROBE, r, set, n) < 0)
				return SQLITE_NOMEM;
			break;
		}
	}
	if (e->empty) {
		e->eof = 1;
		return SQLITE_OK;
	}
	/* row filters read their columns even if the statement does not */
	e->cols |= flt_columns(&e->flt);
	if (e->gtab)
		return dtsql_group_scan(e);
	const char *ord = idxStr ? strchr(idxStr, '|') : NULL;
	if ((idxNum & IX_ORDERED) && ord) {
		e->ordered = 1;
		ord++;
		for (const char *o = ord; o[0] && o[1]; o += 2) {
			int oc = o[0] - 'a';
			if (oc < 0 || oc >= E_NCOLS || !ord_ok(e->c, oc))
				return SQLITE_INTERNAL;
			e->cols |= ecol_need[oc];
		}
		int st = dtev_stream_setup(e, ord);
		if (st < 0)
			return SQLITE_NOMEM;
		int rc = ahead_start(e);
		if (rc != SQLITE_OK)
			return rc;
		return st ? dtev_stream_fill(e) : dtev_materialize(e, ord);
	}
	int rc = ahead_start(e);
	return rc != SQLITE_OK ? rc : dtev_seek(e);
}

static int ev_next(sqlite3_vtab_cursor *cur)
{
	struct ecur *e = (struct ecur *)cur;
	if (e->grouped) {
		if (++e->pos >= e->nmat)
			e->eof = 1;
		e->row = (uint32_t)e->pos;
		return SQLITE_OK;
	}
	if (e->stream) {
		if (++e->pos < e->nemit) {
			e->row = e->perm[e->pos];
			return SQLITE_OK;
		}
		return dtev_stream_fill(e);
	}
	if (e->ordered) {
		if (++e->pos >= e->nmat) {
			e->eof = 1;
			return SQLITE_OK;
		}
		e->row = e->perm[e->pos];
		if (e->pos + 16 < e->nmat) {
			size_t ahead = e->perm[e->pos + 16];
			for (unsigned k = 0; k < e->npf; k++)
				__builtin_prefetch(e->pf[k] + ahead * e->pfsz[k]);
		}
		return SQLITE_OK;
	}
	if (e->ahead)
		e->si++;
	else
		e->row++;
	return dtev_seek(e);
}

static int ev_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct ecur *)cur)->eof;
}

static int ev_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct ecur *e = (struct ecur *)cur;
	const struct cols *cv = &e->cv;
	size_t i = e->row;
	int len;
	const char *s;
	const struct dtcap_probe *p;

	if (col == E_ROWS) {
		if (e->grouped)
			sqlite3_result_int64(ctx, (sqlite3_int64)e->gcount[i]);
		return SQLITE_OK;
	}
	if (col == E_TSLO || col == E_TSHI) {
		if (col == E_TSLO ? e->glo_set : e->ghi_set)
			sqlite3_result_int64(ctx, col == E_TSLO ? e->glo : e->ghi);
		return SQLITE_OK;
	}
	if (col == E_RETVAL && e->grouped) {
		if (e->gret && e->gretok[i])
			sqlite3_result_int64(ctx, e->gret[i]);
		return SQLITE_OK;
	}
	if (col == E_BUCKET) {
		if (e->grouped && e->gbucket)
			sqlite3_result_int64(ctx, e->gbucket[i]);
		return SQLITE_OK;
	}
	if (col == E_BKOFF || col == E_BKW) {
		if (col == E_BKOFF ? e->bko_set : e->bkw_set)
			sqlite3_result_int64(ctx, col == E_BKOFF ? e->bko : e->bkw);
		return SQLITE_OK;
	}
	/* A column not decoded (a plan we did not foresee) reads as NULL
	 * rather than crashing. */
	if (col < 0 || col > E_NCOLS || (ecol_need[col] & e->cols) != ecol_need[col])
		return SQLITE_OK;
	switch (col) {
	case E_TS: sqlite3_result_int64(ctx, (sqlite3_int64)cv->ts[i]); break;
	case E_CPU: sqlite3_result_int64(ctx, cv->cpu[i]); break;
	case E_PID: sqlite3_result_int64(ctx, cv->pid[i]); break;
	case E_TID: sqlite3_result_int64(ctx, cv->tid[i]); break;
	case E_PROBE: sqlite3_result_int64(ctx, cv->probe[i]); break;
	case E_PROBE_NAME:
		p = ctx_probe(e->c, cv->probe[i]);
		if (p)
			sqlite3_result_text(ctx, ctx_probe_name(e->c, p), -1, SQLITE_STATIC);
		break;
	case E_COMM:
		s = ctx_comm(e->c, cv->comm[i], &len);
		if (s)
			sqlite3_result_text(ctx, s, len, SQLITE_STATIC);
		break;
	case E_KSTACK: sqlite3_result_int64(ctx, cv->kstack[i]); break;
	case E_USTACK: sqlite3_result_int64(ctx, cv->ustack[i]); break;
	case E_FLAGS: sqlite3_result_int64(ctx, cv->flags[i]); break;
	case E_NARGS: sqlite3_result_int64(ctx, cv->nargs[i]); break;
	case E_CTX:
		if (dtcap_ctx_name(cv->ctx[i]))
			sqlite3_result_text(ctx, dtcap_ctx_name(cv->ctx[i]), -1, SQLITE_STATIC);
		break;
	case E_RETVAL:
	case E_ERRNO:
		if (cv->flags[i] & DTR_RETURN)
			sqlite3_result_int64(ctx, (sqlite3_int64)
				cv->args[i * DTCAP_MAXARGS + (col == E_ERRNO)]);
		break;
	default:
		if (col >= E_ARG0 && col <= E_ARG9)
			sqlite3_result_int64(ctx, (sqlite3_int64)
					     cv->args[i * DTCAP_MAXARGS + (col - E_ARG0)]);
		break;
	}
	return SQLITE_OK;
}

static int ev_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct ecur *e = (struct ecur *)cur;
	/* from 1, as in an export; a group's is its position */
	if (e->grouped) {
		*rowid = 1 + (sqlite3_int64)e->pos;
		return SQLITE_OK;
	}
	*rowid = 1 + (e->ordered ? (e->mrid ? (sqlite3_int64)e->mrid[e->row] : (sqlite3_int64)e->row)
			         : (sqlite3_int64)(e->rbase + e->row));
	return SQLITE_OK;
}

/* Eponymous-only (xCreate NULL): the tables exist without CREATE. */
const sqlite3_module dtsql_events_module = {
	.iVersion = 0,
	.xConnect = dtsql_x_connect, .xBestIndex = ev_best_index,
	.xDisconnect = dtsql_x_disconnect, .xOpen = ev_open, .xClose = ev_close,
	.xFilter = ev_filter, .xNext = ev_next, .xEof = ev_eof,
	.xColumn = ev_column, .xRowid = ev_rowid,
};
