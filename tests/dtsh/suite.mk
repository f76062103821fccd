# tests/dtsh: the shell, offline (scripts on stdin and -c, and a real
# pseudo-terminal for completion, history and Ctrl-C) and live in the VM.
SUITES += dtsh

# mkcap writes captures with sched/syscall probes and known counts.  A
# helper, not under test: built plainly (the shell is the ASan build).
$(B)/tests/dtsh/mkcap: $(B)/obj/tests/dtsh/mkcap.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)

check-dtsh: $(B)/asan/bin/dtsh $(B)/tests/dtsh/mkcap $(B)/bin/dtreport $(B)/bin/dtrec $(B)/bin/dtgen
	@B=$(B) tests/run-suite.sh $(B)/results dtsh tests/dtsh/run.sh
