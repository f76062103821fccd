# tests/debug/: `make check-debug`, the debug-kernel lane.  NOT in SUITES:
# `make check` never runs it (its kernel takes the better part of an hour
# to build once).  Debian's linux-source-6.1 is built with KASAN, lockdep,
# DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS and KMEMLEAK (build-kernel.sh, cached
# outside the tree by config), dt.ko is built against it, and the vm-kernel
# suite (fuzzer and races included) runs under it; any splat in the
# guest's log fails the run (kernel_suite.sh, kernel_tests.sh).  Then
# stalled.sh runs the budget test again with qemu stopped most of the time,
# so that one event costs more than the budget's window.
# Results: build/results/debug.res.
DEBUG_CACHE ?= /var/tmp/dt-debug-kernel

check-debug: $(B)/vm/dt_ktest $(B)/static/dtrec tests/vm/run.sh tests/vm/kernel_tests.sh \
		tests/vm/kernel_suite.sh tests/debug/stalled.sh
	@scripts/install-deps.sh debug
	@mkdir -p $(B)/debug $(B)/results
	@tests/run-suite.sh $(B)/results debug tests/debug/run.sh $(DEBUG_CACHE) $(B)/debug $(B)/vm/dt_ktest \
		$(B)/static/dtrec
