/*
 * par_run.h - a fixed number of parts of one job run on the scan pool's
 * threads (dtsp_threads): work on items already in memory, not on blocks
 * (the stable radix sort's passes, the groups' sorts, the keys of the
 * pairs), which dtsp_scan's block runs do not fit.  Part k is always the same work whatever ran it, so a part that
 * could not get a thread of its own runs on the caller and the result is
 * the same.
 */
#ifndef DT_PAR_RUN_H
#define DT_PAR_RUN_H

#include <stddef.h>

/*
 * fn(ctx, k) for k = 0 .. nparts - 1, part 0 on the calling thread, the
 * others on threads of their own; returns once all have.  fn may write
 * only what part k owns.
 */
void rpt_par_run(unsigned nparts, void (*fn)(void *ctx, unsigned k), void *ctx);

/*
 * fn(ctx, lo, hi) over [0, n) cut into contiguous ranges, one a part, on
 * dtsp_threads() parts at most and no more than one per grain items: for
 * loops whose items are independent (each writes its own).
 */
void rpt_par_for(size_t n, size_t grain, void (*fn)(void *ctx, size_t lo, size_t hi), void *ctx);

#endif
