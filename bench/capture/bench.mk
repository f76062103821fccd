# bench/capture: the capture format's size and speed, and the shared
# synthetic captures other benchmarks read.

# 10 million synthetic events (dtgen -n 10000000 -s 1): the common input of
# every reader benchmark.  Depend on $(SYNTH_10M) to get it.
SYNTH_10M := $(B)/bench/synth-10m.dtc
$(SYNTH_10M): $(DTGEN)
	@mkdir -p $(@D)
	$(DTGEN) -o $@.tmp -n 10000000 -s 1 && mv $@.tmp $@
