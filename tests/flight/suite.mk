# tests/flight: dtrec --flight on the perf source (overwriting rings,
# dumps on SIGUSR2, a trigger probe and exit), with tests/uprobe's test
# program as a workload of known numbered calls.  Needs root or
# CAP_PERFMON; fails, never skips, without.
SUITES += flight

check-flight: $(B)/asan/bin/dtrec $(B)/bin/dtreport $(B)/tests/uprobe/utarget \
		$(B)/tests/dtrec/capcheck tests/flight/run.sh
	@tests/run-suite.sh $(B)/results flight tests/flight/run.sh $(B)
