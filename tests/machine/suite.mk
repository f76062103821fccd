# tests/machine: the recording session's process model
# (cli/lib/rec/machine.c) fed with crafted kernel events and event records,
# its subscriber calls logged, under ASan/UBSan.
SUITES += machine

MACHINE_TEST_OBJS := cli/lib/rec/machine.o cli/lib/rec/proctab.o cli/lib/rec/tasks.o cli/lib/rec/procmaps.o \
	cli/lib/rec/unwind_pool.o cli/lib/rec/unwind.o cli/lib/rec/elfsyms.o cli/lib/util.o
$(B)/tests/machine/machine_test: tests/machine/machine_test.c $(MACHINE_TEST_OBJS:%=$(B)/asan/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^ -ldw -lelf -llzma -lpthread -lm

check-machine: $(B)/tests/machine/machine_test
	@tests/run-suite.sh $(B)/results machine bash -c '. tests/lib.sh; sanitizers_strict; \
		$(B)/tests/machine/machine_test'
