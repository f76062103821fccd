/*
 * ucopy_test.c - dt.ko's user register and stack copies (DTEVT_UREGS),
 * straight through /dev/dt, in the test VM:
 *  - DTIOCSETUSTACK takes multiples of 8 within the limits only;
 *  - a ring too small for a copy refuses to record (EMSGSIZE);
 *  - a process deep in its stack gets exactly the asked bytes, its own
 *    bytes (a marker it wrote there), ip and sp as its frame-pointer stack
 *    and the records' sizes add up;
 *  - sp on an unmapped page copies nothing and sp 256 bytes below a hole
 *    copies 256, both marked DTUR_SHORT (badstack);
 *  - events of the idle task (no user context) carry no copy.
 * Usage: ucopy_test BADSTACK   (the path of tests/unwind/badstack)
 * Prints PASS/FAIL lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"

#define MAGIC	0x5ca1ab1e0ddba115ULL
#define ASK	4096U

#define CHECK_PREFIX "ucopy."
#include "../check.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint32_t
profile_id(int fd)
{
	struct dt_probe_list pl = { 0 };
	struct dt_probe_info *p;
	uint32_t id = 0;

	if (ioctl(fd, DTIOCGPLIST, &pl) < 0)
		return 0;
	pl.dtpl_count += 64;
	if ((p = calloc(pl.dtpl_count, sizeof(*p))) == NULL)
		return 0;
	pl.dtpl_probes = (uintptr_t)p;
	if (ioctl(fd, DTIOCGPLIST, &pl) == 0)
		for (uint32_t i = 0; i < pl.dtpl_count && !id; i++)
			if (strcmp(p[i].dtpi_prov, "profile") == 0)
				id = p[i].dtpi_id;
	free(p);
	return id;
}

static int
open_dt(void)
{
	int fd = open(DT_DEVICE, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	uint32_t v = 0;

	if (fd < 0 || ioctl(fd, DTIOCGVERSION, &v) < 0 || v != DT_ABI_VERSION) {
		checkf("ucopy.open", 0, "%s, version %u (want %u)", strerror(errno), v,
		       DT_ABI_VERSION);
		exit(1);
	}
	return fd;
}

static int
enable(int fd, uint32_t id, uint32_t flags)
{
	struct dt_enable en = { .dten_id = id, .dten_evtflags = flags,
				.dten_period_ns = 1000000000ULL / 997 };

	return ioctl(fd, DTIOCPRBENABLE, &en);
}

/* Deep in the stack, with MAGIC words just above sp, spin for secs. */
__attribute__((noinline)) static void
deep_spin(double secs)
{
	volatile uint64_t pad[2048];	/* 16 KiB: the copy never reaches the top */
	double t0 = now();

	for (size_t i = 0; i < 2048; i++)
		pad[i] = MAGIC;
	while (now() - t0 < secs)
		for (volatile int i = 0; i < 100000; i++)
			;
	(void)pad[0];
}

struct child {
	pid_t		pid;
	uint64_t	sp;		/* badstack's bad sp; 0: deep_spin */
	const char	*what;
	/* findings */
	unsigned	n, with, bad_size, bad_ip, magic, shortfl, full;
	unsigned	at;		/* badstack: samples at the bad sp */
	uint32_t	minsz, maxsz;	/* of those (deep_spin: of all) */
};

