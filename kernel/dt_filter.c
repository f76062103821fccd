// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_filter.c - a descriptor's filter (DTIOCSETFILTER): whose events it
 * records, decided before anything else of an event is gathered.
 *
 * The targets are a set of tgids: an open-addressing table of u32 slots,
 * read locklessly by every event of the descriptor (any context level, so
 * no lock there) and changed under sc_tglock by process context only:
 * the fork and exec hooks below, which follow the targets' children, and
 * the sweep, which rebuilds the table without the processes that are gone
 * (a table only ever filled would end with no empty slot, and a lookup of
 * a non-target would then scan all of it).
 *
 * Slot values: 0 empty, DT_TG_TOMB a removed entry (lookups go on past
 * it), tgid a target, tgid | DT_TG_PENDING a process that becomes one at
 * its next exec.  Tgids are below PID_MAX_LIMIT (2^22): bit 31 is free.
 *
 * Each entry also holds a reference to its process's struct pid (ts_pid,
 * beside the slot): a number alone cannot tell the target from a later
 * process that got its tgid once it exited (between DTIOCSETFILTER and
 * the start, or while no fork hook watches), and an event matches only if
 * its process is the very one.  An event of a process with a target's
 * number that is not the target is filtered (and counted so).
 *
 * The targets' children forked before recording starts (after the
 * filter was set) are found by a walk of the process list at the start,
 * after the fork hook is in place; later ones by the hook.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sched.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rculist.h>
#include <linux/tracepoint.h>
#include <linux/threads.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/cgroup.h>
#include <linux/err.h>
#include <trace/events/sched.h>

#include "dt.h"

#define DT_TG_PENDING	0x80000000U
#define DT_TG_TOMB	0xffffffffU
#define DT_TG_MINCAP	256U
/* 4 MiB of slots: the table never grows past this (untracked instead) */
#define DT_TG_MAXCAP	(1U << 20)

struct dt_tgset {
	u32		ts_cap;		/* [I] slots, a power of two */
	u32		ts_used;	/* [sc_tglock] slots not empty */
	u32		ts_live;	/* [sc_tglock] targets and pending */
	/*
	 * [sc_tglock] the struct pid of each live slot's process, held;
	 * written before the slot's value, read locklessly after it (only
	 * compared, never dereferenced, by probe context)
	 */
	struct pid	**ts_pid;
	u32		ts_slots[];	/* [sc_tglock] written, read locklessly */
};

static u32 dt_tg_hash(u32 tgid, u32 cap)
{
	return (tgid * 0x9e3779b1U) & (cap - 1);
}

/*
 * The slot value for tgid if its entry is the process of struct pid pid
 * (a target or pending), else 0.  Any context.
 */
static u32 dt_tg_match(const struct dt_tgset *ts, u32 tgid,
		       const struct pid *pid)
{
	u32 i, n, v;

	for (i = dt_tg_hash(tgid, ts->ts_cap), n = 0; n < ts->ts_cap;
	     i = (i + 1) & (ts->ts_cap - 1), n++) {
		v = READ_ONCE(ts->ts_slots[i]);
		if (v == 0)
			return 0;
		if (v != DT_TG_TOMB && (v & ~DT_TG_PENDING) == tgid) {
			smp_rmb();	/* pairs with dt_tg_set's smp_wmb */
			return READ_ONCE(ts->ts_pid[i]) == pid ? v : 0;
		}
	}
	return 0;
}

/* The slot value for tgid (a target or pending), or 0.  Any context. */
static u32 dt_tg_find(const struct dt_tgset *ts, u32 tgid)
{
	u32 i, n, v;

	for (i = dt_tg_hash(tgid, ts->ts_cap), n = 0; n < ts->ts_cap;
	     i = (i + 1) & (ts->ts_cap - 1), n++) {
		v = READ_ONCE(ts->ts_slots[i]);
		if (v == 0)
			return 0;
		if (v != DT_TG_TOMB && (v & ~DT_TG_PENDING) == tgid)
			return v;
	}
	return 0;
}

