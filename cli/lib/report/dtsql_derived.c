/*
 * dtsql_derived.c - the SQL tables derived from a capture's events:
 *	spans	entry/return pairs per thread (span_model.c)
 *	sched	off-CPU intervals with their wakers (sched_model.c)
 * the same data the latency, syscalls, flame --offcpu and blame reports
 * compute in C.  Each is computed on its first use, kept for the life of
 * the attach (a dtsh session, one dtreport sql run) and in a cache file
 * beside the capture for the next (derived_cache.c); nothing is written
 * into the capture.  A capture without the events a table needs has it
 * empty.
 */
#include <stdlib.h>
#include <string.h>

#include "dtsql_int.h"
#include "engine.h"
#include "report.h"

const char *const dtsql_derived_names[] = { "spans", "sched", NULL };

static const char *const dcols[] = {
	"tid INTEGER, pid INTEGER, comm TEXT, probe TEXT, start INTEGER, \"end\" INTEGER,"
	" dur INTEGER, args TEXT, retval INTEGER, errno INTEGER",
	"tid INTEGER, pid INTEGER, comm TEXT, state TEXT, start INTEGER, \"end\" INTEGER,"
	" dur INTEGER, wake INTEGER, blocked INTEGER, runqueue INTEGER, kstack INTEGER,"
	" ustack INTEGER, waker_tid INTEGER, waker_pid INTEGER, waker_comm TEXT,"
	" waker_kstack INTEGER, waker_ustack INTEGER, waker_ctx TEXT",
};

const char *
dtsql_derived_cols(int k)
{
	return dcols[k];
}

/* one table of one capture: built on first use */
struct dmod {
	struct dtcap_reader *r;
	struct dtsym	*sym;
	int		kind;		/* 0 spans, 1 sched */
	int		built;
	struct rpt_spans sp;
	struct rpt_sched sc;
	size_t		n;
};

struct dtab {
	sqlite3_vtab	base;
	struct dmod	*m;
};

struct dcur {
	sqlite3_vtab_cursor base;
	struct dmod	*m;
	size_t		i;
};

static void
dmod_free(void *p)
{
	struct dmod *m = p;
	rpt_spans_free(&m->sp);
	rpt_sched_free(&m->sc);
	free(m);
}

/* Does the capture have what the table is made of?  (Else it is empty,
 * without the reports' messages.) */
static int
has_input(const struct dmod *m)
{
	for (size_t i = 0; i < dtcap_nprobes(m->r); i++) {
		const char *n = dtcap_probe_at(m->r, i)->name;
		size_t l = strlen(n);
		if (m->kind == 1 && strcmp(n, "tracepoint:sched:sched_switch") == 0)
			return 1;
		if (m->kind == 0 && l > 7 && strcmp(n + l - 7, ":return") == 0)
			return 1;
	}
	return 0;
}

static int
build(struct dmod *m, char **err)
{
	struct rpt_cap c = { m->r, m->sym, "capture" };
	struct flt_filter all;
	int rc = 0;

	if (m->built)
		return 0;
	/* computed once per capture: kept beside it (derived_cache.c) */
	if (has_input(m) && !dtsql_cache_load(m->r, m->kind, &m->sp, &m->sc)) {
		flt_init(&all);
		rc = m->kind == 0 ? rpt_spans_build(&c, "sql", &all, NULL, RPT_SPANS_ARGS, &m->sp,
						   dtsql_cancel)
				  : rpt_sched_build(&c, "sql", &m->sc, dtsql_cancel);
		flt_free(&all);
		if (rc == 0)
			dtsql_cache_save(m->r, m->kind, &m->sp, &m->sc);
	}
	if (rc) {
		*err = sqlite3_mprintf("%s: could not be computed (see the message above)",
				       dtsql_derived_names[m->kind]);
		return -1;
	}
	m->n = m->kind == 0 ? m->sp.n : m->sc.n;
	m->built = 1;
	return 0;
}

