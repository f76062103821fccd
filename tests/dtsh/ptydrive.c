/*
 * ptydrive - run a program on a pseudo-terminal and drive it from a small
 * script, for the VM guest (no tmux, no python there).  Static.
 *
 *	ptydrive SCRIPT LOG PROG [ARGS...]
 *	ptydrive getppid SECONDS	(workload: getppid(2) in a loop)
 *
 * SCRIPT lines (C escapes \n \t \r \\ \xHH in text):
 *	send TEXT
 *	expect SECONDS TEXT	wait for TEXT in the output after the last
 *				match (ANSI sequences and \r removed)
 *	sleep MS
 *	wait SECONDS		wait for the program to exit
 * Prints "ptydrive: ok expect TEXT in N ms" or "ptydrive: FAILED ..." per
 * step and exits 1 at the first failure (the program is killed); the whole
 * transcript goes to LOG.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char *out;		/* cleaned transcript */
static size_t outlen, outcap, mark;
static FILE *logf;
static int esc;			/* inside an escape sequence */

static long long
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void
take(const char *b, size_t n)
{
	fwrite(b, 1, n, logf);
	fflush(logf);
	for (size_t i = 0; i < n; i++) {
		char c = b[i];
		if (esc == 1) {
			esc = (c == '[') ? 2 : 0;
			continue;
		}
		if (esc == 2) {
			if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '~')
				esc = 0;
			continue;
		}
		if (c == 0x1b) {
			esc = 1;
			continue;
		}
		if (c == '\r' || c == '\a')
			continue;
		if (outlen + 1 >= outcap) {
			outcap = outcap ? outcap * 2 : 65536;
			if ((out = realloc(out, outcap)) == NULL)
				exit(2);
		}
		out[outlen++] = c;
		out[outlen] = '\0';
	}
}

/* Read what is there for up to ms; 0 at EOF (the program closed the pty). */
static int
pump(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char buf[4096];
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 1;
	n = read(fd, buf, sizeof(buf));
	if (n <= 0)
		return 0;
	take(buf, (size_t)n);
	return 1;
}

static size_t
unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r != '\\' || r[1] == '\0') {
			*w++ = *r;
			continue;
		}
		r++;
		switch (*r) {
		case 'n': *w++ = '\n'; break;
		case 't': *w++ = '\t'; break;
		case 'r': *w++ = '\r'; break;
		case 'x': {
			char hex[3] = { r[1], r[1] ? r[2] : 0, 0 };
			*w++ = (char)strtol(hex, NULL, 16);
			r += 2;
			break;
		}
		default: *w++ = *r; break;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

static int
getppid_loop(const char *secs)
{
	long long end = now_ms() + atoi(secs) * 1000LL;
	unsigned long n = 0;

	while (now_ms() < end)
		for (int i = 0; i < 1000; i++, n++)
			syscall(SYS_getppid);
	printf("%lu getppid calls\n", n);
	return 0;
}

int
main(int argc, char **argv)
{
	FILE *sc;
	char line[4096];
	int master, status = 0, exited = 0;
	pid_t pid;
	struct winsize ws = { 50, 200, 0, 0 };

	if (argc == 3 && strcmp(argv[1], "getppid") == 0)
		return getppid_loop(argv[2]);
	if (argc < 4) {
		fprintf(stderr, "usage: ptydrive SCRIPT LOG PROG [ARGS...]\n");
		return 2;
	}
	if ((sc = fopen(argv[1], "r")) == NULL || (logf = fopen(argv[2], "w")) == NULL) {
		perror("ptydrive");
		return 2;
	}
	if ((master = posix_openpt(O_RDWR | O_NOCTTY)) < 0 || grantpt(master) ||
	    unlockpt(master)) {
		perror("ptydrive: pty");
		return 2;
	}
	ioctl(master, TIOCSWINSZ, &ws);
	if ((pid = fork()) == 0) {
		int s;
		setsid();
		if ((s = open(ptsname(master), O_RDWR)) < 0)
			_exit(126);
		ioctl(s, TIOCSCTTY, 0);
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		if (s > 2)
			close(s);
		close(master);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	while (fgets(line, sizeof(line), sc)) {
		char *arg;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		arg = strchr(line, ' ');
		arg = arg ? arg + 1 : line + strlen(line);
		if (strncmp(line, "send ", 5) == 0) {
			size_t n = unescape(arg);
			if (write(master, arg, n) != (ssize_t)n) {
				printf("ptydrive: FAILED send: %s\n", strerror(errno));
				goto fail;
			}
		} else if (strncmp(line, "sleep ", 6) == 0) {
			long long end = now_ms() + atoi(arg);
			while (now_ms() < end)
				pump(master, (int)(end - now_ms()));
		} else if (strncmp(line, "expect ", 7) == 0) {
			long long t0 = now_ms(), end = t0 + (long long)(atof(arg) * 1000);
			char *text = strchr(arg, ' '), *hit = NULL;
			text = text ? text + 1 : arg + strlen(arg);
			unescape(text);
			for (;;) {
				if (out && (hit = strstr(out + mark, text)) != NULL)
					break;
				if (now_ms() >= end || !pump(master, (int)(end - now_ms())))
					break;
			}
			if (hit == NULL && out)
				hit = strstr(out + mark, text);
			if (hit == NULL) {
				printf("ptydrive: FAILED expect '%s' within %s s\n", text, arg);
				goto fail;
			}
			mark = (size_t)(hit - out) + strlen(text);
			printf("ptydrive: ok expect '%s' in %lld ms\n", text, now_ms() - t0);
		} else if (strncmp(line, "wait ", 5) == 0) {
			long long end = now_ms() + (long long)(atof(arg) * 1000);
			while (!exited && now_ms() < end) {
				pump(master, 100);
				if (waitpid(pid, &status, WNOHANG) == pid)
					exited = 1;
			}
			if (!exited) {
				printf("ptydrive: FAILED wait: still running after %s s\n", arg);
				goto fail;
			}
			printf("ptydrive: ok exit status %d\n",
			       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		} else {
			printf("ptydrive: bad script line '%s'\n", line);
			goto fail;
		}
		fflush(stdout);
	}
	while (pump(master, 100) && !exited && waitpid(pid, &status, WNOHANG) != pid)
		;
	return 0;
fail:
	fflush(stdout);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 1;
}
