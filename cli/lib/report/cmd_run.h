/*
 * cmd_run.h - the skeleton the engine reports' command lines share (top,
 * callers/callees, latency, syscalls, blame, heatmap): filters set up,
 * options parsed, the one capture operand opened for dtreport or none taken
 * in dtsh, the report run, the filters freed, the exit status chosen.  Each
 * cmd_X.c keeps its options and usage (parse) and its report call (run).
 */
#ifndef DTREPORT_CMD_RUN_H
#define DTREPORT_CMD_RUN_H

#include <signal.h>
#include <stdio.h>

#include "engine.h"
#include "filter.h"

struct rpt_cmd {
	const char	*name;		/* in messages: "latency" */
	void		(*usage)(FILE *to);
	/*
	 * argv's options into st and f (getopt reset by it); *partial from
	 * --partial.  0 to go on, -1 after --help, else the usage status with
	 * the message printed.
	 */
	int		(*parse)(int argc, char **argv, void *st, struct flt_filter *f,
				 int *partial);
	/*
	 * dtsh only, may be NULL: the command's words after the options
	 * (top's "[N] [by KEY]"), from optind on, which it moves past them.
	 * 0, or the status.
	 */
	int		(*words)(int argc, char **argv, void *st);
	/* The report on an open capture; cancel is NULL in dtreport. */
	int		(*run)(const struct rpt_cap *c, struct flt_filter *f, void *st,
			       volatile sig_atomic_t *cancel);
};

/* dtreport's `CMD [options] CAPTURE`: the exit status. */
int rpt_cmd_main(const struct rpt_cmd *cmd, void *st, int argc, char **argv);

/* dtsh's `CMD [options]` on the capture it holds: the status. */
int rpt_cmd_on(const struct rpt_cmd *cmd, void *st, const struct rpt_cap *c, int argc,
	       char **argv, volatile sig_atomic_t *cancel);

#endif
