/*
 * dtgen - write a synthetic but realistic dt capture, deterministically.
 *
 * Not a user tool: it feeds golden tests and benchmarks of the readers
 * with captures shaped like a real profile (see formats/gen/README.md).
 * Everything random comes from one xoshiro256** stream seeded by -s, and
 * nothing depends on the output path, time or environment, so the same
 * arguments always give a byte-identical file.
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"

static uint64_t rs[4];

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(void)
{
	uint64_t r = rs[1] * 5;
	r = ((r << 7) | (r >> 57)) * 9;
	uint64_t t = rs[1] << 17;
	rs[2] ^= rs[0]; rs[3] ^= rs[1]; rs[1] ^= rs[2]; rs[0] ^= rs[3];
	rs[2] ^= t;
	rs[3] = (rs[3] << 45) | (rs[3] >> 19);
	return r;
}

static uint32_t rndn(uint32_t n)	/* [0, n) */
{
	return (uint32_t)(((rnd() >> 32) * (uint64_t)n) >> 32);
}

static double rndf(void)
{
	return (double)(rnd() >> 11) * 0x1.0p-53;
}

/* A stable hash, so a call site has the same return address every time. */
static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ b;
	return splitmix(&x);
}

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "dtgen: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p)
		die("out of memory");
	return p;
}

/* --------------------------------------------------------- symbol images */

struct image {
	const char	*name;		/* path, or "kernel" / module name */
	uint32_t	n;
	struct dtcap_sym *syms;		/* file vaddrs (kernel: absolute) */
	char		**names;
	uint64_t	runtime;	/* runtime address of vaddr 0 */
};

static const char *kfixed[] = {
	/* syscall entry */ "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
	/* timer irq */ "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
	"__sysvec_apic_timer_interrupt", "hrtimer_interrupt", "__hrtimer_run_queues",
	"tick_sched_timer", "tick_sched_handle", "update_process_times", "scheduler_tick",
	"task_tick_fair",
	/* idle */ "secondary_startup_64_no_verify", "start_secondary", "cpu_startup_entry",
	"do_idle", "default_idle_call", "default_idle", "native_safe_halt",
	/* kthreads */ "ret_from_fork", "kthread", "worker_thread", "process_one_work",
	"smpboot_thread_fn", "run_ksoftirqd",
};
enum { K_ENTRY = 0, K_IRQ = 2, K_NIRQ = 10, K_IDLE = 12, K_NIDLE = 7, K_KTHREAD = 19 };

static const char *syscalls[] = {
	"read", "write", "openat", "close", "mmap", "futex", "epoll_wait", "ioctl",
	"clock_nanosleep", "sendto", "recvfrom", "getpid",
};
#define NSYSCALLS (sizeof(syscalls) / sizeof(syscalls[0]))

static const char *kpre[] = {
	"", "__", "do_", "vfs_", "ext4_", "tcp_", "ip_", "sched_", "mm_", "page_",
	"irq_", "kmem_", "blk_", "net_", "futex_", "ep_", "pipe_", "filemap_", "rcu_",
	"sock_", "dev_", "bpf_", "inode_", "dentry_",
};
static const char *kword[] = {
	"read", "write", "alloc", "free", "lookup", "wait", "wake", "queue", "flush",
	"lock", "unlock", "init", "map", "unmap", "fault", "copy", "insert", "remove",
	"update", "poll", "submit", "complete", "charge", "account",
};
static const char *ksuf[] = {
	"", "_one", "_slow", "_fast", "_common", "_page", "_iter", "_range", "_locked",
};

static int name_seen(char **names, uint32_t n, const char *s)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return 1;
	return 0;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

/* Lay out n functions from base with plausible sizes. */
static void layout(struct image *im, uint64_t base)
{
	uint64_t a = base;
	for (uint32_t i = 0; i < im->n; i++) {
		uint64_t sz = 32 + 16 * (uint64_t)rndn(120);
		im->syms[i].addr = a;
		im->syms[i].size = sz;
		im->syms[i].name = im->names[i];
		a += sz + 16 * rndn(3);
	}
}

static void make_kernel(struct image *k, uint32_t n)
{
	k->name = "kernel";
	k->n = n;
	k->names = xcalloc(n, sizeof(char *));
	k->syms = xcalloc(n, sizeof(struct dtcap_sym));
	uint32_t i = 0;
	for (size_t j = 0; j < sizeof(kfixed) / sizeof(kfixed[0]); j++)
		k->names[i++] = xstrdup(kfixed[j]);
	char buf[80];
	for (size_t j = 0; j < NSYSCALLS; j++) {
		snprintf(buf, sizeof(buf), "__x64_sys_%s", syscalls[j]);
		k->names[i++] = xstrdup(buf);
	}
	uint32_t fixed = i;
	size_t np = sizeof(kpre) / sizeof(kpre[0]), nw = sizeof(kword) / sizeof(kword[0]),
	       ns = sizeof(ksuf) / sizeof(ksuf[0]);
	for (uint64_t c = 0; i < n; c++) {
		uint64_t h = mix(c, 77);
		snprintf(buf, sizeof(buf), "%s%s%s", kpre[h % np], kword[(h >> 8) % nw],
			 ksuf[(h >> 16) % ns]);
		if (c >= np * nw * ns * 4)	/* combinations exhausted */
			snprintf(buf + strlen(buf), 16, "_%u", i);
		if (!name_seen(k->names + fixed, i - fixed, buf) &&
		    !name_seen(k->names, fixed, buf))
			k->names[i++] = xstrdup(buf);
	}
	layout(k, 0xffffffff81000000ULL);
}

