// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_event.c - the event path: runs in probe context (task with preemption
 * disabled, softirq, hardirq or NMI), takes no lock, never sleeps, never
 * wakes anybody directly (sched_switch holds the runqueue lock): wakeups
 * go through irq_work.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>
#include <linux/rculist.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>

#include "dt.h"

#define DT_NLEVELS	4	/* task, softirq, hardirq, NMI */

/*
 * Stacks are gathered once per event into a buffer of the CPU and the
 * context level, so that an interrupt nesting into a half-built event has
 * its own, and copied into each descriptor's ring.
 */
struct dt_scratch {
	unsigned long	ks[DT_MAXFRAMES];
	u64		us[DT_MAXFRAMES];
	struct dt_uregs	ur;
};

/*
 * User stack copies (DTEVT_UREGS), per CPU and context level like the
 * scratch, DT_USTACK_MAX bytes each: too big for the per-CPU allocator,
 * so one vmalloc'ed block per possible CPU, charged to the memory cgroup
 * of the process whose enable allocated them.  Published by dt_ucopy_get
 * before any pcb asking for copies can be armed, unpublished and freed by
 * the dt_ucopy_put of the last such pcb (once it is disarmed); NULL while
 * no pcb asks for copies.  [dt_ucopy_lock] for the writers, acquire-loaded
 * in probe context.
 */
static void **dt_ucopy_bufs;
static unsigned int dt_ucopy_users;	/* [dt_ucopy_lock] pcbs asking */
static DEFINE_MUTEX(dt_ucopy_lock);

/* [c] bit L set: this CPU is inside dt_fire at context level L */
static DEFINE_PER_CPU(unsigned int, dt_busy);

/*
 * Events raised in interrupt context (softirq, hardirq: tracepoints and
 * kprobes there; timers have their own throttle in dt_timer.c) may spend
 * at most a quarter of each 10 ms window of a CPU, like perf's
 * perf_cpu_time_max_percent: past that they are not written and are
 * counted as throttled until the window ends, or, for what one event
 * spent past the budget, as many windows after it as pay it off (see
 * dt_budget_begin).  Without a bound, an
 * interrupt-heavy load with stacks enabled could keep a CPU in the tracer
 * forever.  Task-context events only slow the task that raises them and
 * are not bounded.  The account is kept in CLOCK_MONOTONIC like the timer
 * throttle's (local_clock() may jump at ticks when the TSC is unstable); a
 * hardirq that interrupts a softirq's update makes it approximate, never
 * unbounded.
 */
#define DT_EWIN_NS	(10 * NSEC_PER_MSEC)
#define DT_EBUDGET_NS	(DT_EWIN_NS / 4)
static DEFINE_PER_CPU(u64, dt_ewin_start);	/* [c] */
static DEFINE_PER_CPU(u64, dt_ewin_spent);	/* [c] */
/* [c] DT_NLEVELS per CPU; too big for the module's static per-CPU area */
static struct dt_scratch __percpu *dt_scratch;

/*
 * Kernel stack, innermost first, by the ORC unwinder as perf's callchain
 * code does, from the probe's or the interrupt's registers (kprobes,
 * profile: the first frame is the probed function or the interrupted
 * instruction, so the kprobe and interrupt machinery never appears and a
 * tick that lands in dt shows dt) or from the tracepoint's call site
 * (dt_caller_regs; when several callbacks share the tracepoint the call
 * comes from its iterator, dp_skip_lo/hi, which is left out too).
 */
