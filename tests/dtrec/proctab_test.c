/*
 * proctab_test.c - the machine's process table that the sources feed with
 * the kernel's process events (cli/lib/rec/proctab.c), under ASan/UBSan: a fork copies its
 * parent (read from /proc once), exec starts an empty image with its path,
 * a mapping where nothing was keeps the set's start time and one that
 * replaces code moves it, non-executable mappings and the recorder are
 * ignored, a reused pid starts over from its fork, and exited processes'
 * mappings go only once a thousand more have exited (never with keep_all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proctab.h"

#define CHECK_PREFIX "proctab/"
#include "../check.h"

int
main(void)
{
	struct proctab pt;
	const struct kproc *p;
	uint32_t me = (uint32_t)getpid(), kid = 3999990, rx = PROT_READ | PROT_EXEC;
	char why[256];

	memset(&pt, 0, sizeof(pt));
	pt.self = 4000000;	/* the "recorder": no such process */

	proctab_exec(&pt, pt.self, 5, "dtrec", "/bin/dtrec");
	proctab_mmap(&pt, pt.self, 0x1000, 0x1000, 0, rx, "/bin/dtrec", 6);
	check("self-ignored",
	      proctab_proc(&pt, pt.self) == NULL && proctab_known(&pt, pt.self, 7) == NULL,
	      "the recorder has an entry");

	/* this test process stands in for a parent from before the recording */
	proctab_set_comm(&pt, me, "parent");
	proctab_fork(&pt, kid, me, 100);
	const struct kproc *par = proctab_proc(&pt, me);
	p = proctab_proc(&pt, kid);
	snprintf(why, sizeof(why), "parent %zu maps, child %zu, ts %llu, ppid %u",
		 par ? par->nmaps : 0, p ? p->nmaps : 0, p ? (unsigned long long)p->ts : 0,
		 p ? p->ppid : 0);
	check("fork-copies-parent",
	      par && par->nmaps > 0 && p && p->nmaps == par->nmaps && p->ts == 100 &&
	      p->ppid == me, why);
	uint32_t gen = p ? p->gen : 0;

	proctab_exec(&pt, kid, 200, "prog", "/bin/prog");
	p = proctab_proc(&pt, kid);
	check("exec-new-image",
	      p && p->nmaps == 0 && !strcmp(p->exe, "/bin/prog") && !strcmp(p->comm, "prog") &&
	      p->ts == 200 && p->gen > gen, "not an empty image named /bin/prog");

	proctab_mmap(&pt, kid, 0x10000, 0x2000, 0x1000, rx, "/bin/prog", 210);
	proctab_mmap(&pt, kid, 0x20000, 0x1000, 0, PROT_READ | PROT_WRITE, "/data", 211);
	proctab_mmap(&pt, kid, 0x30000, 0x1000, 0, rx, "/lib/liba.so", 212);
	p = proctab_proc(&pt, kid);
	snprintf(why, sizeof(why), "%zu maps, ts %llu", p ? p->nmaps : 0,
		 p ? (unsigned long long)p->ts : 0);
	check("additive-keeps-start",
	      p && p->nmaps == 2 && p->ts == 200 && p->maps[0].start == 0x10000 &&
	      p->maps[0].end == 0x12000 && p->maps[0].offset == 0x1000 && p->maps[0].prot == 5, why);

	proctab_mmap(&pt, kid, 0x30800, 0x1000, 0, rx, "/lib/libb.so", 230);
	p = proctab_proc(&pt, kid);
	snprintf(why, sizeof(why), "%zu maps, ts %llu, last %s", p ? p->nmaps : 0,
		 p ? (unsigned long long)p->ts : 0, p && p->nmaps ? p->maps[p->nmaps - 1].name : "-");
	check("replacing-moves-start",
	      p && p->nmaps == 2 && p->ts == 230 && !strcmp(p->maps[1].name, "/lib/libb.so"), why);

	/* exit, two reads: still there for late samples */
	proctab_exit(&pt, kid);
	proctab_read_end(&pt);
	proctab_read_end(&pt);
	p = proctab_proc(&pt, kid);
	check("exited-kept", p && p->nmaps == 2, "an exited process lost its mappings at once");

	/* the pid comes back as a new process: its fork starts it over */
	proctab_fork(&pt, kid, me, 300);
	p = proctab_proc(&pt, kid);
	check("reused-pid-refork",
	      p && par && p->ts == 300 && p->nmaps == proctab_proc(&pt, me)->nmaps &&
	      strcmp(p->exe, "/bin/prog") != 0, "kept the dead process's image");

	/* a fork whose child's own events came first does not overwrite them */
	proctab_exec(&pt, kid + 1, 400, "early", "/bin/early");
	proctab_fork(&pt, kid + 1, me, 390);
	p = proctab_proc(&pt, kid + 1);
	check("child-first", p && !strcmp(p->exe, "/bin/early") && p->ppid == me,
	      "the fork copied the parent over the child's own exec");

	/* many exits: the oldest go, the newest stay */
	for (uint32_t i = 0; i < 2100; i++) {
		proctab_exec(&pt, 100000 + i, 500 + i, "x", "/bin/x");
		proctab_mmap(&pt, 100000 + i, 0x1000, 0x1000, 0, rx, "/bin/x", 0);
		proctab_exit(&pt, 100000 + i);
		proctab_read_end(&pt);
	}
	proctab_read_end(&pt);
	proctab_read_end(&pt);
	snprintf(why, sizeof(why), "oldest %s, newest %s",
		 proctab_proc(&pt, 100000) ? "kept" : "gone",
		 proctab_proc(&pt, 100000 + 2099) ? "kept" : "gone");
	check("exited-bounded",
	      proctab_proc(&pt, 100000) == NULL && proctab_proc(&pt, 100000 + 2099) != NULL, why);
	proctab_free(&pt);

	/* a flight recorder forgets nothing */
	memset(&pt, 0, sizeof(pt));
	pt.self = 4000000;
	pt.keep_all = 1;
	for (uint32_t i = 0; i < 2100; i++) {
		proctab_exec(&pt, 100000 + i, 500 + i, "x", "/bin/x");
		proctab_exit(&pt, 100000 + i);
		proctab_read_end(&pt);
	}
	check("keep-all",
	      proctab_proc(&pt, 100000) != NULL && pt.nexited == 0 && pt.ngone == 0,
	      "a flight recorder's table forgot a process");
	proctab_free(&pt);
	return check_status();
}
