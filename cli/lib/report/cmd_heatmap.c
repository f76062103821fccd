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

#include "engine.h"
#include "filter.h"
#include "report.h"
#include "util.h"

enum { HM_OPT_ROWS = 0x2501 };

static const struct option hm_longopts[] = {
	{ "output", 1, NULL, 'o' },
	{ "rows",   1, NULL, HM_OPT_ROWS },
	{ "help",   0, NULL, 'h' },
	DTR_LONGOPT_PARTIAL,
	DTF_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
hm_usage(FILE *to)
{
	fprintf(to, "usage: %sheatmap [-o FILE.svg] [--rows N]%s [filters]%s\n",
		dtr_shell ? "" : "dtreport ", dtr_shell ? "" : " [--partial]",
		dtr_shell ? "" : " CAPTURE");
	fprintf(to, "  subsecond-offset heat map (FlameScope) of the profile samples, or of\n"
		"  --probe's events: columns are seconds, rows the offset within the second\n"
		"  (--rows N slices, default 50); click two cells for a --since/--until\n");
	fputs(dtr_shell ? DTF_USAGE_FILTERS : DTF_USAGE, to);
}

static int
hm_args(int argc, char **argv, struct dtr_heatmap_opts *o, const char **outp, int *partial,
	struct dtf_filter *f)
{
	char err[512], *end;
	int c;

	memset(o, 0, sizeof(*o));
	*outp = NULL;
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", hm_longopts, NULL)) != -1) {
		int fr = dtf_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			dtr_err("heatmap", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case 'o':
			*outp = optarg;
			break;
		case HM_OPT_ROWS: {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v < 1 || v > 1000) {
				dtr_err("heatmap", "--rows %s: want 1 to 1000", optarg);
				goto usage;
			}
			o->rows = (unsigned)v;
			break;
		}
		case DTR_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			hm_usage(stdout);
			return -1;
		case ':':
			dtr_err("heatmap", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			dtr_err("heatmap", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	hm_usage(stderr);
	return DTR_EXIT_USAGE;
}

static int
hm_run(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_heatmap_opts *o,
       const char *outp, volatile sig_atomic_t *cancel)
{
	struct dtu_out out;
	char err[512];
	int ret;

	if ((!outp || !strcmp(outp, "-")) && isatty(1)) {
		dtr_err("heatmap", "not writing SVG to a terminal: use -o FILE.svg or redirect");
		return DTR_EXIT_USAGE;
	}
	if (dtu_out_open(&out, outp, &c->path, 1, err, sizeof(err))) {
		dtr_err("heatmap", "%s", err);
		return DTR_EXIT_ERROR;
	}
	if ((ret = dtr_heatmap(c, f, o, out.f, out.name, cancel)) != 0) {
		dtu_out_abort(&out);
		return ret;
	}
	if (dtu_out_commit(&out, err, sizeof(err))) {
		dtr_err("heatmap", "%s", err);
		return DTR_EXIT_ERROR;
	}
	return 0;
}

int
cmd_heatmap(int argc, char **argv)
{
	struct dtf_filter filt;
	struct dtr_heatmap_opts o;
	const char *outp;
	int partial, ret;

	dtf_init(&filt);
	if ((ret = hm_args(argc, argv, &o, &outp, &partial, &filt)) != 0) {
		dtf_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (argc - optind != 1) {
		dtr_err("heatmap", argc - optind > 1 ? "unexpected argument '%s' (one capture)" :
			"no capture given%s", argc - optind > 1 ? argv[optind + 1] : "");
		hm_usage(stderr);
		dtf_free(&filt);
		return DTR_EXIT_USAGE;
	}
	struct dtr_cap c = { NULL, NULL, argv[optind] };
	if ((c.r = dtr_open("heatmap", c.path, partial, filt.salvage, &ret)) != NULL) {
		ret = hm_run(&c, &filt, &o, outp, NULL);
		dtcap_reader_close(c.r);
	}
	dtf_free(&filt);
	return ret;
}

int
cmd_heatmap_on(const struct dtr_cap *c, int argc, char **argv, const char *default_out,
	       volatile sig_atomic_t *cancel)
{
	struct dtf_filter filt;
	struct dtr_heatmap_opts o;
	const char *outp;
	int partial, ret;

	dtf_init(&filt);
	if ((ret = hm_args(argc, argv, &o, &outp, &partial, &filt)) == 0 &&
	    (ret = dtr_shell_operands("heatmap", argc, argv, filt.salvage, hm_usage)) == 0)
		ret = hm_run(c, &filt, &o, outp ? outp : default_out, cancel);
	dtf_free(&filt);
	return ret < 0 ? 0 : ret;
}
