# tests/export: dtreport export --format parquet|pprof|chrome, read back by
# independent readers from npm (DuckDB, hyparquet, pprof-format; installed
# into $(B)/npm by the test itself) and compared with dtreport sql/flame.
SUITES += export

check-export: $(B)/asan/bin/dtreport $(DTGEN)
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTGEN=$(DTGEN) \
		tests/run-suite.sh $(B)/results export tests/export/run.sh