/*
 * sc_tglock held (or a table nobody reads yet).  Slot i takes val and the
 * reference pid, giving back the one it held.
 */
static void dt_tg_set(struct dt_tgset *ts, u32 i, u32 val, struct pid *pid)
{
	struct pid *old = ts->ts_pid[i];

	WRITE_ONCE(ts->ts_pid[i], pid);
	smp_wmb();	/* the pid before the value: see dt_tg_match */
	WRITE_ONCE(ts->ts_slots[i], val);
	put_pid(old);
}

/* sc_tglock held.  Takes the reference pid; false: no free slot. */
static bool dt_tg_add(struct dt_tgset *ts, u32 val, struct pid *pid)
{
	u32 i, n, v;

	for (i = dt_tg_hash(val & ~DT_TG_PENDING, ts->ts_cap), n = 0;
	     n < ts->ts_cap; i = (i + 1) & (ts->ts_cap - 1), n++) {
		v = ts->ts_slots[i];
		if (v != 0 && v != DT_TG_TOMB)
			continue;
		if (v == 0)
			ts->ts_used++;
		ts->ts_live++;
		dt_tg_set(ts, i, val, pid);
		return true;
	}
	put_pid(pid);
	return false;
}

/* sc_tglock held.  The slot of tgid (target or pending), or NULL. */
static u32 *dt_tg_slot(struct dt_tgset *ts, u32 tgid)
{
	u32 i, n, v;

	for (i = dt_tg_hash(tgid, ts->ts_cap), n = 0; n < ts->ts_cap;
	     i = (i + 1) & (ts->ts_cap - 1), n++) {
		v = ts->ts_slots[i];
		if (v == 0)
			return NULL;
		if (v != DT_TG_TOMB && (v & ~DT_TG_PENDING) == tgid)
			return &ts->ts_slots[i];
	}
	return NULL;
}

static struct dt_tgset *dt_tg_alloc(u32 cap)
{
	struct dt_tgset *ts;

	ts = kvzalloc(struct_size(ts, ts_slots, cap), GFP_KERNEL);
	if (ts == NULL)
		return NULL;
	ts->ts_pid = kvcalloc(cap, sizeof(*ts->ts_pid), GFP_KERNEL);
	if (ts->ts_pid == NULL) {
		kvfree(ts);
		return NULL;
	}
	ts->ts_cap = cap;
	return ts;
}

/* A table no lookup uses any more, with the references it holds. */
static void dt_tg_free(struct dt_tgset *ts)
{
	u32 i;

	if (ts == NULL)
		return;
	for (i = 0; i < ts->ts_cap; i++)
		put_pid(ts->ts_pid[i]);
	kvfree(ts->ts_pid);
	kvfree(ts);
}

/* A table of at least 4 slots per entry, so it starts half empty or less. */
static u32 dt_tg_capfor(u32 n)
{
	u32 cap = DT_TG_MINCAP;

	while (cap < 4 * n && cap < DT_TG_MAXCAP)
		cap <<= 1;
	return cap;
}

bool dt_filter_pass_slow(struct dt_softc *sc, struct task_struct *t)
{
	const struct dt_tgset *ts;
	u32 fl = sc->sc_fflags, v;

	if (!(fl & DTF_SELF) && t->tgid == sc->sc_self)
		return false;
	if ((fl & DTF_COMM) && memcmp(t->comm, sc->sc_fcomm, DT_COMMLEN) != 0)
		return false;
	/* probe context is an RCU reader: the task's css_set stays */
	if ((fl & DTF_CGROUP) &&
	    !task_under_cgroup_hierarchy(t, sc->sc_fcgrp))
		return false;
	if (fl & DTF_PIDS) {
		/* probe context is preemption-disabled: an RCU reader */
		ts = rcu_dereference_sched(sc->sc_tgs);
		if (ts == NULL)
			return false;
		v = dt_tg_match(ts, (u32)t->tgid, task_tgid(t));
		return v != 0 && !(v & DT_TG_PENDING);
	}
	return true;
}

/* ---- following the targets: fork and exec hooks ---- */

