/*
 * cmd_flame.c - the flame and diff command lines, dtreport's and dtsh's:
 * options, filters and the output file here, the graph made by the engine
 * (report_flame.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "captures.h"
#include "engine.h"
#include "filter.h"
#include "flame.h"
#include "dtsym.h"
#include "report.h"
#include "util.h"

/* What only the command line has: where the graph goes, how to open. */
struct flame_cli {
	const char	*out;		/* -o; NULL: standard output */
	int		partial;	/* --partial */
	const char	*folded_in;	/* --from-folded */
	const char	*capopt;	/* the first option that reads a capture */
};

enum {
	OPT_FOLDED = 0x2001, OPT_TITLE, OPT_WIDTH, OPT_MINWIDTH, OPT_REVERSE, OPT_INVERTED,
	OPT_NOCOMM, OPT_KERNEL, OPT_USER, OPT_HEIGHT, OPT_FONTSIZE, OPT_COLORS, OPT_COUNTNAME,
	OPT_OFFCPU, OPT_ONOFF, OPT_WAKERS, OPT_STATE, OPT_FROM_FOLDED,
};

static const struct option flame_longopts[] = {
	{ "output",   1, NULL, 'o' },
	{ "folded",   0, NULL, OPT_FOLDED },
	{ "from-folded", 1, NULL, OPT_FROM_FOLDED },
	{ "title",    1, NULL, OPT_TITLE },
	{ "width",    1, NULL, OPT_WIDTH },
	{ "height",   1, NULL, OPT_HEIGHT },
	{ "fontsize", 1, NULL, OPT_FONTSIZE },
	{ "colors",   1, NULL, OPT_COLORS },
	{ "colours",  1, NULL, OPT_COLORS },
	{ "countname", 1, NULL, OPT_COUNTNAME },
	{ "minwidth", 1, NULL, OPT_MINWIDTH },
	{ "reverse",  0, NULL, OPT_REVERSE },
	{ "inverted", 0, NULL, OPT_INVERTED },
	{ "no-comm",  0, NULL, OPT_NOCOMM },
	{ "kernel",   0, NULL, OPT_KERNEL },
	{ "user",     0, NULL, OPT_USER },
	{ "offcpu",   0, NULL, OPT_OFFCPU },
	{ "oncpu-offcpu", 0, NULL, OPT_ONOFF },
	{ "wakers",   0, NULL, OPT_WAKERS },
	{ "state",    1, NULL, OPT_STATE },
	{ "help",     0, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	RPT_LONGOPT_NO_DEMANGLE,
	RPT_LONGOPT_NO_INLINE,
	FLT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void flame_usage(const char *cmd, FILE *to)
{
	if (rpt_shell)
		fprintf(to, "usage: %s [-o FILE] [--folded] [options]\n", cmd);
	else if (!strcmp(cmd, "diff"))
		fprintf(to, "usage: dtreport diff A B [-o out.svg] [--folded] [options]\n"
			"  A, B: a capture each, or a directory each (a group: its *.dtc)\n");
	else
		fprintf(to, "usage: dtreport flame CAPTURE|DIR... [-o out.svg] [--folded] [options]\n"
			"       dtreport flame --from-folded FILE [-o out.svg] [--folded] "
			"[graph options]\n"
			"  --from-folded FILE: the graph of folded text (\"a;b;c COUNT\" lines, as\n"
			"    flamegraph.pl reads), not of a capture: only -o, --folded, --title,\n"
			"    --width, --height, --fontsize, --minwidth, --colors, --countname\n"
			"    and --inverted apply\n");
	fprintf(to, "  -o FILE: created 0600; another user's symbolic link or a device is refused\n"
		"  --title T  --width PX  --height PX (a frame)  --fontsize PX  --minwidth PX\n"
		"  --colors PALETTE (" FLAME_PALETTES ")\n"
		"  --countname NAME (what a sample is called)  --reverse  --inverted\n"
		"  --kernel | --user (one side of the stacks only)  --no-comm\n"
		"  --no-demangle (raw symbols)  --no-inline (inlined calls, shown as\n"
		"    \"f (inlined)\" frames where the capture has source lines, folded\n"
		"    into their callers)\n"
		"  --offcpu: off-CPU time (dtrec --offcpu) by the stack a thread left the\n"
		"    CPU with, in us  --state S,D,R (which: S sleeping, D uninterruptible,\n"
		"    R runnable, preempted or woken and waiting)  --oncpu-offcpu: also the\n"
		"    profile samples, weighted by their period  --wakers: the wakers' stacks\n"
		"    by the time the thread they woke had been blocked\n");
	/* the shell's capture is open already: how to open one is not its option */
	fputs(rpt_shell ? FLT_USAGE_FILTERS :
	      "  --partial (read a capture that was cut short)\n" FLT_USAGE, to);
}

static int parse_flame_args(const char *cmd, int argc, char **argv, struct rpt_flame_opts *fo,
			    struct flame_cli *fc, struct flt_filter *filt, int *help)
{
	char err[256];
	int c;

	optind = 0;
	opterr = 0;
	*help = 0;
	rpt_flame_opts_init(fo, cmd);
	fc->out = NULL;
	fc->partial = 0;
	fc->folded_in = NULL;
	fc->capopt = NULL;
	int li = -1;
	while ((c = getopt_long(argc, argv, ":o:h", flame_longopts, &li)) != -1) {
		const char *lname = li >= 0 ? flame_longopts[li].name : NULL;
		li = -1;
		int r = flt_option(filt, c, optarg, err, sizeof(err));
		if (r < 0) {
			rpt_err(cmd, "%s", err);
			return -1;
		}
		if (r > 0) {
			if (!fc->capopt)
				fc->capopt = lname ? lname : "a filter";
			continue;
		}
		/* what reads a capture, which folded text is not */
		switch (c) {
		case OPT_REVERSE: case OPT_NOCOMM: case OPT_KERNEL: case OPT_USER:
		case RPT_OPT_NO_DEMANGLE: case OPT_OFFCPU: case OPT_ONOFF: case OPT_WAKERS:
		case OPT_STATE: case RPT_OPT_PARTIAL:
			if (!fc->capopt && lname)
				fc->capopt = lname;
			break;
		}
		switch (c) {
		case 'o':
			fc->out = optarg;
			break;
		case OPT_FOLDED:
			fo->folded = 1;
			break;
		case OPT_FROM_FOLDED:
			if (rpt_shell || strcmp(cmd, "flame")) {
				rpt_err(cmd, "--from-folded: only dtreport flame reads folded text");
				return -1;
			}
			fc->folded_in = optarg;
			break;
		case OPT_TITLE:
			fo->title = optarg;
			break;
		case OPT_WIDTH: {
			char *end;
			unsigned long w = strtoul(optarg, &end, 10);
			if (*end || w < 100 || w > 100000) {
				rpt_err(cmd, "--width: want 100..100000 px");
				return -1;
			}
			fo->width = (unsigned)w;
			break;
		}
		case OPT_HEIGHT:
		case OPT_FONTSIZE: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			int h = c == OPT_HEIGHT;
			if (*end || !*optarg || v < 4 || v > (h ? 200 : 100)) {
				rpt_err(cmd, "--%s: want %s px", h ? "height" : "fontsize",
					h ? "4..200" : "4..100");
				return -1;
			}
			*(h ? &fo->height : &fo->fontsize) = (unsigned)v;
			break;
		}
		case OPT_COLORS:
			if (!flame_palette_ok(optarg)) {
				rpt_err(cmd, "--colors %s: want one of " FLAME_PALETTES, optarg);
				return -1;
			}
			fo->colors = optarg;
			break;
		case OPT_COUNTNAME:
			if (!*optarg || strlen(optarg) > 40 ||
			    optarg[strspn(optarg, "abcdefghijklmnopqrstuvwxyz"
					  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-")]) {
				rpt_err(cmd, "--countname: want up to 40 letters, digits, spaces, "
					"'.', '_' or '-'");
				return -1;
			}
			fo->countname = optarg;
			break;
		case OPT_MINWIDTH: {
			char *end;
			double w = strtod(optarg, &end);
			if (end == optarg || (*end && strcmp(end, "px")) || !(w >= 0) || w > 10000) {
				rpt_err(cmd, "--minwidth: want pixels >= 0");
				return -1;
			}
			fo->minwidth = w;
			break;
		}
		case OPT_REVERSE:
			fo->reverse = 1;
			break;
		case OPT_INVERTED:
			fo->inverted = 1;
			break;
		case OPT_NOCOMM:
			fo->no_comm = 1;
			break;
		case OPT_KERNEL:
		case OPT_USER:
			if (fo->only) {
				rpt_err(cmd, "--kernel and --user exclude each other");
				return -1;
			}
			fo->only = c == OPT_KERNEL ? RPT_ONLY_KERNEL : RPT_ONLY_USER;
			break;
		case RPT_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case RPT_OPT_NO_INLINE:
			dtsym_inline = 0;
			break;
		case OPT_OFFCPU:
		case OPT_ONOFF:
		case OPT_WAKERS: {
			int m = c == OPT_OFFCPU ? RPT_FLAME_OFFCPU : c == OPT_ONOFF ? RPT_FLAME_ONOFF
										: RPT_FLAME_WAKERS;
			if (fo->mode && fo->mode != m) {
				rpt_err(cmd, "--offcpu, --oncpu-offcpu and --wakers exclude each other");
				return -1;
			}
			fo->mode = m;
			break;
		}
		case OPT_STATE: {
			/* letters, commas between them allowed: "S,D" or "SD" */
			static char st[16];
			size_t k = 0;
			for (const char *q = optarg; *q; q++) {
				if (*q == ',')
					continue;
				if (!strchr("RSDTtXZPI", *q) || k + 1 >= sizeof(st)) {
					rpt_err(cmd, "--state %s: want letters of R, S, D (and T, t, "
						"X, Z, P, I), e.g. S,D", optarg);
					return -1;
				}
				st[k++] = *q;
			}
			st[k] = '\0';
			if (k == 0) {
				rpt_err(cmd, "--state: no state given (e.g. S,D)");
				return -1;
			}
			fo->states = st;
			break;
		}
		case RPT_OPT_PARTIAL:
			fc->partial = 1;
			break;
		case 'h':
			*help = 1;
			return 0;
		case ':':
			rpt_err(cmd, "option %s needs a value", argv[optind - 1]);
			return -1;
		default:
			rpt_err(cmd, "unknown option %s", argv[optind - 1]);
			return -1;
		}
	}
	if (fo->states && !fo->mode) {
		rpt_err(cmd, "--state goes with --offcpu, --oncpu-offcpu or --wakers");
		return -1;
	}
	if (fo->mode && !fo->countname)
		fo->countname = "us";
	if (fc->folded_in && fc->capopt) {
		rpt_err(cmd, "--%s reads a capture: not with --from-folded", fc->capopt);
		return -1;
	}
	return 0;
}

/*
 * Open the output before any work: an output that is an input is refused
 * (flame a.dtc -o a.dtc, through links too), and the file is replaced only
 * once it is completely written.
 */
static int open_out(const char *cmd, const struct rpt_flame_opts *fo, const struct flame_cli *fc,
		    const char *const *inputs, size_t ninputs, struct dtu_out *o)
{
	char err[512];

	/* Megabytes of SVG on a terminal help nobody. */
	if ((!fc->out || !strcmp(fc->out, "-")) && !fo->folded && isatty(1)) {
		rpt_err(cmd, "not writing SVG to a terminal: use -o FILE.svg, redirect, "
			"or --folded");
		return RPT_EXIT_USAGE;
	}
	if (dtu_out_open(o, fc->out, inputs, ninputs, err, sizeof(err))) {
		rpt_err(cmd, "%s", err);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

/* The output complete: replace the target with it. */
static int write_commit(struct dtu_out *o)
{
	char err[512];

	if (dtu_out_commit(o, err, sizeof(err))) {
		rpt_err("flame", "%s", err);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

static int write_out(struct flame *fl, const struct rpt_flame_opts *fo, const char *sub,
		     int diff, struct dtu_out *o)
{
	char err[512];

	if (rpt_flame_write(fl, fo, sub, diff, o->f)) {
		rpt_err(fo->cmd, "%s: %s", o->name, errno ? strerror(errno) : "write error");
		dtu_out_abort(o);
		return RPT_EXIT_ERROR;
	}
	if (dtu_out_commit(o, err, sizeof(err))) {
		rpt_err(fo->cmd, "%s", err);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

/* Parse; 0 to go on, else the status to return (usage printed). */
static int flame_args(const char *cmd, int argc, char **argv, struct rpt_flame_opts *fo,
		      struct flame_cli *fc, struct flt_filter *filt, int nfiles)
{
	int help;

	if (parse_flame_args(cmd, argc, argv, fo, fc, filt, &help)) {
		flame_usage(cmd, stderr);
		return RPT_EXIT_USAGE;
	}
	if (help) {
		flame_usage(cmd, stdout);
		return -1;
	}
	/* nfiles 0: one or more; -1: the caller checks */
	if (fc->folded_in) {
		if (argc - optind > 0) {
			rpt_err(cmd, "unexpected argument '%s' (--from-folded reads no capture)",
				argv[optind]);
			flame_usage(cmd, stderr);
			return RPT_EXIT_USAGE;
		}
		return 0;
	}
	if (nfiles == 0 && argc - optind < 1) {
		rpt_err(cmd, "no capture given");
		flame_usage(cmd, stderr);
		return RPT_EXIT_USAGE;
	}
	if (nfiles > 0 && argc - optind != nfiles) {
		if (argc - optind > nfiles)
			rpt_err(cmd, "unexpected argument '%s' (%s takes %s)", argv[optind + nfiles],
				cmd, nfiles == 1 ? "one capture" : "two captures");
		else
			rpt_err(cmd, "%s", nfiles == 1 ? "no capture given" :
				"wants two captures, A and B");
		flame_usage(cmd, stderr);
		return RPT_EXIT_USAGE;
	}
	return 0;
}

/* Open path and fold it into fl on side. */
static int fold_path(const char *path, struct flt_filter *filt, const struct rpt_flame_opts *fo,
		     const struct flame_cli *fc, struct flame *fl, int side, uint64_t *n,
		     char *probes, size_t plen)
{
	int ret = RPT_EXIT_ERROR;
	struct rpt_cap c = { NULL, NULL, path };

	if ((c.r = rpt_open(fo->cmd, path, fc->partial, filt->salvage, &ret)) == NULL)
		return ret;
	ret = rpt_flame_fold(&c, filt, fo, fl, side, n, probes, plen, NULL);
	dtcap_reader_close(c.r);
	return ret;
}

/* dtreport flame --from-folded FILE: another tool's stacks, drawn. */
static int flame_from_folded(const struct rpt_flame_opts *fo, const struct flame_cli *fc)
{
	char err[512], sub[600];
	const char *path = fc->folded_in;
	struct dtu_out o;
	uint64_t n = 0;
	int ret, fd = dtu_open_regular(path, 0, err, sizeof(err));

	if (fd < 0) {
		rpt_err("flame", "%s", err);
		return RPT_EXIT_ERROR;
	}
	FILE *in = fdopen(fd, "r");
	struct flame *fl = in ? flame_new() : NULL;
	if (!fl) {
		rpt_err("flame", "%s: %s", path, strerror(errno ? errno : ENOMEM));
		if (in)
			fclose(in);
		else
			close(fd);
		return RPT_EXIT_ERROR;
	}
	if ((ret = open_out("flame", fo, fc, &path, 1, &o)) != 0)
		goto out;
	if (flame_read_folded(fl, in, &n, err, sizeof(err))) {
		rpt_err("flame", "%s: %s", path, err);
		dtu_out_abort(&o);
		ret = RPT_EXIT_ERROR;
		goto out;
	}
	snprintf(sub, sizeof(sub), "%s: %" PRIu64 " %s", path, n,
		 fo->countname ? fo->countname : "samples");
	ret = write_out(fl, fo, sub, 0, &o);
out:
	fclose(in);
	flame_free(fl);
	return ret;
}

int cmd_flame(int argc, char **argv)
{
	struct rpt_flame_opts fo;
	struct flame_cli fc;
	struct flt_filter filt;
	struct dtu_out o;
	struct dtx_caps caps = { 0 };
	int ret;
	char probes[256], sub[400], cerr[512];
	uint64_t n = 0;

	flt_init(&filt);
	if ((ret = flame_args("flame", argc, argv, &fo, &fc, &filt, 0)) != 0) {
		flt_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (fc.folded_in) {
		flt_free(&filt);
		return flame_from_folded(&fo, &fc);
	}
	/* several captures (or directories of them) fold into one graph */
	if (dtx_caps_add(&caps, argv + optind, argc - optind, cerr, sizeof(cerr)) < 0) {
		rpt_err("flame", "%s", cerr);
		dtx_caps_free(&caps);
		flt_free(&filt);
		return RPT_EXIT_ERROR;
	}
	struct flame *fl = flame_new();
	if (!fl) {
		rpt_err("flame", "out of memory");
		dtx_caps_free(&caps);
		flt_free(&filt);
		return RPT_EXIT_ERROR;
	}
	if ((ret = open_out("flame", &fo, &fc, (const char *const *)caps.path, (size_t)caps.n,
			    &o)) != 0)
		goto out;
	for (int i = 0; i < caps.n; i++) {
		uint64_t ni = 0;
		if ((ret = fold_path(caps.path[i], &filt, &fo, &fc, fl, 0, &ni, probes,
				     sizeof(probes)))) {
			dtu_out_abort(&o);
			goto out;
		}
		n += ni;
	}
	rpt_flame_subtitle(sub, sizeof(sub), &fo, caps.n, caps.path[0], n, probes,
			   flt_active(&filt));
	ret = write_out(fl, &fo, sub, 0, &o);
out:
	flame_free(fl);
	dtx_caps_free(&caps);
	flt_free(&filt);
	return ret;
}

int cmd_diff(int argc, char **argv)
{
	struct rpt_flame_opts fo;
	struct flame_cli fc;
	struct flt_filter filt;
	struct dtu_out o;
	int ret;
	char pa[256], pb[256], sub[600];
	uint64_t na = 0, nb = 0;

	flt_init(&filt);
	if ((ret = flame_args("diff", argc, argv, &fo, &fc, &filt, 2)) != 0) {
		flt_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	const char *in[2] = { argv[optind], argv[optind + 1] };
	/* each side a capture, or a directory: a group of captures */
	struct dtx_caps side[2] = { { 0 }, { 0 } }, all = { 0 };
	char cerr[512];
	struct flame *fl = flame_new();
	if (!fl) {
		rpt_err("diff", "out of memory");
		flt_free(&filt);
		return RPT_EXIT_ERROR;
	}
	for (int k = 0; k < 2; k++) {
		if (dtx_caps_add(&side[k], argv + optind + k, 1, cerr, sizeof(cerr)) < 0 ||
		    dtx_caps_add(&all, argv + optind + k, 1, cerr, sizeof(cerr)) < 0) {
			rpt_err("diff", "%s", cerr);
			ret = RPT_EXIT_ERROR;
			goto out;
		}
	}
	if ((ret = open_out("diff", &fo, &fc, (const char *const *)all.path, (size_t)all.n,
			    &o)) != 0)
		goto out;
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < side[k].n; i++) {
			uint64_t ni = 0;
			if ((ret = fold_path(side[k].path[i], &filt, &fo, &fc, fl, k, &ni,
					     k ? pb : pa, k ? sizeof(pb) : sizeof(pa)))) {
				dtu_out_abort(&o);
				goto out;
			}
			*(k ? &nb : &na) += ni;
		}
	}
	const char *unit = fo.countname ? fo.countname : "samples";
	snprintf(sub, sizeof(sub), "B %s (%" PRIu64 " %s) against A %s (%" PRIu64
		 " %s): red grew, blue shrank, grey unchanged", in[1], nb, unit, in[0], na, unit);
	ret = write_out(fl, &fo, sub, 1, &o);
out:
	flame_free(fl);
	dtx_caps_free(&side[0]);
	dtx_caps_free(&side[1]);
	dtx_caps_free(&all);
	flt_free(&filt);
	return ret;
}

static void flame_usage_shell(FILE *to)
{
	flame_usage("flame", to);
}

/* In the shell the file is the only output: say where it went. */
static void said_written(const struct flame_cli *fc, const struct rpt_flame_opts *fo)
{
	struct stat st;

	if (fc->out == NULL || !strcmp(fc->out, "-") || stat(fc->out, &st) != 0)
		return;
	printf("flame: wrote %s (%s, %lld bytes)\n", fc->out,
	       fo->folded ? "folded stacks" : "SVG", (long long)st.st_size);
}

int cmd_flame_on(const struct rpt_cap *c, int ncaps, int argc, char **argv,
		 const char *default_out, volatile sig_atomic_t *cancel)
{
	struct rpt_flame_opts fo;
	struct flame_cli fc;
	struct flt_filter filt;
	struct dtu_out o;
	int ret;

	flt_init(&filt);
	if ((ret = flame_args("flame", argc, argv, &fo, &fc, &filt, -1)) != 0 ||
	    (ret = rpt_shell_operands("flame", argc, argv, filt.salvage, flame_usage_shell)) != 0) {
		flt_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (fc.out == NULL)
		fc.out = default_out;
	if (ncaps == 1) {
		if ((ret = open_out("flame", &fo, &fc, &c->path, 1, &o)) == 0) {
			ret = rpt_flame(c, &filt, &fo, o.f, o.name, cancel);
			if (ret)
				dtu_out_abort(&o);
			else
				ret = write_commit(&o);
			if (ret == 0)
				said_written(&fc, &fo);
		}
		flt_free(&filt);
		return ret;
	}
	/* several: folded into one graph, as dtreport flame does */
	const char **paths = calloc((size_t)ncaps, sizeof(*paths));
	struct flame *fl = flame_new();
	char probes[256], sub[400];
	uint64_t n = 0;
	if (!paths || !fl) {
		rpt_err("flame", "out of memory");
		ret = RPT_EXIT_ERROR;
		goto out;
	}
	for (int i = 0; i < ncaps; i++)
		paths[i] = c[i].path;
	if ((ret = open_out("flame", &fo, &fc, paths, (size_t)ncaps, &o)) != 0)
		goto out;
	for (int i = 0; i < ncaps; i++) {
		uint64_t ni = 0;
		if ((ret = rpt_flame_fold(&c[i], &filt, &fo, fl, 0, &ni, probes, sizeof(probes),
					  cancel))) {
			dtu_out_abort(&o);
			goto out;
		}
		n += ni;
	}
	if (cancel && *cancel) {
		rpt_err("flame", "interrupted");
		dtu_out_abort(&o);
		ret = RPT_EXIT_ERROR;
		goto out;
	}
	rpt_flame_subtitle(sub, sizeof(sub), &fo, ncaps, c[0].path, n, probes, flt_active(&filt));
	if ((ret = write_out(fl, &fo, sub, 0, &o)) == 0)
		said_written(&fc, &fo);
out:
	flame_free(fl);
	free(paths);
	flt_free(&filt);
	return ret;
}
