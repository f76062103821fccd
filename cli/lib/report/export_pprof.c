/*
 * export_pprof.c - `dtreport export --format pprof`: the capture's samples
 * as a gzip-compressed profile.proto (github.com/google/pprof,
 * proto/profile.proto), what `go tool pprof`, Pyroscope and Grafana read.
 *
 * Samples are the events `dtreport flame` counts under the same filters
 * (rpt_sample_probes: those --probe chose, else the timer probes, else
 * every probe's).  Events with the same
 * (comm, pid, kernel stack, user stack, process snapshot) become one
 * Sample with values [samples, cpu ns] and labels comm and pid.  A Sample's
 * locations run leaf first: kernel frames innermost to outermost, then
 * user frames.  Frames are named exactly as the flame graph names them
 * (return addresses at pc - 1), so per-function totals agree with
 * `dtreport flame --folded`; each Location keeps the real address and its
 * Mapping (kernel, module or the mapped file), and every Mapping says
 * has_functions, so viewers do not try to symbolize again, and the build
 * id the capture holds for its file (the kernel's for the kernel).  The
 * first Mapping is the main executable of the process with the most
 * user-stack samples, which pprof takes for the profiled binary.  A stack
 * the recorder cut short ends with the frame "[truncated]", as in the
 * flame graph.  A sample without any stack gets the one frame "[no stack]".
 *
 * The protobuf is built in memory (its size is that of the distinct
 * stacks, not of the events), then deflated with zlib into the output,
 * written under a temporary name and put in place only if no file took the
 * name meanwhile (util.h dtu_out_open_new): an existing file is never replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "dtcap.h"
#include "dtsym.h"
#include "export.h"
#include "report.h"
#include "scan_pool.h"
#include "util.h"

/* ------------------------------------------------------ protobuf bytes */

struct pb {
	uint8_t	*p;
	size_t	len, cap;
	int	oom;
};

static void pb_put(struct pb *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (DT_GROW(b->p, b->cap, b->len, n, 4096)) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	pb_put(b, t, n);
}

/* Field with wire type 0 (varint); zero values are the default: omitted. */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (v == 0)
		return;
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

/* Field with wire type 2: bytes or an embedded message. */
static void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_put(b, p, n);
}

static void pb_msg(struct pb *b, unsigned field, struct pb *m)
{
	if (m->oom)
		b->oom = 1;
	pb_bytes(b, field, m->p, m->len);
	m->len = 0;
}

/* --------------------------------------------------- interning tables */

