/*
 * span_model.c - entry/return pairs of a capture's function-like probes
 * (engine.h rpt_spans_build): syscall:F:entry/return, kprobe:F:entry/
 * return, uprobe:...:entry/return.  The events of those probes are
 * collected on one block scan, then paired per thread with a stack of
 * open entries, in the thread's time order: a return closes the innermost
 * open entry of its probe, so nesting and recursion pair up; entries it
 * passes over lost their return, and a return without an open entry lost
 * its entry.  Both are counted.
 *
 * The collection runs on the scan pool (model_collect.h): the list one
 * walk in block order would have made, for any --threads.
 *
 * The pairing is one walk of that list on the calling thread, each pair
 * written as it is made.  It was split by thread over the pool's threads
 * (each part owning a hash part of the tids), but a walk of the list is
 * bound by memory, not by the CPU: split, the parts read the list between
 * them more than once (a cache line holds events of several parts) and
 * the pairs had to be put in one walk's order in a second pass, so two
 * parts took longer than one walk (doc/SCALE.md has the figures).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "model_collect.h"
#include "report.h"
#include "util.h"

/* 32 bytes: millions of them; a return's value lives apart */
struct pev {
	uint64_t	ts;
	uint32_t	tid, pid, comm, probe;	/* probe: the entry's id */
	uint8_t		ret_side;	/* a return */
	uint8_t		nargs;		/* an entry's, at most RPT_SPAN_ARGS */
	uint32_t	err;		/* a return's errno */
};
_Static_assert(sizeof(struct pev) == 32, "struct pev: 32 bytes");

/* The paired probes, read by the workers. */
struct pctx {
	uint32_t	*entry_of;	/* by probe id: the entry's id, 0: not paired */
	uint8_t		*is_ret;
	uint32_t	np;
	int		want_args;	/* RPT_SPANS_ARGS */
	int		want_ret;	/* not RPT_SPANS_NORET */
};

/* The collection: arr[0] struct pev, arr[1] an entry's arguments
 * (want_args), arr[2] a return's value (want_ret), by event. */
enum { A_EV, A_ARGS, A_RET };
struct pbuild {
	struct mcol_part mc;
	uint32_t	maxtid;
	size_t		nret;		/* returns among the events */
};

#define EV(pb)		((struct pev *)(pb)->mc.arr[A_EV])
#define ARGS(pb)	((uint64_t (*)[RPT_SPAN_ARGS])(pb)->mc.arr[A_ARGS])
#define RETV(pb)	((int64_t *)(pb)->mc.arr[A_RET])

/* "P:F:entry" and "P:F:return" share "P:F". */
static int
base_len(const char *name, const char *suffix)
{
	size_t l = strlen(name), s = strlen(suffix);
	if (l <= s + 1 || strcmp(name + l - s, suffix) != 0 || name[l - s - 1] != ':')
		return -1;
	return (int)(l - s - 1);
}

static int
span_keep(const void *ctx, uint32_t p)
{
	const struct pctx *c = ctx;
	return p < c->np && c->entry_of[p];
}

/* One paired probe's event: a[j] is its argument slot j (j < na). */
static int
add_event(struct pbuild *pb, const struct pctx *c, const struct dtcap_block *b, uint32_t i,
	  uint32_t p, const uint64_t *a, unsigned na)
{
	size_t x = mcol_add(&pb->mc);

	if (x == SIZE_MAX)
		return 1;
	struct pev *e = &EV(pb)[x];
	e->ts = b->ts[i];
	e->tid = b->tid[i];
	if (e->tid > pb->maxtid)
		pb->maxtid = e->tid;
	e->pid = b->pid[i];
	e->comm = b->comm[i];
	e->probe = c->entry_of[p];
	e->ret_side = c->is_ret[p];
	pb->nret += e->ret_side;
	e->nargs = 0;
	e->err = 0;
	if (c->want_args) {
		uint64_t *ea = ARGS(pb)[x];
		memset(ea, 0, sizeof(ARGS(pb)[0]));
		if (!e->ret_side) {
			e->nargs = (uint8_t)(na < RPT_SPAN_ARGS ? na : RPT_SPAN_ARGS);
			if (e->nargs)
				memcpy(ea, a, e->nargs * sizeof(uint64_t));
		}
	}
	if (c->want_ret) {
		RETV(pb)[x] = e->ret_side && na >= 2 ? (int64_t)a[0] : 0;
		e->err = e->ret_side && na >= 2 ? (uint32_t)a[1] : 0;
	}
	return 0;
}

