/*
 * export.c - option parsing and dispatch of `dtreport export --format
 * parquet|pprof|chrome`; the formats live in export_parquet.c,
 * export_pprof.c and export_chrome.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "scan_pool.h"
#include "dtsym.h"
#include "report.h"

static const char *prog(void)
{
	return program_invocation_short_name;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s export [--format sqlite] FILE -o OUT.sqlite\n"
		"       %s export --format parquet [--parquet-compat] -o DIR CAPTURE|DIR...\n"
		"       %s export --format pprof -o OUT.pb.gz FILE\n"
		"       %s export --format chrome -o OUT.json FILE\n"
		"  --partial: read captures cut short; --salvage: also past damage.\n"
		"  --parquet-compat: integers PLAIN, not DELTA_BINARY_PACKED (Spark < 3.3).\n"
		"  --threads N (parquet): decode blocks ahead on N - 1 threads (default:\n"
		"  the CPUs it may run on); the files are the same for any N.\n"
		"  An existing output file is never replaced; a parquet DIR must be\n"
		"  new, empty or a dt dataset (captures are added to it).  Outputs\n"
		"  are created 0600; another user's symbolic links and devices are\n"
		"  refused (OUTPUT FILES in dtreport(1)).\n"
		"  (see dtreport(1))\n", prog(), prog(), prog(), prog());
}

int export_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

struct dtcap_reader *export_open(const char *path, const char *cap, int partial, int salvage,
				 int *status)
{
	if (export_exists(path)) {
		fprintf(stderr, "%s: export: %s: exists (not replaced; remove it or choose "
			"another name)\n", prog(), path);
		*status = 1;
		return NULL;
	}
	*status = 1;
	return dtr_open("export", cap, partial, salvage, status);
}

int cmd_export_format(int argc, char **argv, const char *format)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "parquet-compat", no_argument, NULL, 'C' },
		{ "threads", required_argument, NULL, 'T' },
		DTR_LONGOPT_PARTIAL,
		DTR_LONGOPT_NO_DEMANGLE,
		DTR_LONGOPT_SALVAGE,
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	int ch, partial = 0, salvage = 0, compat = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "o:f:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'f': format = optarg; break;
		case DTR_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case 'C': compat = 1; break;
		case 'T': {
			unsigned n;
			if (dtsp_parse_threads(optarg, &n)) {
				fprintf(stderr, "%s: export: --threads: '%s' is not a number of "
					"threads (1..%d)\n", prog(), optarg, DTSP_MAX_THREADS);
				return 2;
			}
			dtsp_set_threads(n);
			break;
		}
		case DTR_OPT_PARTIAL: partial = 1; break;
		case DTR_OPT_SALVAGE: salvage = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	int nin = argc - optind;
	if (out == NULL || nin < 1) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(format, "parquet"))
		return export_parquet(out, argv + optind, nin, partial, salvage, compat);
	if (compat) {
		fprintf(stderr, "%s: export: --parquet-compat is for --format parquet\n", prog());
		return 2;
	}
	if (nin != 1) {
		fprintf(stderr, "%s: export: --format %s takes one capture\n", prog(), format);
		return 2;
	}
	if (!strcmp(format, "pprof"))
		return export_pprof(out, argv[optind], partial, salvage);
	if (!strcmp(format, "chrome"))
		return export_chrome(out, argv[optind], partial, salvage);
	fprintf(stderr, "%s: export: unknown format '%s' (sqlite, parquet, pprof, chrome)\n",
		prog(), format);
	return 2;
}
