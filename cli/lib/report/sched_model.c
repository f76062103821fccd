/*
 * sched_model.c - the off-CPU intervals of a capture recorded with dtrec
 * --offcpu (engine.h rpt_sched_build): every sched_switch that takes a
 * thread off a CPU, paired with the switch that puts it back and the last
 * wakeup of it in between.  The scheduler events are collected on one
 * block scan, put in time order (blocks hold per-CPU batches, not a
 * global order), then replayed with a table of threads.
 *
 * The collection runs on the scan pool (model_collect.h): the list one
 * walk in block order would have made, for any --threads; the sort is
 * stable, so the replay sees the same order for any --threads.
 *
 * The replay is one walk of the time order on the calling thread, each
 * interval written as it ends.  It was split by thread over the pool's
 * threads (each part replaying the events naming its tids), but the walk
 * is bound by memory (a read through the time order's index per event),
 * not by the CPU: every part walked the whole time order and the
 * intervals had to be put in one walk's order in a second pass, so two
 * parts took longer than one walk (doc/SCALE.md has the figures).
 */
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "model_collect.h"
#include "report.h"
#include "scan_pool.h"

enum { EV_SWITCH = 1, EV_WAKEUP = 2 };

struct sev {
	uint64_t	ts;
	uint32_t	tid, pid, comm, kstack, ustack, cpu;
	uint32_t	a, b;		/* switch: prev_pid, next_pid; wakeup: woken */
	uint32_t	state;		/* switch: prev_state */
	uint32_t	kind;
	uint32_t	ctx;		/* DTCAP_CTX_*: a wakeup from an interrupt */
};

/* Where a probe's fields are (slots), by probe id. */
struct pinfo {
	uint8_t		kind;
	uint8_t		sa, sb, sst;	/* slots of prev_pid/pid, next_pid, prev_state */
};

/* The scheduler probes, read by the workers. */
struct sctx {
	struct pinfo	*pi;
	uint32_t	npi;
};

static int
slot_of(const struct dtcap_probe *p, const char *name)
{
	/* a slot past the event's arguments (a damaged or hand-made file)
	 * would read past them: not a field of this layout */
	for (uint32_t i = 0; i < p->nargs && i < DTCAP_MAXARGS; i++)
		if (strcmp(p->args[i].name, name) == 0)
			return p->args[i].slot < DTCAP_MAXARGS ? p->args[i].slot : -1;
	return -1;
}

static int
sched_keep(const void *ctx, uint32_t p)
{
	const struct sctx *c = ctx;
	return p < c->npi && c->pi[p].kind;
}

/*
 * A whole block, its arguments by slot: no row-major array filled for the
 * rows (most: system calls, samples) that are not scheduler events, which
 * was a sixth of an off-CPU graph's time.
 */
static int
sched_block(struct mcol_part *mp, const struct dtcap_block *b)
{
	const struct sctx *c = mp->job->ctx;
	size_t cur[DTCAP_MAXARGS] = { 0 };

	for (uint32_t i = 0; i < b->rows; i++) {
		uint32_t pr = b->probe[i];
		unsigned na = b->nargs[i] < DTCAP_MAXARGS ? b->nargs[i] : DTCAP_MAXARGS;
		if (pr < c->npi && c->pi[pr].kind) {
			const struct pinfo *p = &c->pi[pr];
			uint64_t args[DTCAP_MAXARGS] = { 0 };
			size_t x = mcol_add(mp);
			if (x == SIZE_MAX)
				return 1;
			for (unsigned k = 0; k < na; k++)
				args[k] = b->argslot[k][cur[k]];
			struct sev *e = &((struct sev *)mp->arr[0])[x];
			e->ts = b->ts[i];
			e->tid = b->tid[i];
			e->pid = b->pid[i];
			e->comm = b->comm[i];
			e->kstack = b->kstack[i];
			e->ustack = b->ustack[i];
			e->cpu = b->cpu[i];
			e->kind = p->kind;
			e->ctx = b->ctx ? b->ctx[i] : DTCAP_CTX_UNKNOWN;
			e->a = (uint32_t)args[p->sa];
			e->b = p->kind == EV_SWITCH ? (uint32_t)args[p->sb] : 0;
			e->state = p->kind == EV_SWITCH ? (uint32_t)args[p->sst] : 0;
		}
		for (unsigned k = 0; k < na; k++)
			cur[k]++;
	}
	return 0;
}

