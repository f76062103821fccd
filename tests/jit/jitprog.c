/*
 * jitprog.c - a tiny JIT for tests/jit: copies a counting loop into an
 * anonymous executable mapping, describes it in /tmp/perf-PID.map as a
 * JIT compiler does for perf, and runs it for SECONDS.  Two regions: the
 * hot one ("jit_hot_loop", most of the time) and a colder one
 * ("jit_cold_loop", a tenth of the calls), so names are checked where
 * they are, not just that something was named.
 *
 * jitprog SECONDS [MAPMODE]: MAPMODE "early" (default) writes the map
 * before running, "late" only just before exiting; "foreign" writes it,
 * then gives it to uid 65534 (not the process's user: it must not be
 * believed); "symlink" makes it a symbolic link to the real text;
 * "replace" runs half the time, then recompiles the hot loop in place
 * (made writable, rewritten, made executable again, as W^X JITs do) and
 * appends a line naming it "jit_hot_loop_v2" at the same address.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* dec rcx until zero, starting from rdi: mov rcx,rdi; 1: dec rcx; jnz 1b; ret */
static const unsigned char loop_code[] = {
	0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3,
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The JIT loops are leaves without a frame: a frame-pointer walk from them
 * starts at their caller's caller.  Calling them from here (a frame of its
 * own, not a tail call) makes that main, so stacks reach this program and
 * libc, whose symbols dtrec stores only once a stack reaches them.
 */
static __attribute__((noinline)) void call_jit(void (*f)(uint64_t), uint64_t n)
{
	f(n);
	__asm__ volatile("" ::: "memory");
}

static int write_map(uintptr_t hot, uintptr_t cold, const char *mode)
{
	char path[64], real[80];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(real, sizeof(real), "%s.real", path);
	if (strcmp(mode, "symlink") == 0 && symlink(real, path))
		return -1;
	FILE *f = fopen(strcmp(mode, "symlink") ? path : real, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)hot, sizeof(loop_code));
	fprintf(f, "%lx %zx jit_cold_loop\n", (unsigned long)cold, sizeof(loop_code));
	if (fclose(f))
		return -1;
	return strcmp(mode, "foreign") ? 0 : chown(path, 65534, 65534);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	const char *mode = argc > 2 ? argv[2] : "early";
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 1;
	/* hot at the second page, cold at the third: the first and last
	 * pages stay anonymous, so the map must cut the mapping, not replace it */
	unsigned char *hot = m + pg + 64, *cold = m + 2 * pg + 128;
	memcpy(hot, loop_code, sizeof(loop_code));
	memcpy(cold, loop_code, sizeof(loop_code));
	if (mprotect(m, 4 * pg, PROT_READ | PROT_EXEC))
		return 1;
	if (strcmp(mode, "late") && write_map((uintptr_t)hot, (uintptr_t)cold, mode))
		return 1;
	void (*fh)(uint64_t) = (void (*)(uint64_t))(uintptr_t)hot;
	void (*fc)(uint64_t) = (void (*)(uint64_t))(uintptr_t)cold;
	double end = now() + secs;
	int replace = strcmp(mode, "replace") == 0;
	if (replace)
		end -= secs / 2;
	for (unsigned long i = 0; now() < end; i++)
		call_jit(i % 10 == 9 ? fc : fh, 1000000);
	if (replace) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		if (mprotect(m, 4 * pg, PROT_READ | PROT_WRITE))
			return 1;
		memcpy(hot, loop_code, sizeof(loop_code));
		FILE *f = fopen(path, "a");
		if (!f)
			return 1;
		fprintf(f, "%lx %zx jit_hot_loop_v2\n", (unsigned long)(uintptr_t)hot,
			sizeof(loop_code));
		if (fclose(f) || mprotect(m, 4 * pg, PROT_READ | PROT_EXEC))
			return 1;
		end = now() + secs / 2;
		for (unsigned long i = 0; now() < end; i++)
			call_jit(i % 10 == 9 ? fc : fh, 1000000);
	}
	if (strcmp(mode, "late") == 0 && write_map((uintptr_t)hot, (uintptr_t)cold, mode))
		return 1;
	return 0;
}
