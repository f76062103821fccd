/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * dt_abi.h - the user/kernel interface of /dev/dt.
 *
 * Shared verbatim by kernel/dt.ko and every tool; nothing here may depend
 * on anything but fixed-width integers so that it compiles in both worlds.
 * Tools must check DTIOCGVERSION == DT_ABI_VERSION before any other ioctl.
 *
 * Every structure has only naturally aligned fixed-width members and no
 * implicit padding, so 32- and 64-bit callers see the same layout.
 */
#ifndef DT_ABI_H
#define DT_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
typedef __u8 dt_u8;
typedef __u16 dt_u16;
typedef __u32 dt_u32;
typedef __u64 dt_u64;
typedef __s32 dt_s32;
typedef __s64 dt_s64;
#else
#include <stdint.h>
#include <sys/ioctl.h>
typedef uint8_t dt_u8;
typedef uint16_t dt_u16;
typedef uint32_t dt_u32;
typedef uint64_t dt_u64;
typedef int32_t dt_s32;
typedef int64_t dt_s64;
#endif

/* 4: DTEVT_UREGS, DTIOCSETUSTACK; 5: DTIOCSETFILTER, DTIOCSETRMODE,
 * DTIOCFREEZE, DTIOCUPROBE; 6: the proc provider, DT_PF_PATH, DTR_PATH;
 * 7: dtst_resets (struct dt_stats grew: DTIOCGSTATS and the stride of
 * DTIOCGCPUSTATS changed); 8: DTEVT_SUBJECT, tracepoint:sched:sched_wakeup_new,
 * sched_switch's prev_state encoded as tracefs's */
#define DT_ABI_VERSION		8
#define DT_DEVICE		"/dev/dt"

#define DT_PROVLEN		16	/* "profile", "syscall", ... */
#define DT_FUNCLEN		64	/* syscall, tracepoint or kernel function */
#define DT_NAMELEN		64	/* "entry", "97", "sched_process_exec" */
#define DT_KPROBE_FUNCLEN	128
#define DT_MAXARGS		10	/* argument slots of one event */
#define DT_ARGNAMELEN		24
#define DT_MAXFRAMES		127	/* frames per kernel or user stack */
#define DT_COMMLEN		16

/*
 * Ring size per CPU: bytes, power of two.  The minimum holds two records
 * of the largest size (stacks of DT_MAXFRAMES both), so one never fails to
 * fit a drained ring.
 */
#define DT_BUFSZ_MIN		8192
#define DT_BUFSZ_DEFAULT	(1U << 20)
#define DT_BUFSZ_MAX		(64U << 20)

/* Timer probes: period limits (ns). 10 us is perf's cpu-clock floor. */
#define DT_PERIOD_MIN_NS	10000ULL
#define DT_PERIOD_MAX_NS	(3600ULL * 1000000000ULL)

/* dtpi_flags */
#define DT_PF_TIMER		0x0001	/* profile/interval: takes dten_period_ns */
#define DT_PF_RETURN		0x0002	/* a return probe: args are retval, errno */
#define DT_PF_PATH		0x0004	/* its events carry a path (DTR_PATH) */

struct dt_probe_info {
	dt_u32	dtpi_id;		/* >= 1; 0 is never a probe */
	dt_u16	dtpi_nargs;		/* logical arguments (see dt_probe_args) */
	dt_u16	dtpi_flags;		/* DT_PF_* */
	char	dtpi_prov[DT_PROVLEN];	/* NUL-terminated */
	char	dtpi_func[DT_FUNCLEN];
	char	dtpi_name[DT_NAMELEN];
};

/* DTIOCGPLIST: copy up to dtpl_count probes, return the total in dtpl_count. */
struct dt_probe_list {
	dt_u32	dtpl_count;		/* in: capacity; out: number of probes */
	dt_u32	dtpl_pad;		/* must be 0 */
	dt_u64	dtpl_probes;		/* user pointer to dt_probe_info[] */
};

/*
 * One logical argument.  It occupies dtai_nslots consecutive u64 slots of
 * the record's argument array starting at dtai_slot: 1 for integers and
 * pointers, 2 for "char[16]" (bytes in slot order, NUL-padded).
 */
