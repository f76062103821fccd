/*
 * dtcap_util.c - byte buffers, bounded cursors, checksums and the column
 * codecs shared by the capture writer and reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dt_grow.h"
#include "dtcap_int.h"

void dtc_vfmt(char *buf, size_t size, const char *prefix, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t pl = strlen(prefix), ml = strlen(msg);
	if (pl + 2 + ml < size) {
		snprintf(buf, size, "%s: %s", prefix, msg);
		return;
	}
	/* the message matters more than the start of a very long path:
	 * keep the path's tail ("...dir/cap.dtc") */
	size_t room = size > ml + 6 ? size - ml - 6 : 0;
	if (room > pl)
		room = pl;
	snprintf(buf, size, "...%s: %s", prefix + pl - room, msg);
}

void dtc_fmt(char *buf, size_t size, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dtc_vfmt(buf, size, prefix, fmt, ap);
	va_end(ap);
}

int dtc_buf_reserve(struct dtc_buf *b, size_t more)
{
	if (b->err)
		return -1;
	if (DT_GROW(b->p, b->cap, b->len, more, 256)) {
		b->err = 1;
		return -1;
	}
	return 0;
}

void dtc_buf_put(struct dtc_buf *b, const void *p, size_t n)
{
	if (n == 0 || dtc_buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void dtc_buf_u8(struct dtc_buf *b, uint8_t v)
{
	dtc_buf_put(b, &v, 1);
}

void dtc_buf_u32(struct dtc_buf *b, uint32_t v)
{
	uint8_t t[4];
	dtc_le32(t, v);
	dtc_buf_put(b, t, 4);
}

void dtc_buf_u64(struct dtc_buf *b, uint64_t v)
{
	uint8_t t[8];
	dtc_le64(t, v);
	dtc_buf_put(b, t, 8);
}

void dtc_buf_uv(struct dtc_buf *b, uint64_t v)
{
	uint8_t t[10];
	int n = 0;
	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	dtc_buf_put(b, t, n);
}

void dtc_buf_str(struct dtc_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	dtc_buf_uv(b, n);
	dtc_buf_put(b, s, n);
}

void dtc_buf_strn(struct dtc_buf *b, const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;
	dtc_buf_uv(b, n);
	dtc_buf_put(b, s, n);
}

void dtc_buf_free(struct dtc_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

const uint8_t *dtc_get_bytes(struct dtc_cur *c, size_t n)
{
	if (c->err || (size_t)(c->end - c->p) < n) {
		c->err = 1;
		return NULL;
	}
	const uint8_t *p = c->p;
	c->p += n;
	return p;
}

uint8_t dtc_get_u8(struct dtc_cur *c)
{
	const uint8_t *p = dtc_get_bytes(c, 1);
	return p ? p[0] : 0;
}

uint32_t dtc_get_u32(struct dtc_cur *c)
{
	const uint8_t *p = dtc_get_bytes(c, 4);
	return p ? dtc_rd32(p) : 0;
}

uint64_t dtc_get_u64(struct dtc_cur *c)
{
	const uint8_t *p = dtc_get_bytes(c, 8);
	return p ? dtc_rd64(p) : 0;
}

uint64_t dtc_get_uv_slow(struct dtc_cur *c)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (c->err || c->p >= c->end) {
			c->err = 1;
			return 0;
		}
		uint8_t x = *c->p++;
		/* the 10th byte holds bit 63 only: more would overflow */
		if (shift == 63 && x > 1)
			break;
		v |= (uint64_t)(x & 0x7f) << shift;
		if (!(x & 0x80))
			return v;
	}
	c->err = 1;	/* more than 10 bytes or past 64 bits: not a varint */
	return 0;
}

const char *dtc_get_str(struct dtc_cur *c, size_t max, size_t *len)
{
	uint64_t n = dtc_get_uv(c);
	if (c->err || n > max) {
		c->err = 1;
		return NULL;
	}
	const uint8_t *p = dtc_get_bytes(c, n);
	if (!p)
		return NULL;
	/* an embedded NUL would make the C string silently shorter */
	if (memchr(p, 0, n)) {
		c->err = 1;
		return NULL;
	}
	*len = n;
	return (const char *)p;
}

uint32_t dtc_hdr_sum(const uint8_t *hdr)
{
	return (uint32_t)XXH3_64bits(hdr, 28);
}

const char *dtc_type_name(uint32_t type, char buf[8])
{
	for (int i = 0; i < 4; i++) {
		uint8_t c = type >> (8 * i);
		buf[i] = (c >= 'A' && c <= 'Z') ? (char)c : '?';
	}
	buf[4] = 0;
	return buf;
}

/*
 * Column codec: "frame of reference + byte planes".  Values minus their
 * minimum are stored at the smallest byte width that holds the range, one
 * plane per byte (all low bytes, then all next bytes, ...).  Planes put
 * bytes of equal significance together, which is what lets zstd crush the
 * high bytes of ids and timestamps, and decoding is a branch-free loop.
 *	u32 column: u8 width (0..4), u32 base, width * n bytes
 *	u64 column: u8 width (0..8), u64 base, width * n bytes
 */
static unsigned width_of(uint64_t range)
{
	unsigned w = 0;
	while (range) {
		w++;
		range >>= 8;
	}
	return w;
}

void dtc_enc_u32(struct dtc_buf *b, const uint32_t *v, uint32_t n)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (n == 0)
		lo = hi = 0;
	unsigned w = width_of(hi - lo);
	dtc_buf_u8(b, (uint8_t)w);
	dtc_buf_u32(b, lo);
	if (dtc_buf_reserve(b, (size_t)w * n))
		return;
	uint8_t *o = b->p + b->len;
	switch (w) {
	case 1:
		for (uint32_t i = 0; i < n; i++)
			o[i] = (uint8_t)(v[i] - lo);
		break;
	case 2:
		for (uint32_t i = 0; i < n; i++) {
			uint32_t x = v[i] - lo;
			o[i] = (uint8_t)x;
			o[n + i] = (uint8_t)(x >> 8);
		}
		break;
	default:
		for (uint32_t i = 0; i < n; i++) {
			uint32_t x = v[i] - lo;
			for (unsigned k = 0; k < w; k++)
				o[(size_t)k * n + i] = (uint8_t)(x >> (8 * k));
		}
	}
	b->len += (size_t)w * n;
}

