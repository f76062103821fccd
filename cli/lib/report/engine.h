/*
 * engine.h - the report engine: stats, flame graphs (and their diff) and
 * top, computed on a capture the caller holds open and written to a FILE.
 * dtreport's commands (cmd_*.c) and dtsh are option parsers around it;
 * dtsh calls it in-process on the capture, symbols and SQL handle it keeps
 * between commands.
 *
 * What every call takes, and what it keeps (nothing, past its return):
 *	c	the capture (struct rpt_cap): reader and symbols are borrowed,
 *		never closed; c->sym NULL makes a call that names frames open
 *		and close its own.  c->path is only printed.
 *	f	the filters (filter.h), parsed by the caller.  The call binds
 *		them to c->r (flt_resolve), which rewrites f's resolved tables:
 *		one filter serves several captures in turn, not at once.
 *	o	the options, read during the call only (strings not copied).
 *	out	the report's destination: written, never closed; the caller
 *		checks its error flag or commits it (util.h dtu_out).
 *	cancel	one flag polled between blocks of events and between
 *		stacks named (NULL: never).  Set it (dtsh's SIGINT handler
 *		does) and the call stops within a block's decoding, says
 *		"PROG CMD: interrupted" and returns RPT_EXIT_ERROR; what it
 *		wrote to out is incomplete (abort a dtu_out).  The flag is not
 *		cleared: it is the caller's.
 * Messages (errors, notes such as "no event matches the filters") go to
 * stderr through rpt_err, so they speak as dtreport or dtsh (rpt_shell).
 * Calls return a RPT_EXIT_* status (report.h); none calls exit().
 */
#ifndef DT_ENGINE_H
#define DT_ENGINE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "dtcap.h"
#include "dtsym.h"
#include "filter.h"
#include "flame.h"

struct rpt_cap {
	struct dtcap_reader *r;		/* open (report.h rpt_open) */
	struct dtsym	*sym;		/* dtsym_open(r), or NULL */
	const char	*path;		/* names the capture in reports */
};

/* ---- stats (report_stats.c) */

struct rpt_stats_opts {
	int		json;		/* one JSON object instead of text */
	int		all;		/* also probes and CPUs without events */
	unsigned	top;		/* rows of the comm and pid rankings */
};

int rpt_stats(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_stats_opts *o,
	      FILE *out, volatile sig_atomic_t *cancel);

/* ---- flame graphs (report_flame.c) */

enum { RPT_ONLY_BOTH, RPT_ONLY_KERNEL, RPT_ONLY_USER };

struct rpt_flame_opts {
	const char	*cmd;		/* "flame" or "diff": who speaks */
	int		folded;		/* folded text instead of SVG */
	int		no_comm;	/* no comm root frame */
	int		only;		/* RPT_ONLY_*: which stacks to draw */
	int		reverse;	/* stacks innermost first */
	int		inverted;	/* icicle graph */
	const char	*title;		/* NULL: the kind of graph */
	unsigned	width;		/* px; 0: 1200 */
	unsigned	height, fontsize;	/* px; 0: flame.h defaults */
	const char	*colors;	/* flame_palette_ok(), NULL: "kind" */
	const char	*countname;	/* NULL: "samples" */
	double		minwidth;	/* px; narrower frames are left out */
	int		by_dso;		/* frames named by object (dtsym_dso) */
	int		by_srcline;	/* user frames named "file:line" where the
					 * capture has source lines */
	int		mode;		/* RPT_FLAME_*: what a frame's width is */
	const char	*states;	/* offcpu: state letters kept ("SD"); NULL: all */
};

/*
 * What a flame graph weighs (report_offcpu.c for all but SAMPLES): profile
 * samples; every switch-out stack by the microseconds until that thread ran
 * again (split by state: blocked until its wakeup in the state it left in,
 * then R, waiting for a CPU); both, samples weighted by their period; or the
 * wakers' stacks by the microseconds the thread they woke had been blocked,
 * under the woken thread's name.
 */
