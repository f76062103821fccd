# tests/jit: frames of JIT-compiled code named from the perf maps the
# processes write (/tmp/perf-PID.map).  jit-unit: the reader alone
# (parsing, a small fuzz, the ownership/link/FIFO/size checks).  jit: a
# private C program that JIT-compiles two loops and describes them, and
# node (--perf-basic-prof, --perf-basic-prof-only-functions) running a
# recursive function, recorded through perf on this host; node's names
# are compared with what perf report attributes on the same process.
SUITES += jit-unit jit

$(B)/tests/jit/jitmap_test: tests/jit/jitmap_test.c $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< $(CLI_LIB_ASAN) $(CAP_LIB_ASAN) $(LDLIBS_ALL)

$(B)/tests/jit/jitprog: tests/jit/jitprog.c
	@mkdir -p $(@D)
	$(CC) -O2 -fno-omit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -Werror -o $@ $<

check-jit-unit: $(B)/tests/jit/jitmap_test
	@tests/run-suite.sh $(B)/results jit-unit tests/jit/unit.sh $(B)

check-jit: $(B)/asan/bin/dtrec $(B)/asan/bin/dtreport $(B)/tests/jit/jitprog tests/jit/run.sh
	@tests/run-suite.sh $(B)/results jit tests/jit/run.sh $(B)