static unsigned int dt_kstack(struct dt_probe *dp, struct pt_regs *regs,
			      unsigned long *ks, bool *trunc)
{
	struct unwind_state st __uninitialized;	/* unwind_start clears it */
	struct pt_regs *ur;
	unsigned long addr;
	unsigned int n = 0;

	*trunc = false;
	if (regs != NULL) {
		addr = instruction_pointer(regs);
		if (addr < dp->dp_skip_lo || addr >= dp->dp_skip_hi)
			ks[n++] = addr;
		unwind_start(&st, current, regs, NULL);
	} else {
		/* not reached by the providers; kept safe: cut dt off */
		for (unwind_start(&st, current, NULL, NULL); !unwind_done(&st);
		     unwind_next_frame(&st)) {
			addr = unwind_get_return_address(&st);
			if (addr == 0 ||
			    (!within_module(addr, THIS_MODULE) &&
			     (addr < dp->dp_skip_lo || addr >= dp->dp_skip_hi)))
				break;
		}
	}
	for (; !unwind_done(&st); unwind_next_frame(&st)) {
		/*
		 * A task's kernel stack ends at the registers it entered the
		 * kernel with.  The unwinder stops there only one step later,
		 * after a state whose ip is the user's, and
		 * unwind_get_return_address() would reject that ip by the
		 * slow way (module, trampoline, kprobe slot and BPF lookups):
		 * the most expensive part of a syscall's stack.
		 */
		ur = unwind_get_entry_regs(&st, NULL);
		if (ur != NULL && user_mode(ur))
			break;
		if (n == DT_MAXFRAMES) {
			*trunc = true;
			break;
		}
		addr = unwind_get_return_address(&st);
		if (addr == 0)
			break;
		ks[n++] = addr;
	}
	return n;
}

/*
 * The return address of a function that has pushed no frame (a leaf built
 * without one, a syscall wrapper, any function in its prologue) is at
 * [sp], and the frame-pointer chain skips its caller.  Take [sp] as a
 * frame only if it returns right after a direct call (e8 rel32) whose
 * target starts at most 1 MiB before the interrupted pc: a stray stack
 * word almost never passes both tests.
 */
static bool dt_uleaf(struct pt_regs *regs, unsigned long *retp)
{
	unsigned long ret, target;
	u8 insn[5];
	s32 rel;

	if (dt_copy_user(&ret, (const void __user *)regs->sp,
			 sizeof(ret)) != 0 || ret < sizeof(insn))
		return false;
	if (dt_copy_user(insn, (const void __user *)(ret - sizeof(insn)),
			 sizeof(insn)) != 0 || insn[0] != 0xe8)
		return false;
	memcpy(&rel, insn + 1, sizeof(rel));
	target = ret + (long)rel;
	if (target > regs->ip || regs->ip - target >= (1UL << 20))
		return false;
	*retp = ret;
	return true;
}

/*
 * Whether a walk that cannot go on from the frame at fp has reached the
 * outermost frame anyway: glibc's start code (built without frame
 * pointers) leaves rbp holding junk, not 0, so main's frame is the last
 * one to follow, a few hundred bytes below the process's first stack
 * pointer.  A thread's last frame ends the chain with 0 (clone clears rbp).
 */
static bool dt_ubottom(unsigned long fp)
{
	struct mm_struct *mm = current->mm;
	unsigned long top = mm != NULL ? READ_ONCE(mm->start_stack) : 0;

	return fp != 0 && fp < top && top - fp <= PAGE_SIZE;
}

/*
 * User stack by frame pointers (stack_trace_save_user is not exported).
 * dt_copy_user is safe in any context and fails instead of
 * faulting pages in.  The stack is marked truncated whenever the walk
 * stops before the outermost frame: a frame pointer of 0 (the psABI's
 * end of the chain) or the bottom of the main thread's stack
 * (dt_ubottom); a frame it cannot read, a return address of 0 or outside
 * user space (data read through code built without frame pointers) or a
 * chain going down the stack end it early.  Whether a return address is
 * code of the process is for user space to judge (src_dt.c fp_cut).
 */
