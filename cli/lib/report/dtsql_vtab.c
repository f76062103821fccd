/*
 * dtsql_vtab.c - sqlite3 virtual tables over a .dtc capture, the sym()
 * functions and dtsql_attach.  See dtsql.h and doc/SQL.md.
 *
 * The events table is the one that matters for speed: a capture holds tens
 * of millions of rows, so it reads the capture block by block and column by
 * column (only the columns the statement uses, as told by colUsed), skips
 * whole blocks whose index (time and pid ranges) cannot match, and keeps
 * xColumn a plain array load.  When the statement orders or groups by one
 * cheap column (comm, pid, tid, cpu, probe, probe_name) it materializes
 * the used columns, radix-sorts row numbers and hands rows over in order,
 * so sqlite needs no sorter of its own: a GROUP BY then streams.
 * events_grouped (dtsql_int.h) is the same cursor counting the events of
 * each distinct key instead of handing them over one by one.
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
#include "dtsql_int.h"
#include "dtsym.h"
#include "util.h"

/* ------------------------------------------------------------ context */

static void ctx_unref(struct dtsql *c)
{
	if (c == NULL || --c->refs > 0)
		return;
	if (c->comm_own)
		for (uint32_t i = 0; i <= c->ncomms; i++)
			free(c->comm_own[i]);
	free(c->comm_own);
	free(c->comm);
	free(c->comm_len);
	free(c->comm_rank);
	if (c->probe_name_own)
		for (uint32_t i = 0; i <= c->probe_max; i++)
			free(c->probe_name_own[i]);
	free(c->probe_name_own);
	free(c->probe_name);
	free(c->probe);
	free(c->probe_rank);
	free(c->ufirst_pid);
	free(c->ufirst_ts);
	free(c->probe_by_id);
	free(c->block_base);
	free(c);
}

static int cmp_comm(const void *a, const void *b, void *arg)
{
	const struct dtsql *sort_ctx = arg;
	const char *x = sort_ctx->comm[*(const uint32_t *)a];
	const char *y = sort_ctx->comm[*(const uint32_t *)b];
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	return strcmp(x, y);
}

static int cmp_probe(const void *a, const void *b, void *arg)
{
	const struct dtsql *sort_ctx = arg;
	const struct dtcap_probe *x = sort_ctx->probe[*(const uint32_t *)a];
	const struct dtcap_probe *y = sort_ctx->probe[*(const uint32_t *)b];
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	return strcmp(x->name, y->name);
}

static struct dtsql *ctx_new(struct dtcap_reader *r, struct dtsym *sym)
{
	struct dtsql *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->r = r;
	c->sym = sym;
	c->ncomms = dtcap_ncomms(r);
	size_t n = (size_t)c->ncomms + 1;
	c->comm = calloc(n, sizeof(*c->comm));
	c->comm_len = calloc(n, sizeof(*c->comm_len));
	c->comm_rank = calloc(n, sizeof(*c->comm_rank));
	c->comm_own = calloc(n, sizeof(*c->comm_own));
	uint32_t *ids = calloc(n, sizeof(*ids));
	if (!c->comm || !c->comm_len || !c->comm_rank || !c->comm_own || !ids)
		goto fail;
	char *fixbuf = NULL;
	size_t fixcap = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *cm = i ? dtcap_comm(r, i) : NULL;
		size_t len = 0;
		if (cm) {
			const char *v = dtu_utf8_fix(cm, strlen(cm), &len, &fixbuf, &fixcap);
			if (v != cm && (v == NULL || !(c->comm_own[i] = strdup(v)))) {
				free(fixbuf);
				goto fail;
			}
			cm = c->comm_own[i] ? c->comm_own[i] : cm;
		}
		c->comm[i] = cm;
		c->comm_len[i] = (int)len;
		ids[i] = i;
	}
	free(fixbuf);
	qsort_r(ids, n, sizeof(*ids), cmp_comm, c);
	for (uint32_t i = 0; i < n; i++)
		c->comm_rank[ids[i]] = i;
	free(ids);
	ids = NULL;

	for (size_t i = 0; i < dtcap_nprobes(r); i++) {
		uint32_t id = dtcap_probe_at(r, i)->id;
		if (id < PROBE_DENSE_MAX && id > c->probe_max)
			c->probe_max = id;
		if (id >= PROBE_DENSE_MAX)
			c->probe_sparse = 1;
	}
	n = (size_t)c->probe_max + 1;
	c->probe = calloc(n, sizeof(*c->probe));
	c->probe_rank = calloc(n, sizeof(*c->probe_rank));
	ids = calloc(n, sizeof(*ids));
	if (!c->probe || !c->probe_rank || !ids)
		goto fail;
	for (size_t i = 0; i < dtcap_nprobes(r); i++) {
		const struct dtcap_probe *p = dtcap_probe_at(r, i);
		if (p->id < n)
			c->probe[p->id] = p;
	}
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	qsort_r(ids, n, sizeof(*ids), cmp_probe, c);
	for (uint32_t i = 0; i < n; i++)
		c->probe_rank[ids[i]] = i;
	free(ids);
	ids = NULL;
	c->probe_name = calloc(n, sizeof(*c->probe_name));
	c->probe_name_own = calloc(n, sizeof(*c->probe_name_own));
	if (!c->probe_name || !c->probe_name_own)
		goto fail;
	{
		char *fixbuf = NULL;
		size_t fixcap = 0, len;
		for (uint32_t i = 0; i < n; i++) {
			const char *nm = c->probe[i] ? c->probe[i]->name : NULL;
			const char *v = nm ? dtu_utf8_fix(nm, strnlen(nm, DTCAP_PROBENAMELEN), &len,
							  &fixbuf, &fixcap) : NULL;
			if (nm && (v == NULL || (v != nm && !(c->probe_name_own[i] = strdup(v))))) {
				free(fixbuf);
				goto fail;
			}
			c->probe_name[i] = c->probe_name_own[i] ? c->probe_name_own[i] : nm;
		}
		free(fixbuf);
	}

	size_t nb = dtcap_nblocks(r);
	c->block_base = calloc(nb + 1, sizeof(*c->block_base));
	if (c->block_base == NULL)
		goto fail;
	for (size_t i = 0; i < nb; i++)
		c->block_base[i + 1] = c->block_base[i] + dtcap_block_info(r, i)->rows;
	c->refs = 1;
	return c;
fail:
	free(ids);
	c->refs = 1;
	ctx_unref(c);
	return NULL;
}

/* Scan pid, ts and ustack once to know where each user stack first ran. */
static int ctx_ufirst(struct dtsql *c, char **err)
{
	if (c->ufirst_done)
		return 0;
	uint32_t ns = dtcap_nstacks(c->r);
	c->ufirst_pid = calloc((size_t)ns + 1, sizeof(*c->ufirst_pid));
	c->ufirst_ts = calloc((size_t)ns + 1, sizeof(*c->ufirst_ts));
	struct dtcap_block *b = dtcap_block_new();
	if (!c->ufirst_pid || !c->ufirst_ts || !b) {
		dtcap_block_free(b);
		*err = sqlite3_mprintf("out of memory");
		return -1;
	}
	for (uint32_t i = 0; i <= ns; i++)
		c->ufirst_ts[i] = UINT64_MAX;
	for (size_t i = 0; i < dtcap_nblocks(c->r); i++) {
		if (dtcap_read_block(c->r, i, DTCAP_COL_TS | DTCAP_COL_PID |
				     DTCAP_COL_USTACK, b) < 0) {
			*err = sqlite3_mprintf("%s", dtcap_reader_error(c->r));
			dtcap_block_free(b);
			return -1;
		}
		for (uint32_t j = 0; j < b->rows; j++) {
			uint32_t s = b->ustack[j];
			if (s != 0 && s <= ns && b->ts[j] < c->ufirst_ts[s]) {
				c->ufirst_ts[s] = b->ts[j];
				c->ufirst_pid[s] = b->pid[j];
			}
		}
	}
	dtcap_block_free(b);
	c->ufirst_done = 1;
	return 0;
}

/* The capture columns each events column needs. */
static const unsigned ecol_need[E_NCOLS] = {
	[E_TS] = DTCAP_COL_TS, [E_CPU] = DTCAP_COL_CPU,
	[E_PID] = DTCAP_COL_PID, [E_TID] = DTCAP_COL_TID,
	[E_PROBE] = DTCAP_COL_PROBE, [E_PROBE_NAME] = DTCAP_COL_PROBE,
	[E_COMM] = DTCAP_COL_COMM, [E_KSTACK] = DTCAP_COL_KSTACK,
	[E_USTACK] = DTCAP_COL_USTACK, [E_FLAGS] = DTCAP_COL_FLAGS,
	[E_NARGS] = DTCAP_COL_ARGS,
	[E_ARG0] = DTCAP_COL_ARGS, [E_ARG0 + 1] = DTCAP_COL_ARGS,
	[E_ARG0 + 2] = DTCAP_COL_ARGS, [E_ARG0 + 3] = DTCAP_COL_ARGS,
	[E_ARG0 + 4] = DTCAP_COL_ARGS, [E_ARG0 + 5] = DTCAP_COL_ARGS,
	[E_ARG0 + 6] = DTCAP_COL_ARGS, [E_ARG0 + 7] = DTCAP_COL_ARGS,
	[E_ARG0 + 8] = DTCAP_COL_ARGS, [E_ARG9] = DTCAP_COL_ARGS,
	[E_RETVAL] = DTCAP_COL_FLAGS | DTCAP_COL_ARGS,
	[E_ERRNO] = DTCAP_COL_FLAGS | DTCAP_COL_ARGS,
	[E_CTX] = DTCAP_COL_CTX,
};

volatile sig_atomic_t *dtsql_cancel;

/* ------------------------------------------------------ generic vtab */

struct modaux {
	struct dtsql	*c;
	int		kind;
};

struct tab {
	sqlite3_vtab	base;
	struct dtsql	*c;
	int		kind;
};

