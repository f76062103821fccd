/*
 * dtcap_write.c - the capture writer.
 *
 * Events accumulate in column arrays of one block; a full block becomes a
 * job for the "sink", which encodes and compresses every column and writes
 * the chunk with a single write(2).  With opts.threaded the sink is a
 * second thread fed through a bounded set of block buffers, so the caller
 * only waits when the sink falls a whole queue behind.  Metadata (interned
 * comms and stacks, processes) is batched and handed to the sink ahead of
 * the first block that may reference it, so file order always has
 * definitions before uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "dtcap.h"
#include "dtcap_int.h"

#define NBLOCKBUFS	3	/* in flight in threaded mode: queue bound */

/*
 * Who owns what (annotations on members).  Two threads touch a writer: the
 * caller's (dtcap_put_*, dtcap_flush, dtcap_close: one at a time, the API
 * is not thread-safe per object) and the sink's (the worker thread with
 * opts.threaded, else the caller running jobs inline; after dtcap_close
 * joins the worker, the caller runs it inline again).
 *	[I]	immutable once dtcap_create returns
 *	[C]	the caller's thread only
 *	[S]	the sink only
 *	[m]	mu (threaded); without a worker the caller is the sink and
 *		takes no lock
 *	[a]	atomic: written by the sink, read by any thread without mu
 * A colbuf or job belongs to whoever holds the pointer: the caller fills
 * w->cur [C], submit() hands the block to the sink with its job, and the
 * sink returns it to free_list [m].  A job's payload is the sink's from
 * submit() on.
 */
struct colbuf {
	struct colbuf	*next_free;	/* [m] on free_list */
	uint32_t	rows;
	uint64_t	*ts;
	uint32_t	*cpu;
	/* pid tid probe comm kstack ustack flags ctx: a row's context in one
	 * 32-byte unit, hashed and compared whole */
	uint32_t	(*tup)[8];
	uint8_t		*nargs;
	uint64_t	*args;		/* packed: row i's args follow row i-1's */
	size_t		nargs_total;
};

enum { JOB_META, JOB_BLOCK };

struct job {
	struct job	*next;		/* [m] the queue */
	int		kind;
	uint32_t	type;
	int		compress;
	struct dtc_buf	payload;	/* JOB_META */
	struct colbuf	*blk;		/* JOB_BLOCK */
};

struct chunkref {
	uint32_t	type;
	uint64_t	offset;
};

/* [S] all of it: state used only by whoever runs the sink. */
struct sink {
	ZSTD_CCtx	*cctx;
	struct dtc_buf	raw, pay, xh, chunk;
	struct dtc_buf	sum;		/* a block's BSUM payload */
	struct dtc_bsum_scratch bsum;	/* and its builder's tables */
	uint64_t	*tmp64;
	uint32_t	tmp_cap;
	uint64_t	*argtmp;	/* args grouped by slot */
	uint32_t	*idx;		/* row -> context */
	uint32_t	(*ctx)[8];	/* context -> fields (one cache line) */
	uint32_t	*dict[DTC_NDICT + 1];	/* context -> field, by column;
					 * [DTC_NDICT]: execution context */
	uint32_t	*ht;		/* context hash table, ids + 1 */
	uint32_t	ht_mask, ht_max;
	struct chunkref	*refs;		/* every chunk written, for the footer */
	size_t		nrefs, refcap;
};

struct stackent {
	uint64_t	off;		/* into frames */
	uint32_t	n;
	uint32_t	kind;		/* bit 0 kernel, bit 1 truncated */
	uint64_t	hash;
};

struct fileent {
	char		*path;
	uint8_t		build_id[20];
	uint32_t	build_id_len;
};

struct dtcap_writer {
	/* [I] the file: written by the sink; by the caller only for the
	 * header (before the worker starts) and the trailer (after it ends) */
	int		fd;
	char		*path;		/* [I] for messages */
	char		err[512];	/* [C] what dtcap_writer_error returns */
	int		level;		/* [I] zstd level */
	uint32_t	block_events;	/* [I] rows per block */
	int		threaded;	/* [I] until dtcap_close stops the worker */
	int		synthetic;	/* [I] no machine data or clock samples */
	int		failed;		/* [C] sticky: the file is unusable */

	struct colbuf	*cur;		/* [C] the block being filled */
	struct colbuf	*free_list;	/* [m] blocks the sink gave back */
	uint64_t	events;		/* [C] rows accepted */

	/* [C] interning: the sink sees comms and stacks only as the COMM and
	 * STCK payloads flush_defs copies them into */
	struct stackent	*stacks;	/* index id-1 */
	uint32_t	nstacks, stacks_cap;
	uint64_t	*frames;
	uint64_t	nframes, frames_cap;
	struct dt_htab	stack_ht;	/* frames, kind -> id - 1 */
	char		(*comms)[DTCAP_COMMLEN];
	uint32_t	ncomms, comms_cap;
	struct dt_htab	comm_ht;	/* text -> id - 1 */
	struct fileent	*files;
	uint32_t	nfiles, files_cap;

	/* [C] definitions not yet handed to the sink */
	uint32_t	stacks_done, comms_done;
	struct dtc_buf	pend_proc;
	uint32_t	pend_nproc;

	struct sink	sink;		/* [S] */
	_Atomic uint64_t bytes;		/* [a] file size so far (status lines) */
	_Atomic uint64_t sym_bytes;	/* [a] of it, symbol table chunks */
	_Atomic uint64_t srcl_bytes;	/* [a] of it, source line chunks */
	pthread_t	thread;		/* [C] the worker, if thread_started */
	int		thread_started;	/* [C] */
	pthread_mutex_t	mu;		/* [I] */
	pthread_cond_t	cv;		/* [I] any change of the [m] state */
	struct job	*qhead, *qtail;	/* [m] submitted, not yet taken */
	uint64_t	submitted, done;	/* [m] jobs: in flight = difference */
	int		stop;		/* [m] the caller's request to end */
	char		sink_err[512];	/* [m] written once, before sink_failed */
	_Atomic int	sink_failed;	/* [a] set under mu; then sink_err is final */
};

static _Thread_local char create_err[512];