enum { RPT_FLAME_SAMPLES, RPT_FLAME_OFFCPU, RPT_FLAME_ONOFF, RPT_FLAME_WAKERS };

/* The fold of the RPT_FLAME_OFFCPU/ONOFF/WAKERS modes: as rpt_flame_fold,
 * *nsamples being microseconds. */
int rpt_offcpu_fold(const struct rpt_cap *c, struct flt_filter *f,
		    const struct rpt_flame_opts *o, struct flame *fl, int side,
		    uint64_t *nsamples, char *probedesc, size_t pdlen,
		    volatile sig_atomic_t *cancel);

/* The defaults dtreport flame has without options. */
void rpt_flame_opts_init(struct rpt_flame_opts *o, const char *cmd);

/*
 * Fold c's samples (the timer probes' events, or those --probe chose) into
 * fl on side 0 (a profile, diff's A) or 1 (diff's B).  Puts the sample
 * count in *nsamples and describes the probes counted in probedesc
 * ("profile:hz:997", at most pdlen bytes).  fl is the caller's; frames
 * interned there are copies.
 */
int rpt_flame_fold(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_flame_opts *o,
		   struct flame *fl, int side, uint64_t *nsamples, char *probedesc, size_t pdlen,
		   volatile sig_atomic_t *cancel);

/*
 * The subtitle of a graph of ncaps captures (path: the one when ncaps is
 * 1) holding n samples of probedesc, into buf.
 */
void rpt_flame_subtitle(char *buf, size_t len, const struct rpt_flame_opts *o, int ncaps,
			const char *path, uint64_t n, const char *probedesc, int filtered);

/*
 * Write fl (folded text, or SVG with subtitle) to out; diff: the
 * differential graph of side 1 against side 0.  0, or -1 on a write error
 * (errno set when the system gave one); nothing printed.
 */
int rpt_flame_write(const struct flame *fl, const struct rpt_flame_opts *o, const char *subtitle,
		    int diff, FILE *out);

/* One capture's flame graph to out: rpt_flame_fold, then rpt_flame_write.
 * A write error is reported under the name outname. */
int rpt_flame(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_flame_opts *o,
	      FILE *out, const char *outname, volatile sig_atomic_t *cancel);

/*
 * The probes whose events are samples, by probe id (a calloc'd array of
 * dtcap_max_probe_id(r) + 1 flags, the caller's to free; NULL on ENOMEM):
 * those f's --probe chose, else the timer probes (profile, interval),
 * else every probe, said on stderr as cmd speaking of path.  Describes
 * them in probedesc ("profile:hz:997", at most pdlen bytes).
 */
uint8_t *rpt_sample_probes(const struct dtcap_reader *r, const struct flt_filter *f,
			   const char *cmd, const char *path, char *probedesc, size_t pdlen);

/* ---- top (report_top.c; sym and dso: report_frames.c) */

enum rpt_top_by { RPT_TOP_COMM, RPT_TOP_PID, RPT_TOP_PROBE, RPT_TOP_STACK, RPT_TOP_SYSCALL,
		  RPT_TOP_SYM, RPT_TOP_DSO, RPT_TOP_SRCLINE };

struct rpt_top_opts {
	unsigned long	limit;		/* rows; 0: 10 */
	enum rpt_top_by	by;
	int		children;	/* sym, dso: inclusive (each function once
					 * a sample), not self (innermost frame) */
};

/* The names of rpt_top_by, in order ("comm", ...); NULL-terminated. */
extern const char *const rpt_top_keys[];

/*
 * The busiest comms, pids, probes, stacks (symbolized top frames, through
 * c->sym) or syscalls among the events f matches, as a table.
 */
int rpt_top(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_top_opts *o,
	    FILE *out, volatile sig_atomic_t *cancel);

