# tests/outsafe: the rules every output and input path obeys (util.h
# dtu_out_check, dtu_open_regular): planted symbolic links, devices, FIFOs,
# modes, interrupted and killed writers, standard output onto an input,
# two dtrec on one output, dtsh's history file.  Run as root (links owned
# by nobody, mknod).
SUITES += outsafe

check-outsafe: $(B)/asan/bin/dtreport $(B)/asan/bin/dtrec $(B)/asan/bin/dtsh $(DTGEN)
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport DTREC=$(B)/asan/bin/dtrec \
		DTSH=$(B)/asan/bin/dtsh DTGEN=$(DTGEN) \
		tests/run-suite.sh $(B)/results outsafe tests/outsafe/run.sh
