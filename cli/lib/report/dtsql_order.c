/*
 * dtsql_order.c - the events cursor's ORDER BY (dtsql_events.c takes it on
 * in xBestIndex): the matching rows held in memory and radix-sorted by up
 * to four cheap columns (dtev_materialize), or, for ORDER BY ts alone,
 * either way, streamed in time order from the block index so that a
 * LIMIT stops the read (dtev_stream_*).  See doc/SQL.md and doc/SCALE.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dtcap.h"
#include "dtsql_events.h"
#include "dtsql_int.h"

/* The sort key of row i for column col, as an unsigned 64-bit number. */
static uint64_t sort_key(const struct ecur *e, int col, size_t i)
{
	const struct dtsql *c = e->c;
	uint32_t v;
	switch (col) {
	case E_COMM:
		v = e->mat.comm[i];
		return v <= c->ncomms ? c->comm_rank[v] : 0;
	case E_PROBE_NAME:
		v = e->mat.probe[i];
		/* unknown ids have no name: NULL sorts first */
		return v <= c->probe_max && c->probe[v] ? c->probe_rank[v] : 0;
	case E_PID: return e->mat.pid[i];
	case E_TID: return e->mat.tid[i];
	case E_CPU: return e->mat.cpu[i];
	case E_PROBE: return e->mat.probe[i];
	case E_TS: return e->mat.ts[i] ^ (1ULL << 63);	/* signed order */
	}
	return 0;
}

void dtsql_radix_perm(const uint64_t *kv, uint64_t flip, uint64_t vary, uint32_t *perm,
		      uint32_t *tmp, size_t n)
{
	/* bytes every key shares sort nothing: count only the others
	 * (one of eight for a comm or probe name rank) */
	int bs[8], nb = 0;
	for (int b = 0; b < 8; b++)
		if ((vary >> (8 * b)) & 0xff)
			bs[nb++] = b;
	size_t cnt[8][256];
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < nb; j++)
			cnt[j][((kv[i] ^ flip) >> (8 * bs[j])) & 0xff]++;
	uint32_t *src = perm, *dst = tmp;
	for (int j = 0; j < nb; j++) {
		int b = bs[j];
		size_t *cb = cnt[j];
		size_t sum = 0;
		for (int k = 0; k < 256; k++) {
			size_t x = cb[k];
			cb[k] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			dst[cb[((kv[src[i]] ^ flip) >> (8 * b)) & 0xff]++] = src[i];
		uint32_t *x = src; src = dst; dst = x;
	}
	if (src != perm)
		memcpy(perm, src, n * sizeof(*src));
}

/*
 * Read the matching rows into memory and order them by the terms of ord
 * ("c+" / "c-" per term, c = 'a' + column): LSD radix sorts, last term
 * first, each stable and skipping the bytes every key shares.
 */