struct dt_arg_info {
	char	dtai_name[DT_ARGNAMELEN];	/* "prev_pid" */
	char	dtai_type[DT_ARGNAMELEN];	/* "pid_t", "long", "char[16]" */
	dt_u8	dtai_slot;
	dt_u8	dtai_nslots;
	dt_u8	dtai_pad[6];
};

/* DTIOCGARGS */
struct dt_probe_args {
	dt_u32	dtpa_id;		/* in */
	dt_u32	dtpa_nargs;		/* out: logical arguments */
	struct dt_arg_info dtpa_args[DT_MAXARGS];
};

/*
 * Counters.  Per CPU they are exact; DTIOCGSTATS sums every field over all
 * possible CPUs.  Conservation, once the rings are drained:
 *	produced == read + overwritten + dropped
 * (overwritten is 0 unless the ring mode is DT_RING_OVERWRITE).
 * recursive events are not produced: they are probes that fired inside the
 * tracer's own code at the same context level.  missed events are kprobe
 * hits that the kprobe core lost before dt saw them (the kprobe's and the
 * kretprobe's nmissed: no free return instance, or a kprobe handler was
 * already running on that CPU); each is counted in produced and dropped
 * as well, so conservation includes them.
 */
struct dt_stats {
	dt_u64	dtst_produced;		/* events committed or dropped */
	dt_u64	dtst_read;		/* events copied out by read() */
	dt_u64	dtst_dropped;		/* ring full */
	dt_u64	dtst_skipped;		/* timer ticks missed (overruns) */
	dt_u64	dtst_recursive;		/* probe fired inside the tracer */
	dt_u64	dtst_nested;		/* events written while an outer event
					 * of a lower context level was being
					 * written on the same CPU (kept) */
	dt_u64	dtst_missed;		/* lost by the kprobe core (also in
					 * produced and dropped) */
	dt_u64	dtst_throttled;		/* non-timer events not written: the
					 * CPU's tracing budget was spent
					 * (also in produced and dropped) */
	/* since ABI 5 */
	dt_u64	dtst_overwritten;	/* DT_RING_OVERWRITE: committed events
					 * that newer ones replaced unread */
	dt_u64	dtst_filtered;		/* left out by the descriptor's filter
					 * (DTIOCSETFILTER): not produced */
	dt_u64	dtst_untracked;		/* processes forked by a target that
					 * the filter had no room to follow:
					 * their events are filtered out */
	/* since ABI 7 */
	dt_u64	dtst_resets;		/* a record of impossible size was met
					 * (a module bug): the ring's unread
					 * records were discarded, uncounted */
};

/* DTIOCGCPUSTATS: per-CPU counters, indexed by CPU number. */
struct dt_cpu_stats {
	dt_u32	dtcs_ncpus;		/* in: capacity; out: nr_cpu_ids */
	dt_u32	dtcs_pad;		/* must be 0 */
	dt_u64	dtcs_stats;		/* user pointer to dt_stats[] */
};

/* dten_evtflags: what each event of the probe carries besides the basics */
#define DTEVT_COMM		0x0001	/* comm of current */
#define DTEVT_KSTACK		0x0002	/* kernel stack */
#define DTEVT_USTACK		0x0004	/* user stack (frame pointers) */
#define DTEVT_FUNCARGS		0x0008	/* arguments / return value */
#define DTEVT_ALL		0x000f	/* the above: fixed-size additions */
#define DTEVT_UREGS		0x0010	/* user registers and a copy of the
					 * user stack (struct dt_uregs) */
/*
 * Also the events the filter leaves out by current but would keep by the
 * event's subject: the task switched to (sched_switch's next), the task
 * woken (sched_wakeup, sched_wakeup_new).  Without it a target's
 * switch-in and its wakeups by others, run by non-targets, are lost, and
 * its blocked time cannot be known.  Such an event is current's (pid,
 * comm: the waker's) but carries no stack and no user registers: current
 * is not a process the recorder follows (the perf source's bare copies
 * have none either, and readers tell these events by that).  No effect
 * on probes without a subject.
 */
