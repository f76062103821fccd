# bench/analysis: the reports of where time went (flame --offcpu, latency,
# syscalls) on 10 million synthetic scheduler and syscall events, against
# the SQL window-function query they replace; and dtrec --offcpu against
# perf record on a context-switch-heavy workload (perf bench sched pipe).
BENCHES += analysis

$(B)/bench/analysis/schedgen: bench/analysis/schedgen.c $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ $< $(CAP_LIB) $(LDLIBS_CAP)

SCHED_10M := $(B)/bench/sched-10m.dtc
$(SCHED_10M): $(B)/bench/analysis/schedgen
	$(B)/bench/analysis/schedgen -o $@ -n 10000000

bench-analysis: $(B)/bin/dtreport $(B)/bin/dtrec $(SCHED_10M) bench/analysis/bench.sh
	@bench/analysis/bench.sh $(B)/bin/dtreport $(B)/bin/dtrec $(SCHED_10M) $(B)/bench/analysis
