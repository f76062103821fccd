/*
 * cmd_blame.c - the blame command line: `dtreport blame --tid T [--since A]
 * [--until B] [--depth N] [--folded] [-o FILE] CAPTURE`, and dtsh's `blame`
 * on its open capture.  Text by default; --folded or -o FILE.svg for a
 * graph.  The analysis is the engine's (report_blame.c).
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

enum { BL_OPT_DEPTH = 0x2401, BL_OPT_FOLDED };

static const struct option bl_longopts[] = {
	{ "depth",  1, NULL, BL_OPT_DEPTH },
	{ "folded", 0, NULL, BL_OPT_FOLDED },
	{ "output", 1, NULL, 'o' },
	{ "help",   0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
bl_usage(FILE *to)
{
	fprintf(to, "usage: %sblame --tid T [--since A] [--until B] [--depth N] [--folded] "
		"[-o FILE]%s%s\n", rpt_shell ? "" : "dtreport ", rpt_shell ? "" : " [--threads N]",
		rpt_shell ? "" : " CAPTURE");
	fprintf(to, "  where thread T's time went (dtrec --offcpu): on-CPU, waiting for a CPU,\n"
		"  blocked; each blocked stretch under the thread that woke it, with its\n"
		"  stack, and what that thread did meanwhile, N hops deep (default 3)\n"
		"  text tree by default; --folded: folded stacks (us); -o FILE: SVG\n");
	if (!rpt_shell)
		fputs("  --threads N  scan on N threads (1..256; default: the CPUs it may run on)\n",
		      to);
	if (!rpt_shell)
		fputs("  --partial  --salvage (how the capture is opened)\n", to);
}

/* The options: the report's, and where its graph goes (-o). */
struct bl_state {
	struct rpt_blame_opts	o;
	const char		*out;
};

static int
bl_args(int argc, char **argv, void *st, struct flt_filter *f, int *partial)
{
	struct bl_state *bs = st;
	struct rpt_blame_opts *o = &bs->o;
	char err[512], *end;
	unsigned long v;
	int c, have_tid = 0;

	memset(o, 0, sizeof(*o));
	bs->out = NULL;
	*partial = 0;
	o->depth = 3;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", bl_longopts, NULL)) != -1) {
		switch (c) {
		case FLT_OPT_TID:
			v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v == 0 || v > UINT32_MAX || have_tid) {
				rpt_err("blame", "--tid %s: want one thread id", optarg);
				goto usage;
			}
			o->tid = (uint32_t)v;
			have_tid = 1;
			continue;
		case FLT_OPT_SINCE:
		case FLT_OPT_UNTIL:
		case FLT_OPT_SALVAGE:
		case FLT_OPT_THREADS:
			if (flt_option(f, c, optarg, err, sizeof(err)) < 0) {
				rpt_err("blame", "%s", err);
				goto usage;
			}
			continue;
		case FLT_OPT_PID: case FLT_OPT_COMM: case FLT_OPT_PROBE: case FLT_OPT_CPU:
		case FLT_OPT_CTX:
			rpt_err("blame", "%s: blame follows one thread (--tid) and its wakers, "
				"whatever they are; it takes --since and --until", argv[optind - 1]);
			goto usage;
		case BL_OPT_DEPTH:
			v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v > 16) {
				rpt_err("blame", "--depth %s: want 0 to 16 hops", optarg);
				goto usage;
			}
			o->depth = (unsigned)v;
			break;
		case BL_OPT_FOLDED:
			o->folded = 1;
			break;
		case 'o':
			bs->out = optarg;
			break;
		case RPT_OPT_PARTIAL:
			*partial = 1;
			break;
		case 'h':
			bl_usage(stdout);
			return -1;
		case ':':
			rpt_err("blame", "option %s needs a value", argv[optind - 1]);
			goto usage;
		default:
			rpt_err("blame", "unknown option %s", argv[optind - 1]);
			goto usage;
		}
	}
	if (!have_tid) {
		rpt_err("blame", "--tid T: which thread");
		goto usage;
	}
	/* text unless a graph is asked for: --folded, or a file (SVG) */
	o->text = !o->folded && !bs->out;
	return 0;
usage:
	bl_usage(stderr);
	return RPT_EXIT_USAGE;
}

static int
bl_run(const struct rpt_cap *c, struct flt_filter *f, void *st, volatile sig_atomic_t *cancel)
{
	const struct bl_state *bs = st;
	const struct rpt_blame_opts *o = &bs->o;
	struct dtu_out out;
	char err[512];
	int ret;

	if (!o->text && !o->folded && (!bs->out || !strcmp(bs->out, "-")) && isatty(1)) {
		rpt_err("blame", "not writing SVG to a terminal: use -o FILE.svg or --folded");
		return RPT_EXIT_USAGE;
	}
	if (dtu_out_open(&out, bs->out, &c->path, 1, err, sizeof(err))) {
		rpt_err("blame", "%s", err);
		return RPT_EXIT_ERROR;
	}
	ret = rpt_blame(c, f, o, out.f, out.name, cancel);
	if (ret) {
		dtu_out_abort(&out);
		return ret;
	}
	if (dtu_out_commit(&out, err, sizeof(err))) {
		rpt_err("blame", "%s", err);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

static const struct rpt_cmd bl_cmd = { "blame", bl_usage, bl_args, NULL, bl_run };

int
cmd_blame(int argc, char **argv)
{
	struct bl_state bs;

	return rpt_cmd_main(&bl_cmd, &bs, argc, argv);
}

int
cmd_blame_on(const struct rpt_cap *c, int argc, char **argv, volatile sig_atomic_t *cancel)
{
	struct bl_state bs;

	return rpt_cmd_on(&bl_cmd, &bs, c, argc, argv, cancel);
}
