# bench/report-flame: dtreport flame (SVG and --folded) on the 10-million-
# event synthetic capture, pinned to one core: best of 3 by CPU time (the
# machine is shared: wall time is printed as a comment) and peak RSS.
# Then (vs_flamegraph_pl.py, issue 26) dt's SVG against flamegraph.pl's on
# the same samples: a million dtgen events whose 30400 generated stacks
# fold into about 16384 distinct folded stacks (the count is printed);
# and dt drawing that folded text itself (--from-folded), flamegraph.pl's
# own work, as a second ratio.
BENCHES += report-flame

SYNTH_FG16K := $(B)/bench/synth-fg16k.dtc
$(SYNTH_FG16K): $(DTGEN)
	@mkdir -p $(@D)
	$(DTGEN) -o $@.tmp -n 1000000 -s 1 --stacks 30400 && mv $@.tmp $@

bench-report-flame: $(B)/bin/dtreport $(SYNTH_10M) $(SYNTH_FG16K) bench/report-flame/bench.py \
		bench/report-flame/vs_flamegraph_pl.py
	@python3 bench/report-flame/bench.py $(B)/bin/dtreport $(SYNTH_10M) $(B)/bench/report-flame
	@python3 bench/report-flame/vs_flamegraph_pl.py $(B)/bin/dtreport $(SYNTH_FG16K) \
		$(B)/bench/report-flame
