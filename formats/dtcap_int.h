/*
 * dtcap_int.h - private to libdtcap: on-disk constants and the byte-level
 * helpers shared by the writer and the reader.  FORMAT.md is the spec; the
 * numbers here must match it.
 */
#ifndef DTCAP_INT_H
#define DTCAP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DTC_MAGIC		"\x89" "DTCAP\r\n"	/* 8 bytes, like PNG's */
#define DTC_MAGIC_LEN		8
#define DTC_VERSION		3	/* the last number: later changes are feature bits */
#define DTC_VERSION_OLD		2	/* still read: 16-byte header, whole-chunk sums */
#define DTC_FILEHDR_LEN		32	/* magic, version, hlen, compat, incompat, 0, hsum */
#define DTC_FILEHDR_LEN_V2	16	/* magic, u32 version, u32 zero */
/* Feature bits.  Compatible: a reader that lacks one may still read the
 * file (it only misses that information).  Incompatible: it must refuse. */
#define DTC_FC_CTXCOL		0x1	/* event blocks carry column 32 (ctx) */
#define DTC_FC_CLOCKS		0x2	/* CNTR chunks carry a clock pair */
#define DTC_FC_USTACK		0x4	/* USTK chunks: the recorder's user-stack tally */
#define DTC_FC_BSUM		0x10	/* BSUM chunks: a summary after each event block */
#define DTC_FC_KNOWN		(DTC_FC_CTXCOL | DTC_FC_CLOCKS | DTC_FC_USTACK | DTC_FC_BSUM)
#define DTC_FI_KNOWN		0

#define DTC_CHDR_LEN		32
#define DTC_TRAILER_LEN		32
#define DTC_TRAILER_MAGIC	"DTCEND01"

/* Chunk types: four ASCII bytes, stored as a little-endian u32. */
#define DTC_FOURCC(a, b, c, d) \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define DTC_HOST	DTC_FOURCC('H', 'O', 'S', 'T')
#define DTC_PROB	DTC_FOURCC('P', 'R', 'O', 'B')
#define DTC_KSYM	DTC_FOURCC('K', 'S', 'Y', 'M')
#define DTC_MODS	DTC_FOURCC('M', 'O', 'D', 'S')
#define DTC_KSYC	DTC_FOURCC('K', 'S', 'Y', 'C')	/* kallsyms, columns */
#define DTC_FILE	DTC_FOURCC('F', 'I', 'L', 'E')
#define DTC_PROC	DTC_FOURCC('P', 'R', 'O', 'C')
#define DTC_COMM	DTC_FOURCC('C', 'O', 'M', 'M')
#define DTC_STCK	DTC_FOURCC('S', 'T', 'C', 'K')
#define DTC_EVNT	DTC_FOURCC('E', 'V', 'N', 'T')
#define DTC_CNTR	DTC_FOURCC('C', 'N', 'T', 'R')
#define DTC_USTK	DTC_FOURCC('U', 'S', 'T', 'K')
#define DTC_BSUM	DTC_FOURCC('B', 'S', 'U', 'M')	/* block summary */
#define DTC_FOOT	DTC_FOURCC('F', 'O', 'O', 'T')
#define DTC_SRCL	DTC_FOURCC('S', 'R', 'C', 'L')	/* source lines, inline chains */

/* Chunk flags */
#define DTC_CF_ZSTD	0x1	/* payload is one zstd frame of ulen bytes */
#define DTC_CF_XSUM	0x2	/* psum covers the extra header only; it holds
				 * the payload's own checksums (EVNT, v3) */

/* Sanity limits: anything above is damage, never an allocation. */
#define DTC_MAX_XLEN		4096
#define DTC_MAX_ULEN		(1U << 30)
#define DTC_MAX_ROWS		(1U << 20)
#define DTC_MAX_STRING		(1U << 20)

/*
 * Event block columns, in on-disk id order.  pid..flags are not stored per
 * row: each distinct (pid, tid, probe, comm, kstack, ustack, flags) tuple
 * of a block is stored once, in order of first appearance, and CTX gives
 * each row's tuple index.  A profile repeats a few thousand such contexts
 * over and over, so this is both smaller and faster than seven columns.
 */
