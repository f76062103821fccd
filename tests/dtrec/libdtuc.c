/*
 * libdtuc.so - a shared library function for the VM's uprobe test: two
 * processes (tests/dtrec/ucall.c) call it at once, so one probe site in a
 * file mapped by both must count each process's calls exactly.
 */
#include "libdtuc.h"

/* noinline and a side effect: the call stays a call, one probe hit each */
__attribute__((noinline)) long
uc_hit(long i, long who)
{
	static volatile long sink;

	sink += i;
	return i * 2 + who;
}
