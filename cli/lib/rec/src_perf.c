/*
 * src_perf.c - the perf_event_open(2) source; see source.h.
 *
 * Layout: one ring per CPU, owned by a "tracking" dummy event that also
 * reports COMM/FORK/EXIT/MMAP2; every probe event of that CPU redirects
 * its samples into the same ring (PERF_EVENT_IOC_SET_OUTPUT), as perf
 * record does.  Each sample starts with PERF_SAMPLE_IDENTIFIER, which maps
 * it back to its probe.  Samples become dt_recs in the caller's buffer.
 *
 * Accounting per CPU: read = samples kept, dropped = PERF_RECORD_LOST and
 * LOST_SAMPLES, so produced = read + dropped holds exactly; timer ticks
 * lost to throttling are counted as skipped (from THROTTLE/UNTHROTTLE
 * times and the period).  The recorder's own events never count.
 */
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
#include "proctab.h"
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

/*
 * Syscall numbers of this architecture, from the build's <asm/unistd.h>.
 * Syscall probes whose number is known share one raw_syscalls event per
 * CPU with an id filter: one descriptor instead of one per syscall, and
 * closing 700 syscall events costs the kernel about 30 s of RCU grace
 * periods.  Syscalls newer than the headers keep their own events.
 */
static const struct { int nr; const char *name; } systab[] = {
#define DT_SYSCALL(nr, name) { nr, #name },
#include "usystab.h"
#undef DT_SYSCALL
};
#define NSYS	1024

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
	const struct dtp_uprobe *up;	/* PK_UPROBE: file, sites, registers (the catalog's) */
	uint64_t	regs_mask;	/* REGS_USER its events copy (unwinder's and
					 * uprobe's together); 0: none */
	uint32_t	stack_req;	/* STACK_USER bytes its events copy; 0: none */
	uint64_t	kaddr;		/* PK_KPROBE: the function's address, 0: by name */
	uint64_t	intr_mask;	/* REGS_INTR its events sample; 0: none */
	uint8_t		offcpu;		/* DTOFF_* of --offcpu's probes, else 0 */
	uint16_t	ooff;		/* offcpu: raw offset of the other task's tid */
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
	struct proctab	pt;		/* [r] processes, from the side band */
	/*
	 * [r] With targets, the target processes and every child they forked
	 * (the tracking events report only theirs); p.ts: kept from then on.  Uprobe events cannot be
	 * inherited (the kernel reads their path from the forking process's
	 * memory), so they are opened per CPU and their samples filtered here.
	 */
	struct tasks	tgts;
	/* [r] With targets and --offcpu: the targets' threads (p.pid: their
	 * process), for the scheduler events run by another task that name
	 * one (switched to, woken); those events are per CPU, as uprobes. */
	struct tasks	ttids;
	uint32_t	self;		/* [I] our tgid: never recorded */
	int		child_mode;	/* enabled on exec of the child */
	int		targeted;	/* -p or a command: not system-wide */
	int		kprobe_type;	/* PMU type, -1: none */
	int		uprobe_type;	/* PMU type, -1: none */
	int		uprobe_refctr;	/* the uprobe PMU takes a semaphore offset */
	int		flight;		/* [I] backward (overwriting) rings */
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
	int		ustack_auto;	/* [I] frame pointers if copies are refused;
					 * 1: copies for sampled probes, 2: for all */
	uint64_t	fp_behind;	/* [r] kept the frame-pointer stack */
	int		stopped;	/* [r] */
};

/*
 * Which probes copy the user stack for DWARF unwinding.  dwarf: every
 * probe that records user stacks.  auto: the sampled ones (timers and
 * user probes), where a stack is the point of the event; an event on
 * every system call or tracepoint keeps its frame-pointer stack, since a
 * 16k copy per event would cost far more than the event (use dwarf for
 * those deliberately).
 */
static int
dwarf_probe(int autom, const struct pprobe *p)
{
	if (!(p->evtflags & DTEVT_USTACK))
		return 0;
	return autom != 1 || p->kind == PK_TIMER || p->kind == PK_UPROBE;
}

static long
perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* ----------------------------------------------------------- side band */

struct sb_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

static void
on_mmap2(struct src_perf *sp, const struct perf_event_header *h, const unsigned char *r)
{
	uint32_t pid, prot;
	uint64_t addr, len, pgoff;
	const char *name;
	size_t fixed = 8 + 24 + 24 + 8;	/* pid,tid; addr,len,pgoff; maj..gen; prot,flags */

	if (h->size < sizeof(*h) + fixed + 1)
		return;
	memcpy(&pid, r, 4);
	memcpy(&addr, r + 8, 8);
	memcpy(&len, r + 16, 8);
	memcpy(&pgoff, r + 24, 8);
	memcpy(&prot, r + 56, 4);
	name = (const char *)r + 64;
	if (memchr(name, '\0', h->size - sizeof(*h) - fixed) == NULL)
		return;
	/* the trailer's time is not needed: ordering comes from the ring */
	proctab_mmap(&sp->pt, pid, addr, len, pgoff, prot, name, 0);
}

static void
on_comm(struct src_perf *sp, const struct perf_event_header *h, const unsigned char *r,
	const struct sb_trailer *tr, int in_order)
{
	uint32_t pid, tid;
	char comm[DTCAP_COMMLEN];

	if (h->size < sizeof(*h) + 9)
		return;
	memcpy(&pid, r, 4);
	memcpy(&tid, r + 4, 4);
	snprintf(comm, sizeof(comm), "%.*s", (int)(h->size - sizeof(*h) - 8), (const char *)r + 8);
	if (!in_order) {
		/* names change in ring order, with the samples around them */
		proctab_set_comm(&sp->pt, tid, comm);
		return;
	}
	if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && pid != sp->self && sp->targeted) {
		/* the command is ours until its exec: kept from then on */
		struct task *t = task_get(&sp->tgts, pid, 0);
		if (t && t->p.ts == UINT64_MAX)
			t->p.ts = tr->time;
	}
	/* a new image: its mappings follow as MMAP2 records */
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
		proctab_exec(&sp->pt, pid, tr->time, comm, "");
}

static void
on_fork(struct src_perf *sp, const unsigned char *r, const struct sb_trailer *tr)
{
	uint32_t pid, ppid;

	/* the child's name comes in order, with the samples (fork_comm) */
	memcpy(&pid, r, 4);
	memcpy(&ppid, r + 4, 4);
	if (sp->targeted && pid != ppid)
		task_get(&sp->tgts, pid, 1);
	if (sp->targeted && task_get(&sp->tgts, pid, 0)) {
		/* a target's thread: switches into it and wakeups of it are kept
		 * from the per-CPU copies (--offcpu) */
		uint32_t tid;
		memcpy(&tid, r + 8, 4);
		struct task *t = task_get(&sp->ttids, tid, 1);
		if (t)
			t->p.pid = pid;
	}
	proctab_fork(&sp->pt, pid, ppid, tr->time);
}

static void
parse_trailer(const struct perf_event_header *h, const unsigned char *r, size_t body,
	      struct sb_trailer *tr)
{
	/* TID, TIME, CPU, IDENTIFIER: 32 bytes at the end of every record */
	memset(tr, 0, sizeof(*tr));
	if (h->size < sizeof(*h) + body + 32)
		return;
	r += h->size - sizeof(*h) - 32;
	memcpy(&tr->pid, r, 4);
	memcpy(&tr->tid, r + 4, 4);
	memcpy(&tr->time, r + 8, 8);
	memcpy(&tr->cpu, r + 16, 4);
	memcpy(&tr->id, r + 24, 8);
}

static uint64_t
id_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct src_perf *)ctx)->ids[e].id);
}

static struct pprobe *
probe_site(struct src_perf *sp, uint64_t id, uint32_t *site)
{
	uint32_t e;

	for (size_t i = dt_htab_first(&sp->idix, dt_htab_hash_int(id));
	     (e = dt_htab_at(&sp->idix, i)) != DT_HTAB_NONE; i = dt_htab_next(&sp->idix, i)) {
		if (sp->ids[e].id == id) {
			*site = sp->ids[e].site;
			return &sp->probes[sp->ids[e].probe];
		}
	}
	return NULL;
}

static struct pprobe *
probe_of(struct src_perf *sp, uint64_t id)
{
	uint32_t site;

	return probe_site(sp, id, &site);
}

static void
sideband(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h,
	 const unsigned char *r)
{
	struct sb_trailer tr;
	uint32_t cpu = rg->cpu >= 0 ? (uint32_t)rg->cpu : 0;

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		on_mmap2(sp, h, r);
		break;
	case PERF_RECORD_COMM:
		parse_trailer(h, r, 9, &tr);
		on_comm(sp, h, r, &tr, 1);
		break;
	case PERF_RECORD_FORK:
		if (h->size < sizeof(*h) + 24)
			break;
		parse_trailer(h, r, 24, &tr);
		on_fork(sp, r, &tr);
		break;
	case PERF_RECORD_EXIT: {
		uint32_t pid, tid;
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(&pid, r, 4);
		memcpy(&tid, r + 8, 4);
		if (pid == tid)
			proctab_exit(&sp->pt, pid);
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost;
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(&lost, r + 8, 8);
		sp->lost[cpu] += lost;
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		uint64_t lost;
		if (h->size < sizeof(*h) + 8)
			break;
		memcpy(&lost, r, 8);
		sp->lost[cpu] += lost;
		break;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		uint64_t t, id;
		struct pprobe *p;
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(&t, r, 8);
		memcpy(&id, r + 8, 8);
		p = probe_of(sp, id);
		if (p == NULL || p->kind != PK_TIMER || !p->period_ns)
			break;
		if (h->type == PERF_RECORD_THROTTLE) {
			rg->throttled_at = t ? t : 1;
		} else if (rg->throttled_at) {
			/* the ticks the timer would have taken meanwhile */
			if (t > rg->throttled_at)
				sp->counts[cpu].skipped += (t - rg->throttled_at) / p->period_ns;
			rg->throttled_at = 0;
		}
		break;
	}
	default:
		break;
	}
}

/* ----------------------------------------------------------- samples */

/*
 * A sample's PERF_SAMPLE_REGS_USER (abi, then one u64 per bit of mask,
 * lowest register first; none for a kernel thread) and
 * PERF_SAMPLE_STACK_USER (size, bytes, the valid length), registers stored
 * by perf number in regs (DTUP_NREGS).  The mask is the event's own: the
 * unwinder's and a uprobe's arguments' together, each taking what it needs.
 */
