/*
 * dtsql_attach.c - a capture attached to a connection: the lookup tables
 * every table of one attach shares (struct dtsql), the modules registered
 * by table name, the functions sym() and sym_origin(), dtsql_attach and
 * dtsql_detach.  See dtsql.h and doc/SQL.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_int.h"
#include "dtsym.h"
#include "util.h"

/* ------------------------------------------------------------ context */

static void ctx_unref(struct dtsql *c)
{
	if (c == NULL || --c->refs > 0)
		return;
	if (c->comm_own)
		for (uint32_t i = 0; i <= c->ncomms; i++)
			free(c->comm_own[i]);
	free(c->comm_own);
	free(c->comm);
	free(c->comm_len);
	free(c->comm_rank);
	if (c->probe_name_own)
		for (uint32_t i = 0; i <= c->probe_max; i++)
			free(c->probe_name_own[i]);
	free(c->probe_name_own);
	free(c->probe_name);
	free(c->probe);
	free(c->probe_rank);
	free(c->ufirst_pid);
	free(c->ufirst_ts);
	free(c->probe_by_id);
	free(c->block_base);
	free(c);
}

static int cmp_comm(const void *a, const void *b, void *arg)
{
	const struct dtsql *sort_ctx = arg;
	const char *x = sort_ctx->comm[*(const uint32_t *)a];
	const char *y = sort_ctx->comm[*(const uint32_t *)b];
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	return strcmp(x, y);
}

static int cmp_probe(const void *a, const void *b, void *arg)
{
	const struct dtsql *sort_ctx = arg;
	const struct dtcap_probe *x = sort_ctx->probe[*(const uint32_t *)a];
	const struct dtcap_probe *y = sort_ctx->probe[*(const uint32_t *)b];
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	return strcmp(x->name, y->name);
}

static struct dtsql *ctx_new(struct dtcap_reader *r, struct dtsym *sym)
{
	struct dtsql *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->r = r;
	c->sym = sym;
	c->ncomms = dtcap_ncomms(r);
	size_t n = (size_t)c->ncomms + 1;
	c->comm = calloc(n, sizeof(*c->comm));
	c->comm_len = calloc(n, sizeof(*c->comm_len));
	c->comm_rank = calloc(n, sizeof(*c->comm_rank));
	c->comm_own = calloc(n, sizeof(*c->comm_own));
	uint32_t *ids = calloc(n, sizeof(*ids));
	if (!c->comm || !c->comm_len || !c->comm_rank || !c->comm_own || !ids)
		goto fail;
	char *fixbuf = NULL;
	size_t fixcap = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *cm = i ? dtcap_comm(r, i) : NULL;
		size_t len = 0;
		if (cm) {
			const char *v = dtu_utf8_fix(cm, strlen(cm), &len, &fixbuf, &fixcap);
			if (v != cm && (v == NULL || !(c->comm_own[i] = strdup(v)))) {
				free(fixbuf);
				goto fail;
			}
			cm = c->comm_own[i] ? c->comm_own[i] : cm;
		}
		c->comm[i] = cm;
		c->comm_len[i] = (int)len;
		ids[i] = i;
	}
	free(fixbuf);
	qsort_r(ids, n, sizeof(*ids), cmp_comm, c);
	for (uint32_t i = 0; i < n; i++)
		c->comm_rank[ids[i]] = i;
	free(ids);
	ids = NULL;

	for (size_t i = 0; i < dtcap_nprobes(r); i++) {
		uint32_t id = dtcap_probe_at(r, i)->id;
		if (id < PROBE_DENSE_MAX && id > c->probe_max)
			c->probe_max = id;
		if (id >= PROBE_DENSE_MAX)
			c->probe_sparse = 1;
	}
	n = (size_t)c->probe_max + 1;
	c->probe = calloc(n, sizeof(*c->probe));
	c->probe_rank = calloc(n, sizeof(*c->probe_rank));
	ids = calloc(n, sizeof(*ids));
	if (!c->probe || !c->probe_rank || !ids)
		goto fail;
	for (size_t i = 0; i < dtcap_nprobes(r); i++) {
		const struct dtcap_probe *p = dtcap_probe_at(r, i);
		if (p->id < n)
			c->probe[p->id] = p;
	}
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	qsort_r(ids, n, sizeof(*ids), cmp_probe, c);
	for (uint32_t i = 0; i < n; i++)
		c->probe_rank[ids[i]] = i;
	free(ids);
	ids = NULL;
	c->probe_name = calloc(n, sizeof(*c->probe_name));
	c->probe_name_own = calloc(n, sizeof(*c->probe_name_own));
	if (!c->probe_name || !c->probe_name_own)
		goto fail;
	{
		char *fixbuf = NULL;
		size_t fixcap = 0, len;
		for (uint32_t i = 0; i < n; i++) {
			const char *nm = c->probe[i] ? c->probe[i]->name : NULL;
			const char *v = nm ? dtu_utf8_fix(nm, strnlen(nm, DTCAP_PROBENAMELEN), &len,
							  &fixbuf, &fixcap) : NULL;
			if (nm && (v == NULL || (v != nm && !(c->probe_name_own[i] = strdup(v))))) {
				free(fixbuf);
				goto fail;
			}
			c->probe_name[i] = c->probe_name_own[i] ? c->probe_name_own[i] : nm;
		}
		free(fixbuf);
	}

	size_t nb = dtcap_nblocks(r);
	c->block_base = calloc(nb + 1, sizeof(*c->block_base));
	if (c->block_base == NULL)
		goto fail;
	for (size_t i = 0; i < nb; i++)
		c->block_base[i + 1] = c->block_base[i] + dtcap_block_info(r, i)->rows;
	c->refs = 1;
	return c;
