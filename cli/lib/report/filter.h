/*
 * filter.h - the event filters every report takes (dtreport stats/flame/
 * diff, dtsh): --pid --tid --comm --probe --cpu --ctx --since --until; and
 * --salvage, how the capture is opened (the salvage member, for rpt_open);
 * --threads, how many workers scan it (scan_pool.h, process-wide).
 *
 * Lists are comma-separated and options may repeat (values accumulate, a
 * row matches when it matches any value of each given option).  --comm and
 * --probe take shell globs (fnmatch).  Times (util.h dtu_parse_time): a
 * duration after the recording start (dtcap_host start_ns), bare numbers
 * being seconds, or '@' and an absolute timestamp of the ts clock.
 *
 * Use: flt_init, flt_option for each option seen, flt_resolve once the
 * capture is open (turns globs into per-id tables), then flt_block_skip per
 * block and flt_match per row.
 */
#ifndef DT_FILTER_H
#define DT_FILTER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"

/*
 * The per-context integer columns a filter may hold sets and ranges of, by
 * value (bit FLT_X_x of xset/xrng): SQL's pushed-down constraints
 * (dtsql_events.c) are a flt_filter, so that SQL and the reports share
 * the row test, the per-context test and the block skip.  Probe and comm
 * ids are tested by table (probe_ok, comm_ok); a set of them too far
 * apart for a table is a set here.
 */
enum { FLT_X_PID, FLT_X_TID, FLT_X_KSTACK, FLT_X_USTACK, FLT_X_FLAGS, FLT_X_PROBE, FLT_X_COMM,
       FLT_XN };

struct flt_filter {
	uint32_t	*pids, *tids, *cpus;
	size_t		npids, ntids, ncpus;
	size_t		pidcap, tidcap, cpucap;		/* DT_GROW's */
	char		**comms, **probes;
	size_t		ncomms, nprobes;
	size_t		commcap, probecap;
	int		since_rel, until_rel;	/* from the start, not '@' absolute */
	int		has_since, has_until;
	uint64_t	since, until;		/* as given (ns) */
	unsigned	ctx_mask;		/* --ctx: flt_ctx_bit()s, 0: all */
	int		salvage;		/* --salvage: skip damaged chunks */

	/* flt_resolve */
	uint64_t	tmin, tmax;		/* absolute, inclusive */
	uint8_t		*probe_ok;		/* by probe id, NULL: all */
	uint32_t	nprobe_ok;
	uint8_t		*comm_ok;		/* by comm id, NULL: all */
	uint32_t	ncomm_ok;
	uint32_t	pid_min, pid_max;	/* of the pid list */

	/*
	 * Set by SQL's cursor, not by options (flt_resolve keeps them): sets
	 * and inclusive ranges of the FLT_X_* columns, a row passing each
	 * one given.  SQL also fills probe_ok and comm_ok by id and tmin/tmax
	 * (with has_since/has_until) without the names and times above.
	 */
	unsigned	xset, xrng;		/* FLT_X_* bits */
	uint32_t	*xv[FLT_XN];		/* sorted, owned (flt_free) */
	size_t		nxv[FLT_XN];
	uint32_t	xlo[FLT_XN], xhi[FLT_XN];
};

