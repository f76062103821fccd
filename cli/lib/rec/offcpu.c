/*
 * offcpu.c - the scheduler tracepoints of dtrec --offcpu (offcpu.h).
 * sched_switch gives the state a task left in (prev_state) and who ran
 * next.  A wakeup is recorded by sched_waking, not sched_wakeup: both
 * fire once per wakeup, but sched_wakeup fires where the woken task is
 * made runnable, which for a wakeup the kernel queues to an idle CPU is
 * that CPU's idle task in an interrupt (four in five of a ping-pong's
 * wakeups across two CPUs), while sched_waking always fires in the waker,
 * so its stack is the waker's.  perf sched record takes it for the same
 * reason.  sched_wakeup_new runs in the forking parent.
 */
#include <string.h>

#include "offcpu.h"

const char *const dtoff_probes[] = {
	"tracepoint:sched:sched_switch",
	"tracepoint:sched:sched_waking",
	"tracepoint:sched:sched_wakeup_new",
	NULL,
};

int
dtoff_kind(const char *sys, const char *ev)
{
	if (sys == NULL || ev == NULL || strcmp(sys, "sched") != 0)
		return DTOFF_NONE;
	if (strcmp(ev, "sched_switch") == 0)
		return DTOFF_SWITCH;
	if (strcmp(ev, "sched_wakeup") == 0 || strcmp(ev, "sched_waking") == 0 ||
	    strcmp(ev, "sched_wakeup_new") == 0)
		return DTOFF_WAKEUP;
	return DTOFF_NONE;
}

const char *
dtoff_other_field(int kind)
{
	return kind == DTOFF_SWITCH ? "next_pid" : kind == DTOFF_WAKEUP ? "pid" : NULL;
}
