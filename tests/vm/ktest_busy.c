/*
 * ktest_busy.c - the user-stack target of the profile test.  Built -O1
 * -fno-omit-frame-pointer on its own so that the call chain
 * busy_top -> busy_mid -> busy_leaf keeps real frames whatever the
 * optimisation level of the test program itself.
 */
#include "ktest.h"

volatile unsigned long busy_sink;

__attribute__((noinline)) void busy_leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		busy_sink += i * 2654435761u;
}

__attribute__((noinline)) void busy_mid(unsigned long n)
{
	busy_leaf(n);
	busy_sink++;	/* keeps the call from becoming a tail jump */
}

__attribute__((noinline)) void busy_top(volatile int *stop)
{
	while (!*stop) {
		busy_mid(100000);
		busy_sink++;
	}
}

/* The uprobe test's target: a real call, never inlined or cloned. */
__attribute__((noinline)) long up_target(long x)
{
	busy_sink++;
	return 3 * x + 1;
}