static unsigned int dt_ustack(struct pt_regs *regs, u64 *out, bool *trunc)
{
	unsigned long fp = regs->bp, leaf = 0, last = 0;
	unsigned int n = 0;
	struct {
		unsigned long next;
		unsigned long ret;
	} fr;

	*trunc = false;
	out[n++] = regs->ip;
	if (!user_64bit_mode(regs))
		return n;
	if (dt_uleaf(regs, &leaf))
		out[n++] = leaf;
	while (fp != 0) {
		if (n == DT_MAXFRAMES) {
			*trunc = true;
			break;
		}
		if ((fp & 7) != 0 ||
		    dt_copy_user(&fr, (const void __user *)fp, sizeof(fr)) != 0 ||
		    fr.ret < PAGE_SIZE || fr.ret >= TASK_SIZE_MAX) {
			*trunc = !dt_ubottom(last) && !dt_ubottom(fp);
			break;
		}
		/* [sp] was our own frame's return address after all */
		if (n != 2 || leaf == 0 || fr.ret != leaf)
			out[n++] = fr.ret;
		last = fp;
		if (fr.next == 0)
			break;
		/* frames must go up the stack */
		if (fr.next <= fp) {
			*trunc = !dt_ubottom(fp);
			break;
		}
		fp = fr.next;
	}
	return n;
}

/*
 * The user context of the event: the interrupted registers when the probe
 * interrupted user mode, else those saved at kernel entry; NULL for a
 * kernel thread (no user context at all) and a task inside exec.
 */
static struct pt_regs *dt_user_regs(struct pt_regs *regs)
{
	if (regs != NULL && user_mode(regs))
		return regs;
	/*
	 * In exec, once the new image's mm is in, the saved registers are
	 * still the old image's until the loader sets the new ones: no user
	 * context to speak of (its pcs would name nothing, or the wrong file).
	 */
	if (current->in_execve)
		return NULL;
	if (current->mm != NULL && !(current->flags & PF_KTHREAD))
		return task_pt_regs(current);
	return NULL;
}

/*
 * Copy up to size bytes of user stack from sp without faulting: a page at
 * a time, since dt_copy_user reports no partial count and a
 * fault can only happen at a page boundary, so the copy stops exactly at
 * the first page that is not mapped or not resident.
 */
static u32 dt_ucopy(unsigned long sp, u8 *buf, u32 size)
{
	u32 done = 0, n;

	while (done < size) {
		n = min_t(u32, size - done,
			  PAGE_SIZE - ((sp + done) & (PAGE_SIZE - 1)));
		if (dt_copy_user(buf + done, (const void __user *)(sp + done),
				 n))
			break;
		done += n;
	}
	return done;
}

/*
 * The registers DWARF unwinding needs, in perf's order (dt_abi.h), and
 * size bytes of stack into buf.  False if the task has no 64-bit user
 * context.
 */
static bool dt_uregs(struct pt_regs *regs, struct dt_uregs *ur, u8 *buf,
		     u32 size)
{
	struct pt_regs *u = dt_user_regs(regs);

	if (u == NULL || !user_64bit_mode(u) || buf == NULL)
		return false;
	ur->dtur_regs[DT_UREG_AX] = u->ax;
	ur->dtur_regs[DT_UREG_BX] = u->bx;
	ur->dtur_regs[DT_UREG_CX] = u->cx;
	ur->dtur_regs[DT_UREG_DX] = u->dx;
	ur->dtur_regs[DT_UREG_SI] = u->si;
	ur->dtur_regs[DT_UREG_DI] = u->di;
	ur->dtur_regs[DT_UREG_BP] = u->bp;
	ur->dtur_regs[DT_UREG_SP] = u->sp;
	ur->dtur_regs[DT_UREG_IP] = u->ip;
	ur->dtur_regs[DT_UREG_R8 + 0] = u->r8;
	ur->dtur_regs[DT_UREG_R8 + 1] = u->r9;
	ur->dtur_regs[DT_UREG_R8 + 2] = u->r10;
	ur->dtur_regs[DT_UREG_R8 + 3] = u->r11;
	ur->dtur_regs[DT_UREG_R8 + 4] = u->r12;
	ur->dtur_regs[DT_UREG_R8 + 5] = u->r13;
	ur->dtur_regs[DT_UREG_R8 + 6] = u->r14;
	ur->dtur_regs[DT_UREG_R8 + 7] = u->r15;
	ur->dtur_size = dt_ucopy(u->sp, buf, size);
	ur->dtur_flags = ur->dtur_size < size ? DTUR_SHORT : 0;
	return true;
}