/* A row of a filtered scan (arguments row-major). */
static int
span_row(struct mcol_part *mp, const struct dtcap_block *b, uint32_t i)
{
	struct pbuild *pb = (struct pbuild *)mp;
	const struct pctx *c = mp->job->ctx;
	uint32_t p = b->probe[i];

	if (p >= c->np || !c->entry_of[p])
		return 0;
	if (!b->args)	/* not decoded: neither arguments nor values wanted */
		return add_event(pb, c, b, i, p, NULL, 0);
	return add_event(pb, c, b, i, p, &b->args[(size_t)i * DTCAP_MAXARGS], b->nargs[i]);
}

/*
 * A whole block of an unfiltered scan, its arguments by slot: no row-major
 * array filled for the rows (most) that are not paired probes'.
 */
static int
span_block(struct mcol_part *mp, const struct dtcap_block *b)
{
	struct pbuild *pb = (struct pbuild *)mp;
	const struct pctx *c = mp->job->ctx;
	size_t cur[RPT_SPAN_ARGS] = { 0 };
	uint64_t a[RPT_SPAN_ARGS];
	/* without entry arguments only slots 0 and 1 are decoded (DTCAP_COL_ARGS2) */
	unsigned lim = c->want_args ? RPT_SPAN_ARGS : 2;

	for (uint32_t i = 0; i < b->rows; i++) {
		uint32_t p = b->probe[i];
		if (!b->nargs) {	/* not decoded: neither arguments nor values wanted */
			if (p < c->np && c->entry_of[p] && add_event(pb, c, b, i, p, NULL, 0))
				return 1;
			continue;
		}
		unsigned na = b->nargs[i], nk = na < lim ? na : lim;
		if (p < c->np && c->entry_of[p]) {
			for (unsigned j = 0; j < nk; j++)
				a[j] = b->argslot[j][cur[j]];
			if (add_event(pb, c, b, i, p, a, na))
				return 1;
		}
		for (unsigned j = 0; j < nk; j++)
			cur[j]++;
	}
	return 0;
}

static void
span_merge(struct mcol_part *m, const struct mcol_part *p)
{
	const struct pbuild *pp = (const struct pbuild *)p;
	struct pbuild *pm = (struct pbuild *)m;

	if (pp->maxtid > pm->maxtid)
		pm->maxtid = pp->maxtid;
	pm->nret += pp->nret;
}

/* ---- the pairing, one walk */

/* A thread's pairing state. */
struct pth {
	uint32_t	tid;
	int		disordered;	/* its events are not in time order in the file */
	uint64_t	last;		/* its latest time so far */
	size_t		first;		/* its first event: the order of the threads */
	size_t		*open;		/* its open entries (event indices), innermost last */
	size_t		nopen, ocap;
};

/* Threads by tid: a table for the usual ones (pid_max is at most 2^22),
 * a hash for the rest (perf's -1 for an exiting task, hand-made files). */
#define TMAP_MAX	(1u << 22)


/* A pair of a disordered thread: placed by its return's (time, index). */
struct dpair {
	uint64_t	ts;
	size_t		ent, ret;
};

/*
 * An unmatched entry or return and its place in one walk's order: phase 0
 * at return k[1] (file order), phase 1 at return (time k[1], index k[2])
 * of a disordered thread, phase 2 left open at the end (thread by its
 * first event k[1]); the last word orders those of one return or thread.
 */
struct upend {
	uint64_t	k[4];
	struct rpt_unmatched u;
};

struct pall;

/* The pairing's threads and what it made. */
struct pwork {
	struct pall	*pa;		/* [I] */
	struct pth	*th;
	size_t		nth, thcap;
	uint32_t	*tmap;		/* by tid <= TMAP_MAX: its th index + 1 */
	/* the other tids: the hash numbers its entries densely, so they
	 * are numbered apart (bigt: the th index of each) */
	struct dt_htab	big;
	uint32_t	*bigt;
	size_t		nbig, bigcap;
	size_t		npp;		/* file-order threads' pairs, written to out */
	struct dpair	*dp;		/* disordered threads' pairs, by (ts, return) */
	size_t		ndp, dpcap;
	struct upend	*u;
	size_t		nu, ucap;
};

