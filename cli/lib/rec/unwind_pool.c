/*
 * unwind_pool.c - see unwind_pool.h.
 *
 * One queue per worker (mutex and condition variable); a process is
 * owned by worker pid % n: its samples and its address-space changes go
 * to that queue alone, so each process's mappings are held once, by the
 * worker that unwinds it (a fork across workers is told by the machine as
 * mappings: dtunw_pool_fork).  Results
 * go to one shared list.  The budget counts the bytes of queued samples
 * and of finished records not collected yet.
 *
 * A worker's queue is three parts in order: items in memory (head), then
 * its spool file (from spool_rd to spool_wr), then items in memory again
 * (after: what came while the file could not take it).  Once the file
 * holds anything every new item goes behind it, so a worker still sees
 * samples and address-space changes in the reader's order.
 */
#include "unwind_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

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
	unsigned char	*stack;		/* rec, regs, stack: in the item's own
					 * allocation, after it (item_new) */
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
	struct item	*after, *after_tail;	/* [mu] behind the spool file */
	int		spool_fd;	/* [mu] -1: none yet */
	int		spool_bad;	/* [mu] a write failed: no more until empty */
	uint64_t	spool_rd, spool_wr;	/* [mu] unread bytes of the file */
	size_t		spool_samples;	/* [mu] samples among them */
	uint64_t	spool_peak;	/* [mu] largest size of the file */
	uint64_t	spool_check;	/* [mu] size at which to look at the disk again */
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
	char		*spool_dir;	/* [I] NULL: no spooling */
	uint64_t	spool_max;	/* [I] bytes of one worker's spool file */
	int		idle_prio;	/* [I] workers at SCHED_IDLE while recording */
	uint64_t	spooled;	/* [mu] samples that went through a file */
	uint64_t	spool_lost;	/* [mu] spooled samples whose read failed */
	int		boosted;	/* [mu] workers back at SCHED_OTHER */
	uint64_t	told;		/* [r] address-space changes queued */
};

/* One item as the spool file holds it, followed by rec, regs, stack, path. */
struct spool_hdr {
	uint32_t	kind, pid, ppid, path_len;
	uint64_t	start, len, pgoff, mask;
	uint64_t	rec_size, nregs, stack_len;
};

/*
 * A zeroed item with room for a record of rec_size bytes, nregs registers
 * and len stack bytes after it, one allocation (a sample costs the reader
 * one malloc); NULL when out of memory or the sizes are absurd.
 */
static struct item *
item_new(uint64_t rec_size, uint64_t nregs, uint64_t len)
{
	uint64_t rsz = (rec_size + 7) & ~(uint64_t)7;
	struct item *it;

	/* sizes of one sample (a spool file's header says them again) */
	if (rec_size > (1u << 20) || nregs > 64 || len > (1u << 20) ||
	    (it = malloc(sizeof(*it) + rsz + nregs * 8 + len)) == NULL)
		return NULL;
	memset(it, 0, sizeof(*it));
	/* no record: an address-space change read back from the spool */
	it->rec = rec_size ? (struct dt_rec *)(void *)(it + 1) : NULL;
	it->regs = (uint64_t *)(void *)((char *)(it + 1) + rsz);
	it->stack = (unsigned char *)(it->regs + nregs);
	it->nregs = (size_t)nregs;
	it->stack_len = (size_t)len;
	return it;
}

static void
item_free(struct item *it)
{
	free(it->path);
	free(it);
}

static void
append(struct item **head, struct item **tail, struct item *it)
{
	it->next = NULL;
	if (*tail)
		(*tail)->next = it;
	else
		*head = it;
	*tail = it;
}

/*
 * The worker's spool file, made on first use in the capture's directory
 * with O_TMPFILE: it has no name, so no exit (a signal, SIGKILL, a crash)
 * can leave it behind, and no other process can open it by one.  Where the file system has no O_TMPFILE, a named
 * file unlinked at once.  [w->mu]
 */
