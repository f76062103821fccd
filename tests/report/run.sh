#!/bin/bash
# tests/report/run.sh - dtreport stats/flame/diff against independent counts.
# Env: B (build dir), DTREPORT (the ASan build), DTGEN.
# Prints PASS/FAIL lines; see tests/run-suite.sh.
set -u
R=${DTREPORT:?}
T=$B/tests/report
W=$T/work
MKCAP=$T/mkcap
REF=$T/refcount
rm -rf "$W" && mkdir -p "$W"
. "$(dirname "$0")/../lib.sh"
sanitizers_strict
check() { # name condition-description command...
	local n=$1 why=$2; shift 2
	if "$@"; then pass "$n"; else fail "$n" "$why"; fi
}
for tool in "$R" "$MKCAP" "$REF" "${DTGEN:?}" python3; do
	command -v "$tool" >/dev/null || { fail tools "missing $tool"; exit 1; }
done

# sorted folded text of dtreport vs the reference
same_sorted() { cmp -s <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2"); }
sum_counts() { awk '{s += $NF} END {print s + 0}' "$1"; }
nlines() { wc -l <"$1" | tr -d ' '; }

# ------------------------------------------------ the time grammar itself
"$T/timegrammar" || echo "FAIL timegrammar: exited with status $?"

# ------------------------------------------- the folding tree of flame.c
if [ -x "$T/flametree" ]; then
	"$T/flametree" 2>"$W/flametree.err" || echo "FAIL flametree: exited with status $?"
	! grep -q 'Sanitizer\|runtime error' "$W/flametree.err" &&
		pass flametree-clean || fail flametree-clean "$(head -c 2000 "$W/flametree.err")"
else
	fail flametree "$T/flametree is missing"
fi

# ---------------------------------------------------------------- captures
"$MKCAP" "$W/a.dtc" 1 20000 || fail mkcap "mkcap seed 1 failed"
"$MKCAP" "$W/b.dtc" 2 12000 || fail mkcap "mkcap seed 2 failed"
"$DTGEN" -o "$W/g.dtc" -n 20000 -s 7 --stacks 3000 || fail dtgen "dtgen failed"
"$DTGEN" -o "$W/g2.dtc" -n 15000 -s 8 --stacks 3000 --syscalls || fail dtgen "dtgen seed 8 failed"

# ------------------------------------------------- folded vs the reference
for cap in a g g2; do
	c=$W/$cap.dtc
	"$R" flame "$c" --folded -o "$W/$cap.fold" 2>"$W/$cap.err"
	"$REF" "$c" folded >"$W/$cap.ref"
	check "folded-$cap" "folded stacks differ from the reference walker" \
		same_sorted "$W/$cap.fold" "$W/$cap.ref"
	check "folded-$cap-nonempty" "no stacks" test "$(nlines "$W/$cap.fold")" -gt 10
	# every sample counted once: total = timer-probe events by the reference
	check "folded-$cap-total" "sum of counts != reference total" \
		test "$(sum_counts "$W/$cap.fold")" = "$(sum_counts "$W/$cap.ref")"
	# deterministic: a second run gives the same bytes in the same order
	"$R" flame "$c" --folded >"$W/$cap.fold2" 2>/dev/null
	check "folded-$cap-deterministic" "two runs differ" cmp -s "$W/$cap.fold" "$W/$cap.fold2"
	"$R" flame "$c" --folded --reverse -o "$W/$cap.rfold" 2>/dev/null
	"$REF" "$c" folded reverse >"$W/$cap.rref"
	check "reverse-$cap" "reversed stacks differ" same_sorted "$W/$cap.rfold" "$W/$cap.rref"
done
# the same events in blocks of other sizes: the same graph.  A pid that
# exec'd is counted per context where its snapshot holds across a block and
# row by row where a block straddles the exec; small blocks make many of
# the first, and odd sizes put the exec inside some block.
for bs in 64 997 65536; do
	mkdir -p "$W/blk$bs"
	"$DTGEN" -o "$W/blk$bs/g.dtc" -n 20000 -s 7 --stacks 3000 --pids 12 --block "$bs" ||
		fail dtgen "dtgen --block $bs failed"
	(cd "$W/blk$bs" && "$R" flame g.dtc --folded -o g.fold 2>/dev/null &&
		"$R" flame g.dtc -o g.svg 2>/dev/null)
done
"$REF" "$W/blk997/g.dtc" folded >"$W/blk997/g.ref"
check blocks-folded-reference "folded stacks (997-row blocks) differ from the reference walker" \
	same_sorted "$W/blk997/g.fold" "$W/blk997/g.ref"
for bs in 64 997; do
	check "blocks-$bs-folded" "folded output differs between $bs- and 65536-row blocks" \
		cmp -s "$W/blk$bs/g.fold" "$W/blk65536/g.fold"
	check "blocks-$bs-svg" "SVG differs between $bs- and 65536-row blocks" \
		cmp -s "$W/blk$bs/g.svg" "$W/blk65536/g.svg"
done
check blocks-svg-nonempty "no frames in the SVG" grep -q 'class="f"' "$W/blk64/g.svg"

# which parts of a stack: --kernel, --user, --no-comm (totals unchanged)
for o in kernel user no-comm "no-comm kernel"; do
	n=${o// /-}
	# shellcheck disable=SC2046
	"$R" flame "$W/g2.dtc" --folded $(printf -- '--%s ' $o) -o "$W/o-$n.fold" 2>/dev/null
	# shellcheck disable=SC2086
	"$REF" "$W/g2.dtc" folded ${o//no-comm/nocomm} >"$W/o-$n.ref"
	check "parts-$n" "--$o differs from the reference" same_sorted "$W/o-$n.fold" "$W/o-$n.ref"
	check "parts-$n-total" "--$o lost samples" \
		test "$(sum_counts "$W/o-$n.fold")" = "$(sum_counts "$W/g2.fold")"
done
check parts-kernel-no-user "--kernel kept a user frame" bash -c "! grep -q -- ';--;\|__libc_start' '$W/o-kernel.fold'"
check parts-user-no-kernel "--user kept a kernel frame" bash -c "! grep -q -- ';--;\|do_syscall_64' '$W/o-user.fold'"
# folded output is sorted by frames (tree order) and well formed
check folded-format "a line is not 'frames count'" \
	awk '!/^[^ ].* [0-9]+$/ {bad=1} END {exit bad}' "$W/g.fold"

# ----------------------------------------------------------- probe choice
"$R" flame "$W/a.dtc" --folded --probe 'syscall:*' -o "$W/p.fold" 2>/dev/null
"$REF" "$W/a.dtc" folded probe=syscall:read:entry >"$W/p.ref"
check probe-glob "--probe syscall:* != reference" same_sorted "$W/p.fold" "$W/p.ref"
check probe-glob-differs "--probe did not change the result" \
	test "$(sum_counts "$W/p.fold")" != "$(sum_counts "$W/a.fold")"
"$R" flame "$W/a.dtc" --folded --probe interval:ms:10 -o "$W/p2.fold" 2>/dev/null
"$REF" "$W/a.dtc" folded probe=interval:ms:10 >"$W/p2.ref"
check probe-exact "--probe interval:ms:10 != reference" same_sorted "$W/p2.fold" "$W/p2.ref"

# ---------------------------------------------------------------- filters
start=$("$R" stats "$W/a.dtc" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['host']['start_ns'])")
filt() { # name "dtreport filter args" "refcount args"
	local n=$1 d=$2 rf=$3
	# shellcheck disable=SC2086
	"$R" flame "$W/a.dtc" --folded $d -o "$W/f-$n.fold" 2>"$W/f-$n.err"
	# shellcheck disable=SC2086
	"$REF" "$W/a.dtc" folded $rf >"$W/f-$n.ref"
	check "filter-$n" "dtreport $d != reference $rf" same_sorted "$W/f-$n.fold" "$W/f-$n.ref"
	local t; t=$(sum_counts "$W/f-$n.fold")
	check "filter-$n-narrows" "filter did not narrow ($t of $(sum_counts "$W/a.fold"))" \
		test "$t" -gt 0 -a "$t" -lt "$(sum_counts "$W/a.fold")"
}
filt pid "--pid 200" "pid=200"
filt tid "--tid 101" "tid=101"
filt comm "--comm sh" "comm=sh"
filt cpu "--cpu 2" "cpu=2"
filt since "--since 0.5s --until 1200ms" "tmin=$((start + 500000000)) tmax=$((start + 1200000000))"
filt abs "--since @$((start + 300000000))ns" "tmin=$((start + 300000000))"
filt abs-seconds "--since @$((start / 1000000000)).$(printf %09d $((start % 1000000000 + 300000000)))" \
	"tmin=$((start + 300000000))"
# one grammar: a bare number is seconds from the start, fractions allowed
filt bare-seconds "--since 0.5 --until 1.2" "tmin=$((start + 500000000)) tmax=$((start + 1200000000))"
filt bare-until "--until 1" "tmax=$((start + 1000000000))"
"$R" flame "$W/a.dtc" --folded --until 1s -o "$W/f-u1s.fold" 2>/dev/null
check time-units-agree "--until 1 and --until 1s differ" cmp -s "$W/f-u1s.fold" "$W/f-bare-until.fold"
"$R" flame "$W/a.dtc" --folded --until 0.0166666667m -o "$W/f-um.fold" 2>/dev/null
check time-minutes "--until 0.0166666667m != --until 1s" cmp -s "$W/f-um.fold" "$W/f-u1s.fold"
"$R" flame "$W/a.dtc" --folded --pid 100,200 -o "$W/f-list.fold" 2>/dev/null
check filter-list "--pid 100,200 should keep everything" cmp -s "$W/f-list.fold" "$W/a.fold"
"$R" flame "$W/a.dtc" --folded --comm 'a*' --cpu 0,1 -o "$W/f-glob.fold" 2>/dev/null
check filter-glob-combined "--comm 'a*' --cpu 0,1 kept samples of other comms" \
	awk '$0 !~ /^app(;| )/ {bad=1} END {exit bad}' "$W/f-glob.fold"
# a time window past the end matches nothing: status 0, and it says so
"$R" flame "$W/a.dtc" --folded --since 100s -o "$W/f-none.fold" 2>"$W/f-none.err"
check filter-empty "window past the end should give no stacks, status 0" \
	test $? -eq 0 -a ! -s "$W/f-none.fold"
for f in "--since 1h" "--pid 4000000" "--tid 4000000,4000001" "--comm sh --cpu 3 --pid 300"; do
	for cmd in "flame --folded" stats; do
		# shellcheck disable=SC2086
		"$R" $cmd "$W/a.dtc" $f >/dev/null 2>"$W/f-none.err"
		rc=$?
		n="filter-empty-says-so-${cmd%% *}-${f//[^a-z0-9]/}"
		check "$n" "status $rc, or no note: $(cat "$W/f-none.err")" \
			bash -c "[ $rc -eq 0 ] && grep -q 'no event matches the filters' '$W/f-none.err'"
	done
done
# a value the capture never saw is an error, as for --probe: one rule
"$R" flame "$W/a.dtc" --folded --comm nosuch >/dev/null 2>"$W/f.err"
rc=$?
check filter-unknown-comm "status $rc: $(cat "$W/f.err")" \
	bash -c "[ $rc -eq 1 ] && grep -q 'comm nosuch: no process of the capture has that name' '$W/f.err'"
"$R" stats "$W/a.dtc" --comm apq >/dev/null 2>"$W/f.err"
check filter-unknown-comm-suggests "no suggestion: $(cat "$W/f.err")" grep -q "did you mean 'app'" "$W/f.err"
"$R" flame "$W/a.dtc" --folded --probe syscall:reed:entry >/dev/null 2>"$W/f.err"
check filter-unknown-probe-suggests "no suggestion: $(cat "$W/f.err")" \
	grep -q "no probe of the capture matches (did you mean 'syscall:read:entry'?)" "$W/f.err"
"$R" flame "$W/a.dtc" --folded --cpu 99 >/dev/null 2>"$W/f.err"
rc=$?
check filter-unknown-cpu "status $rc: $(cat "$W/f.err")" \
	bash -c "[ $rc -eq 1 ] && grep -q 'cpu 99: the capture has CPUs 0-3' '$W/f.err'"

# --------------------------------------------------------- symbolization
# mkcap's snapshots: what each of its addresses must be called
sym() { check "sym-$1" "no stack matching '$2'" grep -qE -- "$2" "$W/a.fold"; }
sym kernel-core '(^|;)do_syscall_64;vfs_read;schedule( |;)'
sym kernel-alias ';vfs_read;'           # vfs_read_alias at the same address loses by name
sym module 'do_syscall_64;mod_func \[testmod\]( |$)'
sym module-nosym 'asm_sysvec_apic_timer_interrupt;testmod\+0x100 '
sym module-other ';0xffffffff90000000;othermod\+0x20 '
sym user-exe '^app;_start;main;work '
sym user-lib '^app;_start;main;read '
sym vdso ';nosize;\[vdso\]\+0x100( |;)'
sym anon-truncated '^app;\[truncated\];0x12345678;nosize;0x10000040 '
sym user-kernel-join '^app;_start;main;work;--;do_syscall_64;vfs_read;schedule '
sym ktrunc ';--;\[truncated\];do_syscall_64;vfs_read '
sym return-address '(^|;)do_syscall_64;vfs_read;mod_func \[testmod\] '  # call at a function's end
check sym-return-address-not-next "a return address named after the next function" \
	bash -c "! grep -q ';schedule;mod_func' '$W/a.fold'"
sym after-exec '^app;main;work '         # pid 200 after exec: maps of the second snapshot
sym before-exec '^sh;_start;main;work '  # pid 200 before exec
sym no-comm '^\[unknown\];'
check sym-no-data "a data symbol named a frame" bash -c "! grep -q some_data '$W/a.fold'"
# dtgen: its kallsyms/ELF snapshots name (nearly) everything
unk=$(grep -oE '(^|;)0x[0-9a-f]+' "$W/g.fold" | wc -l)
named=$(tr ';' '\n' <"$W/g.fold" | wc -l)
check sym-dtgen-mostly-named "$unk of $named frames unnamed" test $((unk * 20)) -lt "$named"
check sym-dtgen-module "no module frame named 'func [mod]'" grep -qE ' \[[a-z0-9_]+\](;| )' "$W/g.fold"

# ------------------------------------------------------------------ stats
"$R" stats "$W/a.dtc" --json >"$W/a.json" 2>"$W/a.json.err"
check stats-json-exit "stats --json failed" test $? -eq 0
"$REF" "$W/a.dtc" stats >"$W/a.stats"
python3 - "$W/a.json" "$W/a.stats" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ref = {}
for line in open(sys.argv[2], errors="replace"):
    parts = line.split()
    if parts[0] == "total":
        ref["total"] = int(parts[1])
    else:
        key = parts[0] + ":" + (parts[1] if len(parts) == 3 else "")
        ref[key] = int(parts[-1])
def t(name, ok, why):
    print(("PASS stats-%s" % name) if ok else ("FAIL stats-%s: %s" % (name, why)))
t("events", j["events"] == ref["total"] == j["events_matched"], "%s vs %s" % (j["events"], ref["total"]))
for p in j["probes"]:
    t("probe-%d" % p["id"], p["events"] == ref.get("probe:%d" % p["id"], 0), "%s" % p)
for c in j["cpus"]:
    t("cpu-%d" % c["cpu"], c["events"] == ref.get("cpu:%d" % c["cpu"], 0), "%s" % c)
    # mkcap's counters: read = events of that CPU, 7 dropped on CPU 1
    t("cpu-%d-read" % c["cpu"], c["counters"]["read"] == c["events"], "%s" % c)
for c in j["comms"]:
    t("comm-%s" % (c["comm"] or "none"), c["events"] == ref.get("comm:" + c["comm"], 0), "%s" % c)
a = j["accounting"]
t("accounting-ok", a["status"] == "OK" and a["conserved"], "%s" % a)
t("dropped", a["dropped"] == 7 and abs(a["dropped_pct"] - 700.0 / (ref["total"] + 7)) < 1e-3, "%s" % a)
t("host", j["host"]["hostname"] == "testhost" and j["host"]["ncpus"] == 4, "%s" % j["host"])
t("pids", sum(p["events"] for p in j["pids"]) == ref["total"], "%s" % j["pids"])
t("skipped", j["counters"]["total"]["skipped"] == 6, "%s" % j["counters"])
EOF
"$R" stats "$W/a.dtc" >"$W/a.txt" 2>&1
check stats-text-ok "text report lacks the OK verdict" grep -q 'kernel read [0-9]*: OK' "$W/a.txt"
check stats-text-drops "drops not flagged" grep -q '\*\*\* DROPPED 7 events' "$W/a.txt"
# the answer first: accounting before the tables, zero rows hidden unless --all
check stats-accounting-first "accounting is not above the probe table" \
	test "$(grep -n '^accounting' "$W/a.txt" | cut -d: -f1)" -lt "$(grep -n '^probes' "$W/a.txt" | cut -d: -f1)"
# (filtered to the timer probe, every other probe has no events to show)
"$R" stats "$W/g.dtc" --probe 'profile:*' --top 50 >"$W/g.txt" 2>&1
"$R" stats "$W/g.dtc" --probe 'profile:*' --top 50 --all >"$W/g-all.txt" 2>&1
"$R" stats "$W/g.dtc" --probe 'profile:*' --json >"$W/gp.json" 2>&1
zero=$(python3 -c 'import json,sys; print(sum(1 for p in json.load(open(sys.argv[1]))["probes"] if p["events"] == 0))' "$W/gp.json")
check stats-zero-rows-exist "no probe without events (the test needs some)" test "$zero" -gt 0
check stats-hides-zero-rows "a probe row with 0 events shown without --all" \
	bash -c "! awk '/^probes/,/^\$/' '$W/g.txt' | grep -qE '^ +[0-9]+ +0 +0\.00%'"
check stats-says-hidden "no note of the $zero hidden probes" grep -q "($zero probes* without events not shown: --all)" "$W/g.txt"
check stats-all-shows-zero-rows "--all does not show the $zero zero rows" \
	test "$(awk '/^probes/,/^$/' "$W/g-all.txt" | grep -cE '^ +[0-9]+ +0 +0\.00%')" = "$zero"
check stats-json-keeps-zero-rows "--json lost the zero rows" \
	test "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["probes"]))' "$W/gp.json")" \
	= "$(awk '/^probes/,/^$/' "$W/g-all.txt" | grep -cE '^ +[0-9]+ ')"
# pid 0 is the idle task, named so in stats and in dtsh top
check stats-pid0-idle "pid 0 not shown as [idle]" grep -qE '^ +[0-9]+ +[0-9.]+% +0  \[idle\]$' "$W/g.txt"
# filters narrow the tables, not the accounting
"$R" stats "$W/a.dtc" --json --pid 100 >"$W/p.json"
"$REF" "$W/a.dtc" stats pid=100 >"$W/p.stats"
check stats-filter-pid "events_matched != reference" test \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events_matched"])' "$W/p.json")" \
	= "$(awk '$1=="total"{print $2}' "$W/p.stats")"
"$R" stats "$W/a.dtc" --json --since 1s --probe 'profile:*' >"$W/s.json"
"$REF" "$W/a.dtc" stats tmin=$((start + 1000000000)) probe=profile:hz:99 >"$W/s.stats"
check stats-filter-time-probe "events_matched != reference" test \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events_matched"])' "$W/s.json")" \
	= "$(awk '$1=="total"{print $2}' "$W/s.stats")"
# dtgen capture: its own accounting must balance
"$R" stats "$W/g.dtc" --json >"$W/g.json"
"$REF" "$W/g.dtc" stats >"$W/g.stats"
check stats-dtgen "events or accounting wrong" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
tot = int(open(sys.argv[2]).readline().split()[1])
sys.exit(not (j["events"] == tot and j["accounting"]["status"] in ("OK", "NO_COUNTERS")))' \
	"$W/g.json" "$W/g.stats"

# ------------------------------------------------------------------- diff
"$R" diff "$W/a.dtc" "$W/a.dtc" --folded -o "$W/aa.fold" 2>/dev/null
check diff-self-zero "a capture against itself has a non-zero delta" \
	awk 'NF < 3 || $(NF-1) != $NF {bad=1} END {exit bad || NR == 0}' "$W/aa.fold"
check diff-self-counts "self diff counts != flame counts" \
	cmp -s <(awk '{$NF=""; sub(/ $/, ""); print}' "$W/aa.fold") "$W/a.fold"
"$R" diff "$W/a.dtc" "$W/a.dtc" -o "$W/aa.svg" 2>/dev/null
check diff-self-svg-white "self diff SVG has red or blue frames" \
	bash -c "! grep -qE 'rgb\(255,[0-9]+,[0-9]+\)\" rx|rgb\([0-9]+,[0-9]+,255\)\" rx' '$W/aa.svg'"
"$R" diff "$W/a.dtc" "$W/b.dtc" --folded -o "$W/ab.fold" 2>/dev/null
"$R" flame "$W/b.dtc" --folded -o "$W/b.fold" 2>/dev/null
check diff-totals "diff column sums != each side's flame total" test \
	"$(awk '{a += $(NF-1); b += $NF} END {print a, b}' "$W/ab.fold")" \
	= "$(sum_counts "$W/a.fold") $(sum_counts "$W/b.fold")"
check diff-sides "diff columns != the per-capture folded stacks" python3 -c '
import sys
def load(p):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(p, errors="surrogateescape")}
a, b = load(sys.argv[2]), load(sys.argv[3])
da, db = {}, {}
for l in open(sys.argv[1], errors="surrogateescape"):
    st, x, y = l.rsplit(" ", 2)
    if int(x): da[st] = int(x)
    if int(y): db[st] = int(y)
sys.exit(not (da == a and db == b))' "$W/ab.fold" "$W/a.fold" "$W/b.fold"
"$R" diff "$W/a.dtc" "$W/b.dtc" -o "$W/ab.svg" 2>/dev/null
check diff-svg-colours "different captures: no red and blue frames" python3 -c '
import re, sys
fills = re.findall(r"fill=\"rgb\((\d+),(\d+),(\d+)\)\" rx", open(sys.argv[1]).read())
red = any(r == "255" and int(g) < 200 and g == b for r, g, b in fills)
blue = any(b == "255" and int(r) < 200 and r == g for r, g, b in fills)
sys.exit(not (red and blue))' "$W/ab.svg"

# -------------------------------------------------------------------- SVG
"$R" flame "$W/a.dtc" -o "$W/a.svg" --title 'My <Title>' 2>/dev/null
check svg-xml "not well-formed XML" python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$W/a.svg"
check svg-title "title not escaped/used" grep -q 'My &lt;Title&gt;' "$W/a.svg"
check svg-selfcontained "external reference in the SVG" \
	bash -c "! grep -qE '(href|src)=\"(https?:)?//' '$W/a.svg'"
check svg-root-total "root frame count != folded total" \
	grep -q "data-s=\"0\" data-n=\"$(sum_counts "$W/a.fold")\" data-d=\"0\"" "$W/a.svg"
"$R" flame "$W/a.dtc" -o "$W/ai.svg" --inverted 2>/dev/null
ynorm=$(grep -A1 'data-d="0"' "$W/a.svg" | grep -oE 'y="[0-9.]+"' | head -1 | tr -dc 0-9.)
yinv=$(grep -A1 'data-d="0"' "$W/ai.svg" | grep -oE 'y="[0-9.]+"' | head -1 | tr -dc 0-9.)
ydeep=$(grep -A1 'data-d="1"' "$W/ai.svg" | grep -oE 'y="[0-9.]+"' | head -1 | tr -dc 0-9.)
check svg-inverted "icicle root not above its children ($yinv vs $ydeep; flame root at $ynorm)" \
	python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); sys.exit(not (a < b < c))" "$yinv" "$ydeep" "$ynorm"
n1=$(grep -c '<g class="f"' "$W/a.svg")
"$R" flame "$W/a.dtc" -o "$W/am.svg" --minwidth 20 --width 800 2>/dev/null
n2=$(grep -c '<g class="f"' "$W/am.svg")
check svg-minwidth "--minwidth 20 did not omit frames ($n2 of $n1)" test "$n2" -gt 0 -a "$n2" -lt "$n1"
check svg-width "--width 800 not applied" grep -q 'width="800"' "$W/am.svg"
# flamegraph.pl's options: --height (a frame), --fontsize, --colors, --countname
"$R" flame "$W/a.dtc" -o "$W/ao.svg" --height 24 --fontsize 15 --colors blue --countname "ticks" 2>/dev/null
n=$(grep -c '<g class="f"' "$W/ao.svg")
check svg-height "--height 24: not every frame is 23 px high" \
	test "$(grep -c '<rect [^>]*height="23" fill' "$W/ao.svg")" = "$n"
check svg-fontsize "--fontsize 15 not used" grep -q 'font-size: 15px' "$W/ao.svg"
check svg-countname "--countname not in the tooltips and the subtitle" \
	bash -c "grep -q ' ticks, [0-9.]*%</title>' '$W/ao.svg' && grep -q '[0-9] ticks of ' '$W/ao.svg' && ! grep -q ' samples, ' '$W/ao.svg'"
check svg-colors-blue "--colors blue drew a frame that is not blue or grey" python3 -c '
import re, sys
for r, g, b in re.findall(r"<rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\" rx", open(sys.argv[1]).read()):
    r, g, b = int(r), int(g), int(b)
    if not (b > r and b > g) and not (r == g == b):
        sys.exit(1)' "$W/ao.svg"
for pal in kind hot mem io red green blue aqua yellow purple orange; do
	"$R" flame "$W/a.dtc" -o "$W/pal.svg" --colors $pal 2>/dev/null
	echo "$pal $(grep -o 'fill="rgb([0-9,]*)" rx' "$W/pal.svg" | sort | md5sum)"
done >"$W/pal.sums"
check svg-palettes-differ "two palettes drew the same colours" \
	test "$(awk '{print $2}' "$W/pal.sums" | sort -u | wc -l)" = 11
# the diff graph keeps its shape: unchanged frames neutral grey, every frame outlined
check diff-self-svg-neutral "self diff: frames not neutral grey with an outline" \
	test "$(grep -c 'fill="rgb(215,215,215)" rx="2" ry="2" stroke=' "$W/aa.svg")" = "$(grep -c '<g class="f"' "$W/aa.svg")"
check diff-outlined "a diff frame without an outline" \
	test "$(grep -c '<rect [^>]* stroke="rgb(150,150,150)"' "$W/ab.svg")" = "$(grep -c '<g class="f"' "$W/ab.svg")"

# ---------------------------------------------------- errors, no crashes
bad() { # name expected-status args...
	local n=$1 want=$2; shift 2
	"$R" "$@" >"$W/bad.out" 2>"$W/bad.err"
	local rc=$?
	if grep -q 'Sanitizer\|runtime error' "$W/bad.err"; then
		fail "error-$n" "sanitizer report: $(grep -m1 'ERROR\|runtime error' "$W/bad.err")"
	elif [ "$rc" -ne "$want" ]; then
		fail "error-$n" "exit status $rc, wanted $want"
	elif [ "$want" -eq 1 ] && [ "$(wc -l <"$W/bad.err")" -ne 1 ]; then
		fail "error-$n" "wanted one line of error, got: $(head -c 300 "$W/bad.err")"
	elif ! head -1 "$W/bad.err" | grep -q '^dtreport\|^usage: dtreport'; then
		fail "error-$n" "first line is not dtreport's message: $(head -c 300 "$W/bad.err")"
	else
		pass "error-$n"
	fi
}
head -c 4000 /dev/urandom >"$W/garbage.dtc"
: >"$W/empty.dtc"
bad garbage 1 flame "$W/garbage.dtc"
# an empty file is a capture cut at byte 0: status 3 (not an empty trace)
for cmd in stats "flame --folded" "diff $W/a.dtc"; do
	# shellcheck disable=SC2086
	"$R" $cmd "$W/empty.dtc" >"$W/empty.out" 2>"$W/empty.err"
	rc=$?
	check "error-empty-${cmd%% *}" "empty file: status $rc, output, no reason, or a crash" \
		bash -c "[ $rc -eq 3 ] && [ ! -s '$W/empty.out' ] && grep -q 'offset 0' '$W/empty.err' &&
			grep -q -- '--partial' '$W/empty.err' && ! grep -q Sanitizer '$W/empty.err'"
done
"$R" stats --partial "$W/empty.dtc" >/dev/null 2>"$W/empty.err"
check error-empty-partial "--partial on an empty file: status $?" test $? -eq 0
bad missing 1 flame "$W/nonexistent.dtc"
bad diff-missing 1 diff "$W/a.dtc" "$W/nonexistent.dtc" --folded
bad bad-since 2 flame "$W/a.dtc" --since yesterday
for t in 1e3 -1 +1 inf nan 1h30m "1 s" @ @@1 1.2.3 0x10 .; do
	bad "bad-time-${t//[^a-z0-9]/_}" 2 flame "$W/a.dtc" --until "$t"
done
bad bad-pid 2 stats "$W/a.dtc" --pid 12x
bad no-probe 1 flame "$W/a.dtc" --probe 'nosuch:*'
bad unknown-option 2 flame "$W/a.dtc" --frobnicate
bad no-file 2 flame
bad no-command 2
bad unknown-command 2 flamegraph "$W/a.dtc"
# several captures are fine (one report each, one graph); a missing one is not
bad extra-file-stats 1 stats "$W/a.dtc" "$W/nosuch.dtc"
bad extra-file-flame 1 flame "$W/a.dtc" "$W/nosuch.dtc"
bad extra-file-diff 2 diff "$W/a.dtc" "$W/b.dtc" "$W/a.dtc"
bad diff-one-file 2 diff "$W/a.dtc"
bad sql-no-file 2 sql
bad export-no-output 2 export "$W/a.dtc"
bad export-dash 2 export "$W/a.dtc" -o -
"$R" stats "$W/a.dtc" "$W/nosuch.dtc" 2>"$W/x.err" >/dev/null
check extra-file-reason "no reason for the missing capture: $(head -1 "$W/x.err")" \
	grep -q "^dtreport stats: .*nosuch.dtc: No such file or directory" "$W/x.err"
# the build's one version (scripts/version.mk): VERSION, +g and the commit
check version "--version is not 'dtreport' and the build's version" \
	test "$("$R" --version)" = "dtreport $(cat "$B/dt-version")"
bad bad-width 2 flame "$W/a.dtc" --width 5
bad bad-colors 2 flame "$W/a.dtc" --colors plaid
bad bad-height 2 flame "$W/a.dtc" --height 0
bad bad-fontsize 2 flame "$W/a.dtc" --fontsize 1000
bad bad-countname 2 flame "$W/a.dtc" --countname 'a"b'
bad since-after-until 1 flame "$W/a.dtc" --since 2s --until 1s
# captures cut at many points: status 3 with the reason and no output, or
# (--partial) a warning and what is there, or a message; never a crash,
# never a sanitizer report
size=$(stat -c %s "$W/g.dtc")
crash=0
for cut in 17 100 1000 5000 $((size / 3)) $((size / 2)) $((size - 40)) $((size - 1)); do
	head -c "$cut" "$W/g.dtc" >"$W/cut.dtc"
	for cmd in stats "flame --folded" "stats --partial" "flame --folded --partial"; do
		# shellcheck disable=SC2086
		"$R" $cmd "$W/cut.dtc" >"$W/cut.out" 2>"$W/cut.err"
		rc=$?
		case $cmd in *--partial) want="0 1" ;; *) want="1 3" ;; esac
		if ! [[ " $want " == *" $rc "* ]] || grep -q 'Sanitizer\|runtime error' "$W/cut.err" ||
		   { [ $rc -ne 0 ] && ! grep -q . "$W/cut.err"; } ||
		   { [ $rc -eq 3 ] && [ -s "$W/cut.out" ]; }; then
			crash=1
			echo "cut at $cut: $cmd rc=$rc: $(head -c 300 "$W/cut.err")"
		fi
	done
