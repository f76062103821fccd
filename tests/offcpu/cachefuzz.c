/*
 * cachefuzz CAPTURE ITERS SEED - hostile caches of the SQL tables spans and
 * sched (cli/lib/report/derived_cache.c).  CAPTURE.spans.cache and
 * CAPTURE.sched.cache must have been written by a dtreport run.  Each
 * iteration writes a damaged copy of one in its place and loads it: raw
 * damage (bytes flipped, cut short, grown, emptied), which the hashes and
 * zstd must catch, and forged damage (records, counts and header words
 * changed with every hash made to match again), which only the checks of
 * counts and values stand between the file and the tables.  An accepted
 * table must hold what the tables' readers rely on; ASan and UBSan watch
 * the rest.  The original, put back, must load again.  Prints PASS/FAIL
 * lines and the tally.
 */
#define XXH_STATIC_LINKING_ONLY
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "dtsql_int.h"
#include "engine.h"

#define NHDR 18

static unsigned long long rng;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned)(rng % n) : 0;
}

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

static int
spew(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;
	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/* What the tables' readers rely on in an accepted table. */
static const char *
sane(struct dtcap_reader *r, int kind, const struct rpt_spans *sp, const struct rpt_sched *sc)
{
	uint64_t nev = dtcap_nevents(r);
	if (kind == 0) {
		if (sp->n > nev || sp->nu > nev)
			return "more spans than events";
		for (size_t i = 0; i < sp->n; i++)
			if (sp->nargs[i] > RPT_SPAN_ARGS || sp->v[i].end < sp->v[i].start ||
			    !dtcap_probe_by_id(r, sp->v[i].probe))
				return "a span out of bounds";
		for (size_t i = 0; i < sp->nu; i++)
			if (!dtcap_probe_by_id(r, sp->u[i].probe))
				return "an unmatched event of no probe";
	} else {
		if (sc->n > nev)
			return "more intervals than events";
		for (size_t i = 0; i < sc->n; i++)
			if (sc->v[i].end < sc->v[i].start || !sc->v[i].state ||
			    !strchr("RSDTtXZPI?", sc->v[i].state))
				return "an interval out of bounds";
	}
	return NULL;
}

/* Forge: damage the records or header words, then make every hash match. */
static unsigned char *
forge(const unsigned char *f, size_t n, size_t *outlen)
{
	uint64_t h[NHDR];
	unsigned long long bl;
	unsigned char *body, *out;
	size_t cl;

	if (n < sizeof(h))
		return NULL;
	memcpy(h, f, sizeof(h));
	bl = ZSTD_getFrameContentSize(f + sizeof(h), n - sizeof(h));
	if (bl == ZSTD_CONTENTSIZE_ERROR || bl == ZSTD_CONTENTSIZE_UNKNOWN)
		return NULL;
	if (!(body = malloc(bl + 64)))
		return NULL;
	if (ZSTD_isError(ZSTD_decompress(body, bl, f + sizeof(h), n - sizeof(h)))) {
		free(body);
		return NULL;
	}
	switch (rnd(4)) {
	case 0:	/* record bytes */
		for (unsigned k = 1 + rnd(16); k && bl; k--)
			body[rnd((unsigned)bl)] = (unsigned char)rnd(256);
		break;
	case 1:	/* counts: off by a little, or huge */
		h[9 + rnd(2)] += rnd(2) ? (uint64_t)rnd(5) - 2 : (uint64_t)1 << (32 + rnd(31));
		break;
	case 2:	/* records cut or grown, counts left */
		if (rnd(2) && bl)
			bl -= 1 + rnd((unsigned)bl);
		else
			for (unsigned k = 0; k < 64; k++)
				body[bl++] = (unsigned char)rnd(256);
		break;
	default:	/* a sched header word: times, counts, the probe */
		h[11 + rnd(5)] = ((uint64_t)rnd(~0u) << 32) | rnd(~0u);
	}
	h[16] = XXH3_64bits(body, bl);
	h[NHDR - 1] = XXH3_64bits(h, (NHDR - 1) * sizeof(*h));
	cl = ZSTD_compressBound(bl);
	if (!(out = malloc(sizeof(h) + cl))) {
		free(body);
		return NULL;
	}
	memcpy(out, h, sizeof(h));
	cl = ZSTD_compress(out + sizeof(h), cl, body, bl, 1);
	free(body);
	if (ZSTD_isError(cl)) {
		free(out);
		return NULL;
	}
	*outlen = sizeof(h) + cl;
	return out;
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: cachefuzz CAPTURE ITERS SEED\n");
		return 2;
	}
	struct dtcap_reader *r = dtcap_open(argv[1]);
	long iters = atol(argv[2]);
	rng = strtoull(argv[3], NULL, 0) | 1;
	if (!r) {
		printf("FAIL cache-fuzz-open: %s\n", dtcap_open_error());
		return 1;
	}
	int bad = 0;
	for (int kind = 0; kind < 2; kind++) {
		static const char *const kn[] = { "spans", "sched" };
		char path[4096];
		size_t n = 0;
		snprintf(path, sizeof(path), "%s.%s.cache", argv[1], kn[kind]);
		unsigned char *orig = slurp(path, &n);
		if (!orig || n < 8 * NHDR) {
			printf("FAIL cache-fuzz-%s: no cache %s to start from\n", kn[kind], path);
			bad = 1;
			continue;
		}
		long acc = 0, rej = 0, forged = 0;
		const char *why = NULL;
		for (long it = 0; it < iters && !why; it++) {
			unsigned char *m = NULL;
			size_t mn = 0;
			if (rnd(2) == 0 && (m = forge(orig, n, &mn)) != NULL) {
				forged++;
			} else {
				m = malloc(n + 256);
				memcpy(m, orig, n);
				mn = n;
				switch (rnd(4)) {
				case 0:
					for (unsigned k = 1 + rnd(8); k; k--)
						m[rnd((unsigned)n)] ^= (unsigned char)(1 + rnd(255));
					break;
				case 1:
					mn = rnd((unsigned)n);
					break;
				case 2:
					for (unsigned k = 1 + rnd(200); k; k--)
						m[mn++] = (unsigned char)rnd(256);
					break;
				default:
					mn = 0;
				}
			}
			if (spew(path, m, mn)) {
				why = "could not write the damaged copy";
				free(m);
				break;
			}
			free(m);
			struct rpt_spans sp;
			struct rpt_sched sc;
			memset(&sp, 0, sizeof(sp));
			memset(&sc, 0, sizeof(sc));
			if (dtsql_cache_load(r, kind, &sp, &sc)) {
				acc++;
				why = sane(r, kind, &sp, &sc);
			} else {
				rej++;
			}
			rpt_spans_free(&sp);
			rpt_sched_free(&sc);
		}
		struct rpt_spans sp;
		struct rpt_sched sc;
		memset(&sp, 0, sizeof(sp));
		memset(&sc, 0, sizeof(sc));
		int back = spew(path, orig, n) == 0 && dtsql_cache_load(r, kind, &sp, &sc) == 1;
		rpt_spans_free(&sp);
		rpt_sched_free(&sc);
		free(orig);
		printf("# %s: %ld damaged copies (%ld forged): %ld rejected, %ld accepted\n", kn[kind],
		       acc + rej, forged, rej, acc);
		if (why || !back || rej == 0 || forged == 0) {
			printf("FAIL cache-fuzz-%s: %s\n", kn[kind], why ? why : !back ?
			       "the original cache no longer loads" : "nothing was rejected or forged");
			bad = 1;
		} else {
			printf("PASS cache-fuzz-%s\n", kn[kind]);
		}
	}
	dtcap_reader_close(r);
	return bad;
}
