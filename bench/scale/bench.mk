# bench/scale: scale.* - dtreport at the trace sizes people record (200M
# events by default; SCALE_EVENTS=N for a quicker look): eight SQL query
# shapes side by side with DuckDB (npm, two threads) on the same data
# exported to Parquet, flame and stats of the whole capture.  See
# doc/SCALE.md for what each shape exercises.  The threads' speedups run at
# SCHED_FIFO 1 where allowed; SCALE_RT=1 runs the shapes so too (both
# engines), for their ratio on free CPUs on a shared machine.
BENCHES += scale
SCALE_EVENTS ?= 200000000

bench-scale: $(B)/bin/dtreport $(DTGEN) bench/scale/bench.sh bench/scale/duckscale.mjs
	@bench/scale/bench.sh $(B)/bin/dtreport $(DTGEN) $(SCALE_EVENTS) $(B)/bench/scale $(B)/npm