static int
take_user(const unsigned char **pp, const unsigned char *end, uint64_t mask, uint32_t stack,
	  uint64_t *regs, uint64_t *have, const unsigned char **stk, uint64_t *stklen)
{
	const unsigned char *p = *pp;
	uint64_t abi, size;

	*have = 0;
	if (mask) {
		if (end - p < 8)
			return -1;
		memcpy(&abi, p, 8);
		p += 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			for (int r = 0; r < 64; r++) {
				if (!(mask & (1ULL << r)))
					continue;
				if (end - p < 8)
					return -1;
				if (r < DTUP_NREGS) {
					memcpy(&regs[r], p, 8);
					*have |= 1ULL << r;
				}
				p += 8;
			}
			/* a 32-bit process's registers mean something else */
			if (abi != PERF_SAMPLE_REGS_ABI_64)
				*have = 0;
		}
	}
	if (stack) {
		if (end - p < 8)
			return -1;
		memcpy(&size, p, 8);
		p += 8;
		if (size) {
			if ((uint64_t)(end - p) < size + 8)
				return -1;
			*stk = p;
			memcpy(stklen, p + size, 8);
			if (*stklen > size)
				*stklen = size;
			p += size + 8;
		}
	}
	*pp = p;
	return 0;
}

/* A uprobe's dt slots: argument registers, rax on return, or SDT arguments. */
static unsigned
user_args(const struct dtp_uprobe *up, uint32_t site, const uint64_t *regs, uint64_t have,
	  const unsigned char *stk, uint64_t stklen, uint64_t *args)
{
	static const int8_t argreg[6] = { DTUP_DI, DTUP_SI, DTUP_DX, DTUP_CX, DTUP_R8, DTUP_R9 };
	unsigned n = 0;

	if (up->ret) {
		args[0] = have & (1ULL << DTUP_AX) ? regs[DTUP_AX] : 0;
		args[1] = 0;
		return 2;
	}
	if (!up->usdt) {
		for (int i = 0; i < 6; i++)
			args[i] = have & (1ULL << argreg[i]) ? regs[argreg[i]] : 0;
		return 6;
	}
	for (size_t i = 0; i < up->nsites; i++)
		if (up->sites[i].nargs > n)
			n = up->sites[i].nargs;
	if (site < up->nsites) {
		const struct dtp_usite *st = &up->sites[site];
		for (unsigned i = 0; i < st->nargs; i++) {
			int ok;
			args[i] = dtup_arg_value(&st->args[i], regs, have, stk, stklen, &ok);
		}
	}
	return n;
}

/*
 * Whether to keep a --offcpu event run by pid: 1 yes, 0 no.  System-wide
 * the recorder's own events go, but for its switches: they say who ran
 * next.  With targets each probe has two events: one per target task
 * (inherited, with stacks) for what the targets run, and a bare one per
 * CPU (bare: no stacks, so the system's other switches cost little ring
 * space) for the switches into a target and the wakeups of one that other
 * tasks run.
 */
static int
offcpu_keep(struct src_perf *sp, const struct pprobe *p, int bare, uint32_t pid, uint64_t ts,
	    const unsigned char *raw, uint32_t rawsize)
{
	int32_t other = -1;
	const struct task *t;

	if (raw && (size_t)p->ooff + 4 <= rawsize)
		memcpy(&other, raw + p->ooff, 4);
	if (!sp->targeted)
		return pid != sp->self || p->offcpu == DTOFF_SWITCH;
	t = task_get(&sp->tgts, pid, 0);
	if (!bare)
		return t != NULL && ts >= t->p.ts;
	if (t != NULL)
		return 0;	/* a target's own: its inherited event has it */
	if (other <= 0 || (t = task_get(&sp->ttids, (uint32_t)other, 0)) == NULL)
		return 0;
	return (t = task_get(&sp->tgts, t->p.pid, 0)) != NULL && ts >= t->p.ts;
}

/*
 * One PERF_RECORD_SAMPLE as a dt_rec at out (room bytes).  Returns the
 * record's size, 0 if it is not kept (our own, unknown id), or -1 when
 * it does not fit.
 */
static ssize_t
sample(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h,
       const unsigned char *r, char *out, size_t room)
{
	const unsigned char *p = r, *end = r + (h->size - sizeof(*h));
	uint64_t id, ts, nr = 0;
	int rawbase = -1;
	uint32_t pid, tid, cpu, rawsize = 0;
	const uint64_t *chain = NULL;
	const unsigned char *raw = NULL;
	struct pprobe *pr;
	struct dt_rec *d;
	uint64_t args[DTCAP_MAXARGS], *dst;
	unsigned nargs = 0, nk = 0, nu = 0, flags = 0;
	const uint64_t *kf = NULL, *uf = NULL;
	size_t need;
	uint32_t site = 0;
	struct pprobe *evpr;
	uint64_t allregs[DTUP_NREGS], have = 0, ustk_len = 0;
	uint64_t uregs[__builtin_popcountll(DTUNW_REGS_MASK)];
	const unsigned char *ustk = NULL;
	int have_regs = 0;

#define TAKE(dstp, n) do { if ((size_t)(end - p) < (n)) return 0; memcpy((dstp), p, (n)); p += (n); } while (0)
	TAKE(&id, 8);
	TAKE(&pid, 4);
	TAKE(&tid, 4);
	TAKE(&ts, 8);
	TAKE(&cpu, 4);
	p += 4;
	if ((pr = probe_site(sp, id, &site)) == NULL)
		return 0;
	evpr = pr;	/* the event's own layout, before raw syscalls name the probe */
	/* --offcpu with targets: site 1 is the bare per-CPU event */
	int bare = pr->offcpu && site == 1;
	if (cpu < (uint32_t)sp->ncpus && pr->kind != PK_TIMER)
		sp->seen[cpu]++;
	if (pr->kind == PK_UPROBE && sp->targeted) {
		/* a per-CPU uprobe hit outside the targets, or in the command
		 * before its exec (still dtrec's code): not recorded */
		const struct task *t = task_get(&sp->tgts, pid, 0);
		if (t == NULL || ts < t->p.ts)
			return 0;
	}
	if (pr->kind == PK_RAWENTER || pr->kind == PK_RAWEXIT) {
		/* the raw event's record names the syscall: that is the probe */
		const unsigned char *q = p;
		uint64_t skip = 0, nrv;
		uint32_t rs;
		if (pr->evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) {
			if ((size_t)(end - q) < 8)
				return 0;
			memcpy(&skip, q, 8);
			if (skip > 4096 || (size_t)(end - q) < 8 + skip * 8)
				return 0;
			q += 8 + skip * 8;
		}
		if ((size_t)(end - q) < 4 + 16)
			return 0;
		memcpy(&rs, q, 4);
		memcpy(&nrv, q + 4 + 8, 8);
		if (rs < 16 || nrv >= NSYS || pr->bynr[nrv] == 0)
			return 0;
		rawbase = pr->kind;
		pr = &sp->probes[pr->bynr[nrv] - 1];
	}
	if ((pr->evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) && !bare) {
		TAKE(&nr, 8);
		if (nr > 4096 || (size_t)(end - p) < nr * 8)
			return 0;
		chain = (const uint64_t *)(const void *)p;
		p += nr * 8;
	}
	if (pr->kind != PK_TIMER && pr->kind != PK_KPROBE && pr->kind != PK_UPROBE) {
		TAKE(&rawsize, 4);
		if ((size_t)(end - p) < rawsize)
			return 0;
		raw = p;
		p += rawsize;
	}
	if ((evpr->regs_mask || evpr->stack_req) && !bare) {
		if (take_user(&p, end, evpr->regs_mask, evpr->stack_req, allregs, &have, &ustk,
			      &ustk_len) < 0)
			return 0;
		if (evpr->ustack_copy && (have & DTUNW_REGS_MASK) == DTUNW_REGS_MASK) {
			/* the unwinder takes its registers in its mask's order */
			unsigned k = 0;
			for (int r = 0; r < DTUP_NREGS; r++)
				if (DTUNW_REGS_MASK & (1ULL << r))
					uregs[k++] = allregs[r];
			have_regs = 1;
		}
	}
	if (evpr->intr_mask) {
		uint64_t abi, v;
		unsigned k = 0;
		TAKE(&abi, 8);
		for (int r = 0; abi != PERF_SAMPLE_REGS_ABI_NONE && r < 64; r++) {
			if (!(evpr->intr_mask & (1ULL << r)))
				continue;
			TAKE(&v, 8);
			if (r < DTUP_NREGS)
				allregs[r] = v;
			k++;
		}
		if (abi == PERF_SAMPLE_REGS_ABI_NONE || k == 0)
			have = 0;
		else
			have = evpr->intr_mask;
	}
#undef TAKE
	if (evpr->offcpu) {
		if (!offcpu_keep(sp, evpr, bare, pid, ts, raw, rawsize))
			return 0;
	} else if (pid == sp->self) {
		return 0;
	}
	/* callchain: context markers, then frames; entries above CTX_MARK switch */
	if (chain) {
		int ctx = 0;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t v;
			memcpy(&v, &chain[i], 8);
			if (v >= CTX_MARK) {
				ctx = v == (uint64_t)PERF_CONTEXT_KERNEL ? 1 :
				      v == (uint64_t)PERF_CONTEXT_USER ? 2 : 0;
				if (ctx == 1 && !kf)
					kf = &chain[i + 1];
				if (ctx == 2 && !uf)
					uf = &chain[i + 1];
				continue;
			}
			if (ctx == 1 && nk < DT_MAXFRAMES)
				nk++;
			else if (ctx == 1)
				flags |= DTR_KSTACK_TRUNC;
			else if (ctx == 2 && nu < DT_MAXFRAMES)
				nu++;
			else if (ctx == 2)
				flags |= DTR_USTACK_TRUNC;
		}
		if (!(pr->evtflags & DTEVT_KSTACK))
			nk = 0;
		if (!(pr->evtflags & DTEVT_USTACK))
			nu = 0;
		/*
		 * The kernel follows frame pointers through code built
		 * without them too, reading saved data (text, zeros) as
		 * return addresses: the stack ends at the first frame that
		 * is no code of the process, marked cut.
		 */
		for (unsigned i = 0; i < nu; i++) {
			uint64_t pc;
			memcpy(&pc, &uf[i], 8);
			if (proctab_is_code(&sp->pt, pid, ts, pc) == 0) {
				nu = i;
				flags |= DTR_USTACK_TRUNC;
				break;
			}
		}
	}
	memset(args, 0, sizeof(args));
	switch (pr->kind) {
	case PK_SYSEXIT: {
		int64_t ret = 0;
		/* sys_exit_X and raw_syscalls:sys_exit both keep ret at 16 */
		if (raw && rawsize >= 24)
			memcpy(&ret, raw + 16, 8);
		args[0] = (uint64_t)ret;
		args[1] = ret < 0 && ret >= -4095 ? (uint64_t)-ret : 0;
		nargs = 2;
		flags |= DTR_RETURN;
		break;
	}
	case PK_SYSENTER:
		if (rawbase == PK_RAWENTER) {
			/* raw_syscalls:sys_enter: long id; unsigned long args[6] */
			if (raw && rawsize >= 64)
				memcpy(args, raw + 16, 48);
			nargs = 6;
			break;
		}
		/* FALLTHROUGH */
	case PK_TP:
		if (raw && pr->fmt)
			nargs = dtt_decode(pr->fmt, &pr->lay, raw, rawsize, args);
		break;
	case PK_KPROBE:
		if ((have & KP_RET_REGS) && (pr->flags & DT_PF_RETURN)) {
			uint64_t ret = allregs[DTUP_AX];
			args[0] = ret;
			args[1] = ret >= (uint64_t)-4095 ? -ret : 0;	/* IS_ERR_VALUE */
			nargs = 2;
		} else if ((have & KP_ARG_REGS) == KP_ARG_REGS) {
			static const int ar[6] = { DTUP_DI, DTUP_SI, DTUP_DX, DTUP_CX, DTUP_R8,
						   DTUP_R9 };
			for (int i = 0; i < 6; i++)
				args[i] = allregs[ar[i]];
			nargs = 6;
		}
		if (pr->flags & DT_PF_RETURN)
			flags |= DTR_RETURN;
		break;
	case PK_UPROBE:
		nargs = user_args(pr->up, site, allregs, have, ustk, ustk_len, args);
		if (pr->up->ret)
			flags |= DTR_RETURN;
		break;
	default:
		break;
	}
	if (h->misc & PERF_RECORD_MISC_USER)
		flags |= DTR_USERMODE;
	need = DT_REC_SIZE(nargs, nk, nu);
	if (need > room)
		return -1;
	d = (struct dt_rec *)(void *)out;
	memset(d, 0, sizeof(*d));
	d->dtr_size = (uint32_t)need;
	d->dtr_probe = pr->id;
	d->dtr_ts = ts;
	d->dtr_pid = pid;
	d->dtr_tid = tid;
	d->dtr_cpu = (uint16_t)cpu;
	d->dtr_nargs = (uint8_t)nargs;
	d->dtr_nkstack = (uint8_t)nk;
	d->dtr_nustack = (uint8_t)nu;
	d->dtr_flags = (uint8_t)flags;
	/* timers fire from a hard interrupt; tracepoints say where they ran */
	d->dtr_ctx = DTR_CTX_TASK;
	if (pr->kind == PK_TIMER)
		d->dtr_ctx = DTR_CTX_HARDIRQ;
	else if (raw && rawsize >= 3)
		d->dtr_ctx = raw[2] & 0x40 ? DTR_CTX_NMI : raw[2] & 0x08 ? DTR_CTX_HARDIRQ :
			     raw[2] & 0x10 ? DTR_CTX_SOFTIRQ : DTR_CTX_TASK;
	if (pr->evtflags & DTEVT_COMM)
		memcpy(d->dtr_comm, proctab_comm_of(&sp->pt, pid, tid, cpu), DT_COMMLEN);
	dst = (uint64_t *)(void *)(d + 1);
	memcpy(dst, args, 8 * (size_t)nargs);
	if (nk)
		memcpy(dst + nargs, kf, 8 * (size_t)nk);
	if (nu)
		memcpy(dst + nargs + nk, uf, 8 * (size_t)nu);
	(void)rg;
	sp->counts[cpu < (uint32_t)sp->ncpus ? cpu : 0].read++;
	if (have_regs && ustk_len && sp->pool && (pr->evtflags & DTEVT_USTACK)) {
		/* a process we never saw map anything: its mappings from /proc */
		proctab_known(&sp->pt, pid, ts);
		if (dtunw_pool_submit(sp->pool, d, uregs, DTUNW_REGS_MASK, ustk, ustk_len) == 0)
			return 0;	/* it comes back from the pool */
		sp->fp_behind++;
	}
	return (ssize_t)need;
}

