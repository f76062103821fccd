/*
 * report_blame.c - where one thread's time went, and why (engine.h
 * rpt_blame): its time in a window split into on-CPU, waiting for a CPU
 * (runqueue) and blocked; each blocked stretch attributed to the task
 * that woke it (tid, comm, the stack it woke it from), and that waker's
 * own time during the stretch attributed the same way, hop after hop, to
 * --depth.  On-CPU time is spread over the thread's profile samples in
 * it, when the capture has some.  The result is a tree of times: text
 * (a stack shown as its innermost frames), folded stacks or a flame graph.
 *
 * A wakeup run from an interrupt (a timer, a device) ends the chain: the
 * task it interrupted had no part in it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "engine.h"
#include "report.h"
#include "scan_pool.h"

#define TEXT_FRAMES	4	/* a stack in the text tree: its innermost frames */
#define MAXSEG		(4 * 16 + 8)

struct samp {
	uint64_t	ts;
	uint32_t	tid, pid, comm, kstack, ustack;
};

/* a piece of a path: a label, or a stack to name */
struct seg {
	const char	*label;		/* NULL: a stack */
	uint32_t	kstack, ustack, pid;
	uint64_t	ts;
};

/* the text tree (one node per label or stack) */
struct tnode {
	uint32_t	name;		/* flame name id */
	uint32_t	child, sib;	/* 0: none (node 0 is the root) */
	uint64_t	ns;
};

struct blame {
	const struct rpt_cap *c;
	const struct rpt_blame_opts *o;
	struct rpt_sched sc;
	size_t		*byt;		/* indices into sc.v by (tid, start) */
	struct samp	*smp;		/* profile samples by (tid, ts) */
	size_t		nsmp, smpcap;
	struct flame	*fl;
	struct rpt_namer *nm;
	uint32_t	*buf;		/* a path's frame ids */
	struct tnode	*t;
	size_t		nt;
	uint32_t	tcap;
	uint64_t	total;
	int		oom;
};

