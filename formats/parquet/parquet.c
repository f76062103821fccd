/*
 * parquet.c - streaming Parquet writer (see parquet.h for what it writes
 * and its memory bound).  Written from apache/parquet-format's
 * parquet.thrift and Encodings.md; the footer and page headers are Thrift
 * compact protocol, emitted by hand below (tc_*).
 *
 * Layout of a file:
 *	"PAR1"
 *	per row group, per column: [dictionary page] data page
 *	FileMetaData (compact), its length (u32 LE), "PAR1"
 * The RowGroup structures of the footer are serialized as each row group
 * is written (they need nothing from later groups) and kept as bytes, so
 * the footer costs one buffer, not a tree of structures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <zstd.h>
#include <xxhash.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "parquet.h"
#include "dt_utf8.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "PLAIN values are copied as in memory: little-endian hosts only"
#endif

/* parquet.thrift enums */
enum { T_INT32 = 1, T_INT64 = 2, T_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_DELTA_BINARY_PACKED = 5, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CODEC_ZSTD = 6 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1 };
enum { CONV_UTF8 = 0 };

/* Thrift compact protocol type ids */
enum { TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I16 = 4, TC_I32 = 5, TC_I64 = 6,
       TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12 };

/* ------------------------------------------------------------ buffers */

struct buf {
	uint8_t	*p;
	size_t	len, cap;
	int	oom;	/* sticky: checked once after a series of puts */
};

/* Room for more bytes: the test inline (the encoders call it per run and
 * per group), the growth out of line. */
static int buf_grow(struct buf *b, size_t more)
{
	if (b->oom)
		return -1;
	if (DT_GROW(b->p, b->cap, b->len, more, 4096)) {
		b->oom = 1;
		return -1;
	}
	return 0;
}

static inline int buf_need(struct buf *b, size_t more)
{
	if (__builtin_expect(!b->oom && more <= b->cap - b->len, 1))
		return 0;
	return buf_grow(b, more);
}

static void buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0 || buf_need(b, n) < 0)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void buf_byte(struct buf *b, uint8_t c)
{
	if (buf_need(b, 1) == 0)
		b->p[b->len++] = c;
}

