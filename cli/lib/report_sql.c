/*
 * report_sql.c - `dtreport sql` and `dtreport export` (also run by dtsh).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "dtsym.h"
#include "report.h"

/* Set by SIGINT while a query runs: the query stops, the caller lives on
 * (dtsh gets its prompt back). */
static volatile sig_atomic_t sql_cancel;

static void on_sigint(int sig)
{
	(void)sig;
	sql_cancel = 1;
}

static const char *prog(void)
{
	return program_invocation_short_name;
}

/* Open the capture, its symbols and an in-memory db with the tables. */
static int open_all(const char *cmd, const char *path, int salvage, struct dtcap_reader **r,
		    struct dtsym **sym, sqlite3 **db)
{
	*r = NULL;
	*sym = NULL;
	*db = NULL;
	struct dtcap_read_opts ro = { salvage ? DTCAP_OPEN_SALVAGE : 0, 0 };
	if ((*r = dtcap_open_opts(path, &ro)) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog(), cmd, dtcap_open_error());
		return -1;
	}
	const char *w = dtcap_reader_warning(*r);
	if (w)
		fprintf(stderr, "%s: %s: warning: %s\n", prog(), cmd, w);
	*sym = dtsym_open(*r);
	if (*sym == NULL) {
		fprintf(stderr, "%s: %s: out of memory\n", prog(), cmd);
		return -1;
	}
	/* one thread uses the connection: no per-call mutex */
	if (sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s: sqlite: %s\n", prog(), cmd,
			*db ? sqlite3_errmsg(*db) : "out of memory");
		return -1;
	}
	char *err = NULL;
	if (dtsql_attach(*db, *r, *sym, &err) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog(), cmd, err ? err : "attach failed");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static void close_all(struct dtcap_reader *r, struct dtsym *sym, sqlite3 *db)
{
	/* db first: its tables point into r and sym */
	if (db)
		sqlite3_close_v2(db);
	if (sym)
		dtsym_close(sym);
	if (r)
		dtcap_reader_close(r);
}

static char *read_stream(FILE *f)
{
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	if (s == NULL)
		return NULL;
	size_t n;
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len - 1 == 0) {
			char *p = realloc(s, cap *= 2);
			if (p == NULL) {
				free(s);
				return NULL;
			}
			s = p;
		}
	}
	if (ferror(f)) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	return s;
}

static void sql_usage(FILE *f)
{
	fprintf(f, "usage: %s sql [--table|--csv|--json] [--salvage] FILE [QUERY]\n"
		"  --salvage: read a damaged capture, skipping damaged chunks\n"
		"  QUERY omitted: SQL is read from standard input.\n"
		"  Tables: events probes probe_args stacks frames processes maps counters\n"
		"          capture\n"
		"  (see dtreport(1) and doc/SQL.md)\n", prog());
}

int cmd_sql(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "table", no_argument, NULL, 't' },
		{ "csv", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "salvage", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* Aligned for people, CSV for pipes: what scripts parse most easily. */
	enum dtsql_format fmt = isatty(STDOUT_FILENO) ? DTSQL_TABLE : DTSQL_CSV;
	int ch, salvage = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's': salvage = 1; break;
		case 't': fmt = DTSQL_TABLE; break;
		case 'c': fmt = DTSQL_CSV; break;
		case 'j': fmt = DTSQL_JSON; break;
		case 'h': sql_usage(stdout); return 0;
		default: sql_usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		sql_usage(stderr);
		return 2;
	}
	const char *path = argv[optind++];
	char *query = NULL;
	if (optind < argc) {
		/* several words make one query: `dtreport sql f select 1` */
		size_t len = 1;
		for (int i = optind; i < argc; i++)
			len += strlen(argv[i]) + 1;
		query = malloc(len);
		if (query == NULL) {
			fprintf(stderr, "%s: sql: out of memory\n", prog());
			return 1;
		}
		query[0] = 0;
		for (int i = optind; i < argc; i++) {
			if (i > optind)
				strcat(query, " ");
			strcat(query, argv[i]);
		}
	} else if ((query = read_stream(stdin)) == NULL) {
		fprintf(stderr, "%s: sql: reading standard input: %s\n", prog(),
			strerror(errno ? errno : EIO));
		return 1;
	}

	struct dtcap_reader *r;
	struct dtsym *sym;
	sqlite3 *db;
	if (open_all("sql", path, salvage, &r, &sym, &db) < 0) {
		close_all(r, sym, db);
		free(query);
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	sigemptyset(&sa.sa_mask);
	sql_cancel = 0;
	sigaction(SIGINT, &sa, &old);
	char *err = NULL;
	int rc = dtsql_exec(db, query, fmt, stdout, &sql_cancel, &err);
	sigaction(SIGINT, &old, NULL);
	if (rc < 0)
		fprintf(stderr, "%s: sql: %s\n", prog(), err ? err : "failed");
	if (fflush(stdout) == EOF && rc == 0) {
		fprintf(stderr, "%s: sql: writing output: %s\n", prog(), strerror(errno));
		rc = -1;
	}
	sqlite3_free(err);
	free(query);
	close_all(r, sym, db);
	return rc < 0 ? 1 : 0;
}

static void export_usage(FILE *f)
{
	fprintf(f, "usage: %s export [--salvage] FILE -o OUT.sqlite\n", prog());
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "salvage", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	int ch, salvage = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o': outpath = optarg; break;
		case 's': salvage = 1; break;
		case 'h': export_usage(stdout); return 0;
		default: export_usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || outpath == NULL) {
		export_usage(stderr);
		return 2;
	}
	struct stat a, b;
	if (stat(argv[optind], &a) == 0 && stat(outpath, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		/* export replaces its output: never the capture itself */
		fprintf(stderr, "%s: export: %s: output is the capture itself\n",
			prog(), outpath);
		return 1;
	}
	struct dtcap_reader *r;
	struct dtsym *sym;
	sqlite3 *db;
	if (open_all("export", argv[optind], salvage, &r, &sym, &db) < 0) {
		close_all(r, sym, db);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char *err = NULL;
	long long n = dtsql_export(db, outpath, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int ret = 0;
	if (n < 0) {
		fprintf(stderr, "%s: export: %s\n", prog(), err ? err : "failed");
		unlink(outpath);	/* a half-written database only misleads */
		ret = 1;
	} else {
		double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("%s: %lld events in %.2f s\n", outpath, n, s);
	}
	sqlite3_free(err);
	close_all(r, sym, db);
	return ret;
}
