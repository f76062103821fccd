# bench/host: the perf_event source against perf record on this host, same
# workload, same events, same run (needs root, as perf record does).
BENCHES += host

$(B)/bench/host/workload: bench/host/workload.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fno-omit-frame-pointer -fno-inline -o $@ $<

bench-host: $(B)/bin/dtrec $(B)/bin/dtreport $(B)/bench/host/workload bench/host/bench.sh
	@bench/host/bench.sh $(B) $(B)/bench/host
