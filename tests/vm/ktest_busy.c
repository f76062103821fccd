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

/*
 * USDT probes for dtrec's tests: dtkt:tick with a register, a constant,
 * a computed and an on-stack operand; dtkt:gated only while its semaphore
 * is raised (the kernel counts probing tools there).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short dtkt_tick_semaphore __attribute__((section(".probes"), used));
unsigned short dtkt_gated_semaphore __attribute__((section(".probes"), used));

__attribute__((noinline)) void usdt_fire(long i)
{
	/* volatile: kept in the frame, an rbp/rsp operand */
	volatile long onstack = 1000 + i;
	long twice = 2 * i;

	DTRACE_PROBE4(dtkt, tick, i, -5L, twice, onstack);
	if (dtkt_gated_semaphore)
		DTRACE_PROBE1(dtkt, gated, i);
	busy_sink += (unsigned long)onstack;
}
