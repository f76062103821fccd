/* machine.c - see machine.h. */
#include "dt_grow.h"
#include "dt_htab.h"
#include "machine.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procmaps.h"
#include "proctab.h"
#include "unwind_pool.h"
#include "util.h"

/* What the subscribers were told of a process. */
struct told {
	uint32_t	pid;
	char		comm[DT_COMMLEN];	/* from /proc changes only */
	uint32_t	seq;		/* changes told */
	uint32_t	misses;		/* changes told for pcs in no mapping */
	uint32_t	gen;		/* kproc.gen last told */
	uint64_t	*xr;		/* code as stored: start, end pairs */
	uint32_t	nxr;
};

/*
 * Without the kernel's events, what the unwinding workers were told of a
 * process: read from /proc/PID/maps (dtm_observe).
 */
struct seeded {
	uint32_t	pid;
	uint32_t	reseeds;
	char		comm[DT_COMMLEN];
	uint64_t	*xr;		/* executable ranges, [lo, hi) pairs */
	size_t		nxr, cap;
};

struct dtm {
	struct proctab	pt;		/* [r] the kernel's events, fed by the source */
	int		fed;		/* [r] the source feeds pt */
	uint32_t	exec_probe;	/* [I] */
	struct {
		dtm_sub_fn fn;
		void	*arg;
	}		subs[DTM_MAXSUBS];	/* [I] */
	unsigned	nsubs;		/* [I] */
	/* in order of first sight: the subscribers hear of processes so */
	struct told	*told;		/* [r] */
	size_t		ntold, toldcap;
	struct dt_htab	tix;		/* [r] pid -> index in told */
	struct seeded	*seeds;		/* [r] dense, in no order */
	size_t		nseeds;
	uint32_t	scap;		/* dt_htab numbers entries in 32 bits */
	struct dt_htab	six;		/* [r] pid -> index in seeds */
	size_t		prune_at;	/* [r] nseeds that makes the next add prune */
};

struct dtm *
dtm_new(void)
{
	struct dtm *m = calloc(1, sizeof(*m));

	if (m)
		m->pt.self = (uint32_t)getpid();
	return m;
}

static void
forget_seeds(struct dtm *m)
{
	for (size_t i = 0; i < m->nseeds; i++)
		free(m->seeds[i].xr);
	free(m->seeds);
	dt_htab_free(&m->six);
	m->seeds = NULL;
	m->nseeds = m->scap = 0;
}

void
dtm_forget_told(struct dtm *m)
{
	for (size_t i = 0; i < m->ntold; i++)
		free(m->told[i].xr);
	free(m->told);
	dt_htab_free(&m->tix);
	m->told = NULL;
	m->ntold = m->toldcap = 0;
}

void
dtm_free(struct dtm *m)
{
	if (m == NULL)
		return;
	proctab_free(&m->pt);
	dtm_forget_told(m);
	forget_seeds(m);
	free(m);
}

int
dtm_subscribe(struct dtm *m, dtm_sub_fn fn, void *arg)
{
	if (m->nsubs == DTM_MAXSUBS)
		return -1;
	m->subs[m->nsubs].fn = fn;
	m->subs[m->nsubs].arg = arg;
	m->nsubs++;
	return 0;
}

void dtm_keep_all(struct dtm *m, int on) { m->pt.keep_all = on; }
void dtm_set_exec_probe(struct dtm *m, uint32_t id) { m->exec_probe = id; }
void dtm_set_unwinders(struct dtm *m, struct dtunw_pool *pool) { m->pt.pool = pool; }
struct dtunw_pool *dtm_unwinders(struct dtm *m) { return m->pt.pool; }

void
dtm_feed(struct dtm *m)
{
	m->fed = 1;
}

/* ------------------------------------------------ the sources' feed */

void dtm_feed_comm(struct dtm *m, uint32_t tid, const char *comm) { proctab_set_comm(&m->pt, tid, comm); }
void dtm_feed_exit(struct dtm *m, uint32_t pid) { proctab_exit(&m->pt, pid); }
void dtm_feed_read_end(struct dtm *m) { proctab_read_end(&m->pt); }

void
dtm_feed_thread(struct dtm *m, uint32_t tid, uint32_t ptid)
{
	const struct task *pc = task_get(&m->pt.comms, ptid, 0);

	if (pc != NULL) {
		char comm[DTCAP_COMMLEN];

		/* set_comm may move pc when the table grows */
		memcpy(comm, pc->comm, sizeof(comm));
		proctab_set_comm(&m->pt, tid, comm);
	}
}

