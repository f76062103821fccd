/*
 * fakedt.c - an LD_PRELOAD stand-in for /dev/dt, so the recording loop
 * runs on the host under ASan: open/ioctl/read/poll on "/dev/dt" are
 * served from here with synthetic records (stacks, args, comm, the
 * caller's own pid).  Rate: FAKEDT_RATE events/s (default 200000).
 * FAKEDT_VERSION overrides the ABI version it reports.  Probes enabled
 * with DTEVT_UREGS get registers and a short stack copy (garbage: it
 * unwinds to its ip alone), as events of process FAKEDT_UREGS_PID when
 * that is set; FAKEDT_UREGS_PIDS=N spreads all but every Nth of them over
 * N-1 processes that have exited (pids no kernel gives).  The proc probes (fork, exec, mmap) add every 8th record a
 * process event of that process (or of the caller), whose path is
 * FAKEDT_EXEC for exec and this library for mmap; one in five of them is
 * odd in its own way (a path longer than its record, no NUL, no room for
 * struct dt_path, too few arguments; or a path the kernel could not name,
 * DTPH_UNKNOWN with an empty path, which is well-formed).
 * FAKEDT_FILTERLOG and FAKEDT_ENABLELOG name files that get a line per
 * DTIOCSETFILTER and per DTIOCPRBENABLE (the probe id and its evtflags).
 * It tests the tool, not the kernel: the VM test covers the real device.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"

#define NCPU 2
static int fakefd = -1;
static int recording;
static uint64_t enabled[64];	/* evtflags per probe id, bit 31: enabled */
static struct dt_stats st[NCPU];
static uint64_t t0, generated;
static uint32_t ustack = DT_USTACK_DEFAULT;

static const struct dt_probe_info probes[] = {
	{ 1, 0, DT_PF_TIMER, "profile", "hz", "97" },
	{ 2, 0, DT_PF_TIMER, "interval", "hz", "1" },
	{ 3, 3, 0, "syscall", "read", "entry" },
	{ 4, 2, DT_PF_RETURN, "syscall", "read", "return" },
	{ 5, 3, 0, "syscall", "write", "entry" },
	{ 6, 4, 0, "tracepoint", "sched", "sched_switch" },
	{ 7, 2, 0, "tracepoint", "sched", "sched_process_exec" },
	{ 8, 2, 0, "proc", "process", "fork" },
	{ 9, 2, DT_PF_PATH, "proc", "process", "exec" },
	{ 10, 2, 0, "proc", "process", "exit" },
	{ 11, 6, DT_PF_PATH, "proc", "mmap", "exec" },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))
static struct dt_probe_info kprobes[2];
static int have_kprobe;
static int only_targets;	/* DTIOCSETFILTER asked for targets (DTF_PIDS) */

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int
isdev(const char *p)
{
	return p && strcmp(p, DT_DEVICE) == 0;
}

__attribute__((noinline)) static int
fakeopen(void)
{
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	fakefd = real("/dev/null", O_RDWR | O_CLOEXEC);
	return fakefd;
}

int
open(const char *p, int fl, ...)
{
	va_list ap;
	mode_t m;
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	if (isdev(p))
		return fakeopen();
	va_start(ap, fl);
	m = va_arg(ap, int);
	va_end(ap);
	return real(p, fl, m);
}

int open64(const char *p, int fl, ...) __attribute__((alias("open")));

