/*
 * model_collect.c - the time models' events collected on the scan pool
 * (model_collect.h): placed by the block summaries' counts, or appended
 * by each worker and joined in block order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "model_collect.h"
#include "scan_pool.h"

#define MISPLACED	"block summary disagrees with its block"

/* mcol_add's appending when the room is used up */
size_t
mcol_grow(struct mcol_part *p)
{
	const struct mcol_job *j = p->job;
	size_t big = 1;

	for (unsigned a = 0; a < j->narr; a++)
		if (j->size[a] > big)
			big = j->size[a];
	if (p->n == p->cap) {
		size_t nc = p->cap;
		if (dt_grow_cap(p->cap, p->n + 1, big, 4096, SIZE_MAX, &nc))
			return SIZE_MAX;
		/* each array grown on its own: one that fails leaves the others
		 * larger than cap, which is only room */
		for (unsigned a = 0; a < j->narr; a++) {
			if (!j->size[a])
				continue;
			void *np = realloc(p->arr[a], nc * j->size[a]);
			if (np == NULL)
				return SIZE_MAX;
			p->arr[a] = np;
		}
		p->cap = nc;
	}
	return p->n++;
}

static void
arrs_free(struct mcol_part *p)
{
	for (unsigned a = 0; a < MCOL_MAXARR; a++) {
		free(p->arr[a]);
		p->arr[a] = NULL;
	}
	p->n = p->cap = 0;
}

void
mcol_free(struct mcol_part *p)
{
	arrs_free(p);
	free((size_t *)p->place);
	p->place = NULL;
}

/*
 * A worker's part.  Appending, room for the caller's wish in address
 * space only: pages no record reaches are never touched, and the arrays
 * are not copied as they grow (a copy per doubling was a fifth of a large
 * pairing).  Without that room they grow as usual.
 */
struct collect {
	struct mcol_part *out;		/* [I] its job, place and arrays read */
	size_t		wish;		/* [I] */
};

static void *
part_new(void *ctx)
{
	const struct collect *c = ctx;
	const struct mcol_part *m = c->out;
	const struct mcol_job *j = m->job;
	struct mcol_part *p = calloc(1, j->psize);

	if (p == NULL)
		return NULL;
	p->job = j;
	if (m->place) {
		/* the caller's arrays, each worker in its blocks' places */
		p->place = m->place;
		memcpy(p->arr, m->arr, sizeof(p->arr));
		return p;
	}
	if (c->wish) {
		unsigned a;
		for (a = 0; a < j->narr; a++)
			if (j->size[a] && (p->arr[a] = malloc(c->wish * j->size[a])) == NULL)
				break;
		if (a == j->narr)
			p->cap = c->wish;
		else
			arrs_free(p);
	}
	return p;
}

static void
part_free(void *ctx, void *part)
{
	struct mcol_part *p = part;

	(void)ctx;
	if (!p->place)
		arrs_free(p);
	free(p);
}

static int
part_block(void *part, const struct dtcap_block *b, size_t blk, char *err, size_t errlen)
{
	struct mcol_part *p = part;

	if (p->place) {
		p->n = p->place[blk];
		p->lim = p->place[blk + 1];
	}
	if (p->job->block(p, b) == 0 && !(p->place && p->n != p->lim))
		return 0;
	if (p->place && p->n != p->lim)
		p->misplaced = 1;
	snprintf(err, errlen, "%s", p->misplaced ? MISPLACED : "out of memory");
	return 1;
}

