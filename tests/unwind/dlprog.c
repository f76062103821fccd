/*
 * dlprog.c - dlprog LIB [MS]: dlopen LIB, call its dlt_spin in a loop for
 * MS milliseconds (30 by default), exit.  Under dtrec its samples must be
 * named whole (dlprog's frames and the library's), although the process
 * is gone long before anything could read /proc/PID/maps.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t
dlprog_loop(uint64_t (*spin)(uint64_t), uint64_t ms)
{
	uint64_t t0 = now_ns(), x = 1;

	while (now_ns() - t0 < ms * 1000000ULL)
		x += spin(x);
	return x;
}

int
main(int argc, char **argv)
{
	void *h;
	uint64_t (*spin)(uint64_t);

	if (argc < 2) {
		fprintf(stderr, "usage: dlprog LIB [MS]\n");
		return 2;
	}
	if ((h = dlopen(argv[1], RTLD_NOW)) == NULL) {
		fprintf(stderr, "dlprog: %s\n", dlerror());
		return 1;
	}
	*(void **)&spin = dlsym(h, "dlt_spin");
	if (spin == NULL) {
		fprintf(stderr, "dlprog: %s\n", dlerror());
		return 1;
	}
	return dlprog_loop(spin, argc > 2 ? strtoull(argv[2], NULL, 10) : 30) == 42;
}
