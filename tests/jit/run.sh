#!/bin/bash
# run.sh BUILD - JIT frames named from perf maps, recorded on this host
# through perf.  jitprog (a private C program, tests/jit/jitprog.c) runs
# two loops it copied into anonymous memory and describes in
# /tmp/perf-PID.map: the capture must name them, before and after the map
# is written, and must not believe a map that is a link or another user's.
# node runs a recursive function with --perf-basic-prof and
# --perf-basic-prof-only-functions while dtrec and perf record the same
# process at the same rate: dt's share of samples named for the function
# must be at least 90% of the share perf report gives it from the same map;
# so for a JVM with -XX:+DumpPerfMapAtExit, recorded until it exits.
# node --perf-prof writes a jitdump instead: its frames are named from it.
# Needs perf_event_open (root), perf, node and a JDK: missing, tests fail.
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/asan/bin/dtreport
PROG=$B/tests/jit/jitprog
T=$(mktemp -d /tmp/jit-test.XXXXXX)
MAPS=()
trap 'rm -rf "$T" "${MAPS[@]}"' EXIT
. "$(dirname "$0")/../lib.sh"
cd "$T" || exit 1	# node writes its V8 logs (isolate-*.log) here
sanitizers_dtrec
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

# pct CAPTURE NAME: NAME's share (percent, self) in dtreport top --by sym
pct() {
	"$DTREPORT" top --by sym -n 1000 "$1" 2>>"$T/report.err" |
		awk -v n="$2" '$1 ~ /^[0-9]+$/ { name = $0; sub(/^ *[0-9]+ +[0-9.]+% +/, "", name)
			if (name == n) { sub(/%/, "", $2); print $2; f = 1 } } END { if (!f) print 0 }'
}
# pid of the process recorded in CAPTURE (the one with most samples)
cap_pid() {
	"$DTREPORT" sql --csv "$1" "SELECT pid FROM events GROUP BY pid ORDER BY count(*) DESC LIMIT 1" |
		tr -d '\r' | tail -n 1
}

# ---- a C program's own JIT: map written before it runs, then only at its exit
for mode in early late; do
	if rec "c-$mode" -o "$T/c-$mode.dtc" -e profile:hz:997 -u --user-stacks fp -- "$PROG" 1.5 $mode; then
		pass "record-c-$mode"
	else
		fail "record-c-$mode" "$(head -c 300 "$T/c-$mode.err")"
	fi
	MAPS+=("/tmp/perf-$(cap_pid "$T/c-$mode.dtc").map")
	hot=$(pct "$T/c-$mode.dtc" jit_hot_loop)
	cold=$(pct "$T/c-$mode.dtc" jit_cold_loop)
	# nine calls in ten go to the hot loop: it must hold most samples,
	# the cold one some, and together nearly all of them
	if awk -v h="$hot" -v c="$cold" 'BEGIN { exit !(h >= 75 && c >= 3 && h + c >= 95) }'; then
		pass "c-names-$mode"
	else
		fail "c-names-$mode" "jit_hot_loop $hot%, jit_cold_loop $cold%: $("$DTREPORT" top --by sym "$T/c-$mode.dtc" 2>&1 | head -5 | tr '\n' '|')"
	fi
done
# ---- code replaced in place halfway: each half named by the entry then valid
if rec c-replace -o "$T/c-replace.dtc" -e profile:hz:997 -u --user-stacks fp -- "$PROG" 2 replace; then
	pass record-c-replace
else
	fail record-c-replace "$(head -c 300 "$T/c-replace.err")"
fi
MAPS+=("/tmp/perf-$(cap_pid "$T/c-replace.dtc").map")
v1=$(pct "$T/c-replace.dtc" jit_hot_loop)
v2=$(pct "$T/c-replace.dtc" jit_hot_loop_v2)
# 45% each in truth; the read that learns of v2 comes a little late
if awk -v a="$v1" -v b="$v2" 'BEGIN { exit !(a >= 30 && b >= 30 && a + b >= 85) }'; then
	pass c-replaced-in-place-by-time
else
	fail c-replaced-in-place-by-time "jit_hot_loop $v1%, jit_hot_loop_v2 $v2%"
fi

# the regions are cut out of the anonymous mapping, not laid over it
n=$("$DTREPORT" sql --csv "$T/c-early.dtc" \
	"SELECT count(*) FROM maps WHERE name LIKE '/tmp/perf-%.map'" | tr -d '\r' | tail -n 1)
