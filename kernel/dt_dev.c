// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_dev.c - /dev/dt: the probe table, descriptors, ioctls, read and poll.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/rculist.h>
#include <linux/cpumask.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include <linux/cpuhotplug.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/clock.h>
#include <linux/mm.h>

#include "dt.h"

DEFINE_MUTEX(dt_lock);

/* Probe table: ids are index + 1, stable for the module's lifetime. */
static struct dt_probe **dt_probetab;	/* [g] */
static u32 dt_nprobes;			/* [g] */
static u32 dt_probecap;			/* [g] */
/* descriptors open: the last close frees what only they could use */
static unsigned int dt_nopen;		/* [g] */

static void dt_linger(struct work_struct *w)
{
	mutex_lock(&dt_lock);
	dt_syscall_linger();
	dt_tp_linger();
	dt_proc_linger();
	mutex_unlock(&dt_lock);
}

static DECLARE_DELAYED_WORK(dt_linger_work, dt_linger);

/* [g] held */
void dt_linger_schedule(void)
{
	lockdep_assert_held(&dt_lock);
	mod_delayed_work(system_wq, &dt_linger_work, HZ);
}

/* How often a sleeping reader is woken when data is below the watermark */
#define DT_TICK_MS	20

struct dt_probe *dt_probe_new(const struct dt_provider *prov, const char *func,
			      const char *name, u16 nargs, u8 nslots,
			      const struct dt_arg_info *args, u16 flags)
{
	struct dt_probe *dp;

	dp = kzalloc(sizeof(*dp), GFP_KERNEL);
	if (dp == NULL)
		return NULL;
	dp->dp_prov = prov;
	dp->dp_nargs = nargs;
	dp->dp_nslots = nslots;
	dp->dp_args = args;
	dp->dp_flags = flags;
	INIT_LIST_HEAD(&dp->dp_pcbs);
	strscpy(dp->dp_func, func, sizeof(dp->dp_func));
	strscpy(dp->dp_name, name, sizeof(dp->dp_name));
	return dp;
}

/* [g] held.  Makes room for n more probes: their inserts cannot fail. */
int dt_probe_reserve(u32 n)
{
	struct dt_probe **nt;
	u32 ncap;

	lockdep_assert_held(&dt_lock);
	if (dt_nprobes + n > dt_probecap) {
		ncap = max(dt_probecap * 2, dt_nprobes + n);
		ncap = max(ncap, 1024U);
		nt = kvcalloc(ncap, sizeof(*nt), GFP_KERNEL);
		if (nt == NULL)
			return -ENOMEM;
		if (dt_probetab != NULL)
			memcpy(nt, dt_probetab, dt_nprobes * sizeof(*nt));
		kvfree(dt_probetab);
		dt_probetab = nt;
		dt_probecap = ncap;
	}
	return 0;
}

/* [g] held.  Assigns the id. */
int dt_probe_insert(struct dt_probe *dp)
{
	int error;

	error = dt_probe_reserve(1);
	if (error)
		return error;
	dt_probetab[dt_nprobes] = dp;
	dp->dp_id = ++dt_nprobes;
	return 0;
}

/* [g] held */
struct dt_probe *dt_probe_lookup(u32 id)
{
	if (id == 0 || id > dt_nprobes || dt_probetab[id - 1]->dp_dead)
		return NULL;
	return dt_probetab[id - 1];
}

u32 dt_probe_count(void)
{
	return dt_nprobes;
}

void dt_probes_free(void)
{
	u32 i;

	for (i = 0; i < dt_nprobes; i++)
		kfree(dt_probetab[i]);
	kvfree(dt_probetab);
	dt_probetab = NULL;
	dt_nprobes = dt_probecap = 0;
}

/* ---- descriptors ---- */

/* Recording into rings that overwrite and are not frozen: no reading. */
static bool dt_overwriting(struct dt_softc *sc)
{
	return READ_ONCE(sc->sc_recording) &&
	       READ_ONCE(sc->sc_rmode) == DT_RING_OVERWRITE &&
	       !READ_ONCE(sc->sc_frozen);
}

static bool dt_readable(struct dt_softc *sc)
{
	struct dt_cpubuf *cb;
	unsigned int cpu;

	if (!READ_ONCE(sc->sc_recording))
		return true;	/* read() returns what is left, then EOF */
	if (READ_ONCE(sc->sc_rmode) == DT_RING_OVERWRITE)
		return true;	/* read() returns EBUSY, or the dump */
	for_each_possible_cpu(cpu) {
		cb = READ_ONCE(sc->sc_bufs[cpu]);
		if (cb != NULL && dtr_avail(&cb->cb_ring) != 0)
			return true;
	}
	return false;
}

static bool dt_hasdata(struct dt_softc *sc)
{
	struct dt_cpubuf *cb;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		cb = READ_ONCE(sc->sc_bufs[cpu]);
		if (cb != NULL && dtr_avail(&cb->cb_ring) != 0)
			return true;
	}
	return false;
}

/*
 * The backup tick runs only while a reader waits (a blocked read, a poll,
 * an epoll registration): it is armed when one starts waiting and re-arms
 * itself only while somebody still does.
 */
static void dt_tick(struct timer_list *t)
{
	struct dt_softc *sc = from_timer(sc, t, sc_tick);

	if (!wq_has_sleeper(&sc->sc_wq))
		return;
	if (dt_hasdata(sc))
		wake_up_interruptible(&sc->sc_wq);
	if (READ_ONCE(sc->sc_recording))
		mod_timer(&sc->sc_tick, jiffies + msecs_to_jiffies(DT_TICK_MS));
}

static void dt_tick_arm(struct dt_softc *sc)
{
	if (READ_ONCE(sc->sc_recording) && !timer_pending(&sc->sc_tick))
		mod_timer(&sc->sc_tick, jiffies + msecs_to_jiffies(DT_TICK_MS));
}

