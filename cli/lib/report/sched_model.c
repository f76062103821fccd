/*
 * sched_model.c - the off-CPU intervals of a capture recorded with dtrec
 * --offcpu (engine.h rpt_sched_build): every sched_switch that takes a
 * thread off a CPU, paired with the switch that puts it back and the last
 * wakeup of it in between.  The scheduler events are collected on one
 * block scan, put in time order (blocks hold per-CPU batches, not a
 * global order), then replayed once with a table of threads.
 *
 * The scan runs on the scan pool (scan_pool.h): each worker collects the
 * scheduler events of its run of blocks, placed where the block summaries
 * put them or appended in block order, the list one walk would have made; the sort is stable, so
 * the replay sees the same order for any --threads.  The replay itself
 * stays on one thread: a thread's interval waits for another's switch (its
 * wakeup and switch in are other threads' events), so it does not split.
 */
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
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

struct build {
	struct dtcap_reader *r;
	struct pinfo	*pi;
	uint32_t	npi;
	struct sev	*ev;
	size_t		n, cap;
	int		oom;
	/*
	 * Placed (span_model.c's way): block blk's events go to place[blk] ..
	 * place[blk + 1] of the caller's array, counted from the block
	 * summaries; lim the current block's end (0: not placed).
	 */
	const size_t	*place;		/* [I] by block, nblocks + 1 */
	size_t		lim;
	int		misplaced;	/* a block held another count than its summary */
};

#define MISPLACED	"block summary disagrees with its block"

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

/* Row i of b, a scheduler event of kind p->kind, its arguments args. */
static int
sched_add(struct build *bd, const struct pinfo *p, const struct dtcap_block *b, uint32_t i,
	  const uint64_t *args)
{
	if (bd->place) {
		if (bd->n >= bd->lim) {
			bd->misplaced = 1;
			return 1;
		}
	} else if (DT_GROW(bd->ev, bd->cap, bd->n, 1, 4096)) {
		bd->oom = 1;
		return 1;
	}
	struct sev *e = &bd->ev[bd->n++];
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
	return 0;
}

/*
 * A whole block, its arguments by slot: no row-major array filled for the
 * rows (most: system calls, samples) that are not scheduler events, which
 * was a sixth of an off-CPU graph's time.
 */
static int
sched_block(void *ctx, const struct dtcap_block *b, size_t blk)
{
	struct build *bd = ctx;
	size_t cur[DTCAP_MAXARGS] = { 0 };

	if (bd->place) {
		bd->n = bd->place[blk];
		bd->lim = bd->place[blk + 1];
	}
	for (uint32_t i = 0; i < b->rows; i++) {
		uint32_t pr = b->probe[i];
		unsigned na = b->nargs[i] < DTCAP_MAXARGS ? b->nargs[i] : DTCAP_MAXARGS;
		if (pr < bd->npi && bd->pi[pr].kind) {
			uint64_t args[DTCAP_MAXARGS] = { 0 };
			for (unsigned k = 0; k < na; k++)
				args[k] = b->argslot[k][cur[k]];
			if (sched_add(bd, &bd->pi[pr], b, i, args))
				return 1;
		}
		for (unsigned k = 0; k < na; k++)
			cur[k]++;
	}
	if (bd->place && bd->n != bd->lim) {
		bd->misplaced = 1;
		return 1;
	}
	return 0;
}

/*
 * A worker's collection: a build of its own sharing the caller's probe
 * table (read only).  The merge appends in block order; the first
 * non-empty partial's array is taken over, so one thread copies nothing.
 */
static void *
sched_part_new(void *ctx)
{
	const struct build *m = ctx;
	struct build *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->r = m->r;
	p->pi = m->pi;
	p->npi = m->npi;
	if (m->place) {
		/* the caller's array, each worker in its blocks' places */
		p->place = m->place;
		p->ev = m->ev;
	}
	return p;
}

static void
sched_part_free(void *ctx, void *part)
{
	struct build *p = part;

	(void)ctx;
	if (!p->place)
		free(p->ev);
	free(p);
}

