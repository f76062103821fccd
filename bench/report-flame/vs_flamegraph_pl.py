#!/usr/bin/env python3
"""bench/report-flame/vs_flamegraph_pl.py DTREPORT CAPTURE OUTDIR

Issue 26: dt's flame graph SVG against Brendan Gregg's flamegraph.pl
(libdevel-nytprof-perl's copy, scripts/install-deps.sh) on the same
samples, in the same run.  CAPTURE is a dtgen capture chosen so that its
folded form has about 16384 distinct stacks (bench.mk); the folded file is
`dtreport flame --folded` of it.  flamegraph.pl renders that file; dt's
time is `dtreport flame CAPTURE -o SVG`: reading the capture's events,
symbolizing and folding them, then writing the SVG, more work than
flamegraph.pl's.  Both with their default options, pinned to one core,
best of 3 by CPU time (the machine is shared; wall times are comments).
Prints `bench report.flame_svg_vs_flamegraph_pl RATIO x` (flamegraph.pl's
time / dt's) and its target; then the same work as flamegraph.pl's,
`dtreport flame --from-folded FILE -o SVG` on the same folded file, as
report.flame_render_vs_flamegraph_pl (no target: the issue's figure is
the first)."""
import os
import subprocess
import sys
import time

FG = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"
dtreport, cap, out = sys.argv[1:4]
if not os.path.isfile(FG):
    print("bench report.flame_svg_vs_flamegraph_pl error: no %s "
          "(install libdevel-nytprof-perl: scripts/install-deps.sh)" % FG, file=sys.stderr)
    sys.exit(1)
os.makedirs(out, exist_ok=True)
pin = ["taskset", "-c", "0"] if subprocess.call(["sh", "-c", "command -v taskset"],
                                                stdout=subprocess.DEVNULL) == 0 else []


def run(args, stdout):
    """Best of 3 by CPU time (user + sys), with that run's wall time."""
    best, wall_of_best = None, None
    for _ in range(3):
        with open(stdout, "wb") as so:
            t0 = time.monotonic()
            p = subprocess.Popen(pin + args, stdout=so)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
        if status != 0:
            print("bench report.flame_svg_vs_flamegraph_pl error: %s exited with %d"
                  % (args, status), file=sys.stderr)
            sys.exit(1)
        cpu = ru.ru_utime + ru.ru_stime
        if best is None or cpu < best:
            best, wall_of_best = cpu, wall
    return best, wall_of_best


folded = os.path.join(out, "fg16k.folded")
subprocess.check_call([dtreport, "flame", cap, "--folded", "-o", folded])
stacks = samples = 0
with open(folded, "rb") as f:
    for line in f:
        samples += int(line.rsplit(b" ", 1)[1])
        stacks += 1

fg_svg = os.path.join(out, "fg16k.flamegraph_pl.svg")
dt_svg = os.path.join(out, "fg16k.dt.svg")
load = os.getloadavg()[0]
fg_cpu, fg_wall = run(["perl", FG, folded], fg_svg)
dt_cpu, dt_wall = run([dtreport, "flame", cap, "-o", dt_svg], os.devnull)
ff_cpu, ff_wall = run([dtreport, "flame", "--from-folded", folded, "-o", dt_svg], os.devnull)
with open(fg_svg, "rb") as f:
    fg_ok = (b"<title>all (%s samples, 100%%)</title>" % format(samples, ",").encode()) in f.read()
if not fg_ok:
    print("bench report.flame_svg_vs_flamegraph_pl error: flamegraph.pl's SVG does not count "
          "%d samples" % samples, file=sys.stderr)
    sys.exit(1)

print("# %d distinct folded stacks, %d samples, %.1f MB of folded text (load average %.1f)"
      % (stacks, samples, os.path.getsize(folded) / 1e6, load))
print("# flamegraph.pl on the folded file: %.3f s CPU, %.3f s wall; %.1f MB SVG"
      % (fg_cpu, fg_wall, os.path.getsize(fg_svg) / 1e6))
print("# dtreport flame on the capture (it reads, symbolizes and folds the events, "
      "then draws): %.3f s CPU, %.3f s wall; %.1f MB SVG"
      % (dt_cpu, dt_wall, os.path.getsize(dt_svg) / 1e6))
print("bench report.flame_svg_vs_flamegraph_pl %.1f x" % (fg_cpu / dt_cpu))
print("target >= 20")
print("# dtreport flame --from-folded on the same folded file: %.3f s CPU, %.3f s wall"
      % (ff_cpu, ff_wall))
print("bench report.flame_render_vs_flamegraph_pl %.1f x" % (fg_cpu / ff_cpu))
print("bench report.flame_fg16k_stacks %d stacks" % stacks)
