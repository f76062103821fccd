/* libdtut.so - one function for tests/uprobe: probes on a shared library. */
__attribute__((noinline)) long
dtut_mark(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}
