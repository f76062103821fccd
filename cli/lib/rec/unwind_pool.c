/*
 * unwind_pool.c - see unwind_pool.h.
 *
 * One queue per worker (mutex and condition variable); address-space
 * changes are copied to every queue, samples go to queue pid % n.  Results
 * go to one shared list.  The budget counts the bytes of queued samples
 * and of finished records not collected yet.
 */
#include "unwind_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

enum { IT_SAMPLE, IT_MAP, IT_FORGET, IT_FORK };

struct item {
	struct item	*next;
	int		kind;
	uint32_t	pid, ppid;
	uint64_t	start, len, pgoff;
	size_t		bytes;		/* counted against the budget */
	uint64_t	mask;
	size_t		nregs, stack_len;
	struct dt_rec	*rec;		/* IT_SAMPLE: the frame-pointer record */
	char		*path;		/* IT_MAP */
	uint64_t	*regs;
	unsigned char	*stack;
};

struct done {
	struct done	*next;
	size_t		bytes;
	struct dt_rec	rec;		/* followed by its payload */
};

struct worker {
	struct dtunw_pool *pool;
	pthread_t	th;
	int		started;
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	struct item	*head, *tail;	/* [mu] */
	int		quit;		/* [mu] */
	struct dtunw	*u;		/* [worker thread only] */
};

struct dtunw_pool {
	unsigned	n;		/* [I] */
	size_t		max_bytes;	/* [I] */
	enum dtunw_choice how;		/* [I] */
	struct worker	*w;		/* [I] */
	pthread_mutex_t	mu;
	pthread_cond_t	idle;		/* signalled when inflight drops */
	size_t		bytes;		/* [mu] queued + finished, uncollected */
	size_t		inflight;	/* [mu] submitted, not finished */
	size_t		pending;	/* [mu] submitted, not collected */
	struct done	*done, *done_tail;	/* [mu] */
	uint64_t	dwarf, dwarf_trunc;	/* [mu] */
};

static void
item_free(struct item *it)
{
	free(it->rec);
	free(it->path);
	free(it->regs);
	free(it->stack);
	free(it);
}

static void
push(struct worker *w, struct item *it)
{
	pthread_mutex_lock(&w->mu);
	it->next = NULL;
	if (w->tail)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* The sample's record again, with pcs as its user stack. */
static struct done *
rebuild(const struct dt_rec *d, const uint64_t *pcs, unsigned n, int trunc)
{
	size_t keep = (size_t)d->dtr_nargs + d->dtr_nkstack;
	size_t need = DT_REC_SIZE(d->dtr_nargs, d->dtr_nkstack, n);
	struct done *o = malloc(offsetof(struct done, rec) + need);

	if (o == NULL)
		return NULL;
	o->bytes = need;
	memcpy(&o->rec, d, sizeof(*d));
	memcpy(&o->rec + 1, d + 1, keep * 8);
	memcpy((uint64_t *)(void *)(&o->rec + 1) + keep, pcs, (size_t)n * 8);
	o->rec.dtr_size = (uint32_t)need;
	o->rec.dtr_nustack = (uint8_t)n;
	o->rec.dtr_flags = (uint8_t)((d->dtr_flags & ~DTR_USTACK_TRUNC) |
				     (trunc ? DTR_USTACK_TRUNC : 0));
	return o;
}

static void
finish(struct dtunw_pool *p, struct item *it, struct done *o, int dwarf, int trunc)
{
	pthread_mutex_lock(&p->mu);
	p->bytes -= it->bytes;
	if (o) {
		o->next = NULL;
		if (p->done_tail)
			p->done_tail->next = o;
		else
			p->done = o;
		p->done_tail = o;
		p->bytes += o->bytes;
		p->dwarf += dwarf;
		p->dwarf_trunc += dwarf && trunc;
	} else {
		p->pending--;	/* out of memory: the sample is lost */
	}
	p->inflight--;
	pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->mu);
}

