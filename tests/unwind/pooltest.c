/*
 * pooltest.c - the unwinding pool's routing (cli/lib/rec/unwind_pool.c): a
 * process is owned by one worker, which alone is told its address-space
 * changes, so every mapping is queued once whatever the number of workers;
 * a fork within one worker is copied there, one across workers is left to
 * the caller (the machine tells the child's mappings).
 */
#define CHECK_PREFIX "pool/"
#include "../check.h"

#include <stdint.h>

#include "unwind_pool.h"

int
main(void)
{
	enum { WORKERS = 4, PROCS = 8, MAPS = 5 };
	struct dtunw_pool *p = dtunw_pool_new(WORKERS, 1 << 20, DTUNW_DWARF);

	if (!check("new", p != NULL, "out of memory"))
		return check_status();
	for (uint32_t pid = 100; pid < 100 + PROCS; pid++)
		for (int k = 0; k < MAPS; k++)
			dtunw_pool_map(p, pid, 0x400000 + 0x1000 * (uint64_t)k, 0x1000, 0,
				       "/nonexistent/pooltest");
	checkf("maps-told-once", dtunw_pool_told(p) == PROCS * MAPS,
	       "%llu changes queued for %d mappings of %d processes over %d workers",
	       (unsigned long long)dtunw_pool_told(p), PROCS * MAPS, PROCS, WORKERS);
	/* 100 and 104 share worker 0; 101 is worker 1's */
	checkf("fork-same-worker", dtunw_pool_fork(p, 100, 104) == 0 &&
	       dtunw_pool_told(p) == PROCS * MAPS + 1, "not copied by the owner (%llu queued)",
	       (unsigned long long)dtunw_pool_told(p));
	checkf("fork-across-workers", dtunw_pool_fork(p, 100, 101) < 0 &&
	       dtunw_pool_told(p) == PROCS * MAPS + 1,
	       "a fork across workers was queued (%llu): the child's worker has no parent maps",
	       (unsigned long long)dtunw_pool_told(p));
	dtunw_pool_forget(p, 101);
	checkf("forget-once", dtunw_pool_told(p) == PROCS * MAPS + 2, "%llu queued",
	       (unsigned long long)dtunw_pool_told(p));
	dtunw_pool_drain(p);
	dtunw_pool_free(p);
	return check_status();
}
