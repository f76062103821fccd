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
# busybox cat uses sendfile).  Two hotloops keep both CPUs in the command, so
# the interval probe's timer, on whichever CPU, interrupts one of its
# processes (an event of another process is left out by the target filter).
dtrec -o $OUT/prov.dtc -e profile:hz:997 -e interval:hz:20 -e 'syscall:*:entry' \
	-e tracepoint:sched:sched_switch -e kprobe:vfs_read:entry -k -u -- \
	sh -c 'hotloop 1.5 >/dev/null & hotloop 1.5 >/dev/null & for i in 1 2 3 4 5 6 7 8 9 10; do dd if=/proc/version of=/dev/null bs=64 2>/dev/null; done; wait' \
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
# targets filtered in dt.ko: a busy process that is no target leaves no
# event, the command's forked child is recorded, dtrec's own system calls
# (and those of its copy waiting to exec the command) never appear
cp /bin/hotloop /tmp/busyhot
/tmp/busyhot 4 >/dev/null &
busy=$!
echo $busy >$OUT/tgt.busy
dtrec -q -o $OUT/tgt.dtc -e profile:hz:997 -e 'syscall:*:entry' -u -- \
	sh -c 'hotloop 1 >/dev/null & wait; dd if=/proc/version of=/dev/null bs=64 2>/dev/null' \
	2>$OUT/tgt.err &
rec=$!
echo $rec >$OUT/tgt.rec
wait $rec
rc=$?
kill $busy 2>/dev/null
wait $busy 2>/dev/null
[ $rc -eq 0 ] && pass targets-exit || fail targets-exit "dtrec exited $rc: $(tail -n 3 $OUT/tgt.err)"

# -p: a running process and the children it forks, nothing else
sh -c 'while :; do hotloop 0.2 >/dev/null; done' &
tgt=$!
echo $tgt >$OUT/pid.tgt
dtrec -q -o $OUT/pid.dtc -e profile:hz:997 -e 'syscall:*:entry' -p $tgt -d 1500ms 2>$OUT/pid.err
rc=$?
kill $tgt 2>/dev/null
wait $tgt 2>/dev/null
[ $rc -eq 0 ] && pass pid-exit || fail pid-exit "dtrec exited $rc: $(tail -n 3 $OUT/pid.err)"

# --comm: of two busy processes, only the one named is recorded
cp /bin/hotloop /tmp/busya
cp /bin/hotloop /tmp/busyb
/tmp/busya 10 >/dev/null &
ba=$!
/tmp/busyb 10 >/dev/null &
bb=$!
echo "$ba $bb" >$OUT/comm.pids
dtrec -q -o $OUT/comm.dtc -e profile:hz:997 -e 'syscall:*:entry' --comm busya -d 1500ms \
	2>$OUT/comm.err
rc=$?
kill $ba $bb 2>/dev/null
wait $ba $bb 2>/dev/null
[ $rc -eq 0 ] && pass comm-exit || fail comm-exit "dtrec exited $rc: $(tail -n 3 $OUT/comm.err)"

# --cgroup: a cgroup made here holds one of two busy processes, in a cgroup
# below it (the filter takes the subtree)
cg=
if [ -f /sys/fs/cgroup/cgroup.procs ] ||
   { mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup 2>$OUT/cg.err; }; then
	cg=/sys/fs/cgroup/dttest
	mkdir -p $cg/sub