int dtev_materialize(struct ecur *e, const char *ord)
{
	int rc;
	if (e->cols) {
		/* every row of the blocks that may match: one allocation, not a
		 * doubling series of copies */
		size_t total = 0;
		for (size_t i = 0; i < dtcap_nblocks(e->c->r); i++) {
			const struct dtcap_blockinfo *bi = dtcap_block_info(e->c->r, i);
			if (block_may_match(e, bi))
				total += bi->rows;
		}
		if (dtev_mat_reserve(e, total) < 0)
			return SQLITE_NOMEM;
	}
	while ((rc = dtev_seek(e)) == SQLITE_OK && !e->eof) {
		if (e->cols == 0) {
			e->nmat += e->nrows;	/* rows with no column at all */
		} else if (dtev_mat_append(e) < 0) {
			return SQLITE_NOMEM;
		}
		e->row = e->nrows;	/* whole block done */
		e->si = e->nsel;
	}
	if (rc != SQLITE_OK)
		return rc;
	if (e->nmat > UINT32_MAX) {
		set_err(e->base.pVtab, "%s", "too many rows to order");
		return SQLITE_ERROR;
	}
	size_t n = e->nmat;
	uint64_t *kv = malloc((n ? n : 1) * sizeof(*kv));
	uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	e->perm = malloc((n ? n : 1) * sizeof(*e->perm));
	if (kv == NULL || tmp == NULL || e->perm == NULL) {
		free(kv);
		free(tmp);
		return SQLITE_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		e->perm[i] = (uint32_t)i;
	int nterm = (int)strlen(ord) / 2;
	for (int t = nterm - 1; t >= 0; t--) {
		int col = ord[2 * t] - 'a', desc = ord[2 * t + 1] == '-';
		uint64_t kor = 0, kand = UINT64_MAX;
		for (size_t i = 0; i < n; i++) {
			uint64_t k = sort_key(e, col, i);
			kv[i] = desc ? ~k : k;
			kor |= kv[i];
			kand &= kv[i];
		}
		dtsql_radix_perm(kv, 0, kor ^ kand, e->perm, tmp, n);
	}
	free(kv);
	free(tmp);
	e->cv = e->mat;
	e->npf = 0;
#define PF(a) do {							\
		if (e->mat.a) {						\
			e->pf[e->npf] = (const char *)e->mat.a;		\
			e->pfsz[e->npf++] = sizeof(*e->mat.a);		\
		}							\
	} while (0)
	PF(ts); PF(cpu); PF(pid); PF(tid); PF(probe); PF(comm); PF(kstack);
	PF(ustack); PF(flags); PF(nargs); PF(ctx);
#undef PF
	if (e->mat.args) {	/* rows of DTCAP_MAXARGS values */
		e->pf[e->npf] = (const char *)e->mat.args;
		e->pfsz[e->npf++] = DTCAP_MAXARGS * sizeof(*e->mat.args);
	}
	if (e->mrid) {
		e->pf[e->npf] = (const char *)e->mrid;
		e->pfsz[e->npf++] = sizeof(*e->mrid);
	}
	e->pos = 0;
	e->eof = n == 0;
	e->row = n ? e->perm[0] : 0;
	return SQLITE_OK;
}

/*
 * ORDER BY ts alone, either way ("e+", "e-"), is given as a stream so that
 * a LIMIT stops the read: the blocks are read in file order (descending:
 * last first) and a held row goes out once no unread block can hold one
 * before it.  Rows are compared by their key, ts (descending: ~ts), with
 * the least key an unread block may hold (its tmin; descending: ~tmax),
 * which the block index gives.  Ties go out in rowid order, as sqlite's
 * sorter and ev_materialize give them: ascending, a held row whose key is
 * the bound goes (the unread blocks' rows come after it); descending, it
 * waits (theirs come before it).  sqlite compares ts signed: a capture
 * with a ts past INT64_MAX is sorted whole instead.
 */
static int stream_dir(const char *ord)
{
	if (ord[0] != 'a' + E_TS || (ord[1] != '+' && ord[1] != '-') || ord[2])
		return 0;
	return ord[1] == '+' ? 1 : 2;
}

static inline size_t stream_blk(size_t nb, int desc, size_t k)
{
	return desc ? nb - 1 - k : k;
}

static inline uint64_t stream_key(int desc, uint64_t ts)
{
	return desc ? ~ts : ts;
}

/* A held row of key k may go, the least key unread being bound. */
static inline int stream_goes(int desc, uint64_t k, uint64_t bound)
{
	return desc ? k < bound : k <= bound;
}

struct sp_blk { uint64_t hi; size_t k; };

static int sp_cmp(const void *a, const void *b)
{
	const struct sp_blk *x = a, *y = b;
	return x->hi < y->hi ? -1 : x->hi > y->hi ? 1 : (x->k > y->k) - (x->k < y->k);
}