static void make_image(struct image *im, const char *name, const char *prefix,
		       const char *const *fixed, uint32_t nfixed, uint32_t n)
{
	char buf[80];
	im->name = name;
	im->n = n;
	im->names = xcalloc(n, sizeof(char *));
	im->syms = xcalloc(n, sizeof(struct dtcap_sym));
	uint32_t i = 0;
	for (; i < nfixed && i < n; i++)
		im->names[i] = xstrdup(fixed[i]);
	for (; i < n; i++) {
		uint64_t h = mix(i, (uint64_t)(uintptr_t)prefix[0]);
		snprintf(buf, sizeof(buf), "%s%s_%s_%u", prefix,
			 kword[h % (sizeof(kword) / sizeof(kword[0]))],
			 kword[(h >> 8) % (sizeof(kword) / sizeof(kword[0]))], i);
		im->names[i] = xstrdup(buf);
	}
	layout(im, 0x1000);
}

static uint64_t pc_in(const struct image *im, uint32_t f, uint64_t salt)
{
	const struct dtcap_sym *s = &im->syms[f];
	return im->runtime + s->addr + 1 + mix(salt, f) % (s->size - 1);
}

/* ------------------------------------------------------------- the world */

enum { S_IDLE, S_KTHREAD, S_USER, S_SYSCALL };

struct proc {
	uint32_t	pid;
	const char	*comm;
	int		exe;		/* index into exes */
	uint32_t	nthreads;
	uint32_t	comm_id, worker_comm_id;
	uint64_t	exe_base, libc_base;
};

struct site {
	int		kind;
	uint32_t	proc;		/* index; kthreads: -1 */
	uint32_t	tid;
	uint32_t	comm;
	uint32_t	kstack, ustack;
	uint32_t	flags;
};

static struct image kern, ext4, libc, exes[3];
static const char *exe_paths[3] = { "/usr/bin/app", "/usr/bin/bash", "/usr/sbin/sshd" };
static const char *exe_comms[3] = { "app", "bash", "sshd" };
static const uint32_t exe_nsyms[3] = { 500, 300, 200 };
static const char *libc_fixed[] = {
	"__libc_start_main", "__libc_start_call_main", "start_thread", "clone3",
	"__GI___libc_read", "__GI___libc_write", "__libc_open64", "__close",
	"__mmap", "__futex_abstimed_wait_common", "epoll_wait", "__ioctl",
	"__clock_nanosleep", "__send", "__libc_recvfrom", "getpid",
	"malloc", "free", "memcpy", "__memmove_avx_unaligned_erms", "strlen",
	"pthread_mutex_lock", "pthread_mutex_unlock", "_int_malloc", "_int_free",
};
#define LIBC_SYSCALL0 4
static const char *exe_fixed[] = { "_start", "main" };

#define JIT_BASE	0x7f3a5c000000ULL
#define JIT_SIZE	0x100000ULL

static uint32_t kcallee(uint32_t f, uint32_t k)
{
	/* fanout 4 per function, into the generic part of the kernel and ext4 */
	uint32_t base = K_KTHREAD + 6 + NSYSCALLS;
	uint64_t h = mix(f, k + 1000);
	if (h % 16 == 0)
		return kern.n + (uint32_t)(h >> 8) % ext4.n;
	return base + (uint32_t)(h >> 8) % (kern.n - base);
}

/* Build a kernel stack: fixed outer frames, then a walk; innermost first. */
static uint32_t kstack(struct dtcap_writer *w, const uint32_t *outer, unsigned nouter,
		       unsigned depth, const uint32_t *top, unsigned ntop)
{
	uint64_t pcs[DTCAP_MAXFRAMES];
	uint32_t fn[DTCAP_MAXFRAMES];
	unsigned n = 0;
	for (unsigned i = 0; i < nouter && n < DTCAP_MAXFRAMES; i++)
		fn[n++] = outer[i];
	uint32_t cur = n ? fn[n - 1] : 0;
	while (n < depth && n < DTCAP_MAXFRAMES - ntop) {
		cur = kcallee(cur, rndn(4));
		fn[n++] = cur;
	}
	for (unsigned i = 0; i < ntop && n < DTCAP_MAXFRAMES; i++)
		fn[n++] = top[i];
	/* fn is outermost first; frames are innermost first */
	for (unsigned i = 0; i < n; i++) {
		uint32_t f = fn[n - 1 - i];
		const struct image *im = f < kern.n ? &kern : &ext4;
		uint32_t fi = f < kern.n ? f : f - kern.n;
		uint64_t salt = i == 0 ? rnd() : fn[n - i];	/* the callee */
		pcs[i] = pc_in(im, fi, salt);
	}
	if (rndn(400) == 0)	/* a frame nothing names, as in real life */
		pcs[n / 2] = 0xffffffffa0000000ULL + 16 * rndn(4096);
	return dtcap_intern_stack(w, pcs, n, 1, 0);
}

