// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_syscall.c - syscall:NAME:entry and syscall:NAME:return for every
 * native system call, named from dt_systab.h (generated at build time
 * from the kernel headers' asm/unistd_64.h).
 *
 * The raw sys_enter/sys_exit tracepoints are registered only while some
 * syscall probe is armed (registering sets SYSCALL_WORK_SYSCALL_TRACEPOINT
 * on every thread, which costs every system call); a bitmap per direction
 * makes a non-armed syscall cost one bit test.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/tracepoint.h>
#include <linux/compat.h>
#include <linux/err.h>
#include <asm/syscall.h>
#include <trace/events/syscalls.h>

#include "dt.h"

static const char *const dt_sysnames[] = {
#define DT_SYSCALL(nr, name)	[nr] = #name,
#include "dt_systab.h"
#undef DT_SYSCALL
};
#define DT_NSYSCALLS	ARRAY_SIZE(dt_sysnames)

enum { DT_SYS_ENTRY, DT_SYS_RETURN };

/* [p] bit nr: syscall nr has an armed probe in that direction */
static unsigned long dt_sysmap[2][BITS_TO_LONGS(DT_NSYSCALLS)];
/* [g] armed pcbs per syscall and direction, keeps the bit */
static unsigned int dt_sysarmed[2][DT_NSYSCALLS];
/* [I] the probes, NULL for holes in the syscall numbering */
static struct dt_probe *dt_sysprobe[2][DT_NSYSCALLS];
static struct tracepoint *dt_tp_enter, *dt_tp_exit;
static unsigned int dt_tp_refs[2];	/* [g] armed syscall pcbs */
static bool dt_tp_reg[2];		/* [g] registered (may linger) */

static const struct dt_arg_info dt_sysargs_entry[6] = {
	{ "arg0", "long", 0, 1 }, { "arg1", "long", 1, 1 },
	{ "arg2", "long", 2, 1 }, { "arg3", "long", 3, 1 },
	{ "arg4", "long", 4, 1 }, { "arg5", "long", 5, 1 },
};
/* entries of calls naming a path: the registers, then the path (dt_sysstr.c) */
#define DT_SYSARGS_STR(k) {						\
	{ "arg0", "long", 0, 1 }, { "arg1", "long", 1, 1 },		\
	{ "arg2", "long", 2, 1 }, { "arg3", "long", 3, 1 },		\
	{ "arg4", "long", 4, 1 }, { "arg5", "long", 5, 1 },		\
	{ "arg" #k "_str", "char[32]", 6, DT_SYSSTR_SLOTS } }
static const struct dt_arg_info dt_sysargs_str[2][7] = {
	DT_SYSARGS_STR(0), DT_SYSARGS_STR(1),
};
/*
 * execve(filename, argv, envp): its three registers, the path, then
 * argv[0] and its length where the other three registers would be
 */
static const struct dt_arg_info dt_sysargs_execve[6] = {
	{ "arg0", "long", 0, 1 }, { "arg1", "long", 1, 1 },
	{ "arg2", "long", 2, 1 },
	{ "arg0_str", "char[32]", 3, DT_SYSSTR_SLOTS },
	{ "argv0", "char[16]", 3 + DT_SYSSTR_SLOTS, DT_ARGV0_SLOTS - 1 },
	{ "argv0_len", "long", 2 + DT_SYSSTR_SLOTS + DT_ARGV0_SLOTS, 1 },
};
#define DT_EXECVE_SLOTS	(3 + DT_SYSSTR_SLOTS + DT_ARGV0_SLOTS)
/*
 * execveat(fd, filename, argv, envp, flags): five registers, the path and
 * argv[0] take 12 slots of DT_MAXARGS; the three user addresses mean
 * nothing once the copies are made, so fd and flags, then the copies
 */
static const struct dt_arg_info dt_sysargs_execveat[5] = {
	{ "arg0", "long", 0, 1 }, { "arg4", "long", 1, 1 },
	{ "arg1_str", "char[32]", 2, DT_SYSSTR_SLOTS },
	{ "argv0", "char[16]", 2 + DT_SYSSTR_SLOTS, DT_ARGV0_SLOTS - 1 },
	{ "argv0_len", "long", 1 + DT_SYSSTR_SLOTS + DT_ARGV0_SLOTS, 1 },
};
#define DT_EXECVEAT_SLOTS	(2 + DT_SYSSTR_SLOTS + DT_ARGV0_SLOTS)
static const struct dt_arg_info dt_sysargs_return[2] = {
	{ "retval", "long", 0, 1 }, { "errno", "int", 1, 1 },
};

static void dt_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	/* the six registers, then a path's slots when the call names one */
	unsigned long args[6 + DT_SYSSTR_SLOTS] __uninitialized;
	unsigned int nslots = 6;
	int s;

	/* dt_fire takes u64 slots: the same 64 bits as unsigned long here */
	BUILD_BUG_ON(sizeof(args[0]) != sizeof(u64));
	BUILD_BUG_ON(DT_EXECVE_SLOTS > ARRAY_SIZE(args) ||
		     DT_EXECVE_SLOTS > DT_MAXARGS);
	BUILD_BUG_ON(DT_EXECVEAT_SLOTS > ARRAY_SIZE(args) ||
		     DT_EXECVEAT_SLOTS > DT_MAXARGS);
	if ((unsigned long)id >= DT_NSYSCALLS ||
	    !test_bit(id, dt_sysmap[DT_SYS_ENTRY]) || in_compat_syscall())
		return;
	syscall_get_arguments(current, regs, args);
	s = dt_sysstr_arg(id);
	if (id == __NR_execve) {
		/* argv (slot 1) is read before slot 3 on is written */
		dt_sysstr_argv0(args[1], (u64 *)&args[3 + DT_SYSSTR_SLOTS]);
		dt_sysstr_copy(args[0], (u64 *)&args[3]);
		nslots = DT_EXECVE_SLOTS;
	} else if (id == __NR_execveat) {
		unsigned long path = args[1], argv = args[2];

		args[1] = args[4];
		dt_sysstr_argv0(argv, (u64 *)&args[2 + DT_SYSSTR_SLOTS]);
		dt_sysstr_copy(path, (u64 *)&args[2]);
		nslots = DT_EXECVEAT_SLOTS;
	} else if (s >= 0) {
		dt_sysstr_copy(args[s], (u64 *)&args[6]);
		nslots = 6 + DT_SYSSTR_SLOTS;
	}
	dt_caller_regs(&cr);
	dt_fire(dt_sysprobe[DT_SYS_ENTRY][id], NULL, &cr, (const u64 *)args,
		nslots, 0);
}

static void dt_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	long id = syscall_get_nr(current, regs);
	struct pt_regs cr __uninitialized;	/* see dt_caller_regs */
	u64 args[2] __uninitialized;

	if ((unsigned long)id >= DT_NSYSCALLS ||
	    !test_bit(id, dt_sysmap[DT_SYS_RETURN]) || in_compat_syscall())
		return;
	args[0] = (u64)ret;
	args[1] = IS_ERR_VALUE(ret) ? (u64)-ret : 0;
	dt_caller_regs(&cr);
	dt_fire(dt_sysprobe[DT_SYS_RETURN][id], NULL, &cr, args, 2,
		DTR_RETURN);
}

