#!/bin/bash
# run.sh BUILD - ground truth for dtrec --offcpu and the reports of where
# time went: truth.c (a sleeper, a pipe reader and its computing writer, a
# thread contending a mutex) recorded on this host through perf with the
# ASan dtrec, analysed with the ASan dtreport; what truth measured with its
# own clocks is what the reports must find.  strace -c of another run of it
# gives the syscall counts.  Needs perf_event_open (root): refused, the
# tests fail saying so.
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/asan/bin/dtreport DTSH=$B/asan/bin/dtsh
TRUTH=$B/tests/offcpu/truth
T=$(mktemp -d /tmp/offcpu-test.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"	# pass, fail, rec, san
sanitizers_dtrec
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

ITERS=$("$TRUTH" --calibrate)
# the numbers truth printed, by name
val() { awk -v k="$1" '$1 == k { print $2 }' "$T/truth.out"; }
# within PTS points: |a - b| <= PTS/100 * base
near() { python3 -c 'import sys; a, b, base, pts = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= pts / 100 * base else 1)' "$@"; }

# ---- record it: its syscalls and the scheduler's view of it.  On CPU 0:
# this host's kernel delivers no perf sample from another CPU's idle task
# (perf record -a shows no swapper on CPU 1 either), so a switch into a
# thread, or a wakeup the kernel hands to that CPU's idle loop, is missing
# there for every perf_event_open tool; the ground truth is taken where
# the kernel reports every switch.  dtrec(8) BUGS says so.
# (profile samples too: blame spreads on-CPU time over them)
if "$DTREC" --source perf -q --offcpu -e profile:hz:997 -e 'syscall:*:entry' -e 'syscall:*:return' \
	-b 16m -o "$T/t.dtc" -- taskset -c 0 "$TRUTH" "$ITERS" >"$T/truth.out" 2>"$T/rec.err" &&
   [ -s "$T/t.dtc" ] && [ -n "$(val sleep_ns)" ] && ! san "$T/rec.err"; then
	pass record-offcpu
else
	fail record-offcpu "$(head -c 400 "$T/rec.err")"
fi
[ -s "$T/rec.err" ] && echo "# dtrec said: $(head -c 300 "$T/rec.err" | tr '\n' ' ')"
sql() { "$DTREPORT" sql "$T/t.dtc" "$1" 2>>"$T/sql.err" | tail -n +2 | tr -d '\r'; }

# the switches into truth's threads are another task's events: kept, but
# without that task's stacks, as are wakeups of them (the waker's stack)
TPID=$(sql "SELECT pid FROM events WHERE comm = 'sleeper' LIMIT 1")
TIDS="SELECT DISTINCT tid FROM events WHERE pid = $TPID"
n=$(sql "SELECT count(*) FROM events WHERE probe_name = 'tracepoint:sched:sched_switch'
	 AND pid <> $TPID AND arg7 IN ($TIDS)")
[ "${n:-0}" -gt 0 ] && pass switch-into-target-recorded ||
	fail switch-into-target-recorded "no sched_switch to a thread of $TPID by another task"
n=$(sql "SELECT count(*) FROM events WHERE probe_name = 'tracepoint:sched:sched_switch'
	 AND pid <> $TPID AND arg7 IN ($TIDS) AND (kstack <> 0 OR ustack <> 0)")
[ "${n:-1}" = 0 ] && pass switch-into-target-no-foreign-stacks ||
	fail switch-into-target-no-foreign-stacks "$n switches by other tasks kept their stacks"
n=$(sql "SELECT count(*) FROM events WHERE probe_name = 'tracepoint:sched:sched_switch'
	 AND pid <> $TPID AND arg7 NOT IN ($TIDS) AND arg2 NOT IN ($TIDS)")
[ "${n:-1}" = 0 ] && pass offcpu-only-targets || fail offcpu-only-targets "$n switches of others"
n=$(sql "SELECT count(*) FROM events WHERE probe_name = 'tracepoint:sched:sched_switch'
	 AND pid = $TPID AND kstack <> 0 AND ustack <> 0")
# (seen once under load: no user stack in a whole recording; the capture
# is kept under build/ for diagnosis)
[ "${n:-0}" -gt 10 ] && pass offcpu-stacks || {
	cp "$T/t.dtc" "$B/offcpu-nostacks.dtc" 2>/dev/null
	fail offcpu-stacks "$n switch-outs with both stacks (capture kept as $B/offcpu-nostacks.dtc; dtrec said: $(head -c 200 "$T/rec.err"))"; }
# A thread that exits has no events of its own from its PERF_RECORD_EXIT
# on, yet it still runs: its last switch out (state X: the model's letter
# rule, the lowest of the low bits is 16), and the wakeups an interrupt
# fires meanwhile (the sleeper's timer while the locker exits: one 20 ms
# sleep of ten went missing that way).  The per-CPU copies keep them, each
# named by its thread (the kernel gives a released thread's samples tid -1).
n=$(sql "SELECT count(DISTINCT tid) FROM events WHERE probe_name = 'tracepoint:sched:sched_switch'
	 AND pid = $TPID AND tid = arg2 AND (arg4 & 31) = 16
	 AND comm IN ('sleeper', 'writer', 'reader', 'locker')")
if [ "${n:-0}" = 4 ]; then
	pass offcpu-exiting-thread-switch
else
	cp "$T/t.dtc" "$B/offcpu-exit-miss.dtc" 2>/dev/null
	fail offcpu-exiting-thread-switch "last switches of $n of the 4 exiting threads recorded (capture kept as $B/offcpu-exit-miss.dtc)"
fi
n=$(sql "SELECT count(*) FROM events WHERE pid = $TPID AND tid = 4294967295
	 AND probe_name = 'tracepoint:sched:sched_switch'")
[ "${n:-1}" = 0 ] && pass offcpu-exiting-thread-tid ||
	fail offcpu-exiting-thread-tid "$n switches of truth named tid -1"

# ---- off-CPU time by thread, state and stack (folded, us)
"$DTREPORT" flame --offcpu --folded "$T/t.dtc" >"$T/off.folded" 2>"$T/off.err"
rc=$?
[ $rc = 0 ] && [ -s "$T/off.folded" ] && ! san "$T/off.err" && pass flame-offcpu-folded ||
	fail flame-offcpu-folded "rc $rc: $(head -c 300 "$T/off.err")"
# us of comm $1 whose stack matches $2, in states $3 (a regex of letters)
offus() { awk -v c="$1" -v s="$2" -v st="$3" '
	{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); split(line, f, ";")
	  if (f[1] != c || line !~ s) next
	  if (match(line, /\[off-CPU .\]$/) && substr(line, RSTART + 9, 1) ~ "^(" st ")$") t += n }
	END { print t + 0 }' "$T/off${T2:+2}.folded"; }
us_to_ns() { echo $(( $1 * 1000 )); }

# sleeper: 10 x 20 ms asleep (S) in clock_nanosleep; what came after each
# wakeup is R, waiting for a CPU
S=$(us_to_ns "$(offus sleeper clock_nanosleep S)") known=$(val sleep_ns)
if ! near "$S" 200000000 "$known" 3; then
	# One 20 ms sleep of ten missing, no lost record, had two causes on a
	# loaded host.  One was dtrec's (the wakeup and switch-in fired while
	# another target thread exited: offcpu-exiting-thread-switch guards
	# it).  The other remains: the sleeper's timer fired while a kworker
	# ran on its CPU, and neither the wakeup nor the switch into the
	# sleeper reached the per-CPU event (the kworker's next switch did),
	# with no count of a loss anywhere; a perf record -C 0 run alongside
	# missed the same wakeup and switch (dtrec(8) BUGS).  One more
	# recording, said here; a wrong share twice fails.
	echo "# sleeper share: ${S}ns of 200000000ns in the first recording (kept as $B/offcpu-sleeper-miss.dtc); recording again"
	cp "$T/t.dtc" "$B/offcpu-sleeper-miss.dtc" 2>/dev/null
	if "$DTREC" --source perf -q --offcpu -b 16m -o "$T/t2.dtc" -- taskset -c 0 "$TRUTH" "$ITERS" \
		>"$T/truth2.out" 2>"$T/rec2.err"; then
		"$DTREPORT" flame --offcpu --folded "$T/t2.dtc" >"$T/off2.folded" 2>/dev/null
		S=$(us_to_ns "$(T2=1 offus sleeper clock_nanosleep S)")
		known=$(awk '$1 == "sleep_ns" { print $2 }' "$T/truth2.out")
	fi
fi
near "$S" 200000000 "${known:-0}" 3 && pass offcpu-sleeper-share ||
	fail offcpu-sleeper-share "S in nanosleep ${S}ns, known 200000000ns of ${known}ns"
# reader: blocked in read (S), then runnable (R): all of what it measured
R=$(us_to_ns "$(offus reader 'ksys_read|vfs_read|pipe_read' 'S|R')")
near "$R" "$(val read_ns)" "$(val read_ns)" 3 && pass offcpu-reader-share ||
	fail offcpu-reader-share "off-CPU in read ${R}ns, truth measured $(val read_ns)ns"
L=$(us_to_ns "$(offus locker "__lll_lock_wait|pthread_mutex_lock" "S|R")")
near "$L" "$(val lock_ns)" "$(val lock_ns)" 3 && pass offcpu-locker-share ||
	fail offcpu-locker-share "off-CPU in the mutex lock ${L}ns, truth measured $(val lock_ns)ns"
# the state split: S and R are disjoint parts of the same waits
"$DTREPORT" flame --offcpu --state S --folded "$T/t.dtc" >"$T/offS.folded" 2>/dev/null
"$DTREPORT" flame --offcpu --state R --folded "$T/t.dtc" >"$T/offR.folded" 2>/dev/null
sum() { awk '{ t += $NF } END { print t + 0 }' "$1"; }
a=$(sum "$T/off.folded") s=$(sum "$T/offS.folded") r=$(sum "$T/offR.folded")
[ "$s" -gt 0 ] && [ "$r" -gt 0 ] && [ "$s" -lt "$a" ] && ! grep -q 'off-CPU R\]' "$T/offS.folded" &&
	! grep -q 'off-CPU S\]' "$T/offR.folded" && pass flame-offcpu-state ||
	fail flame-offcpu-state "all $a, S $s, R $r"
"$DTREPORT" flame --offcpu -o "$T/off.svg" "$T/t.dtc" 2>"$T/svg.err"
grep -q ' us of off-CPU time' "$T/off.svg" && grep -q '</svg>' "$T/off.svg" &&
	pass flame-offcpu-svg-us || fail flame-offcpu-svg-us "$(head -c 300 "$T/svg.err")"

# on-CPU samples and off-CPU time in one graph, both in us: the writer's
# samples in compute() add up to the CPU time it measured (997 Hz sampling:
# within 15%), its off-CPU time is the same as in the off-CPU graph
"$DTREPORT" flame --oncpu-offcpu --folded "$T/t.dtc" >"$T/onoff.folded" 2>"$T/onoff.err"
on=$(awk '/^writer;.*compute.*\[on-CPU\] [0-9]+$/ { t += $NF } END { print t * 1000 }' "$T/onoff.folded")
offw=$(awk '/^writer;.*\[off-CPU .\] [0-9]+$/ { t += $NF } END { print t + 0 }' "$T/onoff.folded")
offw0=$(awk '/^writer;/ { t += $NF } END { print t + 0 }' "$T/off.folded")
near "$on" "$(val compute_ns)" "$(val compute_ns)" 15 && [ "$offw" = "$offw0" ] && ! san "$T/onoff.err" &&
	pass flame-oncpu-offcpu ||
	fail flame-oncpu-offcpu "writer on-CPU ${on}ns (measured $(val compute_ns)), off ${offw}us vs ${offw0}us"

# ---- wakers: who ended each wait, under the waiting thread's name
"$DTREPORT" flame --wakers --folded "$T/t.dtc" >"$T/wk.folded" 2>"$T/wk.err"
# the reader's read waits all end in the writer's pipe write: as long as
# the blocked (S) part of its off-CPU time in read
W=$(awk '/^reader;writer;.*anon_pipe_write|^reader;writer;.*pipe_write/ { t += $NF } END { print t * 1000 }' "$T/wk.folded")
RS=$(us_to_ns "$(offus reader 'ksys_read|vfs_read|pipe_read' S)")
near "$W" "$RS" "$(val read_ns)" 3 && ! san "$T/wk.err" && pass wakers-pipe-writer ||
	fail wakers-pipe-writer "writer's wakeups ${W}ns, reader blocked ${RS}ns"
# a real-time sleeper's naps end in the timer interrupt, not in whatever
# task it interrupted (whose stack, another process's, is not recorded)
irq=$(awk '/^sleeper;\[(hard|soft)irq\]/ { t += $NF } END { print t + 0 }' "$T/wk.folded")
# the rest: truth's own threads (its start, the barrier)
other=$(awk '/^sleeper;/ { sub(/ [0-9]+$/, ""); split($0, f, ";")
	if (f[2] !~ /^\[(hard|soft)irq\]$/ && f[2] !~ /^(truth|writer|reader|locker)$/) print f[2] }' "$T/wk.folded")
[ "$irq" -gt 150000 ] && [ -z "$other" ] &&
	pass wakers-interrupt || fail wakers-interrupt "${irq}us of the sleeper's 200 ms woken by an interrupt: $(grep '^sleeper;' "$T/wk.folded" | cut -c1-80 | tr '\n' '|')"

# ---- blame: the reader's waits are the writer's computing
RT=$(sql "SELECT tid FROM events WHERE comm = 'reader' LIMIT 1")
"$DTREPORT" blame --tid "$RT" --folded "$T/t.dtc" >"$T/bl.folded" 2>"$T/bl.err"
tot=$(awk '/;blocked \(S, sleeping\);.*pipe_read/ { t += $NF } END { print t + 0 }' "$T/bl.folded")
cmp=$(awk '/;blocked \(S, sleeping\);.*pipe_read.*;woken by writer tid [0-9]+;.*;meanwhile it was;(on-CPU|runqueue \(preempted\));.*compute/ { t += $NF } END { print t + 0 }' "$T/bl.folded")
[ "$tot" -gt 0 ] && [ $((cmp * 100)) -ge $((tot * 90)) ] && ! san "$T/bl.err" &&
	pass blame-pipe-to-writer-compute ||
	fail blame-pipe-to-writer-compute "of ${tot}us blocked in read, ${cmp}us under the writer's compute: $(head -c 300 "$T/bl.err")"
"$DTREPORT" blame --tid "$RT" "$T/t.dtc" >"$T/bl.txt" 2>&1
grep -q 'woken by writer tid' "$T/bl.txt" && grep -q 'meanwhile it was' "$T/bl.txt" &&
	grep -q 'compute' "$T/bl.txt" && pass blame-text || fail blame-text "$(head -c 400 "$T/bl.txt")"
"$DTREPORT" blame --tid "$RT" --depth 0 --folded "$T/t.dtc" >"$T/bl0.folded" 2>&1
! grep -q 'meanwhile' "$T/bl0.folded" && grep -q 'woken by writer' "$T/bl0.folded" &&
	pass blame-depth || fail blame-depth "$(head -c 300 "$T/bl0.folded")"
# the whole window is accounted for: on-CPU + runqueue + blocked
win=$(awk -v rt="$RT" '/^tid / { print int($4 * 1000) }' "$T/bl.txt")
all=$(awk '{ t += $NF } END { print t + 0 }' "$T/bl0.folded")
near "$all" "$win" "$win" 1 && pass blame-adds-up || fail blame-adds-up "${all}us of a ${win}us window"
"$DTREPORT" blame --tid "$RT" -o "$T/bl.svg" "$T/t.dtc" 2>"$T/bl.err"
grep -q 'Blame' "$T/bl.svg" && grep -q '</svg>' "$T/bl.svg" && pass blame-svg ||
	fail blame-svg "$(head -c 300 "$T/bl.err")"
"$DTREPORT" blame "$T/t.dtc" >/dev/null 2>"$T/e6"
[ $? = 2 ] && grep -q -- '--tid T' "$T/e6" && pass blame-needs-tid || fail blame-needs-tid "$(cat "$T/e6")"
# ---- unpinned: the kernel queues a wakeup to the woken thread's idle CPU,
# where sched_wakeup fires in the idle task (swapper, in an interrupt);
# --offcpu records sched_waking, which fires in the waker, so the reader's
# waits still end in the writer's pipe write when the threads run on two
# CPUs
if "$DTREC" --source perf -q --offcpu -b 16m -o "$T/u.dtc" -- "$TRUTH" "$ITERS" \
	>"$T/truthu.out" 2>"$T/recu.err" && ! san "$T/recu.err"; then
	"$DTREPORT" flame --wakers --folded "$T/u.dtc" >"$T/wku.folded" 2>"$T/wku.err"
	# of the reader's wakers' time, the share that is the writer's write
	read -r WU WA IDLE < <(awk '/^reader;/ { a += $NF }
		/^reader;writer;.*pipe_write/ { w += $NF }
		/^reader;(swapper|\[(hard|soft)irq\])/ { i += $NF }
		END { print w + 0, a + 0, i + 0 }' "$T/wku.folded")
	ru=$(awk '$1 == "read_ns" { print int($2 / 1000) }' "$T/truthu.out")
	# the writer's wakeups hold at least 90% of what the reader measured
	# blocked in read, and the idle task or an interrupt none of it
	[ "${ru:-0}" -gt 0 ] && [ $((WU * 10)) -ge $((ru * 9)) ] && [ $((IDLE * 100)) -le "$WA" ] &&
		! san "$T/wku.err" && pass wakers-unpinned-pipe-writer ||
		fail wakers-unpinned-pipe-writer "writer's wakeups ${WU}us, idle/irq ${IDLE}us of ${WA}us; reader measured ${ru}us in read: $(grep '^reader;' "$T/wku.folded" | cut -d';' -f1-3 | sort | uniq -c | head -5 | tr '\n' '|')"
else
	fail wakers-unpinned-pipe-writer "record: $(head -c 300 "$T/recu.err")"
fi
"$DTREPORT" blame --tid 999999999 "$T/t.dtc" >/dev/null 2>"$T/e7"
[ $? = 1 ] && grep -q 'never left a CPU' "$T/e7" && pass blame-unknown-tid ||
	fail blame-unknown-tid "$(cat "$T/e7")"

# ---- latency: the sleeper's 20 ms naps
"$DTREPORT" latency --probe 'syscall:clock_nanosleep' --by comm --json "$T/t.dtc" \
	>"$T/lat.json" 2>"$T/lat.err"
p50=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([g for g in d["groups"] if g["comm"] == "sleeper"][0]["p50_ns"])' "$T/lat.json" 2>&1)
# against the 20 ms asked for, and against what the sleeper measured
near "${p50:-0}" 20000000 20000000 5 && pass latency-p50-sleep ||
	fail latency-p50-sleep "p50 $p50 ns, want 20 ms within 5%"
near "${p50:-0}" "$(val nap_p50_ns)" "$(val nap_p50_ns)" 5 && pass latency-p50-measured ||
	fail latency-p50-measured "p50 $p50 ns, the sleeper measured $(val nap_p50_ns) ns"
n=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([g for g in d["groups"] if g["comm"] == "sleeper"][0]["count"])' "$T/lat.json" 2>&1)
[ "$n" = 10 ] && pass latency-count || fail latency-count "sleeper: $n naps, want 10"
"$DTREPORT" latency --probe 'syscall:clock_nanosleep' "$T/t.dtc" >"$T/lat.txt" 2>&1
grep -q 'value (us)' "$T/lat.txt" && grep -Eq '^ +16384 \|@+ +[0-9]+$' "$T/lat.txt" &&
	pass latency-histogram || fail latency-histogram "$(head -c 400 "$T/lat.txt")"

# ---- syscalls: the counts strace -c gives for another run of the same
# program (the contended mutex's futex calls differ from run to run;
# execve began before recording: its entry is not in the capture)
if command -v strace >/dev/null; then
	# stdout a file, as in the recording: glibc asks a device for its tty-ness
	strace -f -c -o "$T/strace.txt" taskset -c 0 "$TRUTH" "$ITERS" >"$T/strace.out" 2>&1
	"$DTREPORT" syscalls --json "$T/t.dtc" >"$T/sys.json" 2>"$T/sys.err"
	diff=$(python3 - "$T/strace.txt" "$T/sys.json" <<'PY'
import json, sys
st = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls = int(f[3]); errs = int(f[4]) if len(f) == 6 else 0
        st[f[-1]] = (calls, errs)
ours = {g["syscall"]: (g["calls"], g["errors"]) for g in json.load(open(sys.argv[2]))["syscalls"]}
bad = []
for k, v in st.items():
    if k in ("futex", "execve"):
        continue
    if ours.get(k) != v:
        bad.append("%s strace %s dt %s" % (k, v, ours.get(k)))
for k in ours:
    if k not in st and k not in ("futex", "execve"):
        bad.append("%s only in dt %s" % (k, ours[k]))
print("; ".join(bad) if bad else ("ok %d" % len(st)))
PY
)
	case $diff in
	ok*) pass syscalls-equal-strace ;;
	*) fail syscalls-equal-strace "$diff" ;;
	esac
else
	fail syscalls-equal-strace "strace is not installed (scripts/install-deps.sh)"
fi
# truth's own calls (taskset's, before its exec, are under its name)
"$DTREPORT" syscalls --by comm "$T/t.dtc" 2>&1 |
	awk '/^comm / { on = ($2 == "truth") } on' >"$T/sys.txt"
grep -Eq '^close +[0-9]+ +3 .*EBADF 3' "$T/sys.txt" && grep -Eq '^openat .*ENOENT 2' "$T/sys.txt" &&
	pass syscalls-errno-names || fail syscalls-errno-names "$(head -c 600 "$T/sys.txt")"
"$DTREPORT" syscalls --by comm "$T/t.dtc" >"$T/sysc.txt" 2>&1
grep -q '^comm sleeper' "$T/sysc.txt" && pass syscalls-by-comm ||
	fail syscalls-by-comm "$(head -c 300 "$T/sysc.txt")"

# ---- the same commands in dtsh, on its open capture
printf 'latency --probe syscall:clock_nanosleep --by comm\nsyscalls\nflame --offcpu --folded -o %s\n' \
	"$T/sh.folded" | "$DTSH" "$T/t.dtc" >"$T/sh.out" 2>"$T/sh.err"
grep -q 'comm=sleeper' "$T/sh.out" && grep -q '^clock_nanosleep ' "$T/sh.out" &&
	cmp -s "$T/sh.folded" "$T/off.folded" && ! san "$T/sh.err" && pass dtsh-commands ||
	fail dtsh-commands "$(head -c 300 "$T/sh.err")"

# ---- SQL: the same derived data as tables, equal to the reports' numbers
n=$(sql "SELECT count(*) FROM spans WHERE comm = 'sleeper' AND probe = 'syscall:clock_nanosleep'")
p=$(sql "SELECT dur FROM spans WHERE comm = 'sleeper' AND probe = 'syscall:clock_nanosleep'
	 ORDER BY dur LIMIT 1 OFFSET 4")
[ "$n" = 10 ] && [ "$p" = "${p50:-x}" ] && pass sql-spans-latency ||
	fail sql-spans-latency "$n naps, 5th shortest $p ns, latency p50 ${p50:-?} ns"
e=$(sql "SELECT count(*) FROM spans WHERE probe = 'syscall:close' AND errno = 9")
a=$(sql "SELECT args FROM spans WHERE probe = 'syscall:close' AND errno = 9 LIMIT 1")
# close(-1): the int -1 in a 64-bit register slot, then whatever the other
# registers held (raw_syscalls gives all six)
case ${a#\"} in 4294967295,*|-1,*) a=ok ;; esac
[ "$e" = 3 ] && [ "$a" = ok ] && pass sql-spans-errno ||
	fail sql-spans-errno "$e close EBADF, args '$a'"
# the sleeper's blocked time: what flame --offcpu --state S drew (us each)
s=$(sql "SELECT sum(blocked) / 1000 FROM sched WHERE comm = 'sleeper' AND state = 'S'")
fs=$(offus sleeper '' S)
[ -n "$s" ] && [ $((s - fs)) -le 100 ] && [ $((fs - s)) -le 100 ] &&
	pass sql-sched-blocked || fail sql-sched-blocked "blocked ${s}us, flame S ${fs}us"
w=$(sql "SELECT count(*) FROM sched WHERE comm = 'reader' AND waker_comm = 'writer'")
[ "${w:-0}" -ge 5 ] && pass sql-sched-waker || fail sql-sched-waker "$w waits ended by the writer"
printf 'sql SELECT count(*) AS n FROM sched\nsql SELECT count(*) AS n FROM sched\n' |
	"$DTSH" "$T/t.dtc" >"$T/shsql.out" 2>"$T/shsql.err"
[ "$(grep -c '^[0-9]' "$T/shsql.out")" = 2 ] && ! san "$T/shsql.err" && pass dtsh-sql-sched ||
	fail dtsh-sql-sched "$(head -c 300 "$T/shsql.out" "$T/shsql.err")"

# ---- the SQL tables are computed once per capture: kept beside it
# (CAPTURE.spans.cache, CAPTURE.sched.cache), used only while they agree
# with it, never written over a file of the user's, never through a link
CD=$T/cache
mkdir -p "$CD"
cp "$T/t.dtc" "$CD/t.dtc"
sum0=$(sha256sum <"$CD/t.dtc")
CQ="SELECT (SELECT count(*) || ':' || sum(dur) FROM spans) AS s, (SELECT count(*) || ':' || sum(blocked) FROM sched) AS b"
cq() { DT_CACHE_DEBUG=1 "$DTREPORT" sql "$CD/t.dtc" "$CQ" 2>"$T/c.err" | tail -n +2 | tr -d '\r'; }
r0=$(DT_CACHE=off "$DTREPORT" sql "$CD/t.dtc" "$CQ" 2>/dev/null | tail -n +2 | tr -d '\r')
if [ -e "$CD/t.dtc.spans.cache" ] || [ -e "$CD/t.dtc.sched.cache" ] || [ -z "$r0" ]; then
	fail cache-off "DT_CACHE=off wrote a cache, or no answer ('$r0')"
else
	pass cache-off
fi
r1=$(cq)
grep -q 'spans: written' "$T/c.err" && grep -q 'sched: written' "$T/c.err" &&
	[ -f "$CD/t.dtc.spans.cache" ] && [ -f "$CD/t.dtc.sched.cache" ] && [ "$r1" = "$r0" ] && ! san "$T/c.err" &&
	pass cache-written || fail cache-written "'$r1' (uncached '$r0'): $(head -c 300 "$T/c.err")"
r2=$(cq)
grep -q 'spans: hit' "$T/c.err" && grep -q 'sched: hit' "$T/c.err" && ! grep -q written "$T/c.err" &&
	[ "$r2" = "$r0" ] && ! san "$T/c.err" && pass cache-second-run-hit ||
	fail cache-second-run-hit "'$r2' (uncached '$r0'): $(head -c 300 "$T/c.err")"
# the capture changed (its time here): stale, computed again, rewritten
touch -d '1 minute ago' "$CD/t.dtc"
m1=$(stat -c %y "$CD/t.dtc")
r3=$(cq)
grep -q 'spans: miss: .*stale' "$T/c.err" && grep -q 'sched: written' "$T/c.err" && [ "$r3" = "$r0" ] &&
	pass cache-stale-rebuilt || fail cache-stale-rebuilt "'$r3': $(head -c 300 "$T/c.err")"
r3=$(cq)
grep -q 'sched: hit' "$T/c.err" && [ "$r3" = "$r0" ] && pass cache-rebuilt-hit ||
	fail cache-rebuilt-hit "$(head -c 300 "$T/c.err")"
# a file of the user's where a cache would go is left as it is, a link
# is not followed, and the tables are right all the same
rm -f "$CD/t.dtc.spans.cache" "$CD/t.dtc.sched.cache"
echo precious >"$CD/t.dtc.spans.cache"
ln -s "$T/victim" "$CD/t.dtc.sched.cache"
r4=$(cq)
[ "$(cat "$CD/t.dtc.spans.cache")" = precious ] && [ -L "$CD/t.dtc.sched.cache" ] && [ ! -e "$T/victim" ] &&
	[ "$r4" = "$r0" ] && ! san "$T/c.err" && pass cache-user-files-kept ||
	fail cache-user-files-kept "'$r4': $(head -c 300 "$T/c.err")"
# another user's cache is neither read nor replaced
rm -f "$CD/t.dtc.spans.cache" "$CD/t.dtc.sched.cache"
cq >/dev/null
chown nobody "$CD/t.dtc.spans.cache"
r5=$(cq)
grep -q "spans: miss: .*not the caller's" "$T/c.err" && [ "$(stat -c %U "$CD/t.dtc.spans.cache")" = nobody ] &&
	[ "$r5" = "$r0" ] && pass cache-foreign-owner-ignored ||
	fail cache-foreign-owner-ignored "'$r5': $(head -c 300 "$T/c.err")"
# hostile caches: damaged and forged copies, under ASan/UBSan
rm -f "$CD/t.dtc.spans.cache" "$CD/t.dtc.sched.cache"
cq >/dev/null
"$B/tests/offcpu/cachefuzz" "$CD/t.dtc" 150 "$(date +%s)" >"$T/cf.out" 2>"$T/cf.err"
grep -E '^(PASS|FAIL|#)' "$T/cf.out"
san "$T/cf.err" && fail cache-fuzz "$(grep -m3 -E 'Sanitizer|runtime error' "$T/cf.err")"
# and the capture itself is never written
[ "$(sha256sum <"$CD/t.dtc")" = "$sum0" ] && [ "$(stat -c %y "$CD/t.dtc")" = "$m1" ] &&
	pass cache-capture-untouched || fail cache-capture-untouched "the capture changed"

# ---- heatmap: the profile samples by second and offset, in Chromium
"$DTREPORT" heatmap --rows 20 -o "$T/h.svg" "$T/t.dtc" 2>"$T/hm.err"
ns=$(sql "SELECT count(*) FROM events WHERE probe_name LIKE 'profile:%'")
n0=$(sql "SELECT count(*) FROM events WHERE probe_name LIKE 'profile:%'
	  AND ts - (SELECT start_ns FROM capture) < 1000000000")
if [ -s "$T/h.svg" ] && ! san "$T/hm.err"; then
	python3 "$(dirname "$0")/heattest.py" "$T/h.svg" "$ns" "$n0" 20 ||
		echo "# heattest.py failed"
else
	fail heatmap-svg "$(head -c 300 "$T/hm.err")"
fi

# blame and heatmap in dtsh: the same output as dtreport's
printf 'blame --tid %s --folded -o %s\nheatmap --rows 20 -o %s\n' "$RT" "$T/shbl.folded" "$T/shh.svg" |
	"$DTSH" "$T/t.dtc" >"$T/sh2.out" 2>"$T/sh2.err"
cmp -s "$T/shbl.folded" "$T/bl.folded" && cmp -s "$T/shh.svg" "$T/h.svg" && ! san "$T/sh2.err" &&
	pass dtsh-blame-heatmap || fail dtsh-blame-heatmap "$(head -c 300 "$T/sh2.err")"

# ---- the time analyses on the scan pool: the same bytes at --threads 1, 2
# and 7 on a real capture.  Recorded again with a flush every 20 ms so that
# it has several blocks: the workers' runs
# then cut the truth's threads' waits, pairs and wakeups between them.
"$DTREC" --source perf -q --offcpu -e profile:hz:997 -e 'syscall:*:entry' -e 'syscall:*:return' \
	--flush-interval 20ms -b 16m -o "$T/m.dtc" -- taskset -c 0 "$TRUTH" "$ITERS" \
	>"$T/m.out" 2>"$T/m.err" || fail record-many-blocks "$(head -c 300 "$T/m.err")"
nblk=$(python3 - "$T/m.dtc" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
off, n = 32, 0
while off + 32 <= len(b):
    typ, flags, xlen, clen = b[off:off + 4], *struct.unpack_from("<III", b, off + 4)
    n += typ == b"EVNT"
    off += 32 + xlen + clen
print(n)
PY
)
# (how many depends on how busy the host is; two already split the work)
[ "${nblk:-0}" -ge 2 ] && pass record-many-blocks ||
	fail record-many-blocks "${nblk:-no} event blocks in a capture flushed every 20 ms"
echo "# the capture flushed every 20 ms has $nblk event blocks"
MT=$("$DTREPORT" sql --csv "$T/m.dtc" "SELECT tid FROM events WHERE comm = 'reader' LIMIT 1" \
	2>/dev/null | tail -n +2 | tr -d '\r')
samen() {	# samen NAME ARGS...: dtreport ARGS at --threads 1, 2, 7, byte for byte
	local name=$1 bad="" rc n; shift
	for n in 1 2 7; do
		DT_CACHE=off "$DTREPORT" "$@" --threads $n "$T/m.dtc" >"$T/$name.$n" 2>"$T/$name.$n.err"
		rc=$?
		if [ $rc -ne 0 ] || san "$T/$name.$n.err" || [ ! -s "$T/$name.$n" ]; then
			bad="$bad N=$n: status $rc $(head -c 200 "$T/$name.$n.err");"
		elif ! cmp -s "$T/$name.1" "$T/$name.$n"; then
			bad="$bad N=$n: output differs from N=1;"
		fi
	done
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}
samen threads-latency latency --json
samen threads-latency-tid latency --by tid
samen threads-syscalls syscalls --json
samen threads-offcpu flame --offcpu --folded
samen threads-offcpu-state flame --offcpu --state R --folded
samen threads-wakers flame --wakers --folded
samen threads-oncpu-offcpu flame --oncpu-offcpu --folded
samen threads-heatmap heatmap
samen threads-blame blame --tid "${MT:-1}" --folded
samen threads-blame-text blame --tid "${MT:-1}"
bad=""
for q in 'SELECT * FROM spans' 'SELECT * FROM sched'; do
	for n in 1 2 7; do
		DT_CACHE=off "$DTSH" -c "set threads $n" -c "$q" "$T/m.dtc" >"$T/tq.$n" 2>"$T/tq.err"
		rc=$?
		{ [ $rc -ne 0 ] || san "$T/tq.err" || [ ! -s "$T/tq.$n" ]; } &&
			bad="$bad $q N=$n: status $rc $(head -c 200 "$T/tq.err");"
		cmp -s "$T/tq.1" "$T/tq.$n" || bad="$bad $q: N=$n differs from N=1;"
	done
done
[ -z "$bad" ] && pass threads-sql-tables || fail threads-sql-tables "$bad"

# ---- what is not there is said, not guessed
"$DTREC" --source perf -q -o "$T/prof.dtc" -e profile:hz:97 -d 200ms 2>/dev/null
"$DTREPORT" flame --offcpu --folded "$T/prof.dtc" >/dev/null 2>"$T/e1"
rc=$?
[ $rc = 1 ] && grep -q 'record with dtrec --offcpu' "$T/e1" && pass offcpu-needs-sched ||
	fail offcpu-needs-sched "rc $rc: $(cat "$T/e1")"
"$DTREPORT" latency "$T/prof.dtc" >/dev/null 2>"$T/e2"
rc=$?
[ $rc = 1 ] && grep -q 'no entry and return probes' "$T/e2" && pass latency-needs-pairs ||
	fail latency-needs-pairs "rc $rc: $(cat "$T/e2")"
"$DTREPORT" flame --state S --folded "$T/t.dtc" >/dev/null 2>"$T/e3"
rc=$?
[ $rc = 2 ] && grep -q 'goes with --offcpu' "$T/e3" && pass state-needs-offcpu ||
	fail state-needs-offcpu "rc $rc: $(cat "$T/e3")"
"$DTREPORT" latency --hist linear:0 "$T/t.dtc" >/dev/null 2>"$T/e4"
[ $? = 2 ] && pass latency-bad-hist || fail latency-bad-hist "$(cat "$T/e4")"
"$DTREPORT" flame --offcpu --state Q --folded "$T/t.dtc" >/dev/null 2>"$T/e5"
[ $? = 2 ] && pass flame-bad-state || fail flame-bad-state "$(cat "$T/e5")"
# a sched_switch layout naming a slot past the ten an event has
"$B/tests/offcpu/badsched" "$T/bad.dtc" 2>"$T/e8" || fail badsched "$(cat "$T/e8")"
"$DTREPORT" flame --offcpu --folded "$T/bad.dtc" >/dev/null 2>"$T/e8"
rc=$?
[ $rc = 1 ] && grep -q 'no tracepoint:sched:sched_switch events with prev_pid' "$T/e8" &&
	! san "$T/e8" && pass offcpu-bad-slot || fail offcpu-bad-slot "rc $rc: $(head -c 300 "$T/e8")"
for e in "$T"/e[1-8]; do san "$e" && fail sanitizers "$(head -c 300 "$e")"; done
exit 0
