#!/bin/sh
# vm-guest.sh - inside the test VM (tests/vm/run.sh; dt.ko loaded; dtrec,
# target, badstack and ucopy_test in /bin): dt.ko's user stack copies
# straight through /dev/dt, then dtrec --source dt unwinding them.  The
# captures go to $OUT and are checked on the host by vm.sh.
ucopy_test /bin/badstack

rec() {	# name args...: one recording, its status in $OUT/name.rc
	name=$1
	shift
	dtrec --source dt -q -o $OUT/$name.dtc -e profile:hz:997 "$@" 2>$OUT/$name.err
	echo $? >$OUT/$name.rc
}
rec t-dwarf --user-stacks dwarf -- target 3
rec t-auto -- target 2
rec t-fp --user-stacks fp -- target 1.5
# a copy of only 1k: the chain needs more, so stacks end truncated
rec t-1k --user-stacks dwarf --user-stack-size 1k -- target 1.5
# unwinding that cannot keep up: every sample keeps frame pointers, counted
DTREC_UNWIND_SPOOL=0 DTREC_UNWIND_BUDGET=1 rec behind --user-stacks dwarf -- target 1
# the same budget with the spool (unwind_pool.c): every sample through the
# file beside the capture, still unwound; what the directory holds after
DTREC_UNWIND_BUDGET=1 dtrec --source dt -o $OUT/spool.dtc -e profile:hz:997 --user-stacks dwarf \
	-- target 1.5 2>$OUT/spool.err
echo $? >$OUT/spool.rc
ls -A $OUT >$OUT/spool.ls
for m in garbage unmapped edge; do
	rec bad-$m --user-stacks dwarf -- badstack $m 1.5
done
# processes that exit before their samples are read (30 ms each): their
# mappings may be gone when the unwinder asks, never their frames wrong
rec exitrace --user-stacks dwarf -a -d 4s &
sleep 0.5
i=0
while [ $i -lt 25 ]; do
	target 0.03
	i=$((i + 1))
done
wait
# processes of 30 ms that dlopen a library (dt.ko's proc events name them)
rec dlopen -a -d 5s &
# the capture takes its name once recording runs
i=0
while [ ! -e $OUT/dlopen.dtc ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
i=0
while [ $i -lt 12 ]; do
	dlprog /lib/libdlt.so 30 || echo "dlprog failed: $?" >>$OUT/dlprog.err
	i=$((i + 1))
done
wait
# the same as a command of dtrec's: a target from its exec (dt.ko's filter)
rec dlcmd -- dlprog /lib/libdlt.so 30
# a ring too small for the copies: a clear error, no capture
rec small -b 32k --user-stacks dwarf -- target 0.2
exit 0
