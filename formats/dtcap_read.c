/*
 * dtcap_read.c - the capture reader.
 *
 * The file is mapped read-only.  Open walks every chunk once (through the
 * footer index when the trailer is intact, else by scanning from the file
 * header), verifies both checksums of each, decodes the metadata and
 * records where each event block is.  Event blocks are decompressed only
 * when asked for, one column segment at a time.  Every length read from
 * the file is checked against the bytes that are really there and against
 * fixed limits before it sizes anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dtcap.h"
#include "dtcap_int.h"

/* The fuzzer's second build skips checksums so that mutated inputs reach
 * the parsers behind them; nothing else may define this. */
#ifdef DTC_FUZZ_NO_CHECKSUM
#define NO_CHECKSUM 1
#else
#define NO_CHECKSUM 0
#endif

struct rstack {
	uint64_t	off;
	uint32_t	n;
	uint32_t	kind;
};

struct rcount {
	uint64_t	ts;
	uint32_t	ncpus;
	struct dtcap_count *percpu;
	struct dtcap_count rec;
};

struct rblock {
	const uint8_t	*dir;		/* column directory in the map */
	unsigned	ncols;
	uint32_t	ndict;		/* contexts */
	const uint8_t	*pay;
	uint32_t	plen;
};

struct arena {
	struct arena	*next;
	size_t		used, cap;
	char		mem[];
};

struct dtcap_reader {
	char		*path;
	const uint8_t	*map;
	size_t		size;
	char		err[512];
	char		warn[512];
	int		has_warn;
	ZSTD_DCtx	*dctx;
	struct arena	*arena;

	struct dtcap_host host;
	struct dtcap_probe *probes;
	size_t		nprobes;
	uint32_t	*probe_idx;	/* id -> index + 1, ids <= nprobe_idx */
	uint32_t	nprobe_idx;
	char		(*comms)[DTCAP_COMMLEN];
	uint32_t	ncomms;
	struct rstack	*stacks;
	uint32_t	nstacks;
	uint64_t	*frames;
	size_t		nframes, frames_cap;
	char		*kallsyms, *modules;
	size_t		kallsyms_len, modules_len;
	struct dtcap_file *files;
	size_t		nfiles;
	struct dtcap_proc *procs;
	size_t		nprocs;
	uint32_t	*proc_idx;	/* procs sorted by (pid, ts, order) */
	struct rcount	*counts;
	size_t		ncounts;
	struct dtcap_blockinfo *blocks;
	struct rblock	*rblocks;
	size_t		nblocks, blocks_cap;
	uint64_t	nevents;
};

static _Thread_local char open_err[512];

static void rerr(struct dtcap_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rerr(struct dtcap_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%s: ", r->path);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
}

static void rwarn_trunc(struct dtcap_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void rwarn_trunc(struct dtcap_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->warn, sizeof(r->warn), "%s: truncated at offset %llu: ",
			 r->path, (unsigned long long)off);
	va_start(ap, fmt);
	vsnprintf(r->warn + n, sizeof(r->warn) - n, fmt, ap);
	va_end(ap);
	r->has_warn = 1;
}

const char *dtcap_open_error(void) { return open_err; }
const char *dtcap_reader_error(const struct dtcap_reader *r) { return r ? r->err : open_err; }
const char *dtcap_reader_warning(const struct dtcap_reader *r)
{
	return r && r->has_warn ? r->warn : NULL;
}

static char *arena_dup(struct dtcap_reader *r, const char *s, size_t n)
{
	struct arena *a = r->arena;
	if (!a || a->cap - a->used < n + 1) {
		size_t cap = n + 1 > 65536 ? n + 1 : 65536;
		a = malloc(sizeof(*a) + cap);
		if (!a)
			return NULL;
		a->used = 0;
		a->cap = cap;
		a->next = r->arena;
		r->arena = a;
	}
	char *p = a->mem + a->used;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	a->used += n + 1;
	return p;
}

/* Grow *arr (of elem-sized items) to hold need items; bounded by callers. */
static int grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *n = realloc(*(void **)arrp, nc * elem);
	if (!n)
		return -1;
	*(void **)arrp = n;
	*cap = nc;
	return 0;
}

/* ------------------------------------------------------- metadata chunks */

struct chunk {
	uint64_t	off;
	uint32_t	type, flags, xlen, clen, ulen;
	const uint8_t	*xh, *pay;
};

#define DAMAGED(c) do { \
	char tn_[8]; \
	rerr(r, "damaged %s chunk at offset %llu", dtc_type_name((c)->type, tn_), \
	     (unsigned long long)(c)->off); \
	return -1; \
} while (0)

static int copy_str(struct dtc_cur *cu, char *dst, size_t dstsz)
{
	size_t n;
	const char *s = dtc_get_str(cu, dstsz - 1, &n);
	if (!s)
		return -1;
	memcpy(dst, s, n);
	dst[n] = 0;
	return 0;
}

static const char *dup_str(struct dtcap_reader *r, struct dtc_cur *cu, size_t max)
{
	size_t n;
	const char *s = dtc_get_str(cu, max, &n);
	if (!s)
		return NULL;
	const char *d = arena_dup(r, s, n);
	if (!d)
		cu->err = 2;	/* ENOMEM, not damage */
	return d;
}

static int do_host(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	struct dtcap_host h = {0};
	if (copy_str(cu, h.kernel, sizeof(h.kernel)) ||
	    copy_str(cu, h.hostname, sizeof(h.hostname)))
		DAMAGED(c);
	h.ncpus = dtc_get_u32(cu);
	h.clock_mono_ns = dtc_get_u64(cu);
	h.clock_real_ns = (int64_t)dtc_get_u64(cu);
	h.start_ns = dtc_get_u64(cu);
	if (copy_str(cu, h.command, sizeof(h.command)) || cu->err)
		DAMAGED(c);
	r->host = h;
	return 0;
}

