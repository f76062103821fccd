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
# once); every entry or return no slice used must be an instant with
# args.unpaired, once; every sample's "sf" must name a stackFrames chain
# ending at the sample's name, and the V8 ProfileChunk events must hold as
# many samples, each node known before it is used.  Prints "key value"
# lines: json_ok, slices, expected_slices, bad_slices, overlapping_slices,
# instants_match, unpaired, unpaired_match, samples, bad_sf, v8_samples,
# bad_v8.
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
inst = [e for e in trace["traceEvents"] if e["ph"] == "i"]
got = Counter((e["tid"], ns(e["ts"])) for e in inst if "unpaired" not in e["args"])
print("instants_match", int(want == got))
# every entry/return no slice used is an instant of its own, once
left = Counter({k: v for k, v in avail.items() if v > 0})
unp = Counter((e["tid"], ns(e["ts"]), "%s:%s:%s" % (e["cat"], e["name"],
              "entry" if e["args"]["unpaired"] == "entry without return" else "return"))
              for e in inst if "unpaired" in e["args"])
print("unpaired", sum(unp.values()))
print("unpaired_match", int(left == unp))
# samples: "sf" names a stackFrames entry whose chain ends at the instant's
# name; the V8 profile events hold the same samples, nodes before use
sf = trace.get("stackFrames", {})
bad_sf = 0
samples = [e for e in inst if e.get("cat") == "profile"]
for e in samples:
    f = sf.get(str(e.get("sf")))
    seen = 0
    x = f
    while x is not None and seen < 1000:
        seen += 1
        x = sf.get(x["parent"]) if "parent" in x else None
    if f is None or f["name"] != e["name"] or seen >= 1000:
        bad_sf += 1
print("samples", len(samples))
print("bad_sf", bad_sf)
known, v8, bad_v8, started = {}, 0, 0, set()
for e in trace["traceEvents"]:
    if e["ph"] != "P":
        continue
    d = e["args"]["data"]
    if e["name"] == "Profile":
        started.add(e["id"])
        continue
    if e["id"] not in started:
        bad_v8 += 1
    k = known.setdefault(e["id"], {})
    for n in d["cpuProfile"]["nodes"]:
        if "parent" in n and n["parent"] not in k:
            bad_v8 += 1
        k[n["id"]] = n["callFrame"]["functionName"]
    for x in d["cpuProfile"]["samples"]:
        v8 += 1
        if x not in k:
            bad_v8 += 1
    if len(d["timeDeltas"]) != len(d["cpuProfile"]["samples"]):
        bad_v8 += 1
print("v8_samples", v8)
print("bad_v8", bad_v8)