char
rpt_sched_state_letter(uint32_t st)
{
	static const char letters[] = "SDTtXZPI";

	/* 0, or only the preemption bit (TASK_REPORT_MAX) above them: it
	 * was still runnable, taken off the CPU */
	if ((st & 0xff) == 0)
		return 'R';
	for (unsigned k = 0; k < 8; k++)
		if (st & (1u << k))
			return letters[k];
	return '?';
}

/* A thread's pending off-CPU interval. */
struct thr {
	uint32_t	tid;
	int		out;		/* switched out, not back yet */
	uint32_t	pid, comm;	/* last known: an exiting thread's events
					 * have neither */
	struct rpt_sched_span s;
};

struct thrtab {
	struct thr	*v;
	size_t		n;
	uint32_t	cap;
	struct dt_htab	ix;
};

static uint64_t
thr_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct thrtab *)ctx)->v[e].tid);
}

static struct thr *
thr_get(struct thrtab *t, uint32_t tid)
{
	uint32_t e;
	uint64_t h = dt_htab_hash_int(tid);

	for (size_t i = dt_htab_first(&t->ix, h); (e = dt_htab_at(&t->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&t->ix, i))
		if (t->v[e].tid == tid)
			return &t->v[e];
	if (DT_GROW(t->v, t->cap, t->n, 1, 256))
		return NULL;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].tid = tid;
	if (dt_htab_add(&t->ix, h, (uint32_t)t->n, thr_rehash, t))
		return NULL;
	return &t->v[t->n++];
}

/*
 * An interval whose switch back in is not in the capture: the thread ran
 * again somewhere in (lo, hi), hi being its next switch out.  Its first
 * event of any probe in there (a syscall, a sample) ends the interval at
 * most that late, which keeps the wait for a CPU after its wakeup.
 */
struct fix {
	uint32_t	tid;
	uint64_t	lo, hi;
	size_t		span;		/* index into the spans */
};

struct fixes {
	struct fix	*v;
	size_t		n;
	uint32_t	cap;
	struct rpt_sched *s;
	int		oom;
};

static int
fix_cmp(const void *x, const void *y)
{
	const struct fix *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/*
 * A worker's part of the fixes: for each fix, the earliest time of an
 * event of its thread inside (lo, hi) in the worker's blocks.  Minima
 * merge in any order, and the earliest event is what one walk would have
 * ended the interval at.
 */
struct fixpart {
	const struct fixes *fx;		/* [I] the caller's, sorted */
	uint64_t	*first;		/* by fix: UINT64_MAX, none yet */
};

static void *
fix_part_new(void *ctx)
{
	const struct fixes *fx = ctx;
	struct fixpart *p = calloc(1, sizeof(*p));

	if (p == NULL || (p->first = malloc(fx->n * sizeof(*p->first))) == NULL) {
		free(p);
		return NULL;
	}
	p->fx = fx;
	memset(p->first, 0xff, fx->n * sizeof(*p->first));
	return p;
}

static void
fix_part_free(void *ctx, void *part)
{
	struct fixpart *p = part;

	(void)ctx;
	free(p->first);
	free(p);
}

static int
fix_row(void *part, const struct dtcap_block *b, uint32_t i, char *err, size_t errlen)
{
	struct fixpart *p = part;
	const struct fixes *fx = p->fx;
	uint32_t tid = b->tid[i];
	uint64_t ts = b->ts[i];
	size_t lo = 0, hi = fx->n;

	(void)err, (void)errlen;
	/* the last fix of tid starting before ts */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (fx->v[m].tid < tid || (fx->v[m].tid == tid && fx->v[m].lo < ts))
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == 0)
		return 0;
	const struct fix *f = &fx->v[lo - 1];
	if (f->tid != tid || ts <= f->lo || ts >= f->hi)
		return 0;
	if (ts < p->first[lo - 1])
		p->first[lo - 1] = ts;
	return 0;
}