static void
spawn_badstack(struct child *c, const char *bad, const char *mode, double secs)
{
	int p[2];
	char line[128] = "", s[16];

	c->what = mode;
	c->minsz = UINT32_MAX;
	if (pipe(p) < 0)
		exit(1);
	snprintf(s, sizeof(s), "%.1f", secs);
	if ((c->pid = fork()) == 0) {
		dup2(p[1], 1);
		execl(bad, "badstack", mode, s, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	FILE *f = fdopen(p[0], "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "sp %" SCNx64, &c->sp) != 1)
		c->sp = 1;	/* never matches: reported as a bad sp */
	if (f)
		fclose(f);
}

static void
check_rec(struct child *c, const struct dt_rec *r)
{
	size_t base = DT_REC_SIZE(r->dtr_nargs, r->dtr_nkstack, r->dtr_nustack);
	const uint64_t *u = (const uint64_t *)(r + 1) + r->dtr_nargs + r->dtr_nkstack;
	struct dt_uregs ur;

	c->n++;
	if (!(r->dtr_flags & DTR_UREGS))
		return;
	c->with++;
	memcpy(&ur, (const char *)r + base, sizeof(ur));
	if (r->dtr_size != base + sizeof(ur) + ((ur.dtur_size + 7) & ~7U) || ur.dtur_size > ASK)
		c->bad_size++;
	/* ip is the frame-pointer stack's first frame */
	if (r->dtr_nustack == 0 || u[0] != ur.dtur_regs[DT_UREG_IP])
		c->bad_ip++;
	/* badstack: the samples in its loop, not in clock_gettime or startup */
	if (c->sp && ur.dtur_regs[DT_UREG_SP] != c->sp)
		return;
	c->at++;
	if (ur.dtur_size < c->minsz)
		c->minsz = ur.dtur_size;
	if (ur.dtur_size > c->maxsz)
		c->maxsz = ur.dtur_size;
	if (ur.dtur_flags & DTUR_SHORT)
		c->shortfl++;
	if (ur.dtur_size == ASK && !(ur.dtur_flags & DTUR_SHORT))
		c->full++;
	const unsigned char *stk = (const unsigned char *)r + base + sizeof(ur);
	for (uint32_t off = 0; off + 8 <= ur.dtur_size; off += 8) {
		uint64_t w;
		memcpy(&w, stk + off, 8);
		if (w == MAGIC) {
			c->magic++;
			break;
		}
	}
}

int
main(int argc, char **argv)
{
	static char buf[4 << 20];
	uint32_t v, id;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: ucopy_test BADSTACK\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open_dt();
	if ((id = profile_id(fd)) == 0) {
		checkf("ucopy.probe", 0, "no profile probe");
		return 1;
	}

	/* 1. sizes */
	int okz = 1;
	uint32_t badv[] = { 0, 8, DT_USTACK_MIN - 8, 1001, DT_USTACK_MAX + 8, 0xffffffffU };
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++) {
		v = badv[i];
		if (ioctl(fd, DTIOCSETUSTACK, &v) != -1 || errno != EINVAL) {
			checkf("setustack-limits", 0, "size %u was not refused with EINVAL", v);
			okz = 0;
		}
	}
	v = DT_USTACK_MAX;
	okz &= ioctl(fd, DTIOCSETUSTACK, &v) == 0;
	v = ASK;
	okz &= ioctl(fd, DTIOCSETUSTACK, &v) == 0;
	checkf("setustack-limits", okz, "valid sizes refused: %s", strerror(errno));
	/* the first bit no flag has (0x20 was unknown until DTEVT_SUBJECT) */
	checkf("evtflags-unknown", enable(fd, id, DTEVT_VALID + 1) == -1 && errno == EINVAL,
	       "an unknown event flag was accepted");

	/* 2. a ring too small for a record with a copy */
	v = DT_BUFSZ_MIN;
	int r = ioctl(fd, DTIOCSETBUFSZ, &v);
	r = r == 0 ? enable(fd, id, DTEVT_COMM | DTEVT_USTACK | DTEVT_UREGS) : r;
	v = 1;
	checkf("ring-too-small", r == 0 && ioctl(fd, DTIOCRECORD, &v) == -1 && errno == EMSGSIZE,
	       "recording started (or enabling failed: %s) with an %u-byte ring and %u-byte copies",
	       strerror(errno), DT_BUFSZ_MIN, ASK);
	close(fd);

	/* 3. real copies */
	fd = open_dt();
	v = 1 << 20;
	r = ioctl(fd, DTIOCSETBUFSZ, &v);
	v = ASK;
	r |= ioctl(fd, DTIOCSETUSTACK, &v);
	r |= enable(fd, id, DTEVT_COMM | DTEVT_USTACK | DTEVT_UREGS);
	if (r) {
		checkf("ucopy.setup", 0, "%s", strerror(errno));
		return 1;
	}
	struct child ch[3];
	memset(ch, 0, sizeof(ch));
	ch[0].what = "deep";
	ch[0].minsz = UINT32_MAX;
	if ((ch[0].pid = fork()) == 0) {
		deep_spin(2.0);
		_exit(0);
	}
	spawn_badstack(&ch[1], argv[1], "unmapped", 2.0);
	spawn_badstack(&ch[2], argv[1], "edge", 2.0);
	v = 1;
	if (ioctl(fd, DTIOCRECORD, &v) < 0) {
		checkf("ucopy.record", 0, "%s", strerror(errno));
		return 1;
	}
	unsigned idle = 0, idle_with = 0, bad = 0;
	double t0 = now();
	int stopped = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno != EAGAIN) {
			checkf("ucopy.read", 0, "%s", strerror(errno));
			return 1;
		}
		for (ssize_t off = 0; n > 0 && off < n;) {
			const struct dt_rec *rec = (const struct dt_rec *)(void *)(buf + off);
			if (rec->dtr_size < sizeof(*rec) || rec->dtr_size > n - off) {
				bad++;
				break;
			}
			if (rec->dtr_pid == 0) {
				idle++;
				idle_with += !!(rec->dtr_flags & DTR_UREGS);
			}
			for (int i = 0; i < 3; i++)
				if ((pid_t)rec->dtr_pid == ch[i].pid)
					check_rec(&ch[i], rec);
			off += rec->dtr_size;
		}
		if (stopped && n <= 0)
			break;
		if (!stopped && now() - t0 > 3.0) {
			/* the children are done by now: idle CPUs were sampled */
			v = 0;
			ioctl(fd, DTIOCRECORD, &v);
			stopped = 1;
		}
		if (n <= 0)
			usleep(100000);
	}
	for (int i = 0; i < 3; i++)
		waitpid(ch[i].pid, NULL, 0);
	checkf("records-wellformed", bad == 0, "%u malformed", bad);
	for (int i = 0; i < 3; i++) {
		struct child *c = &ch[i];
		char nm[64];
		snprintf(nm, sizeof(nm), "%s-copied", c->what);
		/* all but those in exit, after the task dropped its memory */
		checkf(nm, c->n >= 20 && c->with * 100 >= c->n * 98,
		       "%u of %u samples carry registers and stack", c->with, c->n);
		snprintf(nm, sizeof(nm), "%s-sizes", c->what);
		checkf(nm, c->with && c->bad_size == 0, "%u records whose size does not add up",
		       c->bad_size);
		snprintf(nm, sizeof(nm), "%s-ip", c->what);
		checkf(nm, c->with && c->bad_ip == 0,
		       "%u samples whose ip is not their frame-pointer stack's first frame",
		       c->bad_ip);
	}
	/* startup and the moment before the marker is written aside: 90% */
	checkf("deep-full",
	       ch[0].with && ch[0].full * 10 >= ch[0].with * 9 && ch[0].magic * 10 >= ch[0].with * 9,
	       "%u of %u copies hold all %u bytes (%u..%u), %u short, %u hold the marker",
	       ch[0].full, ch[0].with, ASK, ch[0].minsz, ch[0].maxsz, ch[0].shortfl, ch[0].magic);
	for (int i = 1; i < 3; i++) {
		struct child *c = &ch[i];
		char nm[64];
		uint32_t want = i == 1 ? 0 : 256;
		snprintf(nm, sizeof(nm), "%s-short", c->what);
		checkf(nm, c->at * 10 >= c->with * 9 && c->at && c->minsz == want && c->maxsz == want &&
		       c->shortfl == c->at,
		       "%u of %u samples at sp %#" PRIx64 ": copies of %u..%u bytes (want %u), %u marked short",
		       c->at, c->with, c->sp, c->minsz, c->maxsz, want, c->shortfl);
	}
	checkf("idle-none", idle > 0 && idle_with == 0, "%u of %u idle-task samples carry a copy",
	       idle_with, idle);
	close(fd);
	return check_status();
}
