#!/bin/bash
# vm-run.sh - host side of the vm-dtsh suite: boot the VM with dt.ko, the
# static dtsh and ptydrive, run vm.sh inside (it prints PASS/FAIL), then
# check on the host that the captures it recorded open and agree.
set -u
B=${B:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=$B/vm/dtsh-out
rm -rf "$out" && mkdir -p "$out"
for f in "$B/dt.ko" "$B/static/dtsh" "$B/static/ptydrive"; do
	[ -f "$f" ] || { echo "FAIL setup: $f is missing"; exit 0; }
done
# The guest has no terminfo: give libedit the entry of the TERM vm.sh uses.
ti=()
[ -f /lib/terminfo/d/dumb ] && ti=(--file /lib/terminfo/d/dumb:/lib/terminfo/d/dumb)
"$here/../vm/run.sh" --single-thread --script "$here/vm.sh" --ko "$B/dt.ko" "${ti[@]}" \
	--bin "$B/static/dtsh" --bin "$B/static/ptydrive" --out "$out" --timeout 240
rc=$?
[ $rc = 0 ] || echo "FAIL vm: run.sh exited with status $rc"
DTSH=$B/asan/bin/dtsh
[ -x "$DTSH" ] || DTSH=$B/bin/dtsh
if [ -s "$out/x.dtc" ]; then
	n=$("$DTSH" -c "sql --csv SELECT count(*) FROM events WHERE probe_name = 'syscall:getppid:entry'" \
		"$out/x.dtc" 2>&1 | tr -d '\r' | tail -1)
	if [ "$n" -gt 1000 ] 2>/dev/null; then
		echo "PASS host-reads-x.dtc"
	else
		echo "FAIL host-reads-x.dtc: getppid events [$n]"
	fi
else
	echo "FAIL host-reads-x.dtc: no capture came back"
fi
exit 0