static int
fix_merge(void *ctx, void *part)
{
	struct fixes *fx = ctx;
	const struct fixpart *p = part;

	for (size_t k = 0; k < fx->n; k++) {
		struct rpt_sched_span *s = &fx->s->v[fx->v[k].span];
		if (p->first[k] != UINT64_MAX && (s->end == fx->v[k].lo || p->first[k] < s->end))
			s->end = p->first[k];
	}
	return 0;
}

static int
fix_ends(const struct rpt_cap *c, struct rpt_sched *out, struct fixes *fx,
	 volatile sig_atomic_t *cancel, char *err, size_t errlen)
{
	struct flt_filter all;
	struct dtsp_job job = { .part_new = fix_part_new, .part_free = fix_part_free,
				.row = fix_row, .merge = fix_merge };
	int rc;

	qsort(fx->v, fx->n, sizeof(*fx->v), fix_cmp);
	fx->s = out;
	flt_init(&all);
	rc = flt_resolve(&all, c->r, err, errlen) ||
	     dtsp_scan(c->r, &all, DTCAP_COL_TS | DTCAP_COL_TID, &job, fx, cancel,
		       rpt_shell ? "dtsh: reading" : "dtreport: reading", err, errlen);
	flt_free(&all);
	return rc;
}

/* ---- the replay, one walk */

/* The replay's threads and what it made. */
struct rwork {
	const struct sev *ev;		/* [I] */
	const struct rpt_key *ord;	/* [I] the time order */
	size_t		n;		/* [I] */
	uint64_t	tmax;		/* [I] */
	volatile sig_atomic_t *cancel;	/* [I] */
	struct rpt_sched *out;
	struct fixes	*fx;		/* .span: its index in out */
	struct thrtab	tt;
};

/* Interval s ended; fix: its end is to be looked for (lo, hi). */
static int
emit(struct rwork *w, const struct rpt_sched_span *s, const struct fix *fix)
{
	struct rpt_sched *out = w->out;
	struct fixes *fx = w->fx;

	if (DT_GROW(out->v, out->cap, out->n, 1, 4096))
		return -1;
	out->v[out->n++] = *s;
	if (fix) {
		if (DT_GROW(fx->v, fx->cap, fx->n, 1, 64))
			return -1;
		fx->v[fx->n] = *fix;
		fx->v[fx->n++].span = out->n - 1;
	}
	return 0;
}

/*
 * Replay w's events, in their time order, into out and fx (the intervals
 * whose end is to be looked for).  0, -1 out of memory,
 * FLT_SCAN_CANCELLED.
 */