static void modaux_free(void *p)
{
	struct modaux *m = p;
	ctx_unref(m->c);
	free(m);
}

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		     sqlite3_vtab **out, char **err)
{
	(void)argc; (void)argv;
	struct modaux *m = aux;
	char *sql = m->kind == T_EVENTS_GROUPED
		? sqlite3_mprintf("CREATE TABLE x(%s, " E_ROWS_NAME " INTEGER, "
				  E_TSLO_NAME " INTEGER HIDDEN, " E_TSHI_NAME " INTEGER HIDDEN, "
				  E_BUCKET_NAME " INTEGER HIDDEN, " E_BKOFF_NAME " INTEGER HIDDEN, "
				  E_BKW_NAME " INTEGER HIDDEN)",
				  dtsql_tab[T_EVENTS].cols)
		: sqlite3_mprintf("CREATE TABLE x(%s)", dtsql_tab[m->kind].cols);
	if (sql == NULL)
		return SQLITE_NOMEM;
	int rc = sqlite3_declare_vtab(db, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return rc;
	}
	struct tab *t = sqlite3_malloc(sizeof(*t));
	if (t == NULL)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->c = m->c;
	t->kind = m->kind;
	*out = &t->base;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static void set_err(sqlite3_vtab *v, const char *fmt, const char *s)
{
	sqlite3_free(v->zErrMsg);
	v->zErrMsg = sqlite3_mprintf(fmt, s);
}

/* ------------------------------------------------------------- events */

/* Materialized (ordered mode) or decoded (streaming mode) columns. */
struct cols {
	uint64_t	*ts;
	uint32_t	*cpu, *pid, *tid, *probe, *comm, *kstack, *ustack, *flags;
	uint8_t		*nargs, *ctx;
	uint64_t	*args;
};

struct ecur {
	sqlite3_vtab_cursor base;
	struct dtsql	*c;
	unsigned	cols;		/* DTCAP_COL_* to decode */

	/* pushed-down filters; all conservative (sqlite re-checks) */
	int		tsf;		/* ts filter active */
	uint64_t	tlo, thi;	/* inclusive */
	int		pidf;
	uint32_t	*pids;		/* sorted */
	size_t		npids;
	int		commf;
	uint32_t	*comms;		/* comm ids, sorted */
	size_t		ncomms;
	int		probef;
	uint32_t	*probes;	/* sorted */
	size_t		nprobes;
	/* sets (not pid's: pidf above) and ranges of the per-context integer
	 * columns, bit x for XC_x; grouped, they are evaluated once per
	 * context of a block */
	unsigned	xsetf, xrngf;
	uint32_t	*xset[5];	/* sorted */
	size_t		nxset[5];
	uint32_t	xlo[5], xhi[5];	/* inclusive */
	int		empty;

	/* streaming */
	struct dtcap_block *b;
	size_t		b_blk;		/* block held decoded in b (joins come */
	unsigned	b_cols;		/* back to it), SIZE_MAX: none */
	size_t		blk;		/* next block to look at */
	uint64_t	rbase;		/* rowid of row 0 of the current block */
	uint32_t	nrows, row;
	int		eof;
	struct cols	cv;		/* the current arrays */

	/* ordered */
	int		ordered;
	struct cols	mat;
	size_t		nmat, capmat;
	uint32_t	*mrid;		/* capture index (rowid) of each row */
	uint32_t	*perm;		/* row numbers in output order */
	size_t		pos;
	/* the materialized arrays, to fetch rows ahead in perm order: the
	 * arrays outgrow the caches and perm jumps about them */
	const char	*pf[16];
	unsigned	pfsz[16], npf;

	/* events_grouped: mat holds one row per group (nmat of them), with
	 * its event count in gcount */
	int		gtab;		/* the cursor is events_grouped's */
	int		grouped;
	int		glo_set, ghi_set;	/* _dt_ts_lo/_dt_ts_hi given */
	int64_t		glo, ghi;
	uint64_t	*gcount;
	int		bko_set, bkw_set;	/* _dt_bk_off/_dt_bk_w given */
	int64_t		bko, bkw;
	int64_t		*gbucket;	/* each group's _dt_bucket */
	int64_t		*gret;		/* each group's retval, when grouped by it */
	uint8_t		*gretok;	/* 0: the retval is NULL */
};

/*
 * The per-context integer columns filtered by sets and ranges: XC_x is
 * bit x of xsetf/xrngf.  A range constraint's idxStr code is
 * xr_codes[x * 4 + its operator (0 >, 1 >=, 2 <, 3 <=)]: characters no other
 * constraint's code is, printable for EXPLAIN QUERY PLAN's readers.
 */
enum { XC_PID, XC_TID, XC_KSTACK, XC_USTACK, XC_FLAGS, XC_N };
static const struct { int ecol; unsigned col; } xcols[XC_N] = {
	{E_PID, DTCAP_COL_PID}, {E_TID, DTCAP_COL_TID}, {E_KSTACK, DTCAP_COL_KSTACK},
	{E_USTACK, DTCAP_COL_USTACK}, {E_FLAGS, DTCAP_COL_FLAGS},
};
static const char xr_codes[] = "0123456789ABDEFGIMQV";

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

/* The capture columns events_grouped groups by: those of few values. */
#define GROUP_COLS	(DTCAP_COL_CPU | DTCAP_COL_PID | DTCAP_COL_TID |	\
			 DTCAP_COL_PROBE | DTCAP_COL_COMM | DTCAP_COL_KSTACK |	\
			 DTCAP_COL_USTACK | DTCAP_COL_FLAGS | DTCAP_COL_CTX)
/* Those of them the capture stores once per context of a block. */
#define CTX_COLS	(GROUP_COLS & ~DTCAP_COL_CPU)

/* Materializing more than this (bytes) is left to sqlite's sorter. */
#define MAT_MAX		(768ull << 20)

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
	/* row numbers are kept in 32 bits */
	if (okob && !gtab && rows <= (double)UINT32_MAX &&
	    (double)(col_bytes(need) + 20) * rows <= (double)MAT_MAX) {
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

static void ev_reset(struct ecur *e)
{
	free(e->pids);
	free(e->probes);
	free(e->comms);
	for (int x = 0; x < XC_N; x++)
		free(e->xset[x]);
	free(e->mat.ts); free(e->mat.cpu); free(e->mat.pid); free(e->mat.tid);
	free(e->mat.probe); free(e->mat.comm); free(e->mat.kstack);
	free(e->mat.ustack); free(e->mat.flags); free(e->mat.nargs); free(e->mat.ctx);
	free(e->mat.args);
	free(e->perm);
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

/* An sqlite value as an exact integer, or 0 when it is not one. */
static int val_int(sqlite3_value *v, int64_t *out)
{
	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		*out = sqlite3_value_int64(v);
		return 1;
	case SQLITE_FLOAT: {
		double d = sqlite3_value_double(v);
		if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18) {
			*out = (int64_t)d;
			return 1;
		}
		return 0;
	}
	default:
		return 0;
	}
}

/* Narrow [tlo, thi] by "ts OP v"; non-numeric values narrow nothing. */
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
	if (lo > e->tlo) e->tlo = lo;
	if (hi < e->thi) e->thi = hi;
	e->tsf = 1;
	if (e->tlo > e->thi)
		e->empty = 1;
}

/*
 * Narrow per-context column c / 4's range by "col OP v", OP c % 4; values
 * that are not integers narrow nothing (sqlite re-checks every row), NULL
 * matches nothing.
 */
static void x_narrow(struct ecur *e, unsigned c, sqlite3_value *v)
{
	unsigned x = c / 4, o = c % 4;
	int64_t iv, lo = 0, hi = UINT32_MAX;
	if (x >= XC_N)
		return;
	if (sqlite3_value_type(v) == SQLITE_NULL) {
		e->empty = 1;
		return;
	}
	if (!val_int(v, &iv))
		return;
	switch (o) {
	case 0: lo = iv >= INT64_MAX ? INT64_MAX : iv + 1; break;
	case 1: lo = iv; break;
	case 2: hi = iv <= INT64_MIN ? INT64_MIN : iv - 1; break;
	default: hi = iv; break;
	}
	if (!(e->xrngf >> x & 1)) {
		e->xlo[x] = 0;
		e->xhi[x] = UINT32_MAX;
		e->xrngf |= 1u << x;
	}
	if (lo > (int64_t)UINT32_MAX || hi < 0 || lo > hi) {
		e->empty = 1;
		return;
	}
	if (lo > (int64_t)e->xlo[x])
		e->xlo[x] = (uint32_t)lo;
	if (hi < (int64_t)e->xhi[x])
		e->xhi[x] = (uint32_t)hi;
	if (e->xlo[x] > e->xhi[x])
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
			if (!val_int(x, &iv))
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
 * "comm/probe_name LIKE/GLOB pattern": the ids whose text matches, as the
 * comm or probe set.  LIKE is matched case-insensitively, a superset of
 * what PRAGMA case_sensitive_like may ask for (sqlite re-checks rows).
 */
static int pattern_collect(struct ecur *e, sqlite3_value *v, int like, int comm)
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
	if (comm) {
		free(e->comms);
		e->comms = set;
		e->ncomms = n;
		e->commf = 1;
	} else {
		free(e->probes);
		e->probes = set;
		e->nprobes = n;
		e->probef = 1;
	}
	if (n == 0)
		e->empty = 1;
	return 1;
}

static int in_set(const uint32_t *s, size_t n, uint32_t v)
{
	if (n == 1)
		return s[0] == v;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s[mid] < v)
			lo = mid + 1;
		else if (s[mid] > v)
			hi = mid;
		else
			return 1;
	}
	return 0;
}

/* Does value v of per-context column x pass its set and range? */
static inline int x_ok(const struct ecur *e, unsigned x, uint32_t v)
{
	if ((e->xrngf >> x & 1) && (v < e->xlo[x] || v > e->xhi[x]))
		return 0;
	if ((e->xsetf >> x & 1) && !in_set(e->xset[x], e->nxset[x], v))
		return 0;
	return 1;
}

static const uint32_t *x_rows(const struct cols *cv, unsigned x)
{
	switch (x) {
	case XC_PID: return cv->pid;
	case XC_TID: return cv->tid;
	case XC_KSTACK: return cv->kstack;
	case XC_USTACK: return cv->ustack;
	default: return cv->flags;
	}
}

static const uint32_t *x_dict(const struct dtcap_block *b, unsigned x)
{
	switch (x) {
	case XC_PID: return b->dict.pid;
	case XC_TID: return b->dict.tid;
	case XC_KSTACK: return b->dict.kstack;
	case XC_USTACK: return b->dict.ustack;
	default: return b->dict.flags;
	}
}

static inline int row_ok(const struct ecur *e, const struct cols *cv, size_t i)
{
	for (unsigned x = 0, m = e->xsetf | e->xrngf; m >> x; x++)
		if ((m >> x & 1) && !x_ok(e, x, x_rows(cv, x)[i]))
			return 0;
	if (e->tsf && (cv->ts[i] < e->tlo || cv->ts[i] > e->thi))
		return 0;
	if (e->pidf && !in_set(e->pids, e->npids, cv->pid[i]))
		return 0;
	if (e->probef && !in_set(e->probes, e->nprobes, cv->probe[i]))
		return 0;
	if (e->commf && !in_set(e->comms, e->ncomms, cv->comm[i]))
		return 0;
	return 1;
}

static int block_may_match(const struct ecur *e, const struct dtcap_blockinfo *bi)
{
	if (bi->rows == 0)
		return 0;
	if (e->tsf && (bi->tmax < e->tlo || bi->tmin > e->thi))
		return 0;
	if (e->pidf) {
		/* any pid of the set within [pid_min, pid_max]? */
		size_t lo = 0, hi = e->npids;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (e->pids[mid] < bi->pid_min)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == e->npids || e->pids[lo] > bi->pid_max)
			return 0;
	}
	if ((e->xrngf >> XC_PID & 1) &&
	    (bi->pid_max < e->xlo[XC_PID] || bi->pid_min > e->xhi[XC_PID]))
		return 0;
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

