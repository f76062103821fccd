#!/bin/bash
# tests/svg/run.sh - make flame/diff SVGs and drive them in Chromium.
set -u
W=$B/tests/svg/work
R=${DTREPORT:?}
rm -rf "$W" && mkdir -p "$W" "$B/results"
for tool in /usr/bin/chromium python3 "$R" "$B/tests/report/mkcap"; do
	[ -x "$tool" ] || command -v "$tool" >/dev/null || { echo "FAIL tools: missing $tool"; exit 1; }
done
"$B/tests/report/mkcap" "$W/a.dtc" 1 20000 || { echo "FAIL mkcap: failed"; exit 1; }
"$B/tests/report/mkcap" "$W/b.dtc" 3 15000 || { echo "FAIL mkcap: failed"; exit 1; }
# --minwidth 0: every frame is in the SVG, so search can be checked exactly
"$R" flame "$W/a.dtc" --minwidth 0 -o "$W/a.svg" --title "svg test" || echo "FAIL flame: svg"
"$R" flame "$W/a.dtc" --folded -o "$W/a.fold" || echo "FAIL flame: folded"
"$R" diff "$W/a.dtc" "$W/b.dtc" -o "$W/ab.svg" || echo "FAIL diff: svg"
"$R" flame "$W/a.dtc" --minwidth 0 --inverted --reverse -o "$W/ir.svg" || echo "FAIL flame: icicle svg"
"$R" flame "$W/a.dtc" --reverse --folded -o "$W/ir.fold" || echo "FAIL flame: reverse folded"
python3 "$(dirname "$0")/svgtest.py" "$W/a.svg" "$W/a.fold" "$B/results/svg-flame.png" \
	"$W/ab.svg" "$B/results/svg-diff.png" || echo "FAIL svgtest: flame"
# the same interactions on an icicle graph of reversed stacks
SVGTEST_PREFIX=icicle- python3 "$(dirname "$0")/svgtest.py" "$W/ir.svg" "$W/ir.fold" \
	"$B/results/svg-icicle.png" || echo "FAIL svgtest: icicle"
