/*
 * irqgap SECONDS - what one interrupt costs the thread it lands on: spins
 * reading the TSC for SECONDS and prints the median of the gaps longer
 * than 500 ns (the time the thread did not run: an interrupt, with what
 * the kernel did in it), their count and their sum.  Run on a CPU of its
 * own under a sampler on another, the median is the cost of one sample
 * (dwarf.sh compares perf record with and without stack copies).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int
cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, per_ns, sum = 0;
	uint64_t t0, c0, prev, end, min_gap, *gap;
	size_t cap = 1u << 20, n = 0;

	if (!(secs > 0 && secs <= 60)) {
		fprintf(stderr, "irqgap: SECONDS from 0 to 60\n");
		return 2;
	}
	if ((gap = malloc(cap * sizeof(*gap))) == NULL) {
		fprintf(stderr, "irqgap: out of memory\n");
		return 1;
	}
	/* the TSC's rate against the monotonic clock, over 100 ms */
	t0 = now_ns();
	c0 = __rdtsc();
	while (now_ns() - t0 < 100000000u)
		;
	per_ns = (double)(__rdtsc() - c0) / (double)(now_ns() - t0);
	min_gap = (uint64_t)(500 * per_ns);
	prev = __rdtsc();
	end = prev + (uint64_t)(secs * 1e9 * per_ns);
	for (;;) {
		uint64_t t = __rdtsc();
		if (t - prev > min_gap && n < cap)
			gap[n++] = t - prev;
		prev = t;
		if (t > end)
			break;
	}
	qsort(gap, n, sizeof(*gap), cmp);
	for (size_t i = 0; i < n; i++)
		sum += (double)gap[i];
	printf("%.2f %zu %.1f\n", n ? (double)gap[n / 2] / per_ns / 1e3 : 0.0, n, sum / per_ns / 1e6);
	return 0;
}