struct pall {
	const struct pctx *c;		/* [I] */
	const struct pev *ev;		/* [I] */
	const uint64_t	(*args)[RPT_SPAN_ARGS];	/* [I] want_args */
	const int64_t	*retv;		/* [I] want_ret */
	size_t		n;		/* [I] */
	uint32_t	maxtid;		/* [I] */
	volatile sig_atomic_t *cancel;	/* [I] */
	struct rpt_spans *out;
};

static uint64_t
pth_rehash(const void *ctx, uint32_t e)
{
	const struct pwork *w = ctx;
	return dt_htab_hash_int(w->th[w->bigt[e]].tid);
}

static struct pth *
pth_find(struct pwork *w, uint32_t tid)
{
	uint32_t e;

	if (tid <= TMAP_MAX)
		return w->tmap[tid] ? &w->th[w->tmap[tid] - 1] : NULL;
	uint64_t h = dt_htab_hash_int(tid);
	for (size_t j = dt_htab_first(&w->big, h); (e = dt_htab_at(&w->big, j)) != DT_HTAB_NONE;
	     j = dt_htab_next(&w->big, j))
		if (w->th[w->bigt[e]].tid == tid)
			return &w->th[w->bigt[e]];
	return NULL;
}

static struct pth *
pth_add(struct pwork *w, uint32_t tid, size_t first)
{
	if (DT_GROW(w->th, w->thcap, w->nth, 1, 64))
		return NULL;
	w->th[w->nth] = (struct pth){ .tid = tid, .first = first };
	uint32_t t = (uint32_t)w->nth++;
	if (tid <= TMAP_MAX) {
		w->tmap[tid] = t + 1;
	} else {
		if (DT_GROW(w->bigt, w->bigcap, w->nbig, 1, 16))
			return NULL;
		w->bigt[w->nbig] = t;
		if (dt_htab_add(&w->big, dt_htab_hash_int(tid), (uint32_t)w->nbig, pth_rehash, w))
			return NULL;
		w->nbig++;
	}
	return &w->th[t];
}

static int
unmatched(struct pwork *w, uint64_t k0, uint64_t k1, uint64_t k2, uint64_t k3,
	  const struct pev *e, uint32_t tid, int entry)
{
	if (DT_GROW(w->u, w->ucap, w->nu, 1, 64))
		return -1;
	w->u[w->nu++] = (struct upend){ { k0, k1, k2, k3 },
					{ e->probe, tid, e->pid, e->comm, (uint8_t)entry } };
	return 0;
}

/* Pair (ent, ret) as span x of out. */
static void
put_span(const struct pall *pa, size_t x, size_t ent, size_t ret)
{
	const struct pev *s = &pa->ev[ent], *e = &pa->ev[ret];
	struct rpt_spans *out = pa->out;

	if (pa->c->want_args) {
		memcpy(out->args[x], pa->args[ent], sizeof(out->args[0]));
		out->nargs[x] = s->nargs;
	}
	out->v[x] = (struct rpt_span){
		.start = s->ts, .end = e->ts, .tid = e->tid, .pid = s->pid ? s->pid : e->pid,
		.comm = s->comm ? s->comm : e->comm, .probe = e->probe,
		.ret = pa->c->want_ret ? pa->retv[ret] : 0, .err = e->err,
	};
}

/* Event i of thread p, in the thread's time order (phase 0: file order,
 * 1: a disordered thread's (time, index) order).  0, or -1 on ENOMEM. */
static int
pair_event(struct pwork *w, struct pth *p, size_t i, int phase)
{
	const struct pev *ev = w->pa->ev, *e = &ev[i];
	uint64_t k1 = phase ? e->ts : i, k2 = phase ? i : 0;

	if (!e->ret_side) {
		if (DT_GROW(p->open, p->ocap, p->nopen, 1, 16))
			return -1;
		p->open[p->nopen++] = i;
		return 0;
	}
	size_t k = p->nopen;
	while (k > 0 && ev[p->open[k - 1]].probe != e->probe)
		k--;
	if (k == 0)
		return unmatched(w, (uint64_t)phase, k1, k2, 0, e, p->tid, 0);
	/* entries inside it that never returned */
	for (size_t j = k; j < p->nopen; j++)
		if (unmatched(w, (uint64_t)phase, k1, k2, j - k, &ev[p->open[j]], p->tid, 1))
			return -1;
	size_t ent = p->open[k - 1];
	p->nopen = k - 1;
	if (phase == 0) {
		put_span(w->pa, w->npp++, ent, i);
		return 0;
	}
	if (DT_GROW(w->dp, w->dpcap, w->ndp, 1, 256))
		return -1;
	w->dp[w->ndp++] = (struct dpair){ e->ts, ent, i };
	return 0;
}

