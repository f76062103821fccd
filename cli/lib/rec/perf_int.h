/*
 * perf_int.h - what the files of the perf_event_open(2) source share:
 * its probe, ring and source structures and the functions one file
 * calls in another.  Only src_perf.c and the perf_*.c files include it.
 *
 *   src_perf.c       the source's operations (enable, start, stop,
 *                    counters, dump, close) and its constructor
 *   perf_attr.c      perf_event_attr building, PMU and tracefs lookup,
 *                    opening events and rings
 *   perf_sideband.c  COMM/FORK/EXIT/MMAP2/LOST/THROTTLE records into the
 *                    process table and the counters; event id lookup
 *   perf_sample.c    a PERF_RECORD_SAMPLE decoded into a dt_rec
 *   perf_rings.c     reading the rings (side band first, then samples
 *                    merged in time order), the flight copies, polling
 */
#ifndef DT_PERF_INT_H
#define DT_PERF_INT_H

#include "dt_grow.h"
#include "dt_htab.h"
#include "source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"
#include "offcpu.h"
#include "machine.h"
#include "provkind.h"
#include "tasks.h"
#include "tracefs.h"
#include "unwind.h"
#include "unwind_pool.h"
#include "util.h"

#define CTX_MARK	((uint64_t)-4095)	/* callchain context markers are above */
#define DEF_RING	(1U << 20)
#define DEF_RING_DWARF	(4U << 20)	/* with user stack copies */
#define FLIGHT_SB_RING	(256U << 10)	/* flight: side band only, read all along */

enum pkind { PK_TIMER, PK_SYSENTER, PK_SYSEXIT, PK_TP, PK_KPROBE, PK_RAWENTER, PK_RAWEXIT,
	     PK_UPROBE };

#define NSYS	1024	/* syscall numbers below this are served by raw_syscalls */

/* What a kprobe's samples carry (REGS_INTR), as dt.ko stores them */
#define KP_ARG_REGS	DTUP_ARGREGS_MASK
#define KP_RET_REGS	(1ULL << DTUP_AX)

/* One selected probe.  [I] after enable. */
struct pprobe {
	uint32_t	id;		/* dt probe id */
	uint16_t	flags;		/* DT_PF_* */
	uint8_t		kind;		/* enum pkind */
	uint64_t	period_ns;	/* timers */
	unsigned	evtflags;	/* DTEVT_* */
	struct dtt_format *fmt;		/* tracepoints */
	struct dtt_layout lay;
	int		raw;		/* syscall served by the raw_syscalls event */
	char		filter[4096];	/* PK_RAW*: the id filter */
	uint32_t	*bynr;		/* PK_RAW*: syscall nr -> probe index + 1 */
	int		ustack_copy;	/* its event copies user registers and stack */
	uint8_t		chain;		/* its events carry PERF_SAMPLE_CALLCHAIN */
	uint8_t		pc_only;	/* ... but no user frames: the stack
					 * copy's pc stands for them until
					 * unwound (src_perf's ustack_nofp) */
	const struct dtp_uprobe *up;	/* PK_UPROBE: file, sites, registers (the catalog's) */
	uint64_t	regs_mask;	/* REGS_USER its events copy (unwinder's and
					 * uprobe's together); 0: none */
	uint32_t	stack_req;	/* STACK_USER bytes its events copy; 0: none */
	uint64_t	kaddr;		/* PK_KPROBE: the function's address, 0: by name */
	uint64_t	intr_mask;	/* REGS_INTR its events sample; 0: none */
	uint8_t		offcpu;		/* DTOFF_* of --offcpu's probes, else 0 */
	uint16_t	ooff;		/* offcpu: raw offset of the other task's tid */
	uint16_t	poff;		/* offcpu: raw offset of sched_switch's prev_pid, or 0 */
};

/* What perf's event id stands for (src_perf's ids, indexed by idix). */
struct evid {
	uint64_t	id;
	uint32_t	probe;		/* index into probes */
	uint32_t	site;		/* PK_UPROBE: index into the probe's sites */
};