/* ------------------------------------------------------------- rings */

/* The record at pos, contiguous (copied when it wraps), or NULL if bad. */
static const struct perf_event_header *
at(struct src_perf *sp, struct ring *rg, uint64_t pos, uint64_t head)
{
	uint64_t off = pos & (rg->size - 1);
	struct perf_event_header hh;
	size_t first;

	if (head - pos < sizeof(hh))
		return NULL;
	/* the header itself is 8-byte aligned, so it never wraps */
	memcpy(&hh, rg->data + off, sizeof(hh));
	if (hh.size < sizeof(hh) || hh.size > head - pos)
		return NULL;
	if (off + hh.size <= rg->size)
		return (const struct perf_event_header *)(const void *)(rg->data + off);
	if (sp->tmpcap < hh.size) {
		unsigned char *n = realloc(sp->tmp, 65536);
		if (n == NULL)
			return NULL;
		sp->tmp = n;
		sp->tmpcap = 65536;
	}
	first = (size_t)(rg->size - off);
	memcpy(sp->tmp, rg->data + off, first);
	memcpy(sp->tmp + first, rg->data, hh.size - first);
	return (const struct perf_event_header *)(const void *)sp->tmp;
}

/* A new thread or process starts with its creator's name of the time of
 * the fork (called in order: not the name the creator takes later). */
static void
fork_comm(struct src_perf *sp, const struct perf_event_header *h)
{
	uint32_t tid, ptid;
	struct task *pc;

	if (h->size < sizeof(*h) + 24)
		return;
	memcpy(&tid, (const unsigned char *)(h + 1) + 8, 4);
	memcpy(&ptid, (const unsigned char *)(h + 1) + 12, 4);
	if ((pc = task_get(&sp->pt.comms, ptid, 0)) != NULL)
		proctab_set_comm(&sp->pt, tid, pc->comm);
}

/*
 * Flight: the records of the frozen rings, side band of every ring
 * first, then each ring's samples oldest first.
 */
/*
 * Flight: the side band has forward rings of its own, read all along, so
 * the processes (and targets' children) are known however old their
 * records are when a dump reads their samples.
 */
static void
flight_sideband(struct src_perf *sp)
{
	const struct perf_event_header *h;

	for (size_t i = 0; i < sp->nrings; i++) {
		struct ring *rg = &sp->rings[i];
		uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE), pos;
		for (pos = rg->meta->data_tail; (h = at(sp, rg, pos, head)); pos += h->size) {
			if (h->type == PERF_RECORD_SAMPLE)
				continue;
			sideband(sp, rg, h, (const unsigned char *)(h + 1));
			if (h->type == PERF_RECORD_COMM) {
				struct sb_trailer tr;
				parse_trailer(h, (const unsigned char *)(h + 1), 9, &tr);
				on_comm(sp, h, (const unsigned char *)(h + 1), &tr, 0);
			}
			if (h->type == PERF_RECORD_FORK)
				fork_comm(sp, h);
		}
		__atomic_store_n(&rg->meta->data_tail, pos, __ATOMIC_RELEASE);
	}
}

/*
 * The second, in-order pass over a ring's records: names change with the
 * samples around them, and samples become dt_recs at out.  Bytes written,
 * or -1 when out (room bytes) cannot take the sample.
 */
static ssize_t
in_order(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h, char *out,
	 size_t room)
{
	if (h->type == PERF_RECORD_COMM) {
		struct sb_trailer tr;
		parse_trailer(h, (const unsigned char *)(h + 1), 9, &tr);
		on_comm(sp, h, (const unsigned char *)(h + 1), &tr, 0);
	}
	if (h->type == PERF_RECORD_FORK)
		fork_comm(sp, h);
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	return sample(sp, rg, h, (const unsigned char *)(h + 1), out, room);
}

static ssize_t
flight_read(struct src_perf *sp, char *buf, size_t len)
{
	size_t used = 0;
	const struct perf_event_header *h;

	if (!sp->dumping) {
		flight_sideband(sp);
		return 0;
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i], copy = *rg;
		if (rg->fcur)
			continue;	/* side band done on the first call */
		copy.data = rg->fcopy;
		for (size_t k = 0; k < rg->fn; k++)
			if ((h = at(sp, &copy, rg->fpos[k], rg->fend)) && h->type != PERF_RECORD_SAMPLE)
				sideband(sp, rg, h, (const unsigned char *)(h + 1));
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i], copy = *rg;
		copy.data = rg->fcopy;
		for (; rg->fcur < rg->fn; rg->fcur++) {
			ssize_t n;
			if ((h = at(sp, &copy, rg->fpos[rg->fcur], rg->fend)) == NULL)
				continue;
			if ((n = in_order(sp, rg, h, buf + used, len - used)) < 0)
				return (ssize_t)used;	/* buf is full: the rest waits */
			used += (size_t)n;
		}
	}
	return (ssize_t)used;
}

/* The time of a record (samples' TIME, side band's sample_id_all); 0: none. */
static uint64_t
rec_time(const struct perf_event_header *h)
{
	const unsigned char *r = (const unsigned char *)(h + 1);
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size >= sizeof(*h) + 24)
			memcpy(&t, r + 16, 8);	/* after IDENTIFIER and TID */
	} else if (h->size >= sizeof(*h) + 32) {
		memcpy(&t, r + h->size - sizeof(*h) - 24, 8);
	}
	return t;
}

/* Where ring rg's merge stands: the time of its record at mpos, or
 * UINT64_MAX when it has none before the mark. */
static void
merge_peek(struct src_perf *sp, struct ring *rg, uint64_t mark)
{
	const struct perf_event_header *h = at(sp, rg, rg->mpos, rg->rhead);

	rg->mts = h == NULL ? UINT64_MAX : rec_time(h);
	if (rg->mts >= mark)
		rg->mts = UINT64_MAX;
}

/*
 * The in-order pass over every ring at once, oldest record first: a
 * name changes (COMM) at its time for the samples of every CPU, so a pid
 * that exec'd on one CPU while its events waited on another gets the old
 * name before the exec and the new one after.  Records from mark on (the
 * time taken before the heads were read) wait for the next read: one
 * stamped by then may still be in flight on another CPU, and its task's
 * later records must not overtake it (an exec's COMM not yet written
 * while the new image's samples already are).  Runs of one ring up to
 * the next ring's time go without a search.  Bytes in buf after.
 */