done
check truncated-captures "a cut capture crashed, failed silently or gave the wrong status" test $crash -eq 0
head -c $((size - 1)) "$W/g.dtc" >"$W/cut.dtc"
"$R" flame "$W/cut.dtc" --folded >/dev/null 2>"$W/cut.err"
check truncated-status "a capture cut short: status $? (want 3)" test $? -eq 3
"$R" flame "$W/cut.dtc" --folded --partial >"$W/cut.fold" 2>"$W/cut.err"
check truncated-partial "--partial: status $?, or no stacks" test $? -eq 0 -a -s "$W/cut.fold"
check truncated-warns "a capture cut short opened without a warning" \
	grep -qi 'warning\|trunc\|cut' "$W/cut.err"
# a write that fails says why: the reason is the failed write's errno, not
# one a later call left (a full disk said "No such file or directory").
# RLIMIT_FSIZE makes the failure (EFBIG), SIGXFSZ ignored so writes fail
mkdir -p "$W/fsz"
bad_errno=
fsz() {	# fsz ARGS...: dtreport ARGS with files limited to 8 KiB: status 1, the reason
	rm -rf "${W:?}/fsz/"*
	(trap '' XFSZ; ulimit -f 8; "$R" "$@" >"$W/fsz/stdout" 2>"$W/fsz/err")
	local rc=$?
	if [ $rc -ne 1 ] || ! grep -q ': File too large$' "$W/fsz/err" || grep -q Sanitizer "$W/fsz/err"; then
		bad_errno="$bad_errno [$*: status $rc: $(head -c 200 "$W/fsz/err")]"
	fi
}
fsz export -f pprof "$W/g.dtc" -o "$W/fsz/e.pb"
fsz export -f chrome "$W/g.dtc" -o "$W/fsz/e.json"
fsz export "$W/g.dtc" -o "$W/fsz/e.sqlite"
fsz flame "$W/g.dtc" -o "$W/fsz/f.svg"
fsz sql --csv "$W/g.dtc" "SELECT * FROM events"
fsz sql --json "$W/g.dtc" "SELECT * FROM events"
check write-error-errno "${bad_errno:-}" test -z "$bad_errno"
# bytes after an intact trailer are ignored with a warning, status 0
# (FORMAT.md): nothing was lost, so neither status 3 nor --partial
{ cat "$W/g.dtc"; printf 'appended after the end'; } >"$W/tail.dtc"
for cmd in stats "flame --folded"; do
	# shellcheck disable=SC2086
	"$R" $cmd "$W/tail.dtc" 2>"$W/tail.err" | grep -v '^WARNING .*22 bytes after the trailer' >"$W/tail.out"
	rc=${PIPESTATUS[0]}
	# shellcheck disable=SC2086
	"$R" $cmd "$W/g.dtc" 2>/dev/null | sed "s|$W/g.dtc|$W/tail.dtc|g" >"$W/tail.ref"
	check "trailing-bytes-ignored-${cmd%% *}" "status $rc: $(head -c 300 "$W/tail.err")" \
		bash -c "[ $rc -eq 0 ] && grep -q 'warning: .*22 bytes after the trailer at offset' '$W/tail.err' &&
			cmp -s '$W/tail.out' '$W/tail.ref' && ! grep -q Sanitizer '$W/tail.err'"
