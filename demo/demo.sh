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
say "next"
echo "  open out/demo.svg in a browser (click a frame to zoom)"
[ -x "$B/bin/dtsh" ] && echo "  explore interactively: $B/bin/dtsh out/demo.dtc"
echo "  any query: $dtreport sql out/demo.dtc \"SELECT ... FROM events ...\""
exit $status