static int
spool_open(struct dtunw_pool *p, struct worker *w)
{
	char path[4096];
	int fd;

	if (w->spool_fd >= 0)
		return 0;
	/* O_EXCL: not even linkat through /proc/PID/fd can give it a name */
	fd = open(p->spool_dir, O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) &&
	    (size_t)snprintf(path, sizeof(path), "%s/.dtrec-unwind.%ld.XXXXXX", p->spool_dir,
			     (long)getpid()) < sizeof(path)) {
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return -1;
	w->spool_fd = fd;
	return 0;
}

/*
 * The spool borrows the capture's disk, and must not take the room the
 * capture itself needs: it stops while less than SPOOL_RESERVE (or a
 * quarter of a smaller file system) would stay free.  Looked at again each
 * time the file grew by a quarter of what was left above that, at most
 * 1 MiB later.  0: room for total more bytes.  [w->mu]
 */
#define SPOOL_RESERVE	(64ULL << 20)
static int
spool_room(struct worker *w, size_t total)
{
	struct statvfs v;
	uint64_t avail, size, reserve, step;

	if (w->spool_wr + total <= w->spool_check)
		return 0;
	if (fstatvfs(w->spool_fd, &v) < 0)
		return -1;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	size = (uint64_t)v.f_blocks * v.f_frsize;
	reserve = size / 4 < SPOOL_RESERVE ? size / 4 : SPOOL_RESERVE;
	if (avail < reserve + total)
		return -1;
	step = (avail - reserve) / 4;
	w->spool_check = w->spool_wr + total + (step < (1U << 20) ? step : (1U << 20));
	return 0;
}

/*
 * it (or, for a sample not copied yet, rec/regs/stack) appended to the
 * spool file.  0: written; -1: no file, over the limit or a failed write
 * (a full disk), and the file takes nothing more until it is empty, so
 * what follows stays in order behind it.  [w->mu]
 */
static int
spool_put(struct dtunw_pool *p, struct worker *w, const struct item *it,
	  const struct dt_rec *rec, const uint64_t *regs, const void *stack)
{
	struct spool_hdr h;
	struct iovec v[5];
	size_t total;
	ssize_t n;

	if (p->spool_dir == NULL || w->spool_bad)
		return -1;
	memset(&h, 0, sizeof(h));
	h.kind = (uint32_t)it->kind;
	h.pid = it->pid;
	h.ppid = it->ppid;
	h.start = it->start;
	h.len = it->len;
	h.pgoff = it->pgoff;
	h.mask = it->mask;
	h.path_len = it->path ? (uint32_t)strlen(it->path) : 0;
	h.rec_size = rec ? rec->dtr_size : 0;
	h.nregs = it->nregs;
	h.stack_len = it->stack_len;
	v[0] = (struct iovec){ &h, sizeof(h) };
	v[1] = (struct iovec){ (void *)rec, h.rec_size };
	v[2] = (struct iovec){ (void *)regs, h.nregs * 8 };
	v[3] = (struct iovec){ (void *)stack, h.stack_len };
	v[4] = (struct iovec){ it->path, h.path_len };
	total = sizeof(h) + h.rec_size + h.nregs * 8 + h.stack_len + h.path_len;
	if (w->spool_wr + total > p->spool_max || spool_open(p, w) < 0 || spool_room(w, total) < 0)
		goto bad;
	n = pwritev(w->spool_fd, v, 5, (off_t)w->spool_wr);
	if (n < 0 || (size_t)n != total)
		goto bad;	/* ENOSPC, EDQUOT, EIO: the torn tail is never read */
	w->spool_wr += total;
	w->spool_samples += it->kind == IT_SAMPLE;
	if (w->spool_wr > w->spool_peak)
		w->spool_peak = w->spool_wr;
	return 0;
bad:
	w->spool_bad = 1;
	return -1;
}

/*
 * Queue it behind whatever the worker holds: in memory while nothing is
 * spooled, else in the file, else (the file refused) in memory after it.
 * A sample over the memory budget (over) goes only to the file.  0 if
 * queued; -1 (only when over) if the sample must be refused.  it is not
 * freed when spooled: the caller frees it (its copy is in the file).
 */
