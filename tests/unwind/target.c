/*
 * target.c - the workload of the unwind tests: a five-deep call chain
 * main -> level1 -> ... -> level5, built -O2 -fomit-frame-pointer, so only
 * DWARF CFI can walk it.  Every level keeps a stack buffer and callee-saved
 * values live across its call, so its CFA and saved registers are real
 * work for the unwinder, and does some work of its own, so samples land
 * in every level, prologues and epilogues included.
 * Usage: target SECONDS
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define LEVEL(n, next)							\
__attribute__((noinline, noclone)) uint64_t level##n(uint64_t x)	\
{									\
	volatile uint64_t buf[8 * n];					\
	uint64_t a = x * 3 + n, b = x ^ 0x5bd1e995, c = x + 7;		\
	for (unsigned i = 0; i < 8 * n; i++)				\
		buf[i] = a + i;						\
	for (unsigned i = 0; i < 200; i++)				\
		a = a * 6364136223846793005ULL + buf[i % (8 * n)];	\
	uint64_t r = next(a + b);					\
	return r * c + a + b + buf[x % (8 * n)];			\
}

__attribute__((noinline, noclone)) uint64_t
level5(uint64_t x)
{
	volatile uint64_t buf[40];
	uint64_t a = x;

	for (unsigned i = 0; i < 40; i++)
		buf[i] = a + i;
	for (unsigned i = 0; i < 20000; i++)
		a = a * 6364136223846793005ULL + buf[i % 40] + (a >> 29);
	return a;
}

LEVEL(4, level5)
LEVEL(3, level4)
LEVEL(2, level3)
LEVEL(1, level2)

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec t0, t;
	uint64_t acc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 50; i++)
			acc += level1(acc + (uint64_t)i);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return (int)(acc & 1) + 0 * argc;
}
