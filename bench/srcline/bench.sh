#!/bin/bash
# bench.sh BUILD OUTDIR - capture.srcline_bytes_vs_symtab: bytes of the
# SRCL chunks (source lines and inline chains of the stored user
# addresses) over the bytes of the symbol tables stored (FILE, KSYM, KSYC),
# in one recording of each of two C++ programs built with -g (the tests'
# inlined and cxxnames; with libc, whose lines come from its debug file
# where installed), profile at 997 Hz with user stacks.  Reported, no
# target: the issue asks that the growth be bounded and known.
set -u
B=$1 OUT=$2
mkdir -p "$OUT"
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
srcl=0 sym=0
for prog in "$B/tests/srcline/inlined 3" "$B/tests/names/cxxnames 3"; do
	name=$(basename "${prog%% *}")
	"$B/bin/dtrec" --source perf -q -o "$OUT/$name.dtc" -e profile:hz:997 -u \
		--user-stacks fp -- $prog 2>"$OUT/$name.err" ||
		{ echo "bench-srcline: dtrec failed: $(head -c 300 "$OUT/$name.err")" >&2; exit 1; }
	python3 "$(dirname "$0")/chunks.py" "$OUT/$name.dtc" >"$OUT/$name.chunks" ||
		{ echo "bench-srcline: cannot read $OUT/$name.dtc" >&2; exit 1; }
	s=$(awk '$1 == "SRCL" { s += $2 } END { print s + 0 }' "$OUT/$name.chunks")
	y=$(awk '$1 == "FILE" || $1 == "KSYM" || $1 == "KSYC" { s += $2 } END { print s + 0 }' "$OUT/$name.chunks")
	echo "# $name: SRCL $s bytes, symbol tables $y bytes" >&2
	srcl=$((srcl + s)) sym=$((sym + y))
done
[ "$sym" -gt 0 ] && [ "$srcl" -gt 0 ] ||
	{ echo "bench-srcline: no SRCL ($srcl) or symbol table ($sym) bytes" >&2; exit 1; }
awk -v a="$srcl" -v b="$sym" 'BEGIN { printf "bench capture.srcline_bytes_vs_symtab %.4f ratio\n", a / b }'
