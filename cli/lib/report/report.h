/*
 * report.h - dtreport's subcommands, in libdtcli so dtsh parses the very
 * same options.  Each takes argv after the subcommand word (argv[0] is the
 * subcommand) and returns the exit status; none calls exit(), and each
 * resets getopt (optind = 0) before parsing.  stats, flame, diff and top
 * only parse: the work is the engine's (engine.h).
 */
#ifndef DTREPORT_REPORT_H
#define DTREPORT_REPORT_H

#include <signal.h>
#include <stdio.h>

#include "dtcap.h"

int cmd_stats(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* callers and callees (argv[0] says which) */
int cmd_calls(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_latency(int argc, char **argv);
int cmd_syscalls(int argc, char **argv);
int cmd_blame(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);

/*
 * The same commands in dtsh, on the capture it holds (c: engine.h; it is
 * borrowed), or the ncaps it holds (c[0..ncaps): stats reports each, flame
 * folds them into one graph; top takes one): argv has the options only, no
 * capture operands.  They run in-process; cancel (dtsh's Ctrl-C flag) stops
 * them with "interrupted".  flame writes to default_out unless -o is given.
 */
struct rpt_cap;
int cmd_stats_on(const struct rpt_cap *c, int ncaps, int argc, char **argv,
		 volatile sig_atomic_t *cancel);
int cmd_flame_on(const struct rpt_cap *c, int ncaps, int argc, char **argv,
		 const char *default_out, volatile sig_atomic_t *cancel);
int cmd_top_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel);
int cmd_calls_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel);
int cmd_annotate_on(const struct rpt_cap *c, int argc, char **argv,
		    volatile sig_atomic_t *cancel);
int cmd_latency_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel);
int cmd_syscalls_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel);
int cmd_blame_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel);
int cmd_heatmap_on(const struct rpt_cap *c, int argc, char **argv, const char *default_out,
		   volatile sig_atomic_t *cancel);
/* export (export.c): parquet adds the ncaps captures to its dataset, the
 * other formats take one */
int cmd_export_on(const struct rpt_cap *c, int ncaps, int argc, char **argv,
		  volatile sig_atomic_t *cancel);

/* Exit statuses of every command (dtreport(1) EXIT STATUS). */
#define RPT_EXIT_OK		0
#define RPT_EXIT_ERROR		1
#define RPT_EXIT_USAGE		2
#define RPT_EXIT_PARTIAL	3	/* capture cut short; --partial not given */

/* pid 0's name in every report: the idle task of each CPU (swapper/N). */
#define DT_IDLE_NAME		"[idle]"

/* The long option every command takes: read what a cut capture holds. */
#define RPT_OPT_PARTIAL		0x3001
#define RPT_LONGOPT_PARTIAL	{ "partial", 0, NULL, RPT_OPT_PARTIAL }
/* Raw symbol names: no demangling of C++/Rust/D names (dtsym_demangle). */
#define RPT_OPT_NO_DEMANGLE	0x3003
#define RPT_LONGOPT_NO_DEMANGLE	{ "no-demangle", 0, NULL, RPT_OPT_NO_DEMANGLE }
/* Inlined calls folded into their callers (dtsym_inline). */
#define RPT_OPT_NO_INLINE	0x3004
#define RPT_LONGOPT_NO_INLINE	{ "no-inline", 0, NULL, RPT_OPT_NO_INLINE }
/* ... and a damaged one, skipping what does not decode (commands without
 * the filter options; theirs is FLT_OPT_SALVAGE) */
#define RPT_OPT_SALVAGE		0x3002
#define RPT_LONGOPT_SALVAGE	{ "salvage", 0, NULL, RPT_OPT_SALVAGE }

/*
 * Who speaks in messages: "dtreport", or "dtsh" when the shell runs a
 * command (dtsh sets rpt_shell; usage lines then leave out the capture,
 * which the shell supplies).
 */
extern int rpt_shell;
const char *rpt_prog(void);
/* What a scan's progress line says ("dtreport: reading: 40% (...)"). */
const char *rpt_reading(void);

/* "PROG CMD: " + message + newline on stderr. */
void rpt_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Open a capture for command cmd.  A capture that is cut short (the
 * format library's warning: empty file, recording killed, truncated copy)
 * is read only with partial set (--partial), the warning then printed;
 * salvage (--salvage, which implies partial) also reads past damaged
 * chunks, saying what was skipped;
 * without it the command stops with RPT_EXIT_PARTIAL, so a script never
 * mistakes an empty or cut trace for a complete one.  Returns the reader,
 * or NULL with the message printed and *status set.
 */
struct dtcap_reader *rpt_open(const char *cmd, const char *path, int partial, int salvage,
			      int *status);

/* A filter that matched no event says so (one rule for every filter). */
void rpt_note_empty(const char *cmd, const char *path, unsigned long long matched,
		    int filtered);

/*
 * A shell command's operands (after getopt, at argv[optind..]): none is
 * allowed, the capture being the open one, nor --salvage (an option of
 * opening).  0, or RPT_EXIT_USAGE with the message (and usage) printed.
 */
int rpt_shell_operands(const char *cmd, int argc, char **argv, int salvage,
		       void (*usage)(FILE *));

#endif