static void werr(struct dtcap_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void werr(struct dtcap_writer *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dtc_vfmt(w->err, sizeof(w->err), w->path, fmt, ap);
	va_end(ap);
}

const char *dtcap_writer_error(const struct dtcap_writer *w)
{
	return w ? w->err : create_err;
}

const char *dtcap_create_error(void)
{
	return create_err;
}

/* ------------------------------------------------------------ the sink */

static int full_write(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Only the sink writes, so sink_err needs no lock in unthreaded mode and
 * is published under mu in threaded mode (see sink_fail). */
static void sink_fail(struct dtcap_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sink_fail(struct dtcap_writer *w, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (w->threaded)
		pthread_mutex_lock(&w->mu);
	if (!w->sink_failed) {
		dtc_fmt(w->sink_err, sizeof(w->sink_err), w->path, "%s", msg);
		w->sink_failed = 1;
	}
	if (w->threaded)
		pthread_mutex_unlock(&w->mu);
}

/* Assemble header + xhdr + payload and write it with one write(2). */
static int emit_chunk(struct dtcap_writer *w, uint32_t type, uint32_t flags,
		      const uint8_t *xh, size_t xlen, const uint8_t *pay,
		      size_t clen, size_t ulen)
{
	struct sink *s = &w->sink;
	if (w->sink_failed)
		return -1;
	if (clen > UINT32_MAX || ulen > DTC_MAX_ULEN) {
		sink_fail(w, "chunk too large (%zu bytes)", ulen);
		return -1;
	}
	s->chunk.len = 0;
	if (dtc_buf_reserve(&s->chunk, DTC_CHDR_LEN + xlen + clen)) {
		s->chunk.err = 0;
		sink_fail(w, "out of memory");
		return -1;
	}
	uint8_t *h = s->chunk.p;
	if (xlen)
		memcpy(h + DTC_CHDR_LEN, xh, xlen);
	if (clen)
		memcpy(h + DTC_CHDR_LEN + xlen, pay, clen);
	dtc_le32(h, type);
	dtc_le32(h + 4, flags);
	dtc_le32(h + 8, (uint32_t)xlen);
	dtc_le32(h + 12, (uint32_t)clen);
	dtc_le32(h + 16, (uint32_t)ulen);
	/* XSUM: the payload's segments carry their own sums (in the extra
	 * header), so readers hash only what they decode */
	dtc_le64(h + 20, XXH3_64bits(h + DTC_CHDR_LEN,
				     flags & DTC_CF_XSUM ? xlen : xlen + clen));
	dtc_le32(h + 28, dtc_hdr_sum(h));
	size_t total = DTC_CHDR_LEN + xlen + clen;
	uint64_t off = atomic_load(&w->bytes);
	if (full_write(w->fd, h, total)) {
		sink_fail(w, "write at offset %llu: %s", (unsigned long long)off,
			  strerror(errno));
		return -1;
	}
	if (DT_GROW(s->refs, s->refcap, s->nrefs, 1, 256)) {
		sink_fail(w, "out of memory");
		return -1;
	}
	s->refs[s->nrefs++] = (struct chunkref){type, off};
	atomic_store(&w->bytes, off + total);
	if (type == DTC_FILE || type == DTC_KSYM || type == DTC_KSYC)
		atomic_fetch_add(&w->sym_bytes, total);
	else if (type == DTC_SRCL)
		atomic_fetch_add(&w->srcl_bytes, total);
	return 0;
}

static int emit_meta(struct dtcap_writer *w, uint32_t type, int compress,
		     const struct dtc_buf *pay)
{
	struct sink *s = &w->sink;
	if (!compress)
		return emit_chunk(w, type, 0, NULL, 0, pay->p, pay->len, pay->len);
	size_t bound = ZSTD_compressBound(pay->len);
	s->raw.len = 0;
	if (dtc_buf_reserve(&s->raw, bound)) {
		s->raw.err = 0;
		sink_fail(w, "out of memory");
		return -1;
	}
	size_t c = ZSTD_compressCCtx(s->cctx, s->raw.p, bound, pay->p, pay->len, w->level);
	if (ZSTD_isError(c)) {
		sink_fail(w, "zstd: %s", ZSTD_getErrorName(c));
		return -1;
	}
	return emit_chunk(w, type, DTC_CF_ZSTD, NULL, 0, s->raw.p, c, pay->len);
}

/*
 * The zstd level of column col.  The two columns every reader decodes on
 * every row, ts deltas and context numbers, are mostly noise in their low
 * byte planes: at the default level 1, Huffman-coding their literals saves
 * 5-15 % of their bytes (about 5 % of a capture) but makes them three times
 * slower to inflate, which was half of the time to read a block.  Level -1
 * stores literals as they are.  Asked-for levels are kept: they chose size.
 */
static int column_level(const struct dtcap_writer *w, unsigned col)
{
	if (w->level == 1 && (col == DTC_C_TS || col == DTC_C_CTX))
		return -1;
	return w->level;
}

/* Compress s->raw into the payload as one column segment. */
static int put_segment(struct dtcap_writer *w, unsigned col)
{
	struct sink *s = &w->sink;
	size_t rawlen = s->raw.len;
	uint8_t method = DTC_M_RAW;
	size_t stored = rawlen;
	if (rawlen >= 64) {
		size_t bound = ZSTD_compressBound(rawlen);
		if (dtc_buf_reserve(&s->pay, bound))
			goto oom;
		size_t c = ZSTD_compressCCtx(s->cctx, s->pay.p + s->pay.len, bound,
					     s->raw.p, rawlen, column_level(w, col));
		if (ZSTD_isError(c)) {
			sink_fail(w, "zstd: %s", ZSTD_getErrorName(c));
			return -1;
		}
		/* A segment that compresses by less than a fifth is kept raw:
		 * the bytes saved are not worth inflating it on every read. */
		if (c <= rawlen - rawlen / 5) {
			method = DTC_M_ZSTD;
			stored = c;
			s->pay.len += c;
		}
	}
	if (method == DTC_M_RAW)
		dtc_buf_put(&s->pay, s->raw.p, rawlen);
	if (s->pay.err)
		goto oom;
	dtc_buf_u8(&s->xh, (uint8_t)col);
	dtc_buf_u8(&s->xh, method);
	dtc_buf_u32(&s->xh, (uint32_t)rawlen);
	dtc_buf_u32(&s->xh, (uint32_t)stored);
	dtc_buf_u64(&s->xh, XXH3_64bits(s->pay.p + s->pay.len - stored, stored));
	if (s->pay.err || s->xh.err)
		goto oom;
	return 0;
oom:
	s->pay.err = s->xh.err = 0;
	sink_fail(w, "out of memory");
	return -1;
}

static int sink_scratch(struct sink *s, uint32_t n)
{
	if (s->tmp_cap >= n)
		return 0;
	free(s->tmp64);
	free(s->argtmp);
	free(s->idx);
	free(s->ctx);
	free(s->ht);
	for (int k = 0; k <= DTC_NDICT; k++)
		free(s->dict[k]);
	uint32_t hsize = 1024;
	while (hsize < 2 * n)
		hsize *= 2;
	s->tmp64 = malloc((size_t)n * sizeof(uint64_t));
	s->argtmp = malloc((size_t)n * DTCAP_MAXARGS * sizeof(uint64_t));
	s->idx = malloc((size_t)n * sizeof(uint32_t));
	s->ctx = malloc((size_t)n * sizeof(*s->ctx));
	s->ht = malloc((size_t)hsize * sizeof(uint32_t));
	int ok = s->tmp64 && s->argtmp && s->idx && s->ctx && s->ht;
	for (int k = 0; k <= DTC_NDICT; k++)
		ok = (s->dict[k] = malloc((size_t)n * sizeof(uint32_t))) && ok;
	s->tmp_cap = ok ? n : 0;
	s->ht_max = hsize;
	return ok ? 0 : -1;
}

static inline uint32_t ctx_hash(const uint32_t *c)
{
	uint64_t h = (uint64_t)c[0] * 0x9e3779b97f4a7c15ULL;
	h ^= c[1] + ((uint64_t)c[4] << 32);
	h *= 0xff51afd7ed558ccdULL;
	h ^= c[5] + ((uint64_t)c[3] << 32);
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= c[2] + ((uint64_t)c[6] << 32);
	h *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(h >> 32);
}

/* Give every row its context index; returns the number of contexts.  The
 * table starts small and doubles, so a block with few contexts stays in
 * cache (the per-row probe is the hot spot of the writer).  Not dt_htab:
 * its slots are s->ht, sized once by sink_scratch for the largest block
 * and reused below as the counting sort's arrays, so a block allocates
 * nothing, and it is emptied per block by a memset of what it used. */
static uint32_t build_contexts(struct sink *s, const struct colbuf *b)
{
	uint32_t n = b->rows, nd = 0, mask = (s->ht_max < 4096 ? s->ht_max : 4096) - 1;
	memset(s->ht, 0, (mask + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t *c = b->tup[i];
		uint32_t j = ctx_hash(c) & mask;
		for (;;) {
			uint32_t d = s->ht[j];
			if (!d) {
				memcpy(s->ctx[nd], c, sizeof(s->ctx[nd]));
				s->ht[j] = ++nd;
				s->idx[i] = nd - 1;
				break;
			}
			if (!memcmp(s->ctx[d - 1], c, sizeof(s->ctx[0]))) {
				s->idx[i] = d - 1;
				break;
			}
			j = (j + 1) & mask;
		}
		if (2 * nd > mask && 2 * (mask + 1) <= s->ht_max) {
			mask = 2 * mask + 1;
			memset(s->ht, 0, (mask + 1) * sizeof(uint32_t));
			for (uint32_t d = 0; d < nd; d++) {
				uint32_t k = ctx_hash(s->ctx[d]) & mask;
				while (s->ht[k])
					k = (k + 1) & mask;
				s->ht[k] = d + 1;
			}
		}
	}
	/* Renumber contexts by falling frequency: the common ones get small
	 * indices, so the index column's high byte plane is mostly zeros.
	 * Counting sort on frequency, ties by first appearance (stable). */
	uint32_t *cnt = s->ht, *rank = s->ht + nd, *order = s->ht + 2 * (size_t)nd;
	if (nd >= 2 && 3 * (size_t)nd <= s->ht_max) {
		memset(cnt, 0, nd * sizeof(uint32_t));
		for (uint32_t i = 0; i < n; i++)
			cnt[s->idx[i]]++;
		uint32_t maxc = 0;
		for (uint32_t d = 0; d < nd; d++)
			maxc = cnt[d] > maxc ? cnt[d] : maxc;
		/* rank[d]: position of d; bucket starts in tmp64 (n + 1 >= maxc + 1) */
		uint64_t *start = s->tmp64;
		memset(start, 0, ((size_t)maxc + 1) * sizeof(uint64_t));
		for (uint32_t d = 0; d < nd; d++)
			start[maxc - cnt[d]]++;
		uint64_t acc = 0;
		for (uint32_t c = 0; c <= maxc; c++) {
			uint64_t k = start[c];
			start[c] = acc;
			acc += k;
		}
		for (uint32_t d = 0; d < nd; d++) {
			uint32_t r = (uint32_t)start[maxc - cnt[d]]++;
			rank[d] = r;
			order[r] = d;
		}
		for (uint32_t i = 0; i < n; i++)
			s->idx[i] = rank[s->idx[i]];
		for (uint32_t r = 0; r < nd; r++)
			for (int k = 0; k <= DTC_NDICT; k++)
				s->dict[k][r] = s->ctx[order[r]][k];
		return nd;
	}
	for (uint32_t d = 0; d < nd; d++)
		for (int k = 0; k <= DTC_NDICT; k++)
			s->dict[k][d] = s->ctx[d][k];
	return nd;
}

static int emit_block(struct dtcap_writer *w, const struct colbuf *b)
{
	struct sink *s = &w->sink;
	uint32_t n = b->rows;
	if (n == 0)
		return 0;
	if (sink_scratch(s, n)) {
		sink_fail(w, "out of memory");
		return -1;
	}
	uint64_t tmin = UINT64_MAX, tmax = 0;
	uint32_t pmin = UINT32_MAX, pmax = 0, maxargs = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t = b->ts[i];
		tmin = t < tmin ? t : tmin;
		tmax = t > tmax ? t : tmax;
		uint32_t pid = b->tup[i][0];
		pmin = pid < pmin ? pid : pmin;
		pmax = pid > pmax ? pid : pmax;
		maxargs = b->nargs[i] > maxargs ? b->nargs[i] : maxargs;
	}
	uint32_t nd = build_contexts(s, b);
	/* ids 0 .. ARG0 + maxargs - 1, then the execution context */
	unsigned ncols = DTC_C_ARG0 + maxargs + 1;
	s->xh.len = s->pay.len = 0;
	dtc_buf_u32(&s->xh, n);
	dtc_buf_u64(&s->xh, tmin);
	dtc_buf_u64(&s->xh, tmax);
	dtc_buf_u32(&s->xh, pmin);
	dtc_buf_u32(&s->xh, pmax);
	dtc_buf_u32(&s->xh, nd);
	dtc_buf_u8(&s->xh, (uint8_t)ncols);

	/* argument slot j holds only the rows with nargs > j, so sparse
	 * arguments cost nothing; one pass spreads the packed args by slot */
	size_t slot_off[DTCAP_MAXARGS + 1] = {0}, fill[DTCAP_MAXARGS];
	if (maxargs) {
		uint32_t hist[DTCAP_MAXARGS + 1] = {0};
		for (uint32_t i = 0; i < n; i++)
			hist[b->nargs[i]]++;
		uint32_t ge = n;	/* rows with nargs > j */
		for (unsigned j = 0; j < DTCAP_MAXARGS; j++) {
			ge -= hist[j];
			slot_off[j + 1] = slot_off[j] + ge;
		}
		memcpy(fill, slot_off, sizeof(fill));
		const uint64_t *a = b->args;
		for (uint32_t i = 0; i < n; i++)
			for (unsigned k = 0; k < b->nargs[i]; k++)
				s->argtmp[fill[k]++] = *a++;
	}

	/* ts: zigzag deltas, so CPUs interleaving slightly out of order
	 * still cost a few bytes rather than a full timestamp */
	uint64_t prev = tmin;
	for (uint32_t i = 0; i < n; i++) {
		s->tmp64[i] = dtc_zz((int64_t)(b->ts[i] - prev));
		prev = b->ts[i];
	}
	for (unsigned ci = 0; ci < ncols; ci++) {
		unsigned c = ci + 1 == ncols ? DTC_C_XCTX : ci;
		s->raw.len = 0;
		if (c == DTC_C_XCTX) {
			dtc_enc_u32(&s->raw, s->dict[DTC_NDICT], nd);
		} else if (c == DTC_C_TS) {
			dtc_enc_u64(&s->raw, s->tmp64, n);
		} else if (c == DTC_C_CPU) {
			dtc_enc_u32(&s->raw, b->cpu, n);
		} else if (c == DTC_C_CTX) {
			dtc_enc_u32(&s->raw, s->idx, n);
		} else if (c < DTC_C_NARGS) {
			dtc_enc_u32(&s->raw, s->dict[c - DTC_C_PID], nd);
		} else if (c == DTC_C_NARGS) {
			dtc_buf_put(&s->raw, b->nargs, n);
		} else {
			unsigned j = c - DTC_C_ARG0;
			dtc_enc_u64(&s->raw, s->argtmp + slot_off[j],
				    (uint32_t)(slot_off[j + 1] - slot_off[j]));
		}
		if (s->raw.err) {
			s->raw.err = 0;
			sink_fail(w, "out of memory");
			return -1;
		}
		if (put_segment(w, c))
			return -1;
	}
	uint64_t off = atomic_load(&w->bytes);
	if (emit_chunk(w, DTC_EVNT, DTC_CF_XSUM, s->xh.p, s->xh.len, s->pay.p,
		       s->pay.len, s->pay.len))
		return -1;
	/* Its summary right after it: whole-capture counts without decoding */
	if (dtc_bsum_build(&s->sum, off, n, b->cpu, s->idx, nd, s->dict[DTC_C_PID - DTC_C_PID],
			   s->dict[DTC_C_PROBE - DTC_C_PID], s->dict[DTC_C_COMM - DTC_C_PID],
			   &s->bsum)) {
		s->sum.err = 0;
		sink_fail(w, "out of memory");
		return -1;
	}
	return emit_meta(w, DTC_BSUM, 1, &s->sum);
}

static void free_colbuf(struct colbuf *b)
{
	if (!b)
		return;
	free(b->ts); free(b->cpu); free(b->tup);
	free(b->nargs); free(b->args);
	free(b);
}

static struct colbuf *new_colbuf(uint32_t cap)
{
	struct colbuf *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->ts = malloc(cap * sizeof(uint64_t));
	b->cpu = malloc(cap * sizeof(uint32_t));
	b->tup = malloc(cap * sizeof(*b->tup));
	b->nargs = malloc(cap);
	b->args = malloc((size_t)cap * DTCAP_MAXARGS * sizeof(uint64_t));
	if (!b->ts || !b->cpu || !b->tup || !b->nargs || !b->args) {
		free_colbuf(b);
		return NULL;
	}
	return b;
}

static void run_job(struct dtcap_writer *w, struct job *j)
{
	if (j->kind == JOB_META)
		emit_meta(w, j->type, j->compress, &j->payload);
	else
		emit_block(w, j->blk);
}

static void *sink_main(void *arg)
{
	struct dtcap_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->qhead && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->qhead)
			break;
		struct job *j = w->qhead;
		w->qhead = j->next;
		if (!w->qhead)
			w->qtail = NULL;
		pthread_mutex_unlock(&w->mu);
		run_job(w, j);
		pthread_mutex_lock(&w->mu);
		if (j->kind == JOB_BLOCK) {
			j->blk->rows = 0;
			j->blk->nargs_total = 0;
			j->blk->next_free = w->free_list;
			w->free_list = j->blk;
		}
		dtc_buf_free(&j->payload);
		free(j);
		w->done++;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Hand a job to the sink; it owns j afterwards. */
static int submit(struct dtcap_writer *w, struct job *j)
{
	if (!w->threaded) {
		run_job(w, j);
		if (j->kind == JOB_BLOCK) {
			j->blk->rows = 0;
			j->blk->nargs_total = 0;
			j->blk->next_free = w->free_list;
			w->free_list = j->blk;
		}
		dtc_buf_free(&j->payload);
		free(j);
	} else {
		pthread_mutex_lock(&w->mu);
		j->next = NULL;
		if (w->qtail)
			w->qtail->next = j;
		else
			w->qhead = j;
		w->qtail = j;
		w->submitted++;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	return 0;
}

/* Wait for the sink to finish everything submitted; report its error. */
static int drain(struct dtcap_writer *w)
{
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		while (w->done != w->submitted)
			pthread_cond_wait(&w->cv, &w->mu);
		pthread_mutex_unlock(&w->mu);
	}
	if (w->sink_failed) {
		memcpy(w->err, w->sink_err, sizeof(w->err));
		w->failed = 1;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- writer */

static struct job *new_job(int kind, uint32_t type)
{
	struct job *j = calloc(1, sizeof(*j));
	if (j) {
		j->kind = kind;
		j->type = type;
		j->compress = 1;
	}
	return j;
}

/* Queue a metadata chunk; takes the contents of *pay (left empty). */
static int submit_meta(struct dtcap_writer *w, uint32_t type, int compress,
		       struct dtc_buf *pay)
{
	if (pay->err) {
		dtc_buf_free(pay);
		werr(w, "out of memory");
		return -1;
	}
	struct job *j = new_job(JOB_META, type);
	if (!j) {
		dtc_buf_free(pay);
		werr(w, "out of memory");
		return -1;
	}
	j->compress = compress;
	j->payload = *pay;
	memset(pay, 0, sizeof(*pay));
	return submit(w, j);
}

static int check(struct dtcap_writer *w)
{
	if (w->failed)
		return -1;
	if (atomic_load(&w->sink_failed)) {
		pthread_mutex_lock(&w->mu);
		memcpy(w->err, w->sink_err, sizeof(w->err));
		pthread_mutex_unlock(&w->mu);
		w->failed = 1;
		return -1;
	}
	return 0;
}

/* New comms, stacks and processes go out before any block using them. */
static int flush_defs(struct dtcap_writer *w)
{
	if (w->comms_done < w->ncomms) {
		struct dtc_buf b = {0};
		dtc_buf_uv(&b, w->comms_done + 1);
		dtc_buf_uv(&b, w->ncomms - w->comms_done);
		for (uint32_t i = w->comms_done; i < w->ncomms; i++)
			dtc_buf_str(&b, w->comms[i]);
		if (submit_meta(w, DTC_COMM, 1, &b))
			return -1;
		w->comms_done = w->ncomms;
	}
	if (w->stacks_done < w->nstacks) {
		struct dtc_buf b = {0};
		dtc_buf_uv(&b, w->stacks_done + 1);
		dtc_buf_uv(&b, w->nstacks - w->stacks_done);
		uint64_t prev = 0;
		for (uint32_t i = w->stacks_done; i < w->nstacks; i++) {
			const struct stackent *s = &w->stacks[i];
			const uint64_t *f = w->frames + s->off;
			dtc_buf_uv(&b, (uint64_t)s->n << 2 | s->kind);
			/* deltas between neighbouring frames are small and
			 * each stack's first frame tends to be near the last */
			for (uint32_t k = 0; k < s->n; k++) {
				dtc_buf_uv(&b, dtc_zz((int64_t)(f[k] - prev)));
				prev = f[k];
			}
			if (s->n)
				prev = f[0];
		}
		if (submit_meta(w, DTC_STCK, 1, &b))
			return -1;
		w->stacks_done = w->nstacks;
	}
	if (w->pend_nproc) {
		struct dtc_buf b = {0};
		dtc_buf_uv(&b, w->pend_nproc);
		dtc_buf_put(&b, w->pend_proc.p, w->pend_proc.len);
		if (w->pend_proc.err)
			b.err = 1;
		dtc_buf_free(&w->pend_proc);
		w->pend_nproc = 0;
		if (submit_meta(w, DTC_PROC, 1, &b))
			return -1;
	}
	return 0;
}

static struct colbuf *get_colbuf(struct dtcap_writer *w)
{
	static const int max = NBLOCKBUFS;
	struct colbuf *b;
	if (w->threaded)
		pthread_mutex_lock(&w->mu);
	for (;;) {
		if ((b = w->free_list)) {
			w->free_list = b->next_free;
			break;
		}
		/* count buffers in flight: they are all in the queue */
		int inflight = (int)(w->submitted - w->done);
		if (!w->threaded || inflight < max) {
			b = new_colbuf(w->block_events);
			break;
		}
		pthread_cond_wait(&w->cv, &w->mu);
	}
	if (w->threaded)
		pthread_mutex_unlock(&w->mu);
	if (b) {
		b->rows = 0;
		b->nargs_total = 0;
	}
	return b;
}

static int flush_block(struct dtcap_writer *w)
{
	if (flush_defs(w))
		return -1;
	if (!w->cur || w->cur->rows == 0)
		return 0;
	struct job *j = new_job(JOB_BLOCK, DTC_EVNT);
	if (!j) {
		werr(w, "out of memory");
		return -1;
	}
	j->blk = w->cur;
	w->cur = NULL;
	submit(w, j);
	if (check(w))
		return -1;
	w->cur = get_colbuf(w);
	if (!w->cur) {
		werr(w, "out of memory");
		w->failed = 1;
		return -1;
	}
	return 0;
}

struct dtcap_writer *dtcap_create(const char *path, const struct dtcap_host *host,
				  const struct dtcap_writer_opts *opts)
{
	struct dtcap_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		dtc_fmt(create_err, sizeof(create_err), path, "out of memory");
		free(w);
		return NULL;
	}
	/* level 1, as perf record -z: a third faster than 3 for 2 % more bytes */
	w->level = opts && opts->level ? opts->level : 1;
	w->block_events = opts && opts->block_events ? opts->block_events : 65536;
	if (w->block_events > DTC_MAX_ROWS)
		w->block_events = DTC_MAX_ROWS;
	w->threaded = opts ? opts->threaded : 0;
	w->synthetic = opts ? opts->synthetic : 0;
	w->fd = -1;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->sink.cctx = ZSTD_createCCtx();
	w->cur = new_colbuf(w->block_events);
	if (!w->sink.cctx || !w->cur) {
		dtc_fmt(create_err, sizeof(create_err), path, "out of memory");
		goto fail;
	}
	/* 0600, as perf: kallsyms with real addresses, every process's maps
	 * and syscall arguments are not for other users */
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		dtc_fmt(create_err, sizeof(create_err), path, "%s", strerror(errno));
		goto fail;
	}
	uint8_t fh[DTC_FILEHDR_LEN];
	memset(fh, 0, sizeof(fh));
	memcpy(fh, DTC_MAGIC, DTC_MAGIC_LEN);
	dtc_le32(fh + 8, DTC_VERSION);
	dtc_le32(fh + 12, DTC_FILEHDR_LEN);
	dtc_le32(fh + 16, w->synthetic ? DTC_FC_CTXCOL | DTC_FC_USTACK | DTC_FC_BSUM : DTC_FC_KNOWN);
	dtc_le32(fh + 20, 0);
	dtc_le32(fh + 28, (uint32_t)XXH3_64bits(fh, 28));
	if (full_write(w->fd, fh, sizeof(fh))) {
		dtc_fmt(create_err, sizeof(create_err), path, "%s", strerror(errno));
		goto fail;
	}
	atomic_store(&w->bytes, DTC_FILEHDR_LEN);

	struct dtcap_host hm = {0};
	if (host)
		hm = *host;
	snprintf(hm.tool_version, sizeof(hm.tool_version), "%s", dtcap_version());
	if (!w->synthetic)
		dtc_host_machine(&hm);
	host = &hm;
	struct dtc_buf b = {0};
	/* the fixed-size fields may lack their NUL: never read past them */
	dtc_buf_strn(&b, host->kernel, sizeof(host->kernel) - 1);
	dtc_buf_strn(&b, host->hostname, sizeof(host->hostname) - 1);
	dtc_buf_u32(&b, host->ncpus);
	dtc_buf_u64(&b, host->clock_mono_ns);
	dtc_buf_u64(&b, (uint64_t)host->clock_real_ns);
	dtc_buf_u64(&b, host->start_ns);
	dtc_buf_strn(&b, host->command, sizeof(host->command) - 1);
	dtc_buf_strn(&b, host->tool_version, sizeof(host->tool_version) - 1);
	dtc_buf_strn(&b, host->kernel_build_id, sizeof(host->kernel_build_id) - 1);
	dtc_buf_strn(&b, host->cpu_model, sizeof(host->cpu_model) - 1);
	dtc_buf_strn(&b, host->boot_id, sizeof(host->boot_id) - 1);
	dtc_buf_strn(&b, host->source, sizeof(host->source) - 1);
	int rc = b.err ? -1 : emit_chunk(w, DTC_HOST, 0, NULL, 0, b.p, b.len, b.len);
	dtc_buf_free(&b);
	if (rc) {
		snprintf(create_err, sizeof(create_err), "%s", w->sink_failed ?
			 w->sink_err : "out of memory");
		goto fail;
	}
	if (w->threaded) {
		if (pthread_create(&w->thread, NULL, sink_main, w)) {
			dtc_fmt(create_err, sizeof(create_err), path, "cannot start writer thread");
			goto fail;
		}
		w->thread_started = 1;
	}
	return w;
fail:
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->sink.cctx);
	free_colbuf(w->cur);
	free(w->path);
	free(w);
	return NULL;
}

int dtcap_put_probes(struct dtcap_writer *w, const struct dtcap_probe *p, size_t n)
{
	if (check(w))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (p[i].id == 0 || p[i].id >= DTCAP_MAXPROBEID) {
			werr(w, "probe id %u (%.40s): ids are 1 .. %u", p[i].id, p[i].name,
			     DTCAP_MAXPROBEID - 1);
			return -1;
		}
	struct dtc_buf b = {0};
	dtc_buf_uv(&b, n);
	for (size_t i = 0; i < n; i++) {
		dtc_buf_uv(&b, p[i].id);
		dtc_buf_uv(&b, p[i].flags);
		dtc_buf_strn(&b, p[i].name, DTCAP_PROBENAMELEN - 1);
		uint32_t na = p[i].nargs > DTCAP_MAXARGS ? DTCAP_MAXARGS : p[i].nargs;
		dtc_buf_uv(&b, na);
		for (uint32_t k = 0; k < na; k++) {
			dtc_buf_strn(&b, p[i].args[k].name, DTCAP_ARGNAMELEN - 1);
			dtc_buf_strn(&b, p[i].args[k].type, DTCAP_ARGNAMELEN - 1);
			dtc_buf_u8(&b, p[i].args[k].slot);
			dtc_buf_u8(&b, p[i].args[k].nslots);
		}
	}
	return submit_meta(w, DTC_PROB, 1, &b);
}

static int put_text(struct dtcap_writer *w, uint32_t type, const char *text, size_t len)
{
	if (check(w))
		return -1;
	if (len > DTC_MAX_ULEN / 2) {
		werr(w, "symbol text too large (%zu bytes)", len);
		return -1;
	}
	struct dtc_buf b = {0};
	dtc_buf_put(&b, text, len);
	return submit_meta(w, type, 1, &b);
}

int dtcap_put_kallsyms(struct dtcap_writer *w, const char *text, size_t len)
{
	if (check(w))
		return -1;
	struct dtc_buf b = {0};
	if (len <= DTC_MAX_ULEN / 2 && dtc_ksym_encode(text, len, &b) == 0)
		return submit_meta(w, DTC_KSYC, 1, &b);
	dtc_buf_free(&b);
	return put_text(w, DTC_KSYM, text, len);
}

int dtcap_put_modules(struct dtcap_writer *w, const char *text, size_t len)
{
	return put_text(w, DTC_MODS, text, len);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct dtcap_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

uint32_t dtcap_put_file(struct dtcap_writer *w, const struct dtcap_file *f)
{
	if (check(w))
		return 0;
	const char *path = f->path ? f->path : "";
	uint32_t bl = f->build_id_len > 20 ? 20 : f->build_id_len;
	for (uint32_t i = 0; i < w->nfiles; i++) {
		struct fileent *e = &w->files[i];
		if (e->build_id_len == bl && !memcmp(e->build_id, f->build_id, bl) &&
		    !strcmp(e->path, path))
			return i + 1;
	}
	if (DT_GROW(w->files, w->files_cap, w->nfiles, 1, 16)) {
		werr(w, "out of memory");
		return 0;
	}
	struct dtcap_sym *syms = NULL;
	if (f->nsyms) {
		syms = malloc((size_t)f->nsyms * sizeof(*syms));
		if (!syms) {
			werr(w, "out of memory");
			return 0;
		}
		memcpy(syms, f->syms, (size_t)f->nsyms * sizeof(*syms));
		qsort(syms, f->nsyms, sizeof(*syms), sym_cmp);
	}
	uint32_t id = w->nfiles + 1;
	struct dtc_buf b = {0};
	dtc_buf_uv(&b, id);
	dtc_buf_strn(&b, path, DTC_MAX_PATH);
	dtc_buf_u8(&b, (uint8_t)bl);
	dtc_buf_put(&b, f->build_id, bl);
	dtc_buf_u64(&b, f->load_bias_hint);
	dtc_buf_uv(&b, f->nsyms);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < f->nsyms; i++) {
		dtc_buf_uv(&b, syms[i].addr - prev);
		prev = syms[i].addr;
		dtc_buf_uv(&b, syms[i].size);
		const char *nm = syms[i].name ? syms[i].name : "";
		size_t nl = strnlen(nm, DTC_MAX_PATH);
		dtc_buf_uv(&b, nl);
		dtc_buf_put(&b, nm, nl);
	}
	free(syms);
	struct fileent *e = &w->files[w->nfiles];
	if (!(e->path = strdup(path))) {
		dtc_buf_free(&b);
		werr(w, "out of memory");
		return 0;
	}
	memcpy(e->build_id, f->build_id, bl);
	e->build_id_len = bl;
	w->nfiles++;
	if (submit_meta(w, DTC_FILE, 1, &b))
		return 0;
	return id;
}

int dtcap_put_proc(struct dtcap_writer *w, const struct dtcap_proc *p)
{
	if (check(w))
		return -1;
	struct dtc_buf *b = &w->pend_proc;
	size_t undo = b->len;	/* a refused snapshot leaves no trace */
	char comm[DTCAP_COMMLEN];
	snprintf(comm, sizeof(comm), "%.*s", DTCAP_COMMLEN - 1, p->comm);
	dtc_buf_u64(b, p->ts);
	dtc_buf_uv(b, p->pid);
	dtc_buf_uv(b, p->ppid);
	dtc_buf_str(b, comm);
	dtc_buf_strn(b, p->exe ? p->exe : "", DTC_MAX_PATH);
	dtc_buf_uv(b, p->nmaps);
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct dtcap_map *m = &p->maps[i];
		if (m->file > w->nfiles || m->prot > 7) {
			werr(w, "map of pid %u: unknown file id %u or bad prot %u", p->pid,
			     m->file, m->prot);
			b->len = undo;
			return -1;
		}
		dtc_buf_uv(b, m->start);
		dtc_buf_uv(b, m->end - m->start);
		dtc_buf_uv(b, m->offset);
		dtc_buf_uv(b, m->file);
		dtc_buf_uv(b, m->prot);
		dtc_buf_strn(b, m->name ? m->name : "", DTC_MAX_PATH);
	}
	if (b->err) {
		werr(w, "out of memory");
		w->failed = 1;
		return -1;
	}
	w->pend_nproc++;
	if (b->len > (4u << 20))
		return flush_defs(w);
	return 0;
}

static uint64_t stack_hash_of(const void *ctx, uint32_t e)
{
	return ((const struct dtcap_writer *)ctx)->stacks[e].hash;
}

uint32_t dtcap_intern_stack(struct dtcap_writer *w, const uint64_t *pcs,
			    unsigned n, int kernel, int truncated)
{
	if (w->failed)
		return 0;
	if (n > DTCAP_MAXFRAMES) {
		n = DTCAP_MAXFRAMES;
		truncated = 1;
	}
	uint32_t kind = (kernel ? 1 : 0) | (truncated ? 2 : 0);
	uint64_t h = XXH3_64bits_withSeed(pcs, (size_t)n * 8, kind);
	uint32_t e;
	for (size_t i = dt_htab_first(&w->stack_ht, h);
	     (e = dt_htab_at(&w->stack_ht, i)) != DT_HTAB_NONE; i = dt_htab_next(&w->stack_ht, i)) {
		const struct stackent *s = &w->stacks[e];
		if (s->hash == h && s->n == n && s->kind == kind &&
		    !memcmp(w->frames + s->off, pcs, (size_t)n * 8))
			return e + 1;
	}
	if (DT_GROW(w->stacks, w->stacks_cap, w->nstacks, 1, 1024) ||
	    DT_GROW(w->frames, w->frames_cap, w->nframes, n, 16384) ||
	    dt_htab_add(&w->stack_ht, h, w->nstacks, stack_hash_of, w)) {
		werr(w, "out of memory");
		return 0;
	}
	if (n)
		memcpy(w->frames + w->nframes, pcs, (size_t)n * 8);
	w->stacks[w->nstacks] = (struct stackent){w->nframes, n, kind, h};
	w->nframes += n;
	return ++w->nstacks;
}

static uint64_t comm_hash_of(const void *ctx, uint32_t e)
{
	const struct dtcap_writer *w = ctx;
	return XXH3_64bits(w->comms[e], strlen(w->comms[e]));
}

uint32_t dtcap_intern_comm(struct dtcap_writer *w, const char *comm)
{
	if (w->failed)
		return 0;
	char c[DTCAP_COMMLEN];
	snprintf(c, sizeof(c), "%.*s", DTCAP_COMMLEN - 1, comm ? comm : "");
	uint64_t h = XXH3_64bits(c, strlen(c));
	uint32_t e;
	for (size_t i = dt_htab_first(&w->comm_ht, h);
	     (e = dt_htab_at(&w->comm_ht, i)) != DT_HTAB_NONE; i = dt_htab_next(&w->comm_ht, i))
		if (!strcmp(w->comms[e], c))
			return e + 1;
	if (DT_GROW(w->comms, w->comms_cap, w->ncomms, 1, 64) ||
	    dt_htab_add(&w->comm_ht, h, w->ncomms, comm_hash_of, w)) {
		werr(w, "out of memory");
		return 0;
	}
	memcpy(w->comms[w->ncomms], c, sizeof(c));
	return ++w->ncomms;
}

int dtcap_put_event(struct dtcap_writer *w, const struct dtcap_event *e)
{
	if (w->failed)
		return -1;
	/* the reader's limits: never write a row it would call damage */
	if (e->nargs > DTCAP_MAXARGS || e->kstack > w->nstacks ||
	    e->ustack > w->nstacks || e->comm > w->ncomms || e->cpu >= DTCAP_MAXCPUS ||
	    e->probe >= DTCAP_MAXPROBEID || e->ctx > 255) {
		werr(w, "event with bad ids (comm %u, kstack %u, ustack %u, nargs %u, "
		     "cpu %u, probe %u, ctx %u)", e->comm, e->kstack, e->ustack, e->nargs,
		     e->cpu, e->probe, e->ctx);
		return -1;
	}
	struct colbuf *b = w->cur;
	uint32_t i = b->rows;
	b->ts[i] = e->ts;
	b->cpu[i] = e->cpu;
	uint32_t *t = b->tup[i];
	t[0] = e->pid;
	t[1] = e->tid;
	t[2] = e->probe;
	t[3] = e->comm;
	t[4] = e->kstack;
	t[5] = e->ustack;
	t[6] = e->flags;
	t[7] = e->ctx;
	b->nargs[i] = (uint8_t)e->nargs;
	for (uint32_t k = 0; k < e->nargs; k++)
		b->args[b->nargs_total + k] = e->args[k];
	b->nargs_total += e->nargs;
	b->rows = i + 1;
	w->events++;
	if (b->rows == w->block_events)
		return flush_block(w);
	return 0;
}

int dtcap_put_counters(struct dtcap_writer *w, uint64_t ts,
		       const struct dtcap_count *percpu, uint32_t ncpus,
		       const struct dtcap_count *recorder)
{
	if (check(w))
		return -1;
	static const struct dtcap_count zero;
	struct dtc_buf b = {0};
	dtc_buf_u64(&b, ts);
	dtc_buf_uv(&b, ncpus);
	for (uint32_t i = 0; i <= ncpus; i++) {
		const struct dtcap_count *c = i < ncpus ? &percpu[i] :
					      recorder ? recorder : &zero;
		dtc_buf_uv(&b, c->produced);
		dtc_buf_uv(&b, c->read);
		dtc_buf_uv(&b, c->dropped);
		dtc_buf_uv(&b, c->skipped);
		dtc_buf_uv(&b, c->recursive);
		dtc_buf_uv(&b, c->nested);
	}
	if (!w->synthetic) {
		/* both clocks back to back: the pair converts ts to wall time
		 * as of now, so a reader can follow NTP steps and drift */
		struct timespec m, r;
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_REALTIME, &r);
		dtc_buf_u64(&b, (uint64_t)m.tv_sec * 1000000000ULL + (uint64_t)m.tv_nsec);
		dtc_buf_u64(&b, (uint64_t)((int64_t)r.tv_sec * 1000000000LL + r.tv_nsec));
	}
	if (submit_meta(w, DTC_CNTR, 1, &b))
		return -1;
	/* the user-stack tally, right after the snapshot it belongs to */
	if (recorder && (recorder->ustack_dwarf || recorder->ustack_dwarf_trunc ||
			 recorder->ustack_fp_behind)) {
		struct dtc_buf u = {0};
		dtc_buf_u64(&u, ts);
		dtc_buf_uv(&u, 3);
		dtc_buf_uv(&u, recorder->ustack_dwarf);
		dtc_buf_uv(&u, recorder->ustack_dwarf_trunc);
		dtc_buf_uv(&u, recorder->ustack_fp_behind);
		return submit_meta(w, DTC_USTK, 1, &u);
	}
	return 0;
}

