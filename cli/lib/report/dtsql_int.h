/*
 * dtsql_int.h - what the files of SQL over a capture share; callers use
 * dtsql.h.  The job of each file:
 *	dtsql_schema.c	the tables' names and columns (one text declares the
 *			virtual tables and the export's real tables)
 *	dtsql_attach.c	attach/detach: struct dtsql, the modules,
 *			sym()/sym_origin()
 *	dtsql_events.c	the events table's cursor (dtsql_events.h)
 *	dtsql_gscan.c	the scan under events_grouped, on scan_pool.c
 *	dtsql_tables.c	the small tables (probes, stacks, frames...)
 *	dtsql_print.c	dtsql_exec: statements run, results printed
 *	dtsql_groupby.c	the counting fast path: statements over events
 *			rewritten to read events_grouped
 *	dtsql_tokens.c	SQL text as sqlite's tokens, for that rewrite
 *	dtsql_pages.c	the export's events table written as SQLite pages
 *	dtsql_guard.c	dtsql_open: the connection that writes no file
 *	dtsql_views.c	a view per probe: its fields by name, decoded
 */
#ifndef DTSQL_INT_H
#define DTSQL_INT_H

#include <math.h>
#include <signal.h>
#include <stdint.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "dtsym.h"
#include "filter.h"

/*
 * The cancel flag of the dtsql_exec running now, or NULL: set by
 * dtsql_exec around its statements (SQL runs on one thread of a process).
 * sqlite's progress handler cannot stop a scan done inside one xFilter
 * call, so events_grouped's scan reads it between blocks and ends the
 * statement with SQLITE_INTERRUPT.
 */
extern volatile sig_atomic_t *dtsql_cancel;

/*
 * The guard of dtsql_open (dtsql_guard.c).  dtsql_guard_auth is its
 * authorizer: code that sets an authorizer of its own for a prepare puts
 * the guard back with dtsql_guard_restore(db) (nothing on a connection
 * dtsql_open did not make, which dtsql_guarded tells).  What it refused
 * last: dtsql_guard_refused() ("ATTACH", "INSERT into main.t"), NULL when
 * nothing since dtsql_guard_clear().
 */
int dtsql_guard_auth(void *arg, int action, const char *a3, const char *a4, const char *a5,
		     const char *a6);
int dtsql_guarded(sqlite3 *db);
void dtsql_guard_restore(sqlite3 *db);
const char *dtsql_guard_refused(void);
void dtsql_guard_clear(void);

enum {
	T_EVENTS, T_PROBES, T_PROBE_ARGS, T_STACKS, T_FRAMES, T_PROCESSES,
	T_MAPS, T_COUNTERS, T_CAPTURE, T_NTABLES
};

struct dtsql_tabdef {
	const char *name;
	const char *cols;	/* column declarations, "a INTEGER, b TEXT" */
	int keycol;		/* column with '=' pushdown, -1: none */
};

/* Column lists: the same text declares the virtual tables and the real
 * tables of an export, so both have one schema. */
extern const struct dtsql_tabdef dtsql_tab[T_NTABLES];

/*
 * The derived tables (dtsql_derived.c): spans and sched, computed from the
 * events on first use and kept while attached.  Registered with the
 * capture's tables (name + suffix), listed and described with them, not
 * exported (they are the analyses' view, not the capture).
 */
extern const char *const dtsql_derived_names[];	/* NULL-terminated */
const char *dtsql_derived_cols(int k);
int dtsql_derived_attach(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym,
			 const char *suffix, char **err);
void dtsql_derived_detach(sqlite3 *db);
/*
 * derived_cache.c: a derived table (kind 0 spans, 1 sched) kept beside the
 * capture.  load: 1 with the table filled from a cache that agrees with
 * the capture, else 0 (none, stale, hostile: ignored).  save: writes it
 * when that may be done (see there), silently otherwise.
 */
struct rpt_spans;
struct rpt_sched;
int dtsql_cache_load(struct dtcap_reader *r, int kind, struct rpt_spans *sp,
		     struct rpt_sched *sc);
void dtsql_cache_save(struct dtcap_reader *r, int kind, const struct rpt_spans *sp,
		      const struct rpt_sched *sc);

/* The columns of events, in declaration order (dtsql_events.def). */
enum {
#define DTSQL_EVCOL(id, name, type, cols, pqt, pqopt) E_##id,
#include "dtsql_events.def"
#undef DTSQL_EVCOL
	E_NCOLS
};


/*
 * events_grouped (module "events_grouped", per capture like the others):
 * the events columns plus E_ROWS, _dt_rows.  One row per distinct value of
 * the columns the statement uses (colUsed), with _dt_rows the number of
 * events that have it; the columns not used read NULL.  Only the columns
 * that are the same for many events may be used (not ts, nargs, args,
 * retval, errno: the table refuses the plan).  dtsql_groupby.c turns GROUP
 * BY statements over events into statements over it.
 */
