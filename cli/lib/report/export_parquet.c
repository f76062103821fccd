/*
 * export_parquet.c - `dtreport export --format parquet`: captures into a
 * Hive-partitioned Parquet dataset (layout in export.h, schema in
 * doc/SQL.md).  events holds the rows the filters pass; the other tables
 * are whole.
 *
 * events is written from the capture's decoded column blocks directly
 * (one block in memory at a time, strings as ids into the capture's own
 * probe and comm tables: no per-row hashing), because going through the
 * SQL virtual table would cost a sqlite row step per event.  frames (a
 * row per frame of every stack) is written from the capture's stacks and
 * dtsym the way dtsql's frames table makes its rows (write_frames); the
 * other small tables go through dtsql's virtual tables (SELECT *), so
 * they are the SQL schema by construction.  tests/export compares every
 * column of every table with `dtreport sql`'s SELECT *.
 */
#include <dirent.h>
#include <malloc.h>
#include <stdarg.h>
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "captures.h"
#include "dtsql.h"
#include "dtsym.h"
#include "export.h"
#include "util.h"
#include "report.h"
#include "parquet.h"
#include "scan_pool.h"
#include "util.h"

#define MARKER "_dt_dataset"
/* an export's work directory in the dataset: PREFIX PID "." XXXXXX */
#define TMPDIR_PREFIX ".tmp-export-"

/* The path names an existing file or symlink (1), or not (0). */
static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Paths built under the dataset dir: its length is checked once (< 3000)
 * and the other parts are bounded, so 4096 always fits. */
#define PATHMAX 4096
__attribute__((format(printf, 2, 3)))
static void pf(char *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, PATHMAX, fmt, ap);
	va_end(ap);
}

/* The tables written through SQL, after events. */
static const char *const small_tables[] = {
	"probes", "probe_args", "stacks", "frames", "processes", "maps",
	"counters", "capture",
};
#define NSMALL (sizeof(small_tables) / sizeof(small_tables[0]))
#define NTABLES (NSMALL + 1)

static const char *table_name(size_t i)
{
	return i == 0 ? "events" : small_tables[i - 1];
}

/* the events file's columns: SQL's events table's, in its order */
enum {
#define DTSQL_EVCOL(id, name, type, cols, pqt, pqopt) C_##id,
#include "dtsql_events.def"
#undef DTSQL_EVCOL
	C_NCOLS
};
_Static_assert(C_RETVAL == C_ARG0 + DTCAP_MAXARGS, "one column per argument slot");

static const struct pq_column event_cols[C_NCOLS] = {
#define DTSQL_EVCOL(id, name, type, cols, pqt, pqopt) [C_##id] = { #name, pqt, pqopt },
#include "dtsql_events.def"
#undef DTSQL_EVCOL
};

/* events.ctx as SQL shows it (dtcap_ctx_name): a name, NULL when not
 * recorded; filled once, read by every export after (pq_set_dict keeps it) */
static const char *ctx_names[256];
static pthread_once_t ctx_names_once = PTHREAD_ONCE_INIT;

static void ctx_names_fill(void)
{
	for (unsigned i = 0; i < 256; i++)
		ctx_names[i] = dtcap_ctx_name(i);
}

static const char *const *ctx_dict(void)
{
	pthread_once(&ctx_names_once, ctx_names_fill);
	return ctx_names;
}


/* --parquet-compat, for the export under way (export_parquet sets it) */
static int compat;

static struct pq_opts pq_options(void)
{
	/* "APP version X (build B)": the form Java's parquet library
	 * (VersionParser) parses, to decide which of a writer's known bugs
	 * apply; anything else makes it log a warning per file */
	static char created_by[128];
	const char *v = dtu_version(), *plus = strchr(v, '+');
	/* a commit (semver build metadata, "0.2.0+g1234abc") is the build */
	if (plus)
		snprintf(created_by, sizeof(created_by), "dt version %.*s (build %s)",
			 (int)(plus - v), v, plus + 1);
	else
		snprintf(created_by, sizeof(created_by), "dt version %s", v);
	struct pq_opts o = { .created_by = created_by, .plain_ints = compat };
	/* for tests: small row groups from small captures */
	const char *e = getenv("DTREPORT_PARQUET_ROWS");
	if (e && atol(e) > 0)
		o.rowgroup_rows = (uint32_t)atol(e);
	return o;
}

