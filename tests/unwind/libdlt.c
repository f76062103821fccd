/*
 * libdlt.c - the library dlprog loads with dlopen(3): a two-deep call
 * chain that burns CPU, so profile samples land in it.  Its frames must be
 * named in a capture of a process that was gone before dtrec could read
 * its /proc.
 */
#include <stdint.h>

__attribute__((noinline)) uint64_t
dlt_inner(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t
dlt_spin(uint64_t x)
{
	return dlt_inner(x) ^ 1;
}
