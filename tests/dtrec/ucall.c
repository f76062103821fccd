/*
 * ucall N WHO - call libdtuc.so's uc_hit(i, WHO) for i = 0..N-1, after
 * waiting (up to 10 s) for the file ./go, so that two of them started
 * together call at the same time.  Exit 0 when every return value was
 * right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "libdtuc.h"

int
main(int argc, char **argv)
{
	long n, who, bad = 0;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || (who = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: ucall N WHO (both > 0)\n");
		return 2;
	}
	for (int t = 0; t < 1000 && access("go", F_OK) != 0; t++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	for (long i = 0; i < n; i++)
		bad += uc_hit(i, who) != 2 * i + who;
	if (bad) {
		fprintf(stderr, "ucall: %ld wrong return values\n", bad);
		return 1;
	}
	return 0;
}
