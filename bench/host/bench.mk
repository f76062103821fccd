# bench/host: the perf_event source against perf record on this host, same
# workload, same events, same run (needs root, as perf record does).
BENCHES += host

$(B)/bench/host/workload: bench/host/workload.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fno-omit-frame-pointer -fno-inline -o $@ $<

bench-host: $(B)/bin/dtrec $(B)/bin/dtreport $(B)/bench/host/workload bench/host/bench.sh
	@bench/host/bench.sh $(B) $(B)/bench/host

# host.dwarf_overhead_vs_perf_dwarf: DWARF user stacks, dtrec against perf
# record --call-graph dwarf, on a build of the workload without frame
# pointers (two copies: both cores busy).
BENCHES += host-dwarf
$(B)/bench/host/workload-nofp: bench/host/workload.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fomit-frame-pointer -fno-inline -o $@ $<

$(B)/bench/host/irqgap: bench/host/irqgap.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ $<

bench-host-dwarf: $(B)/bin/dtrec $(B)/bin/dtreport $(B)/bench/host/workload-nofp $(B)/bench/host/irqgap \
		bench/host/dwarf.sh
	@bench/host/dwarf.sh $(B) $(B)/bench/host-dwarf