static size_t
merge_rings(struct src_perf *sp, char *buf, size_t used, size_t len, uint64_t mark)
{
	for (size_t i = 0; i < sp->nrings; i++) {
		sp->rings[i].mpos = sp->rings[i].meta->data_tail;
		merge_peek(sp, &sp->rings[i], mark);
	}
	for (;;) {
		struct ring *rg = NULL;
		uint64_t next = UINT64_MAX;
		int full = 0;

		for (size_t i = 0; i < sp->nrings; i++) {
			struct ring *c = &sp->rings[i];
			if (rg == NULL || c->mts < rg->mts) {
				if (rg && rg->mts < next)
					next = rg->mts;
				rg = c;
			} else if (c->mts < next) {
				next = c->mts;
			}
		}
		if (rg == NULL || rg->mts == UINT64_MAX)
			break;
		while (rg->mts != UINT64_MAX && rg->mts <= next) {
			const struct perf_event_header *h = at(sp, rg, rg->mpos, rg->rhead);
			ssize_t n = in_order(sp, rg, h, buf + used, len - used);
			if (n < 0) {
				full = 1;	/* buf is full: the rest waits */
				break;
			}
			used += (size_t)n;
			rg->mpos += h->size;
			merge_peek(sp, rg, mark);
		}
		if (full)
			break;
	}
	for (size_t i = 0; i < sp->nrings; i++)
		__atomic_store_n(&sp->rings[i].meta->data_tail, sp->rings[i].mpos, __ATOMIC_RELEASE);
	return used;
}

static ssize_t
perf_read(struct dtsrc *s, char *buf, size_t len, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;
	size_t used = 0;
	uint64_t mark;

	(void)err;
	(void)errlen;
	if (sp->flight)
		return flight_read(sp, buf, len);
	/* samples the unwinding workers finished since the last read */
	if (sp->pool)
		used += dtunw_pool_collect(sp->pool, buf, len / 2);
	/*
	 * Side band first, for every record waiting in every ring: a sample
	 * of a process that exec'd, forked or mapped a library on another CPU
	 * then finds its mappings, and a target's new child is known before
	 * its samples.  The time first: see merge_rings.
	 */
	mark = dtu_now_ns();
	for (size_t i = 0; i < sp->nrings; i++) {
		struct ring *rg = &sp->rings[i];
		uint64_t tail = rg->meta->data_tail, pos;
		const struct perf_event_header *h;

		rg->rhead = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
		for (pos = rg->sb_pos > tail ? rg->sb_pos : tail; (h = at(sp, rg, pos, rg->rhead));
		     pos += h->size)
			if (h->type != PERF_RECORD_SAMPLE)
				sideband(sp, rg, h, (const unsigned char *)(h + 1));
		rg->sb_pos = pos;
	}
	used = merge_rings(sp, buf, used, len, sp->stopped ? UINT64_MAX : mark);
	proctab_read_end(&sp->pt);
	if (sp->pool) {
		/* what the workers finished meanwhile (microseconds a sample):
		 * out with this read, not one flush interval later */
		used = dtunw_pool_read_end(sp->pool, buf, used, len, sp->stopped);
	}
	return (ssize_t)used;
}

static void
perf_wait(struct dtsrc *s, int timeout_ms)
{
	struct src_perf *sp = (struct src_perf *)s;
	struct pollfd pf[64];
	size_t n = sp->nrings < 64 ? sp->nrings : 64;

	for (size_t i = 0; i < n; i++) {
		pf[i].fd = sp->rings[i].fd;
		pf[i].events = POLLIN;
		pf[i].revents = 0;
	}
	(void)poll(pf, n, timeout_ms);
}

/* ------------------------------------------------------------- setup */

static void
open_error(int e, const char *what, struct src_perf *sp, char *err, size_t errlen)
{
	char *para = dtu_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	struct rlimit rl;

	if (para)
		para[strcspn(para, "\n")] = '\0';
	if (e == EACCES || e == EPERM)
		dtu_seterr(err, errlen, "%s: perf_event_open: %s: recording the kernel needs root or "
			   "CAP_PERFMON (kernel.perf_event_paranoid is %s)", what, strerror(e),
			   para ? para : "unknown");
	else if (e == EMFILE || e == ENFILE) {
		getrlimit(RLIMIT_NOFILE, &rl);
		dtu_seterr(err, errlen, "%s: too many open files: this recording needs more than %zu "
			   "descriptors and the limit is %llu: raise it (ulimit -n) or select fewer "
			   "probes", what, sp->nfds, (unsigned long long)rl.rlim_cur);
	} else if (e == ENOENT && sp->cgfd >= 0)
		dtu_seterr(err, errlen, "%s: --cgroup: the kernel has no perf_event state for this "
			   "cgroup (perf_event_open: %s); use --source dt", what, strerror(e));
	else if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
		dtu_seterr(err, errlen, "%s: this kernel has no PMU for it (perf_event_open: %s)",
			   what, strerror(e));
	else if (e == ESRCH)
		dtu_seterr(err, errlen, "%s: no such process", what);
	else
		dtu_seterr(err, errlen, "%s: perf_event_open: %s", what, strerror(e));
	free(para);
}

static int
add_fd(struct src_perf *sp, int fd, int cpu, uint32_t probe)
{
	/* three arrays share fdcap: the last to grow sets it */
	size_t c1 = sp->fdcap, c2 = sp->fdcap;
	if (DT_GROW(sp->fds, c1, sp->nfds, 1, 256) ||
	    DT_GROW(sp->fdcpu, c2, sp->nfds, 1, 256) ||
	    DT_GROW(sp->fdprobe, sp->fdcap, sp->nfds, 1, 256))
		return -1;
	sp->fdcpu[sp->nfds] = cpu;
	sp->fdprobe[sp->nfds] = probe;
	sp->fds[sp->nfds++] = fd;
	return 0;
}

/* perf gives every event its own id: no id is added twice. */
static int
add_id(struct src_perf *sp, uint64_t id, uint32_t probe, uint32_t site)
{
	if (DT_GROW(sp->ids, sp->idcap, sp->nids, 1, 512))
		return -1;
	sp->ids[sp->nids] = (struct evid){ .id = id, .probe = probe, .site = site };
	if (dt_htab_add(&sp->idix, dt_htab_hash_int(id), (uint32_t)sp->nids, id_rehash, sp))
		return -1;
	sp->nids++;
	return 0;
}

static void
base_attr(struct src_perf *sp, struct perf_event_attr *a, uint32_t bufsize)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	/* no PERF_SAMPLE_IP: stacks carry the pc, and 8 bytes an event add up */
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;	/* dtr_ts's clock */
	a->disabled = 1;
	a->watermark = 1;
	a->wakeup_watermark = bufsize / 4;	/* no wakeup per event */
	if (sp->child_mode) {
		a->inherit = 1;
		a->enable_on_exec = 1;
	}
}

/*
 * The tracking event of one CPU and target: side band, and the ring.
 * backward (flight): instead a silent event owning the CPU's overwriting
 * ring, which the probes write into; side band keeps its forward ring,
 * read all along, so processes are known however old their records are.
 */
static int
open_ring(struct src_perf *sp, pid_t pid, int cpu, uint32_t bufsize, int backward,
	  struct ring **out, char *err, size_t errlen)
{
	struct perf_event_attr a;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int fd;
	void *m;

	base_attr(sp, &a, bufsize);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	if (backward) {
		/* the newest records overwrite the oldest (read only on dump) */
		a.write_backward = 1;
		a.inherit = 0;
		a.enable_on_exec = 0;
		a.disabled = 0;
	} else {
		a.comm = 1;
		a.comm_exec = 1;
		a.task = 1;
		a.mmap = 1;
		a.mmap2 = 1;
		a.build_id = 1;
		if (pid > 0)
			a.inherit = 1;
	}
	fd = (int)perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		a.build_id = 0;	/* kernels before 5.12 */
		fd = (int)perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		char what[64];
		snprintf(what, sizeof(what), "tracking event on CPU %d", cpu);
		open_error(errno, what, sp, err, errlen);
		return -1;
	}
	/* a read-only mapping is what lets the kernel overwrite (flight) */
	m = mmap(NULL, pg + bufsize, backward ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		char *mk = dtu_read_file("/proc/sys/kernel/perf_event_mlock_kb", NULL);
		if (mk)
			mk[strcspn(mk, "\n")] = '\0';
		close(fd);
		if (e == EPERM || e == ENOMEM)
			dtu_seterr(err, errlen, "mapping a %u-byte ring for CPU %d: %s: over the locked "
				   "memory limit (kernel.perf_event_mlock_kb is %s KiB per user, plus "
				   "ulimit -l): use a smaller ring (-b), run as root, or raise the limit",
				   bufsize, cpu, strerror(e), mk ? mk : "unknown");
		else
			dtu_seterr(err, errlen, "mapping the ring of CPU %d: %s", cpu, strerror(e));
		free(mk);
		return -1;
	}
	if (add_fd(sp, fd, cpu, 0) < 0) {
		munmap(m, pg + bufsize);
		close(fd);
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	struct ring *rg = backward ? &sp->frings[sp->nfrings++] : &sp->rings[sp->nrings++];
	memset(rg, 0, sizeof(*rg));
	rg->fd = fd;
	rg->cpu = cpu;
	rg->meta = m;
	rg->data = (unsigned char *)m + pg;
	rg->size = bufsize;
	*out = rg;
	return 0;
}

/*
 * The uprobe PMU's event for one site (its format directory: config:0 is
 * retprobe, config:32-63 the semaphore's offset; config1 the path,
 * config2 the offset), with the user registers (and for USDT memory
 * operands the stack) its arguments come from.
 */
static void
uprobe_attr(struct src_perf *sp, const struct dtp_uprobe *up, uint32_t site,
	    struct perf_event_attr *a)
{
	const struct dtp_usite *st = &up->sites[site];

	a->type = (uint32_t)sp->uprobe_type;
	a->config = up->ret ? 1 : 0;
	if (st->refctr && sp->uprobe_refctr)
		a->config |= st->refctr << 32;
	a->config1 = (uint64_t)(uintptr_t)up->path;
	a->config2 = st->offset;
}

/* Add what a uprobe's arguments need to the user registers and stack copied. */
static void
uprobe_regs(const struct dtp_uprobe *up, struct perf_event_attr *a)
{
	if (up->regs) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user |= up->regs;
	}
	if (up->stack) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		if (a->sample_stack_user < up->stack)
			a->sample_stack_user = up->stack;
	}
}

static int
pmu_type(const char *pmu)
{
	char path[96], *t;
	int v;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	t = dtu_read_file(path, NULL);
	v = t ? atoi(t) : -1;
	free(t);
	return v;
}

static int
kprobe_type(void)
{
	char *t = dtu_read_file("/sys/bus/event_source/devices/kprobe/type", NULL);
	int v = t ? atoi(t) : -1;

	free(t);
	return v;
}