/*
 * Ring memory of all descriptors together is bounded: a quarter of RAM.
 * Each ring is charged to its opener's memory cgroup and, at the start
 * that allocates it, to its mm's locked_vm like perf's mmapped rings
 * (within RLIMIT_MEMLOCK unless CAP_IPC_LOCK).
 */
static atomic_long_t dt_ring_pages = ATOMIC_LONG_INIT(0);
static int dt_buf_hp = -1;	/* [I] hotplug state of the rings */

static unsigned long dt_ring_pages_max(void)
{
	return totalram_pages() / 4;
}

/* The user stack copy buffers count against the same bound (dt.h). */
int dt_mem_charge(unsigned long pages)
{
	if (atomic_long_add_return(pages, &dt_ring_pages) > dt_ring_pages_max()) {
		atomic_long_sub(pages, &dt_ring_pages);
		return -ENOMEM;
	}
	return 0;
}

void dt_mem_uncharge(unsigned long pages)
{
	atomic_long_sub(pages, &dt_ring_pages);
}

/* What sc's rings do when full (dt_ring.h), from its ioctls' state. */
static unsigned long dt_rmode(struct dt_softc *sc)
{
	if (READ_ONCE(sc->sc_rmode) == DT_RING_DROP)
		return DTR_MODE_DROP;
	return READ_ONCE(sc->sc_frozen) ? DTR_MODE_FROZEN : DTR_MODE_OVERWRITE;
}

/* [d] held: every ring of sc takes the mode of sc's state */
static void dt_rmode_apply(struct dt_softc *sc)
{
	struct dt_cpubuf *cb;
	unsigned int cpu;

	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		cb = READ_ONCE(sc->sc_bufs[cpu]);
		if (cb != NULL)
			dtr_store_once(&cb->cb_ring.r_mode, dt_rmode(sc));
	}
	cpus_read_unlock();
}

/*
 * A CPU is online (or the first start adds this descriptor): give it a
 * ring.  Runs on that CPU's hotplug thread, so current is a kernel thread:
 * the opener's memory cgroup is charged explicitly.  A failure leaves the
 * CPU without a ring (dt_start checks the online ones) rather than failing
 * the CPU's bring-up.
 */
static int dt_buf_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct dt_softc *sc = hlist_entry(node, struct dt_softc, sc_hpnode);
	/*
	 * Once: the pages charged, allocated and freed must be one size
	 * (DTIOCSETBUFSZ is refused once this instance exists, and a size
	 * read twice could still differ under a racing ioctl).
	 */
	u32 bufsz = READ_ONCE(sc->sc_bufsz);
	unsigned long pages = bufsz >> PAGE_SHIFT;
	struct mem_cgroup *old;
	struct dt_cpubuf *cb;
	void *data;

	if (sc->sc_bufs[cpu] != NULL)
		return 0;
	if (atomic_long_add_return(pages, &dt_ring_pages) > dt_ring_pages_max()) {
		atomic_long_sub(pages, &dt_ring_pages);
		pr_warn_ratelimited("dt: ring memory limit reached, cpu %u has no ring\n",
				    cpu);
		return 0;
	}
	old = set_active_memcg(sc->sc_memcg);
	cb = kzalloc_node(sizeof(*cb), GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
	/* on cpu itself: the default policy makes this node-local */
	data = __vmalloc(bufsz, GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (cb == NULL || data == NULL) {
		kfree(cb);
		vfree(data);
		atomic_long_sub(pages, &dt_ring_pages);
		return 0;
	}
	dtr_init(&cb->cb_ring, data, bufsz);
	dtr_store_once(&cb->cb_ring.r_mode, dt_rmode(sc));
	local_set(&cb->cb_wakepos, 0);
	local_set(&cb->cb_missed, 0);
	local_set(&cb->cb_throttled, 0);
	local_set(&cb->cb_filtered, 0);
	atomic_long_set(&cb->cb_untracked, 0);
	init_irq_work(&cb->cb_wake, dt_wake);
	cb->cb_sc = sc;
	/*
	 * Readers (probe context, stats, read) load the pointer with
	 * READ_ONCE and dereference it: the release orders the
	 * initialisation above before the pointer becomes visible.
	 */
	smp_store_release(&sc->sc_bufs[cpu], cb);
	return 0;
}

static int dt_open(struct inode *inode, struct file *file)
{
	struct dt_softc *sc;

	if (!perfmon_capable())
		return -EPERM;
	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (sc == NULL)
		return -ENOMEM;
	sc->sc_bufs = kcalloc(nr_cpu_ids, sizeof(*sc->sc_bufs), GFP_KERNEL);
	sc->sc_noring = kcalloc(nr_cpu_ids, sizeof(*sc->sc_noring), GFP_KERNEL);
	if (sc->sc_bufs == NULL || sc->sc_noring == NULL) {
		kfree(sc->sc_bufs);
		kfree(sc->sc_noring);
		kfree(sc);
		return -ENOMEM;
	}
	mutex_init(&sc->sc_lock);
	mutex_init(&sc->sc_rlock);
	INIT_LIST_HEAD(&sc->sc_pcbs);
	sc->sc_bufsz = DT_BUFSZ_DEFAULT;
	sc->sc_ustack = DT_USTACK_DEFAULT;
	if (current->mm != NULL) {
		sc->sc_mm = current->mm;
		mmgrab(sc->sc_mm);
		sc->sc_memcg = get_mem_cgroup_from_mm(sc->sc_mm);
	}
	init_waitqueue_head(&sc->sc_wq);
	timer_setup(&sc->sc_tick, dt_tick, 0);
	dt_filter_init(sc);
	file->private_data = sc;
	mutex_lock(&dt_lock);
	dt_nopen++;
	mutex_unlock(&dt_lock);
	return 0;
}

/* [d] held.  Rings for every online CPU, charged to the opener. */
static int dt_bufs_alloc(struct dt_softc *sc)
{
	unsigned long pages;
	unsigned int cpu;
	int error = 0;

	if (!sc->sc_hpadded) {
		pages = (sc->sc_bufsz >> PAGE_SHIFT) * num_online_cpus();
		if (sc->sc_mm != NULL && sc->sc_locked == 0) {
			error = account_locked_vm(sc->sc_mm, pages, true);
			if (error)
				return error;
			sc->sc_locked = pages;
		}
		error = cpuhp_state_add_instance(dt_buf_hp, &sc->sc_hpnode);
		if (error)
			return error;
		sc->sc_hpadded = true;
	}
	/* a CPU whose ring could not be allocated would lose events unseen */
	cpus_read_lock();
	for_each_online_cpu(cpu)
		if (sc->sc_bufs[cpu] == NULL)
			error = -ENOMEM;
	cpus_read_unlock();
	return error;
}

/* Only once nothing can write or wake: after dt_stop or before start. */
static void dt_bufs_free(struct dt_softc *sc)
{
	unsigned int cpu;

	if (sc->sc_hpadded)
		cpuhp_state_remove_instance_nocalls(dt_buf_hp, &sc->sc_hpnode);
	sc->sc_hpadded = false;
	for_each_possible_cpu(cpu) {
		struct dt_cpubuf *cb = sc->sc_bufs[cpu];

		if (cb == NULL)
			continue;
		irq_work_sync(&cb->cb_wake);
		atomic_long_sub(cb->cb_ring.r_size >> PAGE_SHIFT,
				&dt_ring_pages);
		vfree(cb->cb_ring.r_data);
		kfree(cb);
		sc->sc_bufs[cpu] = NULL;
	}
	if (sc->sc_locked != 0)
		account_locked_vm(sc->sc_mm, sc->sc_locked, false);
	sc->sc_locked = 0;
}

/*
 * [d] held, nothing writes sc's rings any more: charge the source losses
 * no later event of their probe picked up (dt_missed) to the first ring.
 */
static void dt_missed_sweep(struct dt_softc *sc)
{
	struct dt_cpubuf *cb = NULL;
	struct dt_pcb *pcb;
	unsigned long cur, seen;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		cb = sc->sc_bufs[cpu];
		if (cb != NULL)
			break;
	}
	if (cb == NULL)
		return;
	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink) {
		if (pcb->pcb_probe->dp_prov->dtpv_missed == NULL)
			continue;
		cur = pcb->pcb_probe->dp_prov->dtpv_missed(pcb->pcb_probe);
		seen = atomic_long_xchg(&pcb->pcb_missed_seen, cur);
		local_add((long)(cur - seen), &cb->cb_missed);
	}
}