int
ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int (*real)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fakefd || fd < 0)
		return real(fd, req, arg);
	switch (req) {
	case DTIOCGVERSION:
		*(dt_u32 *)arg = getenv("FAKEDT_VERSION") ? atoi(getenv("FAKEDT_VERSION"))
							  : DT_ABI_VERSION;
		return 0;
	case DTIOCGPLIST: {
		struct dt_probe_list *pl = arg;
		uint32_t n = NPROBES + (have_kprobe ? 2 : 0);
		struct dt_probe_info *out = (void *)(uintptr_t)pl->dtpl_probes;
		for (uint32_t i = 0; i < n && i < pl->dtpl_count; i++)
			out[i] = i < NPROBES ? probes[i] : kprobes[i - NPROBES];
		pl->dtpl_count = n;
		return 0;
	}
	case DTIOCGARGS: {
		struct dt_probe_args *pa = arg;
		pa->dtpa_nargs = pa->dtpa_id == 3 ? 3 : 0;
		if (pa->dtpa_nargs) {
			strcpy(pa->dtpa_args[0].dtai_name, "fd");
			strcpy(pa->dtpa_args[0].dtai_type, "int");
			pa->dtpa_args[0].dtai_slot = 0;
			pa->dtpa_args[0].dtai_nslots = 1;
		}
		if (pa->dtpa_id == 5) {
			/* as dt_syscall.c describes an entry: six registers */
			pa->dtpa_nargs = 6;
			for (unsigned i = 0; i < 6; i++) {
				snprintf(pa->dtpa_args[i].dtai_name, DT_ARGNAMELEN, "arg%u", i);
				strcpy(pa->dtpa_args[i].dtai_type, "long");
				pa->dtpa_args[i].dtai_slot = (dt_u8)i;
				pa->dtpa_args[i].dtai_nslots = 1;
			}
		}
		return 0;
	}
	case DTIOCKPROBE: {
		struct dt_kprobe *kp = arg;
		if (strcmp(kp->dtkp_func, "vfs_read") != 0) {
			errno = ENOENT;
			return -1;
		}
		have_kprobe = 1;
		kprobes[0] = (struct dt_probe_info){ 40, 4, 0, "kprobe", "vfs_read", "entry" };
		kprobes[1] = (struct dt_probe_info){ 41, 2, DT_PF_RETURN, "kprobe", "vfs_read", "return" };
		kp->dtkp_entry_id = 40;
		kp->dtkp_return_id = 41;
		return 0;
	}
	case DTIOCSETBUFSZ:
		return 0;
	case DTIOCSETUSTACK: {
		dt_u32 v = *(dt_u32 *)arg;
		if (v < DT_USTACK_MIN || v > DT_USTACK_MAX || v % 8) {
			errno = EINVAL;
			return -1;
		}
		ustack = v;
		return 0;
	}
	case DTIOCSETFILTER: {
		const struct dt_filter *f = arg;
		const char *log = getenv("FAKEDT_FILTERLOG");
		struct statfs sfs;

		/* dt.ko's checks of comm and cgroup, for dtrec's messages */
		if (((f->dtf_flags & DTF_COMM) &&
		     (!f->dtf_comm[0] || !memchr(f->dtf_comm, 0, sizeof(f->dtf_comm)))) ||
		    (!(f->dtf_flags & DTF_CGROUP) && f->dtf_cgroupfd)) {
			errno = EINVAL;
			return -1;
		}
		if ((f->dtf_flags & DTF_CGROUP) &&
		    (fstatfs(f->dtf_cgroupfd, &sfs) < 0 || sfs.f_type != 0x63677270)) {
			errno = EBADF;
			return -1;
		}
		/* what dtrec asked for, so the test can check it */
		if (log) {
			FILE *lf = fopen(log, "a");
			if (lf) {
				fprintf(lf, "flags=%#x comm=%s cgroup=%d\n", f->dtf_flags,
					(f->dtf_flags & DTF_COMM) ? f->dtf_comm : "-",
					(f->dtf_flags & DTF_CGROUP) ? 1 : 0);
				fclose(lf);
			}
		}
		/* the fake's events are all its recorder's: never a target's */
		only_targets = (f->dtf_flags & DTF_PIDS) != 0;
		return 0;
	}
	case DTIOCPRBENABLE: {
		struct dt_enable *en = arg;
		if (en->dten_id >= 64) {
			errno = ENOENT;
			return -1;
		}
		if (enabled[en->dten_id]) {
			errno = EEXIST;
			return -1;
		}
		enabled[en->dten_id] = en->dten_evtflags | (1ULL << 31);
		if (getenv("FAKEDT_ENABLELOG")) {
			FILE *f = fopen(getenv("FAKEDT_ENABLELOG"), "a");
			if (f) {
				fprintf(f, "id=%u evtflags=%#x\n", en->dten_id, en->dten_evtflags);
				fclose(f);
			}
		}
		return 0;
	}
	case DTIOCRECORD:
		recording = *(dt_u32 *)arg;
		if (recording && !t0)
			t0 = now_ns();
		return 0;
	case DTIOCGCPUSTATS: {
		struct dt_cpu_stats *cs = arg;
		struct dt_stats *o = (void *)(uintptr_t)cs->dtcs_stats;
		for (uint32_t i = 0; i < NCPU && i < cs->dtcs_ncpus; i++)
			o[i] = st[i];
		cs->dtcs_ncpus = NCPU;
		return 0;
	}
	case DTIOCGCLOCK: {
		struct dt_clock *ck = arg;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ck->dtck_mono_ns = now_ns();
		ck->dtck_real_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
		return 0;
	}
	}
	errno = ENOTTY;
	return -1;
}


/*
 * A proc record (probe 8, 9 or 11) of pid at buf (room bytes), kind k of
 * the cycle; 0 if it does not fit or the probe is not enabled.
 */
