/*
 * fuzz_groupby - libFuzzer on the GROUP BY fast path (dtsql_groupby.c):
 * the input is one SQL statement, run on one capture and on two at once.
 * Whenever the statement is rewritten, the rewrite must give the same rows,
 * value for value and type for type, as the statement as written, both
 * with its scan on one thread and on three (scan_pool.c's workers, each
 * with a run of blocks); a difference aborts (a finding), as does any
 * sanitizer report.  A statement that is not rewritten is run twice, the
 * events cursor reading on this thread alone (DT_SQL_NO_READAHEAD) and
 * ahead on three (its blocks decoded and filtered by scan_pool.c's
 * helpers): the same rows, in the same order, again; and when the table
 * took its ORDER BY on, the rows sqlite's sorter gives.
 *
 * The captures come from FUZZ_SQL_CAPS="A.dtc:B.dtc" (made by fuzz.sh).
 * Statements that write are not run, so every input sees the same tables.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_int.h"
#include "scan_pool.h"

static sqlite3 *db1, *dbn;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_groupby: %s\n", what);
	exit(2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	const char *caps = getenv("FUZZ_SQL_CAPS");
	char a[4096], *b;
	if (caps == NULL || strlen(caps) >= sizeof(a))
		die("set FUZZ_SQL_CAPS=A.dtc:B.dtc");
	strcpy(a, caps);
	if ((b = strchr(a, ':')) == NULL)
		die("set FUZZ_SQL_CAPS=A.dtc:B.dtc");
	*b++ = 0;
	struct dtcap_reader *r[2] = { dtcap_open(a), dtcap_open(b) };
	if (r[0] == NULL || r[1] == NULL)
		die(dtcap_open_error());
	struct dtsym *sym[2] = { NULL, NULL };
	const char *cn[2] = { "a", "b" }, *hn[2] = { "h1", "h'2" };
	if (sqlite3_open(":memory:", &db1) != SQLITE_OK ||
	    sqlite3_open(":memory:", &dbn) != SQLITE_OK ||
	    dtsql_attach(db1, r[0], NULL, NULL) == NULL ||
	    dtsql_attach_many(dbn, r, sym, cn, hn, 2, NULL) < 0)
		die("attach failed");
	return 0;
}

/* Give up on a statement after this many VM steps (x1000). */
static int max_ticks = 20000;

static int on_progress(void *arg)
{
	return ++*(int *)arg > max_ticks;
}

/* All rows of st as text: type and value of every cell.  NULL when it
 * does not finish (an error, or too long: *why says which, SQLITE_ERROR
 * or SQLITE_INTERRUPT). */
static char *rows(sqlite3 *db, sqlite3_stmt *st, int *why)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	int n = sqlite3_column_count(st), rc, ticks = 0;
	sqlite3_progress_handler(db, 1000, on_progress, &ticks);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++) {
			int t = sqlite3_column_type(st, i);
			sqlite3_str_appendf(s, "%d:", t);
			if (t == SQLITE_FLOAT)
				sqlite3_str_appendf(s, "%!.17g", sqlite3_column_double(st, i));
			else if (t != SQLITE_NULL)
				sqlite3_str_appendf(s, "%Q", (const char *)sqlite3_column_text(st, i));
			sqlite3_str_appendchar(s, 1, i + 1 < n ? '|' : '\n');
		}
	}
	sqlite3_progress_handler(db, 0, NULL, NULL);
	*why = rc;
	if (rc != SQLITE_DONE) {
		sqlite3_free(sqlite3_str_finish(s));
		return NULL;
	}
	return sqlite3_str_finish(s);
}

/* n-th occurrence of w in s, case-blind (NULL: fewer). */
static const char *nth(const char *s, const char *w, int n)
{
	const char *p = s;
	for (int i = 0; p && i < n; i++)
		if ((p = strcasestr(p, w)) != NULL && i + 1 < n)
			p += strlen(w);
	return p;
}

/*
 * An ORDER BY the events table takes on (its sort, or the ts stream of
 * dtsql_events.c) against sqlite's sorter: the statement planned again
 * with nothing held by the table (DT_SQL_MAT_MAX=0).  Only a statement
 * whose order is its answer's: one SELECT, of events alone, no window;
 * ties come in rowid order from both (the scan's order, kept by a stable
 * sort), so the rows must be the same in the same order.
 */
