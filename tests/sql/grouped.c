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
	for (int i = sep + 1; i < argc; i++) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, argv[i], -1, &st, NULL) != SQLITE_OK || st == NULL) {
			fprintf(stderr, "grouped: %s: %s\n", argv[i], sqlite3_errmsg(db));
			ret = 1;
			continue;
		}
		sqlite3_stmt *fast = dtsql_groupby(db, st);
		printf("%s\t%s\n", fast ? "fast" : "plain", argv[i]);
		sqlite3_finalize(fast);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	for (int i = 0; i < ncap; i++)
		dtcap_reader_close(r[i]);
	return ret;
}