#define DTEVT_SUBJECT		0x0020
#define DTEVT_VALID		(DTEVT_ALL | DTEVT_UREGS | DTEVT_SUBJECT)

/* DTIOCPRBENABLE / DTIOCPRBDISABLE */
struct dt_enable {
	dt_u32	dten_id;
	dt_u32	dten_evtflags;		/* DTEVT_*; ignored by DISABLE */
	dt_u64	dten_period_ns;		/* DT_PF_TIMER probes; 0: default */
};

/*
 * Return probes: how many calls of the function may be inside it at once
 * with their return still observed.  Calls beyond that are counted as
 * missed.  0 asks for the default: DT_KRP_MAXACTIVE_DEFAULT, or 16 per
 * possible CPU if that is more.
 */
#define DT_KRP_MAXACTIVE_DEFAULT	256
#define DT_KRP_MAXACTIVE_MAX		4096

/*
 * DTIOCKPROBE: create (or find) kprobe:FUNC:entry and kprobe:FUNC:return.
 * A kprobe is shared by every descriptor; asking an existing one for a
 * larger dtkp_maxactive raises it if its return probe is not recording.
 */
struct dt_kprobe {
	char	dtkp_func[DT_KPROBE_FUNCLEN];	/* in, NUL-terminated */
	dt_u32	dtkp_entry_id;			/* out */
	dt_u32	dtkp_return_id;			/* out */
	dt_u32	dtkp_maxactive;			/* in: 0 default; out: in effect */
	dt_u32	dtkp_pad;			/* must be 0 */
};

/*
 * DTIOCUPROBE: create (or find) uprobe:FUNC:entry and uprobe:FUNC:return
 * on the instruction at file offset dtup_offset of the regular file at
 * dtup_path (user space resolves symbols and USDT notes to offsets).
 * dtup_refctr, if not 0, is the file offset of a USDT semaphore the kernel
 * counts up while the probe is registered.  dtup_func names the probes
 * (any label; user space keeps the full name).  The entry probe's
 * arguments are the six argument registers; the return probe's the return
 * value and an errno slot that is always 0.  With DTUP_USDT the entry
 * probe's arguments are instead the dtup_nargs operands of dtup_args (0
 * to DT_MAXARGS; without it dtup_nargs must be 0).  dtup_attach, if not 0, is
 * the entry id of a probe this site joins (the other notes of one USDT
 * probe): it fires that probe, with at most that probe's arguments.  A
 * probe is placed in the processes that map the file only while a
 * descriptor records it.
 */
#define DT_UA_NONE		0	/* not fetched: 0 */
#define DT_UA_CONST		1	/* dtua_value */
#define DT_UA_REG		2	/* register dtua_reg */
#define DT_UA_MEM		3	/* *(dtua_reg + dtua_value) */

struct dt_uparg {
	dt_u8	dtua_kind;		/* DT_UA_* */
	dt_u8	dtua_reg;		/* perf's x86 numbering (AX 0 ... R15 23) */
	dt_u8	dtua_size;		/* 1, 2, 4 or 8 bytes */
	dt_u8	dtua_signed;		/* sign-extend */
	dt_u8	dtua_shift;		/* 8 for %ah-style high bytes, else 0 */
	dt_u8	dtua_pad[3];		/* must be 0 */
	dt_s64	dtua_value;		/* constant, or displacement */
};

struct dt_uprobe {
	dt_u64	dtup_path;		/* in: user pointer, NUL-terminated */
	dt_u64	dtup_offset;		/* in: file offset of the instruction */
	dt_u64	dtup_refctr;		/* in: semaphore's file offset; 0: none */
	char	dtup_func[DT_FUNCLEN];	/* in, NUL-terminated */
	dt_u32	dtup_entry_id;		/* out */
	dt_u32	dtup_return_id;		/* out */
	dt_u32	dtup_attach;		/* in: 0, or the entry id to join */
	dt_u32	dtup_nargs;		/* in: DTUP_USDT: operands in dtup_args */
	struct dt_uparg dtup_args[DT_MAXARGS];
	dt_u32	dtup_flags;		/* in: DTUP_* */
	dt_u32	dtup_pad;		/* must be 0 */
};
#define DTUP_USDT		0x0001	/* a USDT note: arguments from dtup_args */