static void buf_varint(struct buf *b, uint64_t v)
{
	if (buf_need(b, 10) < 0)
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static void buf_u32le(struct buf *b, uint32_t v)
{
	buf_put(b, &v, 4);
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------ Thrift compact writer */

struct tc {
	struct buf	*b;
	int16_t		last[16];	/* last field id per open struct */
	int		d;
};

static void tc_init(struct tc *t, struct buf *b)
{
	t->b = b;
	t->d = 0;
	t->last[0] = 0;
}

static void tc_field(struct tc *t, int id, int type)
{
	int delta = id - t->last[t->d];
	if (delta > 0 && delta <= 15) {
		buf_byte(t->b, (uint8_t)(delta << 4 | type));
	} else {
		buf_byte(t->b, (uint8_t)type);
		buf_varint(t->b, (uint32_t)((id << 1) ^ (id >> 15)) & 0xffff);
	}
	t->last[t->d] = (int16_t)id;
}

static void tc_i32(struct tc *t, int id, int32_t v)
{
	tc_field(t, id, TC_I32);
	buf_varint(t->b, (uint32_t)(((uint32_t)v << 1) ^ (uint32_t)(v >> 31)));
}

static void tc_i64(struct tc *t, int id, int64_t v)
{
	tc_field(t, id, TC_I64);
	buf_varint(t->b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void tc_i16(struct tc *t, int id, int16_t v)
{
	tc_field(t, id, TC_I16);
	buf_varint(t->b, (uint16_t)(((uint16_t)v << 1) ^ (uint16_t)(v >> 15)));
}

static void tc_i8(struct tc *t, int id, int8_t v)
{
	tc_field(t, id, TC_BYTE);
	buf_byte(t->b, (uint8_t)v);
}

static void tc_bool(struct tc *t, int id, int v)
{
	tc_field(t, id, v ? TC_TRUE : TC_FALSE);
}

static void tc_bin(struct tc *t, int id, const void *p, size_t n)
{
	tc_field(t, id, TC_BINARY);
	buf_varint(t->b, n);
	buf_put(t->b, p, n);
}

/* A list header (as a field, or bare for the elements that follow). */
static void tc_list_hdr(struct buf *b, int etype, size_t n)
{
	if (n < 15) {
		buf_byte(b, (uint8_t)(n << 4 | etype));
	} else {
		buf_byte(b, (uint8_t)(0xf0 | etype));
		buf_varint(b, n);
	}
}

static void tc_list(struct tc *t, int id, int etype, size_t n)
{
	tc_field(t, id, TC_LIST);
	tc_list_hdr(t->b, etype, n);
}

/* Open a struct: as field id (id > 0) or as a list element (id 0). */
static void tc_begin(struct tc *t, int id)
{
	if (id > 0)
		tc_field(t, id, TC_STRUCT);
	t->last[++t->d] = 0;
}

static void tc_end(struct tc *t)
{
	buf_byte(t->b, 0);
	t->d--;
}

/* -------------------------------------- RLE / bit-packing hybrid encoder */

/* Bit-pack ngroups groups of 8 values from v (zero past n), LSB first. */
#define BITPACK(NAME, T)							\
static void NAME(struct buf *b, const T *v, size_t from, size_t ngroups,	\
		 size_t n, unsigned bw)						\
{										\
	if (ngroups == 0)							\
		return;								\
	buf_varint(b, (uint64_t)ngroups << 1 | 1);				\
	if (buf_need(b, ngroups * bw + 8) < 0)					\
		return;								\
	uint64_t acc = 0;							\
	unsigned bits = 0;							\
	uint8_t *o = b->p + b->len;						\
	size_t whole = from + ngroups * 8 <= n ? ngroups : (n - from) / 8;	\
	if (bw <= 32) {								\
		/* whole groups a 32-bit word at a time: the same bytes as the	\
		 * byte loop below (a group is bw whole bytes), fewer stores */	\
		const T *x = v + from, *end = x + whole * 8;			\
		for (; x < end; x++) {						\
			acc |= (uint64_t)*x << bits;				\
			bits += bw;						\
			if (bits >= 32) {					\
				uint32_t w32 = (uint32_t)acc;			\
				memcpy(o, &w32, 4);				\
				o += 4;						\
				acc >>= 32;					\
				bits -= 32;					\
			}							\
		}								\
		for (; bits >= 8; bits -= 8, acc >>= 8)				\
			*o++ = (uint8_t)acc;					\
		from += whole * 8;						\
		ngroups -= whole;						\
	}									\
	for (size_t i = from; i < from + ngroups * 8; i++) {			\
		uint64_t x = i < n ? (uint64_t)v[i] : 0;			\
		acc |= x << bits;						\
		bits += bw;							\
		while (bits >= 8) {						\
			*o++ = (uint8_t)acc;					\
			acc >>= 8;						\
			bits -= 8;						\
		}								\
	}									\
	b->len = (size_t)(o - b->p);						\
}

/*
 * Runs of 16 or more equal values become RLE runs (runs of 8 were as
 * small after zstd, and every switch between the two costs a header and
 * a call); everything else is bit-packed 8 at a time (the last group
 * padded with zeros: readers stop at the page's value count).
 */
#define HYBRID(NAME, PACK, T)							\
static void NAME(struct buf *b, const T *v, size_t n, unsigned bw)		\
{										\
	size_t i = 0, bp_from = 0, ngroups = 0;					\
	unsigned vbytes = (bw + 7) / 8;						\
	while (i < n) {								\
		T x = v[i];							\
		/* a run needs its first 16 equal: one branch-free test per	\
		 * group, so values without runs cost little here */		\
		T d = 1;							\
		if (i + 16 <= n && v[i + 1] == x) {	/* most groups: no */	\
			d = 0;							\
			for (unsigned k = 2; k < 16; k++)			\
				d |= v[i + k] ^ x;				\
		}								\
		if (d != 0) {							\
			ngroups++;						\
			i += 8;							\
			continue;						\
		}								\
		size_t r = 16;							\
		while (i + r + 8 <= n) {	/* 8 at a time: vectorizes */	\
			unsigned eq = 0;					\
			for (unsigned k = 0; k < 8; k++)			\
				eq += v[i + r + k] == x;			\
			if (eq != 8)						\
				break;						\
			r += 8;							\
		}								\
		while (i + r < n && v[i + r] == x)				\
			r++;							\
		PACK(b, v, bp_from, ngroups, n, bw);				\
		ngroups = 0;							\
		buf_varint(b, (uint64_t)r << 1);				\
		uint32_t x32 = (uint32_t)x;					\
		buf_put(b, &x32, vbytes);					\
		i += r;								\
		bp_from = i;							\
	}									\
	PACK(b, v, bp_from, ngroups, n, bw);					\
}

/* ------------------------------------------- DELTA_BINARY_PACKED encoder */

/*
 * Blocks of 128 deltas in 4 miniblocks of 32, as Encodings.md describes;
 * arithmetic in the unsigned domain of the column's width, so deltas wrap
 * as the spec requires.  Chosen for every integer column because trace
 * columns are runs (cpu, pid, tid, probe: deltas 0, miniblocks of width 0,
 * no bytes) or slowly rising (ts): the page shrinks several times before
 * zstd sees it, which is what makes the export both small and fast.
 */
static void delta_pack32(struct buf *b, const uint64_t *rel, size_t m, unsigned bw)
{
	/* 32 values (zeros past m), bw bits each, LSB first: 4 * bw bytes */
	if (buf_need(b, 4 * bw + 16) < 0)
		return;
	uint8_t *o = b->p + b->len;
	if (bw <= 56 && m >= 32) {
		/* the common case: a 64-bit accumulator is enough */
		uint64_t acc = 0;
		unsigned bits = 0;
		for (size_t i = 0; i < 32; i++) {
			acc |= rel[i] << bits;
			bits += bw;
			while (bits >= 8) {
				*o++ = (uint8_t)acc;
				acc >>= 8;
				bits -= 8;
			}
		}
		b->len = (size_t)(o - b->p);
		return;
	}
	unsigned __int128 acc = 0;
	unsigned bits = 0;
	for (size_t i = 0; i < 32; i++) {
		acc |= (unsigned __int128)(i < m ? rel[i] : 0) << bits;
		bits += bw;
		while (bits >= 8) {
			*o++ = (uint8_t)acc;
			acc >>= 8;
			bits -= 8;
		}
	}
	b->len = (size_t)(o - b->p);
}

BITPACK(bitpack_u8, uint8_t)
BITPACK(bitpack_u32, uint32_t)

/*
 * Whole groups of 8 values of bw bits each (bw <= 32) into 8 * bw bits:
 * with bw a constant every shift and store below is fixed at compile
 * time, so each width gets its own branch-free code (dictionary indices
 * are most of what a trace's pages hold).
 */
static inline __attribute__((always_inline))
uint8_t *pack_groups(uint8_t *o, const uint32_t *x, size_t ngroups, const unsigned bw)
{
	for (size_t g = 0; g < ngroups; g++, x += 8) {
		uint64_t acc = 0;
		unsigned bits = 0;
#pragma GCC unroll 8
		for (unsigned k = 0; k < 8; k++) {
			acc |= (uint64_t)x[k] << bits;
			bits += bw;
			if (bits >= 32) {
				uint32_t w32 = (uint32_t)acc;
				memcpy(o, &w32, 4);
				o += 4;
				acc >>= 32;
				bits -= 32;
			}
		}
		for (; bits >= 8; bits -= 8, acc >>= 8)
			*o++ = (uint8_t)acc;
	}
	return o;
}

#define PACK_CASE(N) case N: return pack_groups(o, x, ngroups, N);
static uint8_t *pack_groups_bw(uint8_t *o, const uint32_t *x, size_t ngroups, unsigned bw)
{
	switch (bw) {
	PACK_CASE(1) PACK_CASE(2) PACK_CASE(3) PACK_CASE(4) PACK_CASE(5) PACK_CASE(6)
	PACK_CASE(7) PACK_CASE(8) PACK_CASE(9) PACK_CASE(10) PACK_CASE(11) PACK_CASE(12)
	PACK_CASE(13) PACK_CASE(14) PACK_CASE(15) PACK_CASE(16) PACK_CASE(17) PACK_CASE(18)
	PACK_CASE(19) PACK_CASE(20) PACK_CASE(21) PACK_CASE(22) PACK_CASE(23) PACK_CASE(24)
	PACK_CASE(25) PACK_CASE(26) PACK_CASE(27) PACK_CASE(28) PACK_CASE(29) PACK_CASE(30)
	PACK_CASE(31) PACK_CASE(32)
	}
	return pack_groups(o, x, ngroups, bw);
}

/* bitpack_u32 with its whole groups through pack_groups_bw. */
static void bitpack_u32_fast(struct buf *b, const uint32_t *v, size_t from, size_t ngroups,
			     size_t n, unsigned bw)
{
	size_t whole = from + ngroups * 8 <= n ? ngroups : (n - from) / 8;
	if (ngroups == 0 || whole == 0 || bw > 32) {
		bitpack_u32(b, v, from, ngroups, n, bw);
		return;
	}
	buf_varint(b, (uint64_t)ngroups << 1 | 1);
	if (buf_need(b, ngroups * bw + 8) < 0)
		return;
	uint8_t *o = pack_groups_bw(b->p + b->len, v + from, whole, bw);
	b->len = (size_t)(o - b->p);
	if (whole < ngroups) {
		/* the padded tail group, by the byte loop (no run header) */
		uint64_t acc = 0;
		unsigned bits = 0;
		for (size_t i = from + whole * 8; i < from + ngroups * 8; i++) {
			acc |= (uint64_t)(i < n ? v[i] : 0) << bits;
			bits += bw;
			while (bits >= 8) {
				*o++ = (uint8_t)acc;
				acc >>= 8;
				bits -= 8;
			}
		}
		b->len = (size_t)(o - b->p);
	}
}

HYBRID(hybrid_u8, bitpack_u8, uint8_t)
HYBRID(hybrid_u32, bitpack_u32_fast, uint32_t)

static void delta_encode(struct buf *b, const void *vals, size_t n, int is64)
{
	const int64_t *v64 = vals;
	const int32_t *v32 = vals;
	uint64_t mask = is64 ? UINT64_MAX : UINT32_MAX;
	uint64_t prev = is64 ? (uint64_t)v64[0] : (uint64_t)(uint32_t)v32[0];
	int64_t first = is64 ? v64[0] : v32[0];
	buf_varint(b, 128);
	buf_varint(b, 4);
	buf_varint(b, n);
	buf_varint(b, ((uint64_t)first << 1) ^ (uint64_t)(first >> 63));
	uint64_t rel[128];
	for (size_t i = 1; i < n; i += 128) {
		size_t m = n - i < 128 ? n - i : 128;
		/* deltas as signed values of the column's width */
		int64_t mind = INT64_MAX;
		for (size_t k = 0; k < m; k++) {
			uint64_t cur = is64 ? (uint64_t)v64[i + k] : (uint64_t)(uint32_t)v32[i + k];
			uint64_t d = (cur - prev) & mask;
			int64_t sd = is64 ? (int64_t)d : (int64_t)(int32_t)(uint32_t)d;
			rel[k] = (uint64_t)sd;
			mind = sd < mind ? sd : mind;
			prev = cur;
		}
		buf_varint(b, ((uint64_t)mind << 1) ^ (uint64_t)(mind >> 63));
		uint8_t bws[4] = { 0, 0, 0, 0 };
		for (size_t k = 0; k < m; k++)
			rel[k] = (rel[k] - (uint64_t)mind) & mask;
		for (unsigned j = 0; j < 4 && j * 32 < m; j++) {
			uint64_t orv = 0;
			for (size_t k = j * 32; k < m && k < j * 32 + 32; k++)
				orv |= rel[k];
			unsigned bw = 0;
			while (bw < 64 && (orv >> bw))
				bw++;
			bws[j] = (uint8_t)bw;
		}
		buf_put(b, bws, 4);
		for (unsigned j = 0; j < 4 && j * 32 < m; j++) {
			if (bws[j] == 0)
				continue;
			if (bws[j] <= 32 && m - j * 32 >= 32 && buf_need(b, 4 * bws[j] + 16) == 0) {
				/* the hybrid's packing is the same LSB-first
				 * stream: 32 values are 4 of its groups */
				uint32_t r32[32];
				for (unsigned k = 0; k < 32; k++)
					r32[k] = (uint32_t)rel[j * 32 + k];
				b->len = (size_t)(pack_groups_bw(b->p + b->len, r32, 4, bws[j]) - b->p);
				continue;
			}
			delta_pack32(b, rel + j * 32, m - j * 32, bws[j]);
		}
	}
}

/* ------------------------------------------------------------- writer */

struct col {
	char		*name;
	enum pq_type	type;
	int		nullable;
	size_t		n;		/* values in this row group, NULLs too */
	size_t		nnn;		/* non-NULL values */
	uint8_t		*def;		/* [n] nullable: 1 present, 0 NULL */
	size_t		defcap;
	void		*vals;		/* [nnn] int32/int64, or uint32 dict index */
	size_t		valcap;
	/* strings: this row group's dictionary */
	size_t		ndict, dcap;
	uint32_t	*dent;		/* arena offset, or caller id */
	uint32_t	*dlen;
	struct buf	arena;		/* pq_put_str bytes */
	struct dt_htab	ht;		/* string -> dict index */
	const char *const *ext;		/* pq_set_dict table, or NULL */
	size_t		next;
	int32_t		*ext2loc;	/* caller id -> dict index, -1 unused */
	const char	**extfix;	/* ext with its invalid UTF-8 replaced, or NULL */
	char		**extown;	/* [next] the replacements extfix owns */
	int64_t		vmin, vmax;	/* integers: of the nnn values (as int32
					 * for INT32), kept as they are put:
					 * the chunk is cold by flush time */
	int		nodict;		/* integers: too many distinct values seen */
	int		intenc;		/* integers: ENC_PLAIN or ENC_DELTA_... */
	int		decided;	/* intenc chosen (on the first chunk) */
	int		zstore;		/* data pages still to store, not compress */
	/*
	 * Sparse chunk (only pq_put_scatter64 so far): the n values are 0
	 * but at rows srow[0..ns-1] (rising), which hold sval[]; vals is
	 * unused until densify().  The dictionary then costs ns, not n.
	 */
	int		sparse;
	size_t		ns, scap;
	uint32_t	*srow;
	int64_t		*sval;
};

struct pq_writer {
	FILE		*f;
	char		*path;
	uint64_t	off;		/* bytes written */
	struct col	*cols;
	unsigned	ncols;
	uint32_t	rg_limit;
	int		level;
	int		plain_ints;	/* pq_opts.plain_ints */
	char		*created_by;
	size_t		rg_rows;	/* rows in the open row group */
	uint64_t	rows_done;	/* rows in written row groups */
	size_t		nrg;
	struct buf	rgbuf;		/* serialized RowGroup list elements */
	struct buf	page, cpage, hdr;
	ZSTD_CCtx	*zc;
	/* integer dictionaries: generation-stamped table, no clearing */
	struct islot { uint64_t key; uint32_t val, gen; } *ht;	/* one line a probe */
	uint16_t	*dmap;		/* value - min -> index + 1, 0 between uses */
	uint32_t	gen;
	uint32_t	*didx;		/* dictionary index per value */
	size_t		didxcap;
	char		*fixbuf;	/* dt_utf8_fix's copies */
	size_t		fixcap;
	int		failed;
	char		err[512];
};

static int fail(struct pq_writer *w, const char *fmt, const char *a, const char *b)
{
	if (!w->failed)
		snprintf(w->err, sizeof(w->err), fmt, a ? a : "", b ? b : "");
	w->failed = 1;
	return -1;
}

static int oom(struct pq_writer *w)
{
	return fail(w, "%s: out of memory", w->path, NULL);
}

const char *pq_error(const struct pq_writer *w)
{
	return w->err;
}

static void ext_unfix(struct col *c)
{
	if (c->extown)
		for (size_t i = 0; i < c->next; i++)
			free(c->extown[i]);
	free(c->extown);
	free(c->extfix);
	c->extown = NULL;
	c->extfix = NULL;
}

static void col_free(struct col *c)
{
	free(c->name);
	free(c->def);
	free(c->vals);
	free(c->srow);
	free(c->sval);
	free(c->dent);
	free(c->dlen);
	buf_free(&c->arena);
	dt_htab_free(&c->ht);
	free(c->ext2loc);
	ext_unfix(c);
}

static void writer_free(struct pq_writer *w)
{
	if (w == NULL)
		return;
	for (unsigned i = 0; i < w->ncols; i++)
		col_free(&w->cols[i]);
	free(w->cols);
	free(w->path);
	free(w->created_by);
	buf_free(&w->rgbuf);
	buf_free(&w->page);
	buf_free(&w->cpage);
	buf_free(&w->hdr);
	ZSTD_freeCCtx(w->zc);
	free(w->ht);
	free(w->dmap);
	free(w->didx);
	free(w->fixbuf);
	free(w);
}

static char *xstrdup_err(const char *fmt, const char *a, const char *b)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), fmt, a, b);
	return strdup(tmp);
}

struct pq_writer *pq_create(const char *path, const struct pq_column *cols,
			    unsigned ncols, const struct pq_opts *opts, char **err)
{
	if (err)
		*err = NULL;
	if (ncols == 0 || ncols > 4096) {
		if (err)
			*err = xstrdup_err("%s: %s", path, "bad column count");
		return NULL;
	}
	struct pq_writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		goto nomem;
	w->path = strdup(path);
	w->cols = calloc(ncols, sizeof(*w->cols));
	w->created_by = strdup(opts && opts->created_by ? opts->created_by : "dt");
	w->zc = ZSTD_createCCtx();
	if (!w->path || !w->cols || !w->created_by || !w->zc)
		goto nomem;
	w->ncols = ncols;
	for (unsigned i = 0; i < ncols; i++) {
		w->cols[i].name = strdup(cols[i].name);
		if (w->cols[i].name == NULL)
			goto nomem;
		w->cols[i].type = cols[i].type;
		w->cols[i].nullable = cols[i].nullable;
	}
	w->rg_limit = opts && opts->rowgroup_rows ? opts->rowgroup_rows : 262144;
	w->level = opts && opts->zstd_level ? opts->zstd_level : 1;
	w->plain_ints = opts && opts->plain_ints;
	/* O_EXCL: never replace what is there; 0600: the data of a capture */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (err)
			*err = xstrdup_err("%s: %s", path, strerror(errno));
		writer_free(w);
		return NULL;
	}
	w->f = fdopen(fd, "wb");
	if (w->f == NULL) {
		close(fd);
		goto nomem;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	if (fwrite("PAR1", 1, 4, w->f) != 4) {
		if (err)
			*err = xstrdup_err("%s: %s", path, strerror(errno));
		fclose(w->f);
		w->f = NULL;
		writer_free(w);
		return NULL;
	}
	w->off = 4;
	return w;
nomem:
	if (err)
		*err = xstrdup_err("%s: %s", path, "out of memory");
	if (w && w->f)
		fclose(w->f);
	writer_free(w);
	return NULL;
}

/* Room for `more` values (and NULL flags) in c. */
static int col_reserve(struct pq_writer *w, struct col *c, size_t more)
{
	size_t esz = c->type == PQ_INT64 ? 8 : 4;
	if (c->nnn + more > c->valcap) {
		/* the element size is the column's: the function form */
		void *p = dt_grow_array(c->vals, &c->valcap, c->nnn + more, esz, 1024, SIZE_MAX);
		if (p == NULL)
			return oom(w);
		c->vals = p;
	}
	if (c->nullable && DT_GROW(c->def, c->defcap, c->n, more, 1024))
		return oom(w);
	return 0;
}

static struct col *getcol(struct pq_writer *w, unsigned col, int string)
{
	if (w->failed)
		return NULL;
	if (col >= w->ncols) {
		fail(w, "%s: no such column", w->path, NULL);
		return NULL;
	}
	struct col *c = &w->cols[col];
	if ((c->type == PQ_STRING) != string) {
		fail(w, "%s: column %s: wrong value type", w->path, c->name);
		return NULL;
	}
	return c;
}

/* Fold the range of values just put (after the first `had' of the chunk). */
static void minmax(struct col *c, size_t had, int64_t mn, int64_t mx)
{
	if (had == 0) {
		c->vmin = mn;
		c->vmax = mx;
		return;
	}
	c->vmin = mn < c->vmin ? mn : c->vmin;
	c->vmax = mx > c->vmax ? mx : c->vmax;
}

/* A sparse chunk as the plain array of its values. */
static int densify(struct pq_writer *w, struct col *c)
{
	if (!c->sparse)
		return 0;
	size_t n = c->nnn;
	c->sparse = 0;
	c->nnn = 0;
	if (col_reserve(w, c, n) < 0)
		return -1;
	c->nnn = n;
	int64_t *o = c->vals;
	memset(o, 0, n * sizeof(*o));
	for (size_t i = 0; i < c->ns; i++)
		o[c->srow[i]] = c->sval[i];
	c->ns = 0;
	return 0;
}

int pq_put_int(struct pq_writer *w, unsigned col, const void *v, unsigned size,
	       size_t stride, const uint8_t *present, size_t n)
{
	struct col *c = getcol(w, col, 0);
	if (c == NULL)
		return -1;
	if (densify(w, c) < 0)
		return -1;
	if ((size != 4 && size != 8) || stride == 0)
		return fail(w, "%s: column %s: bad source layout", w->path, c->name);
	if (present && !c->nullable)
		for (size_t i = 0; i < n; i++)
			if (!present[i])
				return fail(w, "%s: column %s: NULL in a required column",
					    w->path, c->name);
	if (col_reserve(w, c, n) < 0)
		return -1;
	if (c->nullable) {
		if (present)
			memcpy(c->def + c->n, present, n);
		else
			memset(c->def + c->n, 1, n);
	}
	size_t k = c->nnn, k0 = k;
	if (present == NULL && stride == 1 && n > 0) {
		/* the common case (a decoded capture column): branch-free loops
		 * the compiler vectorizes, copy and range in one pass, one per
		 * column type and source width */
#define PQ_COPY_RANGE(T, TMIN, TMAX, S, CONV) do {			\
			T *o = (T *)c->vals + k, mn = TMAX, mx = TMIN;		\
			const S *sv = v;					\
			for (size_t i = 0; i < n; i++) {			\
				T x = (T)CONV sv[i];				\
				o[i] = x;					\
				mn = x < mn ? x : mn;				\
				mx = x > mx ? x : mx;				\
			}							\
			minmax(c, k0, mn, mx);					\
		} while (0)
		if (c->type == PQ_INT32 && size == 4)
			PQ_COPY_RANGE(int32_t, INT32_MIN, INT32_MAX, uint32_t, );
		else if (c->type == PQ_INT32)
			PQ_COPY_RANGE(int32_t, INT32_MIN, INT32_MAX, uint64_t, (uint32_t));
		else if (size == 4)
			PQ_COPY_RANGE(int64_t, INT64_MIN, INT64_MAX, uint32_t, );
		else
			PQ_COPY_RANGE(int64_t, INT64_MIN, INT64_MAX, uint64_t, );
#undef PQ_COPY_RANGE
		c->nnn = k + n;
		c->n += n;
		return 0;
	}
	if (c->type == PQ_INT32) {
		int32_t *o = c->vals;
		if (size == 4) {
			const uint32_t *s = v;
			for (size_t i = 0; i < n; i++)
				if (!present || present[i])
					o[k++] = (int32_t)s[i * stride];
		} else {
			const uint64_t *s = v;
			for (size_t i = 0; i < n; i++)
				if (!present || present[i])
					o[k++] = (int32_t)(uint32_t)s[i * stride];
		}
		if (k > k0) {
			int32_t mn = o[k0], mx = o[k0];
			for (size_t i = k0 + 1; i < k; i++) {
				mn = o[i] < mn ? o[i] : mn;
				mx = o[i] > mx ? o[i] : mx;
			}
			minmax(c, k0, mn, mx);
		}
	} else {
		int64_t *o = c->vals;
		if (size == 4) {
			const uint32_t *s = v;
			for (size_t i = 0; i < n; i++)
				if (!present || present[i])
					o[k++] = (int64_t)s[i * stride];
		} else {
			const uint64_t *s = v;
			for (size_t i = 0; i < n; i++)
				if (!present || present[i])
					o[k++] = (int64_t)s[i * stride];
		}
		if (k > k0) {
			int64_t mn = o[k0], mx = o[k0];
			for (size_t i = k0 + 1; i < k; i++) {
				mn = o[i] < mn ? o[i] : mn;
				mx = o[i] > mx ? o[i] : mx;
			}
			minmax(c, k0, mn, mx);
		}
	}
	c->nnn = k;
	c->n += n;
	return 0;
}