fi
if [ -n "$cg" ] && [ -d $cg/sub ]; then
	cp /bin/hotloop /tmp/busyc
	cp /bin/hotloop /tmp/busyd
	sh -c "echo \$\$ >$cg/sub/cgroup.procs && exec /tmp/busyc 10 >/dev/null" &
	bc=$!
	/tmp/busyd 10 >/dev/null &
	bd=$!
	echo "$bc $bd" >$OUT/cg.pids
	# recording starts once the process is in the cgroup (a slow guest
	# may take a while to start the shell)
	i=0
	while [ $i -lt 50 ] && ! grep -qx "$bc" $cg/sub/cgroup.procs; do sleep 0.1; i=$((i + 1)); done
	# for a failure's message: where the processes are
	{ cat /proc/$bc/cgroup /proc/$bd/cgroup; echo "procs: $(cat $cg/sub/cgroup.procs)"; } \
		>$OUT/cg.where 2>&1
	dtrec -q -o $OUT/cg.dtc -e profile:hz:997 -e 'syscall:*:entry' --cgroup $cg -d 1500ms \
		2>$OUT/cg.err
	rc=$?
	kill $bc $bd 2>/dev/null
	wait $bc $bd 2>/dev/null
	[ $rc -eq 0 ] && pass cgroup-exit || fail cgroup-exit "dtrec exited $rc: $(tail -n 3 $OUT/cg.err)"
	# a directory of another file system is refused before recording
	dtrec -q -o $OUT/cgbad.dtc -e profile:hz:997 --cgroup /tmp -d 100ms 2>$OUT/cgbad.err
	rc=$?
	[ $rc -eq 2 ] && grep -q 'not a cgroup v2 directory' $OUT/cgbad.err && [ ! -e $OUT/cgbad.dtc ] &&
		pass cgroup-not-v2 || fail cgroup-not-v2 "exit $rc: $(head -c 200 $OUT/cgbad.err)"
else
	fail cgroup-mount "no cgroup2 in the guest: $(head -c 200 $OUT/cg.err 2>/dev/null)"
fi

# the flight recorder on the dt source: numbered close(2) calls on CPU 0
# (dt_ktest closes=A:B closes fd 1000000+i), a dump on SIGUSR2 and one at
# the end; then one on a trigger probe
dtrec -q -o $OUT/fl.dtc --flight 64k -e syscall:close:entry -- sh -c \
	'dt_ktest closes=0:50000; kill -USR2 $PPID; sleep 1; dt_ktest closes=50000:80000' \
	2>$OUT/fl.err
rc=$?
[ $rc -eq 0 ] && [ -f $OUT/fl.1.dtc ] && [ -f $OUT/fl.2.dtc ] && [ ! -e $OUT/fl.3.dtc ] &&
	pass flight-dumps || fail flight-dumps "rc $rc: $(ls $OUT | grep '^fl' | tr '\n' ' ') $(head -c 300 $OUT/fl.err)"
dtrec -q -o $OUT/ft.dtc --flight 64k -e syscall:close:entry --trigger syscall:sched_yield:entry -- \
	sh -c 'dt_ktest closes=0:40000; dt_ktest yields=1; sleep 1' 2>$OUT/ft.err
rc=$?
[ $rc -eq 0 ] && [ -f $OUT/ft.1.dtc ] && [ -f $OUT/ft.2.dtc ] &&
	pass flight-trigger || fail flight-trigger "rc $rc: $(ls $OUT | grep '^ft' | tr '\n' ' ') $(head -c 300 $OUT/ft.err)"
# a quiet command under the flight recorder with a ring far larger than
# what it produces: the dump reports no drops (issue 23 item 2; wakeups of
# the command by others are filtered in dt.ko, never produced)
dtrec --source dt -q -o $OUT/flq.dtc --flight 1M -e profile:hz:97 -e 'syscall:getppid:*' \
	-e 'syscall:nanosleep:*' -e 'syscall:clock_nanosleep:*' -e tracepoint:sched:sched_wakeup \
	-e tracepoint:sched:sched_switch -e kprobe:vfs_read:entry -- \
	sh -c 'sleep 0.2; dd if=/proc/version of=/dev/null bs=64 2>/dev/null; sleep 0.2' 2>$OUT/flq.err
rc=$?
[ $rc -eq 0 ] && [ -f $OUT/flq.1.dtc ] && [ ! -e $OUT/flq.2.dtc ] && pass flight-quiet-exit ||
	fail flight-quiet-exit "rc $rc: $(ls $OUT | grep '^flq' | tr '\n' ' ') $(head -c 300 $OUT/flq.err)"

# uprobes on the dt source: a function of dt_ktest, entry and return,
# called 3000 times by the command
dtrec -q -o $OUT/up.dtc -e 'uprobe:/bin/dt_ktest:up_target:*' -- dt_ktest upcalls=3000 \
	2>$OUT/up.err
