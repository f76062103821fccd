#!/usr/bin/env python3
# folded_totals.py < FOLDED - per-function inclusive sample totals of
# `dtreport flame --folded` (each function counted once per stack), the
# comm root and the "--" separator left out ("[truncated]" is a frame
# in both): what a pprof profile of the same samples must give.  Prints "total N" then
# "NAME<TAB>N" sorted by name.
import sys
tot, n = {}, 0
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    stack, cnt = line.rsplit(" ", 1)
    cnt = int(cnt)
    n += cnt
    frames = stack.split(";")[1:]
    seen = {f for f in frames if f != "--"} or {"[no stack]"}
    for f in seen:
        tot[f] = tot.get(f, 0) + cnt
print("total", n)
for f in sorted(tot):
    print(f"{f}\t{tot[f]}")