/* One CPU's ring. */
struct ring {
	int		fd;		/* [I] the owner (tracking) event */
	int		cpu;		/* [I] */
	struct perf_event_mmap_page *meta;	/* [I] */
	unsigned char	*data;		/* [I] */
	uint64_t	size;		/* [I] data bytes, a power of two */
	uint64_t	sb_pos;		/* [r] side-band handled up to here */
	uint64_t	rhead;		/* [r] data_head for this read's two passes */
	uint64_t	mpos, mts;	/* [r] the merge's next record, its time */
	const struct perf_event_header *mh;	/* [r] that record in data, or NULL */
	/* flight: a copy of the backward ring taken by dump, its records
	 * oldest first [r] */
	unsigned char	*fcopy;		/* size bytes, read like data */
	uint64_t	*fpos;		/* positions, for at(..., fend) */
	size_t		fn, fcur;	/* records, samples handed out so far */
	uint64_t	fend;		/* head + size: the end of what is valid */
	int		fwrapped;	/* more was ever written than it holds */
	uint64_t	throttled_at;	/* [r] 0: not throttled */
	uint32_t	throttled_probe;	/* [r] */
};

struct src_perf {
	struct dtsrc	s;
	int		cgfd;		/* [I] --cgroup's directory (cfg's), or -1 */
	const char	*tfroot;	/* [I] */
	struct pprobe	*probes;	/* [I] */
	size_t		nprobes;
	struct evid	*ids;		/* [I] after enable: one per event */
	size_t		nids;		/* [I] */
	uint32_t	idcap;		/* dt_htab numbers entries in 32 bits */
	struct dt_htab	idix;		/* [I] id -> index in ids */
	int		*fds;		/* every event fd, for enable/disable/close */
	size_t		nfds, fdcap;
	struct ring	*rings;		/* [I] indexed 0..nrings */
	size_t		nrings;
	int		ncpus;		/* [I] possible CPUs (counters' index) */
	struct dtcap_count *counts;	/* [r] per CPU */
	uint64_t	*seen;		/* [r] per CPU: samples of counting events
					 * (not timers), kept or not */
	uint64_t	*fired;		/* per CPU, after stop: events' own counts */
	/*
	 * Per CPU, after stop: samples the kernel could not write
	 * (PERF_FORMAT_LOST), complete where LOST records are not (the kernel
	 * reports those at its next successful write).  An event's own count
	 * is no measure of what it should have written: with targets, a
	 * tracepoint naming a task (sched_wakeup's wakee) counts in the
	 * target's event when another task fires it, and nothing is written.
	 */
	uint64_t	*fmtlost;	/* [r] */
	int		no_fmtlost;	/* [r] a kernel before 6.0, or flight: counts */
	uint64_t	*lost;		/* [r] per CPU: PERF_RECORD_LOST* counts */
	int		*fdcpu;		/* per fd: its CPU */
	uint32_t	*fdprobe;	/* per fd: probe index + 1; 0: tracking */
	struct dtm	*m;		/* [I] the session's machine: fed from the
					 * side band, handed every sample */
	/*
	 * [r] With targets, the target processes and every child they forked
	 * (the tracking events report only theirs); p.ts: kept from then on.  Uprobe events cannot be
	 * inherited (the kernel reads their path from the forking process's
	 * memory), so they are opened per CPU and their samples filtered here.
	 */
	struct tasks	tgts;
	/* [r] With targets and --offcpu: the targets' threads (p.pid: their
	 * process; exited, p.ts: the time of their EXIT record), for the
	 * scheduler events run by another task that name one (switched to,
	 * woken), or run by one past its exit; those events are per CPU, as
	 * uprobes. */
	struct tasks	ttids;
	uint32_t	self;		/* [I] our tgid: never recorded */
	int		child_mode;	/* enabled on exec of the child */
	int		targeted;	/* -p or a command: not system-wide */
	int		kprobe_type;	/* PMU type, -1: none */
	int		uprobe_type;	/* PMU type, -1: none */
	int		uprobe_refctr;	/* the uprobe PMU takes a semaphore offset */
	int		flight;		/* [I] backward (overwriting) rings */
	/* [I] while opening: a tracking event (leader) found in a child's
	 * context, and the leader opened in its stead (open_event) */
	int		lead_lost, lead_new;
	struct ring	*frings;	/* [I] flight: per CPU, the probes' rings */
	size_t		nfrings;
	int		dumping;	/* [r] between dump(1) and dump(0) */
	int		*trigfds;	/* [I] flight: counting events of cfg.trig */
	size_t		ntrigfds, trigcap;
	int		no_raw;		/* [I] tests: one event per syscall */
	unsigned char	*tmp;		/* [r] a record that wraps the ring */
	size_t		tmpcap;
	/* DWARF user stacks (unwind_pool.h) */
	struct dtunw_pool *pool;	/* NULL: frame pointers only */
	uint32_t	ustack_size;	/* [I] */
	int		ustack_nofp;	/* [I] dtsrc_cfg's: no frame-pointer walk
					 * where the stack is copied */
	int		ustack_auto;	/* [I] frame pointers if copies are refused;
					 * 1: copies for sampled probes, 2: for all */
	uint64_t	fp_behind;	/* [r] kept the frame-pointer stack */
	int		stopped;	/* [r] */
	struct pollfd	*pf;		/* [r] perf_wait's set: every ring's owner */
	size_t		npf;
};