static int
part_row(void *part, const struct dtcap_block *b, uint32_t row, char *err, size_t errlen)
{
	struct mcol_part *p = part;

	if (p->job->row(p, b, row) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return 1;
}

/* Partials in block order: the first non-empty one's arrays are taken
 * over (one thread copies nothing), the others appended and freed. */
static int
part_merge(void *ctx, void *part)
{
	struct mcol_part *m = ((struct collect *)ctx)->out, *p = part;
	const struct mcol_job *j = m->job;

	if (j->merge)
		j->merge(m, p);
	if (m->place || p->n == 0)
		return 0;	/* placed: its records are in place already */
	if (m->n == 0) {
		arrs_free(m);
		memcpy(m->arr, p->arr, sizeof(m->arr));
		memset(p->arr, 0, sizeof(p->arr));
		m->n = p->n, m->cap = p->cap;
		p->n = p->cap = 0;
		return 0;
	}
	if (m->n + p->n > m->cap) {
		size_t nc = m->n + p->n;
		for (unsigned a = 0; a < j->narr; a++) {
			if (!j->size[a])
				continue;
			void *np = realloc(m->arr[a], nc * j->size[a]);
			if (np == NULL)
				return -1;
			m->arr[a] = np;
		}
		m->cap = nc;
	}
	for (unsigned a = 0; a < j->narr; a++)
		if (j->size[a])
			memcpy((char *)m->arr[a] + m->n * j->size[a], p->arr[a], p->n * j->size[a]);
	m->n += p->n;
	/* freed now, not after the last merge: the peak is the list and one
	 * run, not the list and every run */
	arrs_free(p);
	return 0;
}

/*
 * Placing: each block's kept events counted from its summary, the blocks
 * the scan skips as none, and the arrays allocated once for them all.  0
 * with m placed; -1 when a block the scan reads has no summary (older
 * captures) or the memory cannot be had: then the workers append.
 */
static int
place(const struct dtcap_reader *r, const struct flt_filter *f, struct mcol_part *m)
{
	const struct mcol_job *j = m->job;
	size_t nb = dtcap_nblocks(r), *pl = malloc((nb + 1) * sizeof(*pl));
	struct dtcap_blocksum bs;

	if (pl == NULL)
		return -1;
	pl[0] = 0;
	for (size_t i = 0; i < nb; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		size_t k = 0;
		if (bi && !flt_block_skip(f, bi)) {
			if (dtcap_block_summary(r, i, &bs) != 1) {
				free(pl);
				return -1;
			}
			/* the reader checked these add up to the block's rows */
			for (uint32_t x = 0; x < bs.nprobe; x++)
				if (j->keep(j->ctx, bs.probe[2 * x]))
					k += (size_t)bs.probe[2 * x + 1];
		}
		pl[i + 1] = pl[i] + k;
	}
	size_t n = pl[nb] ? pl[nb] : 1;
	for (unsigned a = 0; a < j->narr; a++)
		if (j->size[a] && (m->arr[a] = malloc(n * j->size[a])) == NULL) {
			arrs_free(m);
			free(pl);
			return -1;
		}
	m->cap = pl[nb];
	m->place = pl;
	return 0;
}

int
mcol_collect(const struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
	     struct mcol_part *out, size_t wish, volatile sig_atomic_t *cancel,
	     const char *what, char *err, size_t errlen)
{
	const struct mcol_job *j = out->job;
	struct collect c = { .out = out, .wish = wish };
	struct dtsp_job job = { .part_new = part_new, .part_free = part_free,
				.merge = part_merge };
	int sr;

	if (j->block)
		job.block = part_block;
	else
		job.row = part_row;
	if (j->block && place(r, f, out) == 0) {
		sr = dtsp_scan(r, f, cols, &job, &c, cancel, what, err, errlen);
		if (sr == 0) {
			out->n = out->cap;
			return 0;
		}
		mcol_free(out);
		if (strcmp(err, MISPLACED) != 0)
			return sr;
		/* a summary that adds up but is not this block's counts (a
		 * hand-made or damaged file): appended, as without summaries;
		 * the model's own figures start again too */
		memset(out, 0, j->psize);
		out->job = j;
	}
	sr = dtsp_scan(r, f, cols, &job, &c, cancel, what, err, errlen);
	if (sr)
		mcol_free(out);
	return sr;
}