static void
unwind_one(struct dtunw_pool *p, struct worker *w, struct item *it)
{
	uint64_t pcs[DT_MAXFRAMES];
	const struct dt_rec *d = it->rec;
	int trunc = 1, n;
	struct done *o;

	n = dtunw_unwind(w->u, it->pid, it->regs, it->mask, it->stack, it->stack_len, pcs,
			 DT_MAXFRAMES, &trunc);
	/* auto: a short DWARF stack loses to a longer frame-pointer one */
	if (n <= 0 || (p->how == DTUNW_AUTO && trunc && d->dtr_nustack > n)) {
		o = rebuild(d, (const uint64_t *)(const void *)(d + 1) + d->dtr_nargs +
			    d->dtr_nkstack, d->dtr_nustack, d->dtr_flags & DTR_USTACK_TRUNC);
		finish(p, it, o, 0, 0);
		return;
	}
	o = rebuild(d, pcs, (unsigned)n, trunc);
	finish(p, it, o, 1, trunc);
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct dtunw_pool *p = w->pool;

	for (;;) {
		struct item *it;

		pthread_mutex_lock(&w->mu);
		while (w->head == NULL && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		it = w->head;
		if (it == NULL) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		w->head = it->next;
		if (w->head == NULL)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		switch (it->kind) {
		case IT_SAMPLE:
			unwind_one(p, w, it);
			break;
		case IT_MAP:
			dtunw_map(w->u, it->pid, it->start, it->len, it->pgoff, it->path);
			break;
		case IT_FORGET:
			dtunw_forget(w->u, it->pid);
			break;
		case IT_FORK:
			dtunw_fork(w->u, it->ppid, it->pid);
			break;
		}
		item_free(it);
	}
}

struct dtunw_pool *
dtunw_pool_new(unsigned nworkers, size_t max_bytes, enum dtunw_choice how)
{
	struct dtunw_pool *p = calloc(1, sizeof(*p));

	if (p == NULL || nworkers == 0)
		goto fail;
	p->n = nworkers;
	p->max_bytes = max_bytes;
	p->how = how;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->idle, NULL);
	if ((p->w = calloc(nworkers, sizeof(*p->w))) == NULL)
		goto fail;
	for (unsigned i = 0; i < nworkers; i++) {
		struct worker *w = &p->w[i];
		w->pool = p;
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
		if ((w->u = dtunw_new()) == NULL ||
		    pthread_create(&w->th, NULL, work, w) != 0)
			goto fail;
		w->started = 1;
	}
	return p;
fail:
	dtunw_pool_free(p);
	return NULL;
}

struct dtunw_pool *
dtunw_pool_start(unsigned threads, long ncpus, enum dtunw_choice how)
{
	unsigned nw = threads ? threads : (unsigned)(ncpus / 4);
	const char *b = getenv("DTREC_UNWIND_BUDGET");
	size_t budget = b && *b ? (size_t)strtoull(b, NULL, 0) : DTUNW_POOL_BUDGET;

	nw = nw < 1 ? 1 : nw > 4 ? 4 : nw;
	return dtunw_pool_new(nw, budget, how);
}

void
dtunw_pool_free(struct dtunw_pool *p)
{
	if (p == NULL)
		return;
	for (unsigned i = 0; p->w && i < p->n; i++) {
		pthread_mutex_lock(&p->w[i].mu);
		p->w[i].quit = 1;
		pthread_cond_signal(&p->w[i].cv);
		pthread_mutex_unlock(&p->w[i].mu);
	}
	for (unsigned i = 0; p->w && i < p->n; i++) {
		struct worker *w = &p->w[i];
		struct item *it, *nx;
		if (w->started) {
			/* the worker finishes its queue first: quit only ends the wait */
			pthread_join(w->th, NULL);
		}
		for (it = w->head; it; it = nx) {
			nx = it->next;
			item_free(it);
		}
		dtunw_free(w->u);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
	for (struct done *o = p->done, *nx; o; o = nx) {
		nx = o->next;
		free(o);
	}
	free(p->w);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->idle);
	free(p);
}

static void
broadcast(struct dtunw_pool *p, int kind, uint32_t pid, uint32_t ppid, uint64_t start,
	  uint64_t len, uint64_t pgoff, const char *path)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct item *it = calloc(1, sizeof(*it));
		if (it == NULL || (path && (it->path = strdup(path)) == NULL)) {
			free(it);
			continue;	/* out of memory: that worker's stacks end there */
		}
		it->kind = kind;
		it->pid = pid;
		it->ppid = ppid;
		it->start = start;
		it->len = len;
		it->pgoff = pgoff;
		push(&p->w[i], it);
	}
}