static int
by_tid_start(const void *x, const void *y, void *ctx)
{
	const struct rpt_sched_span *v = ctx, *a = &v[*(const size_t *)x], *b = &v[*(const size_t *)y];
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int
samp_cmp(const void *x, const void *y)
{
	const struct samp *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/*
 * The profile samples, collected on the scan pool: each worker keeps those
 * of its run of blocks, appended in block order (the list one walk makes,
 * sorted below the same way for any --threads).
 */
struct samppart {
	const struct dtcap_reader *r;	/* [I] */
	struct samp	*smp;
	size_t		n, cap;
};

static void *
samp_part_new(void *ctx)
{
	const struct blame *bl = ctx;
	struct samppart *p = calloc(1, sizeof(*p));

	if (p)
		p->r = bl->c->r;
	return p;
}

static void
samp_part_free(void *ctx, void *part)
{
	struct samppart *p = part;

	(void)ctx;
	free(p->smp);
	free(p);
}

static int
samp_row(void *part, const struct dtcap_block *b, uint32_t i, char *err, size_t errlen)
{
	struct samppart *sp = part;
	const struct dtcap_probe *p = dtcap_probe_by_id(sp->r, b->probe[i]);

	if (p == NULL || !(p->flags & DT_PF_TIMER))
		return 0;
	if (DT_GROW(sp->smp, sp->cap, sp->n, 1, 4096)) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	sp->smp[sp->n++] = (struct samp){ b->ts[i], b->tid[i], b->pid[i], b->comm[i],
					  b->kstack[i], b->ustack[i] };
	return 0;
}

static int
samp_merge(void *ctx, void *part)
{
	struct blame *bl = ctx;
	struct samppart *p = part;

	if (p->n == 0)
		return 0;
	if (bl->nsmp == 0) {
		struct samp *v = bl->smp;
		size_t cap = bl->smpcap;
		bl->smp = p->smp, bl->smpcap = p->cap, bl->nsmp = p->n;
		p->smp = v, p->cap = cap, p->n = 0;
		return 0;
	}
	if (DT_GROW(bl->smp, bl->smpcap, bl->nsmp, p->n, 4096))
		return -1;
	memcpy(bl->smp + bl->nsmp, p->smp, p->n * sizeof(*p->smp));
	bl->nsmp += p->n;
	return 0;
}

static int64_t
intern(struct blame *bl, const char *s)
{
	return flame_intern(bl->fl, s, FLAME_SPECIAL);
}

static int
tree_add(struct blame *bl, const uint32_t *ids, unsigned n, uint64_t ns)
{
	uint32_t at = 0;

	if (bl->nt == 0) {
		if (DT_GROW(bl->t, bl->tcap, bl->nt, 1, 256))
			return -1;
		bl->t[bl->nt++] = (struct tnode){ 0, 0, 0, 0 };
	}
	bl->t[0].ns += ns;
	for (unsigned k = 0; k < n; k++) {
		uint32_t c = bl->t[at].child;
		while (c && bl->t[c].name != ids[k])
			c = bl->t[c].sib;
		if (!c) {
			if (DT_GROW(bl->t, bl->tcap, bl->nt, 1, 256))
				return -1;
			c = (uint32_t)bl->nt++;
			bl->t[c] = (struct tnode){ ids[k], 0, bl->t[at].child, 0 };
			bl->t[at].child = c;
		}
		bl->t[c].ns += ns;
		at = c;
	}
	return 0;
}

/* One path of segments, weighing ns. */
static int
emit(struct blame *bl, const struct seg *sg, unsigned n, uint64_t ns)
{
	unsigned nb = 0;

	if (ns == 0)
		return 0;
	bl->total += ns;
	for (unsigned k = 0; k < n; k++) {
		int64_t id;
		if (sg[k].label) {
			if ((id = intern(bl, sg[k].label)) < 0)
				return -1;
			bl->buf[nb++] = (uint32_t)id;
			continue;
		}
		if (bl->o->text) {
			/* one node: "a <- b <- c", user stack after the kernel's */
			char t[1024], u[512];
			t[0] = u[0] = '\0';
			if (sg[k].kstack)
				rpt_namer_text(bl->nm, sg[k].kstack, 1, 0, 0, TEXT_FRAMES, t, sizeof(t));
			if (sg[k].ustack)
				rpt_namer_text(bl->nm, sg[k].ustack, 0, sg[k].pid, sg[k].ts, TEXT_FRAMES,
					       u, sizeof(u));
			char line[1600];
			snprintf(line, sizeof(line), "%s%s%s%s", t[0] ? t : "", t[0] && u[0] ? " | " : "",
				 u, !t[0] && !u[0] ? "(no stack)" : "");
			if ((id = intern(bl, line)) < 0)
				return -1;
			bl->buf[nb++] = (uint32_t)id;
			continue;
		}
		/* folded and SVG: user stack, then kernel, as flame graphs do */
		if (sg[k].ustack && rpt_namer_stack(bl->nm, sg[k].ustack, 0, sg[k].pid, sg[k].ts,
						    bl->buf, &nb))
			return -1;
		if (sg[k].kstack && rpt_namer_stack(bl->nm, sg[k].kstack, 1, 0, 0, bl->buf, &nb))
			return -1;
	}
	if (bl->o->text)
		return tree_add(bl, bl->buf, nb, ns);
	return flame_add(bl->fl, bl->buf, nb, (ns + 500) / 1000, 0);
}

/* The first of tid's spans (in byt) that ends after lo. */
static size_t
first_span(const struct blame *bl, uint32_t tid, uint64_t lo)
{
	size_t a = 0, b = bl->sc.n;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		const struct rpt_sched_span *s = &bl->sc.v[bl->byt[m]];
		if (s->tid < tid || (s->tid == tid && s->end <= lo))
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static const char *
state_label(char st)
{
	switch (st) {
	case 'S': return "blocked (S, sleeping)";
	case 'D': return "blocked (D, uninterruptible)";
	case 'I': return "blocked (I, idle kernel thread)";
	default: return "blocked (other state)";
	}
}

static int attribute(struct blame *bl, uint32_t tid, uint64_t lo, uint64_t hi, unsigned depth,
		     struct seg *sg, unsigned n);

static int
blocked_part(struct blame *bl, const struct rpt_sched_span *s, uint64_t lo, uint64_t hi,
	     unsigned depth, struct seg *sg, unsigned n)
{
	char who[96];

	if (n + 4 > MAXSEG)
		return emit(bl, sg, n, hi - lo);
	sg[n++] = (struct seg){ .label = state_label(s->state) };
	sg[n++] = (struct seg){ NULL, s->kstack, s->ustack, s->pid, s->start };
	if (!s->wake) {
		sg[n++] = (struct seg){ .label = "(no wakeup recorded)" };
		return emit(bl, sg, n, hi - lo);
	}
	if (s->wctx == DTCAP_CTX_HARDIRQ || s->wctx == DTCAP_CTX_SOFTIRQ ||
	    s->wctx == DTCAP_CTX_NMI) {
		sg[n++] = (struct seg){ .label = s->wctx == DTCAP_CTX_SOFTIRQ ?
				       "woken from a softirq" : "woken from an interrupt" };
		sg[n++] = (struct seg){ NULL, s->wkstack, 0, 0, s->wake };
		return emit(bl, sg, n, hi - lo);
	}
	const char *wc = dtcap_comm(bl->c->r, s->wcomm);
	snprintf(who, sizeof(who), "woken by %s tid %u", wc && *wc ? wc : "?", s->wtid);
	int64_t id = intern(bl, who);	/* the label must outlive this frame */
	if (id < 0)
		return -1;
	sg[n++] = (struct seg){ .label = flame_name(bl->fl, (uint32_t)id, NULL) };
	sg[n++] = (struct seg){ NULL, s->wkstack, s->wustack, s->wpid, s->wake };
	if (depth == 0 || s->wtid == 0 || s->wtid == s->tid)
		return emit(bl, sg, n, hi - lo);
	sg[n++] = (struct seg){ .label = "meanwhile it was" };
	return attribute(bl, s->wtid, lo, hi, depth - 1, sg, n);
}

/* tid's time in [lo, hi) under the path sg[0..n) */
static int
attribute(struct blame *bl, uint32_t tid, uint64_t lo, uint64_t hi, unsigned depth,
	  struct seg *sg, unsigned n)
{
	uint64_t off = 0;

	if (hi <= lo)
		return 0;
	for (size_t k = first_span(bl, tid, lo); k < bl->sc.n; k++) {
		const struct rpt_sched_span *s = &bl->sc.v[bl->byt[k]];
		if (s->tid != tid || s->start >= hi)
			break;
		uint64_t cs = s->start > lo ? s->start : lo, ce = s->end < hi ? s->end : hi;
		if (ce <= cs)
			continue;
		off += ce - cs;
		if (n + 2 > MAXSEG)
			continue;
		if (s->state == 'R') {
			sg[n] = (struct seg){ .label = "runqueue (preempted)" };
			sg[n + 1] = (struct seg){ NULL, s->kstack, s->ustack, s->pid, s->start };
			if (emit(bl, sg, n + 2, ce - cs))
				return -1;
			continue;
		}
		uint64_t w = !s->wake ? ce : s->wake < cs ? cs : s->wake > ce ? ce : s->wake;
		if (blocked_part(bl, s, cs, w, depth, sg, n))
			return -1;
		if (ce > w) {
			sg[n] = (struct seg){ .label = "runqueue (woken, waiting for a CPU)" };
			sg[n + 1] = (struct seg){ NULL, s->kstack, s->ustack, s->pid, s->start };
			if (emit(bl, sg, n + 2, ce - w))
				return -1;
		}
	}
	uint64_t on = hi - lo > off ? hi - lo - off : 0;
	if (on == 0 || n + 2 > MAXSEG)
		return 0;
	/* its profile samples in the window share its on-CPU time */
	size_t a = 0, b = bl->nsmp;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (bl->smp[m].tid < tid || (bl->smp[m].tid == tid && bl->smp[m].ts < lo))
			a = m + 1;
		else
			b = m;
	}
	size_t e = a;
	while (e < bl->nsmp && bl->smp[e].tid == tid && bl->smp[e].ts < hi)
		e++;
	sg[n] = (struct seg){ .label = "on-CPU" };
	if (e == a)
		return emit(bl, sg, n + 1, on);
	uint64_t each = on / (e - a), rest = on - each * (e - a);
	for (size_t k = a; k < e; k++) {
		const struct samp *p = &bl->smp[k];
		sg[n + 1] = (struct seg){ NULL, p->kstack, p->ustack, p->pid, p->ts };
		if (emit(bl, sg, n + 2, each + (k == a ? rest : 0)))
			return -1;
	}
	return 0;
}

static void
tree_print(const struct blame *bl, uint32_t node, unsigned indent, uint64_t total, FILE *out)
{
	uint32_t kids[4096];
	size_t nk = 0;

	for (uint32_t c = bl->t[node].child; c && nk < 4096; c = bl->t[c].sib)
		kids[nk++] = c;
	/* heaviest first (insertion sort: siblings are few) */
	for (size_t i = 1; i < nk; i++)
		for (size_t j = i; j > 0 && bl->t[kids[j]].ns > bl->t[kids[j - 1]].ns; j--) {
			uint32_t x = kids[j];
			kids[j] = kids[j - 1];
			kids[j - 1] = x;
		}
	size_t hidden = 0;
	for (size_t i = 0; i < nk; i++) {
		const struct tnode *t = &bl->t[kids[i]];
		if (total && t->ns * 1000 < total * 5) {	/* under 0.5% */
			hidden++;
			continue;
		}
		fprintf(out, "%*s%6.1f%% %10.3f ms  %s\n", (int)indent, "",
			total ? 100.0 * (double)t->ns / (double)total : 0.0, (double)t->ns / 1e6,
			flame_name(bl->fl, t->name, NULL));
		tree_print(bl, kids[i], indent + 2, total, out);
	}
	if (hidden)
		fprintf(out, "%*s(%zu more under 0.5%%)\n", (int)indent, "", hidden);
}

int
rpt_blame(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_blame_opts *o,
	  FILE *out, const char *outname, volatile sig_atomic_t *cancel)
{
	struct blame bl = { .c = c, .o = o };
	struct seg sg[MAXSEG];
	char err[512];
	int ret;

	if (flt_resolve(f, c->r, err, sizeof(err))) {
		rpt_err("blame", "%s: %s", c->path, err);
		return RPT_EXIT_ERROR;
	}
	if ((ret = rpt_sched_build(c, "blame", &bl.sc, cancel)) != 0)
		return ret;
	ret = RPT_EXIT_ERROR;
	if (!(bl.byt = malloc((bl.sc.n + 1) * sizeof(*bl.byt))) || !(bl.fl = flame_new()) ||
	    !(bl.nm = rpt_namer_new(c, bl.fl)) ||
	    !(bl.buf = malloc((size_t)MAXSEG * (2 * DTCAP_MAXFRAMES + RPT_INLINE_ROOM + 2) *
				    sizeof(*bl.buf))))
		goto oom;
	for (size_t i = 0; i < bl.sc.n; i++)
		bl.byt[i] = i;
	qsort_r(bl.byt, bl.sc.n, sizeof(*bl.byt), by_tid_start, bl.sc.v);
	struct flt_filter all;
	struct dtsp_job job = { .part_new = samp_part_new, .part_free = samp_part_free,
				.row = samp_row, .merge = samp_merge };
	flt_init(&all);
	if (flt_resolve(&all, c->r, err, sizeof(err)) ||
	    dtsp_scan(c->r, &all, DTCAP_COL_TS | DTCAP_COL_TID | DTCAP_COL_PID | DTCAP_COL_COMM |
		      DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_PROBE, &job, &bl, cancel,
		      rpt_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err))) {
		flt_free(&all);
		if (strcmp(err, "out of memory") == 0)
			goto oom;
		rpt_err("blame", "%s", err);
		goto out;
	}
	flt_free(&all);
	if (bl.nsmp)	/* none: no array (qsort of NULL is undefined) */
		qsort(bl.smp, bl.nsmp, sizeof(*bl.smp), samp_cmp);

	/* the window: --since/--until within the thread's recorded life */
	uint64_t first = UINT64_MAX, last = 0;
	uint32_t comm = 0;
	for (size_t k = first_span(&bl, o->tid, 0); k < bl.sc.n; k++) {
		const struct rpt_sched_span *s = &bl.sc.v[bl.byt[k]];
		if (s->tid != o->tid)
			break;
		first = s->start < first ? s->start : first;
		last = s->end > last ? s->end : last;
		comm = s->comm;
	}
	if (first == UINT64_MAX) {
		rpt_err("blame", "%s: tid %u never left a CPU in the capture's scheduler events "
			"(dtrec --offcpu records them)", c->path, o->tid);
		goto out;
	}
	uint64_t lo = first > f->tmin ? first : f->tmin, hi = last < f->tmax ? last : f->tmax;
	if (hi <= lo) {
		rpt_err("blame", "%s: tid %u was not recorded between --since and --until",
			c->path, o->tid);
		goto out;
	}
	const char *cn = dtcap_comm(c->r, comm);
	char root[96];
	snprintf(root, sizeof(root), "%s tid %u", cn && *cn ? cn : "?", o->tid);
	int64_t rid = intern(&bl, root);
	if (rid < 0)
		goto oom;
	sg[0] = (struct seg){ .label = flame_name(bl.fl, (uint32_t)rid, NULL) };
	if (attribute(&bl, o->tid, lo, hi, o->depth, sg, 1))
		goto oom;
	if (cancel && *cancel) {
		rpt_err("blame", "interrupted");
		goto out;
	}
	if (bl.sc.nlost)
		rpt_err("blame", "%s: note: %" PRIu64 " off-CPU intervals have no switch back in "
			"in the capture: they end at the thread's next event", c->path, bl.sc.nlost);
	uint64_t start = dtcap_host(c->r)->start_ns;
	if (o->text) {
		fprintf(out, "tid %u (%s): %.3f ms from +%.6fs to +%.6fs, %u hops of wakers%s\n",
			o->tid, cn && *cn ? cn : "?", (double)(hi - lo) / 1e6,
			(double)(lo - start) / 1e9, (double)(hi - start) / 1e9, o->depth,
			bl.nsmp ? "" : "; no profile samples: on-CPU time has no stacks");
		if (bl.nt)
			tree_print(&bl, 1, 2, bl.t[1].ns, out);
		ret = ferror(out) ? RPT_EXIT_ERROR : 0;
		if (ret)
			rpt_err("blame", "%s: write error", outname);
		goto out;
	}
	struct rpt_flame_opts fo;
	char sub[300];
	rpt_flame_opts_init(&fo, "blame");
	fo.folded = o->folded;
	fo.countname = "us";
	fo.title = "Blame";
	snprintf(sub, sizeof(sub), "%s: tid %u (%s), %.3f ms: on-CPU, runqueue, blocked by waker "
		 "(%u hops)", c->path, o->tid, cn && *cn ? cn : "?", (double)(hi - lo) / 1e6,
		 o->depth);
	if (rpt_flame_write(bl.fl, &fo, sub, 0, out)) {
		rpt_err("blame", "%s: write error", outname);
		goto out;
	}
	ret = 0;
	goto out;
oom:
	rpt_err("blame", "%s: out of memory", c->path);
	ret = RPT_EXIT_ERROR;
out:
	rpt_sched_free(&bl.sc);
	free(bl.byt);
	free(bl.smp);
	free(bl.buf);
	free(bl.t);
	rpt_namer_free(bl.nm);
	flame_free(bl.fl);
	return ret;
}
