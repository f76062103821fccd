/*
 * argprog N - a workload whose syscall and scheduler arguments are known:
 * N openat(AT_FDCWD, itself, O_RDONLY | O_DIRECTORY), each failing with
 * ENOTDIR (nothing else opens with O_DIRECTORY), then N sleeps of 2 ms,
 * each a sched_switch away from argprog.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 7;
	struct timespec ts = { 0, 2000000 };

	for (long i = 0; i < n; i++)
		if (syscall(SYS_openat, AT_FDCWD, argv[0], O_RDONLY | O_DIRECTORY) >= 0)
			return 1;
	for (long i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 0;
}
