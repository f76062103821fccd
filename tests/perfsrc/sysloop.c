/*
 * sysloop N [M] - a workload with an exactly known number of system calls:
 * N getppid() calls in the process, then (with M) a forked child makes M
 * more and exits; the parent waits.  raw syscall(2) so libc caches nothing.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, m = argc > 2 ? atol(argv[2]) : -1;
	pid_t c;

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	if (m < 0)
		return 0;
	c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		for (long i = 0; i < m; i++)
			syscall(SYS_getppid);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	return 0;
}
