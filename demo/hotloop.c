/*
 * hotloop - a CPU-bound workload with a known profile, for the demo and
 * the tests: main -> work -> {heavy, medium, light}, where the time split
 * is roughly 60/30/10 %.  Built with frame pointers so user stacks unwind,
 * and without inlining so each function shows up as its own frame.
 *
 * usage: hotloop [SECONDS]   (default 2; fractional allowed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The stack slot makes gcc give this leaf a frame (it omits the frame
 * pointer of leaves that need no stack even with -fno-omit-frame-pointer),
 * so a sample here still unwinds through the hot_* caller.
 */
__attribute__((noinline)) static uint64_t
spin(uint64_t n, uint64_t x)
{
	volatile uint64_t slot = 0;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	slot = x;
	return slot;
}

__attribute__((noinline)) uint64_t
hot_heavy(uint64_t x)
{
	return spin(60000, x);
}

__attribute__((noinline)) uint64_t
hot_medium(uint64_t x)
{
	return spin(30000, x);
}

__attribute__((noinline)) uint64_t
hot_light(uint64_t x)
{
	return spin(10000, x);
}

__attribute__((noinline)) uint64_t
work(uint64_t x)
{
	x = hot_heavy(x);
	x = hot_medium(x);
	x = hot_light(x);
	return x;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	double end = now() + secs;
	uint64_t x = 1, rounds = 0;

	if (!(secs > 0)) {
		fprintf(stderr, "usage: hotloop [SECONDS]\n");
		return 2;
	}
	while (now() < end) {
		x = work(x);
		rounds++;
	}
	sink = x;
	printf("hotloop: %llu rounds\n", (unsigned long long)rounds);
	return 0;
}
