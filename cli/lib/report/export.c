/*
 * export.c - `dtreport export` and dtsh's `export`: one option parser for
 * every format and the filters every report takes, the captures opened
 * (dtreport) or borrowed (dtsh), then the format's writer (export.h).
 * The writers know nothing of this file.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "captures.h"
#include "dtsym.h"
#include "export.h"
#include "report.h"
#include "util.h"

enum { FMT_SQLITE, FMT_PARQUET, FMT_PPROF, FMT_CHROME };
static const char *const formats[] = { "sqlite", "parquet", "pprof", "chrome", NULL };

struct xargs {
	int		format;
	struct rpt_export_opts o;
	int		partial;
	struct flt_filter f;
};

static void usage(FILE *f)
{
	const char *cap = rpt_shell ? "" : " CAPTURE";
	fprintf(f, "usage: %s export [--format sqlite] [FILTERS] -o OUT.sqlite%s\n"
		"       %s export --format parquet [--parquet-compat] [FILTERS] -o DIR%s\n"
		"       %s export --format pprof [FILTERS] -o OUT.pb.gz%s\n"
		"       %s export --format chrome [FILTERS] -o OUT.json%s\n"
		"  Only the events the filters pass are exported (the other tables whole):\n"
		FLT_USAGE_FILTERS
		"%s"
		"  --parquet-compat: integers PLAIN, not DELTA_BINARY_PACKED (Spark < 3.3).\n"
		"  --no-demangle: raw symbol names.\n"
		"  pprof, chrome: an existing output file is never replaced; sqlite\n"
		"  replaces one only once the new database is complete; a parquet DIR\n"
		"  must be new, empty or a dt dataset (captures are added to it).\n"
		"  Outputs are written under a temporary name and renamed when\n"
		"  complete, created 0600; another user's symbolic links and devices\n"
		"  are refused (OUTPUT FILES in dtreport(1)).%s\n"
		"  (see %s)\n",
		rpt_prog(), cap, rpt_prog(), rpt_shell ? "" : " CAPTURE|DIR...", rpt_prog(), cap,
		rpt_prog(), cap,
		rpt_shell ? "" : "  --partial    read a capture cut short\n" FLT_USAGE_SALVAGE,
		rpt_shell ? "  Ctrl-C stops it." : "",
		rpt_shell ? "help export, dtsh(1)" : "dtreport(1)");
}

/* 0 to go on, -1 after --help, else the usage status (message printed). */
static int parse(int argc, char **argv, struct xargs *x)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "parquet-compat", no_argument, NULL, 'C' },
		RPT_LONGOPT_PARTIAL,
		RPT_LONGOPT_NO_DEMANGLE,
		FLT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "sqlite";
	char err[512];
	int ch;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:f:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o': x->o.out = optarg; break;
		case 'f': format = optarg; break;
		case 'C': x->o.parquet_compat = 1; break;
		case RPT_OPT_NO_DEMANGLE: dtsym_demangle = 0; break;
		case RPT_OPT_PARTIAL: x->partial = 1; break;
		case 'h': usage(stdout); return -1;
		case ':':
			rpt_err("export", "option %s needs a value", argv[optind - 1]);
			usage(stderr);
			return RPT_EXIT_USAGE;
		case '?':
			rpt_err("export", "unknown option %s", argv[optind - 1]);
			usage(stderr);
			return RPT_EXIT_USAGE;
		default: {
			int k = flt_option(&x->f, ch, optarg, err, sizeof(err));
			if (k < 0) {
				rpt_err("export", "%s", err);
				return RPT_EXIT_USAGE;
			}
			if (k == 0) {
				usage(stderr);
				return RPT_EXIT_USAGE;
			}
		}
		}
	}
	for (x->format = 0; formats[x->format] && strcmp(formats[x->format], format); x->format++)
		;
	if (formats[x->format] == NULL) {
		rpt_err("export", "unknown format '%s' (sqlite, parquet, pprof, chrome)", format);
		return RPT_EXIT_USAGE;
	}
	if (x->o.parquet_compat && x->format != FMT_PARQUET) {
		rpt_err("export", "--parquet-compat is for --format parquet");
		return RPT_EXIT_USAGE;
	}
	if (x->o.out == NULL) {
		rpt_err("export", "no output: -o %s", x->format == FMT_PARQUET ? "DIR" :
			x->format == FMT_PPROF ? "OUT.pb.gz" : x->format == FMT_CHROME ?
			"OUT.json" : "OUT.sqlite");
		usage(stderr);
		return RPT_EXIT_USAGE;
	}
	if (!strcmp(x->o.out, "-")) {
		/* SQLite needs a file it can seek in, the others are renamed
		 * into place; and a file named "-" is a trap */
		rpt_err("export", "-o -: an export cannot go to standard output; name a file");
		return RPT_EXIT_USAGE;
	}
	return 0;
}

/* A one-file export refuses an existing output before any work (the
 * writer's rename refuses one that appears meanwhile). */
