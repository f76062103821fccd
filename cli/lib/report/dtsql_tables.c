/*
 * dtsql_tables.c - the capture's small tables as virtual tables: probes,
 * probe_args, stacks, frames, processes, maps, counters, capture.  See
 * doc/SQL.md.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "dtsql.h"
#include "dtsql_int.h"
#include "dtsym.h"
#include "util.h"

/* ------------------------------------------------------ small tables */

/*
 * The metadata tables are small (probes, stacks, processes...): a cursor
 * is a pair of indexes (outer row, inner row) walked in order, with an
 * optional '=' on the table's key column.
 */
struct scur {
	sqlite3_vtab_cursor base;
	struct dtsql	*c;
	int		kind;
	size_t		i, j;		/* outer, inner */
	int		keyf;
	int64_t		key;
	/* keyed on probes' id or processes' pid: the outer rows with the
	 * key, sel[0..nsel-1], walked by k (sel NULL: every outer row) */
	const uint32_t	*sel;
	size_t		nsel, k;
	int		eof;
	/* counters: the current snapshot */
	const struct dtcap_count *percpu;
	struct dtcap_count rec;
	uint64_t	cts;
	uint32_t	ncpus;
	/* frames */
	const uint64_t	*pcs;
	unsigned	npcs;
	int		kernel;
	char		buf[2048];
};

static int sm_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct tab *t = (struct tab *)v;
	int kc = dtsql_tab[t->kind].keycol;
	struct dtcap_reader *r = t->c->r;
	double n;
	switch (t->kind) {
	case T_PROBES: case T_PROBE_ARGS: n = (double)dtcap_nprobes(r) * 2; break;
	case T_STACKS: n = dtcap_nstacks(r); break;
	case T_FRAMES: n = (double)dtcap_nstacks(r) * 16; break;
	case T_PROCESSES: n = (double)dtcap_nprocs(r); break;
	case T_MAPS: n = (double)dtcap_nprocs(r) * 32; break;
	case T_COUNTERS: n = (double)dtcap_ncounters(r) * (dtcap_host(r)->ncpus + 1); break;
	default: n = 1;
	}
	if (n < 1)
		n = 1;
	/* real sizes, so the planner knows these are small */
	info->estimatedCost = n;
	info->estimatedRows = (sqlite3_int64)n;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *k = &info->aConstraint[i];
		if (k->usable && k->iColumn == kc && kc >= 0 &&
		    k->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			info->aConstraintUsage[i].argvIndex = 1;
			info->idxNum = 1;
			info->estimatedCost = n > 10 ? 10 : n;
			info->estimatedRows = n > 10 ? 10 : (sqlite3_int64)n;
			break;
		}
	}
	return SQLITE_OK;
}

static int sm_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct tab *t = (struct tab *)v;
	struct scur *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return SQLITE_NOMEM;
	s->c = t->c;
	s->kind = t->kind;
	*out = &s->base;
	return SQLITE_OK;
}

static int sm_close(sqlite3_vtab_cursor *cur)
{
	free(cur);
	return SQLITE_OK;
}