#define CANCELLED(w, i)	(((i) & 0xffff) == 0 && (w)->pa->cancel && *(w)->pa->cancel)

/*
 * The file-order results of threads found out of order after all:
 * dropped (their pairs, the places they took, their unmatched ends, their
 * open entries), to be made again in time order.  Rare: threads that
 * moved between CPUs whose batches overlap.
 */
static void
drop_disordered(struct pwork *w)
{
	const struct pall *pa = w->pa;
	struct rpt_spans *out = pa->out;
	size_t k = 0;

	for (size_t x = 0; x < w->npp; x++) {
		if (pth_find(w, out->v[x].tid)->disordered)
			continue;
		if (pa->c->want_args && k != x) {
			memcpy(out->args[k], out->args[x], sizeof(out->args[0]));
			out->nargs[k] = out->nargs[x];
		}
		out->v[k++] = out->v[x];
	}
	w->npp = k;
	k = 0;
	for (size_t x = 0; x < w->nu; x++)
		if (!pth_find(w, w->u[x].u.tid)->disordered)
			w->u[k++] = w->u[x];
	w->nu = k;
	for (size_t t = 0; t < w->nth; t++)
		if (w->th[t].disordered)
			w->th[t].nopen = 0;
}

/*
 * The threads paired as they come, checked for time order on the
 * way (the events read once, nothing sorted, for threads in time order in
 * the file, nearly all); then the threads found out of order paired again
 * in time order, then what is still open.
 */
static int
pair_run(struct pwork *w)
{
	const struct pall *pa = w->pa;
	const struct pev *ev = pa->ev;
	struct rpt_key *ord = NULL;
	size_t ndis = 0, ndth = 0;
	int rc = -1;

	if ((w->tmap = calloc((size_t)(pa->maxtid < TMAP_MAX ? pa->maxtid : TMAP_MAX) + 1,
			      sizeof(*w->tmap))) == NULL)
		return -1;
	for (size_t i = 0; i < pa->n; i++) {
		const struct pev *e = &ev[i];
		if (CANCELLED(w, i))
			return FLT_SCAN_CANCELLED;
		struct pth *p = pth_find(w, e->tid);
		if (p == NULL && (p = pth_add(w, e->tid, i)) == NULL)
			return -1;
		if (p->disordered)
			continue;
		if (e->ts < p->last) {
			p->disordered = 1;
			ndth++;
			continue;
		}
		p->last = e->ts;
		if (pair_event(w, p, i, 0))
			return -1;
	}
	if (ndth) {
		drop_disordered(w);
		for (size_t i = 0; i < pa->n; i++)
			if (pth_find(w, ev[i].tid)->disordered)
				ndis++;
		if ((ord = malloc(ndis * sizeof(*ord))) == NULL)
			return -1;
		size_t x = 0;
		for (size_t i = 0; i < pa->n; i++)
			if (pth_find(w, ev[i].tid)->disordered)
				ord[x++] = (struct rpt_key){ ev[i].ts, i };
		if (rpt_key_sort(ord, ndis))
			goto out;
		for (x = 0; x < ndis; x++) {
			if (CANCELLED(w, x)) {
				rc = FLT_SCAN_CANCELLED;
				goto out;
			}
			if (pair_event(w, pth_find(w, ev[ord[x].i].tid), ord[x].i, 1))
				goto out;
		}
	}
	/* what is still open never returned */
	for (size_t t = 0; t < w->nth; t++)
		for (size_t j = 0; j < w->th[t].nopen; j++)
			if (unmatched(w, 2, w->th[t].first, j, 0, &ev[w->th[t].open[j]],
				      w->th[t].tid, 1))
				goto out;
	rc = 0;
out:
	free(ord);
	return rc;
}