/* Count a recursion on this CPU's ring of every consumer of dp. */
static void dt_recursed(struct dt_probe *dp, struct dt_pcb *only, int cpu)
{
	struct dt_pcb *pcb;
	struct dt_cpubuf *cb;

	if (only != NULL) {
		cb = READ_ONCE(only->pcb_sc->sc_bufs[cpu]);
		if (cb != NULL)
			dtr_linc(&cb->cb_ring.r_recursive);
		return;
	}
	list_for_each_entry_rcu(pcb, &dp->dp_pcbs, pcb_plink) {
		cb = READ_ONCE(pcb->pcb_sc->sc_bufs[cpu]);
		if (cb != NULL)
			dtr_linc(&cb->cb_ring.r_recursive);
	}
}

/*
 * An interrupt-context event over the CPU's budget: count, don't write.
 * Filtered first: a descriptor counts as throttled (and so produced and
 * dropped) only the events its filter wanted.
 */
static void dt_throttled(struct dt_probe *dp, int cpu,
			 struct task_struct *subj)
{
	struct dt_pcb *pcb;
	struct dt_cpubuf *cb;

	list_for_each_entry_rcu(pcb, &dp->dp_pcbs, pcb_plink) {
		cb = READ_ONCE(pcb->pcb_sc->sc_bufs[cpu]);
		if (!dt_filter_pass(pcb->pcb_sc) &&
		    (!(pcb->pcb_evtflags & DTEVT_SUBJECT) || subj == NULL ||
		     !dt_filter_pass_task(pcb->pcb_sc, subj))) {
			if (cb != NULL)
				local_inc(&cb->cb_filtered);
			continue;
		}
		if (cb != NULL)
			local_inc(&cb->cb_throttled);
		else
			atomic_long_inc(&pcb->pcb_sc->sc_noring[cpu]);
	}
}

/*
 * 0 if the budget is spent, else the start time to account from.  What
 * was spent past a window's budget is owed by the windows after it, each
 * paying one budget: an event dearer than a whole window (a 64 KiB copy
 * and two stack walks under KASAN and emulation took about 12 ms) would
 * otherwise find a fresh window every time and keep the CPU in the tracer.
 */
static u64 dt_budget_begin(void)
{
	u64 t0 = ktime_get_mono_fast_ns(), ws = __this_cpu_read(dt_ewin_start);
	u64 sp = __this_cpu_read(dt_ewin_spent), n;

	if (t0 - ws >= DT_EWIN_NS) {
		n = (t0 - ws) / DT_EWIN_NS;
		/* compared by division: n * budget overflows after a long idle */
		sp = n > sp / DT_EBUDGET_NS ? 0 : sp - n * DT_EBUDGET_NS;
		__this_cpu_write(dt_ewin_start, t0);
		__this_cpu_write(dt_ewin_spent, sp);
	}
	if (__this_cpu_read(dt_ewin_spent) >= DT_EBUDGET_NS)
		return 0;
	return t0 ? t0 : 1;
}

struct dt_evctx {
	struct dt_probe	*dp;
	struct pt_regs	*regs;		/* interrupted/probed context */
	struct dt_scratch *s;
	const u64	*args;
	unsigned int	 nslots;
	u8		 rflags;
	u8		 ctx;
	bool		 nested;
	int		 cpu;
	/* gathered on first use */
	int		 nk, nu;	/* -1: not yet */
	bool		 ktrunc, utrunc;
	/*
	 * User registers and stack (DTEVT_UREGS): -1 not yet, 0 none, 1 in
	 * s->ur and ubuf, copied for the first pcb's size (uasked); a pcb
	 * of another session asking for more gets that much, short.
	 */
	int		 uc;
	u32		 uasked;
	u8		*ubuf;
	/* the task the event is about (dt_fire_subj), or NULL */
	struct task_struct *subj;
	/* DT_PF_PATH probes: the path ending the record, or NULL */
	const char	*path;
	u32		 pathlen;
	u32		 pathflags;
};

