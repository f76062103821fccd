/*
 * scan_pool.c - decode a capture's blocks on N threads and merge the
 * workers' partial results in block order (scan_pool.h says why that
 * order makes the output independent of N).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scan_pool.h"

static unsigned threads_set;	/* 0: the online CPUs */

void dtsp_set_threads(unsigned n)
{
	threads_set = n > DTSP_MAX_THREADS ? DTSP_MAX_THREADS : n;
}

int dtsp_parse_threads(const char *s, unsigned *n)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > DTSP_MAX_THREADS)
		return -1;
	*n = (unsigned)v;
	return 0;
}

unsigned dtsp_threads(void)
{
	if (threads_set)
		return threads_set;
	/* the CPUs this process may run on (nproc's answer): under taskset
	 * or a cpuset, more threads than those only take turns */
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= 1 &&
	    CPU_COUNT(&set) < n)
		n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > DTSP_MAX_THREADS ? DTSP_MAX_THREADS : (unsigned)n;
}

struct pool;

struct worker {
	struct pool	*pool;		/* [I] */
	size_t		lo, hi;		/* [I] its run of pool->blk */
	void		*part;		/* [I] created before the start */
	pthread_t	tid;
	int		started;	/* [c] the caller's: a thread to join */
	int		ret;		/* [w] written by the worker, read after join */
	char		err[512];	/* [w] likewise */
};