static int
d_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
	  char **err)
{
	(void)argc;
	(void)argv;
	struct dmod *m = aux;
	int rc = dtsql_vtab_declare(db, sqlite3_mprintf("CREATE TABLE x(%s)", dcols[m->kind]),
				    sizeof(struct dtab), out, err);
	if (rc == SQLITE_OK)
		((struct dtab *)*out)->m = m;
	return rc;
}

static int
d_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct dtab *t = (struct dtab *)v;
	double n = t->m->built ? (double)t->m->n : (double)dtcap_nevents(t->m->r) / 2;
	info->estimatedCost = n > 1 ? n : 1;
	info->estimatedRows = (sqlite3_int64)(n > 1 ? n : 1);
	return SQLITE_OK;
}

static int
d_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct dcur *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return SQLITE_NOMEM;
	c->m = ((struct dtab *)v)->m;
	*out = &c->base;
	return SQLITE_OK;
}

static int
d_close(sqlite3_vtab_cursor *cur)
{
	free(cur);
	return SQLITE_OK;
}

static int
d_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc, sqlite3_value **argv)
{
	(void)idxNum;
	(void)idxStr;
	(void)argc;
	(void)argv;
	struct dcur *c = (struct dcur *)cur;
	char *err = NULL;
	c->i = 0;
	if (build(c->m, &err)) {
		sqlite3_free(cur->pVtab->zErrMsg);
		cur->pVtab->zErrMsg = err;
		return SQLITE_ERROR;
	}
	return SQLITE_OK;
}

static int
d_next(sqlite3_vtab_cursor *cur)
{
	((struct dcur *)cur)->i++;
	return SQLITE_OK;
}

static int
d_eof(sqlite3_vtab_cursor *cur)
{
	struct dcur *c = (struct dcur *)cur;
	return c->i >= c->m->n;
}

static int
d_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct dcur *)cur)->i;
	return SQLITE_OK;
}

static void
res_comm(sqlite3_context *ctx, const struct dtcap_reader *r, uint32_t id)
{
	const char *s = dtcap_comm(r, id);
	if (s)
		sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
}

static int
spans_column(const struct dmod *m, size_t i, sqlite3_context *ctx, int col)
{
	const struct rpt_span *s = &m->sp.v[i];
	switch (col) {
	case 0: sqlite3_result_int64(ctx, s->tid); break;
	case 1: sqlite3_result_int64(ctx, s->pid); break;
	case 2: res_comm(ctx, m->r, s->comm); break;
	case 3: {
		const struct dtcap_probe *p = dtcap_probe_by_id(m->r, s->probe);
		const char *n = p ? p->name : "?";
		size_t l = strlen(n);
		if (l > 6 && strcmp(n + l - 6, ":entry") == 0)
			l -= 6;
		sqlite3_result_text(ctx, n, (int)l, SQLITE_TRANSIENT);
		break;
	}
	case 4: sqlite3_result_int64(ctx, (sqlite3_int64)s->start); break;
	case 5: sqlite3_result_int64(ctx, (sqlite3_int64)s->end); break;
	case 6: sqlite3_result_int64(ctx, (sqlite3_int64)(s->end - s->start)); break;
	case 7: {
		char buf[RPT_SPAN_ARGS * 24];
		size_t k = 0;
		buf[0] = '\0';
		for (unsigned a = 0; a < m->sp.nargs[i]; a++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%lld", a ? "," : "",
					      (long long)m->sp.args[i][a]);
		sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
		break;
	}
	case 8: sqlite3_result_int64(ctx, s->ret); break;
	case 9: sqlite3_result_int64(ctx, s->err); break;
	}
	return SQLITE_OK;
}

