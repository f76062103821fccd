// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_tp.c - tracepoint:SUBSYS:NAME probes with typed arguments.
 *
 * The __tracepoint_* symbols are not exported: tracepoints are found by
 * name with for_each_kernel_tracepoint.  A tracepoint is registered while
 * at least one pcb of its probe is armed; the probe's callback gets the
 * dt_probe as its data.  Prototypes are those of 6.1's
 * include/trace/events/{sched,irq,block}.h.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <linux/interrupt.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/kallsyms.h>
#include <trace/events/sched.h>
#include <trace/events/irq.h>
#include <trace/events/block.h>

#include "dt.h"

struct dt_tpfind {
	const char		*name;
	struct tracepoint	*tp;
};

static void dt_tp_match(struct tracepoint *tp, void *priv)
{
	struct dt_tpfind *f = priv;

	if (f->tp == NULL && strcmp(tp->name, f->name) == 0)
		f->tp = tp;
}

struct tracepoint *dt_tp_find(const char *name)
{
	struct dt_tpfind f = { name, NULL };

	for_each_kernel_tracepoint(dt_tp_match, &f);
	return f.tp;
}

void dt_tp_iter_range(struct tracepoint *tp, unsigned long *lo,
		      unsigned long *hi)
{
	char buf[KSYM_SYMBOL_LEN], *sz;
	unsigned long size;

	*lo = *hi = 0;
	if (tp == NULL || tp->iterator == NULL)
		return;
	/* "__traceiter_NAME+0x0/0xSIZE [mod]": the size is after the slash */
	sprint_symbol(buf, (unsigned long)tp->iterator);
	sz = strchr(buf, '/');
	if (sz == NULL)
		return;
	sz[strcspn(sz, " ")] = '\0';
	if (kstrtoul(sz + 1, 16, &size) != 0)
		return;
	*lo = (unsigned long)tp->iterator;
	*hi = *lo + size;
}

/* a comm in two slots, bytes in slot order, NUL-padded */
static void dt_comm(u64 *slots, const char *comm)
{
	char buf[16];

	memset(buf, 0, sizeof(buf));
	strscpy(buf, comm, sizeof(buf));
	memcpy(slots, buf, sizeof(buf));
}

/*
 * prev_state as tracefs reports it (__trace_sched_switch_state): one bit
 * per letter of "SDTtXZPI" above 0 for running, TASK_REPORT_MAX when
 * preempted.  The raw __state would make an exiting task (TASK_DEAD,
 * 0x80) read as idle, I, and never come back.
 */
static unsigned int dt_switch_state(bool preempt, struct task_struct *p,
				    unsigned int state)
{
	unsigned int i;

	if (preempt)
		return TASK_REPORT_MAX;
	i = __task_state_index(state, p->exit_state);
	return i ? 1U << (i - 1) : 0;
}

static void dt_tp_sched_switch(void *data, bool preempt,
			       struct task_struct *prev,
			       struct task_struct *next,
			       unsigned int prev_state)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[9];

	dt_comm(&a[0], prev->comm);
	a[2] = prev->pid;
	a[3] = prev->prio;
	a[4] = dt_switch_state(preempt, prev, prev_state);
	dt_comm(&a[5], next->comm);
	a[7] = next->pid;
	a[8] = next->prio;
	dt_caller_regs(&cr);
	dt_fire_subj(data, &cr, a, 9, next);
}

static const struct dt_arg_info dt_args_switch[] = {
	{ "prev_comm", "char[16]", 0, 2 },
	{ "prev_pid", "pid_t", 2, 1 },
	{ "prev_prio", "int", 3, 1 },
	{ "prev_state", "unsigned int", 4, 1 },
	{ "next_comm", "char[16]", 5, 2 },
	{ "next_pid", "pid_t", 7, 1 },
	{ "next_prio", "int", 8, 1 },
};

static void dt_tp_sched_wakeup(void *data, struct task_struct *p)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[5];

	dt_comm(&a[0], p->comm);
	a[2] = p->pid;
	a[3] = p->prio;
	a[4] = task_cpu(p);
	dt_caller_regs(&cr);
	dt_fire_subj(data, &cr, a, 5, p);
}

static const struct dt_arg_info dt_args_wakeup[] = {
	{ "comm", "char[16]", 0, 2 },
	{ "pid", "pid_t", 2, 1 },
	{ "prio", "int", 3, 1 },
	{ "target_cpu", "int", 4, 1 },
};