enum {
	DTC_C_TS, DTC_C_CPU, DTC_C_CTX,
	DTC_C_PID, DTC_C_TID, DTC_C_PROBE, DTC_C_COMM,	/* ndict values each */
	DTC_C_KSTACK, DTC_C_USTACK, DTC_C_FLAGS,
	DTC_C_NARGS,
	DTC_C_ARG0,	/* .. DTC_C_ARG0 + 9; ids up to 31 kept for slots */
	DTC_NCOLS = DTC_C_ARG0 + 10,	/* ids a version-2 block may have */
	DTC_C_XCTX = 32,	/* execution context, ndict values (v3) */
};
#define DTC_MAX_COLS		64	/* directory entries of one block */
#define DTC_NDICT	7	/* pid .. flags */
/* Column segment storage methods */
#define DTC_M_RAW	0
#define DTC_M_ZSTD	1
/* Block extra header: rows, tmin, tmax, pidmin, pidmax, ndict, ncols, then
 * per column: id u8, method u8, rawlen u32, storedlen u32 (v3: then u64
 * XXH3-64 of the stored segment). */
#define DTC_BLK_FIXED	(4 + 8 + 8 + 4 + 4 + 4 + 1)
#define DTC_BLK_COLDIR_V2	10
#define DTC_BLK_COLDIR	18

static inline void dtc_le32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static inline void dtc_le64(uint8_t *p, uint64_t v)
{
	dtc_le32(p, (uint32_t)v);
	dtc_le32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t dtc_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
static inline uint64_t dtc_rd64(const uint8_t *p)
{
	return dtc_rd32(p) | (uint64_t)dtc_rd32(p + 4) << 32;
}
static inline uint64_t dtc_zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t dtc_unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Growable output buffer.  On ENOMEM it sets err and drops writes, so a
 * whole serialization can be checked once at the end. */
struct dtc_buf {
	uint8_t	*p;
	size_t	len, cap;
	int	err;
};
int dtc_buf_reserve(struct dtc_buf *b, size_t more);
void dtc_buf_put(struct dtc_buf *b, const void *p, size_t n);
void dtc_buf_u8(struct dtc_buf *b, uint8_t v);
void dtc_buf_u32(struct dtc_buf *b, uint32_t v);
void dtc_buf_u64(struct dtc_buf *b, uint64_t v);
void dtc_buf_uv(struct dtc_buf *b, uint64_t v);	/* LEB128 varint */
void dtc_buf_str(struct dtc_buf *b, const char *s);	/* uv length, bytes */
/* At most max bytes of s: the writer cuts every string to the limit the
 * reader enforces (FORMAT.md), so no caller input makes an unreadable file. */
void dtc_buf_strn(struct dtc_buf *b, const char *s, size_t max);
#define DTC_MAX_PATH	4096
void dtc_buf_free(struct dtc_buf *b);

/* Bounded input cursor: every read past end sets err and yields zeros. */
struct dtc_cur {
	const uint8_t	*p, *end;
	int		err;
};
uint8_t dtc_get_u8(struct dtc_cur *c);
uint32_t dtc_get_u32(struct dtc_cur *c);
uint64_t dtc_get_u64(struct dtc_cur *c);
/* LEB128, at most 10 bytes, the 10th 0 or 1 (a value past 64 bits is an
 * error, never silently cut).  Inline for the common short forms: stacks
 * and symbol tables are hundreds of thousands of varints. */
uint64_t dtc_get_uv_slow(struct dtc_cur *c);
static inline uint64_t dtc_get_uv(struct dtc_cur *c)
{
	const uint8_t *p = c->p;
	if (c->end - p >= 10 && !c->err) {
		uint64_t v = 0;
		for (int i = 0; i < 9; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				c->p = p + i + 1;
				return v;
			}
		}
	}
	return dtc_get_uv_slow(c);
}
/* A string of at most max bytes (not NUL-terminated on disk); returns a
 * pointer into the input and its length, or NULL with err set. */
const char *dtc_get_str(struct dtc_cur *c, size_t max, size_t *len);
const uint8_t *dtc_get_bytes(struct dtc_cur *c, size_t n);

/* "prefix: message" into buf, cut to size.  A path may be longer than the
 * buffer: the message part then gets whatever room is left (maybe none),
 * never an offset past the end. */
