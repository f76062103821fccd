/*
 * unwtest.c - records a command with perf_event_open (cpu-clock samples
 * with user registers and a user stack copy, MMAP2 records for the
 * mappings), unwinds every sample with cli/lib/rec/unwind.c as it arrives,
 * names the frames with cli/lib/rec/elfsyms.c, and checks what the caller
 * asks for.  Prints "PASS name" / "FAIL name: why" lines (../check.h), the
 * figures of a PASS on a "#" line before it; exits 0 unless it could not
 * run (die) or crashed.
 *
 *   unwtest [options] -- CMD [ARGS...]
 *   -n NAME        test name in the PASS/FAIL lines
 *   -S BYTES       user stack copy per sample (default 16384)
 *   -F HZ          sampling frequency (default 2000)
 *   -c F1,F2,..    expected chain, innermost first, ending in main: of the
 *                  samples whose pc is in one of them, >= -p percent must
 *                  show the chain from there to main, complete
 *   -e             of all samples, >= -p percent must be complete and
 *                  reach __libc_start_call_main or _start
 *   -p PCT         threshold (default 95)
 *   -x             robustness: cut each sample's stack copy mid-frame,
 *                  corrupt it, forget the process: results must be a
 *                  prefix of the full stack, marked truncated
 *   -b SECONDS     benchmark: unwind the recorded samples again for that
 *                  long on one core; print bench lines
 *   -O FILE        the command's standard output goes there
 *   -z FILE        (repeatable, no command) fuzz: read 300 damaged copies
 *                  of FILE with elfsyms and unwind random samples in them
 *   -v             print every symbolized stack
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elfsyms.h"
#include "unwind.h"
#include "../check.h"
#include "../xorshift.h"

#define MAXPCS	256
#define RINGPAGES 256	/* 1 MiB: a 16 KiB stack per sample, a few ms of slack */

struct sample {
	uint32_t	pid, tid;
	uint64_t	regs[24];
	uint64_t	mask;
	unsigned char	*stack;
	size_t		len;
	uint64_t	pcs[MAXPCS];
	int		n, trunc;
};

struct xmap {
	uint32_t	pid;
	uint64_t	start, end, pgoff;
	char		*path;
};

static const char *tname = "unwind";
static struct sample *samples;
static size_t nsamples, capsamples;
static struct xmap *maps;
static size_t nmaps, capmaps;
static struct elfsyms_cache *ec;
static int verbose;
static const char *child_out;

/* The assertion NAME of this run: "TNAME/SUB", or TNAME itself when SUB is "". */
static const char *
aname(const char *sub)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s%s%s", tname, *sub ? "/" : "", sub);
	return buf;
}

/* FAIL NAME/SUB: the formatted reason. */
__attribute__((format(printf, 2, 3)))
static void
failf(const char *sub, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	check(aname(sub), 0, why);
}

/* PASS NAME/SUB, its figures on a "#" line before it (the PASS line is a name only). */
__attribute__((format(printf, 2, 3)))
static void
passf(const char *sub, const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", aname(sub));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	check(aname(sub), 1, "");
}

/* A run that cannot go on FAILs under the run's own name. */
__attribute__((format(printf, 1, 2), noreturn))
static void
die(const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	failf("", "%s", why);
	exit(1);
}

static uint64_t
now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* ----------------------------------------------------------- naming */

static const char *
name_of(uint32_t pid, uint64_t pc, char *buf, size_t len)
{
	for (size_t i = nmaps; i-- > 0;) {
		const struct xmap *m = &maps[i];
		if (m->pid != pid || pc < m->start || pc >= m->end)
			continue;
		char err[256];
		struct elfsyms_file *f = elfsyms_get(ec, m->path, NULL, err, sizeof(err));
		uint64_t v = pc - m->start + m->pgoff + (f ? f->f.load_bias_hint : 0);
		if (f && f->f.nsyms) {
			size_t lo = 0, hi = f->f.nsyms;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (f->f.syms[mid].addr <= v)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (size_t k = lo, t = 0; k > 0 && t < 8; k--, t++) {
				const struct dtcap_sym *s = &f->f.syms[k - 1];
				if ((s->size && v - s->addr < s->size) || (!s->size && k == lo))
					return s->name;
			}
		}
		const char *b = strrchr(m->path, '/');
		snprintf(buf, len, "%s+0x%" PRIx64, b ? b + 1 : m->path, pc - m->start + m->pgoff);
		return buf;
	}
	snprintf(buf, len, "0x%" PRIx64, pc);
	return buf;
}

