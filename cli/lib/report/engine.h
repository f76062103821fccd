/*
 * engine.h - the report engine: stats, flame graphs (and their diff) and
 * top, computed on a capture the caller holds open and written to a FILE.
 * dtreport's commands (cmd_*.c) and dtsh are option parsers around it;
 * dtsh calls it in-process on the capture, symbols and SQL handle it keeps
 * between commands.
 *
 * What every call takes, and what it keeps (nothing, past its return):
 *	c	the capture (struct dtr_cap): reader and symbols are borrowed,
 *		never closed; c->sym NULL makes a call that names frames open
 *		and close its own.  c->path is only printed.
 *	f	the filters (filter.h), parsed by the caller.  The call binds
 *		them to c->r (dtf_resolve), which rewrites f's resolved tables:
 *		one filter serves several captures in turn, not at once.
 *	o	the options, read during the call only (strings not copied).
 *	out	the report's destination: written, never closed; the caller
 *		checks its error flag or commits it (util.h dtu_out).
 *	cancel	one flag polled between blocks of events and between
 *		stacks named (NULL: never).  Set it (dtsh's SIGINT handler
 *		does) and the call stops within a block's decoding, says
 *		"PROG CMD: interrupted" and returns DTR_EXIT_ERROR; what it
 *		wrote to out is incomplete (abort a dtu_out).  The flag is not
 *		cleared: it is the caller's.
 * Messages (errors, notes such as "no event matches the filters") go to
 * stderr through dtr_err, so they speak as dtreport or dtsh (dtr_shell).
 * Calls return a DTR_EXIT_* status (report.h); none calls exit().
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

struct dtr_cap {
	struct dtcap_reader *r;		/* open (report.h dtr_open) */
	struct dtsym	*sym;		/* dtsym_open(r), or NULL */
	const char	*path;		/* names the capture in reports */
};

/* ---- stats (report_stats.c) */

struct dtr_stats_opts {
	int		json;		/* one JSON object instead of text */
	int		all;		/* also probes and CPUs without events */
	unsigned	top;		/* rows of the comm and pid rankings */
};

int dtr_stats(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_stats_opts *o,
	      FILE *out, volatile sig_atomic_t *cancel);

/* ---- flame graphs (report_flame.c) */

enum { DTR_ONLY_BOTH, DTR_ONLY_KERNEL, DTR_ONLY_USER };

struct dtr_flame_opts {
	const char	*cmd;		/* "flame" or "diff": who speaks */
	int		folded;		/* folded text instead of SVG */
	int		no_comm;	/* no comm root frame */
	int		only;		/* DTR_ONLY_*: which stacks to draw */
	int		reverse;	/* stacks innermost first */
	int		inverted;	/* icicle graph */
	const char	*title;		/* NULL: the kind of graph */
	unsigned	width;		/* px; 0: 1200 */
	unsigned	height, fontsize;	/* px; 0: flame.h defaults */
	const char	*colors;	/* flame_palette_ok(), NULL: "kind" */
	const char	*countname;	/* NULL: "samples" */
	double		minwidth;	/* px; narrower frames are left out */
	int		by_dso;		/* frames named by object (dtsym_dso) */
};

/* The defaults dtreport flame has without options. */
void dtr_flame_opts_init(struct dtr_flame_opts *o, const char *cmd);

/*
 * Fold c's samples (the timer probes' events, or those --probe chose) into
 * fl on side 0 (a profile, diff's A) or 1 (diff's B).  Puts the sample
 * count in *nsamples and describes the probes counted in probedesc
 * ("profile:hz:997", at most pdlen bytes).  fl is the caller's; frames
 * interned there are copies.
 */
int dtr_flame_fold(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_flame_opts *o,
		   struct flame *fl, int side, uint64_t *nsamples, char *probedesc, size_t pdlen,
		   volatile sig_atomic_t *cancel);

/*
 * The subtitle of a graph of ncaps captures (path: the one when ncaps is
 * 1) holding n samples of probedesc, into buf.
 */
void dtr_flame_subtitle(char *buf, size_t len, const struct dtr_flame_opts *o, int ncaps,
			const char *path, uint64_t n, const char *probedesc, int filtered);

/*
 * Write fl (folded text, or SVG with subtitle) to out; diff: the
 * differential graph of side 1 against side 0.  0, or -1 on a write error
 * (errno set when the system gave one); nothing printed.
 */
int dtr_flame_write(const struct flame *fl, const struct dtr_flame_opts *o, const char *subtitle,
		    int diff, FILE *out);

/* One capture's flame graph to out: dtr_flame_fold, then dtr_flame_write.
 * A write error is reported under the name outname. */
int dtr_flame(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_flame_opts *o,
	      FILE *out, const char *outname, volatile sig_atomic_t *cancel);

/*
 * The probes whose events are samples, by probe id (a calloc'd array of
 * dtcap_max_probe_id(r) + 1 flags, the caller's to free; NULL on ENOMEM):
 * those f's --probe chose, else the timer probes (profile, interval),
 * else every probe, said on stderr as cmd speaking of path.  Describes
 * them in probedesc ("profile:hz:997", at most pdlen bytes).
 */
uint8_t *dtr_sample_probes(const struct dtcap_reader *r, const struct dtf_filter *f,
			   const char *cmd, const char *path, char *probedesc, size_t pdlen);

/* ---- top (report_top.c; sym and dso: report_frames.c) */

enum dtr_top_by { DTR_TOP_COMM, DTR_TOP_PID, DTR_TOP_PROBE, DTR_TOP_STACK, DTR_TOP_SYSCALL,
		  DTR_TOP_SYM, DTR_TOP_DSO };

struct dtr_top_opts {
	unsigned long	limit;		/* rows; 0: 10 */
	enum dtr_top_by	by;
	int		children;	/* sym, dso: inclusive (each function once
					 * a sample), not self (innermost frame) */
};

/* The names of dtr_top_by, in order ("comm", ...); NULL-terminated. */
extern const char *const dtr_top_keys[];

/*
 * The busiest comms, pids, probes, stacks (symbolized top frames, through
 * c->sym) or syscalls among the events f matches, as a table.
 */
int dtr_top(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_top_opts *o,
	    FILE *out, volatile sig_atomic_t *cancel);

/*
 * Functions by sample, as perf report --no-children --sort sym (or dso):
 * the samples (dtr_sample_probes) counted by their innermost frame, or
 * with o->children by every function on their stacks, each once.  Called
 * by dtr_top for DTR_TOP_SYM and DTR_TOP_DSO.
 */
int dtr_top_frames(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_top_opts *o,
		   FILE *out, volatile sig_atomic_t *cancel);

/* ---- callers and callees (report_frames.c) */

struct dtr_calls_opts {
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
int dtr_calls(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_calls_opts *o,
	      FILE *out, volatile sig_atomic_t *cancel);

#endif /* DT_ENGINE_H */