/*
 * DTIOCGCLOCK: one sample of both clocks; wall = ts + (real - mono).
 * dtr_ts is local_clock(), the clock perf and ftrace use by default: it
 * starts at CLOCK_MONOTONIC's value, is monotonic on each CPU, and agrees
 * across CPUs when the TSC is stable (within a tick when it is not).
 */
struct dt_clock {
	dt_u64	dtck_mono_ns;		/* the clock of dtr_ts */
	dt_s64	dtck_real_ns;		/* CLOCK_REALTIME, ns since the epoch */
};

/*
 * DTIOCSETFILTER: which processes' events the descriptor records, checked
 * before anything else of an event is gathered; events left out take no
 * ring space and are counted only as dtst_filtered.  Set while not
 * recording; a new filter replaces the old one whole.
 *
 * The descriptor's opener (its tgid at open) is left out unless DTF_SELF:
 * a recorder's own system calls would otherwise feed on themselves.  That
 * is the filter of a descriptor that never set one.
 *
 * DTF_PIDS keeps only the tgids of dtf_pids (up to DT_FILTER_MAXPIDS) and
 * dtf_execpid; with DTF_CHILDREN also every process they fork from then
 * on, and those processes' children, followed in the kernel at fork (a
 * process reparented when its parent exits stays a target; a tgid reused
 * by an unrelated process does not).  dtf_execpid (0: none) is a process
 * that becomes a target at its next exec: a recorder's COMMAND, forked and
 * waiting, whose events as a copy of the recorder are not wanted.  It is
 * followed across fork like the others only once it has exec'd.
 * DTF_COMM keeps only tasks whose comm is dtf_comm (exactly, NUL
 * terminated).  DTF_CGROUP keeps only tasks in the cgroup (v2) whose
 * directory is open as dtf_cgroupfd, or in a cgroup below it.  An event
 * must pass each filter given.
 * Unknown flags, dtf_npids over the limit or without DTF_PIDS, an empty
 * or unterminated dtf_comm with DTF_COMM, a dtf_cgroupfd other than 0
 * without DTF_CGROUP are EINVAL; a dtf_cgroupfd that is no cgroup v2
 * directory is EBADF.
 */
#define DTF_PIDS		0x0001
#define DTF_CHILDREN		0x0002
#define DTF_COMM		0x0004
#define DTF_SELF		0x0008
#define DTF_CGROUP		0x0010
#define DTF_ALL			0x001f
#define DT_FILTER_MAXPIDS	1024

struct dt_filter {
	dt_u32	dtf_flags;		/* DTF_* */
	dt_u32	dtf_npids;		/* tgids at dtf_pids */
	dt_u64	dtf_pids;		/* user pointer to dt_u32[dtf_npids] */
	dt_u32	dtf_execpid;		/* DTF_PIDS: target from its next exec */
	dt_s32	dtf_cgroupfd;		/* DTF_CGROUP: a cgroup v2 directory */
	char	dtf_comm[DT_COMMLEN];	/* DTF_COMM */
};

/*
 * DTIOCSETRMODE, while not recording: what a full ring does with a new
 * event.  DT_RING_DROP (the default) drops it and counts it in
 * dtst_dropped; DT_RING_OVERWRITE (a flight recorder) frees the oldest
 * records to make room and counts them in dtst_overwritten.  An
 * overwriting ring is read only while frozen (DTIOCFREEZE) or after
 * recording stops: read(2) returns EBUSY otherwise, and poll never reports
 * it readable.
 *
 * DTIOCFREEZE 1 freezes every ring of the descriptor: once it returns no
 * event is being written, later ones are dropped (counted) until DTIOCFREEZE
 * 0, and read(2) returns what the rings held at the freeze, oldest first
 * on each CPU, then 0 (end of the dump) instead of blocking.  EINVAL
 * unless the mode is DT_RING_OVERWRITE.
 */
#define DT_RING_DROP		0
#define DT_RING_OVERWRITE	1

