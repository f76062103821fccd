/*
 * count - the independent path for the SQL tests: walk a capture row by
 * row with dtcap_iter (no SQL, no block index tricks of dtsql) and print
 * counts in the same sorted "key count" form the tests build from SQL.
 *
 *	count FILE [TMIN TMAX]
 *
 * Prints "total N", then "comm NAME N", "pid P N", "probe ID N" lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"

#define MAXK 65536

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: count FILE [TMIN TMAX]\n");
		return 2;
	}
	struct dtcap_reader *r = dtcap_open(argv[1]);
	if (r == NULL) {
		fprintf(stderr, "count: %s\n", dtcap_open_error());
		return 1;
	}
	uint64_t lo = argc == 4 ? strtoull(argv[2], NULL, 0) : 0;
	uint64_t hi = argc == 4 ? strtoull(argv[3], NULL, 0) : UINT64_MAX;
	struct dtcap_iter *it = dtcap_iter_new(r, lo, hi, DTCAP_COL_ALL);
	if (it == NULL) {
		fprintf(stderr, "count: %s\n", dtcap_reader_error(r));
		return 1;
	}
	static uint64_t comm[MAXK], pid[MAXK], probe[MAXK];
	uint64_t total = 0;
	struct dtcap_event e;
	int rc;
	while ((rc = dtcap_iter_next(it, &e)) == 1) {
		/* the iterator works at block granularity: keep only the range */
		if (e.ts < lo || e.ts > hi)
			continue;
		total++;
		comm[e.comm % MAXK]++;
		pid[e.pid % MAXK]++;
		probe[e.probe % MAXK]++;
	}
	if (rc < 0) {
		fprintf(stderr, "count: %s\n", dtcap_reader_error(r));
		return 1;
	}
	printf("total %" PRIu64 "\n", total);
	for (uint32_t i = 0; i < MAXK; i++)
		if (comm[i])
			printf("comm %s %" PRIu64 "\n", i ? dtcap_comm(r, i) : "", comm[i]);
	for (uint32_t i = 0; i < MAXK; i++)
		if (pid[i])
			printf("pid %u %" PRIu64 "\n", i, pid[i]);
	for (uint32_t i = 0; i < MAXK; i++)
		if (probe[i])
			printf("probe %u %" PRIu64 "\n", i, probe[i]);
	dtcap_iter_free(it);
	dtcap_reader_close(r);
	return 0;
}
