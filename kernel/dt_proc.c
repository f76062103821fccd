// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_proc.c - proc:process:fork, proc:process:exec, proc:process:exit and
 * proc:mmap:exec: the process events a recorder needs to name user frames
 * without reading /proc/PID/maps after the fact (a process that exits
 * before the recorder looks has none any more).
 *
 * fork and exit ride the sched tracepoints, exec a kprobe on
 * setup_new_exec() (see dt_proc_exec); executable file mappings come from
 * a kprobe on perf_event_mmap(), which the kernel calls for every new or
 * changed mapping once the vma is complete (mmap_region, mprotect, the ELF
 * loader's mappings of the program and its interpreter), whether or not
 * perf is in use.  exec and mmap events carry the file's path
 * (struct dt_path, DTR_PATH) as d_path() names it; build-ids are left to
 * the recorder, which reads them from the file.
 *
 * The path is built in a per-CPU buffer before the event is written: the
 * probes that name files fire in the task itself with preemption disabled
 * (a kprobe handler, through ftrace or int3), and none can fire inside
 * another on the same CPU, which dt_proc_busy makes sure of.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/fs.h>
#include <linux/dcache.h>
#include <linux/binfmts.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>

#include "dt.h"

/* [c] a path under construction on this CPU: one buffer each */
static DEFINE_PER_CPU(int, dt_proc_busy);
static char __percpu *dt_pathbuf;	/* [I] DT_PATHMAX per CPU */

enum { DT_PROC_FORK, DT_PROC_EXEC, DT_PROC_EXIT, DT_PROC_MMAP, DT_PROC_N };

static struct dt_probe *dt_proc_probe[DT_PROC_N];	/* [I] or NULL */
static bool dt_proc_reg[DT_PROC_N];			/* [g] hooked */
static bool dt_proc_kpreg[DT_PROC_N];			/* [I] kprobe registered */

/*
 * Fire dp with the path of f, or with an empty path marked unknown when
 * it cannot be named here (too long, or the buffer busy).
 */
static void dt_proc_fire_path(struct dt_probe *dp, struct pt_regs *regs,
			      const u64 *a, unsigned int n, const struct path *f)
{
	char *buf, *p = ERR_PTR(-EBUSY);
	u32 len = 0;

	preempt_disable_notrace();
	if (this_cpu_inc_return(dt_proc_busy) == 1) {
		buf = this_cpu_ptr(dt_pathbuf);
		p = d_path(f, buf, DT_PATHMAX);
		if (!IS_ERR(p))
			len = (u32)(buf + DT_PATHMAX - 1 - p);
	}
	dt_fire_path(dp, regs, a, n, IS_ERR(p) ? "" : p, len,
		     IS_ERR(p) ? DTPH_UNKNOWN : 0);
	this_cpu_dec(dt_proc_busy);
	preempt_enable_notrace();
}

static void dt_proc_fork(void *data, struct task_struct *parent,
			 struct task_struct *child)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[2];

	/* a new thread shares its process's mappings: nothing to tell */
	if (!thread_group_leader(child))
		return;
	a[0] = child->tgid;
	a[1] = parent->tgid;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 2, 0);
}

static const struct dt_arg_info dt_proc_args_fork[] = {
	{ "pid", "pid_t", 0, 1 },
	{ "ppid", "pid_t", 1, 1 },
};

/*
 * setup_new_exec(bprm): the loader has committed to the new image (the old
 * mm is gone, comm is the new one) and maps nothing of it until this
 * returns, so the exec event comes before the program's own mappings, as
 * perf's COMM exec record does.  (sched_process_exec fires only after
 * them, which would make them look like the old image's.)
 */
static int dt_proc_exec(struct kprobe *kp, struct pt_regs *regs)
{
	struct linux_binprm *bprm = (struct linux_binprm *)regs->di;
	struct dt_probe *dp = dt_proc_probe[DT_PROC_EXEC];
	u64 a[3];

	if (bprm == NULL || bprm->file == NULL)
		return 0;
	/* a command waiting to exec is a target from here (dt_filter.c) */
	dt_filter_exec_task(current);
	a[0] = current->tgid;
	memset(&a[1], 0, 2 * sizeof(u64));
	strscpy((char *)&a[1], current->comm, 2 * sizeof(u64));
	dt_proc_fire_path(dp, regs, a, 3, &bprm->file->f_path);
	dt_missed(dp, READ_ONCE(kp->nmissed));
	return 0;
}

static const struct dt_arg_info dt_proc_args_exec[] = {
	{ "pid", "pid_t", 0, 1 },
	{ "comm", "char[16]", 1, 2 },
};

