/*
 * check_test.c - tests/check.h from several threads at once, as
 * ring_test's would use it: NTHREAD threads each write NCHECK assertions,
 * every other one failing with a reason long enough that a line written in
 * pieces would be cut by another thread's.  Prints the lines check.h
 * writes (run.sh parses them) and then "count N status S": check.h's
 * count of failures and check_status().
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#define NTHREAD	8
#define NCHECK	400

static void *worker(void *arg)
{
	int t = (int)(long)arg;
	char name[32], why[600];

	memset(why, 'a' + t, sizeof(why) - 1);
	why[sizeof(why) - 1] = '\0';
	for (int i = 0; i < NCHECK; i++) {
		snprintf(name, sizeof(name), "t%d.%d", t, i);
		if (i % 2)
			checkf(name, 0, "%s|%s", why, why);
		else
			check(name, 1, "");
	}
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREAD];

	for (long t = 0; t < NTHREAD; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < NTHREAD; t++)
		pthread_join(th[t], NULL);
	/* a plain read: an atomic load of the atomic count */
	printf("count %u status %d\n", (unsigned)check_nfail, check_status());
	return 0;
}
