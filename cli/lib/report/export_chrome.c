/*
 * export_chrome.c - `dtreport export --format chrome`: the capture as
 * Chrome trace event JSON (the "JSON Object Format" of the Trace Event
 * Format document), which Perfetto's UI and chrome://tracing load.
 *
 *  - syscall and kprobe entry/return pairs become complete events
 *    ("ph":"X") on their thread: name = the function, cat = the provider,
 *    args.ret = the return value.  Pairing is per thread in time order; a
 *    return closes the innermost open entry of the same function (entries
 *    left open above it, whose returns were lost, become instants, as do
 *    a return without an entry and entries still open at the end: none
 *    is dropped), so slices always nest.
 *  - timer samples become thread instants ("ph":"i", cat "profile") named
 *    by their innermost frame, stack ids in args, "sf" their stack in
 *    "stackFrames"; also V8 ProfileChunk events (see struct frames).
 *  - every other event (sched tracepoints, ...) is a thread instant named
 *    by its probe, cat = the provider.
 *  - thread_name / process_name metadata from the events' comms.
 * Times are microseconds since the recording start with ns precision
 * ("ts":12.345); displayTimeUnit is "ns".
 *
 * Only the events the filters pass; thread names from those events.
 * Instants are streamed in capture order; the entry/return events are
 * sorted (struct pevsort, memory bounded), since a capture's rows are
 * per-CPU batches, not time order.  The output is written under a
 * temporary name and put in place only if no file took the name meanwhile
 * (util.h dtu_out_open_new): a failed or cancelled export leaves nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dtcap.h"
#include "dtsym.h"
#include "dt_htab.h"
#include "export.h"
#include "flame.h"
#include "report.h"
#include "scan_pool.h"
#include "util.h"

enum { K_INSTANT, K_SAMPLE, K_ENTRY, K_RETURN };

struct pev {
	uint64_t	ts;
	uint32_t	tid, pid;
	uint32_t	fn;		/* pair function index */
	uint32_t	isret;
	int64_t		ret;
	uint64_t	seq;		/* capture order: ties keep it */
};

struct thr {
	uint32_t	pid, tid, comm;
};