static void dt_proc_exit(void *data, struct task_struct *p)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 a[2];

	/*
	 * Each thread passes here once it is done with the process's mm;
	 * the last one to leave made live 0.  (A thread that decremented
	 * earlier and reaches this point later sees 0 as well: the process
	 * is then reported twice, never not at all.)
	 */
	if (atomic_read(&p->signal->live) != 0)
		return;
	a[0] = p->tgid;
	a[1] = (u32)p->exit_code;
	dt_caller_regs(&cr);
	dt_fire(data, NULL, &cr, a, 2, 0);
}

static const struct dt_arg_info dt_proc_args_exit[] = {
	{ "pid", "pid_t", 0, 1 },
	{ "status", "int", 1, 1 },
};

static int dt_proc_mmap(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma = (struct vm_area_struct *)regs->di;
	struct dt_probe *dp = dt_proc_probe[DT_PROC_MMAP];
	struct inode *ino;
	u64 a[6];

	const char *name;

	if (vma == NULL || !(vma->vm_flags & VM_EXEC))
		return 0;
	a[0] = vma->vm_start;
	a[1] = vma->vm_end - vma->vm_start;
	a[2] = (u64)vma->vm_pgoff << PAGE_SHIFT;
	a[3] = (vma->vm_flags & VM_READ ? PROT_READ : 0) |
	       (vma->vm_flags & VM_WRITE ? PROT_WRITE : 0) | PROT_EXEC;
	if (vma->vm_file == NULL) {
		/* code without a file: only the named kind ([vdso]) says where */
		if (vma->vm_ops == NULL || vma->vm_ops->name == NULL)
			return 0;
		name = vma->vm_ops->name(vma);
		if (name == NULL)
			return 0;
		a[2] = a[4] = a[5] = 0;
		dt_fire_path(dp, regs, a, 6, name, strnlen(name, DT_PATHMAX - 1),
			     0);
		dt_missed(dp, READ_ONCE(kp->nmissed));
		return 0;
	}
	ino = file_inode(vma->vm_file);
	a[4] = new_encode_dev(ino->i_sb->s_dev);
	a[5] = ino->i_ino;
	dt_proc_fire_path(dp, regs, a, 6, &vma->vm_file->f_path);
	dt_missed(dp, READ_ONCE(kp->nmissed));
	return 0;
}

static const struct dt_arg_info dt_proc_args_mmap[] = {
	{ "addr", "unsigned long", 0, 1 },
	{ "len", "unsigned long", 1, 1 },
	{ "offset", "unsigned long", 2, 1 },
	{ "prot", "int", 3, 1 },
	{ "dev", "dev_t", 4, 1 },
	{ "ino", "unsigned long", 5, 1 },
};

static struct kprobe dt_proc_kp_exec = {
	.symbol_name	= "setup_new_exec",
	.pre_handler	= dt_proc_exec,
};

static struct kprobe dt_proc_kp_mmap = {
	.symbol_name	= "perf_event_mmap",
	.pre_handler	= dt_proc_mmap,
};

struct dt_procdef {
	const char		*pd_func;
	const char		*pd_name;
	const char		*pd_tp;		/* tracepoint, or NULL: */
	struct kprobe		*pd_kp;		/* a kprobe */
	void			*pd_fn;
	const struct dt_arg_info *pd_args;
	u16			 pd_nargs;
	u16			 pd_flags;
};

static const struct dt_procdef dt_procdefs[DT_PROC_N] = {
	[DT_PROC_FORK] = { "process", "fork", "sched_process_fork", NULL,
			   (void *)dt_proc_fork, dt_proc_args_fork,
			   ARRAY_SIZE(dt_proc_args_fork), 0 },
	[DT_PROC_EXEC] = { "process", "exec", NULL, &dt_proc_kp_exec, NULL,
			   dt_proc_args_exec, ARRAY_SIZE(dt_proc_args_exec),
			   DT_PF_PATH },
	[DT_PROC_EXIT] = { "process", "exit", "sched_process_exit", NULL,
			   (void *)dt_proc_exit, dt_proc_args_exit,
			   ARRAY_SIZE(dt_proc_args_exit), 0 },
	[DT_PROC_MMAP] = { "mmap", "exec", NULL, &dt_proc_kp_mmap, NULL,
			   dt_proc_args_mmap, ARRAY_SIZE(dt_proc_args_mmap),
			   DT_PF_PATH },
};

static void __maybe_unused dt_proc_check_types(void)
{
	check_trace_callback_type_sched_process_fork(dt_proc_fork);
	check_trace_callback_type_sched_process_exit(dt_proc_exit);
}

static int dt_proc_index(struct dt_probe *dp)
{
	return (int)((const struct dt_procdef *)dp->dp_priv - dt_procdefs);
}

