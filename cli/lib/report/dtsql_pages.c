/*
 * dtsql_pages.c - the export's events table and its two indexes written
 * as SQLite file-format pages.  See dtsql_int.h.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dtcap.h"
#include "dtsql_int.h"
#include "scan_pool.h"
#include "util.h"

/*
 * The export's events table and its two indexes are written as SQLite
 * file-format pages directly (see sqlite.org/fileformat2.html): building
 * them through INSERT costs about 2 us a row in sqlite's VM and b-tree
 * code, which no tuning of pragmas changes.  Rows are encoded once into
 * leaf pages in capture order (rowid = capture order from 1); the index
 * keys are sorted here and laid out bottom-up.  sqlite then opens the file
 * and adds the small tables through ordinary SQL, and PRAGMA
 * integrity_check in the tests checks the result.
 */
#define PG		65536u		/* page size */

struct pgw {
	FILE		*f;
	uint32_t	npages;		/* pages written, page 1 included */
	uint8_t		*buf;		/* one page */
	int		err;
};

static uint32_t pg_write(struct pgw *w, const uint8_t *page)
{
	/* the page holding byte 2^30 is sqlite's lock-byte page: never used */
	if (w->npages + 1 == (1u << 30) / PG + 1) {
		static const uint8_t zero[PG];
		if (fwrite(zero, PG, 1, w->f) != 1)
			w->err = 1;
		w->npages++;
	}
	if (fwrite(page, PG, 1, w->f) != 1)
		w->err = 1;
	return ++w->npages;
}

static void be16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* sqlite varint (values below 2^56 here: payload sizes, rowids) */
static int put_varint(uint8_t *p, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;
	do {
		tmp[n++] = (uint8_t)(v & 0x7f);
		v >>= 7;
	} while (v);
	for (int i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i] | (i < n - 1 ? 0x80 : 0);
	return n;
}

static int varint_len(uint64_t v)
{
	int n = 1;
	while (v >>= 7)
		n++;
	return n;
}

/* Serial type and size of an integer, smallest encoding. */
static int int_serial(int64_t v, int *len)
{
	if (v == 0) { *len = 0; return 8; }
	if (v == 1) { *len = 0; return 9; }
	uint64_t u = v < 0 ? ~(uint64_t)v : (uint64_t)v;
	if (u <= 0x7f) { *len = 1; return 1; }
	if (u <= 0x7fff) { *len = 2; return 2; }
	if (u <= 0x7fffff) { *len = 3; return 3; }
	if (u <= 0x7fffffff) { *len = 4; return 4; }
	if (u <= 0x7fffffffffffULL) { *len = 6; return 5; }
	*len = 8;
	return 6;
}

static void put_be(uint8_t *p, int64_t v, int len)
{
	for (int i = len - 1; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v = (int64_t)((uint64_t)v >> 8);
	}
}

/* One value of a record: NULL (null), text (t, tlen) or else integer i.
 * rec_encode returns the record's size; out needs 10 * n + the texts. */
struct rv {
	int64_t		i;
	const char	*t;
	int		tlen;
	int		null;
};

static int rec_encode(uint8_t *out, const struct rv *v, int n)
{
	int st[E_NCOLS + 2], ln[E_NCOLS + 2], hdr = 0, body = 0;
	for (int k = 0; k < n; k++) {
		if (v[k].null) { st[k] = 0; ln[k] = 0; }
		else if (v[k].t) { st[k] = 13 + 2 * v[k].tlen; ln[k] = v[k].tlen; }
		else st[k] = int_serial(v[k].i, &ln[k]);
		hdr += varint_len((uint64_t)st[k]);
		body += ln[k];
	}
	/* the header size counts its own varint */
	int hsz = hdr + 1;
	if (varint_len((uint64_t)hsz) > 1)
		hsz = hdr + varint_len((uint64_t)hdr + 2);
	uint8_t *p = out + put_varint(out, (uint64_t)hsz);
	for (int k = 0; k < n; k++)
		p += put_varint(p, (uint64_t)st[k]);
	for (int k = 0; k < n; k++) {
		if (v[k].null || ln[k] == 0)
			continue;
		if (v[k].t)
			memcpy(p, v[k].t, (size_t)ln[k]);
		else
			put_be(p, v[k].i, ln[k]);
		p += ln[k];
	}
	return (int)(p - out);
}