static int
push_ordered(struct dtunw_pool *p, struct worker *w, struct item *it, int over, int *spooled,
	     const struct dt_rec *rec, const uint64_t *regs, const void *stack)
{
	int r = 0;

	*spooled = 0;
	pthread_mutex_lock(&w->mu);
	if (w->after) {
		if (over)
			r = -1;
		else
			append(&w->after, &w->after_tail, it);
	} else if (w->spool_wr > w->spool_rd || over) {
		if (spool_put(p, w, it, rec, regs, stack) == 0)
			*spooled = 1;
		else if (over)
			r = -1;
		else
			append(&w->after, &w->after_tail, it);
	} else {
		append(&w->head, &w->tail, it);
	}
	if (r == 0)
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return r;
}

static void
push(struct dtunw_pool *p, struct worker *w, struct item *it)
{
	int spooled;

	push_ordered(p, w, it, 0, &spooled, it->rec, it->regs, it->stack);
	if (spooled)
		item_free(it);
}

/* The next item of the spool file, or NULL (out of memory: the file is
 * then skipped whole; a torn read cannot happen below spool_wr). [w->mu] */
static struct item *
spool_get(struct worker *w)
{
	struct spool_hdr h;
	struct item *it = NULL;
	uint64_t at = w->spool_rd;
	int fd = w->spool_fd;
	size_t body;

	/* the bytes below spool_wr never change: read them unlocked */
	pthread_mutex_unlock(&w->mu);
	if (pread(fd, &h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h) ||
	    (it = item_new(h.rec_size, h.nregs, h.stack_len)) == NULL)
		goto fail;
	body = h.rec_size + h.nregs * 8 + h.stack_len + h.path_len;
	it->kind = (int)h.kind;
	it->pid = h.pid;
	it->ppid = h.ppid;
	it->start = h.start;
	it->len = h.len;
	it->pgoff = h.pgoff;
	it->mask = h.mask;
	it->bytes = 0;	/* the budget counts memory: this was on disk */
	if (h.path_len && (h.path_len > 65536 || (it->path = calloc(1, h.path_len + 1)) == NULL))
		goto fail;
	{
		struct iovec v[4] = {
			{ it->rec, h.rec_size }, { it->regs, h.nregs * 8 },
			{ it->stack, h.stack_len }, { it->path, h.path_len },
		};
		if (preadv(fd, v, 4, (off_t)(at + sizeof(h))) != (ssize_t)body)
			goto fail;
	}
	pthread_mutex_lock(&w->mu);
	w->spool_rd = at + sizeof(h) + body;
	w->spool_samples -= it->kind == IT_SAMPLE;
	return it;
fail:
	if (it)
		item_free(it);
	pthread_mutex_lock(&w->mu);
	w->spool_rd = w->spool_wr;
	return NULL;
}

/* The file is read to its end: empty it, and let it take items again. [w->mu] */
static void
spool_reset(struct dtunw_pool *p, struct worker *w)
{
	if (w->spool_samples) {
		/* a read failed (EIO, out of memory): those samples are gone */
		pthread_mutex_lock(&p->mu);
		p->inflight -= w->spool_samples;
		p->pending -= w->spool_samples;
		p->spool_lost += w->spool_samples;
		pthread_cond_broadcast(&p->idle);
		pthread_mutex_unlock(&p->mu);
		w->spool_samples = 0;
	}
	w->spool_rd = w->spool_wr = w->spool_check = 0;
	w->spool_bad = 0;
	if (w->spool_fd >= 0 && ftruncate(w->spool_fd, 0) < 0) {
		/* the blocks stay allocated until the end; the next write reuses them */
	}
	/* what waited behind the file is next */
	if (w->after) {
		w->head = w->after;
		w->tail = w->after_tail;
		w->after = w->after_tail = NULL;
	}
}

/*
 * While recording the workers run at SCHED_IDLE: the workload (two busy
 * cores) keeps its CPU, samples wait in memory and then in the spool
 * file, and are unwound in idle time.  Once recording stops nothing is
 * left to yield to: they return to the normal policy so that finishing is
 * not starved by other processes.  Best effort: a policy refused leaves
 * the thread as it was.
 */