/* [g] descriptors recording with a filter to follow (RCU for the hooks) */
static LIST_HEAD(dt_followers);
static struct tracepoint *dt_tp_fork, *dt_tp_exec;	/* [g] registered */

static bool dt_filter_follows(struct dt_softc *sc)
{
	return (sc->sc_fflags & DTF_PIDS) &&
	       ((sc->sc_fflags & DTF_CHILDREN) || sc->sc_fexecpid != 0);
}

/* A target's child the table had no room for: its events are lost. */
static void dt_untracked(struct dt_softc *sc)
{
	struct dt_cpubuf *cb;

	cb = READ_ONCE(sc->sc_bufs[raw_smp_processor_id()]);
	if (cb != NULL)
		atomic_long_inc(&cb->cb_untracked);
}

/* A sweep when the table is half used: ask for it, from any context. */
static void dt_tg_want_sweep(struct dt_softc *sc, struct dt_tgset *ts)
{
	if (ts->ts_used * 2 >= ts->ts_cap)
		schedule_work(&sc->sc_tgsweep);
}

static void dt_filter_fork1(struct dt_softc *sc, struct task_struct *parent,
			    struct task_struct *child)
{
	struct dt_tgset *ts;
	u32 *slot, v;
	u32 ptg = (u32)parent->tgid, ctg = (u32)child->tgid;
	bool follow;

	ts = rcu_dereference_sched(sc->sc_tgs);
	if (ts == NULL)
		return;
	v = dt_tg_match(ts, ptg, task_tgid(parent));
	follow = (sc->sc_fflags & DTF_CHILDREN) && v != 0 &&
		 !(v & DT_TG_PENDING);
	/* the common case, a fork nobody asked about, takes no lock */
	if (!follow && dt_tg_find(ts, ctg) == 0)
		return;
	raw_spin_lock(&sc->sc_tglock);
	ts = rcu_dereference_protected(sc->sc_tgs,
				       lockdep_is_held(&sc->sc_tglock));
	slot = dt_tg_slot(ts, ctg);
	if (follow) {
		struct pid *cp = get_pid(task_tgid(child));

		if (slot != NULL)
			dt_tg_set(ts, (u32)(slot - ts->ts_slots), ctg, cp);
		else if (!dt_tg_add(ts, ctg, cp))
			dt_untracked(sc);
		dt_tg_want_sweep(sc, ts);
	} else if (slot != NULL) {
		/* a gone target's tgid, reused by a process of no target */
		dt_tg_set(ts, (u32)(slot - ts->ts_slots), DT_TG_TOMB, NULL);
		ts->ts_live--;
	}
	raw_spin_unlock(&sc->sc_tglock);
}

static void dt_filter_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	struct dt_softc *sc;

	/* a new thread joins its process: nothing changes */
	if (child->tgid == parent->tgid)
		return;
	list_for_each_entry_rcu(sc, &dt_followers, sc_flink)
		dt_filter_fork1(sc, parent, child);
}

/*
 * p execs: a pending target becomes one.  From sched_process_exec, and
 * earlier, when the new image is committed and before it is mapped, from
 * proc:process:exec (dt_proc.c), so a command's exec and mappings are its
 * own events.  Preemption disabled.
 */
void dt_filter_exec_task(struct task_struct *p)
{
	struct dt_softc *sc;
	struct dt_tgset *ts;
	u32 tg = (u32)p->tgid, *slot;

	list_for_each_entry_rcu(sc, &dt_followers, sc_flink) {
		ts = rcu_dereference_sched(sc->sc_tgs);
		if (ts == NULL ||
		    !(dt_tg_match(ts, tg, task_tgid(p)) & DT_TG_PENDING))
			continue;
		raw_spin_lock(&sc->sc_tglock);
		ts = rcu_dereference_protected(sc->sc_tgs,
					       lockdep_is_held(&sc->sc_tglock));
		slot = dt_tg_slot(ts, tg);
		if (slot != NULL)
			WRITE_ONCE(*slot, tg);
		raw_spin_unlock(&sc->sc_tglock);
	}
}