void
dtunw_pool_map(struct dtunw_pool *p, uint32_t pid, uint64_t start, uint64_t len,
	       uint64_t pgoff, const char *path)
{
	broadcast(p, IT_MAP, pid, 0, start, len, pgoff, path);
}

void
dtunw_pool_forget(struct dtunw_pool *p, uint32_t pid)
{
	broadcast(p, IT_FORGET, pid, 0, 0, 0, 0, NULL);
}

void
dtunw_pool_fork(struct dtunw_pool *p, uint32_t ppid, uint32_t pid)
{
	broadcast(p, IT_FORK, pid, ppid, 0, 0, 0, NULL);
}

int
dtunw_pool_submit(struct dtunw_pool *p, const struct dt_rec *rec, const uint64_t *regs,
		  uint64_t mask, const void *stack, size_t len)
{
	size_t nregs = (size_t)__builtin_popcountll(mask);
	size_t bytes = sizeof(struct item) + rec->dtr_size + nregs * 8 + len;
	struct item *it;

	pthread_mutex_lock(&p->mu);
	if (p->bytes + bytes > p->max_bytes) {
		pthread_mutex_unlock(&p->mu);
		return -1;
	}
	p->bytes += bytes;
	p->inflight++;
	p->pending++;
	pthread_mutex_unlock(&p->mu);
	it = calloc(1, sizeof(*it));
	if (it == NULL || (it->rec = malloc(rec->dtr_size)) == NULL ||
	    (it->regs = malloc(nregs ? nregs * 8 : 1)) == NULL ||
	    (it->stack = malloc(len ? len : 1)) == NULL) {
		if (it)
			item_free(it);
		pthread_mutex_lock(&p->mu);
		p->bytes -= bytes;
		p->inflight--;
		p->pending--;
		pthread_mutex_unlock(&p->mu);
		return -1;
	}
	it->kind = IT_SAMPLE;
	it->pid = rec->dtr_pid;
	it->bytes = bytes;
	it->mask = mask;
	it->nregs = nregs;
	it->stack_len = len;
	memcpy(it->rec, rec, rec->dtr_size);
	memcpy(it->regs, regs, nregs * 8);
	memcpy(it->stack, stack, len);
	push(&p->w[rec->dtr_pid % p->n], it);
	return 0;
}

size_t
dtunw_pool_collect(struct dtunw_pool *p, char *buf, size_t room)
{
	size_t used = 0;

	pthread_mutex_lock(&p->mu);
	while (p->done && p->done->bytes <= room - used) {
		struct done *o = p->done;
		memcpy(buf + used, &o->rec, o->bytes);
		used += o->bytes;
		p->bytes -= o->bytes;
		p->pending--;
		p->done = o->next;
		if (p->done == NULL)
			p->done_tail = NULL;
		free(o);
	}
	pthread_mutex_unlock(&p->mu);
	return used;
}

size_t
dtunw_pool_pending(struct dtunw_pool *p)
{
	size_t n;

	pthread_mutex_lock(&p->mu);
	n = p->pending;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void
dtunw_pool_drain(struct dtunw_pool *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->inflight)
		pthread_cond_wait(&p->idle, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

size_t
dtunw_pool_read_end(struct dtunw_pool *p, char *buf, size_t used, size_t len, int stopped)
{
	used += dtunw_pool_collect(p, buf + used, len - used);
	if (stopped && used == 0 && dtunw_pool_pending(p)) {
		dtunw_pool_drain(p);
		used += dtunw_pool_collect(p, buf, len);
	}
	return used;
}

void
dtunw_pool_stats(struct dtunw_pool *p, uint64_t *dwarf, uint64_t *dwarf_trunc)
{
	pthread_mutex_lock(&p->mu);
	*dwarf = p->dwarf;
	*dwarf_trunc = p->dwarf_trunc;
	pthread_mutex_unlock(&p->mu);
}