/* Probe id -> index into the probe-name table (0 = unknown: NULL). */
struct probemap {
	uint32_t	*idx;		/* by id, when ids are small */
	uint32_t	maxid;
	const char	**names;	/* [0] NULL, then each probe's name */
	size_t		n;
};

static int probemap_init(struct probemap *m, const struct dtcap_reader *r)
{
	size_t np = dtcap_nprobes(r);
	m->maxid = dtcap_max_probe_id(r);
	/* ids are the kernel's: small in practice; an absurd one gets no slot */
	if (m->maxid > (1u << 22))
		m->maxid = 1u << 22;
	m->idx = calloc((size_t)m->maxid + 1, sizeof(*m->idx));
	m->names = calloc(np + 1, sizeof(*m->names));
	if (!m->idx || !m->names)
		return -1;
	m->n = 1;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *p = dtcap_probe_at(r, i);
		if (p->id > m->maxid)
			continue;
		m->names[m->n] = p->name;
		m->idx[p->id] = (uint32_t)m->n++;
	}
	return 0;
}

static void probemap_free(struct probemap *m)
{
	free(m->idx);
	free(m->names);
}

/*
 * Per user stack, the pid and time of its earliest event: the address
 * space frames names it in (as dtsql's frames table does).  Filled while
 * write_events reads the blocks, so frames needs no second pass.
 */
struct ufirst {
	uint32_t	*pid;
	uint64_t	*ts;
	uint32_t	n;	/* stack ids 1..n */
};

/*
 * A block's rows the filter passes, laid out as the reader lays out a
 * block (slot j's arguments: the kept rows with nargs > j, in order), so
 * the unfiltered path's column writes take it as they are.  Only built
 * when a filter is given: the whole-capture export writes blocks as read.
 */
struct kept {
	struct dtcap_block b;
	uint64_t	*ts;
	uint32_t	*u[9];		/* cpu pid tid probe comm kstack ustack flags */
	uint8_t		*nargs, *ctx;
	uint64_t	*slot[DTCAP_MAXARGS];
	size_t		cap;
};

static void kept_free(struct kept *k)
{
	free(k->ts);
	for (unsigned j = 0; j < 9; j++)
		free(k->u[j]);
	free(k->nargs);
	free(k->ctx);
	for (unsigned j = 0; j < DTCAP_MAXARGS; j++)
		free(k->slot[j]);
}

/* The rows of b f passes; NULL out of memory. */
static const struct dtcap_block *kept_rows(struct kept *k, const struct dtcap_block *b,
					   const struct flt_filter *f)
{
	size_t n = b->rows;
	if (n > k->cap) {
		kept_free(k);
		memset(k, 0, sizeof(*k));
		int bad = !(k->ts = malloc(n * sizeof(*k->ts))) ||
			  !(k->nargs = malloc(n)) || !(k->ctx = malloc(n));
		for (unsigned j = 0; j < 9; j++)
			bad |= !(k->u[j] = malloc(n * sizeof(*k->u[j])));
		for (unsigned j = 0; j < DTCAP_MAXARGS; j++)
			bad |= !(k->slot[j] = malloc(n * sizeof(*k->slot[j])));
		if (bad)
			return NULL;
		k->cap = n;
	}
	const uint32_t *in[9] = { b->cpu, b->pid, b->tid, b->probe, b->comm, b->kstack,
				  b->ustack, b->flags, NULL };
	uint32_t pos[DTCAP_MAXARGS] = { 0 }, ns[DTCAP_MAXARGS] = { 0 }, m = 0;
	for (uint32_t i = 0; i < b->rows; i++) {
		unsigned na = b->nargs[i] < DTCAP_MAXARGS ? b->nargs[i] : DTCAP_MAXARGS;
		if (flt_match_row(f, b, i)) {
			k->ts[m] = b->ts[i];
			for (unsigned j = 0; j < 8; j++)
				k->u[j][m] = in[j][i];
			k->nargs[m] = b->nargs[i];
			k->ctx[m] = b->ctx ? b->ctx[i] : DTCAP_CTX_UNKNOWN;
			for (unsigned j = 0; j < na; j++)
				k->slot[j][ns[j]++] = b->argslot[j][pos[j]];
			m++;
		}
		for (unsigned j = 0; j < na; j++)
			pos[j]++;
	}
	k->b = (struct dtcap_block){ .rows = m, .ts = k->ts, .cpu = k->u[0], .pid = k->u[1],
				     .tid = k->u[2], .probe = k->u[3], .comm = k->u[4],
				     .kstack = k->u[5], .ustack = k->u[6], .flags = k->u[7],
				     .nargs = k->nargs, .ctx = k->ctx };
	for (unsigned j = 0; j < DTCAP_MAXARGS; j++) {
		k->b.argslot[j] = k->slot[j];
		k->b.nargslot[j] = ns[j];
	}
	return &k->b;
}

