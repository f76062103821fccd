/* targets.c - see targets.h. */
#include "targets.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int
dtrec_targets_open(struct dtrec_targets *t, const pid_t *pids, size_t n)
{
	memset(t, 0, sizeof(*t));
	if (n == 0)
		return 0;
	if ((t->fd = calloc(n, sizeof(*t->fd))) == NULL)
		return -1;
	t->n = n;
	t->watched = 1;
	for (size_t i = 0; i < n; i++) {
		/* glibc 2.36 has pidfd_open(), older ones only the system call */
		long fd = syscall(SYS_pidfd_open, (int)pids[i], 0);
		if (fd >= 0) {
			t->fd[i] = (int)fd;
			t->live++;
		} else {
			t->fd[i] = -1;
			/* ESRCH: gone already; anything else cannot be watched */
			if (errno != ESRCH)
				t->watched = 0;
		}
	}
	return 0;
}

int
dtrec_targets_gone(struct dtrec_targets *t)
{
	if (!t->watched)
		return 0;
	for (size_t i = 0; i < t->n && t->live; i++) {
		struct pollfd p = { .fd = t->fd[i], .events = POLLIN };
		if (t->fd[i] < 0 || poll(&p, 1, 0) <= 0)
			continue;
		close(t->fd[i]);
		t->fd[i] = -1;
		t->live--;
	}
	return t->live == 0;
}

void
dtrec_targets_close(struct dtrec_targets *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->fd[i] >= 0)
			close(t->fd[i]);
	free(t->fd);
	memset(t, 0, sizeof(*t));
}
