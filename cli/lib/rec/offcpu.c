/*
 * offcpu.c - the scheduler tracepoints of dtrec --offcpu (offcpu.h).
 * sched_switch gives the state a task left in (prev_state) and who ran
 * next; sched_wakeup and sched_wakeup_new run in the waker, so their
 * stacks are the waker's.  sched_waking is left out: it says the same one
 * step earlier, and every event costs.
 */
#include <string.h>

#include "offcpu.h"

const char *const dtoff_probes[] = {
	"tracepoint:sched:sched_switch",
	"tracepoint:sched:sched_wakeup",
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
	if (strcmp(ev, "sched_wakeup") == 0 || strcmp(ev, "sched_wakeup_new") == 0)
		return DTOFF_WAKEUP;
	return DTOFF_NONE;
}

const char *
dtoff_other_field(int kind)
{
	return kind == DTOFF_SWITCH ? "next_pid" : kind == DTOFF_WAKEUP ? "pid" : NULL;
}