static int write_events(const char *path, struct dtcap_reader *r, const struct flt_filter *flt,
			volatile sig_atomic_t *cancel, struct ufirst *uf, uint64_t *rows,
			char **err)
{
	struct pq_opts o = pq_options();
	struct pq_writer *w = pq_create(path, event_cols, C_NCOLS, &o, err);
	if (w == NULL)
		return -1;
	struct probemap pm = { 0 };
	uint32_t ncomm = dtcap_ncomms(r);
	const char **comms = calloc((size_t)ncomm + 1, sizeof(*comms));
	char aerr[512];
	/* blocks decoded ahead on the other cores while this one encodes */
	struct dtsp_ahead *ah = dtsp_ahead_new(r, flt, DTCAP_COL_ALL | DTCAP_COL_ARGSLOTS, cancel,
					       rpt_reading(), aerr, sizeof(aerr));
	int filtered = flt_active(flt);
	struct kept kp = { 0 };
	const struct dtcap_block *b;
	size_t bi;
	int got;
	uint32_t *pidx = NULL, *nargs = NULL, *ctxs = NULL, *argrow = NULL;
	uint64_t *ret2 = NULL;		/* [2][n]: arg0, arg1 by row, for retval/errno */
	uint8_t *isret = NULL;
	size_t cap = 0;
	int rc = -1;
	if (!ah) {
		*err = strdup(aerr);
		goto out;
	}
	if (!comms || probemap_init(&pm, r) < 0) {
		*err = strdup("out of memory");
		goto out;
	}
	for (uint32_t i = 1; i <= ncomm; i++)
		comms[i] = dtcap_comm(r, i);
	if (pq_set_dict(w, C_PROBE_NAME, pm.names, pm.n) < 0 ||
	    pq_set_dict(w, C_COMM, comms, (size_t)ncomm + 1) < 0 ||
	    pq_set_dict(w, C_CTX, ctx_dict(), 256) < 0)
		goto werr;
	while ((got = dtsp_ahead_next(ah, &b, &bi, aerr, sizeof(aerr))) == 1) {
		if (filtered && (b = kept_rows(&kp, b, flt)) == NULL) {
			*err = strdup("out of memory");
			goto out;
		}
		size_t n = b->rows;
		if (n == 0)
			continue;
		if (n > cap) {
			free(pidx), free(nargs), free(isret), free(ctxs), free(argrow), free(ret2);
			pidx = malloc(n * sizeof(*pidx));
			nargs = malloc(n * sizeof(*nargs));
			ctxs = malloc(n * sizeof(*ctxs));
			isret = malloc(n);
			argrow = malloc(n * DTCAP_MAXARGS * sizeof(*argrow));
			ret2 = malloc(2 * n * sizeof(*ret2));
			cap = n;
			if (!pidx || !nargs || !isret || !ctxs || !argrow || !ret2) {
				cap = 0;
				*err = strdup("out of memory");
				goto out;
			}
		}
		/* one job per loop: the simple ones vectorize */
		uint32_t topcomm = 0;
		for (size_t i = 0; i < n; i++)
			topcomm = b->comm[i] > topcomm ? b->comm[i] : topcomm;
		if (topcomm > ncomm) {
			*err = strdup("capture: comm id out of range");
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			uint32_t id = b->probe[i];
			pidx[i] = id <= pm.maxid ? pm.idx[id] : 0;
		}
		for (size_t i = 0; i < n; i++)
			nargs[i] = b->nargs[i];
		for (size_t i = 0; i < n; i++)
			ctxs[i] = b->ctx ? b->ctx[i] : DTCAP_CTX_UNKNOWN;
		for (size_t i = 0; i < n; i++)
			isret[i] = (b->flags[i] & DTR_RETURN) != 0;
		for (size_t i = 0; i < n; i++) {
			uint32_t s = b->ustack[i];
			if (s != 0 && s <= uf->n && b->ts[i] < uf->ts[s]) {
				uf->ts[s] = b->ts[i];
				uf->pid[s] = b->pid[i];
			}
		}
		if (pq_put_int(w, C_TS, b->ts, 8, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_CPU, b->cpu, 4, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_PID, b->pid, 4, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_TID, b->tid, 4, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_PROBE, b->probe, 4, 1, NULL, n) < 0 ||
		    pq_put_ids(w, C_PROBE_NAME, pidx, n) < 0 ||
		    pq_put_ids(w, C_COMM, b->comm, n) < 0 ||
		    pq_put_int(w, C_KSTACK, b->kstack, 4, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_USTACK, b->ustack, 4, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_FLAGS, b->flags, 4, 1, NULL, n) < 0 ||
		    pq_put_int(w, C_NARGS, nargs, 4, 1, NULL, n) < 0)
			goto werr;
		/*
		 * The arguments come per slot (most events have none): each
		 * slot's rows, laid out as the reader lays out its values,
		 * then the slot scattered into a column of zeros.
		 */
		uint32_t *srow[DTCAP_MAXARGS], pos[DTCAP_MAXARGS];
		for (unsigned j = 0, at = 0; j < DTCAP_MAXARGS; at += b->nargslot[j++]) {
			srow[j] = argrow + at;
			pos[j] = 0;
		}
		for (size_t i = 0; i < n; i++)
			for (unsigned j = 0; j < b->nargs[i]; j++)
				srow[j][pos[j]++] = (uint32_t)i;
		for (unsigned j = 0; j < DTCAP_MAXARGS; j++)
			if (pq_put_scatter64(w, C_ARG0 + j, n, srow[j], b->argslot[j],
					     b->nargslot[j]) < 0)
				goto werr;
		memset(ret2, 0, 2 * n * sizeof(*ret2));
		for (unsigned j = 0; j < 2; j++)
			for (size_t k = 0; k < b->nargslot[j]; k++)
				ret2[j * n + srow[j][k]] = b->argslot[j][k];
		if (pq_put_int(w, C_RETVAL, ret2, 8, 1, isret, n) < 0 ||
		    pq_put_int(w, C_ERRNO, ret2 + n, 8, 1, isret, n) < 0 ||
		    pq_put_ids(w, C_CTX, ctxs, n) < 0 ||
		    pq_rows_done(w) < 0)
			goto werr;
	}
	if (got < 0) {
		*err = strdup(aerr);
		goto out;
	}
	*rows = pq_rows(w);
	rc = pq_close(w, err);
	w = NULL;
	goto out;
werr:
	*err = strdup(pq_error(w));
out:
	pq_abort(w);
	probemap_free(&pm);
	free(comms);
	free(pidx), free(nargs), free(isret), free(ctxs), free(argrow), free(ret2);
	kept_free(&kp);
	dtsp_ahead_free(ah);
	if (rc < 0 && *err == NULL)
		*err = strdup("failed");
	return rc;
}

