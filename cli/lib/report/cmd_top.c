/*
 * cmd_top.c - the top command line: `dtreport top [-n N] [--by KEY]
 * [filters] CAPTURE`, and dtsh's `top [N] [by KEY] [filters]` on its open
 * capture (the words dtsh has always taken, the options too).  The table
 * is the engine's (report_top.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "engine.h"
#include "filter.h"
#include "dtsym.h"
#include "report.h"

#define TOP_OPT_BY	0x2101
#define TOP_OPT_CHILDREN 0x2102

static const struct option top_longopts[] = {
	{ "count", 1, NULL, 'n' },
	{ "by",    1, NULL, TOP_OPT_BY },
	{ "children", 0, NULL, TOP_OPT_CHILDREN },
	{ "help",  0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	RPT_LONGOPT_NO_DEMANGLE,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void top_usage(FILE *to)
{
	if (rpt_shell)
		fprintf(to, "usage: top [N] [by comm|pid|probe|stack|syscall|sym|dso|srcline]\n"
			"       [--children] "
			"[filters]\n");
	else
		fprintf(to, "usage: dtreport top [-n N] [--by comm|pid|probe|stack|syscall|sym|dso|srcline]\n"
			"       "
			"[--children] [--partial] [filters] CAPTURE\n");
	if (!rpt_shell)
		fprintf(to, "  -n N, --count N: rows (default 10)   --by KEY: what to rank "
			"(default comm)\n");
	fprintf(to, "  sym, dso: samples by innermost function or object (self); --children:\n"
		"  by every function on the stack, each once a sample (inclusive)\n"
		"  srcline: the same by source line (file:line, the innermost inlined\n"
		"  call's), where the capture has source lines (dtrec stores them)\n");
	fprintf(to, "  comm, pid and stack count the timer probes' samples, as flame does, "
		"unless --probe chooses\n");
	fputs(rpt_shell ? FLT_USAGE_FILTERS : FLT_USAGE, to);
}

static int top_count(const char *s, struct rpt_top_opts *o)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || !*s || v == 0 || s[0] == '-') {
		rpt_err("top", "bad count '%s'", s);
		return -1;
	}
	o->limit = v;
	return 0;
}

static int top_key(const char *s, struct rpt_top_opts *o)
{
	for (unsigned b = 0; rpt_top_keys[b]; b++) {
		if (strcmp(s, rpt_top_keys[b]) == 0) {
			o->by = (enum rpt_top_by)b;
			return 0;
		}
	}
	rpt_err("top", "cannot group by '%s' (comm, pid, probe, stack, syscall, sym, dso or srcline)", s);
	return -1;
}

/*
 * The options; the operands are left at argv[optind..].  0 to go on, -1
 * after --help, else the status with the usage printed (unless the
 * message said enough).
 */
static int top_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct rpt_top_opts *o = st;
	char err[512];
	int c;

	o->limit = 10;
	o->by = RPT_TOP_COMM;
	o->children = 0;
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:h", top_longopts, NULL)) != -1) {
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err("top", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case 'n':
			if (top_count(optarg, o))
				return RPT_EXIT_USAGE;
			break;
		case TOP_OPT_BY:
			if (top_key(optarg, o))
				return RPT_EXIT_USAGE;
			break;
		case TOP_OPT_CHILDREN:
			o->children = 1;
			break;
		case RPT_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			top_usage(stdout);
			return -1;
		case ':':
			rpt_err("top", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("top", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	top_usage(stderr);
	return RPT_EXIT_USAGE;
}

/* dtsh's words: [N] [by KEY] */
static int top_words(int argc, char **argv, void *st)
{
	struct rpt_top_opts *o = st;
	int i = optind;

	if (i < argc && argv[i][0] >= '0' && argv[i][0] <= '9') {
		if (top_count(argv[i], o))
			return 1;
		i++;
	}
	if (i < argc && strcmp(argv[i], "by") == 0) {
		if (i + 1 >= argc) {
			top_usage(stderr);
			return RPT_EXIT_USAGE;
		}
		if (top_key(argv[i + 1], o))
			return 1;
		i += 2;
	}
	optind = i;
	return 0;
}

static int top_run(const struct rpt_cap *c, struct flt_filter *f, void *st,
		   volatile sig_atomic_t *cancel)
{
	return rpt_top(c, f, st, stdout, cancel);
}

static const struct rpt_cmd top_cmd = { "top", top_usage, top_args, top_words, top_run };

int cmd_top(int argc, char **argv)
{
	struct rpt_top_opts o;

	return rpt_cmd_main(&top_cmd, &o, argc, argv);
}

int cmd_top_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	struct rpt_top_opts o;

	return rpt_cmd_on(&top_cmd, &o, c, argc, argv, cancel);
}
