/*
 * source.h - where recorded events come from.
 *
 * A source turns a kernel facility into a stream of dt_rec records (the
 * /dev/dt read format of dt_abi.h), whatever the facility: record.c writes
 * the capture from that stream alone, so both sources produce the same
 * .dtc.  Both filter targets (-p, COMMAND) themselves, following their
 * forks.  What the kernel says of processes goes to the session's machine
 * (machine.h), never back through the source.  Two implementations:
 *  - src_dt.c: /dev/dt (dt.ko): enable by ioctl, read(2) the rings.
 *  - src_perf.c: perf_event_open(2): per-CPU mmap rings; samples become
 *    dt_recs; COMM/FORK/EXIT/MMAP2 records feed the machine, so user
 *    frames of short-lived processes still get names.
 * A source object is used by one thread.
 */
#ifndef DT_SOURCE_H
#define DT_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dtcap.h"
#include "probes.h"

#define DTSRC_ERRLEN	512

struct dtm;

/* What to record, fixed before dtsrc_enable. */
struct dtsrc_cfg {
	struct dtm	*machine;	/* the session's process model (machine.h),
					 * which the source feeds; it outlives the
					 * source */
	uint32_t	bufsize;	/* per-CPU ring bytes; 0: default */
	unsigned	timer_evtflags;	/* DTEVT_* for timer probes */
	unsigned	evtflags;	/* DTEVT_* for the other probes */
	const pid_t	*pids;		/* targets (tgids), or NULL: system-wide */
	size_t		npids;
	pid_t		child;		/* a COMMAND forked but not yet exec'd
					 * (it waits on a pipe): recorded from its
					 * exec on, with its descendants; 0: none */
	const char	*comm;		/* only tasks of this comm; NULL: any */
	int		cgroupfd;	/* only tasks in this cgroup v2 directory
					 * or below (open, owned by the caller);
					 * -1: any */
	int		offcpu;		/* the offcpu.h probes among sel get
					 * kernel and user stacks; with targets
					 * the source keeps their events that
					 * name a target as the other task */
	int		ustack_mode;	/* DTSRC_USTACK_*, for DTEVT_USTACK */
	int		ustack_all;	/* AUTO: copy for every probe, not only the
					 * sampled ones (the targets' programs
					 * have no frame pointers) */
	int		ustack_nofp;	/* DWARF, AUTO: the targets' programs are
					 * built without frame pointers, so the
					 * events that copy stacks ask for no
					 * frame-pointer walk (its frames past
					 * the pc would be garbage) */
	uint32_t	ustack_size;	/* bytes of user stack copied per sample
					 * (DWARF, AUTO); 0: DTSRC_USTACK_SIZE */
	unsigned	unwind_threads;	/* 0: one per 4 CPUs, 1 to 4 */
	const char	*spool_dir;	/* DWARF samples the unwinding workers
					 * cannot keep in memory wait in a file
					 * there (unwind_pool.h); NULL: none */
	int		flight;		/* flight recorder: the rings overwrite
					 * their oldest records and are read only
					 * by dump (ops->dump != NULL) */
	const struct dtp_sel *trig;	/* flight: probes whose firing asks for a
					 * dump (ops->triggered); also in sel */
	size_t		ntrig;
	const char	*trig_filter;	/* flight: a tracefs filter ("ret < 0") the
					 * tracepoint and syscall triggers must
					 * pass; NULL: none */
};

/*
 * User stacks: FP, the kernel's frame-pointer walk; DWARF, a copy of the
 * stack unwound with CFI while recording (unwind.h), only the frames
 * stored; AUTO, DWARF where the source can copy stacks, and per sample
 * the frame-pointer stack when it is longer than a DWARF one that stopped
 * short.  A source that cannot copy stacks refuses DWARF.
 */
enum { DTSRC_USTACK_AUTO, DTSRC_USTACK_FP, DTSRC_USTACK_DWARF };
#define DTSRC_USTACK_SIZE	16384

struct dtsrc;

struct dtsrc_ops {
	const char *name;		/* "dt", "perf" */
	/*
	 * The kernel wakes the reader only when a good part of a ring has
	 * filled (perf's watermark), so the reader need not pace itself; dt.ko
	 * readers pause between reads, since reading is itself traced there.
	 */
	int	watermark;
	int	(*enable)(struct dtsrc *s, const struct dtp_sel *sel, size_t nsel,
			  const struct dtsrc_cfg *cfg, char *err, size_t errlen);
	int	(*start)(struct dtsrc *s, char *err, size_t errlen);
	int	(*stop)(struct dtsrc *s, char *err, size_t errlen);
	/*
	 * Whole dt_recs into buf (len >= 64 KiB): bytes, 0 when nothing is
	 * waiting, -1 with err.  After stop, 0 means everything was read.
	 */
	ssize_t	(*read)(struct dtsrc *s, char *buf, size_t len, char *err, size_t errlen);
	/* Sleep until events wait or timeout_ms passes. */
	void	(*wait)(struct dtsrc *s, int timeout_ms);
	/*
	 * Per-CPU counters into out[0..*ncpus) (capacity cap; *ncpus may
	 * exceed cap: call again with more room).  Exact: produced = read +
	 * dropped on every CPU.
	 */
	int	(*counters)(struct dtsrc *s, struct dtcap_count *out, uint32_t cap,
			    uint32_t *ncpus, char *err, size_t errlen);
	/* Both clocks sampled together (mono is the clock of dtr_ts). */
	void	(*clock)(struct dtsrc *s, uint64_t *mono, int64_t *real);
	/*
	 * User stacks unwound with DWARF, of those the ones that stopped
	 * short, and samples that kept the frame-pointer stack because
	 * unwinding had fallen behind.  NULL: the source does no unwinding.
	 */
	void	(*ustack_counts)(struct dtsrc *s, uint64_t *dwarf, uint64_t *dwarf_trunc,
				 uint64_t *fp_behind);
	/* Does it keep only cfg.comm's tasks' events?  cfg.cgroupfd's? */
	int	filters_comm, filters_cgroup;
	/*
	 * Flight recorder (cfg.flight), NULL where the source has none.
	 * dump(s, 1) freezes the rings; read then returns what they hold,
	 * oldest first, and 0 when done; counters then count, per CPU, the
	 * events fired since enable as produced and those no longer in the
	 * rings (overwritten) as dropped.  dump(s, 0) lets the rings run on.
	 * triggered: how often the cfg.trig probes have fired so far.
	 */
	int	(*dump)(struct dtsrc *s, int begin, char *err, size_t errlen);
	uint64_t (*triggered)(struct dtsrc *s);
	void	(*close)(struct dtsrc *s);
};

struct dtsrc {
	const struct dtsrc_ops *ops;	/* [I] */
	struct dtp_dev	*dev;		/* [I] the probe catalog, owned */
};

/*
 * A source for the catalog dev (dtp_open_source), which it takes over:
 * dtsrc_close frees it.  NULL with err on failure (dev is then freed too).
 */
struct dtsrc *dtsrc_dt_new(struct dtp_dev *dev, char *err, size_t errlen);
struct dtsrc *dtsrc_perf_new(struct dtp_dev *dev, char *err, size_t errlen);
struct dtsrc *dtsrc_new(struct dtp_dev *dev, char *err, size_t errlen);

static inline void
dtsrc_close(struct dtsrc *s)
{
	if (s)
		s->ops->close(s);
}

#endif /* DT_SOURCE_H */
