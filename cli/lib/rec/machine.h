/*
 * machine.h - the recording session's one model of the processes it
 * records (perf's struct machine is the idea).  Owned by the session
 * (record.c), not by a source; data flows one way:
 *
 *	kernel -> source -> machine -> { unwinding workers, capture }
 *
 * The source feeds it: the kernel's fork/exec/mmap/exit/comm events go
 * into the process table it holds (dtm_feed_*, kept in proctab.h: perf's
 * side band, dt.ko's proc probes), or, where the kernel reports none,
 * dtm_observe gives it an event's pid, tid, comm and pc.  The source
 * hands it each sample it decodes (dtm_sample): the machine names the
 * thread and cuts a frame-pointer stack at the first pc that is no code;
 * no source reads the table (tests/layout keeps it so).  The workers are
 * told every mapping it learns (dtm_set_unwinders: the worker owning the
 * process keeps its copy, changed only through these messages).  Subscribers are told
 * "process P changed at ts" (dtm_subscribe): the capture's snapshots
 * (snapshots.c).
 *
 * /proc is read by it alone (procmaps.c parses): a process first heard of
 * from the kernel's events (proctab_known), and, for a process the kernel's
 * events do not describe, at its first event, at a new image and for a pc
 * in no known mapping under the one re-read rule (procmaps.h
 * dtpm_reread_left, counted per process and per reader: the workers' and
 * the subscribers').
 *
 * One thread: the source's reads and the session's loop share it.
 */
#ifndef DT_MACHINE_H
#define DT_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "dt_abi.h"
#include "tasks.h"

struct dtm;
struct dtunw_pool;

/*
 * What a read of /proc/PID/{exe,stat,maps} found.  The machine's during
 * a subscriber call: a subscriber may take mv and text (leaving NULL),
 * the machine frees what is left.
 */
struct dtm_read {
	char		exe[4096];	/* "" when unreadable */
	uint32_t	ppid;		/* 0 when unknown */
	struct dtcap_map *mv;		/* every mapping, names into text */
	size_t		nm;
	char		*text;		/* the maps as read; NULL: gone */
};

/* What a subscriber is told: pid changed at ts. */
struct dtm_change {
	uint32_t	pid;
	uint32_t	seq;		/* the change's number for pid: 1, 2, ... */
	uint64_t	ts;
	const char	*comm;
	/*
	 * What the kernel's events say pid maps (valid during the call), or
	 * NULL: then what the machine read of /proc now (rd), or, when rd is
	 * NULL too, the subscriber takes what it stored last (the end of
	 * recording: the process may be gone).
	 */
	const struct kproc *kp;
	struct dtm_read	*rd;
	const uint64_t	*pcs;		/* the user stack of the event at hand */
	size_t		npcs;
};
typedef void (*dtm_sub_fn)(void *arg, const struct dtm_change *c);
#define DTM_MAXSUBS	4

/* A machine for the recorder (getpid(): never tracked); NULL: no memory. */
struct dtm *dtm_new(void);
void dtm_free(struct dtm *m);
/* -1 when DTM_MAXSUBS are subscribed already.  Called in subscription order. */
int dtm_subscribe(struct dtm *m, dtm_sub_fn fn, void *arg);

/* ---- the session's settings, before the source is enabled */
/* flight recorders: nothing is forgotten (a dump may hold samples of any age) */
void dtm_keep_all(struct dtm *m, int on);
/* the sched_process_exec probe's id, 0: not recorded (an exec's event) */
void dtm_set_exec_probe(struct dtm *m, uint32_t id);

/* ---- sources: they feed, and hand over samples; they never look up */
/*
 * The source feeds the kernel's process events (the dtm_feed_* calls
 * below, in the kernel's order): from now on dtm_proc answers from them.
 */