/* the kernel's own prototypes: a mismatch is a compile error */
static void __maybe_unused dt_sys_check_types(void)
{
	check_trace_callback_type_sys_enter(dt_sys_enter);
	check_trace_callback_type_sys_exit(dt_sys_exit);
}

static int dt_sys_tp(int dir, bool on)
{
	struct tracepoint *tp = dir == DT_SYS_ENTRY ? dt_tp_enter : dt_tp_exit;
	void *fn = dir == DT_SYS_ENTRY ? (void *)dt_sys_enter :
	    (void *)dt_sys_exit;

	if (tp == NULL)
		return -ENOENT;
	if (on)
		return tracepoint_probe_register(tp, fn, NULL);
	return tracepoint_probe_unregister(tp, fn, NULL);
}

static int dt_sys_arm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	int dir = (dp->dp_flags & DT_PF_RETURN) ? DT_SYS_RETURN : DT_SYS_ENTRY;
	long nr = dp->dp_data;
	int error;

	if (!dt_tp_reg[dir]) {
		error = dt_sys_tp(dir, true);
		if (error)
			return error;
		dt_tp_reg[dir] = true;
	}
	dt_tp_refs[dir]++;
	if (dt_sysarmed[dir][nr]++ == 0)
		set_bit(nr, dt_sysmap[dir]);
	return 0;
}