int pq_put_scatter64(struct pq_writer *w, unsigned col, size_t n, const uint32_t *rows,
		      const uint64_t *vals, size_t m)
{
	struct col *c = getcol(w, col, 0);
	if (c == NULL)
		return -1;
	if (c->type != PQ_INT64)
		return fail(w, "%s: column %s: not INT64", w->path, c->name);
	if (m > n)
		return fail(w, "%s: column %s: more values than rows", w->path, c->name);
	for (size_t i = 0; i < m; i++)
		if (rows[i] >= n || (i > 0 && rows[i] <= rows[i - 1]))
			return fail(w, "%s: column %s: rows out of order", w->path, c->name);
	int64_t mn = m < n ? 0 : INT64_MAX, mx = m < n ? 0 : INT64_MIN;
	if ((c->n == 0 || c->sparse) && !c->nodict) {
		/* kept sparse: the rows and values only (def stays dense) */
		if (c->nullable && DT_GROW(c->def, c->defcap, c->n, n, 1024))
			return oom(w);
		if (c->ns + m > c->scap) {
			size_t cap = c->scap;
			if (DT_GROW(c->srow, cap, c->ns, m, 1024) ||
			    DT_GROW(c->sval, c->scap, 0, cap, 1024))
				return oom(w);
		}
		if (c->nnn + n > UINT32_MAX)
			return fail(w, "%s: column %s: row group too large", w->path, c->name);
		if (c->nullable)
			memset(c->def + c->n, 1, n);
		uint32_t base = (uint32_t)c->nnn;
		for (size_t i = 0; i < m; i++) {
			int64_t y = (int64_t)vals[i];
			c->srow[c->ns + i] = base + rows[i];
			c->sval[c->ns + i] = y;
			mn = y < mn ? y : mn;
			mx = y > mx ? y : mx;
		}
		c->ns += m;
		c->sparse = 1;
	} else {
		if (col_reserve(w, c, n) < 0)
			return -1;
		if (c->nullable)
			memset(c->def + c->n, 1, n);
		int64_t *o = (int64_t *)c->vals + c->nnn;
		memset(o, 0, n * sizeof(*o));
		for (size_t i = 0; i < m; i++) {
			int64_t y = (int64_t)vals[i];
			o[rows[i]] = y;
			mn = y < mn ? y : mn;
			mx = y > mx ? y : mx;
		}
	}
	if (n > 0)
		minmax(c, c->nnn, mn, mx);
	c->n += n;
	c->nnn += n;
	return 0;
}

