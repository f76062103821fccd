# bench/report-sql: SQL over the 10-million-event synthetic capture, on one
# core: GROUP BY comm through the virtual table (the counting fast path of
# dtsql_groupby.c, and SQLite's row loop with it off), the same query on
# the exported plain table (same run), and the export's speed.
BENCHES += report-sql

bench-report-sql: $(B)/bin/dtreport $(SYNTH_10M) bench/report-sql/bench.sh
	@bench/report-sql/bench.sh $(B)/bin/dtreport $(SYNTH_10M) $(B)/bench/report-sql