static int
upend_cmp(const void *a, const void *b)
{
	const struct upend *x = a, *y = b;

	for (unsigned k = 0; k < 4; k++)
		if (x->k[k] != y->k[k])
			return x->k[k] < y->k[k] ? -1 : 1;
	return 0;
}

static void
pwork_free(struct pwork *w)
{
	for (size_t t = 0; t < w->nth; t++)
		free(w->th[t].open);
	free(w->th);
	free(w->tmap);
	dt_htab_free(&w->big);
	free(w->bigt);
	free(w->dp);
	free(w->u);
}

/*
 * Pair pb's events into out.  0, -1 out of memory, FLT_SCAN_CANCELLED.
 */
static int
pair_all(const struct pbuild *pb, const struct pctx *c, struct rpt_spans *out,
	 volatile sig_atomic_t *cancel)
{
	struct pall pa = { .c = c, .ev = EV(pb), .args = (const void *)ARGS(pb), .retv = RETV(pb),
			   .n = pb->mc.n, .maxtid = pb->maxtid, .cancel = cancel, .out = out };
	struct pwork w = { .pa = &pa };
	int rc = -1;

	/* a pair per return at most; its pages taken at once, not by a
	 * fault each as the walk first writes them */
	if ((out->v = malloc((pb->nret + 1) * sizeof(*out->v))) == NULL)
		goto out;
	out->cap = pb->nret + 1;
	dtu_prefault(out->v, out->cap * sizeof(*out->v));
	if (c->want_args) {
		if ((out->args = malloc((pb->nret + 1) * sizeof(*out->args))) == NULL ||
		    (out->nargs = malloc(pb->nret + 1)) == NULL)
			goto out;
		out->acap = out->ncap = pb->nret + 1;
		dtu_prefault(out->args, out->acap * sizeof(*out->args));
	}
	if ((rc = pair_run(&w)) != 0)
		goto out;
	rc = -1;
	/* the disordered threads' pairs after those, in their returns' time
	 * order, as their walk made them */
	for (size_t x = 0; x < w.ndp; x++)
		put_span(&pa, w.npp + x, w.dp[x].ent, w.dp[x].ret);
	out->n = w.npp + w.ndp;
	if (w.nu) {
		qsort(w.u, w.nu, sizeof(*w.u), upend_cmp);
		if ((out->u = malloc(w.nu * sizeof(*out->u))) == NULL)
			goto out;
		for (size_t j = 0; j < w.nu; j++)
			out->u[j] = w.u[j].u;
		out->nu = out->ucap = w.nu;
	}
	rc = 0;
out:
	pwork_free(&w);
	return rc;
}