/*
 * frames straight from the capture's stacks and dtsym, the way dtsql's
 * frames table produces them (same columns, types, order and names): it
 * is the one small table with a row per frame (hundreds of thousands),
 * where a sqlite step and a value object per cell cost more than the
 * rest of the small tables together.
 */
#define FBATCH 4096
static int write_frames(const char *path, struct dtcap_reader *r, struct dtsym *sym,
			const struct ufirst *uf, uint64_t *rows, char **err)
{
	static const struct pq_column cols[] = {
		{ "stack_id", PQ_INT64, 1 }, { "depth", PQ_INT64, 1 },
		{ "pc", PQ_INT64, 1 }, { "kernel", PQ_INT64, 1 },
		{ "name", PQ_STRING, 1 }, { "origin", PQ_STRING, 1 },
		{ "raw_name", PQ_STRING, 1 }, { "dso", PQ_STRING, 1 },
		{ "file", PQ_STRING, 1 }, { "line", PQ_INT64, 1 },
		{ "inlined", PQ_STRING, 1 },
	};
	struct pq_opts o = pq_options();
	struct pq_writer *w = pq_create(path, cols, 11, &o, err);
	if (w == NULL)
		return -1;
	uint64_t (*v)[FBATCH] = malloc(4 * sizeof(*v));
	if (v == NULL) {
		pq_abort(w);
		*err = strdup("out of memory");
		return -1;
	}
	size_t k = 0;
	uint32_t ns = dtcap_nstacks(r);
	for (uint32_t id = 1; id <= ns + 1; id++) {
		unsigned npcs = 0;
		int kernel = 0;
		const uint64_t *pcs = NULL;
		if (id <= ns && (pcs = dtcap_stack(r, id, &npcs, &kernel, &(int){ 0 })) == NULL)
			npcs = 0;
		for (unsigned j = 0; j <= npcs; j++) {
			if (k == FBATCH || (id > ns && k > 0)) {
				for (unsigned c = 0; c < 4; c++)
					if (pq_put_int(w, c, v[c], 8, 1, NULL, k) < 0)
						goto werr;
				if (pq_rows_done(w) < 0)
					goto werr;
				k = 0;
			}
			if (j == npcs)
				break;
			uint32_t pid = 0;
			uint64_t ts = 0;
			if (!kernel) {
				pid = id <= uf->n ? uf->pid[id] : 0;
				ts = id <= uf->n ? uf->ts[id] : UINT64_MAX;
			}
			const char *nm = dtsym_name(sym, pcs[j], kernel, pid, ts);
			const char *og = dtsym_origin(sym, pcs[j], kernel, pid, ts);
			const char *raw = dtsym_raw_name(sym, pcs[j], kernel, pid, ts);
			const char *dso = dtsym_dso(sym, pcs[j], kernel, pid, ts);
			if (pq_put_str(w, 4, nm, nm ? strlen(nm) : 0) < 0 ||
			    pq_put_str(w, 5, og, og ? strlen(og) : 0) < 0 ||
			    pq_put_str(w, 6, raw, raw ? strlen(raw) : 0) < 0 ||
			    pq_put_str(w, 7, dso, strlen(dso)) < 0)
				goto werr;
			const char *sf, *inl;
			uint32_t sln;
			int has = dtsym_frame_src(sym, pcs[j], j, kernel, pid, ts, &sf, &sln, &inl);
			if (pq_put_str(w, 8, sf, sf ? strlen(sf) : 0) < 0 ||
			    pq_put_i64(w, 9, sln, !has) < 0 ||
			    pq_put_str(w, 10, inl, inl ? strlen(inl) : 0) < 0)
				goto werr;
			v[0][k] = id;
			v[1][k] = j;
			v[2][k] = pcs[j];
			v[3][k] = kernel != 0;
			k++;
		}
	}
	free(v);
	*rows = pq_rows(w);
	return pq_close(w, err);
werr:
	free(v);
	*err = strdup(pq_error(w));
	pq_abort(w);
	return -1;
}