void dtc_enc_u64(struct dtc_buf *b, const uint64_t *v, uint32_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (n == 0)
		lo = hi = 0;
	unsigned w = width_of(hi - lo);
	dtc_buf_u8(b, (uint8_t)w);
	dtc_buf_u64(b, lo);
	if (dtc_buf_reserve(b, (size_t)w * n))
		return;
	uint8_t *o = b->p + b->len;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t x = v[i] - lo;
		for (unsigned k = 0; k < w; k++)
			o[(size_t)k * n + i] = (uint8_t)(x >> (8 * k));
	}
	b->len += (size_t)w * n;
}

int dtc_u32col_open(struct dtc_u32col *c, const uint8_t *p, size_t len, uint32_t n)
{
	if (len < 5)
		return -1;
	c->w = p[0];
	c->lo = dtc_rd32(p + 1);
	c->n = n;
	c->s = p + 5;
	if (c->w > 4 || len != 5 + (size_t)c->w * n)
		return -1;
	return 0;
}

/* The planes' bytes widened without the base, their largest value in mx,
 * and the base added in a second pass over the range (in L1): the first
 * loop then has no carry out of 32 bits to care about. */
static inline uint32_t u32col_get(const struct dtc_u32col *c, uint32_t *out, uint32_t k0,
				  uint32_t k1, uint32_t o)
{
	const uint8_t *s = c->s;
	size_t n = c->n;
	uint32_t lo = c->lo, mx = 0;
	if (k0 >= k1)
		return 0;
	switch (c->w) {
	case 0:
		for (uint32_t i = k0; i < k1; i++)
			out[i - o] = lo;
		return lo;
	case 1:
		for (uint32_t i = k0; i < k1; i++) {
			uint32_t v = s[i];
			mx = v > mx ? v : mx;
			out[i - o] = lo + v;
		}
		break;
	case 2:
		for (uint32_t i = k0; i < k1; i++) {
			uint32_t v = s[i] | (uint32_t)s[n + i] << 8;
			mx = v > mx ? v : mx;
			out[i - o] = lo + v;
		}
		break;
	case 3:
		for (uint32_t i = k0; i < k1; i++) {
			uint32_t v = s[i] | (uint32_t)s[n + i] << 8 | (uint32_t)s[2 * n + i] << 16;
			mx = v > mx ? v : mx;
			out[i - o] = lo + v;
		}
		break;
	default:
		for (uint32_t i = k0; i < k1; i++) {
			uint32_t v = s[i] | (uint32_t)s[n + i] << 8 | (uint32_t)s[2 * n + i] << 16 |
				     (uint32_t)s[3 * n + i] << 24;
			mx = v > mx ? v : mx;
			out[i - o] = lo + v;
		}
	}
	/* lo + mx may wrap past 2^32 on damaged input: then the largest
	 * value is not lo + mx; report "too big" rather than a wrapped one */
	return mx > UINT32_MAX - lo ? UINT32_MAX : lo + mx;
}

uint32_t dtc_u32col_get(const struct dtc_u32col *c, uint32_t *out, uint32_t k0, uint32_t k1)
{
	return u32col_get(c, out, k0, k1, 0);
}

uint32_t dtc_u32col_tile(const struct dtc_u32col *c, uint32_t *out, uint32_t k0, uint32_t k1)
{
	return u32col_get(c, out, k0, k1, k0);
}

