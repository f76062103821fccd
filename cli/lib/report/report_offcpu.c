/*
 * report_offcpu.c - the off-CPU flame graphs (engine.h rpt_offcpu_fold):
 * dtreport flame --offcpu, --oncpu-offcpu and --wakers.  Widths are
 * microseconds.  An off-CPU interval (sched_model.c) is blocked from its
 * switch-out to the wakeup, in the state it left in, then waiting for a
 * CPU (R) until it runs; a preempted thread is R throughout.  Each part
 * is drawn on the stack it left the CPU with, under a leaf frame naming
 * the state ("[off-CPU S]"), so the parts of one wait stay apart.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "report.h"

/*
 * The time of each distinct (what, thread name, process, stacks, state),
 * summed before anything is named: a wait site recurs thousands of times.
 */
enum { A_OFF, A_WAKER, A_IRQ };
struct agg {
	uint32_t	kind, comm, pid, ustack, kstack, x;	/* x: state, waker's comm, ctx */
	uint64_t	ts;		/* the first one's: names the user stack */
	uint64_t	ns;
};

struct fold {
	const struct rpt_cap *c;
	const struct rpt_flame_opts *o;
	struct flt_filter *f;
	struct flame	*fl;
	struct rpt_namer *nm;
	int		side;
	uint32_t	*buf;
	int64_t		sep, nostack, leaf[256];
	uint64_t	total_us;
	uint32_t	nperiod;
	uint64_t	*period_ns;	/* by probe id: timer probes' period, 0: not one */
	int		oom;
	struct agg	*a;
	size_t		na;
	uint32_t	acap;
	struct dt_htab	aix;
};

static uint64_t
agg_hash(const struct agg *a)
{
	uint64_t h = dt_htab_hash_int((uint64_t)a->kind << 32 | a->comm);
	h = dt_htab_hash_int(h ^ ((uint64_t)a->pid << 32 | a->ustack));
	return dt_htab_hash_int(h ^ ((uint64_t)a->kstack << 32 | a->x));
}

static uint64_t
agg_rehash(const void *ctx, uint32_t e)
{
	return agg_hash(&((const struct fold *)ctx)->a[e]);
}