/* Is (i, j) a row, and does it have the wanted key?  -1 past the end. */
static int sm_valid(struct scur *s)
{
	struct dtcap_reader *r = s->c->r;
	switch (s->kind) {
	case T_PROBES:
		if (s->i >= dtcap_nprobes(r)) return -1;
		return !s->keyf || dtcap_probe_at(r, s->i)->id == s->key;
	case T_PROBE_ARGS:
		if (s->i >= dtcap_nprobes(r)) return -1;
		if (s->keyf && dtcap_probe_at(r, s->i)->id != s->key) return 0;
		return s->j < dtcap_probe_at(r, s->i)->nargs &&
		       s->j < DTCAP_MAXARGS;
	case T_STACKS:
		if (s->i > dtcap_nstacks(r)) return -1;
		return s->i >= 1 && (!s->keyf || (int64_t)s->i == s->key);
	case T_FRAMES:
		if (s->i > dtcap_nstacks(r)) return -1;
		if (s->i < 1 || (s->keyf && (int64_t)s->i != s->key)) return 0;
		if (s->j == 0) {
			s->pcs = dtcap_stack(r, (uint32_t)s->i, &s->npcs,
					     &s->kernel, &(int){ 0 });
			if (s->pcs == NULL)
				s->npcs = 0;
		}
		return s->j < s->npcs;
	case T_PROCESSES:
		if (s->i >= dtcap_nprocs(r)) return -1;
		return !s->keyf || dtcap_proc_at(r, s->i)->pid == s->key;
	case T_MAPS:
		if (s->i >= dtcap_nprocs(r)) return -1;
		if (s->keyf && dtcap_proc_at(r, s->i)->pid != s->key) return 0;
		return s->j < dtcap_proc_at(r, s->i)->nmaps;
	case T_CAPTURE:
		return s->i >= 1 ? -1 : 1;
	case T_COUNTERS:
		if (s->i >= dtcap_ncounters(r)) return -1;
		if (s->keyf && (int64_t)s->i != s->key) return 0;
		if (s->j == 0)
			s->percpu = dtcap_counters_at(r, s->i, &s->cts, &s->ncpus, &s->rec);
		return s->j <= s->ncpus;	/* the last is the recorder's */
	}
	return -1;
}

static int sm_has_inner(int kind)
{
	return kind == T_PROBE_ARGS || kind == T_FRAMES || kind == T_MAPS ||
	       kind == T_COUNTERS;
}

/* The next outer row (i), inner rows from the first; 0 past the last. */
static int sm_outer_next(struct scur *s)
{
	s->j = 0;
	if (s->sel == NULL) {
		s->i++;
		return 1;
	}
	if (++s->k >= s->nsel)
		return 0;
	s->i = s->sel[s->k];
	return 1;
}

/* Advance to the next valid row starting from the current (i, j). */
static void sm_seek(struct scur *s, int step)
{
	if (step && sm_has_inner(s->kind))
		s->j++;
	else if (step && !sm_outer_next(s))
		goto end;
	for (;;) {
		int v = sm_valid(s);
		if (v < 0)
			goto end;
		if (v > 0)
			return;
		/* inner rows exhausted, or outer row filtered out */
		if (!sm_outer_next(s))
			goto end;
		if (s->keyf && (s->kind == T_STACKS || s->kind == T_FRAMES ||
				s->kind == T_COUNTERS) && (int64_t)s->i > s->key)
			goto end;
	}
end:
	s->eof = 1;
}

static int cmp_probe_id(const void *a, const void *b, void *arg)
{
	const struct dtcap_reader *r = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t kx = dtcap_probe_at(r, x)->id, ky = dtcap_probe_at(r, y)->id;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x < y ? -1 : x > y;	/* file order within an id */
}

/*
 * The outer rows of s's table whose key is s->key: processes and maps from
 * the reader's pid index, probes from one sorted by id (built here on
 * first use).  SQLITE_NOMEM, or SQLITE_OK with s->sel set (nsel may be 0).
 */
static int sm_select(struct scur *s)
{
	struct dtsql *c = s->c;
	s->k = 0;
	s->nsel = 0;
	s->sel = NULL;
	if (s->kind == T_PROCESSES || s->kind == T_MAPS) {
		if (s->key >= 0 && s->key <= UINT32_MAX)
			s->sel = dtcap_proc_snapshots(c->r, (uint32_t)s->key, &s->nsel);
		return SQLITE_OK;
	}
	size_t n = dtcap_nprobes(c->r);
	if (c->probe_by_id == NULL) {
		if ((c->probe_by_id = malloc((n ? n : 1) * sizeof(*c->probe_by_id))) == NULL)
			return SQLITE_NOMEM;
		for (size_t i = 0; i < n; i++)
			c->probe_by_id[i] = (uint32_t)i;
		qsort_r(c->probe_by_id, n, sizeof(*c->probe_by_id), cmp_probe_id, c->r);
	}
	const uint32_t *v = c->probe_by_id;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((int64_t)dtcap_probe_at(c->r, v[mid])->id < s->key)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < n && (int64_t)dtcap_probe_at(c->r, v[end])->id == s->key)
		end++;
	s->sel = v + lo;
	s->nsel = end - lo;
	return SQLITE_OK;
}