/* One probe's event (site: of a uprobe) on cpu for pid, into ring rg. */
static int
open_event(struct src_perf *sp, size_t pi, uint32_t site, pid_t pid, int cpu, struct ring *rg,
	   uint32_t bufsize, char *err, size_t errlen)
{
	struct pprobe *p = &sp->probes[pi];
	struct perf_event_attr a;
	char nm[DTCAP_PROBENAMELEN];
	const struct dt_probe_info *info = dtp_by_id(sp->s.dev, p->id);
	uint64_t id;
	int fd;
	/* --cgroup: a system-wide per-CPU event counts only the cgroup's tasks */
	pid_t opid = pid < 0 && sp->cgfd >= 0 ? sp->cgfd : pid;
	unsigned long ofl = PERF_FLAG_FD_CLOEXEC | (opid != pid ? PERF_FLAG_PID_CGROUP : 0);
	/* --offcpu with targets: the per-CPU copy, without stacks (offcpu_keep) */
	int bare = p->offcpu && pid < 0 && sp->targeted;

	base_attr(sp, &a, bufsize);
	if (pid > 0)
		a.inherit = 1;
	a.write_backward = sp->flight ? 1 : 0;	/* as the flight ring it writes to */
	a.sample_period = 1;
	switch (p->kind) {
	case PK_TIMER:
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = p->period_ns;	/* cpu-clock counts ns */
		break;
	case PK_KPROBE: {
		const char *func, *ev;
		dtp_perf_event(sp->s.dev, p->id, &func, &ev);
		a.type = (uint32_t)sp->kprobe_type;
		a.config = (p->flags & DT_PF_RETURN) ? 1 : 0;	/* format/retprobe: config:0 */
		/*
		 * By address where kallsyms gives one: a kprobe event placed by
		 * name is re-created in every forked child of a target from
		 * config1, which then points into the child's memory, not ours,
		 * and the child's fork fails.
		 */
		if (p->kaddr)
			a.config2 = p->kaddr;
		else
			a.config1 = (uint64_t)(uintptr_t)func;
		a.sample_type |= PERF_SAMPLE_REGS_INTR;
		a.sample_regs_intr = (p->flags & DT_PF_RETURN) ? KP_RET_REGS : KP_ARG_REGS;
		break;
	}
	case PK_UPROBE:
		uprobe_attr(sp, p->up, site, &a);
		a.inherit = 0;
		a.enable_on_exec = 0;
		break;
	default:
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = p->fmt ? p->fmt->id : 0;
		a.sample_type |= PERF_SAMPLE_RAW;
		if (p->offcpu && pid < 0)
			a.enable_on_exec = 0;	/* per CPU: no exec of its own */
		break;
	}
	if (p->raw)
		return 0;	/* its raw_syscalls event records it */
	if ((p->evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) && !bare) {
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
		/*
		 * A system call's kernel stack at entry and exit is the same
		 * few entry frames every time, and walking them from the
		 * tracepoint doubled the cost of a traced call: perf records
		 * none for syscall events either.
		 */
		a.exclude_callchain_kernel = !(p->evtflags & DTEVT_KSTACK) ||
			p->kind == PK_RAWENTER || p->kind == PK_RAWEXIT ||
			p->kind == PK_SYSENTER || p->kind == PK_SYSEXIT;
		/* the frame-pointer user stack stays: what a sample keeps
		 * when unwinding falls behind, or when it is the longer one */
		a.exclude_callchain_user = !(p->evtflags & DTEVT_USTACK);
		a.sample_max_stack = DT_MAXFRAMES;
	}
	if (sp->pool && dwarf_probe(sp->ustack_auto, p) && !bare) {
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = DTUNW_REGS_MASK;
		a.sample_stack_user = sp->ustack_size;
		p->ustack_copy = 1;
	}
	if (p->kind == PK_UPROBE)
		uprobe_regs(p->up, &a);
	if (!sp->flight && !sp->no_fmtlost)
		a.read_format = PERF_FORMAT_LOST;
	fd = (int)perf_open(&a, opid, cpu, -1, ofl);
	if (fd < 0 && errno == EINVAL && a.read_format) {
		a.read_format = 0;	/* before 6.0 */
		if ((fd = (int)perf_open(&a, opid, cpu, -1, ofl)) >= 0)
			sp->no_fmtlost = 1;
		else
			a.read_format = PERF_FORMAT_LOST;
	}
	if (fd < 0 && errno == EINVAL && p->ustack_copy && sp->ustack_auto) {
		/* auto: a kernel that cannot copy user stacks gets frame pointers */
		a.sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
		a.sample_regs_user = 0;
		a.sample_stack_user = 0;
		p->ustack_copy = 0;
		if (p->kind == PK_UPROBE)
			uprobe_regs(p->up, &a);
		fd = (int)perf_open(&a, opid, cpu, -1, ofl);
	}
	if (fd < 0 && errno == EOVERFLOW && a.sample_max_stack) {
		a.sample_max_stack = 0;	/* above kernel.perf_event_max_stack */
		fd = (int)perf_open(&a, opid, cpu, -1, ofl);
	}
	if (fd < 0) {
		int e = errno;
		if (p->kind == PK_KPROBE && (e == ENOENT || e == EINVAL))
			dtu_seterr(err, errlen, "%s: no such kernel function to probe (%s)",
				   info ? dtp_name(info, nm, sizeof(nm)) : "kprobe", strerror(e));
		else if (p->kind == PK_UPROBE)
			dtu_seterr(err, errlen, "%s: the kernel refused the uprobe at offset %#llx of %s: "
				   "%s", dtp_full_name(sp->s.dev, p->id),
				   (unsigned long long)p->up->sites[site].offset, p->up->path, strerror(e));
		else
			open_error(e, info ? dtp_name(info, nm, sizeof(nm)) : "probe", sp, err, errlen);
		return -1;
	}
	/* how sample() finds its way through this event's records (a bare
	 * copy's, site 1, are known to have none of them) */
	if (!bare) {
		p->regs_mask = (a.sample_type & PERF_SAMPLE_REGS_USER) ? a.sample_regs_user : 0;
		p->intr_mask = (a.sample_type & PERF_SAMPLE_REGS_INTR) ? a.sample_regs_intr : 0;
		p->stack_req = (a.sample_type & PERF_SAMPLE_STACK_USER) ? a.sample_stack_user : 0;
	}
	/*
	 * A task's sched_wakeup event also counts the wakeups of that task by
	 * others (the tracepoint names the woken task to perf), which it does
	 * not sample: its count says nothing of losses (CPU -1: not read).
	 */
	if (add_fd(sp, fd, p->offcpu == DTOFF_WAKEUP && pid > 0 ? -1 : cpu, (uint32_t)pi + 1) < 0) {
		close(fd);
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		dtu_seterr(err, errlen, "%s: redirecting to the CPU ring: %s",
			   info ? dtp_name(info, nm, sizeof(nm)) : "probe", strerror(errno));
		return -1;
	}
	if (add_id(sp, id, (uint32_t)pi, bare ? 1 : site) < 0) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Every event of probe pi on cpu for pid: uprobes have one per site. */
static int
open_probe(struct src_perf *sp, size_t pi, pid_t pid, int cpu, struct ring *rg,
	   uint32_t bufsize, char *err, size_t errlen)
{
	const struct pprobe *p = &sp->probes[pi];
	size_t n = p->kind == PK_UPROBE ? p->up->nsites : 1;

	for (size_t i = 0; i < n; i++)
		if (open_event(sp, pi, (uint32_t)i, pid, cpu, rg, bufsize, err, errlen) < 0)
			return -1;
	return 0;
}

static int
sysnr(const char *name)
{
	for (size_t i = 0; i < sizeof(systab) / sizeof(systab[0]); i++)
		if (strcmp(systab[i].name, name) == 0)
			return systab[i].nr < NSYS ? systab[i].nr : -1;
	return -1;
}

/* "id == 3 || (id >= 5 && id <= 9)" for the numbers set in bynr. */
static int
id_filter(const uint32_t *bynr, char *buf, size_t len)
{
	size_t used = 0;
	int n;

	buf[0] = '\0';
	for (int i = 0; i < NSYS; i++) {
		int j = i;
		if (!bynr[i])
			continue;
		while (j + 1 < NSYS && bynr[j + 1])
			j++;
		if (i == j)
			n = snprintf(buf + used, len - used, "%sid == %d", used ? " || " : "", i);
		else
			n = snprintf(buf + used, len - used, "%s(id >= %d && id <= %d)",
				     used ? " || " : "", i, j);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
		i = j;
	}
	return 0;
}

/* The raw_syscalls events that serve every probe marked raw. */
static int
raw_groups(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	for (int dir = 0; dir < 2; dir++) {
		int want = dir ? PK_SYSEXIT : PK_SYSENTER;
		uint32_t *bynr = NULL;
		struct pprobe *g;
		unsigned ev = 0;

		for (size_t i = 0; i < sp->nprobes; i++) {
			struct pprobe *p = &sp->probes[i];
			const struct dt_probe_info *info;
			if (!p->raw || p->kind != want)
				continue;
			if (bynr == NULL && (bynr = calloc(NSYS, sizeof(*bynr))) == NULL)
				goto nomem;
			info = dtp_by_id(sp->s.dev, p->id);
			bynr[sysnr(info->dtpi_func)] = (uint32_t)i + 1;
			ev |= p->evtflags;
		}
		if (bynr == NULL)
			continue;
		g = &sp->probes[sp->nprobes];
		memset(g, 0, sizeof(*g));
		g->kind = dir ? PK_RAWEXIT : PK_RAWENTER;
		g->evtflags = ev;
		g->bynr = bynr;
		if ((g->fmt = malloc(sizeof(*g->fmt))) == NULL)
			goto nomem;
		if (dtt_read_format(sp->tfroot, "raw_syscalls", dir ? "sys_exit" : "sys_enter",
				    g->fmt, err, errlen) < 0)
			return -1;
		if (id_filter(bynr, g->filter, sizeof(g->filter)) < 0) {
			dtu_seterr(err, errlen, "too many syscall ranges for one filter");
			return -1;
		}
		/*
		 * Every system call of this direction that the kernel names
		 * selected: no filter to evaluate on each one (it costs about
		 * as much as the event).  Numbers whose tracepoint has another
		 * name (stat is sys_enter_newstat) then arrive unmapped and are
		 * passed over; their own probes are served by their own events.
		 */
		{
			size_t ncat = 0, nselected = 0;
			for (size_t k = 0; k < dtp_count(sp->s.dev); k++) {
				const struct dt_probe_info *q = dtp_at(sp->s.dev, k);
				if (strcmp(q->dtpi_prov, "syscall") == 0 &&
				    !(q->dtpi_flags & DT_PF_RETURN) == !dir)
					ncat++;
			}
			for (size_t k = 0; k < sp->nprobes; k++)
				if (sp->probes[k].kind == want)
					nselected++;
			if (ncat && nselected == ncat)
				g->filter[0] = '\0';
		}
		sp->nprobes++;
	}
	(void)cfg;
	return 0;
nomem:
	dtu_seterr(err, errlen, "out of memory");
	return -1;
}

/* The threads of process pid (its tasks), malloc'd. */
static pid_t *
threads_of(pid_t pid, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *v = NULL;
	size_t cap = 0;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (DT_GROW(v, cap, *n, 1, 16))
			break;
		v[(*n)++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	return v;
}

/*
 * Flight triggers: a counting event per CPU and site for each cfg.trig
 * probe (system calls through their own tracepoint), polled by
 * triggered().  They count every process but the recorder.
 */
static int
open_triggers(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	char self[600];

	if (cfg->trig_filter && strlen(cfg->trig_filter) > 500) {
		dtu_seterr(err, errlen, "--trigger-filter: longer than 500 bytes");
		return -1;
	}
	if (cfg->trig_filter)
		snprintf(self, sizeof(self), "(%s) && common_pid != %d", cfg->trig_filter,
			 (int)getpid());
	else
		snprintf(self, sizeof(self), "common_pid != %d", (int)getpid());
	for (size_t i = 0; i < cfg->ntrig; i++) {
		const struct dt_probe_info *info = dtp_by_id(sp->s.dev, cfg->trig[i].id);
		const struct dtp_uprobe *up = dtp_uprobe(sp->s.dev, cfg->trig[i].id);
		const char *sys, *ev;
		struct perf_event_attr a;
		struct dtt_format *fmt = NULL;
		size_t nsites = up ? up->nsites : 1;
		char nm[DTCAP_PROBENAMELEN];

		if (info == NULL || dtp_perf_event(sp->s.dev, cfg->trig[i].id, &sys, &ev) < 0)
			continue;
		if (info->dtpi_flags & DT_PF_TIMER) {
			dtu_seterr(err, errlen, "--trigger %s: a timer probe cannot trigger a dump",
				   dtp_name(info, nm, sizeof(nm)));
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (!up && strcmp(info->dtpi_prov, "kprobe") != 0) {
			if ((fmt = malloc(sizeof(*fmt))) == NULL) {
				dtu_seterr(err, errlen, "out of memory");
				return -1;
			}
			if (dtt_read_format(sp->tfroot, sys, ev, fmt, err, errlen) < 0) {
				free(fmt);
				return -1;
			}
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = fmt->id;
			free(fmt);
		}
		for (size_t k = 0; k < nsites; k++) {
			if (up) {
				a.type = (uint32_t)sp->uprobe_type;
				a.config = up->ret ? 1 : 0;
				if (up->sites[k].refctr && sp->uprobe_refctr)
					a.config |= up->sites[k].refctr << 32;
				a.config1 = (uint64_t)(uintptr_t)up->path;
				a.config2 = up->sites[k].offset;
			} else if (strcmp(info->dtpi_prov, "kprobe") == 0) {
				a.type = (uint32_t)sp->kprobe_type;
				a.config = (info->dtpi_flags & DT_PF_RETURN) ? 1 : 0;
				a.config1 = (uint64_t)(uintptr_t)sys;
			}
			for (int cpu = 0; cpu < sp->ncpus; cpu++) {
				int fd = (int)perf_open(&a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
				if (fd < 0 && (errno == ENODEV || errno == EINVAL) && cpu > 0)
					continue;	/* an offline CPU */
				if (fd < 0) {
					open_error(errno, dtp_name(info, nm, sizeof(nm)), sp, err, errlen);
					return -1;
				}
				if (DT_GROW(sp->trigfds, sp->trigcap, sp->ntrigfds, 1, 16)) {
					close(fd);
					dtu_seterr(err, errlen, "out of memory");
					return -1;
				}
				sp->trigfds[sp->ntrigfds++] = fd;
				if (a.type != PERF_TYPE_TRACEPOINT) {
					if (strcmp(info->dtpi_prov, "kprobe") != 0)
						(void)ioctl(fd, PERF_EVENT_IOC_SET_FILTER, self);
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, self) < 0 &&
					   cfg->trig_filter) {
					/* a filter the kernel cannot parse for this event */
					dtu_seterr(err, errlen, "--trigger-filter '%s' on %s: %s (the "
						   "fields are those of the tracepoint's format)",
						   cfg->trig_filter, dtp_name(info, nm, sizeof(nm)),
						   strerror(errno));
					return -1;
				}
			}
		}
	}
	return 0;
}

/*
 * The addresses of the kprobed functions, from kallsyms: the first text
 * symbol of the name, the one the kernel's own lookup by name finds.  A
 * command's children inherit its events, which only works for kprobes
 * placed by address (open_probe); kallsyms that hides addresses from us
 * (kptr_restrict=2) is reported there rather than losing the children.
 */
static int
kprobe_addrs(struct src_perf *sp, int child, char *err, size_t errlen)
{
	size_t want = 0;
	char line[512];
	int hidden = 0;
	FILE *f;

	for (size_t i = 0; i < sp->nprobes; i++)
		want += sp->probes[i].kind == PK_KPROBE;
	if (want == 0)
		return 0;
	if ((f = fopen("/proc/kallsyms", "re")) == NULL)
		return 0;
	while (want && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		hidden |= addr == 0;
		if (addr == 0 || (type != 't' && type != 'T'))
			continue;
		for (size_t i = 0; i < sp->nprobes; i++) {
			struct pprobe *p = &sp->probes[i];
			const char *func, *ev;
			if (p->kind != PK_KPROBE || p->kaddr ||
			    dtp_perf_event(sp->s.dev, p->id, &func, &ev) < 0 || strcmp(func, name) != 0)
				continue;
			p->kaddr = addr;
			want--;
		}
	}
	fclose(f);
	for (size_t i = 0; i < sp->nprobes && hidden && child; i++) {
		const char *func, *ev;
		if (sp->probes[i].kind != PK_KPROBE || sp->probes[i].kaddr)
			continue;
		dtp_perf_event(sp->s.dev, sp->probes[i].id, &func, &ev);
		dtu_seterr(err, errlen, "kprobe:%s: a command's children can only be kprobed by "
			   "address, and /proc/kallsyms gives none (kernel.kptr_restrict); record "
			   "system-wide (-a) or use the dt source", func);
		return -1;
	}
	return 0;
}

static int sysnr(const char *name);
static int raw_groups(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err,
		      size_t errlen);

static int
perf_enable(struct dtsrc *s, const struct dtp_sel *sel, size_t nsel, const struct dtsrc_cfg *cfg,
	    char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;
	uint32_t bufsize = cfg->bufsize ? cfg->bufsize : DEF_RING;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	pid_t *targets = NULL;
	size_t ntargets = 0, tcap = 0;
	struct rlimit rl;
	int ret = -1;

	if (bufsize < pg)
		bufsize = (uint32_t)pg;
	/* perf opens one descriptor per probe and CPU: allow what the hard limit allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sp->flight = cfg->flight;
	sp->no_fmtlost = sp->flight;	/* dumps account by counts (perf_dump) */
	sp->pt.keep_all = cfg->flight;
	sp->probes = calloc(nsel + 2, sizeof(*sp->probes));
	if (sp->probes == NULL)
		goto nomem;
	for (size_t i = 0; i < nsel; i++) {
		const struct dt_probe_info *info = dtp_by_id(s->dev, sel[i].id);
		struct pprobe *p = &sp->probes[sp->nprobes];
		const char *sys, *ev;

		if (info == NULL || dtp_perf_event(s->dev, sel[i].id, &sys, &ev) < 0)
			continue;
		p->id = sel[i].id;
		p->flags = info->dtpi_flags;
		p->period_ns = sel[i].period_ns;
		p->evtflags = (info->dtpi_flags & DT_PF_TIMER) ? cfg->timer_evtflags : cfg->evtflags;
		if (info->dtpi_flags & DT_PF_TIMER) {
			p->kind = PK_TIMER;
			if (!p->period_ns)
				p->period_ns = strcmp(info->dtpi_prov, "profile") == 0 ?
					       1000000000ULL / 97 : 1000000000ULL;
		} else if ((p->up = dtp_uprobe(s->dev, sel[i].id)) != NULL) {
			p->kind = PK_UPROBE;
			if (sp->uprobe_type < 0) {
				dtu_seterr(err, errlen, "uprobes need the kernel's uprobe PMU, which "
					   "this kernel does not have");
				goto out;
			}
			if (!sp->uprobe_refctr) {
				for (size_t k = 0; k < p->up->nsites; k++)
					if (p->up->sites[k].refctr) {
						dtu_seterr(err, errlen, "%s: its SDT semaphore needs a kernel "
							   "whose uprobe PMU takes ref_ctr_offset (4.20 and later)",
							   dtp_full_name(s->dev, p->id));
						goto out;
					}
			}
		} else if (strcmp(info->dtpi_prov, "kprobe") == 0) {
			p->kind = PK_KPROBE;
			if (sp->kprobe_type < 0) {
				dtu_seterr(err, errlen, "kprobes need the kernel's kprobe PMU, which "
					   "this kernel does not have");
				goto out;
			}
		} else {
			p->kind = strcmp(info->dtpi_prov, "syscall") != 0 ? PK_TP :
				  (info->dtpi_flags & DT_PF_RETURN) ? PK_SYSEXIT : PK_SYSENTER;
			if (p->kind != PK_TP && sysnr(info->dtpi_func) >= 0 && !sp->no_raw) {
				p->raw = 1;	/* served by raw_syscalls (raw_groups) */
				sp->nprobes++;
				continue;
			}
			if ((p->fmt = malloc(sizeof(*p->fmt))) == NULL)
				goto nomem;
			if (dtt_read_format(sp->tfroot, sys, ev, p->fmt, err, errlen) < 0)
				goto out;
			dtt_layout(p->fmt, p->kind == PK_SYSENTER ? 1 : 0, &p->lay, NULL);
			if (cfg->offcpu && p->kind == PK_TP && (p->offcpu = (uint8_t)dtoff_kind(sys, ev))) {
				const char *of = dtoff_other_field(p->offcpu);
				p->evtflags |= DTEVT_KSTACK | DTEVT_USTACK;
				for (unsigned k = 0; k < p->fmt->nfields; k++)
					if (strcmp(p->fmt->f[k].name, of) == 0)
						p->ooff = p->fmt->f[k].offset;
				if (p->ooff == 0) {
					dtu_seterr(err, errlen, "--offcpu: %s:%s has no field %s", sys, ev, of);
					goto out;
				}
			}
		}
		sp->nprobes++;
	}
	if (kprobe_addrs(sp, cfg->child > 0, err, errlen) < 0)
		goto out;
	if (raw_groups(sp, cfg, err, errlen) < 0)
		goto out;
	if (cfg->ustack_mode != DTSRC_USTACK_FP) {
		int want = 0;
		for (size_t i = 0; i < sp->nprobes; i++)
			want |= dwarf_probe(cfg->ustack_mode == DTSRC_USTACK_AUTO ? 1 + cfg->ustack_all : 0,
					    &sp->probes[i]);
		if (want) {
			sp->ustack_size = cfg->ustack_size ? cfg->ustack_size : DTSRC_USTACK_SIZE;
			/* 2: auto, copying for every probe */
			sp->ustack_auto = cfg->ustack_mode == DTSRC_USTACK_AUTO ? 1 + cfg->ustack_all : 0;
			sp->ustack_size &= ~7U;	/* perf wants a multiple of 8 */
			sp->pool = dtunw_pool_start(cfg->unwind_threads, sp->ncpus,
						    cfg->ustack_mode == DTSRC_USTACK_AUTO ? DTUNW_AUTO
											  : DTUNW_DWARF);
			if (sp->pool == NULL)
				goto nomem;
			sp->pt.pool = sp->pool;
			/* a sample is now up to ustack_size bytes: 1 MiB held 64 */
			if (!cfg->bufsize)
				bufsize = DEF_RING_DWARF;
		}
	}

	/* a stack with every context switch of the system (or a bare event
	 * each, with targets) fills 1 MiB quickly on a busy machine */
	if (cfg->offcpu && !cfg->bufsize)
		bufsize = DEF_RING_DWARF;
	sp->targeted = cfg->child > 0 || cfg->npids > 0;
	/* perf takes a task or a cgroup per event, not both */
	if (cfg->cgroupfd >= 0 && sp->targeted) {
		dtu_seterr(err, errlen, "--cgroup with -p or a COMMAND: the perf source takes one "
			   "or the other; use --source dt");
		goto out;
	}
	sp->cgfd = cfg->cgroupfd;
	if (cfg->child > 0) {
		/* p.ts: recorded from then on (its exec, on_comm) */
		struct task *t = task_get(&sp->tgts, (uint32_t)cfg->child, 1);
		if (t == NULL)
			goto nomem;
		t->p.ts = UINT64_MAX;
	}
	for (size_t i = 0; i < cfg->npids; i++)
		if (task_get(&sp->tgts, (uint32_t)cfg->pids[i], 1) == NULL)
			goto nomem;
	if (cfg->child > 0) {
		struct task *t = task_get(&sp->ttids, (uint32_t)cfg->child, 1);
		if (t == NULL)
			goto nomem;
		t->p.pid = (uint32_t)cfg->child;
	}
	if (cfg->child > 0) {
		sp->child_mode = 1;
		if (DT_GROW(targets, tcap, ntargets, 1, 1))
			goto nomem;
		targets[ntargets++] = cfg->child;
	} else {
		for (size_t i = 0; i < cfg->npids; i++) {
			size_t nt;
			pid_t *t = threads_of(cfg->pids[i], &nt);
			if (t == NULL || nt == 0) {
				free(t);
				dtu_seterr(err, errlen, "-p %d: no such process", (int)cfg->pids[i]);
				goto out;
			}
			if (DT_GROW(targets, tcap, ntargets, nt, 64)) {
				free(t);
				goto nomem;
			}
			memcpy(targets + ntargets, t, nt * sizeof(*t));
			ntargets += nt;
			for (size_t k = 0; k < nt; k++) {
				struct task *tt = task_get(&sp->ttids, (uint32_t)t[k], 1);
				if (tt == NULL) {
					free(t);
					goto nomem;
				}
				tt->p.pid = (uint32_t)cfg->pids[i];
			}
			free(t);
		}
	}

	{
		size_t nt = ntargets ? ntargets : 1;
		sp->rings = calloc((size_t)sp->ncpus * nt, sizeof(*sp->rings));
		if (sp->rings == NULL)
			goto nomem;
		if (sp->flight && (sp->frings = calloc((size_t)sp->ncpus, sizeof(*sp->frings))) == NULL)
			goto nomem;
	}
	for (int cpu = 0; cpu < sp->ncpus; cpu++) {
		char path[96];
		struct ring *rg = NULL;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (cpu > 0) {
			char *on = dtu_read_file(path, NULL);
			int offline = on && on[0] == '0';
			free(on);
			if (offline)
				continue;
		}
		struct ring *frg = NULL;

		if (sp->flight && open_ring(sp, -1, cpu, bufsize, 1, &frg, err, errlen) < 0)
			goto out;
		for (size_t t = 0; t < (ntargets ? ntargets : 1); t++) {
			pid_t pid = ntargets ? targets[t] : -1;
			struct ring *own;

			/* one ring per CPU: later targets write into the first one */
			if (open_ring(sp, pid, cpu, sp->flight ? FLIGHT_SB_RING : bufsize, 0, &own, err,
				      errlen) < 0)
				goto out;
			if (rg == NULL)
				rg = own;
			else if (ioctl(own->fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) == 0) {
				munmap(own->meta, pg + own->size);
				sp->nrings--;
			}
			for (size_t i = 0; i < sp->nprobes; i++) {
				/* interval: one CPU system-wide; with targets, their CPU time */
				const struct dt_probe_info *info = dtp_by_id(s->dev, sp->probes[i].id);
				if (info && strcmp(info->dtpi_prov, "interval") == 0 && pid < 0 &&
				    rg != &sp->rings[0])
					continue;
				if (sp->probes[i].offcpu && sp->targeted && t == 0 &&
				    open_probe(sp, i, -1, cpu, frg ? frg : rg, bufsize, err,
					       errlen) < 0)
					goto out;	/* its bare copy (offcpu_keep) */
				if (sp->probes[i].kind == PK_UPROBE) {
					/* per CPU, filtered by tgts (see there) */
					if (t == 0 && open_probe(sp, i, -1, cpu, frg ? frg : rg, bufsize,
								 err, errlen) < 0)
						goto out;
					continue;
				}
				if (open_probe(sp, i, pid, cpu, frg ? frg : rg, bufsize, err, errlen) < 0)
					goto out;
			}
		}
	}
	if (cfg->ntrig && open_triggers(sp, cfg, err, errlen) < 0)
		goto out;
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
out:
	free(targets);
	return ret;
}

static int
perf_ioctl_all(struct src_perf *sp, unsigned long req, char *err, size_t errlen)
{
	for (size_t i = 0; i < sp->nfds; i++) {
		if (ioctl(sp->fds[i], req, 0) < 0) {
			dtu_seterr(err, errlen, "perf_event: %s: %s",
				   req == PERF_EVENT_IOC_ENABLE ? "enable" : "disable", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * System-wide, the recorder's own threads (all started by now: the
 * capture writer's included) are filtered out by the kernel on every
 * tracepoint, so its reads and writes neither cost ring space nor feed
 * back into what it records.  Timer samples of ours are dropped on read.
 */
static int
set_filters(struct src_perf *sp, char *err, size_t errlen)
{
	char pids[512] = "", f[4700];
	size_t n, used = 0;
	/* uprobes are per CPU even with targets: they always need it */
	pid_t *t = threads_of(getpid(), &n);

	for (size_t i = 0; t && i < n && used < sizeof(pids) - 32; i++)
		used += (size_t)snprintf(pids + used, sizeof(pids) - used, "%scommon_pid != %d",
					 i ? " && " : "", (int)t[i]);
	free(t);
	for (size_t i = 0; i < sp->nfds; i++) {
		const struct pprobe *p;
		if (!sp->fdprobe[i])
			continue;
		p = &sp->probes[sp->fdprobe[i] - 1];
		if (p->kind == PK_TIMER || p->kind == PK_KPROBE)
			continue;
		if (p->kind == PK_UPROBE) {
			/*
			 * Keep our own calls of a probed library out of the rings;
			 * a kernel that refuses filters on uprobes costs ring space
			 * only (sample() drops them).
			 */
			if (pids[0])
				(void)ioctl(sp->fds[i], PERF_EVENT_IOC_SET_FILTER, pids);
			continue;
		}
		if (sp->targeted && !p->filter[0])
			continue;
		/* the kernel takes one filter per event: the syscall ids and us */
		if (sp->targeted)
			snprintf(f, sizeof(f), "%s", p->filter);
		else if (p->filter[0] && pids[0])
			snprintf(f, sizeof(f), "(%s) && %s", p->filter, pids);
		else
			snprintf(f, sizeof(f), "%s", p->filter[0] ? p->filter : pids);
		if (!f[0])
			continue;
		if (ioctl(sp->fds[i], PERF_EVENT_IOC_SET_FILTER, f) < 0) {
			dtu_seterr(err, errlen, "tracepoint filter '%.80s': %s", f, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int
perf_start(struct dtsrc *s, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;

	if (set_filters(sp, err, errlen) < 0)
		return -1;
	/* a command's events switch on by themselves when it execs; uprobes
	 * and --offcpu's events are per CPU, filtered by tgts */
	if (sp->child_mode) {
		for (size_t i = 0; i < sp->nfds; i++) {
			const struct pprobe *p = sp->fdprobe[i] ? &sp->probes[sp->fdprobe[i] - 1] : NULL;
			if (!p || (p->kind != PK_UPROBE && !p->offcpu))
				continue;
			if (ioctl(sp->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
				dtu_seterr(err, errlen, "perf_event: enable: %s", strerror(errno));
				return -1;
			}
		}
		return 0;
	}
	return perf_ioctl_all(sp, PERF_EVENT_IOC_ENABLE, err, errlen);
}

static int
perf_stop(struct dtsrc *s, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;

	sp->stopped = 1;	/* reads now wait for the unwinding workers */
	if (perf_ioctl_all(sp, PERF_EVENT_IOC_DISABLE, err, errlen) < 0)
		return -1;
	/* how often each event fired, lost samples included */
	if (sp->fired == NULL && (sp->fired = calloc((size_t)sp->ncpus, sizeof(*sp->fired))) == NULL)
		return 0;
	memset(sp->fired, 0, (size_t)sp->ncpus * sizeof(*sp->fired));	/* flight dumps used it */
	if (sp->fmtlost == NULL && (sp->fmtlost = calloc((size_t)sp->ncpus, sizeof(*sp->fmtlost))) == NULL)
		sp->no_fmtlost = 1;
	for (size_t i = 0; i < sp->nfds; i++) {
		uint64_t v[2];
		ssize_t k;
		const struct pprobe *p;
		if (!sp->fdprobe[i] || sp->fdcpu[i] < 0 || sp->fdcpu[i] >= sp->ncpus ||
		    (k = read(sp->fds[i], v, sizeof(v))) < (ssize_t)sizeof(v[0]))
			continue;
		p = &sp->probes[sp->fdprobe[i] - 1];
		if (k == (ssize_t)sizeof(v) && sp->fmtlost)
			sp->fmtlost[sp->fdcpu[i]] += v[1];
		/*
		 * A timer's count is CPU time, and inherited copies add their
		 * partial periods together: no exact tick count.  Its losses
		 * come from LOST records alone.
		 */
		if (p->kind == PK_TIMER)
			continue;
		sp->fired[sp->fdcpu[i]] += v[0];
	}
	return 0;
}

static void
perf_ustack_counts(struct dtsrc *s, uint64_t *dwarf, uint64_t *dwarf_trunc, uint64_t *fp_behind)
{
	struct src_perf *sp = (struct src_perf *)s;

	*dwarf = *dwarf_trunc = 0;
	if (sp->pool)
		dtunw_pool_stats(sp->pool, dwarf, dwarf_trunc);
	*fp_behind = sp->fp_behind;
}

/* whether CPU cpu's flight ring, as the last dump copied it, had wrapped */
static int
flight_wrapped(const struct src_perf *sp, int cpu)
{
	for (size_t i = 0; i < sp->nfrings; i++)
		if (sp->frings[i].cpu == cpu)
			return sp->frings[i].fwrapped;
	return 1;
}

static int
perf_counters(struct dtsrc *s, struct dtcap_count *out, uint32_t cap, uint32_t *ncpus,
	      char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;

	(void)err;
	(void)errlen;
	*ncpus = (uint32_t)sp->ncpus;
	for (uint32_t i = 0; i < cap && i < (uint32_t)sp->ncpus; i++) {
		uint64_t fired = sp->fired ? sp->fired[i] : 0, miss = 0;
		if (!sp->no_fmtlost && sp->fmtlost) {
			out[i] = sp->counts[i];
			out[i].dropped = sp->lost[i] > sp->fmtlost[i] ? sp->lost[i] : sp->fmtlost[i];
			out[i].produced = out[i].read + out[i].dropped;
			continue;
		}
		/*
		 * Losses: what LOST records reported, or, once stopped, what
		 * the counting events fired beyond the samples that reached us
		 * if that is more (the kernel reports a loss only at its next
		 * successful write, so a ring full until the end would hide the
		 * last ones).
		 */
		if (fired > sp->seen[i])
			miss = fired - sp->seen[i];
		/*
		 * A flight ring that never wrapped holds every sample written
		 * to it: fired beyond them are firings never sampled (a
		 * target's inherited sched_wakeup counts its wakeups by other
		 * tasks), not losses; those are the LOST records alone.
		 */
		if (sp->flight && !flight_wrapped(sp, (int)i))
			miss = 0;
		out[i] = sp->counts[i];
		out[i].dropped = sp->lost[i] > miss ? sp->lost[i] : miss;
		out[i].produced = out[i].read + out[i].dropped;
	}
	return 0;
}

static void
perf_clock(struct dtsrc *s, uint64_t *mono, int64_t *real)
{
	struct timespec ts;

	(void)s;
	clock_gettime(CLOCK_REALTIME, &ts);
	*mono = dtu_now_ns();
	*real = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const struct dtsrc_proc *
perf_proc(struct dtsrc *s, uint32_t pid)
{
	return proctab_proc(&((struct src_perf *)s)->pt, pid);
}

static int perf_filters_targets(struct dtsrc *s) { (void)s; return 1; }

/* How often each counting event fired, per CPU, into sp->fired. */
static int
read_fired(struct src_perf *sp)
{
	if (sp->fired == NULL && (sp->fired = calloc((size_t)sp->ncpus, sizeof(*sp->fired))) == NULL)
		return -1;
	memset(sp->fired, 0, (size_t)sp->ncpus * sizeof(*sp->fired));
	for (size_t i = 0; i < sp->nfds; i++) {
		uint64_t v;
		if (!sp->fdprobe[i] || sp->fdcpu[i] < 0 || sp->fdcpu[i] >= sp->ncpus ||
		    sp->probes[sp->fdprobe[i] - 1].kind == PK_TIMER ||
		    read(sp->fds[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		sp->fired[sp->fdcpu[i]] += v;
	}
	return 0;
}

/*
 * Freeze every ring (PAUSE_OUTPUT) just long enough to copy it and count
 * what fired, so producers lose only what comes during the copies (the
 * kernel counts those as lost; they count as dropped like the overwritten
 * ones).  A backward ring holds its newest record at data_head and older
 * ones above it; the walk stops at never-written space (size 0) or at the
 * oldest record, cut by newer ones.
 */
static int
perf_dump(struct dtsrc *s, int begin, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;
	uint64_t *heads;
	size_t paused = 0;
	int ret = -1;

	if (!sp->flight) {
		dtu_seterr(err, errlen, "not a flight recording");
		return -1;
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i];
		free(rg->fpos);
		free(rg->fcopy);
		rg->fpos = NULL;
		rg->fcopy = NULL;
		rg->fn = rg->fcur = 0;
	}
	sp->dumping = 0;
	if (!begin)
		return 0;
	if ((heads = calloc(sp->nfrings ? sp->nfrings : 1, sizeof(*heads))) == NULL)
		goto nomem;
	for (size_t i = 0; i < sp->nfrings; i++)
		if ((sp->frings[i].fcopy = malloc(sp->frings[i].size)) == NULL)
			goto nomem;
	for (; paused < sp->nfrings; paused++) {
		struct ring *rg = &sp->frings[paused];
		if (ioctl(rg->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0) {
			dtu_seterr(err, errlen, "pausing the ring of CPU %d: %s", rg->cpu, strerror(errno));
			goto out;
		}
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i];
		heads[i] = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
		memcpy(rg->fcopy, rg->data, rg->size);
	}
	/* this dump's accounting: everything fired until now against what it holds */
	if (read_fired(sp) < 0)
		goto nomem;
	for (; paused > 0; paused--)
		(void)ioctl(sp->frings[paused - 1].fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	/* a process's fork and exec precede its samples: what the copies hold is known now */
	flight_sideband(sp);
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i], copy = *rg;
		const struct perf_event_header *h;
		size_t cap = 0;
		uint64_t pos;

		copy.data = rg->fcopy;
		rg->fend = heads[i] + rg->size;
		/* a backward ring's head runs down from 0: -head bytes written */
		rg->fwrapped = 0 - heads[i] > rg->size;
		for (pos = heads[i]; (h = at(sp, &copy, pos, rg->fend)) != NULL; pos += h->size) {
			if (DT_GROW(rg->fpos, cap, rg->fn, 1, 4096))
				goto nomem;
			rg->fpos[rg->fn++] = pos;
		}
		/* newest first in the ring: oldest first for the capture */
		for (size_t a = 0, b = rg->fn; a + 1 < b; a++, b--) {
			uint64_t t = rg->fpos[a];
			rg->fpos[a] = rg->fpos[b - 1];
			rg->fpos[b - 1] = t;
		}
	}
	memset(sp->seen, 0, (size_t)sp->ncpus * sizeof(*sp->seen));
	memset(sp->lost, 0, (size_t)sp->ncpus * sizeof(*sp->lost));
	for (int c = 0; c < sp->ncpus; c++)
		sp->counts[c].read = sp->counts[c].skipped = 0;
	sp->dumping = 1;
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
out:
	for (; paused > 0; paused--)
		(void)ioctl(sp->frings[paused - 1].fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	free(heads);
	return ret;
}

static uint64_t
perf_triggered(struct dtsrc *s)
{
	struct src_perf *sp = (struct src_perf *)s;
	uint64_t sum = 0, v;

	for (size_t i = 0; i < sp->ntrigfds; i++)
		if (read(sp->trigfds[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v;
	return sum;
}

static void
perf_close(struct dtsrc *s)
{
	struct src_perf *sp = (struct src_perf *)s;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	dtunw_pool_free(sp->pool);
	for (size_t i = 0; i < sp->nrings; i++) {
		munmap(sp->rings[i].meta, pg + sp->rings[i].size);
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		munmap(sp->frings[i].meta, pg + sp->frings[i].size);
		free(sp->frings[i].fpos);
		free(sp->frings[i].fcopy);
	}
	free(sp->frings);
	for (size_t i = 0; i < sp->nfds; i++)
		close(sp->fds[i]);
	for (size_t i = 0; i < sp->nprobes; i++) {
		free(sp->probes[i].fmt);
		free(sp->probes[i].bynr);
	}
	free(sp->probes);
	free(sp->fds);
	free(sp->ids);
	dt_htab_free(&sp->idix);
	free(sp->rings);
	free(sp->counts);
	free(sp->seen);
	free(sp->lost);
	free(sp->fmtlost);
	free(sp->fired);
	free(sp->fdcpu);
	free(sp->fdprobe);
	free(sp->tmp);
	proctab_free(&sp->pt);
	tasks_free(&sp->tgts);
	tasks_free(&sp->ttids);
	for (size_t i = 0; i < sp->ntrigfds; i++)
		close(sp->trigfds[i]);
	free(sp->trigfds);
	dtp_close(s->dev);
	free(sp);
}

static const struct dtsrc_ops perf_ops = {
	.name = "perf",
	.watermark = 1,
	.enable = perf_enable,
	.start = perf_start,
	.stop = perf_stop,
	.read = perf_read,
	.wait = perf_wait,
	.counters = perf_counters,
	.clock = perf_clock,
	.proc = perf_proc,
	.ustack_counts = perf_ustack_counts,
	.filters_targets = perf_filters_targets,
	.filters_cgroup = 1,
	.dump = perf_dump,
	.triggered = perf_triggered,
	.close = perf_close,
};

struct dtsrc *
dtsrc_perf_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	struct src_perf *sp = calloc(1, sizeof(*sp));
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (sp != NULL)
		sp->cgfd = -1;

	if (sp == NULL || (sp->counts = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp->counts))) == NULL ||
	    (sp->seen = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp->seen))) == NULL ||
	    (sp->lost = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp->lost))) == NULL) {
		if (sp) {
			free(sp->counts);
			free(sp->seen);
		}
		free(sp);
		dtp_close(dev);
		dtu_seterr(err, errlen, "out of memory");
		return NULL;
	}
	sp->s.ops = &perf_ops;
	sp->s.dev = dev;
	sp->tfroot = dtp_tracefs(dev);
	sp->ncpus = n > 0 ? (int)n : 1;
	sp->self = (uint32_t)getpid();
	sp->pt.self = sp->self;
	sp->kprobe_type = kprobe_type();
	sp->uprobe_type = pmu_type("uprobe");
	{
		struct stat st;
		sp->uprobe_refctr = stat("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset",
					 &st) == 0;
	}
	sp->no_raw = getenv("DTREC_PERF_NO_RAW_SYSCALLS") != NULL;
	return &sp->s;
}
