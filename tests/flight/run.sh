#!/bin/bash
# run.sh BUILD - the flight recorder of dtrec's perf source: a dump holds
# exactly the newest events (a workload whose calls carry an increasing
# number, pinned to one CPU), its counters account for every overwritten
# one, dumps go to numbered files without replacing any, nothing grows
# meanwhile.
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/bin/dtreport CAPCHECK=$B/tests/dtrec/capcheck
U=$B/tests/uprobe/utarget
T=$(mktemp -d /tmp/flight-test.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
sanitizers_dtrec
sql() { "$DTREPORT" sql "$@" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2; }
cc() { "$CAPCHECK" "$1" 2>&1 | awk -v k="$2" '$1==k{print $2}'; }
sanitizer_clean() {
	if grep -q Sanitizer "$2"; then fail "$1" "$(grep -m1 Sanitizer "$2")"; else pass "$1"; fi
}
UP="uprobe:$U:up_ret:entry"
# newest NAME FILE LAST: the dump's up_ret entries are the newest ones, all
# on CPU 0: numbers LAST-k+1..LAST, each once, in time order
newest() {
	local got
	got=$(sql "$2" "SELECT count(*), count(DISTINCT e.arg0), min(e.arg0), max(e.arg0),
		count(DISTINCT e.cpu), sum(e.cpu) FROM events e JOIN probes p ON p.id = e.probe
		WHERE p.name = '$UP'")
	local n d lo hi ncpu scpu
	IFS=, read -r n d lo hi ncpu scpu <<<"$got"
	local order
	order=$(sql "$2" "SELECT count(*) FROM (SELECT e.arg0 - lag(e.arg0) OVER (ORDER BY e.ts) AS step
		FROM events e JOIN probes p ON p.id = e.probe WHERE p.name = '$UP') WHERE step <> 1")
	if [ "${n:-0}" -gt 100 ] && [ "$d" = "$n" ] && [ "$hi" = "$3" ] && [ $((hi - lo + 1)) = "$n" ] &&
	   [ "$ncpu" = 1 ] && [ "$scpu" = 0 ] && [ "$order" = 0 ]; then
		pass "$1"
	else
		fail "$1" "events $n distinct $d range $lo..$hi (want ..$3) cpus $ncpu/$scpu out of order $order"
	fi
}
# accounting NAME FILE PRODUCED: counters: produced exact, = read + dropped
accounting() {
	local ev kr kp kd
	"$CAPCHECK" "$2" >"$T/cc" 2>&1
	ev=$(awk '$1=="events"{print $2}' "$T/cc"); kr=$(awk '$1=="kernel_read"{print $2}' "$T/cc")
	kp=$(awk '$1=="kernel_produced"{print $2}' "$T/cc"); kd=$(awk '$1=="kernel_dropped"{print $2}' "$T/cc")
	if [ -n "$ev" ] && [ "$ev" = "$kr" ] && [ "$kp" = "$3" ] && [ "$kp" = $((kr + kd)) ]; then
		pass "$1"
	else
		fail "$1" "events $ev read $kr produced $kp (want $3) dropped $kd"
	fi
}

# ---- SIGUSR2 mid-run, then the end: two dumps, each exactly the newest
echo mine >"$T/k.1.dtc"
"$DTREC" --source perf -q -o "$T/k.dtc" --flight 64k -e "$UP" -- taskset -c 0 sh -c \
	"$U calls 50000 >/dev/null; kill -USR2 \$PPID; sleep 1; $U calls 30000 >/dev/null" \
	2>"$T/k.err"
rc=$?
[ $rc = 0 ] && [ -f "$T/k.2.dtc" ] && [ -f "$T/k.3.dtc" ] && [ ! -e "$T/k.4.dtc" ] && [ ! -e "$T/k.dtc" ] &&
	pass flight-numbered-dumps || fail flight-numbered-dumps "rc $rc: $(ls "$T" | tr '\n' ' '): $(head -c 300 "$T/k.err")"
[ "$(cat "$T/k.1.dtc")" = mine ] && pass flight-keeps-existing-file || fail flight-keeps-existing-file "k.1.dtc changed"
newest flight-sigusr2-newest "$T/k.2.dtc" 49999
accounting flight-sigusr2-counters "$T/k.2.dtc" 50000
newest flight-exit-newest "$T/k.3.dtc" 29999
accounting flight-exit-counters "$T/k.3.dtc" 80000
sanitizer_clean flight-asan "$T/k.err"

# ---- a trigger probe: its dump ends with it
"$DTREC" --source perf -q -o "$T/t.dtc" --flight 64k -e "$UP" --trigger "usdt:$U:dttest:tick" \
	-- taskset -c 0 sh -c "$U calls 40000 >/dev/null; $U usdt 1; sleep 1" 2>"$T/t.err"
rc=$?
last=$(sql "$T/t.1.dtc" "SELECT p.name FROM events e JOIN probes p ON p.id = e.probe ORDER BY e.ts DESC LIMIT 1")
[ $rc = 0 ] && [ "$last" = "usdt:$U:dttest:tick" ] &&
	pass flight-trigger-dump || fail flight-trigger-dump "rc $rc, last event '$last': $(head -c 300 "$T/t.err")"
newest flight-trigger-newest "$T/t.1.dtc" 39999
[ -f "$T/t.2.dtc" ] && pass flight-trigger-then-exit || fail flight-trigger-then-exit "no second dump: $(ls "$T")"

# ---- a trigger filtered by the tracepoint's fields: a system call that fails
"$DTREC" --source perf -q -o "$T/f.dtc" --flight 64k -e 'syscall:getpriority:*' \
	--trigger syscall:getpriority:return --trigger-filter 'ret < 0' -- sh -c \
	"python3 -c 'import os; os.getpriority(0, 0)'; sleep 0.5
	 python3 -c 'import os
try: os.getpriority(99, 0)
except OSError: pass'; sleep 1" 2>"$T/f.err"
# (group_concat keeps its input's order only from an ordered subquery)
got=$(sql "$T/f.1.dtc" "SELECT group_concat(r, ' ') FROM (SELECT e.retval || '/' || e.errno AS r
	FROM events e JOIN probes p ON p.id = e.probe WHERE p.name = 'syscall:getpriority:return'
	ORDER BY e.ts)")
# the successful call did not dump; the failing one did, and is the dump's last
[ -f "$T/f.1.dtc" ] && [ -f "$T/f.2.dtc" ] && [ ! -e "$T/f.3.dtc" ] && [ "${got##* }" = "-22/22" ] &&
	[ "$(wc -w <<<"$got")" = 2 ] && pass flight-trigger-filter ||
	fail flight-trigger-filter "returns in dump 1: '$got'; files: $(ls "$T" | grep '^f\.' | tr '\n' ' ')"
o_bad_filter() {
	"$DTREC" --source perf -o "$T/bf.dtc" --flight 64k -e 'syscall:getpriority:*' \
		--trigger syscall:getpriority:return --trigger-filter 'nosuch < 0' -d 1s 2>"$T/bf.err"
	local rc=$?
	[ $rc = 1 ] && grep -q "trigger-filter 'nosuch < 0' on syscall:getpriority:return" "$T/bf.err" &&
		pass flight-bad-trigger-filter || fail flight-bad-trigger-filter "rc $rc: $(cat "$T/bf.err")"
}
o_bad_filter

# ---- dumping while the producer runs: still contiguous, still accounted
"$DTREC" --source perf -q -o "$T/r.dtc" --flight 256k -e "$UP" -- taskset -c 0 sh -c \
	"$U calls 400000 >/dev/null & sleep 0.3; kill -USR2 \$PPID; wait" 2>"$T/r.err"
got=$(sql "$T/r.1.dtc" "SELECT count(*), max(arg0) - min(arg0) + 1, count(DISTINCT arg0) FROM events")
IFS=, read -r n span d <<<"$got"
[ "${n:-0}" -gt 100 ] && [ "$n" = "$span" ] && [ "$n" = "$d" ] && pass flight-dump-while-running ||
	fail flight-dump-while-running "events $n span $span distinct $d: $(head -c 200 "$T/r.err")"
"$CAPCHECK" "$T/r.1.dtc" >"$T/cc" 2>&1
kp=$(awk '$1=="kernel_produced"{print $2}' "$T/cc"); kr=$(awk '$1=="kernel_read"{print $2}' "$T/cc")
kd=$(awk '$1=="kernel_dropped"{print $2}' "$T/cc"); ev=$(awk '$1=="events"{print $2}' "$T/cc")
[ -n "$kp" ] && [ "$kp" = $((kr + kd)) ] && [ "$ev" = "$kr" ] && pass flight-dump-while-running-counters ||
	fail flight-dump-while-running-counters "produced $kp read $kr dropped $kd events $ev"

# ---- nothing grows while the flight recorder runs
mkdir "$T/ng"
"$DTREC" --source perf -q -o "$T/ng/x.dtc" --flight 64k -e 'syscall:*:entry' -d 3s 2>"$T/ng.err" &
rp=$!
sleep 1.5
during=$(ls -A "$T/ng")
wait $rp
[ -z "$during" ] && [ -f "$T/ng/x.1.dtc" ] && pass flight-no-growth ||
	fail flight-no-growth "files while running: '$during'; after: $(ls "$T/ng")"

# ---- a trigger that keeps firing: dumps at least --dump-interval apart and
# no more than --max-dumps in all, every firing without a dump counted.
# Three bursts of 20 ticks 1.5 s apart: with 500ms and 3 dumps, the first
# two bursts dump once each, the third none (the last dump is the end's)
mkdir "$T/storm"
burst="$U usdt 20 >/dev/null"
"$DTREC" --source perf -o "$T/storm/s.dtc" --flight 64k -e "$UP" --trigger "usdt:$U:dttest:tick" \
	--dump-interval 500ms --max-dumps 3 \
	-- sh -c "$burst; sleep 1.5; $burst; sleep 1.5; $burst; sleep 0.5" 2>"$T/storm.err"
rc=$?
files=$(ls "$T/storm" | tr '\n' ' ')
[ $rc = 0 ] && [ "$files" = "s.1.dtc s.2.dtc s.3.dtc " ] &&
	grep -q '^dtrec: 58 triggers fired without a dump (--dump-interval 0.5s, --max-dumps 3)$' "$T/storm.err" &&
	pass flight-trigger-storm-bounded ||
	fail flight-trigger-storm-bounded "rc $rc, files '$files': $(tr '\n' '|' <"$T/storm.err" | head -c 400)"
# the defaults (5 s, 10 dumps): the same storm dumps once, then at the end
mkdir "$T/storm2"
"$DTREC" --source perf -q -o "$T/storm2/s.dtc" --flight 64k -e "$UP" --trigger "usdt:$U:dttest:tick" \
	-- sh -c "$burst; sleep 1.5; $burst; sleep 1.5; $burst; sleep 0.5" 2>"$T/storm2.err"
files=$(ls "$T/storm2" | tr '\n' ' ')
[ "$files" = "s.1.dtc s.2.dtc " ] && grep -q '^dtrec: 59 triggers fired without a dump (--dump-interval 5s, --max-dumps 10)$' "$T/storm2.err" &&
	pass flight-trigger-storm-defaults ||
	fail flight-trigger-storm-defaults "files '$files': $(tr '\n' '|' <"$T/storm2.err" | head -c 400)"

# ---- the line saying the rings record: no file appears before a dump, so
# it is what a script waits on before starting its workload; what runs
# after it is in the dump, every call (300 fit in the ring)
"$DTREC" --source perf -o "$T/rl.dtc" --flight 64k -e "$UP" -d 60s 2>"$T/rl.err" &
rp=$!
for i in $(seq 200); do
	grep -q '^dtrec: flight recorder running' "$T/rl.err" && break
	sleep 0.1
done
taskset -c 0 "$U" calls 300 >/dev/null
kill -INT $rp
wait $rp
rc=$?
n=$(sql "$T/rl.1.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe WHERE p.name = '$UP'")
first=$(head -n 1 "$T/rl.err")
[ "$n" = 300 ] && [ "${first#dtrec: flight recorder running}" != "$first" ] &&
	grep -q "rl.1.dtc: " "$T/rl.err" && pass flight-running-line ||
	fail flight-running-line "rc $rc, $n of 300 calls in the dump, first line '$first': $(tr '\n' '|' <"$T/rl.err" | head -c 300)"

# ---- option errors
o() {	# o NAME PATTERN ARGS...
	local name=$1 pat=$2; shift 2
	"$DTREC" --source perf -o "$T/bad.dtc" "$@" 2>"$T/bad.err" >/dev/null
	local rc=$?
	[ $rc != 0 ] && grep -q -- "$pat" "$T/bad.err" && ! ls "$T"/bad* 2>/dev/null | grep -q dtc &&
		pass "$name" || fail "$name" "rc $rc: $(head -c 200 "$T/bad.err")"
}
o flight-bad-size "bad flight ring size" --flight 1000 -e "$UP" -d 1s
o flight-trigger-needs-flight "needs --flight" --trigger "$UP" -e "$UP" -d 1s
o flight-no-ringsize-twice "leave out -b" --flight 64k -b 64k -e "$UP" -d 1s
o flight-bad-trigger "did you mean" --flight 64k --trigger syscall:getppd:entry -d 1s
o flight-timer-trigger "cannot trigger" --flight 64k --trigger profile:hz:99 -e "$UP" -d 1s
o flight-bad-dump-interval "bad --dump-interval" --flight 64k --dump-interval 0 -e "$UP" -d 1s
o flight-bad-max-dumps "bad --max-dumps" --flight 64k --max-dumps 0 -e "$UP" -d 1s
o flight-max-dumps-needs-flight "need --flight" --max-dumps 3 -e "$UP" -d 1s
