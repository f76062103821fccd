# tests/names: frames named as their developers write them.  A C++
# workload with mangled names is recorded on this host (perf source, real
# speed), and every name dtreport prints is checked against binutils'
# c++filt applied to the raw names (--no-demangle) of the same capture.
SUITES += names

# frame pointers and no inlining but the always_inline helper: -u unwinds
# the known chains
$(B)/tests/names/cxxnames: tests/names/cxxnames.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -o $@ $<

check-names: $(B)/asan/bin/dtrec $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh \
		$(B)/tests/names/cxxnames tests/names/run.sh
	@tests/run-suite.sh $(B)/results names tests/names/run.sh $(B)