static void dt_sys_disarm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	int dir = (dp->dp_flags & DT_PF_RETURN) ? DT_SYS_RETURN : DT_SYS_ENTRY;
	long nr = dp->dp_data;

	if (--dt_sysarmed[dir][nr] == 0)
		clear_bit(nr, dt_sysmap[dir]);
	if (--dt_tp_refs[dir] == 0)
		dt_linger_schedule();
}

void dt_syscall_linger(void)
{
	int dir;

	/* the caller waits for running probes before freeing anything */
	for (dir = DT_SYS_ENTRY; dir <= DT_SYS_RETURN; dir++) {
		if (dt_tp_reg[dir] && dt_tp_refs[dir] == 0) {
			dt_sys_tp(dir, false);
			dt_tp_reg[dir] = false;
		}
	}
}

static const struct dt_provider dt_prov_syscall = {
	.dtpv_name	= "syscall",
	.dtpv_arm	= dt_sys_arm,
	.dtpv_disarm	= dt_sys_disarm,
};

int dt_syscall_init(void)
{
	struct dt_probe *dp;
	unsigned long skip[2][2];
	unsigned int nr;
	int dir, error;

	dt_tp_enter = dt_tp_find("sys_enter");
	dt_tp_exit = dt_tp_find("sys_exit");
	if (dt_tp_enter == NULL || dt_tp_exit == NULL) {
		pr_warn("dt: no sys_enter/sys_exit tracepoint: no syscall probes\n");
		return 0;
	}
	dt_tp_iter_range(dt_tp_enter, &skip[DT_SYS_ENTRY][0],
			 &skip[DT_SYS_ENTRY][1]);
	dt_tp_iter_range(dt_tp_exit, &skip[DT_SYS_RETURN][0],
			 &skip[DT_SYS_RETURN][1]);
	for (nr = 0; nr < DT_NSYSCALLS; nr++) {
		if (dt_sysnames[nr] == NULL)
			continue;
		for (dir = DT_SYS_ENTRY; dir <= DT_SYS_RETURN; dir++) {
			if (dir == DT_SYS_ENTRY && nr == __NR_execve)
				dp = dt_probe_new(&dt_prov_syscall,
						  dt_sysnames[nr], "entry",
						  ARRAY_SIZE(dt_sysargs_execve),
						  DT_EXECVE_SLOTS,
						  dt_sysargs_execve, 0);
			else if (dir == DT_SYS_ENTRY && nr == __NR_execveat)
				dp = dt_probe_new(&dt_prov_syscall,
						  dt_sysnames[nr], "entry",
						  ARRAY_SIZE(dt_sysargs_execveat),
						  DT_EXECVEAT_SLOTS,
						  dt_sysargs_execveat, 0);
			else if (dir == DT_SYS_ENTRY && dt_sysstr_arg(nr) >= 0)
				dp = dt_probe_new(&dt_prov_syscall,
						  dt_sysnames[nr], "entry", 7,
						  6 + DT_SYSSTR_SLOTS,
						  dt_sysargs_str[dt_sysstr_arg(nr)],
						  0);
			else if (dir == DT_SYS_ENTRY)
				dp = dt_probe_new(&dt_prov_syscall,
						  dt_sysnames[nr], "entry", 6,
						  6, dt_sysargs_entry, 0);
			else
				dp = dt_probe_new(&dt_prov_syscall,
						  dt_sysnames[nr], "return", 2,
						  2, dt_sysargs_return,
						  DT_PF_RETURN);
			if (dp == NULL)
				return -ENOMEM;
			dp->dp_data = nr;
			dp->dp_skip_lo = skip[dir][0];
			dp->dp_skip_hi = skip[dir][1];
			error = dt_probe_insert(dp);
			if (error) {
				kfree(dp);
				return error;
			}
			dt_sysprobe[dir][nr] = dp;
		}
	}
	return 0;
}

void dt_syscall_exit(void)
{
	/*
	 * Nothing to do: the tracepoints are registered only while a pcb is
	 * armed and every descriptor is closed before the module can go.
	 */
}
