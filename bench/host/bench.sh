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
#  host.report_vs_perf_report  dtreport flame time / perf report --stdio -g
#                          time, on those recordings
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
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( e - s )); }
for i in 1 2 3; do t "$B/bin/dtreport" flame "$OUT/dt.dtc" -o "$OUT/dt.svg"; done | median >"$OUT/tdt"
for i in 1 2 3; do t perf report -i "$OUT/perf.data" --stdio -g; done | median >"$OUT/tperf"
awk -v d="$(cat "$OUT/tdt")" -v p="$(cat "$OUT/tperf")" 'BEGIN {
	printf "# dtreport flame %.3f s, perf report --stdio -g %.3f s\n", d / 1e9, p / 1e9
	printf "bench host.report_vs_perf_report %.3f ratio\ntarget <= 0.2\n", d / p }'
