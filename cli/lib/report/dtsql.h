/*
 * dtsql.h - SQL over a capture: sqlite3 virtual tables that read the .dtc
 * columns in place (no import step), plus a small statement runner that
 * prints results as an aligned table, CSV or JSON.  Used by `dtreport sql`,
 * `dtreport export` and dtsh.  The schema is documented in doc/SQL.md.
 *
 * Tables (eponymous virtual tables of the "main" schema, so they need no
 * CREATE and stay out of `SELECT * FROM sqlite_master`):
 *	events     one row per event; ts, pid and probe constraints are
 *	           pushed down (whole blocks skipped by their index)
 *	probes     the probes named in the capture
 *	probe_args one row per logical argument of each probe
 *	stacks     interned stacks
 *	frames     one row per frame, named through dtsym
 *	processes  process snapshots (pid, ppid, comm, exe, ts)
 *	maps       the mappings of each process snapshot
 *	counters   counter snapshots, one row per CPU plus the recorder's
 *	capture    one row: host, kernel, clocks, command, event count
 *
 * Nothing here calls exit() or prints outside the FILE* it is given.
 * Implemented by the dtsql_*.c files, one job each (listed in dtsql_int.h).
 */
#ifndef DTSQL_H
#define DTSQL_H

#include <signal.h>
#include <stdio.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsym.h"

/*
 * The connection user SQL runs on (dtreport sql, dtsh): in memory, and
 * guarded so that no statement writes a file: ATTACH, DETACH, VACUUM
 * (also INTO) and any change outside the TEMP schema are refused (TEMP
 * tables and views stay allowed, kept in memory), defensive mode is on,
 * extensions cannot be loaded.  A refused statement fails in dtsql_exec
 * with a message naming the operation.  NULL with *err (sqlite3_free()).
 */
sqlite3 *dtsql_open(char **err);

/* One capture's tables on one connection (opaque). */
struct dtsql;

/*
 * Register the capture's virtual tables on db.  r and sym (sym may be NULL:
 * frames then have NULL names) are borrowed, not copied: they must outlive
 * db or the next dtsql_detach().  Calling it again on the same db replaces
 * the previous capture (and ends the previous handle).
 * Returns the attach's handle (for export_sqlite.c and dtsql_detach), or NULL
 * with a message in *err (sqlite3_free() it; err may be NULL).  The handle
 * belongs to db: it stays valid until dtsql_detach(handle), the next
 * dtsql_attach on db or sqlite3_close(db), and the caller never frees it.
 */
struct dtsql *dtsql_attach(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym,
			   char **err);
/*
 * Several captures on one connection: each one's tables are registered as
 * TABLE__cI (I from 0), and every table name becomes a TEMP view, the
 * UNION ALL of the captures' tables with two more columns, capture and
 * host (capture[i], host[i]; copied into the view's SQL).  sym() and
 * sym_origin() name addresses of the first capture only.  SQLite allows
 * up to 500 terms in a compound SELECT, so up to 500 captures.  The
 * readers and symbol tables must outlive db; the tables go with db (no
 * handle: the views export nothing).  0, or -1 with *err.
 */
#define DTSQL_MAX_CAPTURES	500	/* SQLite's limit of compound SELECT terms */
int dtsql_attach_many(sqlite3 *db, struct dtcap_reader *const *r, struct dtsym *const *sym,
		      const char *const *capture, const char *const *host, size_t n,
		      char **err);

/* Unregister h's tables and functions from its db (before closing the
 * reader while db lives on); h is gone after.  h may be NULL. */
void dtsql_detach(struct dtsql *h);

enum dtsql_format {
	DTSQL_TABLE,	/* aligned columns with a header and a row count */
	DTSQL_CSV,	/* RFC 4180, header line, NULL as an empty field */
	DTSQL_JSON,	/* an array of row objects; several statements: an array of those */
};

/*
 * Run every statement of sql in turn, printing each result in fmt to out.
 * A line starting with '.' is a dot-command of the sqlite3 shell: .tables
 * and .schema [TABLE].  In JSON, when more statements follow the first
 * that returns columns, the whole output is one array of result arrays, so
 * it stays one JSON document.  A write error on out stops the run (-1,
 * "write error").
 * Returns 0, or -1 with sqlite's own message in *err (sqlite3_free() it):
 * "near \"SELEC\": syntax error", or "interrupted" when cancelled.
 * Cancel: set *cancel to non-zero (e.g. from a SIGINT handler; cancel may
 * be NULL), or call sqlite3_interrupt(db) from another thread.
 */
int dtsql_exec(sqlite3 *db, const char *sql, enum dtsql_format fmt, FILE *out,
	       volatile sig_atomic_t *cancel, char **err);

/* The table names, NULL-terminated (static storage). */
const char *const *dtsql_tables(void);
/*
 * "CREATE TABLE t(...);" with one column a line, for the table name (any
 * case) or every table (NULL), to out (NULL: only check the name).  -1 if
 * name is no table.
 */
int dtsql_schema(FILE *out, const char *name);

#endif /* DTSQL_H */