static size_t
fake_proc(char *buf, size_t room, unsigned k, uint32_t pid, uint64_t ts)
{
	static const char *self;
	static uint64_t base;
	const char *path = NULL;
	unsigned odd = k % 5 == 4 ? (k / 5) % 5 : 5;
	uint32_t probe = k % 3 == 0 ? 8 : k % 3 == 1 ? 9 : 11;
	unsigned na = probe == 11 ? 6 : probe == 9 ? 3 : 2;
	struct dt_rec *r = (struct dt_rec *)buf;
	uint64_t *a = (uint64_t *)(r + 1);
	size_t sz;

	if (self == NULL) {
		Dl_info di;
		if (dladdr((void *)&fake_proc, &di) && di.dli_fname) {
			self = di.dli_fname;
			base = (uint64_t)(uintptr_t)di.dli_fbase;
		} else {
			self = "/fake";
		}
	}
	if (!(enabled[probe] >> 31))
		return 0;
	if (probe == 9)
		path = getenv("FAKEDT_EXEC") ? getenv("FAKEDT_EXEC") : "/fake/bin/prog";
	else if (probe == 11)
		path = self;
	if (odd == 4 && path)
		path = "";	/* DTPH_UNKNOWN */
	if (odd == 3)
		na = 1;		/* too few arguments */
	sz = DT_REC_SIZE(na, 0, 0) + (path ? sizeof(struct dt_path) + DT_PATH_PAD(strlen(path)) : 0);
	if (odd == 2 && path)
		sz = DT_REC_SIZE(na, 0, 0);	/* DTR_PATH and no room for it */
	if (sz > room)
		return 0;
	memset(r, 0, sz);
	r->dtr_size = (uint32_t)sz;
	r->dtr_probe = probe;
	r->dtr_ts = ts;
	r->dtr_pid = r->dtr_tid = pid;
	r->dtr_cpu = k % NCPU;
	r->dtr_nargs = (uint8_t)na;
	strcpy(r->dtr_comm, "fakeprog");
	a[0] = pid;
	if (probe == 8 && na >= 2)
		a[1] = (uint64_t)getpid();
	if (probe == 9 && na >= 3)
		memcpy(&a[1], "fakeprog\0\0\0\0\0\0\0\0", 16);
	if (probe == 11 && na >= 6) {
		a[0] = base;
		a[1] = 4096;
		a[2] = 0;
		a[3] = 5;	/* PROT_READ | PROT_EXEC */
	}
	if (path) {
		struct dt_path ph = { (uint32_t)strlen(path), odd == 4 ? DTPH_UNKNOWN : 0 };
		char *p = (char *)(a + na) + sizeof(ph);
		r->dtr_flags = DTR_PATH;
		if (odd == 0)
			ph.dtph_len = 1U << 30;		/* longer than the record */
		if (odd != 2) {
			memcpy(a + na, &ph, sizeof(ph));
			memcpy(p, path, strlen(path));
			if (odd == 1)	/* no NUL anywhere */
				memset(p + strlen(path), 'x', DT_PATH_PAD(strlen(path)) - strlen(path));
		}
	}
	return sz;
}

