# bench/chrome: the Chrome trace export's peak memory against the number
# of events (bench.sh).
BENCHES += chrome

bench-chrome: $(B)/bin/dtreport $(DTGEN) bench/chrome/bench.sh
	@bench/chrome/bench.sh $(B)/bin/dtreport $(DTGEN) $(B)/bench/chrome
