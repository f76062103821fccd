#!/usr/bin/env python3
"""fg_check.py NAME FOLDED FG_SVG DT_SVG [MUST_HAVE...]

Compares what flamegraph.pl drew (FG_SVG, made with --minwidth 0 so every
frame is drawn) from dt's folded text (FOLDED) with dt's own figures, and
prints PASS/FAIL lines named NAME-...:

  NAME-total   flamegraph.pl's root frame, titled "all (N samples, 100%)"
               (N with thousands commas, as this flamegraph.pl prints it),
               counts the sum of the folded counts, which is also the count
               in the subtitle of dt's own SVG (DT_SVG) "...: N samples of".
  NAME-frames  the distinct frame names flamegraph.pl titles its frames with
               are dt's (split at ';', with '<' '>' as the '(' ')'
               flamegraph.pl turns them into): none was cut at a space,
               split at a ';' or misread as a count.
  NAME-has     the frames named MUST_HAVE (UTF-8 arguments, '<' '>' as
               flamegraph.pl writes them) are among flamegraph.pl's: the
               capture really holds the names the test is about.

FG_SVG must be well-formed XML (the caller checks with xmllint first)."""
import re
import sys
import xml.etree.ElementTree as ET

name, folded, fgsvg, dtsvg = sys.argv[1:5]
must = sys.argv[5:]
SVGNS = "{http://www.w3.org/2000/svg}"

total, frames = 0, set()
with open(folded, encoding="utf-8") as f:  # dt writes valid UTF-8 only
    for line in f:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, cnt = line.rsplit(" ", 1)
        total += int(cnt)
        frames.update(fr.translate({ord("<"): "(", ord(">"): ")"}) for fr in stack.split(";"))

root, fgframes = None, set()
title_re = re.compile(r"^(.*) \(([\d,]+) samples, [\d.]+%(?:; [-+\d.]+%)?\)$", re.S)
try:
    titles = list(ET.parse(fgsvg).getroot().iter(SVGNS + "title"))
except (ET.ParseError, OSError) as e:
    print(f"FAIL {name}-total: flamegraph.pl's SVG does not parse: {e}")
    sys.exit(0)
for t in titles:
    m = title_re.match(t.text or "")
    if not m:
        continue
    n = int(m.group(2).replace(",", ""))
    # the root: "all (N samples, 100%)" and no percentage with decimals
    if m.group(1) == "all" and (t.text or "").endswith(" samples, 100%)"):
        root = n
    else:
        fgframes.add(m.group(1))

with open(dtsvg, encoding="utf-8") as f:
    m = re.search(r">[^<>]*: (\d+) samples of ", f.read())
dtsub = int(m.group(1)) if m else None

if root is not None and root == total and dtsub == total and total > 0:
    print(f"PASS {name}-total")
else:
    print(f"FAIL {name}-total: flamegraph.pl's all = {root}, dt's folded counts add to {total}, "
          f"dt's SVG says {dtsub}")

if fgframes == frames:
    print(f"PASS {name}-frames")
else:
    only_fg = sorted(fgframes - frames)[:3]
    only_dt = sorted(frames - fgframes)[:3]
    print(f"FAIL {name}-frames: flamegraph.pl only: {[s[:80] for s in only_fg]}; "
          f"dt only: {[s[:80] for s in only_dt]}")

if must:
    missing = [m for m in must if m not in fgframes]
    if missing:
        print(f"FAIL {name}-has: flamegraph.pl drew no frame {[m[:80] for m in missing]}")
    else:
        print(f"PASS {name}-has")
