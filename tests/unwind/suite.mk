# tests/unwind: DWARF unwinding of perf_event_open samples (cli/lib/unwind.c)
# and names from stripped binaries (cli/lib/elfsyms.c), on the host: a
# five-deep -fomit-frame-pointer chain, Debian's xz and python3, and cut,
# corrupted and orphaned stacks; then dtrec --user-stacks end to end,
# against perf record --call-graph dwarf.  ASan/UBSan builds.
SUITES += unwind

UNWTEST_LIB_OBJS := cli/lib/unwind.o cli/lib/elfsyms.o cli/lib/util.o

$(B)/tests/unwind/unwtest: tests/unwind/unwtest.c $(UNWTEST_LIB_OBJS:%=$(B)/asan/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^ -ldw -lelf -llzma -lm
$(B)/tests/unwind/target: tests/unwind/target.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -fomit-frame-pointer -o $@ $<

# No .eh_frame for its own functions: only .debug_frame (-g), which the
# test moves to a separate debug file.
$(B)/tests/unwind/target-nocfi: tests/unwind/target.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -fomit-frame-pointer \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $<

check-unwind: $(B)/tests/unwind/unwtest $(B)/tests/unwind/target $(B)/tests/unwind/target-nocfi \
		$(B)/asan/bin/dtrec $(B)/bin/dtreport \
		tests/unwind/run.sh tests/unwind/dtrec.sh tests/unwind/perfcmp.py
	@tests/unwind/run.sh $(B)/tests/unwind $(B)/results $(B)/asan/bin/dtrec $(B)/bin/dtreport