rc=$?
[ $rc -eq 0 ] && pass uprobe-exit || fail uprobe-exit "dtrec exited $rc: $(tail -n 3 $OUT/up.err)"
# USDT on the dt source: operands decoded in the kernel, the semaphore
# raised while recording
dtrec -q -o $OUT/usdt.dtc -e 'usdt:/bin/dt_ktest:dtkt:*' -- dt_ktest usdt=2000 2>$OUT/usdt.err
rc=$?
[ $rc -eq 0 ] && pass usdt-exit || fail usdt-exit "dtrec exited $rc: $(tail -n 3 $OUT/usdt.err)"

# a uprobe in a shared library, hit by two processes at once: both wait
# for /tmp/go, then call uc_hit 3000 and 5000 times
rm -f /tmp/go
dtrec -q -o $OUT/lib2.dtc -e 'uprobe:/lib/libdtuc.so:uc_hit:entry' -- sh -c \
	'cd /tmp; ucall 3000 1 & a=$!; ucall 5000 2 & b=$!; sleep 0.3; touch go;
	 wait $a; ra=$?; wait $b; echo "$ra $?" >'$OUT/lib2.status 2>$OUT/lib2.err
rc=$?
[ $rc -eq 0 ] && [ "$(cat $OUT/lib2.status)" = "0 0" ] && pass ulib-exit ||
	fail ulib-exit "dtrec exited $rc, ucall $(cat $OUT/lib2.status): $(tail -n 3 $OUT/lib2.err)"

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

# dt.ko's frame-pointer walk through code without frame pointers reads text
# or zeros as a return address: the stack ends before it, marked cut; the
# same calls built with frame pointers end at main's caller, not cut
# (issue 23)
for m in ascii zero; do
	dtrec --source dt -q -o $OUT/fpjunk-$m.dtc --user-stacks fp -u -e syscall:getppid:entry \
		-- nofp $m 200 2>$OUT/fpjunk-$m.err
done
dtrec --source dt -q -o $OUT/fpwhole.dtc --user-stacks fp -u -e syscall:getppid:entry \
	-- withfp deep 200 5 2>$OUT/fpwhole.err

# execve's argv[0] copied at the entry (issue 23): a short one, one longer
# than its copy, and the program's path
mkdir -p /tmp/argv0-longer-than-its-copy
cp /bin/hotloop /tmp/argv0-longer-than-its-copy/hotloop
dtrec --source dt -q -o $OUT/argv0.dtc -e syscall:execve:entry -- \
	sh -c 'hotloop 0.05 >/dev/null; /tmp/argv0-longer-than-its-copy/hotloop 0.05 >/dev/null' \
	2>$OUT/argv0.err
# execveat's likewise (its argv is the third argument): by path with an
# argv[0] longer than the copy, then by descriptor (AT_EMPTY_PATH)
dtrec --source dt -q -o $OUT/execat.dtc -e syscall:execveat:entry -- dt_ktest execveat=2 \
	2>$OUT/execat.err

# a flight ring that wrapped, recording a -p target that another process
# wakes (issue 23 item 2): ping (the target) and pong wake each other N
# times through fifos; an ordinary recording of the same target beside
# the flight one says what the dump's produced must be.  Both run on CPU
# 0: sched_wakeup fires where the woken task is made runnable, which for a
# task whose CPU is idle is that CPU, in its idle task (the kernel queues
# the wakeup there), so ping's wakeups of pong on the other CPU are not
# ping's events; unpinned, both recordings once caught 46 of 6000.
rm -f /tmp/fa /tmp/fb /tmp/fg
mkfifo /tmp/fa /tmp/fb /tmp/fg
taskset 1 dt_ktest pong=6000 0<>/tmp/fa 1<>/tmp/fb 3<>/tmp/fg &
pong=$!
taskset 1 dt_ktest ping=6000 0<>/tmp/fb 1<>/tmp/fa &
ping=$!
dtrec --source dt -q -o $OUT/fpr.dtc -b 4M -e tracepoint:sched:sched_wakeup -p $ping 2>$OUT/fpr.err &
r1=$!
# and every wakeup of the system, to show the filter lost none of ping's
dtrec --source dt -q -o $OUT/fpa.dtc -b 4M -e tracepoint:sched:sched_wakeup 2>$OUT/fpa.err &
ra=$!
# not -q: its line saying it records is what the workload waits for
dtrec --source dt -o $OUT/fpf.dtc --flight 8k -e tracepoint:sched:sched_wakeup -p $ping \
	2>$OUT/fpf.err &