static int
agg_add(struct fold *fd, struct agg k, uint64_t ns)
{
	uint64_t h = agg_hash(&k);
	uint32_t e;

	if (ns == 0)
		return 0;
	for (size_t i = dt_htab_first(&fd->aix, h); (e = dt_htab_at(&fd->aix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&fd->aix, i)) {
		struct agg *a = &fd->a[e];
		if (a->kind == k.kind && a->comm == k.comm && a->pid == k.pid &&
		    a->ustack == k.ustack && a->kstack == k.kstack && a->x == k.x) {
			a->ns += ns;
			return 0;
		}
	}
	if (DT_GROW(fd->a, fd->acap, fd->na, 1, 1024))
		return -1;
	k.ns = ns;
	fd->a[fd->na] = k;
	if (dt_htab_add(&fd->aix, h, (uint32_t)fd->na, agg_rehash, fd))
		return -1;
	fd->na++;
	return 0;
}

static int
state_kept(const struct rpt_flame_opts *o, char st)
{
	return o->states == NULL || strchr(o->states, st) != NULL;
}

/* comm; user stack; --; kernel stack: as profile graphs are drawn */
static int
stack_path(struct fold *fd, uint32_t comm, uint32_t pid, uint64_t ts, uint32_t ustack,
	   uint32_t kstack, unsigned *nb)
{
	const char *cn = dtcap_comm(fd->c->r, comm);
	int64_t cid = flame_intern(fd->fl, pid == 0 && (!cn || !*cn) ? DT_IDLE_NAME :
				   cn && *cn ? cn : "[unknown]", FLAME_SPECIAL);
	unsigned u0;

	if (cid < 0)
		return -1;
	*nb = 0;
	if (!fd->o->no_comm)
		fd->buf[(*nb)++] = (uint32_t)cid;
	u0 = *nb;
	if (ustack && fd->o->only != RPT_ONLY_KERNEL &&
	    rpt_namer_stack(fd->nm, ustack, 0, pid, ts, fd->buf, nb))
		return -1;
	if (kstack && fd->o->only != RPT_ONLY_USER) {
		unsigned k0 = *nb;
		if (*nb > u0)
			fd->buf[(*nb)++] = (uint32_t)fd->sep;
		if (rpt_namer_stack(fd->nm, kstack, 1, 0, 0, fd->buf, nb))
			return -1;
		if (*nb == k0 + 1 && k0 > u0)
			(*nb)--;	/* nothing named after the separator */
	}
	if (*nb == u0)
		fd->buf[(*nb)++] = (uint32_t)fd->nostack;
	return 0;
}

static int
add_weighted(struct fold *fd, unsigned nb, uint64_t us)
{
	if (us == 0)
		return 0;
	if (fd->o->reverse)
		for (unsigned x = 0, y = nb - 1; x < y; x++, y--) {
			uint32_t t = fd->buf[x];
			fd->buf[x] = fd->buf[y];
			fd->buf[y] = t;
		}
	fd->total_us += us;
	return flame_add(fd->fl, fd->buf, nb, us, fd->side);
}

static int64_t
leaf_of(struct fold *fd, char st)
{
	unsigned char k = (unsigned char)st;
	char nm[32];

	if (fd->leaf[k] == 0) {
		snprintf(nm, sizeof(nm), "[off-CPU %c]", st);
		fd->leaf[k] = flame_intern(fd->fl, nm, FLAME_SPECIAL) + 1;
	}
	return fd->leaf[k] - 1;
}

/* One part of an interval: [lo, hi) in state st. */
static int
off_part(struct fold *fd, const struct rpt_sched_span *s, char st, uint64_t lo, uint64_t hi)
{
	if (hi <= lo || !state_kept(fd->o, st))
		return 0;
	return agg_add(fd, (struct agg){ A_OFF, s->comm, s->pid, s->ustack, s->kstack,
					 (uint32_t)(unsigned char)st, s->start, 0 }, hi - lo);
}

/* One aggregate, named and added to the graph. */
static int
agg_emit(struct fold *fd, const struct agg *a)
{
	unsigned nb;
	uint64_t us = (a->ns + 500) / 1000;
	int64_t id;

	if (a->kind == A_OFF) {
		if (stack_path(fd, a->comm, a->pid, a->ts, a->ustack, a->kstack, &nb) ||
		    (id = leaf_of(fd, (char)a->x)) < 0)
			return -1;
		fd->buf[nb++] = (uint32_t)id;
		return add_weighted(fd, nb, us);
	}
	const char *cn = dtcap_comm(fd->c->r, a->comm);
	int64_t root = flame_intern(fd->fl, cn && *cn ? cn : "[unknown]", FLAME_SPECIAL);
	if (root < 0)
		return -1;
	if (a->kind == A_IRQ) {
		/* an interrupt (a timer, a device) woke it: the task it
		 * interrupted had no part in it */
		if ((id = flame_intern(fd->fl, a->x == DTCAP_CTX_SOFTIRQ ? "[softirq]" : "[hardirq]",
				       FLAME_SPECIAL)) < 0)
			return -1;
		nb = 0;
		fd->buf[nb++] = (uint32_t)id;
		if (a->kstack && fd->o->only != RPT_ONLY_USER &&
		    rpt_namer_stack(fd->nm, a->kstack, 1, 0, 0, fd->buf, &nb))
			return -1;
	} else if (stack_path(fd, a->x, a->pid, a->ts, a->ustack, a->kstack, &nb)) {
		return -1;
	}
	memmove(fd->buf + 1, fd->buf, nb * sizeof(*fd->buf));
	fd->buf[0] = (uint32_t)root;
	return add_weighted(fd, nb + 1, us);
}

/* [lo, hi): the interval clipped to --since/--until; 0 if outside it. */
static int
clip(const struct flt_filter *f, uint64_t start, uint64_t end, uint64_t *lo, uint64_t *hi)
{
	*lo = start > f->tmin ? start : f->tmin;
	*hi = end < f->tmax ? end : f->tmax;
	return *hi > *lo;
}

static int
offcpu_span(struct fold *fd, const struct rpt_sched_span *s, uint32_t probe)
{
	uint64_t lo, hi;

	if (!clip(fd->f, s->start, s->end, &lo, &hi) ||
	    !flt_match_slow(fd->f, lo, s->cpu, s->pid, s->tid, probe, s->comm))
		return 0;
	if (fd->o->mode == RPT_FLAME_WAKERS) {
		uint64_t wlo, whi;
		/* the time it had been blocked, on the stack that woke it */
		if (!s->wake || !clip(fd->f, s->start, s->wake, &wlo, &whi) ||
		    !state_kept(fd->o, s->state))
			return 0;
		if (s->wctx == DTCAP_CTX_HARDIRQ || s->wctx == DTCAP_CTX_SOFTIRQ ||
		    s->wctx == DTCAP_CTX_NMI)
			return agg_add(fd, (struct agg){ A_IRQ, s->comm, 0, 0, s->wkstack, s->wctx,
							 s->wake, 0 }, whi - wlo);
		return agg_add(fd, (struct agg){ A_WAKER, s->comm, s->wpid, s->wustack, s->wkstack,
						 s->wcomm, s->wake, 0 }, whi - wlo);
	}
	if (s->state == 'R' || !s->wake || s->wake >= s->end)
		return off_part(fd, s, s->state, lo, hi);
	uint64_t w = s->wake < lo ? lo : s->wake > hi ? hi : s->wake;
	if (off_part(fd, s, s->state, lo, w))
		return -1;
	return off_part(fd, s, 'R', w, hi);
}

/* A timer probe's period from its name ("profile:hz:997", "profile:ms:10"). */
static uint64_t
timer_period(const char *name)
{
	const char *u = strchr(name, ':'), *v;
	double x;

	if (u == NULL || (v = strchr(u + 1, ':')) == NULL || (x = strtod(v + 1, NULL)) <= 0)
		return 0;
	u++;
	if (!strncmp(u, "hz:", 3))
		return (uint64_t)(1e9 / x + 0.5);
	if (!strncmp(u, "s:", 2))
		return (uint64_t)(x * 1e9);
	if (!strncmp(u, "ms:", 3))
		return (uint64_t)(x * 1e6);
	if (!strncmp(u, "us:", 3))
		return (uint64_t)(x * 1e3);
	if (!strncmp(u, "ns:", 3))
		return (uint64_t)x;
	return 0;
}

static int
oncpu_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct fold *fd = ctx;
	uint32_t p = b->probe[i];
	unsigned nb;
	int64_t leaf;

	if (p >= fd->nperiod || fd->period_ns[p] == 0)
		return 0;
	if (stack_path(fd, b->comm[i], b->pid[i], b->ts[i], b->ustack[i], b->kstack[i], &nb) ||
	    (leaf = flame_intern(fd->fl, "[on-CPU]", FLAME_SPECIAL)) < 0) {
		fd->oom = 1;
		return 1;
	}
	fd->buf[nb++] = (uint32_t)leaf;
	if (add_weighted(fd, nb, (fd->period_ns[p] + 500) / 1000)) {
		fd->oom = 1;
		return 1;
	}
	return 0;
}