/* Load the next block that may match; 0 with e->eof set at the end. */
static int ev_next_block(struct ecur *e)
{
	struct dtcap_reader *r = e->c->r;
	size_t nb = dtcap_nblocks(r);
	while (e->blk < nb) {
		size_t i = e->blk++;
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if (!block_may_match(e, bi))
			continue;
		e->rbase = e->c->block_base[i];
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
	return e->tsf || e->pidf || e->probef || e->commf || e->xsetf || e->xrngf;
}

static int ev_seek(struct ecur *e)
{
	int rf = rowfilter(e);
	for (;;) {
		while (e->row < e->nrows) {
			if (!rf || row_ok(e, &e->cv, e->row))
				return SQLITE_OK;
			e->row++;
		}
		int rc = ev_next_block(e);
		if (rc == -2)
			return SQLITE_NOMEM;
		if (rc < 0) {
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
static int mat_reserve(struct ecur *e, size_t need)
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
		if (rowfilter(e)) {
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
static int mat_append(struct ecur *e)
{
	if (mat_reserve(e, e->nmat + e->nrows) < 0)
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
		e->nmat += k;
		return 0;
	}
	for (uint32_t i = 0; i < e->nrows; i++) {
		if (!row_ok(e, s, i))
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


/* The sort key of row i for column col, as an unsigned 64-bit number. */
static uint64_t sort_key(const struct ecur *e, int col, size_t i)
{
	const struct dtsql *c = e->c;
	uint32_t v;
	switch (col) {
	case E_COMM:
		v = e->mat.comm[i];
		return v <= c->ncomms ? c->comm_rank[v] : 0;
	case E_PROBE_NAME:
		v = e->mat.probe[i];
		/* unknown ids have no name: NULL sorts first */
		return v <= c->probe_max && c->probe[v] ? c->probe_rank[v] : 0;
	case E_PID: return e->mat.pid[i];
	case E_TID: return e->mat.tid[i];
	case E_CPU: return e->mat.cpu[i];
	case E_PROBE: return e->mat.probe[i];
	case E_TS: return e->mat.ts[i] ^ (1ULL << 63);	/* signed order */
	}
	return 0;
}

/*
 * Read the matching rows into memory and order them by the terms of ord
 * ("c+" / "c-" per term, c = 'a' + column): LSD radix sorts, last term
 * first, each stable and skipping the bytes every key shares.
 */
static int ev_materialize(struct ecur *e, const char *ord)
{
	int rc;
	if (e->cols) {
		/* every row of the blocks that may match: one allocation, not a
		 * doubling series of copies */
		size_t total = 0;
		for (size_t i = 0; i < dtcap_nblocks(e->c->r); i++) {
			const struct dtcap_blockinfo *bi = dtcap_block_info(e->c->r, i);
			if (block_may_match(e, bi))
				total += bi->rows;
		}
		if (mat_reserve(e, total) < 0)
			return SQLITE_NOMEM;
	}
	while ((rc = ev_seek(e)) == SQLITE_OK && !e->eof) {
		if (e->cols == 0) {
			e->nmat += e->nrows;	/* rows with no column at all */
		} else if (mat_append(e) < 0) {
			return SQLITE_NOMEM;
		}
		e->row = e->nrows;	/* whole block done */
	}
	if (rc != SQLITE_OK)
		return rc;
	if (e->nmat > UINT32_MAX) {
		set_err(e->base.pVtab, "%s", "too many rows to order");
		return SQLITE_ERROR;
	}
	size_t n = e->nmat;
	uint64_t *kv = malloc((n ? n : 1) * sizeof(*kv));
	uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	e->perm = malloc((n ? n : 1) * sizeof(*e->perm));
	if (kv == NULL || tmp == NULL || e->perm == NULL) {
		free(kv);
		free(tmp);
		return SQLITE_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		e->perm[i] = (uint32_t)i;
	int nterm = (int)strlen(ord) / 2;
	for (int t = nterm - 1; t >= 0; t--) {
		int col = ord[2 * t] - 'a', desc = ord[2 * t + 1] == '-';
		uint64_t kor = 0, kand = UINT64_MAX;
		for (size_t i = 0; i < n; i++) {
			uint64_t k = sort_key(e, col, i);
			kv[i] = desc ? ~k : k;
			kor |= kv[i];
			kand &= kv[i];
		}
		/* bytes every key shares sort nothing: count only the others
		 * (one of eight for a comm or probe name rank) */
		uint64_t vary = kor ^ kand;
		int bs[8], nb = 0;
		for (int b = 0; b < 8; b++)
			if ((vary >> (8 * b)) & 0xff)
				bs[nb++] = b;
		size_t cnt[8][256];
		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < n; i++)
			for (int j = 0; j < nb; j++)
				cnt[j][(kv[i] >> (8 * bs[j])) & 0xff]++;
		uint32_t *src = e->perm, *dst = tmp;
		for (int j = 0; j < nb; j++) {
			int b = bs[j];
			size_t *cb = cnt[j];
			size_t sum = 0;
			for (int k = 0; k < 256; k++) {
				size_t x = cb[k];
				cb[k] = sum;
				sum += x;
			}
			for (size_t i = 0; i < n; i++)
				dst[cb[(kv[src[i]] >> (8 * b)) & 0xff]++] = src[i];
			uint32_t *x = src; src = dst; dst = x;
		}
		if (src != e->perm) {
			memcpy(e->perm, src, n * sizeof(*src));
		}
	}
	free(kv);
	free(tmp);
	e->cv = e->mat;
	e->npf = 0;
#define PF(a) do {							\
		if (e->mat.a) {						\
			e->pf[e->npf] = (const char *)e->mat.a;		\
			e->pfsz[e->npf++] = sizeof(*e->mat.a);		\
		}							\
	} while (0)
	PF(ts); PF(cpu); PF(pid); PF(tid); PF(probe); PF(comm); PF(kstack);
	PF(ustack); PF(flags); PF(nargs); PF(ctx);
#undef PF
	if (e->mat.args) {	/* rows of DTCAP_MAXARGS values */
		e->pf[e->npf] = (const char *)e->mat.args;
		e->pfsz[e->npf++] = DTCAP_MAXARGS * sizeof(*e->mat.args);
	}
	if (e->mrid) {
		e->pf[e->npf] = (const char *)e->mrid;
		e->pfsz[e->npf++] = sizeof(*e->mrid);
	}
	e->pos = 0;
	e->eof = n == 0;
	e->row = n ? e->perm[0] : 0;
	return SQLITE_OK;
}

/* ----------------------------------------------------- events_grouped */

/* The grouped columns in key order, with their block and dict arrays. */
static const unsigned gkey_col[] = {
	DTCAP_COL_CPU, DTCAP_COL_PID, DTCAP_COL_TID, DTCAP_COL_PROBE,
	DTCAP_COL_COMM, DTCAP_COL_KSTACK, DTCAP_COL_USTACK, DTCAP_COL_FLAGS,
	DTCAP_COL_CTX,
};
#define NGKEY	(sizeof(gkey_col) / sizeof(gkey_col[0]))

/* Open addressing over packed keys of nk words; cnt 0 marks a free slot
 * (every group holds at least one event). */
struct ghash {
	unsigned	nk;
	size_t		cap, n;		/* cap a power of two */
	uint32_t	*key;		/* cap * nk */
	uint64_t	*cnt;
};

static uint64_t ghash_of(const uint32_t *k, unsigned nk)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < nk; i++)
		h = (h ^ k[i]) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

static int ghash_grow(struct ghash *g)
{
	size_t cap = g->cap ? g->cap * 2 : 256;
	uint32_t *key = malloc(cap * (g->nk ? g->nk : 1) * sizeof(*key));
	uint64_t *cnt = calloc(cap, sizeof(*cnt));
	if (key == NULL || cnt == NULL || cap > SIZE_MAX / 64) {
		free(key);
		free(cnt);
		return -1;
	}
	for (size_t i = 0; i < g->cap; i++) {
		if (g->cnt[i] == 0)
			continue;
		const uint32_t *k = g->key + i * g->nk;
		size_t s = ghash_of(k, g->nk) & (cap - 1);
		while (cnt[s])
			s = (s + 1) & (cap - 1);
		memcpy(key + s * g->nk, k, g->nk * sizeof(*k));
		cnt[s] = g->cnt[i];
	}
	free(g->key);
	free(g->cnt);
	g->key = key;
	g->cnt = cnt;
	g->cap = cap;
	return 0;
}

/* Keys are a few words: compared inline, not through memcmp's call. */
static inline int keq(const uint32_t *a, const uint32_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* Add n events to the group of key k. */
static int ghash_add(struct ghash *g, const uint32_t *k, uint64_t n)
{
	if (2 * (g->n + 1) > g->cap && ghash_grow(g) < 0)
		return -1;
	size_t s = ghash_of(k, g->nk) & (g->cap - 1);
	for (;; s = (s + 1) & (g->cap - 1)) {
		if (g->cnt[s] == 0) {
			memcpy(g->key + s * g->nk, k, g->nk * sizeof(*k));
			g->cnt[s] = n;
			g->n++;
			return 0;
		}
		if (keq(g->key + s * g->nk, k, g->nk)) {
			g->cnt[s] += n;
			return 0;
		}
	}
}

/* Does context d of block b pass the pushed-down pid/probe/comm sets? */
static int ctx_ok(const struct ecur *e, const struct dtcap_block *b, uint32_t d)
{
	if (e->pidf && !in_set(e->pids, e->npids, b->dict.pid[d]))
		return 0;
	if (e->probef && !in_set(e->probes, e->nprobes, b->dict.probe[d]))
		return 0;
	if (e->commf && !in_set(e->comms, e->ncomms, b->dict.comm[d]))
		return 0;
	for (unsigned x = 0, m = e->xsetf | e->xrngf; m >> x; x++)
		if ((m >> x & 1) && !x_ok(e, x, x_dict(b, x)[d]))
			return 0;
	return 1;
}

/* Is a per-context filter pushed down (then every one's column is read
 * per context, grouped)? */
static int ctx_filtered(const struct ecur *e)
{
	return e->pidf || e->probef || e->commf || e->xsetf || e->xrngf;
}

/* Does any context of block b pass?  (Else its rows need no look.) */
static int any_ctx_ok(const struct ecur *e, const struct dtcap_block *b)
{
	for (uint32_t d = 0; d < b->ndict; d++)
		if (ctx_ok(e, b, d))
			return 1;
	return 0;
}

/* The key of context d (and cpu, when grouped by it) into k. */
static void ctx_key(const struct dtcap_block *b, unsigned gcols, uint32_t d, uint32_t cpu,
		    uint32_t *k)
{
	unsigned n = 0;
	if (gcols & DTCAP_COL_CPU) k[n++] = cpu;
	if (gcols & DTCAP_COL_PID) k[n++] = b->dict.pid[d];
	if (gcols & DTCAP_COL_TID) k[n++] = b->dict.tid[d];
	if (gcols & DTCAP_COL_PROBE) k[n++] = b->dict.probe[d];
	if (gcols & DTCAP_COL_COMM) k[n++] = b->dict.comm[d];
	if (gcols & DTCAP_COL_KSTACK) k[n++] = b->dict.kstack[d];
	if (gcols & DTCAP_COL_USTACK) k[n++] = b->dict.ustack[d];
	if (gcols & DTCAP_COL_FLAGS) k[n++] = b->dict.flags[d];
	if (gcols & DTCAP_COL_CTX) k[n++] = b->dict.ctx[d];
}

/* Count the matching events of every block into g. */
/*
 * Where block bi stands against the ts range [lo, hi] (signed, as SQL
 * sees ts): -1 none of its events, 1 all of them, 0 some (check each).
 */
static int ts_block(const struct dtcap_blockinfo *bi, int64_t lo, int64_t hi)
{
	if ((bi->tmin >> 63) != (bi->tmax >> 63))
		return 0;	/* crosses from positive to negative */
	int64_t a = (int64_t)bi->tmin, b = (int64_t)bi->tmax;
	if (b < lo || a > hi)
		return -1;
	return lo <= a && b <= hi ? 1 : 0;
}

/* The per-block numbering of contexts by key of cpu_hist. */
struct cpuh {
	struct ghash	ids;		/* key -> number + 1 (in cnt) */
	uint32_t	*lid, *rep;	/* context -> number; number -> a context */
	uint8_t		*ok;		/* context passes the pushed-down sets */
	size_t		cap;		/* of lid, rep, ok */
};

static void cpuh_free(struct cpuh *h)
{
	free(h->ids.key);
	free(h->ids.cnt);
	free(h->lid);
	free(h->rep);
	free(h->ok);
}

/* The number of key k in g (cnt holds number + 1), a new one if absent. */
static int64_t ghash_id(struct ghash *g, const uint32_t *k, uint64_t next)
{
	if (2 * (g->n + 1) > g->cap && ghash_grow(g) < 0)
		return -1;
	size_t s = ghash_of(k, g->nk) & (g->cap - 1);
	for (;; s = (s + 1) & (g->cap - 1)) {
		if (g->cnt[s] == 0) {
			memcpy(g->key + s * g->nk, k, g->nk * sizeof(*k));
			g->cnt[s] = next + 1;
			g->n++;
			return (int64_t)next;
		}
		if (memcmp(g->key + s * g->nk, k, g->nk * sizeof(*k)) == 0)
			return (int64_t)g->cnt[s] - 1;
	}
}

/*
 * Count block b's events (those in [lo, hi] unless inside) into g by
 * (context key, cpu) through a dense table.  1 done, 0 not worth it (the
 * table would outgrow the block: the caller counts per event), -1 out of
 * memory.
 */
static int cpu_hist(const struct ecur *e, const struct dtcap_block *b, struct ghash *g,
		    unsigned gcols, int inside, int64_t lo, int64_t hi, struct cpuh *h,
		    uint64_t **hist, size_t *nhist)
{
	int ctxc = (gcols & CTX_COLS) != 0;
	size_t nd = ctxc ? b->ndict : 1;
	uint32_t maxcpu = 0, k[NGKEY];
	for (uint32_t j = 0; j < b->rows; j++)
		maxcpu = b->cpu[j] > maxcpu ? b->cpu[j] : maxcpu;
	size_t nc = (size_t)maxcpu + 1;
	if (nc > 4096)
		return 0;
	if (nd > h->cap) {
		free(h->lid);
		free(h->rep);
		free(h->ok);
		h->lid = malloc(nd * sizeof(*h->lid));
		h->rep = malloc(nd * sizeof(*h->rep));
		h->ok = malloc(nd);
		h->cap = nd;
		if (h->lid == NULL || h->rep == NULL || h->ok == NULL) {
			h->cap = 0;
			return -1;
		}
	}
	/* number the contexts by their key without cpu */
	h->ids.nk = g->nk - 1;
	if (h->ids.cap)
		memset(h->ids.cnt, 0, h->ids.cap * sizeof(*h->ids.cnt));
	h->ids.n = 0;
	uint64_t nl = 0;
	for (size_t d = 0; d < nd; d++) {
		h->ok[d] = !ctxc || ctx_ok(e, b, (uint32_t)d);
		if (!h->ok[d]) {	/* never counted: needs no number */
			h->lid[d] = 0;
			continue;
		}
		if (!ctxc) {
			h->lid[d] = 0;
			h->rep[0] = 0;
			nl = 1;
			continue;
		}
		ctx_key(b, gcols & ~DTCAP_COL_CPU, (uint32_t)d, 0, k);
		int64_t id = h->ids.nk ? ghash_id(&h->ids, k, nl) : 0;
		if (id < 0)
			return -1;
		if ((uint64_t)id == nl) {
			h->rep[nl] = (uint32_t)d;
			nl++;
		}
		h->lid[d] = (uint32_t)id;
		if (!h->ids.nk)
			nl = 1;
	}
	if (nl * nc > (size_t)b->rows * 2 + 4096)
		return 0;
	if (nl * nc > *nhist) {
		free(*hist);
		*nhist = nl * nc;
		if ((*hist = calloc(*nhist, sizeof(**hist))) == NULL) {
			*nhist = 0;
			return -1;
		}
	}
	uint64_t *t = *hist;
	for (uint32_t j = 0; j < b->rows; j++) {
		uint32_t d = ctxc ? b->cidx[j] : 0;
		if (h->ok[d] && (inside || ((int64_t)b->ts[j] >= lo && (int64_t)b->ts[j] <= hi)))
			t[h->lid[d] * nc + b->cpu[j]]++;
	}
	for (size_t l = 0; l < nl; l++) {
		for (size_t c = 0; c < nc; c++) {
			uint64_t *x = &t[l * nc + c];
			if (*x == 0)
				continue;
			if (ctxc)
				ctx_key(b, gcols, h->rep[l], (uint32_t)c, k);
			else
				k[0] = (uint32_t)c;
			if (ghash_add(g, k, *x) < 0)
				return -1;
			*x = 0;
		}
	}
	return 1;
}

/* Count the matching events of every block into g. */
static int group_scan(struct ecur *e, struct ghash *g, unsigned gcols)
{
	struct dtcap_reader *r = e->c->r;
	int tsr = e->glo_set || e->ghi_set;
	int64_t lo = e->glo_set ? e->glo : INT64_MIN, hi = e->ghi_set ? e->ghi : INT64_MAX;
	/* the per-context columns come once per context of a block, and a
	 * block's events are counted per context: per event, one increment.
	 * With a ts range, ts is read even in blocks wholly inside it, so
	 * that the reader checks the block index as a row scan would. */
	unsigned rcols = gcols | (gcols & CTX_COLS ? DTCAP_COL_BYCTX : 0) |
			 (tsr ? DTCAP_COL_TS : 0);
	uint32_t k[NGKEY];
	uint64_t *hist = NULL;
	size_t nhist = 0, okcap = 0;
	uint8_t *okd = NULL;	/* per context of the block: passes */
	struct cpuh lg = { 0 };
	int rc = SQLITE_OK;

	for (size_t i = 0; i < dtcap_nblocks(r) && lo <= hi; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if (dtsql_cancel && *dtsql_cancel) {
			set_err(e->base.pVtab, "%s", "interrupted");
			rc = SQLITE_INTERRUPT;
			break;
		}
		if (!block_may_match(e, bi))
			continue;
		int inside = tsr ? ts_block(bi, lo, hi) : 1;
		if (inside < 0)
			continue;
		if (gcols == 0 && !tsr) {
			if (ghash_add(g, k, bi->rows) < 0)
				goto nomem;
			continue;
		}
		if (e->b == NULL && (e->b = dtcap_block_new()) == NULL)
			goto nomem;
		e->b_blk = SIZE_MAX;	/* not the per-row arrays ev_next_block reuses */
		if (dtcap_read_block(r, i, rcols, e->b) < 0) {
			set_err(e->base.pVtab, "%s", dtcap_reader_error(r));
			rc = SQLITE_ERROR;
			break;
		}
		const struct dtcap_block *b = e->b;
		if (ctx_filtered(e) && !any_ctx_ok(e, b))
			continue;
		/* is row j in the ts range (when the block is not all in it)? */
#define TS_OK(j) (inside || ((int64_t)b->ts[j] >= lo && (int64_t)b->ts[j] <= hi))
		if (gcols == 0) {
			uint64_t n = 0;
			for (uint32_t j = 0; j < b->rows; j++)
				n += TS_OK(j);
			if (n && ghash_add(g, k, n) < 0)
				goto nomem;
			continue;
		}
		/* cpu is per event: the block's contexts are numbered by their
		 * key without cpu (a hash per context, not per event), then
		 * events counted per (number, cpu) in a dense table, so that an
		 * event costs one increment */
		/* a filter few contexts pass (a thread of many): the events
		 * of those alone are looked up, one pass over the rows, where a
		 * table by cpu would want the block's largest cpu first */
		if ((gcols & DTCAP_COL_CPU) && (gcols & CTX_COLS) && b->rows && ctx_filtered(e)) {
			if (b->ndict > okcap) {
				free(okd);
				okcap = b->ndict;
				if ((okd = malloc(okcap)) == NULL) {
					okcap = 0;
					goto nomem;
				}
			}
			uint32_t nok = 0;
			for (uint32_t d = 0; d < b->ndict; d++)
				nok += okd[d] = (uint8_t)ctx_ok(e, b, d);
			if ((uint64_t)nok * 8 <= b->ndict) {
				for (uint32_t j = 0; j < b->rows; j++) {
					uint32_t d = b->cidx[j];
					if (!okd[d] || !TS_OK(j))
						continue;
					ctx_key(b, gcols, d, b->cpu[j], k);
					if (ghash_add(g, k, 1) < 0)
						goto nomem;
				}
				continue;
			}
		}
		if ((gcols & DTCAP_COL_CPU) && b->rows) {
			int r = cpu_hist(e, b, g, gcols, inside, lo, hi, &lg, &hist, &nhist);
			if (r < 0)
				goto nomem;
			if (r > 0)
				continue;
		}
		if (!(gcols & CTX_COLS)) {	/* cpu alone */
			for (uint32_t j = 0; j < b->rows; j++) {
				if (!TS_OK(j))
					continue;
				k[0] = b->cpu[j];
				if (ghash_add(g, k, 1) < 0)
					goto nomem;
			}
			continue;
		}
		if (gcols & DTCAP_COL_CPU) {
			for (uint32_t j = 0; j < b->rows; j++) {
				uint32_t d = b->cidx[j];
				if (!TS_OK(j) || !ctx_ok(e, b, d))
					continue;
				ctx_key(b, gcols, d, b->cpu[j], k);
				if (ghash_add(g, k, 1) < 0)
					goto nomem;
			}
			continue;
		}
		if (b->ndict > nhist) {
			free(hist);
			nhist = b->ndict;
			if ((hist = calloc(nhist, sizeof(*hist))) == NULL)
				goto nomem;
		}
		if (inside) {
			for (uint32_t j = 0; j < b->rows; j++)
				hist[b->cidx[j]]++;
		} else {
			for (uint32_t j = 0; j < b->rows; j++)
				hist[b->cidx[j]] += TS_OK(j);
		}
#undef TS_OK
		for (uint32_t d = 0; d < b->ndict; d++) {
			if (hist[d] == 0)
				continue;
			if (ctx_ok(e, b, d)) {
				ctx_key(b, gcols, d, 0, k);
				if (ghash_add(g, k, hist[d]) < 0)
					goto nomem;
			}
			hist[d] = 0;
		}
	}
	free(hist);
	free(okd);
	cpuh_free(&lg);
	return rc;
nomem:
	free(hist);
	free(okd);
	cpuh_free(&lg);
	return SQLITE_NOMEM;
}

/* The bucket of ts, (ts - o) / w as SQL computes it on integers; -1 when
 * ts - o overflows (SQL would then compute in floating point). */
static int bucket_of(int64_t ts, int64_t o, int64_t w, int64_t *out)
{
	int64_t d;
	if (__builtin_sub_overflow(ts, o, &d))
		return -1;
	*out = d / w;	/* w > 0 (ev_filter): no overflow, truncated as SQL */
	return 0;
}

/*
 * Return values are mostly small (errnos from -4095, counts and sizes up to
 * a page or so): grouped by retval and contexts only, those are counted in
 * a dense histogram per context key, an increment per event where a hash
 * lookup per event (a cache miss once the groups outgrow the caches) was
 * most of the scan; the others, and the keys past RV_MAXG, go through the
 * hash.  Both are added by key in the end, so which path an event took
 * does not change the groups.
 */
#define RV_LO		(-4096)
#define RV_W		8192
#define RV_MAXG		512		/* at most 32 MiB of counts */

struct rvh {
	struct ghash	ids;		/* context key -> number + 1 (in cnt) */
	uint32_t	*keys;		/* number -> its key, nk words */
	uint64_t	*cnt[RV_MAXG];	/* number -> RV_W counts, by value - RV_LO */
	size_t		n;
	int32_t		*lid;		/* per context of the block: its number,
					 * -1 filtered out, -2 not in the table */
	size_t		caplid;
};

static void rvh_free(struct rvh *h)
{
	free(h->ids.key);
	free(h->ids.cnt);
	free(h->keys);
	for (size_t i = 0; i < h->n; i++)
		free(h->cnt[i]);
	free(h->lid);
}

/* Number block b's contexts into h->lid.  -1 out of memory. */
static int rvh_block(const struct ecur *e, const struct dtcap_block *b, unsigned gcols,
		     struct rvh *h)
{
	uint32_t k[NGKEY];
	if (b->ndict > h->caplid) {
		free(h->lid);
		if ((h->lid = malloc(b->ndict * sizeof(*h->lid))) == NULL) {
			h->caplid = 0;
			return -1;
		}
		h->caplid = b->ndict;
	}
	for (uint32_t d = 0; d < b->ndict; d++) {
		if (!ctx_ok(e, b, d)) {
			h->lid[d] = -1;
			continue;
		}
		if (!(b->dict.flags[d] & DTR_RETURN) || h->n >= RV_MAXG) {
			h->lid[d] = -2;
			continue;
		}
		ctx_key(b, gcols, d, 0, k);
		int64_t id = ghash_id(&h->ids, k, h->n);
		if (id < 0)
			return -1;
		if ((size_t)id == h->n) {
			uint32_t *nk = realloc(h->keys, (h->n + 1) * h->ids.nk * sizeof(*nk));
			if (nk == NULL)
				return -1;
			h->keys = nk;
			if ((h->cnt[h->n] = calloc(RV_W, sizeof(**h->cnt))) == NULL)
				return -1;
			memcpy(h->keys + h->n * h->ids.nk, k, h->ids.nk * sizeof(*k));
			h->n++;
		}
		h->lid[d] = (int32_t)id;
	}
	return 0;
}

/* Add h's counts to g: key, then retval (low, high half) and 1 (a return). */
static int rvh_flush(struct rvh *h, struct ghash *g)
{
	uint32_t k[NGKEY + 5];
	unsigned rk = h->ids.nk;
	for (size_t l = 0; l < h->n; l++) {
		memcpy(k, h->keys + l * rk, rk * sizeof(*k));
		for (int64_t v = 0; v < RV_W; v++) {
			if (h->cnt[l][v] == 0)
				continue;
			uint64_t x = (uint64_t)(v + RV_LO);
			k[rk] = (uint32_t)x;
			k[rk + 1] = (uint32_t)(x >> 32);
			k[rk + 2] = 1;
			if (ghash_add(g, k, h->cnt[l][v]) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Count the matching events of every block into g by their key and
 * bucket (the key's last two words, low then high half).  Events of one
 * key and bucket come in runs (a block is mostly in time order), so a run
 * is added once; a block wholly in the range whose first and last
 * timestamps share a bucket, grouped by nothing else, is added whole.
 */
static int group_scan_rows(struct ecur *e, struct ghash *g, unsigned gcols, int bucket, int gret)
{
	struct dtcap_reader *r = e->c->r;
	int tsr = e->glo_set || e->ghi_set;
	int64_t lo = e->glo_set ? e->glo : INT64_MIN, hi = e->ghi_set ? e->ghi : INT64_MAX;
	/* retval: the first slot's column alone, not the row-major array of
	 * every argument nor the other slots' columns (most of the decoding's
	 * time when filled).  ts only for a range or a bucket: with neither
	 * no block is skipped by its time index, so there is none to check. */
	unsigned rcols = gcols | (gcols & CTX_COLS ? DTCAP_COL_BYCTX : 0) |
			 (tsr || bucket ? DTCAP_COL_TS : 0) |
			 (gret ? DTCAP_COL_ARGS | DTCAP_COL_ARGSLOTS | DTCAP_COL_ARGS2 : 0);
	unsigned nk = g->nk, rk = nk - 3 * !!gret, bk0 = rk - 2 * !!bucket;
	uint32_t k[NGKEY + 5], prev[NGKEY + 5];
	uint64_t run = 0, *hist = NULL;
	int64_t pbk = 0;	/* prev's bucket, when grouped by nothing else */
	size_t nhist = 0;
	int rc = SQLITE_OK;
	/* grouped by retval and contexts only: the events that are not
	 * returns (retval NULL) are counted per context, not per event */
	int split = gret && !bucket && !(gcols & DTCAP_COL_CPU) && (gcols & CTX_COLS);
	struct rvh rv = { .ids.nk = rk };

	for (size_t i = 0; i < dtcap_nblocks(r) && lo <= hi; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if (dtsql_cancel && *dtsql_cancel) {
			set_err(e->base.pVtab, "%s", "interrupted");
			rc = SQLITE_INTERRUPT;
			break;
		}
		if (!block_may_match(e, bi))
			continue;
		/* without a range every row is inside (b->ts is not read) */
		int inside = tsr ? ts_block(bi, lo, hi) :
			     bucket ? ts_block(bi, INT64_MIN, INT64_MAX) : 1;
		if (inside < 0)
			continue;
		if (e->b == NULL && (e->b = dtcap_block_new()) == NULL)
			goto nomem;
		e->b_blk = SIZE_MAX;
		if (dtcap_read_block(r, i, rcols, e->b) < 0) {
			set_err(e->base.pVtab, "%s", dtcap_reader_error(r));
			rc = SQLITE_ERROR;
			break;
		}
		const struct dtcap_block *b = e->b;
		if (ctx_filtered(e) && (gcols & CTX_COLS) && !any_ctx_ok(e, b))
			continue;
		int64_t b0, b1;
		if (inside > 0 && gcols == 0 && bucket && !gret &&
		    bucket_of((int64_t)bi->tmin, e->bko, e->bkw, &b0) == 0 &&
		    bucket_of((int64_t)bi->tmax, e->bko, e->bkw, &b1) == 0 && b0 == b1) {
			k[0] = (uint32_t)(uint64_t)b0;
			k[1] = (uint32_t)((uint64_t)b0 >> 32);
			if (b->rows && ghash_add(g, k, b->rows) < 0)
				goto nomem;
			continue;
		}
		if (split && b->ndict > nhist) {
			free(hist);
			nhist = b->ndict;
			if ((hist = calloc(nhist, sizeof(*hist))) == NULL)
				goto nomem;
		}
		if (split && rvh_block(e, b, gcols, &rv) < 0)
			goto nomem;
		uint32_t a0 = 0;	/* the row's place in slot 0's column */
		int64_t bkcur = 0, bklo = 1, bkhi = 0;	/* the last bucket's ts - K */
		const int onlybk = bucket && gcols == 0 && !gret;
		/* every row is inside when ts is not read: t is then unused */
		static const uint64_t ts0[1];
		const uint64_t *tsv = b->ts ? b->ts : ts0;
		const uint32_t tsm = b->ts ? UINT32_MAX : 0;
		for (uint32_t j = 0; j < b->rows; j++) {
			int64_t t = (int64_t)tsv[j & tsm], bk;
			uint64_t arg0 = 0;
			if (gret && b->nargs[j] > 0) {
				if (a0 >= b->nargslot[0]) {
					set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": argument slots");
					goto err;
				}
				arg0 = b->argslot[0][a0++];
			}
			if (!inside && (t < lo || t > hi))
				continue;
			uint32_t d = 0;
			if (split) {
				d = b->cidx[j];
				if (!(b->dict.flags[d] & DTR_RETURN)) {
					hist[d]++;
					continue;
				}
				int32_t l = rv.lid[d];
				if (l == -1)
					continue;
				int64_t v = (int64_t)arg0;
				if (l >= 0 && v >= RV_LO && v < RV_LO + RV_W) {
					rv.cnt[l][v - RV_LO]++;
					continue;
				}
			}
			if (gcols & CTX_COLS) {
				d = b->cidx[j];
				if (!split && !ctx_ok(e, b, d))
					continue;
				ctx_key(b, gcols, d, gcols & DTCAP_COL_CPU ? b->cpu[j] : 0, k);
			} else if (gcols & DTCAP_COL_CPU) {
				k[0] = b->cpu[j];
			}
			/* a run of rows in one bucket (the block is mostly in
			 * time order) costs no division: the bucket's range of
			 * ts - K is kept, for buckets of ts - K >= 0 (where
			 * truncation is floor) */
			int64_t dk;
			if (bucket && !__builtin_sub_overflow(t, e->bko, &dk) &&
			    dk >= bklo && dk <= bkhi) {
				bk = bkcur;
			} else if (bucket && bucket_of(t, e->bko, e->bkw, &bk) < 0) {
				set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": ts - " E_BKOFF_NAME
					" overflows 64 bits (DT_SQL_NO_GROUPED=1 computes it in"
					" floating point)");
				goto err;
			} else if (bucket) {
				bkcur = bk;
				bklo = 1, bkhi = 0;	/* none, unless below */
				if (bk >= 0 && t - e->bko >= 0) {	/* no overflow: done above */
					bklo = bk * e->bkw;	/* <= ts - K */
					if (__builtin_add_overflow(bklo, e->bkw - 1, &bkhi))
						bkhi = INT64_MAX;
				}
			}
			if (bucket) {
				/* the bucket the whole key: the run's, or a new one */
				if (onlybk && run && bk == pbk) {
					run++;
					continue;
				}
				pbk = bk;
				k[bk0] = (uint32_t)(uint64_t)bk;
				k[bk0 + 1] = (uint32_t)((uint64_t)bk >> 32);
			}
			if (gret) {	/* FLAGS is a key column with it: by context */
				int ret = (b->dict.flags[d] & DTR_RETURN) != 0;
				uint64_t x = ret ? arg0 : 0;
				k[rk] = (uint32_t)x;
				k[rk + 1] = (uint32_t)(x >> 32);
				k[rk + 2] = (uint32_t)ret;
			}
			if (run && keq(k, prev, nk)) {
				run++;
				continue;
			}
			if (run && ghash_add(g, prev, run) < 0)
				goto nomem;
			memcpy(prev, k, nk * sizeof(*k));
			run = 1;
		}
		for (uint32_t d = 0; split && d < b->ndict; d++) {
			if (hist[d] == 0)
				continue;
			if (ctx_ok(e, b, d)) {
				ctx_key(b, gcols, d, 0, k);
				k[rk] = k[rk + 1] = k[rk + 2] = 0;	/* retval NULL */
				if (ghash_add(g, k, hist[d]) < 0)
					goto nomem;
			}
			hist[d] = 0;
		}
	}
	if (run && ghash_add(g, prev, run) < 0)
		goto nomem;
	if (rc == SQLITE_OK && rvh_flush(&rv, g) < 0)
		goto nomem;
	free(hist);
	rvh_free(&rv);
	return rc;
err:
	free(hist);
	rvh_free(&rv);
	return SQLITE_ERROR;
nomem:
	free(hist);
	rvh_free(&rv);
	return SQLITE_NOMEM;
}

/*
 * events_grouped's xFilter: count the events of each distinct key of the
 * used columns, then hand the groups over as rows (in hash order: sqlite
 * sorts or groups them itself; there are few).
 */
static int ev_group(struct ecur *e)
{
	/* ts is read for a range or a bucket only, not grouped by; the
	 * arguments for retval only */
	int bucket = e->bko_set && e->bkw_set, gret = (e->cols & DTCAP_COL_ARGS) != 0;
	unsigned gcols = e->cols & ~(e->glo_set || e->ghi_set || bucket ? DTCAP_COL_TS : 0u) &
			 ~DTCAP_COL_ARGS;
	if (gret && !(gcols & DTCAP_COL_FLAGS)) {
		set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": retval without flags");
		return SQLITE_ERROR;
	}
	if (gcols & ~GROUP_COLS) {
		/* a row filter on a column not grouped by (best_index refuses
		 * plans that use one; this is a guard) */
		set_err(e->base.pVtab, "%s", EVENTS_GROUPED ": not a column to group by");
		return SQLITE_ERROR;
	}
	struct ghash g = { 0 };
	for (unsigned i = 0; i < NGKEY; i++)
		g.nk += (gcols & gkey_col[i]) != 0;
	g.nk += (bucket ? 2 : 0) + (gret ? 3 : 0);
	int rc = bucket || gret ? group_scan_rows(e, &g, gcols, bucket, gret)
				: group_scan(e, &g, gcols);
	if (rc != SQLITE_OK)
		goto out;
	size_t n = g.n ? g.n : 1;
	struct cols *m = &e->mat;
#define AL(f, c) do {							\
		if ((gcols & (c)) && (m->f = malloc(n * sizeof(*m->f))) == NULL) \
			goto nomem;					\
	} while (0)
	AL(cpu, DTCAP_COL_CPU); AL(pid, DTCAP_COL_PID); AL(tid, DTCAP_COL_TID);
	AL(probe, DTCAP_COL_PROBE); AL(comm, DTCAP_COL_COMM);
	AL(kstack, DTCAP_COL_KSTACK); AL(ustack, DTCAP_COL_USTACK);
	AL(flags, DTCAP_COL_FLAGS); AL(ctx, DTCAP_COL_CTX);
#undef AL
	if ((e->gcount = malloc(n * sizeof(*e->gcount))) == NULL ||
	    (bucket && (e->gbucket = malloc(n * sizeof(*e->gbucket))) == NULL) ||
	    (gret && ((e->gret = malloc(n * sizeof(*e->gret))) == NULL ||
		      (e->gretok = malloc(n)) == NULL)))
		goto nomem;
	size_t row = 0;
	for (size_t s = 0; s < g.cap; s++) {
		if (g.cnt[s] == 0)
			continue;
		const uint32_t *k = g.key + s * g.nk;
		unsigned w = 0;
		if (m->cpu) m->cpu[row] = k[w++];
		if (m->pid) m->pid[row] = k[w++];
		if (m->tid) m->tid[row] = k[w++];
		if (m->probe) m->probe[row] = k[w++];
		if (m->comm) m->comm[row] = k[w++];
		if (m->kstack) m->kstack[row] = k[w++];
		if (m->ustack) m->ustack[row] = k[w++];
		if (m->flags) m->flags[row] = k[w++];
		if (m->ctx) m->ctx[row] = (uint8_t)k[w++];
		if (bucket) {
			e->gbucket[row] = (int64_t)((uint64_t)k[w] | (uint64_t)k[w + 1] << 32);
			w += 2;
		}
		if (gret) {
			e->gret[row] = (int64_t)((uint64_t)k[w] | (uint64_t)k[w + 1] << 32);
			e->gretok[row] = (uint8_t)k[w + 2];
		}
		e->gcount[row++] = g.cnt[s];
	}
	e->cv = e->mat;
	e->cols = gcols;	/* the columns held: ts was only read */
	e->grouped = 1;
	e->nmat = row;
	e->pos = 0;
	e->row = 0;
	e->eof = row == 0;
	goto out;
nomem:
	rc = SQLITE_NOMEM;
out:
	free(g.key);
	free(g.cnt);
	return rc;
}

static int ev_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	struct ecur *e = (struct ecur *)cur;
	ev_reset(e);
	e->cols = idxNum & IX_COLS;
	e->tlo = 0;
	e->thi = UINT64_MAX;
	for (int i = 0; i < argc && idxStr && idxStr[i]; i++) {
		char op = idxStr[i];
		int r;
		switch (op) {
		case '=': case '>': case 'g': case '<': case 'l':
			ts_narrow(e, op, argv[i]);
			break;
		case 'p': case 'P':
			if (e->pidf)	/* two pid constraints: keep the first */
				break;
			r = set_collect(e, argv[i], op == 'P', 0, &e->pids, &e->npids);
			if (r < 0)
				return SQLITE_NOMEM;
			e->pidf = r;
			if (r && e->npids == 0)
				e->empty = 1;
			break;
		case 'k': case 'j': case 'K': case 'J':
			if ((op == 'k' || op == 'j') ? e->commf : e->probef)
				break;
			r = pattern_collect(e, argv[i], op == 'k' || op == 'K',
					    op == 'k' || op == 'j');
			if (r < 0)
				return SQLITE_NOMEM;
			break;
		case 'c': case 'C':
			if (e->commf)
				break;
			r = set_collect(e, argv[i], op == 'C', 2, &e->comms, &e->ncomms);
			if (r < 0)
				return SQLITE_NOMEM;
			e->commf = r;
			if (r && e->ncomms == 0)
				e->empty = 1;
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
			if (e->xsetf >> x & 1)	/* two: keep the first */
				break;
			r = set_collect(e, argv[i], isupper((unsigned char)op), 0,
					&e->xset[x], &e->nxset[x]);
			if (r < 0)
				return SQLITE_NOMEM;
			if (r) {
				e->xsetf |= 1u << x;
				if (e->nxset[x] == 0)
					e->empty = 1;
			}
			break;
		}
		default:
			if (strchr(xr_codes, op))
				x_narrow(e, (unsigned)(strchr(xr_codes, op) - xr_codes), argv[i]);
			break;
		case 'r': case 'R': case 'n': case 'N':
			if (e->probef)
				break;
			r = set_collect(e, argv[i], op == 'R' || op == 'N',
					op == 'n' || op == 'N', &e->probes, &e->nprobes);
			if (r < 0)
				return SQLITE_NOMEM;
			e->probef = r;
			if (r && e->nprobes == 0)
				e->empty = 1;
			break;
		}
	}
	if (e->empty) {
		e->eof = 1;
		return SQLITE_OK;
	}
	/* row filters read their columns even if the statement does not */
	if (e->tsf) e->cols |= DTCAP_COL_TS;
	if (e->pidf) e->cols |= DTCAP_COL_PID;
	if (e->probef) e->cols |= DTCAP_COL_PROBE;
	if (e->commf) e->cols |= DTCAP_COL_COMM;
	for (unsigned x = 0; x < XC_N; x++)
		if ((e->xsetf | e->xrngf) >> x & 1)
			e->cols |= xcols[x].col;
	if (e->gtab)
		return ev_group(e);
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
		return ev_materialize(e, ord);
	}
	return ev_seek(e);
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
	e->row++;
	return ev_seek(e);
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
		if (ctx_name(cv->ctx[i]))
			sqlite3_result_text(ctx, ctx_name(cv->ctx[i]), -1, SQLITE_STATIC);
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

/* ------------------------------------------------------ small tables */

/*
 * The metadata tables are small (probes, stacks, processes...): a cursor
 * is a pair of indexes (outer row, inner row) walked in order, with an
 * optional '=' on the table's key column.
 */
struct scur {
	sqlite3_vtab_cursor base;
	struct dtsql	*c;
	int		kind;
	size_t		i, j;		/* outer, inner */
	int		keyf;
	int64_t		key;
	/* keyed on probes' id or processes' pid: the outer rows with the
	 * key, sel[0..nsel-1], walked by k (sel NULL: every outer row) */
	const uint32_t	*sel;
	size_t		nsel, k;
	int		eof;
	/* counters: the current snapshot */
	const struct dtcap_count *percpu;
	struct dtcap_count rec;
	uint64_t	cts;
	uint32_t	ncpus;
	/* frames */
	const uint64_t	*pcs;
	unsigned	npcs;
	int		kernel;
	char		buf[2048];
};

static int sm_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct tab *t = (struct tab *)v;
	int kc = dtsql_tab[t->kind].keycol;
	struct dtcap_reader *r = t->c->r;
	double n;
	switch (t->kind) {
	case T_PROBES: case T_PROBE_ARGS: n = (double)dtcap_nprobes(r) * 2; break;
	case T_STACKS: n = dtcap_nstacks(r); break;
	case T_FRAMES: n = (double)dtcap_nstacks(r) * 16; break;
	case T_PROCESSES: n = (double)dtcap_nprocs(r); break;
	case T_MAPS: n = (double)dtcap_nprocs(r) * 32; break;
	case T_COUNTERS: n = (double)dtcap_ncounters(r) * (dtcap_host(r)->ncpus + 1); break;
	default: n = 1;
	}
	if (n < 1)
		n = 1;
	/* real sizes, so the planner knows these are small */
	info->estimatedCost = n;
	info->estimatedRows = (sqlite3_int64)n;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *k = &info->aConstraint[i];
		if (k->usable && k->iColumn == kc && kc >= 0 &&
		    k->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			info->aConstraintUsage[i].argvIndex = 1;
			info->idxNum = 1;
			info->estimatedCost = n > 10 ? 10 : n;
			info->estimatedRows = n > 10 ? 10 : (sqlite3_int64)n;
			break;
		}
	}
	return SQLITE_OK;
}

static int sm_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct tab *t = (struct tab *)v;
	struct scur *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return SQLITE_NOMEM;
	s->c = t->c;
	s->kind = t->kind;
	*out = &s->base;
	return SQLITE_OK;
}

static int sm_close(sqlite3_vtab_cursor *cur)
{
	free(cur);
	return SQLITE_OK;
}

/* Is (i, j) a row, and does it have the wanted key?  -1 past the end. */
static int sm_valid(struct scur *s)
{
	struct dtcap_reader *r = s->c->r;
	switch (s->kind) {
	case T_PROBES:
		if (s->i >= dtcap_nprobes(r)) return -1;
		return !s->keyf || dtcap_probe_at(r, s->i)->id == s->key;
	case T_PROBE_ARGS:
		if (s->i >= dtcap_nprobes(r)) return -1;
		if (s->keyf && dtcap_probe_at(r, s->i)->id != s->key) return 0;
		return s->j < dtcap_probe_at(r, s->i)->nargs &&
		       s->j < DTCAP_MAXARGS;
	case T_STACKS:
		if (s->i > dtcap_nstacks(r)) return -1;
		return s->i >= 1 && (!s->keyf || (int64_t)s->i == s->key);
	case T_FRAMES:
		if (s->i > dtcap_nstacks(r)) return -1;
		if (s->i < 1 || (s->keyf && (int64_t)s->i != s->key)) return 0;
		if (s->j == 0) {
			s->pcs = dtcap_stack(r, (uint32_t)s->i, &s->npcs,
					     &s->kernel, &(int){ 0 });
			if (s->pcs == NULL)
				s->npcs = 0;
		}
		return s->j < s->npcs;
	case T_PROCESSES:
		if (s->i >= dtcap_nprocs(r)) return -1;
		return !s->keyf || dtcap_proc_at(r, s->i)->pid == s->key;
	case T_MAPS:
		if (s->i >= dtcap_nprocs(r)) return -1;
		if (s->keyf && dtcap_proc_at(r, s->i)->pid != s->key) return 0;
		return s->j < dtcap_proc_at(r, s->i)->nmaps;
	case T_CAPTURE:
		return s->i >= 1 ? -1 : 1;
	case T_COUNTERS:
		if (s->i >= dtcap_ncounters(r)) return -1;
		if (s->keyf && (int64_t)s->i != s->key) return 0;
		if (s->j == 0)
			s->percpu = dtcap_counters_at(r, s->i, &s->cts, &s->ncpus, &s->rec);
		return s->j <= s->ncpus;	/* the last is the recorder's */
	}
	return -1;
}

static int sm_has_inner(int kind)
{
	return kind == T_PROBE_ARGS || kind == T_FRAMES || kind == T_MAPS ||
	       kind == T_COUNTERS;
}

/* The next outer row (i), inner rows from the first; 0 past the last. */
static int sm_outer_next(struct scur *s)
{
	s->j = 0;
	if (s->sel == NULL) {
		s->i++;
		return 1;
	}
	if (++s->k >= s->nsel)
		return 0;
	s->i = s->sel[s->k];
	return 1;
}

/* Advance to the next valid row starting from the current (i, j). */
static void sm_seek(struct scur *s, int step)
{
	if (step && sm_has_inner(s->kind))
		s->j++;
	else if (step && !sm_outer_next(s))
		goto end;
	for (;;) {
		int v = sm_valid(s);
		if (v < 0)
			goto end;
		if (v > 0)
			return;
		/* inner rows exhausted, or outer row filtered out */
		if (!sm_outer_next(s))
			goto end;
		if (s->keyf && (s->kind == T_STACKS || s->kind == T_FRAMES ||
				s->kind == T_COUNTERS) && (int64_t)s->i > s->key)
			goto end;
	}
end:
	s->eof = 1;
}

static int cmp_probe_id(const void *a, const void *b, void *arg)
{
	const struct dtcap_reader *r = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t kx = dtcap_probe_at(r, x)->id, ky = dtcap_probe_at(r, y)->id;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x < y ? -1 : x > y;	/* file order within an id */
}

/*
 * The outer rows of s's table whose key is s->key: processes and maps from
 * the reader's pid index, probes from one sorted by id (built here on
 * first use).  SQLITE_NOMEM, or SQLITE_OK with s->sel set (nsel may be 0).
 */
static int sm_select(struct scur *s)
{
	struct dtsql *c = s->c;
	s->k = 0;
	s->nsel = 0;
	s->sel = NULL;
	if (s->kind == T_PROCESSES || s->kind == T_MAPS) {
		if (s->key >= 0 && s->key <= UINT32_MAX)
			s->sel = dtcap_proc_snapshots(c->r, (uint32_t)s->key, &s->nsel);
		return SQLITE_OK;
	}
	size_t n = dtcap_nprobes(c->r);
	if (c->probe_by_id == NULL) {
		if ((c->probe_by_id = malloc((n ? n : 1) * sizeof(*c->probe_by_id))) == NULL)
			return SQLITE_NOMEM;
		for (size_t i = 0; i < n; i++)
			c->probe_by_id[i] = (uint32_t)i;
		qsort_r(c->probe_by_id, n, sizeof(*c->probe_by_id), cmp_probe_id, c->r);
	}
	const uint32_t *v = c->probe_by_id;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((int64_t)dtcap_probe_at(c->r, v[mid])->id < s->key)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < n && (int64_t)dtcap_probe_at(c->r, v[end])->id == s->key)
		end++;
	s->sel = v + lo;
	s->nsel = end - lo;
	return SQLITE_OK;
}

