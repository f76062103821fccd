/*
 * model_collect.h - the time models' collection of their events on the
 * scan pool (span_model.c's entry/return events, sched_model.c's
 * switches and wakeups): each worker picks its blocks' events into
 * records of the model's (up to MCOL_MAXARR parallel arrays, each of a
 * fixed record size), and the result is the list one walk in block order
 * would have made, for any --threads.
 *
 * Unfiltered, with block summaries, each block's events are placed where
 * the summaries' counts of the kept probes put them: one allocation,
 * nothing appended or copied.  A block holding another count than its
 * summary (a hand-made or damaged file), a block without one (older
 * captures) or a filtered scan: the workers append, and the merge joins
 * their runs in block order.
 */
#ifndef DT_MODEL_COLLECT_H
#define DT_MODEL_COLLECT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"
#include "filter.h"

#define MCOL_MAXARR	3

struct mcol_job;

/*
 * A worker's records (and, once merged, the caller's).  A model's part
 * starts with one of these (mcol_job.psize: the whole) and may add
 * figures of its own, folded by mcol_job.merge.
 */
struct mcol_part {
	const struct mcol_job *job;	/* [I] */
	void		*arr[MCOL_MAXARR];	/* the records, by array */
	size_t		n, cap;		/* records in each array, room */
	const size_t	*place;		/* [I] placed: block blk's records at
					 * place[blk] .. place[blk + 1] */
	size_t		lim;		/* placed: the current block's end */
	int		misplaced;	/* a block held another count than its summary */
};

struct mcol_job {
	unsigned	narr;
	size_t		size[MCOL_MAXARR];	/* a record's bytes; 0: array not kept */
	size_t		psize;		/* the model's part, >= sizeof(struct mcol_part) */
	const void	*ctx;		/* [I] the model's tables, read by the workers */
	/* whether probe id's events are kept: the placing counts them */
	int		(*keep)(const void *ctx, uint32_t probe);
	/*
	 * Exactly one: the kept events of a whole block (unfiltered scans), or
	 * of a row the filter passed, each given a record by mcol_add.
	 * Non-zero: mcol_add failed.
	 */
	int		(*block)(struct mcol_part *p, const struct dtcap_block *b);
	int		(*row)(struct mcol_part *p, const struct dtcap_block *b, uint32_t i);
	/* Optional: fold a later part's own figures into m (block order). */
	void		(*merge)(struct mcol_part *m, const struct mcol_part *p);
};

size_t mcol_grow(struct mcol_part *p);

/* The next record's index in every array; SIZE_MAX when there is no room
 * (placed: the summary was wrong; appending: out of memory).  Inline: it
 * is called for each of millions of events. */
static inline size_t
mcol_add(struct mcol_part *p)
{
	if (p->place) {
		if (p->n < p->lim)
			return p->n++;
		p->misplaced = 1;
		return SIZE_MAX;
	}
	return p->n < p->cap ? p->n++ : mcol_grow(p);
}

/*
 * Collect job's events of r (the blocks and rows f passes; f inactive for
 * job->block) into *out, a zeroed part of job->psize bytes whose job is
 * set.  wish: the records to make room for in address space when
 * appending (0: grow).  0, or -1 with the message in err ("out of
 * memory", damage) or FLT_SCAN_CANCELLED.  mcol_free frees the records.
 */
int mcol_collect(const struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
		 struct mcol_part *out, size_t wish, volatile sig_atomic_t *cancel,
		 const char *what, char *err, size_t errlen);
void mcol_free(struct mcol_part *p);

#endif
