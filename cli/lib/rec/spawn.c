/*
 * spawn.c - the command dtrec records: forked stopped on a pipe before
 * recording, let go once recording runs, its process group ended when
 * recording stops first, and the terminal given back.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record_int.h"

/* Fork the command stopped on a pipe: it execs only once recording runs. */
pid_t
rec_spawn(struct rec *r, char *const *argv, int *go_fd, int *err_fd)
{
	int go[2], ep[2];
	pid_t pid, parent;

	if (pipe2(go, O_CLOEXEC) < 0) {
		rec_msg(r, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		rec_msg(r, "pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -1;
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		rec_msg(r, "fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		int e;
		/* a recorder killed outright takes the command with it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		/* its own group: ended as a whole, never with the recorder's */
		setpgid(0, 0);
		close(go[1]);
		close(ep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the recorder gave up before starting */
		execvp(argv[0], argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	/* both sides set the group: whichever runs first, it exists before exec */
	setpgid(pid, pid);
	/*
	 * In the terminal's foreground the command takes the terminal, as a
	 * shell's job does: it reads it, and Ctrl-C ends it (then recording).
	 */
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp() &&
	    tcsetpgrp(STDIN_FILENO, pid) == 0) {
		struct sigaction ign;
		r->fg = getpgrp();
		/* in the background now: the status line must not stop us (stty tostop) */
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGTTOU, &ign, &r->ttou);
	}
	*go_fd = go[1];
	*err_fd = ep[0];
	return pid;
}

/* The terminal back to the recorder's group, if the command had it. */
void
rec_take_terminal(struct rec *r)
{
	if (r->fg == 0)
		return;
	/* SIGTTOU, which a background group setting the foreground gets, is ignored */
	(void)tcsetpgrp(STDIN_FILENO, r->fg);
	sigaction(SIGTTOU, &r->ttou, NULL);
	r->fg = 0;
}

/*
 * Recording stopped before the command ended: end its process group (what
 * it started too), SIGTERM first, SIGKILL to what is left two seconds on.
 */
void
rec_reap(struct rec *r, pid_t child, int *status)
{
	int reaped = 0;

	if (killpg(child, SIGTERM) < 0)
		kill(child, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (!reaped && waitpid(child, status, WNOHANG) == child)
			reaped = 1;
		if (reaped && killpg(child, 0) < 0)
			break;
		usleep(10000);
	}
	if (killpg(child, SIGKILL) < 0 && !reaped)
		kill(child, SIGKILL);
	if (!reaped)
		waitpid(child, status, 0);
	rec_take_terminal(r);
}

/* Is argv[0] something execvp will run?  Checked before anything is created. */
int
rec_runnable(struct rec *r, const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) == 0)
			return 1;
		r->not_run = errno == ENOENT || errno == ENOTDIR ? 127 : 126;
		rec_msg(r, "%s: %s", cmd, strerror(errno));
		return 0;
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; ; ) {
		const char *c = strchr(p, ':');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, l ? p : ".", cmd);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!c)
			break;
		p = c + 1;
	}
	rec_msg(r, "%s: command not found", cmd);
	r->not_run = 127;
	return 0;
}

/* Let the waiting command exec.  -1 (message printed) if it could not. */
int
rec_release_child(struct rec *r, int *go_fd, int err_fd, pid_t *child, int *cmd_status)
{
	int e = 0;
	ssize_t n;

	if (write(*go_fd, "g", 1) != 1) {
		rec_msg(r, "starting %s: %s", r->o->argv[0], strerror(errno));
		return -1;
	}
	close(*go_fd);
	*go_fd = -1;
	/* EOF: exec succeeded (close-on-exec); an int: its errno */
	do
		n = read(err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		r->not_run = e == ENOENT || e == ENOTDIR ? 127 : 126;
		rec_msg(r, "%s: %s", r->o->argv[0], strerror(e));
		waitpid(*child, cmd_status, 0);
		*child = -1;
		return -1;
	}
	return 0;
}
