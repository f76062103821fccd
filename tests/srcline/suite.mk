# tests/srcline: source lines and inlined calls stored at record time
# (SRCL) and what reports make of them, checked against binutils'
# addr2line on a C++ program built here.
SUITES += srcline

$(B)/tests/srcline/inlined: tests/srcline/inlined.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -o $@ $<

# clang emits no .debug_aranges: the CUs' own ranges find the addresses
$(B)/tests/srcline/inlined-clang: tests/srcline/inlined.cc
	@mkdir -p $(@D)
	clang++ -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -o $@ $<

check-srcline: $(B)/asan/bin/dtrec $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh \
		$(B)/tests/srcline/inlined $(B)/tests/srcline/inlined-clang tests/srcline/run.sh
	@tests/run-suite.sh $(B)/results srcline tests/srcline/run.sh $(B)
