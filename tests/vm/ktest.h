/* ktest.h - shared by the in-VM test programs of dt.ko. */
#ifndef KTEST_H
#define KTEST_H

extern volatile unsigned long busy_sink;
void busy_leaf(unsigned long n);
void busy_mid(unsigned long n);
void busy_top(volatile int *stop);
long up_target(long x);
void usdt_fire(long i);

#endif