static unsigned pick_depth(unsigned lo, unsigned hi)
{
	/* skewed towards the shallow end, like real stacks */
	double u = rndf();
	return lo + (unsigned)((hi - lo) * u * u);
}

static uint32_t ustack(struct dtcap_writer *w, const struct proc *p, int in_syscall,
		       int sysno, unsigned depth)
{
	const struct image *ex = &exes[p->exe];
	uint64_t pcs[DTCAP_MAXFRAMES];
	unsigned n = 0;
	/* build outermost first into pcs, then reverse */
	pcs[n++] = p->exe_base + ex->syms[0].addr + 0x25;	/* _start */
	pcs[n++] = p->libc_base + libc.syms[1].addr + 0x80;	/* __libc_start_call_main */
	pcs[n++] = p->exe_base + ex->syms[1].addr + 0x3c;	/* main */
	uint32_t cur = 1;
	while (n < depth - 1 && n < DTCAP_MAXFRAMES - 2) {
		uint32_t next = 2 + (uint32_t)(mix(cur, rndn(4) + 7) % (ex->n - 2));
		pcs[n++] = p->exe_base + ex->syms[next].addr + 1 +
			   mix(cur, next) % (ex->syms[next].size - 1);
		cur = next;
	}
	if (in_syscall) {
		uint32_t f = LIBC_SYSCALL0 + (uint32_t)sysno;
		pcs[n++] = p->libc_base + libc.syms[f].addr + 0x12;
	} else if (rndn(3) == 0) {
		uint32_t f = 16 + rndn(sizeof(libc_fixed) / sizeof(libc_fixed[0]) - 16);
		pcs[n++] = p->libc_base + libc.syms[f].addr + 1 + rndn(libc.syms[f].size - 1);
	} else {
		pcs[n++] = p->exe_base + ex->syms[cur].addr + 1 + rndn(ex->syms[cur].size - 1);
	}
	if (rndn(200) == 0)	/* JIT code: mapped, but no file */
		pcs[n - 1] = JIT_BASE + rndn(JIT_SIZE);
	for (unsigned i = 0; i < n / 2; i++) {
		uint64_t t = pcs[i];
		pcs[i] = pcs[n - 1 - i];
		pcs[n - 1 - i] = t;
	}
	return dtcap_intern_stack(w, pcs, n, 0, 0);
}