static int
replay_run(struct rwork *w)
{
	const struct rwork *ra = w;

	for (size_t x = 0; x < ra->n; x++) {
		const struct sev *e = &ra->ev[ra->ord[x].i];
		struct thr *t;
		if ((x & 0xffff) == 0 && ra->cancel && *ra->cancel)
			return FLT_SCAN_CANCELLED;
		if (e->kind == EV_WAKEUP) {
			/* the last wakeup before it runs is the one that counts */
			if (e->a == 0)
				continue;
			if ((t = thr_get(&w->tt, e->a)) == NULL)
				return -1;
			if (t->out && !t->s.wake) {
				t->s.wake = e->ts;
				t->s.wtid = e->tid;
				t->s.wpid = e->pid;
				t->s.wcomm = e->comm;
				t->s.wkstack = e->kstack;
				t->s.wustack = e->ustack;
				t->s.wctx = (uint8_t)e->ctx;
			}
			continue;
		}
		/* the one switched to: its interval ends */
		if (e->b != 0) {
			if ((t = thr_get(&w->tt, e->b)) == NULL)
				return -1;
			if (t->out) {
				t->s.end = e->ts;
				if (emit(w, &t->s, NULL))
					return -1;
				t->out = 0;
			}
		}
		/*
		 * The one switched out (idle, pid 0, is never off-CPU).  A
		 * switch without stacks is one a recording of some processes
		 * kept only for the task switched to (dtrec --offcpu always
		 * takes a kernel stack): it says nothing about the other one.
		 */
		if (e->a != 0 && (e->kstack || e->ustack)) {
			char st = rpt_sched_state_letter(e->state);
			if ((t = thr_get(&w->tt, e->a)) == NULL)
				return -1;
			if (t->out) {
				/*
				 * Out again without being switched in: the switch in
				 * is not in the capture (dropped, or never delivered
				 * by the kernel).  It ran after its wakeup, so the
				 * blocked part ends there; without a wakeup the
				 * interval's end is unknown and it is left out.
				 * Either way it is counted.
				 */
				w->out->nlost++;
				if (t->s.wake || t->s.state == 'R') {
					/* it ran again after lo and before e->ts:
					 * its first event in between ends it
					 * (fix_ends); until then, its wakeup */
					uint64_t lo = t->s.wake ? t->s.wake : t->s.start;
					struct fix f = { t->s.tid, lo, e->ts, 0 };
					t->s.end = lo;
					if (emit(w, &t->s, &f))
						return -1;
				}
				t->out = 0;
			}
			if (st == 'X' || st == 'Z')
				continue;	/* its last switch: it exited */
			t->out = 1;
			memset(&t->s, 0, sizeof(t->s));
			t->s.tid = e->a;
			if (e->pid && e->a == e->tid) {
				t->pid = e->pid;
				t->comm = e->comm;
			}
			t->s.pid = t->pid;
			t->s.comm = e->comm ? e->comm : t->comm;
			t->s.cpu = e->cpu;
			t->s.start = e->ts;
			t->s.state = st;
			t->s.kstack = e->kstack;
			t->s.ustack = e->ustack;
		}
	}
	/* still off-CPU at the end: counted up to the last event, marked,
	 * after those, by where the walk met their thread first */
	for (size_t j = 0; j < w->tt.n; j++) {
		struct thr *t = &w->tt.v[j];
		if (!t->out)
			continue;
		t->s.end = ra->tmax;
		t->s.open = 1;
		if (emit(w, &t->s, NULL))
			return -1;
	}
	return 0;
}

