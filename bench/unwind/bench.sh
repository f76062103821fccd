#!/bin/bash
# bench.sh OUT_DIR - DWARF unwinding: completeness on a Debian-binary
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
