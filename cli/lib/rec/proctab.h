/*
 * proctab.h - the machine's (machine.h) process table, fed through the
 * machine's dtm_feed_* (no source includes this header: tests/layout)
 * with the kernel's process events (perf's COMM/FORK/EXIT/MMAP2 records,
 * dt.ko's proc probes): per thread comms, per process executable mappings, fed to the unwinding
 * workers too.  A process first heard of from such an event (one that
 * existed before recording started) has what it mapped before read from
 * /proc/PID/maps once.  Used by one thread; the returned pointers are
 * the table's and valid until its next change.
 */
#ifndef DT_PROCTAB_H
#define DT_PROCTAB_H

#include <stddef.h>
#include <stdint.h>

#include "dt_htab.h"
#include "dtcap.h"
#include "tasks.h"

struct dtunw_pool;

struct proctab {
	struct tasks	comms, procs;
	struct dtunw_pool *pool;	/* told every mapping; NULL: none */
	uint32_t	self;		/* the recorder: never tracked */
	int		keep_all;	/* flight recorders: nothing is forgotten
					 * (a dump may hold samples of any age) */
	/* exits seen in this read, and in the one before (forgotten now) */
	uint32_t	*exited, *forget;
	size_t		nexited, nforget, capexited, capforget;
	/* exited processes the unwinders forgot, oldest first: their
	 * mappings are freed once there are too many */
	uint32_t	*gone;
	size_t		ngone, capgone;
};

void proctab_free(struct proctab *pt);
void proctab_set_comm(struct proctab *pt, uint32_t tid, const char *comm);
/* tid's comm; a thread never heard of is looked up in /proc once */
const char *proctab_comm_of(struct proctab *pt, uint32_t pid, uint32_t tid, uint32_t cpu);
/*
 * pid's process, known: read from /proc if this is its first mention.
 * NULL for the recorder itself (never tracked) and when out of memory.
 */
struct task *proctab_known(struct proctab *pt, uint32_t pid, uint64_t ts);
/*
 * pid mapped name at [start, start+len) from file offset pgoff with prot
 * (PROT_* bits; only executable mappings are kept), replacing what it
 * overlaps.  ts: the time of the change, 0 if unknown.
 */
void proctab_mmap(struct proctab *pt, uint32_t pid, uint64_t start, uint64_t len,
		  uint64_t pgoff, uint32_t prot, const char *name, uint64_t ts);
/* pid exec'd a new image (comm, path or "" if unknown): its maps follow */
void proctab_exec(struct proctab *pt, uint32_t pid, uint64_t ts, const char *comm,
		  const char *path);
/*
 * ppid forked the process pid at ts: it starts with its parent's
 * mappings, unless pid's own later events were seen first.
 */
void proctab_fork(struct proctab *pt, uint32_t pid, uint32_t ppid, uint64_t ts);
/*
 * pid exited: the unwinding workers forget it at the end of the next read
 * (proctab_read_end); the table keeps its mappings for the samples still
 * to come until a thousand more processes have exited, or its pid starts
 * a new process (a fork)
 */
void proctab_exit(struct proctab *pt, uint32_t pid);
/*
 * Whether pc can be a return address of pid at ts: 0 when it is no user
 * address or lies outside every executable mapping of the image pid ran
 * then, 1 when it is inside one, -1 when the table cannot tell (mappings
 * unknown, or changed after ts).
 */
int proctab_is_code(struct proctab *pt, uint32_t pid, uint64_t ts, uint64_t pc);
/* the end of one read of every ring */
void proctab_read_end(struct proctab *pt);
/* pid's process as the kernel's events describe it, or NULL if unknown */
const struct kproc *proctab_proc(struct proctab *pt, uint32_t pid);

#endif /* DT_PROCTAB_H */
