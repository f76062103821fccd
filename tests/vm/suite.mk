# tests/vm/: the qemu harness (vm-harness), the in-VM tests of dt.ko
# (vm-kernel) and dt_ktest's command line, checked on the host
# (vm-ktest-args).
SUITES += vm-harness vm-kernel vm-ktest-args

# The tree's flags; the guest has no shared libraries, so dt_ktest links
# -static (VM_LDFLAGS), and its frames are walked by the stack tests.
VM_CFLAGS = $(CFLAGS_BASE) -fno-omit-frame-pointer
VM_LDFLAGS := -static

check-vm-harness: tests/vm/run.sh tests/vm/init.sh tests/vm/selftest.sh
	@B=$(B) tests/run-suite.sh $(B)/results vm-harness tests/vm/selftest.sh

# The busy loop is built -O1 on its own: its frames must survive for the
# user-stack test whatever the rest is built with.
$(B)/vm/ktest_busy.o: tests/vm/ktest_busy.c tests/vm/ktest.h
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) -O1 -c -o $@ $<
$(B)/vm/ktest_fuse.o: tests/vm/ktest_fuse.c tests/vm/ktest.h
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) -O2 -c -o $@ $<
$(B)/vm/dt_ktest: tests/vm/dt_ktest.c tests/vm/ktest_work.c tests/vm/ktest.h tests/check.h \
		include/dt_abi.h $(B)/vm/ktest_busy.o $(B)/vm/ktest_fuse.o
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) $(VM_LDFLAGS) -O2 -o $@ tests/vm/dt_ktest.c tests/vm/ktest_work.c \
		$(B)/vm/ktest_busy.o $(B)/vm/ktest_fuse.o -lpthread

check-vm-ktest-args: $(B)/vm/dt_ktest tests/vm/ktest_args.sh tests/vm/kernel_tests.sh \
		tests/dtrec/guest.sh
	@tests/run-suite.sh $(B)/results vm-ktest-args tests/vm/ktest_args.sh $(B)/vm/dt_ktest

# dt.ko is built if it can be; if not the suite runs anyway and FAILs
# saying so rather than leaving no result.
check-vm-kernel: $(B)/vm/dt_ktest $(B)/static/dtrec tests/vm/run.sh tests/vm/kernel_tests.sh \
		tests/vm/kernel_suite.sh
	@$(MAKE) --no-print-directory $(B)/dt.ko >$(B)/vm/dt.ko.log 2>&1 || cat $(B)/vm/dt.ko.log
	@B=$(B) tests/run-suite.sh $(B)/results vm-kernel tests/vm/kernel_suite.sh \
		$(B)/dt.ko $(B)/vm/dt_ktest $(B)/vm/kernel-out $(B)/static/dtrec
