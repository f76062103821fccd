/*
 * derived_cache.c - the SQL tables spans and sched of a capture, kept in a
 * file beside it (CAPTURE.spans.cache, CAPTURE.sched.cache) so that they
 * are computed once per capture, not once per session.
 *
 * A cache file is a header, then the records as one zstd frame.  It is
 * used only if everything in it agrees with the capture as opened and with
 * this build: the capture's device, inode, size, modification time and a
 * hash of its first and last 64 KiB (dtcap_ident), the version that wrote
 * it, the record layout, the open mode; its header and its records carry
 * their own hashes; its counts are bounded by the capture's events, each
 * record's values are checked before use.  Anything else makes it stale or
 * hostile: it is ignored and the table computed again.  Only a regular
 * file of the caller's own, not a symbolic link, is read or replaced; a
 * file of that name that is not a cache is never written over.  The
 * capture itself is only read.
 *
 * DT_CACHE=off: neither read nor written.  DT_CACHE_DEBUG=1: each use says
 * on standard error whether it was a hit, or why not, and whether the
 * cache was written (for the tests).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY	/* XXH3_state_t on the stack */
#include <xxhash.h>
#include <zstd.h>

#include "dtsql_int.h"
#include "engine.h"
#include "util.h"

#define DC_MAGIC	0x3143564952454454ull	/* "DTDERIV1" little-endian */
#define DC_VERSION	1
#define DC_NHDR		18			/* header words */
#define SPAN_REC	(8 + 8 + 4 * 4 + 8 + 4 + 1 + 8 * RPT_SPAN_ARGS)
#define UNM_REC		(4 * 4 + 1)
#define SCHED_REC	(3 * 8 + 11 * 4 + 3)

static const char *const kname[] = { "spans", "sched" };

/*
 * Off by DT_CACHE=off, and for a damaged capture: what a reader makes of
 * the damage depends on how it was opened (salvaged or not).
 */
static int
enabled(const struct dtcap_reader *r)
{
	const char *e = getenv("DT_CACHE");
	return !(e && strcmp(e, "off") == 0) && dtcap_reader_warning(r) == NULL &&
	       dtcap_ndamage(r) == 0;
}