int
rpt_spans_build(const struct rpt_cap *c, const char *cmd, struct flt_filter *f,
		const char *glob, unsigned flags, struct rpt_spans *out,
		volatile sig_atomic_t *cancel)
{
	struct pctx pc = { .want_args = !!(flags & RPT_SPANS_ARGS),
			   .want_ret = !(flags & RPT_SPANS_NORET) };
	struct mcol_job mj = { .narr = 3, .psize = sizeof(struct pbuild), .ctx = &pc,
			       .keep = span_keep, .merge = span_merge };
	struct pbuild pb = { .mc.job = &mj };
	int syscalls_only = !!(flags & RPT_SPANS_SYSCALLS);
	char err[512];
	int ret = RPT_EXIT_ERROR, npairs = 0;
	size_t nprobes = dtcap_nprobes(c->r);
	struct { uint32_t id; int ret; int len; const char *name; } *pr = NULL;

	memset(out, 0, sizeof(*out));
	if (flt_resolve(f, c->r, err, sizeof(err))) {
		rpt_err(cmd, "%s: %s", c->path, err);
		return RPT_EXIT_ERROR;
	}
	pc.np = dtcap_max_probe_id(c->r) + 1;
	pc.entry_of = calloc(pc.np, sizeof(*pc.entry_of));
	pc.is_ret = calloc(pc.np, 1);
	pr = calloc(nprobes + 1, sizeof(*pr));
	if (!pc.entry_of || !pc.is_ret || !pr)
		goto oom;
	for (size_t i = 0; i < nprobes; i++) {
		const struct dtcap_probe *p = dtcap_probe_at(c->r, i);
		int l;
		pr[i].id = p->id;
		pr[i].name = p->name;
		if ((l = base_len(p->name, "entry")) < 0 && (l = base_len(p->name, "return")) >= 0)
			pr[i].ret = 1;
		pr[i].len = l;
	}
	/* each return finds its entry by name */
	for (size_t i = 0; i < nprobes; i++) {
		if (!pr[i].ret || pr[i].len < 0)
			continue;
		if (syscalls_only && strncmp(pr[i].name, "syscall:", 8) != 0)
			continue;
		for (size_t j = 0; j < nprobes; j++) {
			if (pr[j].ret || pr[j].len != pr[i].len ||
			    strncmp(pr[j].name, pr[i].name, (size_t)pr[i].len) != 0)
				continue;
			if (glob) {
				char base[DTCAP_PROBENAMELEN];
				snprintf(base, sizeof(base), "%.*s", pr[j].len, pr[j].name);
				if (fnmatch(glob, base, 0) != 0 && fnmatch(glob, pr[j].name, 0) != 0 &&
				    fnmatch(glob, pr[i].name, 0) != 0)
					break;
			}
			pc.entry_of[pr[i].id] = pr[j].id;
			pc.is_ret[pr[i].id] = 1;
			pc.entry_of[pr[j].id] = pr[j].id;
			npairs++;
			break;
		}
	}
	if (npairs == 0) {
		rpt_err(cmd, "%s: no %sentry and return probes%s%s%s: record both, e.g. dtrec -e "
			"'syscall:*:entry' -e 'syscall:*:return'", c->path, syscalls_only ? "syscall " : "",
			glob ? " matching '" : "", glob ? glob : "", glob ? "'" : "");
		ret = RPT_EXIT_ERROR;
		goto out;
	}
	mj.size[A_EV] = sizeof(struct pev);
	mj.size[A_ARGS] = pc.want_args ? sizeof(uint64_t[RPT_SPAN_ARGS]) : 0;
	mj.size[A_RET] = pc.want_ret ? sizeof(int64_t) : 0;
	/* appending, room for every event of the capture (model_collect.c) */
	uint64_t nev = dtcap_nevents(c->r);
	size_t wish = nev > 4096 && nev < ((uint64_t)1 << 31) ? (size_t)nev : 0;
	unsigned cols = DTCAP_COL_TS | DTCAP_COL_TID | DTCAP_COL_PID | DTCAP_COL_COMM |
			DTCAP_COL_PROBE;
	int need_args = pc.want_args || pc.want_ret;
	if (need_args)
		cols |= DTCAP_COL_ARGS;
	if (flt_active(f)) {
		mj.row = span_row;
	} else {
		mj.block = span_block;
		if (need_args)
			cols |= pc.want_args ? DTCAP_COL_ARGSLOTS :
				DTCAP_COL_ARGSLOTS | DTCAP_COL_ARGS2;
	}
	int sr = mcol_collect(c->r, f, cols, &pb.mc, wish, cancel,
			      rpt_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err));
	if (sr) {
		if (strcmp(err, "out of memory") == 0)
			goto oom;	/* said with the capture's name, as before */
		rpt_err(cmd, "%s", err);
		goto out;
	}
	sr = pair_all(&pb, &pc, out, cancel);
	if (sr == FLT_SCAN_CANCELLED) {
		rpt_err(cmd, "interrupted");
		goto out;
	}
	if (sr)
		goto oom;
	ret = 0;
	goto out;
oom:
	rpt_err(cmd, "%s: out of memory", c->path);
	ret = RPT_EXIT_ERROR;
out:
	if (ret)
		rpt_spans_free(out);
	free(pr);
	free(pc.entry_of);
	free(pc.is_ret);
	mcol_free(&pb.mc);
	return ret;
}

int
rpt_spans_unmatched(struct rpt_spans *s, const uint32_t *probe, uint32_t tid, uint32_t pid,
		    uint32_t comm, int entry)
{
	if (DT_GROW(s->u, s->ucap, s->nu, 1, 256))
		return -1;
	s->u[s->nu++] = (struct rpt_unmatched){ *probe, tid, pid, comm, (uint8_t)entry };
	return 0;
}

void
rpt_spans_free(struct rpt_spans *s)
{
	free(s->v);
	free(s->u);
	free(s->args);
	free(s->nargs);
	memset(s, 0, sizeof(*s));
}