static int sm_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	(void)idxStr;
	struct scur *s = (struct scur *)cur;
	s->i = s->j = 0;
	s->eof = 0;
	s->keyf = 0;
	s->sel = NULL;
	if (idxNum == 1 && argc == 1) {
		if (!dtsql_val_int(argv[0], &s->key)) {
			/* NULL or text: ours are all integers; let sqlite decide
			 * from a full walk rather than guess at affinity */
			if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
				s->eof = 1;
				return SQLITE_OK;
			}
		} else {
			s->keyf = 1;
			/* dense ids: start right at the key */
			if ((s->kind == T_STACKS || s->kind == T_FRAMES ||
			     s->kind == T_COUNTERS) && s->key >= 0)
				s->i = (size_t)s->key;
			if (s->key < 0 && (s->kind == T_STACKS || s->kind == T_FRAMES ||
					   s->kind == T_COUNTERS)) {
				s->eof = 1;
				return SQLITE_OK;
			}
			if (s->kind == T_PROBES || s->kind == T_PROBE_ARGS ||
			    s->kind == T_PROCESSES || s->kind == T_MAPS) {
				if (sm_select(s) != SQLITE_OK)
					return SQLITE_NOMEM;
				if (s->nsel == 0) {
					s->eof = 1;
					return SQLITE_OK;
				}
				s->i = s->sel[0];
			}
		}
	}
	sm_seek(s, 0);
	return SQLITE_OK;
}

static int sm_next(sqlite3_vtab_cursor *cur)
{
	sm_seek((struct scur *)cur, 1);
	return SQLITE_OK;
}

static int sm_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct scur *)cur)->eof;
}

static int sm_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct scur *s = (struct scur *)cur;
	*rowid = (sqlite3_int64)(s->i * 1024 + s->j);
	return SQLITE_OK;
}

/* Text from the capture (n < 0: NUL-terminated), as every writer writes it
 * (dtu_utf8_fix): the export and CSV are read by strict UTF-8 readers. */
void dtsql_result_textn(sqlite3_context *ctx, const char *s, int n)
{
	char *buf = NULL;
	size_t cap = 0, len;

	if (s == NULL)
		return;
	const char *v = dtu_utf8_fix(s, n < 0 ? strlen(s) : (size_t)n, &len, &buf, &cap);
	if (v == NULL || len > INT_MAX)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_text(ctx, v, (int)len, SQLITE_TRANSIENT);
	free(buf);
}

void dtsql_result_text(sqlite3_context *ctx, const char *s)
{
	dtsql_result_textn(ctx, s, -1);
}

static void res_count(sqlite3_context *ctx, const struct dtcap_count *k, int col)
{
	const uint64_t v[] = { k->produced, k->read, k->dropped, k->skipped,
			       k->recursive, k->nested };
	sqlite3_result_int64(ctx, (sqlite3_int64)v[col]);
}

