# tests/procmaps: the recording side's one /proc/PID/maps parser
# (cli/lib/rec/procmaps.c) on crafted maps text, this process's own maps,
# and a mutation fuzz of both, under ASan/UBSan.
SUITES += procmaps

PROCMAPS_TEST_OBJS := cli/lib/rec/procmaps.o cli/lib/util.o
$(B)/tests/procmaps/procmaps_test: tests/procmaps/procmaps_test.c $(PROCMAPS_TEST_OBJS:%=$(B)/asan/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^ -lm

check-procmaps: $(B)/tests/procmaps/procmaps_test
	@tests/run-suite.sh $(B)/results procmaps bash -c '. tests/lib.sh; sanitizers_strict; \
		$(B)/tests/procmaps/procmaps_test'
