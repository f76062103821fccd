/*
 * xorshift.h - Marsaglia's xorshift64 (shifts 13, 7, 17): the reproducible
 * pseudo-random numbers of the test tools.  Each tool keeps its own state
 * and seed, so its sequence is its own; the state must not be 0.
 */
#ifndef DT_TESTS_XORSHIFT_H
#define DT_TESTS_XORSHIFT_H

#include <stdint.h>

/* Advance *s and return the new state. */
static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#endif