/* [d] held, not [g]: what dtpv_prepare did for sc's pcbs, undone */
static void dt_unprepare(struct dt_softc *sc)
{
	struct dt_pcb *pcb;

	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink) {
		if (!pcb->pcb_prepared)
			continue;
		pcb->pcb_probe->dp_prov->dtpv_unprepare(pcb);
		pcb->pcb_prepared = false;
	}
}

/*
 * [d] held, not [g]: the providers' slow part of arming (dtpv_prepare),
 * outside the global lock, so that one descriptor's probe on a file that
 * is slow to read (FUSE) stalls no other descriptor's start, stop,
 * enable or close.  All or none.
 */
static int dt_prepare(struct dt_softc *sc)
{
	struct dt_pcb *pcb;
	int error;

	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink) {
		if (pcb->pcb_probe->dp_prov->dtpv_prepare == NULL)
			continue;
		error = pcb->pcb_probe->dp_prov->dtpv_prepare(pcb);
		if (error) {
			dt_unprepare(sc);
			return error;
		}
		pcb->pcb_prepared = true;
	}
	return 0;
}

/* [d] held */
static void dt_stop(struct dt_softc *sc)
{
	struct dt_pcb *pcb;
	unsigned int cpu;

	if (!sc->sc_recording)
		return;
	mutex_lock(&dt_lock);
	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink) {
		if (!pcb->pcb_armed)
			continue;
		/* the provider stops its source first (timers, kprobes) */
		pcb->pcb_probe->dp_prov->dtpv_disarm(pcb);
		list_del_rcu(&pcb->pcb_plink);
		pcb->pcb_probe->dp_narmed--;
		pcb->pcb_armed = false;
	}
	dt_filter_stop(sc);
	mutex_unlock(&dt_lock);
	/* no probe context still walks our pcbs or writes our rings */
	tracepoint_synchronize_unregister();
	dt_unprepare(sc);
	dt_filter_stopped(sc);
	dt_missed_sweep(sc);
	WRITE_ONCE(sc->sc_recording, false);
	del_timer_sync(&sc->sc_tick);
	for_each_possible_cpu(cpu)
		if (sc->sc_bufs[cpu] != NULL)
			irq_work_sync(&sc->sc_bufs[cpu]->cb_wake);
	wake_up_interruptible_all(&sc->sc_wq);
}