/* A page being filled: cells grow down from the end, pointers up. */
struct pgfill {
	uint8_t		*p;
	int		hdr;		/* 8 leaf, 12 interior */
	int		ncell;
	uint32_t	top;		/* start of cell content */
};

static void pf_init(struct pgfill *f, uint8_t *page, uint8_t type)
{
	memset(page, 0, PG);
	f->p = page;
	f->hdr = (type == 0x0d || type == 0x0a) ? 8 : 12;
	f->ncell = 0;
	f->top = PG;
	page[0] = type;
}

static int pf_fits(const struct pgfill *f, int cellsz)
{
	return (uint32_t)(f->hdr + 2 * (f->ncell + 1) + cellsz) <= f->top;
}

static void pf_add(struct pgfill *f, const uint8_t *cell, int sz)
{
	f->top -= (uint32_t)sz;
	memcpy(f->p + f->top, cell, (size_t)sz);
	be16(f->p + f->hdr + 2 * f->ncell, f->top);
	f->ncell++;
}

static void pf_finish(struct pgfill *f, uint32_t right)
{
	be16(f->p + 3, (uint32_t)f->ncell);
	be16(f->p + 5, f->top == PG ? 0 : f->top);
	if (f->hdr == 12)
		be32(f->p + 8, right);
}

/* Interior levels of a table b-tree over children (page, max rowid).
 * Fixed worst-case capacity (cell 4 + 9 bytes, pointer 2) and children
 * spread evenly, so no interior page ends up with a lone child. */
static uint32_t table_interior(struct pgw *w, uint32_t *pg, int64_t *mx, size_t n)
{
	const size_t per = (PG - 12) / 15 + 1;	/* children per page */
	uint8_t cell[16];
	while (n > 1) {
		size_t pages = (n + per - 1) / per, out = 0, i = 0;
		for (size_t q = 0; q < pages; q++) {
			size_t cnt = n / pages + (q < n % pages);
			struct pgfill f;
			pf_init(&f, w->buf, 0x05);
			for (size_t k = 0; k + 1 < cnt; k++, i++) {
				be32(cell, pg[i]);
				int sz = 4 + put_varint(cell + 4, (uint64_t)mx[i]);
				pf_add(&f, cell, sz);
			}
			pf_finish(&f, pg[i]);
			int64_t m = mx[i];
			i++;
			pg[out] = pg_write(w, w->buf);
			mx[out] = m;
			out++;
		}
		n = out;
	}
	return pg[0];
}

/* max keys of an index b-tree of height h with fixed per-page capacities */
static double idx_max(int h, double cl, double ci)
{
	double m = cl;
	for (int k = 2; k <= h; k++)
		m = ci * (m + 1) + m;
	return m;
}

/* Index keys are (value, rowid); sorted; written as a b-tree of height h. */
struct ixb {
	struct pgw	*w;
	const int64_t	*val;
	const uint32_t	*row;		/* row index (rowid - 1) */
	double		cl, ci;
};

static int ix_cell(uint8_t *cell, const struct ixb *b, size_t k, int interior, uint32_t child)
{
	struct rv v[2] = { { .i = b->val[k] }, { .i = (int64_t)b->row[k] + 1 } };
	uint8_t rec[32];
	int n = rec_encode(rec, v, 2);
	int off = 0;
	if (interior) {
		be32(cell, child);
		off = 4;
	}
	off += put_varint(cell + off, (uint64_t)n);
	memcpy(cell + off, rec, (size_t)n);
	return off + n;
}

static uint32_t ix_build(struct ixb *b, size_t lo, size_t n, int h)
{
	uint8_t cell[48];
	if (h == 1) {
		struct pgfill f;
		pf_init(&f, b->w->buf, 0x0a);
		for (size_t k = lo; k < lo + n; k++) {
			int sz = ix_cell(cell, b, k, 0, 0);
			pf_add(&f, cell, sz);
		}
		pf_finish(&f, 0);
		return pg_write(b->w, b->w->buf);
	}
	double sub = idx_max(h - 1, b->cl, b->ci);
	size_t kids = (size_t)ceil(((double)n + 1) / (sub + 1));
	if (kids < 2)
		kids = 2;
	/* n = sum(child sizes) + (kids - 1) separators, spread evenly */
	size_t keys = n - (kids - 1), base = keys / kids, extra = keys % kids;
	uint32_t *child = malloc(kids * sizeof(*child));
	size_t *sep = malloc(kids * sizeof(*sep));
	if (child == NULL || sep == NULL) {
		free(child);
		free(sep);
		b->w->err = 1;
		return 0;
	}
	size_t at = lo;
	for (size_t c = 0; c < kids; c++) {
		size_t sz = base + (c < extra);
		child[c] = ix_build(b, at, sz, h - 1);
		at += sz;
		if (c + 1 < kids)
			sep[c] = at++;
	}
	struct pgfill f;
	pf_init(&f, b->w->buf, 0x02);
	for (size_t c = 0; c + 1 < kids; c++) {
		int sz = ix_cell(cell, b, sep[c], 1, child[c]);
		pf_add(&f, cell, sz);
	}
	pf_finish(&f, child[kids - 1]);
	free(child);
	free(sep);
	return pg_write(b->w, b->w->buf);
}

