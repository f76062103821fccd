/*
 * scan_pool.h - the report scans on every core: a capture's event blocks
 * decoded and aggregated by N worker threads, each into a partial result
 * of its own, the partials then merged on the calling thread in block
 * order.
 *
 * Determinism: worker k takes the k-th contiguous run of the blocks the
 * filter does not skip, and the partials are merged in k order.  A merge
 * that adds a partial's new keys in the partial's own first-seen order
 * therefore rebuilds exactly the table one thread would have built (first
 * seen in block order, counts summed): output is the same bytes for any N.
 * A job whose merge is not of that kind (a running latest value, say) must
 * let later partials win, as a later block would have.
 *
 * Threads: the reader is shared, read-only (dtcap_read_block_mt), each
 * worker has its own dtcap_block; the job's block/row function runs on the
 * worker with its own partial only and may read the job's context (never
 * write it); part_new, merge and part_free run on the calling thread.
 */
#ifndef DT_SCAN_POOL_H
#define DT_SCAN_POOL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"
#include "filter.h"

struct dtsp_job {
	/* A worker's partial result, NULL when out of memory. */
	void	*(*part_new)(void *ctx);
	void	(*part_free)(void *ctx, void *part);
	/*
	 * Exactly one of these.  block: every block not skipped, all its rows
	 * (the filter must select no rows: flt_active(f) == 0).  row: every
	 * row the filter passes.  Non-zero stops the scan; the message is
	 * then what the function left in err ("out of memory"), or "stopped".
	 */
	int	(*block)(void *part, const struct dtcap_block *b, size_t blk, char *err,
			 size_t errlen);
	int	(*row)(void *part, const struct dtcap_block *b, uint32_t row, char *err,
		       size_t errlen);
	/* Fold a partial into the context: partials in block order.  -1 out of
	 * memory. */
	int	(*merge)(void *ctx, void *part);
	/* Optional (last, so that jobs written without it need no
	 * change): non-zero when block bi need not be read, beyond what the
	 * filter skips (a caller with filters of its own, as SQL's cursor
	 * has).  Asked on the calling thread before the blocks are shared
	 * out, so skipped blocks weigh on no worker. */
	int	(*skip)(void *ctx, const struct dtcap_blockinfo *bi);
};

/*
 * Run job over r's blocks that f does not skip, the columns cols |
 * flt_columns(f) decoded.  0; -1 with the message in err (damage, memory,
 * a job's stop: of the earliest block's worker that failed, so the same
 * for any N); FLT_SCAN_CANCELLED once *cancel is set (looked at before
 * the walk, then before each block by every worker).  Progress on a
 * terminal as flt_scan shows it.
 * Nothing is merged unless every worker finished.
 */
int dtsp_scan(const struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
	      const struct dtsp_job *job, void *ctx, volatile sig_atomic_t *cancel,
	      const char *what, char *err, size_t errlen);

/*
 * Blocks in file order, decoded ahead: the scan of a consumer that must see
 * every block in order (an export writing rows as they come).  The
 * decoding runs on dtsp_threads() - 1 helper threads (none with one
 * thread: the caller decodes), a few blocks ahead of it.  As dtsp_scan:
 * the blocks f skips (flt_block_skip; f NULL: none) are left out, the
 * columns cols | flt_columns(f) decoded (the consumer still asks
 * flt_match_row of each row), *cancel polled before each block (NULL:
 * never), and a progress line drawn on a terminal's stderr under what
 * (NULL: none), cleared by dtsp_ahead_free.  dtsp_ahead_next gives the
 * next block and its number, 1; 0 at the end; FLT_SCAN_CANCELLED with
 * "interrupted" in err; -1 on damage, memory or a thread that would not
 * start, the message in err.  The block is valid until the next call or
 * dtsp_ahead_free, which stops the helpers (also midway).
 */
struct dtsp_ahead;
struct dtsp_ahead *dtsp_ahead_new(const struct dtcap_reader *r, const struct flt_filter *f,
				  unsigned cols, volatile sig_atomic_t *cancel, const char *what,
				  char *err, size_t errlen);
int dtsp_ahead_next(struct dtsp_ahead *a, const struct dtcap_block **b, size_t *blk, char *err,
		    size_t errlen);
void dtsp_ahead_free(struct dtsp_ahead *a);

/*
 * The same, and the helpers also select the rows f passes (flt_select),
 * so that a consumer sees only those: SQL's events cursor, whose
 * pushed-down constraints are f.  dtsp_ahead_rows gives the block given
 * last's selected rows (row numbers of it, ascending; valid as the block
 * is).  Blocks with no row selected are given too (the consumer decides
 * whether an empty block counts).  Here dtsp_threads() helpers decode
 * (none with one thread), not one fewer: the consumer mostly waits for
 * the few rows that pass.  Memory stays bounded: at most two blocks and
 * their selections per helper are in hand.  When f tests the columns a
 * block stores per context and cols are only those, ts and cpu, a
 * block's contexts are read first and its rows only when one passes.
 * rev: the blocks are given last to first (ORDER BY ts DESC streamed).
 */
struct dtsp_ahead *dtsp_ahead_new_rows(const struct dtcap_reader *r, const struct flt_filter *f,
				       unsigned cols, int rev, volatile sig_atomic_t *cancel,
				       const char *what, char *err, size_t errlen);
const uint32_t *dtsp_ahead_rows(const struct dtsp_ahead *a, uint32_t *n);
/* Blocks decoded so far, helpers' and the consumer's: how far ahead of
 * the consumer a scan went (an early stop's proof). */
size_t dtsp_ahead_decoded(const struct dtsp_ahead *a);
/* Of those, the blocks given without their rows decoded: the filter tests
 * contexts and none of the block's passes (its contexts read alone). */
size_t dtsp_ahead_ctx_only(const struct dtsp_ahead *a);

/* The workers a scan starts (dtreport --threads, dtsh set threads): 0 is
 * the online CPUs this process may run on (its affinity, as nproc says).
 * Process-wide; set before scanning, not during. */
void dtsp_set_threads(unsigned n);
unsigned dtsp_threads(void);
#define DTSP_MAX_THREADS	256
/* "N", 1 <= N <= DTSP_MAX_THREADS, into *n; -1 otherwise. */
int dtsp_parse_threads(const char *s, unsigned *n);

#endif
