/* ktest.h - shared by the in-VM test programs of dt.ko. */
#ifndef KTEST_H
#define KTEST_H

#include <stddef.h>
#include <stdio.h>

extern volatile unsigned long busy_sink;
void busy_leaf(unsigned long n);
void busy_mid(unsigned long n);
void busy_top(volatile int *stop);
long up_target(long x);
void usdt_fire(long i);

/* ktest_work.c: the workload modes and the event generators tests share */
/* the flight tests' close(FLIGHT_FD0 + i): events numbered by their fd */
#define FLIGHT_FD0	1000000L
void pin(int cpu);
void unpin(void);
/* n getppid calls: the events counted per process */
void calls(long n);
/* close(FLIGHT_FD0 + i) for i in [a, b) */
void numbered(long a, long b);
/*
 * Runs ARG if it names a workload ("calls=N"): 0 once done, 2 (said on
 * stderr) if its argument is bad, -1 if ARG is no workload.
 */
int workload(const char *arg);
/* "|name=ARGS" for each workload, for a usage line */
void workload_usage(FILE *f);

/*
 * ktest_fuse.c: one read-only file NAME of LEN bytes (DATA, kept by the
 * caller) on a FUSE mount at MNT; reads can be held back.
 */
int fz_start(const char *mnt, const char *name, const void *data, size_t len);
void fz_hold_reads(int on);
/* 1 once a read is being held back, 0 if none came within ms */
int fz_wait_held(int ms);
void fz_stop(const char *mnt);

#endif
