# tests/sql: dtreport sql / export over captures, checked against
# independent paths (a dtcap_iter walker, the generator's own tallies and
# the exported database through the sqlite3 CLI).
SUITES += sql

SQL_DTREPORT := $(B)/asan/bin/dtreport

# The generator is not under test: built plain, so a finding in the writer
# (the formats suite's business) cannot hide the reader's results.
$(B)/tests/sql/mksql: $(B)/obj/tests/sql/mksql.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/sql/mkargs: $(B)/obj/tests/sql/mkargs.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/sql/count: $(B)/asan/obj/tests/sql/count.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/sql/grouped: $(B)/asan/obj/tests/sql/grouped.o $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

check-sql: $(SQL_DTREPORT) $(DTGEN) $(B)/tests/sql/mksql $(B)/tests/sql/count $(B)/tests/sql/grouped \
		$(B)/tests/sql/mkargs $(B)/tsan/bin/sqltsan $(B)/tests/scan/bsumedit
	@B=$(B) DTREPORT=$(SQL_DTREPORT) DTGEN=$(DTGEN) SQLTSAN=$(B)/tsan/bin/sqltsan \
		tests/run-suite.sh $(B)/results sql tests/sql/run.sh

# fuzz-sql: libFuzzer on the GROUP BY fast path's rewrite (a rewritten
# statement must give what the statement as written gives; one not
# rewritten, read ahead on the pool, what it gives on one thread), built by clang
# from the sources it exercises, like the format fuzzer.
SUITES += fuzz-sql
FUZZ_SQL := $(B)/fuzz/fuzz_groupby
FUZZ_SQL_SRCS := tests/sql/fuzz_groupby.c cli/lib/report/dtsql_groupby.c cli/lib/report/dtsql_tokens.c \
	cli/lib/report/dtsql_aggs.c \
	cli/lib/report/dtsql_attach.c cli/lib/report/dtsql_events.c cli/lib/report/dtsql_order.c \
	cli/lib/report/dtsql_gscan.c cli/lib/report/dtsql_tables.c cli/lib/report/dtsql_schema.c cli/lib/report/dtsym.c \
	cli/lib/report/dtsql_views.c cli/lib/report/demangle.c cli/lib/report/termsafe.c \
	cli/lib/report/dtsql_guard.c cli/lib/report/dtsql_derived.c cli/lib/report/derived_cache.c \
	cli/lib/report/sched_model.c cli/lib/report/span_model.c cli/lib/report/filter.c \
	cli/lib/report/sort_keys.c cli/lib/report/report_common.c cli/lib/report/scan_pool.c \
	cli/lib/report/model_collect.c cli/lib/report/par_run.c \
	cli/lib/util.c $(CAP_LIB_SRCS)
$(FUZZ_SQL): $(FUZZ_SQL_SRCS) cli/lib/report/dtsql_int.h cli/lib/report/dtsql_events.h cli/lib/report/dtsql_tokens.h \
		cli/lib/report/dtsql_events.def cli/lib/report/dtsql.h formats/dtcap.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(CFLAGS_INC) -o $@ $(FUZZ_SQL_SRCS) $(LDLIBS_ALL)
check-fuzz-sql: $(FUZZ_SQL) $(B)/tests/sql/mksql $(DTGEN)
	@tests/run-suite.sh $(B)/results fuzz-sql tests/sql/fuzz.sh $(B) $(FUZZ_SQL) $(B)/tests/sql/mksql $(DTGEN)

# The grouped scans on the pool under TSan: the SQL sources the fuzzer
# links (its list, less its main), as TSan objects.
SQL_TSAN_SRCS := tests/sql/sqltsan.c $(filter-out tests/sql/fuzz_groupby.c $(CAP_LIB_SRCS),$(FUZZ_SQL_SRCS))
$(B)/tsan/bin/sqltsan: $(SQL_TSAN_SRCS:%.c=$(B)/tsan/obj/%.o) $(CAP_LIB_TSAN)
	@mkdir -p $(@D)
	$(CC) $(TSAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)
