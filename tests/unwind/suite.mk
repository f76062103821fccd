# tests/unwind: DWARF unwinding of perf_event_open samples (cli/lib/rec/unwind.c)
# and names from stripped binaries (cli/lib/rec/elfsyms.c), on the host: a
# five-deep -fomit-frame-pointer chain, Debian's xz and python3, and cut,
# corrupted and orphaned stacks; then dtrec --user-stacks end to end,
# against perf record --call-graph dwarf.  ASan/UBSan builds.
SUITES += unwind

UNWTEST_LIB_OBJS := cli/lib/rec/unwind.o cli/lib/rec/procmaps.o cli/lib/rec/elfsyms.o cli/lib/util.o

$(B)/tests/unwind/unwtest: tests/unwind/unwtest.c tests/check.h $(UNWTEST_LIB_OBJS:%=$(B)/asan/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $(filter-out %.h,$^) -ldw -lelf -llzma -lm
$(B)/tests/unwind/pooltest: tests/unwind/pooltest.c tests/check.h \
		$(UNWTEST_LIB_OBJS:%=$(B)/asan/obj/%) $(B)/asan/obj/cli/lib/rec/unwind_pool.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $(filter-out %.h,$^) -ldw -lelf -llzma -lm -lpthread
# the sample path (submit, spool, collect) with its threads, under TSan
$(B)/tsan/bin/unwpooltsan: tests/unwind/unwpooltsan.c tests/check.h \
		$(UNWTEST_LIB_OBJS:%=$(B)/tsan/obj/%) $(B)/tsan/obj/cli/lib/rec/unwind_pool.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(TSAN_FLAGS) -o $@ $(filter-out %.h,$^) -ldw -lelf -llzma -lm -lpthread
$(B)/tests/unwind/target: tests/unwind/target.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STD) -O2 -fomit-frame-pointer -o $@ $<

# the control of the walk dtrec asks for beside a copy (dtrec.sh)
$(B)/tests/unwind/target-fp: tests/unwind/target.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STD) -O2 -fno-omit-frame-pointer -o $@ $<

# No .eh_frame for its own functions: only .debug_frame (-g), which the
# test moves to a separate debug file.
$(B)/tests/unwind/target-nocfi: tests/unwind/target.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STD) -O2 -fomit-frame-pointer \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $<

check-unwind: $(B)/tests/unwind/unwtest $(B)/tests/unwind/pooltest $(B)/tsan/bin/unwpooltsan \
		$(B)/tests/unwind/target $(B)/tests/unwind/target-nocfi \
		$(B)/tests/unwind/target-fp \
		$(B)/asan/bin/dtrec $(B)/bin/dtreport $(B)/tests/dtrec/fakedt.so \
		tests/unwind/run.sh tests/unwind/dtrec.sh tests/unwind/dtsrc.sh tests/unwind/chain.sh \
		tests/unwind/spool.sh \
		tests/unwind/perfcmp.py
	@tests/unwind/run.sh $(B)/tests/unwind $(B)/results $(B)/asan/bin/dtrec $(B)/bin/dtreport

# vm-unwind: the same through dt.ko in the test VM (tests/unwind/vm.sh):
# its register and stack copies straight through /dev/dt (ucopy_test), the
# five-deep chain recorded by dtrec --source dt --user-stacks dwarf, and
# bad stacks (badstack), and short-lived processes that dlopen a library
# named whole from dt.ko's proc events (dlprog).  The guest has no shared
# libraries but those dlprog needs: everything else is static.
SUITES += vm-unwind
UNW_STATIC := $(CFLAGS_STD) -O2 -static -I$(TOP)/include

$(B)/static/unwind/target: tests/unwind/target.c
	@mkdir -p $(@D)
	$(CC) $(UNW_STATIC) -fomit-frame-pointer -o $@ $<
$(B)/static/unwind/badstack: tests/unwind/badstack.c
	@mkdir -p $(@D)
	$(CC) $(UNW_STATIC) -o $@ $<
$(B)/static/unwind/ucopy_test: tests/unwind/ucopy_test.c tests/check.h include/dt_abi.h
	@mkdir -p $(@D)
	$(CC) $(UNW_STATIC) -o $@ $<

# dlopen: the one dynamic program in the guest, with the library it loads;
# vm.sh stages the host's loader and libc for it.
UNW_DYN := $(CFLAGS_STD) -O2 -fno-omit-frame-pointer
$(B)/dyn/unwind/dlprog: tests/unwind/dlprog.c
	@mkdir -p $(@D)
	$(CC) $(UNW_DYN) -o $@ $< -ldl
$(B)/dyn/unwind/libdlt.so: tests/unwind/libdlt.c
	@mkdir -p $(@D)
	$(CC) $(UNW_DYN) -fPIC -shared -o $@ $<

check-vm-unwind: $(B)/static/dtrec $(B)/bin/dtreport $(B)/static/unwind/target \
		$(B)/static/unwind/badstack $(B)/static/unwind/ucopy_test \
		$(B)/dyn/unwind/dlprog $(B)/dyn/unwind/libdlt.so \
		tests/unwind/vm.sh tests/unwind/vm-guest.sh tests/unwind/chain.sh tests/unwind/chaincheck.py \
		tests/unwind/dlcheck.py
	@mkdir -p $(B)/vm
	@$(MAKE) --no-print-directory $(B)/dt.ko >$(B)/vm/dt.ko.log 2>&1 || cat $(B)/vm/dt.ko.log
	@B=$(B) tests/run-suite.sh $(B)/results vm-unwind tests/unwind/vm.sh $(B)/dt.ko \
		$(B)/static/dtrec $(B)/bin/dtreport $(B)/static/unwind/target \
		$(B)/static/unwind/badstack $(B)/static/unwind/ucopy_test $(B)/vm/unwind-out \
		$(B)/dyn/unwind/dlprog $(B)/dyn/unwind/libdlt.so