void
dtm_feed_fork(struct dtm *m, uint32_t pid, uint32_t ppid, uint64_t ts, const char *comm)
{
	if (comm[0]) {
		struct task *par;

		/* the parent's name goes to the child (its comm is the parent's) */
		proctab_set_comm(&m->pt, pid, comm);
		par = proctab_known(&m->pt, ppid, ts);
		if (par && !par->p.comm[0])
			snprintf(par->p.comm, sizeof(par->p.comm), "%.*s",
				 (int)sizeof(par->p.comm) - 1, comm);
	}
	proctab_fork(&m->pt, pid, ppid, ts);
}

void
dtm_feed_exec(struct dtm *m, uint32_t pid, uint64_t ts, const char *comm, const char *path)
{
	proctab_exec(&m->pt, pid, ts, comm, path);
}

void
dtm_feed_mmap(struct dtm *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	      uint32_t prot, const char *name, uint64_t ts)
{
	proctab_mmap(&m->pt, pid, start, len, pgoff, prot, name, ts);
}

void
dtm_sample(struct dtm *m, struct dt_rec *d, unsigned what)
{
	uint64_t *u = (uint64_t *)(void *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;

	if (what & DTM_NAME)
		memcpy(d->dtr_comm, proctab_comm_of(&m->pt, d->dtr_pid, d->dtr_tid, d->dtr_cpu),
		       DT_COMMLEN);
	/*
	 * The kernel follows frame pointers through code built without them
	 * too, reading saved data (text, zeros) as return addresses: the
	 * stack ends at the first frame that is no code of the process,
	 * marked cut.
	 */
	if ((what & DTM_FP_CUT) && m->fed) {
		for (unsigned i = 0; i < d->dtr_nustack; i++) {
			uint64_t pc;
			memcpy(&pc, &u[i], 8);
			if (proctab_is_code(&m->pt, d->dtr_pid, d->dtr_ts, pc) == 0) {
				d->dtr_nustack = (uint8_t)i;
				d->dtr_flags |= DTR_USTACK_TRUNC;
				d->dtr_size = (uint32_t)DT_REC_SIZE(d->dtr_nargs, d->dtr_nkstack, i);
				break;
			}
		}
	}
	/* a process we never saw map anything: its mappings from /proc */
	if ((what & DTM_UNWIND) && m->fed)
		(void)proctab_known(&m->pt, d->dtr_pid, d->dtr_ts);
}

const struct kproc *
dtm_proc(struct dtm *m, uint32_t pid)
{
	return m->fed ? proctab_proc(&m->pt, pid) : NULL;
}

/* ------------------------------------------------------- subscribers */

static uint64_t
told_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct dtm *)ctx)->told[e].pid);
}

/* pid's entry, created zeroed if create; NULL if absent or out of memory.
 * The pointer lasts until the next creation. */
