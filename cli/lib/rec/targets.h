/*
 * targets.h - has every -p process exited?  Recording of given processes
 * ends when the last of them has, as perf record -p does.  A pidfd per
 * process turns readable when it exits, whoever its parent is (dtrec is
 * not, so it cannot wait for them).
 */
#ifndef DT_TARGETS_H
#define DT_TARGETS_H

#include <stddef.h>
#include <sys/types.h>

/* One recording thread owns it: [I] set by dtrec_targets_open, the rest
 * changed only by dtrec_targets_gone. */
struct dtrec_targets {
	int		*fd;		/* a pidfd per process, -1 once seen to exit */
	size_t		n;		/* [I] processes */
	size_t		live;		/* processes not yet seen to exit */
	int		watched;	/* [I] every process has a pidfd: ending is known */
};

/*
 * Watch pids[0..n).  A process that is already gone counts as exited; one
 * without a pidfd (a thread id, an old kernel) leaves t->watched 0 and
 * recording to its other ends.  -1 only when out of memory.
 */
int dtrec_targets_open(struct dtrec_targets *t, const pid_t *pids, size_t n);

/* 1 when every watched process has exited (never without t->watched). */
int dtrec_targets_gone(struct dtrec_targets *t);

void dtrec_targets_close(struct dtrec_targets *t);

#endif
