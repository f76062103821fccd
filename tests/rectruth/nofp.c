/*
 * nofp MODE N [X] - N getppid() calls from a few calls deep in code built
 * without frame pointers, with rbp pointing at data at the system call, as
 * such code leaves it: MODE ascii, at text ("  incurr" repeated: the return
 * address a frame-pointer walk reads is 0x727275636e692020), zero, at
 * zeros (a return address of 0).  MODE deep: no planted rbp, the calls
 * X levels deep (default 12) for an unwinder to walk.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static char junk[256] __attribute__((aligned(16)));
static long depth_left;

__attribute__((noinline)) static long
planted(void)
{
	long ret;

	/* rbp is whatever the code left in it: here the junk */
	__asm__ volatile("mov %%rbp, %%r12\n\t"
			 "mov %1, %%rbp\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rbp"
			 : "=a"(ret)
			 : "r"(junk), "0"((long)SYS_getppid)
			 : "rcx", "r11", "r12", "memory");
	return ret;
}

__attribute__((noinline)) static long
plain(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) long
nofp_down(long (*leaf)(void), long d)
{
	volatile long pad[4] = { d, d + 1, d + 2, d + 3 };

	if (d > 0)
		return nofp_down(leaf, d - 1) + pad[0];
	return leaf() + pad[1];
}

int
main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000, sum = 0;
	long (*leaf)(void) = plain;

	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "ascii") == 0) {
		for (size_t i = 0; i < sizeof(junk); i += 8)
			memcpy(junk + i, "  incurr", 8);
		leaf = planted;
	} else if (strcmp(argv[1], "zero") == 0) {
		leaf = planted;
	} else if (strcmp(argv[1], "deep") != 0) {
		return 2;
	}
	depth_left = argc > 3 ? atol(argv[3]) : 12;
	for (long i = 0; i < n; i++)
		sum += nofp_down(leaf, depth_left);
	return sum == 42;
}
