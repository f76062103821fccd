/*
 * unwind_pool.h - DWARF unwinding of recorded samples on worker threads,
 * so the thread reading the kernel's rings never waits for it.
 *
 * The reader hands over each sample as the dt_rec it would have written
 * (with the kernel's frame-pointer user stack) plus the user registers and
 * stack copy; a worker unwinds it (unwind.h) and returns the same dt_rec
 * with the DWARF user stack in place of the frame-pointer one.  A process
 * is owned by one worker (pid % workers): its samples and its
 * address-space changes go to that worker alone, whose own dtunw sees
 * them in the order the reader reported them.
 *
 * The workers run at SCHED_IDLE while recording, so that unwinding yields
 * to the workload.  When the queued bytes reach the budget, samples go to
 * a spool file in the capture's directory (unnamed, O_TMPFILE: no exit
 * leaves it), read back by the workers in order when the CPU is idle or
 * recording has stopped.  When there is no spool, it is full or a write
 * to it fails (a full disk), dtunw_pool_submit refuses: the caller keeps
 * the frame-pointer stack and counts it (never a silent downgrade, never
 * a stalled reader).
 *
 * All functions but the workers' are for one thread (the reader).  Records
 * of different processes may come back in another order than submitted.
 */
#ifndef DT_UNWIND_POOL_H
#define DT_UNWIND_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "dt_abi.h"

struct dtunw_pool;

enum dtunw_choice {
	DTUNW_DWARF,	/* always the DWARF stack */
	DTUNW_AUTO,	/* DWARF, unless it stopped short and the frame-pointer
			 * stack is longer (code without CFI, JIT code) */
};

/* nworkers >= 1; max_bytes: queue budget.  NULL when out of memory. */
struct dtunw_pool *dtunw_pool_new(unsigned nworkers, size_t max_bytes, enum dtunw_choice how);

struct dtunw_spool {
	const char	*dir;		/* where the spool file goes; NULL: none */
	uint64_t	max_bytes;	/* of all workers' files; 0: none */
	int		idle;		/* workers at SCHED_IDLE until drained */
};
struct dtunw_pool *dtunw_pool_new_spool(unsigned nworkers, size_t max_bytes,
					enum dtunw_choice how, const struct dtunw_spool *sp);

/*
 * The recording sources' pool: threads workers (0: one per 4 of ncpus),
 * 1 to 4, and the default budget, DTUNW_POOL_BUDGET bytes, or
 * $DTREC_UNWIND_BUDGET when set (tests: 1 sends every sample to the
 * spool); a spool in spool_dir (NULL: none) of DTUNW_SPOOL_MAX bytes, or
 * $DTREC_UNWIND_SPOOL (0: none, so that with a budget of 1 every sample
 * is "behind"); workers at SCHED_IDLE unless $DTREC_UNWIND_IDLE is 0
 * (the benchmark's comparison); $DTREC_UNWIND_WORKERS, when set, is the
 * number of workers (tests: processes owned by different workers on a
 * host of few CPUs).
 */
/* about 2 s of a 1 kHz profile of 16 CPUs with 1 KiB of live stack each */
#define DTUNW_POOL_BUDGET	(32U << 20)
/* the disk a recording may borrow: perf record --call-graph dwarf
 * writes as much in about 4 minutes of a 997 Hz profile of two CPUs */
#define DTUNW_SPOOL_MAX		(4ULL << 30)
struct dtunw_pool *dtunw_pool_start(unsigned threads, long ncpus, enum dtunw_choice how,
				    const char *spool_dir);
/* Stops the workers; unfinished samples are dropped (drain first). */
void dtunw_pool_free(struct dtunw_pool *p);

/* Address-space changes (see unwind.h), in the reader's order, to pid's worker. */
void dtunw_pool_map(struct dtunw_pool *p, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const char *path);
void dtunw_pool_forget(struct dtunw_pool *p, uint32_t pid);
/*
 * ppid forked pid: 0 when one worker owns both and copies the mappings;
 * -1 when they are different workers' (ppid's mappings are out of pid's
 * worker's reach): the caller then tells pid's mappings (forget, map).
 */
int dtunw_pool_fork(struct dtunw_pool *p, uint32_t ppid, uint32_t pid);
/* Address-space changes queued so far (one per change: no copies). */
uint64_t dtunw_pool_told(const struct dtunw_pool *p);

/*
 * Queue one sample.  rec (rec->dtr_size bytes), regs (popcount(mask)
 * words) and stack (len bytes) are copied.  0: queued; -1: over budget or
 * out of memory, nothing was kept.
 */
int dtunw_pool_submit(struct dtunw_pool *p, const struct dt_rec *rec, const uint64_t *regs,
		      uint64_t mask, const void *stack, size_t len);

/* Finished records into buf, whole ones only: bytes written.  Never blocks. */
size_t dtunw_pool_collect(struct dtunw_pool *p, char *buf, size_t room);

/* Samples submitted and not collected yet. */
size_t dtunw_pool_pending(struct dtunw_pool *p);

/* Wait until every submitted sample is finished, the workers first back
 * at the normal policy (nothing is left to yield to). */
void dtunw_pool_drain(struct dtunw_pool *p);

/*
 * The end of a source's read into buf (len bytes, used of them filled):
 * what the workers finished meanwhile, and once recording has stopped and
 * the kernel had nothing more (used == 0), everything they still hold,
 * waiting for it: a stopped source's read returns 0 only when all is out.
 * Returns the new used.
 */
size_t dtunw_pool_read_end(struct dtunw_pool *p, char *buf, size_t used, size_t len,
			   int stopped);

/* Stacks stored from DWARF, and of those the ones that stopped short. */
void dtunw_pool_stats(struct dtunw_pool *p, uint64_t *dwarf, uint64_t *dwarf_trunc);

/* Samples that waited in the spool, the largest it grew (bytes, all
 * workers), and spooled samples lost to a failed read (EIO). */
void dtunw_pool_spool_stats(struct dtunw_pool *p, uint64_t *spooled, uint64_t *peak,
			    uint64_t *lost);

#endif /* DT_UNWIND_POOL_H */
