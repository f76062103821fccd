/*
 * pqbits.c - parquet.c's RLE/bit-packing hybrid encoder against a plain
 * reference, for every bit width 1..32: the writer packs with one code
 * path per constant width, and traces only reach the small widths
 * (dictionaries of at most a few thousand entries), so the wide ones are
 * proven here; and the raw-block zstd frames of pages zstd cannot shrink,
 * decoded by libzstd at block-size edges.  Includes parquet.c to reach
 * its static encoders.
 *
 * Prints "PASS name" / "FAIL name: why" lines (tests/export/run.sh).
 */
#include "../../formats/parquet/parquet.c"
#include "../xorshift.h"
#include "../check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
	return xorshift64(&rng);
}

static void bad(const char *name, unsigned bw, size_t n, const char *why)
{
	checkf(name, 0, "width %u, %zu values: %s", bw, n, why);
}

/* Reference: n values of bw bits, LSB first, one bit at a time. */
static void ref_pack(uint8_t *o, const uint32_t *v, size_t n, unsigned bw)
{
	memset(o, 0, (n * bw + 7) / 8);
	for (size_t i = 0; i < n; i++)
		for (unsigned b = 0; b < bw; b++)
			if (v[i] >> b & 1)
				o[(i * bw + b) / 8] |= (uint8_t)(1u << ((i * bw + b) % 8));
}

static uint64_t get_varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	for (unsigned s = 0; *p < end && s < 64; s += 7) {
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* Decode a hybrid stream as a reader does (Encodings.md); 0 if it holds
 * exactly v[0..n-1]. */
static int ref_unhybrid(const uint8_t *p, const uint8_t *end, const uint32_t *v, size_t n,
			unsigned bw)
{
	size_t at = 0;
	while (p < end && at < n) {
		uint64_t h = get_varint(&p, end);
		if (h & 1) {
			size_t cnt = (size_t)(h >> 1) * 8;
			for (size_t i = 0; i < cnt; i++) {
				uint64_t x = 0;
				for (unsigned b = 0; b < bw; b++) {
					size_t bit = i * bw + b;
					if (p + bit / 8 >= end)
						return -1;
					x |= (uint64_t)(p[bit / 8] >> (bit % 8) & 1) << b;
				}
				if (at + i < n && x != v[at + i])
					return -1;
			}
			p += cnt * bw / 8;
			at += cnt;
		} else {
			size_t cnt = (size_t)(h >> 1);
			uint32_t x = 0;
			unsigned nb = (bw + 7) / 8;
			if (cnt == 0 || p + nb > end)
				return -1;
			memcpy(&x, p, nb);
			p += nb;
			for (size_t i = 0; i < cnt; i++)
				if (at + i >= n || v[at + i] != x)
					return -1;
			at += cnt;
		}
	}
	return at >= n && p == end ? 0 : -1;
}

int main(void)
{
	enum { MAXN = 8 * 67 + 5 };
	static uint32_t v[MAXN];
	static uint8_t ref[MAXN * 4 + 8], got[MAXN * 4 + 64];
	for (unsigned bw = 1; bw <= 32; bw++) {
		uint32_t mask = bw == 32 ? UINT32_MAX : (1u << bw) - 1;
		/* whole groups: pack_groups_bw against the reference */
		for (size_t ng = 1; ng <= 67; ng += 11) {
			for (size_t i = 0; i < ng * 8; i++)
				v[i] = (uint32_t)next() & mask;
			v[0] = mask;	/* the top bit set at least once */
			ref_pack(ref, v, ng * 8, bw);
			memset(got, 0xa5, sizeof(got));
			uint8_t *e = pack_groups_bw(got, v, ng, bw);
			if ((size_t)(e - got) != ng * bw)
				bad("writer_bitpack_length", bw, ng * 8, "wrong byte count");
			else if (memcmp(got, ref, ng * bw) != 0)
				bad("writer_bitpack_bytes", bw, ng * 8, "bytes differ from the reference");
		}
		/* the hybrid: runs of several lengths between random stretches,
		 * counts that end mid-group, decoded back */
		for (size_t n = 1; n <= MAXN; n += 37) {
			size_t i = 0;
			while (i < n) {
				size_t len = 1 + (next() % 23);
				uint32_t x = (uint32_t)next() & mask;
				int run = next() % 3 == 0;
				for (size_t k = 0; k < len && i < n; k++, i++)
					v[i] = run ? x : (uint32_t)next() & mask;
			}
			struct buf b = { 0 };
			hybrid_u32(&b, v, n, bw);
			if (b.oom || ref_unhybrid(b.p, b.p + b.len, v, n, bw) != 0)
				bad("writer_hybrid_roundtrip", bw, n, "decodes to other values");
			buf_free(&b);
		}
	}
	/* one line for all widths when none failed (each failure has its own) */
	if (!check_nfail) {
		check("writer_bitpack_widths_1_32", 1, "");
		check("writer_hybrid_roundtrip_widths_1_32", 1, "");
	}
	/* stored frames: libzstd gives back the bytes, the size it reads
	 * from the header, for sizes at and around the 128 KiB block */
	static const size_t sizes[] = { 0, 1, 131071, 131072, 131073, 262144, 400000 };
	static uint8_t src[400000], dst[400000];
	static uint8_t frame[400000 + 64];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)next();
	int zok = 1;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		if (ZSTD_compressBound(n) + 16 > sizeof(frame))
			continue;
		size_t fl = zstd_stored(frame, src, n);
		unsigned long long cs = ZSTD_getFrameContentSize(frame, fl);
		size_t dl = ZSTD_decompress(dst, sizeof(dst), frame, fl);
		if (cs != n || ZSTD_isError(dl) || dl != n || memcmp(dst, src, n) != 0 ||
		    ZSTD_findFrameCompressedSize(frame, fl) != fl) {
			checkf("writer_zstd_stored", 0, "%zu bytes: %s", n,
			       ZSTD_isError(dl) ? ZSTD_getErrorName(dl) : "other bytes or size");
			zok = 0;
		}
	}
	if (zok)
		check("writer_zstd_stored_frames", 1, "");
	return 0;
}
