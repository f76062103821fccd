/*
 * badstack.c - a process whose user stack pointer is bad while it burns
 * CPU, for the stack copy of dt.ko and the unwinder behind it:
 *   badstack garbage SECONDS   sp inside a buffer of random words and
 *                              function entry addresses (a corrupted stack)
 *   badstack unmapped SECONDS  sp on a page that is not mapped (nothing
 *                              can be copied)
 *   badstack edge SECONDS      sp 256 bytes of random words below an
 *                              unmapped page (the copy stops short there)
 * The loop touches no memory while sp is bad (no calls, no signals
 * expected), so the process itself never notices.  Prints the bad sp.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "../xorshift.h"

/* About a few ms of emulated CPU per call; r12 keeps the good sp. */
__attribute__((noinline, noclone)) static void
spin_on(void *sp, unsigned long iters)
{
	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %1, %%rsp\n\t"
			 "1: dec %0\n\t"
			 "jnz 1b\n\t"
			 "mov %%r12, %%rsp\n\t"
			 : "+r"(iters)
			 : "r"(sp)
			 : "r12", "memory", "cc");
}

int
main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	double secs;
	struct timespec t0, t;
	unsigned char *sp;

	if (argc != 3) {
		fprintf(stderr, "usage: badstack garbage|unmapped|edge SECONDS\n");
		return 2;
	}
	secs = atof(argv[2]);
	/* two pages, the second unmapped again: a hole right above the first */
	unsigned char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || munmap(m + pg, (size_t)pg) != 0)
		return 1;
	if (strcmp(argv[1], "garbage") == 0) {
		static uint64_t junk[4096];
		uint64_t x = 0x9e3779b97f4a7c15ULL;
		for (size_t i = 0; i < 4096; i++) {
			xorshift64(&x);
			/* function entries are in the text but follow no call */
			junk[i] = i % 3 == 0 ? (uint64_t)(uintptr_t)main + (i % 5) :
				  i % 3 == 1 ? (uint64_t)(uintptr_t)spin_on : x;
		}
		sp = (unsigned char *)&junk[2048];
	} else if (strcmp(argv[1], "unmapped") == 0) {
		sp = m + pg + 512;
	} else if (strcmp(argv[1], "edge") == 0) {
		/* random words, none of them a return address */
		uint64_t x = 0x2545f4914f6cdd1dULL;
		for (long i = 0; i < pg / 8; i++) {
			xorshift64(&x);
			memcpy(m + 8 * i, &x, 8);
		}
		sp = m + pg - 256;
	} else {
		fprintf(stderr, "badstack: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("sp %p\n", (void *)sp);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		spin_on(sp, 2000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