r2=$!
# each recorder says it records: the ordinary capture takes its name, the
# flight recorder prints its line, both once their probes are enabled
i=0
while [ $i -lt 600 ]; do
	[ -f $OUT/fpr.dtc ] && [ -f $OUT/fpa.dtc ] && grep -q '^dtrec: flight recorder running' $OUT/fpf.err &&
		break
	sleep 0.1
	i=$((i + 1))
done
[ $i -lt 600 ] || fail flight-target-started "the recorders did not say they record in 60 s"
echo go >/tmp/fg
wait $r1
echo $? >$OUT/fpr.rc
wait $r2
echo $? >$OUT/fpf.rc
wait $pong
wait $ping
kill -INT $ra
wait $ra
echo $? >$OUT/fpa.rc
echo $ping >$OUT/fp.ping
# sched_waking fires in the waker, sched_wakeup where the woken task is
# made runnable: ping and pong on either CPU, a -p recording of ping's
# sched_waking beside a system-wide one of both probes
rm -f /tmp/wa /tmp/wb /tmp/wg
mkfifo /tmp/wa /tmp/wb /tmp/wg
dt_ktest pong=3000 0<>/tmp/wa 1<>/tmp/wb 3<>/tmp/wg &
wpong=$!
dt_ktest ping=3000 0<>/tmp/wb 1<>/tmp/wa &
wping=$!
echo "$wping $wpong" >$OUT/wk.pids
dtrec --source dt -q -o $OUT/wk.dtc -b 4M -e tracepoint:sched:sched_waking -p $wping 2>$OUT/wk.err &
w1=$!
dtrec --source dt -q -o $OUT/wks.dtc -b 4M -e tracepoint:sched:sched_waking \
	-e tracepoint:sched:sched_wakeup 2>$OUT/wks.err &
w2=$!
# and dtrec --offcpu of ping: who woke each of its waits
dtrec --source dt -q --offcpu -o $OUT/wko.dtc -b 8M -p $wping 2>$OUT/wko.err &
w3=$!
i=0
while [ $i -lt 600 ] && ! { [ -f $OUT/wk.dtc ] && [ -f $OUT/wks.dtc ] && [ -f $OUT/wko.dtc ]; }; do
	# a recorder that failed (a module without sched_waking) says no more
	kill -0 $w1 2>/dev/null && kill -0 $w2 2>/dev/null && kill -0 $w3 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
echo go >/tmp/wg
wait $wping
wait $wpong
wait $w1
echo $? >$OUT/wk.rc
kill -INT $w2
wait $w2
echo $? >$OUT/wks.rc
wait $w3
echo $? >$OUT/wko.rc
# --offcpu with a command on the dt source (issue 24): the command sleeps
# five times; the timer wakes it from another task (the idle task, an
# interrupt) and another task switches to it, so without DTEVT_SUBJECT its
# blocked time had no end.  A separate process, not the command, makes the
# hotloop run beside it: its switches must stay out.
hotloop 2 >/dev/null &
hl=$!
dtrec -q -o $OUT/off.dtc --offcpu -- sh -c 'for i in 1 2 3 4 5; do sleep 0.1; done' 2>$OUT/off.err
rc=$?
kill $hl 2>/dev/null
wait $hl 2>/dev/null
[ $rc -eq 0 ] && pass offcpu-command-exit || fail offcpu-command-exit "dtrec exited $rc: $(tail -n 3 $OUT/off.err)"
# and with DWARF user stacks: the scheduler events' copies are unwound
dtrec -q -o $OUT/offdw.dtc --offcpu --user-stacks dwarf -- sh -c 'for i in 1 2 3; do sleep 0.05; done' \
	2>$OUT/offdw.err
rc=$?
[ $rc -eq 0 ] && pass offcpu-dwarf-exit || fail offcpu-dwarf-exit "dtrec exited $rc: $(tail -n 3 $OUT/offdw.err)"
exit 0
