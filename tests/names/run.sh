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
for f in "$T"/*.err; do
	if san "$f"; then fail "sanitizers-$(basename "$f" .err)" "$(grep -m1 -E 'Sanitizer|runtime error' "$f")"; fi
done
pass names-done
