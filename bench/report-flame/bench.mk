# bench/report-flame: dtreport flame (SVG and --folded) on the 10-million-
# event synthetic capture, pinned to one core: best of 3 by CPU time (the
# machine is shared: wall time is printed as a comment) and peak RSS.
BENCHES += report-flame

bench-report-flame: $(B)/bin/dtreport $(SYNTH_10M) bench/report-flame/bench.py
	@python3 bench/report-flame/bench.py $(B)/bin/dtreport $(SYNTH_10M) $(B)/bench/report-flame
