# tests/rectruth: what a recording says about itself is true (issue 23):
# drops count only the events asked for, process names follow exec in
# time order across CPUs, frame-pointer walks stop at junk, a capture
# keeps only the symbol tables its stacks touch, and says which version
# wrote it.  Real programs on this host through the perf source (root or
# CAP_PERFMON; fails, never skips, without).
SUITES += rectruth

# exec on one CPU while the same pid's events wait on another
$(B)/tests/rectruth/execrace: tests/rectruth/execrace.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -o $@ $<
# deep calls into a system call, built without frame pointers
$(B)/tests/rectruth/nofp: tests/rectruth/nofp.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O2 -fomit-frame-pointer -fno-inline -o $@ $<

# two processes waking each other through pipes (flight drop counts)
$(B)/tests/rectruth/pingpong: tests/rectruth/pingpong.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 -o $@ $<

check-rectruth: $(B)/asan/bin/dtrec $(B)/bin/dtrec $(B)/bin/dtreport $(B)/tests/dtrec/capcheck \
		$(B)/tests/uprobe/utarget $(B)/tests/perfsrc/sysloop $(B)/tests/perfsrc/hotloop $(B)/tests/rectruth/execrace \
		$(B)/tests/rectruth/nofp $(B)/tests/rectruth/pingpong $(B)/dt-version tests/rectruth/run.sh
	@tests/run-suite.sh $(B)/results rectruth tests/rectruth/run.sh $(B)