static int
sched_part_block(void *part, const struct dtcap_block *b, size_t blk, char *err, size_t errlen)
{
	if (sched_block(part, b, blk) == 0)
		return 0;
	snprintf(err, errlen, "%s", ((struct build *)part)->misplaced ? MISPLACED : "out of memory");
	return 1;
}

/*
 * Placing: each block's scheduler events counted from its summary, the
 * array allocated once for them all.  0 with bd placed; -1 when a block
 * has no summary (older captures) or the memory cannot be had: then the
 * workers append.
 */
static int
sched_place(const struct dtcap_reader *r, struct build *bd)
{
	size_t nb = dtcap_nblocks(r), *pl = malloc((nb + 1) * sizeof(*pl));
	struct dtcap_blocksum bs;

	if (pl == NULL)
		return -1;
	pl[0] = 0;
	for (size_t i = 0; i < nb; i++) {
		size_t k = 0;
		if (dtcap_block_info(r, i)) {
			if (dtcap_block_summary(r, i, &bs) != 1) {
				free(pl);
				return -1;
			}
			/* the reader checked these add up to the block's rows */
			for (uint32_t j = 0; j < bs.nprobe; j++)
				if (bs.probe[2 * j] < bd->npi && bd->pi[bs.probe[2 * j]].kind)
					k += (size_t)bs.probe[2 * j + 1];
		}
		pl[i + 1] = pl[i] + k;
	}
	if ((bd->ev = malloc((pl[nb] ? pl[nb] : 1) * sizeof(*bd->ev))) == NULL) {
		free(pl);
		return -1;
	}
	bd->cap = pl[nb];
	bd->place = pl;
	return 0;
}