done
crash=0
for seed in 1 2 3 4 5 6; do
	python3 - "$W/g.dtc" "$W/flip.dtc" "$seed" <<'EOF'
import random, sys
d = bytearray(open(sys.argv[1], 'rb').read())
r = random.Random(int(sys.argv[3]))
for _ in range(8):
    i = r.randrange(len(d))
    d[i] ^= 1 << r.randrange(8)
open(sys.argv[2], 'wb').write(d)
EOF
	for cmd in "stats" "flame --folded" "diff $W/a.dtc"; do
		# shellcheck disable=SC2086
		"$R" $cmd "$W/flip.dtc" >/dev/null 2>"$W/flip.err"
		rc=$?
		if [ $rc -eq 2 ] || [ $rc -gt 3 ] || grep -q 'Sanitizer\|runtime error' "$W/flip.err" ||
		   { [ $rc -ne 0 ] && ! grep -q . "$W/flip.err"; }; then
			crash=1
			echo "flip seed $seed: $cmd rc=$rc: $(head -c 300 "$W/flip.err")"
		fi
	done
done
check damaged-captures "a damaged capture crashed or failed silently" test $crash -eq 0
# ------------------------------- outputs: never an input, never half-written
cp "$W/a.dtc" "$W/in.dtc"
ln -sf in.dtc "$W/in-link.dtc"
ln -f "$W/in.dtc" "$W/in-hard.dtc"
for o in in.dtc in-link.dtc in-hard.dtc; do
	"$R" flame "$W/in.dtc" -o "$W/$o" >/dev/null 2>"$W/o.err"
	rc=$?
	check "output-is-input-flame-$o" "status $rc, or the capture changed: $(cat "$W/o.err")" \
		bash -c "[ $rc -eq 1 ] && cmp -s '$W/a.dtc' '$W/in.dtc' && grep -q 'refusing to overwrite the input' '$W/o.err'"
	"$R" diff "$W/b.dtc" "$W/in.dtc" --folded -o "$W/$o" >/dev/null 2>"$W/o.err"
	rc=$?
	check "output-is-input-diff-$o" "status $rc, or the capture changed" \
		bash -c "[ $rc -eq 1 ] && cmp -s '$W/a.dtc' '$W/in.dtc'"
