# bench/: each area's benchmarks live in their own fragment.
include bench/*/bench.mk