int
rpt_offcpu_fold(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_flame_opts *o,
		struct flame *fl, int side, uint64_t *nsamples, char *probedesc, size_t pdlen,
		volatile sig_atomic_t *cancel)
{
	struct rpt_sched sc;
	struct fold fd = { .c = c, .o = o, .f = f, .fl = fl, .side = side };
	char err[512];
	int ret;

	if (flt_resolve(f, c->r, err, sizeof(err))) {
		rpt_err(o->cmd, "%s: %s", c->path, err);
		return RPT_EXIT_ERROR;
	}
	if (f->probe_ok) {
		rpt_err(o->cmd, "--probe does not apply to off-CPU graphs: their events are "
			"the scheduler's");
		return RPT_EXIT_USAGE;
	}
	if ((ret = rpt_sched_build(c, o->cmd, &sc, cancel)) != 0)
		return ret;
	ret = RPT_EXIT_ERROR;
	fd.buf = malloc((2 * DTCAP_MAXFRAMES + 2 * RPT_INLINE_ROOM + 8) * sizeof(*fd.buf));
	fd.nm = rpt_namer_new(c, fl);
	if (!fd.buf || !fd.nm || (fd.sep = flame_intern(fl, "--", FLAME_SPECIAL)) < 0 ||
	    (fd.nostack = flame_intern(fl, "[no stack]", FLAME_SPECIAL)) < 0)
		goto oom;
	for (size_t i = 0; i < sc.n; i++) {
		if ((i & 0xfff) == 0 && cancel && *cancel) {
			rpt_err(o->cmd, "interrupted");
			goto out;
		}
		if (offcpu_span(&fd, &sc.v[i], sc.switch_probe))
			goto oom;
	}
	for (size_t i = 0; i < fd.na; i++) {
		if ((i & 0xff) == 0 && cancel && *cancel) {
			rpt_err(o->cmd, "interrupted");
			goto out;
		}
		if (agg_emit(&fd, &fd.a[i]))
			goto oom;
	}
	uint64_t off_us = fd.total_us;
	if (o->mode == RPT_FLAME_ONOFF) {
		fd.nperiod = dtcap_max_probe_id(c->r) + 1;
		if ((fd.period_ns = calloc(fd.nperiod, sizeof(*fd.period_ns))) == NULL)
			goto oom;
		int any = 0;
		for (size_t i = 0; i < dtcap_nprobes(c->r); i++) {
			const struct dtcap_probe *p = dtcap_probe_at(c->r, i);
			if ((p->flags & DT_PF_TIMER) && !strncmp(p->name, "profile:", 8))
				any |= (fd.period_ns[p->id] = timer_period(p->name)) != 0;
		}
		if (!any) {
			rpt_err(o->cmd, "%s: --oncpu-offcpu needs profile samples in the capture "
				"(dtrec -e profile:hz:997 --offcpu)", c->path);
			goto out;
		}
		if (flt_scan(c->r, f, DTCAP_COL_PROBE | DTCAP_COL_COMM | DTCAP_COL_PID |
			     DTCAP_COL_TS | DTCAP_COL_KSTACK | DTCAP_COL_USTACK, oncpu_row, &fd,
			     cancel, rpt_shell ? "dtsh: reading" : "dtreport: reading", err,
			     sizeof(err))) {
			if (fd.oom)
				goto oom;
			rpt_err(o->cmd, "%s", err);
			goto out;
		}
	}
	snprintf(probedesc, pdlen, "%s", o->mode == RPT_FLAME_WAKERS ? "blocked time by waker" :
		 o->mode == RPT_FLAME_ONOFF ? "on-CPU samples and off-CPU time" : "off-CPU time");
	if (o->mode == RPT_FLAME_ONOFF && pdlen > 0) {
		size_t l = strlen(probedesc);
		snprintf(probedesc + l, pdlen - l, " (%" PRIu64 " us off)", off_us);
	}
	rpt_note_empty(o->cmd, c->path, fd.total_us, flt_active(f));
	if (sc.nlost)
		rpt_err(o->cmd, "%s: note: %" PRIu64 " off-CPU intervals have no switch back in "
			"in the capture: they end at the thread's next event after its wakeup "
			"(or preemption), else at the wakeup; a sleep without a wakeup is "
			"left out", c->path, sc.nlost);
	*nsamples = fd.total_us;
	ret = 0;
	goto out;
oom:
	rpt_err(o->cmd, "%s: out of memory", c->path);
	ret = RPT_EXIT_ERROR;
out:
	free(fd.buf);
	free(fd.period_ns);
	free(fd.a);
	dt_htab_free(&fd.aix);
	rpt_namer_free(fd.nm);
	rpt_sched_free(&sc);
	return ret;
}