#define DTIOCGVERSION	_IOR('D', 0, dt_u32)
#define DTIOCGPLIST	_IOWR('D', 1, struct dt_probe_list)
#define DTIOCGARGS	_IOWR('D', 2, struct dt_probe_args)
#define DTIOCGSTATS	_IOR('D', 3, struct dt_stats)
#define DTIOCRECORD	_IOW('D', 4, dt_u32)	/* 1 start, 0 stop */
#define DTIOCPRBENABLE	_IOW('D', 5, struct dt_enable)
#define DTIOCPRBDISABLE	_IOW('D', 6, struct dt_enable)
#define DTIOCSETBUFSZ	_IOW('D', 7, dt_u32)	/* per-CPU bytes, before recording */
#define DTIOCGCPUSTATS	_IOWR('D', 8, struct dt_cpu_stats)
#define DTIOCKPROBE	_IOWR('D', 9, struct dt_kprobe)
#define DTIOCGCLOCK	_IOR('D', 10, struct dt_clock)
#define DTIOCSETFILTER	_IOW('D', 20, struct dt_filter)
#define DTIOCSETRMODE	_IOW('D', 21, dt_u32)	/* DT_RING_* */
#define DTIOCFREEZE	_IOW('D', 22, dt_u32)	/* 1 freeze, 0 thaw */
#define DTIOCUPROBE	_IOWR('D', 23, struct dt_uprobe)

/* dtr_flags */
#define DTR_RETURN		0x01	/* args[0] = return value, args[1] = errno */
#define DTR_KSTACK_TRUNC	0x02	/* kernel stack cut at DT_MAXFRAMES */
#define DTR_USTACK_TRUNC	0x04	/* user stack cut (depth or fault) */
#define DTR_USERMODE		0x08	/* the probe interrupted user mode */
#define DTR_UREGS		0x10	/* a struct dt_uregs follows ustack */
#define DTR_PATH		0x20	/* a struct dt_path ends the record */

/* dtr_ctx: interrupt_context_level() of the writer */
#define DTR_CTX_TASK		0
#define DTR_CTX_SOFTIRQ		1
#define DTR_CTX_HARDIRQ		2
#define DTR_CTX_NMI		3

/*
 * What read(2) returns: whole records, back to back, each dtr_size bytes
 * (a multiple of 8) laid out as
 *	struct dt_rec; u64 args[dtr_nargs]; u64 kstack[dtr_nkstack];
 *	u64 ustack[dtr_nustack];
 * Stacks are innermost frame first.  Records of one CPU are in time order;
 * records of different CPUs are not merged.
 */
struct dt_rec {
	dt_u32	dtr_size;
	dt_u32	dtr_probe;
	dt_u64	dtr_ts;			/* ns, local_clock() (DTIOCGCLOCK) */
	dt_u32	dtr_pid;		/* tgid */
	dt_u32	dtr_tid;
	dt_u16	dtr_cpu;
	dt_u8	dtr_nargs;		/* slots, <= DT_MAXARGS */
	dt_u8	dtr_nkstack;		/* <= DT_MAXFRAMES */
	dt_u8	dtr_nustack;		/* <= DT_MAXFRAMES */
	dt_u8	dtr_flags;		/* DTR_* */
	dt_u8	dtr_ctx;		/* DTR_CTX_* */
	dt_u8	dtr_pad;
	char	dtr_comm[DT_COMMLEN];	/* zeroed unless DTEVT_COMM */
};

#define DT_REC_SIZE(nargs, nk, nu) \
	(sizeof(struct dt_rec) + 8 * ((nargs) + (nk) + (nu)))