static void dt_filter_exec(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	dt_filter_exec_task(p);
}

static void __maybe_unused dt_filter_check_types(void)
{
	check_trace_callback_type_sched_process_fork(dt_filter_fork);
	check_trace_callback_type_sched_process_exec(dt_filter_exec);
}

/*
 * Rebuild the table without the processes that are gone (and larger if
 * the live ones fill more than a quarter of it).  Forks meanwhile wait on
 * the lock; lookups go on in the old table until the new one is published
 * and are done with it after synchronize_rcu.
 */
static void dt_tg_sweep(struct work_struct *w)
{
	struct dt_softc *sc = container_of(w, struct dt_softc, sc_tgsweep);
	struct dt_tgset *ts, *nt;
	struct pid *pid;
	u32 i, v, live;
	bool alive;

	mutex_lock(&sc->sc_tgmutex);
	raw_spin_lock(&sc->sc_tglock);
	ts = rcu_dereference_protected(sc->sc_tgs,
				       lockdep_is_held(&sc->sc_tglock));
	live = ts != NULL ? ts->ts_live : 0;
	raw_spin_unlock(&sc->sc_tglock);
	if (ts == NULL) {
		mutex_unlock(&sc->sc_tgmutex);
		return;
	}
	/* room for the forks that come while it is being allocated */
	nt = dt_tg_alloc(dt_tg_capfor(live + 64));
	if (nt == NULL) {
		mutex_unlock(&sc->sc_tgmutex);
		return;
	}
	raw_spin_lock(&sc->sc_tglock);
	rcu_read_lock();
	for (i = 0; i < ts->ts_cap; i++) {
		v = ts->ts_slots[i];
		if (v == 0 || v == DT_TG_TOMB)
			continue;
		/* the very process, not one that got its number since */
		pid = ts->ts_pid[i];
		alive = pid != NULL && pid_task(pid, PIDTYPE_TGID) != NULL;
		/* a pending process has not exec'd yet: it lives */
		if (!alive && !(v & DT_TG_PENDING))
			continue;
		/*
		 * A reference of its own for the new table: the old one keeps
		 * its pid until it is freed, since lookups that took the old
		 * table before the new one is published go on matching in it
		 * locklessly (cleared here, a target's events and its forks
		 * seen meanwhile were filtered: a child lost, uncounted)
		 */
		if (!dt_tg_add(nt, v, get_pid(pid)))
			dt_untracked(sc);
	}
	rcu_read_unlock();
	rcu_assign_pointer(sc->sc_tgs, nt);
	raw_spin_unlock(&sc->sc_tglock);
	/* no lookup runs in the old table any more */
	synchronize_rcu();
	dt_tg_free(ts);
	mutex_unlock(&sc->sc_tgmutex);
}

/*
 * [d] held, not recording: pids in the caller's namespace, to global,
 * with a reference to the process's struct pid in *pidp.
 */
static int dt_filter_tgid(u32 nr, u32 *out, struct pid **pidp)
{
	struct pid *pid;
	int error = 0;

	if (nr == 0 || nr >= PID_MAX_LIMIT)
		return -EINVAL;
	rcu_read_lock();
	pid = find_vpid((int)nr);
	if (pid == NULL || pid_task(pid, PIDTYPE_TGID) == NULL) {
		error = -ESRCH;
	} else {
		*out = (u32)pid_nr(pid);
		*pidp = get_pid(pid);
	}
	rcu_read_unlock();
	return error;
}