static void rows_sorter(sqlite3 *db, const char *sql, const char *want)
{
	if (!want || !strcasestr(sql, "ORDER BY") || nth(sql, "SELECT", 2) ||
	    nth(sql, "FROM", 2) || strcasestr(sql, "JOIN") || strcasestr(sql, " OVER") ||
	    strcasestr(sql, "OVER(") || strcasestr(sql, "WINDOW") || strcasestr(sql, "UNION") ||
	    strcasestr(sql, "EXCEPT") || strcasestr(sql, "INTERSECT"))
		return;
	const char *f = strcasestr(sql, "FROM");
	if (!f)
		return;
	f += 4;
	while (*f == ' ')
		f++;
	if (strncasecmp(f, "events", 6))
		return;
	f += 6;
	while (*f == ' ')
		f++;
	if (*f && *f != ';' && strncasecmp(f, "WHERE", 5) && strncasecmp(f, "ORDER", 5) &&
	    strncasecmp(f, "GROUP", 5) && strncasecmp(f, "LIMIT", 5))
		return;
	sqlite3_stmt *st2 = NULL;
	setenv("DT_SQL_MAT_MAX", "0", 1);
	int rc = sqlite3_prepare_v2(db, sql, -1, &st2, NULL);
	unsetenv("DT_SQL_MAT_MAX");
	if (rc != SQLITE_OK || !st2) {
		sqlite3_finalize(st2);
		return;
	}
	int gr;
	max_ticks = 1500;
	setenv("DT_SQL_NO_READAHEAD", "1", 1);
	char *got = rows(db, st2, &gr);
	unsetenv("DT_SQL_NO_READAHEAD");
	max_ticks = 20000;
	sqlite3_finalize(st2);
	if (got && strcmp(want, got)) {
		fprintf(stderr, "fuzz_groupby: the table's order is not sqlite's sorter's\n%s\n"
			"-- the table's:\n%s-- sqlite's sorter:\n%s", sql, want, got);
		abort();
	}
	sqlite3_free(got);
}

/* Not grouped: read ahead on 3 threads against this thread alone.
 * random() and its kin answer otherwise each time: not compared. */
static void rows_ahead(sqlite3 *db, sqlite3_stmt *st, const char *sql)
{
	if (strcasestr(sql, "random") || strcasestr(sql, "changes") ||
	    strcasestr(sql, "last_insert"))
		return;
	int wr, gr;
	/* every statement comes here, cross joins of the captures too: a
	 * shorter leash than the rewrite's, each run stopped at the same
	 * step (both interrupted: not compared) */
	max_ticks = 1500;
	setenv("DT_SQL_NO_READAHEAD", "1", 1);
	dtsp_set_threads(1);
	char *want = rows(db, st, &wr);
	unsetenv("DT_SQL_NO_READAHEAD");
	dtsp_set_threads(3);
	sqlite3_reset(st);
	char *got = rows(db, st, &gr);
	max_ticks = 20000;
	if ((want && (got == NULL || strcmp(want, got))) ||
	    (!want && wr != SQLITE_INTERRUPT && got)) {
		fprintf(stderr, "fuzz_groupby: read ahead, the rows differ\n%s\n"
			"-- on this thread:\n%s-- read ahead on 3:\n%s", sql,
			want ? want : "(error)\n", got ? got : "(error)\n");
		abort();
	}
	rows_sorter(db, sql, want);
	sqlite3_free(want);
	sqlite3_free(got);
}

static void one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || st == NULL) {
		sqlite3_finalize(st);
		return;
	}
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_stmt *fast = dtsql_groupby(db, st);
	if (!fast) {
		rows_ahead(db, st, sql);
		sqlite3_finalize(st);
		return;
	}
	/* the rewrite on 1 thread, then on 3: more workers than cores, and
	 * blocks shared unevenly (the captures have few) */
	static const unsigned nthr[] = { 1, 3 };
	char *want = NULL;
	int wr = SQLITE_OK;
	if (fast)
		want = rows(db, st, &wr);
	for (size_t t = 0; fast && t < sizeof(nthr) / sizeof(nthr[0]); t++) {
		int gr;
		dtsp_set_threads(nthr[t]);
		sqlite3_reset(fast);
		char *got = rows(db, fast, &gr);
		/* the plain path finished: so must the rewrite, with the same */
		if (want && (got == NULL || strcmp(want, got))) {
			fprintf(stderr, "fuzz_groupby: results differ (%u threads)\n%s\n"
				"-- as written:\n%s-- rewritten (%s):\n%s", nthr[t], sql, want,
				sqlite3_sql(fast), got ? got : "(error)\n");
			abort();
		}
		/* the plain path failed ("integer overflow" of sum...): so must
		 * the rewrite, not answer */
		if (!want && wr != SQLITE_INTERRUPT && got) {
			fprintf(stderr, "fuzz_groupby: the rewrite answers where the statement"
				" as written fails (%u threads)\n%s\n-- rewritten (%s):\n%s",
				nthr[t], sql, sqlite3_sql(fast), got);
			abort();
		}
		sqlite3_free(got);
	}
	sqlite3_free(want);
	sqlite3_finalize(fast);
	sqlite3_finalize(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *sql = malloc(size + 1);
	if (sql == NULL)
		return 0;
	memcpy(sql, data, size);
	sql[size] = 0;
	one(db1, sql);
	one(dbn, sql);
	free(sql);
	return 0;
}
