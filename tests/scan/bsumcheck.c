/*
 * bsumcheck - every block summary of a capture against the block's own
 * decoded rows: events by probe, by CPU, by comm, by pid, and each pid's
 * latest named row's comm.  Prints PASS/FAIL NAME lines.
 *	bsumcheck NAME CAPTURE [none]
 * With "none", the capture must have no summary at all (an old one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"

/* value of key k in a list of width-w entries, 0 when absent */
static uint64_t lookup(const uint64_t *v, uint32_t n, unsigned w, uint64_t k, unsigned col)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[(size_t)i * w] == k)
			return v[(size_t)i * w + col];
	return 0;
}

/*
 * A (key, count) list of a summary against the block's column: each key's
 * count is the number of rows holding it.  Returns 1, with why filled, on
 * the first key that differs; 0 when all agree.
 */
static int list_ok(const char *what, const uint64_t *list, uint32_t n, const uint32_t *col,
		   uint32_t rows, size_t blk, char *why, size_t whysz)
{
	for (uint32_t k = 0; k < n; k++) {
		uint64_t c = 0;
		for (uint32_t j = 0; j < rows; j++)
			c += col[j] == list[2 * k];
		if (c != list[2 * k + 1]) {
			snprintf(why, whysz, "block %zu %s %llu: %llu, rows say %llu", blk, what,
				 (unsigned long long)list[2 * k], (unsigned long long)list[2 * k + 1],
				 (unsigned long long)c);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *name = argv[1];
	int none = argc > 3 && !strcmp(argv[3], "none");
	struct dtcap_reader *r = dtcap_open(argv[2]);
	if (!r) {
		printf("FAIL %s: %s\n", name, dtcap_open_error());
		return 0;
	}
	struct dtcap_block *b = dtcap_block_new();
	size_t nb = dtcap_nblocks(r), bad = 0, have = 0;
	char why[256] = "";
	for (size_t i = 0; i < nb && !bad; i++) {
		struct dtcap_blocksum s;
		if (!dtcap_block_summary(r, i, &s))
			continue;
		have++;
		if (dtcap_read_block(r, i, DTCAP_COL_PROBE | DTCAP_COL_CPU | DTCAP_COL_COMM |
				     DTCAP_COL_PID, b)) {
			snprintf(why, sizeof(why), "%s", dtcap_reader_error(r));
			bad++;
			break;
		}
		/* every row's keys are in the lists; the lists add up to rows */
		uint64_t tp = 0, tc = 0, tm = 0, tq = 0;
		for (uint32_t k = 0; k < s.nprobe; k++) tp += s.probe[2 * k + 1];
		for (uint32_t k = 0; k < s.ncpu; k++) tc += s.cpu[2 * k + 1];
		for (uint32_t k = 0; k < s.ncomm; k++) tm += s.comm[2 * k + 1];
		for (uint32_t k = 0; k < s.npid; k++) tq += s.pid[3 * k + 1];
		if (tp != b->rows || tc != b->rows || tm != b->rows || tq != b->rows) {
			snprintf(why, sizeof(why), "block %zu: lists do not add up to %u rows", i, b->rows);
			bad++;
			break;
		}
		if (list_ok("probe", s.probe, s.nprobe, b->probe, b->rows, i, why, sizeof(why)) ||
		    list_ok("cpu", s.cpu, s.ncpu, b->cpu, b->rows, i, why, sizeof(why)) ||
		    list_ok("comm", s.comm, s.ncomm, b->comm, b->rows, i, why, sizeof(why)))
			bad++;
		for (uint32_t j = 0; j < b->rows && !bad; j++) {
			uint64_t n = lookup(s.pid, s.npid, 3, b->pid[j], 1);
			if (!n)
				snprintf(why, sizeof(why), "block %zu: pid %u missing", i, b->pid[j]), bad++;
		}
		for (uint32_t k = 0; k < s.npid && !bad; k++) {
			uint64_t n = 0, latest = 0;
			for (uint32_t j = 0; j < b->rows; j++)
				if (b->pid[j] == s.pid[3 * k]) {
					n++;
					if (b->comm[j])
						latest = b->comm[j];
				}
			if (n != s.pid[3 * k + 1] || latest != s.pid[3 * k + 2])
				snprintf(why, sizeof(why), "block %zu pid %llu: events %llu/%llu comm %llu/%llu",
					 i, (unsigned long long)s.pid[3 * k],
					 (unsigned long long)s.pid[3 * k + 1], (unsigned long long)n,
					 (unsigned long long)s.pid[3 * k + 2],
					 (unsigned long long)latest), bad++;
		}
	}
	if (bad)
		printf("FAIL %s: %s\n", name, why);
	else if (none && have)
		printf("FAIL %s: %zu blocks have a summary, none expected\n", name, have);
	else if (!none && have != nb)
		printf("FAIL %s: %zu of %zu blocks have a summary\n", name, have, nb);
	else
		printf("PASS %s\n", name);
	dtcap_block_free(b);
	dtcap_reader_close(r);
	return 0;
}
