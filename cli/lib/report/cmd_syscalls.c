/*
 * cmd_syscalls.c - the syscalls command line: `dtreport syscalls [--by
 * comm|pid] [--json] [filters] CAPTURE`, and dtsh's `syscalls` on its open
 * capture.  The table is the engine's (report_syscalls.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd_run.h"
#include "engine.h"
#include "filter.h"
#include "report.h"

enum { SYS_OPT_BY = 0x2301, SYS_OPT_JSON };

static const struct option sys_longopts[] = {
	{ "by",   1, NULL, SYS_OPT_BY },
	{ "json", 0, NULL, SYS_OPT_JSON },
	{ "help", 0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
sys_usage(FILE *to)
{
	fprintf(to, "usage: %ssyscalls [--by comm|pid] [--json]%s [filters]%s\n",
		rpt_shell ? "" : "dtreport ", rpt_shell ? "" : " [--partial]",
		rpt_shell ? "" : " CAPTURE");
	fprintf(to, "  per syscall: calls, errors by errno, total, avg, min, max, stddev and p99\n"
		"  time, from syscall entry and return events (strace -c, perf trace -s)\n"
		"  --by comm|pid  one table per command name or process\n");
	fputs(rpt_shell ? FLT_USAGE_FILTERS : FLT_USAGE, to);
}

static int
sys_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct rpt_syscalls_opts *o = st;
	char err[512];
	int c;

	memset(o, 0, sizeof(*o));
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", sys_longopts, NULL)) != -1) {
		if (c == FLT_OPT_PROBE) {
			rpt_err("syscalls", "--probe: the table has every syscall; choose rows with "
				"--pid, --tid, --comm");
			goto usage;
		}
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err("syscalls", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case SYS_OPT_BY:
			if (strcmp(optarg, "comm") == 0)
				o->by = RPT_SYS_COMM;
			else if (strcmp(optarg, "pid") == 0)
				o->by = RPT_SYS_PID;
			else {
				rpt_err("syscalls", "--by %s: want comm or pid", optarg);
				goto usage;
			}
			break;
		case SYS_OPT_JSON:
			o->json = 1;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			sys_usage(stdout);
			return -1;
		case ':':
			rpt_err("syscalls", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("syscalls", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	sys_usage(stderr);
	return RPT_EXIT_USAGE;
}

static int
sys_run(const struct rpt_cap *c, struct flt_filter *f, void *st, volatile sig_atomic_t *cancel)
{
	return rpt_syscalls(c, f, st, stdout, cancel);
}

static const struct rpt_cmd sys_cmd = { "syscalls", sys_usage, sys_args, NULL, sys_run };

int
cmd_syscalls(int argc, char **argv)
{
	struct rpt_syscalls_opts o;

	return rpt_cmd_main(&sys_cmd, &o, argc, argv);
}

int
cmd_syscalls_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	struct rpt_syscalls_opts o;

	return rpt_cmd_on(&sys_cmd, &o, c, argc, argv, cancel);
}
