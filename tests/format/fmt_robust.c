/*
 * fmt_robust - damaged, cut, hostile and future captures (suite "format").
 *	fmt_robust TMPDIR GENERATED.dtc EMPTY.dtc
 * GENERATED.dtc is a finished dtgen capture with several event blocks,
 * EMPTY.dtc a finished one without events.  Every test damages a copy in
 * TMPDIR the way issue #10 describes and checks what the reader makes of
 * it.  Prints PASS/FAIL lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "dtcap.h"
#include "dtcap_int.h"
#include "fmt_harness.h"

/* ------------------------------------------------------------ chunks */

struct chk {
	uint64_t off, end;
	uint32_t type, xlen, clen;
};

/* The chunks of a version-3 file, FOOT included. */
static size_t chunks(const uint8_t *d, size_t len, struct chk *out, size_t max)
{
	size_t n = 0;
	uint64_t off = DTC_FILEHDR_LEN;
	while (off + DTC_CHDR_LEN <= len && n < max) {
		struct chk c = {off, 0, dtc_rd32(d + off), dtc_rd32(d + off + 8),
				dtc_rd32(d + off + 12)};
		c.end = off + DTC_CHDR_LEN + c.xlen + c.clen;
		out[n++] = c;
		if (c.type == DTC_FOOT || c.end > len)
			break;
		off = c.end;
	}
	return n;
}

/* Recompute every checksum of the chunk at off after an edit, as a
 * writer would have: the damage is then a lie the sums cannot see. */
static void reseal(uint8_t *d, uint64_t off)
{
	uint8_t *h = d + off;
	uint32_t type = dtc_rd32(h), flags = dtc_rd32(h + 4), xlen = dtc_rd32(h + 8),
		 clen = dtc_rd32(h + 12);
	uint8_t *xh = h + DTC_CHDR_LEN, *pay = xh + xlen;
	if (type == DTC_EVNT && (flags & DTC_CF_XSUM)) {
		unsigned ncols = xh[DTC_BLK_FIXED - 1];
		uint8_t *seg = pay;
		for (unsigned i = 0; i < ncols; i++) {
			uint8_t *e = xh + DTC_BLK_FIXED + i * DTC_BLK_COLDIR;
			uint32_t stored = dtc_rd32(e + 6);
			dtc_le64(e + 10, XXH3_64bits(seg, stored));
			seg += stored;
		}
		dtc_le64(h + 20, XXH3_64bits(xh, xlen));
	} else {
		dtc_le64(h + 20, XXH3_64bits(xh, (size_t)xlen + clen));
	}
	dtc_le32(h + 28, dtc_hdr_sum(h));
}

static void reseal_header(uint8_t *d)
{
	dtc_le32(d + 28, (uint32_t)XXH3_64bits(d, 28));
}

/* Events of every block that decodes; -1 if one does not. */
static int64_t count_rows(struct dtcap_reader *r)
{
	struct dtcap_block *b = dtcap_block_new();
	int64_t n = 0;
	for (size_t i = 0; i < dtcap_nblocks(r); i++) {
		if (dtcap_read_block(r, i, DTCAP_COL_ALL, b)) {
			n = -1;
			break;
		}
		n += b->rows;
	}
	dtcap_block_free(b);
	return n;
}

static const char *warn_of(struct dtcap_reader *r)
{
	const char *w = r ? dtcap_reader_warning(r) : NULL;
	return w ? w : "(none)";
}

/* Globals from main */
static uint8_t *G;
static size_t GLEN;
static struct chk C[4096];
static size_t NC;
static uint64_t GEVENTS;
static const char *GPATH, *EPATH;

/* Index of the k-th EVNT chunk (from 0), or NC. */
static size_t nth_evnt(size_t k)
{
	for (size_t i = 0; i < NC; i++)
		if (C[i].type == DTC_EVNT && k-- == 0)
			return i;
	return NC;
}

/* ----------------------------------------------------- item 8: long path */