struct pool {
	const struct dtcap_reader *r;	/* [I] */
	const struct flt_filter *f;	/* [I] */
	unsigned	cols;		/* [I] */
	const struct dtsp_job *job;	/* [I] */
	volatile sig_atomic_t *cancel;	/* [I] the caller's flag */
	const size_t	*blk;		/* [I] the blocks to read, in order */
	atomic_uint_fast64_t done;	/* rows of blocks finished, for progress */
	atomic_int	stop;		/* a worker failed: the others stop too */
	/* progress: the caller waits on cv between lines */
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	unsigned	finished;	/* [mu] workers returned */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The progress line, as flt_scan draws it. */
struct progress {
	const char	*what;		/* NULL: none */
	uint64_t	total;
	double		last, after;
	int		shown;
};

static void progress_clear(struct progress *pg)
{
	if (pg->shown)
		fputs("\r\033[K", stderr);
	pg->shown = 0;
}

static void progress_tick(struct progress *pg, uint64_t done)
{
	if (!pg->what)
		return;
	double t = now_s();
	/* Only runs longer than a moment get a progress line. */
	if (t - pg->last < pg->after)
		return;
	fprintf(stderr, "\r%s: %3.0f%% (%" PRIu64 " of %" PRIu64 " events)", pg->what,
		pg->total ? 100.0 * (double)done / (double)pg->total : 100.0, done, pg->total);
	pg->last = t;
	pg->shown = 1;
}

static int run_range(struct worker *w, struct progress *pg)
{
	struct pool *pl = w->pool;
	const struct dtsp_job *job = pl->job;
	struct dtcap_block *b = dtcap_block_new();
	int ret = 0;

	if (!b) {
		snprintf(w->err, sizeof(w->err), "out of memory");
		return -1;
	}
	for (size_t k = w->lo; k < w->hi && !ret; k++) {
		size_t i = pl->blk[k];
		if ((pl->cancel && *pl->cancel) || atomic_load_explicit(&pl->stop,
									memory_order_relaxed)) {
			snprintf(w->err, sizeof(w->err), "interrupted");
			ret = FLT_SCAN_CANCELLED;
			break;
		}
		if (dtcap_read_block_mt(pl->r, i, pl->cols, b)) {
			snprintf(w->err, sizeof(w->err), "%s", dtcap_block_error(b));
			ret = -1;
			break;
		}
		if (job->block) {
			ret = job->block(w->part, b, i, w->err, sizeof(w->err));
		} else {
			for (uint32_t row = 0; row < b->rows; row++) {
				if (!flt_match_row(pl->f, b, row))
					continue;
				if ((ret = job->row(w->part, b, row, w->err, sizeof(w->err))) != 0)
					break;
			}
		}
		uint64_t d = atomic_fetch_add_explicit(&pl->done, b->rows, memory_order_relaxed);
		if (pg)
			progress_tick(pg, d + b->rows);
	}
	dtcap_block_free(b);
	if (ret && !w->err[0])
		snprintf(w->err, sizeof(w->err), "stopped");
	if (ret)
		atomic_store(&pl->stop, 1);
	return ret;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *pl = w->pool;

	w->ret = run_range(w, NULL);
	pthread_mutex_lock(&pl->mu);
	pl->finished++;
	pthread_cond_signal(&pl->cv);
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

int dtsp_scan(const struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
	      const struct dtsp_job *job, void *ctx, volatile sig_atomic_t *cancel,
	      const char *what, char *err, size_t errlen)
{
	size_t nb = dtcap_nblocks(r), m = 0;
	uint64_t total = 0;
	struct pool pl = { .r = r, .f = f, .cols = cols | flt_columns(f), .job = job,
			   .cancel = cancel };
	struct worker *w = NULL;
	size_t *blk = NULL;
	unsigned nw = 0;
	int ret = 0;

	if (!!job->block == !!job->row || (job->block && flt_active(f))) {
		snprintf(err, errlen, "internal error: a block walk with row filters");
		return -1;
	}
	/* a Ctrl-C before the walk stops it even when every block is
	 * skipped (the workers look at the flag only before a block) */
	if (cancel && *cancel) {
		snprintf(err, errlen, "interrupted");
		return FLT_SCAN_CANCELLED;
	}
	if (!(blk = malloc((nb ? nb : 1) * sizeof(*blk)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nb; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		total += bi ? bi->rows : 0;
		if (bi && !flt_block_skip(f, bi) && !(job->skip && job->skip(ctx, bi)))
			blk[m++] = i;
	}
	pl.blk = blk;
	/* no more workers than blocks, and one at least: its partial is what
	 * the caller merges even when nothing is read */
	nw = dtsp_threads();
	if (nw > m)
		nw = m ? (unsigned)m : 1;
	if (!(w = calloc(nw, sizeof(*w)))) {
		free(blk);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < nw; k++) {
		w[k].pool = &pl;
		w[k].lo = m * k / nw;
		w[k].hi = m * (k + 1) / nw;
		if (!(w[k].part = job->part_new(ctx))) {
			snprintf(err, errlen, "out of memory");
			ret = -1;
			goto out;
		}
	}
	const char *pa = getenv("DT_PROGRESS_AFTER");
	struct progress pg = { .what = what && isatty(2) ? what : NULL, .total = total,
			       .last = now_s(), .after = pa && *pa ? atof(pa) : 0.2 };
	if (nw == 1) {
		/* one worker: the calling thread, no thread to start */
		w[0].ret = run_range(&w[0], &pg);
	} else {
		pthread_mutex_init(&pl.mu, NULL);
		pthread_cond_init(&pl.cv, NULL);
		unsigned started = 0;
		for (unsigned k = 0; k < nw; k++) {
			int e = pthread_create(&w[k].tid, NULL, worker_main, &w[k]);
			if (e) {
				/* the rest run on fewer threads: stop them, say why */
				atomic_store(&pl.stop, 1);
				snprintf(err, errlen, "cannot start a worker thread: %s", strerror(e));
				ret = -1;
				break;
			}
			w[k].started = 1;
			started++;
		}
		/* the first line at once when asked to (DT_PROGRESS_AFTER=0): a
		 * scan shorter than one wait below would otherwise show none */
		progress_tick(&pg, atomic_load(&pl.done));
		pthread_mutex_lock(&pl.mu);
		while (pl.finished < started) {
			struct timespec dl;
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_nsec += 100000000;
			if (dl.tv_nsec >= 1000000000) {
				dl.tv_sec++;
				dl.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&pl.cv, &pl.mu, &dl);
			if (pl.finished < started) {
				pthread_mutex_unlock(&pl.mu);
				progress_tick(&pg, atomic_load(&pl.done));
				pthread_mutex_lock(&pl.mu);
			}
		}
		pthread_mutex_unlock(&pl.mu);
		for (unsigned k = 0; k < nw; k++)
			if (w[k].started)
				pthread_join(w[k].tid, NULL);
		pthread_cond_destroy(&pl.cv);
		pthread_mutex_destroy(&pl.mu);
	}
	if (pg.shown)
		fputs("\r\033[K", stderr);
	if (ret)
		goto out;
	/*
	 * The earliest range's failure is the one to tell (a cancellation
	 * is what the others say once stopped): what one thread would have
	 * met first.
	 */
	for (unsigned k = 0; k < nw && !ret; k++)
		if (w[k].ret && w[k].ret != FLT_SCAN_CANCELLED)
			ret = w[k].ret, snprintf(err, errlen, "%s", w[k].err);
	for (unsigned k = 0; k < nw && !ret; k++)
		if (w[k].ret)
			ret = w[k].ret, snprintf(err, errlen, "%s", w[k].err);
	for (unsigned k = 0; k < nw && !ret; k++)
		if (job->merge(ctx, w[k].part)) {
			snprintf(err, errlen, "out of memory");
			ret = -1;
		}
out:
	for (unsigned k = 0; k < nw; k++)
		if (w[k].part)
			job->part_free(ctx, w[k].part);
	free(w);
	free(blk);
	return ret;
}

/*
 * Decoding ahead for an in-order consumer: a ring of block objects; the
 * k-th block to give (of the list the filter did not skip) goes to slot
 * k % nslot.  A helper takes the next k, waits for its slot to be free
 * (the consumer done with the (k - nslot)-th), and decodes into it; the
 * consumer waits for the k-th's slot to be ready.
 */
/*
 * One block's decoding, owned as its slot is: the block read, and with
 * rows the selection and, for a two-step read (ahead_two_step), the
 * second read and the passing rows' per-context values put in row place.
 */
struct ahead_work {
	struct dtcap_block *b;		/* the (first) read */
	struct dtcap_block *b2;		/* two-step: ts, cpu and the rows' contexts */
	const struct dtcap_block *give;	/* what the consumer gets: b or &syn */
	struct dtcap_block syn;		/* two-step: b2's rows with ctxv's columns */
	uint32_t	*sel;		/* with rows: those f passes, as give */
	uint32_t	nsel, selcap;
	uint8_t		*ok;		/* two-step: per context of b, passes */
	uint32_t	okcap;
	uint32_t	*ctxv[7];	/* two-step: pid tid probe comm kstack ustack flags */
	uint32_t	ctxcap;		/* rows of each ctxv */
};

struct ahead_slot {
	struct ahead_work w;		/* [mu] owned by whoever the state says */
	size_t		k;		/* [mu] which of the list is in it */
	int		state;		/* [mu] AS_FREE, AS_BUSY, AS_READY, AS_BAD */
	char		err[512];	/* [mu] AS_BAD's message */
};
enum { AS_FREE, AS_BUSY, AS_READY, AS_BAD };

struct dtsp_ahead {
	const struct dtcap_reader *r;	/* [I] */
	const struct flt_filter *f;	/* [I] NULL: none */
	int		select;		/* [I] the helpers select f's rows */
	int		two;		/* [I] by two reads (ahead_two_step) */
	unsigned	cols;		/* [I] */
	size_t		*blk;		/* [I] the blocks to give, in order */
	size_t		nb;		/* [I] how many */
	volatile sig_atomic_t *cancel;	/* [I] the caller's flag */
	struct progress	pg;		/* [c] drawn by the consumer */
	uint64_t	*done;		/* [I] rows of the blocks before blk[k] */
	struct ahead_slot *slot;	/* [I] the ring */
	unsigned	nslot;		/* [I] */
	pthread_t	*tid;		/* [I] */
	unsigned	nthr;		/* [I] started */
	pthread_mutex_t	mu;
	pthread_cond_t	cv;		/* any slot's state changed, or stop */
	size_t		next_take;	/* [mu] the next k a helper decodes */
	size_t		next_give;	/* [c] the next k the consumer gets */
	int		stop;		/* [mu] the consumer is done */
	struct ahead_work own;		/* [c] no helpers: the caller decodes here */
	int		own_on;		/* [I] */
	const uint32_t	*cur_sel;	/* [c] the rows of the block given last */
	uint32_t	cur_nsel;	/* [c] */
	atomic_size_t	decoded;	/* blocks decoded so far */
	atomic_size_t	ctxonly;	/* of them, by their contexts alone */
};

/*
 * The rows of b that a->f passes into *sel (grown to b's rows), their
 * number into *nsel: on the thread that decoded b.  -1 out of memory.
 */
static int ahead_select(const struct dtsp_ahead *a, const struct dtcap_block *b, uint32_t **sel,
			uint32_t *nsel, uint32_t *cap)
{
	if (b->rows > *cap) {
		uint32_t *p = realloc(*sel, (size_t)b->rows * sizeof(*p));
		if (!p)
			return -1;
		*sel = p;
		*cap = b->rows;
	}
	if (!a->f) {
		for (uint32_t i = 0; i < b->rows; i++)
			(*sel)[i] = i;
		*nsel = b->rows;
	} else {
		*nsel = flt_select(a->f, b, *sel);
	}
	return 0;
}

/* The per-context columns, in the order of ahead_work's ctxv. */
#define AHEAD_CTXC	(DTCAP_COL_PID | DTCAP_COL_TID | DTCAP_COL_PROBE | DTCAP_COL_COMM | \
			 DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_FLAGS)
static const unsigned ahead_ctxcol[7] = {
	DTCAP_COL_PID, DTCAP_COL_TID, DTCAP_COL_PROBE, DTCAP_COL_COMM,
	DTCAP_COL_KSTACK, DTCAP_COL_USTACK, DTCAP_COL_FLAGS,
};

static int grow_u32(uint32_t **p, uint32_t *cap, uint32_t n)
{
	if (n <= *cap)
		return 0;
	uint32_t *q = realloc(*p, (size_t)n * sizeof(*q));
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/*
 * A block selected by context, as the grouped scan's two_read_block reads
 * it (dtsql_gscan.c): its contexts alone first (the per-context columns
 * the filter and the consumer want, once per context), f's per-context
 * tests once per context (flt_ctx_pass), and a block none of whose
 * contexts passes is given with no row, its rows never decoded: a
 * thread's events are in few of a long capture's blocks.  Else ts and cpu
 * and the rows' contexts are read, and only the rows of a passing context
 * get their per-context values, in row place (the consumer's row numbers
 * are the block's, its row ids too), and the row tests (time, CPU).
 * Not for arguments (read_rows' columns are the whole block's anyway)
 * nor --ctx's column: those read the whole block at once.
 */
static int ahead_two_step(const struct dtsp_ahead *a, size_t blk, struct ahead_work *w,
			  char *err, size_t errlen)
{
	const struct dtcap_block *b = w->b;

	w->give = w->b;
	w->nsel = 0;
	if (dtcap_read_block_mt(a->r, blk, (a->cols & AHEAD_CTXC) | DTCAP_COL_BYCTX |
				DTCAP_COL_NOINDEX, w->b)) {
		snprintf(err, errlen, "%s", dtcap_block_error(w->b));
		return -1;
	}
	if (b->ndict > w->okcap) {
		uint8_t *q = realloc(w->ok, b->ndict);
		if (!q)
			goto oom;
		w->ok = q;
		w->okcap = b->ndict;
	}
	if (flt_ctx_pass(a->f, b, w->ok) == 0)
		return 1;
	if (!w->b2 && !(w->b2 = dtcap_block_new()))
		goto oom;
	if (dtcap_read_block_mt(a->r, blk, (a->cols & (DTCAP_COL_TS | DTCAP_COL_CPU)) |
				DTCAP_COL_CIDX, w->b2)) {
		snprintf(err, errlen, "%s", dtcap_block_error(w->b2));
		return -1;
	}
	const struct dtcap_block *b2 = w->b2;
	const uint32_t n = b2->rows;
	if (b2->ndict != b->ndict || !b2->cidx) {
		snprintf(err, errlen, "a block read twice differs (block %zu)", blk);
		return -1;
	}
	if (grow_u32(&w->sel, &w->selcap, n) < 0)
		goto oom;
	if (n > w->ctxcap) {
		for (unsigned c = 0; c < 7; c++) {
			free(w->ctxv[c]);
			w->ctxv[c] = NULL;
		}
		w->ctxcap = 0;
		for (unsigned c = 0; c < 7; c++)
			if ((a->cols & ahead_ctxcol[c]) &&
			    !(w->ctxv[c] = malloc((size_t)n * sizeof(uint32_t))))
				goto oom;
		w->ctxcap = n;
	}
	struct dtcap_block *y = &w->syn;
	*y = (struct dtcap_block){ .rows = n, .ts = b2->ts, .cpu = b2->cpu,
				   .ndict = b2->ndict, .cidx = b2->cidx, .dict = b->dict };
	const uint32_t *dv[7] = { b->dict.pid, b->dict.tid, b->dict.probe, b->dict.comm,
				  b->dict.kstack, b->dict.ustack, b->dict.flags };
	uint32_t **rv[7] = { &y->pid, &y->tid, &y->probe, &y->comm, &y->kstack, &y->ustack,
			     &y->flags };
	unsigned have = 0;	/* ctxv columns to fill, bit c */
	for (unsigned c = 0; c < 7; c++) {
		if (!(a->cols & ahead_ctxcol[c]))
			continue;
		if (!dv[c]) {
			snprintf(err, errlen, "a block's contexts lack a column (block %zu)", blk);
			return -1;
		}
		*rv[c] = w->ctxv[c];
		have |= 1u << c;
	}
	const struct flt_filter *f = a->f;
	const int rowt = f->has_since || f->has_until || f->ncpus;
	const uint8_t *ok = w->ok;
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t d = b2->cidx[i];
		if (d >= b2->ndict) {
			snprintf(err, errlen, "a row's context is out of range (block %zu)", blk);
			return -1;
		}
		if (!ok[d])
			continue;
		for (unsigned h = have, c; h; h &= h - 1) {
			c = (unsigned)__builtin_ctz(h);
			w->ctxv[c][i] = dv[c][d];
		}
		if (rowt && !flt_match_row(f, y, i))
			continue;
		w->sel[m++] = i;
	}
	w->nsel = m;
	w->give = y;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Decode the block blk into w (and with rows select its rows), on
 * whichever thread calls: 0, or 1 when its contexts alone were read (none
 * passes); -1 with the message in err. */
static int ahead_decode(const struct dtsp_ahead *a, size_t blk, struct ahead_work *w, char *err,
			size_t errlen)
{
	if (a->two)
		return ahead_two_step(a, blk, w, err, errlen);
	w->give = w->b;
	if (dtcap_read_block_mt(a->r, blk, a->cols, w->b)) {
		snprintf(err, errlen, "%s", dtcap_block_error(w->b));
		return -1;
	}
	if (a->select && ahead_select(a, w->b, &w->sel, &w->nsel, &w->selcap) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static void ahead_work_free(struct ahead_work *w)
{
	dtcap_block_free(w->b);
	dtcap_block_free(w->b2);
	free(w->sel);
	free(w->ok);
	for (unsigned c = 0; c < 7; c++)
		free(w->ctxv[c]);
}

static void *ahead_main(void *arg)
{
	struct dtsp_ahead *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		if (a->stop || a->next_take >= a->nb)
			break;
		size_t k = a->next_take;
		struct ahead_slot *s = &a->slot[k % a->nslot];
		if (s->state != AS_FREE) {
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		a->next_take++;
		s->state = AS_BUSY;
		s->k = k;
		pthread_mutex_unlock(&a->mu);
		char e[sizeof(s->err)];
		int dr = ahead_decode(a, a->blk[k], &s->w, e, sizeof(e)), bad = dr < 0;
		atomic_fetch_add_explicit(&a->decoded, 1, memory_order_relaxed);
		if (dr == 1)
			atomic_fetch_add_explicit(&a->ctxonly, 1, memory_order_relaxed);
		pthread_mutex_lock(&a->mu);
		if (bad)
			memcpy(s->err, e, sizeof(e));
		s->state = bad ? AS_BAD : AS_READY;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* select: the helpers also select f's rows (dtsp_ahead_new_rows); rev:
 * the blocks last to first.  Set before any helper starts, so [I] for
 * them. */
static struct dtsp_ahead *ahead_new(const struct dtcap_reader *r, const struct flt_filter *f,
				    unsigned cols, volatile sig_atomic_t *cancel, const char *what,
				    int select, int rev, char *err, size_t errlen)
{
	struct dtsp_ahead *a = calloc(1, sizeof(*a));
	/* an export's consumer encodes every row: it is one of the threads.
	 * SQL's row selection leaves its consumer (sqlite's loop) the rows
	 * that pass, mostly few: it waits, and every thread decodes. */
	unsigned helpers = dtsp_threads() - !select;
	if (dtsp_threads() == 1)
		helpers = 0;
	size_t nb = dtcap_nblocks(r);
	uint64_t total = 0;

	if (!a)
		goto oom;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->r = r;
	a->f = f;
	a->select = select;
	a->cols = cols | (f ? flt_columns(f) : 0);
	/* two reads pay when the filter tests contexts (and keeps few) */
	const char *one = getenv("DT_SQL_ONE_READ");
	a->two = select && f && flt_ctx_columns(f) &&
		 !(a->cols & ~(unsigned)(AHEAD_CTXC | DTCAP_COL_TS | DTCAP_COL_CPU)) &&
		 !(one && *one);
	a->cancel = cancel;
	if (!(a->blk = malloc((nb ? nb : 1) * sizeof(*a->blk))) ||
	    !(a->done = malloc((nb ? nb : 1) * sizeof(*a->done))))
		goto oom;
	for (size_t j = 0; j < nb; j++) {
		size_t i = rev ? nb - 1 - j : j;
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		/* progress counts the skipped blocks' rows as done, as
		 * flt_scan does: the line says how far into the file */
		if (bi && !(f && flt_block_skip(f, bi))) {
			a->done[a->nb] = total;
			a->blk[a->nb++] = i;
		}
		total += bi ? bi->rows : 0;
	}
	const char *pa = getenv("DT_PROGRESS_AFTER");
	a->pg = (struct progress){ .what = what && isatty(2) ? what : NULL, .total = total,
				   .last = now_s(), .after = pa && *pa ? atof(pa) : 0.2 };
	if (helpers > a->nb)
		helpers = (unsigned)a->nb;
	if (!helpers) {
		if (!(a->own.b = dtcap_block_new()))
			goto oom;
		a->own_on = 1;
		return a;
	}
	/* two blocks in hand per helper: one being decoded, one waiting */
	a->nslot = 2 * helpers;
	if (!(a->slot = calloc(a->nslot, sizeof(*a->slot))) ||
	    !(a->tid = calloc(helpers, sizeof(*a->tid))))
		goto oom;
	for (unsigned k = 0; k < a->nslot; k++)
		if (!(a->slot[k].w.b = dtcap_block_new()))
			goto oom;
	for (unsigned k = 0; k < helpers; k++) {
		int e = pthread_create(&a->tid[k], NULL, ahead_main, a);
		if (e) {
			snprintf(err, errlen, "cannot start a worker thread: %s", strerror(e));
			dtsp_ahead_free(a);
			return NULL;
		}
		a->nthr++;
	}
	return a;
oom:
	snprintf(err, errlen, "out of memory");
	dtsp_ahead_free(a);
	return NULL;
}

struct dtsp_ahead *dtsp_ahead_new(const struct dtcap_reader *r, const struct flt_filter *f,
				  unsigned cols, volatile sig_atomic_t *cancel, const char *what,
				  char *err, size_t errlen)
{
	return ahead_new(r, f, cols, cancel, what, 0, 0, err, errlen);
}

int dtsp_ahead_next(struct dtsp_ahead *a, const struct dtcap_block **b, size_t *blk, char *err,
		    size_t errlen)
{
	size_t k = a->next_give;

	if (k >= a->nb) {
		progress_clear(&a->pg);
		return 0;
	}
	if (a->cancel && *a->cancel) {
		/* the caller's message goes on a clean line */
		progress_clear(&a->pg);
		snprintf(err, errlen, "interrupted");
		return FLT_SCAN_CANCELLED;
	}
	progress_tick(&a->pg, a->done[k]);
	if (a->own_on) {
		atomic_fetch_add_explicit(&a->decoded, 1, memory_order_relaxed);
		int dr = ahead_decode(a, a->blk[k], &a->own, err, errlen);
		if (dr < 0) {
			progress_clear(&a->pg);
			return -1;
		}
		if (dr == 1)
			atomic_fetch_add_explicit(&a->ctxonly, 1, memory_order_relaxed);
		a->cur_sel = a->own.sel;
		a->cur_nsel = a->own.nsel;
		a->next_give++;
		*b = a->own.give;
		*blk = a->blk[k];
		return 1;
	}
	pthread_mutex_lock(&a->mu);
	/* the block given last is the consumer's no more: its slot is free */
	if (k > 0) {
		a->slot[(k - 1) % a->nslot].state = AS_FREE;
		pthread_cond_broadcast(&a->cv);
	}
	struct ahead_slot *s = &a->slot[k % a->nslot];
	while (!((s->state == AS_READY || s->state == AS_BAD) && s->k == k))
		pthread_cond_wait(&a->cv, &a->mu);
	int bad = s->state == AS_BAD;
	if (bad)
		snprintf(err, errlen, "%s", s->err);
	pthread_mutex_unlock(&a->mu);
	if (bad) {
		progress_clear(&a->pg);
		return -1;
	}
	a->next_give++;
	a->cur_sel = s->w.sel;
	a->cur_nsel = s->w.nsel;
	*b = s->w.give;
	*blk = a->blk[k];
	return 1;
}

struct dtsp_ahead *dtsp_ahead_new_rows(const struct dtcap_reader *r, const struct flt_filter *f,
				       unsigned cols, int rev, volatile sig_atomic_t *cancel,
				       const char *what, char *err, size_t errlen)
{
	return ahead_new(r, f, cols, cancel, what, 1, rev, err, errlen);
}

const uint32_t *dtsp_ahead_rows(const struct dtsp_ahead *a, uint32_t *n)
{
	*n = a->cur_nsel;
	return a->cur_sel;
}

size_t dtsp_ahead_decoded(const struct dtsp_ahead *a)
{
	return atomic_load_explicit(&a->decoded, memory_order_relaxed);
}

size_t dtsp_ahead_ctx_only(const struct dtsp_ahead *a)
{
	return atomic_load_explicit(&a->ctxonly, memory_order_relaxed);
}

void dtsp_ahead_free(struct dtsp_ahead *a)
{
	if (!a)
		return;
	if (a->nthr) {
		pthread_mutex_lock(&a->mu);
		a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		for (unsigned k = 0; k < a->nthr; k++)
			pthread_join(a->tid[k], NULL);
	}
	progress_clear(&a->pg);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	for (unsigned k = 0; a->slot && k < a->nslot; k++)
		ahead_work_free(&a->slot[k].w);
	free(a->slot);
	free(a->tid);
	free(a->blk);
	free(a->done);
	ahead_work_free(&a->own);
	free(a);
}
