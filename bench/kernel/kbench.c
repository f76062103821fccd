/*
 * kbench.c - the kernel benchmark, run inside the VM (static binary).
 *
 *	kbench CALLS ROUNDS
 *
 * Cost of getppid() on CPU 0: untraced; with dt's syscall:getppid:entry
 * and :return against ftrace's raw_syscalls:sys_enter/sys_exit; with dt's
 * entry probe alone against perf record -e syscalls:sys_enter_getppid;
 * and with kernel stacks (dt) against perf record -g.  Every tracer has a
 * reader on CPU 1 (perf's own process there), and records the same events
 * (the loop makes no other syscall).  TCG timings are emulated, so only
 * ratios within this one boot are printed.  Then the same traced load's
 * drops with the smallest ring and the default.
 *
 * perf is Debian's, run from PERF_DIR (its binary, the libraries it links
 * and their loader, copied in by bench.mk): PERF_DIR/ld-linux-x86-64.so.2
 * --library-path PERF_DIR PERF_DIR/perf record ...
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
#include <sys/stat.h>
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

/*
 * ns per call of a getppid loop on the calling CPU: n calls in KB_SEGS
 * segments, the fastest segment's rate.  The host is shared and its load
 * only ever adds time to an emulated run, so the least disturbed stretch
 * is the figure; short segments find one even under a busy host.
 */