static void test_long_path(void)
{
	/* a path of about 3,900 bytes: each error and warning must stay in
	 * its buffer (ASan) and still say what went wrong */
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", tmpdir);
	while (strlen(dir) < 3700) {
		size_t l = strlen(dir);
		dir[l] = '/';
		memset(dir + l + 1, 'd', 200);
		dir[l + 201] = 0;
		if (mkdir(dir, 0700) && errno != EEXIST)
			break;
	}
	char p[4200];
	snprintf(p, sizeof(p), "%s/missing-capture.dtc", dir);
	struct dtcap_reader *r = dtcap_open(p);
	const char *e = dtcap_open_error();
	result(!r && strstr(e, "No such file") && strstr(e, "missing-capture.dtc"),
	       "longpath.open_error", "error: %.200s", e);

	snprintf(p, sizeof(p), "%s/cut.dtc", dir);
	spit(p, G, GLEN / 2);
	r = dtcap_open(p);
	const char *w = warn_of(r);
	result(r && strstr(w, "truncated at offset") && strlen(w) < 1024, "longpath.truncation_warning",
	       "warning: %.200s", w);
	dtcap_reader_close(r);

	snprintf(p, sizeof(p), "%s/w.dtc", dir);
	struct dtcap_writer_opts o = {.synthetic = 1};
	struct dtcap_writer *wr = dtcap_create(p, NULL, &o);
	struct dtcap_event bad = {0};
	bad.kstack = 99;
	int ok = wr && dtcap_put_event(wr, &bad) == -1 &&
		 strstr(dtcap_writer_error(wr), "event with bad ids");
	result(ok, "longpath.writer_error", "error: %.200s",
	       wr ? dtcap_writer_error(wr) : dtcap_create_error());
	if (wr)
		dtcap_close(wr);

	/* and a path too long for the kernel: a clear error, not a crash */
	char lp[6000];
	memset(lp, 'x', sizeof(lp) - 1);
	lp[sizeof(lp) - 1] = 0;
	lp[0] = '/';
	r = dtcap_open(lp);
	result(!r && strstr(dtcap_open_error(), "too long"), "longpath.enametoolong", "%.200s",
	       dtcap_open_error());
	wr = dtcap_create(lp, NULL, &o);
	result(!wr && strstr(dtcap_create_error(), "too long"), "longpath.create_enametoolong",
	       "%.200s", dtcap_create_error());
}

/* ----------------------------------------------------- item 11: 0600 */

static void test_mode(void)
{
	mode_t old = umask(0);
	struct dtcap_writer_opts o = {.synthetic = 1};
	struct dtcap_writer *w = dtcap_create(tpath("mode.dtc"), NULL, &o);
	umask(old);
	struct stat st;
	int ok = w && !dtcap_close(w) && !stat(tpath("mode.dtc"), &st);
	result(ok && (st.st_mode & 0777) == 0600, "create.mode_0600", "mode %o",
	       ok ? (unsigned)(st.st_mode & 0777) : 0);
}

/* ------------------------------------------- item 10: status for tools */

static void test_status(void)
{
	struct dtcap_reader *r = dtcap_open(GPATH);
	result(r && dtcap_reader_status(r) == 0, "status.complete", "status %#x",
	       r ? dtcap_reader_status(r) : 0);
	dtcap_reader_close(r);
	r = dtcap_open(EPATH);
	result(r && dtcap_reader_status(r) == DTCAP_ST_EMPTY, "status.empty", "status %#x",
	       r ? dtcap_reader_status(r) : 0);
	dtcap_reader_close(r);
	spit(tpath("st-cut.dtc"), G, C[nth_evnt(1)].end + 100);
	r = dtcap_open(tpath("st-cut.dtc"));
	result(r && dtcap_reader_status(r) == DTCAP_ST_TRUNCATED, "status.truncated", "status %#x",
	       r ? dtcap_reader_status(r) : 0);
	dtcap_reader_close(r);
	spit(tpath("st-cut0.dtc"), G, 40);
	r = dtcap_open(tpath("st-cut0.dtc"));
	result(r && dtcap_reader_status(r) == (DTCAP_ST_TRUNCATED | DTCAP_ST_EMPTY),
	       "status.truncated_empty", "status %#x", r ? dtcap_reader_status(r) : 0);
	dtcap_reader_close(r);
}

/* -------------------------------------- item 3: a zeroed header mid-file */