fail:
	free(ids);
	c->refs = 1;
	ctx_unref(c);
	return NULL;
}

/* Scan pid, ts and ustack once to know where each user stack first ran. */
int dtsql_ctx_ufirst(struct dtsql *c, char **err)
{
	if (c->ufirst_done)
		return 0;
	uint32_t ns = dtcap_nstacks(c->r);
	c->ufirst_pid = calloc((size_t)ns + 1, sizeof(*c->ufirst_pid));
	c->ufirst_ts = calloc((size_t)ns + 1, sizeof(*c->ufirst_ts));
	struct dtcap_block *b = dtcap_block_new();
	if (!c->ufirst_pid || !c->ufirst_ts || !b) {
		dtcap_block_free(b);
		*err = sqlite3_mprintf("out of memory");
		return -1;
	}
	for (uint32_t i = 0; i <= ns; i++)
		c->ufirst_ts[i] = UINT64_MAX;
	for (size_t i = 0; i < dtcap_nblocks(c->r); i++) {
		if (dtcap_read_block(c->r, i, DTCAP_COL_TS | DTCAP_COL_PID |
				     DTCAP_COL_USTACK, b) < 0) {
			*err = sqlite3_mprintf("%s", dtcap_reader_error(c->r));
			dtcap_block_free(b);
			return -1;
		}
		for (uint32_t j = 0; j < b->rows; j++) {
			uint32_t s = b->ustack[j];
			if (s != 0 && s <= ns && b->ts[j] < c->ufirst_ts[s]) {
				c->ufirst_ts[s] = b->ts[j];
				c->ufirst_pid[s] = b->pid[j];
			}
		}
	}
	dtcap_block_free(b);
	c->ufirst_done = 1;
	return 0;
}


volatile sig_atomic_t *dtsql_cancel;

/* ------------------------------------------------------ generic vtab */

struct modaux {
	struct dtsql	*c;
	int		kind;
};


static void modaux_free(void *p)
{
	struct modaux *m = p;
	ctx_unref(m->c);
	free(m);
}

int
dtsql_vtab_declare(sqlite3 *db, char *sql, size_t size, sqlite3_vtab **out, char **err)
{
	if (sql == NULL)
		return SQLITE_NOMEM;
	int rc = sqlite3_declare_vtab(db, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return rc;
	}
	if ((*out = sqlite3_malloc64(size)) == NULL)
		return SQLITE_NOMEM;
	memset(*out, 0, size);
	/* reading a capture has no side effect: usable from triggers and views */
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	return SQLITE_OK;
}

