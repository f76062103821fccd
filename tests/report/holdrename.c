/*
 * holdrename.so - LD_PRELOAD for the report suite's interrupted-write
 * test: rename(2) waits up to 30 s before it runs, so a finished
 * output's temporary file is still there, not yet renamed over the
 * user's file, when the test's signal lands.  Without this the test
 * raced the write: a fast graph was often renamed before any signal.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");

	/* sleep returns early when a handled signal interrupts it */
	sleep(30);
	return real ? real(from, to) : -1;
}