int dtcap_flush(struct dtcap_writer *w)
{
	if (check(w))
		return -1;
	if (flush_block(w))
		return -1;
	return drain(w);
}

uint64_t dtcap_bytes_written(const struct dtcap_writer *w)
{
	return atomic_load(&((struct dtcap_writer *)w)->bytes);
}

uint64_t dtcap_symbol_bytes(const struct dtcap_writer *w)
{
	return atomic_load(&((struct dtcap_writer *)w)->sym_bytes);
}

uint64_t dtcap_srcline_bytes(const struct dtcap_writer *w)
{
	return atomic_load(&((struct dtcap_writer *)w)->srcl_bytes);
}

uint64_t dtcap_events_written(const struct dtcap_writer *w)
{
	return w->events;
}

static int write_footer(struct dtcap_writer *w)
{
	struct sink *s = &w->sink;
	struct dtc_buf b = {0};
	dtc_buf_uv(&b, s->nrefs);
	uint64_t prev = 0;
	for (size_t i = 0; i < s->nrefs; i++) {
		dtc_buf_u32(&b, s->refs[i].type);
		dtc_buf_uv(&b, s->refs[i].offset - prev);
		prev = s->refs[i].offset;
	}
	if (b.err) {
		dtc_buf_free(&b);
		werr(w, "out of memory");
		return -1;
	}
	size_t nrefs = s->nrefs;
	uint64_t foot = atomic_load(&w->bytes);
	int rc = emit_meta(w, DTC_FOOT, 1, &b);
	dtc_buf_free(&b);
	if (rc)
		return -1;
	uint8_t t[DTC_TRAILER_LEN];
	memcpy(t, DTC_TRAILER_MAGIC, 8);
	dtc_le64(t + 8, foot);
	dtc_le64(t + 16, nrefs);
	dtc_le64(t + 24, XXH3_64bits(t, 24));
	if (full_write(w->fd, t, sizeof(t))) {
		werr(w, "write trailer: %s", strerror(errno));
		return -1;
	}
	atomic_store(&w->bytes, (uint64_t)lseek(w->fd, 0, SEEK_CUR));
	return 0;
}