/* The long options a report passes to getopt_long; values are FLT_OPT_*. */
#define FLT_OPT_PID	0x1001
#define FLT_OPT_TID	0x1002
#define FLT_OPT_COMM	0x1003
#define FLT_OPT_PROBE	0x1004
#define FLT_OPT_CPU	0x1005
#define FLT_OPT_SINCE	0x1006
#define FLT_OPT_UNTIL	0x1007
#define FLT_OPT_CTX	0x1008
#define FLT_OPT_SALVAGE	0x1009
#define FLT_OPT_THREADS	0x100a
#define FLT_LONGOPTS \
	{ "pid",   1, NULL, FLT_OPT_PID }, \
	{ "tid",   1, NULL, FLT_OPT_TID }, \
	{ "comm",  1, NULL, FLT_OPT_COMM }, \
	{ "probe", 1, NULL, FLT_OPT_PROBE }, \
	{ "cpu",   1, NULL, FLT_OPT_CPU }, \
	{ "since", 1, NULL, FLT_OPT_SINCE }, \
	{ "until", 1, NULL, FLT_OPT_UNTIL }, \
	{ "ctx",   1, NULL, FLT_OPT_CTX }, \
	{ "salvage", 0, NULL, FLT_OPT_SALVAGE }, \
	{ "threads", 1, NULL, FLT_OPT_THREADS }

/* Help text for the filter options; the last line is about opening, which
 * a shell holding its capture open leaves out. */
#define FLT_USAGE_FILTERS \
	"  --pid N[,N]  --tid N[,N]  --cpu N[,N]  --comm GLOB  --probe GLOB\n" \
	"  --since T  --until T    (T: seconds from the start as 1.5, 200ms, 2m;\n" \
	"                           @T: an absolute ts, e.g. @86400.5 or @86400500000000ns)\n" \
	"  --ctx task|softirq|hardirq|nmi[,...]  (where the CPU was; old captures: unknown)\n"
#define FLT_USAGE_SALVAGE \
	"  --salvage    read a damaged capture: skip damaged chunks and say what was lost\n" \
	"  --threads N  scan on N threads (1..256; default: the CPUs it may run on)\n"
#define FLT_USAGE FLT_USAGE_FILTERS FLT_USAGE_SALVAGE

void flt_init(struct flt_filter *f);
void flt_free(struct flt_filter *f);

/*
 * Take one option by its FLT_OPT_* code.  Returns 1 if handled, 0 if opt is
 * not a filter option, -1 on a bad value (message in err).
 */
int flt_option(struct flt_filter *f, int opt, const char *arg, char *err, size_t errlen);

/* The --ctx bit of an execution context (DTCAP_CTX_*; bit 4: unknown). */
static inline unsigned flt_ctx_bit(unsigned ctx)
{
	return ctx < 4 ? 1u << ctx : 1u << 4;
}

/*
 * Bind to an open capture.  One rule for every filter: a value the capture
 * never saw (no probe or comm matches the glob, a CPU it did not have) is
 * an error, -1 with the message (and a suggestion) in err.  Values that
 * exist but select no event together are the caller's note
 * (rpt_note_empty), not an error.
 */
int flt_resolve(struct flt_filter *f, const struct dtcap_reader *r, char *err, size_t errlen);

/* Any filter given at all (for "filtered" notes in reports). */
int flt_active(const struct flt_filter *f);

/* Whether a whole block can be skipped on its index entry alone. */
int flt_block_skip(const struct flt_filter *f, const struct dtcap_blockinfo *bi);

/* Columns flt_match needs (DTCAP_COL_*). */
unsigned flt_columns(const struct flt_filter *f);

/* The columns a block stores once per context (DTCAP_COL_*). */
#define FLT_CTX_COLS	(DTCAP_COL_PID | DTCAP_COL_TID | DTCAP_COL_PROBE | DTCAP_COL_COMM | \
			 DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_FLAGS)

/* Those of them f tests (flt_ctx_pass's columns; 0: it passes every
 * context). */
static inline unsigned flt_ctx_columns(const struct flt_filter *f)
{
	return flt_columns(f) & FLT_CTX_COLS;
}

/*
 * Is v in the sorted set s of n values?  The one test of a value against
 * a set for the filter and SQL's cursor.
 */
static inline int flt_in_set(const uint32_t *s, size_t n, uint32_t v)
{
	if (n == 1)
		return s[0] == v;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s[mid] < v)
			lo = mid + 1;
		else if (s[mid] > v)
			hi = mid;
		else
			return 1;
	}
	return 0;
}