#include <stdarg.h>
void dtc_vfmt(char *buf, size_t size, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
void dtc_fmt(char *buf, size_t size, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Checksums over stored bytes (XXH3-64). */
uint32_t dtc_hdr_sum(const uint8_t *hdr);	/* over hdr[0..28) */
const char *dtc_type_name(uint32_t type, char buf[8]);

/* Column codecs (dtcap_col.c). */
void dtc_enc_u32(struct dtc_buf *b, const uint32_t *v, uint32_t n);
void dtc_enc_u64(struct dtc_buf *b, const uint64_t *v, uint32_t n);
/* Decode exactly n values; -1 if the encoded bytes do not say so. */
int dtc_dec_u32(const uint8_t *p, size_t len, uint32_t *out, uint32_t n);
int dtc_dec_u64(const uint8_t *p, size_t len, uint64_t *out, uint32_t n);
/* A u32 column decoded a range of rows at a time, so a reader can use each
 * range while it is in the L1 cache instead of writing the whole column
 * and reading it back.  open checks the header and length as dtc_dec_u32
 * does (-1: damage); get fills out[k0 .. k1) and returns the largest value
 * it wrote (0 if none), for the caller's bound check. */
struct dtc_u32col {
	const uint8_t	*s;	/* the byte planes */
	uint32_t	n, lo;
	unsigned	w;
};
int dtc_u32col_open(struct dtc_u32col *c, const uint8_t *p, size_t len, uint32_t n);
uint32_t dtc_u32col_get(const struct dtc_u32col *c, uint32_t *out, uint32_t k0, uint32_t k1);
/* The same, rows k0 .. k1 - 1 into out[0 .. k1 - k0 - 1] (a tile buffer). */
uint32_t dtc_u32col_tile(const struct dtc_u32col *c, uint32_t *out, uint32_t k0, uint32_t k1);
/* The ts column: U64 of zigzag deltas from t (tmin) -> times, their range. */
int dtc_dec_ts(const uint8_t *p, size_t len, uint64_t *out, uint32_t n, uint64_t t,
	       uint64_t *min, uint64_t *max);

/* kallsyms text <-> compact columns (dtcap_ksym.c).  encode appends to
 * out and returns 0 only if decoding gives the text back exactly; decode
 * returns malloc'd NUL-terminated text or NULL if p is not well formed. */
int dtc_ksym_encode(const char *text, size_t len, struct dtc_buf *out);
char *dtc_ksym_decode(const uint8_t *p, size_t len, size_t *olen);

/* Fill the empty machine fields of h from this machine (dtcap_host.c). */
struct dtcap_host;
void dtc_host_machine(struct dtcap_host *h);

/*
 * Block summaries (dtcap_bsum.c).  Build: the BSUM payload of the block
 * at file offset evnt_off from its rows' CPUs, context numbers and the
 * contexts' pid, probe and comm.  Parse: check one against its block
 * (rows, pid range) and the comm table; vals gets the four lists
 * (probe, events), (cpu, events), (comm, events), (pid, events, comm)
 * back to back, room for 9 * rows values or as many as cu has bytes left,
 * whichever is fewer (a value takes one byte at least); n their lengths.  -1 on ENOMEM
 * (build) or a payload that does not parse or add up (parse).
 */
struct bs_ent;
struct dtc_bsum_scratch {		/* the builder's, kept between blocks */
	uint32_t	*cpucnt;	/* by CPU, all zero between calls */
	struct bs_ent	*v;		/* groups, at most one a context */
	uint32_t	*cnt, *last;	/* by context: rows, last row */
	uint32_t	*slot;		/* hash of the groups, entry + 1, zero between lists */
	uint32_t	cap, nslot;	/* contexts the arrays hold; slots */
};
int dtc_bsum_build(struct dtc_buf *out, uint64_t evnt_off, uint32_t rows, const uint32_t *cpu,
		   const uint32_t *idx, uint32_t nd, const uint32_t *pid, const uint32_t *probe,
		   const uint32_t *comm, struct dtc_bsum_scratch *sc);
void dtc_bsum_scratch_free(struct dtc_bsum_scratch *sc);
int dtc_bsum_parse(struct dtc_cur *cu, uint32_t rows, uint32_t pid_min, uint32_t pid_max,
		   uint32_t ncomms, uint64_t *vals, uint32_t n[4]);

#endif /* DTCAP_INT_H */
