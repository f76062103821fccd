#!/bin/bash
# tests/export/flamegraph_pl.sh - `dtreport flame --folded` read by Brendan
# Gregg's flamegraph.pl, the reader folded text was made for (issue 23,
# outside readers).  Debian 12 packages it only inside
# libdevel-nytprof-perl (scripts/install-deps.sh), at the one path below;
# without it every test FAILs.
#
# Two captures: a dtgen one, and awkcap's, whose frame names have spaces,
# ';' (dt writes ':'), XML specials, non-ASCII UTF-8, a byte that is not
# UTF-8 and 4263-byte demangled C++ templates.  For each, flamegraph.pl
# (--minwidth 0: every frame drawn) must exit 0 and take every line, its
# SVG must be well-formed XML (xmllint), its root frame "all (N samples,
# 100%)" must count what dt counts (the folded counts, dt's own SVG), and
# the frames it names must be dt's (fg_check.py).
#
# flamegraph.pl cuts the labels that do not fit by bytes, in the middle of
# a UTF-8 character when one is there, unless Perl is told its input and
# output are UTF-8: the awkward capture is drawn with `perl -CSD` for the
# XML and frame checks (dtreport(1) says so too), and in flamegraph.pl's
# plain byte mode for the exit and the total.
# Env: B, DTREPORT, DTGEN, AWKCAP.  (c++filt comes with build-essential.)
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
G=${DTGEN:-$B/bin/dtgen}
A=${AWKCAP:-$B/tests/export/awkcap}
FG=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/dtfgpl.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict

if [ ! -r "$FG" ]; then
	fail flamegraph_pl_present "no $FG: install libdevel-nytprof-perl (scripts/install-deps.sh)"
	exit 0
fi
pass flamegraph_pl_present
for tool in "$D" "$G" "$A" perl python3 xmllint c++filt; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ fail fgpl_setup "missing $tool (scripts/install-deps.sh)"; exit 0; }
done

# fg NAME FOLDED [PERLFLAGS]: flamegraph.pl on FOLDED into $T/NAME.svg;
# PASS NAME-exit when it exits 0 and takes every line (it says "Ignored N
# lines with invalid format" of the others).
fg() {
	local name=$1 in=$2
	shift 2
	perl "$@" "$FG" --minwidth 0 "$in" >"$T/$name.svg" 2>"$T/$name.err"
	local rc=$?
	if [ $rc -eq 0 ] && [ -s "$T/$name.svg" ] && ! grep -q 'Ignored\|ERROR' "$T/$name.err"; then
		pass "$name-exit"
	else
		fail "$name-exit" "flamegraph.pl exited $rc: $(head -c 300 "$T/$name.err")"
	fi
}

# xml NAME: $T/NAME.svg is well-formed XML
xml() {
	if xmllint --noout "$T/$1.svg" 2>"$T/$1.xml"; then
		pass "$1-xml"
	else
		fail "$1-xml" "xmllint: $(head -c 300 "$T/$1.xml")"
	fi
}

# dtfold NAME CAPTURE: dt's folded text and SVG of CAPTURE
dtfold() {
	if "$D" flame "$2" --folded -o "$T/$1.fold" 2>"$T/$1.derr" &&
	   "$D" flame "$2" -o "$T/$1.dt.svg" 2>>"$T/$1.derr" && [ -s "$T/$1.fold" ]; then
		pass "$1-dtreport"
	else
		fail "$1-dtreport" "$(head -c 300 "$T/$1.derr")"
	fi
}

# ------------------------------------------------------------ dtgen
"$G" -o "$T/gen.dtc" -n 200000 -s 7 --syscalls --stacks 3000 >/dev/null 2>&1 ||
	{ fail fgpl_setup "dtgen"; exit 0; }
dtfold gen "$T/gen.dtc"
fg gen "$T/gen.fold"
xml gen
python3 "$HERE/fg_check.py" gen "$T/gen.fold" "$T/gen.svg" "$T/gen.dt.svg"

# ----------------------------------------------------- awkward names
"$A" "$T/awk.dtc" 3 20000 || { fail fgpl_setup "awkcap"; exit 0; }
dtfold awk "$T/awk.dtc"
# the premise: the names are as awkward in the folded text as meant
if grep -q '^my app:v2;' "$T/awk.fold" && grep -q ';ns::parse:field:value;' "$T/awk.fold" &&
   grep -q "$(printf '\xef\xbf\xbd')_latin1" "$T/awk.fold" &&
   [ "$(awk -F';' '{ for (i = 1; i <= NF; i++) if (length($i) > m) m = length($i) } END { print m }' \
	"$T/awk.fold")" -gt 4000 ]; then
	pass awk-premise
else
	fail awk-premise "the folded text lacks a comm with ';', a name with ';', U+FFFD or a 4000-byte name"
fi
# in flamegraph.pl's byte mode: it takes every line and counts them all
fg awk-bytes "$T/awk.fold"
root=$(grep -ao '<title>all ([0-9,]* samples, 100%)</title>' "$T/awk-bytes.svg" |
	sed 's/^<title>all (\([0-9,]*\) .*/\1/' | tr -d ,)
sum=$(awk '{ s += $NF } END { print s }' "$T/awk.fold")
if [ -n "$root" ] && [ "$root" = "$sum" ]; then
	pass awk-bytes-total
else
	fail awk-bytes-total "flamegraph.pl's all is '$root', dt's folded counts add to $sum"
fi
# with UTF-8 I/O: well-formed, and the frames are dt's
fg awk "$T/awk.fold" -CSD
xml awk
tmpl=$(c++filt '_ZN6engine6detail9visit_allINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE4PairISt6vectorIS7_SaIS7_EESt3mapIiSt8functionIFvRKS7_dEESt4lessIiESaISt4pairIKiSH_EEEEZ4mainEUlSF_RKSP_E_EEvRKSC_IT_S9_IT0_SaISU_EESI_IST_ESaISK_IKST_SW_EEET1_' | tr '<>' '()')
python3 "$HERE/fg_check.py" awk "$T/awk.fold" "$T/awk.svg" "$T/awk.dt.svg" \
	"my app:v2" "café worker" "ns::parse:field:value" "operator new(unsigned long)" \
	"name with  two spaces and a trailing space " 'a&b(c)"quoted" '"'single'" \
	"größe_berechnen" "日本語の関数" "🔥hot_path" "caf�_latin1" "$tmpl"
exit 0