int dtc_dec_u32(const uint8_t *p, size_t len, uint32_t *out, uint32_t n)
{
	if (len < 5)
		return -1;
	unsigned w = p[0];
	uint32_t lo = dtc_rd32(p + 1);
	if (w > 4 || len != 5 + (size_t)w * n)
		return -1;
	const uint8_t *s = p + 5;
	switch (w) {
	case 0:
		for (uint32_t i = 0; i < n; i++)
			out[i] = lo;
		break;
	case 1:
		for (uint32_t i = 0; i < n; i++)
			out[i] = lo + s[i];
		break;
	case 2:
		for (uint32_t i = 0; i < n; i++)
			out[i] = lo + (s[i] | (uint32_t)s[n + i] << 8);
		break;
	case 3:
		for (uint32_t i = 0; i < n; i++)
			out[i] = lo + (s[i] | (uint32_t)s[n + i] << 8 |
				       (uint32_t)s[2 * (size_t)n + i] << 16);
		break;
	default:
		for (uint32_t i = 0; i < n; i++)
			out[i] = lo + (s[i] | (uint32_t)s[n + i] << 8 |
				       (uint32_t)s[2 * (size_t)n + i] << 16 |
				       (uint32_t)s[3 * (size_t)n + i] << 24);
	}
	return 0;
}

int dtc_dec_u64(const uint8_t *p, size_t len, uint64_t *out, uint32_t n)
{
	if (len < 9)
		return -1;
	unsigned w = p[0];
	uint64_t lo = dtc_rd64(p + 1);
	if (w > 8 || len != 9 + (size_t)w * n)
		return -1;
	const uint8_t *s = p + 9;
	for (uint32_t i = 0; i < n; i++)
		out[i] = lo;
	for (unsigned k = 0; k < w; k++) {
		const uint8_t *pl = s + (size_t)k * n;
		unsigned sh = 8 * k;
		for (uint32_t i = 0; i < n; i++)
			out[i] += (uint64_t)pl[i] << sh;
	}
	return 0;
}

/*
 * The ts column in one pass: byte planes, zigzag, running sum from tmin.
 * Same rules as dtc_dec_u64 (which this is, followed by the prefix sum);
 * one pass instead of w + 2 over a block that does not fit the L1 cache.
 * The width is a constant in each case so the plane loop unrolls.
 *
 * The smallest and largest time: recorders write rows in time order, so
 * the loop only ORs the deltas' sign bits (zigzag's low bit) instead of
 * keeping two running extremes; with no negative delta the first and last
 * rows are the extremes (unless the sum could have wrapped past 2^64,
 * which only damage does), else a second pass finds them.
 */
#define TS_LOOP(W) do {							\
	for (uint32_t i = 0; i < n; i++) {				\
		uint64_t v = 0;						\
		_Pragma("GCC unroll 8")					\
		for (unsigned k = 0; k < (W); k++)			\
			v |= (uint64_t)s[(size_t)k * n + i] << (8 * k);	\
		v += base;						\
		neg |= v;						\
		t += (uint64_t)dtc_unzz(v);				\
		out[i] = t;						\
	}								\
} while (0)

int dtc_dec_ts(const uint8_t *p, size_t len, uint64_t *out, uint32_t n, uint64_t t,
	       uint64_t *min, uint64_t *max)
{
	if (len < 9)
		return -1;
	unsigned w = p[0];
	uint64_t base = dtc_rd64(p + 1), lo = UINT64_MAX, hi = 0, neg = 0, t0 = t;
	if (w > 8 || len != 9 + (size_t)w * n)
		return -1;
	const uint8_t *s = p + 9;
	switch (w) {
	case 0: {
		uint64_t v = base;
		neg |= v;
		for (uint32_t i = 0; i < n; i++) {
			t += (uint64_t)dtc_unzz(v);
			out[i] = t;
		}
		break;
	}
	case 1: TS_LOOP(1); break;
	case 2: TS_LOOP(2); break;
	case 3: TS_LOOP(3); break;
	case 4: TS_LOOP(4); break;
	case 5: TS_LOOP(5); break;
	case 6: TS_LOOP(6); break;
	case 7: TS_LOOP(7); break;
	default: TS_LOOP(8); break;
	}
	/* neg ORs every zigzag value, so no delta exceeds neg >> 1: when
	 * n of those from the start cannot pass 2^64, the sum never wrapped */
	uint64_t room;
	if (n && !(neg & 1) && !__builtin_mul_overflow((uint64_t)n, neg >> 1, &room) &&
	    !__builtin_add_overflow(t0, room, &room)) {
		/* no delta below zero and no wrap: never decreasing */
		lo = out[0];
		hi = out[n - 1];
	} else {
		for (uint32_t i = 0; i < n; i++) {
			lo = out[i] < lo ? out[i] : lo;
			hi = out[i] > hi ? out[i] : hi;
		}
	}
	*min = lo;
	*max = hi;
	return 0;
}

const char *dtcap_ctx_name(unsigned ctx)
{
	static const char *const names[] = { "task", "softirq", "hardirq", "nmi" };

	return ctx < sizeof(names) / sizeof(names[0]) ? names[ctx] : NULL;
}