/* [d] held */
static int dt_start(struct dt_softc *sc)
{
	struct dt_pcb *pcb;
	int error;

	if (sc->sc_recording)
		return -EBUSY;
	if (list_empty(&sc->sc_pcbs))
		return -ENOENT;
	/*
	 * the largest record of each probe, with its stack copy and path,
	 * must fit a drained ring (dt_ring.h)
	 */
	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink) {
		size_t max = DT_REC_SIZE(DT_MAXARGS, DT_MAXFRAMES,
					 DT_MAXFRAMES);

		if (pcb->pcb_evtflags & DTEVT_UREGS)
			max = DT_REC_MAXSIZE(sc->sc_ustack);
		if (pcb->pcb_probe->dp_flags & DT_PF_PATH)
			max += sizeof(struct dt_path) + DT_PATHMAX;
		if (max > sc->sc_bufsz / 2)
			return -EMSGSIZE;
	}
	error = dt_bufs_alloc(sc);
	if (error)
		return error;
	/* nothing is armed yet: a probe prepared early records nothing */
	error = dt_prepare(sc);
	if (error)
		return error;
	/*
	 * Under the read lock: a read() of what an earlier recording left
	 * may still be copying (stalled in copy_to_user on a faulting
	 * buffer) and will store its tail when it resumes.  In overwrite
	 * mode the writers own tail from the first event on, so no copy
	 * may be under way once they can run (dt_read checks
	 * dt_overwriting under the same lock).
	 */
	if (mutex_lock_interruptible(&sc->sc_rlock)) {
		dt_unprepare(sc);
		return -ERESTARTSYS;
	}
	/* a recording starts thawed; frozen is a dump's state */
	WRITE_ONCE(sc->sc_frozen, false);
	dt_rmode_apply(sc);
	WRITE_ONCE(sc->sc_recording, true);
	mutex_unlock(&sc->sc_rlock);
	mutex_lock(&dt_lock);
	/* the targets' forks are followed from before the first event */
	error = dt_filter_start(sc);
	if (error) {
		mutex_unlock(&dt_lock);
		WRITE_ONCE(sc->sc_recording, false);
		dt_unprepare(sc);
		return error;
	}
	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink) {
		/* the source's earlier losses are not ours */
		if (pcb->pcb_probe->dp_prov->dtpv_missed != NULL)
			atomic_long_set(&pcb->pcb_missed_seen,
			    pcb->pcb_probe->dp_prov->dtpv_missed(pcb->pcb_probe));
		/* on the list before the source starts: no event is lost */
		list_add_tail_rcu(&pcb->pcb_plink, &pcb->pcb_probe->dp_pcbs);
		pcb->pcb_probe->dp_narmed++;
		pcb->pcb_armed = true;
		error = pcb->pcb_probe->dp_prov->dtpv_arm(pcb);
		if (error) {
			list_del_rcu(&pcb->pcb_plink);
			pcb->pcb_probe->dp_narmed--;
			pcb->pcb_armed = false;
			break;
		}
	}
	mutex_unlock(&dt_lock);
	if (error) {
		dt_stop(sc);
		return error;
	}
	/* a poller that saw a stopped descriptor (EPOLLHUP) looks again */
	wake_up_interruptible_all(&sc->sc_wq);
	return 0;
}

static int dt_release(struct inode *inode, struct file *file)
{
	struct dt_softc *sc = file->private_data;
	struct dt_pcb *pcb, *tmp;
	unsigned int ucopies = 0;

	mutex_lock(&sc->sc_lock);
	dt_stop(sc);
	mutex_lock(&dt_lock);
	list_for_each_entry_safe(pcb, tmp, &sc->sc_pcbs, pcb_slink) {
		pcb->pcb_probe->dp_nref--;
		list_del(&pcb->pcb_slink);
		ucopies += !!(pcb->pcb_evtflags & DTEVT_UREGS);
		kfree(pcb);
	}
	/*
	 * Uprobe sites hold their files' mounts: with no descriptor left
	 * nobody can enable them, so let the mounts go.
	 */
	if (--dt_nopen == 0)
		dt_uprobe_idle();
	mutex_unlock(&dt_lock);
	mutex_unlock(&sc->sc_lock);
	/* stopped above: none of them is armed */
	while (ucopies-- != 0)
		dt_ucopy_put();
	del_timer_sync(&sc->sc_tick);
	dt_filter_free(sc);
	dt_bufs_free(sc);
	mem_cgroup_put(sc->sc_memcg);
	if (sc->sc_mm != NULL)
		mmdrop(sc->sc_mm);
	kfree(sc->sc_bufs);
	kfree(sc->sc_noring);
	kfree(sc);
	return 0;
}

/* ---- ioctls ---- */

static void dt_probe_info(struct dt_probe *dp, struct dt_probe_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->dtpi_id = dp->dp_id;
	pi->dtpi_nargs = dp->dp_nargs;
	pi->dtpi_flags = dp->dp_flags;
	strscpy(pi->dtpi_prov, dp->dp_prov->dtpv_name, sizeof(pi->dtpi_prov));
	strscpy(pi->dtpi_func, dp->dp_func, sizeof(pi->dtpi_func));
	strscpy(pi->dtpi_name, dp->dp_name, sizeof(pi->dtpi_name));
}

static int dt_ioc_plist(void __user *arg)
{
	struct dt_probe_list pl;
	struct dt_probe_info pi;
	struct dt_probe_info __user *up;
	u32 i, n;
	int error = 0;

	if (copy_from_user(&pl, arg, sizeof(pl)))
		return -EFAULT;
	if (pl.dtpl_pad != 0)
		return -EINVAL;
	up = u64_to_user_ptr(pl.dtpl_probes);
	/*
	 * The copies are not under dt_lock: a fault on the user buffer
	 * (userfaultfd) must not stall every other descriptor.  Probe
	 * structures are never freed and ids never reused while the module
	 * is loaded; freed kprobes' probes are dead and not listed.
	 */
	n = 0;
	for (i = 0;; i++) {
		bool live;

		mutex_lock(&dt_lock);
		if (i >= dt_nprobes) {
			mutex_unlock(&dt_lock);
			break;
		}
		live = !dt_probetab[i]->dp_dead;
		if (live)
			dt_probe_info(dt_probetab[i], &pi);
		mutex_unlock(&dt_lock);
		if (!live)
			continue;
		if (n < pl.dtpl_count && copy_to_user(&up[n], &pi, sizeof(pi))) {
			error = -EFAULT;
			break;
		}
		n++;
	}
	pl.dtpl_count = n;
	if (error)
		return error;
	if (copy_to_user(arg, &pl, sizeof(pl)))
		return -EFAULT;
	return 0;
}

