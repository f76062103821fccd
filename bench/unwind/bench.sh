#!/bin/bash
# bench.sh OUT_DIR DTREC DTREPORT - DWARF unwinding: completeness on a Debian-binary
# workload (xz compressing generated text, then python3 running a loop,
# both recorded with perf_event_open and unwound as they arrive), and the
# speed of unwinding those samples again on one core with warm caches.
set -eu
out=$1
t=$out/unwtest
mkdir -p "$out"
seq 1 400000 >"$out/data.txt"
echo "workload: xz -T1 -6 of $(wc -c <"$out/data.txt") bytes of text"
"$t" -n bench-xz -e -p 0 -b 3 -O /dev/null -- xz -T1 -6 -c "$out/data.txt" | grep -E '^(bench|target|samples)'
echo "workload: python3 loop"
"$t" -n bench-python3 -e -p 0 -b 3 -- /usr/bin/python3 -c '
import time
t = time.time()
while time.time() - t < 1.5:
    sum(i * i for i in range(2000))' | grep -E '^(bench|target|samples)' | sed 's/^bench unwind\./bench unwind.python3_/'

# Capture size against perf's: the same xz workload recorded by dtrec
# (DWARF user stacks, only frames stored) and by perf record --call-graph
# dwarf (8 KiB of stack per sample kept for perf report).
dtrec=$2 dtreport=$3
seq 1 1500000 >"$out/big.txt"
rm -f "$out/perf.data" "$out/xz.dtc"
perf record -q -F 997 --call-graph dwarf -o "$out/perf.data" -- xz -T1 -6 -c "$out/big.txt" >/dev/null 2>&1
"$dtrec" --source perf -q -o "$out/xz.dtc" -e profile:hz:997 -- xz -T1 -6 -c "$out/big.txt" >/dev/null
pb=$(stat -c %s "$out/perf.data") db=$(stat -c %s "$out/xz.dtc")
"$dtreport" flame --folded --user "$out/xz.dtc" >"$out/xz.folded"
echo "workload: xz -T1 -6 of $(wc -c <"$out/big.txt") bytes: capture $db bytes, perf.data $pb bytes"
awk -v d="$db" -v p="$pb" 'BEGIN { printf "bench unwind.bytes_vs_perf_dwarf %.4f ratio\ntarget <= 0.02\n", d / p }'
awk '{ n = $NF; t += n; if ($0 ~ /__libc_start_call_main/) g += n }
     END { printf "bench unwind.dtrec_complete_pct %.1f %%\ntarget >= 95\n", t ? 100 * g / t : 0 }' "$out/xz.folded"
