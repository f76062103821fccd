/*
 * perf_rings.c - reading the perf source's rings: side band first, then samples
 * merged in time order; the flight recorder's copies; waiting on every ring.
 */
#include "perf_int.h"

/* The record at pos, contiguous (copied when it wraps), or NULL if bad. */
const struct perf_event_header *
perf_at(struct src_perf *sp, struct ring *rg, uint64_t pos, uint64_t head)
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

	if (h->size < sizeof(*h) + 24)
		return;
	memcpy(&tid, (const unsigned char *)(h + 1) + 8, 4);
	memcpy(&ptid, (const unsigned char *)(h + 1) + 12, 4);
	dtm_feed_thread(sp->m, tid, ptid);
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
void
perf_flight_sideband(struct src_perf *sp)
{
	const struct perf_event_header *h;

	for (size_t i = 0; i < sp->nrings; i++) {
		struct ring *rg = &sp->rings[i];
		uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE), pos;
		for (pos = rg->meta->data_tail; (h = perf_at(sp, rg, pos, head)); pos += h->size) {
			if (h->type == PERF_RECORD_SAMPLE)
				continue;
			perf_sideband(sp, rg, h, (const unsigned char *)(h + 1));
			if (h->type == PERF_RECORD_COMM) {
				struct sb_trailer tr;
				perf_sb_trailer(h, (const unsigned char *)(h + 1), 9, &tr);
				perf_sb_comm(sp, h, (const unsigned char *)(h + 1), &tr, 0);
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
		perf_sb_trailer(h, (const unsigned char *)(h + 1), 9, &tr);
		perf_sb_comm(sp, h, (const unsigned char *)(h + 1), &tr, 0);
	}
	if (h->type == PERF_RECORD_FORK)
		fork_comm(sp, h);
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	return perf_sample(sp, rg, h, (const unsigned char *)(h + 1), out, room);
}

static ssize_t
flight_read(struct src_perf *sp, char *buf, size_t len)
{
	size_t used = 0;
	const struct perf_event_header *h;

	if (!sp->dumping) {
		perf_flight_sideband(sp);
		return 0;
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i], copy = *rg;
		if (rg->fcur)
			continue;	/* side band done on the first call */
		copy.data = rg->fcopy;
		for (size_t k = 0; k < rg->fn; k++)
			if ((h = perf_at(sp, &copy, rg->fpos[k], rg->fend)) && h->type != PERF_RECORD_SAMPLE)
				perf_sideband(sp, rg, h, (const unsigned char *)(h + 1));
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i], copy = *rg;
		copy.data = rg->fcopy;
		for (; rg->fcur < rg->fn; rg->fcur++) {
			ssize_t n;
			if ((h = perf_at(sp, &copy, rg->fpos[rg->fcur], rg->fend)) == NULL)
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
	const struct perf_event_header *h = perf_at(sp, rg, rg->mpos, rg->rhead);

	rg->mts = h == NULL ? UINT64_MAX : rec_time(h);
	if (rg->mts >= mark)
		rg->mts = UINT64_MAX;
	/* the merge takes it from here unless it wraps: a wrapped record's
	 * copy is sp->tmp, which the next ring's peek reuses */
	rg->mh = h != NULL && (const unsigned char *)h != sp->tmp ? h : NULL;
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
			const struct perf_event_header *h =
				rg->mh ? rg->mh : perf_at(sp, rg, rg->mpos, rg->rhead);
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

ssize_t
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
		for (pos = rg->sb_pos > tail ? rg->sb_pos : tail; (h = perf_at(sp, rg, pos, rg->rhead));
		     pos += h->size)
			if (h->type != PERF_RECORD_SAMPLE)
				perf_sideband(sp, rg, h, (const unsigned char *)(h + 1));
		rg->sb_pos = pos;
	}
	used = merge_rings(sp, buf, used, len, sp->stopped ? UINT64_MAX : mark);
	dtm_feed_read_end(sp->m);
	if (sp->pool) {
		/* what the workers finished meanwhile (microseconds a sample):
		 * out with this read, not one flush interval later */
		used = dtunw_pool_read_end(sp->pool, buf, used, len, sp->stopped);
	}
	return (ssize_t)used;
}

/*
 * The poll set of every ring, built once the rings are known (they are
 * [I] after enable; rebuilt if their number changed).  A fixed array of 64
 * once left the rings of CPUs 64 and up out: their data waited for the
 * timeout.  -1: out of memory.
 */
int
perf_pollset(struct src_perf *sp)
{
	struct pollfd *pf;

	if (sp->pf != NULL && sp->npf == sp->nrings)
		return 0;
	if ((pf = calloc(sp->nrings ? sp->nrings : 1, sizeof(*pf))) == NULL)
		return -1;
	for (size_t i = 0; i < sp->nrings; i++) {
		pf[i].fd = sp->rings[i].fd;
		pf[i].events = POLLIN;
	}
	free(sp->pf);
	sp->pf = pf;
	sp->npf = sp->nrings;
	return 0;
}

void
perf_wait(struct dtsrc *s, int timeout_ms)
{
	struct src_perf *sp = (struct src_perf *)s;

	if (perf_pollset(sp) < 0) {
		/* no set: sleep the timeout; the next read drains every ring
		 * whether it was polled or not */
		(void)poll(NULL, 0, timeout_ms);
		return;
	}
	for (size_t i = 0; i < sp->npf; i++)
		sp->pf[i].revents = 0;
	(void)poll(sp->pf, sp->npf, timeout_ms);
}