static void dt_tp_sched_fork(void *data, struct task_struct *parent,
			     struct task_struct *child)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[6];

	dt_comm(&a[0], parent->comm);
	a[2] = parent->pid;
	dt_comm(&a[3], child->comm);
	a[5] = child->pid;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 6, 0);
}

static const struct dt_arg_info dt_args_fork[] = {
	{ "parent_comm", "char[16]", 0, 2 },
	{ "parent_pid", "pid_t", 2, 1 },
	{ "child_comm", "char[16]", 3, 2 },
	{ "child_pid", "pid_t", 5, 1 },
};

static void dt_tp_sched_exec(void *data, struct task_struct *p,
			     pid_t old_pid, struct linux_binprm *bprm)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[4];

	dt_comm(&a[0], p->comm);
	a[2] = p->pid;
	a[3] = old_pid;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 4, 0);
}

static const struct dt_arg_info dt_args_exec[] = {
	{ "comm", "char[16]", 0, 2 },
	{ "pid", "pid_t", 2, 1 },
	{ "old_pid", "pid_t", 3, 1 },
};

static void dt_tp_sched_exit(void *data, struct task_struct *p)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[4];

	dt_comm(&a[0], p->comm);
	a[2] = p->pid;
	a[3] = p->prio;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 4, 0);
}

static const struct dt_arg_info dt_args_exit[] = {
	{ "comm", "char[16]", 0, 2 },
	{ "pid", "pid_t", 2, 1 },
	{ "prio", "int", 3, 1 },
};

static void dt_tp_irq_entry(void *data, int irq, struct irqaction *action)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[3];

	a[0] = irq;
	dt_comm(&a[1], action && action->name ? action->name : "");
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 3, 0);
}

static const struct dt_arg_info dt_args_irq_entry[] = {
	{ "irq", "int", 0, 1 },
	{ "name", "char[16]", 1, 2 },
};

static void dt_tp_irq_exit(void *data, int irq, struct irqaction *action,
			   int ret)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[2];

	a[0] = irq;
	a[1] = ret;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 2, 0);
}

static const struct dt_arg_info dt_args_irq_exit[] = {
	{ "irq", "int", 0, 1 },
	{ "ret", "int", 1, 1 },
};

static u64 dt_rq_dev(struct request *rq)
{
	return rq->q && rq->q->disk ? disk_devt(rq->q->disk) : 0;
}

static void dt_tp_rq_issue(void *data, struct request *rq)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[4];

	a[0] = dt_rq_dev(rq);
	a[1] = blk_rq_pos(rq);
	a[2] = blk_rq_sectors(rq);
	a[3] = (__force u32)rq->cmd_flags;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 4, 0);
}

static const struct dt_arg_info dt_args_rq_issue[] = {
	{ "dev", "dev_t", 0, 1 },
	{ "sector", "sector_t", 1, 1 },
	{ "nr_sector", "unsigned int", 2, 1 },
	{ "cmd_flags", "unsigned int", 3, 1 },
};

static void dt_tp_rq_complete(void *data, struct request *rq,
			      blk_status_t error, unsigned int nr_bytes)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[4];

	a[0] = dt_rq_dev(rq);
	a[1] = blk_rq_pos(rq);
	a[2] = nr_bytes;
	a[3] = blk_status_to_errno(error);
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 4, 0);
}

static const struct dt_arg_info dt_args_rq_complete[] = {
	{ "dev", "dev_t", 0, 1 },
	{ "sector", "sector_t", 1, 1 },
	{ "nr_bytes", "unsigned int", 2, 1 },
	{ "error", "int", 3, 1 },
};

struct dt_tpdef {
	const char		*td_sys;
	const char		*td_name;
	void			*td_fn;
	const struct dt_arg_info *td_args;
	u16			 td_nargs;
	u8			 td_nslots;
};