a=$("$DTREPORT" sql --csv "$T/c-early.dtc" \
	"SELECT count(*) FROM maps m, maps j WHERE j.name LIKE '/tmp/perf-%.map' AND m.ts = j.ts
	 AND m.name = '//anon' AND m.start < j.end AND j.start < m.end" | tr -d '\r' | tail -n 1)
[ "${n:-0}" -ge 1 ] && [ "$a" = 0 ] && pass c-regions-cut-anon ||
	fail c-regions-cut-anon "$n JIT maps, $a anonymous maps overlapping them"

# ---- SQL maps.build_id: each ELF file's NT_GNU_BUILD_ID as readelf -n prints it
command -v readelf >/dev/null || fail tool-readelf "readelf is not installed (binutils)"
"$DTREPORT" sql --csv "$T/c-early.dtc" \
	"SELECT DISTINCT name, ifnull(build_id, '') FROM maps WHERE file IS NOT NULL AND name LIKE '/%'" |
	tr -d '\r' | tail -n +2 >"$T/bid.csv"
bad=0 nb=0
while IFS=, read -r path bid; do
	case $path in /tmp/perf-*) [ -z "$bid" ] || { bad=1; echo "# $path has build id $bid"; }; continue ;; esac
	want=$(readelf -n "$path" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	nb=$((nb + 1))
	[ "$bid" = "$want" ] || { bad=1; echo "# $path: sql '$bid', readelf '$want'"; }
done <"$T/bid.csv"
[ $bad = 0 ] && [ $nb -ge 2 ] && pass sql-maps-build-id ||
	fail sql-maps-build-id "$nb files compared: $(head -c 300 "$T/bid.csv")"

# ---- maps that must not be believed: a link, another user's file
for mode in symlink foreign; do
	rec "c-$mode" -o "$T/c-$mode.dtc" -e profile:hz:997 -u --user-stacks fp -- "$PROG" 1 $mode
	rc=$?
	pid=$(cap_pid "$T/c-$mode.dtc")
	MAPS+=("/tmp/perf-$pid.map" "/tmp/perf-$pid.map.real")
	hot=$(pct "$T/c-$mode.dtc" jit_hot_loop)
	want="symbolic link"; [ $mode = foreign ] && want="not the process's"
	if [ $rc = 0 ] && [ "$hot" = 0 ] && grep -q "$want" "$T/c-$mode.err"; then
		pass "c-refuses-$mode"
	else
		fail "c-refuses-$mode" "status $rc, jit_hot_loop $hot%, messages: $(head -c 300 "$T/c-$mode.err")"
	fi
done

# beside_perf NAME FUNC UNTIL_EXIT CMD...: run CMD, and after a second
# record it with dtrec and perf record at the same rate, for 3 s or, with
# UNTIL_EXIT 1, until it exits (a JVM writes its map only then).  FUNC's
# share of the samples in dt must be at least 90% of its share in perf
# report, which names it from the same map.
beside_perf() {
	local name=$1 func=$2 until_exit=$3; shift 3
	"$@" >"$T/$name.out" 2>&1 &
	local np=$! dur=(-d 3) pdur=(-- sleep 3) drc
	MAPS+=("/tmp/perf-$np.map")
	[ "$until_exit" = 1 ] && dur=() pdur=()
	sleep 1.5	# past start-up: both recorders see the loop only
	rec "$name" -o "$T/$name.dtc" -e profile:hz:997 -u --user-stacks fp -p $np "${dur[@]}" &
	local dp=$!
	perf record -q -F 997 -g -p $np -o "$T/$name.perf" "${pdur[@]}" >/dev/null 2>"$T/$name.perf.err"
	wait $dp
	drc=$?
	wait $np
	[ $drc = 0 ] && pass "record-$name" ||
		fail "record-$name" "status $drc: $(head -c 300 "$T/$name.err")"
	perf report -i "$T/$name.perf" --no-children --sort sym --stdio -g none \
		2>/dev/null | grep -F "$func" | head -n 1 >"$T/$name.line"
	local ppct fname dpct
	ppct=$(awk '{ sub(/%/, "", $1); print $1 }' "$T/$name.line")
	# the function's name as perf gives it from the map: the runtime's spelling
	fname=$(sed -E 's/^ *[0-9.]+% +\[\.\] //; s/ +$//' "$T/$name.line")
	if [ -z "$fname" ]; then
		fail "$name-vs-perf" "perf report names no $func: $(head -c 300 "$T/$name.perf.err" "$T/$name.out")"
		return
	fi
	dpct=$(pct "$T/$name.dtc" "$fname")
	echo "# $name: '$fname' perf $ppct%, dt $dpct%"
	if awk -v d="$dpct" -v p="$ppct" 'BEGIN { exit !(p >= 50 && d >= 0.9 * p) }'; then
		pass "$name-vs-perf"
	else
		fail "$name-vs-perf" "'$fname': perf $ppct%, dt $dpct%: $("$DTREPORT" top --by sym "$T/$name.dtc" 2>&1 | head -5 | tr '\n' '|')"
	fi
}
command -v perf >/dev/null || fail tool-perf "perf is not installed (linux-perf)"

# ---- node: the map grows as V8 compiles
if command -v node >/dev/null; then
	cat >"$T/fib.js" <<'JS'
function fibRecursiveJit(n) { return n < 2 ? n : fibRecursiveJit(n - 1) + fibRecursiveJit(n - 2); }
const end = Date.now() + Number(process.argv[2]) * 1000;
let s = 0;
while (Date.now() < end) s += fibRecursiveJit(25);
console.log(s > 0 ? "done" : "none");
JS
	for flag in perf-basic-prof perf-basic-prof-only-functions; do
		beside_perf "node-$flag" fibRecursiveJit 0 node --$flag "$T/fib.js" 6
	done
	# --perf-prof: a jitdump in the working directory, mapped by node so
	# that recorders find it; no perf map.  The function must hold the
	# samples perf-basic-prof gave it above, named from the dump.
	if rec node-perf-prof -o "$T/node-prof.dtc" -e profile:hz:997 -u --user-stacks fp -- \
		node --perf-prof "$T/fib.js" 2; then
		pass record-node-perf-prof
	else
		fail record-node-perf-prof "$(head -c 300 "$T/node-perf-prof.err")"
	fi
	for f in jit-*.dump; do MAPS+=("/tmp/perf-${f//[!0-9]/}.map"); done
	jp=$(pct "$T/node-prof.dtc" "JS:*fibRecursiveJit $T/fib.js:1:25")
	dso=$("$DTREPORT" top --by dso "$T/node-prof.dtc" | awk '$1 ~ /^[0-9]+$/ { print $3; exit }')
	echo "# node --perf-prof: fibRecursiveJit $jp%, first DSO $dso"
	if ls jit-*.dump >/dev/null 2>&1 && awk -v d="$jp" 'BEGIN { exit !(d >= 80) }' &&
		[[ $dso == jit-*.dump ]]; then
		pass node-jitdump-names
	else
		fail node-jitdump-names "fibRecursiveJit $jp%, first DSO '$dso': $("$DTREPORT" top --by sym "$T/node-prof.dtc" 2>&1 | head -5 | tr '\n' '|')"
	fi
else
	fail tool-node "node is not installed (nodejs)"
fi

# ---- Java: the map written as the JVM exits, the process gone when read
if command -v javac >/dev/null && command -v java >/dev/null; then
	cat >"$T/Fib.java" <<'JAVA'
public class Fib {
	static int fibRecursiveJava(int n) { return n < 2 ? n : fibRecursiveJava(n - 1) + fibRecursiveJava(n - 2); }
	public static void main(String[] a) {
		long end = System.currentTimeMillis() + (long)(Double.parseDouble(a[0]) * 1000);
		long s = 0;
		while (System.currentTimeMillis() < end) s += fibRecursiveJava(25);
		System.out.println(s > 0 ? "done" : "none");
	}
}
JAVA
	if javac -d "$T" "$T/Fib.java" 2>"$T/javac.err"; then
		beside_perf java-dump-at-exit fibRecursiveJava 1 \
			java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$T" Fib 4.5
	else
		fail javac "$(head -c 300 "$T/javac.err")"
	fi
else
	fail tool-java "java or javac is not installed (openjdk-17-jdk-headless)"
fi
san "$T"/*.err && fail sanitizers "$(grep -h -m3 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$T"/*.err)" ||
	pass no-sanitizer-reports
