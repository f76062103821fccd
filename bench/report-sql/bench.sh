#!/bin/bash
# bench.sh DTREPORT CAPTURE WORKDIR - prints "bench NAME VALUE UNIT" lines.
# Everything runs pinned to one core (taskset) so figures compare across
# machines with different core counts; times are wall clock, best of 3.
set -u
D=$1 C=$2 W=$3
mkdir -p "$W"
pin() { if command -v taskset >/dev/null; then taskset -c 0 "$@"; else "$@"; fi; }
# best-of-3 wall time of a command, in seconds
best() {
	local best=
	for _ in 1 2 3; do
		local t0 t1 s
		t0=$(date +%s.%N)
		"$@" >"$W/out" 2>"$W/err" || { echo "bench: failed: $* : $(head -2 "$W/err")" >&2; return 1; }
		t1=$(date +%s.%N)
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		if [ -z "$best" ] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s; fi
	done
	printf '%.3f' "$best"
}
Q='SELECT comm, count(*) FROM events GROUP BY comm'
N=$("$D" sql --csv "$C" 'SELECT count(*) FROM events' | tr -d '\r' | tail -1)
echo "bench report.sql_10m_events $N events"

vt=$(best pin "$D" sql --csv "$C" "$Q") || exit 1
cp "$W/out" "$W/vtab.csv"
echo "bench report.sql_groupby_10m_s $vt s"
echo "target <= 2"

X=$W/synth-10m.sqlite
rm -f "$X"
t0=$(date +%s.%N)
pin "$D" export "$C" -o "$X" >"$W/export.out" 2>&1 || { echo "bench: export failed: $(cat "$W/export.out")" >&2; exit 1; }
t1=$(date +%s.%N)
ex=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
rows=$(sqlite3 "$X" 'SELECT count(*) FROM events')
echo "bench report.export_events $rows events"
printf 'bench report.export_s %.2f s\n' "$ex"
printf 'bench report.export_mrows_s %.2f Mrows/s\n' "$(awk -v n="$rows" -v s="$ex" 'BEGIN { print n / s / 1e6 }')"
echo "target >= 1"

# the plain table: sqlite3's own engine on the exported rows
nt=$(best pin sqlite3 -csv "$X" "$Q") || exit 1
tr -d '\r' <"$W/out" | sort >"$W/native.csv"
tr -d '\r' <"$W/vtab.csv" | tail -n +2 | sort >"$W/vtab.sorted"
if ! cmp -s "$W/native.csv" "$W/vtab.sorted"; then
	echo "bench: vtab and native GROUP BY differ" >&2
	exit 1
fi
echo "bench report.sql_native_groupby_10m_s $nt s"
printf 'bench report.sql_vtab_vs_native %.3f ratio\n' "$(awk -v a="$vt" -v b="$nt" 'BEGIN { print a / b }')"
echo "target <= 1.5"
rm -f "$X"