static void
set_policy(pthread_t th, int idle)
{
	struct sched_param sp = { 0 };

	pthread_setschedparam(th, idle ? SCHED_IDLE : SCHED_OTHER, &sp);
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

static int
has_work(const struct worker *w)
{
	return w->head || w->spool_wr > w->spool_rd || w->after;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct dtunw_pool *p = w->pool;

	for (;;) {
		struct item *it = NULL;

		pthread_mutex_lock(&w->mu);
		while (it == NULL) {
			while (!has_work(w) && !w->quit)
				pthread_cond_wait(&w->cv, &w->mu);
			if (w->head) {
				it = w->head;
				w->head = it->next;
				if (w->head == NULL)
					w->tail = NULL;
			} else if (w->quit) {
				break;	/* what the file and after hold is dropped */
			} else if (w->spool_wr > w->spool_rd) {
				it = spool_get(w);
				if (w->spool_rd == w->spool_wr)
					spool_reset(p, w);
			} else {
				spool_reset(p, w);	/* after is next */
			}
		}
		if (it == NULL) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
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
	struct dtunw_spool no = { NULL, 0, 0 };

	return dtunw_pool_new_spool(nworkers, max_bytes, how, &no);
}

struct dtunw_pool *
dtunw_pool_new_spool(unsigned nworkers, size_t max_bytes, enum dtunw_choice how,
		     const struct dtunw_spool *sp)
{
	struct dtunw_pool *p = calloc(1, sizeof(*p));

	if (p == NULL || nworkers == 0)
		goto fail;
	p->n = nworkers;
	p->max_bytes = max_bytes;
	p->how = how;
	p->idle_prio = sp->idle;
	p->spool_max = sp->max_bytes / nworkers;
	if (sp->dir && sp->max_bytes && (p->spool_dir = strdup(sp->dir)) == NULL)
		goto fail;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->idle, NULL);
	if ((p->w = calloc(nworkers, sizeof(*p->w))) == NULL)
		goto fail;
	for (unsigned i = 0; i < nworkers; i++) {
		struct worker *w = &p->w[i];
		w->pool = p;
		w->spool_fd = -1;
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
		if ((w->u = dtunw_new()) == NULL ||
		    pthread_create(&w->th, NULL, work, w) != 0)
			goto fail;
		w->started = 1;
		if (p->idle_prio)
			set_policy(w->th, 1);
	}
	return p;
fail:
	dtunw_pool_free(p);
	return NULL;
}

struct dtunw_pool *
dtunw_pool_start(unsigned threads, long ncpus, enum dtunw_choice how, const char *spool_dir)
{
	const char *tw = getenv("DTREC_UNWIND_WORKERS");
	unsigned nw = tw && *tw ? (unsigned)strtoul(tw, NULL, 0) :
		      threads ? threads : (unsigned)(ncpus / 4);
	const char *b = getenv("DTREC_UNWIND_BUDGET");
	const char *sm = getenv("DTREC_UNWIND_SPOOL");
	const char *idle = getenv("DTREC_UNWIND_IDLE");
	size_t budget = b && *b ? (size_t)strtoull(b, NULL, 0) : DTUNW_POOL_BUDGET;
	struct dtunw_spool sp;

	sp.dir = spool_dir;
	sp.max_bytes = sm && *sm ? strtoull(sm, NULL, 0) : DTUNW_SPOOL_MAX;
	sp.idle = !(idle && strcmp(idle, "0") == 0);
	nw = nw < 1 ? 1 : nw > 4 ? 4 : nw;
	return dtunw_pool_new_spool(nw, budget, how, &sp);
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
		for (it = w->after; it; it = nx) {
			nx = it->next;
			item_free(it);
		}
		if (w->spool_fd >= 0)
			close(w->spool_fd);
		dtunw_free(w->u);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
	for (struct done *o = p->done, *nx; o; o = nx) {
		nx = o->next;
		free(o);
	}
	free(p->w);
	free(p->spool_dir);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->idle);
	free(p);
}

/* The worker that unwinds pid's samples, and alone holds its mappings. */
static struct worker *
owner(struct dtunw_pool *p, uint32_t pid)
{
	return &p->w[pid % p->n];
}

