#!/usr/bin/python3
"""samecounts.py [--intact] A.json B.json - two dtreport stats --json count
the same events by probe, CPU, comm and pid.  A is of a capture whose
damaged chunk salvage skipped, and must say so; with --intact, A is of a
capture opened plainly (a damaged column that stats does not read)."""
import json
import sys

args = sys.argv[1:]
intact = args[0] == "--intact"
if intact:
    args = args[1:]
a, b = (json.load(open(f)) for f in args[:2])
keys = ("probes", "cpus", "comms", "pids", "events")
diff = [k for k in keys if a[k] != b[k]]
if diff or (not intact and not a["host"]["salvaged"]):
    print("# salvaged: %s, differing: %s" % (a["host"]["salvaged"], diff))
    sys.exit(1)