/*
 * n 8-byte words as plain moves: memcpy of a length known only at run
 * time is a call, the costliest step of copying a syscall's arguments
 * (WRITE_ONCE keeps the compiler from making the loop one again).
 */
static __always_inline void dt_words(u64 *d, const u64 *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		WRITE_ONCE(d[i], s[i]);
}

/* inlined into dt_fire1's one call site: a call per consumer is a call too many */
static __always_inline void dt_write(struct dt_evctx *e, struct dt_pcb *pcb)
{
	struct dt_cpubuf *cb = READ_ONCE(pcb->pcb_sc->sc_bufs[e->cpu]);
	u32 fl = pcb->pcb_evtflags;
	unsigned int na = 0, nk = 0, nu = 0, sz, usz = 0, psz = 0;
	u32 ulen = 0, uflags = 0;
	struct dt_ring *r;
	struct dt_rec *rec;
	u64 *p;
	unsigned long pub, wake;
	unsigned long long ts;
	u8 rflags = e->rflags;

	/* before anything is gathered: an event left out costs nothing more */
	if (!dt_filter_pass(pcb->pcb_sc)) {
		if (!(fl & DTEVT_SUBJECT) || e->subj == NULL ||
		    !dt_filter_pass_task(pcb->pcb_sc, e->subj)) {
			if (cb != NULL)
				local_inc(&cb->cb_filtered);
			return;
		}
		/* current is no target: its stacks are nobody's concern */
		fl &= ~(DTEVT_KSTACK | DTEVT_USTACK | DTEVT_UREGS);
	}
	/* a CPU left without a ring (dt_buf_cpu_online): lost, but counted */
	if (unlikely(cb == NULL)) {
		atomic_long_inc(&pcb->pcb_sc->sc_noring[e->cpu]);
		return;
	}
	r = &cb->cb_ring;

	if (fl & DTEVT_FUNCARGS)
		na = e->nslots;
	if (fl & DTEVT_KSTACK) {
		if (e->nk < 0) {
			e->nk = 0;
			if (e->regs == NULL || !user_mode(e->regs))
				e->nk = dt_kstack(e->dp, e->regs, e->s->ks,
						  &e->ktrunc);
		}
		nk = e->nk;
		if (e->ktrunc)
			rflags |= DTR_KSTACK_TRUNC;
	}
	if (fl & DTEVT_USTACK) {
		if (e->nu < 0) {
			struct pt_regs *ur = dt_user_regs(e->regs);

			e->nu = 0;
			if (ur != NULL)
				e->nu = dt_ustack(ur, e->s->us, &e->utrunc);
		}
		nu = e->nu;
		if (e->utrunc)
			rflags |= DTR_USTACK_TRUNC;
	}
	if (fl & DTEVT_UREGS) {
		u32 want = pcb->pcb_sc->sc_ustack;

		if (e->uc < 0) {
			void **bufs = smp_load_acquire(&dt_ucopy_bufs);

			if (bufs != NULL)
				e->ubuf = (u8 *)bufs[e->cpu] +
					  e->ctx * DT_USTACK_MAX;
			e->uasked = want;
			e->uc = dt_uregs(e->regs, &e->s->ur, e->ubuf, want);
		}
		if (e->uc > 0) {
			ulen = min(e->s->ur.dtur_size, want);
			uflags = e->s->ur.dtur_flags;
			if (want < e->s->ur.dtur_size)
				uflags = 0;
			else if (want > e->uasked)
				uflags = DTUR_SHORT;
			rflags |= DTR_UREGS;
			usz = sizeof(struct dt_uregs) + round_up(ulen, 8);
		}
	}

	if (e->path != NULL) {
		rflags |= DTR_PATH;
		psz = sizeof(struct dt_path) + DT_PATH_PAD(e->pathlen);
	}

	sz = DT_REC_SIZE(na, nk, nu) + usz + psz;
	/* the time is taken at reservation: see dtr_reserve_ts */
	rec = dtr_reserve_ts(r, sz, &ts);
	if (rec == NULL)
		return;
	rec->dtr_size = sz;
	rec->dtr_probe = e->dp->dp_id;
	rec->dtr_ts = ts;
	rec->dtr_pid = current->tgid;
	rec->dtr_tid = current->pid;
	rec->dtr_cpu = (u16)e->cpu;
	rec->dtr_nargs = (u8)na;
	rec->dtr_nkstack = (u8)nk;
	rec->dtr_nustack = (u8)nu;
	rec->dtr_flags = rflags;
	rec->dtr_ctx = e->ctx;
	rec->dtr_pad = 0;
	if (fl & DTEVT_COMM)
		memcpy(rec->dtr_comm, current->comm, DT_COMMLEN);
	else
		memset(rec->dtr_comm, 0, DT_COMMLEN);
	p = (u64 *)(rec + 1);
	dt_words(p, e->args, na);
	p += na;
	if (nk)
		memcpy(p, e->s->ks, nk * sizeof(u64));
	p += nk;
	if (nu)
		memcpy(p, e->s->us, nu * sizeof(u64));
	p += nu;
	if (usz) {
		struct dt_uregs *ur = (struct dt_uregs *)p;

		memcpy(ur->dtur_regs, e->s->ur.dtur_regs,
		       sizeof(ur->dtur_regs));
		ur->dtur_size = ulen;
		ur->dtur_flags = uflags;
		memcpy(ur + 1, e->ubuf, ulen);
		memset((u8 *)(ur + 1) + ulen, 0, round_up(ulen, 8) - ulen);
		p = (u64 *)((u8 *)(ur + 1) + round_up(ulen, 8));
	}
	if (psz) {
		struct dt_path *ph = (struct dt_path *)p;
		u8 *b = (u8 *)(ph + 1);

		ph->dtph_len = e->pathlen;
		ph->dtph_flags = e->pathflags;
		memcpy(b, e->path, e->pathlen);
		memset(b + e->pathlen, 0, DT_PATH_PAD(e->pathlen) - e->pathlen);
	}
	if (e->nested)
		dtr_linc(&r->r_nested);
	pub = dtr_commit(r);
	/* an overwriting ring has no reader to wake until it is frozen */
	if (pub == 0 || READ_ONCE(r->r_mode) != DTR_MODE_DROP)
		return;

	/*
	 * Wake the reader each time another quarter of the ring has been
	 * written since the last wakeup (edge-triggered: a reader that does
	 * not keep up costs one wakeup per quarter, not one per event), and
	 * only if it sleeps; the periodic tick (sc_tick) delivers smaller
	 * amounts.  The cmpxchg makes one writer of this CPU own the wakeup
	 * when an interrupt's write races ours.  The full barrier orders our
	 * pub store (in dtr_commit) before the waitqueue load; the reader has
	 * the mirror barrier between joining the waitqueue and loading pub
	 * (set_current_state / smp_mb in dt_poll): without both, store->load
	 * reordering loses wakeups.
	 */
	wake = local_read(&cb->cb_wakepos);
	if (pub - wake >= r->r_size / 4 &&
	    local_cmpxchg(&cb->cb_wakepos, wake, pub) == wake) {
		smp_mb();
		if (waitqueue_active(&pcb->pcb_sc->sc_wq))
			irq_work_queue(&cb->cb_wake);
	}
}

