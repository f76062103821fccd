# tests/dtrec: dtrec's command line and error messages (ASan build), the
# recording loop against an LD_PRELOAD stand-in for /dev/dt, and one VM boot
# recording every provider with the real dt.ko.
SUITES += dtrec

$(B)/tests/dtrec/fakedt.so: tests/dtrec/fakedt.c include/dt_abi.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -shared -fPIC -o $@ $< -ldl
$(B)/tests/dtrec/fakelib.so: tests/dtrec/fakelib.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -shared -fPIC -o $@ $<
# a shared library and a dynamic program calling it, for the VM's uprobe test
$(B)/tests/dtrec/libdtuc.so: tests/dtrec/libdtuc.c tests/dtrec/libdtuc.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -shared -fPIC -Wl,-soname,libdtuc.so -o $@ $<
$(B)/tests/dtrec/ucall: tests/dtrec/ucall.c tests/dtrec/libdtuc.h $(B)/tests/dtrec/libdtuc.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -o $@ $< -L$(B)/tests/dtrec -ldtuc
# the same deep calls as tests/rectruth/nofp, built with frame pointers
$(B)/tests/dtrec/withfp: tests/rectruth/nofp.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -o $@ $<
$(B)/tests/dtrec/capcheck: tests/dtrec/capcheck.c $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP) -lpthread

$(B)/tests/dtrec/util_test: tests/dtrec/util_test.c $(B)/asan/obj/cli/lib/util.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^ -lm

# the process table (cli/lib/proctab.c) and what it links
PROCTAB_TEST_OBJS := cli/lib/rec/proctab.o cli/lib/rec/tasks.o cli/lib/rec/procmaps.o cli/lib/rec/unwind_pool.o cli/lib/rec/unwind.o \
	cli/lib/rec/elfsyms.o cli/lib/util.o
$(B)/tests/dtrec/proctab_test: tests/dtrec/proctab_test.c $(PROCTAB_TEST_OBJS:%=$(B)/asan/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^ -ldw -lelf -llzma -lpthread -lm

DTREC_TEST_DEPS := $(B)/bin/dtreport $(B)/tests/dtrec/util_test $(B)/tests/dtrec/proctab_test $(B)/asan/bin/dtrec $(B)/static/dtrec $(B)/static/hotloop \
	$(B)/tests/dtrec/fakedt.so $(B)/tests/dtrec/fakelib.so $(B)/tests/dtrec/capcheck \
	$(B)/tests/dtrec/libdtuc.so $(B)/tests/dtrec/ucall $(B)/tests/rectruth/nofp $(B)/tests/dtrec/withfp \
	tests/dtrec/host.sh tests/dtrec/vm.sh tests/dtrec/guest.sh man/dtrec.8 $(B)/vm/dt_ktest

check-dtrec: $(DTREC_TEST_DEPS)
	@$(MAKE) --no-print-directory $(B)/dt.ko >$(B)/tests/dtrec/dt.ko.log 2>&1 || true
	@tests/run-suite.sh $(B)/results dtrec bash -c '\
		$(B)/tests/dtrec/util_test; \
		$(B)/tests/dtrec/proctab_test; \
		tests/dtrec/host.sh $(B)/asan/bin/dtrec $(B)/tests/dtrec/capcheck \
			$(B)/tests/dtrec/fakedt.so man/dtrec.8; \
		B=$(B) tests/dtrec/vm.sh $(B)/dt.ko $(B)/static/dtrec $(B)/static/hotloop \
			$(B)/tests/dtrec/capcheck $(B)/tests/dtrec/vm-out $(B)/vm/dt_ktest'
