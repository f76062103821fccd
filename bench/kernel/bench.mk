# bench/kernel/: getppid() cost under dt vs ftrace, drops by ring size.
# One VM boot; prints "bench kernel.* VALUE UNIT" lines and targets.
BENCHES += kernel

KBENCH_CALLS ?= 500000
KBENCH_ROUNDS ?= 7

$(B)/vm/kbench: bench/kernel/kbench.c include/dt_abi.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -I$(TOP)/include \
		-static -O2 -fno-omit-frame-pointer -o $@ $<

bench-kernel: $(B)/vm/kbench $(B)/dt.ko tests/vm/run.sh bench/kernel/bench_guest.sh
	@printf 'KBENCH_CALLS=%s KBENCH_ROUNDS=%s\n' $(KBENCH_CALLS) $(KBENCH_ROUNDS) >$(B)/vm/kbench.env
	@cat $(B)/vm/kbench.env bench/kernel/bench_guest.sh >$(B)/vm/kbench.sh
	@tests/vm/run.sh --script $(B)/vm/kbench.sh --ko $(B)/dt.ko --bin $(B)/vm/kbench \
		--out $(B)/vm/bench-kernel-out --timeout 1800 </dev/null
