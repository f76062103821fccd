/*
 * dtsql_views.c - one view per probe, named as the probe, whose columns are
 * the probe's fields by name (dtcap_args.h decides names and decoding), and
 * the functions that decode them: dt_text(), dt_bytes(), dt_int() and
 * errno_name().  See doc/SQL.md, "Arguments by name".
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dtcap_args.h"
#include "dt_abi.h"
#include "dt_grow.h"
#include "dtsql_int.h"
#include "util.h"

/* The slots' bytes (each slot little-endian, as FORMAT.md stores them)
 * into buf; returns the count, or -1 when a slot is NULL. */
static int slot_bytes(int argc, sqlite3_value **argv, unsigned char *buf)
{
	int n = 0;

	for (int i = 0; i < argc && i < DTCAP_MAXARGS; i++) {
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return -1;
		uint64_t v = (uint64_t)sqlite3_value_int64(argv[i]);
		for (int b = 0; b < 8; b++)
			buf[n++] = (unsigned char)(v >> (8 * b));
	}
	return n;
}

/* dt_text(slot, ...): a char[N] field; bytes that are not UTF-8 (a comm
 * cut mid-character) become U+FFFD so the text is valid for every reader. */
static void fn_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	unsigned char raw[8 * DTCAP_MAXARGS], out[3 * 8 * DTCAP_MAXARGS];
	int n = slot_bytes(argc, argv, raw), o = 0;

	if (n < 0)
		return;
	for (int i = 0; i < n && raw[i]; i++) {
		size_t end = memchr(raw + i, 0, (size_t)(n - i)) ?
			     (size_t)((unsigned char *)memchr(raw + i, 0, (size_t)(n - i)) - raw) :
			     (size_t)n;
		int len = raw[i] < 0x80 ? 1 : dtu_utf8_len(raw + i, end - (size_t)i);
		if (len == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			continue;
		}
		memcpy(out + o, raw + i, (size_t)len);
		o += len;
		i += len - 1;
	}
	sqlite3_result_text(ctx, (const char *)out, o, SQLITE_TRANSIENT);
}

/* dt_bytes(slot, ...): a u8[N] field as a blob. */
static void fn_bytes(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	unsigned char raw[8 * DTCAP_MAXARGS];
	int n = slot_bytes(argc, argv, raw);

	if (n >= 0)
		sqlite3_result_blob(ctx, raw, n, SQLITE_TRANSIENT);
}

/* dt_int(slot, bytes, signed): the low bytes of the slot as the C type
 * they are (a syscall's int arrives as the whole register). */
static void fn_int(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	uint64_t v = (uint64_t)sqlite3_value_int64(argv[0]);
	int bytes = sqlite3_value_int(argv[1]);
	if (bytes >= 1 && bytes < 8) {
		unsigned bits = 8u * (unsigned)bytes;
		v &= (1ULL << bits) - 1;
		if (sqlite3_value_int(argv[2]) && (v >> (bits - 1)) & 1)
			v |= ~0ULL << bits;
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)v);
}

/* errno_name(n): "ENOENT" for 2 or -2 (a retval), NULL for 0, NULL and
 * numbers without a name. */
static void fn_errno_name(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	sqlite3_int64 v = sqlite3_value_int64(argv[0]);
	if (v < 0 && v > -4096)
		v = -v;
	if (v <= 0 || v >= 4096)
		return;
	const char *s = strerrorname_np((int)v);
	if (s)
		sqlite3_result_text(ctx, s, -1, SQLITE_STATIC);
}

int dtsql_view_functions(sqlite3 *db)
{
	static const struct {
		const char *name;
		int nargs;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {
		{ "dt_text", -1, fn_text }, { "dt_bytes", -1, fn_bytes },
		{ "dt_int", 3, fn_int }, { "errno_name", 1, fn_errno_name },
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs,
					       SQLITE_UTF8 | SQLITE_DETERMINISTIC |
					       SQLITE_INNOCUOUS, NULL, fns[i].fn,
					       NULL, NULL, NULL) != SQLITE_OK)
			return -1;
	return dtsql_agg_functions(db);
}

