/*
 * dtsql_guard.c - the connection user SQL runs on, locked down.
 *
 * dtreport and dtsh run as root (captures are root's 0600 files), so any
 * statement a user types must not become a way to write files: ATTACH of a
 * path then CREATE TABLE there, or VACUUM INTO, would create or replace any
 * file on the machine.  The authorizer refuses ATTACH (VACUUM attaches its
 * output the same way, so it goes too), DETACH and every change outside
 * the TEMP schema; TEMP tables and views stay, for analysis.  TEMP lives in
 * memory (temp_store), so nothing the user does reaches the disk.  The
 * export (export_sqlite.c) opens its own connection: it must ATTACH its file.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "dtsql.h"
#include "dtsql_int.h"

/* What the authorizer refused last: SQL runs on one thread of a process,
 * and dtsql_exec reads it right after the prepare that failed. */
static _Thread_local char refused[160];

static int is_temp(const char *db)
{
	return db && strcmp(db, "temp") == 0;
}

static int is_schema(const char *table)
{
	return table && (strcasecmp(table, "sqlite_master") == 0 ||
			 strcasecmp(table, "sqlite_schema") == 0 ||
			 strcasecmp(table, "sqlite_temp_master") == 0 ||
			 strcasecmp(table, "sqlite_temp_schema") == 0);
}

/* Pragmas that only describe the schema: they take a table or index name
 * as argument (every pragma without an argument only reads). */
static int pragma_reads(const char *name)
{
	static const char *const ok[] = {
		"table_info", "table_xinfo", "table_list", "index_info", "index_xinfo",
		"index_list", "foreign_key_list", "function_list", "module_list",
		"pragma_list", "collation_list", "database_list", "compile_options",
		NULL,
	};
	for (int i = 0; name && ok[i]; i++)
		if (strcasecmp(name, ok[i]) == 0)
			return 1;
	return 0;
}

static int deny(const char *what, const char *a, const char *b)
{
	if (b)
		snprintf(refused, sizeof(refused), "%s %s.%s", what, b, a ? a : "?");
	else if (a)
		snprintf(refused, sizeof(refused), "%s %s", what, a);
	else
		snprintf(refused, sizeof(refused), "%s", what);
	return SQLITE_DENY;
}

int dtsql_guard_auth(void *arg, int action, const char *a3, const char *a4, const char *a5,
		     const char *a6)
{
	(void)arg;
	(void)a6;
	switch (action) {
	case SQLITE_ATTACH:
		/* VACUUM attaches its copy: "" for a plain VACUUM, a path
		 * for VACUUM INTO.  dtsql_exec names the statement. */
		return deny("ATTACH", NULL, NULL);
	case SQLITE_DETACH:
		return deny("DETACH", NULL, NULL);
	case SQLITE_INSERT:
		/* the schema table changes only through CREATE and DROP, told
		 * apart below (sqlite also asks this when it first reads a
		 * virtual table's declaration); defensive mode keeps it from
		 * being written as a table */
		if (is_schema(a3))
			return SQLITE_OK;
		return is_temp(a5) ? SQLITE_OK : deny("INSERT into", a3, a5);
	case SQLITE_UPDATE:
		if (is_schema(a3))
			return SQLITE_OK;
		return is_temp(a5) ? SQLITE_OK : deny("UPDATE of", a3, a5);
	case SQLITE_DELETE:
		if (is_schema(a3))
			return SQLITE_OK;
		return is_temp(a5) ? SQLITE_OK : deny("DELETE from", a3, a5);
	case SQLITE_CREATE_TABLE:
	case SQLITE_CREATE_VIEW:
		return is_temp(a5) ? SQLITE_OK : deny("CREATE (not TEMP)", a3, a5);
	case SQLITE_CREATE_INDEX:
	case SQLITE_CREATE_TRIGGER:
		return is_temp(a5) ? SQLITE_OK : deny("CREATE (not TEMP)", a3, a5);
	case SQLITE_DROP_TABLE:
	case SQLITE_DROP_VIEW:
	case SQLITE_DROP_INDEX:
	case SQLITE_DROP_TRIGGER:
		return is_temp(a5) ? SQLITE_OK : deny("DROP", a3, a5);
	case SQLITE_ALTER_TABLE:
		/* a3 is the schema here, a4 the table */
		return is_temp(a3) ? SQLITE_OK : deny("ALTER TABLE", a4, a3);
	case SQLITE_CREATE_VTABLE:
	case SQLITE_DROP_VTABLE:
		return is_temp(a5) ? SQLITE_OK : deny("CREATE or DROP VIRTUAL TABLE", a3, a5);
	case SQLITE_REINDEX:
	case SQLITE_ANALYZE:
		return deny(action == SQLITE_REINDEX ? "REINDEX" : "ANALYZE", a3, NULL);
	case SQLITE_PRAGMA:
		/* PRAGMA x = v can move temp files to disk (temp_store,
		 * temp_store_directory) or change the schema's trust */
		if (a4 == NULL || pragma_reads(a3))
			return SQLITE_OK;
		return deny("PRAGMA with a value:", a3, NULL);
	case SQLITE_FUNCTION:
		/* off by the connection's config too: say so by name */
		if (a4 && strcasecmp(a4, "load_extension") == 0)
			return deny("load_extension()", NULL, NULL);
		return SQLITE_OK;
	default:
		return SQLITE_OK;
	}
}

const char *dtsql_guard_refused(void)
{
	return refused[0] ? refused : NULL;
}

void dtsql_guard_clear(void)
{
	refused[0] = 0;
}

int dtsql_guarded(sqlite3 *db)
{
	int on = 0;

	/* defensive mode is set only by dtsql_open: it marks the guarded
	 * connections, as sqlite has no way to ask for the authorizer */
	if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &on) != SQLITE_OK)
		return 0;
	return on;
}

void dtsql_guard_restore(sqlite3 *db)
{
	sqlite3_set_authorizer(db, dtsql_guarded(db) ? dtsql_guard_auth : NULL, NULL);
}

sqlite3 *dtsql_open(char **err)
{
	sqlite3 *db = NULL;
	int off = 0, on = 1;

	*err = NULL;
	/* one thread uses the connection: no per-call mutex */
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, off, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL) != SQLITE_OK)
		goto fail;
	/* ATTACH is refused by the authorizer too; with no room for one it
	 * fails even where an authorizer is not asked */
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_set_authorizer(db, dtsql_guard_auth, NULL);
	return db;
fail:
	*err = sqlite3_mprintf("sqlite: %s", db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_close(db);
	return NULL;
}