int pq_put_i64(struct pq_writer *w, unsigned col, int64_t v, int isnull)
{
	uint8_t p = !isnull;
	uint64_t u = (uint64_t)v;
	return pq_put_int(w, col, &u, 8, 1, &p, 1);
}

/* Append a NULL or a dictionary index to string column c. */
static int str_append(struct pq_writer *w, struct col *c, int64_t idx)
{
	if (idx < 0 && !c->nullable)
		return fail(w, "%s: column %s: NULL in a required column", w->path, c->name);
	if (col_reserve(w, c, 1) < 0)
		return -1;
	if (c->nullable)
		c->def[c->n] = idx >= 0;
	if (idx >= 0)
		((uint32_t *)c->vals)[c->nnn++] = (uint32_t)idx;
	c->n++;
	return 0;
}

static int dict_add(struct pq_writer *w, struct col *c, uint32_t ent, uint32_t len)
{
	/* dent and dlen share dcap: grow dlen to dent's new capacity */
	size_t cap = c->dcap;
	if (DT_GROW(c->dent, cap, c->ndict, 1, 256) ||
	    DT_GROW(c->dlen, c->dcap, 0, cap, 256))
		return oom(w);
	c->dent[c->ndict] = ent;
	c->dlen[c->ndict] = len;
	return (int)c->ndict++;
}

