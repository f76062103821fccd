/*
 * report_sql.c - `dtreport sql` (also run by dtsh).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "captures.h"
#include "dt_grow.h"
#include "dtsym.h"
#include "report.h"
#include "scan_pool.h"
#include "util.h"

/* Set by SIGINT while a query runs: the query stops, the caller lives on
 * (dtsh gets its prompt back). */
static volatile sig_atomic_t sql_cancel;

static void on_sigint(int sig)
{
	(void)sig;
	sql_cancel = 1;
}

/* The connection of user SQL (guarded: it writes no file, dtsql_open),
 * or a plain one. */
static sqlite3 *open_db(const char *cmd, int guarded)
{
	sqlite3 *db = NULL;
	char *err = NULL;

	if (guarded) {
		if ((db = dtsql_open(&err)) == NULL)
			rpt_err(cmd, "%s", err ? err : "sqlite: out of memory");
		sqlite3_free(err);
		return db;
	}
	/* one thread uses the connection: no per-call mutex */
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rpt_err(cmd, "sqlite: %s", db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* Open the capture, its symbols and an in-memory db with the tables.
 * Returns 0, or the exit status with the message printed. */
static int open_all(const char *cmd, const char *path, int partial, int salvage, int guarded,
		    struct dtcap_reader **r,
		    struct dtsym **sym, sqlite3 **db, struct dtsql **h)
{
	int status = RPT_EXIT_ERROR;

	*r = NULL;
	*sym = NULL;
	*db = NULL;
	*h = NULL;
	if ((*r = rpt_open(cmd, path, partial, salvage, &status)) == NULL)
		return status;
	*sym = dtsym_open(*r);
	if (*sym == NULL) {
		rpt_err(cmd, "out of memory");
		return RPT_EXIT_ERROR;
	}
	if ((*db = open_db(cmd, guarded)) == NULL)
		return RPT_EXIT_ERROR;
	char *err = NULL;
	if ((*h = dtsql_attach(*db, *r, *sym, &err)) == NULL) {
		rpt_err(cmd, "%s", err ? err : "attach failed");
		sqlite3_free(err);
		return RPT_EXIT_ERROR;
	}
	return 0;
}

/* Several captures: their tables as views with capture and host columns
 * (dtsql_attach_many).  rs and syms are filled for close_many. */
static int open_many(const struct dtx_caps *caps, int partial, int salvage,
		     struct dtcap_reader **rs, struct dtsym **syms, sqlite3 **db)
{
	*db = NULL;
	int n = caps->n, ret = RPT_EXIT_ERROR;
	char **names = calloc((size_t)n, sizeof(*names));
	const char **hosts = calloc((size_t)n, sizeof(*hosts));
	if (!names || !hosts) {
		rpt_err("sql", "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if ((rs[i] = rpt_open("sql", caps->path[i], partial, salvage, &ret)) == NULL)
			goto out;
		ret = RPT_EXIT_ERROR;
		if ((syms[i] = dtsym_open(rs[i])) == NULL || (names[i] = malloc(256)) == NULL) {
			rpt_err("sql", "out of memory");
			goto out;
		}
		dtx_capture_name(names[i], 256, caps->path[i]);
		hosts[i] = dtcap_host(rs[i])->hostname;
	}
	if ((*db = open_db("sql", 1)) == NULL)
		goto out;
	char *err = NULL;
	if (dtsql_attach_many(*db, rs, syms, (const char *const *)names, hosts, (size_t)n,
			      &err) < 0) {
		rpt_err("sql", "%s", err ? err : "attach failed");
		sqlite3_free(err);
		goto out;
	}
	ret = 0;
out:
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(hosts);
	return ret;
}

static void close_many(struct dtcap_reader **rs, struct dtsym **syms, int n, sqlite3 *db)
{
	if (db)
		sqlite3_close_v2(db);
	for (int i = 0; i < n; i++) {
		if (syms[i])
			dtsym_close(syms[i]);
		if (rs[i])
			dtcap_reader_close(rs[i]);
	}
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
		/* A terminal's Ctrl-D is one end of file: do not read past it. */
		if (feof(f))
			break;
		if (DT_GROW(s, cap, len, 2, 4096)) {
			free(s);
			return NULL;
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
	if (rpt_shell)
		fprintf(f, "usage: sql [--csv|--json|--table] QUERY\n");
	else
		fprintf(f, "usage: dtreport sql [--table|--csv|--json] [--partial|--salvage] [--threads N]\n"
			"                    CAPTURE|DIR... [QUERY]\n"
			"       dtreport sql --schema [TABLE]\n"
			"  QUERY omitted: SQL is read from standard input.\n"
			"  Several captures (or a directory of them): every table gains the\n"
			"  columns capture and host.\n"
			"  .tables and .schema [TABLE] list the tables and their columns:\n"
			"  events probes probe_args stacks frames processes maps counters capture\n"
			"  Each probe is also a view of its fields by name, char[N] as text, ints\n"
			"  signed as their C type, errno_name for returns:\n"
			"    SELECT prev_comm, prev_pid FROM \"tracepoint:sched:sched_switch\"\n"
			"  SQL writes no file: ATTACH, DETACH, VACUUM and changes outside TEMP\n"
			"  tables and views are refused; at most 500 captures at once.\n"
			"  --threads N: the grouped scans (GROUP BY, counts, quantiles) run on N\n"
			"  threads (1..256; default: the CPUs it may run on), same rows for any N;\n"
			"  after a capture write --threads=N.\n"
			"  (see dtreport(1) and doc/SQL.md)\n");
}

enum { SQL_OPT_SCHEMA = 0x4001 };

static const struct option sql_longopts[] = {
	{ "table", no_argument, NULL, 't' },
	{ "csv", no_argument, NULL, 'c' },
	{ "json", no_argument, NULL, 'j' },
	{ "schema", no_argument, NULL, SQL_OPT_SCHEMA },
	{ "help", no_argument, NULL, 'h' },
	RPT_LONGOPT_PARTIAL,
	RPT_LONGOPT_NO_DEMANGLE,
	RPT_LONGOPT_SALVAGE,
	{ "threads", required_argument, NULL, FLT_OPT_THREADS },
	{ NULL, 0, NULL, 0 },
};

/* --threads N: the workers of the grouped scans (scan_pool.h). */
static int sql_threads(const char *v)
{
	unsigned n;

	if (dtsp_parse_threads(v, &n)) {
		rpt_err("sql", "--threads: '%s' is not a number of threads (1..%d)", v,
			DTSP_MAX_THREADS);
		sql_usage(stderr);
		return RPT_EXIT_USAGE;
	}
	dtsp_set_threads(n);
	return 0;
}

/*
 * Options come before the query: a query word that starts with '-' (a
 * negative number, an SQL comment) is the query's.  Returns 0, 1 after
 * --help, or RPT_EXIT_USAGE.
 */
static int sql_opts(int argc, char **argv, enum dtsql_format *fmt, int *partial, int *salvage,
		    int *schema)
{
	int ch;

	while ((ch = getopt_long(argc, argv, "+:h", sql_longopts, NULL)) != -1) {
		switch (ch) {
		case 't': *fmt = DTSQL_TABLE; break;
		case 'c': *fmt = DTSQL_CSV; break;
		case 'j': *fmt = DTSQL_JSON; break;
		case SQL_OPT_SCHEMA: *schema = 1; break;
		case RPT_OPT_NO_DEMANGLE:
			dtsym_demangle = 0;
			break;
		case RPT_OPT_PARTIAL: *partial = 1; break;
		case RPT_OPT_SALVAGE: *salvage = 1; break;
		case FLT_OPT_THREADS:
			if (sql_threads(optarg))
				return RPT_EXIT_USAGE;
			break;
		case 'h': sql_usage(stdout); return 1;
		case ':':
			rpt_err("sql", "option %s needs a value", argv[optind - 1]);
			sql_usage(stderr);
			return RPT_EXIT_USAGE;
		default:
			rpt_err("sql", "unknown option %s", argv[optind - 1]);
			sql_usage(stderr);
			return RPT_EXIT_USAGE;
		}
	}
	return 0;
}

/*
 * Is w one of sql's options, word for word (1)?  -1: a word that can only
 * be a mistyped option ("--tsv": as SQL, a comment and nothing else).
 * 0: the query begins.
 */
static int sql_opt_word(const char *w)
{
	if (!strcmp(w, "-h"))
		return 1;
	if (w[0] != '-' || w[1] != '-')
		return 0;
	if (!strncmp(w, "--threads=", 10))
		return 1;
	for (const struct option *o = sql_longopts; o->name; o++)
		if (!strcmp(w + 2, o->name))
			return 1;
	if (!isalpha((unsigned char)w[2]))
		return 0;
	for (const char *c = w + 2; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-')
			return 0;
	return -1;
}

/* One option word that sql_opt_word accepted: as sql_opts. */
static int sql_opt_one(const char *w, enum dtsql_format *fmt, int *partial, int *salvage,
		       int *schema)
{
	if (!strcmp(w, "-h") || !strcmp(w, "--help")) {
		sql_usage(stdout);
		return 1;
	}
	/* between the words of captures and query a value cannot be told
	 * from either: it is joined to its option */
	if (!strncmp(w, "--threads=", 10))
		return sql_threads(w + 10);
	if (!strcmp(w, "--threads")) {
		rpt_err("sql", "--threads after a capture: write --threads=N");
		sql_usage(stderr);
		return RPT_EXIT_USAGE;
	}
	for (const struct option *o = sql_longopts; o->name; o++) {
		if (strcmp(w + 2, o->name))
			continue;
		switch (o->val) {
		case 't': *fmt = DTSQL_TABLE; break;
		case 'c': *fmt = DTSQL_CSV; break;
		case 'j': *fmt = DTSQL_JSON; break;
		case SQL_OPT_SCHEMA: *schema = 1; break;
		case RPT_OPT_PARTIAL: *partial = 1; break;
		case RPT_OPT_SALVAGE: *salvage = 1; break;
		}
	}
	return 0;
}

int cmd_sql(int argc, char **argv)
{
	/* Aligned for people, CSV for pipes: what scripts parse most easily. */
	enum dtsql_format fmt = isatty(STDOUT_FILENO) ? DTSQL_TABLE : DTSQL_CSV;
	int partial = 0, salvage = 0, schema = 0, r0;
	char ebuf[512];
	struct dtu_out out;

	optind = 0;
	opterr = 0;
	if ((r0 = sql_opts(argc, argv, &fmt, &partial, &salvage, &schema)) != 0)
		return r0 == 1 ? 0 : r0;
	if (schema) {
		/* The schema is the same for every capture: no file needed. */
		if (argc - optind > 1) {
			rpt_err("sql", "--schema takes at most one table name");
			return RPT_EXIT_USAGE;
		}
		const char *t = optind < argc ? argv[optind] : NULL;
		struct stat st;
		/* 'sql --schema cap.dtc': every capture has the same tables */
		if (t && stat(t, &st) == 0 && S_ISREG(st.st_mode) && dtsql_schema(NULL, t) < 0)
			t = NULL;
		if (dtsql_schema(stdout, t) < 0) {
			rpt_err("sql", "no such table: %s", argv[optind]);
			return RPT_EXIT_ERROR;
		}
		if (dtu_stdout_check(ebuf, sizeof(ebuf))) {
			rpt_err("sql", "%s", ebuf);
			return RPT_EXIT_ERROR;
		}
		return 0;
	}
	if (optind >= argc) {
		rpt_err("sql", "no capture given");
		sql_usage(stderr);
		return RPT_EXIT_USAGE;
	}
	const char *path = argv[optind++];
	/* more arguments naming files or directories: several captures */
	int capfirst = optind - 1;
	while (optind < argc && dtx_is_capture_arg(argv[optind]))
		optind++;
	int capend = optind;
	struct stat pst;
	int many = capend - capfirst > 1 || (stat(path, &pst) == 0 && S_ISDIR(pst.st_mode));
	/*
	 * Options may also follow the captures, up to the query: whole option
	 * words only, so a query that starts with '-' (-1, a -- comment) is
	 * the query, not an unknown option.
	 */
	while (optind < argc && sql_opt_word(argv[optind])) {
		if (sql_opt_word(argv[optind]) < 0) {
			rpt_err("sql", "unknown option %s", argv[optind]);
			sql_usage(stderr);
			return RPT_EXIT_USAGE;
		}
		if ((r0 = sql_opt_one(argv[optind++], &fmt, &partial, &salvage, &schema)) != 0)
			return r0 == 1 ? 0 : r0;
	}
	int qend = argc;
	if (optind < argc && !strcmp(argv[optind], "--")) {
		optind++;
	} else {
		/*
		 * And after the query, whole option words again, as flame and
		 * top take options anywhere: `sql CAP 'query' --json` once made
		 * --json an SQL comment and the output silently not JSON.  A
		 * last word shaped like an option but none (--tsv) is refused.
		 */
		while (qend > optind + 1 && sql_opt_word(argv[qend - 1])) {
			if (sql_opt_word(argv[qend - 1]) < 0) {
				rpt_err("sql", "unknown option %s after the query (put -- before "
					"a query that ends so)", argv[qend - 1]);
				sql_usage(stderr);
				return RPT_EXIT_USAGE;
			}
			if ((r0 = sql_opt_one(argv[--qend], &fmt, &partial, &salvage, &schema)) != 0)
				return r0 == 1 ? 0 : r0;
		}
	}
	if (schema) {
		rpt_err("sql", "--schema takes no capture");
		return RPT_EXIT_USAGE;
	}
	if (dtu_out_open(&out, NULL, (const char *const *)(argv + capfirst), (size_t)(capend - capfirst),
			 ebuf, sizeof(ebuf))) {
		rpt_err("sql", "%s", ebuf);
		return RPT_EXIT_ERROR;
	}
	char *query = NULL;
	if (optind < qend) {
		/* several words make one query: `dtreport sql f select 1` */
		size_t len = 1;
		for (int i = optind; i < qend; i++)
			len += strlen(argv[i]) + 1;
		query = malloc(len);
		if (query == NULL) {
			rpt_err("sql", "out of memory");
			return RPT_EXIT_ERROR;
		}
		query[0] = 0;
		for (int i = optind; i < qend; i++) {
			if (i > optind)
				strcat(query, " ");
			strcat(query, argv[i]);
		}
	} else {
		if (isatty(STDIN_FILENO))
			fprintf(stderr, "%s sql: reading SQL from standard input "
				"(end with Ctrl-D; or give the query after the file)\n", rpt_prog());
		errno = 0;
		if ((query = read_stream(stdin)) == NULL) {
			rpt_err("sql", "reading standard input: %s", strerror(errno ? errno : EIO));
			return RPT_EXIT_ERROR;
		}
	}

	struct dtcap_reader *r = NULL, **rs = NULL;
	struct dtsym *sym = NULL, **syms = NULL;
	sqlite3 *db = NULL;
	struct dtsql *h;
	struct dtx_caps caps = { 0 };
	int st = 0;
	if (many) {
		char cerr[512];
		if (dtx_caps_add(&caps, argv + capfirst, capend - capfirst, cerr, sizeof(cerr)) < 0) {
			rpt_err("sql", "%s", cerr);
			dtx_caps_free(&caps);
			free(query);
			return RPT_EXIT_ERROR;
		}
		/* before any capture is opened: 500 of them are gigabytes */
		if (caps.n > DTSQL_MAX_CAPTURES) {
			rpt_err("sql", "%d captures: at most %d at once (name fewer files or "
				"a smaller directory)", caps.n, DTSQL_MAX_CAPTURES);
			dtx_caps_free(&caps);
			free(query);
			return RPT_EXIT_ERROR;
		}
		rs = calloc((size_t)caps.n, sizeof(*rs));
		syms = calloc((size_t)caps.n, sizeof(*syms));
		if (!rs || !syms || (st = open_many(&caps, partial, salvage, rs, syms, &db)) != 0) {
			if (!rs || !syms) {
				rpt_err("sql", "out of memory");
				st = RPT_EXIT_ERROR;
			}
			if (rs && syms)
				close_many(rs, syms, caps.n, db);
			free(rs), free(syms);
			dtx_caps_free(&caps);
			free(query);
			return st;
		}
	} else if ((st = open_all("sql", path, partial, salvage, 1, &r, &sym, &db, &h)) != 0) {
		close_all(r, sym, db);
		free(query);
		return st;
	}
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	sigemptyset(&sa.sa_mask);
	sql_cancel = 0;
	sigaction(SIGINT, &sa, &old);
	char *err = NULL;
	int rc = dtsql_exec(db, query, fmt, out.f, &sql_cancel, &err);
	sigaction(SIGINT, &old, NULL);
	/* A write error is told by the commit, with its reason. */
	int werr = ferror(out.f);
	if (rc < 0 && !werr)
		rpt_err("sql", "%s", err ? err : "failed");
	if (dtu_out_commit(&out, ebuf, sizeof(ebuf)) && (rc == 0 || werr)) {
		/* the flush at the end no longer knows why the first write failed */
		if (werr && err && !strncmp(err, "write error: ", 13))
			rpt_err("sql", "writing standard output: %s", err + 13);
		else
			rpt_err("sql", "%s", ebuf);
		rc = -1;
	}
	sqlite3_free(err);
	free(query);
	if (many) {
		close_many(rs, syms, caps.n, db);
		free(rs), free(syms);
		dtx_caps_free(&caps);
	} else {
		close_all(r, sym, db);
	}
	return rc < 0 ? RPT_EXIT_ERROR : 0;
}
