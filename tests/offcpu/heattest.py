#!/usr/bin/env python3
"""tests/offcpu/heattest.py - the heatmap SVG in headless Chromium (the
DevTools driver of tests/svg/svgtest.py): every cell's count adds up to the
samples, a hover names a cell's time and count, and clicking two cells
gives the --since/--until of the range between them.

usage: heattest.py HEATMAP.svg SAMPLES COL0_SAMPLES ROWS
Prints PASS/FAIL lines.
"""
import os
import re
import shutil
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "svg"))
import svgtest  # noqa: E402

svg, samples, col0, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
text = open(svg).read()
cells = [(int(c), int(r), int(n)) for c, r, n in
         re.findall(r'data-c="(\d+)" data-r="(\d+)" data-n="(\d+)"', text)]
svgtest.result("heatmap-counts", sum(n for _, _, n in cells) == samples,
               "cells hold %d, the capture %d samples" % (sum(n for _, _, n in cells), samples))
svgtest.result("heatmap-second-0", sum(n for c, _, n in cells if c == 0) == col0,
               "column 0 holds %d, second 0 has %d samples"
               % (sum(n for c, _, n in cells if c == 0), col0))
svgtest.result("heatmap-rows", {r for _, r, _ in cells} == set(range(rows)),
               "rows %s" % sorted({r for _, r, _ in cells})[:5])

proc, prof, page = svgtest.launch()
try:
    url = "file://" + os.path.abspath(svg)
    svgtest.result("heatmap-loads", page.goto(url), "no data-ready")
    busy = max(cells, key=lambda x: x[2])
    rect = page.js("(function(){var e=document.querySelector('rect[data-c=\"%d\"][data-r=\"%d\"]');"
                   "var b=e.getBoundingClientRect();return [b.x+b.width/2,b.y+b.height/2];})()"
                   % (busy[0], busy[1]))
    page.call("Input.dispatchMouseEvent", type="mouseMoved", x=rect[0], y=rect[1])
    info = page.js("document.getElementById('info').textContent")
    want = "time %.3fs" % (busy[0] + busy[1] / rows)
    svgtest.result("heatmap-hover", want in info and (": %d " % busy[2]) in info,
                   "hover says %r, want %r and %d" % (info, want, busy[2]))
    a, b = (0, 1), (busy[0], rows - 1)
    for c, r in (a, b):
        pos = page.js("(function(){var e=document.querySelector('rect[data-c=\"%d\"][data-r=\"%d\"]');"
                      "var b=e.getBoundingClientRect();return [b.x+b.width/2,b.y+b.height/2];})()"
                      % (c, r))
        page.click(pos[0], pos[1])
    sel = page.js("document.getElementById('sel').textContent")
    since, until = a[0] + a[1] / rows, b[0] + (b[1] + 1) / rows
    want = "--since %.3f --until %.3f" % (since, until)
    svgtest.result("heatmap-select", want in sel, "selection says %r, want %r" % (sel, want))
finally:
    os.killpg(proc.pid, signal.SIGKILL)
    shutil.rmtree(prof, ignore_errors=True)
sys.exit(1 if svgtest.failed else 0)
