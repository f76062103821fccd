/*
 * par_run.c - run the parts of a job on threads (par_run.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "par_run.h"
#include "scan_pool.h"

struct part {
	void	(*fn)(void *ctx, unsigned k);	/* [I] */
	void	*ctx;				/* [I] */
	unsigned k;				/* [I] */
	pthread_t tid;
	int	started;			/* the caller's: a thread to join */
};

static void *
part_main(void *arg)
{
	struct part *p = arg;

	p->fn(p->ctx, p->k);
	return NULL;
}

void
rpt_par_run(unsigned nparts, void (*fn)(void *ctx, unsigned k), void *ctx)
{
	struct part *p = nparts > 1 ? calloc(nparts, sizeof(*p)) : NULL;

	if (p == NULL) {
		/* one part, or no memory for the threads' records: every part
		 * on this thread, the same work in the same parts */
		for (unsigned k = 0; k < nparts; k++)
			fn(ctx, k);
		return;
	}
	for (unsigned k = 1; k < nparts; k++) {
		p[k] = (struct part){ .fn = fn, .ctx = ctx, .k = k };
		p[k].started = pthread_create(&p[k].tid, NULL, part_main, &p[k]) == 0;
	}
	fn(ctx, 0);
	for (unsigned k = 1; k < nparts; k++) {
		if (p[k].started)
			pthread_join(p[k].tid, NULL);
		else
			fn(ctx, k);	/* no thread for it: here, after the others' start */
	}
	free(p);
}

struct pfor {
	void	(*fn)(void *ctx, size_t lo, size_t hi);	/* [I] */
	void	*ctx;					/* [I] */
	size_t	n;					/* [I] */
	unsigned nparts;				/* [I] */
};

static void
pfor_part(void *arg, unsigned k)
{
	const struct pfor *p = arg;

	p->fn(p->ctx, p->n * k / p->nparts, p->n * (k + 1) / p->nparts);
}

void
rpt_par_for(size_t n, size_t grain, void (*fn)(void *ctx, size_t lo, size_t hi), void *ctx)
{
	struct pfor p = { .fn = fn, .ctx = ctx, .n = n, .nparts = dtsp_threads() };

	if (grain && p.nparts > 1 + n / grain)
		p.nparts = (unsigned)(1 + n / grain);
	rpt_par_run(p.nparts, pfor_part, &p);
}