static int sm_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	(void)idxStr;
	struct scur *s = (struct scur *)cur;
	s->i = s->j = 0;
	s->eof = 0;
	s->keyf = 0;
	s->sel = NULL;
	if (idxNum == 1 && argc == 1) {
		if (!val_int(argv[0], &s->key)) {
			/* NULL or text: ours are all integers; let sqlite decide
			 * from a full walk rather than guess at affinity */
			if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
				s->eof = 1;
				return SQLITE_OK;
			}
		} else {
			s->keyf = 1;
			/* dense ids: start right at the key */
			if ((s->kind == T_STACKS || s->kind == T_FRAMES ||
			     s->kind == T_COUNTERS) && s->key >= 0)
				s->i = (size_t)s->key;
			if (s->key < 0 && (s->kind == T_STACKS || s->kind == T_FRAMES ||
					   s->kind == T_COUNTERS)) {
				s->eof = 1;
				return SQLITE_OK;
			}
			if (s->kind == T_PROBES || s->kind == T_PROBE_ARGS ||
			    s->kind == T_PROCESSES || s->kind == T_MAPS) {
				if (sm_select(s) != SQLITE_OK)
					return SQLITE_NOMEM;
				if (s->nsel == 0) {
					s->eof = 1;
					return SQLITE_OK;
				}
				s->i = s->sel[0];
			}
		}
	}
	sm_seek(s, 0);
	return SQLITE_OK;
}

