# tests/perfsrc: dtrec's perf_event source on this host, recording real
# programs at real speed (needs root, or CAP_PERFMON; the suite fails,
# never skips, when perf_event_open is refused).
SUITES += perfsrc

$(B)/tests/perfsrc/sysloop: tests/perfsrc/sysloop.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ $<
$(B)/tests/perfsrc/argprog: tests/perfsrc/argprog.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ $<
# frame pointers and no inlining: the known call chains unwind with -u
$(B)/tests/perfsrc/hotloop: demo/hotloop.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline -fno-optimize-sibling-calls -o $@ $<

# tracefs.c's parsers, fuzzed under ASan/UBSan
$(B)/tests/perfsrc/tpfuzz: tests/perfsrc/tpfuzz.c tests/check.h $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< $(CLI_LIB_ASAN) $(CAP_LIB_ASAN) $(LDLIBS_ALL)

# the ring wait and trace flags on a source built by hand (ringpoll.c)
$(B)/tests/perfsrc/ringpoll: tests/perfsrc/ringpoll.c $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< $(CLI_LIB_ASAN) $(CAP_LIB_ASAN) $(LDLIBS_ALL)

check-perfsrc: $(B)/tests/perfsrc/tpfuzz $(B)/tests/perfsrc/ringpoll $(B)/asan/bin/dtrec $(B)/bin/dtreport $(B)/asan/bin/dtsh $(B)/tests/perfsrc/sysloop \
		$(B)/tests/perfsrc/hotloop $(B)/tests/perfsrc/argprog $(B)/tests/dtrec/capcheck tests/perfsrc/run.sh
	@tests/run-suite.sh $(B)/results perfsrc tests/perfsrc/run.sh $(B)