/*
 * The most rows a stream of the whole capture holds at once, whatever its
 * filters (they only raise the bound and drop rows): before block j is
 * read every held row's key is above the least key of the blocks from j
 * on (stream_fill reads on until one is not), so the rows held then are
 * at most those of the blocks before j whose greatest key is not below
 * it, and block j's own.  A block never comes back once below: that least
 * key only grows.  UINT64_MAX: the capture cannot be streamed (a ts past
 * INT64_MAX), or no memory to tell.  Cached on c: its capture is fixed.
 */
uint64_t dtev_stream_peak(struct dtsql *c, int desc)
{
	if (c->speak_done[desc])
		return c->speak[desc];
	struct dtcap_reader *r = c->r;
	size_t nb = dtcap_nblocks(r);
	uint64_t peak = 0, held = 0;
	uint64_t *suf = malloc((nb + 1) * sizeof(*suf));
	struct sp_blk *by = malloc((nb ? nb : 1) * sizeof(*by));
	uint8_t *gone = calloc(nb ? nb : 1, 1);
	if (!suf || !by || !gone) {
		free(suf); free(by); free(gone);
		return UINT64_MAX;	/* not cached: the next plan may have memory */
	}
	suf[nb] = UINT64_MAX;
	for (size_t k = nb; k-- > 0;) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, stream_blk(nb, desc, k));
		if ((bi->tmin | bi->tmax) >> 63) {
			peak = UINT64_MAX;
			goto out;
		}
		uint64_t lo = desc ? ~bi->tmax : bi->tmin;
		suf[k] = lo < suf[k + 1] ? lo : suf[k + 1];
		by[k] = (struct sp_blk){ desc ? ~bi->tmin : bi->tmax, k };
	}
	qsort(by, nb, sizeof(*by), sp_cmp);
	size_t p = 0;
	for (size_t j = 0; j < nb; j++) {
		/* the blocks none of whose rows is held any more */
		while (p < nb && stream_goes(desc, by[p].hi, suf[j])) {
			size_t k = by[p++].k;
			gone[k] = 1;
			if (k < j)
				held -= dtcap_block_info(r, stream_blk(nb, desc, k))->rows;
		}
		uint64_t rows = dtcap_block_info(r, stream_blk(nb, desc, j))->rows;
		if (held + rows > peak)
			peak = held + rows;
		if (!gone[j])
			held += rows;
	}
out:
	free(suf); free(by); free(gone);
	c->speak[desc] = peak;
	c->speak_done[desc] = 1;
	return peak;
}

/*
 * A stream for ord if it is ts alone and the capture allows: the least
 * key of the unread blocks that may match, by read position (sufmin[k]:
 * of the blocks read from k on).  1: streamed, 0: not, -1: no memory.
 */
int dtev_stream_setup(struct ecur *e, const char *ord)
{
	int dir = stream_dir(ord), desc = dir == 2;
	if (!dir || dtev_stream_peak(e->c, desc) == UINT64_MAX)
		return 0;
	struct dtcap_reader *r = e->c->r;
	size_t nb = dtcap_nblocks(r);
	e->sufmin = malloc((nb + 1) * sizeof(*e->sufmin));
	if (e->sufmin == NULL)
		return -1;
	e->sufmin[nb] = UINT64_MAX;
	for (size_t k = nb; k-- > 0;) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, stream_blk(nb, desc, k));
		uint64_t m = e->sufmin[k + 1], lo = desc ? ~bi->tmax : bi->tmin;
		if (block_may_match(e, bi) && lo < m)
			m = lo;
		e->sufmin[k] = m;
	}
	e->stream = 1;
	e->sdesc = desc;
	return 1;
}

/* Row src of the held rows to place dst (dst < src). */
static void mat_move(struct ecur *e, size_t dst, size_t src)
{
	struct cols *d = &e->mat;
#define MV(f) do { if (d->f) d->f[dst] = d->f[src]; } while (0)
	MV(ts); MV(cpu); MV(pid); MV(tid); MV(probe); MV(comm);
	MV(kstack); MV(ustack); MV(flags); MV(nargs); MV(ctx);
#undef MV
	if (d->args)
		memcpy(d->args + dst * DTCAP_MAXARGS, d->args + src * DTCAP_MAXARGS,
		       DTCAP_MAXARGS * sizeof(uint64_t));
	e->mrid[dst] = e->mrid[src];
}

