# bench/capture: the capture format's size and speed, and the shared
# synthetic captures other benchmarks read.

# 10 million synthetic events (dtgen -n 10000000 -s 1): the common input of
# every reader benchmark.  Depend on $(SYNTH_10M) to get it.
SYNTH_10M := $(B)/bench/synth-10m.dtc
$(SYNTH_10M): $(DTGEN)
	@mkdir -p $(@D)
	$(DTGEN) -o $@.tmp -n 10000000 -s 1 && mv $@.tmp $@

# capture.*: size against zstd -3 of the raw record stream, write and read
# speed, on a 2-million-event synthetic profile (see capbench.c); the time
# to open the 10-million-event capture (capture.open_10m_ms).
BENCHES += capture
CAPBENCH := $(B)/bench/capbench
CAPBENCH_SRC := $(B)/bench/synth-2m.dtc
$(CAPBENCH): $(B)/obj/bench/capture/capbench.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP) -lpthread
$(CAPBENCH_SRC): $(DTGEN)
	@mkdir -p $(@D)
	$(DTGEN) -o $@.tmp -n 2000000 -s 1 && mv $@.tmp $@
bench-capture: $(CAPBENCH) $(CAPBENCH_SRC) $(SYNTH_10M)
	@$(CAPBENCH) $(CAPBENCH_SRC) $(B)/bench $(SYNTH_10M)
