# tests/report: dtreport stats/flame/diff and dtsym, checked against an
# independent walker (refcount: dtcap_iter rows, plain filters, linear-scan
# symbolization) on captures made at test time by dtgen and by mkcap (a
# small capture built to hit each naming rule).
SUITES += report

# Helpers, not under test: built plainly (dtreport is the ASan build).
$(B)/tests/report/mkcap: $(B)/obj/tests/report/mkcap.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/report/refcount: $(B)/obj/tests/report/refcount.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)

# The time grammar's parser, fuzzed under ASan/UBSan against a reference.
$(B)/tests/report/timegrammar: $(B)/asan/obj/tests/report/timegrammar.o $(B)/asan/obj/cli/lib/util.o
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ -lm

# The report engine called as dtsh calls it (repeated calls, one cancel
# flag), under ASan/UBSan.
$(B)/tests/report/engine: $(B)/asan/obj/tests/report/engine.o $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

# The folding tree (flame.c) against a naive one, under ASan/UBSan.
$(B)/tests/report/flametree: $(B)/asan/obj/tests/report/flametree.o $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

# rename(2) held back, for the interrupted-write test
$(B)/tests/report/holdrename.so: tests/report/holdrename.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -shared -fPIC -o $@ $< -ldl

check-report: $(B)/asan/bin/dtreport $(B)/tests/report/mkcap $(B)/tests/report/refcount $(DTGEN) \
		$(B)/tests/report/timegrammar $(B)/tests/report/engine $(B)/tests/report/flametree \
		$(B)/tests/report/holdrename.so
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) HOLDRENAME=$(B)/tests/report/holdrename.so \
		tests/run-suite.sh $(B)/results report tests/report/run.sh

# The command-line skeleton of the engine's reports (cmd_run.c), for every
# command that uses it, in dtreport and dtsh.
SUITES += cmdskel
check-cmdskel: $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh $(DTGEN) tests/report/cmdskel.sh
	@DTREPORT=$(B)/asan/bin/dtreport DTSH=$(B)/asan/bin/dtsh DTGEN=$(DTGEN) \
		tests/run-suite.sh $(B)/results cmdskel tests/report/cmdskel.sh