static int dt_ioc_args(void __user *arg)
{
	struct dt_probe_args pa;
	struct dt_probe *dp;
	u32 id;

	if (get_user(id, (u32 __user *)arg))
		return -EFAULT;
	memset(&pa, 0, sizeof(pa));
	mutex_lock(&dt_lock);
	dp = dt_probe_lookup(id);
	if (dp == NULL) {
		mutex_unlock(&dt_lock);
		return -ENOENT;
	}
	pa.dtpa_id = id;
	pa.dtpa_nargs = dp->dp_nargs;
	if (dp->dp_nargs != 0)
		memcpy(pa.dtpa_args, dp->dp_args,
		       dp->dp_nargs * sizeof(pa.dtpa_args[0]));
	mutex_unlock(&dt_lock);
	if (copy_to_user(arg, &pa, sizeof(pa)))
		return -EFAULT;
	return 0;
}

static void dt_cpu_stats(struct dt_softc *sc, unsigned int cpu,
			 struct dt_stats *st)
{
	struct dt_cpubuf *cb = READ_ONCE(sc->sc_bufs[cpu]);
	u64 noring = atomic_long_read(&sc->sc_noring[cpu]);
	struct dt_ring *r;
	u64 lost;

	memset(st, 0, sizeof(*st));
	/* events of a CPU that had no ring: produced and dropped, no more */
	st->dtst_produced = noring;
	st->dtst_dropped = noring;
	if (cb == NULL)
		return;
	r = &cb->cb_ring;
	st->dtst_missed = local_read(&cb->cb_missed);
	st->dtst_throttled = local_read(&cb->cb_throttled);
	/* events the ring never saw are produced and dropped all the same */
	lost = st->dtst_missed + st->dtst_throttled + noring;
	st->dtst_produced = dtr_lread(&r->r_produced) + lost;
	st->dtst_read = READ_ONCE(r->r_read);
	st->dtst_dropped = dtr_lread(&r->r_dropped) + lost;
	st->dtst_skipped = dtr_lread(&r->r_skipped);
	st->dtst_recursive = dtr_lread(&r->r_recursive);
	st->dtst_nested = dtr_lread(&r->r_nested);
	st->dtst_overwritten = dtr_lread(&r->r_overwritten);
	st->dtst_resets = dtr_lread(&r->r_reset) + READ_ONCE(r->r_rreset);
	st->dtst_filtered = local_read(&cb->cb_filtered);
	st->dtst_untracked = atomic_long_read(&cb->cb_untracked);
}

static int dt_ioc_stats(struct dt_softc *sc, void __user *arg)
{
	struct dt_stats sum, st;
	unsigned int cpu;

	memset(&sum, 0, sizeof(sum));
	for_each_possible_cpu(cpu) {
		dt_cpu_stats(sc, cpu, &st);
		sum.dtst_produced += st.dtst_produced;
		sum.dtst_read += st.dtst_read;
		sum.dtst_dropped += st.dtst_dropped;
		sum.dtst_skipped += st.dtst_skipped;
		sum.dtst_recursive += st.dtst_recursive;
		sum.dtst_nested += st.dtst_nested;
		sum.dtst_missed += st.dtst_missed;
		sum.dtst_throttled += st.dtst_throttled;
		sum.dtst_overwritten += st.dtst_overwritten;
		sum.dtst_filtered += st.dtst_filtered;
		sum.dtst_untracked += st.dtst_untracked;
		sum.dtst_resets += st.dtst_resets;
	}
	if (copy_to_user(arg, &sum, sizeof(sum)))
		return -EFAULT;
	return 0;
}

static int dt_ioc_cpustats(struct dt_softc *sc, void __user *arg)
{
	struct dt_cpu_stats cs;
	struct dt_stats st;
	struct dt_stats __user *up;
	unsigned int cpu, n;

	if (copy_from_user(&cs, arg, sizeof(cs)))
		return -EFAULT;
	if (cs.dtcs_pad != 0)
		return -EINVAL;
	up = u64_to_user_ptr(cs.dtcs_stats);
	n = min_t(unsigned int, cs.dtcs_ncpus, nr_cpu_ids);
	for (cpu = 0; cpu < n; cpu++) {
		if (cpu_possible(cpu))
			dt_cpu_stats(sc, cpu, &st);
		else
			memset(&st, 0, sizeof(st));
		if (copy_to_user(&up[cpu], &st, sizeof(st)))
			return -EFAULT;
	}
	cs.dtcs_ncpus = nr_cpu_ids;
	if (copy_to_user(arg, &cs, sizeof(cs)))
		return -EFAULT;
	return 0;
}

static struct dt_pcb *dt_pcb_find(struct dt_softc *sc, struct dt_probe *dp)
{
	struct dt_pcb *pcb;

	list_for_each_entry(pcb, &sc->sc_pcbs, pcb_slink)
		if (pcb->pcb_probe == dp)
			return pcb;
	return NULL;
}

/*
 * Kernel lockdown: kprobes need LOCKDOWN_KPROBES, and what perf refuses
 * under LOCKDOWN_PERF (kernel addresses; here kernel stacks, and copies of
 * user memory with the user registers) is refused too.  Checked at every
 * enable, not only when a probe is made: lockdown can be raised at run
 * time.  The perf LSM hooks (security_perf_event_open) are not exported to
 * modules; perfmon_capable() at open and at each privileged ioctl stands
 * for their capability check.
 */
static int dt_lockdown_check(struct dt_probe *dp, u32 evtflags)
{
	int error;

	if (dp->dp_prov->dtpv_lockdown != LOCKDOWN_NONE) {
		error = security_locked_down(dp->dp_prov->dtpv_lockdown);
		if (error)
			return error;
	}
	if (evtflags & (DTEVT_KSTACK | DTEVT_UREGS))
		return security_locked_down(LOCKDOWN_PERF);
	return 0;
}

