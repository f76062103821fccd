/*
 * cmd_annotate.c - the annotate command line: `dtreport annotate FUNC
 * [options] CAPTURE` and dtsh's `annotate FUNC [options]` on its open
 * capture.  The tables are the engine's (report_annotate.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	DTR_LONGOPT_PARTIAL,
	DTR_LONGOPT_NO_DEMANGLE,
	DTF_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void ann_usage(FILE *to)
{
	if (dtr_shell)
		fprintf(to, "usage: annotate FUNC [--no-source] [--no-insns] [filters]\n");
	else
		fprintf(to, "usage: dtreport annotate FUNC [--no-source] [--no-insns] [--partial] "
			"[filters] CAPTURE\n");
	fprintf(to, "  FUNC: a name as printed, a glob (\"*advance*\") or /regex/ (extended)\n"
		"  the samples taken in it (self) by source line, with the text where the\n"
		"  source file is readable, and by instruction, disassembled from the\n"
		"  binary on disk when its build id is the recorded one\n"
		"  --no-source: line numbers only   --no-insns: no instruction table\n");
	fputs(dtr_shell ? DTF_USAGE_FILTERS : DTF_USAGE, to);
}

/* Options anywhere; operands left in argv[optind..].  0 to go on, -1
 * after --help, else a status. */
static int ann_args(int argc, char **argv, struct dtr_annotate_opts *o, struct dtf_filter *f,
		    int *partial)
{
	char err[512];
	int c;

	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", ann_longopts, NULL)) != -1) {
		int fr = dtf_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			dtr_err("annotate", "%s", err);
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
		case DTR_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case DTR_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			ann_usage(stdout);
			return -1;
		case ':':
			dtr_err("annotate", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			dtr_err("annotate", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	if (optind >= argc || !argv[optind][0]) {
		dtr_err("annotate", "no function given");
		goto usage;
	}
	o->func = argv[optind++];
	return 0;
usage:
	ann_usage(stderr);
	return DTR_EXIT_USAGE;
}

static int ann_main(int argc, char **argv, const struct dtr_cap *held,
		    volatile sig_atomic_t *cancel)
{
	struct dtf_filter filt;
	struct dtr_annotate_opts o = { 0 };
	int partial, ret;

	dtf_init(&filt);
	if ((ret = ann_args(argc, argv, &o, &filt, &partial)) != 0)
		goto out;
	if (held) {
		if ((ret = dtr_shell_operands("annotate", argc, argv, filt.salvage, ann_usage)) == 0)
			ret = dtr_annotate(held, &filt, &o, stdout, cancel);
		goto out;
	}
	if (argc - optind != 1) {
		if (argc - optind > 1)
			dtr_err("annotate", "unexpected argument '%s' (annotate takes one capture)",
				argv[optind + 1]);
		else
			dtr_err("annotate", "no capture given");
		ann_usage(stderr);
		ret = DTR_EXIT_USAGE;
		goto out;
	}
	struct dtr_cap c = { NULL, NULL, argv[optind] };
	if ((c.r = dtr_open("annotate", c.path, partial, filt.salvage, &ret)) != NULL) {
		ret = dtr_annotate(&c, &filt, &o, stdout, NULL);
		dtcap_reader_close(c.r);
	}
out:
	dtf_free(&filt);
	return ret < 0 ? 0 : ret;
}

int cmd_annotate(int argc, char **argv)
{
	return ann_main(argc, argv, NULL, NULL);
}

int cmd_annotate_on(const struct dtr_cap *c, int argc, char **argv,
		    volatile sig_atomic_t *cancel)
{
	return ann_main(argc, argv, c, cancel);
}