/* A map from a byte key to a dense id from 1. */
struct imap {
	struct dt_htab	ht;		/* key -> id - 1 */
	struct ikey {
		char	*p;
		size_t	len;
	}		*keys;		/* [id - 1] */
	size_t		n, kcap;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static uint64_t imap_hash(const void *ctx, uint32_t e)
{
	const struct imap *m = ctx;
	return hash_bytes(m->keys[e].p, m->keys[e].len);
}

/* The id of key (added if new: *added set), 0 on ENOMEM. */
static uint32_t imap_id(struct imap *m, const void *key, size_t n, int *added)
{
	uint64_t h = hash_bytes(key, n);
	uint32_t e;

	if (added)
		*added = 0;
	for (size_t i = dt_htab_first(&m->ht, h); (e = dt_htab_at(&m->ht, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&m->ht, i))
		if (m->keys[e].len == n && memcmp(m->keys[e].p, key, n) == 0)
			return e + 1;
	if (DT_GROW(m->keys, m->kcap, m->n, 1, 1024))
		return 0;
	char *c = malloc(n ? n : 1);
	if (c == NULL)
		return 0;
	memcpy(c, key, n);
	m->keys[m->n] = (struct ikey){ c, n };
	if (dt_htab_add(&m->ht, h, (uint32_t)m->n, imap_hash, m)) {
		free(c);
		return 0;
	}
	if (added)
		*added = 1;
	return (uint32_t)++m->n;
}

static void imap_free(struct imap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->keys[i].p);
	free(m->keys);
	dt_htab_free(&m->ht);
}

/* ------------------------------------------------------------ exporter */

struct pp {
	const struct dtcap_reader *r;
	struct dtsym	*sym;
	struct imap	strs;		/* string table: index = id - 1 ... */
	struct imap	funcs;		/* key: string index */
	struct imap	locs;		/* key: {addr, func, mapping} */
	struct imap	maps;		/* key: {start, limit, offset, file string} */
	struct imap	samples;	/* key: {comm, pid, kstack, ustack, snapshot} */
	uint64_t	*counts;	/* by sample id - 1 */
	uint64_t	*first_ts;
	size_t		ccap, tcap;
	struct pb	out, m1, m2;	/* Profile, scratch messages */
	char		*fixbuf;	/* dtu_utf8_fix's copies */
	size_t		fixcap;
};

/* String table index (0 is ""). */
static int64_t str_index(struct pp *p, const char *s)
{
	if (*s == 0)
		return 0;
	/* a protobuf string is UTF-8: strict decoders refuse the file else */
	size_t len;
	if ((s = dtu_utf8_fix(s, strlen(s), &len, &p->fixbuf, &p->fixcap)) == NULL)
		return -1;
	int added;
	uint32_t id = imap_id(&p->strs, s, len, &added);
	if (id == 0)
		return -1;
	if (added)
		pb_bytes(&p->out, 6, s, len);
	return id;	/* "" took index 0, so ids from 1 are the indexes */
}

/* A build id as pprof's Mapping.build_id holds it: lower-case hex. */
static int64_t build_id_str(struct pp *p, const uint8_t *id, uint32_t len)
{
	char hex[2 * 20 + 1];
	if (len == 0 || len > 20)
		return 0;
	for (uint32_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return str_index(p, hex);
}

static uint64_t mapping_id(struct pp *p, uint64_t start, uint64_t limit, uint64_t off,
			   const char *file, int64_t bid)
{
	int64_t fs = str_index(p, file);
	if (fs < 0 || bid < 0)
		return 0;
	uint64_t key[4] = { start, limit, off, (uint64_t)fs };
	int added;
	uint32_t id = imap_id(&p->maps, key, sizeof(key), &added);
	if (id && added) {
		pb_uint(&p->m1, 1, id);
		pb_uint(&p->m1, 2, start);
		pb_uint(&p->m1, 3, limit);
		pb_uint(&p->m1, 4, off);
		pb_uint(&p->m1, 5, (uint64_t)fs);
		if (bid)
			pb_uint(&p->m1, 6, (uint64_t)bid);
		pb_uint(&p->m1, 7, 1);		/* has_functions */
		pb_msg(&p->out, 3, &p->m1);
	}
	return id;
}

static uint64_t map_mapping(struct pp *p, const struct dtcap_map *m)
{
	const struct dtcap_file *f = m->file ? dtcap_file_by_id(p->r, m->file) : NULL;
	int64_t bid = f ? build_id_str(p, f->build_id, f->build_id_len) : 0;
	return mapping_id(p, m->start, m->end, m->offset, m->name ? m->name : "", bid);
}

/* The Mapping of a frame: the kernel, or the process map holding pc. */
static uint64_t frame_mapping(struct pp *p, uint64_t pc, int kernel, uint32_t pid, uint64_t ts)
{
	if (kernel) {
		const char *kb = dtcap_host(p->r)->kernel_build_id;
		int64_t bid = kb[0] ? str_index(p, kb) : 0;
		return mapping_id(p, 0xffff800000000000ULL, UINT64_MAX, 0, "[kernel.kallsyms]",
				  bid);
	}
	const struct dtcap_proc *pr = dtcap_proc_find(p->r, pid, ts);
	for (uint32_t i = 0; pr && i < pr->nmaps; i++) {
		const struct dtcap_map *m = &pr->maps[i];
		if (pc >= m->start && pc < m->end)
			return map_mapping(p, m);
	}
	return 0;	/* unmapped: pprof allows a location without one */
}

/*
 * pprof takes the first Mapping for the main binary (`go tool pprof`
 * titles the profile with its file): make it the executable of the
 * process with the most user-stack samples, before any frame adds one.
 * Returns -1 when out of memory.
 */
static int main_mapping_first(struct pp *p)
{
	size_t best = SIZE_MAX;
	for (size_t s = 0; s < p->samples.n; s++) {
		uint64_t key[4];
		memcpy(key, p->samples.keys[s].p, sizeof(key));
		if ((uint32_t)key[1] && (best == SIZE_MAX || p->counts[s] > p->counts[best]))
			best = s;
	}
	if (best == SIZE_MAX)
		return 0;	/* no user stacks: the kernel is the main binary */
	uint64_t key[4];
	memcpy(key, p->samples.keys[best].p, sizeof(key));
	const struct dtcap_proc *pr = dtcap_proc_find(p->r, (uint32_t)key[0], p->first_ts[best]);
	if (pr == NULL || pr->exe == NULL || pr->exe[0] == 0)
		return 0;
	const struct dtcap_map *text = NULL;
	for (uint32_t i = 0; i < pr->nmaps && !text; i++)
		if (pr->maps[i].name && !strcmp(pr->maps[i].name, pr->exe) && (pr->maps[i].prot & 4))
			text = &pr->maps[i];
	if (text == NULL)
		return 0;
	return map_mapping(p, text) ? 0 : -1;
}

static uint64_t location_id(struct pp *p, uint64_t pc, const char *name, int kernel,
			    uint32_t pid, uint64_t ts)
{
	int64_t ns = str_index(p, name);
	if (ns < 0)
		return 0;
	int added;
	uint32_t fid = imap_id(&p->funcs, &ns, sizeof(ns), &added);
	if (fid == 0)
		return 0;
	if (added) {
		pb_uint(&p->m1, 1, fid);
		pb_uint(&p->m1, 2, (uint64_t)ns);
		pb_uint(&p->m1, 3, (uint64_t)ns);
		pb_msg(&p->out, 5, &p->m1);
	}
	uint64_t mid = pc ? frame_mapping(p, pc, kernel, pid, ts) : 0;
	uint64_t key[3] = { pc, fid, mid };
	uint32_t lid = imap_id(&p->locs, key, sizeof(key), &added);
	if (lid && added) {
		pb_uint(&p->m1, 1, lid);
		pb_uint(&p->m1, 2, mid);
		pb_uint(&p->m1, 3, pc);
		pb_uint(&p->m2, 1, fid);	/* Line */
		pb_msg(&p->m1, 4, &p->m2);
		pb_msg(&p->out, 4, &p->m1);
	}
	return lid;
}

/* Location ids of one stack, innermost first, appended to ids. */
static int stack_locs(struct pp *p, uint32_t sid, uint32_t pid, uint64_t ts,
		      uint64_t *ids, unsigned *n)
{
	unsigned depth;
	int kernel, trunc;
	const uint64_t *pcs = dtcap_stack(p->r, sid, &depth, &kernel, &trunc);
	if (pcs == NULL)
		return 0;
	if (depth > DTCAP_MAXFRAMES)
		depth = DTCAP_MAXFRAMES;
	for (unsigned k = 0; k < depth; k++) {
		/* as report_flame.c: return addresses named at pc - 1, unless
		 * that only finds an unnamed or offset form */
		uint64_t pc = k && pcs[k] ? pcs[k] - 1 : pcs[k];
		const char *nm = dtsym_name(p->sym, pc, kernel, pid, ts);
		const char *org = dtsym_origin(p->sym, pc, kernel, pid, ts);
		if (pc != pcs[k] && (!strcmp(org, "unknown") || strstr(nm, "+0x")))
			nm = dtsym_name(p->sym, pcs[k], kernel, pid, ts);
		uint64_t id = location_id(p, pcs[k], nm, kernel, pid, ts);
		if (id == 0)
			return -1;
		ids[(*n)++] = id;
	}
	/* as the flame graph's marker: a stack cut short must not pass for
	 * a whole one (its outermost frame is not the root) */
	if (trunc) {
		uint64_t id = location_id(p, 0, "[truncated]", kernel, pid, ts);
		if (id == 0)
			return -1;
		ids[(*n)++] = id;
	}
	return 0;
}

static int write_gz(const char *path, const char *cap, const uint8_t *data, size_t len,
		    volatile sig_atomic_t *cancel)
{
	struct dtu_out out;
	char err[512];
	/* under a temporary name until complete: an interrupted export
	 * leaves nothing under the final one */
	if (dtu_out_open_new(&out, path, &cap, 1, err, sizeof(err)) < 0) {
		rpt_err("export", "%s", err);
		return -1;
	}
	z_stream z = { 0 };
	/* 15 + 16: a gzip wrapper, as pprof files are */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		dtu_out_abort(&out);
		rpt_err("export", "zlib: out of memory");
		return -1;
	}
	uint8_t buf[1 << 16];
	z.next_in = (Bytef *)data;
	int rc = Z_OK, bad = 0, e = 0;
	size_t left = len;
	while (rc != Z_STREAM_END && !bad) {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		z.avail_in = chunk;
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		rc = deflate(&z, chunk == left ? Z_FINISH : Z_NO_FLUSH);
		left -= chunk - z.avail_in;
		size_t have = sizeof(buf) - z.avail_out;
		if (rc == Z_STREAM_ERROR) {
			bad = 1;
			e = EIO;
		} else if (fwrite(buf, 1, have, out.f) != have) {
			/* kept now: deflateEnd and the abort would clobber errno
			 * (a full disk said "No such file or directory") */
			bad = 1;
			e = errno ? errno : EIO;
		}
	}
	deflateEnd(&z);
	if (bad) {
		rpt_err("export", "%s: %s", path, strerror(e));
		dtu_out_abort(&out);	/* ours, and incomplete */
		return -1;
	}
	if (cancel && *cancel) {
		rpt_err("export", "interrupted");
		dtu_out_abort(&out);
		return -1;
	}
	if (dtu_out_commit(&out, err, sizeof(err)) < 0) {
		rpt_err("export", "%s", err);
		return -1;
	}
	return 0;
}

int rpt_export_pprof(const struct rpt_cap *c, struct flt_filter *flt,
		     const struct rpt_export_opts *o, volatile sig_atomic_t *cancel)
{
	const char *path = o->out, *cap = c->path;
	struct dtcap_reader *r = c->r;
	char err[512];
	if (flt_resolve(flt, r, err, sizeof(err)) < 0) {
		rpt_err("export", "%s: %s", cap, err);
		return RPT_EXIT_ERROR;
	}
	struct pp p = { .r = r };
	struct dtsp_ahead *ah = NULL;
	const struct dtcap_block *b;
	size_t bi;
	int got;
	uint8_t *want = NULL;
	uint64_t *ids = NULL;
	int ret = RPT_EXIT_ERROR;
	p.sym = c->sym ? c->sym : dtsym_open(r);
	if (p.sym == NULL)
		goto oom;

	/* which probes are samples, and at what period */
	size_t np = dtcap_nprobes(r);
	uint32_t maxid = dtcap_max_probe_id(r), ntimer = 0;
	uint64_t hz = 0;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(r, i);
		if (pr->flags & DT_PF_TIMER) {
			ntimer++;
			const char *colon = strrchr(pr->name, ':');
			uint64_t h = colon ? strtoull(colon + 1, NULL, 10) : 0;
			hz = ntimer == 1 ? h : (h == hz ? hz : 0);	/* one rate or none */
		}
	}
	char pdesc[256];
	want = rpt_sample_probes(r, flt, "export", cap, pdesc, sizeof(pdesc));
	ids = malloc((2 * DTCAP_MAXFRAMES + 2) * sizeof(*ids));
	if (!want || !ids)
		goto oom;
	/* the period is the timers': none when the samples are not theirs */
	for (size_t i = 0; i < np && hz; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(r, i);
		if (want[pr->id] && !(pr->flags & DT_PF_TIMER))
			hz = 0;
	}

