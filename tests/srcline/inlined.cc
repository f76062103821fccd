// inlined - a C++ workload whose hot loop is an always_inline helper, for
// tests/srcline: the helper must show as its own "(inlined)" frame, at the
// line addr2line gives, and --no-inline must fold it into its caller.
// Built -O2 -g with frame pointers; each hot function is noinline so its
// own frame stays.
#include <cstdint>
#include <cstdlib>
#include <ctime>

static volatile uint64_t sink;

namespace geo {
__attribute__((always_inline)) inline uint64_t scramble(uint64_t x)
{
	x ^= x >> 17;	// SCRAMBLE_LINE
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 31;
	return x;
}

__attribute__((noinline)) uint64_t walk(uint64_t n)
{
	uint64_t a = 0;
	for (uint64_t i = 0; i < n; i++)
		a += scramble(a + i);	// WALK_LOOP
	return a;
}

// off-CPU: a sleep inside an inlined helper, so the switch-out stack's
// return address lies in nap's inlined range of rest
__attribute__((always_inline)) inline void nap()
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, nullptr);	// NAP_LINE
}

__attribute__((noinline)) void rest(int n)
{
	for (int i = 0; i < n; i++)
		nap();
	sink = sink + 1;
}
} // namespace geo

__attribute__((noinline)) static uint64_t spin(uint64_t n)
{
	uint64_t a = 1;
	for (uint64_t i = 0; i < n; i++) a = a * 33 + (i >> 3);	// SPIN_LOOP
	return a;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	if (argc > 2) {	// "sleep": off-CPU in an inlined helper
		geo::rest((int)(secs * 50));
		return 0;
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink = sink + geo::walk(3000000 + (sink & 1));
		sink = sink + spin(1000000 + (sink & 1));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return (int)(sink & 1);
}