static uint64_t dict_hash(const void *ctx, uint32_t e)
{
	const struct col *c = ctx;
	return XXH3_64bits(c->arena.p + c->dent[e], c->dlen[e]);
}

int pq_put_str(struct pq_writer *w, unsigned col, const char *s, size_t len)
{
	struct col *c = getcol(w, col, 1);
	if (c == NULL)
		return -1;
	if (c->ext)
		return fail(w, "%s: column %s: has a caller dictionary", w->path, c->name);
	if (s == NULL)
		return str_append(w, c, -1);
	if ((s = dt_utf8_fix(s, len, &len, &w->fixbuf, &w->fixcap)) == NULL)
		return oom(w);
	if (len > UINT32_MAX / 2 || c->arena.len + len > UINT32_MAX)
		return fail(w, "%s: column %s: string too long for a row group", w->path, c->name);
	uint64_t h = XXH3_64bits(s, len);
	uint32_t k;
	for (size_t j = dt_htab_first(&c->ht, h); (k = dt_htab_at(&c->ht, j)) != DT_HTAB_NONE;
	     j = dt_htab_next(&c->ht, j))
		if (c->dlen[k] == len &&
		    (len == 0 || memcmp(c->arena.p + c->dent[k], s, len) == 0))
			return str_append(w, c, k);
	uint32_t at = (uint32_t)c->arena.len;
	buf_put(&c->arena, s, len);
	if (c->arena.oom)
		return oom(w);
	int e = dict_add(w, c, at, (uint32_t)len);
	if (e < 0)
		return -1;
	if (dt_htab_add(&c->ht, h, (uint32_t)e, dict_hash, c))
		return oom(w);
	return str_append(w, c, e);
}

int pq_set_dict(struct pq_writer *w, unsigned col, const char *const *strs, size_t n)
{
	struct col *c = getcol(w, col, 1);
	if (c == NULL)
		return -1;
	if (c->n || c->ndict)
		return fail(w, "%s: column %s: dictionary set mid row group", w->path, c->name);
	if (n > INT32_MAX)
		return fail(w, "%s: column %s: dictionary too large", w->path, c->name);
	int32_t *m = malloc((n ? n : 1) * sizeof(*m));
	if (m == NULL)
		return oom(w);
	memset(m, 0xff, n * sizeof(*m));
	free(c->ext2loc);
	c->ext2loc = m;
	ext_unfix(c);
	c->ext = strs;
	c->next = n;
	/* the caller's strings as they are, but for the few that are not
	 * valid UTF-8 (a comm cut mid-character): those replaced here */
	for (size_t i = 0; i < n; i++) {
		size_t l;
		const char *v = strs[i] ? dt_utf8_fix(strs[i], strlen(strs[i]), &l, &w->fixbuf,
						       &w->fixcap) : NULL;
		if (v == strs[i])
			continue;
		if (v == NULL)
			return oom(w);
		if (c->extfix == NULL) {
			c->extfix = malloc(n * sizeof(*c->extfix));
			c->extown = calloc(n, sizeof(*c->extown));
			if (c->extfix == NULL || c->extown == NULL)
				return oom(w);
			memcpy(c->extfix, strs, n * sizeof(*c->extfix));
			c->ext = c->extfix;
		}
		if ((c->extown[i] = strdup(v)) == NULL)
			return oom(w);
		c->extfix[i] = c->extown[i];
	}
	return 0;
}

int pq_put_ids(struct pq_writer *w, unsigned col, const uint32_t *ids, size_t n)
{
	struct col *c = getcol(w, col, 1);
	if (c == NULL)
		return -1;
	if (c->ext == NULL)
		return fail(w, "%s: column %s: no caller dictionary", w->path, c->name);
	if (col_reserve(w, c, n) < 0)
		return -1;
	uint32_t top = 0;
	for (size_t i = 0; i < n; i++)
		top = ids[i] > top ? ids[i] : top;
	if (n && top >= c->next)
		return fail(w, "%s: column %s: id out of range", w->path, c->name);
	/* every row present unless its id stands for NULL (rare: set below) */
	if (c->nullable)
		memset(c->def + c->n, 1, n);
	uint32_t *o = c->vals;
	uint8_t *def = c->nullable ? c->def + c->n : NULL;
	size_t k = c->nnn;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];
		int32_t loc = c->ext2loc[id];
		if (loc < 0) {
			if (c->ext[id] == NULL) {
				if (!c->nullable) {
					c->n += i;
					c->nnn = k;
					return fail(w, "%s: column %s: NULL in a required column",
						    w->path, c->name);
				}
				def[i] = 0;
				continue;
			}
			loc = dict_add(w, c, id, (uint32_t)strlen(c->ext[id]));
			if (loc < 0)
				return -1;
			c->ext2loc[id] = loc;
		}
		o[k++] = (uint32_t)loc;
	}
	c->n += n;
	c->nnn = k;
	return 0;
}

static const uint8_t *dict_str(const struct col *c, size_t i)
{
	return c->ext ? (const uint8_t *)c->ext[c->dent[i]] : c->arena.p + c->dent[i];
}

/* PLAIN integers appended to w->page; returns its compressed size. */
static size_t packed_size(struct pq_writer *w)
{
	size_t bound = ZSTD_compressBound(w->page.len);
	w->cpage.len = 0;
	if (w->page.oom || buf_need(&w->cpage, bound) < 0)
		return SIZE_MAX;
	size_t cl = ZSTD_compressCCtx(w->zc, w->cpage.p, bound, w->page.p, w->page.len, w->level);
	return ZSTD_isError(cl) ? SIZE_MAX : cl;
}

static void plain_ints(struct pq_writer *w, const struct col *c, size_t n)
{
	buf_put(&w->page, c->vals, n * (c->type == PQ_INT64 ? 8 : 4));
}

/*
 * DELTA_BINARY_PACKED or PLAIN for c, by which zstd shrinks more on the
 * first INT_TRIAL values of its first chunk: a sample is enough to tell
 * (rising timestamps against noise), and trying whole chunks cost two
 * extra compressions per column of every file, most of the CPU time of
 * exporting many small captures.
 */
#define INT_TRIAL	16384
static int int_encoding(struct pq_writer *w, const struct col *c)
{
	size_t lvl = w->page.len, m = c->nnn < INT_TRIAL ? c->nnn : INT_TRIAL;
	plain_ints(w, c, m);
	size_t sp = packed_size(w);
	w->page.len = lvl;
	delta_encode(&w->page, c->vals, m, c->type == PQ_INT64);
	size_t sd = packed_size(w);
	w->page.len = lvl;
	return sd < sp ? ENC_DELTA_BINARY_PACKED : ENC_PLAIN;
}