/* inlined into dt_fire and dt_fire_path: one call fewer per event */
static __always_inline void dt_fire1(struct dt_probe *dp, struct dt_pcb *only,
		     struct pt_regs *regs, const u64 *args, unsigned int nslots,
		     u8 rflags, const char *path, u32 pathlen, u32 pathflags,
		     struct task_struct *subj)
{
	struct dt_evctx e __uninitialized;	/* every member set below */
	struct dt_pcb *pcb;
	unsigned int lvl, busy;
	u64 t0 = 0;

	preempt_disable_notrace();
	lvl = interrupt_context_level();
	busy = __this_cpu_read(dt_busy);
	e.cpu = smp_processor_id();
	if (busy & (1U << lvl)) {
		/* we are inside dt_fire at our own level: true recursion */
		dt_recursed(dp, only, e.cpu);
		goto out;
	}
	/* interrupt-safe on x86: one instruction, no lost update */
	this_cpu_or(dt_busy, 1U << lvl);
	barrier();
	/*
	 * Every level but task context has a budget: NMI too (and int3
	 * kprobes, which run in_nmi() in 6.1, where a 64 KiB user stack copy
	 * per event could otherwise hold a CPU).
	 */
	if (lvl != DTR_CTX_TASK) {
		if (only == NULL) {
			t0 = dt_budget_begin();
			if (t0 == 0) {
				dt_throttled(dp, e.cpu, subj);
				goto done;
			}
		}
	}

