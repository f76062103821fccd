/*
 * ktest_work.c - the workloads dt_ktest runs as a program of its own in
 * the guest ("dt_ktest calls=N" and the like): event generators whose
 * events a test counts from outside (tests/vm's filter test execs one,
 * tests/dtrec's guest.sh records them), and the generators the in-process
 * tests share.  A workload makes exactly the events its argument asks for
 * and nothing the recorder could mistake for them.
 */
#include <errno.h>
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