	/* Profile header: sample types, string table entry 0 */
	pb_bytes(&p.out, 6, "", 0);
	int64_t s_samples = str_index(&p, "samples"), s_count = str_index(&p, "count");
	int64_t s_cpu = str_index(&p, "cpu"), s_ns = str_index(&p, "nanoseconds");
	int64_t s_comm = str_index(&p, "comm"), s_pid = str_index(&p, "pid");
	int64_t s_nostack = str_index(&p, "[no stack]");
	if (s_samples < 0 || s_count < 0 || s_cpu < 0 || s_ns < 0 || s_comm < 0 || s_pid < 0 ||
	    s_nostack < 0)
		goto oom;
	pb_uint(&p.m1, 1, (uint64_t)s_samples);
	pb_uint(&p.m1, 2, (uint64_t)s_count);
	pb_msg(&p.out, 1, &p.m1);
	if (hz) {
		pb_uint(&p.m1, 1, (uint64_t)s_cpu);
		pb_uint(&p.m1, 2, (uint64_t)s_ns);
		pb_msg(&p.out, 1, &p.m1);
	}

	/* pass 1: count samples per distinct key */
	uint64_t tmax = 0, nsamples = 0;
	/* blocks decoded ahead on the pool while this thread counts */
	if ((ah = dtsp_ahead_new(r, flt, DTCAP_COL_TS | DTCAP_COL_PROBE | DTCAP_COL_COMM |
				 DTCAP_COL_PID | DTCAP_COL_KSTACK | DTCAP_COL_USTACK, cancel,
				 rpt_reading(), err, sizeof(err))) == NULL) {
		rpt_err("export", "%s: %s", cap, err);
		goto out;
	}
	while ((got = dtsp_ahead_next(ah, &b, &bi, err, sizeof(err))) == 1) {
		for (uint32_t i = 0; i < b->rows; i++) {
			if (!flt_match_row(flt, b, i))
				continue;
			tmax = b->ts[i] > tmax ? b->ts[i] : tmax;
			if (b->probe[i] > maxid || !want[b->probe[i]])
				continue;
			uint32_t u = b->ustack[i];
			/* the snapshot matters only to name user frames */
			const struct dtcap_proc *pr = u ? dtcap_proc_find(r, b->pid[i], b->ts[i]) : NULL;
			uint64_t key[4] = { (uint64_t)b->comm[i] << 32 | b->pid[i],
					    (uint64_t)b->kstack[i] << 32 | u,
					    pr ? pr->ts : 0, 0 };
			int added;
			uint32_t sid = imap_id(&p.samples, key, sizeof(key), &added);
			if (sid == 0)
				goto oom;
			if (DT_GROW(p.counts, p.ccap, sid, 0, 4096) ||
			    DT_GROW(p.first_ts, p.tcap, sid, 0, 4096))
				goto oom;
			if (added) {
				p.counts[sid - 1] = 0;
				p.first_ts[sid - 1] = b->ts[i];
			}
			p.counts[sid - 1]++;
			nsamples++;
		}
	}
	if (got < 0) {
		rpt_err("export", "%s: %s", cap, err);
		goto out;
	}
	dtsp_ahead_free(ah);
	ah = NULL;
	rpt_note_empty("export", cap, nsamples, flt_active(flt));

