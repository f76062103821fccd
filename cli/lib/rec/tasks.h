/*
 * tasks.h - a table of threads or processes by id (tid or pid), and the
 * kernel's view of a process (struct kproc) the machine hands its
 * subscribers.  The machine's process table (proctab.h) is two of them;
 * the perf source keeps its targets in others of its own.  Used by one
 * thread; entries move as the table grows.
 */
#ifndef DT_TASKS_H
#define DT_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "dt_htab.h"
#include "dtcap.h"

/*
 * A process's executable mappings as the kernel reported them (perf's
 * MMAP2 records, dt.ko's mmap probe).  The table's; valid until its next
 * change.
 */
struct kproc {
	uint32_t	pid, ppid;
	uint64_t	ts;		/* last change */
	uint32_t	gen;		/* changes since first seen */
	char		comm[DTCAP_COMMLEN];
	const char	*exe;		/* "" when unknown */
	size_t		nmaps;
	const struct dtcap_map *maps;	/* file == 0; name is the path */
};

/* A thread (comms) or process (procs) entry. */
struct task {
	uint32_t	key;		/* tid (comms) or pid (procs); idle: 0xffffffff */
	char		comm[DTCAP_COMMLEN];
	/* processes only */
	int		known;		/* mappings known (events or /proc) */
	int		exited;		/* its exit was seen (its pid may return) */
	struct kproc p;
	struct dtcap_map *maps;
	size_t		mcap;
	char		*exe;
};
struct tasks {
	struct task	*v;		/* in order of first sight; moves as it grows */
	size_t		cap, n;
	struct dt_htab	ix;		/* key -> index in v */
};

/*
 * key's entry, created (zeroed but for the key) if create and absent;
 * NULL if absent or out of memory.  Creating may move every entry.
 */
struct task *task_get(struct tasks *t, uint32_t key, int create);
void tasks_free(struct tasks *t);

#endif /* DT_TASKS_H */
