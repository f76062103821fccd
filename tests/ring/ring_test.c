/*
 * ring_test - kernel/dt_ring.h in user space: producers stand in for CPUs
 * (one ring each), a single reader drains every ring like read(2) does.
 *
 * Nesting is simulated two ways: a producer opens a reservation, writes
 * half of it and emits deeper events before finishing (an interrupt that
 * arrives in the middle of a write), and a ticker thread sends SIGUSR1 to
 * the producers so that a signal handler emits into the same ring at any
 * instruction (an asynchronous interrupt).
 *
 * Every event has a unique id; the producer marks it DROPPED when the ring
 * refused it, the reader marks it READ after checking every byte.  At the
 * end every id must be marked exactly once and the ring counters must
 * agree: produced == read + dropped.
 *
 * Overwrite mode (a flight recorder) has no concurrent reader: the rings
 * are read once the producers are done, as after a freeze.  Every id is
 * then read, dropped, or unmarked (overwritten), the unmarked ones exactly
 * as many as the ring counted: produced == read + overwritten + dropped,
 * and no record read was torn by the writers freeing space around open
 * (nested) records.
 *
 * usage: ring_test [events-per-producer]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../kernel/dt_ring.h"
#include "../check.h"
#include "../xorshift.h"

#define NPROD		3
#define MAXDEPTH	3		/* nested levels below the outer event */
#define MAXREC		2176		/* a full dt_rec with two 127-frame stacks */

enum { ST_NONE, ST_READ, ST_DROPPED };

struct prod {
	struct dt_ring	ring;
	pthread_t	thr;
	unsigned	idx;
	unsigned long	nev;		/* ids available */
	_Atomic unsigned long next;	/* next id */
	_Atomic unsigned char *state;	/* per id: ST_* */
	_Atomic int	depth;		/* open reservations (handler-safe) */
	unsigned long	rng;		/* [producer thread] */
	_Atomic unsigned long nested_kept; /* written inside another */
	_Atomic unsigned long sig_events;
	_Atomic unsigned long sig_inside;	/* landed in an open record */
	unsigned long	sig_rng;	/* [signal handler] */
};

static struct prod prods[NPROD];
static _Atomic int done_producing;
static _Atomic int stop_ticker;
static _Thread_local struct prod *self;
static _Atomic unsigned long pads_seen;

static unsigned long xorshift(unsigned long *s)
{
	uint64_t x = *s;

	return *s = xorshift64(&x);
}

static unsigned char pattern(unsigned long id, unsigned i)
{
	return (unsigned char)(id * 31 + i * 7 + (id >> 8));
}

/* A FAIL line whose name leads the format ("name: why"), as check.h writes it. */
#define fail(name, ...)	checkf(name, 0, __VA_ARGS__)

/*
 * Record: hdr{size, probe = 1 + depth}, u64 id, payload.  The payload is
 * written in two halves around the nested emissions so that an interrupted
 * record is visibly incomplete until its writer finishes.
 */
static void emit(struct prod *p, unsigned long *rng, int depth, int allow_nest)
{
	unsigned long id = atomic_fetch_add(&p->next, 1);
	unsigned len, i, half;
	unsigned char *rec;
	int outer;

	if (id >= p->nev) {
		atomic_fetch_sub(&p->next, 1);
		return;
	}
	len = 16 + 8 * (unsigned)(xorshift(rng) % ((MAXREC - 16) / 8 + 1));
	if (xorshift(rng) % 4)		/* mostly small, like short stacks */
		len = 16 + 8 * (unsigned)(xorshift(rng) % 12);
	outer = atomic_fetch_add(&p->depth, 1);
	rec = dtr_reserve(&p->ring, len);
	if (rec == NULL) {
		atomic_store(&p->state[id], ST_DROPPED);
		atomic_fetch_sub(&p->depth, 1);
		return;
	}
	if (outer > 0)
		atomic_fetch_add(&p->nested_kept, 1);
	((struct dtr_hdr *)rec)->h_size = len;
	((struct dtr_hdr *)rec)->h_probe = 1 + (unsigned)depth;
	memcpy(rec + 8, &id, 8);
	half = 16 + (len - 16) / 2;
	for (i = 16; i < half; i++)
		rec[i] = pattern(id, i);
	if (allow_nest && depth < MAXDEPTH && xorshift(rng) % 8 == 0) {
		int n = 1 + (int)(xorshift(rng) % 3);

		while (n--)
			emit(p, rng, depth + 1, 1);
	}
	for (i = half; i < len; i++)
		rec[i] = pattern(id, i);
	dtr_commit(&p->ring);
	atomic_fetch_sub(&p->depth, 1);
}