static void test_zero_header(void)
{
	size_t k = nth_evnt(1);
	uint8_t *d = malloc(GLEN);
	memcpy(d, G, GLEN);
	memset(d + C[k].off, 0, DTC_CHDR_LEN);
	spit(tpath("zh.dtc"), d, GLEN);
	struct dtcap_reader *r = dtcap_open(tpath("zh.dtc"));
	result(!r && strstr(dtcap_open_error(), "zeroed chunk header") &&
	       strstr(dtcap_open_error(), "offset"), "zero_header.mid_file_is_damage",
	       "opened with %llu events, warning %s / error %s",
	       r ? (unsigned long long)dtcap_nevents(r) : 0ULL, warn_of(r), dtcap_open_error());
	dtcap_reader_close(r);
	/* zeros from there to the end: that is what a crash leaves, a cut */
	memset(d + C[k].off, 0, GLEN - C[k].off);
	spit(tpath("zh2.dtc"), d, GLEN);
	r = dtcap_open(tpath("zh2.dtc"));
	uint64_t want = 0;
	for (size_t i = 0; i < k; i++)
		if (C[i].type == DTC_EVNT)
			want += dtc_rd32(G + C[i].off + DTC_CHDR_LEN);
	result(r && dtcap_nevents(r) == want && (dtcap_reader_status(r) & DTCAP_ST_TRUNCATED) &&
	       strstr(warn_of(r), "truncated at offset"), "zero_header.zeros_to_end_is_cut",
	       "%s; %llu events, want %llu", r ? warn_of(r) : dtcap_open_error(),
	       r ? (unsigned long long)dtcap_nevents(r) : 0ULL, (unsigned long long)want);
	dtcap_reader_close(r);
	free(d);
}

/* ------------------------- item 2: bad footer/trailer, damaged last chunk */

static void expect_all(const char *name, const char *path, const char *warn_has)
{
	struct dtcap_reader *r = dtcap_open(path);
	int64_t rows = r ? count_rows(r) : -2;
	result(r && rows == (int64_t)GEVENTS && strstr(warn_of(r), warn_has), name,
	       "%s; %lld of %llu events, warning: %s", r ? "opened" : dtcap_open_error(),
	       (long long)rows, (unsigned long long)GEVENTS, warn_of(r));
	dtcap_reader_close(r);
}

static void test_footer_trailer(void)
{
	uint8_t *d = malloc(GLEN + 4096);
	size_t f = NC - 1;	/* FOOT */
	memcpy(d, G, GLEN);
	d[C[f].off + DTC_CHDR_LEN + 3] ^= 0x40;
	spit(tpath("ft1.dtc"), d, GLEN);
	expect_all("damage.footer_payload_byte", tpath("ft1.dtc"), "footer");
	memcpy(d, G, GLEN);
	d[C[f].off + 5] ^= 1;
	spit(tpath("ft2.dtc"), d, GLEN);
	expect_all("damage.footer_header_byte", tpath("ft2.dtc"), "footer");
	memcpy(d, G, GLEN);
	d[GLEN - 20] ^= 0x10;
	spit(tpath("ft3.dtc"), d, GLEN);
	expect_all("damage.trailer_byte", tpath("ft3.dtc"), "trailer");
	memcpy(d, G, GLEN);
	memset(d + GLEN, 0, 4096);
	spit(tpath("ft4.dtc"), d, GLEN + 4096);
	expect_all("damage.zeros_appended_to_finished", tpath("ft4.dtc"), "after the trailer");

	/* power loss: an unfinished capture whose last 4 KB became zeros */
	size_t cut = C[f].off;	/* no footer: recording did not finish */
	memcpy(d, G, cut);
	memset(d + cut - 4096, 0, 4096);
	spit(tpath("ft5.dtc"), d, cut);
	uint64_t want = 0;
	for (size_t i = 0; i < NC; i++)
		if (C[i].type == DTC_EVNT && C[i].end <= cut - 4096)
			want += dtc_rd32(G + C[i].off + DTC_CHDR_LEN);
	struct dtcap_reader *r = dtcap_open(tpath("ft5.dtc"));
	int64_t rows = r ? count_rows(r) : -2;
	result(r && rows == (int64_t)want && (dtcap_reader_status(r) & DTCAP_ST_TRUNCATED),
	       "damage.power_loss_zeros_is_cut", "%s: %lld events, want %llu; warning %s",
	       r ? "opened" : dtcap_open_error(), (long long)rows, (unsigned long long)want,
	       warn_of(r));
	dtcap_reader_close(r);

	/* a flipped byte in the last chunk of an unfinished capture: a cut */
	memcpy(d, G, cut);
	size_t last = f - 1;
	d[C[last].off + DTC_CHDR_LEN + C[last].xlen + C[last].clen / 2] ^= 0x22;
	spit(tpath("ft6.dtc"), d, cut);
	r = dtcap_open(tpath("ft6.dtc"));
	rows = r ? count_rows(r) : -2;
	want = 0;
	for (size_t i = 0; i < last; i++)
		if (C[i].type == DTC_EVNT)
			want += dtc_rd32(G + C[i].off + DTC_CHDR_LEN);
	result(r && rows == (int64_t)want && (dtcap_reader_status(r) & DTCAP_ST_TRUNCATED) &&
	       strstr(warn_of(r), "damaged"), "damage.last_chunk_is_cut",
	       "%s: %lld events, want %llu; warning %s", r ? "opened" : dtcap_open_error(),
	       (long long)rows, (unsigned long long)want, warn_of(r));
	dtcap_reader_close(r);
	free(d);
}