int dt_filter_set(struct dt_softc *sc, const struct dt_filter *f)
{
	struct dt_tgset *ts = NULL, *old;
	struct cgroup *cgrp = NULL;
	struct pid *execp = NULL, *pid;
	u32 *pids = NULL, i, tg, execpid = 0;
	char comm[DT_COMMLEN];
	size_t len;
	int error;

	if (f->dtf_flags & ~DTF_ALL)
		return -EINVAL;
	if (!(f->dtf_flags & DTF_CGROUP) && f->dtf_cgroupfd != 0)
		return -EINVAL;
	if (f->dtf_flags & DTF_PIDS) {
		if (f->dtf_npids > DT_FILTER_MAXPIDS ||
		    (f->dtf_npids == 0 && f->dtf_execpid == 0))
			return -EINVAL;
	} else if (f->dtf_npids != 0 || f->dtf_pids != 0 ||
		   f->dtf_execpid != 0 || (f->dtf_flags & DTF_CHILDREN)) {
		return -EINVAL;
	}
	memset(comm, 0, sizeof(comm));
	len = strnlen(f->dtf_comm, DT_COMMLEN);
	if (f->dtf_flags & DTF_COMM) {
		/* a task's comm is NUL-padded (strscpy_pad): compare all 16 */
		if (len == 0 || len == DT_COMMLEN)
			return -EINVAL;
		memcpy(comm, f->dtf_comm, len);
	}
	if (memcmp(comm, f->dtf_comm, DT_COMMLEN) != 0)
		return -EINVAL;	/* bytes past the NUL, or a comm unasked */
	if (sc->sc_recording)
		return -EBUSY;

	if (f->dtf_flags & DTF_CGROUP) {
		cgrp = cgroup_get_from_fd(f->dtf_cgroupfd);
		if (IS_ERR(cgrp))
			return PTR_ERR(cgrp);
	}
	if (f->dtf_flags & DTF_PIDS) {
		if (f->dtf_npids != 0) {
			pids = kvmalloc_array(f->dtf_npids, sizeof(*pids),
					      GFP_KERNEL);
			error = -ENOMEM;
			if (pids == NULL)
				goto out;
			if (copy_from_user(pids, u64_to_user_ptr(f->dtf_pids),
					   f->dtf_npids * sizeof(*pids))) {
				error = -EFAULT;
				goto out;
			}
		}
		if (f->dtf_execpid != 0) {
			error = dt_filter_tgid(f->dtf_execpid, &execpid,
					       &execp);
			if (error)
				goto out;
		}
		ts = dt_tg_alloc(dt_tg_capfor(f->dtf_npids + 1));
		error = -ENOMEM;
		if (ts == NULL)
			goto out;
		/* 4 slots per entry at least: every add finds room */
		for (i = 0; i < f->dtf_npids; i++) {
			error = dt_filter_tgid(pids[i], &tg, &pid);
			if (error)
				goto out;
			if (dt_tg_find(ts, tg) == 0)
				dt_tg_add(ts, tg, pid);
			else
				put_pid(pid);
		}
		/* listed as a target too: it stays one */
		if (execpid != 0 && dt_tg_find(ts, execpid) == 0) {
			dt_tg_add(ts, execpid | DT_TG_PENDING, execp);
			execp = NULL;
		}
	}
	/* not recording: no hook or event looks at the old table */
	mutex_lock(&sc->sc_tgmutex);
	old = rcu_replace_pointer(sc->sc_tgs, ts, true);
	mutex_unlock(&sc->sc_tgmutex);
	ts = old;
	sc->sc_fflags = f->dtf_flags;
	sc->sc_fexecpid = execpid;
	memcpy(sc->sc_fcomm, comm, DT_COMMLEN);
	swap(sc->sc_fcgrp, cgrp);
	error = 0;
out:
	/* the old cgroup, or the new one on failure */
	if (cgrp != NULL)
		cgroup_put(cgrp);
	put_pid(execp);
	dt_tg_free(ts);
	kvfree(pids);
	return error;
}

/*
 * Is p a descendant of a target (real_parent chain)?  RCU read side.
 * Only processes of other thread groups count: threads share the tgid.
 */
static bool dt_tg_descends(const struct dt_tgset *ts, struct task_struct *p)
{
	struct task_struct *a;
	u32 v;

	for (a = rcu_dereference(p->real_parent); a->pid != 0;
	     a = rcu_dereference(a->real_parent)) {
		v = dt_tg_match(ts, (u32)a->tgid, task_tgid(a));
		if (v != 0)
			return !(v & DT_TG_PENDING);
		if (a == rcu_dereference(a->real_parent))
			break;
	}
	return false;
}

