/*
 * cmd_latency.c - the latency command line: `dtreport latency [--probe
 * GLOB] [--by probe|comm|pid|tid] [--hist log2|linear:W] [--json] [filters]
 * CAPTURE`, and dtsh's `latency` with the same options on its open capture.
 * The report is the engine's (report_latency.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd_run.h"
#include "engine.h"
#include "filter.h"
#include "report.h"
#include "util.h"

enum { LAT_OPT_BY = 0x2201, LAT_OPT_HIST, LAT_OPT_JSON };

static const struct option lat_longopts[] = {
	{ "by",   1, NULL, LAT_OPT_BY },
	{ "hist", 1, NULL, LAT_OPT_HIST },
	{ "json", 0, NULL, LAT_OPT_JSON },
	{ "help", 0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
lat_usage(FILE *to)
{
	fprintf(to, "usage: %slatency [--probe GLOB] [--by probe|comm|pid|tid] "
		"[--hist log2|linear:W] [--json]%s [filters]%s\n", rpt_shell ? "" : "dtreport ",
		rpt_shell ? "" : " [--partial]", rpt_shell ? "" : " CAPTURE");
	fprintf(to, "  entry/return pairs per thread (syscall:, kprobe:, uprobe: ...:entry and\n"
		"  :return): count, p50, p90, p99, p99.9, max and a histogram per probe\n"
		"  --probe GLOB  which pairs ('syscall:read*', 'syscall:*nanosleep')\n"
		"  --by KEY      also split by comm, pid or tid\n"
		"  --hist H      log2 buckets of us (default) or linear:W (W a duration, 1ms)\n");
	fputs(rpt_shell ? FLT_USAGE_FILTERS : FLT_USAGE, to);
}

/* 0 to go on, -1 after --help, else the usage status */
static int
lat_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct rpt_latency_opts *o = st;
	char err[512];
	int c;

	memset(o, 0, sizeof(*o));
	*partial = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lat_longopts, NULL)) != -1) {
		if (c == FLT_OPT_PROBE) {
			/* a pair's name, not an event filter: a return must not
			 * be filtered away from its entry */
			if (o->glob) {
				rpt_err("latency", "--probe given twice (one glob: 'syscall:*sleep*')");
				goto usage;
			}
			o->glob = optarg;
			continue;
		}
		int fr = flt_option(f, c, optarg, err, sizeof(err));
		if (fr < 0) {
			rpt_err("latency", "%s", err);
			goto usage;
		}
		if (fr > 0)
			continue;
		switch (c) {
		case LAT_OPT_BY: {
			int k;
			for (k = 0; rpt_latency_keys[k] && strcmp(rpt_latency_keys[k], optarg); k++)
				;
			if (!rpt_latency_keys[k]) {
				rpt_err("latency", "--by %s: want probe, comm, pid or tid", optarg);
				goto usage;
			}
			o->by = k;
			break;
		}
		case LAT_OPT_HIST: {
			uint64_t w;
			if (strcmp(optarg, "log2") == 0) {
				o->hist_width = 0;
			} else if (strncmp(optarg, "linear:", 7) == 0 &&
				   dtu_parse_duration(optarg + 7, &w) == 0 && w > 0) {
				o->hist_width = w;
			} else {
				rpt_err("latency", "--hist %s: want log2 or linear:W with W a duration "
					"(linear:1ms)", optarg);
				goto usage;
			}
			break;
		}
		case LAT_OPT_JSON:
			o->json = 1;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			lat_usage(stdout);
			return -1;
		case ':':
			rpt_err("latency", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("latency", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	return 0;
usage:
	lat_usage(stderr);
	return RPT_EXIT_USAGE;
}

static int
lat_run(const struct rpt_cap *c, struct flt_filter *f, void *st, volatile sig_atomic_t *cancel)
{
	return rpt_latency(c, f, st, stdout, cancel);
}

static const struct rpt_cmd lat_cmd = { "latency", lat_usage, lat_args, NULL, lat_run };

int
cmd_latency(int argc, char **argv)
{
	struct rpt_latency_opts o;

	return rpt_cmd_main(&lat_cmd, &o, argc, argv);
}

int
cmd_latency_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	struct rpt_latency_opts o;

	return rpt_cmd_on(&lat_cmd, &o, c, argc, argv, cancel);
}