/*
 * Functions by sample, as perf report --no-children --sort sym (or dso):
 * the samples (rpt_sample_probes) counted by their innermost frame, or
 * with o->children by every function on their stacks, each once.  Called
 * by rpt_top for RPT_TOP_SYM, RPT_TOP_DSO and RPT_TOP_SRCLINE (the source
 * line of each frame, "file:line", where the capture has one: of the
 * innermost inlined call, as perf --sort srcline; else the function).
 */
int rpt_top_frames(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_top_opts *o,
		   FILE *out, volatile sig_atomic_t *cancel);

/* ---- annotate (report_annotate.c) */

struct rpt_annotate_opts {
	const char	*func;		/* a name as printed, a glob or /regex/ */
	int		no_source;	/* line numbers only, no source text */
	int		no_insns;	/* no instruction table */
};

/*
 * Where the samples taken in the functions matching o->func (their
 * innermost user frame: self time) fell: per source line, with the
 * source text where the file is readable here, and per instruction,
 * disassembled from the file on disk when its build id is the
 * capture's (else the addresses, and why).  One block per function.
 */
int rpt_annotate(const struct rpt_cap *c, struct flt_filter *f,
		 const struct rpt_annotate_opts *o, FILE *out, volatile sig_atomic_t *cancel);

/* ---- callers and callees (report_frames.c) */

struct rpt_calls_opts {
	const char	*pattern;	/* a name, a glob, or /regex/ (POSIX ERE) */
	int		callers;	/* 1: who calls it; 0: what it calls */
	int		folded;		/* folded text rooted at the function */
	double		minpct;		/* tree lines under this share left out */
};

/*
 * The call tree out of (callees) or into (callers) the functions whose
 * name matches o->pattern, merged over every sample's stack: callees
 * from the outermost match down, callers from the innermost match up, so
 * a recursive function counts each sample once.  Text tree (flame.h
 * flame_write_tree, shares of all samples) or folded stacks.
 */
int rpt_calls(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_calls_opts *o,
	      FILE *out, volatile sig_atomic_t *cancel);
/* ---- the scheduler's view: off-CPU intervals (sched_model.c) */

/* One stretch a thread spent off-CPU: switched out at start, back at end. */
struct rpt_sched_span {
	uint64_t	start, end;	/* switch out, switch back in */
	uint64_t	wake;		/* last wakeup in between, 0: none seen */
	uint32_t	tid, pid, comm, cpu;
	uint32_t	kstack, ustack;	/* where it left the CPU */
	uint32_t	wtid, wpid, wcomm;	/* the waker (wake != 0) */
	uint32_t	wkstack, wustack;	/* the waker's stacks */
	uint8_t		wctx;		/* DTCAP_CTX_* the wakeup ran in: from an
					 * interrupt the task at hand is no waker */
	char		state;		/* left in: R (preempted), S, D, I, ... */
	uint8_t		open;		/* never back before the capture ends */
};

struct rpt_sched {
	struct rpt_sched_span *v;	/* in order of their end */
	size_t		n, cap;
	uint64_t	tmin, tmax;	/* of the scheduler events */
	uint64_t	nevents;	/* scheduler events read */
	uint64_t	nlost;		/* intervals whose switch back in is missing */
	uint32_t	switch_probe;	/* the sched_switch probe's id */
};

/* The state letter of a sched_switch prev_state. */
char rpt_sched_state_letter(uint32_t state);

/*
 * Every off-CPU interval of c's sched_switch/sched_wakeup events (dtrec
 * --offcpu), unfiltered: a thread's interval ends in an event another task
 * ran.  0, or a RPT_EXIT_* status with the message printed (cmd speaks).
 */
int rpt_sched_build(const struct rpt_cap *c, const char *cmd, struct rpt_sched *out,
		    volatile sig_atomic_t *cancel);
void rpt_sched_free(struct rpt_sched *s);