/* dp_narmed counts the pcb being armed (dt_tp.c's convention) */
static int dt_proc_arm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	int i = dt_proc_index(dp), error;

	if (dt_proc_reg[i])
		return 0;
	if (dt_procdefs[i].pd_tp == NULL)
		error = enable_kprobe(dt_procdefs[i].pd_kp);
	else
		error = tracepoint_probe_register(dt_tp_find(dt_procdefs[i].pd_tp),
						  dt_procdefs[i].pd_fn, dp);
	if (error == 0)
		dt_proc_reg[i] = true;
	return error;
}

static void dt_proc_disarm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	int i = dt_proc_index(dp);

	if (dp->dp_narmed != 1 || !dt_proc_reg[i])
		return;
	if (dt_procdefs[i].pd_tp == NULL) {
		/* cheap to switch: no lingering (dt_stop waits for handlers) */
		disable_kprobe(dt_procdefs[i].pd_kp);
		dt_proc_reg[i] = false;
		return;
	}
	dt_linger_schedule();
}

/* [g] held: unregister the tracepoints no pcb uses any more */
void dt_proc_linger(void)
{
	int i;

	for (i = 0; i < DT_PROC_N; i++) {
		if (!dt_proc_reg[i] || dt_procdefs[i].pd_tp == NULL ||
		    dt_proc_probe[i]->dp_narmed != 0)
			continue;
		tracepoint_probe_unregister(dt_tp_find(dt_procdefs[i].pd_tp),
					    dt_procdefs[i].pd_fn,
					    dt_proc_probe[i]);
		dt_proc_reg[i] = false;
	}
}

static unsigned long dt_proc_missed(struct dt_probe *dp)
{
	const struct dt_procdef *pd = dp->dp_priv;

	return pd->pd_kp != NULL ? READ_ONCE(pd->pd_kp->nmissed) : 0;
}

static const struct dt_provider dt_prov_proc = {
	.dtpv_name	= "proc",
	.dtpv_arm	= dt_proc_arm,
	.dtpv_disarm	= dt_proc_disarm,
};

/* the kprobes' losses are their probes' */
static const struct dt_provider dt_prov_proc_kp = {
	.dtpv_name	= "proc",
	.dtpv_arm	= dt_proc_arm,
	.dtpv_disarm	= dt_proc_disarm,
	.dtpv_missed	= dt_proc_missed,
};

/* [g] held, at module load.  A missing hook leaves its probe out. */
int dt_proc_init(void)
{
	const struct dt_procdef *pd;
	struct dt_probe *dp;
	int i, error;

	dt_pathbuf = __alloc_percpu(DT_PATHMAX, 8);
	if (dt_pathbuf == NULL)
		return -ENOMEM;
	for (i = 0; i < DT_PROC_N; i++) {
		pd = &dt_procdefs[i];
		if (pd->pd_tp != NULL) {
			if (dt_tp_find(pd->pd_tp) == NULL)
				continue;
		} else {
			/* registered disabled: armed by enabling */
			pd->pd_kp->flags = KPROBE_FLAG_DISABLED;
			error = register_kprobe(pd->pd_kp);
			if (error) {
				pr_info("dt: no kprobe on %s (%d): no proc:%s:%s\n",
					pd->pd_kp->symbol_name, error,
					pd->pd_func, pd->pd_name);
				continue;
			}
			dt_proc_kpreg[i] = true;
		}
		dp = dt_probe_new(pd->pd_tp ? &dt_prov_proc : &dt_prov_proc_kp,
				  pd->pd_func, pd->pd_name, pd->pd_nargs,
				  (u8)pd->pd_args[pd->pd_nargs - 1].dtai_slot +
				  pd->pd_args[pd->pd_nargs - 1].dtai_nslots,
				  pd->pd_args, pd->pd_flags);
		if (dp == NULL)
			return -ENOMEM;
		dp->dp_priv = (void *)pd;
		if (pd->pd_tp != NULL)
			dt_tp_iter_range(dt_tp_find(pd->pd_tp),
					 &dp->dp_skip_lo, &dp->dp_skip_hi);
		error = dt_probe_insert(dp);
		if (error) {
			kfree(dp);
			return error;
		}
		/* published last: the kprobe handlers look their probe up here */
		WRITE_ONCE(dt_proc_probe[i], dp);
	}
	return 0;
}

/* module unload: nothing is armed, no handler runs (tracepoints synced) */
void dt_proc_fini(void)
{
	int i;

	for (i = 0; i < DT_PROC_N; i++) {
		if (dt_proc_kpreg[i])
			unregister_kprobe(dt_procdefs[i].pd_kp);
		dt_proc_kpreg[i] = false;
	}
	free_percpu(dt_pathbuf);
	dt_pathbuf = NULL;
}
