/*
 * unwpooltsan.c - the unwinding pool's sample path under TSan: the reader
 * submits while workers unwind, spool and return records, and collects as
 * it goes, as a recording does.  Every sample comes back exactly once,
 * with its own record (its tid says which), whether it waited in memory or
 * in the spool file; samples of a process come back in submission order.
 * Usage: unwpooltsan SPOOLDIR   (UNWPOOL_DEBUG=1: the first wrong records
 * on stderr)
 */
#define CHECK_PREFIX "unwpool-tsan/"
#include "../check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"
#include "unwind_pool.h"

enum { WORKERS = 3, PROCS = 7, N = 6000, STACK = 512 };

static int
run(const char *dir, size_t budget, const char *name)
{
	struct dtunw_spool sp = { dir, 64u << 20, 0 };
	struct dtunw_pool *p = dtunw_pool_new_spool(WORKERS, budget, DTUNW_DWARF, &sp);
	uint64_t regs[__builtin_popcountll(DTUNW_REGS_MASK)];
	unsigned char stack[STACK], *seen = calloc(N, 1);
	size_t cap = 1u << 20, got = 0, refused = 0, bad = 0, disorder = 0;
	char *buf = malloc(cap);
	uint32_t last[PROCS];
	uint64_t spooled = 0, peak = 0, lost = 0;

	if (p == NULL || seen == NULL || buf == NULL) {
		check(name, 0, "out of memory");
		return -1;
	}
	memset(regs, 0, sizeof(regs));
	memset(stack, 0xa5, sizeof(stack));
	memset(last, 0, sizeof(last));
	for (uint32_t i = 0; i <= N; i++) {
		size_t used = 0;
		if (i < N) {
			/* a one-frame record of process 900000 + i % PROCS
			 * (none such: unwinding stops at its pc, which is
			 * also its frame-pointer stack's one frame) */
			uint64_t buf8[(sizeof(struct dt_rec) + 8) / 8 + 1];
			struct dt_rec *d = (struct dt_rec *)(void *)buf8;
			memset(buf8, 0, sizeof(buf8));
			d->dtr_size = (uint32_t)DT_REC_SIZE(0, 0, 1);
			d->dtr_pid = 900000 + i % PROCS;
			d->dtr_tid = i + 1;
			d->dtr_nustack = 1;
			memcpy(d + 1, &(uint64_t){ 0x401000 + i }, 8);
			/* the pc the unwinder starts from: the same */
			regs[__builtin_popcountll(DTUNW_REGS_MASK & ((1ULL << DTUNW_REG_IP) - 1))] =
				0x401000 + i;
			if (dtunw_pool_submit(p, d, regs, DTUNW_REGS_MASK, stack, sizeof(stack)) < 0)
				refused++;
			used = dtunw_pool_collect(p, buf, cap);
		} else {
			dtunw_pool_drain(p);
			used = dtunw_pool_read_end(p, buf, 0, cap, 1);
		}
		for (size_t off = 0; off + sizeof(struct dt_rec) <= used;) {
			const struct dt_rec *d = (const struct dt_rec *)(const void *)(buf + off);
			uint32_t k = d->dtr_tid - 1;
			uint64_t pc = 0;
			if (d->dtr_size < sizeof(*d) || off + d->dtr_size > used)
				break;
			if (d->dtr_nustack == 1)
				memcpy(&pc, d + 1, 8);
			if (k >= N || seen[k] || pc != 0x401000 + k || d->dtr_pid != 900000 + k % PROCS) {
				if (getenv("UNWPOOL_DEBUG") && bad < 3)
					fprintf(stderr, "k %u seen %d pc %#llx nu %u pid %u size %u\n", k,
						k < N ? seen[k] : -1, (unsigned long long)pc,
						d->dtr_nustack, d->dtr_pid, d->dtr_size);
				bad++;
			}
			else
				seen[k] = 1;
			if (k < N && k + 1 <= last[k % PROCS])
				disorder++;
			if (k < N)
				last[k % PROCS] = k + 1;
			got++;
			off += d->dtr_size;
		}
	}
	dtunw_pool_spool_stats(p, &spooled, &peak, &lost);
	checkf(name, got + refused == N && bad == 0 && disorder == 0 && lost == 0,
	       "%zu of %d back (%zu refused), %zu wrong, %zu out of order, %llu spooled, %llu lost",
	       got, N, refused, bad, disorder, (unsigned long long)spooled,
	       (unsigned long long)lost);
	dtunw_pool_free(p);
	free(seen);
	free(buf);
	return (int)spooled;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	int spooled;

	/* in memory: a budget for every sample */
	run(dir, 64u << 20, "memory");
	/* a budget for none: every sample through the spool file */
	spooled = run(dir, 1, "spool");
	checkf("spool-used", spooled == N, "%d of %d samples went through the spool file",
	       spooled, N);
	/* a budget for a handful: memory, the file, memory behind it, as the
	 * workers keep up or not */
	run(dir, 8 * (STACK + 512), "mixed");
	return check_status();
}
