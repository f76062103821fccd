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
	DTR_LONGOPT_PARTIAL,
	DTR_LONGOPT_NO_DEMANGLE,
	DTF_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void top_usage(FILE *to)
{
	if (dtr_shell)
		fprintf(to, "usage: top [N] [by comm|pid|probe|stack|syscall|sym|dso|srcline]\n"
			"       [--children] "
			"[filters]\n");
	else
		fprintf(to, "usage: dtreport top [-n N] [--by comm|pid|probe|stack|syscall|sym|dso|srcline]\n"
			"       "
			"[--children] [--partial] [filters] CAPTURE\n");
	if (!dtr_shell)
		fprintf(to, "  -n N, --count N: rows (default 10)   --by KEY: what to rank "
			"(default comm)\n");
	fprintf(to, "  sym, dso: samples by innermost function or object (self); --children:\n"
		"  by every function on the stack, each once a sample (inclusive)\n"
		"  srcline: the same by source line (file:line, the innermost inlined\n"
		"  call's), where the capture has source lines (dtrec stores them)\n");
	fprintf(to, "  comm, pid and stack count the timer probes' samples, as flame does, "
		"unless --probe chooses\n");
	fputs(dtr_shell ? DTF_USAGE_FILTERS : DTF_USAGE, to);
}

static int top_count(const char *s, struct dtr_top_opts *o)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || !*s || v == 0 || s[0] == '-') {
		dtr_err("top", "bad count '%s'", s);
		return -1;
	}
	o->limit = v;
	return 0;
}

static int top_key(const char *s, struct dtr_top_opts *o)
{
	for (unsigned b = 0; dtr_top_keys[b]; b++) {
		if (strcmp(s, dtr_top_keys[b]) == 0) {
			o->by = (enum dtr_top_by)b;
			return 0;
		}
	}
	dtr_err("top", "cannot group by '%s' (comm, pid, probe, stack, syscall, sym, dso or srcline)", s);
	return -1;
}

/*
 * The options; the operands are left at argv[optind..].  0 to go on, -1
 * after --help, else the status with the usage printed (unless the
 * message said enough).
 */
static int top_args(int argc, char **argv, void *st, struct dtf_filter *f, int *partial)
{
	struct dtr_top_opts *o = st;
	char err[512];
	int c;

	o->limit = 10;
	o->by = DTR_TOP_COMM;
	o->children = 0;
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:h", top_longopts, NULL)) != -1) {
		int fr = dtf_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			dtr_err("top", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case 'n':
			if (top_count(optarg, o))
				return DTR_EXIT_USAGE;
			break;
		case TOP_OPT_BY:
			if (top_key(optarg, o))
				return DTR_EXIT_USAGE;
			break;
		case TOP_OPT_CHILDREN:
			o->children = 1;
			break;
		case DTR_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case DTR_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			top_usage(stdout);
			return -1;
		case ':':
			dtr_err("top", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			dtr_err("top", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	top_usage(stderr);
	return DTR_EXIT_USAGE;
}

/* dtsh's words: [N] [by KEY] */
static int top_words(int argc, char **argv, void *st)
{
	struct dtr_top_opts *o = st;
	int i = optind;

	if (i < argc && argv[i][0] >= '0' && argv[i][0] <= '9') {
		if (top_count(argv[i], o))
			return 1;
		i++;
	}
	if (i < argc && strcmp(argv[i], "by") == 0) {
		if (i + 1 >= argc) {
			top_usage(stderr);
			return DTR_EXIT_USAGE;
		}
		if (top_key(argv[i + 1], o))
			return 1;
		i += 2;
	}
	optind = i;
	return 0;
}

static int top_run(const struct dtr_cap *c, struct dtf_filter *f, void *st,
		   volatile sig_atomic_t *cancel)
{
	return dtr_top(c, f, st, stdout, cancel);
}

static const struct dtr_cmd top_cmd = { "top", top_usage, top_args, top_words, top_run };

int cmd_top(int argc, char **argv)
{
	struct dtr_top_opts o;

	return dtr_cmd_main(&top_cmd, &o, argc, argv);
}

int cmd_top_on(const struct dtr_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	struct dtr_top_opts o;

	return dtr_cmd_on(&top_cmd, &o, c, argc, argv, cancel);
}