/* Microseconds since start, ns precision. */
static void json_ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static int pev_cmp(const void *a, const void *b)
{
	const struct pev *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int thr_cmp(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* ------------------------------------------- entry/return events, sorted */

/*
 * The entry/return events in (tid, ts, seq) order with bounded memory: a
 * capture can hold tens of millions of them (40 bytes each), so they are
 * sorted a chunk at a time, chunks beyond the first spilled as sorted runs
 * to an unlinked temporary file and merged back through a heap, RUNBUF
 * events of each run in memory.
 */
#define CHUNK_DEFAULT	(1u << 20)
#define RUNBUF		2048

struct run {
	uint64_t	off, left;	/* next event in the file, events left */
	struct pev	*b;
	size_t		bn, bi;
};

struct pevsort {
	struct pev	*buf;
	size_t		n, cap;
	FILE		*tmp;
	uint64_t	tmplen;		/* events written */
	struct run	*runs;
	size_t		nruns, cruns;
	size_t		*heap, nheap;	/* run indexes, least head first */
	size_t		mi;		/* in memory only: next of buf */
};

static int ps_spill(struct pevsort *ps)
{
	if (ps->n == 0)
		return 0;
	qsort(ps->buf, ps->n, sizeof(*ps->buf), pev_cmp);
	if (ps->tmp == NULL && (ps->tmp = tmpfile()) == NULL)
		return -1;
	if (DT_GROW(ps->runs, ps->cruns, ps->nruns, 1, 16))
		return -1;
	ps->runs[ps->nruns++] = (struct run){ ps->tmplen * sizeof(struct pev), ps->n, NULL, 0, 0 };
	if (fwrite(ps->buf, sizeof(*ps->buf), ps->n, ps->tmp) != ps->n)
		return -1;
	ps->tmplen += ps->n;
	ps->n = 0;
	return 0;
}

static int ps_add(struct pevsort *ps, const struct pev *e)
{
	if (ps->n == ps->cap && ps_spill(ps) < 0)
		return -1;
	ps->buf[ps->n++] = *e;
	return 0;
}

/* Refill run r's buffer; 0 when it is exhausted, -1 on a read error. */
static int run_fill(struct pevsort *ps, struct run *r)
{
	size_t want = r->left < RUNBUF ? (size_t)r->left : RUNBUF;
	if (want == 0)
		return 0;
	ssize_t got = pread(fileno(ps->tmp), r->b, want * sizeof(struct pev), (off_t)r->off);
	if (got != (ssize_t)(want * sizeof(struct pev)))
		return -1;
	r->off += (uint64_t)got;
	r->left -= want;
	r->bn = want;
	r->bi = 0;
	return 1;
}

static int heap_less(const struct pevsort *ps, size_t a, size_t b)
{
	const struct run *x = &ps->runs[ps->heap[a]], *y = &ps->runs[ps->heap[b]];
	return pev_cmp(&x->b[x->bi], &y->b[y->bi]) < 0;
}

static void heap_down(struct pevsort *ps, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < ps->nheap && heap_less(ps, l, m))
			m = l;
		if (l + 1 < ps->nheap && heap_less(ps, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		size_t t = ps->heap[i];
		ps->heap[i] = ps->heap[m];
		ps->heap[m] = t;
		i = m;
	}
}

/* All events added: sort in memory, or spill the last chunk and set up
 * the merge.  -1 on an I/O error or out of memory. */
static int ps_finish(struct pevsort *ps)
{
	if (ps->nruns == 0) {
		if (ps->n)
			qsort(ps->buf, ps->n, sizeof(*ps->buf), pev_cmp);
		return 0;
	}
	if (ps_spill(ps) < 0 || fflush(ps->tmp) != 0)
		return -1;
	free(ps->buf);
	ps->buf = NULL;
	ps->heap = malloc(ps->nruns * sizeof(*ps->heap));
	if (ps->heap == NULL)
		return -1;
	for (size_t i = 0; i < ps->nruns; i++) {
		struct run *r = &ps->runs[i];
		if ((r->b = malloc(RUNBUF * sizeof(*r->b))) == NULL)
			return -1;
		int k = run_fill(ps, r);
		if (k < 0)
			return -1;
		if (k)
			ps->heap[ps->nheap++] = i;
	}
	for (size_t i = ps->nheap / 2; i-- > 0;)
		heap_down(ps, i);
	return 0;
}

/* The next event in order: 1, 0 at the end, -1 on a read error. */
static int ps_next(struct pevsort *ps, struct pev *e)
{
	if (ps->nruns == 0) {
		if (ps->mi == ps->n)
			return 0;
		*e = ps->buf[ps->mi++];
		return 1;
	}
	if (ps->nheap == 0)
		return 0;
	struct run *r = &ps->runs[ps->heap[0]];
	*e = r->b[r->bi++];
	if (r->bi == r->bn) {
		int k = run_fill(ps, r);
		if (k < 0)
			return -1;
		if (k == 0)
			ps->heap[0] = ps->heap[--ps->nheap];
	}
	if (ps->nheap)
		heap_down(ps, 0);
	return 1;
}

static void ps_free(struct pevsort *ps)
{
	free(ps->buf);
	for (size_t i = 0; i < ps->nruns; i++)
		free(ps->runs[i].b);
	free(ps->runs);
	free(ps->heap);
	if (ps->tmp)
		fclose(ps->tmp);
}

/* ------------------------------------------------ samples' stack frames */

/*
 * Each sample's stack as a node of one frame tree (root: the outermost
 * user frame, as in the flame graph; "[truncated]" where the recorder cut
 * a stack short): the Trace Event Format's "stackFrames" (written after
 * the events, its ids in each sample instant's "sf", what
 * chrome://tracing shows), and the same nodes in V8 "ProfileChunk" events
 * of one profile per process, which Perfetto and Chrome's DevTools load as
 * a CPU profile.
 */
struct frames {
	struct flame	*fl;		/* names and the tree of nodes */
	uint32_t	*parent, *name;	/* by node id */
	size_t		nnode, cnode;
	size_t		cname_node;	/* name's room, kept at cnode */
	char		**names;	/* by name id */
	size_t		nname, cname;
	/* (kstack, ustack, pid, snapshot) -> leaf node */
	struct leaf { uint32_t k, u, pid; uint64_t snap; uint32_t node; } *lv;
	size_t		nlv, clv;
	struct dt_htab	lht;
	/* per process: the nodes its profile was told of, the last sample */
	struct pn { uint64_t key; } *pnv;	/* pid << 32 | node */
	size_t		npn, cpn;
	struct dt_htab	pnht;
	struct pl { uint32_t pid; uint64_t last; } *plv;
	size_t		npl, cpl;
	struct dt_htab	plht;
};

static uint64_t leaf_hash(uint32_t k, uint32_t u, uint32_t pid, uint64_t snap)
{
	return dt_htab_hash_int(((uint64_t)k << 32 | u) ^ dt_htab_hash_int((uint64_t)pid << 32 ^ snap));
}

static uint64_t leaf_rehash(const void *ctx, uint32_t e)
{
	const struct frames *fr = ctx;
	const struct leaf *l = &fr->lv[e];
	return leaf_hash(l->k, l->u, l->pid, l->snap);
}

static uint64_t pn_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct frames *)ctx)->pnv[e].key);
}

