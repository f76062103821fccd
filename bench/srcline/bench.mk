# bench/srcline: what the source lines dtrec stores (SRCL) cost in capture
# bytes, against the symbol tables it stores (needs root, as dtrec's perf
# source does).
BENCHES += srcline

bench-srcline: $(B)/bin/dtrec $(B)/tests/srcline/inlined $(B)/tests/names/cxxnames \
		bench/srcline/bench.sh bench/srcline/chunks.py
	@bench/srcline/bench.sh $(B) $(B)/bench/srcline