/* ---- naming stacks into a flame graph (stack_names.c) */

/*
 * The inlined calls at frame k of a user stack (pcs, innermost first), as
 * FLAME_INLINE frames "f (inlined)" (by_srcline: FLAME_USER frames
 * "file:line", the position in each) appended to buf outermost first, at
 * most room of them; none when dtsym_inline is 0 or the capture has no
 * source lines there.  -1 on ENOMEM.
 */
int rpt_inline_frames(struct flame *fl, struct dtsym *sym, const uint64_t *pcs, unsigned k,
		      uint32_t pid, uint64_t ts, int by_srcline, uint32_t *buf, unsigned *nb,
		      unsigned room);
/* "file:line" of frame k of a user stack (return addresses at pc - 1)
 * into out: 1, or 0 when the capture has no source line there.  With
 * dtsym_inline, the out-of-line function's position (the inlined calls'
 * are rpt_inline_frames'), else the innermost. */
int rpt_srcline_text(struct dtsym *sym, const uint64_t *pcs, unsigned k, int kernel,
		     uint32_t pid, uint64_t ts, char *out, size_t len);
/* Room for them in a sample's frame buffer, beyond its own frames. */
#define RPT_INLINE_ROOM		(4 * DTCAP_MAXFRAMES)

struct rpt_namer;
struct rpt_namer *rpt_namer_new(const struct rpt_cap *c, struct flame *fl);
void rpt_namer_free(struct rpt_namer *n);
/*
 * Append stack id's frames, outermost first, as fl's ids to buf (room for
 * DTCAP_MAXFRAMES + 1 more); a user stack is named in pid's process at ts.
 * 0, or -1 out of memory.
 */
int rpt_namer_stack(struct rpt_namer *n, uint32_t id, int kernel, uint32_t pid, uint64_t ts,
		    uint32_t *buf, unsigned *nb);
/* The name of stack id's innermost named frames (at most nframes) as text
 * "a <- b <- c" into out. */
void rpt_namer_text(struct rpt_namer *n, uint32_t id, int kernel, uint32_t pid, uint64_t ts,
		    unsigned nframes, char *out, size_t len);

/* ---- entry/return pairs: spans (span_model.c) */

#define RPT_SPAN_ARGS	6	/* the entry's arguments kept */

struct rpt_span {
	uint64_t	start, end;
	uint32_t	tid, pid, comm;
	uint32_t	probe;		/* the entry probe's id */
	int64_t		ret;		/* the return's value */
	uint32_t	err;		/* and errno, 0: none */
};

/* An entry that never returned (entry 1), or a return without entry. */
struct rpt_unmatched {
	uint32_t	probe;		/* the entry probe's id */
	uint32_t	tid, pid, comm;
	uint8_t		entry;
};

struct rpt_spans {
	struct rpt_span	*v;		/* a thread's in time order */
	size_t		n, cap;
	/* RPT_SPANS_ARGS: v[i]'s entry's argument slots (nargs[i] of them) */
	uint64_t	(*args)[RPT_SPAN_ARGS];
	uint8_t		*nargs;
	size_t		acap, ncap;
	struct rpt_unmatched *u;
	size_t		nu, ucap;
};

/*
 * Pair the entry and return events of c that f passes, per thread; glob
 * (NULL: all) chooses the probes by the pair's name ("syscall:read") or
 * either probe's.  flags: RPT_SPANS_SYSCALLS, syscall probes only;
 * RPT_SPANS_ARGS, keep the entries' arguments; RPT_SPANS_NORET, leave
 * ret and err 0 (the arguments are then not even decoded: latency needs
 * times only).  0, or a RPT_EXIT_* status with the message printed (cmd
 * speaks).
 */
