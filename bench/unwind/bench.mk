# bench/unwind: DWARF unwinding speed (one core, recorded samples unwound
# again with warm caches), completeness on Debian binaries, and dtrec's
# capture size against perf record --call-graph dwarf's perf.data.
BENCHES += unwind

$(B)/bench/unwind/unwtest: tests/unwind/unwtest.c tests/check.h $(UNWTEST_LIB_OBJS:%=$(B)/obj/%)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $(filter-out %.h,$^) -ldw -lelf -llzma -lm

bench-unwind: $(B)/bench/unwind/unwtest $(B)/bin/dtrec $(B)/bin/dtreport bench/unwind/bench.sh
	@bench/unwind/bench.sh $(B)/bench/unwind $(B)/bin/dtrec $(B)/bin/dtreport
