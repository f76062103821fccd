#!/bin/bash
# demo/demo.sh - `make demo`: boot the VM with dt.ko, record a real
# workload with dtrec, bring the capture out to out/demo.dtc and analyze it
# with dtreport on the host.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$top/build}
cd "$top"
say() { printf '\n==> %s\n' "$*"; }
for f in "$B/dt.ko" "$B/static/dtrec" "$B/static/hotloop"; do
	[ -f "$f" ] || { echo "demo: $f is missing (did make all fail?)" >&2; exit 1; }
done
mkdir -p out
rm -rf "$B/demo-vm" out/demo.dtc out/demo.svg
say "booting the VM (qemu TCG, 2 CPUs) and recording"
tests/vm/run.sh --single-thread --script demo/guest.sh --ko "$B/dt.ko" --bin "$B/static/dtrec" \
	--bin "$B/static/hotloop" --out "$B/demo-vm" --timeout 120 </dev/null
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$B/demo-vm/demo.dtc" ]; then
	echo "demo: the VM run failed (status $rc); see $B/demo-vm/dmesg.txt" >&2
	exit 1
fi
cp "$B/demo-vm/demo.dtc" out/demo.dtc
say "capture: out/demo.dtc ($(du -h out/demo.dtc | cut -f1))"

dtreport=$B/bin/dtreport
if [ ! -x "$dtreport" ]; then
	echo "demo: $dtreport is not built: analyze out/demo.dtc later" >&2
	exit 0
fi
status=0
say "dtreport stats out/demo.dtc"
"$dtreport" stats out/demo.dtc || status=1
say "dtreport flame out/demo.dtc -o out/demo.svg"
if "$dtreport" flame out/demo.dtc -o out/demo.svg; then
	echo "wrote out/demo.svg ($(du -h out/demo.svg | cut -f1)): open it in a browser"
else
	status=1
fi
say "hotloop's functions in the profile (from dtreport flame --folded): expect about 60/30/10"
"$dtreport" flame out/demo.dtc --folded 2>/dev/null |
	awk '{n = $NF; for (i = 0; i < 3; i++) { f = (i == 0 ? "hot_heavy" : i == 1 ? "hot_medium" : "hot_light");
		if (index($0, f ";") || index($0, f " ")) { c[f] += n; t += n } } }
	END { for (f in c) printf "%-12s %6d samples  %5.1f%%\n", f, c[f], 100 * c[f] / t }' | sort -k2 -rn
say "dtreport sql: events per command"
q="SELECT comm, count(*) AS events FROM events GROUP BY comm ORDER BY 2 DESC LIMIT 5"
echo "$q"
"$dtreport" sql --table out/demo.dtc "$q" || status=1
# The same tools on this machine, at real speed, without the module.
say "recording on this host through perf_event_open (no module): hotloop and Debian's gzip and xz"
host_ok=0
if [ -x "$B/demo/hotloop" ] && [ -x "$B/bin/dtrec" ]; then
	head -c 4000000 /dev/urandom | od -An -tx1 >"$B/demo-data.txt"
	rm -f out/host.dtc out/host.svg
	if "$B/bin/dtrec" --source perf -o out/host.dtc -e profile:hz:997 -k -u -e 'syscall:*:entry' \
		-- sh -c "'$B/demo/hotloop' 3 >/dev/null & for i in 1 2 3; do gzip -9 <'$B/demo-data.txt' >/dev/null; xz -3 <'$B/demo-data.txt' >/dev/null; done; wait"
	then
		host_ok=1
	else
		echo "demo: recording on the host failed (see the message above: perf_event_open needs root" \
			"or CAP_PERFMON); the VM recording above is complete" >&2
	fi
fi
if [ $host_ok = 1 ]; then
	say "dtreport stats out/host.dtc"
	"$dtreport" stats out/host.dtc || status=1
	if "$dtreport" flame out/host.dtc -o out/host.svg; then
		echo "wrote out/host.svg ($(du -h out/host.svg | cut -f1))"
	else
		status=1
	fi
	say "hotloop's functions on the host (expect about 60/30/10)"
	"$dtreport" flame out/host.dtc --folded --comm hotloop 2>/dev/null |
		awk '{n = $NF; for (i = 0; i < 3; i++) { f = (i == 0 ? "hot_heavy" : i == 1 ? "hot_medium" : "hot_light");
			if (index($0, f ";") || index($0, f " ")) { c[f] += n; t += n } } }
		END { for (f in c) printf "%-12s %6d samples  %5.1f%%\n", f, c[f], 100 * c[f] / t }' | sort -k2 -rn
	# where a real pipeline waits: xz feeding gzip through a pipe, with the
	# scheduler's switches and wakeups and every system call
	say "recording where xz | gzip waits (dtrec --offcpu, system calls with their returns)"
	rm -f out/wait.dtc out/offcpu.svg
	if "$B/bin/dtrec" --source perf -q --offcpu -e 'syscall:*:entry' -e 'syscall:*:return' \
		-o out/wait.dtc -- sh -c "xz -3 <'$B/demo-data.txt' | gzip -9 >/dev/null"; then
		if "$dtreport" flame --offcpu out/wait.dtc -o out/offcpu.svg; then
			echo "wrote out/offcpu.svg: off-CPU time by the stack each thread waited in (us)"
		else
			status=1
		fi
		say "dtreport latency --probe 'syscall:read' --by comm out/wait.dtc"
		"$dtreport" latency --probe 'syscall:read' --by comm out/wait.dtc || status=1
		say "dtreport syscalls --by comm out/wait.dtc (the busiest)"
		"$dtreport" syscalls --by comm out/wait.dtc | head -n 12 || status=1
	else
		status=1
	fi
	say "the VM recording and the host recording side by side"
	q="SELECT c.source, count(*) AS events, count(DISTINCT e.comm) AS commands FROM events e, capture c"
	for f in out/demo.dtc out/host.dtc; do
		printf '%-14s ' "$f"
		"$dtreport" sql --csv "$f" "$q" | tail -n1 | tr -d '\r'
	done
fi
say "next"
echo "  open out/demo.svg (VM) and out/host.svg (this host) in a browser (click a frame to zoom)"
[ -s out/offcpu.svg ] && echo "  open out/offcpu.svg: where xz and gzip waited, and for how long"
[ -s out/wait.dtc ] && echo "  who woke whom: $dtreport flame --wakers out/wait.dtc -o out/wakers.svg"

[ -x "$B/bin/dtsh" ] && echo "  explore interactively: $B/bin/dtsh out/demo.dtc"
echo "  any query: $dtreport sql out/demo.dtc \"SELECT ... FROM events ...\""
exit $status