int dtcap_close(struct dtcap_writer *w)
{
	if (!w)
		return -1;
	int rc = 0;
	if (!w->failed && flush_block(w))
		rc = -1;
	if (w->threaded && w->thread_started) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		w->threaded = 0;	/* from here on the sink runs inline */
	}
	if (!rc && drain(w))
		rc = -1;
	if (!rc && !w->failed && write_footer(w))
		rc = -1;
	if (!rc && w->sink_failed) {
		memcpy(w->err, w->sink_err, sizeof(w->err));
		rc = -1;
	}
	if (close(w->fd) && !rc) {
		werr(w, "close: %s", strerror(errno));
		rc = -1;
	}
	if (rc) {
		/* a closed writer cannot be asked: keep the message for
		 * dtcap_create_error(), the only place left to look */
		snprintf(create_err, sizeof(create_err), "%s", w->err);
	}
	while (w->free_list) {
		struct colbuf *b = w->free_list;
		w->free_list = b->next_free;
		free_colbuf(b);
	}
	free_colbuf(w->cur);
	struct job *j = w->qhead;
	while (j) {
		struct job *n = j->next;
		if (j->blk)
			free_colbuf(j->blk);
		dtc_buf_free(&j->payload);
		free(j);
		j = n;
	}
	ZSTD_freeCCtx(w->sink.cctx);
	dtc_buf_free(&w->sink.raw);
	dtc_buf_free(&w->sink.pay);
	dtc_buf_free(&w->sink.xh);
	dtc_buf_free(&w->sink.chunk);
	dtc_buf_free(&w->sink.sum);
	dtc_bsum_scratch_free(&w->sink.bsum);
	dtc_buf_free(&w->pend_proc);
	free(w->sink.tmp64);
	free(w->sink.argtmp);
	free(w->sink.ctx);
	free(w->sink.idx);
	free(w->sink.ht);
	for (int k = 0; k <= DTC_NDICT; k++)
		free(w->sink.dict[k]);
	free(w->sink.refs);
	free(w->stacks);
	free(w->frames);
	dt_htab_free(&w->stack_ht);
	free(w->comms);
	dt_htab_free(&w->comm_ht);
	for (uint32_t i = 0; i < w->nfiles; i++)
		free(w->files[i].path);
	free(w->files);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->path);
	free(w);
	return rc;
}