	e.dp = dp;
	e.regs = regs;
	e.s = this_cpu_ptr(dt_scratch) + lvl;
	e.args = args;
	e.nslots = nslots;
	e.rflags = rflags;
	e.ctx = (u8)lvl;
	e.nested = (busy & ((1U << lvl) - 1)) != 0;
	e.nk = -1;
	e.nu = -1;
	e.ktrunc = false;
	e.utrunc = false;
	e.uc = -1;
	e.uasked = 0;
	e.ubuf = NULL;
	e.path = path;
	e.pathlen = min_t(u32, pathlen, DT_PATHMAX - 1);
	e.pathflags = pathflags;
	e.subj = subj;
	if (regs != NULL && user_mode(regs))
		e.rflags |= DTR_USERMODE;

	/* one dt_write site: only, or every consumer of dp */
	pcb = only != NULL ? only :
	      list_first_or_null_rcu(&dp->dp_pcbs, struct dt_pcb, pcb_plink);
	while (pcb != NULL) {
		dt_write(&e, pcb);
		pcb = only != NULL ? NULL :
		      list_next_or_null_rcu(&dp->dp_pcbs, &pcb->pcb_plink,
					    struct dt_pcb, pcb_plink);
	}

	if (t0 != 0)
		__this_cpu_add(dt_ewin_spent, ktime_get_mono_fast_ns() - t0);
done:
	barrier();
	this_cpu_and(dt_busy, ~(1U << lvl));
out:
	preempt_enable_notrace();
}

void dt_fire(struct dt_probe *dp, struct dt_pcb *only, struct pt_regs *regs,
	     const u64 *args, unsigned int nslots, u8 rflags)
{
	dt_fire1(dp, only, regs, args, nslots, rflags, NULL, 0, 0, NULL);
}

void dt_fire_subj(struct dt_probe *dp, struct pt_regs *regs, const u64 *args,
		  unsigned int nslots, struct task_struct *subj)
{
	dt_fire1(dp, NULL, regs, args, nslots, 0, NULL, 0, 0, subj);
}

void dt_fire_path(struct dt_probe *dp, struct pt_regs *regs, const u64 *args,
		  unsigned int nslots, const char *path, u32 len, u32 pflags)
{
	dt_fire1(dp, NULL, regs, args, nslots, 0, path, len, pflags, NULL);
}

/* Timer ticks of pcb missed on this CPU.  Hardirq (timer) context. */
void dt_skip(struct dt_pcb *pcb, u64 n)
{
	struct dt_cpubuf *cb;

	cb = READ_ONCE(pcb->pcb_sc->sc_bufs[smp_processor_id()]);
	if (cb != NULL && n != 0)
		local_add((long)n, &cb->cb_ring.r_skipped);
}