/* SELECT * FROM table into path: INTEGER columns INT64, the rest strings,
 * all nullable (as in SQL). */
static int write_table(const char *path, sqlite3 *db, const char *table, uint64_t *rows,
		       char **err)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT * FROM %s", table);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		*err = strdup(sqlite3_errmsg(db));
		return -1;
	}
	int nc = sqlite3_column_count(st);
	struct pq_column cols[64];
	if (nc <= 0 || nc > 64) {
		sqlite3_finalize(st);
		*err = strdup("unexpected column count");
		return -1;
	}
	for (int i = 0; i < nc; i++) {
		const char *t = sqlite3_column_decltype(st, i);
		cols[i].name = sqlite3_column_name(st, i);
		cols[i].type = t && !strcasecmp(t, "INTEGER") ? PQ_INT64 : PQ_STRING;
		cols[i].nullable = 1;
	}
	struct pq_opts o = pq_options();
	struct pq_writer *w = pq_create(path, cols, (unsigned)nc, &o, err);
	if (w == NULL) {
		sqlite3_finalize(st);
		return -1;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < nc; i++) {
			int isnull = sqlite3_column_type(st, i) == SQLITE_NULL;
			int r2;
			if (cols[i].type == PQ_INT64)
				r2 = pq_put_i64(w, (unsigned)i, sqlite3_column_int64(st, i), isnull);
			else
				r2 = pq_put_str(w, (unsigned)i,
						isnull ? NULL : (const char *)sqlite3_column_text(st, i),
						(size_t)sqlite3_column_bytes(st, i));
			if (r2 < 0)
				goto werr;
		}
		if (pq_rows_done(w) < 0)
			goto werr;
	}
	if (rc != SQLITE_DONE) {
		*err = strdup(sqlite3_errmsg(db));
		pq_abort(w);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	*rows = pq_rows(w);
	return pq_close(w, err);
werr:
	*err = strdup(pq_error(w));
	pq_abort(w);
	sqlite3_finalize(st);
	return -1;
}

