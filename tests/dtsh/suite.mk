# tests/dtsh: the shell, offline (scripts on stdin and -c, and a real
# pseudo-terminal for completion, history and Ctrl-C) and live in the VM.
SUITES += dtsh

# mkcap writes captures with sched/syscall probes and known counts.
$(B)/tests/dtsh/mkcap: $(B)/asan/obj/tests/dtsh/mkcap.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP)

check-dtsh: $(B)/asan/bin/dtsh $(B)/tests/dtsh/mkcap $(B)/bin/dtreport $(B)/bin/dtrec $(B)/bin/dtgen \
		$(B)/tests/dtrec/fakedt.so
	@B=$(B) tests/run-suite.sh $(B)/results dtsh tests/dtsh/run.sh

# ptydrive: a tiny static pty driver (and getppid workload) for the guest,
# which has neither tmux nor python.
$(B)/static/ptydrive: tests/dtsh/ptydrive.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -static -o $@ $<

SUITES += vm-dtsh
check-vm-dtsh: $(B)/static/dtsh $(B)/static/ptydrive $(B)/asan/bin/dtsh tests/dtsh/vm.sh
	@$(MAKE) --no-print-directory $(B)/dt.ko >/dev/null 2>&1 || true
	@B=$(B) tests/run-suite.sh $(B)/results vm-dtsh tests/dtsh/vm-run.sh

# the command line and line editing (cmdline.sh, ptyedit.py)
SUITES += dtsh-cmdline
check-dtsh-cmdline: $(B)/asan/bin/dtsh $(B)/tests/dtsh/mkcap $(B)/asan/bin/dtrec $(B)/tests/dtrec/fakedt.so
	@B=$(B) tests/run-suite.sh $(B)/results dtsh-cmdline tests/dtsh/cmdline.sh
