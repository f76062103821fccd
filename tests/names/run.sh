#!/bin/bash
# run.sh BUILD - names as developers write them.  cxxnames (a C++ program
# with a namespace, a class template, a lambda and a Rust v0 symbol) is
# recorded on this host through perf; every frame dtreport names must be
# what binutils' c++filt prints for the raw symbol of the same frame, and
# --no-demangle must give back the raw symbols.  The expected names are
# c++filt's, read off the binary's own symbol table (nm), never written
# here.  Needs perf_event_open (root): refused, every test fails.
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/asan/bin/dtreport DTSH=$B/asan/bin/dtsh
PROG=$B/tests/names/cxxnames
T=$(mktemp -d /tmp/names-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
sanitizers_dtrec
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

for t in c++filt nm; do
	command -v $t >/dev/null || fail "tool-$t" "$t is not installed (binutils)"
done

# ---- record: 997 Hz, user stacks by frame pointers
if rec cxx -o "$T/c.dtc" -e profile:hz:997 -u --user-stacks fp -- "$PROG" 1.5; then
	pass record-cxx
else
	fail record-cxx "$(head -c 300 "$T/cxx.err")"
fi

# The symbols we built, mangled, and c++filt's reading of each.
nm "$PROG" | awk '$2 ~ /^[tTwW]$/ && $3 ~ /^_[ZR]/ { print $3 }' | sort -u >"$T/mangled"
c++filt <"$T/mangled" >"$T/demangled"
want() {	# pattern: the one mangled symbol of ours matching it, demangled
	paste "$T/mangled" "$T/demangled" | awk -F'\t' -v p="$1" '$1 ~ p { print $2; exit }'
}
# GCC may clone a function (.isra.0, .constprop.0): c++filt names the clone
C='(\\.[a-z]+\\.[0-9]+)*$'
ADV_L=$(want "^_ZN7physics10IntegratorIlE7advanceEl$C")
ADV_U=$(want "^_ZN7physics10IntegratorIjE7advanceEj$C")
LAMBDA=$(want "run_lambda.*UlmE_clEm$C")
RUST=$(want '^_RNvNtCs1234_7mycrate6engine4step$')
for v in "ADV_L:$ADV_L" "ADV_U:$ADV_U" "LAMBDA:$LAMBDA" "RUST:$RUST"; do
	[ -n "${v#*:}" ] || fail "symbol-${v%%:*}" "not in nm's output: $(tr '\n' ' ' <"$T/mangled" | head -c 400)"
done

"$DTREPORT" flame --folded --user "$T/c.dtc" >"$T/dem.folded" 2>"$T/dem.err"
"$DTREPORT" flame --folded --user --no-demangle "$T/c.dtc" >"$T/raw.folded" 2>"$T/raw.err"
# folded: frames split on ';', then one space and the count
frames() { sed 's/ [0-9]*$//' "$1" | tr ';' '\n' | sort -u; }
frames "$T/dem.folded" >"$T/dem.frames"
frames "$T/raw.folded" >"$T/raw.frames"

# ---- every hot function appears, spelled as c++filt spells it
for v in "integrator-long:$ADV_L" "integrator-unsigned:$ADV_U" "lambda:$LAMBDA" "rust-v0:$RUST"; do
	name=${v%%:*} want=${v#*:}
	if [ -n "$want" ] && grep -qxF "$want" "$T/dem.frames"; then
		pass "flame-demangled-$name"
	else
		fail "flame-demangled-$name" "'$want' not among: $(grep -v '^\[' "$T/dem.frames" | head -12 | tr '\n' '|')"
	fi
done

# ---- the raw names are the symbol table's, and demangle to ours
grep -q '^_ZN7physics' "$T/raw.frames" && ! grep -q '^physics::' "$T/raw.frames" &&
	pass no-demangle-raw || fail no-demangle-raw "$(head -8 "$T/raw.frames" | tr '\n' '|')"
c++filt <"$T/raw.folded" >"$T/filt.folded"
frames "$T/filt.folded" >"$T/filt.frames"
if cmp -s "$T/filt.frames" "$T/dem.frames"; then
	pass flame-equals-cxxfilt
else
	fail flame-equals-cxxfilt "$(diff "$T/filt.frames" "$T/dem.frames" | head -6 | tr '\n' '|')"
fi

# ---- SQL: frames.name demangled, frames.raw_name as stored; each row's
# name is c++filt's reading of its raw_name
"$DTREPORT" sql --csv "$T/c.dtc" \
	"SELECT DISTINCT raw_name, name FROM frames WHERE kernel = 0 AND raw_name LIKE '\_%' ESCAPE '\\'" |
	tr -d '\r' | tail -n +2 >"$T/pairs" 2>"$T/sql.err"
if [ -s "$T/pairs" ]; then
	bad=0
	while IFS= read -r line; do
		raw=${line%%,*} name=${line#*,}
		name=${name#\"} name=${name%\"}
		[ "$(printf '%s\n' "$raw" | c++filt)" = "$name" ] || { bad=1; echo "# $raw -> $name"; }
	done <"$T/pairs"
	[ $bad = 0 ] && grep -qF "$RUST" "$T/pairs" && pass sql-frames-name-raw_name ||
		fail sql-frames-name-raw_name "a name differs from c++filt's (above) or the Rust frame is missing"
else
	fail sql-frames-name-raw_name "no rows: $(head -c 300 "$T/sql.err")"
fi

# ---- top names the same way; dtsh's --no-demangle holds for one command
"$DTREPORT" top --by stack -n 50 "$T/c.dtc" >"$T/top" 2>&1
grep -qF "$ADV_L" "$T/top" && pass top-demangled || fail top-demangled "$(head -5 "$T/top" | tr '\n' '|')"
printf 'flame --folded --user --no-demangle -o -\nflame --folded --user -o -\n' |
	"$DTSH" "$T/c.dtc" >"$T/sh.out" 2>"$T/sh.err"
raw_lines=$(grep -c '_ZN7physics' "$T/sh.out")
dem_lines=$(grep -cF 'physics::Integrator' "$T/sh.out")
[ "$raw_lines" -gt 0 ] && [ "$dem_lines" -gt 0 ] && pass dtsh-no-demangle-one-command ||
	fail dtsh-no-demangle-one-command "raw $raw_lines, demangled $dem_lines lines: $(head -c 200 "$T/sh.err")"
# ---- breakdowns: self and inclusive time by function and by object
top_count() {	# file name: the COUNT column of name's row of a top table
	awk -v n="$2" 'substr($0, 22) == n { print $1; exit }' "$1"
}
"$DTREPORT" top --by sym -n 50 "$T/c.dtc" >"$T/self" 2>>"$T/top.err"
"$DTREPORT" top --by sym --children -n 50 "$T/c.dtc" >"$T/children" 2>>"$T/top.err"
total=$(sed -n 's/^# self of \([0-9]*\) samples.*/\1/p' "$T/self")
self_sum=$(awk 'NR > 2 { s += $1 } END { print s + 0 }' "$T/self")
[ -n "$total" ] && [ "$total" -gt 0 ] && [ "$self_sum" = "$total" ] &&
	pass top-self-sums-to-samples || fail top-self-sums-to-samples "total '$total', rows sum $self_sum"
# main calls every hot function but the ones GCC's clones leave under libc's
# frame: its inclusive count is at least its self count, and the outermost
# frame (libc's) is counted once in nearly every sample, never more
main_self=$(top_count "$T/self" main) main_incl=$(top_count "$T/children" main)
libc_incl=$(top_count "$T/children" __libc_start_call_main)
# (a sample or two may be cut short of libc's frame by the walk: 95%)
[ "${main_incl:-0}" -ge "${main_self:-0}" ] && [ $((${libc_incl:-0} * 100)) -ge $((total * 95)) ] &&
	[ "${libc_incl:-0}" -le "$total" ] &&
	pass top-children-inclusive ||
	fail top-children-inclusive "main self ${main_self:-0} incl ${main_incl:-0}, libc ${libc_incl:-0} of $total"
"$DTREPORT" top --by dso "$T/c.dtc" >"$T/dso" 2>>"$T/top.err"
prog_self=$(top_count "$T/dso" cxxnames)
[ -n "$prog_self" ] && [ $((prog_self * 100)) -ge $((total * 95)) ] && pass top-dso-self ||
	fail top-dso-self "cxxnames ${prog_self:-0} of $total: $(tr '\n' '|' <"$T/dso")"
"$DTREPORT" top --by comm --children "$T/c.dtc" >/dev/null 2>"$T/children-comm.err"
[ $? = 2 ] && grep -q 'goes with --by sym' "$T/children-comm.err" && pass top-children-needs-sym ||
	fail top-children-needs-sym "$(cat "$T/children-comm.err")"

# ---- callers and callees: the same samples seen from the function
"$DTREPORT" callees main "$T/c.dtc" >"$T/callees" 2>"$T/calls.err"
"$DTREPORT" callees main --folded "$T/c.dtc" >"$T/callees.folded" 2>>"$T/calls.err"
root=$(sed -n '2p' "$T/callees" | awk '{ print $2 }')
[ -n "$main_incl" ] && [ "$root" = "$main_incl" ] && pass callees-total-is-inclusive ||
	fail callees-total-is-inclusive "tree root '$root', top --children $main_incl: $(head -3 "$T/callees" | tr '\n' '|')"
[ -s "$T/callees.folded" ] && ! grep -qv '^main[; ]' "$T/callees.folded" &&
	pass callees-folded-rooted || fail callees-folded-rooted "$(head -3 "$T/callees.folded" | tr '\n' '|')"
folded_sum=$(awk '{ s += $NF } END { print s + 0 }' "$T/callees.folded")
[ "$folded_sum" = "$main_incl" ] && pass callees-folded-sum || fail callees-folded-sum "$folded_sum vs $main_incl"
"$DTREPORT" callers "$ADV_L" "$T/c.dtc" >"$T/callers" 2>>"$T/calls.err"
adv_self=$(top_count "$T/self" "$ADV_L")
first=$(sed -n '2p' "$T/callers")
[ -n "$adv_self" ] && [ "$(echo "$first" | awk '{ print $2 }')" = "$adv_self" ] &&
	[ "$(echo "$first" | cut -c22-)" = "$ADV_L" ] && pass callers-root-is-function ||
	fail callers-root-is-function "'$first' vs self $adv_self"
"$DTREPORT" callers '/^physics::Integrator<(long|unsigned int)>::advance/' "$T/c.dtc" >"$T/callers-re" 2>>"$T/calls.err"
adv_u=$(top_count "$T/self" "$ADV_U")
grep -q "^# callers of .*: $((adv_self + adv_u)) of $total samples" "$T/callers-re" && pass callers-regex ||
	fail callers-regex "$(head -1 "$T/callers-re") (want $((adv_self + adv_u)))"
"$DTREPORT" callers 'no_such_function*' "$T/c.dtc" >"$T/none" 2>"$T/none.err"
[ $? = 0 ] && [ ! -s "$T/none" ] && grep -q "no sampled function matches" "$T/none.err" &&
	pass callers-no-match-says-so || fail callers-no-match-says-so "$(cat "$T/none.err")"
"$DTREPORT" callers '/(/' "$T/c.dtc" >/dev/null 2>"$T/badre.err"
[ $? = 2 ] && grep -q "bad regular expression" "$T/badre.err" && pass callers-bad-regex ||
	fail callers-bad-regex "$(cat "$T/badre.err")"
printf 'callees main\ntop by sym\n' | "$DTSH" "$T/c.dtc" >"$T/sh2.out" 2>"$T/sh2.err"
grep -q '^# callees of' "$T/sh2.out" && grep -q '^# self of' "$T/sh2.out" && pass dtsh-callees-top-sym ||
	fail dtsh-callees-top-sym "$(head -c 300 "$T/sh2.err")"

# ---- self time agrees with perf report --no-children on the same run:
# both tools sample one process at 997 Hz with DWARF stacks, side by side
"$PROG" 6 & pid=$!
perf record -q -F 997 --call-graph dwarf -o "$T/p.data" -p $pid >"$T/perf.out" 2>&1 & perfpid=$!
rec side -o "$T/side.dtc" -e profile:hz:997 -u --user-stacks dwarf -p $pid -d 5s
wait $perfpid
wait $pid
perf report -i "$T/p.data" --no-children --sort sym --stdio --no-demangle -g none 2>/dev/null |
	awk '$1 ~ /%$/ && $2 == "[.]" { sub(/%/, "", $1); print $3, $1 }' >"$T/perf.self"
"$DTREPORT" top --by sym --no-demangle -n 100 "$T/side.dtc" 2>>"$T/top.err" |
	awk 'NR > 2 { sub(/%/, "", $2); print $3, $2 }' >"$T/dt.self"
if [ "$(wc -l <"$T/perf.self")" -ge 4 ]; then
	bad=$(awk 'NR == FNR { dt[$1] = $2; next } FNR <= 10 && $2 >= 2 {
		d = dt[$1] - $2; if (d < 0) d = -d
		if (d > 3) printf "%s perf %s%% dt %s%%; ", $1, $2, dt[$1] + 0 }' "$T/dt.self" "$T/perf.self")
	awk 'NR == FNR { dt[$1] = $2; next } FNR <= 10 { printf "# %s: perf %s%%, dt %s%%\n", $1, $2, dt[$1] + 0 }' \
		"$T/dt.self" "$T/perf.self"
	[ -z "$bad" ] && pass top-self-agrees-with-perf || fail top-self-agrees-with-perf "$bad"
else
	fail top-self-agrees-with-perf "perf report gave: $(head -c 300 "$T/perf.out") $(head -3 "$T/perf.self")"
fi

for f in "$T"/*.err; do
	if san "$f"; then fail "sanitizers-$(basename "$f" .err)" "$(grep -m1 -E 'Sanitizer|runtime error' "$f")"; fi
done
pass names-done