static int do_probes(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p))
		DAMAGED(c);
	size_t cap = r->nprobes;
	if (grow(&r->probes, &cap, r->nprobes + n, sizeof(*r->probes))) {
		rerr(r, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		struct dtcap_probe p;
		memset(&p, 0, sizeof(p));
		uint64_t id = dtc_get_uv(cu), fl = dtc_get_uv(cu);
		if (id == 0 || id > UINT32_MAX || fl > UINT32_MAX)
			DAMAGED(c);
		p.id = (uint32_t)id;
		p.flags = (uint32_t)fl;
		if (copy_str(cu, p.name, sizeof(p.name)))
			DAMAGED(c);
		uint64_t na = dtc_get_uv(cu);
		if (na > DTCAP_MAXARGS)
			DAMAGED(c);
		p.nargs = (uint32_t)na;
		for (uint32_t k = 0; k < p.nargs; k++) {
			if (copy_str(cu, p.args[k].name, sizeof(p.args[k].name)) ||
			    copy_str(cu, p.args[k].type, sizeof(p.args[k].type)))
				DAMAGED(c);
			p.args[k].slot = dtc_get_u8(cu);
			p.args[k].nslots = dtc_get_u8(cu);
		}
		if (cu->err)
			DAMAGED(c);
		/* a later table redefines an id rather than adding a twin */
		size_t j;
		for (j = 0; j < r->nprobes; j++)
			if (r->probes[j].id == p.id)
				break;
		r->probes[j] = p;
		if (j == r->nprobes)
			r->nprobes++;
	}
	return 0;
}

static int do_comms(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t first = dtc_get_uv(cu), n = dtc_get_uv(cu);
	if (cu->err || first != (uint64_t)r->ncomms + 1 ||
	    n > (uint64_t)(cu->end - cu->p))
		DAMAGED(c);
	size_t cap = r->ncomms;
	if (grow(&r->comms, &cap, r->ncomms + n, sizeof(*r->comms))) {
		rerr(r, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		if (copy_str(cu, r->comms[r->ncomms + i], DTCAP_COMMLEN))
			DAMAGED(c);
	r->ncomms += (uint32_t)n;
	return 0;
}

static int do_stacks(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t first = dtc_get_uv(cu), n = dtc_get_uv(cu);
	if (cu->err || first != (uint64_t)r->nstacks + 1 ||
	    n > (uint64_t)(cu->end - cu->p) || r->nstacks + n > UINT32_MAX / 2)
		DAMAGED(c);
	size_t cap = r->nstacks;
	if (grow(&r->stacks, &cap, r->nstacks + n, sizeof(*r->stacks))) {
		rerr(r, "out of memory");
		return -1;
	}
	uint64_t prev = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = dtc_get_uv(cu);
		uint32_t nf = (uint32_t)(v >> 2);
		if (cu->err || v >> 2 > DTCAP_MAXFRAMES ||
		    nf > (uint64_t)(cu->end - cu->p))
			DAMAGED(c);
		if (grow(&r->frames, &r->frames_cap, r->nframes + nf, 8)) {
			rerr(r, "out of memory");
			return -1;
		}
		uint64_t *f = r->frames + r->nframes;
		for (uint32_t k = 0; k < nf; k++) {
			prev += (uint64_t)dtc_unzz(dtc_get_uv(cu));
			f[k] = prev;
		}
		if (cu->err)
			DAMAGED(c);
		if (nf)
			prev = f[0];
		r->stacks[r->nstacks + i] = (struct rstack){r->nframes, nf, (uint32_t)(v & 3)};
		r->nframes += nf;
	}
	r->nstacks += (uint32_t)n;
	return 0;
}

static int do_text(struct dtcap_reader *r, const struct chunk *c, const uint8_t *p,
		   size_t n)
{
	char *t = arena_dup(r, (const char *)p, n);
	if (!t) {
		rerr(r, "out of memory");
		return -1;
	}
	if (c->type == DTC_KSYM) {
		r->kallsyms = t;
		r->kallsyms_len = n;
	} else {
		r->modules = t;
		r->modules_len = n;
	}
	return 0;
}

static int do_file(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	struct dtcap_file f;
	memset(&f, 0, sizeof(f));
	uint64_t id = dtc_get_uv(cu);
	if (cu->err || id != r->nfiles + 1)
		DAMAGED(c);
	f.id = (uint32_t)id;
	if (!(f.path = dup_str(r, cu, DTC_MAX_PATH)))
		goto bad;
	f.build_id_len = dtc_get_u8(cu);
	if (f.build_id_len > 20)
		DAMAGED(c);
	const uint8_t *bid = dtc_get_bytes(cu, f.build_id_len);
	if (bid)
		memcpy(f.build_id, bid, f.build_id_len);
	f.load_bias_hint = dtc_get_u64(cu);
	uint64_t ns = dtc_get_uv(cu);
	/* every symbol takes at least 3 bytes */
	if (cu->err || ns > (uint64_t)(cu->end - cu->p) / 3)
		DAMAGED(c);
	struct dtcap_sym *syms = NULL;
	if (ns) {
		syms = malloc(ns * sizeof(*syms));
		if (!syms) {
			rerr(r, "out of memory");
			return -1;
		}
	}
	uint64_t addr = 0;
	for (uint64_t i = 0; i < ns; i++) {
		addr += dtc_get_uv(cu);
		syms[i].addr = addr;
		syms[i].size = dtc_get_uv(cu);
		if (!(syms[i].name = dup_str(r, cu, DTC_MAX_PATH))) {
			free(syms);
			goto bad;
		}
	}
	f.nsyms = (uint32_t)ns;
	f.syms = syms;
	size_t cap = r->nfiles;
	if (grow(&r->files, &cap, r->nfiles + 1, sizeof(*r->files))) {
		free(syms);
		rerr(r, "out of memory");
		return -1;
	}
	r->files[r->nfiles++] = f;
	return 0;
bad:
	if (cu->err == 2) {
		rerr(r, "out of memory");
		return -1;
	}
	DAMAGED(c);
}

static int do_procs(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p) / 8)
		DAMAGED(c);
	size_t cap = r->nprocs;
	if (grow(&r->procs, &cap, r->nprocs + n, sizeof(*r->procs))) {
		rerr(r, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		struct dtcap_proc p;
		memset(&p, 0, sizeof(p));
		p.ts = dtc_get_u64(cu);
		uint64_t pid = dtc_get_uv(cu), ppid = dtc_get_uv(cu);
		if (pid > UINT32_MAX || ppid > UINT32_MAX)
			DAMAGED(c);
		p.pid = (uint32_t)pid;
		p.ppid = (uint32_t)ppid;
		if (copy_str(cu, p.comm, sizeof(p.comm)))
			DAMAGED(c);
		if (!(p.exe = dup_str(r, cu, DTC_MAX_PATH)))
			goto bad;
		uint64_t nm = dtc_get_uv(cu);
		if (cu->err || nm > (uint64_t)(cu->end - cu->p) / 6)
			DAMAGED(c);
		struct dtcap_map *m = nm ? calloc(nm, sizeof(*m)) : NULL;
		if (nm && !m) {
			rerr(r, "out of memory");
			return -1;
		}
		for (uint64_t k = 0; k < nm; k++) {
			m[k].start = dtc_get_uv(cu);
			m[k].end = m[k].start + dtc_get_uv(cu);
			m[k].offset = dtc_get_uv(cu);
			uint64_t file = dtc_get_uv(cu), prot = dtc_get_uv(cu);
			if (file > r->nfiles || prot > 7 || !(m[k].name = dup_str(r, cu, DTC_MAX_PATH))) {
				free(m);
				goto bad;
			}
			m[k].file = (uint32_t)file;
			m[k].prot = (uint32_t)prot;
		}
		p.nmaps = (uint32_t)nm;
		p.maps = m;
		r->procs[r->nprocs++] = p;
	}
	return 0;
bad:
	if (cu->err == 2) {
		rerr(r, "out of memory");
		return -1;
	}
	DAMAGED(c);
}

