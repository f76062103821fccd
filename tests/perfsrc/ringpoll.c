/*
 * ringpoll.c - unit tests of the perf source's ring waiting and
 * tracepoint flags, on a source built by hand (no perf_event_open):
 *  - perf_wait polls every ring: with more rings than 64 (the old fixed
 *    set), data on the last one ends the wait at once;
 *  - with "--flags", prints the trace-flag constants for run.sh to
 *    compare with the kernel headers, and checks tp_flags_ctx.
 * Prints PASS/FAIL lines (tests/check.h).
 */
#define CHECK_PREFIX "ringpoll."
#include "../check.h"

#include "perf_int.h"

#include <time.h>

#define NRINGS	130	/* more than two 64s: rings past the old limit */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
test_poll(void)
{
	struct src_perf *sp = calloc(1, sizeof(*sp));
	int wfd[NRINGS];
	size_t missing = 0;
	double t0, dt;

	if (sp == NULL || (sp->rings = calloc(NRINGS, sizeof(*sp->rings))) == NULL) {
		check("setup", 0, "out of memory");
		return -1;
	}
	for (int i = 0; i < NRINGS; i++) {
		int p[2];

		if (pipe(p) != 0) {
			checkf("setup", 0, "pipe: %s", strerror(errno));
			return -1;
		}
		sp->rings[i].fd = p[0];
		sp->rings[i].cpu = i;
		wfd[i] = p[1];
	}
	sp->nrings = NRINGS;
	check("pollset-built", perf_pollset(sp) == 0, "perf_pollset failed");
	checkf("pollset-every-ring", sp->npf == NRINGS, "%zu rings in the set of %d", sp->npf,
	       NRINGS);
	for (size_t i = 0; i < sp->npf && i < NRINGS; i++)
		if (sp->pf[i].fd != sp->rings[i].fd || !(sp->pf[i].events & POLLIN))
			missing++;
	checkf("pollset-fds", missing == 0, "%zu entries not their ring's fd for POLLIN", missing);

	/* data on the last CPU's ring only: the wait must end with it, not
	 * at the timeout (20 s: far beyond any scheduling delay) */
	if (write(wfd[NRINGS - 1], "x", 1) != 1)
		check("setup-write", 0, strerror(errno));
	t0 = now_s();
	perf_wait(&sp->s, 20000);
	dt = now_s() - t0;
	checkf("wait-wakes-on-last-ring", dt < 10.0, "waited %.1f s with data on ring %d", dt,
	       NRINGS - 1);
	checkf("wait-sees-last-ring", sp->npf == NRINGS && (sp->pf[NRINGS - 1].revents & POLLIN),
	       "ring %d not reported readable", NRINGS - 1);

	/* a set rebuilt when the rings changed, not a stale one */
	sp->nrings = 3;
	check("pollset-rebuilt", perf_pollset(sp) == 0 && sp->npf == 3, "set not rebuilt for 3 rings");

	for (int i = 0; i < NRINGS; i++) {
		close(sp->rings[i].fd);
		close(wfd[i]);
	}
	free(sp->pf);
	free(sp->rings);
	free(sp);
	return 0;
}

static void
test_flags(void)
{
	static const struct { const char *name; unsigned v; } tf[] = {
		{ "TRACE_FLAG_IRQS_OFF", TRACE_FLAG_IRQS_OFF },
		{ "TRACE_FLAG_IRQS_NOSUPPORT", TRACE_FLAG_IRQS_NOSUPPORT },
		{ "TRACE_FLAG_NEED_RESCHED", TRACE_FLAG_NEED_RESCHED },
		{ "TRACE_FLAG_HARDIRQ", TRACE_FLAG_HARDIRQ },
		{ "TRACE_FLAG_SOFTIRQ", TRACE_FLAG_SOFTIRQ },
		{ "TRACE_FLAG_PREEMPT_RESCHED", TRACE_FLAG_PREEMPT_RESCHED },
		{ "TRACE_FLAG_NMI", TRACE_FLAG_NMI },
		{ "TRACE_FLAG_BH_OFF", TRACE_FLAG_BH_OFF },
	};

	for (size_t i = 0; i < sizeof(tf) / sizeof(tf[0]); i++)
		printf("# flag %s 0x%02x\n", tf[i].name, tf[i].v);
	/* an NMI inside a hard interrupt is the NMI; irqs-off alone is a task */
	check("ctx-nmi", tp_flags_ctx(TRACE_FLAG_NMI | TRACE_FLAG_HARDIRQ) == DTR_CTX_NMI, "not NMI");
	check("ctx-hardirq", tp_flags_ctx(TRACE_FLAG_HARDIRQ | TRACE_FLAG_IRQS_OFF) == DTR_CTX_HARDIRQ,
	      "not hardirq");
	check("ctx-softirq", tp_flags_ctx(TRACE_FLAG_SOFTIRQ | TRACE_FLAG_BH_OFF) == DTR_CTX_SOFTIRQ,
	      "not softirq");
	check("ctx-task", tp_flags_ctx(TRACE_FLAG_IRQS_OFF | TRACE_FLAG_NEED_RESCHED |
				       TRACE_FLAG_BH_OFF) == DTR_CTX_TASK, "not task");
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--flags") == 0)
		test_flags();
	else
		test_poll();
	return check_status();
}
