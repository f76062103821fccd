/*
 * workload N SPIN - the fixed workload of the host benchmarks: N getppid()
 * system calls interleaved with SPIN iterations of arithmetic per call, in
 * a five-deep call chain built with frame pointers.  Prints its own
 * elapsed CLOCK_MONOTONIC ns on stdout, so tracer start-up and teardown
 * never count as the workload's time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t
compute(uint64_t x, long spin)
{
	for (long i = 0; i < spin; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) static uint64_t
one(uint64_t x, long spin)
{
	x += (uint64_t)syscall(SYS_getppid);
	return compute(x, spin);
}

__attribute__((noinline)) static uint64_t
batch(uint64_t x, long n, long spin)
{
	for (long i = 0; i < n; i++)
		x = one(x, spin);
	return x;
}

__attribute__((noinline)) static uint64_t
run(long n, long spin)
{
	return batch(1, n, spin);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, spin = argc > 2 ? atol(argv[2]) : 2000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	sink = run(n, spin);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (long long)((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec));
	return 0;
}
