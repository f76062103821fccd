/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * dt_ring.h - one single-writer, single-reader ring of variable-length
 * records.  dt.ko keeps one per CPU per open descriptor; the writer is
 * the CPU itself (task, softirq, hardirq and NMI context, nesting in that
 * order), the reader is read(2) under the descriptor's read lock.
 *
 * The same code compiles in user space (tests/ring) on C11 atomics: only
 * the small macro layer below differs.
 *
 * Records are dtr_size bytes, a multiple of 8, starting with a 32-bit size
 * and a 32-bit probe id (struct dt_rec's first two members).  A record
 * never wraps: one that would straddle the end of the buffer is preceded
 * by a pad record (probe id DTR_PAD) filling the rest of the buffer.
 *
 * Ordering protocol (after perf's kernel/events/ring_buffer.c).
 * Positions are free-running byte counters; offset = pos & mask.
 *
 *   head [c]  reserve position.  Advanced by a CPU-local cmpxchg: an
 *             interrupt arriving between reading head and the cmpxchg
 *             reserves its own space and makes the cmpxchg fail, and the
 *             interrupted writer retries after it.  No lock, no atomic
 *             with a LOCK prefix (local_cmpxchg is interrupt-safe only).
 *   nest [c]  open reservations on this CPU.  Only the outermost writer
 *             (nest 1 -> 0) publishes, because an inner (interrupting)
 *             writer's record lies after the outer one's still unwritten
 *             record: publishing it would expose the outer hole.
 *   pub  [c]  committed position: everything below it is fully written.
 *             The outermost writer stores head into pub with RELEASE
 *             (W1: orders its and every nested writer's data stores, all
 *             made earlier on this CPU, before the pub store), then drops
 *             nest to 0 and re-reads head: an interrupt that reserved
 *             after we read head but before nest reached 0 saw nest > 0,
 *             did not publish, and left head != what we published, so we
 *             take nest back and publish again (perf_output_put_handle).
 *   tail [r]  read position.  The reader loads pub with ACQUIRE (R1,
 *             pairs with W1: the record bytes below pub are visible),
 *             copies records, then stores tail with RELEASE (R2: its reads
 *             of the bytes complete before the writer may reuse them).
 *             The writer loads tail with ACQUIRE (W0, pairs with R2)
 *             before deciding that space is free and writing into it.
 *
 * A reservation that would make head - tail exceed the size is dropped
 * and counted; the writer never waits and never overwrites unread data.
 *
 * Overwrite mode (r_mode DTR_MODE_OVERWRITE, a flight recorder): instead
 * of dropping, the writer frees the oldest records itself by advancing
 * tail (a CPU-local cmpxchg, as for head: an interrupt that frees or
 * reserves in between makes it fail and retry), counting each freed event
 * as overwritten.  It frees only committed records, below pub: a record
 * an interrupted writer of this CPU is still filling lies above pub.
 * tail then belongs to the writer, so the ring has no concurrent reader:
 * it is read after the owner switches it to DTR_MODE_FROZEN (every
 * reservation dropped) and waits until no writer can still be inside
 * (probe context is preemption-disabled: synchronize_rcu), or after
 * recording stopped.  r_mode is written by the owner of the ring, read by
 * the writer at each reservation.
 *
 * Counters are exact per ring: produced = committed + dropped, and
 * committed = read + overwritten + what the ring holds, so once drained
 * produced == read + overwritten + dropped.  Pad records are not events
 * and are not counted.
 *
 * Every record size the writer (freeing in overwrite mode) or the reader
 * (dtr_peek) follows is checked first (dtr_size_ok): at least 8, a
 * multiple of 8, within the published bytes and not past the end of the
 * buffer.  A tail that lands inside a record (a protocol violation: say a
 * reader storing a stale tail over the writer's) would otherwise make the
 * writer spin on a zero size in probe context, or the reader follow sizes
 * past the ring.  A bad size discards everything up to pub instead (tail
 * = pub, a record boundary) and counts the reset (r_reset by the writer,
 * r_rreset by the reader); the identity above then no longer holds for
 * that ring, and the reset count says why.
 *
 * Lock/ownership annotations: [I] immutable after dtr_init, [c] written
 * only by the owning CPU (any context level, via interrupt-safe local
 * ops), [r] written only by the reader (one at a time), [c/r] written by
 * one side and read by the other as described above.
 */
#ifndef DT_RING_H
#define DT_RING_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <asm/barrier.h>
#include <asm/local.h>

typedef local_t dtr_local_t;
typedef unsigned long dtr_shared_t;
#define dtr_lread(p)		((unsigned long)local_read(p))
#define dtr_lset(p, v)		local_set((p), (long)(v))
#define dtr_linc(p)		local_inc(p)
#define dtr_ldec(p)		local_dec(p)
/* true if *p was o and is now n */
#define dtr_lcmpxchg(p, o, n) \
	(local_cmpxchg((p), (long)(o), (long)(n)) == (long)(o))
/* true if *p (a dtr_shared_t) was o and is now n; this CPU only */
#define dtr_scmpxchg(p, o, n)	(cmpxchg_local((p), (o), (n)) == (o))
#define dtr_load_acquire(p)	smp_load_acquire(p)
#define dtr_store_release(p, v)	smp_store_release((p), (v))
#define dtr_load_once(p)	READ_ONCE(*(p))
/* a record header field, read once (the compiler may not read it again) */
#define dtr_hdr_read(p)		READ_ONCE(*(p))
#define dtr_store_once(p, v)	WRITE_ONCE(*(p), (v))
#define dtr_barrier()		barrier()
#define DTR_CACHELINE		____cacheline_aligned_in_smp
#define dtr_unlikely(x)		unlikely(x)
#include <linux/sched/clock.h>
/*
 * local_clock(): the clock perf and ftrace stamp events with by default.
 * Read from the TSC where ktime_get_mono_fast_ns() may have to read a slow
 * clocksource (the HPET under emulation: half of an event's cost).
 */
#define dtr_clock()		local_clock()

#else /* user space: tests/ring */
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

typedef _Atomic unsigned long dtr_local_t;
typedef _Atomic unsigned long dtr_shared_t;
#define dtr_lread(p)	atomic_load_explicit((p), memory_order_relaxed)
#define dtr_lset(p, v)	atomic_store_explicit((p), (v), memory_order_relaxed)
#define dtr_linc(p)	atomic_fetch_add_explicit((p), 1, memory_order_relaxed)
#define dtr_ldec(p)	atomic_fetch_sub_explicit((p), 1, memory_order_relaxed)
static inline int dtr_lcmpxchg_(dtr_local_t *p, unsigned long o,
				unsigned long n)
{
	return atomic_compare_exchange_strong_explicit(p, &o, n,
	    memory_order_relaxed, memory_order_relaxed);
}
#define dtr_lcmpxchg(p, o, n)	dtr_lcmpxchg_((p), (o), (n))
#define dtr_scmpxchg(p, o, n)	dtr_lcmpxchg_((p), (o), (n))
#define dtr_load_acquire(p) \
	atomic_load_explicit((p), memory_order_acquire)
#define dtr_store_release(p, v) \
	atomic_store_explicit((p), (v), memory_order_release)
#define dtr_load_once(p)	atomic_load_explicit((p), memory_order_relaxed)
#define dtr_hdr_read(p)	(*(volatile const unsigned int *)(p))
#define dtr_store_once(p, v) \
	atomic_store_explicit((p), (v), memory_order_relaxed)
/* a signal handler is the user-space stand-in for an interrupt */
#define dtr_barrier()	atomic_signal_fence(memory_order_seq_cst)
#define DTR_CACHELINE	__attribute__((aligned(64)))
#define dtr_unlikely(x)	__builtin_expect(!!(x), 0)
#ifndef dtr_clock
#include <time.h>
static inline unsigned long long dtr_clock_(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
#define dtr_clock()	dtr_clock_()
#endif
#endif

/* r_mode */
#define DTR_MODE_DROP		0	/* full: drop the new record */
#define DTR_MODE_OVERWRITE	1	/* full: free the oldest ones */
#define DTR_MODE_FROZEN		2	/* drop every new record */

#define DTR_PAD		0	/* probe id of a pad record: skipped */
#define DTR_ALIGN	8

/* The first 8 bytes of every record (and of struct dt_rec). */
struct dtr_hdr {
	unsigned int	h_size;
	unsigned int	h_probe;
};

struct dt_ring {
	/* Writer: touched on every event by the owning CPU only. */
	dtr_local_t	r_head DTR_CACHELINE;	/* [c] reserve position */
	dtr_local_t	r_nest;			/* [c] open reservations */
	dtr_local_t	r_produced;		/* [c] committed + dropped */
	dtr_local_t	r_dropped;		/* [c] ring full */
	dtr_local_t	r_skipped;		/* [c] timer overruns */
	dtr_local_t	r_recursive;		/* [c] tracer re-entered */
	dtr_local_t	r_nested;		/* [c] written inside another */
	dtr_local_t	r_overwritten;		/* [c] freed unread (overwrite) */
	dtr_local_t	r_reset;		/* [c] bad size met freeing */
	dtr_shared_t	r_pub;			/* [c/r] committed position */
	dtr_shared_t	r_mode;			/* [owner/c] DTR_MODE_* */

	/* Reader: touched by read(2) only, polled by the writer for space. */
	dtr_shared_t	r_tail DTR_CACHELINE;	/* [r/c] read position */
	dtr_shared_t	r_read;			/* [r] records copied out */
	dtr_shared_t	r_rreset;		/* [r] bad size met reading */

	/* Both: never written after dtr_init. */
	unsigned long	r_size DTR_CACHELINE;	/* [I] bytes, power of two */
	unsigned long	r_mask;			/* [I] r_size - 1 */
	unsigned char	*r_data;		/* [I] r_size bytes */
};

static inline void dtr_init(struct dt_ring *r, void *data, unsigned long size)
{
	dtr_lset(&r->r_head, 0);
	dtr_lset(&r->r_nest, 0);
	dtr_lset(&r->r_produced, 0);
	dtr_lset(&r->r_dropped, 0);
	dtr_lset(&r->r_skipped, 0);
	dtr_lset(&r->r_recursive, 0);
	dtr_lset(&r->r_nested, 0);
	dtr_lset(&r->r_overwritten, 0);
	dtr_lset(&r->r_reset, 0);
	dtr_store_once(&r->r_pub, 0);
	dtr_store_once(&r->r_mode, DTR_MODE_DROP);
	dtr_store_once(&r->r_tail, 0);
	dtr_store_once(&r->r_read, 0);
	dtr_store_once(&r->r_rreset, 0);
	r->r_size = size;
	r->r_mask = size - 1;
	r->r_data = data;
}

/*
 * Publish what this CPU has reserved and written, or leave that to the
 * outer writer if we interrupted one.  Returns the published position, or
 * 0 if an outer writer will publish.
 */
static inline unsigned long dtr_put(struct dt_ring *r)
{
	unsigned long head;

	if (dtr_lread(&r->r_nest) > 1) {
		dtr_ldec(&r->r_nest);
		return 0;
	}
again:
	dtr_barrier();
	head = dtr_lread(&r->r_head);
	dtr_store_release(&r->r_pub, head);		/* W1 */
	dtr_barrier();
	dtr_lset(&r->r_nest, 0);
	dtr_barrier();
	if (dtr_unlikely(head != dtr_lread(&r->r_head))) {
		dtr_lset(&r->r_nest, 1);
		goto again;
	}
	return head;
}

/*
 * Can a record of size bytes start at pos, with everything below pub
 * published?  pos must not be past pub nor more than a ring behind it.
 */
static inline int dtr_size_ok(const struct dt_ring *r, unsigned long pos,
			      unsigned long pub, unsigned int size)
{
	unsigned long avail = pub - pos;

	return avail <= r->r_size && size >= DTR_ALIGN &&
	       (size & (DTR_ALIGN - 1)) == 0 && size <= avail &&
	       (pos & r->r_mask) + size <= r->r_size;
}

/*
 * Overwrite mode, the ring is full: free the oldest committed record at
 * tail.  Returns nonzero if the caller should try its reservation again
 * (a record was freed, an interrupt moved tail first, or a bad size reset
 * tail to pub), 0 if nothing committed is left to free.  Each success
 * moves tail up by at least 8 towards pub, so the caller's loop ends.
 */
static inline int dtr_overwrite(struct dt_ring *r, unsigned long tail)
{
	const struct dtr_hdr *h;
	unsigned int size, probe;
	unsigned long pub;

	/* our own CPU's pub: everything below it is complete */
	pub = dtr_load_once(&r->r_pub);
	if (tail == pub)
		return 0;
	h = (const struct dtr_hdr *)(r->r_data + (tail & r->r_mask));
	size = dtr_hdr_read(&h->h_size);
	probe = dtr_hdr_read(&h->h_probe);
	/* read before the claim: once tail moves the bytes may be reused */
	dtr_barrier();
	if (dtr_unlikely(!dtr_size_ok(r, tail, pub, size))) {
		if (dtr_scmpxchg(&r->r_tail, tail, pub))
			dtr_linc(&r->r_reset);
		return 1;
	}
	if (!dtr_scmpxchg(&r->r_tail, tail, tail + size))
		return 1;
	if (probe != DTR_PAD)
		dtr_linc(&r->r_overwritten);
	return 1;
}

/*
 * Reserve len bytes (a multiple of 8, >= 8).  Returns where to write the
 * record, to be followed by dtr_commit(), or NULL if the ring is full (the
 * event is counted as produced and dropped; nothing to commit).  A record
 * of at most size / 2 bytes always fits in a drained ring (its pad is
 * shorter than itself); a longer one may be dropped when it would straddle
 * the end.
 *
 * If tsp is not NULL, *tsp is set to dtr_clock() read between loading head
 * and claiming it: an interrupt that reserves in between moves head, our
 * claim fails, and the clock is read again.  So the records of one ring
 * are in the order of their times, however writers nest.
 */
static inline void *dtr_reserve_ts(struct dt_ring *r, unsigned int len,
				   unsigned long long *tsp)
{
	unsigned long head, tail, off, pad, need, mode;
	struct dtr_hdr *h;

	dtr_linc(&r->r_nest);
	dtr_barrier();
	mode = dtr_load_once(&r->r_mode);
	if (dtr_unlikely(mode == DTR_MODE_FROZEN))
		goto drop;
	for (;;) {
		tail = dtr_load_acquire(&r->r_tail);		/* W0 */
		head = dtr_lread(&r->r_head);
		if (tsp != NULL) {
			dtr_barrier();	/* the clock after head */
			*tsp = dtr_clock();
		}
		off = head & r->r_mask;
		pad = off + len > r->r_size ? r->r_size - off : 0;
		need = pad + len;
		if (dtr_unlikely(head + need - tail > r->r_size)) {
			if (mode == DTR_MODE_OVERWRITE && dtr_overwrite(r, tail))
				continue;
			goto drop;
		}
		if (dtr_lcmpxchg(&r->r_head, head, head + need))
			break;
	}

	if (pad) {
		h = (struct dtr_hdr *)(r->r_data + off);
		h->h_size = (unsigned int)pad;
		h->h_probe = DTR_PAD;
		off = 0;
	}
	return r->r_data + off;
drop:
	dtr_linc(&r->r_produced);
	dtr_linc(&r->r_dropped);
	dtr_put(r);
	return NULL;
}

static inline void *dtr_reserve(struct dt_ring *r, unsigned int len)
{
	return dtr_reserve_ts(r, len, NULL);
}

/* The record returned by dtr_reserve is complete: count and publish it. */
static inline unsigned long dtr_commit(struct dt_ring *r)
{
	dtr_linc(&r->r_produced);
	return dtr_put(r);
}

/* Reader: bytes published and not yet consumed. */
static inline unsigned long dtr_avail(struct dt_ring *r)
{
	return dtr_load_acquire(&r->r_pub) - dtr_load_once(&r->r_tail);
}

/*
 * Reader: the next published record at *posp (skipping pad records), or
 * NULL.  *posp starts at r_tail and is advanced by dtr_next(); pub is a
 * value from dtr_read_begin().
 */
static inline unsigned long dtr_read_begin(struct dt_ring *r)
{
	return dtr_load_acquire(&r->r_pub);			/* R1 */
}

/*
 * As dtr_peek, and *sizep is the record's size, read once and checked
 * (dtr_size_ok): the caller copies that many bytes, never a size read
 * again.  A bad size moves *posp to pub, counts the reset and returns
 * NULL: the caller ends its pass and stores pub as tail.
 */
static inline struct dtr_hdr *dtr_peek_size(struct dt_ring *r,
					    unsigned long *posp,
					    unsigned long pub,
					    unsigned int *sizep)
{
	struct dtr_hdr *h;
	unsigned int size;

	while (*posp != pub) {
		h = (struct dtr_hdr *)(r->r_data + (*posp & r->r_mask));
		size = dtr_hdr_read(&h->h_size);
		if (dtr_unlikely(!dtr_size_ok(r, *posp, pub, size))) {
			*posp = pub;
			dtr_store_once(&r->r_rreset,
				       dtr_load_once(&r->r_rreset) + 1);
			return NULL;
		}
		if (dtr_hdr_read(&h->h_probe) != DTR_PAD) {
			*sizep = size;
			return h;
		}
		*posp += size;
	}
	return NULL;
}

static inline struct dtr_hdr *dtr_peek(struct dt_ring *r, unsigned long *posp,
				       unsigned long pub)
{
	unsigned int size;

	return dtr_peek_size(r, posp, pub, &size);
}

/* Reader: records up to pos consumed (nrec of them): free their space. */
static inline void dtr_read_end(struct dt_ring *r, unsigned long pos,
				unsigned long nrec)
{
	dtr_store_once(&r->r_read, dtr_load_once(&r->r_read) + nrec);
	dtr_store_release(&r->r_tail, pos);			/* R2 */
}

#endif /* DT_RING_H */
