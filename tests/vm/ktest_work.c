/*
 * ktest_work.c - the workloads dt_ktest runs as a program of its own in
 * the guest ("dt_ktest calls=N" and the like): event generators whose
 * events a test counts from outside (tests/vm's filter test execs one,
 * tests/dtrec's guest.sh records them), and the generators the in-process
 * tests share.  A workload makes exactly the events its argument asks for
 * and nothing the recorder could mistake for them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ktest.h"

void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

void unpin(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	CPU_SET(1, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

void calls(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

void numbered(long a, long b)
{
	for (long i = a; i < b; i++)
		syscall(SYS_close, FLIGHT_FD0 + i);
}

/*
 * dtrec --trigger's event in tests/dtrec: a system call no shell makes by
 * itself (busybox sh calls getppid as it starts, which would trigger a
 * dump of its own).
 */
static void yields(long n)
{
	for (long k = 0; k < n; k++)
		sched_yield();
}

/* dtrec's USDT workload in tests/dtrec: dtkt:tick 0..N-1 */
static void usdts(long n)
{
	for (long k = 0; k < n; k++)
		usdt_fire(k);
}

/* dtrec's uprobe workload in tests/dtrec: up_target(0..N-1) */
static void upcalls(long n)
{
	for (long k = 0; k < n; k++)
		up_target(k);
}

/* dtrec --flight's workload in tests/dtrec: [a, b) numbered, on CPU 0 */
static void closes(long a, long b)
{
	pin(0);
	numbered(a, b);
}

/*
 * execveat's argv[0] in tests/dtrec: N more execs of this program, by
 * path (even N: an argv[0] longer than dt.ko's copy) and by descriptor
 * (odd N: AT_EMPTY_PATH, a short argv[0]), each running the next.
 */
static void execveats(long n)
{
	extern char **environ;
	char arg[32];
	char *av[3] = { NULL, arg, NULL };
	int fd;

	if (n == 0)
		return;
	snprintf(arg, sizeof(arg), "execveat=%ld", n - 1);
	if (n % 2 == 0) {
		av[0] = "dt-ktest-execveat-argv0";
		syscall(SYS_execveat, AT_FDCWD, "/bin/dt_ktest", av, environ, 0);
	} else if ((fd = open("/bin/dt_ktest", O_RDONLY)) >= 0) {
		av[0] = "ktshort";
		syscall(SYS_execveat, fd, "", av, environ, AT_EMPTY_PATH);
	}
	perror("dt_ktest: execveat");
	exit(1);
}

/* one byte through fd, or exit: the ping-pong below */
static void xfer(int fd, int out)
{
	char c = 'x';

	if ((out ? write(fd, &c, 1) : read(fd, &c, 1)) != 1) {
		fprintf(stderr, "dt_ktest: %s of descriptor %d failed\n", out ? "write" : "read", fd);
		exit(1);
	}
}

/*
 * The flight recorder's drop counts in tests/dtrec (as tests/rectruth's
 * pingpong): ping, the target, waits for a byte on 0, then N times writes
 * one to 1 and reads one back; pong, not recorded, waits for a byte on 3,
 * hands one to ping, then N times reads one and writes one back.  Each
 * round ping wakes pong (its event) and pong wakes ping (not its event).
 */
static void pings(long n)
{
	xfer(0, 0);
	for (long i = 0; i < n; i++) {
		xfer(1, 1);
		xfer(0, 0);
	}
}

static void pongs(long n)
{
	xfer(3, 0);
	xfer(1, 1);
	for (long i = 0; i < n; i++) {
		xfer(0, 0);
		xfer(1, 1);
	}
}

/*
 * A workload takes a count N or a range A:B; its arity says which.  The
 * filter test's exec case is "calls"; the rest are tests/dtrec's.
 */
static const struct workload {
	const char	*name;
	void		(*count)(long n);
	void		(*range)(long a, long b);
	const char	*args;
} workloads[] = {
	{ "calls",	calls,		NULL,	"N" },
	{ "yields",	yields,		NULL,	"N" },
	{ "usdt",	usdts,		NULL,	"N" },
	{ "upcalls",	upcalls,	NULL,	"N" },
	{ "closes",	NULL,		closes,	"A:B" },
	{ "execveat",	execveats,	NULL,	"N" },
	{ "ping",	pings,		NULL,	"N" },
	{ "pong",	pongs,		NULL,	"N" },
};

/* A non-negative decimal number ending at *end (which must be stop). */
static int number(const char *s, char stop, long *v, const char **end)
{
	char *e;

	errno = 0;
	*v = strtol(s, &e, 10);
	*end = e;
	return e != s && *e == stop && errno == 0 && *v >= 0;
}

int workload(const char *arg)
{
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		const struct workload *w = &workloads[i];
		size_t n = strlen(w->name);
		const char *p;
		long a, b;

		if (strncmp(arg, w->name, n) || arg[n] != '=')
			continue;
		p = arg + n + 1;
		if (w->count && number(p, '\0', &a, &p)) {
			w->count(a);
			return 0;
		}
		if (w->range && number(p, ':', &a, &p) && number(p + 1, '\0', &b, &p) && b >= a) {
			w->range(a, b);
			return 0;
		}
		fprintf(stderr, "dt_ktest: %s wants %s=%s\n", arg, w->name, w->args);
		return 2;
	}
	return -1;
}

void workload_usage(FILE *f)
{
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		fprintf(f, "|%s=%s", workloads[i].name, workloads[i].args);
}
