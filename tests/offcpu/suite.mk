# tests/offcpu: dtrec --offcpu on the perf source and the analyses of where
# time went (dtreport flame --offcpu/--wakers, latency, syscalls), checked
# against a program whose waits are known (truth.c) recorded on this host.
SUITES += offcpu

# frame pointers: the blame and off-CPU stacks name truth's functions
$(B)/tests/offcpu/truth: tests/offcpu/truth.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -fno-omit-frame-pointer -fno-inline -pthread -o $@ $<

$(B)/tests/offcpu/badsched: tests/offcpu/badsched.c $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -o $@ $< $(CAP_LIB) $(LDLIBS_CAP)

# hostile caches of the SQL tables (derived_cache.c), under ASan/UBSan
$(B)/tests/offcpu/cachefuzz: tests/offcpu/cachefuzz.c $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< $(CLI_LIB_ASAN) $(CAP_LIB_ASAN) $(LDLIBS_ALL)

check-offcpu: $(B)/asan/bin/dtrec $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh \
		$(B)/tests/offcpu/truth $(B)/tests/offcpu/badsched $(B)/tests/offcpu/cachefuzz \
		tests/offcpu/run.sh
	@tests/run-suite.sh $(B)/results offcpu tests/offcpu/run.sh $(B)