static int
sched_column(const struct dmod *m, const struct rpt_sched_span *s, sqlite3_context *ctx, int col)
{
	uint64_t w = s->wake && s->wake < s->end ? s->wake : s->end;
	switch (col) {
	case 0: sqlite3_result_int64(ctx, s->tid); break;
	case 1: sqlite3_result_int64(ctx, s->pid); break;
	case 2: res_comm(ctx, m->r, s->comm); break;
	case 3: sqlite3_result_text(ctx, &s->state, 1, SQLITE_TRANSIENT); break;
	case 4: sqlite3_result_int64(ctx, (sqlite3_int64)s->start); break;
	case 5: sqlite3_result_int64(ctx, (sqlite3_int64)s->end); break;
	case 6: sqlite3_result_int64(ctx, (sqlite3_int64)(s->end - s->start)); break;
	case 7:
		if (s->wake)
			sqlite3_result_int64(ctx, (sqlite3_int64)s->wake);
		else
			sqlite3_result_null(ctx);
		break;
	/* a preempted thread (R) was never blocked: all of it is runqueue */
	case 8: sqlite3_result_int64(ctx, s->state == 'R' ? 0 : (sqlite3_int64)(w - s->start)); break;
	case 9: sqlite3_result_int64(ctx, s->state == 'R' ? (sqlite3_int64)(s->end - s->start)
						       : (sqlite3_int64)(s->end - w)); break;
	case 10: sqlite3_result_int64(ctx, s->kstack); break;
	case 11: sqlite3_result_int64(ctx, s->ustack); break;
	default:
		if (!s->wake) {
			sqlite3_result_null(ctx);
			break;
		}
		switch (col) {
		case 12: sqlite3_result_int64(ctx, s->wtid); break;
		case 13: sqlite3_result_int64(ctx, s->wpid); break;
		case 14: res_comm(ctx, m->r, s->wcomm); break;
		case 15: sqlite3_result_int64(ctx, s->wkstack); break;
		case 16: sqlite3_result_int64(ctx, s->wustack); break;
		case 17:
			sqlite3_result_text(ctx, dtcap_ctx_name(s->wctx) ? dtcap_ctx_name(s->wctx) : "unknown", -1,
					    SQLITE_STATIC);
			break;
		}
	}
	return SQLITE_OK;
}

static int
d_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct dcur *c = (struct dcur *)cur;
	if (c->m->kind == 0)
		return spans_column(c->m, c->i, ctx, col);
	return sched_column(c->m, &c->m->sc.v[c->i], ctx, col);
}

static const sqlite3_module d_module = {
	.iVersion = 0,
	.xConnect = d_connect,
	.xBestIndex = d_best_index,
	.xDisconnect = dtsql_x_disconnect,
	.xOpen = d_open,
	.xClose = d_close,
	.xFilter = d_filter,
	.xNext = d_next,
	.xEof = d_eof,
	.xColumn = d_column,
	.xRowid = d_rowid,
};

int
dtsql_derived_attach(sqlite3 *db, struct dtcap_reader *r, struct dtsym *sym, const char *suffix,
		     char **err)
{
	for (int k = 0; dtsql_derived_names[k]; k++) {
		struct dmod *m = calloc(1, sizeof(*m));
		if (m == NULL) {
			if (err)
				*err = sqlite3_mprintf("out of memory");
			return -1;
		}
		m->r = r;
		m->sym = sym;
		m->kind = k;
		char *name = sqlite3_mprintf("%s%s", dtsql_derived_names[k], suffix);
		/* on failure sqlite calls the destructor itself */
		int rc = name ? sqlite3_create_module_v2(db, name, &d_module, m, dmod_free)
			      : SQLITE_NOMEM;
		if (name == NULL)
			dmod_free(m);
		sqlite3_free(name);
		if (rc != SQLITE_OK) {
			if (err)
				*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			return -1;
		}
	}
	return 0;
}

void
dtsql_derived_detach(sqlite3 *db)
{
	for (int k = 0; dtsql_derived_names[k]; k++)
		sqlite3_create_module_v2(db, dtsql_derived_names[k], NULL, NULL, NULL);
}