/*
 * src as a zstd frame of raw blocks (RFC 8878: single segment, 4-byte
 * content size, blocks of at most 128 KiB): what zstd itself writes for
 * data it cannot shrink, without first searching it for matches.  dst has
 * room for ZSTD_compressBound(n).
 */
static size_t zstd_stored(uint8_t *dst, const uint8_t *src, size_t n)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	uint8_t *o = dst;
	uint32_t n32 = (uint32_t)n;
	memcpy(o, magic, 4);
	o[4] = 0xa0;
	memcpy(o + 5, &n32, 4);
	o += 9;
	size_t at = 0;
	do {
		size_t bl = n - at < 131072 ? n - at : 131072;
		uint32_t h = (uint32_t)bl << 3 | (at + bl == n);	/* type 0: raw */
		o[0] = (uint8_t)h, o[1] = (uint8_t)(h >> 8), o[2] = (uint8_t)(h >> 16);
		memcpy(o + 3, src + at, bl);
		o += 3 + bl;
		at += bl;
	} while (at < n);
	return (size_t)(o - dst);
}

/*
 * A data page zstd shrinks by less than 1/ZSTORE_GAIN (timestamps' deltas,
 * random ids) has the next ZSTORE_SKIP pages of its column stored in raw
 * blocks, then compression is tried again: the search for matches that
 * are not there was a fifth of all compression time.
 */
#define ZSTORE_GAIN	50
#define ZSTORE_SKIP	15

/* Compress w->page and write header + page; usz and csz get the sizes with
 * the header (for ColumnMetaData's totals).  zstore: the column's
 * (data pages), NULL (dictionary pages: always compressed). */
static int write_page(struct pq_writer *w, int type, size_t nvals, int enc, int *zstore,
		      uint64_t *usz, uint64_t *csz)
{
	if (w->page.oom)
		return oom(w);
	if (w->page.len > INT32_MAX)
		return fail(w, "%s: page over 2 GiB", w->path, NULL);
	size_t bound = ZSTD_compressBound(w->page.len) + 16, cl;
	w->cpage.len = 0;
	if (buf_need(&w->cpage, bound) < 0)
		return oom(w);
	if (zstore && *zstore > 0) {
		(*zstore)--;
		cl = zstd_stored(w->cpage.p, w->page.p, w->page.len);
	} else {
		cl = ZSTD_compressCCtx(w->zc, w->cpage.p, bound, w->page.p, w->page.len, w->level);
		if (ZSTD_isError(cl))
			return fail(w, "%s: zstd: %s", w->path, ZSTD_getErrorName(cl));
		if (zstore && cl > w->page.len - w->page.len / ZSTORE_GAIN)
			*zstore = ZSTORE_SKIP;
	}
	w->hdr.len = 0;
	struct tc t;
	tc_init(&t, &w->hdr);
	tc_i32(&t, 1, type);
	tc_i32(&t, 2, (int32_t)w->page.len);
	tc_i32(&t, 3, (int32_t)cl);
	if (type == PAGE_DATA) {
		tc_begin(&t, 5);
		tc_i32(&t, 1, (int32_t)nvals);
		tc_i32(&t, 2, enc);
		tc_i32(&t, 3, ENC_RLE);
		tc_i32(&t, 4, ENC_RLE);
		tc_end(&t);
	} else {
		tc_begin(&t, 7);
		tc_i32(&t, 1, (int32_t)nvals);
		tc_i32(&t, 2, ENC_PLAIN);
		tc_end(&t);
	}
	buf_byte(&w->hdr, 0);
	if (w->hdr.oom)
		return oom(w);
	if (fwrite(w->hdr.p, 1, w->hdr.len, w->f) != w->hdr.len ||
	    fwrite(w->cpage.p, 1, cl, w->f) != cl)
		return fail(w, "%s: %s", w->path, strerror(errno));
	w->off += w->hdr.len + cl;
	*usz += w->hdr.len + w->page.len;
	*csz += w->hdr.len + cl;
	return 0;
}

/*
 * Integer dictionary of c's chunk: the distinct values, PLAIN, into
 * w->page (in first-seen order) and each value's index into w->didx.
 * Returns the number of distinct values, 0 when there are more than
 * IDICT_MAX (then PLAIN or DELTA does better) or on ENOMEM (w failed).
 * Trace columns (pid, tid, cpu, probe, flags, stack ids, most args) have
 * few values: bit-packed indices are a fraction of the PLAIN bytes, and
 * zstd, the dominant cost, then has that much less to read.
 */
#define IDICT_BITS	16
#define IDICT_MAX	32768
#define DMAP_SIZE	(1u << 18)
/*
 * Set up an integer dictionary of a chunk of n values: the hash table
 * (a new generation), room for n indices in w->didx and for the largest
 * dictionary page.  Returns the dictionary's size limit, 0 on ENOMEM.
 */
static size_t idict_begin(struct pq_writer *w, size_t n)
{
	size_t slots = (size_t)1 << IDICT_BITS;
	if (w->ht == NULL && (w->ht = calloc(slots, sizeof(*w->ht))) == NULL)
		return oom(w), 0;
	if (n > w->didxcap) {
		free(w->didx);
		w->didx = malloc(n * sizeof(*w->didx));
		if (w->didx == NULL) {
			w->didxcap = 0;
			return oom(w), 0;
		}
		w->didxcap = n;
	}
	if (++w->gen == 0) {
		memset(w->ht, 0, slots * sizeof(*w->ht));
		w->gen = 1;
	}
	size_t limit = n / 4 + 1 < IDICT_MAX ? n / 4 + 1 : IDICT_MAX;
	w->page.len = 0;
	if (buf_need(&w->page, limit * 8) < 0)
		return oom(w), 0;
	return limit;
}

/* v's index in the hashed dictionary of nd values; a new value is added
 * (to the table and the page) as index nd, for the caller to count, or
 * is UINT32_MAX when nd is already limit.  (nd by value: the caller keeps
 * its count in a register, not behind a pointer the page's bytes alias.) */
static inline uint32_t idict_hash_get(struct pq_writer *w, uint64_t v, size_t nd, size_t limit,
				      int is64)
{
	size_t mask = ((size_t)1 << IDICT_BITS) - 1;
	size_t h = (size_t)((v * 0x9e3779b97f4a7c15ULL) >> (64 - IDICT_BITS));
	struct islot *sl = &w->ht[h];
	while (sl->gen == w->gen && sl->key != v)
		sl = &w->ht[h = (h + 1) & mask];
	if (sl->gen != w->gen) {
		if (nd == limit)
			return UINT32_MAX;
		*sl = (struct islot){ v, (uint32_t)nd, w->gen };
		memcpy(w->page.p + w->page.len, &v, is64 ? 8 : 4);
		w->page.len += is64 ? 8 : 4;
	}
	return sl->val;
}

