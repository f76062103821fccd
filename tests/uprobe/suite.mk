# tests/uprobe: user-space probes (uprobe:, usdt:) through dtrec's perf
# source on this host (needs root or CAP_PERFMON and the kernel's uprobe
# PMU; the suite fails, never skips, without them).
SUITES += uprobe

$(B)/tests/uprobe/libdtut.so: tests/uprobe/libdtut.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fPIC -shared -o $@ $<
# the SDT header comes from systemtap-sdt-dev (scripts/install-deps.sh)
$(B)/tests/uprobe/utarget: tests/uprobe/utarget.c $(B)/tests/uprobe/libdtut.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fno-inline -o $@ $< -L$(B)/tests/uprobe -ldtut \
		-Wl,-rpath,$(B)/tests/uprobe

# the parsers of uprobe.c, fuzzed under ASan/UBSan
$(B)/tests/uprobe/upfuzz: tests/uprobe/upfuzz.c tests/check.h $(CLI_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< $(CLI_LIB_ASAN) $(LDLIBS_ALL)

check-uprobe: $(B)/asan/bin/dtrec $(B)/asan/bin/dtsh $(B)/bin/dtreport $(B)/tests/uprobe/utarget \
		$(B)/tests/uprobe/upfuzz $(B)/tests/dtrec/capcheck $(B)/tests/dtrec/fakedt.so \
		tests/uprobe/run.sh tests/uprobe/ptycomplete.py
	@tests/run-suite.sh $(B)/results uprobe tests/uprobe/run.sh $(B)
