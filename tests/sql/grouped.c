/*
 * grouped - which statements take the GROUP BY fast path of dtsql_exec
 * (dtsql_groupby), so the tests know that the outputs they compare with
 * DT_SQL_NO_GROUPED came from two different paths.
 *
 *	grouped CAPTURE... -- SQL...
 *
 * One capture is attached as `dtreport sql` does (dtsql_attach), several
 * as a union (dtsql_attach_many, captures named c0, c1..., hosts h'0...).
 * Prints "fast" or "plain" and a tab and the statement, one line each;
 * exit 1 when a statement does not prepare.
 *
 *	grouped --cancelled CAPTURE... -- SQL...
 *
 * Runs each statement through dtsql_exec with its cancel flag already
 * set, as after a Ctrl-C, and prints "interrupted" or "completed" and the
 * statement: a counting statement is one call into events_grouped's scan,
 * where sqlite's progress handler never runs, so only the scan's own
 * check stops it.
 *
 *	grouped --plan CAPTURE... -- SQL...
 *
 * Prints the EXPLAIN QUERY PLAN lines of each statement's fast form (its
 * "plain" line when it has none), so the tests see which constraints the
 * event tables were given (the idxStr after "INDEX N:").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_int.h"

int main(int argc, char **argv)
{
	int cancelled = argc > 1 && !strcmp(argv[1], "--cancelled");
	if (cancelled)
		argc--, argv++;
	int plan = argc > 1 && !strcmp(argv[1], "--plan");
	if (plan)
		argc--, argv++;
	int sep = 1;
	while (sep < argc && strcmp(argv[sep], "--"))
		sep++;
	int ncap = sep - 1;
	if (ncap < 1 || sep >= argc || ncap > 16) {
		fprintf(stderr, "usage: grouped CAPTURE... -- SQL...\n");
		return 2;
	}
	sqlite3 *db = NULL;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return 1;
	struct dtcap_reader *r[16];
	struct dtsym *sym[16] = { 0 };
	char names[16][16], hosts[16][16];
	const char *cn[16], *hn[16];
	for (int i = 0; i < ncap; i++) {
		if ((r[i] = dtcap_open(argv[1 + i])) == NULL) {
			fprintf(stderr, "grouped: %s: %s\n", argv[1 + i], dtcap_open_error());
			return 1;
		}
		snprintf(names[i], sizeof(names[i]), "c%d", i);
		snprintf(hosts[i], sizeof(hosts[i]), "h'%d", i);
		cn[i] = names[i];
		hn[i] = hosts[i];
	}
	char *err = NULL;
	if (ncap == 1 ? dtsql_attach(db, r[0], NULL, &err) == NULL
		      : dtsql_attach_many(db, r, sym, cn, hn, (size_t)ncap, &err) < 0) {
		fprintf(stderr, "grouped: %s\n", err ? err : "attach failed");
		return 1;
	}
	int ret = 0;
	for (int i = sep + 1; i < argc && cancelled; i++) {
		volatile sig_atomic_t cancel = 1;
		char *e = NULL;
		FILE *out = fopen("/dev/null", "w");
		if (out == NULL)
			return 1;
		int rc = dtsql_exec(db, argv[i], DTSQL_CSV, out, &cancel, &e);
		printf("%s\t%s\n", rc < 0 && e && !strcmp(e, "interrupted") ? "interrupted" :
		       rc < 0 ? "error" : "completed", argv[i]);
		if (rc < 0 && (!e || strcmp(e, "interrupted")))
			fprintf(stderr, "grouped: %s: %s\n", argv[i], e ? e : "failed");
		sqlite3_free(e);
		fclose(out);
	}
	for (int i = sep + 1; i < argc && !cancelled; i++) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, argv[i], -1, &st, NULL) != SQLITE_OK || st == NULL) {
			fprintf(stderr, "grouped: %s: %s\n", argv[i], sqlite3_errmsg(db));
			ret = 1;
			continue;
		}
		sqlite3_stmt *fast = dtsql_groupby(db, st);
		printf("%s\t%s\n", fast ? "fast" : "plain", argv[i]);
		sqlite3_stmt *ep = NULL;
		char *eq = fast && plan ? sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sqlite3_sql(fast))
					: NULL;
		if (eq && sqlite3_prepare_v2(db, eq, -1, &ep, NULL) == SQLITE_OK) {
			while (sqlite3_step(ep) == SQLITE_ROW)
				printf("plan\t%s\n", (const char *)sqlite3_column_text(ep, 3));
		} else if (fast && plan) {
			fprintf(stderr, "grouped: %s: EXPLAIN: %s\n", argv[i], sqlite3_errmsg(db));
			ret = 1;
		}
		sqlite3_finalize(ep);
		sqlite3_free(eq);
		sqlite3_finalize(fast);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	for (int i = 0; i < ncap; i++)
		dtcap_reader_close(r[i]);
	return ret;
}