#define TPDEF(sys, name, fn, args, nslots) \
	{ sys, #name, (void *)(fn), args, ARRAY_SIZE(args), nslots }

static const struct dt_tpdef dt_tpdefs[] = {
	TPDEF("sched", sched_switch, dt_tp_sched_switch, dt_args_switch, 9),
	TPDEF("sched", sched_wakeup, dt_tp_sched_wakeup, dt_args_wakeup, 5),
	/*
	 * sched_wakeup fires where the woken task is made runnable, which
	 * for a task whose CPU is idle is that CPU's idle task (the wakeup
	 * is queued there); sched_waking always fires in the waker
	 */
	TPDEF("sched", sched_waking, dt_tp_sched_wakeup, dt_args_wakeup, 5),
	TPDEF("sched", sched_wakeup_new, dt_tp_sched_wakeup, dt_args_wakeup,
	      5),
	TPDEF("sched", sched_process_fork, dt_tp_sched_fork, dt_args_fork, 6),
	TPDEF("sched", sched_process_exec, dt_tp_sched_exec, dt_args_exec, 4),
	TPDEF("sched", sched_process_exit, dt_tp_sched_exit, dt_args_exit, 4),
	TPDEF("irq", irq_handler_entry, dt_tp_irq_entry, dt_args_irq_entry,
	      3),
	TPDEF("irq", irq_handler_exit, dt_tp_irq_exit, dt_args_irq_exit, 2),
	TPDEF("block", block_rq_issue, dt_tp_rq_issue, dt_args_rq_issue, 4),
	TPDEF("block", block_rq_complete, dt_tp_rq_complete,
	      dt_args_rq_complete, 4),
};

/* the kernel's own prototypes: a mismatch is a compile error */
static void __maybe_unused dt_tp_check_types(void)
{
	check_trace_callback_type_sched_switch(dt_tp_sched_switch);
	check_trace_callback_type_sched_wakeup(dt_tp_sched_wakeup);
	check_trace_callback_type_sched_waking(dt_tp_sched_wakeup);
	check_trace_callback_type_sched_wakeup_new(dt_tp_sched_wakeup);
	check_trace_callback_type_sched_process_fork(dt_tp_sched_fork);
	check_trace_callback_type_sched_process_exec(dt_tp_sched_exec);
	check_trace_callback_type_sched_process_exit(dt_tp_sched_exit);
	check_trace_callback_type_irq_handler_entry(dt_tp_irq_entry);
	check_trace_callback_type_irq_handler_exit(dt_tp_irq_exit);
	check_trace_callback_type_block_rq_issue(dt_tp_rq_issue);
	check_trace_callback_type_block_rq_complete(dt_tp_rq_complete);
}

/* [g] per dt_tpdefs entry: registered (it may linger unused) */
static bool dt_tp_reg[ARRAY_SIZE(dt_tpdefs)];
static struct dt_probe *dt_tp_probe[ARRAY_SIZE(dt_tpdefs)];	/* [I] */

/*
 * The dp_narmed count includes the pcb being armed and, on disarm, the
 * one being disarmed.
 */
static int dt_tp_arm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	const struct dt_tpdef *td = dp->dp_priv;
	size_t i = td - dt_tpdefs;
	int error;

	if (dt_tp_reg[i])
		return 0;
	error = tracepoint_probe_register(dt_tp_find(td->td_name), td->td_fn,
					  dp);
	if (error == 0)
		dt_tp_reg[i] = true;
	return error;
}

static void dt_tp_disarm(struct dt_pcb *pcb)
{
	if (pcb->pcb_probe->dp_narmed == 1)
		dt_linger_schedule();
}

void dt_tp_linger(void)
{
	const struct dt_tpdef *td;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dt_tpdefs); i++) {
		td = &dt_tpdefs[i];
		if (!dt_tp_reg[i] || dt_tp_probe[i]->dp_narmed != 0)
			continue;
		tracepoint_probe_unregister(dt_tp_find(td->td_name), td->td_fn,
					    dt_tp_probe[i]);
		dt_tp_reg[i] = false;
	}
}

static const struct dt_provider dt_prov_tp = {
	.dtpv_name	= "tracepoint",
	.dtpv_arm	= dt_tp_arm,
	.dtpv_disarm	= dt_tp_disarm,
};

int dt_tp_init(void)
{
	const struct dt_tpdef *td;
	struct tracepoint *tp;
	struct dt_probe *dp;
	char func[DT_FUNCLEN];
	const char *name;
	unsigned int i;
	int error;

	for (i = 0; i < ARRAY_SIZE(dt_tpdefs); i++) {
		td = &dt_tpdefs[i];
		tp = dt_tp_find(td->td_name);
		if (tp == NULL) {
			pr_info("dt: no tracepoint %s\n", td->td_name);
			continue;
		}
		/* tracepoint:SUBSYS:NAME with the kernel's own NAME */
		name = td->td_name;
		snprintf(func, sizeof(func), "%s", td->td_sys);
		dp = dt_probe_new(&dt_prov_tp, func, name, td->td_nargs,
				  td->td_nslots, td->td_args, 0);
		if (dp == NULL)
			return -ENOMEM;
		dp->dp_priv = (void *)td;
		dt_tp_iter_range(tp, &dp->dp_skip_lo, &dp->dp_skip_hi);
		error = dt_probe_insert(dp);
		if (error) {
			kfree(dp);
			return error;
		}
		dt_tp_probe[i] = dp;
	}
	return 0;
}
