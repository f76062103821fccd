/*
 * utarget - known user-space functions and SDT probes for tests/uprobe:
 *   utarget calls N    up_count() N times, up_args(1..6) N times,
 *                      up_ret(i) for i in 0..N-1 (returns 3 * i - 7)
 *   utarget usdt N     the SDT probe dttest:tick N times (i, -5, 2 * i,
 *                      and a stack operand 1000 + i), and dttest:gated
 *                      (behind a semaphore) N times when it is enabled
 *   utarget lib N      dtut_mark(i) of libdtut.so N times
 *   utarget spin       up_count() every millisecond until killed
 *   utarget insn N     up_insn(i) for i in 0..N-1, exit 3 if one returns
 *                      a wrong sum (a corrupted instruction would)
 * Built without inlining so every call reaches the probed function.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long dtut_mark(long x);

/*
 * The kernel's uprobe counts probing tools here (ref_ctr_offset).  With
 * _SDT_HAS_SEMAPHORES every probe names one; only gated is guarded by it.
 */
unsigned short dttest_tick_semaphore __attribute__((section(".probes"), used));
unsigned short dttest_gated_semaphore __attribute__((section(".probes"), used));

__attribute__((noinline)) void
up_count(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) long
up_args(long a, long b, long c, long d, long e, long f)
{
	__asm__ volatile("" ::: "memory");
	return a + b + c + d + e + f;
}

__attribute__((noinline)) long
up_ret(long i)
{
	__asm__ volatile("" ::: "memory");
	return 3 * i - 7;
}

/*
 * Instructions of known lengths, whatever the compiler: a 10-byte movabs
 * at +0, a 3-byte add at +0xa, ret at +0xd.  +1..+9 and +0xb..+0xc are
 * inside an instruction; a probe there must be refused.
 */
long up_insn(long x);
__asm__(".text\n"
	".globl up_insn\n"
	".type up_insn, @function\n"
	"up_insn:\n"
	"\tmovabs $0x1122334455667788, %rax\n"
	"\tadd %rdi, %rax\n"
	"\tret\n"
	".size up_insn, .-up_insn\n");

__attribute__((noinline)) static void
fire(long i)
{
	/* volatile: the compiler keeps it in the frame, an rbp/rsp operand */
	volatile long onstack = 1000 + i;
	long twice = 2 * i;

	DTRACE_PROBE4(dttest, tick, i, -5L, twice, onstack);
	if (dttest_gated_semaphore)
		DTRACE_PROBE1(dttest, gated, i);
	/* not a leaf (nor a tail call): onstack lives above rsp, not in the
	 * red zone below it, which no stack copy holds */
	up_count();
	(void)onstack;
}

int
main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0, sum = 0;

	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "calls") == 0) {
		for (long i = 0; i < n; i++) {
			up_count();
			sum += up_args(1, 2, 3, 4, 5, 6);
			sum += up_ret(i);
		}
	} else if (strcmp(argv[1], "usdt") == 0) {
		for (long i = 0; i < n; i++)
			fire(i);
	} else if (strcmp(argv[1], "lib") == 0) {
		for (long i = 0; i < n; i++)
			sum += dtut_mark(i);
	} else if (strcmp(argv[1], "insn") == 0) {
		for (long i = 0; i < n; i++) {
			if (up_insn(i) != 0x1122334455667788L + i)
				return 3;
			sum += i;
		}
	} else if (strcmp(argv[1], "spin") == 0) {
		struct timespec ms = { 0, 1000000 };
		for (;;) {
			up_count();
			nanosleep(&ms, NULL);
		}
	} else {
		return 2;
	}
	printf("%ld\n", sum);
	return 0;
}