static int refuse_existing(const struct xargs *x)
{
	struct stat st;

	if ((x->format == FMT_PPROF || x->format == FMT_CHROME) && lstat(x->o.out, &st) == 0) {
		rpt_err("export", "%s: exists (not replaced; remove it or choose another name)",
			x->o.out);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

static int run_one(const struct xargs *x, const struct rpt_cap *c, struct flt_filter *f,
		   volatile sig_atomic_t *cancel)
{
	switch (x->format) {
	case FMT_PPROF: return rpt_export_pprof(c, f, &x->o, cancel);
	case FMT_CHROME: return rpt_export_chrome(c, f, &x->o, cancel);
	default: return rpt_export_sqlite(c, f, &x->o, cancel);
	}
}

/*
 * The parquet dataset: each capture added in turn (ncaps of c, or of the
 * paths when c is NULL: opened one at a time), the filter bound to each.
 */
static int run_parquet(const struct xargs *x, const struct rpt_cap *c, int ncaps,
		       char *const *paths, int npaths, struct flt_filter *f,
		       volatile sig_atomic_t *cancel)
{
	struct timespec t0, t1;
	struct dtx_caps cl = { 0 };
	char err[512];
	uint64_t total = 0, bytes = 0;
	int ndone = 0, ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (strlen(x->o.out) > 3000) {
		rpt_err("export", "%.40s...: path too long", x->o.out);
		return RPT_EXIT_ERROR;
	}
	/* every input checked before anything is created */
	if (c == NULL && dtx_caps_add(&cl, paths, npaths, err, sizeof(err)) < 0) {
		rpt_err("export", "%s", err);
		dtx_caps_free(&cl);
		return RPT_EXIT_ERROR;
	}
	if (dtu_path_links_ok(x->o.out, err, sizeof(err)) < 0) {
		rpt_err("export", "%s", err);
		dtx_caps_free(&cl);
		return RPT_EXIT_ERROR;
	}
	/* a filter value one capture never saw is known before the dataset
	 * is made or touched (the captures are opened twice only then) */
	int n = c ? ncaps : cl.n;
	for (int i = 0; i < n && flt_active(f); i++) {
		struct dtcap_reader *r = c ? c[i].r : NULL;
		if (!r && (r = rpt_open("export", cl.path[i], x->partial, f->salvage, &ret)) == NULL)
			break;
		if (flt_resolve(f, r, err, sizeof(err)) < 0) {
			rpt_err("export", "%s: %s", c ? c[i].path : cl.path[i], err);
			ret = RPT_EXIT_ERROR;
		}
		if (!c)
			dtcap_reader_close(r);
		if (ret)
			break;
	}
	if (ret || rpt_parquet_prepare(x->o.out) < 0) {
		dtx_caps_free(&cl);
		return ret ? ret : RPT_EXIT_ERROR;
	}
	for (int i = 0; i < n && !ret; i++) {
		uint64_t ev = 0, by = 0;
		struct rpt_cap one = { NULL, NULL, NULL };
		if (c) {
			one = c[i];
		} else {
			one.path = cl.path[i];
			if ((one.r = rpt_open("export", one.path, x->partial, f->salvage, &ret)) ==
			    NULL)
				break;
		}
		ret = rpt_export_parquet(&one, f, &x->o, cancel, &ev, &by);
		if (!c)
			dtcap_reader_close(one.r);
		if (ret)
			break;
		total += ev;
		bytes += by;
		ndone++;
	}
	dtx_caps_free(&cl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (!ret)
		printf("%s: %llu events from %d capture%s, %llu bytes of Parquet in %.2f s\n",
		       x->o.out, (unsigned long long)total, ndone, ndone == 1 ? "" : "s",
		       (unsigned long long)bytes, s);
	if (ret && ndone)
		rpt_err("export", "the %d capture%s before the failure stay in %s", ndone,
			ndone == 1 ? "" : "s", x->o.out);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	struct xargs x = { 0 };
	int ret;

	flt_init(&x.f);
	if ((ret = parse(argc, argv, &x)) != 0)
		goto out;
	int nin = argc - optind;
	if (nin < 1) {
		rpt_err("export", "no capture given");
		usage(stderr);
		ret = RPT_EXIT_USAGE;
		goto out;
	}
	if (x.format == FMT_PARQUET) {
		ret = run_parquet(&x, NULL, 0, argv + optind, nin, &x.f, NULL);
		goto out;
	}
	if (nin > 1) {
		rpt_err("export", "unexpected argument '%s' (export takes one capture)",
			argv[optind + 1]);
		usage(stderr);
		ret = RPT_EXIT_USAGE;
		goto out;
	}
	if ((ret = refuse_existing(&x)) != 0)
		goto out;
	struct rpt_cap c = { NULL, NULL, argv[optind] };
	if ((c.r = rpt_open("export", c.path, x.partial, x.f.salvage, &ret)) != NULL) {
		ret = run_one(&x, &c, &x.f, NULL);
		dtcap_reader_close(c.r);
	}
out:
	flt_free(&x.f);
	return ret < 0 ? 0 : ret;
}

int cmd_export_on(const struct rpt_cap *c, int ncaps, int argc, char **argv,
		  volatile sig_atomic_t *cancel)
{
	struct xargs x = { 0 };
	int ret;

	flt_init(&x.f);
	if ((ret = parse(argc, argv, &x)) != 0 ||
	    (ret = rpt_shell_operands("export", argc, argv, x.f.salvage, usage)) != 0)
		goto out;
	if (x.format == FMT_PARQUET) {
		ret = run_parquet(&x, c, ncaps, NULL, 0, &x.f, cancel);
		goto out;
	}
	if (ncaps > 1) {
		rpt_err("export", "--format %s reads one capture, and %d are open (open it "
			"alone, or export them as parquet)", formats[x.format], ncaps);
		ret = RPT_EXIT_ERROR;
		goto out;
	}
	if ((ret = refuse_existing(&x)) == 0)
		ret = run_one(&x, c, &x.f, cancel);
out:
	flt_free(&x.f);
	return ret < 0 ? 0 : ret;
}