/*
 * [d] and [g] held, at start, once the fork hook is in: the processes
 * the targets forked since the filter was set (or before) become targets
 * too.  A fork during the walk is seen by the hook (its parent already in
 * the table) or by the walk (a new task is added at the list's tail).
 */
static void dt_filter_descendants(struct dt_softc *sc)
{
	struct task_struct *p;
	struct dt_tgset *ts;
	bool sweep = false;

	raw_spin_lock(&sc->sc_tglock);
	ts = rcu_dereference_protected(sc->sc_tgs,
				       lockdep_is_held(&sc->sc_tglock));
	rcu_read_lock();
	for_each_process(p) {
		if (ts == NULL || dt_tg_find(ts, (u32)p->tgid) != 0 ||
		    !dt_tg_descends(ts, p))
			continue;
		if (!dt_tg_add(ts, (u32)p->tgid, get_pid(task_tgid(p))))
			dt_untracked(sc);
		sweep = true;
	}
	rcu_read_unlock();
	if (sweep && ts != NULL)
		dt_tg_want_sweep(sc, ts);
	raw_spin_unlock(&sc->sc_tglock);
}

/* [d] and [g] held, at start, before the pcbs are armed */
int dt_filter_start(struct dt_softc *sc)
{
	int error = 0;

	if (!dt_filter_follows(sc))
		return 0;
	if (list_empty(&dt_followers)) {
		dt_tp_fork = dt_tp_find("sched_process_fork");
		dt_tp_exec = dt_tp_find("sched_process_exec");
		if (dt_tp_fork == NULL || dt_tp_exec == NULL)
			return -ENOENT;
		/* before dt's own probes there: an exec event is the target's */
		error = tracepoint_probe_register_prio(dt_tp_fork,
			dt_filter_fork, NULL, TRACEPOINT_DEFAULT_PRIO + 1);
		if (error)
			return error;
		error = tracepoint_probe_register_prio(dt_tp_exec,
			dt_filter_exec, NULL, TRACEPOINT_DEFAULT_PRIO + 1);
		if (error) {
			tracepoint_probe_unregister(dt_tp_fork, dt_filter_fork,
						    NULL);
			return error;
		}
	}
	list_add_rcu(&sc->sc_flink, &dt_followers);
	sc->sc_following = true;
	/* the hook follows forks from now on: those before, by a walk */
	if (sc->sc_fflags & DTF_CHILDREN)
		dt_filter_descendants(sc);
	return 0;
}

/*
 * [d] and [g] held, at stop.  The caller waits for the hooks to finish
 * (tracepoint_synchronize_unregister) before dt_filter_stopped.
 */
void dt_filter_stop(struct dt_softc *sc)
{
	if (!sc->sc_following)
		return;
	list_del_rcu(&sc->sc_flink);
	sc->sc_following = false;
	if (list_empty(&dt_followers)) {
		tracepoint_probe_unregister(dt_tp_exec, dt_filter_exec, NULL);
		tracepoint_probe_unregister(dt_tp_fork, dt_filter_fork, NULL);
	}
}

/* [d] held, no hook can queue a sweep any more */
void dt_filter_stopped(struct dt_softc *sc)
{
	cancel_work_sync(&sc->sc_tgsweep);
}

void dt_filter_init(struct dt_softc *sc)
{
	sc->sc_self = (u32)current->tgid;
	raw_spin_lock_init(&sc->sc_tglock);
	mutex_init(&sc->sc_tgmutex);
	INIT_WORK(&sc->sc_tgsweep, dt_tg_sweep);
	INIT_LIST_HEAD(&sc->sc_flink);
}

/* at close: nothing runs any more */
void dt_filter_free(struct dt_softc *sc)
{
	cancel_work_sync(&sc->sc_tgsweep);
	dt_tg_free(rcu_dereference_protected(sc->sc_tgs, true));
	RCU_INIT_POINTER(sc->sc_tgs, NULL);
	if (sc->sc_fcgrp != NULL)
		cgroup_put(sc->sc_fcgrp);
	sc->sc_fcgrp = NULL;
}