static void put_srclines(struct dtcap_writer *w, uint32_t id, const struct image *im)
{
	struct dtcap_srcline *sl = xcalloc(2 * (size_t)im->n, sizeof(*sl));
	struct dtcap_srcframe *fr = xcalloc(3 * (size_t)im->n, sizeof(*fr));
	char file[200];
	const char *base = strrchr(im->name, '/');
	snprintf(file, sizeof(file), "src/%s.c", base ? base + 1 : im->name);
	size_t n = 0, nf = 0;
	for (uint32_t i = 0; i < im->n; i++) {
		fr[nf] = (struct dtcap_srcframe){im->syms[i].name, file, 10 + i};
		sl[n++] = (struct dtcap_srcline){im->syms[i].addr, 1, &fr[nf++]};
		if (i % 3 == 0 && im->syms[i].size > 4) {
			fr[nf] = (struct dtcap_srcframe){"inl_helper", "src/inl.h", 3};
			fr[nf + 1] = (struct dtcap_srcframe){im->syms[i].name, file, 11 + i};
			sl[n++] = (struct dtcap_srcline){im->syms[i].addr + 4, 2, &fr[nf]};
			nf += 2;
		}
	}
	if (dtcap_put_srclines(w, id, sl, n))
		die("%s", dtcap_writer_error(w));
	free(sl);
	free(fr);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: dtgen -o FILE [-n EVENTS] [-s SEED] [--stacks N] [--pids N] [--syscalls]\n"
"             [--block N] [--batch N] [--ts-step N] [--threaded] [--comm NAME]\n"
"             [--hostname NAME]\n"
"             [--switch-probe NAME] [--srclines] [-v]\n"
"Write a deterministic synthetic dt capture: profile:hz:997 samples on 2-8 CPUs\n"
"over about N distinct kernel and user stacks (Zipf popularity), some syscall\n"
"entry/return and sched_switch events, kallsyms/modules text, ELF symbol tables\n"
"and process maps so every frame symbolizes (a few on purpose do not).\n"
"  -o FILE       output capture (required)\n"
"  -n EVENTS     events to write (default 100000)\n"
"  -s SEED       random seed (default 1); same arguments: same bytes\n"
"  --stacks N    distinct stacks (default 20000)\n"
"  --pids N      user processes (default 4; each has 1-4 threads)\n"
"  --syscalls    make about half the events syscall/sched events (default 5%%)\n"
"  --block N     rows per event block (default: the library's 65536)\n"
"  --batch N     write the events in runs of N of one CPU, as a recorder\n"
"                draining per-CPU rings does: blocks overlap in time and\n"
"                rows are out of ts order (default 0: in ts order)\n"
"  --ts-step N   round the timestamps down to a multiple of N ns, as a coarse\n"
"                clock does: events of equal ts (default 1)\n"
"  --threaded    compress on a second thread (same bytes)\n"
"  --comm NAME   the first process's comm, as the kernel would keep it (15\n"
"                bytes, cut where they end, mid-character or not)\n"
"  --hostname NAME  the recording host's name (default synthSEED; \"\" none)\n"
"  --switch-probe NAME  the sched_switch probe's name (as a uprobe's path\n"
"                may be, any bytes)\n"
"  --srclines    source lines of the user files' symbols (SRCL chunks):\n"
"                each symbol's first byte at line 10 + its index in\n"
"                src/FILE.c, and every third symbol's fifth byte inside an\n"
"                inlined inl_helper (src/inl.h:3)\n"
"  -v            print a summary to stderr\n");
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t nevents = 100000, seed = 1;
	uint32_t nstacks = 20000, npids = 4, block = 0, batch = 0, tstep = 1;
	int sysmode = 0, verbose = 0, threaded = 0, srclines = 0;
	const char *comm0 = NULL, *hostname = NULL, *swname = NULL;
	static const struct option lo[] = {
		{"stacks", required_argument, NULL, 'S'},
		{"pids", required_argument, NULL, 'P'},
		{"syscalls", no_argument, NULL, 'Y'},
		{"block", required_argument, NULL, 'B'},
		{"batch", required_argument, NULL, 'R'},
		{"ts-step", required_argument, NULL, 'Q'},
		{"threaded", no_argument, NULL, 'T'},
		{"comm", required_argument, NULL, 'C'},
		{"hostname", required_argument, NULL, 'H'},
		{"switch-probe", required_argument, NULL, 'W'},
		{"srclines", no_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "o:n:s:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n': nevents = strtoull(optarg, &end, 0);
			if (*end) die("bad -n: %s", optarg);
			break;
		case 's': seed = strtoull(optarg, &end, 0);
			if (*end) die("bad -s: %s", optarg);
			break;
		case 'S': nstacks = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || nstacks < 10 || nstacks > 5000000)
				die("bad --stacks (10..5000000): %s", optarg);
			break;
		case 'P': npids = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || npids < 1 || npids > 10000)
				die("bad --pids (1..10000): %s", optarg);
			break;
		case 'B': block = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || block < 1) die("bad --block: %s", optarg);
			break;
		case 'R': batch = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || batch > 100000000) die("bad --batch: %s", optarg);
			break;
		case 'Q': tstep = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || tstep < 1) die("bad --ts-step: %s", optarg);
			break;
		case 'Y': sysmode = 1; break;
		case 'T': threaded = 1; break;
		case 'L': srclines = 1; break;
		case 'C': comm0 = optarg; break;
		case 'W': swname = optarg;
			if (!*swname || strlen(swname) >= DTCAP_PROBENAMELEN)
				die("bad --switch-probe: %s", optarg);
			break;
		case 'H': hostname = optarg;
			if (strlen(hostname) >= sizeof(((struct dtcap_host *)0)->hostname))
				die("bad --hostname (at most 64 bytes): %s", optarg);
			break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!out || optind != argc) {
		usage(stderr);
		return 2;
	}
	uint64_t sx = seed;
	for (int i = 0; i < 4; i++)
		rs[i] = splitmix(&sx);

	struct dtcap_host host;
	memset(&host, 0, sizeof(host));
	snprintf(host.kernel, sizeof(host.kernel), "6.1.0-dtgen-amd64");
	if (hostname)
		snprintf(host.hostname, sizeof(host.hostname), "%s", hostname);
	else
		snprintf(host.hostname, sizeof(host.hostname), "synth%llu", (unsigned long long)seed);
	uint32_t ncpus = 2 + rndn(7);
	host.ncpus = ncpus;
	host.start_ns = 1000000000000ULL;
	host.clock_mono_ns = host.start_ns - 1000;
	host.clock_real_ns = 1763700000000000000LL;
	char bat[64] = "";
	if (batch)
		snprintf(bat, sizeof(bat), " --batch %u", batch);
	if (tstep > 1)
		snprintf(bat + strlen(bat), sizeof(bat) - strlen(bat), " --ts-step %u", tstep);
	snprintf(host.command, sizeof(host.command),
		 "dtgen -n %llu -s %llu --stacks %u --pids %u%s%s",
		 (unsigned long long)nevents, (unsigned long long)seed, nstacks, npids,
		 sysmode ? " --syscalls" : "", bat);
	struct dtcap_writer_opts wo = { 0, block, threaded, 1 };
	struct dtcap_writer *w = dtcap_create(out, &host, &wo);
	if (!w)
		die("%s", dtcap_create_error());