static int sm_next(sqlite3_vtab_cursor *cur)
{
	sm_seek((struct scur *)cur, 1);
	return SQLITE_OK;
}

static int sm_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct scur *)cur)->eof;
}

static int sm_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct scur *s = (struct scur *)cur;
	*rowid = (sqlite3_int64)(s->i * 1024 + s->j);
	return SQLITE_OK;
}

/* Text from the capture (n < 0: NUL-terminated), as every writer writes it
 * (dtu_utf8_fix): the export and CSV are read by strict UTF-8 readers. */
static void res_textn(sqlite3_context *ctx, const char *s, int n)
{
	char *buf = NULL;
	size_t cap = 0, len;

	if (s == NULL)
		return;
	const char *v = dtu_utf8_fix(s, n < 0 ? strlen(s) : (size_t)n, &len, &buf, &cap);
	if (v == NULL || len > INT_MAX)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_text(ctx, v, (int)len, SQLITE_TRANSIENT);
	free(buf);
}

static void res_text(sqlite3_context *ctx, const char *s)
{
	res_textn(ctx, s, -1);
}

static void res_count(sqlite3_context *ctx, const struct dtcap_count *k, int col)
{
	const uint64_t v[] = { k->produced, k->read, k->dropped, k->skipped,
			       k->recursive, k->nested };
	sqlite3_result_int64(ctx, (sqlite3_int64)v[col]);
}