/* ------------------------------------------------ item 2: salvage mode */

static void test_salvage(void)
{
	size_t k = nth_evnt(1);
	uint32_t rows_k = dtc_rd32(G + C[k].off + DTC_CHDR_LEN);
	uint8_t *d = malloc(GLEN);
	struct dtcap_read_opts so = {DTCAP_OPEN_SALVAGE, 0};

	/* a damaged block header: open fails, salvage skips that block */
	memcpy(d, G, GLEN);
	d[C[k].off + 13] ^= 0x08;
	spit(tpath("sv1.dtc"), d, GLEN);
	struct dtcap_reader *r = dtcap_open(tpath("sv1.dtc"));
	result(!r && strstr(dtcap_open_error(), "offset"), "salvage.plain_open_fails",
	       "opened (%s)", warn_of(r));
	dtcap_reader_close(r);
	r = dtcap_open_opts(tpath("sv1.dtc"), &so);
	int64_t rows = r ? count_rows(r) : -2;
	const struct dtcap_damage *dm = r ? dtcap_damage_at(r, 0) : NULL;
	result(r && rows == (int64_t)(GEVENTS - rows_k) && dtcap_ndamage(r) == 1 && dm &&
	       dm->offset == C[k].off && dm->length == C[k].end - C[k].off &&
	       (dtcap_reader_status(r) & DTCAP_ST_SALVAGED) && strstr(warn_of(r), "salvage"),
	       "salvage.skips_damaged_header", "%s: %lld events (want %llu), %zu ranges, "
	       "first %llu+%llu (want %llu+%llu), warning %s",
	       r ? "opened" : dtcap_open_error(), (long long)rows,
	       (unsigned long long)(GEVENTS - rows_k), r ? dtcap_ndamage(r) : 0,
	       dm ? (unsigned long long)dm->offset : 0ULL,
	       dm ? (unsigned long long)dm->length : 0ULL, (unsigned long long)C[k].off,
	       (unsigned long long)(C[k].end - C[k].off), warn_of(r));
	dtcap_reader_close(r);

	/* damaged column data: plain open still succeeds (it reads no
	 * column), decoding that block fails; salvage drops it and counts */
	memcpy(d, G, GLEN);
	d[C[k].off + DTC_CHDR_LEN + C[k].xlen + C[k].clen / 2] ^= 0x01;
	spit(tpath("sv2.dtc"), d, GLEN);
	r = dtcap_open(tpath("sv2.dtc"));
	struct dtcap_block *b = dtcap_block_new();
	int bad = -1, good = 1;
	for (size_t i = 0; r && i < dtcap_nblocks(r); i++) {
		int rc = dtcap_read_block(r, i, DTCAP_COL_ALL, b);
		if (rc && bad < 0 && dtcap_block_info(r, i)->offset == C[k].off &&
		    strstr(dtcap_reader_error(r), "offset"))
			bad = (int)i;
		else if (rc)
			good = 0;
	}
	result(r && bad >= 0 && good, "checksum.column_damage_found_on_decode",
	       "%s; bad block %d, others ok %d", r ? "opened" : dtcap_open_error(), bad, good);
	dtcap_reader_close(r);
	r = dtcap_open_opts(tpath("sv2.dtc"), &so);
	rows = r ? count_rows(r) : -2;
	dm = r ? dtcap_damage_at(r, 0) : NULL;
	result(r && rows == (int64_t)(GEVENTS - rows_k) && dm && dm->events_lost == rows_k &&
	       dm->blocks_lost == 1, "salvage.drops_block_with_bad_columns",
	       "%s: %lld events, lost %llu", r ? "opened" : dtcap_open_error(), (long long)rows,
	       dm ? (unsigned long long)dm->events_lost : 0ULL);
	dtcap_reader_close(r);

	/* garbage between two chunks: resync on the next chunk header */
	size_t k2 = nth_evnt(2);
	memcpy(d, G, GLEN);
	for (uint64_t o = C[k2].off; o < C[k2].off + 300; o++)
		d[o] = (uint8_t)(o * 7);
	spit(tpath("sv3.dtc"), d, GLEN);
	r = dtcap_open_opts(tpath("sv3.dtc"), &so);
	rows = r ? count_rows(r) : -2;
	uint32_t rows_k2 = dtc_rd32(G + C[k2].off + DTC_CHDR_LEN);
	dm = r ? dtcap_damage_at(r, 0) : NULL;
	result(r && rows == (int64_t)(GEVENTS - rows_k2) && dm && dm->offset == C[k2].off &&
	       dm->offset + dm->length == C[k2].end && dm->events_lost == UINT64_MAX,
	       "salvage.resyncs_after_garbage", "%s: %lld events want %llu; warning %s",
	       r ? "opened" : dtcap_open_error(), (long long)rows,
	       (unsigned long long)(GEVENTS - rows_k2), warn_of(r));
	dtcap_reader_close(r);
	dtcap_block_free(b);
	free(d);
}