static int sm_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct scur *s = (struct scur *)cur;
	struct dtcap_reader *r = s->c->r;
	switch (s->kind) {
	case T_PROBES: {
		const struct dtcap_probe *p = dtcap_probe_at(r, s->i);
		const char *a = strchr(p->name, ':');
		const char *b = a ? strchr(a + 1, ':') : NULL;
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->id); break;
		case 1: dtsql_result_text(ctx, p->name); break;
		case 2: dtsql_result_textn(ctx, p->name, a ? (int)(a - p->name) : -1); break;
		case 3: if (a) dtsql_result_textn(ctx, a + 1, b ? (int)(b - a - 1) : -1); break;
		case 4: if (b) dtsql_result_text(ctx, b + 1); break;
		case 5: sqlite3_result_int64(ctx, p->flags); break;
		case 6: sqlite3_result_int(ctx, (p->flags & DT_PF_RETURN) != 0); break;
		case 7: sqlite3_result_int64(ctx, p->nargs); break;
		case 8: {
			size_t off = 0;
			s->buf[0] = 0;
			for (uint32_t k = 0; k < p->nargs && k < DTCAP_MAXARGS; k++) {
				int n = snprintf(s->buf + off, sizeof(s->buf) - off, "%s%.*s %.*s",
						 k ? ", " : "", DTCAP_ARGNAMELEN, p->args[k].type,
						 DTCAP_ARGNAMELEN, p->args[k].name);
				if (n < 0 || (size_t)n >= sizeof(s->buf) - off)
					break;
				off += (size_t)n;
			}
			dtsql_result_text(ctx, s->buf);
			break;
		}
		}
		break;
	}
	case T_PROBE_ARGS: {
		const struct dtcap_probe *p = dtcap_probe_at(r, s->i);
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->id); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)s->j); break;
		case 2: sqlite3_result_text(ctx, p->args[s->j].name,
				(int)strnlen(p->args[s->j].name, DTCAP_ARGNAMELEN),
				SQLITE_TRANSIENT); break;
		case 3: sqlite3_result_text(ctx, p->args[s->j].type,
				(int)strnlen(p->args[s->j].type, DTCAP_ARGNAMELEN),
				SQLITE_TRANSIENT); break;
		case 4: sqlite3_result_int(ctx, p->args[s->j].slot); break;
		case 5: sqlite3_result_int(ctx, p->args[s->j].nslots); break;
		}
		break;
	}
	case T_STACKS: {
		unsigned n = 0;
		int kernel = 0, trunc = 0;
		dtcap_stack(r, (uint32_t)s->i, &n, &kernel, &trunc);
		switch (col) {
		case 0: sqlite3_result_int64(ctx, (sqlite3_int64)s->i); break;
		case 1: sqlite3_result_int(ctx, kernel != 0); break;
		case 2: sqlite3_result_int64(ctx, n); break;
		case 3: sqlite3_result_int(ctx, trunc != 0); break;
		}
		break;
	}
	case T_FRAMES: {
		uint64_t pc = s->pcs[s->j];
		switch (col) {
		case 0: sqlite3_result_int64(ctx, (sqlite3_int64)s->i); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)s->j); break;
		case 2: sqlite3_result_int64(ctx, (sqlite3_int64)pc); break;
		case 3: sqlite3_result_int(ctx, s->kernel != 0); break;
		case 4:
		case 5:
		case 6:
		case 7:
		case 8:
		case 9:
		case 10: {
			if (s->c->sym == NULL)
				break;
			uint32_t pid = 0;
			uint64_t ts = 0;
			if (!s->kernel) {
				char *err = NULL;
				if (dtsql_ctx_ufirst(s->c, &err) < 0) {
					sqlite3_result_error(ctx, err, -1);
					sqlite3_free(err);
					return SQLITE_ERROR;
				}
				pid = s->c->ufirst_pid[s->i];
				ts = s->c->ufirst_ts[s->i];
			}
			if (col >= 8) {
				const char *file, *inl;
				uint32_t line;
				if (!dtsym_frame_src(s->c->sym, pc, (unsigned)s->j, s->kernel, pid,
						     ts, &file, &line, &inl))
					break;
				if (col == 9)
					sqlite3_result_int64(ctx, line);
				else if (col == 8 || inl)
					dtsql_result_text(ctx, col == 8 ? file : inl);
				break;
			}
			dtsql_result_text(ctx, col == 4
				 ? dtsym_name(s->c->sym, pc, s->kernel, pid, ts)
				 : col == 5 ? dtsym_origin(s->c->sym, pc, s->kernel, pid, ts)
				 : col == 6 ? dtsym_raw_name(s->c->sym, pc, s->kernel, pid, ts)
				 : dtsym_dso(s->c->sym, pc, s->kernel, pid, ts));
			break;
		}
		}
		break;
	}
	case T_PROCESSES: {
		const struct dtcap_proc *p = dtcap_proc_at(r, s->i);
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->pid); break;
		case 1: sqlite3_result_int64(ctx, p->ppid); break;
		case 2: dtsql_result_textn(ctx, p->comm, (int)strnlen(p->comm, DTCAP_COMMLEN)); break;
		case 3: dtsql_result_text(ctx, p->exe ? p->exe : ""); break;
		case 4: sqlite3_result_int64(ctx, (sqlite3_int64)p->ts); break;
		case 5: sqlite3_result_int64(ctx, p->nmaps); break;
		}
		break;
	}
	case T_MAPS: {
		const struct dtcap_proc *p = dtcap_proc_at(r, s->i);
		const struct dtcap_map *m = &p->maps[s->j];
		switch (col) {
		case 0: sqlite3_result_int64(ctx, p->pid); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)p->ts); break;
		case 2: sqlite3_result_int64(ctx, (sqlite3_int64)m->start); break;
		case 3: sqlite3_result_int64(ctx, (sqlite3_int64)m->end); break;
		case 4: sqlite3_result_int64(ctx, (sqlite3_int64)m->offset); break;
		case 5: sqlite3_result_int64(ctx, m->prot); break;
		case 6: if (m->file) sqlite3_result_int64(ctx, m->file); break;
		case 7: dtsql_result_text(ctx, m->name); break;
		case 8: {
			/* hex, as file(1), readelf -n and debuginfod spell it */
			const struct dtcap_file *f = m->file ? dtcap_file_by_id(r, m->file) : NULL;
			char hex[2 * sizeof(f->build_id) + 1];
			if (!f || !f->build_id_len || f->build_id_len > sizeof(f->build_id))
				break;
			for (uint32_t k = 0; k < f->build_id_len; k++)
				snprintf(hex + 2 * k, 3, "%02x", f->build_id[k]);
			sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
			break;
		}
		}
		break;
	}
	case T_CAPTURE: {
		const struct dtcap_host *h = dtcap_host(r);
		switch (col) {
		case 0: dtsql_result_text(ctx, h->kernel); break;
		/* none: NULL, as every engine reads the Parquet export's
		 * partition for it (Hive's default partition) */
		case 1: dtsql_result_text(ctx, h->hostname[0] ? h->hostname : NULL); break;
		case 2: sqlite3_result_int64(ctx, h->ncpus); break;
		case 3: sqlite3_result_int64(ctx, (sqlite3_int64)h->start_ns); break;
		case 4: sqlite3_result_int64(ctx, (sqlite3_int64)h->clock_mono_ns); break;
		case 5: sqlite3_result_int64(ctx, h->clock_real_ns); break;
		case 6: dtsql_result_text(ctx, h->command); break;
		case 7: sqlite3_result_int64(ctx, (sqlite3_int64)dtcap_nevents(r)); break;
		case 8: dtsql_result_text(ctx, dtcap_reader_warning(r)); break;
		case 9: dtsql_result_text(ctx, h->source); break;
		}
		break;
	}
	case T_COUNTERS: {
		int rec = s->j == s->ncpus;
		switch (col) {
		case 0: sqlite3_result_int64(ctx, (sqlite3_int64)s->i); break;
		case 1: sqlite3_result_int64(ctx, (sqlite3_int64)s->cts); break;
		case 2: if (!rec) sqlite3_result_int64(ctx, (sqlite3_int64)s->j); break;
		default:
			if (rec)
				res_count(ctx, &s->rec, col - 3);
			else if (s->percpu)
				res_count(ctx, &s->percpu[s->j], col - 3);
			break;
		}
		break;
	}
	}
	return SQLITE_OK;
}


const sqlite3_module dtsql_tables_module = {
	.iVersion = 0,
	.xConnect = dtsql_x_connect, .xBestIndex = sm_best_index,
	.xDisconnect = dtsql_x_disconnect, .xOpen = sm_open, .xClose = sm_close,
	.xFilter = sm_filter, .xNext = sm_next, .xEof = sm_eof,
	.xColumn = sm_column, .xRowid = sm_rowid,
};
