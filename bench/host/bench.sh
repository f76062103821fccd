#!/bin/bash
# bench.sh BUILD OUTDIR - dtrec's perf source against Debian's perf record:
#  host.overhead_vs_perf   time the workload loses under dtrec / under perf
#                          record (profile at 997 Hz plus every syscall entry,
#                          kernel and user call chains, both by frame pointers:
#                          perf's -g, dtrec's --user-stacks fp); "loses" =
#                          traced - untraced.  Rounds (9, DT_BENCH_ROUNDS)
#                          run untraced, dtrec and perf back to back; the
#                          figure is the median of the rounds' own ratios, so
#                          a load that drifts over the run cancels out within
#                          a round instead of landing on one tool's median
#  host.bytes_vs_perf_z    capture bytes / perf.data bytes of perf record -z
#  host.report_vs_perf_report  dtreport flame CPU time / perf report
#                          --stdio -g CPU time, every event of a recording
#                          of 3M calls each (below)
set -u
B=$1 OUT=$2
W=$B/bench/host/workload N=300000 SPIN=3000
mkdir -p "$OUT"
command -v perf >/dev/null || { echo "bench-host: perf is missing (linux-perf)" >&2; exit 1; }
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
run_base() { "$W" $N $SPIN; }
run_dt() {
	rm -f "$OUT/dt.dtc"
	"$B/bin/dtrec" --source perf -q -o "$OUT/dt.dtc" -k -u --user-stacks fp \
		-e profile:hz:997 -e 'syscall:*:entry' \
		-- "$W" $N $SPIN 2>"$OUT/dt.err"
}
run_perf() {
	rm -f "$OUT/perf.data"
	perf record -q -z -g -o "$OUT/perf.data" -e cpu-clock -c 1003009 -e 'syscalls:sys_enter_*' \
		-- "$W" $N $SPIN 2>"$OUT/perf.err"
}
# interleaved rounds: a load that comes and goes hits all three alike
: >"$OUT/base.all"; : >"$OUT/dt.all"; : >"$OUT/perf.all"
rounds=${DT_BENCH_ROUNDS:-9}
for i in $(seq "$rounds"); do
	run_base >>"$OUT/base.all"
	run_dt >>"$OUT/dt.all"
	run_perf >>"$OUT/perf.all"
done
median <"$OUT/base.all" >"$OUT/base"
median <"$OUT/dt.all" >"$OUT/dt"
median <"$OUT/perf.all" >"$OUT/perf"
base=$(cat "$OUT/base") dt=$(cat "$OUT/dt") pf=$(cat "$OUT/perf")
if [ -z "$base" ] || [ -z "$dt" ] || [ -z "$pf" ] || [ ! -s "$OUT/dt.dtc" ] || [ ! -s "$OUT/perf.data" ]; then
	echo "bench-host: a run failed: $(head -c 300 "$OUT/dt.err") $(head -c 300 "$OUT/perf.err")" >&2
	exit 1
fi
echo "# workload ns (medians of $rounds rounds): untraced $base, dtrec $dt, perf record $pf"
awk -v b="$base" -v d="$dt" -v p="$pf" 'BEGIN {
	printf "# ratio of the medians %.3f\n", (p > b ? (d - b) / (p - b) : 0) }'
o=$(paste "$OUT/base.all" "$OUT/dt.all" "$OUT/perf.all" |
	awk '$3 > $1 { print ($2 - $1) / ($3 - $1) }' | median)
[ -n "$o" ] || { echo "bench-host: perf record never slowed the workload down" >&2; exit 1; }
printf 'bench host.overhead_vs_perf %.3f ratio\ntarget <= 1.0\n' "$o"
awk -v d="$(stat -c %s "$OUT/dt.dtc")" -v p="$(stat -c %s "$OUT/perf.data")" 'BEGIN {
	printf "# capture %d bytes, perf.data (-z) %d bytes\n", d, p
	printf "bench host.bytes_vs_perf_z %.3f ratio\ntarget <= 0.35\n", d / p }'
# host.report_vs_perf_report: a recording of its own, ten times the
# system calls of the rounds' workload with a tenth of the arithmetic
# between them (3M calls, about 3M events and 3k profile samples), made by
# both tools back to back, so that reading and folding the events, not the
# tools' start-up (0.01-0.1 s), is what is timed: on the rounds' 300k-call
# recording the figure was start-up alone.  Each tool folds every event
# it recorded, with its call chains: perf report --stdio -g every sample,
# dtreport flame --probe '*' (by default a flame graph is of the profile
# samples only).  Best of 3, CPU seconds (user + sys, children included:
# the load of a shared machine inflates the wall clock), the wall times
# in a # line.
NR=${DT_BENCH_REPORT_CALLS:-3000000} SPINR=300
rm -f "$OUT/dtr.dtc" "$OUT/perfr.data"
"$B/bin/dtrec" --source perf -q -o "$OUT/dtr.dtc" -k -u --user-stacks fp \
	-e profile:hz:997 -e 'syscall:*:entry' -- "$W" $NR $SPINR >/dev/null 2>"$OUT/dtr.err" &&
perf record -q -z -g -o "$OUT/perfr.data" -e cpu-clock -c 1003009 -e 'syscalls:sys_enter_*' \
	-- "$W" $NR $SPINR >/dev/null 2>"$OUT/perfr.err" ||
	{ echo "bench-host: the report recordings failed: $(head -c 300 "$OUT/dtr.err") $(head -c 300 "$OUT/perfr.err")" >&2; exit 1; }
# cpu CMD...: "CPU WALL" seconds of one run of CMD; non-zero when it fails
cpu() {
	local TIMEFORMAT='%R %U %S' rc
	{ time "$@" >/dev/null 2>"$OUT/cpu.err"; rc=$?; } 2>"$OUT/cpu.time"
	[ $rc = 0 ] || { echo "bench-host: failed: $*: $(head -c 300 "$OUT/cpu.err")" >&2; return 1; }
	awk '{ print $2 + $3, $1 }' "$OUT/cpu.time"
}
for i in 1 2 3; do cpu "$B/bin/dtreport" flame --probe '*' "$OUT/dtr.dtc" -o "$OUT/dtr.svg" || exit 1; done |
	sort -n | head -1 >"$OUT/tdt"
for i in 1 2 3; do cpu perf report -i "$OUT/perfr.data" --stdio -g || exit 1; done |
	sort -n | head -1 >"$OUT/tperf"
read -r dc dw <"$OUT/tdt"
read -r pc pw <"$OUT/tperf"
[ -n "$dc" ] && [ -n "$pc" ] || { echo "bench-host: the report timings failed" >&2; exit 1; }
de=$("$B/bin/dtreport" sql --csv "$OUT/dtr.dtc" 'SELECT count(*) FROM events' | tr -d '\r' | tail -1)
pe=$(perf report -i "$OUT/perfr.data" --stats 2>/dev/null | awk '/^ *SAMPLE events:/ { print $3; exit }')
echo "# report: the same workload ($NR calls) recorded back to back: capture $(stat -c %s "$OUT/dtr.dtc") bytes, $de events; perf.data (-z) $(stat -c %s "$OUT/perfr.data") bytes, $pe samples"
echo "# dtreport flame --probe '*' $dc s CPU ($dw s wall), perf report --stdio -g $pc s CPU ($pw s wall); wall ratio $(awk -v d="$dw" -v p="$pw" 'BEGIN { printf "%.3f", d / p }')"
awk -v d="$dc" -v p="$pc" 'BEGIN { printf "bench host.report_vs_perf_report %.3f ratio\ntarget <= 0.2\n", d / p }'