static struct told *
told_get(struct dtm *m, uint32_t pid, int create)
{
	uint64_t h = dt_htab_hash_int(pid);
	uint32_t e;

	for (size_t i = dt_htab_first(&m->tix, h); (e = dt_htab_at(&m->tix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&m->tix, i))
		if (m->told[e].pid == pid)
			return &m->told[e];
	if (!create || DT_GROW(m->told, m->toldcap, m->ntold, 1, 4096))
		return NULL;
	memset(&m->told[m->ntold], 0, sizeof(m->told[m->ntold]));
	m->told[m->ntold].pid = pid;
	if (dt_htab_add(&m->tix, h, (uint32_t)m->ntold, told_rehash, m))
		return NULL;
	return &m->told[m->ntold++];
}

static void
tell(struct dtm *m, const struct dtm_change *c)
{
	for (unsigned i = 0; i < m->nsubs; i++)
		m->subs[i].fn(m->subs[i].arg, c);
}

/* The kernel's view of t's process, told when its generation moved. */
static void
tell_kernel(struct dtm *m, struct told *t, const struct kproc *kp, const uint64_t *pcs,
	    size_t npcs)
{
	struct dtm_change c = {
		.pid = kp->pid, .ts = kp->ts, .kp = kp, .pcs = pcs, .npcs = npcs,
		/* a comm from /proc, when the process was told of so first, stays */
		.comm = t->comm[0] ? t->comm : kp->comm,
	};
	char comm[DT_COMMLEN + 1];

	memcpy(comm, c.comm, DT_COMMLEN);
	comm[DT_COMMLEN] = '\0';
	c.comm = comm;
	t->gen = kp->gen;
	c.seq = ++t->seq;
	tell(m, &c);
}

/* Every mapping /proc lists (names into its text). */
struct read_maps {
	struct dtm_read	*rd;
	size_t		cap;		/* of rd->mv */
};

static int
read_map(void *arg, const struct dtpm_map *pm)
{
	struct read_maps *rm = arg;
	struct dtm_read *rd = rm->rd;

	if (DT_GROW(rd->mv, rm->cap, rd->nm, 1, 64))
		return -1;	/* out of memory: the maps so far */
	memset(&rd->mv[rd->nm], 0, sizeof(rd->mv[rd->nm]));
	rd->mv[rd->nm].start = pm->start;
	rd->mv[rd->nm].end = pm->end;
	rd->mv[rd->nm].offset = pm->offset;
	rd->mv[rd->nm].prot = pm->prot;
	rd->mv[rd->nm].name = pm->name;
	rd->nm++;
	return 0;
}

/*
 * /proc/PID/{exe,stat,maps}.  A process that is already gone is not an
 * error: what it ran stays unnamed.
 */
static void
read_proc(uint32_t pid, struct dtm_read *rd)
{
	char path[64], *stat;
	ssize_t l;

	memset(rd, 0, sizeof(*rd));
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	l = readlink(path, rd->exe, sizeof(rd->exe) - 1);
	rd->exe[l > 0 ? l : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if ((stat = dtu_read_file(path, NULL)) != NULL) {
		char *rp = strrchr(stat, ')');
		unsigned ppid;
		if (rp && sscanf(rp + 1, " %*c %u", &ppid) == 1)
			rd->ppid = ppid;
		free(stat);
	}
	if ((rd->text = dtpm_read(pid)) != NULL) {
		struct read_maps rm = { rd, 0 };
		(void)dtpm_parse(rd->text, 0, read_map, &rm, NULL, 0);
	}
}

void
dtm_event(struct dtm *m, const struct dt_rec *d)
{
	struct told *t;
	int exec;
	char c[DT_COMMLEN + 1];

	if (d->dtr_pid == 0)
		return;		/* the idle task has no user space */
	const uint64_t *pcs = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;

	if ((t = told_get(m, d->dtr_pid, 1)) == NULL)
		return;
	{
		/* the kernel told the source what this process mapped: no /proc race */
		const struct kproc *kp = dtm_proc(m, d->dtr_pid);
		if (kp) {
			if (!t->seq || t->gen != kp->gen)
				tell_kernel(m, t, kp, pcs, d->dtr_nustack);
			return;
		}
	}
	exec = m->exec_probe && d->dtr_probe == m->exec_probe;
	/*
	 * exec renames the task: a changed main-thread comm means a new
	 * image.  prctl(PR_SET_NAME) does too, so a process that keeps
	 * renaming itself gets only a few snapshots.
	 */
	if (!exec && t->seq && !(t->seq < 8 && d->dtr_tid == d->dtr_pid && d->dtr_comm[0] &&
				 memcmp(t->comm, d->dtr_comm, DT_COMMLEN) != 0)) {
		/* a user pc in no executable mapping: code mapped since (dlopen, JIT) */
		int known = 0;

		if (d->dtr_nustack == 0 || pcs[0] == 0 || !dtpm_reread_left(t->misses))
			return;
		for (uint32_t i = 0; i < t->nxr && !known; i++)
			known = pcs[0] >= t->xr[2 * i] && pcs[0] < t->xr[2 * i + 1];
		if (known)
			return;
		t->misses++;
	}
	if (d->dtr_tid == d->dtr_pid || !t->seq)
		memcpy(t->comm, d->dtr_comm, DT_COMMLEN);
	memcpy(c, d->dtr_comm, DT_COMMLEN);
	c[DT_COMMLEN] = '\0';
	struct dtm_read rd;
	read_proc(d->dtr_pid, &rd);
	struct dtm_change ch = {
		.pid = d->dtr_pid, .seq = ++t->seq, .ts = d->dtr_ts, .comm = c, .rd = &rd,
		.pcs = pcs, .npcs = d->dtr_nustack,
	};
	tell(m, &ch);
	free(rd.mv);
	free(rd.text);
}

void
dtm_read_end(struct dtm *m)
{
	/* by index: a subscriber adds no process, but the table may move */
	for (size_t i = 0; i < m->ntold && m->fed; i++) {
		const struct kproc *kp;

		if (!m->told[i].seq || (kp = dtm_proc(m, m->told[i].pid)) == NULL ||
		    kp->gen == m->told[i].gen)
			continue;
		tell_kernel(m, &m->told[i], kp, NULL, 0);
	}
}

const char *
dtm_comm(struct dtm *m, uint32_t pid)
{
	struct told *t = told_get(m, pid, 0);

	return t ? t->comm : "";
}

void
dtm_set_code(struct dtm *m, uint32_t pid, const struct dtcap_map *mv, size_t nm)
{
	struct told *t = told_get(m, pid, 0);

	if (t == NULL)
		return;
	free(t->xr);
	t->xr = NULL;
	t->nxr = 0;
	for (size_t i = 0, k = 0; i < nm; i++) {
		if (!(mv[i].prot & 4))
			continue;
		if (t->xr == NULL && (t->xr = malloc(2 * nm * sizeof(*t->xr))) == NULL)
			break;
		t->xr[k++] = mv[i].start;
		t->xr[k++] = mv[i].end;
		t->nxr++;
	}
}

/* ------------------------------------------- the workers, without events */

/* the fewest processes that make a prune pass worth its kill() calls */
#define SEEDED_PRUNE_MIN	128

static uint64_t
seeded_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct dtm *)ctx)->seeds[e].pid);
}