static int dt_ioc_enable1(struct dt_softc *sc, struct dt_probe *dp,
			  struct dt_enable *enp, bool on)
{
	struct dt_enable en = *enp;
	struct dt_pcb *pcb;
	u64 period;

	if (sc->sc_recording)
		return -EBUSY;
	pcb = dt_pcb_find(sc, dp);
	if (!on) {
		if (pcb == NULL)
			return -ENOENT;
		list_del(&pcb->pcb_slink);
		/* not recording: never armed since the last stop */
		if (pcb->pcb_evtflags & DTEVT_UREGS)
			dt_ucopy_put();
		kfree(pcb);
		return 0;
	}
	if (en.dten_evtflags & ~DTEVT_VALID)
		return -EINVAL;
	period = en.dten_period_ns;
	if (dp->dp_flags & DT_PF_TIMER) {
		if (period == 0)
			period = dp->dp_defperiod;
		if (period < DT_PERIOD_MIN_NS || period > DT_PERIOD_MAX_NS)
			return -EINVAL;
	} else if (period != 0) {
		return -EINVAL;
	}
	if (pcb != NULL)
		return -EEXIST;
	{
		int error = dt_lockdown_check(dp, en.dten_evtflags);

		if (error)
			return error;
	}
	if (en.dten_evtflags & DTEVT_UREGS) {
		int error = dt_ucopy_get();

		if (error)
			return error;
	}
	pcb = kzalloc(sizeof(*pcb), GFP_KERNEL);
	if (pcb == NULL) {
		if (en.dten_evtflags & DTEVT_UREGS)
			dt_ucopy_put();
		return -ENOMEM;
	}
	pcb->pcb_probe = dp;
	pcb->pcb_sc = sc;
	pcb->pcb_evtflags = en.dten_evtflags;
	pcb->pcb_period = period;
	INIT_LIST_HEAD(&pcb->pcb_plink);
	list_add_tail(&pcb->pcb_slink, &sc->sc_pcbs);
	return 0;
}

/*
 * dp_nref counts the pcbs of a probe on all descriptors: a kprobe with
 * none may be freed (dt_kprobe_create), so the count is taken with the
 * lookup, under dt_lock, before the pcb exists.
 */
static int dt_ioc_enable(struct dt_softc *sc, void __user *arg, bool on)
{
	struct dt_enable en;
	struct dt_probe *dp;
	int error;

	if (copy_from_user(&en, arg, sizeof(en)))
		return -EFAULT;
	mutex_lock(&dt_lock);
	dp = dt_probe_lookup(en.dten_id);
	if (dp != NULL && on)
		dp->dp_nref++;
	mutex_unlock(&dt_lock);
	if (dp == NULL)
		return -ENOENT;
	error = dt_ioc_enable1(sc, dp, &en, on);
	if ((on && error) || (!on && !error)) {
		mutex_lock(&dt_lock);
		dp->dp_nref--;
		mutex_unlock(&dt_lock);
	}
	return error;
}

static int dt_ioc_bufsz(struct dt_softc *sc, void __user *arg)
{
	unsigned int cpu;
	u32 sz;

	if (get_user(sz, (u32 __user *)arg))
		return -EFAULT;
	if (sc->sc_recording)
		return -EINVAL;
	if (sz < DT_BUFSZ_MIN || sz > DT_BUFSZ_MAX || (sz & (sz - 1)) != 0)
		return -EINVAL;
	/*
	 * The rings keep their size (and counters) once allocated, and a
	 * CPU coming online gets one of the size the others have: fixed
	 * from the first start (the hotplug instance) on, even where no
	 * ring could be allocated.
	 */
	if (sc->sc_hpadded)
		return sz == sc->sc_bufsz ? 0 : -EBUSY;
	for_each_possible_cpu(cpu)
		if (sc->sc_bufs[cpu] != NULL)
			return sz == sc->sc_bufsz ? 0 : -EBUSY;
	WRITE_ONCE(sc->sc_bufsz, sz);
	return 0;
}

static int dt_ioc_ustack(struct dt_softc *sc, void __user *arg)
{
	u32 sz;

	if (get_user(sz, (u32 __user *)arg))
		return -EFAULT;
	if (sc->sc_recording)
		return -EBUSY;
	if (sz < DT_USTACK_MIN || sz > DT_USTACK_MAX || (sz & 7) != 0)
		return -EINVAL;
	sc->sc_ustack = sz;
	return 0;
}

static int dt_ioc_clock(void __user *arg)
{
	struct dt_clock ck;
	u64 m0, m1;
	s64 real;

	/*
	 * Bracket the realtime read: the pair is off by half the gap.  One
	 * CPU throughout: local_clock() is read per CPU.
	 */
	preempt_disable();
	m0 = local_clock();
	real = ktime_get_real_ns();
	m1 = local_clock();
	preempt_enable();
	ck.dtck_mono_ns = m0 + (m1 - m0) / 2;
	ck.dtck_real_ns = real;
	if (copy_to_user(arg, &ck, sizeof(ck)))
		return -EFAULT;
	return 0;
}

static int dt_ioc_filter(struct dt_softc *sc, void __user *arg)
{
	struct dt_filter f;

	if (copy_from_user(&f, arg, sizeof(f)))
		return -EFAULT;
	return dt_filter_set(sc, &f);
}

static int dt_ioc_rmode(struct dt_softc *sc, void __user *arg)
{
	u32 mode;

	if (get_user(mode, (u32 __user *)arg))
		return -EFAULT;
	if (mode != DT_RING_DROP && mode != DT_RING_OVERWRITE)
		return -EINVAL;
	if (sc->sc_recording)
		return -EBUSY;
	WRITE_ONCE(sc->sc_rmode, mode);
	WRITE_ONCE(sc->sc_frozen, false);
	dt_rmode_apply(sc);
	return 0;
}

