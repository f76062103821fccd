#!/bin/bash
# bench.sh KO DTREC HOTLOOP CAPCHECK OUTDIR - a short VM recording of the
# demo workload; prints the capture's size per event and the recording rate.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
ko=$1 dtrec=$2 hotloop=$3 capcheck=$4 out=$5
mkdir -p "$out"
{ echo "DEMO_SECONDS=2"; sed 1d "$top/demo/guest.sh"; } >"$out/guest.sh"
rm -rf "$out/vm"
"$top/tests/vm/run.sh" --single-thread --script "$out/guest.sh" --ko "$ko" --bin "$dtrec" --bin "$hotloop" \
	--out "$out/vm" --timeout 120 </dev/null >"$out/vm.log" 2>&1
rc=$?
f=$out/vm/demo.dtc
if [ $rc -ne 0 ] || [ ! -s "$f" ]; then
	echo "bench-dtrec: the VM run failed (status $rc): see $out/vm.log" >&2
	exit 1
fi
"$capcheck" "$f" >"$out/cc" 2>&1 || { echo "bench-dtrec: capture does not open" >&2; exit 1; }
ev=$(awk '$1=="events"{print $2}' "$out/cc")
bytes=$(stat -c %s "$f")
[ "${ev:-0}" -gt 0 ] || { echo "bench-dtrec: no events" >&2; exit 1; }
echo "bench capture.demo_events $ev events"
echo "bench capture.demo_bytes $bytes bytes"
awk -v b="$bytes" -v e="$ev" 'BEGIN {printf "bench capture.demo_bytes_per_event %.2f bytes\n", b / e}'
# dtrec's summary: "N bytes/event (M after the X KiB of symbol tables)"
m=$(grep -o '([0-9.]* after the' "$out/vm.log" | head -n1 | tr -dc '0-9.')
[ -n "$m" ] && echo "bench capture.demo_bytes_per_event_after_symtabs $m bytes"
grep -o 'dropped [0-9]* of [0-9]* events ([0-9.]*%)' "$out/vm.log" | sed 's/^/# kernel /'
exit 0
