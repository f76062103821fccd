/* ktest.h - shared by the in-VM test programs of dt.ko. */
#ifndef KTEST_H
#define KTEST_H

#include <stddef.h>

extern volatile unsigned long busy_sink;
void busy_leaf(unsigned long n);
void busy_mid(unsigned long n);
void busy_top(volatile int *stop);
long up_target(long x);
void usdt_fire(long i);

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