/* --------------------------------------------- item 16: versioning */

static void test_versioning(void)
{
	uint8_t *d = malloc(GLEN + 4096);
	memcpy(d, G, GLEN);
	d[24] ^= 0x01;	/* a reserved byte */
	spit(tpath("v1.dtc"), d, GLEN);
	struct dtcap_reader *r = dtcap_open(tpath("v1.dtc"));
	const char *e = dtcap_open_error();
	result(!r && strstr(e, "damaged file header") && !strstr(e, "unsupported"),
	       "version.reserved_flip_is_damage", "%s", r ? "opened" : e);
	dtcap_reader_close(r);
	reseal_header(d);
	spit(tpath("v1.dtc"), d, GLEN);
	r = dtcap_open(tpath("v1.dtc"));
	result(!r && strstr(dtcap_open_error(), "reserved"), "version.reserved_nonzero_resealed",
	       "%s", r ? "opened" : dtcap_open_error());
	dtcap_reader_close(r);

	memcpy(d, G, GLEN);
	dtc_le32(d + 16, dtc_rd32(d + 16) | 0x80000000u);
	reseal_header(d);
	spit(tpath("v2.dtc"), d, GLEN);
	r = dtcap_open(tpath("v2.dtc"));
	result(r && count_rows(r) == (int64_t)GEVENTS, "version.unknown_compat_bit_reads",
	       "%s", r ? "wrong rows" : dtcap_open_error());
	dtcap_reader_close(r);

	memcpy(d, G, GLEN);
	dtc_le32(d + 20, 0x4);
	reseal_header(d);
	spit(tpath("v3.dtc"), d, GLEN);
	r = dtcap_open(tpath("v3.dtc"));
	result(!r && strstr(dtcap_open_error(), "features 0x4"), "version.unknown_incompat_bit_refused",
	       "%s", r ? "opened" : dtcap_open_error());
	dtcap_reader_close(r);

	memcpy(d, G, GLEN);
	dtc_le32(d + 8, 9);
	spit(tpath("v4.dtc"), d, GLEN);
	r = dtcap_open(tpath("v4.dtc"));
	result(!r && strstr(dtcap_open_error(), "unsupported format version 9"),
	       "version.newer_major_refused", "%s", r ? "opened" : dtcap_open_error());
	dtcap_reader_close(r);

	/* an unknown chunk type, whose payload claims zstd and is not: it
	 * must be skipped unread (a reader that inflated it would fail) */
	size_t f = NC - 1, ins = C[f].off;
	uint8_t uk[DTC_CHDR_LEN + 64];
	memset(uk, 0xa5, sizeof(uk));
	dtc_le32(uk, DTC_FOURCC('Z', 'Z', 'Z', 'Z'));
	dtc_le32(uk + 4, DTC_CF_ZSTD);
	dtc_le32(uk + 8, 0);
	dtc_le32(uk + 12, 64);
	dtc_le32(uk + 16, 1u << 29);
	memcpy(d, G, ins);
	memcpy(d + ins, uk, sizeof(uk));
	reseal(d, ins);
	memcpy(d + ins + sizeof(uk), G + ins, GLEN - ins);
	spit(tpath("v5.dtc"), d, GLEN + sizeof(uk));
	r = dtcap_open(tpath("v5.dtc"));
	result(r && count_rows(r) == (int64_t)GEVENTS, "version.unknown_chunk_skipped_unread",
	       "%s", r ? "wrong rows" : dtcap_open_error());
	dtcap_reader_close(r);

	/* an unknown column (id 40, zstd-flagged garbage) appended to the
	 * first block: the known columns decode as before */
	size_t k = nth_evnt(0);
	const struct chk *c = &C[k];
	memcpy(d, G, c->off);
	uint8_t *h = d + c->off;
	memcpy(h, G + c->off, DTC_CHDR_LEN + c->xlen);
	unsigned ncols = h[DTC_CHDR_LEN + DTC_BLK_FIXED - 1];
	uint8_t *ne = h + DTC_CHDR_LEN + c->xlen;
	ne[0] = 40;
	ne[1] = DTC_M_ZSTD;
	dtc_le32(ne + 2, 1000);
	dtc_le32(ne + 6, 7);
	h[DTC_CHDR_LEN + DTC_BLK_FIXED - 1] = (uint8_t)(ncols + 1);
	memcpy(ne + DTC_BLK_COLDIR, G + c->off + DTC_CHDR_LEN + c->xlen, c->clen);
	memset(ne + DTC_BLK_COLDIR + c->clen, 0x5a, 7);
	dtc_le32(h + 8, c->xlen + DTC_BLK_COLDIR);
	dtc_le32(h + 12, c->clen + 7);
	dtc_le32(h + 16, c->clen + 7);
	reseal(d, c->off);
	size_t grown = DTC_BLK_COLDIR + 7, nlen = c->end + grown;
	memcpy(d + nlen, G + c->end, C[f].off - c->end);	/* no footer now */
	nlen += C[f].off - c->end;
	spit(tpath("v6.dtc"), d, nlen);
	r = dtcap_open(tpath("v6.dtc"));
	struct dtcap_reader *r0 = dtcap_open(GPATH);
	struct dtcap_block *b = dtcap_block_new(), *b0 = dtcap_block_new();
	int ok = r && r0 && !dtcap_read_block(r, 0, DTCAP_COL_ALL, b) &&
		 !dtcap_read_block(r0, 0, DTCAP_COL_ALL, b0) && b->rows == b0->rows &&
		 !memcmp(b->ts, b0->ts, 8 * b->rows) && !memcmp(b->ctx, b0->ctx, b->rows) &&
		 !memcmp(b->args, b0->args, 8 * DTCAP_MAXARGS * b->rows) &&
		 !memcmp(b->kstack, b0->kstack, 4 * b->rows);
	result(ok, "version.unknown_column_skipped", "%s",
	       r ? dtcap_reader_error(r) : dtcap_open_error());
	dtcap_block_free(b);
	dtcap_block_free(b0);
	dtcap_reader_close(r);
	dtcap_reader_close(r0);
	free(d);
}