done
"$R" stats "$W/in.dtc" >>"$W/in.dtc" 2>"$W/o.err"
rc=$?
check output-is-input-stdout "stats >> its own capture: status $rc, or the capture changed" \
	bash -c "[ $rc -eq 1 ] && cmp -s '$W/a.dtc' '$W/in.dtc'"
# a failing command leaves an existing output as it was; success replaces it
echo precious >"$W/keep.svg"
chmod 640 "$W/keep.svg"
"$R" flame "$W/garbage.dtc" -o "$W/keep.svg" 2>/dev/null
check output-kept-on-failure "a failed flame changed its output file" \
	test "$(cat "$W/keep.svg")" = precious
"$R" flame "$W/a.dtc" --probe 'nosuch:*' -o "$W/keep.svg" 2>/dev/null
check output-kept-on-bad-filter "a failed flame changed its output file" \
	test "$(cat "$W/keep.svg")" = precious
"$R" flame "$W/a.dtc" -o "$W/keep.svg" 2>/dev/null
check output-replaced "flame did not replace its output" grep -q '<svg' "$W/keep.svg"
check output-mode-kept "the replaced file lost its mode" test "$(stat -c %a "$W/keep.svg")" = 640
ln -sf keep.svg "$W/keep-link.svg"
"$R" flame "$W/a.dtc" --folded -o "$W/keep-link.svg" 2>/dev/null
check output-through-link "writing through a link replaced the link" \
	bash -c "[ -L '$W/keep-link.svg' ] && ! grep -q '<svg' '$W/keep.svg'"