/*
 * [d] held.  Freeze: once every ring drops new events, wait until no
 * writer that saw the old mode can still be inside (probe context is
 * preemption-disabled), so that the reader owns tail.  Thaw: under the
 * read lock, so that no read() is copying when writers take tail back.
 */
static int dt_ioc_freeze(struct dt_softc *sc, void __user *arg)
{
	u32 v;

	if (get_user(v, (u32 __user *)arg))
		return -EFAULT;
	if (v > 1 || sc->sc_rmode != DT_RING_OVERWRITE)
		return -EINVAL;
	if (v == sc->sc_frozen)
		return 0;
	if (v) {
		WRITE_ONCE(sc->sc_frozen, true);
		dt_rmode_apply(sc);
		synchronize_rcu();
		/* readable now, the dump or its end: a poller may sleep on it */
		wake_up_interruptible_all(&sc->sc_wq);
		return 0;
	}
	if (mutex_lock_interruptible(&sc->sc_rlock))
		return -ERESTARTSYS;
	WRITE_ONCE(sc->sc_frozen, false);
	dt_rmode_apply(sc);
	mutex_unlock(&sc->sc_rlock);
	/* its state changed: pollers look again */
	wake_up_interruptible_all(&sc->sc_wq);
	return 0;
}

static int dt_ioc_uprobe(void __user *arg)
{
	struct dt_uprobe up;
	int error;

	if (copy_from_user(&up, arg, sizeof(up)))
		return -EFAULT;
	error = dt_uprobe_create(&up);
	if (error)
		return error;
	if (copy_to_user(arg, &up, sizeof(up)))
		return -EFAULT;
	return 0;
}

static int dt_ioc_kprobe(void __user *arg)
{
	struct dt_kprobe kp;
	int error;

	if (copy_from_user(&kp, arg, sizeof(kp)))
		return -EFAULT;
	error = dt_kprobe_create(&kp);
	if (error)
		return error;
	if (copy_to_user(arg, &kp, sizeof(kp)))
		return -EFAULT;
	return 0;
}

static long dt_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	struct dt_softc *sc = file->private_data;
	void __user *arg = (void __user *)uarg;
	u32 v;
	long error;

	/* the ones that need no descriptor state */
	switch (cmd) {
	case DTIOCGVERSION:
		return put_user((u32)DT_ABI_VERSION, (u32 __user *)arg);
	case DTIOCGPLIST:
		return dt_ioc_plist(arg);
	case DTIOCGARGS:
		return dt_ioc_args(arg);
	case DTIOCGCLOCK:
		return dt_ioc_clock(arg);
	case DTIOCKPROBE:
		/* a descriptor can be passed on: the holder must qualify too */
		if (!perfmon_capable())
			return -EPERM;
		return dt_ioc_kprobe(arg);
	case DTIOCUPROBE:
		if (!perfmon_capable())
			return -EPERM;
		return dt_ioc_uprobe(arg);
	case DTIOCGSTATS:
	case DTIOCGCPUSTATS:
	case DTIOCPRBDISABLE:
		break;
	case DTIOCRECORD:
	case DTIOCPRBENABLE:
	case DTIOCSETBUFSZ:
	case DTIOCSETUSTACK:
	case DTIOCSETFILTER:
	case DTIOCSETRMODE:
	case DTIOCFREEZE:
		if (!perfmon_capable())
			return -EPERM;
		break;
	default:
		return -ENOTTY;
	}

	mutex_lock(&sc->sc_lock);
	switch (cmd) {
	case DTIOCGSTATS:
		error = dt_ioc_stats(sc, arg);
		break;
	case DTIOCGCPUSTATS:
		error = dt_ioc_cpustats(sc, arg);
		break;
	case DTIOCRECORD:
		error = get_user(v, (u32 __user *)arg);
		if (error)
			break;
		if (v == 1)
			error = dt_start(sc);
		else if (v == 0)
			dt_stop(sc);
		else
			error = -EINVAL;
		break;
	case DTIOCPRBENABLE:
		error = dt_ioc_enable(sc, arg, true);
		break;
	case DTIOCPRBDISABLE:
		error = dt_ioc_enable(sc, arg, false);
		break;
	case DTIOCSETBUFSZ:
		error = dt_ioc_bufsz(sc, arg);
		break;
	case DTIOCSETUSTACK:
		error = dt_ioc_ustack(sc, arg);
		break;
	case DTIOCSETFILTER:
		error = dt_ioc_filter(sc, arg);
		break;
	case DTIOCSETRMODE:
		error = dt_ioc_rmode(sc, arg);
		break;
	case DTIOCFREEZE:
		error = dt_ioc_freeze(sc, arg);
		break;
	default:
		error = -ENOTTY;
		break;
	}
	mutex_unlock(&sc->sc_lock);
	return error;
}

/* ---- read and poll ---- */

/*
 * Copy whole records, round-robin over the CPUs, as many as fit; each run
 * of records contiguous in a ring goes out in one copy_to_user.  Returns
 * bytes copied, or -EINVAL if the first waiting record does not fit in
 * len, or -EFAULT.  [R] held.
 */