static void
dbg(int kind, const char *fmt, ...)
{
	const char *e = getenv("DT_CACHE_DEBUG");
	va_list ap;

	if (!e || strcmp(e, "1") != 0)
		return;
	fprintf(stderr, "dt: cache: %s: ", kname[kind]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static char *
cache_path(const struct dtcap_reader *r, int kind)
{
	char *p;
	if (asprintf(&p, "%s.%s.cache", dtcap_path(r), kname[kind]) < 0)
		return NULL;
	return p;
}

/* The header every cache of this capture and build must have (the counts
 * and hashes of the body apart). */
static void
expect_hdr(const struct dtcap_reader *r, int kind, uint64_t *h)
{
	struct dtcap_ident id;
	const char *v = dtu_version();

	dtcap_ident(r, &id);
	memset(h, 0, DC_NHDR * sizeof(*h));
	h[0] = DC_MAGIC;
	h[1] = DC_VERSION | (uint64_t)kind << 16;
	h[2] = kind == 0 ? (uint64_t)SPAN_REC << 32 | UNM_REC : SCHED_REC;
	h[3] = XXH3_64bits(v, strlen(v));
	h[4] = id.dev;
	h[5] = id.ino;
	h[6] = id.size;
	h[7] = id.mtime_ns;
	h[8] = id.hash;
}

/* ---- records: fixed little layouts, field by field (no padding bytes) */

static uint8_t *
put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

static const uint8_t *
get(const uint8_t *p, void *v, size_t n)
{
	memcpy(v, p, n);
	return p + n;
}

static void
span_enc(uint8_t *p, const struct rpt_span *s, uint8_t nargs, const uint64_t *args)
{
	p = put(p, &s->start, 8);
	p = put(p, &s->end, 8);
	p = put(p, &s->tid, 4);
	p = put(p, &s->pid, 4);
	p = put(p, &s->comm, 4);
	p = put(p, &s->probe, 4);
	p = put(p, &s->ret, 8);
	p = put(p, &s->err, 4);
	p = put(p, &nargs, 1);
	put(p, args, 8 * RPT_SPAN_ARGS);
}

static void
span_dec(const uint8_t *p, struct rpt_span *s, uint8_t *nargs, uint64_t *args)
{
	p = get(p, &s->start, 8);
	p = get(p, &s->end, 8);
	p = get(p, &s->tid, 4);
	p = get(p, &s->pid, 4);
	p = get(p, &s->comm, 4);
	p = get(p, &s->probe, 4);
	p = get(p, &s->ret, 8);
	p = get(p, &s->err, 4);
	p = get(p, nargs, 1);
	get(p, args, 8 * RPT_SPAN_ARGS);
}

static void
unm_enc(uint8_t *p, const struct rpt_unmatched *u)
{
	p = put(p, &u->probe, 4);
	p = put(p, &u->tid, 4);
	p = put(p, &u->pid, 4);
	p = put(p, &u->comm, 4);
	put(p, &u->entry, 1);
}

static void
unm_dec(const uint8_t *p, struct rpt_unmatched *u)
{
	p = get(p, &u->probe, 4);
	p = get(p, &u->tid, 4);
	p = get(p, &u->pid, 4);
	p = get(p, &u->comm, 4);
	get(p, &u->entry, 1);
}

static void
sched_enc(uint8_t *p, const struct rpt_sched_span *s)
{
	p = put(p, &s->start, 8);
	p = put(p, &s->end, 8);
	p = put(p, &s->wake, 8);
	const uint32_t w[11] = { s->tid, s->pid, s->comm, s->cpu, s->kstack, s->ustack, s->wtid,
				 s->wpid, s->wcomm, s->wkstack, s->wustack };
	p = put(p, w, sizeof(w));
	p = put(p, &s->wctx, 1);
	p = put(p, &s->state, 1);
	put(p, &s->open, 1);
}

static void
sched_dec(const uint8_t *p, struct rpt_sched_span *s)
{
	uint32_t w[11];
	memset(s, 0, sizeof(*s));
	p = get(p, &s->start, 8);
	p = get(p, &s->end, 8);
	p = get(p, &s->wake, 8);
	p = get(p, w, sizeof(w));
	s->tid = w[0], s->pid = w[1], s->comm = w[2], s->cpu = w[3], s->kstack = w[4];
	s->ustack = w[5], s->wtid = w[6], s->wpid = w[7], s->wcomm = w[8], s->wkstack = w[9];
	s->wustack = w[10];
	p = get(p, &s->wctx, 1);
	p = get(p, &s->state, 1);
	get(p, &s->open, 1);
}

/* ---- reading */

struct rd {
	int		fd;
	ZSTD_DCtx	*z;
	uint8_t		in[1 << 16];
	ZSTD_inBuffer	ib;
	int		eof;		/* the file is read to its end */
	size_t		frame_left;	/* 0: the frame ended */
	XXH3_state_t	hs;
};

/* Exactly n bytes of the frame, or -1 (short, damaged, past its end). */
static int
rd_bytes(struct rd *d, uint8_t *out, size_t n)
{
	ZSTD_outBuffer ob = { out, n, 0 };

	while (ob.pos < n) {
		if (d->frame_left == 0)
			return -1;	/* the frame ended before the records */
		if (d->ib.pos == d->ib.size && !d->eof) {
			ssize_t k = read(d->fd, d->in, sizeof(d->in));
			if (k < 0)
				return -1;
			if (k == 0)
				d->eof = 1;
			d->ib = (ZSTD_inBuffer){ d->in, (size_t)k, 0 };
		}
		size_t in0 = d->ib.pos, out0 = ob.pos;
		size_t rc = ZSTD_decompressStream(d->z, &ob, &d->ib);
		if (ZSTD_isError(rc))
			return -1;
		d->frame_left = rc;
		if (d->ib.pos == in0 && ob.pos == out0 && d->eof)
			return -1;	/* truncated */
	}
	XXH3_64bits_update(&d->hs, out, n);
	return 0;
}

/* The frame ends right after the records and the file with it. */
static int
rd_end(struct rd *d)
{
	uint8_t extra;
	ZSTD_outBuffer ob = { &extra, 1, 0 };

	while (d->frame_left != 0) {
		if (d->ib.pos == d->ib.size) {
			ssize_t k = read(d->fd, d->in, sizeof(d->in));
			if (k <= 0)
				return -1;
			d->ib = (ZSTD_inBuffer){ d->in, (size_t)k, 0 };
		}
		size_t rc = ZSTD_decompressStream(d->z, &ob, &d->ib);
		if (ZSTD_isError(rc) || ob.pos != 0)
			return -1;	/* more data than the records */
		d->frame_left = rc;
	}
	return d->ib.pos == d->ib.size && read(d->fd, &extra, 1) == 0 ? 0 : -1;
}

static int
ok_state(char c)
{
	return c && strchr("RSDTtXZPI?", c) != NULL;
}

/* Open the cache file if it is a regular file of ours, not a link. */
static int
open_ours(const char *path, int kind)
{
	char err[256];
	struct stat st;
	int fd = dtu_open_regular(path, 1, err, sizeof(err));

	if (fd < 0) {
		dbg(kind, "miss: %s", errno == ENOENT ? "no cache" : err);
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		dbg(kind, "miss: %s is not the caller's: ignored", path);
		close(fd);
		return -1;
	}
	return fd;
}

int
dtsql_cache_load(struct dtcap_reader *r, int kind, struct rpt_spans *sp, struct rpt_sched *sc)
{
	uint64_t want[DC_NHDR], h[DC_NHDR];
	struct rd *d = NULL;
	char *path = NULL;
	const char *why = "out of memory";
	int fd = -1, ok = 0;
	uint8_t rec[SPAN_REC > SCHED_REC ? SPAN_REC : SCHED_REC];

	if (!enabled(r) || !(path = cache_path(r, kind)))
		return 0;
	if ((fd = open_ours(path, kind)) < 0) {
		free(path);
		return 0;
	}
	expect_hdr(r, kind, want);
	why = "stale or damaged header";
	if (read(fd, h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    XXH3_64bits(h, (DC_NHDR - 1) * sizeof(*h)) != h[DC_NHDR - 1] ||
	    memcmp(h, want, 9 * sizeof(*h)) != 0)
		goto out;
	/* no more records than the capture has events: a hostile count
	 * claims no memory the table itself would not */
	uint64_t n = h[9], nu = h[10], nev = dtcap_nevents(r);
	why = "counts beyond the capture's events";
	if (n > nev || nu > nev || (kind == 1 && nu != 0))
		goto out;
	why = "out of memory";
	if (!(d = calloc(1, sizeof(*d))) || !(d->z = ZSTD_createDCtx()))
		goto out;
	d->fd = fd;
	d->frame_left = 1;
	XXH3_64bits_reset(&d->hs);
	if (kind == 0) {
		memset(sp, 0, sizeof(*sp));
		if (n && (!(sp->v = calloc(n, sizeof(*sp->v))) ||
			  !(sp->args = calloc(n, sizeof(*sp->args))) ||
			  !(sp->nargs = calloc(n, 1))))
			goto out;
		if (nu && !(sp->u = calloc(nu, sizeof(*sp->u))))
			goto out;
		sp->cap = sp->acap = sp->ncap = n;
		sp->ucap = nu;
		why = "damaged records";
		for (uint64_t i = 0; i < n; i++) {
			if (rd_bytes(d, rec, SPAN_REC))
				goto out;
			span_dec(rec, &sp->v[i], &sp->nargs[i], sp->args[i]);
			if (sp->nargs[i] > RPT_SPAN_ARGS || sp->v[i].end < sp->v[i].start ||
			    !dtcap_probe_by_id(r, sp->v[i].probe))
				goto out;
			sp->n++;
		}
		for (uint64_t i = 0; i < nu; i++) {
			if (rd_bytes(d, rec, UNM_REC))
				goto out;
			unm_dec(rec, &sp->u[i]);
			if (sp->u[i].entry > 1 || !dtcap_probe_by_id(r, sp->u[i].probe))
				goto out;
			sp->nu++;
		}
	} else {
		memset(sc, 0, sizeof(*sc));
		if (n && !(sc->v = calloc(n, sizeof(*sc->v))))
			goto out;
		sc->cap = n;
		sc->tmin = h[11], sc->tmax = h[12], sc->nevents = h[13], sc->nlost = h[14];
		sc->switch_probe = (uint32_t)h[15];
		why = "damaged records";
		for (uint64_t i = 0; i < n; i++) {
			if (rd_bytes(d, rec, SCHED_REC))
				goto out;
			struct rpt_sched_span *s = &sc->v[i];
			sched_dec(rec, s);
			if (s->end < s->start || !ok_state(s->state) || s->open > 1)
				goto out;
			sc->n++;
		}
	}
	why = "damaged records";
	if (rd_end(d) || XXH3_64bits_digest(&d->hs) != h[16])
		goto out;
	ok = 1;
	dbg(kind, "hit: %s", path);
out:
	if (!ok) {
		dbg(kind, "miss: %s: %s: ignored", path, why);
		if (kind == 0)
			rpt_spans_free(sp);
		else
			rpt_sched_free(sc);
	}
	if (d)
		ZSTD_freeDCtx(d->z);
	free(d);
	close(fd);
	free(path);
	return ok;
}

/* ---- writing */

struct wr {
	FILE		*f;
	ZSTD_CCtx	*z;
	uint8_t		out[1 << 16];
	XXH3_state_t	hs;
	int		bad;
};

static void
wr_bytes(struct wr *w, const void *p, size_t n, ZSTD_EndDirective end)
{
	ZSTD_inBuffer ib = { p, n, 0 };
	size_t left;

	if (w->bad)
		return;
	XXH3_64bits_update(&w->hs, p, n);
	do {
		ZSTD_outBuffer ob = { w->out, sizeof(w->out), 0 };
		left = ZSTD_compressStream2(w->z, &ob, &ib, end);
		if (ZSTD_isError(left) || fwrite(w->out, 1, ob.pos, w->f) != ob.pos) {
			w->bad = 1;
			return;
		}
	} while (end == ZSTD_e_end ? left != 0 : ib.pos < ib.size);
}

/*
 * May path be written?  Absent (then only as a new file), or a cache of
 * ours (a regular file of the caller's starting with the magic).
 */
static int
replaceable(const char *path, int kind, int *exists)
{
	struct stat st;
	uint64_t m;
	int fd;

	*exists = 0;
	if (lstat(path, &st) != 0)
		return errno == ENOENT;
	*exists = 1;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		dbg(kind, "not written: %s is not a cache of the caller's", path);
		return 0;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return 0;
	int ours = read(fd, &m, sizeof(m)) == (ssize_t)sizeof(m) && m == DC_MAGIC;
	close(fd);
	if (!ours)
		dbg(kind, "not written: %s is not a cache: left as it is", path);
	return ours;
}

void
dtsql_cache_save(struct dtcap_reader *r, int kind, const struct rpt_spans *sp,
		 const struct rpt_sched *sc)
{
	uint64_t h[DC_NHDR];
	char *path = NULL, *tmp = NULL, err[512];
	struct wr *w = NULL;
	int fd = -1, exists;
	uint8_t rec[SPAN_REC > SCHED_REC ? SPAN_REC : SCHED_REC];
	static const uint64_t noargs[RPT_SPAN_ARGS];

	if (!enabled(r) || !(path = cache_path(r, kind)) || !replaceable(path, kind, &exists))
		goto out;
	if ((fd = dtu_out_tmp_create(path, &tmp, err, sizeof(err))) < 0) {
		dbg(kind, "not written: %s", err);	/* a directory not ours to write */
		goto out;
	}
	if (!(w = calloc(1, sizeof(*w))) || !(w->z = ZSTD_createCCtx()) ||
	    !(w->f = fdopen(fd, "w"))) {
		close(fd);
		goto fail;
	}
	fd = -1;
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, 1);
	expect_hdr(r, kind, h);
	XXH3_64bits_reset(&w->hs);
	/* the header goes first as a placeholder: its body hash is known last */
	if (fwrite(h, sizeof(h), 1, w->f) != 1)
		goto fail;
	/* the frame says its size: a reader knows the records' length up front */
	ZSTD_CCtx_setPledgedSrcSize(w->z, kind == 0 ? (unsigned long long)sp->n * SPAN_REC +
				    (unsigned long long)sp->nu * UNM_REC :
				    (unsigned long long)sc->n * SCHED_REC);
	if (kind == 0) {
		h[9] = sp->n;
		h[10] = sp->nu;
		for (size_t i = 0; i < sp->n; i++) {
			span_enc(rec, &sp->v[i], sp->nargs ? sp->nargs[i] : 0,
				 sp->args ? sp->args[i] : noargs);
			wr_bytes(w, rec, SPAN_REC, ZSTD_e_continue);
		}
		for (size_t i = 0; i < sp->nu; i++) {
			unm_enc(rec, &sp->u[i]);
			wr_bytes(w, rec, UNM_REC, ZSTD_e_continue);
		}
	} else {
		h[9] = sc->n;
		h[11] = sc->tmin, h[12] = sc->tmax, h[13] = sc->nevents, h[14] = sc->nlost;
		h[15] = sc->switch_probe;
		for (size_t i = 0; i < sc->n; i++) {
			sched_enc(rec, &sc->v[i]);
			wr_bytes(w, rec, SCHED_REC, ZSTD_e_continue);
		}
	}
	wr_bytes(w, NULL, 0, ZSTD_e_end);
	h[16] = XXH3_64bits_digest(&w->hs);
	h[DC_NHDR - 1] = XXH3_64bits(h, (DC_NHDR - 1) * sizeof(*h));
	if (w->bad || fseek(w->f, 0, SEEK_SET) != 0 || fwrite(h, sizeof(h), 1, w->f) != 1 ||
	    fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
		goto fail;
	int rc = fclose(w->f);
	w->f = NULL;
	if (rc != 0)
		goto fail;
	/* a new cache never replaces a file that appeared meanwhile */
	sigset_t old;
	dtu_block_fatal(&old);
	rc = exists ? rename(tmp, path) : renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
	if (rc == 0)
		dtu_out_tmp_forget();
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		goto fail;
	dbg(kind, "written: %s", path);
	goto out;
fail:
	dbg(kind, "not written: %s: %s", tmp ? tmp : path, strerror(errno));
	if (tmp) {
		sigset_t old2;
		dtu_block_fatal(&old2);
		unlink(tmp);
		dtu_out_tmp_forget();
		sigprocmask(SIG_SETMASK, &old2, NULL);
	}
out:
	if (w) {
		if (w->f)
			fclose(w->f);
		ZSTD_freeCCtx(w->z);
		free(w);
	}
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(path);
}