/* ------------------------------------------------------- source lines */

struct srcl_strs {
	const char	**v;
	uint32_t	n, cap;
	struct dt_htab	ix;
};

static uint64_t srcl_hash(const char *s)
{
	return XXH3_64bits(s, strnlen(s, DTC_MAX_PATH));
}

static uint64_t srcl_rehash(const void *ctx, uint32_t e)
{
	return srcl_hash(((const struct srcl_strs *)ctx)->v[e]);
}

/* The index of s in the chunk's string table, UINT32_MAX on ENOMEM. */
static uint32_t srcl_str(struct srcl_strs *t, const char *s)
{
	uint64_t h = srcl_hash(s);
	uint32_t e;
	for (size_t i = dt_htab_first(&t->ix, h); (e = dt_htab_at(&t->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&t->ix, i))
		if (!strncmp(t->v[e], s, DTC_MAX_PATH))
			return e;
	if (DT_GROW(t->v, t->cap, t->n, 1, 64) ||
	    dt_htab_add(&t->ix, h, t->n, srcl_rehash, t))
		return UINT32_MAX;
	t->v[t->n] = s;
	return t->n++;
}

static int srcl_cmp(const void *a, const void *b)
{
	const struct dtcap_srcline *x = *(const struct dtcap_srcline *const *)a;
	const struct dtcap_srcline *y = *(const struct dtcap_srcline *const *)b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: the first given wins */
}

int dtcap_put_srclines(struct dtcap_writer *w, uint32_t file,
		       const struct dtcap_srcline *s, size_t n)
{
	if (check(w))
		return -1;
	if (file == 0 || file > w->nfiles) {
		werr(w, "source lines of unknown file id %u", file);
		return -1;
	}
	if (n == 0)
		return 0;
	const struct dtcap_srcline **ord = malloc(n * sizeof(*ord));
	struct srcl_strs st = {0};
	struct dtc_buf body = {0}, b = {0};
	int ret = -1;
	if (!ord)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		if (s[i].nframes == 0 || s[i].nframes > DTCAP_MAXINLINE || !s[i].frames) {
			werr(w, "source line of 0x%llx: %u frames (1 .. %u)",
			     (unsigned long long)s[i].addr, s[i].nframes, DTCAP_MAXINLINE);
			goto out;
		}
		ord[i] = &s[i];
	}
	qsort(ord, n, sizeof(*ord), srcl_cmp);
	uint64_t prev = 0, nout = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && ord[i]->addr == ord[i - 1]->addr)
			continue;
		dtc_buf_uv(&body, ord[i]->addr - prev);
		prev = ord[i]->addr;
		dtc_buf_uv(&body, ord[i]->nframes);
		for (uint32_t k = 0; k < ord[i]->nframes; k++) {
			const struct dtcap_srcframe *f = &ord[i]->frames[k];
			uint32_t fn = srcl_str(&st, f->func ? f->func : "");
			uint32_t fl = srcl_str(&st, f->file ? f->file : "");
			if (fn == UINT32_MAX || fl == UINT32_MAX)
				goto nomem;
			dtc_buf_uv(&body, fn);
			dtc_buf_uv(&body, fl);
			dtc_buf_uv(&body, f->line);
		}
		nout++;
	}
	dtc_buf_uv(&b, file);
	dtc_buf_uv(&b, st.n);
	for (uint32_t i = 0; i < st.n; i++)
		dtc_buf_strn(&b, st.v[i], DTC_MAX_PATH);
	dtc_buf_uv(&b, nout);
	dtc_buf_put(&b, body.p, body.len);
	if (body.err || b.err)
		goto nomem;
	ret = submit_meta(w, DTC_SRCL, 1, &b);
	goto out;
nomem:
	werr(w, "out of memory");
out:
	dtc_buf_free(&b);
	dtc_buf_free(&body);
	free(st.v);
	dt_htab_free(&st.ix);
	free(ord);
	return ret;
}