static ssize_t dt_copyout(struct dt_softc *sc, char __user *ubuf, size_t len)
{
	unsigned int i, cpu;
	size_t done = 0;
	bool toosmall = false;

	for (i = 0; i < nr_cpu_ids && !toosmall; i++) {
		struct dt_cpubuf *cb;
		struct dt_ring *r;
		struct dtr_hdr *h;
		unsigned long pub, pos, rpos = 0, nrec = 0, rnrec = 0;
		unsigned int sz = 0;
		char *run = NULL;
		size_t rlen = 0;

		cpu = (sc->sc_rrcpu + i) % nr_cpu_ids;
		cb = READ_ONCE(sc->sc_bufs[cpu]);
		if (cb == NULL)
			continue;
		r = &cb->cb_ring;
		pub = dtr_read_begin(r);
		pos = READ_ONCE(r->r_tail);
		for (;;) {
			/* sz is checked to lie inside the ring: copy only it */
			h = dtr_peek_size(r, &pos, pub, &sz);
			if (h != NULL && sz > len - done - rlen) {
				toosmall = true;
				h = NULL;
			}
			if (rlen != 0 && (h == NULL || (char *)h != run + rlen)) {
				/* flush the run */
				if (copy_to_user(ubuf + done, run, rlen)) {
					dtr_read_end(r, rpos, nrec);
					return done ? (ssize_t)done : -EFAULT;
				}
				done += rlen;
				nrec += rnrec;
				rlen = 0;
				rnrec = 0;
			}
			if (h == NULL)
				break;
			if (rlen == 0) {
				run = (char *)h;
				rpos = pos;
			}
			rlen += sz;
			rnrec++;
			pos += sz;
		}
		dtr_read_end(r, pos, nrec);
	}
	sc->sc_rrcpu = (sc->sc_rrcpu + 1) % nr_cpu_ids;
	if (done == 0 && toosmall)
		return -EINVAL;
	return done;
}

/*
 * Sleep until sc is readable.  The tick is armed only once we are on the
 * waitqueue: armed before, a tick firing in between found no sleeper, did
 * not re-arm, and the read slept until a quarter of a ring filled (a
 * blocked read of one event hung).  prepare_to_wait's barrier pairs with
 * dt_write's smp_mb.
 */
static int dt_read_wait(struct dt_softc *sc)
{
	DEFINE_WAIT(wait);
	int error = 0;

	for (;;) {
		prepare_to_wait(&sc->sc_wq, &wait, TASK_INTERRUPTIBLE);
		dt_tick_arm(sc);
		if (dt_readable(sc))
			break;
		if (signal_pending(current)) {
			error = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	finish_wait(&sc->sc_wq, &wait);
	return error;
}

static ssize_t dt_read(struct file *file, char __user *ubuf, size_t len,
		       loff_t *off)
{
	struct dt_softc *sc = file->private_data;
	ssize_t n;
	int error;

	if (len == 0)
		return 0;
	for (;;) {
		bool dump;

		if (mutex_lock_interruptible(&sc->sc_rlock))
			return -ERESTARTSYS;
		/* thawing takes sc_rlock: the mode holds while we copy */
		if (dt_overwriting(sc)) {
			mutex_unlock(&sc->sc_rlock);
			return -EBUSY;
		}
		dump = READ_ONCE(sc->sc_frozen);
		n = dt_copyout(sc, ubuf, len);
		mutex_unlock(&sc->sc_rlock);
		if (n != 0)
			return n;
		/* a frozen ring gets nothing new: its dump is complete */
		if (dump)
			return 0;
		if (!READ_ONCE(sc->sc_recording)) {
			/* a stop may have raced with the copy: look again */
			if (dt_hasdata(sc))
				continue;
			return 0;
		}
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		error = dt_read_wait(sc);
		if (error)
			return error;
	}
}

static __poll_t dt_poll(struct file *file, struct poll_table_struct *pt)
{
	struct dt_softc *sc = file->private_data;

	poll_wait(file, &sc->sc_wq, pt);
	if (dt_overwriting(sc))
		return 0;
	if (READ_ONCE(sc->sc_frozen) && READ_ONCE(sc->sc_recording))
		return EPOLLIN | EPOLLRDNORM;	/* the dump, or its end */
	dt_tick_arm(sc);
	/* joined the waitqueue before loading pub: pairs with dt_write */
	smp_mb();
	if (dt_hasdata(sc))
		return EPOLLIN | EPOLLRDNORM;
	if (!READ_ONCE(sc->sc_recording))
		return EPOLLHUP;
	return 0;
}

static const struct file_operations dt_fops = {
	.owner		= THIS_MODULE,
	.open		= dt_open,
	.release	= dt_release,
	.read		= dt_read,
	.poll		= dt_poll,
	.unlocked_ioctl	= dt_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice dt_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "dt",
	.fops	= &dt_fops,
	.mode	= 0600,
};

static int __init dt_init(void)
{
	int error;

	error = dt_event_init();
	if (error)
		return error;
	/* before the timers' state: a CPU coming up gets rings first */
	error = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "dt/ring:online",
					dt_buf_cpu_online, NULL);
	if (error < 0) {
		dt_event_exit();
		return error;
	}
	dt_buf_hp = error;
	mutex_lock(&dt_lock);
	error = dt_timer_init();
	if (!error)
		error = dt_syscall_init();
	if (!error)
		error = dt_tp_init();
	if (!error)
		error = dt_proc_init();
	mutex_unlock(&dt_lock);
	if (error)
		goto fail;
	error = misc_register(&dt_misc);
	if (error)
		goto fail;
	return 0;
fail:
	dt_syscall_exit();
	dt_timer_exit();
	dt_proc_fini();
	cpuhp_remove_multi_state(dt_buf_hp);
	dt_probes_free();
	dt_event_exit();
	return error;
}

static void __exit dt_exit(void)
{
	/* fops.owner: no descriptor is open, so nothing is armed */
	misc_deregister(&dt_misc);
	cancel_delayed_work_sync(&dt_linger_work);
	dt_linger(NULL);
	dt_kprobe_exit();
	dt_uprobe_exit();
	dt_syscall_exit();
	dt_timer_exit();
	cpuhp_remove_multi_state(dt_buf_hp);
	tracepoint_synchronize_unregister();
	dt_proc_fini();
	dt_probes_free();
	dt_event_exit();
}

module_init(dt_init);
module_exit(dt_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("dt: record-then-analyze kernel tracer (/dev/dt)");