void dt_missed(struct dt_probe *dp, unsigned long cur)
{
	struct dt_pcb *pcb;
	struct dt_cpubuf *cb;
	long seen;
	int cpu;

	preempt_disable_notrace();
	cpu = smp_processor_id();
	list_for_each_entry_rcu(pcb, &dp->dp_pcbs, pcb_plink) {
		seen = atomic_long_read(&pcb->pcb_missed_seen);
		if ((unsigned long)seen == cur ||
		    atomic_long_cmpxchg(&pcb->pcb_missed_seen, seen, cur) != seen)
			continue;
		cb = READ_ONCE(pcb->pcb_sc->sc_bufs[cpu]);
		if (cb != NULL)
			local_add((long)(cur - seen), &cb->cb_missed);
	}
	preempt_enable_notrace();
}

void dt_wake(struct irq_work *w)
{
	struct dt_cpubuf *cb = container_of(w, struct dt_cpubuf, cb_wake);

	wake_up_interruptible(&cb->cb_sc->sc_wq);
}

/* pages of all the copy buffers, for the bound on dt's memory */
static unsigned long dt_ucopy_pages(void)
{
	return num_possible_cpus() * (DT_NLEVELS * DT_USTACK_MAX >> PAGE_SHIFT);
}

static void dt_ucopy_free(void **bufs)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		kvfree(bufs[cpu]);
	kfree(bufs);
	dt_mem_uncharge(dt_ucopy_pages());
}

int dt_ucopy_get(void)
{
	void **bufs;
	unsigned int cpu;
	int error = 0;

	mutex_lock(&dt_ucopy_lock);
	if (dt_ucopy_bufs != NULL)
		goto out;
	/* as a ring is: within the bound on all of dt's buffers */
	error = dt_mem_charge(dt_ucopy_pages());
	if (error)
		goto out;
	bufs = kcalloc(nr_cpu_ids, sizeof(*bufs), GFP_KERNEL_ACCOUNT);
	if (bufs == NULL) {
		dt_mem_uncharge(dt_ucopy_pages());
		error = -ENOMEM;
		goto out;
	}
	for_each_possible_cpu(cpu) {
		bufs[cpu] = kvmalloc_node(DT_NLEVELS * DT_USTACK_MAX,
					  GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
		if (bufs[cpu] == NULL) {
			dt_ucopy_free(bufs);
			error = -ENOMEM;
			goto out;
		}
	}
	/* the buffers before the pointer: probe context loads it acquire */
	smp_store_release(&dt_ucopy_bufs, bufs);
out:
	if (error == 0)
		dt_ucopy_users++;
	mutex_unlock(&dt_ucopy_lock);
	return error;
}

/*
 * A pcb that asked for copies is gone, and was disarmed before (the
 * descriptor's stop waited for the probe context it could be in).  The
 * last one frees the buffers: no pcb asking for them is armed anywhere,
 * and the grace period covers any probe context that loaded the pointer
 * for one just before.  May sleep.
 */
void dt_ucopy_put(void)
{
	void **bufs = NULL;

	mutex_lock(&dt_ucopy_lock);
	if (!WARN_ON_ONCE(dt_ucopy_users == 0) && --dt_ucopy_users == 0) {
		bufs = dt_ucopy_bufs;
		WRITE_ONCE(dt_ucopy_bufs, NULL);
		synchronize_rcu();
	}
	mutex_unlock(&dt_ucopy_lock);
	if (bufs != NULL)
		dt_ucopy_free(bufs);
}

int dt_event_init(void)
{
	dt_scratch = __alloc_percpu(sizeof(struct dt_scratch) * DT_NLEVELS,
				    __alignof__(struct dt_scratch));
	return dt_scratch == NULL ? -ENOMEM : 0;
}

/* no probe can run: every descriptor is closed */
void dt_event_exit(void)
{
	/* every pcb is gone, so dt_ucopy_put freed the buffers already */
	if (dt_ucopy_bufs != NULL) {
		dt_ucopy_free(dt_ucopy_bufs);
		dt_ucopy_bufs = NULL;
	}
	free_percpu(dt_scratch);
	dt_scratch = NULL;
}