static void
print_stack(const struct sample *s)
{
	char b[128];

	printf("%s %d:", s->trunc ? "T" : "C", s->n);
	for (int i = s->n; i-- > 0;)
		printf("%s%s", i == s->n - 1 ? " " : ";", name_of(s->pid, s->pcs[i], b, sizeof(b)));
	printf("\n");
}

/* ----------------------------------------------------------- recording */

static int
perf_open(struct perf_event_attr *a, pid_t pid)
{
	return (int)syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void
handle(struct dtunw *u, const struct perf_event_header *h, uint64_t mask)
{
	const unsigned char *p = (const unsigned char *)(h + 1);

	if (h->type == PERF_RECORD_MMAP2) {
		struct { uint32_t pid, tid; uint64_t addr, len, pgoff; uint32_t maj, min;
			 uint64_t ino, gen; uint32_t prot, flags; } r;
		memcpy(&r, p, sizeof(r));
		const char *name = (const char *)p + sizeof(r);
		if (!(r.prot & 4))
			return;
		if (dtunw_map(u, r.pid, r.addr, r.len, r.pgoff, name) < 0)
			die("dtunw_map failed");
		if (nmaps == capmaps) {
			capmaps = capmaps ? capmaps * 2 : 64;
			maps = realloc(maps, capmaps * sizeof(*maps));
			if (maps == NULL)
				die("out of memory");
		}
		maps[nmaps++] = (struct xmap){ r.pid, r.addr, r.addr + r.len, r.pgoff, strdup(name) };
		return;
	}
	if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		uint32_t pid;
		memcpy(&pid, p, 4);
		dtunw_forget(u, pid);	/* exec: a new address space follows */
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	struct sample s = { 0 };
	uint64_t ip, abi, size;
	memcpy(&ip, p, 8);
	p += 8;
	memcpy(&s.pid, p, 4);
	memcpy(&s.tid, p + 4, 4);
	p += 8 + 8;	/* tid, time */
	memcpy(&abi, p, 8);
	p += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return;		/* no user context (kernel thread) */
	unsigned nr = (unsigned)__builtin_popcountll(mask);
	memcpy(s.regs, p, nr * 8);
	s.mask = mask;
	p += nr * 8;
	memcpy(&size, p, 8);
	p += 8;
	if (size) {
		uint64_t dyn;
		memcpy(&dyn, p + size, 8);
		s.len = dyn < size ? dyn : size;
		s.stack = malloc(s.len ? s.len : 1);
		if (s.stack == NULL)
			die("out of memory");
		memcpy(s.stack, p, s.len);
	}
	s.n = dtunw_unwind(u, s.pid, s.regs, s.mask, s.stack, s.len, s.pcs, MAXPCS, &s.trunc);
	if (nsamples == capsamples) {
		capsamples = capsamples ? capsamples * 2 : 1024;
		samples = realloc(samples, capsamples * sizeof(*samples));
		if (samples == NULL)
			die("out of memory");
	}
	samples[nsamples++] = s;
}

static void
drain(struct dtunw *u, struct perf_event_mmap_page *mp, size_t dsize, uint64_t mask)
{
	unsigned char *data = (unsigned char *)mp + mp->data_offset;
	static unsigned char rec[65536];
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % dsize];
		if (h.size < sizeof(h))
			die("bad record size %u", h.size);
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % dsize];
		tail += h.size;
		handle(u, (const struct perf_event_header *)rec, mask);
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static int
record(struct dtunw *u, char **argv, unsigned stack, unsigned hz)
{
	int go[2], st;
	pid_t pid;
	struct perf_event_attr a = { 0 };
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), dsize = RINGPAGES * pg;

	if (pipe2(go, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		if (child_out) {
			int o = open(child_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (o < 0 || dup2(o, 1) < 0)
				_exit(125);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_freq = hz;
	a.freq = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = DTUNW_REGS_MASK;
	a.sample_stack_user = stack;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	a.task = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.exclude_guest = 1;
	int fd = perf_open(&a, pid);
	if (fd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		die("perf_event_open refused (%s): this suite needs it (root, perf_event_paranoid <= 2)",
		    strerror(errno));
	}
	void *ring = mmap(NULL, pg + dsize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		die("perf ring mmap: %s", strerror(errno));
	if (write(go[1], "g", 1) != 1)
		die("cannot start the child");
	close(go[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		poll(&pfd, 1, 10);
		drain(u, ring, dsize, a.sample_regs_user);
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
	}
	drain(u, ring, dsize, a.sample_regs_user);
	munmap(ring, pg + dsize);
	close(fd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("%s exited with status %d", argv[0], st);
	return 0;
}

/* ----------------------------------------------------------- checks */

static int
reaches_entry(const struct sample *s)
{
	char b[128];

	if (s->trunc || s->n < 2)
		return 0;
	for (int i = s->n; i-- > 0 && i >= s->n - 3;) {
		const char *nm = name_of(s->pid, s->pcs[i], b, sizeof(b));
		if (strcmp(nm, "_start") == 0 || strcmp(nm, "__libc_start_call_main") == 0)
			return 1;
	}
	return 0;
}

static int
chain_ok(const struct sample *s, char **chain, int nchain, int *relevant)
{
	char b[128];
	int k;

	*relevant = 0;
	if (s->n < 1)
		return 0;
	const char *top = name_of(s->pid, s->pcs[0], b, sizeof(b));
	for (k = 0; k < nchain && strcmp(top, chain[k]) != 0; k++)
		;
	if (k == nchain)
		return 0;
	*relevant = 1;
	if (s->trunc)
		return 0;
	for (int i = 0; k < nchain; i++, k++) {
		if (i >= s->n || strcmp(name_of(s->pid, s->pcs[i], b, sizeof(b)), chain[k]) != 0)
			return 0;
	}
	return reaches_entry(s);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t
xorshift(void)
{
	return xorshift64(&rng);
}

/* Is b (n, t) a prefix of the full result a, marked truncated when shorter? */
static const char *
prefix_ok(const struct sample *a, const uint64_t *pcs, int n, int t)
{
	if (n > a->n)
		return "more frames than the full stack";
	for (int i = 0; i < n; i++)
		if (pcs[i] != a->pcs[i])
			return "a frame differs from the full stack";
	if (n < a->n && !t)
		return "shorter than the full stack but not marked truncated";
	return NULL;
}

static void
robustness(struct dtunw *u)
{
	uint64_t pcs[MAXPCS];
	unsigned char *copy;
	size_t cut = 0, shorter = 0, corrupt = 0, diff = 0, tested = 0, plaus = 0, pdiff = 0;
	const char *why;
	int t, n;

	/* 1. the copy ends mid-frame: every 8-byte cut below the full stack */
	for (size_t i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];
		if (s->trunc || s->len < 64)
			continue;
		tested++;
		for (size_t len = 0; len < s->len; len += 8 + (xorshift() % 512) / 8 * 8) {
			n = dtunw_unwind(u, s->pid, s->regs, s->mask, s->stack, len, pcs, MAXPCS, &t);
			cut++;
			if ((why = prefix_ok(s, pcs, n, t)) != NULL) {
				failf("cut", "sample %zu cut at %zu: %s", i, len, why);
				return;
			}
			shorter += n < s->n;
		}
	}
	if (tested == 0 || shorter == 0) {
		failf("cut", "no complete sample to cut (%zu) or no cut shortened one",
		       tested);
		return;
	}
	passf("cut", "%zu cuts of %zu stacks: %zu shorter, all a truncated prefix",
	       cut, tested, shorter);

	/* 2. corrupted: random words overwritten with random values, stack
	 * addresses or pcs of this very process */
	for (size_t i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];
		if (s->trunc || s->len < 64)
			continue;
		copy = malloc(s->len);
		if (copy == NULL)
			die("out of memory");
		for (int round = 0; round < 8; round++) {
			memcpy(copy, s->stack, s->len);
			for (int w = 0; w < 4; w++) {
				size_t off = (xorshift() % (s->len / 8)) * 8;
				uint64_t v = xorshift();
				if (round % 4 == 1)
					v = s->regs[__builtin_popcountll(s->mask & ((1ULL << DTUNW_REG_SP) - 1))] +
					    (v % s->len);
				else if (round % 4 == 2 && s->n > 1)
					v = s->pcs[xorshift() % (uint64_t)s->n] + (v % 64);
				else if (round % 4 == 3)
					v = 0;
				memcpy(copy + off, &v, 8);
			}
			n = dtunw_unwind(u, s->pid, s->regs, s->mask, copy, s->len, pcs, MAXPCS, &t);
			if (round % 4 == 2) {
				plaus++;
				pdiff += prefix_ok(s, pcs, n, t) != NULL;
			} else {
				corrupt++;
				diff += prefix_ok(s, pcs, n, t) != NULL;
			}
		}
		free(copy);
	}
	if (diff) {
		failf("corrupt", "%zu of %zu stacks corrupted with random words, stack "
		       "addresses or zeros gave frames not in the real stack", diff, corrupt);
		return;
	}
	/* A word overwritten with (near) a real return address of the same
	 * stack can pass every check: no unwinder can tell; rare is all we
	 * can ask. */
	if (pdiff * 100 > plaus) {
		failf("corrupt", "%zu of %zu stacks corrupted with nearby return addresses "
		       "gave frames not in the real stack (> 1%%)", pdiff, plaus);
		return;
	}
	passf("corrupt", "%zu stacks corrupted with random words, stack addresses or zeros: "
	       "no frame not in the real stack; %zu with nearby return addresses: %zu (<= 1%%)",
	       corrupt, plaus, pdiff);

	/* 3. garbage registers and lengths: never a crash */
	for (size_t i = 0; i < nsamples && i < 200; i++) {
		struct sample *s = &samples[i];
		uint64_t regs[24];
		for (int k = 0; k < 24; k++)
			regs[k] = xorshift();
		n = dtunw_unwind(u, s->pid, regs, s->mask, s->stack, s->len, pcs, MAXPCS, &t);
		if (n < 1 || !t || pcs[0] != regs[__builtin_popcountll(s->mask & ((1ULL << DTUNW_REG_IP) - 1))]) {
			failf("garbage", "random registers gave %d frames, truncated %d", n, t);
			return;
		}
		n = dtunw_unwind(u, s->pid, s->regs, 0, s->stack, s->len, pcs, MAXPCS, &t);
		if (n != 0 || !t) {
			failf("garbage", "no registers gave %d frames", n);
			return;
		}
		n = dtunw_unwind(u, s->pid, s->regs, s->mask, NULL, 0, pcs, 4, &t);
		if (n < 1 || prefix_ok(s, pcs, n, t)) {
			failf("garbage", "no stack copy gave %d frames, truncated %d", n, t);
			return;
		}
	}
	passf("garbage", "random registers, no registers, no stack: truncated, no crash");

	/* 4. a forked child unwinds like its parent; a mapping laid over part
	 * of the text hides exactly the frames in that part */
	{
		uint32_t child = samples[0].pid + 100000;
		size_t differ = 0, hidden = 0, wrong = 0;
		dtunw_fork(u, samples[0].pid, child);
		for (size_t i = 0; i < nsamples; i++) {
			struct sample *s = &samples[i];
			if (s->pid != samples[0].pid)
				continue;
			n = dtunw_unwind(u, child, s->regs, s->mask, s->stack, s->len, pcs, MAXPCS, &t);
			differ += n != s->n || t != s->trunc || memcmp(pcs, s->pcs, (size_t)n * 8) != 0;
		}
		/* the page of the innermost pc of a sample, remapped to a file
		 * that is not ELF: frames there cannot be unwound any more */
		uint64_t page = samples[nsamples / 2].pcs[0] & ~0xfffULL;
		dtunw_map(u, child, page, 4096, 0, "/proc/self/status");
		for (size_t i = 0; i < nsamples; i++) {
			struct sample *s = &samples[i];
			int inside = -1;
			if (s->pid != samples[0].pid)
				continue;
			for (int k = 0; k < s->n && inside < 0; k++)
				if ((s->pcs[k] & ~0xfffULL) == page)
					inside = k;
			n = dtunw_unwind(u, child, s->regs, s->mask, s->stack, s->len, pcs, MAXPCS, &t);
			if (inside < 0) {
				wrong += n != s->n || t != s->trunc ||
					 memcmp(pcs, s->pcs, (size_t)n * 8) != 0;
			} else {
				hidden++;
				/* frames up to the remapped one may stay; none after it */
				wrong += !t || n > inside + 1 || prefix_ok(s, pcs, n, t) != NULL;
			}
		}
		dtunw_forget(u, child);
		if (differ || wrong || hidden == 0) {
			failf("maps", "fork: %zu samples differ; remap: %zu of %zu samples through "
			       "the remapped page wrong", differ, wrong, hidden);
			return;
		}
		passf("maps", "a forked child unwinds like its parent; a remapped page ends "
		       "the %zu stacks through it, the others unchanged", hidden);
	}

	/* 5. the process has exited (it has): files are still read by path */
	size_t same = 0, comp = 0;
	for (size_t i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];
		n = dtunw_unwind(u, s->pid, s->regs, s->mask, s->stack, s->len, pcs, MAXPCS, &t);
		if (prefix_ok(s, pcs, n, t) == NULL && n == s->n && t == s->trunc)
			same++;
		comp += !s->trunc;
	}
	if (same != nsamples) {
		failf("exited", "%zu of %zu samples unwound differently after the exit",
		       nsamples - same, nsamples);
		return;
	}
	/* ... and once the recorder was told of the exit: ip only, truncated */
	dtunw_forget(u, samples[0].pid);
	for (size_t i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];
		n = dtunw_unwind(u, s->pid, s->regs, s->mask, s->stack, s->len, pcs, MAXPCS, &t);
		if (n != 1 || !t || pcs[0] != s->pcs[0]) {
			failf("exited", "after dtunw_forget: %d frames, truncated %d", n, t);
			return;
		}
	}
	passf("exited", "%zu samples (%zu complete) unwound the same after the exit; "
	       "forgotten process: ip only, truncated", nsamples, comp);
}

static struct dtunw *
unwinder_with_maps(int dwfl_only)
{
	struct dtunw *u = dtunw_new();

	if (u == NULL)
		die("out of memory");
	dtunw_set_dwfl_only(u, dwfl_only);
	for (size_t i = 0; i < nmaps; i++)
		dtunw_map(u, maps[i].pid, maps[i].start, maps[i].end - maps[i].start,
			  maps[i].pgoff, maps[i].path);
	return u;
}

/* The rule cache and libdwfl must give the same stacks, sample for sample. */
static void
compare_paths(void)
{
	struct dtunw *fast = unwinder_with_maps(0), *slow = unwinder_with_maps(1);
	uint64_t a[MAXPCS], b[MAXPCS];
	size_t differ = 0, first = SIZE_MAX;
	struct dtunw_stats st;

	for (size_t i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];
		int ta, tb;
		int na = dtunw_unwind(fast, s->pid, s->regs, s->mask, s->stack, s->len, a, MAXPCS, &ta);
		int nb = dtunw_unwind(slow, s->pid, s->regs, s->mask, s->stack, s->len, b, MAXPCS, &tb);
		if (na != nb || ta != tb || memcmp(a, b, (size_t)na * 8) != 0) {
			if (first == SIZE_MAX)
				first = i;
			differ++;
		}
	}
	dtunw_get_stats(fast, &st);
	if (differ)
		failf("fastpath", "%zu of %zu samples unwound differently by the rule cache "
		       "and by libdwfl (first: sample %zu)", differ, nsamples, first);
	else
		passf("fastpath", "%zu samples, the rule cache (%.1f%% of them) and libdwfl "
		       "agree on every one", nsamples,
		       100.0 * (double)st.fast / (double)(st.samples ? st.samples : 1));
	dtunw_free(fast);
	dtunw_free(slow);
}

static double
bench(double secs, int dwfl_only)
{
	struct dtunw *u = unwinder_with_maps(dwfl_only);
	const char *pre = dwfl_only ? "libdwfl_only_" : "";
	uint64_t pcs[MAXPCS], t0, t1, n = 0, frames = 0;
	int t;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	/* first pass: opening files and building tables, reported apart */
	t0 = now_ns();
	for (size_t i = 0; i < nsamples; i++)
		dtunw_unwind(u, samples[i].pid, samples[i].regs, samples[i].mask,
			     samples[i].stack, samples[i].len, pcs, MAXPCS, &t);
	t1 = now_ns();
	printf("bench unwind.%sfirst_pass_us_per_sample %.2f us\n", pre,
	       (double)(t1 - t0) / 1e3 / (double)(nsamples ? nsamples : 1));
	t0 = now_ns();
	do {
		for (size_t i = 0; i < nsamples; i++, n++)
			frames += (uint64_t)dtunw_unwind(u, samples[i].pid, samples[i].regs,
						 samples[i].mask, samples[i].stack,
						 samples[i].len, pcs, MAXPCS, &t);
		t1 = now_ns();
	} while ((double)(t1 - t0) / 1e9 < secs);
	printf("bench unwind.%ssamples_per_s %.0f samples/s\n", pre,
	       (double)n / ((double)(t1 - t0) / 1e9));
	if (!dwfl_only) {
		printf("target >= 100000\n");
		printf("bench unwind.frames_per_sample %.1f frames\n",
		       (double)frames / (double)(n ? n : 1));
	}
	dtunw_free(u);
	return (double)n / ((double)(t1 - t0) / 1e9);
}

/* Damaged ELF files must cost their symbols or frames, never a crash. */
static void
fuzz(char **files, int nfiles)
{
	char tmpl[] = "/tmp/unwfuzz.XXXXXX";
	int tfd = mkstemp(tmpl);
	size_t rounds = 0;

	if (tfd < 0)
		die("mkstemp: %s", strerror(errno));
	for (int fi = 0; fi < nfiles; fi++) {
		size_t len;
		FILE *fp = fopen(files[fi], "rb");
		if (fp == NULL)
			die("%s: %s", files[fi], strerror(errno));
		fseek(fp, 0, SEEK_END);
		len = (size_t)ftell(fp);
		rewind(fp);
		unsigned char *orig = malloc(len), *buf = malloc(len);
		if (!orig || !buf || fread(orig, 1, len, fp) != len)
			die("%s: cannot read", files[fi]);
		fclose(fp);
		for (int r = 0; r < 300; r++, rounds++) {
			size_t n = len;
			memcpy(buf, orig, len);
			if (r % 3 == 0)
				n = xorshift() % len;		/* truncated */
			int flips = 1 + (int)(xorshift() % 64);
			for (int k = 0; k < flips; k++) {
				/* headers and tables live near both ends */
				size_t off = (k & 1) ? xorshift() % (len < 4096 ? len : 4096)
						     : xorshift() % len;
				buf[off] = (unsigned char)xorshift();
			}
			if (ftruncate(tfd, 0) < 0 || pwrite(tfd, buf, n, 0) != (ssize_t)n)
				die("write %s: %s", tmpl, strerror(errno));
			char err[256];
			struct elfsyms_file *f = elfsyms_read(tmpl, NULL, err, sizeof(err));
			elfsyms_file_free(f);
			/* a fresh unwinder each time: the file cache keys on the inode */
			struct dtunw *u = dtunw_new();
			uint64_t regs[24], pcs[64], stackbuf[512];
			int t;
			for (int k = 0; k < 24; k++)
				regs[k] = xorshift();
			for (int k = 0; k < 512; k++)
				stackbuf[k] = 0x400000 + xorshift() % (len + 0x1000);
			regs[__builtin_popcountll(DTUNW_REGS_MASK & ((1ULL << DTUNW_REG_IP) - 1))] =
				0x400000 + xorshift() % (len + 1);
			regs[__builtin_popcountll(DTUNW_REGS_MASK & ((1ULL << DTUNW_REG_SP) - 1))] =
				0x7ff000000000ULL;
			dtunw_map(u, 4242, 0x400000, len + 0x1000, 0, tmpl);
			for (int k = 0; k < 4; k++)
				dtunw_unwind(u, 4242, regs, DTUNW_REGS_MASK, stackbuf, sizeof(stackbuf),
					     pcs, 64, &t);
			dtunw_free(u);
		}
		free(orig);
		free(buf);
	}
	close(tfd);
	unlink(tmpl);
	passf("", "%zu damaged copies of %d ELF files read and unwound in, no crash", rounds,
	      nfiles);
}

int
main(int argc, char **argv)
{
	unsigned stack = 16384, hz = 2000;
	double pct = 95, bsecs = 0;
	char *chainarg = NULL, *chain[32];
	int nchain = 0, entry = 0, robust = 0, c, nfuzz = 0;
	char *fuzzfiles[8];

	while ((c = getopt(argc, argv, "+n:S:F:c:ep:xb:vO:z:")) != -1) {
		switch (c) {
		case 'n': tname = optarg; break;
		case 'S': stack = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'F': hz = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'c': chainarg = optarg; break;
		case 'e': entry = 1; break;
		case 'p': pct = atof(optarg); break;
		case 'x': robust = 1; break;
		case 'b': bsecs = atof(optarg); break;
		case 'v': verbose = 1; break;
		case 'O': child_out = optarg; break;
		case 'z':
			if (nfuzz < 8)
				fuzzfiles[nfuzz++] = optarg;
			break;
		default: die("usage: unwtest [-n NAME] [-S BYTES] [-F HZ] [-c CHAIN] [-e] [-p PCT] [-x] [-b SECS] [-v] [-O FILE] -- CMD... | -z FILE...");
		}
	}
	if (nfuzz) {
		fuzz(fuzzfiles, nfuzz);
		return 0;
	}
	if (optind >= argc)
		die("no command");
	for (char *tok = chainarg ? strtok(chainarg, ",") : NULL; tok && nchain < 32;
	     tok = strtok(NULL, ","))
		chain[nchain++] = tok;
	ec = elfsyms_cache_new();
	struct dtunw *u = dtunw_new();
	if (ec == NULL || u == NULL)
		die("out of memory");
	record(u, argv + optind, stack, hz);
	if (nsamples < 100)
		die("only %zu samples recorded", nsamples);

	size_t comp = 0, ent = 0, rel = 0, good = 0;
	for (size_t i = 0; i < nsamples; i++) {
		int r;
		if (verbose)
			print_stack(&samples[i]);
		comp += !samples[i].trunc;
		ent += reaches_entry(&samples[i]);
		if (nchain) {
			good += chain_ok(&samples[i], chain, nchain, &r);
			rel += r;
		}
	}
	printf("samples %zu complete %zu (%.1f%%) entry %zu (%.1f%%)\n", nsamples, comp,
	       100.0 * (double)comp / (double)nsamples, ent, 100.0 * (double)ent / (double)nsamples);
	if (nchain) {
		double p = rel ? 100.0 * (double)good / (double)rel : 0;
		if (rel < 100 || p < pct)
			failf("chain", "%zu of %zu samples in the chain show it whole to main "
			       "(%.1f%% < %.0f%%)", good, rel, p, pct);
		else
			passf("chain", "%zu of %zu samples in the chain show it whole to main "
			       "(%.1f%%)", good, rel, p);
	}
	if (entry) {
		double p = 100.0 * (double)ent / (double)nsamples;
		if (p >= pct)
			passf("entry", "%zu of %zu samples reach __libc_start_call_main or _start "
			      "(%.1f%%, need %.0f%%)", ent, nsamples, p, pct);
		else
			failf("entry", "%zu of %zu samples reach __libc_start_call_main or _start "
			      "(%.1f%%, need %.0f%%)", ent, nsamples, p, pct);
	}
	compare_paths();
	if (robust) {
		char nm[200];
		robustness(u);
		/* and the same through libdwfl alone (robustness forgot the process) */
		snprintf(nm, sizeof(nm), "%s-libdwfl", tname);
		tname = nm;
		dtunw_free(u);
		u = unwinder_with_maps(1);
		robustness(u);
	}
	if (bsecs > 0) {
		printf("bench unwind.complete_pct %.1f %%\n", 100.0 * (double)ent / (double)nsamples);
		printf("target >= 95\n");
		double fast = bench(bsecs, 0), slow = bench(bsecs / 3, 1);
		printf("bench unwind.speedup_vs_libdwfl %.1f x\n", slow > 0 ? fast / slow : 0);
	}
	dtunw_free(u);
	elfsyms_cache_free(ec);
	for (size_t i = 0; i < nsamples; i++)
		free(samples[i].stack);
	free(samples);
	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	free(maps);
	/*
	 * 0 after a FAIL too: run.sh's negative controls expect FAIL lines from
	 * a run that ends well, and tell a crash (ASan exits 1) by the status.
	 */
	return 0;
}