/* Order perm (n rows) by kv, stably, with tmp its scratch. */
static void radix_all(const uint64_t *kv, uint32_t *perm, uint32_t *tmp, size_t n)
{
	uint64_t kor = 0, kand = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		kor |= kv[i];
		kand &= kv[i];
	}
	dtsql_radix_perm(kv, 0, kor ^ kand, perm, tmp, n);
}

/*
 * The next rows of the stream: drop the ones given, read blocks until a
 * held row may go, and order the held rows by key, then rowid (mat holds
 * them in read order: rowid order ascending, not descending).  The first
 * e->nemit of perm are given.
 */
int dtev_stream_fill(struct ecur *e)
{
	const int desc = e->sdesc;
	const size_t nb = dtcap_nblocks(e->c->r);
	/* e->row was a held row's: the last block read was held whole */
	e->row = e->nrows;
	e->si = e->nsel;
	size_t k = 0;
	for (size_t i = 0; i < e->nmat; i++) {
		if (e->nemit && (e->sall || stream_goes(desc, stream_key(desc, e->mat.ts[i]),
							e->sbound)))
			continue;
		if (k != i)
			mat_move(e, k, i);
		k++;
	}
	e->nmat = k;
	e->nemit = 0;
	uint64_t hmin = UINT64_MAX, bound;
	for (size_t i = 0; i < e->nmat; i++) {
		uint64_t y = stream_key(desc, e->mat.ts[i]);
		if (y < hmin)
			hmin = y;
	}
	for (;;) {
		bound = e->sufmin[e->snext];
		if (e->sdone || (e->nmat && stream_goes(desc, hmin, bound)))
			break;
		int rc = dtev_seek(e);
		if (rc != SQLITE_OK)
			return rc;
		if (e->eof) {
			e->eof = 0;
			e->sdone = 1;
			continue;
		}
		size_t from = e->nmat;
		if (dtev_mat_append(e) < 0)
			return SQLITE_NOMEM;
		e->row = e->nrows;	/* whole block held */
		e->si = e->nsel;
		if (e->nmat > e->sheld)
			e->sheld = e->nmat;
		e->snext = stream_blk(nb, desc, e->cur_blk) + 1;
		for (size_t i = from; i < e->nmat; i++) {
			uint64_t y = stream_key(desc, e->mat.ts[i]);
			if (y < hmin)
				hmin = y;
		}
	}
	size_t n = e->nmat;
	if (n > UINT32_MAX) {
		set_err(e->base.pVtab, "%s", "too many rows to order");
		return SQLITE_ERROR;
	}
	uint64_t *kv = malloc((n ? n : 1) * sizeof(*kv));
	uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	uint32_t *perm = realloc(e->perm, (n ? n : 1) * sizeof(*perm));
	if (perm)
		e->perm = perm;
	if (kv == NULL || tmp == NULL || perm == NULL) {
		free(kv);
		free(tmp);
		return SQLITE_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	if (desc) {	/* rowid order first: the key's sort keeps it */
		for (size_t i = 0; i < n; i++)
			kv[i] = e->mrid[i];
		radix_all(kv, perm, tmp, n);
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		kv[i] = stream_key(desc, e->mat.ts[i]);
		m += e->sdone || stream_goes(desc, kv[i], bound);
	}
	radix_all(kv, perm, tmp, n);
	free(kv);
	free(tmp);
	e->sbound = bound;
	e->sall = e->sdone;
	e->nemit = m;
	e->cv = e->mat;
	e->pos = 0;
	e->eof = m == 0;
	e->row = m ? perm[0] : 0;
	return SQLITE_OK;
}