/*
 * Drop the processes that have exited (the workers forget them after the
 * samples already queued for them: a sample still in the kernel's rings
 * then unwinds to its ip alone, marked truncated).  The next pass comes
 * when the table has doubled from what survives this one, so a system
 * where processes come and go stays at about twice the live ones, and the
 * kill() of each pass is paid for by as many new processes.
 */
static void
seeded_prune(struct dtm *m)
{
	for (size_t i = 0; i < m->nseeds;) {
		struct seeded *o = &m->seeds[i];
		if (kill((pid_t)o->pid, 0) == 0 || errno != ESRCH) {
			i++;
			continue;
		}
		/* the last process takes i's place, in the index first */
		if (dt_htab_remove(&m->six, (uint32_t)i, seeded_rehash, m) < 0)
			break;	/* the index disagrees: keep the rest */
		dtunw_pool_forget(m->pt.pool, o->pid);
		free(o->xr);
		*o = m->seeds[--m->nseeds];
	}
	m->prune_at = 2 * m->nseeds > SEEDED_PRUNE_MIN ? 2 * m->nseeds : SEEDED_PRUNE_MIN;
}

/* pid's entry, a new one if none; NULL when out of memory.  The entry
 * moves when another is added (the array grows, a prune fills holes). */
static struct seeded *
seeded_get(struct dtm *m, uint32_t pid)
{
	uint64_t h = dt_htab_hash_int(pid);
	uint32_t e;

	for (size_t i = dt_htab_first(&m->six, h); (e = dt_htab_at(&m->six, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&m->six, i))
		if (m->seeds[e].pid == pid)
			return &m->seeds[e];
	if (m->nseeds >= m->prune_at)
		seeded_prune(m);
	if (DT_GROW(m->seeds, m->scap, m->nseeds, 1, 256))
		return NULL;
	m->seeds[m->nseeds] = (struct seeded){ .pid = pid };
	if (dt_htab_add(&m->six, h, (uint32_t)m->nseeds, seeded_rehash, m))
		return NULL;
	return &m->seeds[m->nseeds++];
}

struct seedctx {
	struct dtm	*m;
	struct seeded	*u;
	uint32_t	pid;
};

/* One executable file or [vdso] mapping of /proc/PID/maps to the workers. */
static int
seed_one(void *arg, const struct dtpm_map *m)
{
	struct seedctx *c = arg;
	struct seeded *u = c->u;
	uint64_t start = m->start, len = m->end - m->start;

	dtunw_pool_map(c->m->pt.pool, c->pid, start, len, m->offset, m->name);
	/* [lo, hi) pairs: cap counts pairs, the array holds two words each */
	if (u->nxr == u->cap) {
		size_t nc;
		uint64_t *n;
		if (dt_grow_cap(u->cap, u->nxr + 1, 2 * sizeof(*n), 16, SIZE_MAX, &nc) ||
		    (n = realloc(u->xr, 2 * nc * sizeof(*n))) == NULL)
			return 0;	/* the range is mapped; only re-reads suffer */
		u->xr = n;
		u->cap = nc;
	}
	u->xr[2 * u->nxr] = start;
	u->xr[2 * u->nxr + 1] = start + len;
	u->nxr++;
	return 0;
}

void
dtm_observe(struct dtm *m, uint32_t pid, uint32_t tid, const char *comm, uint64_t ip)
{
	struct seeded *u;
	int known = 0;

	if (m->pt.pool == NULL || (u = seeded_get(m, pid)) == NULL)
		return;
	if (u->reseeds > 0 && tid == pid && comm[0] && memcmp(u->comm, comm, DT_COMMLEN) != 0)
		known = 0;		/* exec'd since */
	else
		for (size_t i = 0; i < u->nxr && !known; i++)
			known = ip >= u->xr[2 * i] && ip < u->xr[2 * i + 1];
	if (known || !dtpm_reread_left(u->reseeds))
		return;
	u->reseeds++;
	if (tid == pid || u->reseeds == 1)
		memcpy(u->comm, comm, DT_COMMLEN);
	/* gone already: the workers keep what they knew */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/maps", (unsigned)pid);
	if (access(path, R_OK) != 0)
		return;
	u->nxr = 0;
	dtunw_pool_forget(m->pt.pool, pid);
	struct seedctx c = { m, u, pid };
	char *maps = dtpm_read(pid);
	if (maps) {
		(void)dtpm_parse(maps, DTPM_EXEC | DTPM_FILES, seed_one, &c, NULL, 0);
		free(maps);
	}
}
