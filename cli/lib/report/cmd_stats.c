/*
 * cmd_stats.c - the stats command line, dtreport's and dtsh's: options
 * and filters parsed here, the report made by the engine (report_stats.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "captures.h"
#include "engine.h"
#include "filter.h"
#include "dtsym.h"
#include "report.h"
#include "util.h"

static const struct option stats_longopts[] = {
	{ "json", 0, NULL, 'j' },
	{ "top",  1, NULL, 't' },
	{ "all",  0, NULL, 'a' },
	{ "help", 0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	RPT_LONGOPT_NO_DEMANGLE,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void stats_usage(FILE *to)
{
	if (rpt_shell) {
		fprintf(to, "usage: stats [--json] [--top N] [--all] [filters]\n"
			"  --all: also the probes and CPUs without events\n" FLT_USAGE_FILTERS);
		return;
	}
	fprintf(to, "usage: %s [--json] [--top N] [--all] [--partial] [filters]\n"
		"  --all: also the probes and CPUs without events\n"
		"  several captures: one report each (--json: an array of them)\n" FLT_USAGE,
		"dtreport stats CAPTURE|DIR...");
}

/*
 * The options; the operands are left at argv[optind..].  0 to go on, -1
 * after --help (status 0), else the status with the usage printed.
 */
static int stats_args(int argc, char **argv, struct rpt_stats_opts *so, struct flt_filter *f,
		      int *partial)
{
	char err[512];
	int c;

	so->json = so->all = 0;
	so->top = 10;
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", stats_longopts, NULL)) != -1) {
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err("stats", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case 'j':
			so->json = 1;
			break;
		case 'a':
			so->all = 1;
			break;
		case 't': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v > 1000000) {
				rpt_err("stats", "--top: want a count");
				goto usage;
			}
			so->top = (unsigned)v;
			break;
		}
		case RPT_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			stats_usage(stdout);
			return -1;
		case ':':
			rpt_err("stats", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("stats", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	stats_usage(stderr);
	return RPT_EXIT_USAGE;
}

/* The report of one capture to standard output, which must not be the
 * capture itself (`stats f.dtc >> f.dtc`). */
static int stats_one(const struct rpt_cap *c, struct flt_filter *f,
		     const struct rpt_stats_opts *so, volatile sig_atomic_t *cancel)
{
	struct dtu_out out;
	char err[512];
	const char *path = c->path;

	if (dtu_out_open(&out, NULL, &path, 1, err, sizeof(err))) {
		rpt_err("stats", "%s", err);
		return RPT_EXIT_ERROR;
	}
	int ret = rpt_stats(c, f, so, out.f, cancel);
	if (ret == 0 && dtu_out_commit(&out, err, sizeof(err))) {
		rpt_err("stats", "%s", err);
		ret = RPT_EXIT_ERROR;
	}
	return ret;
}

static int stats_path(const char *path, struct flt_filter *f, const struct rpt_stats_opts *so,
		      int partial)
{
	int ret = RPT_EXIT_ERROR;
	struct rpt_cap c = { NULL, NULL, path };

	if ((c.r = rpt_open("stats", path, partial, f->salvage, &ret)) == NULL)
		return ret;
	ret = stats_one(&c, f, so, NULL);
	dtcap_reader_close(c.r);
	return ret;
}

int cmd_stats(int argc, char **argv)
{
	struct flt_filter filt;
	struct rpt_stats_opts so;
	int partial, ret;
	char err[512];

	flt_init(&filt);
	if ((ret = stats_args(argc, argv, &so, &filt, &partial)) != 0) {
		flt_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (argc - optind < 1) {
		rpt_err("stats", "no capture given");
		stats_usage(stderr);
		flt_free(&filt);
		return RPT_EXIT_USAGE;
	}
	const char *path = argv[optind];
	struct stat pst;
	if (argc - optind == 1 && !(stat(path, &pst) == 0 && S_ISDIR(pst.st_mode))) {
		ret = stats_path(path, &filt, &so, partial);
		flt_free(&filt);
		return ret;
	}
	/* several captures: one report each, options kept */
	struct dtx_caps caps = { 0 };
	if (dtx_caps_add(&caps, argv + optind, argc - optind, err, sizeof(err)) < 0) {
		fprintf(stderr, "dtreport stats: %s\n", err);
		dtx_caps_free(&caps);
		flt_free(&filt);
		return RPT_EXIT_ERROR;
	}
	/* each report checks its own capture, but the first is printed
	 * before the second is opened: all of them, before any byte */
	if (dtu_stdout_not_input((const char *const *)caps.path, (size_t)caps.n, err,
				 sizeof(err)) < 0) {
		rpt_err("stats", "%s", err);
		dtx_caps_free(&caps);
		flt_free(&filt);
		return RPT_EXIT_ERROR;
	}
	ret = 0;
	if (so.json)
		fputs("[", stdout);
	for (int i = 0; i < caps.n; i++) {
		if (i)
			fputs(so.json ? "," : "\n", stdout);
		int r2 = stats_path(caps.path[i], &filt, &so, partial);
		ret = r2 > ret ? r2 : ret;
	}
	if (so.json)
		fputs("]\n", stdout);
	dtx_caps_free(&caps);
	flt_free(&filt);
	return ret;
}

int cmd_stats_on(const struct rpt_cap *c, int ncaps, int argc, char **argv,
		 volatile sig_atomic_t *cancel)
{
	struct flt_filter filt;
	struct rpt_stats_opts so;
	int partial, ret;

	flt_init(&filt);
	if ((ret = stats_args(argc, argv, &so, &filt, &partial)) == 0 &&
	    (ret = rpt_shell_operands("stats", argc, argv, filt.salvage, stats_usage)) == 0) {
		/* several: one report each, as dtreport stats prints them */
		if (so.json && ncaps > 1)
			fputs("[", stdout);
		for (int i = 0; i < ncaps; i++) {
			if (i)
				fputs(so.json ? "," : "\n", stdout);
			int r2 = stats_one(&c[i], &filt, &so, cancel);
			ret = r2 > ret ? r2 : ret;
			if (cancel && *cancel)
				break;
		}
		if (so.json && ncaps > 1)
			fputs("]\n", stdout);
	}
	flt_free(&filt);
	return ret < 0 ? 0 : ret;
}
