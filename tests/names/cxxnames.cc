// cxxnames - a C++ workload whose hot functions carry the kinds of mangled
// names people meet: a namespace, a class template, a lambda, an
// always_inline helper, and a function whose symbol is a Rust v0 name.
// Each spins in its own frame (noinline) so a 997 Hz profile samples it;
// built with frame pointers so `-u` unwinds it through the caller chain.
#include <cstdint>
#include <cstdlib>

static volatile uint64_t sink;

// A Rust v0 symbol: mycrate::engine::step, spelled as rustc would mangle it.
extern "C" __attribute__((noinline)) void rust_step(uint64_t n) __asm__("_RNvNtCs1234_7mycrate6engine4step");
extern "C" __attribute__((noinline)) void rust_step(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = sink + i * 7;
}

namespace physics {
__attribute__((always_inline)) inline uint64_t mix(uint64_t x)
{
	return (x ^ (x >> 13)) * 0x9e3779b97f4a7c15ULL;
}

template <typename T> struct Integrator {
	T acc;
	__attribute__((noinline)) T advance(T steps)
	{
		for (T i = 0; i < steps; i++)
			acc = acc + (T)mix((uint64_t)i);
		return acc;
	}
};
} // namespace physics

__attribute__((noinline)) static uint64_t run_lambda(uint64_t n)
{
	auto body = [](uint64_t m) __attribute__((noinline)) {
		uint64_t a = 1;
		for (uint64_t i = 0; i < m; i++)
			a = a * 31 + i;
		return a;
	};
	return body(n);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t rounds = (uint64_t)(secs * 40);
	physics::Integrator<long> li{ 0 };
	physics::Integrator<unsigned> ui{ 0 };
	for (uint64_t r = 0; r < rounds; r++) {
		li.advance(1000000);
		ui.advance(1000000);
		sink = sink + run_lambda(1500000);
		rust_step(2000000);
	}
	return (int)(sink & 1);
}
