/*
 * cmd_syscalls.c - the syscalls command line: `dtreport syscalls [--by
 * comm|pid] [--json] [filters] CAPTURE`, and dtsh's `syscalls` on its open
 * capture.  The table is the engine's (report_syscalls.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "filter.h"
#include "report.h"

enum { SYS_OPT_BY = 0x2301, SYS_OPT_JSON };

static const struct option sys_longopts[] = {
	{ "by",   1, NULL, SYS_OPT_BY },
	{ "json", 0, NULL, SYS_OPT_JSON },
	{ "help", 0, NULL, 'h' },
	DTR_LONGOPT_PARTIAL,
	DTF_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
sys_usage(FILE *to)
{
	fprintf(to, "usage: %ssyscalls [--by comm|pid] [--json]%s [filters]%s\n",
		dtr_shell ? "" : "dtreport ", dtr_shell ? "" : " [--partial]",
		dtr_shell ? "" : " CAPTURE");
	fprintf(to, "  per syscall: calls, errors by errno, total, avg, min, max, stddev and p99\n"
		"  time, from syscall entry and return events (strace -c, perf trace -s)\n"
		"  --by comm|pid  one table per command name or process\n");
	fputs(dtr_shell ? DTF_USAGE_FILTERS : DTF_USAGE, to);
}

static int
sys_args(int argc, char **argv, struct dtr_syscalls_opts *o, struct dtf_filter *f, int *partial)
{
	char err[512];
	int c;

	memset(o, 0, sizeof(*o));
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", sys_longopts, NULL)) != -1) {
		if (c == DTF_OPT_PROBE) {
			dtr_err("syscalls", "--probe: the table has every syscall; choose rows with "
				"--pid, --tid, --comm");
			goto usage;
		}
		int fr = dtf_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			dtr_err("syscalls", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case SYS_OPT_BY:
			if (strcmp(optarg, "comm") == 0)
				o->by = DTR_SYS_COMM;
			else if (strcmp(optarg, "pid") == 0)
				o->by = DTR_SYS_PID;
			else {
				dtr_err("syscalls", "--by %s: want comm or pid", optarg);
				goto usage;
			}
			break;
		case SYS_OPT_JSON:
			o->json = 1;
			break;
		case DTR_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			sys_usage(stdout);
			return -1;
		case ':':
			dtr_err("syscalls", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			dtr_err("syscalls", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	sys_usage(stderr);
	return DTR_EXIT_USAGE;
}

int
cmd_syscalls(int argc, char **argv)
{
	struct dtf_filter filt;
	struct dtr_syscalls_opts o;
	int partial, ret;

	dtf_init(&filt);
	if ((ret = sys_args(argc, argv, &o, &filt, &partial)) != 0) {
		dtf_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (argc - optind != 1) {
		dtr_err("syscalls", argc - optind > 1 ? "unexpected argument '%s' (one capture)" :
			"no capture given%s", argc - optind > 1 ? argv[optind + 1] : "");
		sys_usage(stderr);
		dtf_free(&filt);
		return DTR_EXIT_USAGE;
	}
	struct dtr_cap c = { NULL, NULL, argv[optind] };
	if ((c.r = dtr_open("syscalls", c.path, partial, filt.salvage, &ret)) != NULL) {
		ret = dtr_syscalls(&c, &filt, &o, stdout, NULL);
		dtcap_reader_close(c.r);
	}
	dtf_free(&filt);
	return ret;
}

int
cmd_syscalls_on(const struct dtr_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	struct dtf_filter filt;
	struct dtr_syscalls_opts o;
	int partial, ret;

	dtf_init(&filt);
	if ((ret = sys_args(argc, argv, &o, &filt, &partial)) == 0 &&
	    (ret = dtr_shell_operands("syscalls", argc, argv, filt.salvage, sys_usage)) == 0)
		ret = dtr_syscalls(c, &filt, &o, stdout, cancel);
	dtf_free(&filt);
	return ret < 0 ? 0 : ret;
}