#define RPT_SPANS_SYSCALLS	0x1
#define RPT_SPANS_ARGS		0x2
#define RPT_SPANS_NORET		0x4
int rpt_spans_build(const struct rpt_cap *c, const char *cmd, struct flt_filter *f,
		    const char *glob, unsigned flags, struct rpt_spans *out,
		    volatile sig_atomic_t *cancel);
int rpt_spans_unmatched(struct rpt_spans *s, const uint32_t *probe, uint32_t tid, uint32_t pid,
			uint32_t comm, int entry);
void rpt_spans_free(struct rpt_spans *s);

/* ---- latency (report_latency.c) */

enum { RPT_LAT_PROBE, RPT_LAT_COMM, RPT_LAT_PID, RPT_LAT_TID };
extern const char *const rpt_latency_keys[];	/* "probe", "comm", ... */

struct rpt_latency_opts {
	const char	*glob;		/* --probe: which pairs; NULL: all */
	int		by;		/* RPT_LAT_*: groups within a probe */
	uint64_t	hist_width;	/* linear buckets of this many ns; 0: log2 */
	int		json;
};

/* The nearest-rank percentile q (0..1] of n ascending values. */
uint64_t rpt_percentile(const uint64_t *sorted, size_t n, double q);

/* Per group of entry/return pairs: count, unmatched entries, p50, p90,
 * p99, p99.9, max and a quantize histogram (text), or JSON. */
int rpt_latency(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_latency_opts *o,
		FILE *out, volatile sig_atomic_t *cancel);

/* ---- syscall summary (report_syscalls.c) */

enum { RPT_SYS_ALL, RPT_SYS_COMM, RPT_SYS_PID };
struct rpt_syscalls_opts {
	int		by;		/* RPT_SYS_*: one table, or one per comm/pid */
	int		json;
};

/* perf trace -s / strace -c: per syscall calls, errors (by errno name),
 * total, average, min, max, stddev and p99 time. */
int rpt_syscalls(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_syscalls_opts *o,
		 FILE *out, volatile sig_atomic_t *cancel);

/* ---- blame (report_blame.c) */

struct rpt_blame_opts {
	uint32_t	tid;		/* the thread */
	unsigned	depth;		/* hops of wakers followed (default 3) */
	int		text;		/* a text tree (else folded or SVG) */
	int		folded;		/* folded stacks (else SVG) */
};

/*
 * tid's time between --since and --until (within its recorded life) as
 * on-CPU (spread over its profile samples), runqueue and blocked, each
 * blocked stretch under its waker and what the waker did meanwhile, to
 * depth hops.  out: text tree, folded stacks (us) or SVG.
 */
int rpt_blame(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_blame_opts *o,
	      FILE *out, const char *outname, volatile sig_atomic_t *cancel);

/* ---- heatmap (report_heatmap.c) */

struct rpt_heatmap_opts {
	unsigned	rows;		/* slices of a second; 0: 50 (20 ms) */
};

/* FlameScope's subsecond-offset heatmap of the samples (or --probe's
 * events) as a self-contained SVG. */
int rpt_heatmap(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_heatmap_opts *o,
		FILE *out, const char *outname, volatile sig_atomic_t *cancel);

/* ---- sorting the models' events (sort_keys.c) */

struct rpt_key {
	uint64_t	k;		/* the sort key (a time) */
	uint64_t	i;		/* what it belongs to (an index) */
};

/* Sort v by k, stably.  0, or -1 out of memory. */
int rpt_key_sort(struct rpt_key *v, size_t n);

/* Items 0..n grouped by key: group r (in key order) has key[r] and the
 * items idx[start[r] .. start[r + 1]), by value then item. */
struct rpt_groups {
	size_t		n;
	uint64_t	*key;
	size_t		*start;		/* n + 1 */
	uint32_t	*idx;
};
int rpt_group_by(const uint64_t *key, const uint64_t *val, size_t n, struct rpt_groups *g);
void rpt_groups_free(struct rpt_groups *g);

#endif /* DT_ENGINE_H */