static int sm_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct scur *s = (struct scur *)cur;
	struct dtcap_reader *r = s->c->r;
	switch (s->kind) {
	case T_PROBES: {
		const struct dtcap_probe *p = dtcap_probe_at(r, s->i);
		const char *a = strchr(p->name, ':');
		const char *b = a ? strchr(a + 1, ':') : NULL;
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->id); break;
		case 1: res_text(ctx, p->name); break;
		case 2: res_textn(ctx, p->name, a ? (int)(a - p->name) : -1); break;
		case 3: if (a) res_textn(ctx, a + 1, b ? (int)(b - a - 1) : -1); break;
		case 4: if (b) res_text(ctx, b + 1); break;
		case 5: sqlite3_result_int64(ctx, p->flags); break;
		case 6: sqlite3_result_int(ctx, (p->flags & DT_PF_RETURN) != 0); break;
		case 7: sqlite3_result_int64(ctx, p->nargs); break;
		case 8: {
			size_t off = 0;
			s->buf[0] = 0;
			for (uint32_t k = 0; k < p->nargs && k < DTCAP_MAXARGS; k++) {
				int n = snprintf(s->buf + off, sizeof(s->buf) - off, "%s%.*s %.*s",
						 k ? ", " : "", DTCAP_ARGNAMELEN, p->args[k].type,
						 DTCAP_ARGNAMELEN, p->args[k].name);
				if (n < 0 || (size_t)n >= sizeof(s->buf) - off)
					break;
				off += (size_t)n;
			}
			res_text(ctx, s->buf);
			break;
		}
		}
		break;
	}
	case T_PROBE_ARGS: {
		const struct dtcap_probe *p = dtcap_probe_at(r, s->i);
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->id); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)s->j); break;
		case 2: sqlite3_result_text(ctx, p->args[s->j].name,
				(int)strnlen(p->args[s->j].name, DTCAP_ARGNAMELEN),
				SQLITE_TRANSIENT); break;
		case 3: sqlite3_result_text(ctx, p->args[s->j].type,
				(int)strnlen(p->args[s->j].type, DTCAP_ARGNAMELEN),
				SQLITE_TRANSIENT); break;
		case 4: sqlite3_result_int(ctx, p->args[s->j].slot); break;
		case 5: sqlite3_result_int(ctx, p->args[s->j].nslots); break;
		}
		break;
	}
	case T_STACKS: {
		unsigned n = 0;
		int kernel = 0, trunc = 0;
		dtcap_stack(r, (uint32_t)s->i, &n, &kernel, &trunc);
		switch (col) {
		case 0: sqlite3_result_int64(ctx, (sqlite3_int64)s->i); break;
		case 1: sqlite3_result_int(ctx, kernel != 0); break;
		case 2: sqlite3_result_int64(ctx, n); break;
		case 3: sqlite3_result_int(ctx, trunc != 0); break;
		}
		break;
	}
	case T_FRAMES: {
		uint64_t pc = s->pcs[s->j];
		switch (col) {
		case 0: sqlite3_result_int64(ctx, (sqlite3_int64)s->i); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)s->j); break;
		case 2: sqlite3_result_int64(ctx, (sqlite3_int64)pc); break;
		case 3: sqlite3_result_int(ctx, s->kernel != 0); break;
		case 4:
		case 5:
		case 6:
		case 7:
		case 8:
		case 9:
		case 10: {
			if (s->c->sym == NULL)
				break;
			uint32_t pid = 0;
			uint64_t ts = 0;
			if (!s->kernel) {
				char *err = NULL;
				if (ctx_ufirst(s->c, &err) < 0) {
					sqlite3_result_error(ctx, err, -1);
					sqlite3_free(err);
					return SQLITE_ERROR;
				}
				pid = s->c->ufirst_pid[s->i];
				ts = s->c->ufirst_ts[s->i];
			}
			if (col >= 8) {
				const char *file, *inl;
				uint32_t line;
				if (!dtsym_frame_src(s->c->sym, pc, (unsigned)s->j, s->kernel, pid,
						     ts, &file, &line, &inl))
					break;
				if (col == 9)
					sqlite3_result_int64(ctx, line);
				else if (col == 8 || inl)
					res_text(ctx, col == 8 ? file : inl);
				break;
			}
			res_text(ctx, col == 4
				 ? dtsym_name(s->c->sym, pc, s->kernel, pid, ts)
				 : col == 5 ? dtsym_origin(s->c->sym, pc, s->kernel, pid, ts)
				 : col == 6 ? dtsym_raw_name(s->c->sym, pc, s->kernel, pid, ts)
				 : dtsym_dso(s->c->sym, pc, s->kernel, pid, ts));
			break;
		}
		}
		break;
	}
	case T_PROCESSES: {
		const struct dtcap_proc *p = dtcap_proc_at(r, s->i);
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->pid); break;
		case 1: sqlite3_result_int64(ctx, p->ppid); break;
		case 2: res_textn(ctx, p->comm, (int)strnlen(p->comm, DTCAP_COMMLEN)); break;
		case 3: res_text(ctx, p->exe ? p->exe : ""); break;
		case 4: sqlite3_result_int64(ctx, (sqlite3_int64)p->ts); break;
		case 5: sqlite3_result_int64(ctx, p->nmaps); break;
		}
		break;
	}
	case T_MAPS: {
		const struct dtcap_proc *p = dtcap_proc_at(r, s->i);
		const struct dtcap_map *m = &p->maps[s->j];
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->pid); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)p->ts); break;
		case 2: sqlite3_result_int64(ctx, (sqlite3_int64)m->start); break;
		case 3: sqlite3_result_int64(ctx, (sqlite3_int64)m->end); break;
		case 4: sqlite3_result_int64(ctx, (sqlite3_int64)m->offset); break;
		case 5: sqlite3_result_int64(ctx, m->prot); break;
		case 6: if (m->file) sqlite3_result_int64(ctx, m->file); break;
		case 7: res_text(ctx, m->name); break;
		case 8: {
			/* hex, as file(1), readelf -n and debuginfod spell it */
			const struct dtcap_file *f = m->file ? dtcap_file_by_id(r, m->file) : NULL;
			char hex[2 * sizeof(f->build_id) + 1];
			if (!f || !f->build_id_len || f->build_id_len > sizeof(f->build_id))
				break;
			for (uint32_t k = 0; k < f->build_id_len; k++)
				snprintf(hex + 2 * k, 3, "%02x", f->build_id[k]);
			sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
			break;
		}
		}
		break;
	}
	case T_CAPTURE: {
		const struct dtcap_host *h = dtcap_host(r);
		switch (col) {
		case 0: res_text(ctx, h->kernel); break;
		/* none: NULL, as every engine reads the Parquet export's
		 * partition for it (Hive's default partition) */
		case 1: res_text(ctx, h->hostname[0] ? h->hostname : NULL); break;
		case 2: sqlite3_result_int64(ctx, h->ncpus); break;
		case 3: sqlite3_result_int64(ctx, (sqlite3_int64)h->start_ns); break;
		case 4: sqlite3_result_int64(ctx, (sqlite3_int64)h->clock_mono_ns); break;
		case 5: sqlite3_result_int64(ctx, h->clock_real_ns); break;
		case 6: res_text(ctx, h->command); break;
		case 7: sqlite3_result_int64(ctx, (sqlite3_int64)dtcap_nevents(r)); break;
		case 8: res_text(ctx, dtcap_reader_warning(r)); break;
		case 9: res_text(ctx, h->source); break;
		}
		break;
	}
	case T_COUNTERS: {
		int rec = s->j == s->ncpus;
		switch (col) {
		case 0: sqlite3_result_int64(ctx, (sqlite3_int64)s->i); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)s->cts); break;
		case 2: if (!rec) sqlite3_result_int64(ctx, (sqlite3_int64)s->j); break;
		default:
			if (rec)
				res_count(ctx, &s->rec, col - 3);
			else if (s->percpu)
				res_count(ctx, &s->percpu[s->j], col - 3);
			break;
		}
		break;
	}
	}
	return SQLITE_OK;
}

