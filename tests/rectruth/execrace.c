/*
 * execrace PATH N - a pid whose events run on CPU 0 while it execs on CPU
 * 1: a thread pinned to CPU 0 calls getppid() until the exec ends it,
 * the main thread, pinned to CPU 1, execs PATH (this program under another
 * name) with "after N", which pins itself to CPU 0 and calls getppid() N
 * times.  Every event before the exec belongs to the old name, every one
 * after to the new.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s) < 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static volatile long calls;

static void *
spin(void *arg)
{
	(void)arg;
	pin(0);
	for (;;) {
		syscall(SYS_getppid);
		__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	if (argc == 3 && strcmp(argv[1], "after") == 0) {
		long n = atol(argv[2]);
		pin(0);
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		return 0;
	}
	if (argc != 3)
		return 2;
	pin(1);
	if (pthread_create(&t, NULL, spin, NULL) != 0)
		return 1;
	/* the exec comes while the thread's calls go on, however loaded
	 * the machine is */
	nanosleep(&ts, NULL);
	while (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 1000)
		nanosleep(&ts, NULL);
	execl(argv[1], argv[1], "after", argv[2], (char *)NULL);
	perror("execl");
	return 1;
}
