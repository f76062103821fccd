/*
 * pingpong ping|pong N - two processes that wake each other N times
 * through pipes, for the flight recorder's drop counts (issue 23): ping
 * (the recorded target) waits for a first byte on its standard input,
 * then N times writes a byte to its standard output and reads one back;
 * pong (not recorded) waits for a first byte on descriptor 3, hands one
 * to ping, then N times reads a byte and writes one back.  Each round
 * ping wakes pong (an event of the target) and pong wakes ping (an event
 * the target's sched_wakeup counts in the kernel but never writes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
xfer(int fd, int out)
{
	char c = 'x';
	ssize_t k = out ? write(fd, &c, 1) : read(fd, &c, 1);

	if (k != 1) {
		fprintf(stderr, "pingpong: %s of descriptor %d: %s\n", out ? "write" : "read", fd,
			k < 0 ? "failed" : "end of file");
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	char *end;
	long n;

	if (argc != 3 || (strcmp(argv[1], "ping") && strcmp(argv[1], "pong")) ||
	    (n = strtol(argv[2], &end, 10)) < 0 || *end != '\0') {
		fprintf(stderr, "usage: pingpong ping|pong N\n");
		return 2;
	}
	if (argv[1][1] == 'i') {
		xfer(0, 0);
		for (long i = 0; i < n; i++) {
			xfer(1, 1);
			xfer(0, 0);
		}
	} else {
		xfer(3, 0);
		xfer(1, 1);
		for (long i = 0; i < n; i++) {
			xfer(0, 0);
			xfer(1, 1);
		}
	}
	return 0;
}
