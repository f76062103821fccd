# bench/hostile: opening the crafted captures of tests/safety (dthostile:
# 80,000 modules of their own, 60,000 aliases of one address, 80,000
# module ranges), symbols loaded and every frame named, against the same
# on a dtgen capture of as many frames, in the same run.
BENCHES += hostile

bench-hostile: $(B)/bin/dtreport $(B)/bin/dthostile $(DTGEN) bench/hostile/bench.sh
	@bench/hostile/bench.sh $(B)/bin/dtreport $(B)/bin/dthostile $(DTGEN) $(B)/bench/hostile
