/*
 * bsumedit - rewrite a capture's block summaries (BSUM chunks) for the
 * tests: every chunk copied, sums, footer and trailer made again, so the
 * result is intact but for what the mode changes.
 *
 *	bsumedit MODE IN OUT
 *	copy	no change (the rewriting itself is sound)
 *	strip	no BSUM chunk: a capture as writers before them wrote it
 *	lie	the middle block's summary counts one event too many for its
 *		first probe: counts that do not add up to the block
 *	stale	the middle block's summary names another block's offset
 *	swap	the middle block's summary gives its first probe the last's
 *		events and the last the first's: lists that add up, counts
 *		that are not the block's
 *	badid	the middle block's summary names a comm the capture lacks
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>
#include <zstd.h>

#include "dtcap.h"
#include "dtcap_int.h"

static void die(const char *m)
{
	fprintf(stderr, "bsumedit: %s\n", m);
	exit(1);
}

static uint8_t *out;
static size_t olen, ocap;
static struct { uint32_t type; uint64_t off; } *refs;
static size_t nrefs;

static void put(const void *p, size_t n)
{
	if (olen + n > ocap) {
		ocap = (olen + n) * 2;
		if (!(out = realloc(out, ocap)))
			die("out of memory");
	}
	memcpy(out + olen, p, n);
	olen += n;
}

static void chunk(uint32_t type, uint32_t flags, const uint8_t *xh, uint32_t xlen,
		  const uint8_t *pay, uint32_t clen, uint32_t ulen)
{
	uint8_t h[DTC_CHDR_LEN];
	uint8_t *tmp = malloc((size_t)xlen + clen + 1);
	if (!tmp)
		die("out of memory");
	memcpy(tmp, xh, xlen);
	memcpy(tmp + xlen, pay, clen);
	dtc_le32(h, type);
	dtc_le32(h + 4, flags);
	dtc_le32(h + 8, xlen);
	dtc_le32(h + 12, clen);
	dtc_le32(h + 16, ulen);
	dtc_le64(h + 20, XXH3_64bits(tmp, flags & DTC_CF_XSUM ? xlen : (size_t)xlen + clen));
	dtc_le32(h + 28, dtc_hdr_sum(h));
	if (!(refs = realloc(refs, (nrefs + 1) * sizeof(*refs))))
		die("out of memory");
	refs[nrefs].type = type;
	refs[nrefs++].off = olen;
	put(h, sizeof(h));
	put(tmp, (size_t)xlen + clen);
	free(tmp);
}

/* uv of the payload format */
static size_t uv(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static uint64_t get_uv(const uint8_t **p)
{
	uint64_t v = 0;
	for (int s = 0; s < 64; s += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			break;
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		die("usage: bsumedit copy|strip|lie|stale|badid|swap IN OUT");
	const char *mode = argv[1];
	FILE *f = fopen(argv[2], "rb");
	if (!f)
		die("cannot open IN");
	fseek(f, 0, SEEK_END);
	size_t size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *in = malloc(size);
	if (!in || fread(in, 1, size, f) != size)
		die("cannot read IN");
	fclose(f);
	/* the middle BSUM: count them first */
	size_t nsum = 0, off = DTC_FILEHDR_LEN;
	while (off + DTC_CHDR_LEN <= size) {
		uint32_t type = dtc_rd32(in + off);
		if (type == DTC_FOOT)
			break;
		nsum += type == DTC_BSUM;
		off += DTC_CHDR_LEN + dtc_rd32(in + off + 8) + dtc_rd32(in + off + 12);
	}
	if (!nsum)
		die("IN has no BSUM chunk");
	size_t target = nsum / 2, seen = 0;
	uint64_t last_evnt = 0, first_evnt = UINT64_MAX;
	put(in, DTC_FILEHDR_LEN);
	off = DTC_FILEHDR_LEN;
	while (off + DTC_CHDR_LEN <= size) {
		const uint8_t *h = in + off;
		uint32_t type = dtc_rd32(h), flags = dtc_rd32(h + 4), xlen = dtc_rd32(h + 8);
		uint32_t clen = dtc_rd32(h + 12), ulen = dtc_rd32(h + 16);
		const uint8_t *xh = h + DTC_CHDR_LEN, *pay = xh + xlen;
		off += DTC_CHDR_LEN + xlen + clen;
		if (type == DTC_FOOT)
			break;
		if (type == DTC_EVNT) {
			last_evnt = olen;
			if (first_evnt == UINT64_MAX)
				first_evnt = olen;
		}
		if (type != DTC_BSUM) {
			chunk(type, flags, xh, xlen, pay, clen, ulen);
			continue;
		}
		size_t k = seen++;
		if (!strcmp(mode, "strip"))
			continue;
		uint8_t *raw = malloc((size_t)ulen + 64);
		if (!raw || ZSTD_decompress(raw, ulen, pay, clen) != ulen)
			die("a BSUM does not inflate");
		/* the offset of its block, as rewritten */
		dtc_le64(raw, last_evnt);
		size_t rlen = ulen;
		if (k == target && !strcmp(mode, "stale")) {
			dtc_le64(raw, first_evnt == last_evnt ? last_evnt + 1 : first_evnt);
		} else if (k == target && (!strcmp(mode, "lie") || !strcmp(mode, "badid") ||
					   !strcmp(mode, "swap"))) {
			/* after offset and rows: nprobe, then (probe, events)...;
			 * lie adds one to the first probe's events; badid makes the
			 * first comm id one past the capture's (the list stays
			 * ascending only if it is the last: so the last one) */
			const uint8_t *p = raw + 8;
			get_uv(&p);
			uint64_t np = get_uv(&p);
			uint8_t *rest = malloc((size_t)ulen + 64), *q = rest;
			if (!rest)
				die("out of memory");
			if (!strcmp(mode, "lie")) {
				uint64_t id = get_uv(&p), ev = get_uv(&p);
				q += uv(q, np);
				q += uv(q, id);
				q += uv(q, ev + 1);
			} else if (!strcmp(mode, "swap")) {
				if (np < 2 || np > 4096)
					die("swap: the middle block has one probe, or too many");
				uint64_t id[4096], ev[4096];
				for (uint64_t i = 0; i < np; i++)
					id[i] = get_uv(&p), ev[i] = get_uv(&p);
				if (ev[0] == ev[np - 1])
					die("swap: its first and last probes have as many events");
				q += uv(q, np);
				for (uint64_t i = 0; i < np; i++) {
					q += uv(q, id[i]);
					q += uv(q, i == 0 ? ev[np - 1] : i == np - 1 ? ev[0] : ev[i]);
				}
			} else {
				/* skip probes and CPUs, then the comms */
				q += uv(q, np);
				const uint8_t *s = p;
				for (uint64_t i = 0; i < 2 * np; i++)
					get_uv(&p);
				uint64_t nc = get_uv(&p);
				for (uint64_t i = 0; i < 2 * nc; i++)
					get_uv(&p);
				memcpy(q, s, (size_t)(p - s));
				q += p - s;
				uint64_t ncm = get_uv(&p);
				q += uv(q, ncm);
				for (uint64_t i = 0; i < ncm; i++) {
					uint64_t id = get_uv(&p), ev = get_uv(&p);
					q += uv(q, i + 1 == ncm ? 1000000 : id);
					q += uv(q, ev);
				}
			}
			size_t tail = (size_t)(raw + ulen - p);
			memcpy(q, p, tail);
			q += tail;
			const uint8_t *p0 = raw + 8;
			get_uv(&p0);	/* rows stay */
			size_t head = (size_t)(p0 - raw);
			memcpy(raw + head, rest, (size_t)(q - rest));
			rlen = head + (size_t)(q - rest);
			free(rest);
		}
		size_t bound = ZSTD_compressBound(rlen);
		uint8_t *z = malloc(bound);
		size_t zl = z ? ZSTD_compress(z, bound, raw, rlen, 1) : 0;
		if (!z || ZSTD_isError(zl))
			die("cannot compress");
		chunk(DTC_BSUM, DTC_CF_ZSTD, NULL, 0, z, (uint32_t)zl, (uint32_t)rlen);
		free(z);
		free(raw);
	}
	/* the footer: every chunk but itself, then the trailer */
	uint8_t *ix = malloc(16 * (nrefs + 1) + 16), *q = ix;
	if (!ix)
		die("out of memory");
	q += uv(q, nrefs);
	uint64_t prev = 0;
	for (size_t i = 0; i < nrefs; i++) {
		dtc_le32(q, refs[i].type);
		q += 4;
		q += uv(q, refs[i].off - prev);
		prev = refs[i].off;
	}
	size_t il = (size_t)(q - ix), bound = ZSTD_compressBound(il);
	uint8_t *z = malloc(bound);
	size_t zl = z ? ZSTD_compress(z, bound, ix, il, 1) : 0;
	if (!z || ZSTD_isError(zl))
		die("cannot compress the footer");
	size_t n = nrefs;
	uint64_t foot = olen;
	chunk(DTC_FOOT, DTC_CF_ZSTD, NULL, 0, z, (uint32_t)zl, (uint32_t)il);
	uint8_t t[DTC_TRAILER_LEN];
	memcpy(t, DTC_TRAILER_MAGIC, 8);
	dtc_le64(t + 8, foot);
	dtc_le64(t + 16, n);
	dtc_le64(t + 24, XXH3_64bits(t, 24));
	put(t, sizeof(t));
	f = fopen(argv[3], "wb");
	if (!f || fwrite(out, 1, olen, f) != olen || fclose(f))
		die("cannot write OUT");
	free(in);
	free(out);
	free(refs);
	free(ix);
	free(z);
	return 0;
}
