/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * dt.h - internals of dt.ko shared by the device and the providers.
 *
 * Locks and ownership (annotations on members):
 *	[I]	immutable once published
 *	[g]	dt_lock (global mutex: probe table, providers' arming)
 *	[d]	dt_softc.sc_lock (the descriptor's ioctls)
 *	[R]	dt_softc.sc_rlock (the descriptor's reader)
 *	[c]	the owning CPU, any context level (local ops, see dt_ring.h)
 *	[p]	written under [g], read locklessly in probe context (RCU: probe
 *		context is preemption-disabled, so synchronize_rcu() waits
 *		for it)
 */
#ifndef DT_H
#define DT_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/timer.h>
#include <linux/irq_work.h>
#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>
#include <linux/security.h>
#include <asm/ptrace.h>
#include <asm/segment.h>
#include <asm/processor-flags.h>

#include "../include/dt_abi.h"
#include "dt_ring.h"

struct dt_probe;
struct dt_pcb;
struct pt_regs;

/* What a provider does when a probe gains or loses its first consumer. */
struct dt_provider {
	const char	*dtpv_name;
	/*
	 * Optional, for work that may block for long (a uprobe's file on
	 * FUSE): before a pcb is armed and after it is disarmed, [d] held
	 * but not [g], so other descriptors go on meanwhile.
	 */
	int		(*dtpv_prepare)(struct dt_pcb *);
	void		(*dtpv_unprepare)(struct dt_pcb *);
	/* arm/disarm one (probe, descriptor) pair; [g] held, may sleep */
	int		(*dtpv_arm)(struct dt_pcb *);
	void		(*dtpv_disarm)(struct dt_pcb *);
	/* hits the source lost so far (kprobe nmissed); NULL: none */
	unsigned long	(*dtpv_missed)(struct dt_probe *);
	/* what kernel lockdown must allow to enable its probes; 0: nothing */
	enum lockdown_reason dtpv_lockdown;
};

struct dt_probe {
	u32			 dp_id;		/* [I] >= 1 */
	u16			 dp_nargs;	/* [I] logical arguments */
	u16			 dp_flags;	/* [I] DT_PF_* */
	u8			 dp_nslots;	/* [I] u64 slots in a record */
	const struct dt_provider *dp_prov;	/* [I] */
	const struct dt_arg_info *dp_args;	/* [I] dp_nargs entries */
	long			 dp_data;	/* [I] provider's (syscall nr) */
	void			*dp_priv;	/* [I] provider's */
	u64			 dp_defperiod;	/* [I] timers: ns */
	/*
	 * [I] tracepoints: the tracepoint's iterator function (the callback
	 * is called from it when several are registered): kernel stacks
	 * start at the first frame outside it and outside dt.
	 */
	unsigned long		 dp_skip_lo, dp_skip_hi;
	struct list_head	 dp_pcbs;	/* [p] armed pcbs (RCU) */
	unsigned int		 dp_narmed;	/* [g] length of dp_pcbs */
	unsigned int		 dp_nref;	/* [g] pcbs on all descriptors */
	bool			 dp_dead;	/* [g] freed kprobe: no lookups */
	char			 dp_func[DT_FUNCLEN];	/* [I] */
	char			 dp_name[DT_NAMELEN];	/* [I] */
};

/* The per-CPU state of a descriptor: its ring and its wakeup. */
struct dt_cpubuf {
	struct dt_ring		 cb_ring;	/* see dt_ring.h */
	/*
	 * [c] ring position of the last wakeup: the writer wakes the reader
	 * when a quarter of the ring has been written since (edge-triggered,
	 * like perf's rb->wakeup), not on every event while a quarter waits.
	 */
	local_t			 cb_wakepos;
	local_t			 cb_missed;	/* [c] kprobe core's losses */
	local_t			 cb_throttled;	/* [c] over the CPU budget */
	local_t			 cb_filtered;	/* [c] left out by the filter */
	/* targets' children not followed (table full): any CPU, atomic */
	atomic_long_t		 cb_untracked;
	struct irq_work		 cb_wake;	/* [I] wakes sc_wq */
	struct dt_softc		*cb_sc;		/* [I] */
};

struct dt_softc {
	struct mutex		 sc_lock;	/* serializes ioctls */
	struct mutex		 sc_rlock;	/* serializes read/poll */
	struct list_head	 sc_pcbs;	/* [d] enabled probes */
	u32			 sc_bufsz;	/* [d] ring bytes per CPU */
	bool			 sc_recording;	/* [d] read anywhere */
	struct dt_cpubuf	**sc_bufs;	/* [I] nr_cpu_ids slots */
	/*
	 * sc_bufs[cpu] are filled once, before the first recording starts
	 * (under [d], published by the pcbs' list_add_rcu or read with
	 * READ_ONCE), and freed only at close.
	 */
	/*
	 * Rings exist for the CPUs that were online when recording first
	 * started and for every CPU that comes online later (a CPU hotplug
	 * instance, sc_hpnode, added at the first start, removed at close).
	 * They are charged to the opener: its memory cgroup (sc_memcg) and
	 * its mm's locked_vm (sc_mm, sc_locked pages), as perf charges its
	 * rings.
	 */
	struct hlist_node	 sc_hpnode;	/* [d] */
	bool			 sc_hpadded;	/* [d] */
	struct mem_cgroup	*sc_memcg;	/* [I] or NULL */
	struct mm_struct	*sc_mm;		/* [I] or NULL */
	unsigned long		 sc_locked;	/* [d] pages in sc_mm's locked_vm */
	unsigned int		 sc_rrcpu;	/* [R] read() starts here */
	/*
	 * [I] nr_cpu_ids counters, any context (atomic): events this
	 * descriptor wanted on a CPU that had no ring (its allocation failed
	 * or hit the limit when the CPU came online), produced and dropped
	 */
	atomic_long_t		*sc_noring;
	wait_queue_head_t	 sc_wq;		/* readers and pollers */
	struct timer_list	 sc_tick;	/* wakes readers for small data */
	/*
	 * [d] user stack bytes per DTEVT_UREGS event; changed only while
	 * not recording, so probe context reads a settled value
	 */
	u32			 sc_ustack;

	/* ring mode (DTIOCSETRMODE, DTIOCFREEZE): see dt_ring.h */
	u32			 sc_rmode;	/* [d] DT_RING_* */
	bool			 sc_frozen;	/* [d] */

	/*
	 * The filter (dt_filter.c), read by every event: set only while not
	 * recording, published to probe context with the pcbs.
	 */
	u32			 sc_fflags;	/* [d] DTF_* */
	u32			 sc_self;	/* [I] opener's tgid */
	u32			 sc_fexecpid;	/* [d] target from its exec */
	char			 sc_fcomm[DT_COMMLEN];	/* [d] NUL-padded */
	struct cgroup		*sc_fcgrp;	/* [d] DTF_CGROUP, held */
	/* targets; changed under sc_tglock, replaced under sc_tgmutex too */
	struct dt_tgset __rcu	*sc_tgs;
	raw_spinlock_t		 sc_tglock;
	struct mutex		 sc_tgmutex;	/* one table rebuild at a time */
	struct work_struct	 sc_tgsweep;	/* rebuilds without the gone */
	struct list_head	 sc_flink;	/* [g] on dt_followers (RCU) */
	bool			 sc_following;	/* [g] sc_flink is on it */
};

/* One enabled (probe, descriptor) pair. */
struct dt_pcb {
	struct list_head	 pcb_plink;	/* [p] on dp_pcbs while armed */
	struct list_head	 pcb_slink;	/* [d] on sc_pcbs */
	struct dt_probe		*pcb_probe;	/* [I] */
	struct dt_softc		*pcb_sc;	/* [I] */
	u32			 pcb_evtflags;	/* [I] DTEVT_* */
	u64			 pcb_period;	/* [I] timers: ns */
	void			*pcb_priv;	/* [g] provider's (timers) */
	bool			 pcb_armed;	/* [g] */
	bool			 pcb_prepared;	/* [d] dtpv_prepare done */
	/* [p] the source's missed count already charged to this pcb */
	atomic_long_t		 pcb_missed_seen;
};

extern struct mutex dt_lock;

/* dt_dev.c: the probe table (id = index + 1; a dead probe keeps its slot until unload) */
struct dt_probe *dt_probe_new(const struct dt_provider *, const char *func,
			      const char *name, u16 nargs, u8 nslots,
			      const struct dt_arg_info *args, u16 flags);
int dt_probe_reserve(u32 n);
int dt_probe_insert(struct dt_probe *);
/* a live probe by id, or NULL; [g] held */
struct dt_probe *dt_probe_lookup(u32 id);
u32 dt_probe_count(void);
void dt_probes_free(void);

/*
 * dt_event.c: the event path.  args has nslots u64 (may be NULL with 0).
 * pcb: write only for this pcb (timers), else for every armed pcb of dp.
 * regs: interrupted or probed context, or a tracepoint's caller
 * (dt_caller_regs).
 */
void dt_fire(struct dt_probe *dp, struct dt_pcb *pcb, struct pt_regs *regs,
	     const u64 *args, unsigned int nslots, u8 rflags);
/*
 * dt_fire for a DT_PF_PATH probe: path (len bytes, NUL-terminated, valid
 * for the call) goes after the rest of the record (struct dt_path), with
 * dtph_flags pflags.  Task context.
 */
void dt_fire_path(struct dt_probe *dp, struct pt_regs *regs, const u64 *args,
		  unsigned int nslots, const char *path, u32 len, u32 pflags);
/*
 * dt_fire for an event about another task, subj (the task switched to or
 * woken): a pcb with DTEVT_SUBJECT keeps it also when its filter keeps
 * subj but not current.
 */
void dt_fire_subj(struct dt_probe *dp, struct pt_regs *regs, const u64 *args,
		  unsigned int nslots, struct task_struct *subj);
void dt_skip(struct dt_pcb *pcb, u64 n);
/*
 * The source of dp has lost cur hits in all (dtpv_missed): charge the new
 * ones to this CPU's ring of every armed pcb.  Probe context.
 */
void dt_missed(struct dt_probe *dp, unsigned long cur);
void dt_wake(struct irq_work *);
/*
 * The buffers user stacks are copied into (DTEVT_UREGS): taken by each pcb
 * that asks for copies (allocated by the first), given back when it is
 * freed (freed with the last).  May sleep; not under dt_lock.
 */
int dt_ucopy_get(void);
void dt_ucopy_put(void);
/*
 * dt_dev.c: the bound on the memory of all descriptors' rings (a quarter
 * of RAM), which the copy buffers count against too.  -ENOMEM past it.
 */
int dt_mem_charge(unsigned long pages);
void dt_mem_uncharge(unsigned long pages);
int dt_event_init(void);
void dt_event_exit(void);

/*
 * Every copy of user memory in probe context (stacks, user stack copies,
 * syscall paths, USDT operands), NMI included: 0, or -EFAULT if any byte
 * could not be read without faulting.  x86's copy_from_user_nmi, as
 * perf's user stack copies, not copy_from_user_nofault: before mainline
 * d319f344561d (backported to stable kernels, not all) it checked neither
 * nmi_uaccess_okay() (an NMI inside switch_mm would read the next mm's
 * memory, or another CR3's) nor avoided access_ok()'s warning outside
 * task context, and no header says which a kernel has.
 * copy_from_user_nmi has done both since 4.19 and is what perf relies
 * on, so dt is safe on any kernel it builds against.
 */
static inline int dt_copy_user(void *dst, const void __user *src, size_t n)
{
	return copy_from_user_nmi(dst, src, n) == 0 ? 0 : -EFAULT;
}

/*
 * The registers of a tracepoint callback's caller, as perf_fetch_caller_regs
 * makes them: where the callback returns to, with the stack as it is
 * there.  Kernel stacks then start at the tracepoint's call site without
 * unwinding through the tracer.  Use it in the callback itself (never
 * inlined: tracepoints call it through a pointer); __builtin_frame_address
 * makes the compiler give it a frame, so the return address is at fp[1].
 *
 * Declare the registers __uninitialized: the kernel is built with
 * INIT_STACK_ALL_ZERO, which otherwise clears all of struct pt_regs on
 * every call (a rep stos: one translation block per word under TCG; with
 * the syscall arguments and dt_fire's context 304 bytes per event, about
 * 30% of what dt added to a syscall).  Only the fields set here are read;
 * cs says kernel mode, so no path copies these registers into a record,
 * and an unwinder that reads another field finds it off the stack and
 * stops, as it would on the zero.
 */
#define dt_caller_regs(regs) do {					\
	unsigned long *__fp = __builtin_frame_address(0);		\
									\
	(regs)->ip = __fp[1];						\
	(regs)->sp = (unsigned long)(__fp + 2);				\
	(regs)->bp = __fp[0];						\
	(regs)->cs = __KERNEL_CS;					\
	(regs)->flags = X86_EFLAGS_FIXED;				\
} while (0)

/*
 * dt_filter.c.  dt_filter_pass: does current's event go to sc?  Probe
 * context.  dt_filter_set: DTIOCSETFILTER, [d] held.  dt_filter_start and
 * dt_filter_stop hook fork and exec while sc follows targets' children,
 * [d] and [g] held; dt_filter_stopped once the hooks are done with sc.
 */
struct dt_tgset;
bool dt_filter_pass_slow(struct dt_softc *sc, struct task_struct *t);
/*
 * Would sc keep an event of task t (current, or a sched event's subject,
 * alive for the call)?  Inline for the common case, a filter of no more
 * than the opener.
 */
static inline bool dt_filter_pass_task(struct dt_softc *sc,
				       struct task_struct *t)
{
	u32 fl = READ_ONCE(sc->sc_fflags);

	if (likely((fl & ~DTF_SELF) == 0))
		return (fl & DTF_SELF) || t->tgid != sc->sc_self;
	return dt_filter_pass_slow(sc, t);
}
static inline bool dt_filter_pass(struct dt_softc *sc)
{
	return dt_filter_pass_task(sc, current);
}
int dt_filter_set(struct dt_softc *sc, const struct dt_filter *f);
int dt_filter_start(struct dt_softc *sc);
/* p is exec'ing a new image: pending targets become targets */
void dt_filter_exec_task(struct task_struct *p);
void dt_filter_stop(struct dt_softc *sc);
void dt_filter_stopped(struct dt_softc *sc);
void dt_filter_init(struct dt_softc *sc);
void dt_filter_free(struct dt_softc *sc);

/* providers; each *_init builds its probes at module load, [g] held */
int dt_timer_init(void);
void dt_timer_exit(void);
int dt_syscall_init(void);
/*
 * dt_sysstr.c: a path argument of a syscall entry, copied into the slots
 * after its six registers.  dt_sysstr_arg: which argument (0 or 1) of
 * syscall nr is a path, or -1.  dt_sysstr_copy: the NUL-terminated path at
 * uaddr into DT_SYSSTR_SLOTS slots (empty when not resident).  Probe
 * context.
 */
#define DT_SYSSTR_SLOTS	4
#define DT_SYSSTR_LEN	(8 * DT_SYSSTR_SLOTS)
int dt_sysstr_arg(unsigned long nr);
void dt_sysstr_copy(unsigned long uaddr, u64 *slots);
/*
 * execve's and execveat's argv[0] (argv is the user's array): its first DT_ARGV0_LEN - 1
 * bytes, then in the last of DT_ARGV0_SLOTS slots its length counted up
 * to DT_ARGV0_SCAN (that value: at least so long), -1 when argv has no
 * argv[0] or it is not resident.  Probe context.
 */
#define DT_ARGV0_SLOTS	3
#define DT_ARGV0_LEN	(8 * (DT_ARGV0_SLOTS - 1))
#define DT_ARGV0_SCAN	4096
void dt_sysstr_argv0(unsigned long uargv, u64 *slots);
void dt_syscall_exit(void);
int dt_tp_init(void);
/* dt_proc.c: the proc provider (fork, exec, exit, executable mmaps) */
int dt_proc_init(void);
void dt_proc_linger(void);
void dt_proc_fini(void);
int dt_kprobe_create(struct dt_kprobe *);
void dt_kprobe_exit(void);
int dt_uprobe_create(struct dt_uprobe *);
/* [g] held, no descriptor open: free every uprobe (their mounts with them) */
void dt_uprobe_idle(void);
void dt_uprobe_exit(void);

/*
 * Tracepoints stay registered for a second after their last pcb goes:
 * every (un)registration patches kernel text (static key, static call),
 * so a tool that starts and stops often would patch it continually.
 * dt_linger_schedule() is called with [g] held when a count reaches 0;
 * the *_linger functions unregister what is still unused, [g] held.
 */
void dt_linger_schedule(void);
void dt_syscall_linger(void);
void dt_tp_linger(void);

/* dt_tp.c: find a kernel tracepoint by name */
struct tracepoint *dt_tp_find(const char *name);
/* the address range of tp's iterator function, for dp_skip_lo/hi */
void dt_tp_iter_range(struct tracepoint *tp, unsigned long *lo,
		      unsigned long *hi);

#endif /* DT_H */