void dtm_feed(struct dtm *m);
/* tid is named comm (a COMM record, an exec) */
void dtm_feed_comm(struct dtm *m, uint32_t tid, const char *comm);
/* a new thread tid takes its creator ptid's name of this moment */
void dtm_feed_thread(struct dtm *m, uint32_t tid, uint32_t ptid);
/*
 * ppid forked pid at ts; comm: the parent's name as the kernel reported
 * it with the fork ("" when it did not): the child's, and the parent's
 * when it had none yet.
 */
void dtm_feed_fork(struct dtm *m, uint32_t pid, uint32_t ppid, uint64_t ts, const char *comm);
/* pid exec'd a new image (path "" when unknown): its mappings follow */
void dtm_feed_exec(struct dtm *m, uint32_t pid, uint64_t ts, const char *comm, const char *path);
/* pid mapped name (prot: PROT_* bits); ts 0 when unknown (proctab_mmap) */
void dtm_feed_mmap(struct dtm *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   uint32_t prot, const char *name, uint64_t ts);
void dtm_feed_exit(struct dtm *m, uint32_t pid);
/* the end of the source's read of every ring (proctab_read_end) */
void dtm_feed_read_end(struct dtm *m);

/*
 * What dtm_sample does to a sample.  The source hands each sample over as
 * it decodes it, in the order of the process events it fed, so a name
 * (a COMM record met in the same read) holds from its time on: resolving
 * after the read would give earlier samples the later name.
 */
#define DTM_NAME	1u	/* dtr_comm: the thread's name now */
#define DTM_FP_CUT	2u	/* the frame-pointer user stack ends at the
				 * first pc that is no code of the process */
#define DTM_UNWIND	4u	/* the workers will unwind it: they learn
				 * the mappings of a process first heard of */
/*
 * d (a complete dt_rec, its user stack last) resolved through the
 * machine's table: a cut stack leaves d shorter (dtr_size, dtr_nustack,
 * DTR_USTACK_TRUNC).  Only a fed machine knows code: without it the stack
 * is left whole.
 */
void dtm_sample(struct dtm *m, struct dt_rec *d, unsigned what);
/* The unwinding workers to tell every mapping, or NULL (before the pool is freed). */
void dtm_set_unwinders(struct dtm *m, struct dtunw_pool *pool);
/* The session: the source's unwinding workers (their spool's figures), or NULL. */
struct dtunw_pool *dtm_unwinders(struct dtm *m);
/*
 * Without the kernel's process events: make sure the unwinding workers
 * know the mapping ip of pid lies in, reading /proc/PID/maps at pid's
 * first sample, at a new image (tid == pid with a new comm) and for an ip
 * outside what was read, under the re-read rule.
 */
void dtm_observe(struct dtm *m, uint32_t pid, uint32_t tid, const char *comm, uint64_t ip);

/* ---- the session */
/*
 * An event written to the capture: tells the subscribers when its process
 * is first seen, has a new image or, by the kernel's events, a new change
 * generation, or ran a pc in no mapping known (the re-read rule).
 */
void dtm_event(struct dtm *m, const struct dt_rec *d);
/*
 * The end of one read of every ring: the kernel's events may have told of
 * a change after a process's last event was read (the mapping in a ring
 * the read had passed): subscribers are told of every such process.
 */
void dtm_read_end(struct dtm *m);
/* What the kernel's events say pid maps, or NULL (not fed, unknown). */
const struct kproc *dtm_proc(struct dtm *m, uint32_t pid);
/* pid's main-thread comm as its /proc changes were told, "" if none. */
const char *dtm_comm(struct dtm *m, uint32_t pid);
/*
 * Where code of pid lies as the subscriber stored it (JIT regions
 * included): a pc outside is what the re-read rule is for.
 */
void dtm_set_code(struct dtm *m, uint32_t pid, const struct dtcap_map *mv, size_t nm);
/* Forget what was told (a flight dump starts a capture of its own). */
void dtm_forget_told(struct dtm *m);

#endif /* DT_MACHINE_H */