#define T_EVENTS_GROUPED	T_NTABLES
#define EVENTS_GROUPED		"events_grouped"
#define E_ROWS			E_NCOLS
#define E_ROWS_NAME		"_dt_rows"
/* Hidden: "_dt_ts_lo = A AND _dt_ts_hi = B" (integers) counts only the
 * events with A <= ts <= B (ts as SQL sees it, a signed 64-bit number),
 * without grouping by ts; each reads as the value it was given. */
#define E_TSLO			(E_NCOLS + 1)
#define E_TSHI			(E_NCOLS + 2)
#define E_TSLO_NAME		"_dt_ts_lo"
#define E_TSHI_NAME		"_dt_ts_hi"
/* Hidden: "_dt_bk_off = K AND _dt_bk_w = W" (integers, W > 0) groups by
 * _dt_bucket, (ts - K) / W as SQL computes it for integers (truncated
 * toward zero); a ts for which ts - K overflows 64 bits is an error
 * (SQL would go on in floating point: dtsql_groupby.c keeps |K| below
 * 2^62, so only a ts beyond 2^62 ns, 146 years, can). */
#define E_BUCKET		(E_NCOLS + 3)
#define E_BKOFF			(E_NCOLS + 4)
#define E_BKW			(E_NCOLS + 5)
#define E_BUCKET_NAME		"_dt_bucket"
#define E_BKOFF_NAME		"_dt_bk_off"
#define E_BKW_NAME		"_dt_bk_w"

/*
 * The GROUP BY fast path (dtsql_groupby.c): for a prepared statement orig
 * of dtsql_exec, a statement over events_grouped that returns the same
 * rows, columns and names, or NULL when orig is not of the shapes it
 * proves that of (see there) or DT_SQL_NO_GROUPED is set in the
 * environment.  The caller finalizes both.
 */
sqlite3_stmt *dtsql_groupby(sqlite3 *db, sqlite3_stmt *orig);

/* A virtual table of one attach: events and events_grouped (kind
 * T_EVENTS_GROUPED) are dtsql_events_module's, the others
 * dtsql_tables_module's. */
struct tab {
	sqlite3_vtab	base;
	struct dtsql	*c;	/* [I] */
	int		kind;	/* [I] T_* */
};
extern const sqlite3_module dtsql_events_module, dtsql_tables_module;
/* Their xConnect and xDisconnect: a table's schema from dtsql_tab. */
/*
 * The common part of a virtual table's connect: sql (sqlite3_mprintf'd,
 * freed here; NULL: out of memory) declared, a zeroed table of size bytes
 * (its sqlite3_vtab first) in *out, the table marked innocuous.
 */
int dtsql_vtab_declare(sqlite3 *db, char *sql, size_t size, sqlite3_vtab **out, char **err);
int dtsql_x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		    sqlite3_vtab **out, char **err);
int dtsql_x_disconnect(sqlite3_vtab *v);

/* An sqlite value as an exact integer, or 0 when it is not one. */
static inline int dtsql_val_int(sqlite3_value *v, int64_t *out)
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

/* Text from the capture (n < 0: NUL-terminated) as a result, as every
 * writer writes it (dtu_utf8_fix). */
void dtsql_result_textn(sqlite3_context *ctx, const char *s, int n);
void dtsql_result_text(sqlite3_context *ctx, const char *s);

/* Probe ids above this are looked up through dtcap_probe_by_id. */
#define PROBE_DENSE_MAX	(1u << 20)

/*
 * The handle of dtsql_attach: the capture's lookup tables, shared by every
 * table of one attach.  Reference-counted by the modules and functions
 * registered on db, so it is freed with the last of them (sqlite3_close or
 * dtsql_detach); callers never free it.  Every member but refs and the
 * ufirst cache is set by dtsql_attach.c's ctx_new and [I] after it.
 */
struct dtsql {
	sqlite3		*db;	/* of dtsql_attach; NULL for each of attach_many */
	struct dtcap_reader *r;
	struct dtsym	*sym;
	int		refs;

	/* comm id -> string (NULL for 0/unknown) and length, and its rank in
	 * BINARY order, so comm is read as the id column and never strlen'd.
	 * A comm that is not valid UTF-8 is replaced (dtu_utf8_fix) by a copy
	 * in comm_own, so queries, CSV and the export see what every other
	 * writer writes. */
	uint32_t	ncomms;
	const char	**comm;
	char		**comm_own;
	int		*comm_len;
	uint32_t	*comm_rank;

