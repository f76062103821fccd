/*
 * target.c - the workload of the unwind tests: a five-deep call chain
 * main -> level1 -> ... -> level5, built -O2 -fomit-frame-pointer, so only
 * DWARF CFI can walk it.  Every level keeps a stack buffer and callee-saved
 * values live across its call, so its CFA and saved registers are real
 * work for the unwinder, and does some work of its own, so samples land
 * in every level, prologues and epilogues included.
 * Usage: target SECONDS [unlink|fork]   (unlink: delete its own file
 * first, as a package upgrade does under a running program; fork: three
 * children forked without exec run the chain too, their mappings only
 * the parent's, inherited)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

	int nkids = 0;

	if (argc > 2 && strcmp(argv[2], "unlink") == 0 && unlink(argv[0]) != 0)
		return 2;
	if (argc > 2 && strcmp(argv[2], "fork") == 0)
		for (; nkids < 3; nkids++) {
			pid_t k = fork();
			if (k < 0)
				return 2;
			if (k == 0)
				break;	/* a child: the chain, then out */
		}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 50; i++)
			acc += level1(acc + (uint64_t)i);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	if (nkids == 3)
		while (wait(NULL) > 0)
			;
	return (int)(acc & 1) + 0 * argc;
}
