# bench/unwind: DWARF unwinding speed (one core, recorded samples unwound
# again with warm caches) and completeness on Debian binaries.
BENCHES += unwind

$(B)/bench/unwind/unwtest: tests/unwind/unwtest.c $(UNWTEST_LIB_OBJS:%=$(B)/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $^ -ldw -lelf -llzma -lm

bench-unwind: $(B)/bench/unwind/unwtest bench/unwind/bench.sh
	@bench/unwind/bench.sh $(B)/bench/unwind
