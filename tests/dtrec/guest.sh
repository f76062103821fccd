#!/bin/sh
# guest.sh - dtrec inside the test VM (run by tests/vm/run.sh; dtrec and
# hotloop are in /bin, dt.ko is loaded).  Prints PASS/FAIL for what only
# the guest can see (exit statuses, messages); the captures go to $OUT and
# are checked on the host by vm.sh.
pass() { echo "PASS vm.$1"; }
fail() { echo "FAIL vm.$1: $2"; }

[ -c /dev/dt ] && pass device || fail device "no /dev/dt (dt.ko not loaded?)"
n=$(dtrec -l 2>$OUT/list.err | wc -l)
[ "$n" -gt 0 ] && pass list || fail list "no probes listed: $(head -c 200 $OUT/list.err)"
dtrec -l >$OUT/probes.txt 2>&1

# an unprivileged user is told what is needed
mkdir -p /etc
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
msg=$(su -s /bin/sh nobody -c 'dtrec -l' 2>&1 >/dev/null)
case $msg in
"dtrec: /dev/dt: "*"needs root or CAP_PERFMON") pass unprivileged ;;
*) fail unprivileged "got: $msg" ;;
esac

# every provider at once, while a command runs: hotloop burns CPU in known
# functions, the shell loop makes system calls and reads files with dd (vfs_read:
# busybox cat uses sendfile)
dtrec -o $OUT/prov.dtc -e profile:hz:997 -e interval:hz:20 -e 'syscall:*:entry' \
	-e tracepoint:sched:sched_switch -e kprobe:vfs_read:entry -k -u -- \
	sh -c 'hotloop 1.5 >/dev/null & for i in 1 2 3 4 5 6 7 8 9 10; do dd if=/proc/version of=/dev/null bs=64 2>/dev/null; done; wait' \
	2>$OUT/prov.err
rc=$?
[ $rc -eq 0 ] && pass command-exit || fail command-exit "dtrec exited $rc: $(tail -n 3 $OUT/prov.err)"
grep -q 'events in' $OUT/prov.err && pass summary || fail summary "no summary: $(tail -n 3 $OUT/prov.err)"

# the perf source's kprobe PMU, which this guest's kernel has and the host's
# lacks: entries and returns of vfs_read by five dd processes
wc -c </proc/version >$OUT/version.len
dtrec --source perf -q -o $OUT/pk.dtc -e kprobe:vfs_read:entry -e kprobe:vfs_read:return -k -- \
	sh -c 'for i in 1 2 3 4 5; do dd if=/proc/version of=/dev/null bs=64 2>/dev/null; done' \
	2>$OUT/pk.err
rc=$?
[ $rc -eq 0 ] && pass perf-kprobe-exit || fail perf-kprobe-exit "dtrec exited $rc: $(tail -n 3 $OUT/pk.err)"

# SIGINT ends a recording with no duration and no command, cleanly
dtrec -q -o $OUT/int.dtc -e profile:hz:997 -e 'syscall:*:entry' 2>$OUT/int.err &
pid=$!
hotloop 1.5 >/dev/null
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 0 ] && pass sigint-exit || fail sigint-exit "exit $rc: $(tail -n 3 $OUT/int.err)"

# a full disk: stop, say so, exit non-zero, leave a capture that opens
# (captures keep only the kernel symbols they use: a small disk fills fast)
mkdir -p /tmp/small && mount -t tmpfs -o size=64k tmpfs /tmp/small
dtrec -q -o /tmp/small/full.dtc -e profile:hz:997 -e 'syscall:*:entry' -k -u -d 20s \
	2>$OUT/full.err &
pid=$!
hotloop 1 >/dev/null
wait $pid
rc=$?
if [ $rc -eq 0 ]; then
	fail diskfull-exit "exit 0 on a full disk"
elif grep -q 'No space left on device' $OUT/full.err; then
	pass diskfull-exit
else
	fail diskfull-exit "exit $rc without the ENOSPC message: $(head -n 2 $OUT/full.err)"
fi
cp /tmp/small/full.dtc $OUT/full.dtc 2>/dev/null
exit 0
