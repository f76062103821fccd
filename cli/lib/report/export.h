/*
 * export.h - the exports, reports whose output is a file for other tools:
 * SQLite (export_sqlite.c), a Parquet dataset (export_parquet.c), pprof
 * (export_pprof.c) and Chrome trace JSON (export_chrome.c).  export.c
 * parses `dtreport export` and dtsh's `export` (one parser), opens the
 * captures and dispatches; the writers never call back into it.
 *
 * Each writer is an engine report (engine.h says what c, f and cancel
 * are): it binds f to the capture (flt_resolve) and writes only the events
 * f passes; the capture's other tables (probes, stacks, processes, ...)
 * are written whole.  Its scan is the engine's (scan_pool.h
 * dtsp_ahead_*: blocks decoded on the pool, blocks f skips never read,
 * cancel polled before each block, the progress line of every report).
 * Messages speak through rpt_err ("dtreport export: ..." or "dtsh
 * export: ...").  The output is written under a temporary name and
 * renamed into place only when complete: a failure, a cancellation or a
 * fatal signal (dtu_out_cleanup_on_signals) leaves nothing under the
 * output's name, and the file that was there as it was.  Returns a
 * RPT_EXIT_* status; on success one line on stdout says what was written.
 */
#ifndef DT_EXPORT_H
#define DT_EXPORT_H

#include <signal.h>
#include <stdint.h>

#include "engine.h"
#include "filter.h"

struct rpt_export_opts {
	const char	*out;		/* the output file; parquet: the dataset dir */
	int		parquet_compat;	/* --parquet-compat: integers PLAIN, for
					 * readers older than Spark 3.3 */
};

/*
 * The capture as a plain SQLite database: the SQL tables (doc/SQL.md) as
 * real tables, events holding the rows f passes.  An existing regular file
 * at o->out is replaced once the new one is complete (the only export that
 * replaces: a database is rebuilt, not added to).
 */
int rpt_export_sqlite(const struct rpt_cap *c, struct flt_filter *f,
		      const struct rpt_export_opts *o, volatile sig_atomic_t *cancel);

/* profile.proto, gzip-compressed: the samples f passes (those dtreport
 * flame counts).  o->out is created; an existing file is never replaced. */
int rpt_export_pprof(const struct rpt_cap *c, struct flt_filter *f,
		     const struct rpt_export_opts *o, volatile sig_atomic_t *cancel);

/* Chrome trace event JSON of the events f passes.  o->out is created; an
 * existing file is never replaced. */
int rpt_export_chrome(const struct rpt_cap *c, struct flt_filter *f,
		      const struct rpt_export_opts *o, volatile sig_atomic_t *cancel);

/*
 * A Parquet dataset under o->out, Hive-partitioned:
 *	DIR/TABLE/host=H/capture=C/part-0.parquet
 * for the SQL tables events, probes, probe_args, stacks, frames,
 * processes, maps, counters, capture.  rpt_parquet_prepare first: DIR
 * must be missing (it is created), empty, or a dt dataset (holds
 * _dt_dataset); stale work directories of dead exports are removed.
 * rpt_export_parquet adds one capture (c->path names its partition); a
 * capture already in the dataset is refused.  It is written under
 * DIR/.tmp-export-* and renamed into place, so a failure leaves the
 * dataset as it was.  *nev and *bytes: events and bytes written.
 */
int rpt_parquet_prepare(const char *dir);
int rpt_export_parquet(const struct rpt_cap *c, struct flt_filter *f,
		       const struct rpt_export_opts *o, volatile sig_atomic_t *cancel,
		       uint64_t *nev, uint64_t *bytes);

#endif /* DT_EXPORT_H */