static int
sched_merge(void *ctx, void *part)
{
	struct build *m = ctx, *p = part;

	if (m->place || p->n == 0)
		return 0;	/* placed: its events are in place already */
	if (m->n == 0) {
		struct sev *ev = m->ev;
		size_t cap = m->cap;
		m->ev = p->ev, m->cap = p->cap, m->n = p->n;
		p->ev = ev, p->cap = cap, p->n = 0;
		return 0;
	}
	if (DT_GROW(m->ev, m->cap, m->n, p->n, 4096))
		return -1;
	memcpy(m->ev + m->n, p->ev, p->n * sizeof(*p->ev));
	m->n += p->n;
	/* freed now: the peak is the list and one run, not every run */
	free(p->ev);
	p->ev = NULL;
	p->n = 0;
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

int
rpt_sched_build(const struct rpt_cap *c, const char *cmd, struct rpt_sched *out,
		volatile sig_atomic_t *cancel)
{
	struct build bd = { .r = c->r };
	struct thrtab tt = { 0 };
	struct rpt_key *ord = NULL;
	struct fixes fx = { 0 };
	struct flt_filter all;
	char err[512];
	int ret = RPT_EXIT_ERROR, have_switch = 0;

	memset(out, 0, sizeof(*out));
	flt_init(&all);
	bd.npi = dtcap_max_probe_id(c->r) + 1;
	if ((bd.pi = calloc(bd.npi, sizeof(*bd.pi))) == NULL)
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
		struct pinfo *x = &bd.pi[p->id];
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
	struct dtsp_job job = { .part_new = sched_part_new, .part_free = sched_part_free,
				.block = sched_part_block, .merge = sched_merge };
	unsigned scols = DTCAP_COL_TS | DTCAP_COL_TID | DTCAP_COL_PID | DTCAP_COL_COMM |
			 DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_CPU | DTCAP_COL_PROBE |
			 DTCAP_COL_ARGS | DTCAP_COL_ARGSLOTS | DTCAP_COL_CTX;
	const char *what = rpt_shell ? "dtsh: reading" : "dtreport: reading";
	int sr = flt_resolve(&all, c->r, err, sizeof(err));
	if (sr == 0 && sched_place(c->r, &bd) == 0) {
		sr = dtsp_scan(c->r, &all, scols, &job, &bd, cancel, what, err, sizeof(err));
		if (sr == 0) {
			bd.n = bd.cap;
		} else if (strcmp(err, MISPLACED) == 0) {
			/* a summary that adds up but is not this block's counts
			 * (a hand-made or damaged file): appended instead */
			free(bd.ev);
			free((size_t *)bd.place);
			bd.ev = NULL, bd.place = NULL, bd.n = bd.cap = 0;
			sr = dtsp_scan(c->r, &all, scols, &job, &bd, cancel, what, err, sizeof(err));
		}
	} else if (sr == 0) {
		sr = dtsp_scan(c->r, &all, scols, &job, &bd, cancel, what, err, sizeof(err));
	}
	if (sr) {
		if (strcmp(err, "out of memory") == 0)
			goto oom;	/* said with the capture's name, as before */
		rpt_err(cmd, "%s", err);
		goto out;
	}
	/* in time order (a CPU's events keep their order among equal times) */
	if ((ord = malloc((bd.n + 1) * sizeof(*ord))) == NULL)
		goto oom;
	for (size_t i = 0; i < bd.n; i++)
		ord[i] = (struct rpt_key){ bd.ev[i].ts, i };
	if (rpt_key_sort(ord, bd.n))
		goto oom;
	if (bd.n) {
		out->tmin = ord[0].k;
		out->tmax = ord[bd.n - 1].k;
	}

	for (size_t x = 0; x < bd.n; x++) {
		size_t i = ord[x].i;
		const struct sev *e = &bd.ev[i];
		struct thr *t;
		if ((x & 0xffff) == 0 && cancel && *cancel) {
			rpt_err(cmd, "interrupted");
			goto out;
		}
		if (e->kind == EV_WAKEUP) {
			/* the last wakeup before it runs is the one that counts */
			if (e->a == 0 || (t = thr_get(&tt, e->a)) == NULL) {
				if (e->a == 0)
					continue;
				goto oom;
			}
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
			if ((t = thr_get(&tt, e->b)) == NULL)
				goto oom;
			if (t->out) {
				t->s.end = e->ts;
				if (DT_GROW(out->v, out->cap, out->n, 1, 4096))
					goto oom;
				out->v[out->n++] = t->s;
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
			if ((t = thr_get(&tt, e->a)) == NULL)
				goto oom;
			if (t->out) {
				/*
				 * Out again without being switched in: the switch in
				 * is not in the capture (dropped, or never delivered
				 * by the kernel).  It ran after its wakeup, so the
				 * blocked part ends there; without a wakeup the
				 * interval's end is unknown and it is left out.
				 * Either way it is counted.
				 */
				out->nlost++;
				if (t->s.wake || t->s.state == 'R') {
					/* it ran again after lo and before e->ts:
					 * its first event in between ends it
					 * (fix_ends); until then, its wakeup */
					uint64_t lo = t->s.wake ? t->s.wake : t->s.start;
					t->s.end = lo;
					if (DT_GROW(out->v, out->cap, out->n, 1, 4096) ||
					    DT_GROW(fx.v, fx.cap, fx.n, 1, 64))
						goto oom;
					fx.v[fx.n++] = (struct fix){ t->s.tid, lo, e->ts, out->n };
					out->v[out->n++] = t->s;
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
	/* still off-CPU at the end: counted up to the last event, marked */
	for (size_t k = 0; k < tt.n; k++) {
		struct thr *t = &tt.v[k];
		if (!t->out)
			continue;
		t->s.end = out->tmax;
		t->s.open = 1;
		if (DT_GROW(out->v, out->cap, out->n, 1, 4096))
			goto oom;
		out->v[out->n++] = t->s;
	}
	if (fx.n && fix_ends(c, out, &fx, cancel, err, sizeof(err))) {
		rpt_err(cmd, "%s", err);
		goto out;
	}
	out->nevents = bd.n;
	ret = 0;
	goto out;
oom:
	rpt_err(cmd, "%s: out of memory", c->path);
out:
	if (ret)
		rpt_sched_free(out);
	free(bd.pi);
	free(bd.ev);
	free((size_t *)bd.place);
	free(ord);
	free(fx.v);
	free(tt.v);
	dt_htab_free(&tt.ix);
	flt_free(&all);
	return ret;
}

void
rpt_sched_free(struct rpt_sched *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
