/*
 * cmd_calls.c - the callers and callees command lines: `dtreport callers
 * FUNC [options] CAPTURE` and dtsh's `callers FUNC [options]` on its open
 * capture (callees likewise).  The tree is the engine's (report_frames.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "dtsym.h"
#include "engine.h"
#include "filter.h"
#include "report.h"

#define CALLS_OPT_FOLDED	0x2201
#define CALLS_OPT_MINPCT	0x2202

static const struct option calls_longopts[] = {
	{ "folded",  0, NULL, CALLS_OPT_FOLDED },
	{ "min-pct", 1, NULL, CALLS_OPT_MINPCT },
	{ "help",    0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	RPT_LONGOPT_NO_DEMANGLE,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static const char *calls_cmd;	/* "callers" or "callees": who speaks */

static void calls_usage(FILE *to)
{
	if (rpt_shell)
		fprintf(to, "usage: %s FUNC [--folded] [--min-pct P] [filters]\n", calls_cmd);
	else
		fprintf(to, "usage: dtreport %s FUNC [--folded] [--min-pct P] [--partial] "
			"[filters] CAPTURE\n", calls_cmd);
	fprintf(to, "  FUNC: a name as printed, a glob (\"*advance*\") or /regex/ (extended)\n"
		"  --folded: folded stacks rooted at FUNC (for dtreport flame-style tools)\n"
		"  --min-pct P: leave out tree lines under P%% of all samples (default 0)\n");
	fputs(rpt_shell ? FLT_USAGE_FILTERS : FLT_USAGE, to);
}

/* Options anywhere; the operands (FUNC, and CAPTURE for dtreport) are
 * left in argv[optind..].  0 to go on, -1 after --help, else a status. */
static int calls_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct rpt_calls_opts *o = st;
	char err[512], *end;
	int c;

	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", calls_longopts, NULL)) != -1) {
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err(calls_cmd, "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case CALLS_OPT_FOLDED:
			o->folded = 1;
			break;
		case CALLS_OPT_MINPCT:
			o->minpct = strtod(optarg, &end);
			if (*end || end == optarg || !(o->minpct >= 0 && o->minpct <= 100)) {
				rpt_err(calls_cmd, "bad --min-pct '%s' (a share from 0 to 100)", optarg);
				return RPT_EXIT_USAGE;
			}
			break;
		case RPT_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			calls_usage(stdout);
			return -1;
		case ':':
			rpt_err(calls_cmd, "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err(calls_cmd, "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	if (optind >= argc || !argv[optind][0]) {
		rpt_err(calls_cmd, "no function given");
		goto usage;
	}
	o->pattern = argv[optind++];
	return 0;
usage:
	calls_usage(stderr);
	return RPT_EXIT_USAGE;
}

static int calls_run(const struct rpt_cap *c, struct flt_filter *f, void *st,
		     volatile sig_atomic_t *cancel)
{
	return rpt_calls(c, f, st, stdout, cancel);
}

static int calls_main(int argc, char **argv, const struct rpt_cap *held,
		      volatile sig_atomic_t *cancel)
{
	struct rpt_calls_opts o = { .callers = !strcmp(argv[0], "callers") };
	struct rpt_cmd cmd = { NULL, calls_usage, calls_args, NULL, calls_run };

	cmd.name = calls_cmd = o.callers ? "callers" : "callees";
	if (held)
		return rpt_cmd_on(&cmd, &o, held, argc, argv, cancel);
	return rpt_cmd_main(&cmd, &o, argc, argv);
}

int cmd_calls(int argc, char **argv)
{
	return calls_main(argc, argv, NULL, NULL);
}

int cmd_calls_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	return calls_main(argc, argv, c, cancel);
}