static int do_counters(struct dtcap_reader *r, const struct chunk *c, struct dtc_cur *cu)
{
	struct rcount k;
	memset(&k, 0, sizeof(k));
	k.ts = dtc_get_u64(cu);
	uint64_t n = dtc_get_uv(cu);
	if (cu->err || n > (uint64_t)(cu->end - cu->p) / 6)
		DAMAGED(c);
	k.ncpus = (uint32_t)n;
	k.percpu = calloc(n + 1, sizeof(*k.percpu));
	if (!k.percpu) {
		rerr(r, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i <= n; i++) {
		struct dtcap_count *x = i < n ? &k.percpu[i] : &k.rec;
		x->produced = dtc_get_uv(cu);
		x->read = dtc_get_uv(cu);
		x->dropped = dtc_get_uv(cu);
		x->skipped = dtc_get_uv(cu);
		x->recursive = dtc_get_uv(cu);
		x->nested = dtc_get_uv(cu);
	}
	/* optional tail (newer writers): the recorder's user-stack tally;
	 * values beyond those we know are skipped */
	if (!cu->err && cu->p < cu->end) {
		uint64_t extra = dtc_get_uv(cu);
		uint64_t *dst[3] = { &k.rec.ustack_dwarf, &k.rec.ustack_dwarf_trunc,
				     &k.rec.ustack_fp_behind };
		if (extra > (uint64_t)(cu->end - cu->p)) {
			free(k.percpu);
			DAMAGED(c);
		}
		for (uint64_t i = 0; i < extra && !cu->err; i++) {
			uint64_t v = dtc_get_uv(cu);
			if (i < 3)
				*dst[i] = v;
		}
	}
	size_t cap = r->ncounts;
	if (cu->err || grow(&r->counts, &cap, r->ncounts + 1, sizeof(*r->counts))) {
		free(k.percpu);
		if (cu->err)
			DAMAGED(c);
		rerr(r, "out of memory");
		return -1;
	}
	r->counts[r->ncounts++] = k;
	return 0;
}

static int do_block(struct dtcap_reader *r, const struct chunk *c)
{
	struct dtc_cur cu = {c->xh, c->xh + c->xlen, 0};
	struct dtcap_blockinfo bi;
	bi.offset = c->off;
	bi.rows = dtc_get_u32(&cu);
	bi.tmin = dtc_get_u64(&cu);
	bi.tmax = dtc_get_u64(&cu);
	bi.pid_min = dtc_get_u32(&cu);
	bi.pid_max = dtc_get_u32(&cu);
	uint32_t ndict = dtc_get_u32(&cu);
	unsigned ncols = dtc_get_u8(&cu);
	if (cu.err || bi.rows == 0 || bi.rows > DTC_MAX_ROWS || bi.tmin > bi.tmax ||
	    ndict == 0 || ndict > bi.rows ||
	    bi.pid_min > bi.pid_max || ncols < DTC_C_ARG0 || ncols > DTC_NCOLS ||
	    c->xlen != DTC_BLK_FIXED + ncols * DTC_BLK_COLDIR || c->flags != 0)
		DAMAGED(c);
	uint64_t total = 0;
	for (unsigned i = 0; i < ncols; i++) {
		const uint8_t *d = cu.p + i * DTC_BLK_COLDIR;
		uint32_t raw = dtc_rd32(d + 2), stored = dtc_rd32(d + 6);
		if (d[0] != i || d[1] > DTC_M_ZSTD ||
		    raw > 9 + 8ull * bi.rows ||
		    (d[1] == DTC_M_RAW && raw != stored))
			DAMAGED(c);
		total += stored;
	}
	if (total != c->clen)
		DAMAGED(c);
	size_t cap = r->blocks_cap;
	if (grow(&r->blocks, &cap, r->nblocks + 1, sizeof(*r->blocks)) ||
	    grow(&r->rblocks, &r->blocks_cap, r->nblocks + 1, sizeof(*r->rblocks))) {
		rerr(r, "out of memory");
		return -1;
	}
	r->blocks[r->nblocks] = bi;
	r->rblocks[r->nblocks] = (struct rblock){cu.p, ncols, ndict, c->pay, c->clen};
	r->nblocks++;
	r->nevents += bi.rows;
	return 0;
}

/*
 * Validate the chunk at off: 0 and *c filled if whole and intact, 1 if it
 * runs past the end of the file (truncation), -1 (error set) on damage.
 */
static int read_chunk(struct dtcap_reader *r, uint64_t off, uint64_t limit,
		      struct chunk *c)
{
	const uint8_t *h = r->map + off;
	if (limit - off < DTC_CHDR_LEN)
		return 1;
	if (dtc_rd32(h + 28) != dtc_hdr_sum(h) && !NO_CHECKSUM) {
		static const uint8_t zero[DTC_CHDR_LEN];
		/* a crash can leave a block of zeros where the last write
		 * was going: that is a cut, not damage */
		if (!memcmp(h, zero, DTC_CHDR_LEN))
			return 1;
		rerr(r, "damaged chunk header at offset %llu", (unsigned long long)off);
		return -1;
	}
	c->off = off;
	c->type = dtc_rd32(h);
	c->flags = dtc_rd32(h + 4);
	c->xlen = dtc_rd32(h + 8);
	c->clen = dtc_rd32(h + 12);
	c->ulen = dtc_rd32(h + 16);
	char tn[8];
	if (c->xlen > DTC_MAX_XLEN || c->ulen > DTC_MAX_ULEN || (c->flags & ~DTC_CF_ZSTD) ||
	    (!(c->flags & DTC_CF_ZSTD) && c->type != DTC_EVNT && c->ulen != c->clen)) {
		rerr(r, "damaged %s chunk at offset %llu: bad lengths",
		     dtc_type_name(c->type, tn), (unsigned long long)off);
		return -1;
	}
	if ((uint64_t)c->xlen + c->clen > limit - off - DTC_CHDR_LEN)
		return 1;
	c->xh = h + DTC_CHDR_LEN;
	c->pay = c->xh + c->xlen;
	if (XXH3_64bits(c->xh, (size_t)c->xlen + c->clen) != dtc_rd64(h + 20) && !NO_CHECKSUM) {
		rerr(r, "damaged %s chunk at offset %llu: checksum mismatch",
		     dtc_type_name(c->type, tn), (unsigned long long)off);
		return -1;
	}
	return 0;
}

static uint64_t chunk_end(const struct chunk *c)
{
	return c->off + DTC_CHDR_LEN + c->xlen + c->clen;
}

/* Decompress a metadata payload into a fresh buffer of exactly ulen. */
static uint8_t *inflate(struct dtcap_reader *r, const struct chunk *c)
{
	char tn[8];
	/* zstd cannot expand more than ~32000x; beyond that it is a lie.
	 * The frame header must also agree, before we allocate for it. */
	if ((uint64_t)c->ulen > (uint64_t)c->clen * 32768 + 4096 ||
	    ZSTD_getFrameContentSize(c->pay, c->clen) != c->ulen) {
		rerr(r, "damaged %s chunk at offset %llu: bad size",
		     dtc_type_name(c->type, tn), (unsigned long long)c->off);
		return NULL;
	}
	uint8_t *out = malloc(c->ulen ? c->ulen : 1);
	if (!out) {
		rerr(r, "out of memory");
		return NULL;
	}
	size_t n = ZSTD_decompressDCtx(r->dctx, out, c->ulen, c->pay, c->clen);
	if (ZSTD_isError(n) || n != c->ulen) {
		rerr(r, "damaged %s chunk at offset %llu: %s",
		     dtc_type_name(c->type, tn), (unsigned long long)c->off,
		     ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
		free(out);
		return NULL;
	}
	return out;
}

static int handle_chunk(struct dtcap_reader *r, const struct chunk *c)
{
	if (c->type == DTC_EVNT)
		return do_block(r, c);
	if (c->type == DTC_FOOT)
		return 0;
	const uint8_t *p = c->pay;
	uint8_t *mem = NULL;
	if (c->flags & DTC_CF_ZSTD) {
		if (!(mem = inflate(r, c)))
			return -1;
		p = mem;
	}
	struct dtc_cur cu = {p, p + c->ulen, 0};
	int rc = 0;
	switch (c->type) {
	case DTC_HOST: rc = do_host(r, c, &cu); break;
	case DTC_PROB: rc = do_probes(r, c, &cu); break;
	case DTC_COMM: rc = do_comms(r, c, &cu); break;
	case DTC_STCK: rc = do_stacks(r, c, &cu); break;
	case DTC_KSYM:
	case DTC_MODS: rc = do_text(r, c, p, c->ulen); break;
	case DTC_KSYC: {
		size_t tl;
		char *t = dtc_ksym_decode(p, c->ulen, &tl);
		if (!t) {
			char tn[8];
			rerr(r, "damaged %s chunk at offset %llu", dtc_type_name(c->type, tn),
			     (unsigned long long)c->off);
			rc = -1;
			break;
		}
		struct chunk kc = *c;
		kc.type = DTC_KSYM;
		rc = do_text(r, &kc, (const uint8_t *)t, tl);
		free(t);
		break;
	}
	case DTC_FILE: rc = do_file(r, c, &cu); break;
	case DTC_PROC: rc = do_procs(r, c, &cu); break;
	case DTC_CNTR: rc = do_counters(r, c, &cu); break;
	default: break;	/* a newer writer's chunk: skippable by design */
	}
	free(mem);
	return rc;
}

/* ------------------------------------------------------------- open */

static int check_trailer(struct dtcap_reader *r, const uint8_t *t, uint64_t *foot,
			 uint64_t *nrefs)
{
	uint64_t off = r->size - DTC_TRAILER_LEN;
	if (XXH3_64bits(t, 24) != dtc_rd64(t + 24) && !NO_CHECKSUM) {
		rerr(r, "damaged trailer at offset %llu", (unsigned long long)off);
		return -1;
	}
	*foot = dtc_rd64(t + 8);
	*nrefs = dtc_rd64(t + 16);
	if (*foot < DTC_FILEHDR_LEN || *foot > off - DTC_CHDR_LEN) {
		rerr(r, "damaged trailer at offset %llu: bad footer offset",
		     (unsigned long long)off);
		return -1;
	}
	return 0;
}

static int open_with_footer(struct dtcap_reader *r, uint64_t foot, uint64_t nrefs)
{
	uint64_t tail = r->size - DTC_TRAILER_LEN;
	struct chunk fc;
	int k = read_chunk(r, foot, tail, &fc);
	if (k || fc.type != DTC_FOOT || chunk_end(&fc) != tail ||
	    !(fc.flags & DTC_CF_ZSTD)) {
		if (k >= 0)
			rerr(r, "damaged FOOT chunk at offset %llu", (unsigned long long)foot);
		return -1;
	}
	uint8_t *mem = inflate(r, &fc);
	if (!mem)
		return -1;
	struct dtc_cur cu = {mem, mem + fc.ulen, 0};
	uint64_t n = dtc_get_uv(&cu);
	int rc = 0;
	if (cu.err || n != nrefs || n > fc.ulen) {
		rerr(r, "damaged FOOT chunk at offset %llu", (unsigned long long)foot);
		rc = -1;
	}
	/* the index must describe the file exactly: chunks back to back from
	 * the file header to the footer, each of the type it says */
	uint64_t expect = DTC_FILEHDR_LEN, off = 0;
	for (uint64_t i = 0; i < n && !rc; i++) {
		uint32_t type = dtc_get_u32(&cu);
		off += dtc_get_uv(&cu);
		struct chunk c;
		if (cu.err || off != expect) {
			rerr(r, "damaged FOOT chunk at offset %llu: entry %llu",
			     (unsigned long long)foot, (unsigned long long)i);
			rc = -1;
			break;
		}
		k = read_chunk(r, off, foot, &c);
		if (k > 0) {
			rerr(r, "damaged chunk at offset %llu: overruns the footer",
			     (unsigned long long)off);
			rc = -1;
		} else if (k < 0) {
			rc = -1;
		} else if (c.type != type) {
			rerr(r, "damaged FOOT chunk at offset %llu: entry %llu type",
			     (unsigned long long)foot, (unsigned long long)i);
			rc = -1;
		} else {
			rc = handle_chunk(r, &c);
			expect = chunk_end(&c);
		}
	}
	if (!rc && expect != foot) {
		rerr(r, "damaged FOOT chunk at offset %llu: index ends at %llu",
		     (unsigned long long)foot, (unsigned long long)expect);
		rc = -1;
	}
	free(mem);
	return rc;
}

static int open_scan(struct dtcap_reader *r)
{
	uint64_t off = DTC_FILEHDR_LEN;
	char tn[8];
	while (off < r->size) {
		struct chunk c;
		int k = read_chunk(r, off, r->size, &c);
		if (k < 0)
			return -1;
		if (k > 0) {
			if (r->size - off < DTC_CHDR_LEN)
				rwarn_trunc(r, off, "incomplete chunk header (%llu bytes)",
					    (unsigned long long)(r->size - off));
			else
				rwarn_trunc(r, off, "incomplete %s chunk%s",
					    dtc_type_name(dtc_rd32(r->map + off), tn),
					    dtc_rd32(r->map + off) == DTC_FOOT ? " (footer)" :
					    "; what followed is lost");
			return 0;
		}
		if (handle_chunk(r, &c))
			return -1;
		off = chunk_end(&c);
		if (c.type == DTC_FOOT) {
			/* the trailer did not check out, or we would not scan */
			uint64_t left = r->size - off;
			if (left == 0)
				rwarn_trunc(r, off, "trailer missing");
			else if (left < DTC_TRAILER_LEN)
				rwarn_trunc(r, off, "incomplete trailer");
			else
				rerr(r, "damaged trailer at offset %llu",
				     (unsigned long long)off);
			return left >= DTC_TRAILER_LEN ? -1 : 0;
		}
	}
	rwarn_trunc(r, off, "no footer (recording did not finish)");
	return 0;
}

static int proc_cmp(const void *a, const void *b, void *arg)
{
	const struct dtcap_proc *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (p[x].pid != p[y].pid)
		return p[x].pid < p[y].pid ? -1 : 1;
	if (p[x].ts != p[y].ts)
		return p[x].ts < p[y].ts ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct dtcap_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct dtcap_reader *dtcap_open(const char *path)
{
	struct dtcap_reader *r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		snprintf(open_err, sizeof(open_err), "%s: out of memory", path);
		free(r);
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		rerr(r, "%s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rerr(r, "not a regular file");
		goto fail;
	}
	r->size = (size_t)st.st_size;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			rerr(r, "mmap: %s", strerror(errno));
			goto fail;
		}
		r->map = m;
	}
	close(fd);
	fd = -1;
	if (!(r->dctx = ZSTD_createDCtx())) {
		rerr(r, "out of memory");
		goto fail;
	}

	uint8_t fh[DTC_FILEHDR_LEN];
	memcpy(fh, DTC_MAGIC, DTC_MAGIC_LEN);
	dtc_le32(fh + 8, DTC_VERSION);
	dtc_le32(fh + 12, 0);
	if (r->size < DTC_FILEHDR_LEN) {
		if (memcmp(r->map ? (const void *)r->map : (const void *)fh, fh, r->size)) {
			rerr(r, "not a dt capture (bad magic at offset 0)");
			goto fail;
		}
		rwarn_trunc(r, r->size, "file header incomplete");
		goto done;
	}
	if (memcmp(r->map, fh, DTC_MAGIC_LEN)) {
		rerr(r, "not a dt capture (bad magic at offset 0)");
		goto fail;
	}
	if (memcmp(r->map + 8, fh + 8, 8)) {
		rerr(r, "unsupported format version %u at offset 8 (this reader: %u)",
		     dtc_rd32(r->map + 8), DTC_VERSION);
		goto fail;
	}
	const uint8_t *t = r->map + r->size - DTC_TRAILER_LEN;
	uint64_t foot, nrefs;
	if (r->size >= DTC_FILEHDR_LEN + DTC_CHDR_LEN + DTC_TRAILER_LEN &&
	    !memcmp(t, DTC_TRAILER_MAGIC, 8)) {
		if (check_trailer(r, t, &foot, &nrefs) || open_with_footer(r, foot, nrefs))
			goto fail;
	} else if (open_scan(r)) {
		goto fail;
	}

	for (size_t i = 0; i < r->nfiles; i++) {
		struct dtcap_file *f = &r->files[i];
		int sorted = 1;
		for (uint32_t k = 1; k < f->nsyms && sorted; k++)
			sorted = f->syms[k - 1].addr <= f->syms[k].addr;
		if (!sorted)
			qsort((void *)f->syms, f->nsyms, sizeof(*f->syms), sym_cmp);
	}
	/* probe lookups happen per event in the tools: make them O(1) */
	uint32_t maxid = 0;
	for (size_t i = 0; i < r->nprobes; i++)
		maxid = r->probes[i].id > maxid ? r->probes[i].id : maxid;
	if (r->nprobes && maxid <= (1u << 20)) {
		if (!(r->probe_idx = calloc((size_t)maxid + 1, sizeof(uint32_t)))) {
			rerr(r, "out of memory");
			goto fail;
		}
		r->nprobe_idx = maxid;
		for (size_t i = 0; i < r->nprobes; i++)
			r->probe_idx[r->probes[i].id] = (uint32_t)i + 1;
	}
	if (r->nprocs) {
		if (!(r->proc_idx = malloc(r->nprocs * sizeof(*r->proc_idx)))) {
			rerr(r, "out of memory");
			goto fail;
		}
		for (size_t i = 0; i < r->nprocs; i++)
			r->proc_idx[i] = (uint32_t)i;
		qsort_r(r->proc_idx, r->nprocs, sizeof(*r->proc_idx), proc_cmp, r->procs);
	}
done:
	return r;
fail:
	if (fd >= 0)
		close(fd);
	snprintf(open_err, sizeof(open_err), "%s", r->err);
	dtcap_reader_close(r);
	return NULL;
}

void dtcap_reader_close(struct dtcap_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->size);
	ZSTD_freeDCtx(r->dctx);
	while (r->arena) {
		struct arena *a = r->arena;
		r->arena = a->next;
		free(a);
	}
	free(r->probes);
	free(r->probe_idx);
	free(r->comms);
	free(r->stacks);
	free(r->frames);
	for (size_t i = 0; i < r->nfiles; i++)
		free((void *)r->files[i].syms);
	free(r->files);
	for (size_t i = 0; i < r->nprocs; i++)
		free((void *)r->procs[i].maps);
	free(r->procs);
	free(r->proc_idx);
	for (size_t i = 0; i < r->ncounts; i++)
		free(r->counts[i].percpu);
	free(r->counts);
	free(r->blocks);
	free(r->rblocks);
	free(r->path);
	free(r);
}

