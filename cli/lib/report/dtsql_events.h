/*
 * dtsql_events.h - what the events cursor (dtsql_events.c) and the grouped
 * scan under events_grouped (dtsql_gscan.c) share: the cursor and its
 * pushed-down filters, a flt_filter whose tests are filter.c's.  Nothing
 * else includes it.
 */
#ifndef DTSQL_EVENTS_H
#define DTSQL_EVENTS_H

#include <math.h>
#include <stdint.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql_int.h"
#include "filter.h"
#include "scan_pool.h"

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

	/*
	 * The pushed-down constraints, as the reports' filter (xFilter
	 * collects them into it; all conservative: sqlite re-checks): the
	 * row test and the block skip of the plain scan, the per-context
	 * test and the block skip of the grouped one (filter.h).
	 */
	struct flt_filter flt;
	int		empty;		/* a constraint no row can pass */

	/* streaming on the pool: blocks decoded and their rows selected by
	 * flt on scan_pool.c's helpers, in file order (NULL: this thread) */
	struct dtsp_ahead *ahead;
	size_t		ablocks;	/* blocks it was to give */
	const uint32_t	*sel;		/* the current block's rows it passed */
	uint32_t	nsel, si;	/* how many, the next to give */

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
	/* ORDER BY ts alone, streamed (dtsql_events.c, stream_fill): mat
	 * holds the rows of the blocks read so far not yet given, in read
	 * order; the first nemit of perm are given, those sbound lets go (all
	 * with sall), which no unread block can undercut (sufmin[k]: the
	 * least key of the blocks from read position k on that may match) */
	int		stream, sdone, sall;
	int		sdesc;		/* descending: blocks read last first */
	uint64_t	*sufmin;
	uint64_t	sbound;
	size_t		nemit, cur_blk, snext;	/* snext: next read position */
	size_t		sheld;		/* the most rows held (DT_SQL_DEBUG) */

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
 * The per-context integer columns xBestIndex gives range constraints of
 * (FLT_X_* of the filter's ranges; probe and comm are not among them).
 * A range constraint's idxStr code is xr_codes[x * 4 + its operator (0 >,
 * 1 >=, 2 <, 3 <=)]: characters no other constraint's code is, printable
 * for EXPLAIN QUERY PLAN's readers.
 */
enum { XC_PID = FLT_X_PID, XC_TID = FLT_X_TID, XC_KSTACK = FLT_X_KSTACK,
       XC_USTACK = FLT_X_USTACK, XC_FLAGS = FLT_X_FLAGS, XC_N };
static const struct { int ecol; unsigned col; } xcols[XC_N] = {
	{E_PID, DTCAP_COL_PID}, {E_TID, DTCAP_COL_TID}, {E_KSTACK, DTCAP_COL_KSTACK},
	{E_USTACK, DTCAP_COL_USTACK}, {E_FLAGS, DTCAP_COL_FLAGS},
};
static const char xr_codes[] = "0123456789ABDEFGIMQV";

/* The capture columns events_grouped groups by: those of few values. */
#define GROUP_COLS	(DTCAP_COL_CPU | DTCAP_COL_PID | DTCAP_COL_TID |	\
			 DTCAP_COL_PROBE | DTCAP_COL_COMM | DTCAP_COL_KSTACK |	\
			 DTCAP_COL_USTACK | DTCAP_COL_FLAGS | DTCAP_COL_CTX)
/* Those of them the capture stores once per context of a block. */
#define CTX_COLS	(GROUP_COLS & ~DTCAP_COL_CPU)

static inline void set_err(sqlite3_vtab *v, const char *fmt, const char *s)
{
	sqlite3_free(v->zErrMsg);
	v->zErrMsg = sqlite3_mprintf(fmt, s);
}

/* The reports' block skip on the cursor's filter (built by xFilter). */
static inline int block_may_match(const struct ecur *e, const struct dtcap_blockinfo *bi)
{
	return bi->rows && !flt_block_skip(&e->flt, bi);
}

/* events_grouped's xFilter once the constraints are read: the scan, then
 * the groups held as the cursor's rows (dtsql_gscan.c). */
int dtsql_group_scan(struct ecur *e);

/*
 * The plain scan's steps (dtsql_events.c), for the ORDER BY below:
 * dtev_seek moves to the next row the filters pass (e->eof at the end),
 * dtev_mat_reserve makes room for need rows in e->mat, dtev_mat_append
 * copies the current block's passing rows there.  SQLite codes (seek),
 * 0 / -1 out of memory (the others).
 */
int dtev_seek(struct ecur *e);
int dtev_mat_reserve(struct ecur *e, size_t need);
int dtev_mat_append(struct ecur *e);

/*
 * The cursor's ORDER BY (dtsql_order.c), ord its terms ("c+"/"c-" per
 * term, c = 'a' + column).  dtev_materialize holds every matching row and
 * sorts them.  dtev_stream_setup: 1 when ord is ts alone and the capture
 * can be streamed (then dtev_stream_fill gives the next rows each time
 * those given run out), 0 when not, -1 out of memory.  dtev_stream_peak:
 * the most rows a stream of c's capture holds, either way (UINT64_MAX:
 * it cannot be streamed), computed once and kept in c.  The held rows
 * and their order belong to the cursor until its next xFilter or close.
 */
int dtev_materialize(struct ecur *e, const char *ord);
int dtev_stream_setup(struct ecur *e, const char *ord);
int dtev_stream_fill(struct ecur *e);
uint64_t dtev_stream_peak(struct dtsql *c, int desc);

#endif