static void
tell(struct dtunw_pool *p, int kind, uint32_t pid, uint32_t ppid, uint64_t start,
     uint64_t len, uint64_t pgoff, const char *path)
{
	struct item *it = malloc(sizeof(*it));
	char *pc = NULL;

	if (it == NULL || (path && (pc = strdup(path)) == NULL)) {
		free(it);
		return;		/* out of memory: pid's stacks end there */
	}
	*it = (struct item){ .kind = kind, .pid = pid, .ppid = ppid, .start = start, .len = len,
			     .pgoff = pgoff, .path = pc };
	p->told++;
	push(p, owner(p, pid), it);
}

void
dtunw_pool_map(struct dtunw_pool *p, uint32_t pid, uint64_t start, uint64_t len,
	       uint64_t pgoff, const char *path)
{
	tell(p, IT_MAP, pid, 0, start, len, pgoff, path);
}

void
dtunw_pool_forget(struct dtunw_pool *p, uint32_t pid)
{
	tell(p, IT_FORGET, pid, 0, 0, 0, 0, NULL);
}

int
dtunw_pool_fork(struct dtunw_pool *p, uint32_t ppid, uint32_t pid)
{
	if (owner(p, ppid) != owner(p, pid))
		return -1;	/* the parent's mappings are another worker's */
	tell(p, IT_FORK, pid, ppid, 0, 0, 0, NULL);
	return 0;
}

uint64_t
dtunw_pool_told(const struct dtunw_pool *p)
{
	return p->told;
}

int
dtunw_pool_submit(struct dtunw_pool *p, const struct dt_rec *rec, const uint64_t *regs,
		  uint64_t mask, const void *stack, size_t len)
{
	size_t nregs = (size_t)__builtin_popcountll(mask);
	size_t bytes = sizeof(struct item) + rec->dtr_size + nregs * 8 + len;
	struct worker *w = owner(p, rec->dtr_pid);
	struct item *it;
	int over, spooled;

	pthread_mutex_lock(&p->mu);
	over = p->bytes + bytes > p->max_bytes;
	if (!over)
		p->bytes += bytes;
	p->inflight++;
	p->pending++;
	pthread_mutex_unlock(&p->mu);
	if (over) {
		/* no copy in memory: straight from the ring to the file */
		struct item hdr;

		memset(&hdr, 0, sizeof(hdr));
		hdr.kind = IT_SAMPLE;
		hdr.pid = rec->dtr_pid;
		hdr.mask = mask;
		hdr.nregs = nregs;
		hdr.stack_len = len;
		if (push_ordered(p, w, &hdr, 1, &spooled, rec, regs, stack) == 0) {
			pthread_mutex_lock(&p->mu);
			p->spooled++;
			pthread_mutex_unlock(&p->mu);
			return 0;
		}
		pthread_mutex_lock(&p->mu);
		p->inflight--;
		p->pending--;
		pthread_mutex_unlock(&p->mu);
		return -1;
	}
	it = item_new(rec->dtr_size, nregs, len);
	if (it == NULL) {
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
	memcpy(it->rec, rec, rec->dtr_size);
	memcpy(it->regs, regs, nregs * 8);
	memcpy(it->stack, stack, len);
	push_ordered(p, w, it, 0, &spooled, it->rec, it->regs, it->stack);
	if (spooled) {
		/* behind a spool: its copy is in the file, not in memory */
		pthread_mutex_lock(&p->mu);
		p->bytes -= bytes;
		p->spooled++;
		pthread_mutex_unlock(&p->mu);
		item_free(it);
	}
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
	if (p->idle_prio && !p->boosted) {
		p->boosted = 1;
		for (unsigned i = 0; i < p->n; i++)
			set_policy(p->w[i].th, 0);
	}
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

void
dtunw_pool_spool_stats(struct dtunw_pool *p, uint64_t *spooled, uint64_t *peak, uint64_t *lost)
{
	pthread_mutex_lock(&p->mu);
	*spooled = p->spooled;
	*lost = p->spool_lost;
	pthread_mutex_unlock(&p->mu);
	*peak = 0;
	for (unsigned i = 0; i < p->n; i++) {
		pthread_mutex_lock(&p->w[i].mu);
		*peak += p->w[i].spool_peak;
		pthread_mutex_unlock(&p->w[i].mu);
	}
}