/* One probe name's view: the columns over every member (capture, probe). */
struct pview {
	const char *name;
	struct member { size_t cap; const struct dtcap_probe *p; } *m;
	size_t nm, cm;
	const char *cols[DTCAP_MAXARGS * 4 + 8];	/* field columns, by name */
	unsigned ncols;
};

static void add_cols(struct pview *v, const struct dtcap_probe *p)
{
	struct dtcap_argcol c[DTCAP_MAXARGS];
	int en;
	unsigned n = dtcap_arg_columns(p, c, &en);

	for (unsigned i = 0; i < n; i++) {
		for (int pass = 0; pass < 2; pass++) {
			const char *want = pass == 0 ? c[i].name :
					   i == (unsigned)en ? "errno_name" : NULL;
			unsigned k = 0;
			if (want == NULL)
				continue;
			while (k < v->ncols && v->cols[k] && strcmp(v->cols[k], want))
				k++;
			if (k == v->ncols && k < sizeof(v->cols) / sizeof(v->cols[0]))
				v->cols[v->ncols++] = sqlite3_mprintf("%s", want);
		}
	}
}

/* The SELECT of one member: the event columns, then every column of the
 * view (NULL for the fields this member's probe lacks). */
static void member_select(sqlite3_str *q, const struct pview *v, const struct member *m,
			  const char *table, const char *const *capture, const char *const *host)
{
	struct dtcap_argcol c[DTCAP_MAXARGS];
	int en;
	unsigned n = dtcap_arg_columns(m->p, c, &en);
	char buf[64];

	sqlite3_str_appendf(q, "SELECT ");
	for (int k = 0; dtcap_arg_event_cols[k]; k++)
		sqlite3_str_appendf(q, "%s\"%w\" AS \"%w\"", k ? ", " : "", dtcap_arg_event_cols[k],
				    dtcap_arg_event_col(m->p, dtcap_arg_event_cols[k], buf, sizeof(buf)));
	for (unsigned k = 0; k < v->ncols; k++) {
		unsigned i = 0;
		int errname = !strcmp(v->cols[k], "errno_name");
		if (errname) {
			if (en >= 0)
				sqlite3_str_appendf(q, ", errno_name(arg%u)", c[en].slot);
			else
				sqlite3_str_appendf(q, ", NULL");
			sqlite3_str_appendf(q, " AS errno_name");
			continue;
		}
		while (i < n && strcmp(c[i].name, v->cols[k]))
			i++;
		if (i == n) {
			sqlite3_str_appendf(q, ", NULL AS \"%w\"", v->cols[k]);
			continue;
		}
		const struct dtcap_argcol *f = &c[i];
		switch (f->kind) {
		case DTCAP_ARG_INT:
			sqlite3_str_appendf(q, ", dt_int(arg%u, %u, %d)", f->slot, f->bytes,
					    f->is_signed);
			break;
		case DTCAP_ARG_TEXT:
		case DTCAP_ARG_BYTES:
			sqlite3_str_appendf(q, ", %s(", f->kind == DTCAP_ARG_TEXT ? "dt_text" : "dt_bytes");
			for (unsigned s = 0; s < f->nslots; s++)
				sqlite3_str_appendf(q, "%sarg%u", s ? ", " : "", f->slot + s);
			sqlite3_str_appendf(q, ")");
			break;
		default:
			sqlite3_str_appendf(q, ", arg%u", f->slot);
		}
		sqlite3_str_appendf(q, " AS \"%w\"", f->name);
	}
	if (capture)
		sqlite3_str_appendf(q, ", %Q AS capture, %Q AS host FROM main.%s__c%d",
				    capture[m->cap], host[m->cap], table, (int)m->cap);
	else
		sqlite3_str_appendf(q, " FROM main.%s", table);
	sqlite3_str_appendf(q, " WHERE probe = %u", m->p->id);
}