	/* probe id -> probe (NULL: unknown), dense when ids are small. */
	uint32_t	probe_max;
	int		probe_sparse;	/* some id >= PROBE_DENSE_MAX */
	const struct dtcap_probe **probe;
	uint32_t	*probe_rank;
	/* probe id -> its name as every writer writes it (dtu_utf8_fix:
	 * a uprobe's path need not be UTF-8); the few fixed ones owned */
	const char	**probe_name;
	char		**probe_name_own;

	/* ustack id -> pid and ts of its first event, to name user frames;
	 * built on the first need by a scan of three columns. */
	int		ufirst_done;
	uint32_t	*ufirst_pid;
	uint64_t	*ufirst_ts;

	/* probe indices sorted by id, so a join on probes.id looks its rows
	 * up instead of walking the table per outer row (processes by pid
	 * use the reader's index); built on the first keyed lookup. */
	uint32_t	*probe_by_id;

	uint64_t	*block_base;	/* global index of each block's first row */

	/* the most rows an ORDER BY ts stream holds, ascending [0] and
	 * descending [1] (dtsql_events.c, stream_peak); UINT64_MAX: none */
	int		speak_done[2];
	uint64_t	speak[2];
};

/* Fill c's ufirst tables (ustack -> pid and ts of its first event) on the
 * first call: 0, or -1 with *err set (sqlite3_free it). */
int dtsql_ctx_ufirst(struct dtsql *c, char **err);

static inline const struct dtcap_probe *ctx_probe(const struct dtsql *c, uint32_t id)
{
	if (id <= c->probe_max)
		return c->probe[id];
	return dtcap_probe_by_id(c->r, id);
}

/* p's name, valid UTF-8 (p from ctx_probe). */
static inline const char *ctx_probe_name(const struct dtsql *c, const struct dtcap_probe *p)
{
	return p->id <= c->probe_max && c->probe_name[p->id] ? c->probe_name[p->id] : p->name;
}

static inline const char *ctx_comm(const struct dtsql *c, uint32_t id, int *len)
{
	if (id <= c->ncomms) {
		*len = c->comm_len[id];
		return c->comm[id];
	}
	*len = 0;
	return NULL;
}

/*
 * Write path as a database holding events (the rows flt passes; resolved),
 * events_ts and events_pid, straight as SQLite pages (dtsql_pages.c); the
 * export's (export_sqlite.c).  The blocks come through scan_pool.h's
 * in-order scan, as every export's: those flt skips unread, *cancel
 * (NULL: never) polled before each block, the progress line under what
 * (NULL: none).  Returns the row count or -1 with *err set (sqlite3_free()
 * it).
 */
long long dtsql_write_events_db(struct dtsql *c, const char *path, const struct flt_filter *flt,
				volatile sig_atomic_t *cancel, const char *what, char **err);

/* dt_text(), dt_bytes(), dt_int() and errno_name() on db: what the probe
 * views use, and errno_name() for everyone.  0, or -1. */
int dtsql_view_functions(sqlite3 *db);

/*
 * dtsql_aggs.c: quantile_disc(x, q), quantile_cont(x, q), median(x), and
 * the weighted forms dtsql_groupby.c writes over events_grouped (the last
 * argument the row's weight, _dt_rows).  Registered by
 * dtsql_view_functions.
 */
#define DT_WSUM		"_dt_wsum"
#define DT_WTOTAL	"_dt_wtotal"
#define DT_WAVG		"_dt_wavg"
#define DT_WQDISC	"_dt_wquantile_disc"
#define DT_WQCONT	"_dt_wquantile_cont"
#define DT_WMEDIAN	"_dt_wmedian"
int dtsql_agg_functions(sqlite3 *db);

/*
 * A TEMP view per probe name of the n captures, named as the probe: the
 * event columns, then the fields by name (dtcap_args.h).  capture and host
 * NULL: one capture, over main.events; else over main.events__cI with the
 * columns capture and host.  0, or -1 with *err set.
 */
int dtsql_probe_views(sqlite3 *db, struct dtcap_reader *const *r, size_t n,
		      const char *const *capture, const char *const *host, char **err);

/*
 * dtsql_order.c: order perm (n row numbers, a permutation of 0..n-1)
 * stably by kv[row] ^ flip, flip 1 << 63 for signed keys: an LSD radix
 * sort over the bytes of the keys that vary (vary: the bits set in one
 * key and clear in another, the keys' OR ^ AND), tmp its scratch of n.
 * Rows with equal keys keep their order in perm.
 */
void dtsql_radix_perm(const uint64_t *kv, uint64_t flip, uint64_t vary, uint32_t *perm,
		      uint32_t *tmp, size_t n);

#endif /* DTSQL_INT_H */