int
rpt_sched_build(const struct rpt_cap *c, const char *cmd, struct rpt_sched *out,
		volatile sig_atomic_t *cancel)
{
	struct sctx sc = { 0 };
	struct mcol_job mj = { .narr = 1, .size = { sizeof(struct sev) },
			       .psize = sizeof(struct mcol_part), .ctx = &sc,
			       .keep = sched_keep, .block = sched_block };
	struct mcol_part bd = { .job = &mj };
	struct rpt_key *ord = NULL;
	struct fixes fx = { 0 };
	struct flt_filter all;
	char err[512];
	int ret = RPT_EXIT_ERROR, have_switch = 0;

	memset(out, 0, sizeof(*out));
	flt_init(&all);
	sc.npi = dtcap_max_probe_id(c->r) + 1;
	if ((sc.pi = calloc(sc.npi, sizeof(*sc.pi))) == NULL)
		goto oom;
	/*
	 * sched_waking fires in the waker; sched_wakeup, for a wakeup the
	 * kernel queues to the woken thread's idle CPU, fires there in the
	 * idle task.  Where a capture has both, the waking names the waker
	 * and the wakeup would only repeat it with the idle task's name.
	 */
	int have_waking = 0;
	for (size_t i = 0; i < dtcap_nprobes(c->r); i++)
		if (strcmp(dtcap_probe_at(c->r, i)->name, "tracepoint:sched:sched_waking") == 0)
			have_waking = 1;
	for (size_t i = 0; i < dtcap_nprobes(c->r); i++) {
		const struct dtcap_probe *p = dtcap_probe_at(c->r, i);
		struct pinfo *x = &sc.pi[p->id];
		int a, b, st;
		if (strcmp(p->name, "tracepoint:sched:sched_switch") == 0) {
			a = slot_of(p, "prev_pid");
			b = slot_of(p, "next_pid");
			st = slot_of(p, "prev_state");
			if (a < 0 || b < 0 || st < 0)
				continue;
			*x = (struct pinfo){ EV_SWITCH, (uint8_t)a, (uint8_t)b, (uint8_t)st };
			have_switch = 1;
			out->switch_probe = p->id;
		} else if ((strcmp(p->name, "tracepoint:sched:sched_wakeup") == 0 && !have_waking) ||
			   strcmp(p->name, "tracepoint:sched:sched_waking") == 0 ||
			   strcmp(p->name, "tracepoint:sched:sched_wakeup_new") == 0) {
			if ((a = slot_of(p, "pid")) < 0)
				continue;
			*x = (struct pinfo){ EV_WAKEUP, (uint8_t)a, 0, 0 };
		}
	}
	if (!have_switch) {
		rpt_err(cmd, "%s: no tracepoint:sched:sched_switch events with prev_pid, "
			"prev_state and next_pid: record with dtrec --offcpu", c->path);
		goto out;
	}
	unsigned scols = DTCAP_COL_TS | DTCAP_COL_TID | DTCAP_COL_PID | DTCAP_COL_COMM |
			 DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_CPU | DTCAP_COL_PROBE |
			 DTCAP_COL_ARGS | DTCAP_COL_ARGSLOTS | DTCAP_COL_CTX;
	int sr = flt_resolve(&all, c->r, err, sizeof(err));
	if (sr == 0)
		sr = mcol_collect(c->r, &all, scols, &bd, 0, cancel,
				  rpt_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err));
	if (sr) {
		if (strcmp(err, "out of memory") == 0)
			goto oom;	/* said with the capture's name, as before */
		rpt_err(cmd, "%s", err);
		goto out;
	}
	const struct sev *ev = bd.arr[0];
	size_t n = bd.n;
	/* in time order (a CPU's events keep their order among equal times) */
	if ((ord = malloc((n + 1) * sizeof(*ord))) == NULL)
		goto oom;
	for (size_t i = 0; i < n; i++)
		ord[i] = (struct rpt_key){ ev[i].ts, i };
	if (rpt_key_sort(ord, n))
		goto oom;
	if (n) {
		out->tmin = ord[0].k;
		out->tmax = ord[n - 1].k;
	}
	struct rwork rw = { .ev = ev, .ord = ord, .n = n, .tmax = out->tmax, .cancel = cancel,
			    .out = out, .fx = &fx };
	sr = replay_run(&rw);
	free(rw.tt.v);
	dt_htab_free(&rw.tt.ix);
	if (sr == FLT_SCAN_CANCELLED) {
		rpt_err(cmd, "interrupted");
		goto out;
	}
	if (sr)
		goto oom;
	if (fx.n && fix_ends(c, out, &fx, cancel, err, sizeof(err))) {
		rpt_err(cmd, "%s", err);
		goto out;
	}
	out->nevents = n;
	ret = 0;
	goto out;
oom:
	rpt_err(cmd, "%s: out of memory", c->path);
out:
	if (ret)
		rpt_sched_free(out);
	free(sc.pi);
	mcol_free(&bd);
	free(ord);
	free(fx.v);
	flt_free(&all);
	return ret;
}

void
rpt_sched_free(struct rpt_sched *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
