#!/bin/bash
# stalled.sh KO KTEST OUT - the interrupt budget on a loaded host: boots the
# debug kernel (VM_KERNEL etc. from the caller) and runs dt_ktest budget
# while qemu is stopped 40 ms of every 50 ms.  Guest time follows the host
# clock, so an event that a stop lands in costs the guest tens of ms, more
# than the whole 10 ms window: a module that forgets what an event spent
# past its window's budget throttles nothing (seen in a debug lane on a
# busy host), one that carries it over (dt_budget_begin) throttles.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ko=$1 ktest=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
printf 'echo dt-stall: go\ndt_ktest budget\necho dt-stall: done\n' >"$out/script"
VM_PIDFILE=$out/qemu.pid VM_BOOT_ALLOWANCE=300 "$top/tests/vm/run.sh" --script "$out/script" \
	--bin "$ktest" --ko "$ko" --out "$out/vm" --timeout 600 --mem "${KSUITE_MEM:-1536}" \
	--single-thread </dev/null >"$out/log" 2>&1 &
rp=$!
# the stalls start with the test, not the boot: a boot slowed fivefold
# would only cost time
until grep -q 'dt-stall: go' "$out/log" 2>/dev/null; do
	kill -0 $rp 2>/dev/null || break
	sleep 0.5
done
q=$(cat "$out/qemu.pid" 2>/dev/null)
n=0
while [ -n "$q" ] && ! grep -q 'dt-stall: done' "$out/log" && kill -STOP "$q" 2>/dev/null; do
	sleep 0.04
	kill -CONT "$q" 2>/dev/null
	sleep 0.01
	n=$((n + 1))
done
[ -n "$q" ] && kill -CONT "$q" 2>/dev/null
wait $rp
rc=$?
sed -n 's/^\(PASS\|FAIL\) budget\./\1 stalled.budget./p; s/^# /# stalled: /p' "$out/log"
if [ $rc -ne 0 ] && ! grep -q '^FAIL budget' "$out/log"; then
	echo "FAIL stalled.vm: run.sh exited $rc"
	tail -n 20 "$out/log" | sed 's/^/#   /'
fi
# A stop in an event leaves it owing four windows' budget per 10 ms of
# stop: each such event is followed by tens of throttled ones (107 in 2 s
# once).  A module that forgives the excess at each window's end throttles
# only when cheap events fill a window between two stops (0 and 2 in two
# runs): 20 tells them apart.
th=$(sed -n 's/^# hrtimer_interrupt.*throttled \([0-9]*\)$/\1/p; s/^# __hrtimer_run_queues.*throttled \([0-9]*\)$/\1/p' "$out/log" | tail -n1)
if [ -n "$th" ] && [ "$th" -ge 20 ]; then
	echo "PASS stalled.throttled-after-dear-events"
else
	echo "FAIL stalled.throttled-after-dear-events: ${th:-no count} throttled (20 or more expected)"
fi
# a stall that never happened proves nothing
if [ $n -ge 20 ]; then
	echo "PASS stalled.qemu-stopped"
else
	echo "FAIL stalled.qemu-stopped: $n stops of qemu (pid ${q:-none})"
fi