static void on_sigusr1(int sig)
{
	int e = errno;

	(void)sig;
	if (self != NULL) {
		atomic_fetch_add(&self->sig_events, 1);
		if (atomic_load(&self->depth) > 0)
			atomic_fetch_add(&self->sig_inside, 1);
		emit(self, &self->sig_rng, MAXDEPTH, 0);
	}
	errno = e;
}

static int yielding;

static void *producer(void *arg)
{
	struct prod *p = arg;
	unsigned long n = 0;

	self = p;
	/*
	 * With signals, make sure at least one lands even on a machine so
	 * loaded that the ticker would otherwise start after we finished.
	 */
	for (n = 0; yielding && n < 200000 &&
	    atomic_load(&p->sig_events) == 0; n++)
		sched_yield();
	n = 0;
	while (atomic_load(&p->next) < p->nev) {
		unsigned long d = dtr_lread(&p->ring.r_dropped);

		emit(p, &p->rng, 0, 1);
		/*
		 * On 2 busy cores the reader may not run at all before the
		 * producers finish: back off after a drop so that it does
		 * (the ring itself never waits).  Yielding also lets the
		 * ticker's signals in (TSan delivers them at calls).
		 */
		if (dtr_lread(&p->ring.r_dropped) != d ||
		    (yielding && ++n % 128 == 0))
			sched_yield();
	}
	self = NULL;
	return NULL;
}

