#!/bin/sh
# demo/guest.sh - runs inside the VM: profile a real workload (busybox gzip
# compressing a generated file, and hotloop's known hot functions) with
# kernel and user stacks, plus every system call entry.
DUR=${DEMO_SECONDS:-4}
seq 1 100000 >/tmp/data.txt
echo "demo: recording profile:hz:997 (kernel+user stacks) and syscall:*:entry for about ${DUR}s"
dtrec -o $OUT/demo.dtc -e profile:hz:997 -k -u -e 'syscall:*:entry' -- sh -c "
	hotloop $DUR >/dev/null &
	end=\$((\$(date +%s) + $DUR))
	while [ \$(date +%s) -lt \$end ]; do gzip -9 -c /tmp/data.txt >/tmp/data.gz; done
	wait"
echo "demo: dtrec exited $?"