/* ----------------------------------------------- item 9: hostile files */

/* Peak RSS (MiB) of a fresh process that opens path and reads every
 * block.  Re-executed, so nothing of this process's heap is counted, and
 * without ASan's quarantine, which would keep freed texts resident. */
static long child_peak_mib(const char *path, int *opened)
{
	pid_t p = fork();
	if (p == 0) {
		setenv("ASAN_OPTIONS", "quarantine_size_mb=0:detect_leaks=0", 1);
		execl("/proc/self/exe", "fmt_robust", "--peak", path, (char *)NULL);
		_exit(4);
	}
	int st;
	struct rusage ru;
	if (p < 0 || wait4(p, &st, 0, &ru) != p)
		return -1;
	*opened = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	return ru.ru_maxrss / 1024;
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void test_hostile(void)
{
	/* many replaced kallsyms texts that inflate 20 MiB each: only the
	 * last is kept, and the budget bounds what one file can claim */
	size_t tl = 20u << 20;
	char *text = malloc(tl);
	memset(text, 'x', tl);
	struct dtcap_writer_opts o = {.synthetic = 1};
	struct dtcap_writer *w = dtcap_create(tpath("bomb.dtc"), NULL, &o);
	for (int i = 0; w && i < 30; i++)
		dtcap_put_kallsyms(w, text, tl);
	int ok = w && !dtcap_close(w);
	free(text);
	struct stat st;
	stat(tpath("bomb.dtc"), &st);
	int opened = 0;
	long mib = ok ? child_peak_mib(tpath("bomb.dtc"), &opened) : -1;
	/* 30 x 20 MiB kept would be 600 MiB; ASan adds its own overhead */
	result(ok && mib > 0 && mib < 250, "hostile.replaced_texts_not_kept",
	       "peak %ld MiB for a %lld-byte file (opened %d)", mib, (long long)st.st_size, opened);

	/* a budget below what the file needs: a clear error, not an OOM */
	struct dtcap_read_opts ro = {0, 8u << 20};
	struct dtcap_reader *r = dtcap_open_opts(tpath("bomb.dtc"), &ro);
	result(!r && strstr(dtcap_open_error(), "more than 8 MiB"), "hostile.budget_error",
	       "%s", r ? "opened" : dtcap_open_error());
	dtcap_reader_close(r);

	/* 80,000 probes, each redefined once: linear, not quadratic */
	size_t np = 80000;
	struct dtcap_probe *pv = calloc(np, sizeof(*pv));
	for (size_t i = 0; i < np; i++) {
		pv[i].id = (uint32_t)(i * 7 + 1);
		snprintf(pv[i].name, sizeof(pv[i].name), "p:f%zu:entry", i);
	}
	w = dtcap_create(tpath("probes.dtc"), NULL, &o);
	ok = w && !dtcap_put_probes(w, pv, np) && !dtcap_put_probes(w, pv, np) && !dtcap_close(w);
	double t0 = cpu_now();
	r = ok ? dtcap_open(tpath("probes.dtc")) : NULL;
	double t = cpu_now() - t0;
	ok = r && dtcap_nprobes(r) == np && dtcap_probe_by_id(r, 7 * 4000 + 1) &&
	     !strcmp(dtcap_probe_by_id(r, 7 * 4000 + 1)->name, "p:f4000:entry") &&
	     !dtcap_probe_by_id(r, 2);
	result(ok && t < 1.5, "hostile.80k_probes_open_fast", "%.2f s CPU, %zu probes", t,
	       r ? dtcap_nprobes(r) : 0);
	dtcap_reader_close(r);
	free(pv);

	/* ids a tool would size tables by: refused by the writer, and a
	 * block that carries them anyway is damage when read */
	w = dtcap_create(tpath("ids.dtc"), NULL, &o);
	struct dtcap_event e = {0};
	e.cpu = 0x80000000u;
	ok = w && dtcap_put_event(w, &e) == -1;
	e.cpu = 0;
	e.probe = 1u << 30;
	ok = ok && dtcap_put_event(w, &e) == -1;
	e.probe = 1;
	ok = ok && dtcap_put_event(w, &e) == 0 && !dtcap_close(w);
	result(ok, "hostile.writer_refuses_huge_ids", "%s", "accepted");
	size_t len;
	uint8_t *d = slurp(tpath("ids.dtc"), &len);
	struct chk c[16];
	size_t n = chunks(d, len, c, 16), k;
	for (k = 0; k < n && c[k].type != DTC_EVNT; k++)
		;
	int cpu_bad = 0, probe_bad = 0, comm_bad = 0, salv = 0;
	if (k < n) {
		/* one row: every column is raw, U32 with w = 0: base at +1 */
		uint8_t *x = d + c[k].off + DTC_CHDR_LEN, *seg = x + c[k].xlen;
		for (unsigned i = 0; i < DTC_C_PROBE; i++)
			seg += dtc_rd32(x + DTC_BLK_FIXED + i * DTC_BLK_COLDIR + 6);
		uint8_t *cpu = x + c[k].xlen + dtc_rd32(x + DTC_BLK_FIXED + 6);
		dtc_le32(cpu + 1, 0x80000000u);
		reseal(d, c[k].off);
		spit(tpath("ids2.dtc"), d, len);
		r = dtcap_open(tpath("ids2.dtc"));
		struct dtcap_block *b = dtcap_block_new();
		cpu_bad = r && dtcap_read_block(r, 0, DTCAP_COL_CPU, b) == -1;
		dtcap_reader_close(r);
		dtc_le32(cpu + 1, 0);
		dtc_le32(seg + 1, 1u << 30);
		reseal(d, c[k].off);
		spit(tpath("ids3.dtc"), d, len);
		r = dtcap_open(tpath("ids3.dtc"));
		probe_bad = r && dtcap_read_block(r, 0, DTCAP_COL_PROBE, b) == -1 &&
			    strstr(dtcap_reader_error(r), "offset");
		dtcap_reader_close(r);
		/* a comm id nothing defines (stats would size a table by it) */
		dtc_le32(seg + 1, 1);
		uint8_t *comm = seg + dtc_rd32(x + DTC_BLK_FIXED + DTC_C_PROBE * DTC_BLK_COLDIR + 6);
		dtc_le32(comm + 1, 1u << 31);
		reseal(d, c[k].off);
		spit(tpath("ids4.dtc"), d, len);
		r = dtcap_open(tpath("ids4.dtc"));
		comm_bad = r && dtcap_read_block(r, 0, DTCAP_COL_COMM, b) == -1;
		dtcap_reader_close(r);
		/* salvage drops such a block at open, and says so */
		struct dtcap_read_opts so = {DTCAP_OPEN_SALVAGE, 0};
		r = dtcap_open_opts(tpath("ids4.dtc"), &so);
		salv = r && dtcap_nblocks(r) == 0 && dtcap_ndamage(r) == 1 &&
		       dtcap_damage_at(r, 0)->events_lost == 1 && dtcap_nevents(r) == 0;
		dtcap_reader_close(r);
		dtcap_block_free(b);
	}
	result(cpu_bad, "hostile.cpu_id_2_31_is_damage", "block decoded");
	result(comm_bad, "hostile.undefined_comm_id_is_damage", "block decoded");
	result(salv, "salvage.drops_undecodable_block", "kept it or no report");
	result(probe_bad, "hostile.probe_id_2_30_is_damage", "block decoded");
	free(d);
}

/* ---------------------------------------------- item 13: metadata */

static void read_line(const char *path, char *buf, size_t n)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

static void test_metadata(void)
{
	struct dtcap_host h = {0};
	snprintf(h.kernel, sizeof(h.kernel), "k");
	struct dtcap_writer *w = dtcap_create(tpath("meta.dtc"), &h, NULL);
	struct dtcap_count cnt = {.produced = 1, .read = 1};
	int ok = w && !dtcap_put_counters(w, 1, &cnt, 1, NULL);
	usleep(20000);
	ok = ok && !dtcap_put_counters(w, 2, &cnt, 1, NULL) && !dtcap_close(w);
	struct dtcap_reader *r = ok ? dtcap_open(tpath("meta.dtc")) : NULL;
	const struct dtcap_host *g = r ? dtcap_host(r) : &h;
	char boot[64];
	read_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	result(r && !strcmp(g->tool_version, dtcap_version()) && g->tool_version[0] &&
	       !strcmp(g->boot_id, boot), "meta.version_and_boot_id", "tool '%s' (lib '%s') boot '%s' (%s)",
	       g->tool_version, dtcap_version(), g->boot_id, boot);
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], model[256] = "";
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	result(r && (!model[0] || !strcmp(g->cpu_model, model)) && g->cpu_model[0],
	       "meta.cpu_model", "'%s' vs '%s'", g->cpu_model, model);
	/* the build id: the kernel's GNU note, if /sys/kernel/notes is there */
	int have_notes = access("/sys/kernel/notes", R_OK) == 0;
	result(r && (!have_notes || strlen(g->kernel_build_id) == 40), "meta.kernel_build_id",
	       "'%s' (notes readable: %d)", g->kernel_build_id, have_notes);
	uint64_t m0 = 0, m1 = 0, m2 = 0;
	int64_t r1 = 0, r2 = 0;
	ok = r && dtcap_nclocks(r) == 3 && !dtcap_clock_at(r, 0, &m0, NULL) &&
	     !dtcap_clock_at(r, 1, &m1, &r1) && !dtcap_clock_at(r, 2, &m2, &r2) &&
	     m2 >= m1 + 20000000 && r2 - r1 >= 20000000 && r1 > 1600000000LL * 1000000000LL;
	result(ok, "meta.clock_resampled", "%zu clocks: %llu %llu/%lld %llu/%lld",
	       r ? dtcap_nclocks(r) : 0, (unsigned long long)m0, (unsigned long long)m1,
	       (long long)r1, (unsigned long long)m2, (long long)r2);
	dtcap_reader_close(r);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--peak")) {
		struct dtcap_reader *r = dtcap_open(argv[2]);
		if (r)
			count_rows(r);
		dtcap_reader_close(r);
		return r ? 0 : 3;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: fmt_robust TMPDIR GENERATED.dtc EMPTY.dtc\n");
		return 2;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", argv[1]);
	GPATH = argv[2];
	EPATH = argv[3];
	G = slurp(GPATH, &GLEN);
	struct dtcap_reader *r = G ? dtcap_open(GPATH) : NULL;
	NC = G ? chunks(G, GLEN, C, 4096) : 0;
	if (!r || NC < 8 || C[NC - 1].type != DTC_FOOT || nth_evnt(2) == NC) {
		result(0, "robust.setup", "%s is not a finished capture with 3+ blocks", GPATH);
		return 1;
	}
	GEVENTS = dtcap_nevents(r);
	dtcap_reader_close(r);
	test_long_path();
	test_mode();
	test_status();
	test_zero_header();
	test_footer_trailer();
	test_salvage();
	test_versioning();
	test_hostile();
	test_metadata();
	free(G);
	return 0;
}
