# tests/export: dtreport export --format parquet|pprof|chrome, read back by
# independent readers from npm (DuckDB, hyparquet, pprof-format; installed
# into $(B)/npm by the test itself) and compared with dtreport sql/flame.
SUITES += export

check-export: $(B)/asan/bin/dtreport $(DTGEN)
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) PQGEN=$(B)/tests/export/pqgen \
		PQBITS=$(B)/tests/export/pqbits \
		tests/run-suite.sh $(B)/results export tests/export/run.sh

# the writer on its own, with the values traces rarely have
$(B)/tests/export/pqgen: $(B)/asan/obj/tests/export/pqgen.o $(PQ_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ -lzstd -lxxhash -lm
check-export: $(B)/tests/export/pqgen

# the hybrid encoder's every bit width, against a reference (pqbits.c)
$(B)/tests/export/pqbits: $(B)/asan/obj/tests/export/pqbits.o
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ -lzstd -lxxhash -lm
check-export: $(B)/tests/export/pqbits

# every writer's text, from a capture whose comm is cut mid-character, read
# by strict readers (utf8.sh)
SUITES += utf8

check-utf8: $(B)/asan/bin/dtreport $(DTGEN) $(DTCDUMP)
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) DTCDUMP=$(DTCDUMP) \
		tests/run-suite.sh $(B)/results utf8 tests/export/utf8.sh

# pprof's mappings and markers (pprof_meta.sh), on tests/report's mkcap
SUITES += pprof-meta

check-pprof-meta: $(B)/asan/bin/dtreport $(B)/tests/report/mkcap
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport MKCAP=$(B)/tests/report/mkcap \
		tests/run-suite.sh $(B)/results pprof-meta tests/export/pprof_meta.sh

# the dataset's paths and footers as Hive, Spark, DuckDB read them
SUITES += parquet-hive

check-parquet-hive: $(B)/asan/bin/dtreport $(DTGEN)
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) \
		tests/run-suite.sh $(B)/results parquet-hive tests/export/parquet_hive.sh

# the Chrome trace's instants, bounded pairing and sample stacks
SUITES += chrome-trace

check-chrome-trace: $(B)/asan/bin/dtreport $(DTGEN) $(B)/tests/report/mkcap
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) MKCAP=$(B)/tests/report/mkcap \
		tests/run-suite.sh $(B)/results chrome-trace tests/export/chrome_trace.sh

# dt's folded text read by flamegraph.pl (libdevel-nytprof-perl's copy):
# it takes every line, writes well-formed XML, counts dt's total and names
# dt's frames, on a dtgen capture and on awkcap's awkward names
SUITES += flamegraph-pl

$(B)/tests/export/awkcap: $(B)/obj/tests/export/awkcap.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)

check-flamegraph-pl: $(B)/asan/bin/dtreport $(DTGEN) $(B)/tests/export/awkcap
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) AWKCAP=$(B)/tests/export/awkcap \
		tests/run-suite.sh $(B)/results flamegraph-pl tests/export/flamegraph_pl.sh

# exports are reports: each filter reaches each export (counted as stats
# and flame count), the reports' progress line, SIGINT and dtsh's export
# with Ctrl-C (filters.sh, ptyexport.py)
SUITES += export-filters

check-export-filters: $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh $(DTGEN)
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTSH=$(B)/asan/bin/dtsh DTGEN=$(DTGEN) \
		tests/run-suite.sh $(B)/results export-filters tests/export/filters.sh
