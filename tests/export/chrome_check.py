#!/usr/bin/env python3
# chrome_check.py TRACE.json START_NS PAIRED.csv OTHER.csv - check a Chrome
# trace export against the capture, as dtreport sql printed it:
#   PAIRED.csv: tid,ts,probe_name of every syscall/kprobe entry/return event
#   OTHER.csv:  tid,ts of every other event
# Every "X" slice must start at an entry event of its thread and function
# and end at that function's return event on the same thread, with no
# event used twice, slices of a thread nest, and there are as many as a
# return closing the innermost open entry of its function gives; every
# instant must be one of the other events (as a multiset: each exactly
# once).  Prints "key value" lines: json_ok, slices, expected_slices,
# bad_slices, overlapping_slices, instants_match.
import csv, json, sys
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from decimal import Decimal

trace = json.load(open(sys.argv[1]), parse_float=Decimal)
print("json_ok", 1)
start = int(sys.argv[2])
ns = lambda us: start + int(Decimal(us) * 1000)
ev = defaultdict(list)		# tid -> sorted [(ts, name)]
for tid, ts, name in csv.reader(open(sys.argv[3])):
    ev[int(tid)].append((int(ts), name))
for v in ev.values():
    v.sort()
# Each slice consumes one entry event (its start) and one return event
# (its end) of its function on its thread: no event is used twice.
avail = Counter((int(t), int(ts), n) for t, v in ev.items() for ts, n in v)
bad = slices = 0
per_tid = defaultdict(list)
for e in trace["traceEvents"]:
    if e["ph"] != "X":
        continue
    slices += 1
    tid, b = e["tid"], ns(e["ts"])
    end = b + int(Decimal(e["dur"]) * 1000)
    fn = f'{e["cat"]}:{e["name"]}'
    ok = avail[(tid, b, fn + ":entry")] > 0 and avail[(tid, end, fn + ":return")] > 0 and end >= b
    if ok:
        avail[(tid, b, fn + ":entry")] -= 1
        avail[(tid, end, fn + ":return")] -= 1
    else:
        bad += 1
        if bad <= 3:
            print("bad_slice", json.dumps(e, default=str), file=sys.stderr)
    per_tid[tid].append((b, -end))
# slices of a thread nest: none overlaps another partially
overlap = 0
for v in per_tid.values():
    v.sort()
    stack = []
    for b, ne in v:
        end = -ne
        while stack and stack[-1] <= b:
            stack.pop()
        if stack and end > stack[-1]:
            overlap += 1
        stack.append(end)
# the pairs expected: per thread in time order, a return closes the
# innermost open entry of its function
expect = 0
for tid, v in ev.items():
    stack = []
    for ts, n in v:
        fn, _, kind = n.rpartition(":")
        if kind == "entry":
            stack.append(fn)
        elif fn in stack:
            i = len(stack) - 1 - stack[::-1].index(fn)
            del stack[i:]
            expect += 1
print("slices", slices)
print("expected_slices", expect)
print("bad_slices", bad)
print("overlapping_slices", overlap)
want = Counter((int(t), int(ts)) for t, ts in csv.reader(open(sys.argv[4])))
got = Counter((e["tid"], ns(e["ts"])) for e in trace["traceEvents"] if e["ph"] == "i")
print("instants_match", int(want == got))
