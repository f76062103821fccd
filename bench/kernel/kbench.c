/*
 * kbench.c - the kernel benchmark, run inside the VM (static binary).
 *
 *	kbench CALLS ROUNDS
 *
 * Cost of getppid() on CPU 0: untraced, with dt's syscall:getppid:entry
 * and :return enabled, and with ftrace's raw_syscalls:sys_enter/sys_exit.
 * Both tracers get a reader on CPU 1 that drains them the same way, and
 * both record the same events (the loop makes no other syscall).  TCG
 * timings are emulated, so only ratios within this one boot are printed.
 * Then the same traced load's drops with the smallest ring and the default.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"

#define TR "/sys/kernel/tracing/"

static unsigned char buf[1 << 20];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static int put(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* ns per call of a getppid loop on the calling CPU */
static double loop(long n)
{
	double t0 = now();

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (now() - t0) * 1e9 / n;
}

/*
 * A reader blocked in read(), as a real consumer is: both tracers then pay
 * for their own wakeups.  cpu < 0: unpinned.
 */
static pid_t reader(int fd, int cpu)
{
	pid_t p = fork();

	if (p == 0) {
		if (cpu >= 0)
			pin(cpu);
		else {
			cpu_set_t s;

			CPU_ZERO(&s);
			CPU_SET(0, &s);
			CPU_SET(1, &s);
			sched_setaffinity(0, sizeof(s), &s);
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		for (;;)
			if (read(fd, buf, sizeof(buf)) < 0 && errno != EINTR)
				usleep(1000);
	}
	return p;
}

static void stop_reader(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

static dt_u32 find(int fd, const char *func, const char *name)
{
	struct dt_probe_list pl = { 0 };
	struct dt_probe_info *p;
	dt_u32 id = 0;

	if (ioctl(fd, DTIOCGPLIST, &pl) < 0)
		return 0;
	p = calloc(pl.dtpl_count, sizeof(*p));
	pl.dtpl_probes = (uintptr_t)p;
	if (!p || ioctl(fd, DTIOCGPLIST, &pl) < 0)
		return 0;
	for (unsigned i = 0; i < pl.dtpl_count; i++)
		if (!strcmp(p[i].dtpi_prov, "syscall") && !strcmp(p[i].dtpi_func, func) &&
		    !strcmp(p[i].dtpi_name, name))
			id = p[i].dtpi_id;
	free(p);
	return id;
}

/* One dt session: ns per call, and its stats after draining. */
static int dt_run(long n, dt_u32 bufsz, int rcpu, double *ns, struct dt_stats *st)
{
	int fd = open(DT_DEVICE, O_RDWR);
	dt_u32 on = 1, off = 0;

	if (fd < 0)
		return -1;
	dt_u32 e = find(fd, "getppid", "entry"), r = find(fd, "getppid", "return");
	struct dt_enable en1 = { .dten_id = e, .dten_evtflags = DTEVT_FUNCARGS };
	struct dt_enable en2 = { .dten_id = r, .dten_evtflags = DTEVT_FUNCARGS };
	if (!e || !r || (bufsz && ioctl(fd, DTIOCSETBUFSZ, &bufsz) < 0) ||
	    ioctl(fd, DTIOCPRBENABLE, &en1) < 0 || ioctl(fd, DTIOCPRBENABLE, &en2) < 0 ||
	    ioctl(fd, DTIOCRECORD, &on) < 0) {
		close(fd);
		return -1;
	}
	pid_t rd = reader(fd, rcpu);
	usleep(50000);
	*ns = loop(n);
	usleep(200000);
	stop_reader(rd);
	ioctl(fd, DTIOCRECORD, &off);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	memset(st, 0, sizeof(*st));
	ioctl(fd, DTIOCGSTATS, st);
	close(fd);
	return 0;
}

static int ft_run(long n, double *ns)
{
	int fd;

	if (put(TR "tracing_on", "0") || put(TR "trace", "") ||
	    put(TR "buffer_size_kb", "1024") ||
	    put(TR "events/raw_syscalls/sys_enter/enable", "1") ||
	    put(TR "events/raw_syscalls/sys_exit/enable", "1"))
		return -1;
	fd = open(TR "per_cpu/cpu0/trace_pipe_raw", O_RDONLY);
	if (fd < 0)
		return -1;
	put(TR "tracing_on", "1");
	pid_t rd = reader(fd, 1);
	usleep(50000);
	*ns = loop(n);
	put(TR "tracing_on", "0");
	stop_reader(rd);
	close(fd);
	put(TR "events/raw_syscalls/sys_enter/enable", "0");
	put(TR "events/raw_syscalls/sys_exit/enable", "0");
	put(TR "trace", "");
	return 0;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	double base[16], dt[16], ft[16];
	struct dt_stats st;

	if (rounds < 1 || rounds > 16 || n < 1000)
		return 2;
	pin(0);
	loop(n / 10);	/* warm up */
	/* Interleaved rounds: drift of the host load hits all three alike. */
	for (int i = 0; i < rounds; i++) {
		base[i] = loop(n);
		if (dt_run(n, 0, 1, &dt[i], &st)) {
			fprintf(stderr, "kbench: dt session failed: %s\n", strerror(errno));
			return 1;
		}
		if (ft_run(n, &ft[i])) {
			fprintf(stderr, "kbench: ftrace setup failed: %s\n", strerror(errno));
			return 1;
		}
		printf("# round %d: untraced %.1f ns/call, dt %.1f, ftrace %.1f (emulated ns)\n",
		    i, base[i], dt[i], ft[i]);
	}
	/*
	 * Host load only ever adds time to an emulated run, so the fastest
	 * round of each is the least disturbed; medians are shown for scale.
	 */
	qsort(base, rounds, sizeof(double), cmpd);
	qsort(dt, rounds, sizeof(double), cmpd);
	qsort(ft, rounds, sizeof(double), cmpd);
	printf("# medians over %d rounds of %ld calls: untraced %.1f, dt +%.1f, ftrace +%.1f\n",
	    rounds, n, base[rounds / 2], dt[rounds / 2] - base[rounds / 2],
	    ft[rounds / 2] - base[rounds / 2]);
	double b = base[0], d = dt[0] - b, f = ft[0] - b;
	printf("# fastest rounds: untraced %.1f, dt +%.1f, ftrace +%.1f ns/call\n", b, d, f);
	printf("bench kernel.syscall_cost_vs_ftrace %.3f ratio\n", f > 0 ? d / f : -1.0);
	printf("target <= 1.0\n");
	printf("bench kernel.dt_added_vs_untraced %.3f ratio\n", d / b);
	printf("bench kernel.ftrace_added_vs_untraced %.3f ratio\n", f / b);

	/*
	 * Drops.  OpenBSD's ring is 16 fixed 456-byte slots; ours holds
	 * variable records, so the smallest ring, DT_BUFSZ_MIN bytes, stands
	 * in for it (how many of this load's records it holds is printed).
	 * The reader shares CPU 0 with the loop here: under TCG an idle vCPU
	 * thread can wait on the host for tens of milliseconds, which would
	 * measure the host's scheduler rather than dt's wakeups.
	 */
	struct dt_stats s16, sdef;
	double ns;
	if (dt_run(n, DT_BUFSZ_MIN, 0, &ns, &s16) || dt_run(n, 0, 0, &ns, &sdef)) {
		fprintf(stderr, "kbench: dt session failed: %s\n", strerror(errno));
		return 1;
	}
	dt_u32 recsz = DT_REC_SIZE(6, 0, 0) / 2 + DT_REC_SIZE(2, 0, 0) / 2;
	printf("# DT_BUFSZ_MIN = %u bytes holds about %u records of %u bytes average "
	    "(6-argument entries, 2-argument returns) per CPU\n", DT_BUFSZ_MIN,
	    DT_BUFSZ_MIN / recsz, recsz);
	printf("# min ring: produced %" PRIu64 " read %" PRIu64 " dropped %" PRIu64
	    "; default ring (%u bytes): produced %" PRIu64 " read %" PRIu64 " dropped %" PRIu64 "\n",
	    s16.dtst_produced, s16.dtst_read, s16.dtst_dropped, DT_BUFSZ_DEFAULT,
	    sdef.dtst_produced, sdef.dtst_read, sdef.dtst_dropped);
	printf("bench kernel.drops_16_slots %" PRIu64 " events\n", s16.dtst_dropped);
	printf("bench kernel.drops_default_ring %" PRIu64 " events\n", sdef.dtst_dropped);
	printf("target == 0\n");
	return 0;
}
