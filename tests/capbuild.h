/*
 * capbuild.h - what the C generators of test captures (tests/report/mkcap.c,
 * tests/export/awkcap.c) share: a seeded LCG, so a seed gives the same
 * capture on every machine; the synthetic host every test capture claims;
 * the one error exit; counters that say every event was read.  Header
 * only: each generator is one C file linked against libdtcap alone.
 */
#ifndef DT_TESTS_CAPBUILD_H
#define DT_TESTS_CAPBUILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"

static uint64_t cb_lcg;

static inline void cb_seed(unsigned seed)
{
	cb_lcg = seed * 0x9e3779b97f4a7c15ULL + 1;
}

/* uniform enough in [0, n) for test data; n > 0 */
static inline uint32_t cb_rnd(uint32_t n)
{
	cb_lcg = cb_lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(cb_lcg >> 33) % n;
}

/* Prints "PROG: WHAT: reason" (the writer's error, or dtcap_create's when
 * w is NULL) and returns the exit status 1. */
static inline int cb_die(const char *prog, const char *what, struct dtcap_writer *w)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, w ? dtcap_writer_error(w) : dtcap_create_error());
	return 1;
}

/* The host of a synthetic capture: recorded at mono 1 s, 2023-11-14 real
 * time, kernel 6.1.0-test on "testhost"; command is copied (cut to fit). */
static inline void cb_host(struct dtcap_host *h, unsigned ncpus, const char *command)
{
	memset(h, 0, sizeof(*h));
	h->ncpus = ncpus;
	h->clock_mono_ns = 1000000000ULL;
	h->clock_real_ns = 1700000000000000000LL;
	h->start_ns = 1000000000ULL;
	snprintf(h->kernel, sizeof(h->kernel), "6.1.0-test");
	snprintf(h->hostname, sizeof(h->hostname), "testhost");
	snprintf(h->command, sizeof(h->command), "%s", command);
}

/* "usage: PROG OUT.dtc [SEED] [NEVENTS]" parsed; returns 0, or prints the
 * usage and returns 2 (the exit status). */
static inline int cb_args(int argc, char **argv, const char *prog, unsigned *seed, unsigned *nev)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s OUT.dtc [SEED] [NEVENTS]\n", prog);
		return 2;
	}
	*seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
	*nev = argc > 3 ? (unsigned)atoi(argv[3]) : 20000;
	cb_seed(*seed);
	return 0;
}

#endif
