# bench/kernel/: getppid() cost under dt vs ftrace and vs perf, drops by
# ring size.  One VM boot; prints "bench kernel.* VALUE UNIT" lines and
# targets.
BENCHES += kernel

KBENCH_CALLS ?= 500000
KBENCH_ROUNDS ?= 9
# perf writes every event to a file in the guest's tmpfs: fewer calls
KBENCH_PERF_CALLS ?= 200000

# Debian's perf and what it links, for the guest (see kbench.c): the
# binary, every library ldd lists and the loader, all into /perf under
# the names perf asks for (the files themselves, not their symlinks).
KBENCH_PERF := /usr/bin/perf
KBENCH_PERF_FILES = $(KBENCH_PERF) $(shell ldd $(KBENCH_PERF) 2>/dev/null | \
	awk '$$2 == "=>" && $$3 ~ /^\// { print $$3 } $$1 ~ /^\/.*ld-linux/ { print $$1 }')
KBENCH_PERF_ARGS = $(foreach f,$(KBENCH_PERF_FILES),--file $(shell readlink -f $(f)):/perf/$(notdir $(f)))

$(B)/vm/kbench: bench/kernel/kbench.c include/dt_abi.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STD) -I$(TOP)/include \
		-static -O2 -fno-omit-frame-pointer -o $@ $<

bench-kernel: $(B)/vm/kbench $(B)/dt.ko tests/vm/run.sh bench/kernel/bench_guest.sh
	@test -x $(KBENCH_PERF) || { echo "bench-kernel: $(KBENCH_PERF) missing (linux-perf, scripts/install-deps.sh)"; exit 1; }
	@printf 'KBENCH_CALLS=%s KBENCH_ROUNDS=%s KBENCH_PERF_CALLS=%s\n' \
		$(KBENCH_CALLS) $(KBENCH_ROUNDS) $(KBENCH_PERF_CALLS) >$(B)/vm/kbench.env
	@cat $(B)/vm/kbench.env bench/kernel/bench_guest.sh >$(B)/vm/kbench.sh
	@tests/vm/run.sh --script $(B)/vm/kbench.sh --ko $(B)/dt.ko --bin $(B)/vm/kbench \
		$(KBENCH_PERF_ARGS) \
		--mem 1024 --out $(B)/vm/bench-kernel-out --timeout 2400 </dev/null
