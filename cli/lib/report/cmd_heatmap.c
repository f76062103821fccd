/*
 * cmd_heatmap.c - the heatmap command line: `dtreport heatmap [-o FILE]
 * [--rows N] [filters] CAPTURE`, and dtsh's `heatmap` on its open capture
 * (default FILE heatmap.svg).  The SVG is the engine's (report_heatmap.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "engine.h"
#include "filter.h"
#include "report.h"
#include "util.h"

enum { HM_OPT_ROWS = 0x2501 };

static const struct option hm_longopts[] = {
	{ "output", 1, NULL, 'o' },
	{ "rows",   1, NULL, HM_OPT_ROWS },
	{ "help",   0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
hm_usage(FILE *to)
{
	fprintf(to, "usage: %sheatmap [-o FILE.svg] [--rows N]%s [filters]%s\n",
		rpt_shell ? "" : "dtreport ", rpt_shell ? "" : " [--partial]",
		rpt_shell ? "" : " CAPTURE");
	fprintf(to, "  subsecond-offset heat map (FlameScope) of the profile samples, or of\n"
		"  --probe's events: columns are seconds, rows the offset within the second\n"
		"  (--rows N slices, default 50); click two cells for a --since/--until\n");
	fputs(rpt_shell ? FLT_USAGE_FILTERS : FLT_USAGE, to);
}

/* The options: the report's, and where the SVG goes (dtsh's default: the
 * shell's, when -o is not given). */
struct hm_state {
	struct rpt_heatmap_opts	o;
	const char		*outp;
	const char		*default_out;
};

static int
hm_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct hm_state *hs = st;
	struct rpt_heatmap_opts *o = &hs->o;
	char err[512], *end;
	int c;

	memset(o, 0, sizeof(*o));
	hs->outp = NULL;
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", hm_longopts, NULL)) != -1) {
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err("heatmap", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case 'o':
			hs->outp = optarg;
			break;
		case HM_OPT_ROWS: {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v < 1 || v > 1000) {
				rpt_err("heatmap", "--rows %s: want 1 to 1000", optarg);
				goto usage;
			}
			o->rows = (unsigned)v;
			break;
		}
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			hm_usage(stdout);
			return -1;
		case ':':
			rpt_err("heatmap", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("heatmap", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	hm_usage(stderr);
	return RPT_EXIT_USAGE;
}

static int
hm_run(const struct rpt_cap *c, struct flt_filter *f, void *st, volatile sig_atomic_t *cancel)
{
	const struct hm_state *hs = st;
	const struct rpt_heatmap_opts *o = &hs->o;
	const char *outp = hs->outp ? hs->outp : hs->default_out;
	struct dtu_out out;
	char err[512];
	int ret;

	if ((!outp || !strcmp(outp, "-")) && isatty(1)) {
		rpt_err("heatmap", "not writing SVG to a terminal: use -o FILE.svg or redirect");
		return RPT_EXIT_USAGE;
	}
	if (dtu_out_open(&out, outp, &c->path, 1, err, sizeof(err))) {
		rpt_err("heatmap", "%s", err);
		return RPT_EXIT_ERROR;
	}
	if ((ret = rpt_heatmap(c, f, o, out.f, out.name, cancel)) != 0) {
		dtu_out_abort(&out);
		return ret;
	}
	if (dtu_out_commit(&out, err, sizeof(err))) {
		rpt_err("heatmap", "%s", err);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

static const struct rpt_cmd hm_cmd = { "heatmap", hm_usage, hm_args, NULL, hm_run };

int
cmd_heatmap(int argc, char **argv)
{
	struct hm_state hs = { .default_out = NULL };

	return rpt_cmd_main(&hm_cmd, &hs, argc, argv);
}

int
cmd_heatmap_on(const struct rpt_cap *c, int argc, char **argv, const char *default_out,
	       volatile sig_atomic_t *cancel)
{
	struct hm_state hs = { .default_out = default_out };

	return rpt_cmd_on(&hm_cmd, &hs, c, argc, argv, cancel);
}