int dtsql_x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		    sqlite3_vtab **out, char **err)
{
	(void)argc; (void)argv;
	struct modaux *m = aux;
	char *sql = m->kind == T_EVENTS_GROUPED
		? sqlite3_mprintf("CREATE TABLE x(%s, " E_ROWS_NAME " INTEGER, "
				  E_TSLO_NAME " INTEGER HIDDEN, " E_TSHI_NAME " INTEGER HIDDEN, "
				  E_BUCKET_NAME " INTEGER HIDDEN, " E_BKOFF_NAME " INTEGER HIDDEN, "
				  E_BKW_NAME " INTEGER HIDDEN)",
				  dtsql_tab[T_EVENTS].cols)
		: sqlite3_mprintf("CREATE TABLE x(%s)", dtsql_tab[m->kind].cols);
	int rc = dtsql_vtab_declare(db, sql, sizeof(struct tab), out, err);
	if (rc == SQLITE_OK) {
		struct tab *t = (struct tab *)*out;
		t->c = m->c;
		t->kind = m->kind;
	}
	return rc;
}

int dtsql_x_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}


/* sym(pc, kernel [, pid, ts]) and sym_origin(...): name any address, with
 * namer (dtsym_name or dtsym_origin) */
static void sym_call(sqlite3_context *ctx, int argc, sqlite3_value **argv,
		     const char *(*namer)(struct dtsym *, uint64_t, int, uint32_t, uint64_t))
{
	struct dtsql *c = sqlite3_user_data(ctx);
	if (c->sym == NULL || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	uint64_t pc = (uint64_t)sqlite3_value_int64(argv[0]);
	int kernel = sqlite3_value_int(argv[1]) != 0;
	uint32_t pid = argc > 2 ? (uint32_t)sqlite3_value_int64(argv[2]) : 0;
	uint64_t ts = argc > 3 ? (uint64_t)sqlite3_value_int64(argv[3]) : 0;
	dtsql_result_text(ctx, namer(c->sym, pc, kernel, pid, ts));
}

static void fn_sym(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sym_call(ctx, argc, argv, dtsym_name);
}

static void fn_sym_origin(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sym_call(ctx, argc, argv, dtsym_origin);
}

static void fn_ctx_free(void *p)
{
	ctx_unref(p);
}

/* The tables as modules named TABLE + suffix; the functions sym(),
 * sym_origin() only if funcs (they name one capture's addresses).  Returns
 * the shared context, owned by db's modules (NULL: failed, *err set); only
 * with funcs is it a handle for the caller (c->db set). */
static struct dtsql *attach_named(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym,
				  const char *suffix, int funcs, char **err)
{
	struct dtsql *c = ctx_new(r, sym);
	if (c == NULL) {
		if (err)
			*err = sqlite3_mprintf("out of memory");
		return NULL;
	}
	for (int k = 0; k <= T_EVENTS_GROUPED; k++) {
		struct modaux *m = malloc(sizeof(*m));
		if (m == NULL) {
			ctx_unref(c);
			if (err)
				*err = sqlite3_mprintf("out of memory");
			return NULL;
		}
		m->c = c;
		m->kind = k;
		c->refs++;
		/* on failure sqlite calls the destructor itself */
		char *mname = sqlite3_mprintf("%s%s", k == T_EVENTS_GROUPED ? EVENTS_GROUPED
					      : dtsql_tab[k].name, suffix);
		int rc = mname ? sqlite3_create_module_v2(db, mname,
							  k == T_EVENTS || k == T_EVENTS_GROUPED
							  ? &dtsql_events_module : &dtsql_tables_module,
							  m, modaux_free) : SQLITE_NOMEM;
		if (mname == NULL)
			modaux_free(m);
		sqlite3_free(mname);
		if (rc != SQLITE_OK) {
			if (err)
				*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			ctx_unref(c);
			return NULL;
		}
	}
	if (dtsql_derived_attach(db, r, sym, suffix, err)) {
		ctx_unref(c);
		return NULL;
	}
	static const int nargs[] = { 2, 4 };
	if (!funcs) {
		ctx_unref(c);	/* the modules hold it */
		return c;
	}
	for (int i = 0; i < 2; i++) {
		c->refs += 2;
		if (sqlite3_create_function_v2(db, "sym", nargs[i],
					       SQLITE_UTF8 | SQLITE_DETERMINISTIC, c,
					       fn_sym, NULL, NULL, fn_ctx_free) != SQLITE_OK ||
		    sqlite3_create_function_v2(db, "sym_origin", nargs[i],
					       SQLITE_UTF8 | SQLITE_DETERMINISTIC, c,
					       fn_sym_origin, NULL, NULL, fn_ctx_free) != SQLITE_OK) {
			if (err)
				*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			ctx_unref(c);
			return NULL;
		}
	}
	c->db = db;
	ctx_unref(c);	/* the modules and functions hold it now */
	return c;
}

struct dtsql *dtsql_attach(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym,
			   char **err)
{
	struct dtsql *h = attach_named(db, r, sym, "", 1, err);

	if (h && (dtsql_view_functions(db) < 0 ||
		  dtsql_probe_views(db, &r, 1, NULL, NULL, err) < 0)) {
		if (err && *err == NULL)
			*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return NULL;
	}
	return h;
}

int dtsql_attach_many(sqlite3 *db, struct dtcap_reader *const *r, struct dtsym *const *sym,
		      const char *const *capture, const char *const *host, size_t n,
		      char **err)
{
	if (n > DTSQL_MAX_CAPTURES) {
		if (err)
			*err = sqlite3_mprintf("%d captures: at most %d at once", (int)n,
					       DTSQL_MAX_CAPTURES);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "__c%zu", i);
		if (attach_named(db, r[i], sym[i], suffix, i == 0, err) == NULL)
			return -1;
	}
	/* each table (the derived ones after them): one TEMP view over the
	 * captures' tables */
	for (int k = 0; k < T_NTABLES + 2; k++) {
		const char *tn = k < T_NTABLES ? dtsql_tab[k].name : dtsql_derived_names[k - T_NTABLES];
		sqlite3_str *q = sqlite3_str_new(db);
		sqlite3_str_appendf(q, "CREATE TEMP VIEW %s AS ", tn);
		for (size_t i = 0; i < n; i++)
			/* (sqlite's printf has no %zu: its %z is a string) */
			sqlite3_str_appendf(q, "%sSELECT *, %Q AS capture, %Q AS host FROM main.%s__c%d",
					    i ? " UNION ALL " : "", capture[i], host[i], tn, (int)i);
		char *sql = sqlite3_str_finish(q);
		char *e = NULL;
		int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, &e) : SQLITE_NOMEM;
		sqlite3_free(sql);
		if (rc != SQLITE_OK) {
			if (err)
				*err = e ? e : sqlite3_mprintf("out of memory");
			else
				sqlite3_free(e);
			return -1;
		}
	}
	if (dtsql_view_functions(db) < 0) {
		if (err)
			*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return -1;
	}
	return dtsql_probe_views(db, r, n, capture, host, err);
}

void dtsql_detach(struct dtsql *h)
{
	if (h == NULL)
		return;
	/* h goes with the last module or function unregistered */
	sqlite3 *db = h->db;
	for (int k = 0; k < T_NTABLES; k++)
		sqlite3_create_module_v2(db, dtsql_tab[k].name, NULL, NULL, NULL);
	sqlite3_create_module_v2(db, EVENTS_GROUPED, NULL, NULL, NULL);
	dtsql_derived_detach(db);
	for (int n = 2; n <= 4; n += 2) {
		sqlite3_create_function_v2(db, "sym", n, SQLITE_UTF8, NULL, NULL,
					   NULL, NULL, NULL);
		sqlite3_create_function_v2(db, "sym_origin", n, SQLITE_UTF8, NULL,
					   NULL, NULL, NULL, NULL);
	}
}