#define KB_SEGS 25
static double loop(long n)
{
	long m = n / KB_SEGS > 0 ? n / KB_SEGS : 1;
	double best = 0;

	for (int s = 0; s < KB_SEGS; s++) {
		double t0 = now(), v;

		for (long i = 0; i < m; i++)
			syscall(SYS_getppid);
		v = (now() - t0) * 1e9 / m;
		if (s == 0 || v < best)
			best = v;
	}
	return best;
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

/*
 * One dt session: ns per call, and its stats after draining.  ret: the
 * return probe too; flags: what each event carries.
 */
static int dt_run_f(long n, dt_u32 bufsz, int rcpu, int ret, dt_u32 flags, dt_u32 fflags,
    double *ns, struct dt_stats *st)
{
	int fd = open(DT_DEVICE, O_RDWR);
	dt_u32 on = 1, off = 0;
	/* the calls measured are this process's own: DTF_SELF records them */
	struct dt_filter self = { .dtf_flags = fflags };

	if (fd < 0 || ioctl(fd, DTIOCSETFILTER, &self) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	dt_u32 e = find(fd, "getppid", "entry"), r = find(fd, "getppid", "return");
	struct dt_enable en1 = { .dten_id = e, .dten_evtflags = flags };
	struct dt_enable en2 = { .dten_id = r, .dten_evtflags = flags };
	if (!e || !r || (bufsz && ioctl(fd, DTIOCSETBUFSZ, &bufsz) < 0) ||
	    ioctl(fd, DTIOCPRBENABLE, &en1) < 0 ||
	    (ret && ioctl(fd, DTIOCPRBENABLE, &en2) < 0) ||
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

static int dt_run(long n, dt_u32 bufsz, int rcpu, int ret, dt_u32 flags, double *ns,
    struct dt_stats *st)
{
	return dt_run_f(n, bufsz, rcpu, ret, flags, DTF_SELF, ns, st);
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

static const char *perf_dir;

static off_t fsize(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

static int perf_failed(const char *why, int st)
{
	char line[512];
	FILE *f = fopen("/tmp/kbench-perf.err", "r");

	fprintf(stderr, "kbench: %s (status %#x):\n", why, st);
	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "kbench:   %s", line);
	if (f)
		fclose(f);
	return -1;
}

/*
 * perf record of the getppid entry tracepoint on CPU 0 (system-wide, as
 * dt records), perf itself on CPU 1; -g adds its callchains.  Started,
 * given time to open its events and synthesize, then the loop, then
 * SIGINT and wait for it to write out.
 */
static int perf_run(long n, int callchain, double *ns, off_t *bytes)
{
	char ld[512], bin[512];
	const char *data = "/tmp/kbench-perf.data";
	pid_t p;
	int st;

	snprintf(ld, sizeof(ld), "%s/ld-linux-x86-64.so.2", perf_dir);
	snprintf(bin, sizeof(bin), "%s/perf", perf_dir);
	unlink(data);
	p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		const char *argv[] = { ld, "--library-path", perf_dir, bin, "record", "-q",
			"--no-buildid", "-a", "-C", "0", "-e", "syscalls:sys_enter_getppid",
			"-o", data, callchain ? "-g" : NULL, NULL };
		int devnull = open("/dev/null", O_WRONLY);
		int err = open("/tmp/kbench-perf.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		pin(1);
		dup2(devnull, 1);
		if (err >= 0)
			dup2(err, 2);
		execv(ld, (char **)argv);
		_exit(127);
	}
	/* ready once it has written its header and synthesized events */
	off_t last = -1, cur;
	int stable = 0;
	for (int i = 0; i < 600 && stable < 5; i++) {
		usleep(100000);
		if (waitpid(p, &st, WNOHANG) == p)
			return perf_failed("perf exited before recording", st);
		cur = fsize(data);
		stable = cur > 0 && cur == last ? stable + 1 : 0;
		last = cur;
	}
	usleep(200000);
	*ns = loop(n);
	kill(p, SIGINT);
	/* perf record re-raises the signal that stopped it once it is done */
	if (waitpid(p, &st, 0) != p ||
	    !((WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
	      (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT)))
		return perf_failed("perf record failed", st);
	*bytes = fsize(data);
	unlink(data);
	return 0;
}

/*
 * The fastest of the rounds whose run recorded every event (ok[i]): a run
 * that lost events did less work per call, so it is no fair "fastest"
 * round for either tool.  All rounds if none is complete (said so).
 */
static double fastest_complete(const double *v, const int *ok, int n, int *nok)
{
	double m = -1;

	*nok = 0;
	for (int i = 0; i < n; i++)
		if (ok[i]) {
			if (*nok == 0 || v[i] < m)
				m = v[i];
			++*nok;
		}
	if (*nok == 0)
		for (int i = 0; i < n; i++)
			if (i == 0 || v[i] < m)
				m = v[i];
	return m;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void sort(double *v, int n)
{
	qsort(v, n, sizeof(double), cmpd);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	long pn = argc > 3 ? atol(argv[3]) : n / 2;
	double base[16], dt[16], ft[16], d1[16], pf[16], dk[16], pg[16], fk[16], fo[16];
	struct dt_stats st, s1, sk, sf;
	off_t pfb = 0, pgb = 0, pfbr[16], pgbr[16];
	int d1ok[16], dkok[16], pfok[16], pgok[16];

	perf_dir = argc > 4 ? argv[4] : NULL;
	if (rounds < 1 || rounds > 16 || n < 1000 || pn < 1000)
		return 2;
	pin(0);
	loop(n / 10);	/* warm up */
	/* Interleaved rounds: drift of the host load hits all alike. */
	for (int i = 0; i < rounds; i++) {
		base[i] = loop(n);
		if (dt_run(n, 0, 1, 1, DTEVT_FUNCARGS, &dt[i], &st)) {
			fprintf(stderr, "kbench: dt session failed: %s\n", strerror(errno));
			return 1;
		}
		if (ft_run(n, &ft[i])) {
			fprintf(stderr, "kbench: ftrace setup failed: %s\n", strerror(errno));
			return 1;
		}
		printf("# round %d: untraced %.1f ns/call, dt %.1f, ftrace %.1f (emulated ns)\n",
		    i, base[i], dt[i], ft[i]);
		/*
		 * The filter: the same events with kernel stacks, recorded, and
		 * left out (the default filter leaves the opener out): what an
		 * event of a process that is no target still costs.
		 */
		if (dt_run_f(n, 0, 1, 1, DTEVT_FUNCARGS | DTEVT_KSTACK, DTF_SELF, &fk[i], &sf) ||
		    dt_run_f(n, 0, 1, 1, DTEVT_FUNCARGS | DTEVT_KSTACK, 0, &fo[i], &sf)) {
			fprintf(stderr, "kbench: dt session failed: %s\n", strerror(errno));
			return 1;
		}
		printf("# round %d: with kernel stacks: recorded %.1f, filtered out %.1f "
		    "(%" PRIu64 " filtered)\n", i, fk[i], fo[i], sf.dtst_filtered);
		if (!perf_dir)
			continue;
		/* perf's runs write files: fewer calls */
		if (dt_run(pn, 0, 1, 0, DTEVT_FUNCARGS, &d1[i], &s1) ||
		    dt_run(pn, 0, 1, 0, DTEVT_FUNCARGS | DTEVT_KSTACK, &dk[i], &sk)) {
			fprintf(stderr, "kbench: dt session failed: %s\n", strerror(errno));
			return 1;
		}
		if (perf_run(pn, 0, &pf[i], &pfb) || perf_run(pn, 1, &pg[i], &pgb)) {
			fprintf(stderr, "kbench: perf record failed\n");
			return 1;
		}
		pfbr[i] = pfb;
		pgbr[i] = pgb;
		d1ok[i] = s1.dtst_dropped == 0;
		dkok[i] = sk.dtst_dropped == 0;
		printf("# round %d: entry only: dt %.1f, perf %.1f; with stacks: dt -k %.1f, "
		    "perf -g %.1f (dt dropped %" PRIu64 "/%" PRIu64 ", perf.data %lld/%lld bytes)\n",
		    i, d1[i], pf[i], dk[i], pg[i], s1.dtst_dropped, sk.dtst_dropped,
		    (long long)pfb, (long long)pgb);
		/* the same round's ratios, to show how much the host's load moves them */
		printf("# round %d ratios against its own untraced run: vs ftrace %.3f, vs perf %.3f, "
		    "kstack vs perf %.3f\n", i, (dt[i] - base[i]) / (ft[i] - base[i]),
		    (d1[i] - base[i]) / (pf[i] - base[i]), (dk[i] - base[i]) / (pg[i] - base[i]));
	}
	/*
	 * Host load only ever adds time to an emulated run, so the fastest
	 * round of each is the least disturbed; medians are shown for scale.
	 */
	sort(base, rounds);
	sort(dt, rounds);
	sort(ft, rounds);
	printf("# medians over %d rounds of %ld calls: untraced %.1f, dt +%.1f, ftrace +%.1f\n",
	    rounds, n, base[rounds / 2], dt[rounds / 2] - base[rounds / 2],
	    ft[rounds / 2] - base[rounds / 2]);
	double b = base[0], d = dt[0] - b, f = ft[0] - b;
	printf("# fastest rounds: untraced %.1f, dt +%.1f, ftrace +%.1f ns/call\n", b, d, f);
	printf("bench kernel.syscall_cost_vs_ftrace %.3f ratio\n", f > 0 ? d / f : -1.0);
	printf("target <= 0.7\n");
	printf("bench kernel.dt_added_vs_untraced %.3f ratio\n", d / b);
	printf("bench kernel.ftrace_added_vs_untraced %.3f ratio\n", f / b);
	sort(fk, rounds);
	sort(fo, rounds);
	printf("# fastest rounds with kernel stacks: recorded +%.1f, filtered out +%.1f ns/call\n",
	    fk[0] - b, fo[0] - b);
	printf("bench kernel.filtered_vs_recorded_kstack %.3f ratio\n",
	    fk[0] - b > 0 ? (fo[0] - b) / (fk[0] - b) : -1.0);
	if (perf_dir) {
		/*
		 * Every sample of a mode has the same size here (one tracepoint,
		 * one call path): a perf.data short of the largest of its mode
		 * by more than 2% lost samples.
		 */
		off_t pfmax = 0, pgmax = 0;
		int n1, nf, nk, ng;
		for (int i = 0; i < rounds; i++) {
			pfmax = pfbr[i] > pfmax ? pfbr[i] : pfmax;
			pgmax = pgbr[i] > pgmax ? pgbr[i] : pgmax;
		}
		for (int i = 0; i < rounds; i++) {
			pfok[i] = pfbr[i] >= pfmax - pfmax / 50;
			pgok[i] = pgbr[i] >= pgmax - pgmax / 50;
		}
		double x1 = fastest_complete(d1, d1ok, rounds, &n1) - b;
		double xp = fastest_complete(pf, pfok, rounds, &nf) - b;
		double xk = fastest_complete(dk, dkok, rounds, &nk) - b;
		double xg = fastest_complete(pg, pgok, rounds, &ng) - b;

		printf("# rounds that recorded every event (the others left out; none: all "
		    "taken): dt entry %d, perf %d, dt -k %d, perf -g %d of %d\n", n1, nf, nk, ng,
		    rounds);
		printf("# fastest such rounds of %ld calls: dt entry +%.1f, perf +%.1f; dt -k +%.1f, "
		    "perf -g +%.1f ns/call; perf.data %lld and %lld bytes\n", pn, x1, xp, xk, xg,
		    (long long)pfmax, (long long)pgmax);
		printf("bench kernel.syscall_cost_vs_perf %.3f ratio\n", xp > 0 ? x1 / xp : -1.0);
		printf("target <= 0.3\n");
		printf("bench kernel.kstack_cost_vs_perf %.3f ratio\n", xg > 0 ? xk / xg : -1.0);
		printf("target <= 0.7\n");
	}

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
	if (dt_run(n, DT_BUFSZ_MIN, 0, 1, DTEVT_FUNCARGS, &ns, &s16) ||
	    dt_run(n, 0, 0, 1, DTEVT_FUNCARGS, &ns, &sdef)) {
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