/*
 * User registers and stack for unwinding with DWARF CFI in user space
 * (DTEVT_UREGS), as perf's PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER
 * give them.  A record with DTR_UREGS in dtr_flags is laid out as
 *	struct dt_rec; u64 args[]; u64 kstack[]; u64 ustack[];
 *	struct dt_uregs; u8 stack[dtur_size]; zero padding to 8 bytes
 * and dtr_size counts all of it.  Events of a task with no user context
 * (kernel threads) and of 32-bit tasks carry none (no DTR_UREGS).
 *
 * The registers are the user context's: the interrupted ones when the
 * probe interrupted user mode, else those saved at kernel entry.  They
 * are in perf's x86-64 numbering order (PERF_REG_X86_*) of the registers
 * in DT_UREGS_MASK, so dtur_regs with that mask is a perf REGS_USER set.
 *
 * The stack is copied from the user sp upwards without faulting pages in
 * (the kernel may not sleep where probes fire): the copy stops at the
 * first page that is not mapped or not resident, usually the top of the
 * stack mapping, and DTUR_SHORT then says it holds fewer bytes than the
 * session asked for (DTIOCSETUSTACK).  A copy that stopped short ends the
 * unwound stack there, marked truncated.
 */
#define DT_UREG_AX	0
#define DT_UREG_BX	1
#define DT_UREG_CX	2
#define DT_UREG_DX	3
#define DT_UREG_SI	4
#define DT_UREG_DI	5
#define DT_UREG_BP	6
#define DT_UREG_SP	7
#define DT_UREG_IP	8
#define DT_UREG_R8	9	/* r8 .. r15: 9 .. 16 */
#define DT_NUREGS	17
/* perf register bits of dtur_regs[0..DT_NUREGS): ax..ip, r8..r15 */
#define DT_UREGS_MASK	0xff01ffULL

/* DTUR flags */
#define DTUR_SHORT	0x0001	/* fewer stack bytes than asked for */

struct dt_uregs {
	dt_u64	dtur_regs[DT_NUREGS];
	dt_u32	dtur_size;		/* stack bytes that follow */
	dt_u32	dtur_flags;		/* DTUR_* */
};

/*
 * DTIOCSETUSTACK: user stack bytes copied per DTEVT_UREGS event, a
 * multiple of 8 from DT_USTACK_MIN to DT_USTACK_MAX; DT_USTACK_DEFAULT
 * until set.  Only while not recording.  Recording starts only if a
 * record of that size fits twice in the ring (DTIOCSETBUFSZ), else
 * DTIOCRECORD fails with EMSGSIZE.
 */
#define DT_USTACK_MIN		512
#define DT_USTACK_DEFAULT	16384
#define DT_USTACK_MAX		65536
#define DTIOCSETUSTACK		_IOW('D', 16, dt_u32)
/* the largest record with a user stack copy of n bytes */
#define DT_REC_MAXSIZE(n) \
	(DT_REC_SIZE(DT_MAXARGS, DT_MAXFRAMES, DT_MAXFRAMES) + \
	 sizeof(struct dt_uregs) + (n))

/*
 * Paths (DT_PF_PATH probes: proc:process:exec, proc:mmap:exec).  A record
 * with DTR_PATH in dtr_flags ends with
 *	struct dt_path; char path[dtph_len]; at least one NUL, up to the
 *	next multiple of 8
 * after everything else it holds (after the dt_uregs copy, if any), and
 * dtr_size counts it.  The path is the file's, as d_path(9) names it in
 * the mount namespace of the process that fired the probe (" (deleted)"
 * appended when the file has been unlinked); dtph_len < DT_PATHMAX.  When
 * the kernel could not name the file (a path longer than DT_PATHMAX, a
 * file outside the process's root), dtph_len is 0 and DTPH_UNKNOWN set.
 * Recording starts only if a record with the longest path fits twice in
 * the ring (DT_REC_PATHMAXSIZE), else DTIOCRECORD fails with EMSGSIZE.
 */
#define DT_PATHMAX		4096	/* PATH_MAX: bytes with the NUL */
#define DTPH_UNKNOWN		0x0001

struct dt_path {
	dt_u32	dtph_len;		/* bytes before the NUL */
	dt_u32	dtph_flags;		/* DTPH_* */
};

/* the bytes a path of len takes after its struct dt_path */
#define DT_PATH_PAD(len)	(((len) + 8) & ~7U)
/* the largest record of a DT_PF_PATH probe without stack copies */
#define DT_REC_PATHMAXSIZE \
	(DT_REC_SIZE(DT_MAXARGS, DT_MAXFRAMES, DT_MAXFRAMES) + \
	 sizeof(struct dt_path) + DT_PATHMAX)

#endif /* DT_ABI_H */