/* ------------------------------------------------------------ accessors */

const struct dtcap_host *dtcap_host(const struct dtcap_reader *r) { return &r->host; }
uint64_t dtcap_nevents(const struct dtcap_reader *r) { return r->nevents; }
size_t dtcap_nprobes(const struct dtcap_reader *r) { return r->nprobes; }

const struct dtcap_probe *dtcap_probe_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->nprobes ? &r->probes[i] : NULL;
}

const struct dtcap_probe *dtcap_probe_by_id(const struct dtcap_reader *r, uint32_t id)
{
	if (r->probe_idx)
		return id <= r->nprobe_idx && r->probe_idx[id] ?
		       &r->probes[r->probe_idx[id] - 1] : NULL;
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].id == id)
			return &r->probes[i];
	return NULL;
}

const char *dtcap_comm(const struct dtcap_reader *r, uint32_t id)
{
	return id && id <= r->ncomms ? r->comms[id - 1] : NULL;
}

uint32_t dtcap_ncomms(const struct dtcap_reader *r) { return r->ncomms; }
uint32_t dtcap_nstacks(const struct dtcap_reader *r) { return r->nstacks; }

const uint64_t *dtcap_stack(const struct dtcap_reader *r, uint32_t id,
			    unsigned *n, int *kernel, int *truncated)
{
	if (!id || id > r->nstacks)
		return NULL;
	const struct rstack *s = &r->stacks[id - 1];
	if (n)
		*n = s->n;
	if (kernel)
		*kernel = s->kind & 1;
	if (truncated)
		*truncated = (s->kind >> 1) & 1;
	/* a valid pointer even for an empty stack */
	return r->frames ? r->frames + s->off : (const uint64_t *)r;
}