static uint64_t pl_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct frames *)ctx)->plv[e].pid);
}

static void frames_free(struct frames *fr)
{
	flame_free(fr->fl);
	free(fr->parent);
	free(fr->name);
	for (size_t i = 0; i < fr->nname; i++)
		free(fr->names[i]);
	free(fr->names);
	free(fr->lv);
	dt_htab_free(&fr->lht);
	free(fr->pnv);
	dt_htab_free(&fr->pnht);
	free(fr->plv);
	dt_htab_free(&fr->plht);
}

/* The child of node named nm (made if new); -1 out of memory. */
static int64_t frame_child(struct frames *fr, uint32_t node, const char *nm)
{
	int64_t id = flame_intern(fr->fl, nm, FLAME_USER);
	if (id < 0)
		return -1;
	if ((size_t)id == fr->nname) {
		if (DT_GROW(fr->names, fr->cname, fr->nname, 1, 256) ||
		    (fr->names[fr->nname] = strdup(nm)) == NULL)
			return -1;
		fr->nname++;
	}
	uint32_t nid = (uint32_t)id;
	int64_t c = flame_add_at(fr->fl, node, &nid, 1, 0, 0);
	if (c < 0)
		return -1;
	if ((size_t)c >= fr->nnode) {
		/* nodes are numbered as made: this is the next one */
		if (DT_GROW(fr->parent, fr->cnode, fr->nnode, (size_t)c + 1 - fr->nnode, 1024))
			return -1;
		/* only when parent grew: a realloc per node copied the array
		 * each time (quadratic, and a block of new stacks then held
		 * off Ctrl-C for seconds) */
		if (fr->cname_node != fr->cnode) {
			uint32_t *nn = realloc(fr->name, fr->cnode * sizeof(*nn));
			if (nn == NULL)
				return -1;
			fr->name = nn;
			fr->cname_node = fr->cnode;
		}
		fr->parent[c] = node;
		fr->name[c] = nid;
		fr->nnode = (size_t)c + 1;
	}
	return c;
}

/* Walk one stack (innermost first in the capture) from node, outermost
 * first; the node where it ends. */
static int64_t frame_stack(struct frames *fr, struct dtsym *sym, const struct dtcap_reader *r,
			   uint32_t sid, uint32_t pid, uint64_t ts, int64_t node)
{
	unsigned n;
	int kernel, trunc;
	const uint64_t *pcs = sid ? dtcap_stack(r, sid, &n, &kernel, &trunc) : NULL;
	if (pcs == NULL)
		return node;
	if (n > DTCAP_MAXFRAMES)
		n = DTCAP_MAXFRAMES, trunc = 1;
	if (trunc && (node = frame_child(fr, (uint32_t)node, "[truncated]")) < 0)
		return -1;
	for (unsigned k = n; k-- > 0 && node >= 0;) {
		/* as report_flame.c: return addresses named at pc - 1 */
		uint64_t pc = k && pcs[k] ? pcs[k] - 1 : pcs[k];
		const char *nm = dtsym_name(sym, pc, kernel, pid, ts);
		const char *org = dtsym_origin(sym, pc, kernel, pid, ts);
		if (pc != pcs[k] && (!strcmp(org, "unknown") || strstr(nm, "+0x")))
			nm = dtsym_name(sym, pcs[k], kernel, pid, ts);
		node = frame_child(fr, (uint32_t)node, nm);
	}
	return node;
}