static size_t int_dict(struct pq_writer *w, struct col *c, int64_t vmin, int64_t vmax)
{
	size_t limit = idict_begin(w, c->nnn);
	if (limit == 0)
		return 0;
	int is64 = c->type == PQ_INT64;
	const int64_t *v64 = c->vals;
	const int32_t *v32 = c->vals;
	size_t nd = 0;
	uint64_t last = 0;
	uint32_t lastidx = UINT32_MAX;
	uint64_t range = (uint64_t)vmax - (uint64_t)vmin;
	if (range < DMAP_SIZE && range < 4 * (uint64_t)c->nnn + 4096) {
		/*
		 * A small range (ids, pids, cpus, flags): an array, no hashing,
		 * entries in value order (sorted dictionaries: zstd shrinks
		 * the pages a few percent more than in first-seen order).
		 * Entries are index + 1 (0: not seen) in 16 bits (limit <=
		 * IDICT_MAX).  The range is walked and cleared once, so it
		 * must not dwarf the chunk: wide ranges of a few values hash.
		 */
		if (w->dmap == NULL && (w->dmap = calloc(DMAP_SIZE, sizeof(*w->dmap))) == NULL)
			return oom(w), 0;
		uint16_t *dm = w->dmap;
		uint8_t *pg = w->page.p;
		uint32_t *didx = w->didx;
		size_t nnn = c->nnn, span = (size_t)range + 1;
		uint64_t base = (uint64_t)vmin;
		/* mark, number the marks in value order, look up */
		if (is64)
			for (size_t i = 0; i < nnn; i++)
				dm[(uint64_t)v64[i] - base] = 1;
		else
			for (size_t i = 0; i < nnn; i++)
				dm[(uint64_t)(int64_t)v32[i] - base] = 1;
		for (size_t r = 0; r < span; r++) {
			if (dm[r] == 0)
				continue;
			if (nd == limit) {
				memset(dm, 0, span * sizeof(*dm));
				return 0;
			}
			dm[r] = (uint16_t)++nd;
			if (is64) {
				int64_t x = (int64_t)(base + r);
				memcpy(pg + (nd - 1) * 8, &x, 8);
			} else {
				int32_t x = (int32_t)(vmin + (int64_t)r);
				memcpy(pg + (nd - 1) * 4, &x, 4);
			}
		}
		if (is64)
			for (size_t i = 0; i < nnn; i++)
				didx[i] = dm[(uint64_t)v64[i] - base] - 1u;
		else
			for (size_t i = 0; i < nnn; i++)
				didx[i] = dm[(uint64_t)(int64_t)v32[i] - base] - 1u;
		memset(dm, 0, span * sizeof(*dm));
		w->page.len = nd * (is64 ? 8 : 4);
		return nd;
	}
	for (size_t i = 0; i < c->nnn; i++) {
		uint64_t v = is64 ? (uint64_t)v64[i] : (uint64_t)(uint32_t)v32[i];
		if (v == last && lastidx != UINT32_MAX) {
			w->didx[i] = lastidx;
			continue;
		}
		if (i + 16 < c->nnn) {
			/* stack ids miss the cache: fetch a slot ahead */
			uint64_t v2 = is64 ? (uint64_t)v64[i + 16] : (uint64_t)(uint32_t)v32[i + 16];
			__builtin_prefetch(&w->ht[(v2 * 0x9e3779b97f4a7c15ULL) >> (64 - IDICT_BITS)]);
		}
		uint32_t x = idict_hash_get(w, v, nd, limit, is64);
		if (x == UINT32_MAX)
			return 0;
		nd += x == nd;
		w->didx[i] = lastidx = x;
		last = v;
	}
	return nd;
}

/*
 * int_dict for a sparse chunk (INT64, pq_put_scatter64 only): 0 (if any
 * row is 0) and the ns values through the same hash table, then each
 * row's index by filling with 0's and scattering the rest: the cost is
 * ns, not n.
 */
static size_t int_dict_sparse(struct pq_writer *w, struct col *c)
{
	size_t n = c->nnn, limit = idict_begin(w, n), nd = 0;
	if (limit == 0)
		return 0;
	uint32_t *didx = w->didx;
	memset(didx, 0, n * sizeof(*didx));
	uint64_t last = 0;
	uint32_t lastidx = 0;
	int zero_in = c->ns < n;
	if (zero_in) {		/* 0 is index 0: the fill above */
		memset(w->page.p, 0, 8);
		w->page.len = 8;
		nd = 1;
	}
	for (size_t k = 0; k < c->ns; k++) {
		uint64_t v = (uint64_t)c->sval[k];
		if (v == 0 && zero_in) {
			didx[c->srow[k]] = 0;
			continue;
		}
		if (nd && v == last) {
			didx[c->srow[k]] = lastidx;
			continue;
		}
		uint32_t x = idict_hash_get(w, v, nd, limit, 1);
		if (x == UINT32_MAX)
			return 0;
		nd += x == nd;
		didx[c->srow[k]] = lastidx = x;
		last = v;
	}
	return nd;
}

static int cmp_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	/* an empty string may sit at a NULL arena: no memcmp of 0 bytes there */
	size_t l = al < bl ? al : bl;
	int r = l ? memcmp(a, b, l) : 0;
	return r ? r : (al > bl) - (al < bl);
}

/* Write column c's chunk of the row group and its ColumnChunk element. */
static int flush_col(struct pq_writer *w, struct col *c, struct tc *rt,
		     uint64_t *tot_u, uint64_t *tot_c)
{
	uint64_t start = w->off, usz = 0, csz = 0, dict_off = 0, data_off;
	int dict = c->type == PQ_STRING && c->nnn > 0;
	int64_t vmin = 0, vmax = 0;
	uint8_t minb[8], maxb[8];
	const uint8_t *minp = NULL, *maxp = NULL;
	size_t minl = 0, maxl = 0;

	if (dict) {
		w->page.len = 0;
		size_t imin = 0, imax = 0;
		for (size_t i = 0; i < c->ndict; i++) {
			const uint8_t *s = dict_str(c, i);
			buf_u32le(&w->page, c->dlen[i]);
			buf_put(&w->page, s, c->dlen[i]);
			if (cmp_bytes(s, c->dlen[i], dict_str(c, imin), c->dlen[imin]) < 0)
				imin = i;
			if (cmp_bytes(s, c->dlen[i], dict_str(c, imax), c->dlen[imax]) > 0)
				imax = i;
		}
		minp = dict_str(c, imin), minl = c->dlen[imin];
		maxp = dict_str(c, imax), maxl = c->dlen[imax];
		dict_off = w->off;
		if (write_page(w, PAGE_DICTIONARY, c->ndict, ENC_PLAIN, NULL, &usz, &csz) < 0)
			return -1;
	} else if (c->nnn > 0 && c->type == PQ_INT32) {
		int32_t mn = (int32_t)c->vmin, mx = (int32_t)c->vmax;
		memcpy(minb, &mn, 4), memcpy(maxb, &mx, 4);
		vmin = mn, vmax = mx;
		minp = minb, maxp = maxb, minl = maxl = 4;
	} else if (c->nnn > 0 && c->type == PQ_INT64) {
		int64_t mn = c->vmin, mx = c->vmax;
		memcpy(minb, &mn, 8), memcpy(maxb, &mx, 8);
		vmin = mn, vmax = mx;
		minp = minb, maxp = maxb, minl = maxl = 8;
	}

	size_t nidict = 0;
	if (c->type != PQ_STRING && c->nnn > 0 && !c->nodict) {
		nidict = c->sparse ? int_dict_sparse(w, c) : int_dict(w, c, vmin, vmax);
		if (w->failed)
			return -1;
		if (nidict == 0) {
			c->nodict = 1;	/* the next chunks will not do better */
			if (densify(w, c) < 0)
				return -1;
		} else {
			dict = 1;
			dict_off = w->off;
			if (write_page(w, PAGE_DICTIONARY, nidict, ENC_PLAIN, NULL, &usz, &csz) < 0)
				return -1;
		}
	}

	w->page.len = 0;
	if (c->nullable) {
		size_t at = w->page.len;
		buf_u32le(&w->page, 0);
		hybrid_u8(&w->page, c->def, c->n, 1);
		if (!w->page.oom) {
			uint32_t l = (uint32_t)(w->page.len - at - 4);
			memcpy(w->page.p + at, &l, 4);
		}
	}
	int enc = ENC_PLAIN;
	if (dict) {
		size_t nd = nidict ? nidict : c->ndict;
		unsigned bw = 1;
		while (bw < 32 && (nd - 1) >> bw)
			bw++;
		buf_byte(&w->page, (uint8_t)bw);
		hybrid_u32(&w->page, nidict ? w->didx : c->vals, c->nnn, bw);
		enc = ENC_RLE_DICTIONARY;
	} else if (c->type != PQ_STRING && c->nnn > 0) {
		if (!c->decided) {
			c->intenc = w->plain_ints ? ENC_PLAIN : int_encoding(w, c);
			c->decided = 1;
		}
		if (c->intenc == ENC_DELTA_BINARY_PACKED)
			delta_encode(&w->page, c->vals, c->nnn, c->type == PQ_INT64);
		else
			plain_ints(w, c, c->nnn);
		enc = c->intenc;
	}
	data_off = w->off;
	if (write_page(w, PAGE_DATA, c->n, enc, &c->zstore, &usz, &csz) < 0)
		return -1;

	/* ColumnChunk */
	tc_begin(rt, 0);
	tc_i64(rt, 2, (int64_t)start);
	tc_begin(rt, 3);			/* ColumnMetaData */
	tc_i32(rt, 1, c->type == PQ_INT32 ? T_INT32 : c->type == PQ_INT64 ? T_INT64 : T_BYTE_ARRAY);
	int encs[3], ne = 0;
	encs[ne++] = enc == ENC_DELTA_BINARY_PACKED ? enc : ENC_PLAIN;
	if (dict)
		encs[ne++] = ENC_RLE_DICTIONARY;
	if (c->nullable)
		encs[ne++] = ENC_RLE;
	tc_list(rt, 2, TC_I32, ne);
	for (int i = 0; i < ne; i++)
		buf_varint(rt->b, (uint32_t)(encs[i] << 1));
	tc_list(rt, 3, TC_BINARY, 1);
	buf_varint(rt->b, strlen(c->name));
	buf_put(rt->b, c->name, strlen(c->name));
	tc_i32(rt, 4, CODEC_ZSTD);
	tc_i64(rt, 5, (int64_t)c->n);
	tc_i64(rt, 6, (int64_t)usz);
	tc_i64(rt, 7, (int64_t)csz);
	tc_i64(rt, 9, (int64_t)data_off);
	if (dict)
		tc_i64(rt, 11, (int64_t)dict_off);
	tc_begin(rt, 12);			/* Statistics */
	tc_i64(rt, 3, (int64_t)(c->n - c->nnn));
	if (c->nnn > 0) {	/* (an empty string's pointer may be NULL) */
		tc_bin(rt, 5, maxp, maxl);
		tc_bin(rt, 6, minp, minl);
	}
	tc_end(rt);
	tc_end(rt);				/* ColumnMetaData */
	tc_end(rt);				/* ColumnChunk */
	*tot_u += usz;
	*tot_c += csz;

	/* reset for the next row group */
	if (c->ext)
		for (size_t i = 0; i < c->ndict; i++)
			c->ext2loc[c->dent[i]] = -1;
	else
		dt_htab_clear(&c->ht);
	c->ndict = 0;
	c->arena.len = 0;
	c->n = c->nnn = 0;
	c->ns = 0;
	c->sparse = 0;
	return 0;
}