/* A row of a block read with at least flt_columns(f). */
static inline int flt_match_row(const struct flt_filter *f, const struct dtcap_block *b,
				uint32_t i);

int flt_match_slow(const struct flt_filter *f, uint64_t ts, uint32_t cpu, uint32_t pid,
		   uint32_t tid, uint32_t probe, uint32_t comm);
/* The FLT_X_* sets and ranges of row i. */
int flt_match_x(const struct flt_filter *f, const struct dtcap_block *b, uint32_t i);

static inline int flt_match_row(const struct flt_filter *f, const struct dtcap_block *b,
				uint32_t i)
{
	if (b->probe && f->probe_ok &&
	    (b->probe[i] >= f->nprobe_ok || !f->probe_ok[b->probe[i]]))
		return 0;
	if (f->ctx_mask && b->ctx && !(f->ctx_mask & flt_ctx_bit(b->ctx[i])))
		return 0;
	if ((f->xset | f->xrng) && !flt_match_x(f, b, i))
		return 0;
	if (!(f->npids | f->ntids | f->ncpus | f->ncomms) && !f->comm_ok &&
	    !f->has_since && !f->has_until)
		return 1;
	return flt_match_slow(f, b->ts ? b->ts[i] : 0, b->cpu ? b->cpu[i] : 0,
			      b->pid ? b->pid[i] : 0, b->tid ? b->tid[i] : 0,
			      b->probe ? b->probe[i] : 0, b->comm ? b->comm[i] : 0);
}

/*
 * The rows of block b (read with at least flt_columns(f)) that f passes,
 * in order, into sel (room for b->rows); returns how many.  The tests of
 * the columns a block stores per context are made once per context.
 */
uint32_t flt_select(const struct flt_filter *f, const struct dtcap_block *b, uint32_t *sel);

/*
 * Per context of block b (read with DTCAP_COL_BYCTX and at least
 * flt_ctx_columns(f)): ok[d] (room for b->ndict) 1 when context d passes
 * the tests of the columns a block stores per context, 0 when none of its
 * rows can pass; returns how many pass.  The time, CPU and --ctx tests are
 * the rows' (flt_match_row).  SQL's grouped scan (dtsql_gscan.c) and the
 * read-ahead by contexts (scan_pool.c) both filter with it.
 */
uint32_t flt_ctx_pass(const struct flt_filter *f, const struct dtcap_block *b, uint8_t *ok);

/*
 * Walk every row of the capture that matches f: blocks skipped by index,
 * the columns cols | flt_columns(f) decoded, fn called per matching row (a
 * non-zero return stops the walk and is returned).  cancel (may be NULL)
 * is looked at before each block: once set, the walk stops with
 * FLT_SCAN_CANCELLED and "interrupted" in err.  When stderr is a
 * terminal, progress is shown there, labelled with what.  -1 on damage
 * (message in err, naming the file and offset as the format library does).
 */
#define FLT_SCAN_CANCELLED	(-2)
typedef int (*flt_row_fn)(void *ctx, const struct dtcap_block *b, uint32_t row);
int flt_scan(struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
	     flt_row_fn fn, void *ctx, volatile sig_atomic_t *cancel, const char *what,
	     char *err, size_t errlen);

/*
 * The same walk a block at a time, for readers that aggregate (with
 * DTCAP_COL_BYCTX, per context rather than per row): fn gets every block
 * that is not skipped, all its rows selected, so f must filter no rows
 * (flt_active(f) == 0; otherwise -1 without walking), and its number blk
 * (dtcap_block_info; fn may read more of its columns itself).
 */
typedef int (*flt_block_fn)(void *ctx, const struct dtcap_block *b, size_t blk);
int flt_scan_blocks(struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
		    flt_block_fn fn, void *ctx, volatile sig_atomic_t *cancel,
		    const char *what, char *err, size_t errlen);

#endif
