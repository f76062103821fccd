/*
 * cmd_annotate.c - the annotate command line: `dtreport annotate FUNC
 * [options] CAPTURE` and dtsh's `annotate FUNC [options]` on its open
 * capture, on the skeleton of cmd_run.c.  The tables are the engine's
 * (report_annotate.c).
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

#define ANN_OPT_NOSOURCE	0x2301
#define ANN_OPT_NOINSNS		0x2302

static const struct option ann_longopts[] = {
	{ "no-source", 0, NULL, ANN_OPT_NOSOURCE },
	{ "no-insns",  0, NULL, ANN_OPT_NOINSNS },
	{ "help",      0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	RPT_LONGOPT_NO_DEMANGLE,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void ann_usage(FILE *to)
{
	if (rpt_shell)
		fprintf(to, "usage: annotate FUNC [--no-source] [--no-insns] [filters]\n");
	else
		fprintf(to, "usage: dtreport annotate FUNC [--no-source] [--no-insns] [--partial] "
			"[filters] CAPTURE\n");
	fprintf(to, "  FUNC: a name as printed, a glob (\"*advance*\") or /regex/ (extended)\n"
		"  the samples taken in it (self) by source line, with the text where the\n"
		"  source file is readable, and by instruction, disassembled from the\n"
		"  binary on disk when its build id is the recorded one\n"
		"  --no-source: line numbers only   --no-insns: no instruction table\n");
	fputs(rpt_shell ? FLT_USAGE_FILTERS : FLT_USAGE, to);
}

/* Options anywhere; operands left in argv[optind..].  0 to go on, -1
 * after --help, else a status. */
static int ann_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct rpt_annotate_opts *o = st;
	char err[512];
	int c;

	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", ann_longopts, NULL)) != -1) {
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err("annotate", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case ANN_OPT_NOSOURCE:
			o->no_source = 1;
			break;
		case ANN_OPT_NOINSNS:
			o->no_insns = 1;
			break;
		case RPT_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			ann_usage(stdout);
			return -1;
		case ':':
			rpt_err("annotate", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("annotate", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	if (optind >= argc || !argv[optind][0]) {
		rpt_err("annotate", "no function given");
		goto usage;
	}
	o->func = argv[optind++];
	return 0;
usage:
	ann_usage(stderr);
	return RPT_EXIT_USAGE;
}

static int ann_run(const struct rpt_cap *c, struct flt_filter *f, void *st,
		   volatile sig_atomic_t *cancel)
{
	return rpt_annotate(c, f, st, stdout, cancel);
}

static const struct rpt_cmd ann_cmd = { "annotate", ann_usage, ann_args, NULL, ann_run };

int cmd_annotate(int argc, char **argv)
{
	struct rpt_annotate_opts o = { 0 };

	return rpt_cmd_main(&ann_cmd, &o, argc, argv);
}

int cmd_annotate_on(const struct rpt_cap *c, int argc, char **argv,
		    volatile sig_atomic_t *cancel)
{
	struct rpt_annotate_opts o = { 0 };

	return rpt_cmd_on(&ann_cmd, &o, c, argc, argv, cancel);
}