	if (main_mapping_first(&p) < 0)
		goto oom;
	/* pass 2: name each distinct key once */
	for (size_t s = 0; s < p.samples.n; s++) {
		/* naming stacks takes a while on a big profile: Ctrl-C holds */
		if ((s & 1023) == 0 && cancel && *cancel) {
			rpt_err("export", "interrupted");
			goto out;
		}
		uint64_t key[4];
		memcpy(key, p.samples.keys[s].p, sizeof(key));
		uint32_t comm = (uint32_t)(key[0] >> 32), pid = (uint32_t)key[0];
		uint32_t ks = (uint32_t)(key[1] >> 32), us = (uint32_t)key[1];
		uint64_t ts = p.first_ts[s];
		unsigned n = 0;
		if (stack_locs(&p, ks, pid, ts, ids, &n) < 0 ||
		    stack_locs(&p, us, pid, ts, ids, &n) < 0)
			goto oom;
		if (n == 0) {
			uint64_t id = location_id(&p, 0, "[no stack]", 0, pid, ts);
			if (id == 0)
				goto oom;
			ids[n++] = id;
		}
		struct pb loc = { 0 };
		for (unsigned k = 0; k < n; k++)
			pb_varint(&loc, ids[k]);
		pb_msg(&p.m1, 1, &loc);		/* packed location_id */
		free(loc.p);
		struct pb val = { 0 };
		pb_varint(&val, p.counts[s]);
		if (hz)
			pb_varint(&val, p.counts[s] * (1000000000ULL / hz));
		pb_msg(&p.m1, 2, &val);
		free(val.p);
		const char *cn = dtcap_comm(r, comm);
		int64_t cs = str_index(&p, cn ? cn : "[unknown]");
		if (cs < 0)
			goto oom;
		pb_uint(&p.m2, 1, (uint64_t)s_comm);
		pb_uint(&p.m2, 2, (uint64_t)cs);
		pb_msg(&p.m1, 3, &p.m2);
		pb_uint(&p.m2, 1, (uint64_t)s_pid);
		pb_uint(&p.m2, 3, pid);
		pb_msg(&p.m1, 3, &p.m2);
		pb_msg(&p.out, 2, &p.m1);
	}
	const struct dtcap_host *h = dtcap_host(r);
	pb_uint(&p.out, 9, (uint64_t)((int64_t)h->start_ns + h->clock_real_ns -
				      (int64_t)h->clock_mono_ns));
	pb_uint(&p.out, 10, tmax > h->start_ns ? tmax - h->start_ns : 0);
	if (hz) {
		pb_uint(&p.m1, 1, (uint64_t)s_cpu);
		pb_uint(&p.m1, 2, (uint64_t)s_ns);
		pb_msg(&p.out, 11, &p.m1);
		pb_uint(&p.out, 12, 1000000000ULL / hz);
	}
	if (p.out.oom || p.m1.oom || p.m2.oom)
		goto oom;
	if (write_gz(path, cap, p.out.p, p.out.len, cancel) < 0)
		goto out;
	printf("%s: %llu samples, %zu stacks, %zu functions, %zu locations\n", path,
	       (unsigned long long)nsamples, p.samples.n, p.funcs.n, p.locs.n);
	ret = 0;
	goto out;
oom:
	rpt_err("export", "out of memory");
out:
	free(want);
	free(ids);
	free(p.counts);
	free(p.first_ts);
	free(p.out.p);
	free(p.m1.p);
	free(p.m2.p);
	imap_free(&p.strs);
	free(p.fixbuf);
	imap_free(&p.funcs);
	imap_free(&p.locs);
	imap_free(&p.maps);
	imap_free(&p.samples);
	dtsp_ahead_free(ah);
	if (p.sym && p.sym != c->sym)
		dtsym_close(p.sym);
	return ret;
}