/*
 * Hive partition value, escaped as Hive and Spark escape one
 * (FileUtils.escapePathName): control characters, DEL and the 14 of
 * the string below as %XX, everything else as it is, non-ASCII included:
 * their unescaping turns each %XX into one character, so an escaped
 * UTF-8 byte pair would read back as two wrong characters.  Text that is
 * not UTF-8 is first made so (dtu_utf8_fix).  A leading '.' or '_' is
 * escaped too, or readers would skip the directory as hidden.  An empty
 * value is Hive's default partition, which every engine reads as NULL
 * (and so does capture.hostname, doc/SQL.md).  NULL when it does not fit.
 */
static char *hive_escape(char *out, size_t outsz, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *fix = NULL;
	size_t o = 0, cap = 0, n;
	if (*s == 0)
		s = "__HIVE_DEFAULT_PARTITION__";
	else if ((s = dtu_utf8_fix(s, strlen(s), &n, &fix, &cap)) == NULL)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (o + 4 > outsz) {
			free(fix);
			return NULL;
		}
		if (c < 0x20 || c == 0x7f || strchr("\"#%'*/:=?\\{[]^", c) ||
		    (o == 0 && (c == '.' || c == '_') && strcmp(s, "__HIVE_DEFAULT_PARTITION__"))) {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = 0;
	free(fix);
	return out;
}

/* The capture's name in the dataset: its file name without ".dtc". */
static char *capture_name(char *out, size_t outsz, const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	char tmp[256];
	pf(tmp, "%s", b);
	size_t l = strlen(tmp);
	if (l > 4 && !strcmp(tmp + l - 4, ".dtc"))
		tmp[l - 4] = 0;
	return hive_escape(out, outsz, tmp);
}

/* Remove what we made under tmp: TABLE/part-0.parquet, TABLE, tmp. */
static void rm_tmp(const char *tmp)
{
	char p[PATHMAX];
	for (size_t i = 0; i < NTABLES; i++) {
		pf(p, "%s/%s/part-0.parquet", tmp, table_name(i));
		unlink(p);
		pf(p, "%s/%s", tmp, table_name(i));
		rmdir(p);
	}
	rmdir(tmp);
}

static int mkdir_ok(const char *p)
{
	return mkdir(p, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

/* dir usable as a dataset: created, empty, or one of ours. */
static int prepare_dir(const char *dir)
{
	struct stat st;
	char p[PATHMAX];
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0777) < 0) {
			rpt_err("export", "%s: %s", dir, strerror(errno));
			return -1;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		rpt_err("export", "%s: exists and is not a directory "
			"(parquet writes a dataset directory)", dir);
		return -1;
	}
	pf(p, "%s/" MARKER, dir);
	if (exists(p))
		return 0;
	DIR *d = opendir(dir);
	if (d == NULL) {
		rpt_err("export", "%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty) {
		rpt_err("export", "%s: directory is not empty and not a dt dataset "
			"(no %s); refusing to write into it", dir, MARKER);
		return -1;
	}
	FILE *f = fopen(p, "wx");
	if (f == NULL || fprintf(f, "dt parquet dataset 1\n") < 0 || fclose(f) != 0) {
		rpt_err("export", "%s: %s", p, strerror(errno));
		return -1;
	}
	return 0;
}

/* Returns 0, or an exit status (message printed). */
int rpt_export_parquet(const struct rpt_cap *c, struct flt_filter *flt,
		       const struct rpt_export_opts *o, volatile sig_atomic_t *cancel,
		       uint64_t *nev, uint64_t *bytes)
{
	const char *dir = o->out, *cap = c->path;
	struct dtcap_reader *r = c->r;
	char ferr[512];
	if (flt_resolve(flt, r, ferr, sizeof(ferr)) < 0) {
		rpt_err("export", "%s: %s", cap, ferr);
		return RPT_EXIT_ERROR;
	}
	compat = o->parquet_compat;
	/* escaped, a name is at most three times as long */
	char host[3 * sizeof(dtcap_host(r)->hostname) + 1], name[3 * 256 + 1], tmp[PATHMAX], p[PATHMAX], q[PATHMAX];
	if (!hive_escape(host, sizeof(host), dtcap_host(r)->hostname) ||
	    !capture_name(name, sizeof(name), cap)) {
		rpt_err("export", "%s: out of memory", cap);
		return RPT_EXIT_ERROR;
	}
	int ret = -1, made_tmp = 0;
	size_t moved = 0;
	int moving = 0;
	struct dtsym *sym = NULL;
	sqlite3 *db = NULL;
	char *err = NULL;
	struct ufirst uf = { .n = dtcap_nstacks(r) };

	for (size_t i = 0; i < NTABLES; i++) {
		pf(p, "%s/%s/host=%s/capture=%s", dir, table_name(i), host, name);
		if (exists(p)) {
			rpt_err("export", "%s: capture '%s' of host '%s' is already "
				"in the dataset (%s)", cap, name, host, p);
			goto out;
		}
	}
	uf.pid = calloc((size_t)uf.n + 1, sizeof(*uf.pid));
	uf.ts = malloc(((size_t)uf.n + 1) * sizeof(*uf.ts));
	if (uf.pid == NULL || uf.ts == NULL) {
		rpt_err("export", "%s: out of memory", cap);
		goto out;
	}
	for (uint32_t i = 0; i <= uf.n; i++)
		uf.ts[i] = UINT64_MAX;
	if ((sym = c->sym ? c->sym : dtsym_open(r)) == NULL ||
	    sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    dtsql_attach(db, r, sym, &err) == NULL) {
		rpt_err("export", "%s: %s", cap, err ? err : "out of memory");
		sqlite3_free(err);
		err = NULL;
		goto out;
	}
	/* named after this process, so one a killed export left is known as
	 * such and removed by the next (dtu_out_sweep_dirs) */
	pf(tmp, "%s/" TMPDIR_PREFIX "%ld.XXXXXX", dir, (long)getpid());
	sigset_t old;
	dtu_block_fatal(&old);
	if (mkdtemp(tmp) != NULL) {
		made_tmp = 1;
		dtu_out_pending_dir(tmp);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!made_tmp) {
		rpt_err("export", "%s: %s", tmp, strerror(errno));
		goto out;
	}
	*bytes = 0;
	for (size_t i = 0; i < NTABLES; i++) {
		if (cancel && *cancel) {
			rpt_err("export", "interrupted");
			goto out;
		}
		pf(p, "%s/%s", tmp, table_name(i));
		if (mkdir(p, 0777) < 0) {
			rpt_err("export", "%s: %s", p, strerror(errno));
			goto out;
		}
		pf(p, "%s/%s/part-0.parquet", tmp, table_name(i));
		uint64_t rows = 0;
		int rc = i == 0 ? write_events(p, r, flt, cancel, &uf, &rows, &err)
			: !strcmp(table_name(i), "frames") ? write_frames(p, r, sym, &uf, &rows, &err)
			: write_table(p, db, small_tables[i - 1], &rows, &err);
		if (rc < 0) {
			rpt_err("export", "%s: %s: %s", cap, table_name(i),
				err ? err : "failed");
			goto out;
		}
		struct stat st;
		if (stat(p, &st) == 0)
			*bytes += (uint64_t)st.st_size;
		if (i == 0) {
			*nev = rows;
			rpt_note_empty("export", cap, rows, flt_active(flt));
		}
	}
	if (cancel && *cancel) {
		rpt_err("export", "interrupted");
		goto out;
	}
	/* into place, table by table; undone if one fails.  A fatal signal
	 * waits for the last rename or the undo (a few system calls): the
	 * dataset then holds all of this capture's tables or none */
	dtu_block_fatal(&old);
	moving = 1;
	for (moved = 0; moved < NTABLES; moved++) {
		pf(p, "%s/%s", dir, table_name(moved));
		pf(q, "%s/%s/host=%s", dir, table_name(moved), host);
		if (mkdir_ok(p) < 0 || mkdir_ok(q) < 0) {
			rpt_err("export", "%s: %s", q, strerror(errno));
			goto out;
		}
		pf(p, "%s/%s", tmp, table_name(moved));
		pf(q, "%s/%s/host=%s/capture=%s", dir, table_name(moved), host, name);
		/* rename() replaces an empty directory: make sure there is none */
		if (exists(q)) {
			rpt_err("export", "%s: already exists", q);
			goto out;
		}
		if (rename(p, q) < 0) {
			rpt_err("export", "%s: %s", q, strerror(errno));
			goto out;
		}
	}
	ret = 0;
out:
	if (ret < 0) {
		while (moved-- > 0) {
			pf(p, "%s/%s", tmp, table_name(moved));
			pf(q, "%s/%s/host=%s/capture=%s", dir, table_name(moved),
				 host, name);
			rename(q, p);
		}
	}
	if (moving)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (made_tmp) {
		rm_tmp(tmp);
		dtu_out_pending_dir(NULL);
	}
	free(err);
	free(uf.pid);
	free(uf.ts);
	if (db)
		sqlite3_close_v2(db);
	if (sym && sym != c->sym)
		dtsym_close(sym);
	return ret < 0 ? RPT_EXIT_ERROR : 0;
}

int rpt_parquet_prepare(const char *dir)
{
	/*
	 * Every table of every capture gets a writer whose buffers (a row
	 * group's columns, pages, zstd's context) are megabytes: by default
	 * glibc maps and unmaps each, and the kernel zeroes fresh pages for
	 * the next writer (a third of the CPU time of a 100-capture export).
	 * Keep freed memory in the heap for reuse; the peak is unchanged.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_TOP_PAD, 16 << 20);
	if (prepare_dir(dir) < 0)
		return -1;
	dtu_out_sweep_dirs(dir, TMPDIR_PREFIX);
	return 0;
}
