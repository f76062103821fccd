# bench/export: fleet.* - Parquet export of the 10M-event synthetic
# capture (speed, size), DuckDB's GROUP BY comm over the export beside
# dtreport sql's, and a 100-capture dataset.  DuckDB comes from npm into
# $(B)/npm (tests/export/npm.sh).
BENCHES += export

bench-export: $(B)/bin/dtreport $(DTGEN) $(SYNTH_10M) bench/export/bench.sh
	@bench/export/bench.sh $(B)/bin/dtreport $(DTGEN) $(SYNTH_10M) $(B)/bench/export $(B)/npm
