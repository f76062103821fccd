/*
 * sqltsan.c - the grouped SQL scans (dtsql_gscan.c) on scan_pool.c's
 * workers under ThreadSanitizer: each statement must be taken by the
 * rewrite (dtsql_groupby), give on THREADS workers the rows it gives on
 * one and the rows of the statement as written, and TSan must find no
 * race between the workers counting a capture's blocks.
 * usage: sqltsan CAPTURE THREADS STATEMENT...
 *
 * With --rows first, statements that are not grouped: the events cursor
 * reads ahead on the pool (dtsp_ahead_new_rows); each must give on
 * THREADS workers the rows it gives on this thread alone
 * (DT_SQL_NO_READAHEAD) and on one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_int.h"
#include "scan_pool.h"

#define CHECK_PREFIX "sqltsan."
#include "../check.h"

/* Every row of st as text, reset first; NULL on an error. */
static char *rows(sqlite3_stmt *st)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	int n = sqlite3_column_count(st), rc;

	sqlite3_reset(st);
	/* never empty: sqlite3_str_finish gives NULL for "" */
	sqlite3_str_appendall(s, "rows:\n");
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
	if (rc != SQLITE_DONE) {
		sqlite3_free(sqlite3_str_finish(s));
		return NULL;
	}
	return sqlite3_str_finish(s);
}

/* --rows: one statement as it reads on this thread, one, N threads. */
static void rows_check(sqlite3 *db, const char *sql, unsigned nthr, const char *name)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		checkf(name, 0, "%s: %s", sql, sqlite3_errmsg(db));
		return;
	}
	setenv("DT_SQL_NO_READAHEAD", "1", 1);
	char *want = rows(st);
	unsetenv("DT_SQL_NO_READAHEAD");
	dtsp_set_threads(1);
	char *one = rows(st);
	dtsp_set_threads(nthr);
	char *many = rows(st);
	if (!want || !one || !many)
		checkf(name, 0, "an error: %s: %s", sql, sqlite3_errmsg(db));
	else if (strcmp(one, many))
		checkf(name, 0, "1 and %u threads differ: %s", nthr, sql);
	else
		checkf(name, !strcmp(want, many), "not the rows read on this thread: %s", sql);
	sqlite3_free(want);
	sqlite3_free(one);
	sqlite3_free(many);
	sqlite3_finalize(st);
}

int main(int argc, char **argv)
{
	unsigned nthr;
	sqlite3 *db;
	int rowsmode = argc > 1 && !strcmp(argv[1], "--rows");

	if (rowsmode)
		argc--, argv++;
	if (argc < 4 || dtsp_parse_threads(argv[2], &nthr)) {
		fprintf(stderr, "usage: sqltsan CAPTURE THREADS STATEMENT...\n");
		return 2;
	}
	struct dtcap_reader *r = dtcap_open(argv[1]);
	if (!r) {
		fprintf(stderr, "sqltsan: %s\n", dtcap_open_error());
		return 2;
	}
	if (sqlite3_open(":memory:", &db) != SQLITE_OK || !dtsql_attach(db, r, NULL, NULL)) {
		fprintf(stderr, "sqltsan: attach failed\n");
		return 2;
	}
	for (int a = 3; a < argc && rowsmode; a++) {
		char name[64];
		snprintf(name, sizeof(name), "rows%u.q%d", nthr, a - 2);
		rows_check(db, argv[a], nthr, name);
	}
	for (int a = 3; a < argc && !rowsmode; a++) {
		char name[64];
		sqlite3_stmt *st = NULL, *fast = NULL;
		snprintf(name, sizeof(name), "t%u.q%d", nthr, a - 2);
		if (sqlite3_prepare_v2(db, argv[a], -1, &st, NULL) != SQLITE_OK) {
			checkf(name, 0, "%s: %s", argv[a], sqlite3_errmsg(db));
			continue;
		}
		if (!(fast = dtsql_groupby(db, st))) {
			checkf(name, 0, "not rewritten: %s", argv[a]);
			sqlite3_finalize(st);
			continue;
		}
		char *want = rows(st);
		dtsp_set_threads(1);
		char *one = rows(fast);
		dtsp_set_threads(nthr);
		char *many = rows(fast);
		if (!want || !one || !many)
			checkf(name, 0, "an error (%s%s%s): %s: %s", want ? "" : "as written ",
			       one ? "" : "1 thread ", many ? "" : "N threads", argv[a], sqlite3_errmsg(db));
		else if (strcmp(one, many))
			checkf(name, 0, "1 and %u threads differ: %s", nthr, argv[a]);
		else
			checkf(name, !strcmp(want, many), "not the rows as written: %s", argv[a]);
		sqlite3_free(want);
		sqlite3_free(one);
		sqlite3_free(many);
		sqlite3_finalize(fast);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	dtcap_reader_close(r);
	return check_status();
}