check output-no-temp-left "a temporary file was left behind" \
	bash -c "! ls -a '$W' | grep -q '^\.keep'"
# write errors: status 1 and the reason
if [ -w /dev/full ]; then
	for cmd in "stats" "stats --json" "flame" "flame --folded" "diff $W/b.dtc"; do
		# shellcheck disable=SC2086
		"$R" $cmd "$W/a.dtc" >/dev/full 2>"$W/full.err"
		rc=$?
		check "dev-full-${cmd// /-}" "status $rc: $(head -c 200 "$W/full.err")" \
			bash -c "[ $rc -eq 1 ] && grep -q 'No space left on device\|write error' '$W/full.err'"
	done
	"$R" flame "$W/a.dtc" -o /dev/full 2>"$W/full.err"
	check dev-full-flame-o "flame -o /dev/full: status $?" test $? -eq 1
	"$R" --help >/dev/full 2>/dev/null
	check dev-full-help "--help > /dev/full: status $?" test $? -eq 1
else
	fail dev-full "/dev/full is not writable"
fi

# ---------------------------------------------- manual pages render cleanly
# Lint clean is not enough (issue 13 item 10): render each page and look for
# the marks of broken markup, quotes opened inside quotes and stray escapes.
top=$(cd "$(dirname "$0")/../.." && pwd)
for page in "$top"/man/*.[0-9]; do
	n=$(basename "$page")
	out=$(mandoc -Tutf8 "$page" 2>&1 | col -bx)
	lint=$(mandoc -Tlint -Wwarning "$page" 2>&1)
	broken=$(printf '%s\n' "$out" | grep -nE "‘[^’]*‘|’’|“[^”]*“|\\\\ |\\\\e|\\\\&" | head -3)
	check "man-render-$n" "lint: $lint; broken markup: $broken" test -z "$lint$broken" -a -n "$out"
done
check man-exit-status-3 "dtreport(1) does not document status 3" \
	bash -c "mandoc -Tutf8 '$top/man/dtreport.1' | col -bx | grep -A12 '^EXIT STATUS' | grep -q '^ *3 '"
check man-times "dtreport(1) has no TIMES AND DURATIONS section" \
	bash -c "mandoc -Tutf8 '$top/man/dtreport.1' | col -bx | grep -q '^TIMES AND DURATIONS'"
for page in dtrec.8 dtsh.1; do
	check "man-times-pointer-$page" "$page does not point to the one time grammar" \
		bash -c "mandoc -Tutf8 '$top/man/$page' | col -bx | tr -s ' \n' ' ' | grep -q 'TIMES AND DURATIONS in dtreport(1)'"
done

# ------------------------------------------------- progress on a terminal
"$DTGEN" -o "$W/big.dtc" -n 4000000 -s 3 --stacks 5000 || fail dtgen "dtgen 4M failed"
# the engine as dtsh uses it: repeated calls on one reader, one cancel flag
if [ -x "$T/engine" ]; then
	# it prints its own PASS/FAIL lines and exits 1 after a FAIL
	"$T/engine" "$W/g.dtc" "$W/g2.dtc" "$W/big.dtc" 2>"$W/engine.err"
	rc=$?
	[ $rc -le 1 ] && ! grep -q 'Sanitizer\|runtime error' "$W/engine.err" &&
		pass engine-clean || fail engine-clean "rc=$rc: $(head -c 2000 "$W/engine.err")"
else
	fail engine "$T/engine is missing"
fi
python3 - "$R" "$W/big.dtc" <<'EOF'
import os, pty, subprocess, sys
# stderr on a pseudo-terminal: progress shown; on a pipe: none
m, s = pty.openpty()
# (a flame of 4M events now scans in less than the moment that earns a
# progress line: DT_PROGRESS_AFTER=0 asks for it at once)
p = subprocess.run([sys.argv[1], "flame", sys.argv[2], "--folded", "-o", os.devnull],
                   stderr=s, stdout=subprocess.DEVNULL, env=dict(os.environ, DT_PROGRESS_AFTER="0"))
os.close(s)
out = b""
try:
    while True:
        d = os.read(m, 65536)
        if not d:
            break
        out += d
except OSError:
    pass
ok = p.returncode == 0 and b"%" in out and b"events" in out
print("PASS progress-tty" if ok else "FAIL progress-tty: rc %d, stderr %r" % (p.returncode, out[:200]))
p = subprocess.run([sys.argv[1], "flame", sys.argv[2], "--folded", "-o", os.devnull],
                   stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, DT_PROGRESS_AFTER="0"))
print("PASS progress-pipe-quiet" if p.returncode == 0 and not p.stderr
      else "FAIL progress-pipe-quiet: %r" % p.stderr[:200])
EOF
# interrupted while writing: the old file stays, no temporary file is
# left.  holdrename.so holds rename(2) back, so the signal lands while the
# finished graph is still under its temporary name (the last moment it
# can land without the user's file being replaced).
python3 - "$R" "$W/big.dtc" "$W" "${HOLDRENAME:?}" <<'EOF'
import os, signal, subprocess, sys, time
out = os.path.join(sys.argv[3], "int.svg")
env = dict(os.environ, LD_PRELOAD=sys.argv[4],
           ASAN_OPTIONS="verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", ""))
for sig in (signal.SIGINT, signal.SIGTERM):
    open(out, "w").write("precious")
    # a background job's SIGINT comes ignored, and dtreport keeps what
    # its caller ignores (nohup's rule): the test plays a user at a
    # terminal, whose Ctrl-C is not ignored
    p = subprocess.Popen([sys.argv[1], "flame", sys.argv[2], "-o", out],
                         stderr=subprocess.DEVNULL, env=env,
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    seen = False
    for _ in range(6000):
        if p.poll() is not None:
            break
        if any(f.startswith(".int.svg.") for f in os.listdir(sys.argv[3])):
            seen = True
            break
        time.sleep(0.01)
    # the graph is written whole before the rename: give it time to get there
    time.sleep(0.5)
    p.send_signal(sig)
    p.wait()
    left = [f for f in os.listdir(sys.argv[3]) if f.startswith(".int.svg.")]
    ok = seen and p.returncode == -sig and open(out).read() == "precious" and not left
    print("PASS interrupted-%d-keeps-output" % sig if ok else
          "FAIL interrupted-%d-keeps-output: temporary seen %s, rc %s, left %r, content %r" %
          (sig, seen, p.returncode, left, open(out).read()[:40]))
EOF

# ------------------------------------------------- flame --from-folded
# folded text drawn without a capture: dt's own folded stacks come back
# the same, the SVG has the capture's frames (only the colours of the comm
# roots differ: folded text has no kinds), and every bad input is an error
# that keeps the output file
FF=$W/ff
mkdir -p "$FF"
"$R" flame "$W/g.dtc" --folded -o "$FF/g.folded" 2>"$FF/e0" &&
	"$R" flame "$W/g.dtc" -o "$FF/g.svg" 2>>"$FF/e0" || fail from-folded-setup "$(head -c 300 "$FF/e0")"
"$R" flame --from-folded "$FF/g.folded" --folded -o "$FF/rt.folded" 2>"$FF/e1"
check from-folded-roundtrip "folded text of folded text differs" cmp -s "$FF/g.folded" "$FF/rt.folded"
"$R" flame --from-folded "$FF/g.folded" -o "$FF/rt.svg" 2>>"$FF/e1"
frames() { grep '<g class="f"' "$1" | sed 's/ fill="[^"]*"//'; }
check from-folded-svg-frames "frames differ from the capture's graph" \
	cmp -s <(frames "$FF/g.svg") <(frames "$FF/rt.svg")
[ "$(frames "$FF/rt.svg" | wc -l)" -gt 100 ] && pass from-folded-svg-nonempty ||
	fail from-folded-svg-nonempty "$(frames "$FF/rt.svg" | wc -l) frames"
printf 'b;c 2\r\na 1\n\nb;c 3\nx y;z w 4\nb 0\n' >"$FF/m.folded"
"$R" flame --from-folded "$FF/m.folded" --folded 2>>"$FF/e1" >"$FF/m.out"
check from-folded-merge "got $(tr '\n' '|' <"$FF/m.out")" \
	test "$(cat "$FF/m.out")" = "$(printf 'a 1\nb;c 5\nx y;z w 4')"
san "$FF/e1" && fail from-folded-clean "$(head -c 500 "$FF/e1")" || pass from-folded-clean
# bad inputs: status 1, the line named, the output kept
badff() { # name expect-in-message file-content
	printf "$3" >"$FF/$1.folded"
	echo precious >"$FF/$1.svg"
	"$R" flame --from-folded "$FF/$1.folded" -o "$FF/$1.svg" 2>"$FF/$1.err"
	local rc=$?
	if [ $rc -eq 1 ] && grep -q "$2" "$FF/$1.err" && [ "$(cat "$FF/$1.svg")" = precious ] &&
	   ! san "$FF/$1.err"; then
		pass "from-folded-$1"
	else
		fail "from-folded-$1" "rc $rc, $(head -c 300 "$FF/$1.err"), output $(head -c 20 "$FF/$1.svg")"
	fi
}
badff no-count 'line 2: want' 'a;b 3\nno count here\n'
badff only-count 'line 1: want' '5\n'
badff count-not-number 'line 1: want' 'a;b 3x\n'
badff overflow 'line 2: counts past' 'a 18446744073709551615\nb 1\n'
badff huge-count 'line 1: counts past' 'a 99999999999999999999\n'
badff nul 'line 1: a NUL byte' 'a\0b 3\n'
echo precious >"$FF/dev.svg"
"$R" flame --from-folded /dev/null -o "$FF/dev.svg" 2>"$FF/dev.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'not a regular file' "$FF/dev.err" && [ "$(cat "$FF/dev.svg")" = precious ] &&
	pass from-folded-not-regular || fail from-folded-not-regular "rc $rc: $(head -c 200 "$FF/dev.err")"
"$R" flame --from-folded "$FF/missing" -o "$FF/x.svg" 2>"$FF/miss.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'No such file' "$FF/miss.err" && [ ! -e "$FF/x.svg" ] &&
	pass from-folded-missing || fail from-folded-missing "rc $rc: $(head -c 200 "$FF/miss.err")"
# usage: no capture beside it, no capture option, only dtreport flame
usage_ff() { # name message args...
	local n=$1 m=$2
	shift 2
	"$R" "$@" >/dev/null 2>"$FF/$n.err"
	local rc=$?
	[ $rc -eq 2 ] && grep -q -- "$m" "$FF/$n.err" && ! san "$FF/$n.err" &&
		pass "from-folded-$n" || fail "from-folded-$n" "rc $rc: $(head -c 200 "$FF/$n.err")"
}
usage_ff with-capture "unexpected argument" flame --from-folded "$FF/g.folded" "$W/g.dtc" --folded
usage_ff with-filter "--pid reads a capture" flame --from-folded "$FF/g.folded" --pid 3 --folded
usage_ff with-reverse "--reverse reads a capture" flame --reverse --from-folded "$FF/g.folded" --folded
usage_ff diff "only dtreport flame" diff --from-folded "$FF/g.folded" "$W/g.dtc" "$W/g.dtc"
: >"$FF/empty.folded"
"$R" flame --from-folded "$FF/empty.folded" -o "$FF/empty.svg" 2>"$FF/empty.err"
rc=$?
[ $rc -eq 0 ] && grep -q 'no samples' "$FF/empty.svg" && ! san "$FF/empty.err" &&
	pass from-folded-empty || fail from-folded-empty "rc $rc: $(head -c 200 "$FF/empty.err")"
exit 0