ssize_t
read(int fd, void *buf, size_t len)
{
	ssize_t (*real)(int, void *, size_t) = dlsym(RTLD_NEXT, "read");
	uint64_t want, rate = getenv("FAKEDT_RATE") ? strtoull(getenv("FAKEDT_RATE"), NULL, 10) : 200000;
	size_t off = 0;
	uint32_t ids[64], nids = 0;

	static uint64_t upc;
	static pid_t me;

	if (fd != fakefd || fd < 0)
		return real(fd, buf, len);
	if (!upc) {
		/* inside this library: a shared object dtrec must symbolize */
		upc = (uint64_t)(uintptr_t)&fakeopen;
		me = getpid();
	}
	/* code mapped after the recorder's first look at this process */
	if (recording && getenv("FAKEDT_DLOPEN") && now_ns() - t0 > 300000000ULL) {
		static int done;
		if (!done++) {
			void *h = dlopen(getenv("FAKEDT_DLOPEN"), RTLD_NOW);
			void *f = h ? dlsym(h, "fake_dlopened_fn") : NULL;
			if (f)
				upc = (uint64_t)(uintptr_t)f;
		}
	}
	for (uint32_t i = 0; i < 64; i++)
		if (enabled[i] && (i < 8 || i > 11))	/* proc events: fake_proc */
			ids[nids++] = i;
	if (!t0 || nids == 0) {
		errno = EAGAIN;
		return -1;
	}
	/* while recording, events accrue with time; after the stop none do */
	want = recording ? (now_ns() - t0) * rate / 1000000000ULL : generated;
	while (generated < want) {
		uint32_t id = ids[generated % nids];
		uint64_t fl = enabled[id];
		unsigned nk = (fl & DTEVT_KSTACK) ? 3 + generated % 4 : 0;
		unsigned nu = (fl & DTEVT_USTACK) ? 2 + generated % 3 : 0;
		unsigned na = (fl & DTEVT_FUNCARGS) ? 3 : 0;
		/*
		 * DTEVT_UREGS: registers and a stack copy of a few hundred bytes
		 * (every 97th claims more bytes than its record holds: the
		 * reader must notice, not read past it)
		 */
		uint32_t ulen = (fl & DTEVT_UREGS) ? (uint32_t)(generated % 7) * 40 : 0;
		if (ulen > ustack)
			ulen = ustack;
		size_t usz = (fl & DTEVT_UREGS) ? sizeof(struct dt_uregs) + ((ulen + 7) & ~7U) : 0;
		size_t sz = DT_REC_SIZE(na, nk, nu) + usz;
		struct dt_rec *r = (struct dt_rec *)((char *)buf + off);
		uint64_t *a = (uint64_t *)(r + 1);
		unsigned cpu = generated % NCPU;

		if (off + sz > len)
			break;
		if (only_targets) {
			/* left out by the "kernel": not produced, not read */
			generated++;
			st[cpu].dtst_filtered++;
			continue;
		}
		if (generated % 8 == 7) {
			/* a process event in place of this one */
			uint32_t pid = getenv("FAKEDT_UREGS_PID") ? (uint32_t)atoi(getenv("FAKEDT_UREGS_PID"))
								  : (uint32_t)me;
			static unsigned k;
			size_t psz = fake_proc((char *)buf + off, len - off, k, pid,
					       t0 + generated * (1000000000ULL / rate));
			if (psz) {
				unsigned pcpu = k % NCPU;
				k++;
				off += psz;
				generated++;
				st[pcpu].dtst_produced++;
				st[pcpu].dtst_read++;
				continue;
			}
		}
		memset(r, 0, sizeof(*r));
		r->dtr_size = sz;
		r->dtr_probe = id;
		r->dtr_ts = t0 + generated * (1000000000ULL / rate);
		r->dtr_pid = me;
		r->dtr_tid = me;
		r->dtr_cpu = cpu;
		r->dtr_nargs = na;
		r->dtr_nkstack = nk;
		r->dtr_nustack = nu;
		r->dtr_flags = DTR_USERMODE;
		if (fl & DTEVT_COMM)
			strcpy(r->dtr_comm, generated % 5 ? "fakework" : "fakeother");
		for (unsigned i = 0; i < na; i++)
			a[i] = generated + i;
		for (unsigned i = 0; i < nk; i++)
			a[na + i] = 0xffffffff81000000ULL + 0x100 * (i + generated % 7);
		for (unsigned i = 0; i < nu; i++)
			a[na + nk + i] = upc + 1 + i;
		if (usz && getenv("FAKEDT_UREGS_PID")) {
			r->dtr_pid = (uint32_t)atoi(getenv("FAKEDT_UREGS_PID"));
			r->dtr_tid = r->dtr_pid;
		}
		if (usz && getenv("FAKEDT_UREGS_PIDS")) {
			/* past PID_MAX_LIMIT: processes that are gone */
			uint32_t np = (uint32_t)atoi(getenv("FAKEDT_UREGS_PIDS"));
			if (np > 1 && generated % np)
				r->dtr_pid = r->dtr_tid = 0x40000000U + (uint32_t)(generated % np);
		}
		if (usz) {
			struct dt_uregs ur;
			memset(&ur, 0, sizeof(ur));
			ur.dtur_regs[DT_UREG_IP] = upc + 1;
			ur.dtur_regs[DT_UREG_SP] = 0x7ffd00001000ULL;
			ur.dtur_size = generated % 97 == 5 ? 0xffffff00U : ulen;
			ur.dtur_flags = ulen < ustack ? DTUR_SHORT : 0;
			memcpy(a + na + nk + nu, &ur, sizeof(ur));
			memset((char *)(a + na + nk + nu) + sizeof(ur), 0xdb, usz - sizeof(ur));
			r->dtr_flags |= DTR_UREGS;
		}
		off += sz;
		generated++;
		st[cpu].dtst_produced++;
		st[cpu].dtst_read++;
	}
	if (off == 0) {
		errno = EAGAIN;
		return -1;
	}
	return (ssize_t)off;
}