/* The leaf node of a sample (0: no stack at all); -1 out of memory. */
static int64_t sample_node(struct frames *fr, struct dtsym *sym, const struct dtcap_reader *r,
			   uint32_t k, uint32_t u, uint32_t pid, uint64_t ts)
{
	const struct dtcap_proc *pr = u ? dtcap_proc_find(r, pid, ts) : NULL;
	uint64_t snap = pr ? pr->ts : 0;
	uint32_t kp = u ? pid : 0;
	uint64_t h = leaf_hash(k, u, kp, snap);
	uint32_t e;
	for (size_t i = dt_htab_first(&fr->lht, h); (e = dt_htab_at(&fr->lht, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&fr->lht, i)) {
		const struct leaf *l = &fr->lv[e];
		if (l->k == k && l->u == u && l->pid == kp && l->snap == snap)
			return l->node;
	}
	int64_t node = frame_stack(fr, sym, r, u, pid, ts, 0);
	if (node >= 0)
		node = frame_stack(fr, sym, r, k, pid, ts, node);
	if (node < 0 || DT_GROW(fr->lv, fr->clv, fr->nlv, 1, 1024))
		return -1;
	fr->lv[fr->nlv] = (struct leaf){ k, u, kp, snap, (uint32_t)node };
	if (dt_htab_add(&fr->lht, h, (uint32_t)fr->nlv, leaf_rehash, fr))
		return -1;
	fr->nlv++;
	return node;
}

/* Whether pid's profile was told of node already (then 1), else note it. */
static int pn_seen(struct frames *fr, uint32_t pid, uint32_t node)
{
	uint64_t key = (uint64_t)pid << 32 | node, h = dt_htab_hash_int(key);
	uint32_t e;
	for (size_t i = dt_htab_first(&fr->pnht, h); (e = dt_htab_at(&fr->pnht, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&fr->pnht, i))
		if (fr->pnv[e].key == key)
			return 1;
	if (DT_GROW(fr->pnv, fr->cpn, fr->npn, 1, 1024))
		return -1;
	fr->pnv[fr->npn].key = key;
	if (dt_htab_add(&fr->pnht, h, (uint32_t)fr->npn, pn_rehash, fr))
		return -1;
	fr->npn++;
	return 0;
}

/* pid's profile state: its last sample's ts (UINT64_MAX: not started). */
static struct pl *pl_get(struct frames *fr, uint32_t pid)
{
	uint64_t h = dt_htab_hash_int(pid);
	uint32_t e;
	for (size_t i = dt_htab_first(&fr->plht, h); (e = dt_htab_at(&fr->plht, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&fr->plht, i))
		if (fr->plv[e].pid == pid)
			return &fr->plv[e];
	if (DT_GROW(fr->plv, fr->cpl, fr->npl, 1, 64))
		return NULL;
	fr->plv[fr->npl] = (struct pl){ pid, UINT64_MAX };
	if (dt_htab_add(&fr->plht, h, (uint32_t)fr->npl, pl_rehash, fr))
		return NULL;
	return &fr->plv[fr->npl++];
}

/*
 * The V8 profile events of one sample at ts (us since start, as the
 * events' "ts") of pid/tid at node: "Profile" once per process, then a
 * "ProfileChunk" with the nodes that profile does not know yet (parents
 * first) and the sample with its time since the process's previous one.
 * -1 out of memory.
 */
static int v8_sample(FILE *f, struct frames *fr, uint32_t pid, uint32_t tid, uint64_t ts,
		     uint32_t node, const char *sep)
{
	struct pl *pl = pl_get(fr, pid);
	if (pl == NULL)
		return -1;
	if (pl->last == UINT64_MAX) {
		fprintf(f, "%s{\"ph\":\"P\",\"name\":\"Profile\",\"id\":\"0x%x\",\"pid\":%u,"
			"\"tid\":%u", sep, pid, pid, tid);
		json_ts(f, "ts", ts);
		fprintf(f, ",\"args\":{\"data\":{\"startTime\":%llu}}}",
			(unsigned long long)(ts / 1000));
		sep = ",\n";
		pl->last = ts / 1000 * 1000;
	}
	fprintf(f, "%s{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"id\":\"0x%x\",\"pid\":%u,"
		"\"tid\":%u", sep, pid, pid, tid);
	json_ts(f, "ts", ts);
	fputs(",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[", f);
	/* the path's unknown nodes, root first: collect up, print down */
	uint32_t path[2 * DTCAP_MAXFRAMES + 4];
	unsigned np = 0;
	for (uint32_t x = node; x != 0 && np < sizeof(path) / sizeof(path[0]); x = fr->parent[x]) {
		int s = pn_seen(fr, pid, x);
		if (s < 0)
			return -1;
		if (s)
			break;
		path[np++] = x;
	}
	for (unsigned i = np; i-- > 0;) {
		uint32_t x = path[i];
		fprintf(f, "%s{\"id\":%u,\"callFrame\":{\"functionName\":", i + 1 == np ? "" : ",", x);
		dtu_json_str(f, fr->names[fr->name[x]]);
		fputs(",\"url\":\"\"}", f);
		if (fr->parent[x])
			fprintf(f, ",\"parent\":%u", fr->parent[x]);
		fputc('}', f);
	}
	/* V8 counts in us; the events' "ts" keep the ns */
	int64_t d = (int64_t)(ts / 1000) - (int64_t)(pl->last / 1000);
	pl->last = ts / 1000 * 1000;
	fprintf(f, "],\"samples\":[%u]},\"timeDeltas\":[%lld]}}}", node, (long long)d);
	return 0;
}

/* An entry or return without its other half: a thread instant named by
 * the function, args.unpaired saying which half is missing. */
static void unpaired(FILE *f, const struct pev *e, const char (*fnames)[DTCAP_PROBENAMELEN],
		     uint64_t t0, const char *sep)
{
	const char *fnm = fnames[e->fn], *c = strchr(fnm, ':');
	char catbuf[64];
	snprintf(catbuf, sizeof(catbuf), "%.*s", c ? (int)(c - fnm) : 0, fnm);
	fputs(sep, f);
	fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", f);
	dtu_json_str(f, c ? c + 1 : fnm);
	fputs(",\"cat\":", f);
	dtu_json_str(f, catbuf);
	json_ts(f, "ts", e->ts > t0 ? e->ts - t0 : 0);
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"args\":{", e->pid, e->tid);
	if (e->isret)
		fprintf(f, "\"unpaired\":\"return without entry\",\"ret\":%lld}}",
			(long long)e->ret);
	else
		fputs("\"unpaired\":\"entry without return\"}}", f);
}

int rpt_export_chrome(const struct rpt_cap *c, struct flt_filter *flt,
		      const struct rpt_export_opts *o, volatile sig_atomic_t *cancel)
{
	const char *path = o->out;
	struct dtcap_reader *r = c->r;
	char oerr[512];
	if (flt_resolve(flt, r, oerr, sizeof(oerr)) < 0) {
		rpt_err("export", "%s: %s", c->path, oerr);
		return RPT_EXIT_ERROR;
	}
	int ret = RPT_EXIT_ERROR, created = 0;
	FILE *f = NULL;
	struct dtu_out out;
	struct dtsym *sym = c->sym ? c->sym : dtsym_open(r);
	struct dtsp_ahead *ah = NULL;
	const struct dtcap_block *b;
	size_t bi;
	int got;
	uint8_t *kind = NULL;
	uint32_t *fnof = NULL;
	char (*fnames)[DTCAP_PROBENAMELEN] = NULL;
	size_t nfn = 0;
	struct pevsort ps = { 0 };
	struct frames fr = { 0 };
	struct thr *th = NULL;
	size_t nth = 0, cth = 0;
	uint64_t nslices = 0, ninst = 0, nunpaired = 0, nspilled = 0;
	fr.fl = flame_new();
	/* DTREPORT_CHROME_CHUNK: smaller chunks, so tests spill */
	const char *ce = getenv("DTREPORT_CHROME_CHUNK");
	ps.cap = ce && atol(ce) > 0 ? (size_t)atol(ce) : CHUNK_DEFAULT;
	ps.buf = malloc(ps.cap * sizeof(*ps.buf));
	if (!sym || !fr.fl || !ps.buf)
		goto oom;

	size_t np = dtcap_nprobes(r);
	uint32_t maxid = dtcap_max_probe_id(r);
	kind = calloc((size_t)maxid + 1, 1);
	fnof = calloc((size_t)maxid + 1, sizeof(*fnof));
	fnames = calloc(np ? np : 1, sizeof(*fnames));
	if (!kind || !fnof || !fnames)
		goto oom;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *p = dtcap_probe_at(r, i);
		size_t l = strlen(p->name);
		int entry = l > 6 && !strcmp(p->name + l - 6, ":entry");
		int paired = !strncmp(p->name, "syscall:", 8) || !strncmp(p->name, "kprobe:", 7);
		if (p->flags & DT_PF_TIMER)
			kind[p->id] = K_SAMPLE;
		else if (paired && (entry || (p->flags & DT_PF_RETURN)))
			kind[p->id] = entry ? K_ENTRY : K_RETURN;
		else
			kind[p->id] = K_INSTANT;
		if (kind[p->id] == K_ENTRY || kind[p->id] == K_RETURN) {
			/* "provider:function": the pair's key and the slice's name */
			char key[DTCAP_PROBENAMELEN];
			snprintf(key, sizeof(key), "%s", p->name);
			char *c = strrchr(key, ':');
			if (c)
				*c = 0;
			size_t k;
			for (k = 0; k < nfn && strcmp(fnames[k], key); k++)
				;
			if (k == nfn)
				memcpy(fnames[nfn++], key, sizeof(key));
			fnof[p->id] = (uint32_t)k;
		}
	}

	/* under a temporary name until complete: an interrupted export
	 * leaves nothing under the final one */
	if (dtu_out_open_new(&out, path, &c->path, 1, oerr, sizeof(oerr)) < 0) {
		rpt_err("export", "%s", oerr);
		goto out;
	}
	f = out.f;
	created = 1;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	const struct dtcap_host *h = dtcap_host(r);
	uint64_t t0 = h->start_ns;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"host\":", f);
	dtu_json_str(f, h->hostname);
	fputs(",\"kernel\":", f);
	dtu_json_str(f, h->kernel);
	fputs(",\"command\":", f);
	dtu_json_str(f, h->command);
	fputs("},\n\"traceEvents\":[\n", f);
	int first = 1;
#define SEP() (first ? (first = 0, "") : ",\n")

	uint64_t seq = 0;
	/* blocks decoded ahead on the pool while this thread writes */
	if ((ah = dtsp_ahead_new(r, flt, DTCAP_COL_ALL, cancel, rpt_reading(), oerr,
				 sizeof(oerr))) == NULL) {
		rpt_err("export", "%s: %s", c->path, oerr);
		goto out;
	}
	while ((got = dtsp_ahead_next(ah, &b, &bi, oerr, sizeof(oerr))) == 1) {
		for (uint32_t i = 0; i < b->rows; i++, seq++) {
			/* naming a block's new stacks can take a while */
			if ((i & 4095) == 4095 && cancel && *cancel) {
				rpt_err("export", "%s: interrupted", c->path);
				goto out;
			}
			if (!flt_match_row(flt, b, i))
				continue;
			uint32_t id = b->probe[i];
			int k = id <= maxid ? kind[id] : K_INSTANT;
			uint64_t ts = b->ts[i] > t0 ? b->ts[i] - t0 : 0;
			/* threads seen, with their latest comm */
			if (nth == 0 || th[nth - 1].tid != b->tid[i] || th[nth - 1].pid != b->pid[i]) {
				if (DT_GROW(th, cth, nth, 1, 1024))
					goto oom;
				th[nth++] = (struct thr){ b->pid[i], b->tid[i], b->comm[i] };
				if (nth == cth && cth >= 1u << 16) {
					/* dedup now and then: runs of one thread are long */
					qsort(th, nth, sizeof(*th), thr_cmp);
					size_t o = 0;
					for (size_t j = 0; j < nth; j++)
						if (o == 0 || thr_cmp(&th[o - 1], &th[j]))
							th[o++] = th[j];
						else if (th[j].comm)
							th[o - 1].comm = th[j].comm;
					nth = o;
				}
			} else if (b->comm[i]) {
				th[nth - 1].comm = b->comm[i];
			}
			if (k == K_ENTRY || k == K_RETURN) {
				struct pev e = { b->ts[i], b->tid[i], b->pid[i], fnof[id],
						 k == K_RETURN, (int64_t)b->args[i * DTCAP_MAXARGS],
						 seq };
				if (ps_add(&ps, &e) < 0)
					goto io;
				continue;
			}
			const char *name, *cat;
			char catbuf[64];
			int64_t node = 0;
			if (k == K_SAMPLE) {
				node = sample_node(&fr, sym, r, b->kstack[i], b->ustack[i], b->pid[i],
						   b->ts[i]);
				if (node == 0)
					node = frame_child(&fr, 0, "[no stack]");
				if (node < 0)
					goto oom;
				/* named by the innermost frame, as before */
				name = fr.names[fr.name[node]];
				cat = "profile";
			} else {
				const struct dtcap_probe *p = dtcap_probe_by_id(r, id);
				name = p ? p->name : "[unknown probe]";
				const char *c = strchr(name, ':');
				size_t cl = c ? (size_t)(c - name) : strlen(name);
				cl = cl < sizeof(catbuf) - 1 ? cl : sizeof(catbuf) - 1;
				memcpy(catbuf, name, cl);
				catbuf[cl] = 0;
				cat = catbuf;
			}
			fputs(SEP(), f);
			fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", f);
			dtu_json_str(f, name);
			fputs(",\"cat\":", f);
			dtu_json_str(f, cat);
			json_ts(f, "ts", ts);
			fprintf(f, ",\"pid\":%u,\"tid\":%u,\"args\":{\"cpu\":%u", b->pid[i],
				b->tid[i], b->cpu[i]);
			if (k == K_SAMPLE)
				fprintf(f, ",\"kstack\":%u,\"ustack\":%u},\"sf\":%lld}", b->kstack[i],
					b->ustack[i], (long long)node);
			else {
				for (unsigned a = 0; a < b->nargs[i] && a < DTCAP_MAXARGS; a++)
					fprintf(f, ",\"arg%u\":%lld", a,
						(long long)b->args[i * DTCAP_MAXARGS + a]);
				fputs("}}", f);
			}
			if (k == K_SAMPLE &&
			    v8_sample(f, &fr, b->pid[i], b->tid[i], ts, (uint32_t)node, ",\n") < 0)
				goto oom;
			ninst++;
		}
	}
	if (got < 0) {
		rpt_err("export", "%s: %s", c->path, oerr);
		goto out;
	}
	dtsp_ahead_free(ah);
	ah = NULL;
	rpt_note_empty("export", c->path, ninst + ps.n + ps.tmplen, flt_active(flt));

	/* slices: per thread, in time order, returns close matching entries;
	 * an entry or return left without its other half is an instant */
	if (ps_finish(&ps) < 0)
		goto io;
	nspilled = ps.nruns;
	struct pev open_[128], e;
	size_t nopen = 0;
	int more, have = 0;
	uint32_t cur = 0;
	uint64_t npairs = 0;
	while ((more = ps_next(&ps, &e)) >= 0) {
		/* the pairs of a big capture take seconds: Ctrl-C holds here too */
		if ((++npairs & 0xffff) == 0 && cancel && *cancel) {
			rpt_err("export", "interrupted");
			goto out;
		}
		if (more == 0 || !have || e.tid != cur) {
			for (size_t j = 0; j < nopen; j++)
				unpaired(f, &open_[j], fnames, t0, SEP()), nunpaired++;
			nopen = 0;
			if (more == 0)
				break;
			cur = e.tid;
			have = 1;
		}
		if (!e.isret) {
			if (nopen == sizeof(open_) / sizeof(open_[0])) {
				/* deeper than any real nesting: the oldest was lost */
				unpaired(f, &open_[0], fnames, t0, SEP()), nunpaired++;
				memmove(open_, open_ + 1, (nopen - 1) * sizeof(open_[0]));
				nopen--;
			}
			open_[nopen++] = e;
			continue;
		}
		size_t d = nopen;
		while (d > 0 && open_[d - 1].fn != e.fn)
			d--;
		if (d == 0) {
			unpaired(f, &e, fnames, t0, SEP()), nunpaired++;
			continue;
		}
		/* entries above the one closed lost their returns */
		for (size_t j = d; j < nopen; j++)
			unpaired(f, &open_[j], fnames, t0, SEP()), nunpaired++;
		const struct pev *en = &open_[d - 1];
		nopen = d - 1;
		const char *fnm = fnames[en->fn], *c = strchr(fnm, ':');
		char catbuf[64];
		snprintf(catbuf, sizeof(catbuf), "%.*s", c ? (int)(c - fnm) : 0, fnm);
		fputs(SEP(), f);
		fputs("{\"ph\":\"X\",\"name\":", f);
		dtu_json_str(f, c ? c + 1 : fnm);
		fputs(",\"cat\":", f);
		dtu_json_str(f, catbuf);
		json_ts(f, "ts", en->ts > t0 ? en->ts - t0 : 0);
		json_ts(f, "dur", e.ts - en->ts);
		fprintf(f, ",\"pid\":%u,\"tid\":%u,\"args\":{\"ret\":%lld}}", en->pid, en->tid,
			(long long)e.ret);
		nslices++;
	}
	if (more < 0)
		goto io;

	/* names of threads and processes */
	if (nth)
		qsort(th, nth, sizeof(*th), thr_cmp);
	for (size_t j = 0; j < nth; j++) {
		if (j && !thr_cmp(&th[j - 1], &th[j]))
			continue;
		/* the latest comm of the thread: the last duplicate in the run */
		size_t l = j;
		while (l + 1 < nth && !thr_cmp(&th[l + 1], &th[j]))
			l++;
		uint32_t cm = th[l].comm;
		for (size_t m = j; !cm && m <= l; m++)
			cm = th[m].comm;
		const char *cn = dtcap_comm(r, cm);
		if (cn == NULL)
			continue;
		fputs(SEP(), f);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":", th[j].pid, th[j].tid);
		dtu_json_str(f, cn);
		fputs("}}", f);
		if (th[j].pid == th[j].tid) {
			fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,"
				"\"args\":{\"name\":", th[j].pid);
			dtu_json_str(f, cn);
			fputs("}}", f);
		}
	}
	fputs("\n],\n\"stackFrames\":{", f);
	for (size_t x = 1; x < fr.nnode; x++) {
		fprintf(f, "%s\"%zu\":{\"name\":", x > 1 ? ",\n" : "", x);
		dtu_json_str(f, fr.names[fr.name[x]]);
		fputs(",\"category\":\"dt\"", f);
		if (fr.parent[x])
			fprintf(f, ",\"parent\":\"%u\"", fr.parent[x]);
		fputc('}', f);
	}
	fputs("}}\n", f);
	if (ferror(f) || fflush(f) == EOF) {
		rpt_err("export", "%s: %s", path, strerror(errno ? errno : EIO));
		goto out;
	}
	/* the sort's last stretch polls nothing: a Ctrl-C meanwhile still
	 * means no file */
	if (cancel && *cancel) {
		rpt_err("export", "interrupted");
		goto out;
	}
	created = 0;
	if (dtu_out_commit(&out, oerr, sizeof(oerr)) < 0) {
		rpt_err("export", "%s", oerr);
		goto out;
	}
	printf("%s: %llu slices, %llu instants, %llu entries or returns without their "
	       "other half (as instants)%s\n", path, (unsigned long long)nslices,
	       (unsigned long long)ninst, (unsigned long long)nunpaired,
	       nspilled ? "; pairs sorted through a temporary file" : "");
	ret = 0;
	goto out;
io:
	rpt_err("export", "%s: temporary file: %s", path, errno ? strerror(errno) : "out of memory");
	goto out;
oom:
	rpt_err("export", "out of memory");
out:
	if (created)
		dtu_out_abort(&out);	/* ours, and incomplete */
	free(kind);
	free(fnof);
	free(fnames);
	ps_free(&ps);
	frames_free(&fr);
	free(th);
	dtsp_ahead_free(ah);
	if (sym && sym != c->sym)
		dtsym_close(sym);
	return ret;
}
