# tests/scan: the report scans on N threads (cli/lib/report/scan_pool.c):
# stats, flame, top give the same bytes for any --threads on dtgen
# captures (many blocks, pids that exec across block boundaries), damage
# is told the same way, bad --threads values are usage errors; and the
# pool itself under TSan against one dtcap_iter walk.
SUITES += scan

SCAN_TSAN_OBJS := $(B)/tsan/obj/tests/scan/pooltsan.o $(B)/tsan/obj/cli/lib/report/scan_pool.o \
	$(B)/tsan/obj/cli/lib/report/filter.o $(B)/tsan/obj/cli/lib/util.o
$(B)/tsan/bin/pooltsan: $(SCAN_TSAN_OBJS) $(CAP_LIB_TSAN)
	@mkdir -p $(@D)
	$(CC) $(TSAN_FLAGS) -o $@ $^ $(LDLIBS_CAP) -lpthread -lm

check-scan: $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh $(B)/bin/dtreport $(DTGEN) \
		$(B)/tsan/bin/pooltsan tests/scan/run.sh
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTSH=$(B)/asan/bin/dtsh DTGEN=$(DTGEN) \
		POOLTSAN=$(B)/tsan/bin/pooltsan SCHEDGEN=$(B)/bench/analysis/schedgen \
		DTREPORT_TSAN=$(B)/tsan/bin/dtreport \
		tests/run-suite.sh $(B)/results scan tests/scan/run.sh

# Block summaries: checked against the rows, and rewritten (stripped,
# lying, stale) by bsumedit.
$(B)/tests/scan/bsumcheck: $(B)/asan/obj/tests/scan/bsumcheck.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/scan/bsumedit: $(B)/obj/tests/scan/bsumedit.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)
check-scan: $(B)/tests/scan/bsumcheck $(B)/tests/scan/bsumedit

# The time analyses' scans on the pool (span and sched models, heatmap,
# blame's samples, the SQL tables) under TSan: dtreport itself, built with
# the analysis half of libdtcli (the recording half is not dtreport's).
SCAN_TSAN_CLI_SRCS := $(wildcard cli/lib/*.c cli/lib/report/*.c)
$(B)/tsan/libdtcli-report.a: $(SCAN_TSAN_CLI_SRCS:%.c=$(B)/tsan/obj/%.o)
	$(ARCHIVE)
$(B)/tsan/libdtpq.a: $(PQ_LIB_SRCS:%.c=$(B)/tsan/obj/%.o)
	$(ARCHIVE)
$(B)/tsan/bin/dtreport: $(DTREPORT_OBJS:%=$(B)/tsan/obj/%) $(B)/tsan/libdtcli-report.a \
		$(B)/tsan/libdtpq.a $(CAP_LIB_TSAN)
	@mkdir -p $(@D)
	$(CC) $(TSAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)
check-scan: $(B)/tsan/bin/dtreport $(B)/bench/analysis/schedgen $(B)/bin/dtsh
