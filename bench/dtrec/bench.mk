# bench/dtrec: capture size per event of a short demo recording in the VM.
BENCHES += dtrec

bench-dtrec: $(B)/dt.ko $(B)/static/dtrec $(B)/static/hotloop $(B)/tests/dtrec/capcheck \
		demo/guest.sh bench/dtrec/bench.sh
	@bench/dtrec/bench.sh $(B)/dt.ko $(B)/static/dtrec $(B)/static/hotloop \
		$(B)/tests/dtrec/capcheck $(B)/bench/dtrec