static void *ticker(void *arg)
{
	struct timespec ts = { 0, 20000 };
	unsigned i = 0;

	(void)arg;
	while (!atomic_load(&stop_ticker)) {
		struct prod *p = &prods[i++ % NPROD];

		if (atomic_load(&p->next) < p->nev)
			pthread_kill(p->thr, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* One pass over one ring, like dt_read's inner loop. */
static unsigned long drain(struct prod *p)
{
	struct dt_ring *r = &p->ring;
	unsigned long pub = dtr_read_begin(r);
	unsigned long pos = dtr_load_once(&r->r_tail), before = pos, n = 0;
	struct dtr_hdr *h;

	while ((h = dtr_peek(r, &pos, pub)) != NULL) {
		unsigned char *rec = (unsigned char *)h;
		unsigned long id, i;
		unsigned char st;

		if (pos != before)
			atomic_fetch_add(&pads_seen, 1);
		if (h->h_size < 16 || h->h_size % 8 || h->h_size > MAXREC ||
		    h->h_probe > 1 + MAXDEPTH ||
		    (pos & r->r_mask) + h->h_size > r->r_size) {
			fail("record-shape", "ring %u size %u probe %u", p->idx,
			    h->h_size, h->h_probe);
			exit(1);
		}
		memcpy(&id, rec + 8, 8);
		if (id >= p->nev) {
			fail("record-id", "ring %u id %lu", p->idx, id);
			exit(1);
		}
		for (i = 16; i < h->h_size; i++)
			if (rec[i] != pattern(id, (unsigned)i)) {
				fail("torn-record", "ring %u id %lu byte %lu",
				    p->idx, id, i);
				exit(1);
			}
		st = ST_NONE;
		if (!atomic_compare_exchange_strong(&p->state[id], &st,
		    ST_READ)) {
			fail("duplicate", "ring %u id %lu state %u", p->idx, id,
			    st);
			exit(1);
		}
		pos += h->h_size;
		before = pos;
		n++;
	}
	dtr_read_end(r, pos, n);
	return n;
}

static int run(unsigned long nev, unsigned long ringsz, int signals, int overwrite)
{
	pthread_t tick;
	unsigned long nread = 0, bytes = 0;
	unsigned i;
	int busy;
	char name[64], prefix[72];

	snprintf(name, sizeof(name), "ring%lu%s%s", ringsz,
	    signals ? "-signals" : "", overwrite ? "-overwrite" : "");
	yielding = signals;
	atomic_store(&done_producing, 0);
	atomic_store(&stop_ticker, 0);
	atomic_store(&pads_seen, 0);
	for (i = 0; i < NPROD; i++) {
		struct prod *p = &prods[i];
		void *data = aligned_alloc(64, ringsz);

		memset(p, 0, sizeof(*p));
		dtr_init(&p->ring, data, ringsz);
		if (overwrite)
			dtr_store_once(&p->ring.r_mode, DTR_MODE_OVERWRITE);
		p->idx = i;
		p->nev = nev;
		p->rng = 0x9e3779b97f4a7c15UL * (i + 1);
		p->sig_rng = 0x2545f4914f6cdd1dUL * (i + 7);
		p->state = calloc(nev, 1);
	}
	for (i = 0; i < NPROD; i++)
		pthread_create(&prods[i].thr, NULL, producer, &prods[i]);
	if (signals)
		pthread_create(&tick, NULL, ticker, NULL);

	/* The reader: drains until producers finished and rings are empty. */
	do {
		int fin = 1;

		for (i = 0; i < NPROD; i++)
			fin &= atomic_load(&prods[i].next) >= nev;
		busy = 0;
		/* an overwriting ring's tail is its writer's until the end */
		for (i = 0; i < NPROD && !overwrite; i++) {
			unsigned long n = drain(&prods[i]);

			nread += n;
			busy |= n != 0;
		}
		if (!busy && fin)
			break;
		if (!busy)
			sched_yield();
	} while (1);
	if (signals) {
		atomic_store(&stop_ticker, 1);
		pthread_join(tick, NULL);
	}
	for (i = 0; i < NPROD; i++)
		pthread_join(prods[i].thr, NULL);
	/* A signal may have landed after the last pass: drain once more. */
	for (i = 0; i < NPROD; i++)
		nread += drain(&prods[i]);

	/* the run's checks are named NAME/check; drain's are the run's own */
	snprintf(prefix, sizeof(prefix), "%s/", name);
	check_prefix = prefix;
	{
		unsigned long nested = 0, sigs = 0, drops = 0, inside = 0;
		int ok = 1;

		for (i = 0; i < NPROD; i++) {
			struct prod *p = &prods[i];
			struct dt_ring *r = &p->ring;
			unsigned long prod = dtr_lread(&r->r_produced);
			unsigned long rd = dtr_load_once(&r->r_read);
			unsigned long dr = dtr_lread(&r->r_dropped);
			unsigned long ow = dtr_lread(&r->r_overwritten);
			unsigned long cr = 0, cd = 0, cn = 0, id;

			for (id = 0; id < nev; id++) {
				unsigned char st = atomic_load(&p->state[id]);

				cr += st == ST_READ;
				cd += st == ST_DROPPED;
				cn += st == ST_NONE;
				if (st == ST_NONE && !overwrite) {
					fail("lost", "ring %u id %lu neither "
					    "read nor dropped", i, id);
					ok = 0;
					break;
				}
			}
			if (prod != nev || prod != rd + ow + dr || cr != rd ||
			    cd != dr || cn != ow || (overwrite && ow == 0)) {
				fail("conservation", "ring %u produced %lu "
				    "read %lu overwritten %lu dropped %lu "
				    "(marked read %lu dropped %lu, unmarked %lu) "
				    "of %lu", i, prod, rd, ow, dr, cr, cd,
				    cn, nev);
				ok = 0;
			}
			if (dtr_lread(&r->r_nest) != 0 ||
			    dtr_lread(&r->r_head) != dtr_load_once(&r->r_pub)) {
				fail("quiescent", "ring %u nest %lu head %lu "
				    "pub %lu", i,
				    dtr_lread(&r->r_nest),
				    dtr_lread(&r->r_head),
				    dtr_load_once(&r->r_pub));
				ok = 0;
			}
			bytes += dtr_lread(&r->r_head);
			nested += atomic_load(&p->nested_kept);
			sigs += atomic_load(&p->sig_events);
			inside += atomic_load(&p->sig_inside);
			drops += dr;
		}
		/* the figures, for the log: the PASS lines carry names only */
		printf("# %s: read %lu dropped %lu, %lu nested kept, %lu bytes, "
		    "%lu pads, %lu signal events (%lu inside a record)\n", name,
		    nread, drops, nested, bytes, atomic_load(&pads_seen), sigs,
		    inside);
		if (ok)
			check("conservation", 1, "");
		if (ok)
			check("integrity", 1, "");
		checkf("nested-kept", nested > 0, "no nested record was kept");
		checkf("wraparound", bytes > 4 * NPROD * ringsz &&
		    (overwrite || atomic_load(&pads_seen) > 0),
		    "%lu bytes, %lu pads", bytes, atomic_load(&pads_seen));
		if (signals) {
			checkf("signal-nesting", sigs > 0, "no signal landed");
			checkf("signal-inside-record", inside > 0, "none of %lu "
			    "signals interrupted an open record", sigs);
		}
	}
	check_prefix = "";
	for (i = 0; i < NPROD; i++) {
		free(prods[i].ring.r_data);
		free((void *)prods[i].state);
	}
	return 0;
}

/* Overwrite mode, single-threaded: what is freed, what is counted. */
static void *put(struct dt_ring *r, unsigned len, unsigned long id, int commit)
{
	unsigned char *p = dtr_reserve(r, len);

	if (p == NULL)
		return NULL;
	((struct dtr_hdr *)p)->h_size = len;
	((struct dtr_hdr *)p)->h_probe = 1;
	memcpy(p + 8, &id, 8);
	if (commit)
		dtr_commit(r);
	return p;
}

static void unit_overwrite(void)
{
	static unsigned char buf[4096] __attribute__((aligned(64)));
	struct dt_ring r;
	struct dtr_hdr *h;
	unsigned long pos, pub, id, first = 0, n = 0;
	unsigned i;

	dtr_init(&r, buf, sizeof(buf));
	dtr_store_once(&r.r_mode, DTR_MODE_OVERWRITE);
	for (i = 0; i < 8 + 3; i++)
		put(&r, 512, i, 1);
	/* the three newest replaced the three oldest: ids 3..10 remain */
	pub = dtr_read_begin(&r);
	pos = dtr_load_once(&r.r_tail);
	while ((h = dtr_peek(&r, &pos, pub)) != NULL) {
		memcpy(&id, (unsigned char *)h + 8, 8);
		if (n == 0)
			first = id;
		else if (id != first + n)
			break;
		pos += h->h_size;
		n++;
	}
	if (n != 8 || first != 3 || dtr_lread(&r.r_overwritten) != 3 ||
	    dtr_lread(&r.r_dropped) != 0 || dtr_lread(&r.r_produced) != 11)
		fail("unit/overwrite-newest", "%lu records from %lu, overwritten "
		    "%lu dropped %lu", n, first, dtr_lread(&r.r_overwritten),
		    dtr_lread(&r.r_dropped));
	else
		check("unit/overwrite-newest", 1, "");
	/* a larger record frees as many as it needs (and pads count not) */
	put(&r, 1000, 11, 1);
	if (dtr_lread(&r.r_overwritten) != 5)
		fail("unit/overwrite-several", "overwritten %lu, want 5",
		    dtr_lread(&r.r_overwritten));
	else
		check("unit/overwrite-several", 1, "");

	/*
	 * An open (outer) record is never freed: the inner writer that finds
	 * only it and unpublished records drops instead.
	 */
	dtr_init(&r, buf, sizeof(buf));
	dtr_store_once(&r.r_mode, DTR_MODE_OVERWRITE);
	put(&r, 512, 0, 0);			/* outer, still open */
	for (i = 1; i < 8; i++)
		put(&r, 512, i, 1);		/* nested: not published */
	if (put(&r, 512, 8, 1) != NULL || dtr_lread(&r.r_dropped) != 1 ||
	    dtr_lread(&r.r_overwritten) != 0)
		fail("unit/overwrite-open-kept", "a nested writer freed an open "
		    "record (dropped %lu overwritten %lu)",
		    dtr_lread(&r.r_dropped), dtr_lread(&r.r_overwritten));
	else
		check("unit/overwrite-open-kept", 1, "");
	dtr_commit(&r);				/* the outer one */
	if (put(&r, 512, 9, 1) == NULL || dtr_lread(&r.r_overwritten) != 1)
		fail("unit/overwrite-after-publish", "overwritten %lu",
		    dtr_lread(&r.r_overwritten));
	else
		check("unit/overwrite-after-publish", 1, "");

	/* frozen: every reservation is dropped, nothing is freed */
	dtr_store_once(&r.r_mode, DTR_MODE_FROZEN);
	if (put(&r, 16, 10, 1) != NULL || dtr_lread(&r.r_dropped) != 2 ||
	    dtr_lread(&r.r_overwritten) != 1 || dtr_lread(&r.r_nest) != 0)
		fail("unit/frozen-drops", "dropped %lu overwritten %lu",
		    dtr_lread(&r.r_dropped), dtr_lread(&r.r_overwritten));
	else
		check("unit/frozen-drops", 1, "");
}

static void on_alarm(int sig)
{
	(void)sig;
	fail("unit/bad-size", "a bad record size made the ring loop forever");
	_exit(1);
}

/*
 * A tail inside a record (a reader's stale store over the writer's, in
 * overwrite mode) or a size that cannot be: the writer and the reader
 * reset tail to pub and count it, never loop or follow the size.
 */
static void unit_badsize(void)
{
	static unsigned char buf[4096] __attribute__((aligned(64)));
	struct dt_ring r;
	unsigned long pos, pub;
	unsigned i;
	int bad = 0;

	signal(SIGALRM, on_alarm);
	alarm(10);
	/* the writer meets a zero size at tail (the bytes inside a record) */
	memset(buf, 0, sizeof(buf));
	dtr_init(&r, buf, sizeof(buf));
	dtr_store_once(&r.r_mode, DTR_MODE_OVERWRITE);
	for (i = 0; i < 8; i++)
		put(&r, 512, i, 1);
	dtr_store_once(&r.r_tail, 256);
	pub = dtr_load_once(&r.r_pub);
	if (put(&r, 512, 8, 1) == NULL || dtr_lread(&r.r_reset) != 1 ||
	    dtr_load_once(&r.r_tail) != pub || dtr_lread(&r.r_overwritten) != 0)
		fail("unit/writer-bad-size", "put after a stale tail: reset %lu tail %lu (pub %lu) "
		    "overwritten %lu", dtr_lread(&r.r_reset), dtr_load_once(&r.r_tail), pub,
		    dtr_lread(&r.r_overwritten));
	else
		check("unit/writer-bad-size", 1, "");

	/* the writer meets a tail past pub */
	dtr_init(&r, buf, sizeof(buf));
	dtr_store_once(&r.r_mode, DTR_MODE_OVERWRITE);
	for (i = 0; i < 8; i++)
		put(&r, 512, i, 1);
	dtr_store_once(&r.r_tail, 4096 + 1024);
	if (put(&r, 512, 8, 1) == NULL || dtr_lread(&r.r_reset) != 1)
		fail("unit/writer-tail-past-pub", "reset %lu", dtr_lread(&r.r_reset));
	else
		check("unit/writer-tail-past-pub", 1, "");

	/* the reader: sizes zero, not a multiple of 8, past pub, past the end */
	for (i = 0; i < 4; i++) {
		struct dtr_hdr *h;
		unsigned sz;

		memset(buf, 0, sizeof(buf));
		dtr_init(&r, buf, sizeof(buf));
		put(&r, 512, 0, 1);
		put(&r, 512, 1, 1);
		h = (struct dtr_hdr *)(buf + 512);
		h->h_size = i == 0 ? 0 : i == 1 ? 100 : i == 2 ? 1024 : 8192;
		if (i == 3) {
			/* a pad claiming more than the rest of the buffer */
			dtr_store_once(&r.r_tail, 3584);
			dtr_lset(&r.r_head, 4096 + 512);
			dtr_store_once(&r.r_pub, 4096 + 512);
			h = (struct dtr_hdr *)(buf + 3584);
			h->h_size = 1024;
			h->h_probe = DTR_PAD;
		}
		pub = dtr_read_begin(&r);
		pos = dtr_load_once(&r.r_tail);
		if (i < 3 && ((h = dtr_peek_size(&r, &pos, pub, &sz)) == NULL || sz != 512))
			bad++;
		else if (i < 3)
			pos += sz;
		if (dtr_peek_size(&r, &pos, pub, &sz) != NULL || pos != pub ||
		    dtr_load_once(&r.r_rreset) != 1)
			bad++;
	}
	if (bad)
		fail("unit/reader-bad-size", "%d of 4 bad sizes followed", bad);
	else
		check("unit/reader-bad-size", 1, "");
	alarm(0);
}

/* Single-threaded exact checks: pad placement, full ring, refill. */
static void unit(void)
{
	static unsigned char buf[4096] __attribute__((aligned(64)));
	struct dt_ring r;
	struct dtr_hdr *h;
	unsigned long pos, pub;
	unsigned i;
	void *p;

	dtr_init(&r, buf, sizeof(buf));
	for (i = 0; i < 4096 / 512; i++) {
		p = dtr_reserve(&r, 512);
		((struct dtr_hdr *)p)->h_size = 512;
		((struct dtr_hdr *)p)->h_probe = 1;
		dtr_commit(&r);
	}
	if (dtr_reserve(&r, 8) != NULL || dtr_lread(&r.r_dropped) != 1 ||
	    dtr_lread(&r.r_nest) != 0)
		fail("unit/full", "a full ring accepted a record");
	else
		check("unit/full", 1, "");
	/* Consume one 512 record, then a 520-byte one must still not fit. */
	pub = dtr_read_begin(&r);
	pos = dtr_load_once(&r.r_tail);
	h = dtr_peek(&r, &pos, pub);
	dtr_read_end(&r, pos + h->h_size, 1);
	if (dtr_reserve(&r, 520) != NULL)
		fail("unit/exact-space", "520 bytes fit in 512");
	else
		check("unit/exact-space", 1, "");
	/* Drain everything; head is at 4096: next wraps to 0 without pad. */
	pub = dtr_read_begin(&r);
	pos = dtr_load_once(&r.r_tail);
	while ((h = dtr_peek(&r, &pos, pub)) != NULL)
		pos += h->h_size;
	dtr_read_end(&r, pos, 7);
	p = dtr_reserve(&r, 4000);
	((struct dtr_hdr *)p)->h_size = 4000;
	((struct dtr_hdr *)p)->h_probe = 1;
	dtr_commit(&r);
	pub = dtr_read_begin(&r);
	pos = dtr_load_once(&r.r_tail);
	h = dtr_peek(&r, &pos, pub);
	dtr_read_end(&r, pos + h->h_size, 1);
	/* At offset 4000: 200 bytes need a 96-byte pad first. */
	p = dtr_reserve(&r, 200);
	if (p != buf || dtr_lread(&r.r_head) != 8192 + 200)
		fail("unit/pad", "record at %p head %lu", p,
		    dtr_lread(&r.r_head));
	else
		check("unit/pad", 1, "");
	((struct dtr_hdr *)p)->h_size = 200;
	((struct dtr_hdr *)p)->h_probe = 1;
	dtr_commit(&r);
	pub = dtr_read_begin(&r);
	pos = dtr_load_once(&r.r_tail);
	h = dtr_peek(&r, &pos, pub);
	if ((void *)h != buf || pos != 8192)
		fail("unit/pad-skip", "reader did not skip the pad");
	else
		check("unit/pad-skip", 1, "");
	/* Nested reservation: the inner commit must not publish. */
	dtr_read_end(&r, pos + h->h_size, 1);
	p = dtr_reserve(&r, 64);
	((struct dtr_hdr *)p)->h_size = 64;
	((struct dtr_hdr *)p)->h_probe = 1;
	p = dtr_reserve(&r, 64);
	((struct dtr_hdr *)p)->h_size = 64;
	((struct dtr_hdr *)p)->h_probe = 2;
	if (dtr_commit(&r) != 0 || dtr_avail(&r) != 0)
		fail("unit/nest-hidden", "inner commit published an open record");
	else
		check("unit/nest-hidden", 1, "");
	if (dtr_commit(&r) != 8192 + 200 + 128 || dtr_avail(&r) != 128)
		fail("unit/nest-publish", "outer commit did not publish both");
	else
		check("unit/nest-publish", 1, "");
}

int main(int argc, char **argv)
{
	unsigned long nev = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	unit();
	unit_overwrite();
	unit_badsize();
	run(nev, 4096, 0, 0);
	run(nev, 65536, 0, 0);
	run(nev, 16384, 1, 0);
	run(nev, 4096, 0, 1);
	run(nev, 16384, 1, 1);
	return check_status();
}