static uint32_t ix_write(struct pgw *w, const int64_t *val, const uint32_t *row, size_t n)
{
	/* worst-case cells: 1 + 19 bytes (+2 pointer), interior +4 */
	struct ixb b = { w, val, row, (double)((PG - 8) / 22), (double)((PG - 12) / 26) };
	int h = 1;
	while (idx_max(h, b.cl, b.ci) < (double)n)
		h++;
	return ix_build(&b, 0, n, h);
}

/* Sort row numbers by (key, row): stable LSD radix on the key bytes. */
static int sort_rows(const int64_t *key, uint32_t *row, size_t n)
{
	/* the same bits: an int64_t read as its unsigned type */
	const uint64_t *k = (const uint64_t *)(const void *)key;
	uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	if (tmp == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		row[i] = (uint32_t)i;
	int sorted = 1;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = key[i - 1] <= key[i];
	if (!sorted) {
		uint64_t kor = 0, kand = ~(uint64_t)0;
		for (size_t i = 0; i < n; i++) {
			kor |= k[i];
			kand &= k[i];
		}
		/* sign bit flipped: signed order */
		dtsql_radix_perm(k, 1ULL << 63, kor ^ kand, row, tmp, n);
	}
	free(tmp);
	return 0;
}

static char *events_create_sql(void)
{
	return sqlite3_mprintf("CREATE TABLE events(%s)", dtsql_tab[T_EVENTS].cols);
}

/* Room for need leaves in the parallel arrays of leaf pages and their
 * largest rowids, one capacity for both.  -1 when out of memory. */
static int leaves_grow(uint32_t **lpg, int64_t **lmx, size_t *cap, size_t need)
{
	size_t nc;

	if (dt_grow_cap(*cap, need, sizeof(**lmx), 1024, SIZE_MAX, &nc))
		return -1;
	if (nc == *cap)
		return 0;
	uint32_t *x = realloc(*lpg, nc * sizeof(**lpg));
	if (x == NULL)
		return -1;
	*lpg = x;
	int64_t *y = realloc(*lmx, nc * sizeof(**lmx));
	if (y == NULL)
		return -1;
	*lmx = y;
	*cap = nc;
	return 0;
}

/*
 * Write path as a database holding events, events_ts and events_pid.
 * Returns the row count or -1 with *err set.
 */
long long dtsql_write_events_db(struct dtsql *c, const char *path, const struct flt_filter *flt,
				volatile sig_atomic_t *cancel, const char *what, char **err)
{
	struct dtcap_reader *r = c->r;
	/* the rows of the blocks we will read (a cut capture may hold fewer
	 * than its header promised) */
	size_t nrows = (size_t)c->block_base[dtcap_nblocks(r)];
	struct pgw w = { 0 };
	struct dtsp_ahead *ah = NULL;
	const struct dtcap_block *b;
	size_t i, inblocks = 0, seen = 0;
	char aerr[512];
	int got;
	int64_t *tsv = malloc((nrows ? nrows : 1) * sizeof(*tsv));
	int64_t *pidv = malloc((nrows ? nrows : 1) * sizeof(*pidv));
	uint32_t *perm = malloc((nrows ? nrows : 1) * sizeof(*perm));
	uint32_t *lpg = NULL;
	int64_t *lmx = NULL;
	size_t nl = 0, capl = 0;
	long long ret = -1;
	uint8_t *page = malloc(PG), *cell = malloc(PG);
	w.buf = malloc(PG);
	if (!tsv || !pidv || !perm || !page || !cell || !w.buf) {
		*err = sqlite3_mprintf("out of memory");
		goto out;
	}
	if (nrows > UINT32_MAX) {
		*err = sqlite3_mprintf("too many events for one export");
		goto out;
	}
	w.f = fopen(path, "wb");
	if (w.f == NULL) {
		*err = sqlite3_mprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	/* page 1 (header and schema) is written last */
	memset(page, 0, PG);
	pg_write(&w, page);

	struct pgfill f;
	pf_init(&f, page, 0x0d);
	int64_t rowid = 0;
	struct rv v[E_NCOLS];
	if ((ah = dtsp_ahead_new(r, flt, DTCAP_COL_ALL, cancel, what, aerr, sizeof(aerr))) == NULL) {
		*err = sqlite3_mprintf("%s", aerr);
		goto out;
	}
	while ((got = dtsp_ahead_next(ah, &b, &i, aerr, sizeof(aerr))) != 0) {
		if (got < 0) {
			*err = sqlite3_mprintf("%s", aerr);
			goto out;
		}
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		/* the arrays hold the rows the index promised, no more */
		if (bi == NULL || b->rows > bi->rows) {
			*err = sqlite3_mprintf("block %zu holds more rows than its index entry", i);
			goto out;
		}
		inblocks += bi->rows;
		seen += b->rows;
		for (uint32_t j = 0; j < b->rows; j++) {
			if (!flt_match_row(flt, b, j))
				continue;
			const uint64_t *a = b->args + (size_t)j * DTCAP_MAXARGS;
			memset(v, 0, sizeof(v));
			v[E_TS].i = (int64_t)b->ts[j];
			v[E_CPU].i = b->cpu[j];
			v[E_PID].i = b->pid[j];
			v[E_TID].i = b->tid[j];
			v[E_PROBE].i = b->probe[j];
			const struct dtcap_probe *p = ctx_probe(c, b->probe[j]);
			if (p) {
				v[E_PROBE_NAME].t = ctx_probe_name(c, p);
				v[E_PROBE_NAME].tlen = (int)strlen(v[E_PROBE_NAME].t);
			} else {
				v[E_PROBE_NAME].null = 1;
			}
			int len;
			const char *cm = ctx_comm(c, b->comm[j], &len);
			if (cm) {
				v[E_COMM].t = cm;
				v[E_COMM].tlen = len;
			} else {
				v[E_COMM].null = 1;
			}
			v[E_KSTACK].i = b->kstack[j];
			v[E_USTACK].i = b->ustack[j];
			v[E_FLAGS].i = b->flags[j];
			v[E_NARGS].i = b->nargs[j];
			for (int k = 0; k < DTCAP_MAXARGS; k++)
				v[E_ARG0 + k].i = (int64_t)a[k];
			if (b->flags[j] & DTR_RETURN) {
				v[E_RETVAL].i = (int64_t)a[0];
				v[E_ERRNO].i = (int64_t)a[1];
			} else {
				v[E_RETVAL].null = v[E_ERRNO].null = 1;
			}
			if (dtcap_ctx_name(b->ctx[j])) {
				v[E_CTX].t = dtcap_ctx_name(b->ctx[j]);
				v[E_CTX].tlen = (int)strlen(v[E_CTX].t);
			} else {
				v[E_CTX].null = 1;
			}
			tsv[rowid] = (int64_t)b->ts[j];
			pidv[rowid] = b->pid[j];
			rowid++;
			/* cell: payload size, rowid, record */
			uint8_t rec[1024];
			int rn = rec_encode(rec, v, E_NCOLS);
			int cn = put_varint(cell, (uint64_t)rn);
			cn += put_varint(cell + cn, (uint64_t)rowid);
			memcpy(cell + cn, rec, (size_t)rn);
			cn += rn;
			if (!pf_fits(&f, cn)) {
				pf_finish(&f, 0);
				if (nl == capl && leaves_grow(&lpg, &lmx, &capl, nl + 1) < 0) {
					*err = sqlite3_mprintf("out of memory");
					goto out;
				}
				lpg[nl] = pg_write(&w, page);
				lmx[nl] = rowid - 1;
				nl++;
				pf_init(&f, page, 0x0d);
			}
			pf_add(&f, cell, cn);
		}
	}
	if (seen != inblocks) {
		*err = sqlite3_mprintf("blocks hold fewer rows than their index entries");
		goto out;
	}
	nrows = (size_t)rowid;	/* the rows the filter passed */
	/* last leaf (possibly empty: the root of an empty table) */
	pf_finish(&f, 0);
	if (leaves_grow(&lpg, &lmx, &capl, nl + 1) < 0) {
		*err = sqlite3_mprintf("out of memory");
		goto out;
	}
	lpg[nl] = pg_write(&w, page);
	lmx[nl] = rowid;
	nl++;
	uint32_t troot = table_interior(&w, lpg, lmx, nl);

	if (sort_rows(tsv, perm, nrows) < 0) {
		*err = sqlite3_mprintf("out of memory");
		goto out;
	}
	int64_t *sv = malloc((nrows ? nrows : 1) * sizeof(*sv));
	if (sv == NULL) {
		*err = sqlite3_mprintf("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nrows; i++)
		sv[i] = tsv[perm[i]];
	uint32_t tsroot = ix_write(&w, sv, perm, nrows);
	if (sort_rows(pidv, perm, nrows) < 0) {
		free(sv);
		*err = sqlite3_mprintf("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nrows; i++)
		sv[i] = pidv[perm[i]];
	uint32_t pidroot = ix_write(&w, sv, perm, nrows);
	free(sv);

	/* page 1: file header and the schema table (three rows) */
	memset(page, 0, PG);
	memcpy(page, "SQLite format 3", 16);
	be16(page + 16, 1);		/* page size 65536 */
	page[18] = page[19] = 1;	/* rollback journal file format */
	page[21] = 64; page[22] = 32; page[23] = 32;	/* payload fractions */
	be32(page + 24, 1);		/* change counter */
	be32(page + 28, w.npages);	/* size in pages */
	be32(page + 40, 1);		/* schema cookie */
	be32(page + 44, 4);		/* schema format */
	be32(page + 56, 1);		/* UTF-8 */
	be32(page + 92, 1);		/* version-valid-for = change counter */
	be32(page + 96, (uint32_t)sqlite3_libversion_number());
	page[100] = 0x0d;		/* its b-tree: one table leaf */
	{
		char *tsql = events_create_sql();
		const char *isql[2] = { "CREATE INDEX events_ts ON events(ts)",
					"CREATE INDEX events_pid ON events(pid)" };
		const char *nm[3] = { "events", "events_ts", "events_pid" };
		const char *ty[3] = { "table", "index", "index" };
		uint32_t root[3] = { troot, tsroot, pidroot };
		if (tsql == NULL) {
			*err = sqlite3_mprintf("out of memory");
			goto out;
		}
		/* cells are placed from the page end; offsets are page-relative */
		uint32_t top = PG;
		for (int k = 0; k < 3; k++) {
			const char *sq = k == 0 ? tsql : isql[k - 1];
			struct rv sv5[5] = {
				{ .t = ty[k], .tlen = (int)strlen(ty[k]) },
				{ .t = nm[k], .tlen = (int)strlen(nm[k]) },
				{ .t = "events", .tlen = 6 },
				{ .i = root[k] },
				{ .t = sq, .tlen = (int)strlen(sq) },
			};
			int rn = rec_encode(cell + 16, sv5, 5);
			int cn = put_varint(cell, (uint64_t)rn);
			cn += put_varint(cell + cn, (uint64_t)k + 1);
			memmove(cell + cn, cell + 16, (size_t)rn);
			cn += rn;
			top -= (uint32_t)cn;
			memcpy(page + top, cell, (size_t)cn);
			be16(page + 100 + 8 + 2 * k, top);
		}
		sqlite3_free(tsql);
		be16(page + 100 + 3, 3);
		be16(page + 100 + 5, top);
	}
	if (w.err || fseek(w.f, 0, SEEK_SET) != 0 || fwrite(page, PG, 1, w.f) != 1) {
		*err = sqlite3_mprintf("%s: %s", path, strerror(errno ? errno : EIO));
		goto out;
	}
	if (fclose(w.f) != 0) {
		w.f = NULL;
		*err = sqlite3_mprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	w.f = NULL;
	ret = (long long)nrows;
out:
	dtsp_ahead_free(ah);
	if (w.f)
		fclose(w.f);
	free(tsv);
	free(pidv);
	free(perm);
	free(lpg);
	free(lmx);
	free(page);
	free(cell);
	free(w.buf);
	return ret;
}