/* Eponymous-only (xCreate NULL): the tables exist without CREATE. */
static const sqlite3_module ev_module = {
	.iVersion = 0,
	.xConnect = x_connect, .xBestIndex = ev_best_index,
	.xDisconnect = x_disconnect, .xOpen = ev_open, .xClose = ev_close,
	.xFilter = ev_filter, .xNext = ev_next, .xEof = ev_eof,
	.xColumn = ev_column, .xRowid = ev_rowid,
};

static const sqlite3_module sm_module = {
	.iVersion = 0,
	.xConnect = x_connect, .xBestIndex = sm_best_index,
	.xDisconnect = x_disconnect, .xOpen = sm_open, .xClose = sm_close,
	.xFilter = sm_filter, .xNext = sm_next, .xEof = sm_eof,
	.xColumn = sm_column, .xRowid = sm_rowid,
};

/* sym(pc, kernel [, pid, ts]) and sym_origin(...): name any address. */
static void fn_sym(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct dtsql *c = sqlite3_user_data(ctx);
	if (c->sym == NULL || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	uint64_t pc = (uint64_t)sqlite3_value_int64(argv[0]);
	int kernel = sqlite3_value_int(argv[1]) != 0;
	uint32_t pid = argc > 2 ? (uint32_t)sqlite3_value_int64(argv[2]) : 0;
	uint64_t ts = argc > 3 ? (uint64_t)sqlite3_value_int64(argv[3]) : 0;
	res_text(ctx, dtsym_name(c->sym, pc, kernel, pid, ts));
}

static void fn_sym_origin(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct dtsql *c = sqlite3_user_data(ctx);
	if (c->sym == NULL || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	uint64_t pc = (uint64_t)sqlite3_value_int64(argv[0]);
	int kernel = sqlite3_value_int(argv[1]) != 0;
	uint32_t pid = argc > 2 ? (uint32_t)sqlite3_value_int64(argv[2]) : 0;
	uint64_t ts = argc > 3 ? (uint64_t)sqlite3_value_int64(argv[3]) : 0;
	res_text(ctx, dtsym_origin(c->sym, pc, kernel, pid, ts));
}

static void fn_ctx_free(void *p)
{
	ctx_unref(p);
}

/* The tables as modules named TABLE + suffix; the functions sym(),
 * sym_origin() only if funcs (they name one capture's addresses).  Returns
 * the shared context, owned by db's modules (NULL: failed, *err set); only
 * with funcs is it a handle for the caller (c->db set). */
static struct dtsql *attach_named(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym,
				  const char *suffix, int funcs, char **err)
{
	struct dtsql *c = ctx_new(r, sym);
	if (c == NULL) {
		if (err)
			*err = sqlite3_mprintf("out of memory");
		return NULL;
	}
	for (int k = 0; k <= T_EVENTS_GROUPED; k++) {
		struct modaux *m = malloc(sizeof(*m));
		if (m == NULL) {
			ctx_unref(c);
			if (err)
				*err = sqlite3_mprintf("out of memory");
			return NULL;
		}
		m->c = c;
		m->kind = k;
		c->refs++;
		/* on failure sqlite calls the destructor itself */
		char *mname = sqlite3_mprintf("%s%s", k == T_EVENTS_GROUPED ? EVENTS_GROUPED
					      : dtsql_tab[k].name, suffix);
		int rc = mname ? sqlite3_create_module_v2(db, mname,
							  k == T_EVENTS || k == T_EVENTS_GROUPED
							  ? &ev_module : &sm_module,
							  m, modaux_free) : SQLITE_NOMEM;
		if (mname == NULL)
			modaux_free(m);
		sqlite3_free(mname);
		if (rc != SQLITE_OK) {
			if (err)
				*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			ctx_unref(c);
			return NULL;
		}
	}
	if (dtsql_derived_attach(db, r, sym, suffix, err)) {
		ctx_unref(c);
		return NULL;
	}
	static const int nargs[] = { 2, 4 };
	if (!funcs) {
		ctx_unref(c);	/* the modules hold it */
		return c;
	}
	for (int i = 0; i < 2; i++) {
		c->refs += 2;
		if (sqlite3_create_function_v2(db, "sym", nargs[i],
					       SQLITE_UTF8 | SQLITE_DETERMINISTIC, c,
					       fn_sym, NULL, NULL, fn_ctx_free) != SQLITE_OK ||
		    sqlite3_create_function_v2(db, "sym_origin", nargs[i],
					       SQLITE_UTF8 | SQLITE_DETERMINISTIC, c,
					       fn_sym_origin, NULL, NULL, fn_ctx_free) != SQLITE_OK) {
			if (err)
				*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			ctx_unref(c);
			return NULL;
		}
	}
	c->db = db;
	ctx_unref(c);	/* the modules and functions hold it now */
	return c;
}

struct dtsql *dtsql_attach(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym,
			   char **err)
{
	struct dtsql *h = attach_named(db, r, sym, "", 1, err);

	if (h && (dtsql_view_functions(db) < 0 ||
		  dtsql_probe_views(db, &r, 1, NULL, NULL, err) < 0)) {
		if (err && *err == NULL)
			*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return NULL;
	}
	return h;
}

int dtsql_attach_many(sqlite3 *db, struct dtcap_reader *const *r, struct dtsym *const *sym,
		      const char *const *capture, const char *const *host, size_t n,
		      char **err)
{
	if (n > DTSQL_MAX_CAPTURES) {
		if (err)
			*err = sqlite3_mprintf("%d captures: at most %d at once", (int)n,
					       DTSQL_MAX_CAPTURES);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "__c%zu", i);
		if (attach_named(db, r[i], sym[i], suffix, i == 0, err) == NULL)
			return -1;
	}
	/* each table (the derived ones after them): one TEMP view over the
	 * captures' tables */
	for (int k = 0; k < T_NTABLES + 2; k++) {
		const char *tn = k < T_NTABLES ? dtsql_tab[k].name : dtsql_derived_names[k - T_NTABLES];
		sqlite3_str *q = sqlite3_str_new(db);
		sqlite3_str_appendf(q, "CREATE TEMP VIEW %s AS ", tn);
		for (size_t i = 0; i < n; i++)
			/* (sqlite's printf has no %zu: its %z is a string) */
			sqlite3_str_appendf(q, "%sSELECT *, %Q AS capture, %Q AS host FROM main.%s__c%d",
					    i ? " UNION ALL " : "", capture[i], host[i], tn, (int)i);
		char *sql = sqlite3_str_finish(q);
		char *e = NULL;
		int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, &e) : SQLITE_NOMEM;
		sqlite3_free(sql);
		if (rc != SQLITE_OK) {
			if (err)
				*err = e ? e : sqlite3_mprintf("out of memory");
			else
				sqlite3_free(e);
			return -1;
		}
	}
	if (dtsql_view_functions(db) < 0) {
		if (err)
			*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return -1;
	}
	return dtsql_probe_views(db, r, n, capture, host, err);
}

void dtsql_detach(struct dtsql *h)
{
	if (h == NULL)
		return;
	/* h goes with the last module or function unregistered */
	sqlite3 *db = h->db;
	for (int k = 0; k < T_NTABLES; k++)
		sqlite3_create_module_v2(db, dtsql_tab[k].name, NULL, NULL, NULL);
	sqlite3_create_module_v2(db, EVENTS_GROUPED, NULL, NULL, NULL);
	dtsql_derived_detach(db);
	for (int n = 2; n <= 4; n += 2) {
		sqlite3_create_function_v2(db, "sym", n, SQLITE_UTF8, NULL, NULL,
					   NULL, NULL, NULL);
		sqlite3_create_function_v2(db, "sym_origin", n, SQLITE_UTF8, NULL,
					   NULL, NULL, NULL, NULL);
	}
}