int dtsql_probe_views(sqlite3 *db, struct dtcap_reader *const *r, size_t n,
		      const char *const *capture, const char *const *host, char **err)
{
	struct pview *v = NULL;
	size_t nv = 0, cv = 0;
	int ret = -1;

	for (size_t ci = 0; ci < n; ci++) {
		for (size_t i = 0; i < dtcap_nprobes(r[ci]); i++) {
			const struct dtcap_probe *p = dtcap_probe_at(r[ci], i);
			size_t k = 0;
			/* provider:function:name; a name without ':' could shadow a
			 * table (a damaged capture's probe named "events") */
			if (strchr(p->name, ':') == NULL)
				continue;
			/* SQL names ignore case: one view per name as SQL sees it */
			while (k < nv && strcasecmp(v[k].name, p->name))
				k++;
			if (k == nv) {
				if (DT_GROW(v, cv, nv, 1, 16))
					goto oom;
				memset(&v[nv], 0, sizeof(v[nv]));
				v[nv++].name = p->name;
			}
			struct pview *pv = &v[k];
			/* a name twice (or in two cases): the view has both probes' rows */
			if (DT_GROW(pv->m, pv->cm, pv->nm, 1, 4))
				goto oom;
			pv->m[pv->nm++] = (struct member){ ci, p };
			add_cols(pv, p);
		}
	}
	/*
	 * One transaction: a schema change per statement would reparse the
	 * temp schema each time (hundreds of syscall probes took 0.15 s).
	 * Should it fail, the views are made one by one, and one that cannot
	 * be made is left out: the tables stay usable, a query of that view
	 * says there is no such table.
	 */
	for (int pass = 0; pass < 2; pass++) {
		sqlite3_str *q = sqlite3_str_new(db);
		int rc = SQLITE_OK;
		char *sql, *e = NULL;
		if (pass == 0)
			sqlite3_str_appendf(q, "BEGIN;");
		for (size_t k = 0; k < nv && rc != SQLITE_NOMEM; k++) {
			for (unsigned c = 0; c < v[k].ncols; c++)
				if (v[k].cols[c] == NULL) {
					sqlite3_free(sqlite3_str_finish(q));
					goto oom;
				}
			sqlite3_str_appendf(q, "CREATE TEMP VIEW \"%w\" AS ", v[k].name);
			for (size_t m = 0; m < v[k].nm; m++) {
				if (m)
					sqlite3_str_appendf(q, " UNION ALL ");
				member_select(q, &v[k], &v[k].m[m], "events", capture, host);
			}
			sqlite3_str_appendf(q, ";");
			if (pass == 1) {
				sql = sqlite3_str_finish(q);
				rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
				sqlite3_free(sql);
				q = sqlite3_str_new(db);
			}
		}
		if (pass == 0)
			sqlite3_str_appendf(q, "COMMIT;");
		sql = sqlite3_str_finish(q);
		if (pass == 1) {
			sqlite3_free(sql);
			if (rc == SQLITE_NOMEM)
				goto oom;
			break;
		}
		rc = sql ? sqlite3_exec(db, sql, NULL, NULL, &e) : SQLITE_NOMEM;
		sqlite3_free(sql);
		sqlite3_free(e);
		if (rc == SQLITE_OK)
			break;
		if (rc == SQLITE_NOMEM)
			goto oom;
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	ret = 0;
	goto out;
oom:
	if (err)
		*err = sqlite3_mprintf("out of memory");
out:
	for (size_t k = 0; k < nv; k++) {
		for (unsigned c = 0; c < v[k].ncols; c++)
			sqlite3_free((void *)v[k].cols[c]);
		free(v[k].m);
	}
	free(v);
	return ret;
}