const char *dtcap_kallsyms(const struct dtcap_reader *r, size_t *len)
{
	if (len)
		*len = r->kallsyms_len;
	return r->kallsyms;
}

const char *dtcap_modules(const struct dtcap_reader *r, size_t *len)
{
	if (len)
		*len = r->modules_len;
	return r->modules;
}

size_t dtcap_nfiles(const struct dtcap_reader *r) { return r->nfiles; }

const struct dtcap_file *dtcap_file_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->nfiles ? &r->files[i] : NULL;
}

const struct dtcap_file *dtcap_file_by_id(const struct dtcap_reader *r, uint32_t id)
{
	return id && id <= r->nfiles ? &r->files[id - 1] : NULL;
}

size_t dtcap_nprocs(const struct dtcap_reader *r) { return r->nprocs; }

const struct dtcap_proc *dtcap_proc_at(const struct dtcap_reader *r, size_t i)
{
	return i < r->nprocs ? &r->procs[i] : NULL;
}

const struct dtcap_proc *dtcap_proc_find(const struct dtcap_reader *r,
					 uint32_t pid, uint64_t ts)
{
	/* first index entry of pid */
	size_t lo = 0, hi = r->nprocs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->procs[r->proc_idx[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == r->nprocs || r->procs[r->proc_idx[lo]].pid != pid)
		return NULL;
	const struct dtcap_proc *best = &r->procs[r->proc_idx[lo]];
	for (size_t i = lo; i < r->nprocs; i++) {
		const struct dtcap_proc *p = &r->procs[r->proc_idx[i]];
		if (p->pid != pid || p->ts > ts)
			break;
		best = p;
	}
	return best;
}

size_t dtcap_ncounters(const struct dtcap_reader *r) { return r->ncounts; }

const struct dtcap_count *dtcap_counters_at(const struct dtcap_reader *r, size_t i,
					    uint64_t *ts, uint32_t *ncpus,
					    struct dtcap_count *recorder)
{
	if (i >= r->ncounts)
		return NULL;
	const struct rcount *c = &r->counts[i];
	if (ts)
		*ts = c->ts;
	if (ncpus)
		*ncpus = c->ncpus;
	if (recorder)
		*recorder = c->rec;
	return c->percpu;
}

size_t dtcap_nblocks(const struct dtcap_reader *r) { return r->nblocks; }

const struct dtcap_blockinfo *dtcap_block_info(const struct dtcap_reader *r, size_t i)
{
	return i < r->nblocks ? &r->blocks[i] : NULL;
}

/* ----------------------------------------------------------- blocks */

struct bpriv {
	ZSTD_DCtx	*dctx;
	uint32_t	cap;		/* rows the arrays hold */
	uint64_t	*ts, *args, *tmp, *argtmp;
	uint32_t	*u32[8];	/* cpu pid tid probe comm kstack ustack flags */
	uint32_t	*idx, *dtmp;
	uint8_t		*nargs;
	uint8_t		*scratch;
	size_t		scratch_cap;
};

struct dtcap_block *dtcap_block_new(void)
{
	struct dtcap_block *b = calloc(1, sizeof(*b));
	struct bpriv *p = calloc(1, sizeof(*p));
	if (!b || !p || !(p->dctx = ZSTD_createDCtx())) {
		free(b);
		free(p);
		return NULL;
	}
	b->priv = p;
	return b;
}

static void bpriv_free_arrays(struct bpriv *p)
{
	free(p->ts); free(p->args); free(p->tmp); free(p->nargs); free(p->argtmp);
	free(p->idx); free(p->dtmp);
	for (int i = 0; i < 8; i++)
		free(p->u32[i]);
	p->idx = p->dtmp = NULL;
	p->ts = p->args = p->tmp = p->argtmp = NULL;
	p->nargs = NULL;
	memset(p->u32, 0, sizeof(p->u32));
	p->cap = 0;
}

void dtcap_block_free(struct dtcap_block *b)
{
	if (!b)
		return;
	struct bpriv *p = b->priv;
	if (p) {
		bpriv_free_arrays(p);
		free(p->scratch);
		ZSTD_freeDCtx(p->dctx);
		free(p);
	}
	free(b);
}

static int ensure_rows(struct bpriv *p, uint32_t rows)
{
	if (rows <= p->cap)
		return 0;
	bpriv_free_arrays(p);
	p->ts = malloc(rows * sizeof(uint64_t));
	p->tmp = malloc(rows * sizeof(uint64_t));
	p->args = malloc((size_t)rows * DTCAP_MAXARGS * sizeof(uint64_t));
	p->argtmp = malloc((size_t)rows * DTCAP_MAXARGS * sizeof(uint64_t));
	p->nargs = malloc(rows);
	p->idx = malloc(rows * sizeof(uint32_t));
	p->dtmp = malloc(rows * sizeof(uint32_t));
	int ok = p->ts && p->tmp && p->args && p->argtmp && p->nargs && p->idx && p->dtmp;
	for (int i = 0; i < 8; i++)
		ok = ok && (p->u32[i] = malloc(rows * sizeof(uint32_t)));
	if (!ok) {
		bpriv_free_arrays(p);
		return -1;
	}
	p->cap = rows;
	return 0;
}

/* The decoded bytes of one column segment (in the map or in scratch). */
static const uint8_t *segment(struct dtcap_reader *r, size_t bi, unsigned col,
			      struct bpriv *p, size_t *len)
{
	const struct rblock *rb = &r->rblocks[bi];
	const uint8_t *seg = rb->pay;
	for (unsigned i = 0; i < col; i++)
		seg += dtc_rd32(rb->dir + i * DTC_BLK_COLDIR + 6);
	const uint8_t *d = rb->dir + col * DTC_BLK_COLDIR;
	uint32_t raw = dtc_rd32(d + 2), stored = dtc_rd32(d + 6);
	*len = raw;
	if (d[1] == DTC_M_RAW)
		return seg;
	if (p->scratch_cap < raw) {
		uint8_t *s = realloc(p->scratch, raw);
		if (!s)
			return NULL;
		p->scratch = s;
		p->scratch_cap = raw;
	}
	size_t n = ZSTD_decompressDCtx(p->dctx, p->scratch, raw, seg, stored);
	if (ZSTD_isError(n) || n != raw)
		return NULL;
	return p->scratch;
}

int dtcap_read_block(struct dtcap_reader *r, size_t i, unsigned cols,
		     struct dtcap_block *b)
{
	if (i >= r->nblocks) {
		rerr(r, "no block %zu (of %zu)", i, r->nblocks);
		return -1;
	}
	struct bpriv *p = b->priv;
	const struct dtcap_blockinfo *bi = &r->blocks[i];
	const struct rblock *rb = &r->rblocks[i];
	uint32_t n = bi->rows;
	if (ensure_rows(p, n)) {
		rerr(r, "out of memory");
		return -1;
	}
	memset(b, 0, offsetof(struct dtcap_block, priv));
	b->rows = n;
	const uint8_t *s;
	size_t len;
	if (cols & DTCAP_COL_TS) {
		if (!(s = segment(r, i, DTC_C_TS, p, &len)) || dtc_dec_u64(s, len, p->ts, n))
			goto bad;
		uint64_t t = bi->tmin, lo = UINT64_MAX, hi = 0;
		for (uint32_t k = 0; k < n; k++) {
			t += (uint64_t)dtc_unzz(p->ts[k]);
			p->ts[k] = t;
			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
		}
		/* block skipping trusts the header: the rows must agree */
		if (lo != bi->tmin || hi != bi->tmax)
			goto bad;
		b->ts = p->ts;
	}
	if (cols & DTCAP_COL_CPU) {
		if (!(s = segment(r, i, DTC_C_CPU, p, &len)) || dtc_dec_u32(s, len, p->u32[0], n))
			goto bad;
		b->cpu = p->u32[0];
	}
	/* the per-context columns, in DTC_C_PID.. order */
	static const struct { unsigned bit; size_t off; } dcols[DTC_NDICT] = {
		{DTCAP_COL_PID, offsetof(struct dtcap_block, pid)},
		{DTCAP_COL_TID, offsetof(struct dtcap_block, tid)},
		{DTCAP_COL_PROBE, offsetof(struct dtcap_block, probe)},
		{DTCAP_COL_COMM, offsetof(struct dtcap_block, comm)},
		{DTCAP_COL_KSTACK, offsetof(struct dtcap_block, kstack)},
		{DTCAP_COL_USTACK, offsetof(struct dtcap_block, ustack)},
		{DTCAP_COL_FLAGS, offsetof(struct dtcap_block, flags)},
	};
	if (cols & (DTCAP_COL_PID | DTCAP_COL_TID | DTCAP_COL_PROBE | DTCAP_COL_COMM |
		    DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_FLAGS)) {
		uint32_t nd = rb->ndict, *idx = p->idx, bad = 0;
		if (!(s = segment(r, i, DTC_C_CTX, p, &len)) || dtc_dec_u32(s, len, idx, n))
			goto bad;
		for (uint32_t k = 0; k < n; k++)
			bad |= idx[k] >= nd;
		if (bad)
			goto bad;
		for (unsigned c = 0; c < DTC_NDICT; c++) {
			if (!(cols & dcols[c].bit))
				continue;
			uint32_t *out = p->u32[1 + c], *d = p->dtmp;
			if (!(s = segment(r, i, DTC_C_PID + c, p, &len)) ||
			    dtc_dec_u32(s, len, d, nd))
				goto bad;
			for (uint32_t k = 0; k < n; k++)
				out[k] = d[idx[k]];
			*(uint32_t **)((char *)b + dcols[c].off) = out;
		}
	}
	if (cols & DTCAP_COL_ARGS) {
		unsigned nslots = rb->ncols - DTC_C_ARG0;
		if (!(s = segment(r, i, DTC_C_NARGS, p, &len)) || len != n)
			goto bad;
		memcpy(p->nargs, s, n);
		for (uint32_t k = 0; k < n; k++)
			if (p->nargs[k] > nslots)
				goto bad;
		/* decode each slot's column into its run of argtmp, then fill
		 * the row-major array in one pass */
		uint32_t hist[DTCAP_MAXARGS + 1] = {0};
		for (uint32_t k = 0; k < n; k++)
			hist[p->nargs[k]]++;
		size_t off[DTCAP_MAXARGS + 1] = {0}, pos[DTCAP_MAXARGS];
		uint32_t ge = n;
		for (unsigned j = 0; j < DTCAP_MAXARGS; j++) {
			ge -= hist[j];
			off[j + 1] = off[j] + ge;
		}
		for (unsigned j = 0; j < nslots; j++)
			if (!(s = segment(r, i, DTC_C_ARG0 + j, p, &len)) ||
			    dtc_dec_u64(s, len, p->argtmp + off[j], (uint32_t)(off[j + 1] - off[j])))
				goto bad;
		memcpy(pos, off, sizeof(pos));
		for (uint32_t k = 0; k < n; k++) {
			uint64_t *row = p->args + (size_t)k * DTCAP_MAXARGS;
			unsigned na = p->nargs[k], j = 0;
			for (; j < na; j++)
				row[j] = p->argtmp[pos[j]++];
			for (; j < DTCAP_MAXARGS; j++)
				row[j] = 0;
		}
		b->nargs = p->nargs;
		b->args = p->args;
	}
	return 0;
bad:
	rerr(r, "damaged EVNT chunk at offset %llu: column data does not decode",
	     (unsigned long long)bi->offset);
	return -1;
}

/* ------------------------------------------------------------ iterator */

struct dtcap_iter {
	struct dtcap_reader *r;
	struct dtcap_block *b;
	uint64_t	tmin, tmax;
	unsigned	cols;
	size_t		blk;		/* next block to load */
	uint32_t	row;
	int		loaded;
};

struct dtcap_iter *dtcap_iter_new(struct dtcap_reader *r, uint64_t tmin,
				  uint64_t tmax, unsigned cols)
{
	struct dtcap_iter *it = calloc(1, sizeof(*it));
	if (!it || !(it->b = dtcap_block_new())) {
		free(it);
		rerr(r, "out of memory");
		return NULL;
	}
	it->r = r;
	it->tmin = tmin;
	it->tmax = tmax;
	it->cols = (cols & DTCAP_COL_ALL) | DTCAP_COL_TS;
	return it;
}

int dtcap_iter_next(struct dtcap_iter *it, struct dtcap_event *e)
{
	struct dtcap_block *b = it->b;
	for (;;) {
		if (it->loaded && it->row < b->rows) {
			uint32_t i = it->row++;
			uint64_t ts = b->ts[i];
			if (ts < it->tmin || ts > it->tmax)
				continue;
			e->ts = ts;
			e->cpu = b->cpu ? b->cpu[i] : 0;
			e->pid = b->pid ? b->pid[i] : 0;
			e->tid = b->tid ? b->tid[i] : 0;
			e->probe = b->probe ? b->probe[i] : 0;
			e->comm = b->comm ? b->comm[i] : 0;
			e->kstack = b->kstack ? b->kstack[i] : 0;
			e->ustack = b->ustack ? b->ustack[i] : 0;
			e->flags = b->flags ? b->flags[i] : 0;
			if (b->nargs) {
				e->nargs = b->nargs[i];
				memcpy(e->args, b->args + (size_t)i * DTCAP_MAXARGS,
				       sizeof(e->args));
			} else {
				e->nargs = 0;
				memset(e->args, 0, sizeof(e->args));
			}
			return 1;
		}
		it->loaded = 0;
		while (it->blk < it->r->nblocks) {
			const struct dtcap_blockinfo *bi = &it->r->blocks[it->blk];
			if (bi->tmax >= it->tmin && bi->tmin <= it->tmax)
				break;
			it->blk++;
		}
		if (it->blk >= it->r->nblocks)
			return 0;
		if (dtcap_read_block(it->r, it->blk++, it->cols, b))
			return -1;
		it->loaded = 1;
		it->row = 0;
	}
}

void dtcap_iter_free(struct dtcap_iter *it)
{
	if (!it)
		return;
	dtcap_block_free(it->b);
	free(it);
}
