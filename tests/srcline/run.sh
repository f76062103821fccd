#!/bin/bash
# run.sh BUILD - source lines and inlined calls.  inlined (C++: an
# always_inline helper in a hot loop, and a plain hot loop) is recorded on
# this host through perf; every innermost pc's line and inline chain that
# dtreport reports must be what binutils' addr2line -i -f -C says of the
# same address of the same binary, the inlined helper must be a frame of
# its own under its caller, and --no-inline / --no-srcline must take it
# away.  The lines expected are addr2line's and the source's markers,
# never written here.  Needs perf_event_open (root).
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/asan/bin/dtreport DTSH=$B/asan/bin/dtsh
PROG=$B/tests/srcline/inlined
SRC=$(cd "$(dirname "$0")" && pwd)/inlined.cc
T=$(mktemp -d /tmp/srcline-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
sanitizers_dtrec
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
command -v addr2line >/dev/null || fail tool-addr2line "addr2line is not installed (binutils)"

if rec inl -o "$T/i.dtc" -e profile:hz:997 -u --user-stacks fp -- "$PROG" 2; then
	pass record
else
	fail record "$(head -c 300 "$T/inl.err")"
fi

# ---- every innermost pc in the program: line and inline chain as addr2line
a2l_check() {	# NAME CAPTURE PROGRAM [ELF]: the comparison (addr2line reading ELF,
		# default PROGRAM), PASS/FAIL NAME
	local name=$1 cap=$2 prog=$3 elf=${4:-$3} n=0 bad=0 addr file line inl
	ninl=0
	"$DTREPORT" sql --csv "$cap" \
		"SELECT DISTINCT printf('%x', f.pc - m.start + m.offset), f.file, f.line, coalesce(f.inlined, '')
		 FROM frames f JOIN maps m ON f.pc >= m.start AND f.pc < m.\"end\"
		 WHERE f.kernel = 0 AND f.depth = 0 AND m.name = '$prog'" 2>>"$T/sql.err" |
		tr -d '\r' | tail -n +2 | tr -d '"' >"$T/pcs"
	while IFS=, read -r addr file line inl; do
		n=$((n + 1))
		addr2line -i -f -C -e "$elf" "0x$addr" | sed 's/ (discriminator [0-9]*)//' >"$T/a2l"
		want_line=$(sed -n '2p' "$T/a2l")
		# addr2line: innermost function, its line, then each caller and its call line
		want_inl=$(awk 'NR % 2 == 1 { f[++k] = $0 } END { s = ""; for (i = k - 1; i >= 1; i--) s = s (s == "" ? "" : ";") f[i]; print s }' "$T/a2l")
		[ -n "$inl" ] && ninl=$((ninl + 1))
		if [ "$file:$line" != "$want_line" ] || [ "$inl" != "$want_inl" ]; then
			bad=$((bad + 1))
			echo "# 0x$addr: dt $file:$line [$inl], addr2line $want_line [$want_inl]"
		fi
	done <"$T/pcs"
	[ $n -ge 3 ] && [ $bad = 0 ] && pass "$name" ||
		fail "$name" "$bad of $n pcs differ (above): $(head -c 200 "$T/sql.err")"
}
a2l_check srcline-equals-addr2line "$T/i.dtc" "$PROG"
[ $ninl -ge 1 ] && pass inlined-pcs-found || fail inlined-pcs-found "no pc inside the inlined helper"
# clang's build has no .debug_aranges: found through the CUs' ranges
PROGC=$B/tests/srcline/inlined-clang
if readelf -S "$PROGC" | grep -q debug_aranges; then
	fail clang-no-aranges "$PROGC has .debug_aranges: this no longer tests the fallback"
else
	rec clang -o "$T/cl.dtc" -e profile:hz:997 -u --user-stacks fp -- "$PROGC" 1
	a2l_check clang-srcline-equals-addr2line "$T/cl.dtc" "$PROGC"
fi

# a stripped program: its lines from the separate debug file, by build id
# under the debug root, or by .gnu_debuglink beside it (DT_DEBUG_DIR points
# the root at a scratch directory: /usr/lib/debug is the machine's)
mkdir -p "$T/sd/bin" "$T/sd/root" "$T/dl/bin/.debug"
objcopy --only-keep-debug "$PROG" "$T/sd/inlined.debug"
bid=$(readelf -n "$PROG" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
mkdir -p "$T/sd/root/.build-id/${bid:0:2}"
cp "$T/sd/inlined.debug" "$T/sd/root/.build-id/${bid:0:2}/${bid:2}.debug"
strip -g -o "$T/sd/bin/inlined" "$PROG"
strip -g -o "$T/dl/bin/inlined" "$PROG"
cp "$T/sd/inlined.debug" "$T/dl/bin/.debug/inlined.debug"
objcopy --add-gnu-debuglink="$T/dl/bin/.debug/inlined.debug" "$T/dl/bin/inlined"
for v in "build-id:$T/sd/bin/inlined:$T/sd/root" "debuglink:$T/dl/bin/inlined:$T/none"; do
	IFS=: read -r how prog root <<<"$v"
	if [ -z "$bid" ] || readelf -S "$prog" | grep -q '\.debug_line'; then
		fail "debugfile-$how" "the stripped copy still has a line table, or no build id"
		continue
	fi
	DT_DEBUG_DIR=$root rec "dbg-$how" -o "$T/$how.dtc" -e profile:hz:997 -u --user-stacks fp -- "$prog" 0.7
	n=$("$DTREPORT" sql --csv "$T/$how.dtc" "SELECT count(f.line) FROM frames f JOIN maps m
		ON f.pc >= m.start AND f.pc < m.\"end\" WHERE f.kernel = 0 AND m.name = '$prog'" 2>>"$T/sql.err" |
		tr -d '\r' | tail -1)
	# addr2line reads the unstripped build (its own search of debug files
	# is the machine's /usr/lib/debug)
	[ "${n:-0}" -gt 0 ] && a2l_check "debugfile-$how-equals-addr2line" "$T/$how.dtc" "$prog" "$PROG" ||
		fail "debugfile-$how-equals-addr2line" "no frame of $prog has a line: $(head -c 300 "$T/dbg-$how.err")"
done

# ---- flame: the helper is a frame of its own, under its caller, marked
"$DTREPORT" flame --folded --user "$T/i.dtc" >"$T/inl.folded" 2>"$T/flame.err"
"$DTREPORT" flame --folded --user --no-inline "$T/i.dtc" >"$T/noinl.folded" 2>>"$T/flame.err"
total=$(awk '{ s += $NF } END { print s + 0 }' "$T/inl.folded")
under=$(awk '$0 ~ /;geo::walk\(unsigned long\);geo::scramble\(unsigned long\) \(inlined\) [0-9]+$/ { s += $NF } END { print s + 0 }' "$T/inl.folded")
[ "$total" -gt 100 ] && [ $((under * 100)) -ge $((total * 30)) ] && pass flame-inlined-frame ||
	fail flame-inlined-frame "$under of $total samples under walk;scramble (inlined): $(head -3 "$T/inl.folded" | tr '\n' '|')"
grep -q '(inlined)' "$T/noinl.folded" && fail no-inline-folds "$(grep -m1 '(inlined)' "$T/noinl.folded")" || {
	walk_inl=$(awk '/;geo::walk\(unsigned long\)( |;)/ { s += $NF } END { print s + 0 }' "$T/inl.folded")
	walk_no=$(awk '/;geo::walk\(unsigned long\) [0-9]+$/ { s += $NF } END { print s + 0 }' "$T/noinl.folded")
	[ "$walk_inl" -gt 0 ] && [ "$walk_inl" = "$walk_no" ] && pass no-inline-folds ||
		fail no-inline-folds "walk with inlined frames $walk_inl, folded $walk_no"
}

# the SVG marks it in a lighter shade than any plain user frame: every
# channel high (plain user frames have blue under 55, red to yellow)
"$DTREPORT" flame -o "$T/i.svg" "$T/i.dtc" 2>>"$T/flame.err"
fills=$(tr "\n" " " <"$T/i.svg" | grep -o '(inlined)[^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' | sed 's/.*rgb(\([0-9,]*\)).*/\1/')
light=1
for f in $fills; do
	IFS=, read -r r g b <<<"$f"
	[ "$r" -ge 200 ] && [ "$g" -ge 120 ] && [ "$b" -ge 100 ] || light=0
done
walkfill=$(tr "\n" " " <"$T/i.svg" | grep -o '<title>geo::walk(unsigned long)[^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' | sed 's/.*rgb(\([0-9,]*\)).*/\1/' | head -1)
[ -n "$fills" ] && [ $light = 1 ] && [ "${walkfill##*,}" -lt 100 ] && pass svg-inlined-lighter ||
	fail svg-inlined-lighter "inlined fills '$fills', walk '$walkfill'"

# ---- top --by srcline: sums to the samples; the hottest lines are the
# helper's and the loops', as the source's markers place them
"$DTREPORT" top --by srcline -n 50 "$T/i.dtc" >"$T/top" 2>"$T/top.err"
ttotal=$(sed -n 's/^# self of \([0-9]*\) samples.*/\1/p' "$T/top")
tsum=$(awk 'NR > 2 { s += $1 } END { print s + 0 }' "$T/top")
[ -n "$ttotal" ] && [ "$tsum" = "$ttotal" ] && pass top-srcline-sums || fail top-srcline-sums "total '$ttotal', rows $tsum"
scr=$(grep -n 'SCRAMBLE_LINE' "$SRC" | cut -d: -f1)
top1=$(sed -n '3p' "$T/top" | awk '{ print $3 }')
case "$top1" in
"$SRC:"*) l=${top1##*:}; [ "$l" -ge "$scr" ] && [ "$l" -le $((scr + 3)) ] && pass top-srcline-hottest-in-helper ||
	fail top-srcline-hottest-in-helper "$top1 (helper: lines $scr..$((scr + 3)))" ;;
*) fail top-srcline-hottest-in-helper "'$top1': $(head -4 "$T/top" | tr '\n' '|')" ;;
esac
"$DTREPORT" top --by srcline --children -n 50 "$T/i.dtc" >"$T/topc" 2>>"$T/top.err"
spin=$(grep -n 'SPIN_LOOP' "$SRC" | cut -d: -f1)
grep -qF " $SRC:$spin" "$T/top" && pass top-srcline-spin-loop || fail top-srcline-spin-loop "no $SRC:$spin row"
# inclusive: the call of the inlined helper in walk's loop is counted for
# every sample inside the helper too
wl=$(grep -n 'WALK_LOOP' "$SRC" | cut -d: -f1)
cnt() { awk -v k="$2" '$3 == k { print $1; exit }' "$1"; }
helper=0
for l in $scr $((scr + 1)) $((scr + 2)) $((scr + 3)); do helper=$((helper + $(cnt "$T/top" "$SRC:$l" || true) + 0)); done
wl_self=$(cnt "$T/top" "$SRC:$wl") wl_incl=$(cnt "$T/topc" "$SRC:$wl")
[ "$helper" -gt 0 ] && [ "${wl_incl:-0}" -ge $((${wl_self:-0} + helper)) ] && pass top-srcline-children-inline-chain ||
	fail top-srcline-children-inline-chain "walk loop line $wl: self ${wl_self:-0}, inclusive ${wl_incl:-0}; helper lines self $helper"

# ---- annotate: the known hot loop's line is the hottest of its function,
# with its text; the instruction counts add up and sit on instructions
# objdump (binutils, an independent decoder) finds at those addresses
"$DTREPORT" annotate 'spin*' "$T/i.dtc" >"$T/ann" 2>"$T/ann.err"
fsum=$(sed -n 's/^# spin.*: \([0-9]*\) of [0-9]* samples.*/\1/p' "$T/ann")
hot=$(awk '/^ *COUNT +PCT +LINE/ { on = 1; next } /^#/ { on = 0 } on && $1 > m { m = $1; l = $3 } END { print l }' "$T/ann")
[ -n "$fsum" ] && [ "$fsum" -gt 0 ] && [ "$hot" = "$SRC:$spin" ] && pass annotate-hottest-line-is-loop ||
	fail annotate-hottest-line-is-loop "hottest '$hot', want $SRC:$spin: $(head -8 "$T/ann" | tr '\n' '|')"
grep -qF "$SRC:$spin  for (uint64_t i" "$T/ann" && pass annotate-source-text ||
	fail annotate-source-text "no source text beside line $spin"
lsum=$(awk '/^ *COUNT +PCT +LINE/ { on = 1; next } /^#/ { on = 0 } on { s += $1 } END { print s + 0 }' "$T/ann")
isum=$(awk '/^ *COUNT +PCT +ADDRESS/ { on = 1; next } on && $1 ~ /^[0-9]+$/ && $3 ~ /^0x/ { s += $1 } END { print s + 0 }' "$T/ann")
[ "$lsum" = "$fsum" ] && [ "$isum" = "$fsum" ] && pass annotate-counts-add-up ||
	fail annotate-counts-add-up "function $fsum, lines $lsum, instructions $isum"
objdump -d --no-show-raw-insn "$PROG" | awk -F: '/^ +[0-9a-f]+:/ { gsub(/ /, "", $1); print "0x" $1 }' | sort -u >"$T/od"
awk '/^ *COUNT +PCT +ADDRESS/ { on = 1; next } on { for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { print $i; break } }' "$T/ann" |
	sed 's/^0x0*/0x/' | sort -u >"$T/dt.insn"
nins=$(wc -l <"$T/dt.insn")
[ "$nins" -ge 4 ] && [ -z "$(comm -23 "$T/dt.insn" "$T/od")" ] && pass annotate-insns-are-objdumps ||
	fail annotate-insns-are-objdumps "$nins addresses; not objdump's: $(comm -23 "$T/dt.insn" "$T/od" | head -5 | tr '\n' ' ')"
"$DTREPORT" annotate 'spin*' --no-source "$T/i.dtc" >"$T/ann2" 2>>"$T/ann.err"
grep -q 'SPIN_LOOP' "$T/ann2" && fail annotate-no-source "source text shown" || pass annotate-no-source
# another build at the recorded path: said so, no disassembly of it
cp "$PROG" "$T/prog"
rec copy -o "$T/c.dtc" -e profile:hz:997 -u --user-stacks fp -- "$T/prog" 0.5
printf 'int main(void) { return 0; }\n' | ${CC:-cc} -x c -o "$T/prog" - 2>/dev/null
"$DTREPORT" annotate 'spin*' "$T/c.dtc" >"$T/ann3" 2>>"$T/ann.err"
grep -q 'not disassembled: .*build id differs' "$T/ann3" && ! grep -q 'INSTRUCTION' "$T/ann3" &&
	pass annotate-other-build-said || fail annotate-other-build-said "$(grep -m2 '^#' "$T/ann3" | tr '\n' '|')"
"$DTREPORT" annotate 'no_such_fn*' "$T/i.dtc" >"$T/ann4" 2>"$T/ann4.err"
[ $? = 0 ] && [ ! -s "$T/ann4" ] && grep -q 'no sample was taken in a function matching' "$T/ann4.err" &&
	pass annotate-no-match-says-so || fail annotate-no-match-says-so "$(cat "$T/ann4.err")"
printf 'annotate spin*\n' | "$DTSH" "$T/i.dtc" >"$T/sh3.out" 2>"$T/sh3.err"
[ "$(grep -v '^dtsh' "$T/sh3.out" | grep -c "$SRC:$spin")" -ge 1 ] && grep -q INSTRUCTION "$T/sh3.out" &&
	pass dtsh-annotate || fail dtsh-annotate "$(head -c 300 "$T/sh3.err")"

# ---- --no-srcline: nothing stored, nothing shown
rec nosrc -o "$T/n.dtc" -e profile:hz:997 -u --user-stacks fp --no-srcline -- "$PROG" 0.5
nl=$("$DTREPORT" sql --csv "$T/n.dtc" "SELECT count(line) FROM frames" 2>>"$T/sql.err" | tr -d '\r' | tail -1)
[ "$nl" = 0 ] && ! "$DTREPORT" flame --folded --user "$T/n.dtc" 2>>"$T/flame.err" | grep -q '(inlined)' &&
	pass no-srcline-records-none || fail no-srcline-records-none "$nl frames with a line"

# ---- dtsh: --no-inline holds for the one command that says it
printf 'flame --folded --user --no-inline -o -\nflame --folded --user -o -\n' |
	"$DTSH" "$T/i.dtc" >"$T/sh.out" 2>"$T/sh.err"
c=$(grep -c '(inlined)' "$T/sh.out")
[ "$c" -ge 1 ] && [ "$c" = "$(grep -c '(inlined)' "$T/inl.folded")" ] && pass dtsh-no-inline-one-command ||
	fail dtsh-no-inline-one-command "$c lines with inlined frames: $(head -c 200 "$T/sh.err")"

# ---- off-CPU graphs name inlined calls too: the sleep is in nap, inlined into
# rest (DWARF: libc's nanosleep keeps no frame pointer, so a walk by frame
# pointers would skip rest's own frame)
if rec off -o "$T/off.dtc" --offcpu -u --user-stacks dwarf -- "$PROG" 0.3 sleep; then
	"$DTREPORT" flame --offcpu --folded --user "$T/off.dtc" >"$T/off.folded" 2>>"$T/off.err"
	"$DTREPORT" flame --offcpu --folded --user --no-inline "$T/off.dtc" >"$T/offno.folded" 2>>"$T/off.err"
	grep -q ';geo::rest(int);geo::nap() (inlined);' "$T/off.folded" &&
		! grep -q '(inlined)' "$T/offno.folded" && grep -q ';geo::rest(int);' "$T/offno.folded" &&
		pass offcpu-inlined-frame ||
		fail offcpu-inlined-frame "$(grep -m2 'geo::' "$T/off.folded" | cut -c1-300 | tr '\n' '|') $(head -c 200 "$T/off.err")"
else
	fail offcpu-inlined-frame "recording failed: $(head -c 300 "$T/off.err")"
fi

for f in "$T"/*.err; do
	if san "$f"; then fail "sanitizers-$(basename "$f" .err)" "$(grep -m1 -E 'Sanitizer|runtime error' "$f")"; fi
done
pass srcline-done
