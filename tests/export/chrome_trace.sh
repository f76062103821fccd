#!/bin/bash
# tests/export/chrome_trace.sh - the Chrome trace export beyond slices:
# entries and returns without their other half kept as instants (never
# dropped), the pairing's sort spilled to a temporary file giving the same
# trace (memory bounded), and samples carrying their stacks (the Trace
# Event Format's stackFrames/"sf", V8 ProfileChunk events for Perfetto).
# Checked by chrome_check.py against dtreport sql on the same captures.
# Env: B, DTREPORT, DTGEN, MKCAP.
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
G=${DTGEN:-$B/bin/dtgen}
MKCAP=${MKCAP:-$B/tests/report/mkcap}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/dtchrome.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict
check() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$(echo "$2" | head -c 300)' want '$(echo "$3" | head -c 300)'"; fi
}
q() { "$D" sql --csv "$1" "$2" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2; }
PAIRQ="probe_name GLOB 'syscall:*:entry' OR probe_name GLOB 'syscall:*:return' OR probe_name GLOB 'kprobe:*:entry' OR probe_name GLOB 'kprobe:*:return'"
# facts CAP JSON OUT: chrome_check.py's facts of JSON exported from CAP
facts() {
	q "$1" "SELECT tid, ts, probe_name FROM events WHERE $PAIRQ" >"$T/paired.csv"
	q "$1" "SELECT tid, ts FROM events WHERE NOT ($PAIRQ)" >"$T/other.csv"
	python3 "$HERE/chrome_check.py" "$2" "$(q "$1" 'SELECT start_ns FROM capture')" \
		"$T/paired.csv" "$T/other.csv" >"$3" 2>>"$T/check.err"
}
fact() { awk -v k="$2" '$1==k{print $2}' "$1"; }

for tool in "$D" "$G" "$MKCAP" python3; do
	command -v "$tool" >/dev/null 2>&1 || { fail chrome_setup "missing $tool"; exit 0; }
done

# ---- syscall:read:entry without any return probe: every one an instant
"$MKCAP" "$T/m.dtc" 5 8000 || { fail chrome_setup mkcap; exit 0; }
"$D" export --format chrome -o "$T/m.json" "$T/m.dtc" >"$T/m.out" 2>"$T/m.err"
check chrome_unpaired_export "$?" 0
facts "$T/m.dtc" "$T/m.json" "$T/m.facts"
n=$(q "$T/m.dtc" "SELECT count(*) FROM events WHERE probe_name = 'syscall:read:entry'")
[ "$n" -gt 0 ] 2>/dev/null || fail chrome_premise "no syscall:read:entry events in mkcap's capture"
check chrome_entries_without_return_kept "$(fact "$T/m.facts" unpaired)" "$n"
check chrome_unpaired_are_the_unused_events "$(fact "$T/m.facts" unpaired_match)" 1
check chrome_other_instants "$(fact "$T/m.facts" instants_match)" 1
grep -q "$n entries or returns without their other half" "$T/m.out" && pass chrome_unpaired_said ||
	fail chrome_unpaired_said "$(cat "$T/m.out")"

# ---- samples with stacks: sf + stackFrames, and V8 profile chunks
nsamp=$(q "$T/m.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe WHERE p.name IN ('profile:hz:99', 'interval:ms:10')")
check chrome_samples "$(fact "$T/m.facts" samples)" "$nsamp"
check chrome_samples_sf_chains "$(fact "$T/m.facts" bad_sf)" 0
check chrome_v8_profile_samples "$(fact "$T/m.facts" v8_samples)" "$nsamp"
check chrome_v8_profile_nodes_known "$(fact "$T/m.facts" bad_v8)" 0
# the stackFrames chain of a sample is its flame graph stack
python3 - "$T/m.json" >"$T/m.folded" <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
sf, c = d["stackFrames"], collections.Counter()
for e in d["traceEvents"]:
    if e["ph"] == "i" and e.get("cat") == "profile":
        path, x = [], sf[str(e["sf"])]
        while True:
            path.append(x["name"])
            if "parent" not in x:
                break
            x = sf[x["parent"]]
        c[";".join(reversed(path))] += 1
for k in sorted(c):
    print(k, c[k])
PY
"$D" flame --folded --no-comm "$T/m.dtc" 2>>"$T/flame.err" | sed 's/;--;/;/; s/^--;//' | sort >"$T/f.folded"
if cmp -s "$T/m.folded" "$T/f.folded"; then pass chrome_stacks_eq_flame; else
	fail chrome_stacks_eq_flame "$(diff "$T/m.folded" "$T/f.folded" | head -4 | tr '\n' ' ')"; fi

# ---- the pairing sorted through a temporary file: the same trace
"$G" -o "$T/g.dtc" -n 60000 -s 11 --syscalls || { fail chrome_setup dtgen; exit 0; }
"$D" export --format chrome -o "$T/g1.json" "$T/g.dtc" >"$T/g1.out" 2>"$T/g1.err"
DTREPORT_CHROME_CHUNK=500 "$D" export --format chrome -o "$T/g2.json" "$T/g.dtc" >"$T/g2.out" 2>"$T/g2.err"
grep -q "temporary file" "$T/g2.out" && pass chrome_spill_used || fail chrome_spill_used "$(cat "$T/g2.out")"
if cmp -s <(sort "$T/g1.json") <(sort "$T/g2.json"); then pass chrome_spill_same_trace; else
	fail chrome_spill_same_trace "$(diff <(sort "$T/g1.json") <(sort "$T/g2.json") | head -3 | tr '\n' ' ')"; fi
facts "$T/g.dtc" "$T/g2.json" "$T/g.facts"
check chrome_spill_slices "$(fact "$T/g.facts" slices)-$(fact "$T/g.facts" bad_slices)-$(fact "$T/g.facts" overlapping_slices)" \
	"$(fact "$T/g.facts" expected_slices)-0-0"
check chrome_spill_unpaired_match "$(fact "$T/g.facts" unpaired_match)" 1

for f in "$T"/*.err; do
	san "$f" && fail "chrome_sanitizer_$(basename "$f")" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$f")"
done
true