#define CK(x) do { if (x) die("%s", dtcap_writer_error(w)); } while (0)

	/* probes */
	struct dtcap_probe probes[2 + 2 * NSYSCALLS];
	memset(probes, 0, sizeof(probes));
	uint32_t np = 0;
	probes[np].id = 1;
	probes[np].flags = DT_PF_TIMER;
	snprintf(probes[np++].name, DTCAP_PROBENAMELEN, "profile:hz:997");
	static const char *anames[NSYSCALLS][6] = {
		{"fd", "buf", "count"}, {"fd", "buf", "count"},
		{"dfd", "filename", "flags", "mode"}, {"fd"},
		{"addr", "len", "prot", "flags", "fd", "off"},
		{"uaddr", "op", "val", "utime", "uaddr2", "val3"},
		{"epfd", "events", "maxevents", "timeout"}, {"fd", "cmd", "arg"},
		{"which_clock", "flags", "rqtp", "rmtp"},
		{"fd", "buff", "len", "flags", "addr", "addr_len"},
		{"fd", "ubuf", "size", "flags", "addr", "addr_len"}, {NULL},
	};
	uint32_t sys_nargs[NSYSCALLS];
	for (uint32_t s = 0; s < NSYSCALLS; s++) {
		struct dtcap_probe *p = &probes[np++];
		p->id = 2 + 2 * s;
		snprintf(p->name, DTCAP_PROBENAMELEN, "syscall:%s:entry", syscalls[s]);
		uint32_t k = 0;
		while (k < 6 && anames[s][k]) {
			snprintf(p->args[k].name, DTCAP_ARGNAMELEN, "%s", anames[s][k]);
			snprintf(p->args[k].type, DTCAP_ARGNAMELEN, "%s",
				 strstr(anames[s][k], "buf") || strstr(anames[s][k], "addr") ||
				 strstr(anames[s][k], "name") ? "void *" : "long");
			p->args[k].slot = (uint8_t)k;
			p->args[k].nslots = 1;
			k++;
		}
		p->nargs = sys_nargs[s] = k;
		p = &probes[np++];
		p->id = 3 + 2 * s;
		p->flags = DT_PF_RETURN;
		snprintf(p->name, DTCAP_PROBENAMELEN, "syscall:%s:return", syscalls[s]);
		p->nargs = 2;
		snprintf(p->args[0].name, DTCAP_ARGNAMELEN, "retval");
		snprintf(p->args[0].type, DTCAP_ARGNAMELEN, "long");
		snprintf(p->args[1].name, DTCAP_ARGNAMELEN, "errno");
		snprintf(p->args[1].type, DTCAP_ARGNAMELEN, "int");
		p->args[1].slot = 1;
		p->args[0].nslots = p->args[1].nslots = 1;
	}
	struct dtcap_probe *sw = &probes[np++];
	sw->id = 100;
	snprintf(sw->name, DTCAP_PROBENAMELEN, "%s", swname ? swname : "tracepoint:sched:sched_switch");
	static const char *swn[7][2] = {
		{"prev_comm", "char[16]"}, {"prev_pid", "pid_t"}, {"prev_prio", "int"},
		{"prev_state", "long"}, {"next_comm", "char[16]"}, {"next_pid", "pid_t"},
		{"next_prio", "int"},
	};
	uint8_t slot = 0;
	for (int k = 0; k < 7; k++) {
		snprintf(sw->args[k].name, DTCAP_ARGNAMELEN, "%s", swn[k][0]);
		snprintf(sw->args[k].type, DTCAP_ARGNAMELEN, "%s", swn[k][1]);
		sw->args[k].slot = slot;
		sw->args[k].nslots = k == 0 || k == 4 ? 2 : 1;
		slot += sw->args[k].nslots;
	}
	sw->nargs = 7;
	CK(dtcap_put_probes(w, probes, np));

	/* kernel symbols: kallsyms text and /proc/modules */
	make_kernel(&kern, 2000);
	make_image(&ext4, "ext4", "ext4_", NULL, 0, 200);
	layout(&ext4, 0xffffffffc0a00000ULL);
	size_t tcap = (size_t)(kern.n + ext4.n) * 96 + 256, tlen = 0;
	char *text = xcalloc(tcap, 1);
	for (uint32_t i = 0; i < kern.n; i++)
		tlen += snprintf(text + tlen, tcap - tlen, "%016llx %c %s\n",
				 (unsigned long long)kern.syms[i].addr,
				 i % 7 == 3 ? 't' : 'T', kern.names[i]);
	for (uint32_t i = 0; i < ext4.n; i++)
		tlen += snprintf(text + tlen, tcap - tlen, "%016llx t %s\t[ext4]\n",
				 (unsigned long long)ext4.syms[i].addr, ext4.names[i]);
	CK(dtcap_put_kallsyms(w, text, tlen));
	uint64_t ext4_size = ext4.syms[ext4.n - 1].addr + ext4.syms[ext4.n - 1].size -
			     0xffffffffc0a00000ULL;
	tlen = (size_t)snprintf(text, tcap,
		"ext4 %llu 1 - Live 0xffffffffc0a00000\n"
		"crc32c_generic 16384 2 - Live 0xffffffffc0900000\n",
		(unsigned long long)ext4_size);
	CK(dtcap_put_modules(w, text, tlen));
	free(text);

	/* user files */
	make_image(&libc, "/lib/x86_64-linux-gnu/libc.so.6", "__libc_", libc_fixed,
		   sizeof(libc_fixed) / sizeof(libc_fixed[0]), 300);
	for (int e = 0; e < 3; e++)
		make_image(&exes[e], exe_paths[e], e == 0 ? "app_" : e == 1 ? "sh_" : "ssh_",
			   exe_fixed, 2, exe_nsyms[e]);
	uint32_t file_id[4];
	const struct image *ims[4] = { &exes[0], &exes[1], &exes[2], &libc };
	for (int i = 0; i < 4; i++) {
		struct dtcap_file f;
		memset(&f, 0, sizeof(f));
		f.path = ims[i]->name;
		f.build_id_len = 20;
		for (int k = 0; k < 20; k++)
			f.build_id[k] = (uint8_t)mix(i, k);
		f.nsyms = ims[i]->n;
		f.syms = ims[i]->syms;
		CK(!(file_id[i] = dtcap_put_file(w, &f)));
		if (srclines)
			put_srclines(w, file_id[i], ims[i]);
	}

	/* processes */
	struct proc *procs = xcalloc(npids, sizeof(*procs));
	uint64_t t0 = host.start_ns;
	for (uint32_t i = 0; i < npids; i++) {
		struct proc *p = &procs[i];
		p->pid = 1000 + 37 * i + rndn(30);
		p->exe = (int)(i % 3);
		p->comm = exe_comms[p->exe];
		static char c0[DTCAP_COMMLEN];
		if (i == 0 && comm0) {
			/* TASK_COMM_LEN - 1 bytes, as __set_task_comm keeps */
			snprintf(c0, sizeof(c0), "%.*s", (int)sizeof(c0) - 1, comm0);
			p->comm = c0;
		}
		p->nthreads = 1 + rndn(4);
		p->exe_base = 0x555555554000ULL + ((uint64_t)i << 28);
		p->libc_base = 0x7f0000000000ULL + ((uint64_t)i << 32);
		CK(!(p->comm_id = dtcap_intern_comm(w, p->comm)));
		char wc[DTCAP_COMMLEN];
		snprintf(wc, sizeof(wc), "%s-worker", p->comm);
		CK(!(p->worker_comm_id = dtcap_intern_comm(w, wc)));

		const struct image *ex = &exes[p->exe];
		uint64_t etext = ex->syms[ex->n - 1].addr + ex->syms[ex->n - 1].size;
		uint64_t ltext = libc.syms[libc.n - 1].addr + libc.syms[libc.n - 1].size;
		etext = (etext + 0xfff) & ~0xfffULL;
		ltext = (ltext + 0xfff) & ~0xfffULL;
		struct dtcap_map maps[10] = {
			{p->exe_base, p->exe_base + 0x1000, 0, file_id[p->exe], 1, ex->name},
			{p->exe_base + 0x1000, p->exe_base + etext, 0x1000, file_id[p->exe], 5, ex->name},
			{p->exe_base + etext, p->exe_base + etext + 0x2000, etext, file_id[p->exe], 3, ex->name},
			{p->exe_base + etext + 0x10000, p->exe_base + etext + 0x80000, 0, 0, 3, "[heap]"},
			{JIT_BASE, JIT_BASE + JIT_SIZE, 0, 0, 7, ""},
			{p->libc_base, p->libc_base + 0x1000, 0, file_id[3], 1, libc.name},
			{p->libc_base + 0x1000, p->libc_base + ltext, 0x1000, file_id[3], 5, libc.name},
			{p->libc_base + ltext, p->libc_base + ltext + 0x4000, ltext, file_id[3], 3, libc.name},
			{0x7ffd12340000ULL, 0x7ffd12361000ULL, 0, 0, 3, "[stack]"},
			{0x7ffd123f0000ULL, 0x7ffd123f2000ULL, 0, 0, 5, "[vdso]"},
		};
		struct dtcap_proc pr;
		memset(&pr, 0, sizeof(pr));
		pr.pid = p->pid;
		pr.ppid = 1;
		pr.maps = maps;
		if (i == npids - 1 && npids > 1) {
			/* this one was a shell that exec'd: two snapshots */
			pr.ts = t0 - 500000000;
			snprintf(pr.comm, sizeof(pr.comm), "sh");
			pr.exe = "/usr/bin/bash";
			pr.nmaps = 0;
			CK(dtcap_put_proc(w, &pr));
		}
		pr.ts = t0 - 1000;
		snprintf(pr.comm, sizeof(pr.comm), "%s", p->comm);
		pr.exe = ex->name;
		pr.nmaps = 10;
		CK(dtcap_put_proc(w, &pr));
	}
	uint32_t kw_comm, ksoft_comm;
	CK(!(kw_comm = dtcap_intern_comm(w, "kworker/0:1")));
	CK(!(ksoft_comm = dtcap_intern_comm(w, "ksoftirqd/0")));
	uint32_t swapper_comm[8];
	for (uint32_t c = 0; c < ncpus; c++) {
		char s[32];
		snprintf(s, sizeof(s), "swapper/%u", c);
		CK(!(swapper_comm[c] = dtcap_intern_comm(w, s)));
	}
	struct dtcap_proc kp;
	memset(&kp, 0, sizeof(kp));
	kp.ts = t0 - 1000;
	kp.pid = 45;
	kp.ppid = 2;
	kp.exe = "";
	snprintf(kp.comm, sizeof(kp.comm), "kworker/0:1");
	CK(dtcap_put_proc(w, &kp));

	/* sample sites until the stack budget is spent */
	uint32_t scap = nstacks, nsites = 0;
	struct site *sites = xcalloc(scap, sizeof(*sites));
	uint32_t irq[K_NIRQ], idle[K_NIDLE];
	for (int i = 0; i < K_NIRQ; i++)
		irq[i] = K_IRQ + i;
	for (int i = 0; i < K_NIDLE; i++)
		idle[i] = K_IDLE + i;
	unsigned stale = 0;
	uint32_t maxid = 0;
	while (nsites < scap && maxid < nstacks) {
		struct site s;
		memset(&s, 0, sizeof(s));
		uint32_t r = rndn(100);
		if (r < 8) {
			s.kind = S_IDLE;
			s.proc = UINT32_MAX;
			/* idle, interrupted by the tick itself */
			s.kstack = kstack(w, idle, K_NIDLE, K_NIDLE, irq, 2 + rndn(K_NIRQ - 1));
		} else if (r < 14) {
			s.kind = S_KTHREAD;
			uint32_t o[4] = { K_KTHREAD, K_KTHREAD + 1, K_KTHREAD + 2, K_KTHREAD + 3 };
			s.kstack = kstack(w, o, 4, pick_depth(6, 40), NULL, 0);
			s.comm = kw_comm;
			s.tid = 45;
			s.proc = UINT32_MAX;
		} else {
			s.proc = rndn(npids);
			/* a few processes do most of the work */
			if (rndn(2))
				s.proc = rndn(npids < 2 ? 1 : 2);
			const struct proc *p = &procs[s.proc];
			uint32_t th = rndn(p->nthreads);
			s.tid = p->pid + th;
			s.comm = th ? p->worker_comm_id : p->comm_id;
			if (r < 50) {
				s.kind = S_USER;
				s.flags = DTR_USERMODE;
				s.kstack = kstack(w, irq, 2 + rndn(K_NIRQ - 1), 0, NULL, 0);
				s.ustack = ustack(w, p, 0, 0, pick_depth(5, 60));
			} else {
				s.kind = S_SYSCALL;
				int sn = (int)rndn(NSYSCALLS);
				uint32_t o[3] = { K_ENTRY, K_ENTRY + 1,
					(uint32_t)(sizeof(kfixed) / sizeof(kfixed[0])) + sn };
				s.kstack = kstack(w, o, 3, pick_depth(5, 60), NULL, 0);
				s.ustack = ustack(w, p, 1, sn, pick_depth(5, 40));
			}
			if (!s.ustack)
				die("%s", dtcap_writer_error(w));
		}
		if (!s.kstack)
			die("%s", dtcap_writer_error(w));
		uint32_t have = s.kstack > s.ustack ? s.kstack : s.ustack;
		/* a site that added no new stack is a duplicate: skip it, but
		 * don't spin forever when the world has no more to give */
		if (have <= maxid) {
			if (++stale > 10000)
				break;
			continue;
		}
		stale = 0;
		maxid = have;
		sites[nsites++] = s;
	}
	/* Zipf popularity over sites, in generation order */
	double *cdf = xcalloc(nsites, sizeof(double));
	double acc = 0;
	for (uint32_t i = 0; i < nsites; i++) {
		acc += 1.0 / pow(i + 1.0, 1.05);
		cdf[i] = acc;
	}

	/* syscall events: the threads that make them */
	uint32_t nthr = 0;
	for (uint32_t i = 0; i < npids; i++)
		nthr += procs[i].nthreads;

	/* per CPU: the next tick and a small queue of events before it */
	struct pend { uint64_t ts; int kind; uint32_t a, b; };
	enum { P_SAMPLE, P_SYSENT, P_SYSRET, P_SWITCH };
	struct cpuq { struct pend q[8]; unsigned n, i; uint64_t tick; } cq[8];
	memset(cq, 0, sizeof(cq));
	const uint64_t period = 1003009;	/* 997 Hz */
	for (uint32_t c = 0; c < ncpus; c++)
		cq[c].tick = t0 + 1000 + rndn((uint32_t)period);
	double sysfrac = sysmode ? 0.5 : 0.05;
	double mavg = sysfrac / (2 * (1 - sysfrac));
	double q = mavg / (1 + mavg);

	uint64_t percpu_n[8] = {0};
	struct dtcap_count cnt[8];
	uint64_t written = 0;
	uint32_t last = 0, run = 0;	/* --batch: the CPU of the run, its rest */
	struct dtcap_event e;
	memset(&e, 0, sizeof(e));
	while (written < nevents) {
		uint32_t best = 0;
		for (uint32_t c = 0; c < ncpus; c++) {
			if (cq[c].i == cq[c].n) {
				/* refill: this tick's sample, then syscall pairs */
				struct cpuq *x = &cq[c];
				uint64_t t = x->tick + rndn(4000);
				x->n = x->i = 0;
				x->q[x->n++] = (struct pend){t, P_SAMPLE, 0, 0};
				unsigned m = 0;
				while (m < 3 && rndf() < q)
					m++;
				for (unsigned k = 0; k < m; k++) {
					uint32_t th = rndn(nthr), sn = rndn(NSYSCALLS);
					t += 10000 + rndn(200000);
					if (rndn(8) == 0) {
						x->q[x->n++] = (struct pend){t, P_SWITCH, th, 0};
						continue;
					}
					x->q[x->n++] = (struct pend){t, P_SYSENT, th, sn};
					t += 500 + rndn(50000);
					x->q[x->n++] = (struct pend){t, P_SYSRET, th, sn};
				}
				x->tick += period;
			}
			if (cq[c].q[cq[c].i].ts < cq[best].q[cq[best].i].ts)
				best = c;
		}
		/* a run of one CPU's events: the others' wait, as in rings
		 * not yet read */
		if (batch) {
			if (run) {
				best = last;
				run--;
			} else {
				last = best;
				run = batch - 1;
			}
		}
		struct pend *pe = &cq[best].q[cq[best].i++];
		memset(&e, 0, offsetof(struct dtcap_event, args));
		e.ts = pe->ts - pe->ts % tstep;
		e.cpu = best;
		if (pe->kind == P_SAMPLE) {
			double u = rndf() * acc;
			uint32_t lo = 0, hi = nsites - 1;
			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;
				if (cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			const struct site *s = &sites[lo];
			e.probe = 1;
			e.kstack = s->kstack;
			e.ustack = s->ustack;
			e.flags = s->flags;
			/* the timer fires in hardirq context; some sites stand
			 * for samples taken in softirq or NMI (no RNG draw, so
			 * the rest of the stream is unchanged) */
			e.ctx = lo % 23 == 0 ? DTCAP_CTX_SOFTIRQ : lo % 97 == 0 ? DTCAP_CTX_NMI :
				DTCAP_CTX_HARDIRQ;
			if (s->kind == S_IDLE) {
				e.comm = swapper_comm[best];
			} else {
				e.comm = s->comm;
				e.tid = s->tid;
				e.pid = s->proc == UINT32_MAX ? s->tid : procs[s->proc].pid;
			}
		} else {
			/* thread a (of all threads) */
			uint32_t th = pe->a, pi = 0;
			while (th >= procs[pi].nthreads)
				th -= procs[pi++].nthreads;
			const struct proc *p = &procs[pi];
			e.pid = p->pid;
			e.tid = p->pid + th;
			e.comm = th ? p->worker_comm_id : p->comm_id;
			uint32_t sn = pe->b;
			if (pe->kind == P_SYSENT) {
				e.probe = 2 + 2 * sn;
				e.nargs = sys_nargs[sn];
				for (uint32_t k = 0; k < e.nargs; k++) {
					const char *an = anames[sn][k];
					if (strstr(an, "buf") || strstr(an, "addr") ||
					    strstr(an, "name") || strstr(an, "events"))
						e.args[k] = 0x7ffd12340000ULL + 8 * rndn(16384);
					else if (!strcmp(an, "fd") || !strcmp(an, "epfd") ||
						 !strcmp(an, "dfd"))
						e.args[k] = 3 + rndn(20);
					else if (strstr(an, "count") || strstr(an, "len") ||
						 strstr(an, "size"))
						e.args[k] = 1u << rndn(17);
					else
						e.args[k] = rndn(4) ? rndn(64) : 0;
				}
			} else if (pe->kind == P_SYSRET) {
				e.probe = 3 + 2 * sn;
				e.flags = DTR_RETURN;
				e.nargs = 2;
				if (rndn(10) == 0) {
					e.args[0] = (uint64_t)-1;
					e.args[1] = 11;	/* EAGAIN */
				} else {
					e.args[0] = rndn(4096);
					e.args[1] = 0;
				}
			} else {
				/* sched_switch: all 10 slots, two of them char[16] */
				const struct proc *n = &procs[rndn(npids)];
				e.probe = 100;
				e.nargs = 10;
				memset(e.args, 0, sizeof(e.args));
				memcpy(&e.args[0], p->comm, strlen(p->comm));
				e.args[2] = e.tid;
				e.args[3] = 120;
				e.args[4] = rndn(3);
				memcpy(&e.args[5], n->comm, strlen(n->comm));
				e.args[7] = n->pid;
				e.args[8] = 120;
				e.args[9] = 0;
				/* slot layout: comm 0-1, pid 2, prio 3, state 4,
				 * next comm 5-6, next pid 7, next prio 8; 9 spare */
			}
		}
		CK(dtcap_put_event(w, &e));
		percpu_n[best]++;
		written++;
		if ((written & ((1u << 20) - 1)) == 0 || written == nevents) {
			/* a few drops, growing with the run; produced = read + dropped */
			for (uint32_t c = 0; c < ncpus; c++) {
				memset(&cnt[c], 0, sizeof(cnt[c]));
				cnt[c].read = percpu_n[c];
				cnt[c].dropped = percpu_n[c] / 250000 + (c == 1);
				cnt[c].produced = cnt[c].read + cnt[c].dropped;
				cnt[c].skipped = percpu_n[c] / 1000000;
			}
			struct dtcap_count rec;
			memset(&rec, 0, sizeof(rec));
			CK(dtcap_put_counters(w, e.ts, cnt, ncpus, &rec));
		}
	}
	if (nevents == 0) {
		memset(cnt, 0, sizeof(cnt));
		CK(dtcap_put_counters(w, t0, cnt, ncpus, NULL));
	}
	uint64_t bytes = dtcap_bytes_written(w);
	if (dtcap_close(w))
		die("%s", dtcap_create_error());
	if (verbose)
		fprintf(stderr, "dtgen: %s: %llu events, %u cpus, %u sites, %u stacks, "
			"%u pids, %llu bytes before footer\n", out,
			(unsigned long long)written, ncpus, nsites, maxid, npids,
			(unsigned long long)bytes);
	for (uint32_t i = 0; i < nsites; i++)
		(void)sites[i];
	free(sites);
	free(cdf);
	free(procs);
	return 0;
}
