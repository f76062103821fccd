/*
 * export.h - `dtreport export --format parquet|pprof|chrome` (the sqlite
 * format stays in report_sql.c).  Each exporter takes capture paths and an
 * output path, prints its own errors to stderr prefixed with the program
 * name, and returns an exit status (0 ok, 1 failure, 2 usage).  None of
 * them replaces an existing file: see each function.
 */
#ifndef DT_EXPORT_H
#define DT_EXPORT_H

/*
 * Called by cmd_export() for a --format other than sqlite: argv as for
 * cmd_export (argv[0] is "export").  Captures are opened with dtr_open():
 * one cut short needs partial (--partial), salvage (--salvage) reads past
 * damage; the exit status is then dtr_open's.
 */
int cmd_export_format(int argc, char **argv, const char *format);

/*
 * A Parquet dataset under dir, Hive-partitioned:
 *	dir/TABLE/host=H/capture=C/part-0.parquet
 * for the SQL tables events, probes, probe_args, stacks, frames,
 * processes, maps, counters, capture.  dir must be missing (it is
 * created), empty, or a dt dataset (holds _dt_dataset); a capture already
 * in the dataset is refused.  Each capture is written under dir/.tmp-*
 * and renamed into place, so a failure leaves the dataset as it was.
 * parquet_compat (--parquet-compat): integers PLAIN, for readers older
 * than Spark 3.3 that cannot read DELTA_BINARY_PACKED.
 */
int export_parquet(const char *dir, char *const *caps, int ncaps, int partial, int salvage,
		   int parquet_compat);

/* profile.proto, gzip-compressed, at path (created; never replaced). */
int export_pprof(const char *path, const char *cap, int partial, int salvage);

/* Chrome trace event JSON at path (created; never replaced). */
int export_chrome(const char *path, const char *cap, int partial, int salvage);

/* Shared: the path names an existing file or symlink (1), or not (0). */
int export_exists(const char *path);

/*
 * The start of a one-file export (pprof, chrome): refuse an output path
 * that exists (message printed, *status 1), else open cap with dtr_open.
 * The reader, or NULL with *status the exit status.
 */
struct dtcap_reader;
struct dtcap_reader *export_open(const char *path, const char *cap, int partial, int salvage,
				 int *status);

#endif /* DT_EXPORT_H */
