/*
 * offcpu.h - what dtrec --offcpu records: the scheduler tracepoints the
 * off-CPU, wakeup and blame analyses need, and which of their fields
 * names the other task of an event (the one switched to, the one woken),
 * so a source recording only some processes keeps the events that
 * concern a target without running in it.
 */
#ifndef DT_OFFCPU_H
#define DT_OFFCPU_H

#include <stddef.h>

/* The probe specs --offcpu adds, NULL-terminated. */
extern const char *const dtoff_probes[];

enum { DTOFF_NONE, DTOFF_SWITCH, DTOFF_WAKEUP };

/* DTOFF_* of tracepoint SYS:EV ("sched", "sched_switch"). */
int dtoff_kind(const char *sys, const char *ev);

/* The field of a DTOFF_* event naming the task it concerns besides
 * current: next_pid, or the woken pid; NULL for DTOFF_NONE. */
const char *dtoff_other_field(int kind);

#endif /* DT_OFFCPU_H */