static int flush_rowgroup(struct pq_writer *w)
{
	if (w->rg_rows == 0)
		return 0;
	uint64_t start = w->off, tot_u = 0, tot_c = 0;
	struct tc t;
	tc_init(&t, &w->rgbuf);
	tc_begin(&t, 0);			/* RowGroup, a list element */
	tc_list(&t, 1, TC_STRUCT, w->ncols);
	for (unsigned i = 0; i < w->ncols; i++)
		if (flush_col(w, &w->cols[i], &t, &tot_u, &tot_c) < 0)
			return -1;
	tc_i64(&t, 2, (int64_t)tot_u);
	tc_i64(&t, 3, (int64_t)w->rg_rows);
	tc_i64(&t, 5, (int64_t)start);
	tc_i64(&t, 6, (int64_t)tot_c);
	if (w->nrg <= INT16_MAX)
		tc_i16(&t, 7, (int16_t)w->nrg);
	tc_end(&t);
	if (w->rgbuf.oom)
		return oom(w);
	w->nrg++;
	w->rows_done += w->rg_rows;
	w->rg_rows = 0;
	return 0;
}

int pq_rows_done(struct pq_writer *w)
{
	if (w->failed)
		return -1;
	size_t n = w->cols[0].n;
	for (unsigned i = 1; i < w->ncols; i++)
		if (w->cols[i].n != n)
			return fail(w, "%s: column %s: row count differs from the first column",
				    w->path, w->cols[i].name);
	w->rg_rows = n;
	if (n >= w->rg_limit)
		return flush_rowgroup(w);
	return 0;
}

uint64_t pq_rows(const struct pq_writer *w)
{
	return w->rows_done + w->rg_rows;
}

static int write_footer(struct pq_writer *w)
{
	struct buf fb = { 0 };
	struct tc t;
	tc_init(&t, &fb);
	tc_i32(&t, 1, 1);			/* version */
	tc_list(&t, 2, TC_STRUCT, w->ncols + 1);
	tc_begin(&t, 0);			/* root */
	tc_bin(&t, 4, "schema", 6);
	tc_i32(&t, 5, (int32_t)w->ncols);
	tc_end(&t);
	for (unsigned i = 0; i < w->ncols; i++) {
		const struct col *c = &w->cols[i];
		tc_begin(&t, 0);
		tc_i32(&t, 1, c->type == PQ_INT32 ? T_INT32 : c->type == PQ_INT64 ? T_INT64 : T_BYTE_ARRAY);
		tc_i32(&t, 3, c->nullable ? REP_OPTIONAL : REP_REQUIRED);
		tc_bin(&t, 4, c->name, strlen(c->name));
		if (c->type == PQ_STRING) {
			tc_i32(&t, 6, CONV_UTF8);
			tc_begin(&t, 10);	/* LogicalType */
			tc_begin(&t, 1);	/* STRING */
			tc_end(&t);
			tc_end(&t);
		} else {
			tc_begin(&t, 10);
			tc_begin(&t, 10);	/* INTEGER */
			tc_i8(&t, 1, c->type == PQ_INT32 ? 32 : 64);
			tc_bool(&t, 2, 1);
			tc_end(&t);
			tc_end(&t);
		}
		tc_end(&t);
	}
	tc_i64(&t, 3, (int64_t)w->rows_done);
	tc_list(&t, 4, TC_STRUCT, w->nrg);
	buf_put(&fb, w->rgbuf.p, w->rgbuf.len);
	tc_bin(&t, 6, w->created_by, strlen(w->created_by));
	tc_list(&t, 7, TC_STRUCT, w->ncols);	/* column_orders: TYPE_ORDER */
	for (unsigned i = 0; i < w->ncols; i++) {
		tc_begin(&t, 0);
		tc_begin(&t, 1);		/* TYPE_ORDER */
		tc_end(&t);
		tc_end(&t);
	}
	buf_byte(&fb, 0);
	if (fb.oom || fb.len > UINT32_MAX) {
		buf_free(&fb);
		return oom(w);
	}
	uint32_t len = (uint32_t)fb.len;
	int ok = fwrite(fb.p, 1, fb.len, w->f) == fb.len &&
		 fwrite(&len, 1, 4, w->f) == 4 && fwrite("PAR1", 1, 4, w->f) == 4;
	buf_free(&fb);
	if (!ok)
		return fail(w, "%s: %s", w->path, strerror(errno));
	w->off += len + 8;
	return 0;
}

int pq_close(struct pq_writer *w, char **err)
{
	if (err)
		*err = NULL;
	int rc = -1;
	if (!w->failed && pq_rows_done(w) == 0 && flush_rowgroup(w) == 0 &&
	    write_footer(w) == 0)
		rc = 0;
	if (fclose(w->f) != 0 && rc == 0)
		rc = fail(w, "%s: %s", w->path, strerror(errno));
	w->f = NULL;
	if (rc < 0 && err)
		*err = strdup(w->err);
	writer_free(w);
	return rc;
}

void pq_abort(struct pq_writer *w)
{
	if (w == NULL)
		return;
	if (w->f)
		fclose(w->f);
	writer_free(w);
}