/*
 * Which probes copy the user stack for DWARF unwinding.  dwarf: every
 * probe that records user stacks.  auto: the sampled ones (timers and
 * user probes), where a stack is the point of the event; an event on
 * every system call or tracepoint keeps its frame-pointer stack, since a
 * 16k copy per event would cost far more than the event (use dwarf for
 * those deliberately).
 */
static inline int
dwarf_probe(int autom, const struct pprobe *p)
{
	if (!(p->evtflags & DTEVT_USTACK))
		return 0;
	return autom != 1 || p->kind == PK_TIMER || p->kind == PK_UPROBE;
}

/*
 * A tracepoint record's common_flags (the byte after common_type), whose
 * bits are the kernel's enum trace_flag_type (include/linux/trace_events.h,
 * 6.1): the context the event ran in.  Named as the kernel names them;
 * tests/perfsrc compares them with the installed kernel headers.
 */
#define TP_COMMON_FLAGS_OFF	2
enum trace_flag_type {
	TRACE_FLAG_IRQS_OFF		= 0x01,
	TRACE_FLAG_IRQS_NOSUPPORT	= 0x02,
	TRACE_FLAG_NEED_RESCHED		= 0x04,
	TRACE_FLAG_HARDIRQ		= 0x08,
	TRACE_FLAG_SOFTIRQ		= 0x10,
	TRACE_FLAG_PREEMPT_RESCHED	= 0x20,
	TRACE_FLAG_NMI			= 0x40,
	TRACE_FLAG_BH_OFF		= 0x80,
};

/* The dt context (DTR_CTX_*) of a tracepoint record's common_flags. */
static inline uint8_t
tp_flags_ctx(uint8_t flags)
{
	if (flags & TRACE_FLAG_NMI)
		return DTR_CTX_NMI;
	if (flags & TRACE_FLAG_HARDIRQ)
		return DTR_CTX_HARDIRQ;
	if (flags & TRACE_FLAG_SOFTIRQ)
		return DTR_CTX_SOFTIRQ;
	return DTR_CTX_TASK;
}

/* The sample_id_all trailer of a side-band record. */
struct sb_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

/* perf_sideband.c */
struct pprobe *perf_probe_site(struct src_perf *sp, uint64_t id, uint32_t *site);
void perf_sb_comm(struct src_perf *sp, const struct perf_event_header *h, const unsigned char *r,
	const struct sb_trailer *tr, int in_order);
void perf_sb_trailer(const struct perf_event_header *h, const unsigned char *r, size_t body,
	struct sb_trailer *tr);
uint64_t perf_id_rehash(const void *ctx, uint32_t e);
void perf_sideband(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h,
	const unsigned char *r);

/* perf_sample.c */
ssize_t perf_sample(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h,
	const unsigned char *r, char *out, size_t room);

/* perf_rings.c */
const struct perf_event_header *perf_at(struct src_perf *sp, struct ring *rg, uint64_t pos,
	uint64_t head);
void perf_flight_sideband(struct src_perf *sp);
int perf_pollset(struct src_perf *sp);
ssize_t perf_read(struct dtsrc *s, char *buf, size_t len, char *err, size_t errlen);
void perf_wait(struct dtsrc *s, int timeout_ms);

/* perf_attr.c */
int perf_open_ring(struct src_perf *sp, pid_t pid, int cpu, uint32_t bufsize, int backward,
	struct ring **out, char *err, size_t errlen);
int perf_pmu_type(const char *pmu);
int perf_kprobe_type(void);
int perf_open_probe(struct src_perf *sp, size_t pi, pid_t pid, int cpu, struct ring *rg,
	int group, uint32_t bufsize, char *err, size_t errlen);
int perf_sysnr(const char *name);
int perf_raw_groups(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err, size_t errlen);
pid_t *perf_threads_of(pid_t pid, size_t *n);
int perf_open_triggers(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err, size_t errlen);
int perf_kprobe_addrs(struct src_perf *sp, int child, char *err, size_t errlen);

#endif
