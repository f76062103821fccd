#!/bin/bash
# run.sh BUILD - the perf_event source on this host: real programs recorded
# at real speed with the ASan build of dtrec, checked through dtreport and
# capcheck.  Needs perf_event_open (root or CAP_PERFMON): when the kernel
# refuses it every test fails saying so; nothing here skips.
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/bin/dtreport DTSH=$B/asan/bin/dtsh
CAPCHECK=$B/tests/dtrec/capcheck SYSLOOP=$B/tests/perfsrc/sysloop HOT=$B/tests/perfsrc/hotloop
T=$(mktemp -d /tmp/perfsrc-test.XXXXXX)
chmod 755 "$T"
BG=()
trap 'for p in "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"	# pass, fail, rec
sanitizers_dtrec
# tracefs.c's parsers, fuzzed with this kernel's format files as seeds
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
"$B/tests/perfsrc/tpfuzz" /sys/kernel/tracing "$T/tpfuzz" 2>"$T/tpfuzz.err" ||
	fail tpfuzz "exit $?: $(tail -n 5 "$T/tpfuzz.err" | tr '\n' '|')"

# the ring wait over more than 64 rings, and the trace-flag bits named as
# the kernel names them (ringpoll.c)
"$B/tests/perfsrc/ringpoll" 2>"$T/ringpoll.err" ||
	fail ringpoll "exit $?: $(tail -n 5 "$T/ringpoll.err" | tr '\n' '|')"
"$B/tests/perfsrc/ringpoll" --flags >"$T/flags.out" 2>"$T/flags.err" ||
	fail ringpoll-flags "exit $?: $(tail -n 5 "$T/flags.err" | tr '\n' '|')"
grep -v '^#' "$T/flags.out"
kh=$(ls -1 /usr/src/linux-headers-*-common/include/linux/trace_events.h 2>/dev/null | sort -V | tail -n1)
if [ -z "$kh" ]; then
	fail trace-flags-kernel "no /usr/src/linux-headers-*-common/include/linux/trace_events.h (scripts/install-deps.sh installs the kernel headers)"
else
	sed -n 's/^# flag //p' "$T/flags.out" | sort >"$T/flags.ours"
	grep -E '^[[:space:]]*TRACE_FLAG_[A-Z_]+[[:space:]]*=[[:space:]]*0x[0-9a-fA-F]+' "$kh" |
		while read -r n _ v; do printf '%s 0x%02x\n' "$n" "$((${v%,}))"; done | sort >"$T/flags.kernel"
	if [ -s "$T/flags.ours" ] && cmp -s "$T/flags.ours" "$T/flags.kernel"; then
		pass trace-flags-kernel
	else
		fail trace-flags-kernel "ours and $kh differ: $(diff "$T/flags.ours" "$T/flags.kernel" | grep '^[<>]' | tr '\n' '|')"
	fi
fi

sanitizer_clean() {	# name file: the report's first frames make the failure line
	if grep -q Sanitizer "$2"; then
		fail "$1" "sanitizer: $(grep -m1 Sanitizer "$2") at $(grep -m8 -E '^ +#[0-9]' "$2" |
			sed 's/^ *#[0-9]* 0x[0-9a-f]* in //' | tr '\n' '|')"
		return 1
	fi
	return 0
}
sql() { "$DTREPORT" sql "$@" 2>>"$T/sql.err" | tr -d '\r'; }
# the text of a char[N] argument, from its slots as SQL prints them
slots_text() { python3 -c '
import struct, sys
b = b"".join(struct.pack("<q", int(v)) for v in sys.argv[1:] if v != "")
print(b.split(b"\0")[0].decode("utf-8", "replace"))' "$@"; }

# ---- the kernel lets us record at all
if rec allowed -o "$T/allowed.dtc" -e profile:hz:97 -d 200ms; then
	pass perf-allowed
else
	fail perf-allowed "perf_event_open refused here: $(head -c 300 "$T/allowed.err")"
	echo "# every test below needs perf_event_open: run make check as root"
fi
[ "$(stat -c %a "$T/allowed.dtc" 2>/dev/null)" = 600 ] && pass capture-mode-0600 ||
	fail capture-mode-0600 "mode $(stat -c %a "$T/allowed.dtc" 2>/dev/null)"

# ---- the catalog: any tracepoint, syscalls by name
"$DTREC" --source perf -l 'tracepoint:signal:*' >"$T/list" 2>&1
grep -qx 'tracepoint:signal:signal_generate' "$T/list" && pass list-any-tracepoint ||
	fail list-any-tracepoint "$(head -c 200 "$T/list")"
"$DTREC" --source perf -l 'syscall:getppid:*' >"$T/list" 2>&1
[ "$(sort "$T/list" | tr '\n' ' ')" = "syscall:getppid:entry syscall:getppid:return " ] &&
	pass list-syscalls || fail list-syscalls "$(tr '\n' ' ' <"$T/list")"
"$DTREC" --source perf -o "$T/x.dtc" -e tracepoint:sched:sched_proces_exec -d 1s 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "did you mean 'tracepoint:sched:sched_process_exec'" "$T/err" &&
	pass unknown-tracepoint-suggests || fail unknown-tracepoint-suggests "rc $rc: $(cat "$T/err")"
[ ! -e "$T/x.dtc" ] && pass unknown-tracepoint-no-file || fail unknown-tracepoint-no-file "file left"
if [ -e /sys/bus/event_source/devices/kprobe ]; then
	rec kprobe -o "$T/k.dtc" -e kprobe:vfs_read:entry -d 300ms && pass kprobe-pmu ||
		fail kprobe-pmu "$(cat "$T/kprobe.err")"
else
	"$DTREC" --source perf -o "$T/k.dtc" -e kprobe:vfs_read:entry -d 1s 2>"$T/err"
	rc=$?
	[ $rc = 1 ] && grep -q 'no kprobe PMU' "$T/err" && pass kprobe-no-pmu-error ||
		fail kprobe-no-pmu-error "rc $rc: $(cat "$T/err")"
fi

# ---- a program with known hot functions, user stacks through frame pointers
if rec hot -o "$T/hot.dtc" -e profile:hz:997 -u -- "$HOT" 3; then
	"$DTREPORT" flame "$T/hot.dtc" --folded --comm hotloop >"$T/hot.folded" 2>"$T/hot.ferr"
	python3 - "$T/hot.folded" >"$T/hot.res" <<'EOF'
import sys
tot = {"hot_heavy": 0, "hot_medium": 0, "hot_light": 0}
chain = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    for f in tot:
        if f in frames:
            tot[f] += int(n)
    if any(";".join(frames[i:i + 4]) == "main;work;hot_heavy;spin" for i in range(len(frames))):
        chain += int(n)
s = sum(tot.values())
print(s, chain, *(round(100.0 * tot[f] / s, 1) if s else 0 for f in ("hot_heavy", "hot_medium", "hot_light")))
EOF
	read -r n chain heavy medium light <"$T/hot.res"
	# 60/30/10 by construction; +-8 points covers 3 s of 997 Hz sampling and
	# the host's frequency scaling
	if [ "${n:-0}" -gt 100 ] && python3 -c "import sys; h,m,l=map(float,sys.argv[1:]); sys.exit(not (52<=h<=68 and 22<=m<=38 and 4<=l<=18))" "$heavy" "$medium" "$light"; then
		pass hot-shares
	else
		fail hot-shares "samples $n, heavy $heavy medium $medium light $light (want 60/30/10 +-8)"
	fi
	[ "${chain:-0}" -gt 0 ] && [ "$chain" -ge $(( n / 2 )) ] && pass hot-call-chain ||
		fail hot-call-chain "main;work;hot_heavy;spin in $chain of $n samples"
else
	fail hot-shares "recording failed: $(head -c 300 "$T/hot.err")"
	fail hot-call-chain "no recording"
fi
sanitizer_clean hot-asan "$T/hot.err" && pass hot-asan

# ---- a process that is gone before its samples are read still gets names:
# its mappings come from the kernel's MMAP2 records, not from /proc
if rec short -o "$T/short.dtc" -e profile:hz:997 -u -- "$HOT" 0.3; then
	"$DTREPORT" flame "$T/short.dtc" --folded --comm hotloop >"$T/short.folded" 2>>"$T/short.ferr"
	n=$(awk '{s += $NF} END {print s + 0}' "$T/short.folded")
	named=$(grep -E 'hot_(heavy|medium|light)' "$T/short.folded" | awk '{s += $NF} END {print s + 0}')
	[ "$n" -ge 10 ] && [ $((named * 10)) -ge $((n * 9)) ] && pass short-lived-symbolized ||
		fail short-lived-symbolized "$named of $n samples name a hot_ function"
else
	fail short-lived-symbolized "recording failed: $(head -c 300 "$T/short.err")"
fi

# ---- exact system call counts, parent and forked child
N=12345 M=678
for mode in raw pertp; do
	if [ $mode = pertp ]; then export DTREC_PERF_NO_RAW_SYSCALLS=1; fi
	# rings large enough that nothing is dropped, even by the ASan build
	if rec sys$mode -o "$T/sys$mode.dtc" -b 16M -e 'syscall:*:entry' -e syscall:getppid:return -- "$SYSLOOP" $N $M; then
		got=$(sql "$T/sys$mode.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe
			WHERE p.name = 'syscall:getppid:entry' AND e.comm = 'sysloop'" | tail -n1)
		[ "$got" = $((N + M)) ] && pass syscall-count-exact-$mode ||
			fail syscall-count-exact-$mode "getppid entries $got, want $((N + M))"
		got=$(sql "$T/sys$mode.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe
			WHERE p.name = 'syscall:getppid:entry' GROUP BY e.pid ORDER BY 1" | tail -n +2 | tr '\n' ' ')
		[ "$got" = "$M $N " ] && pass syscall-count-per-process-$mode ||
			fail syscall-count-per-process-$mode "per pid '$got', want '$M $N '"
		# the return event carries the return value: getppid's is dtrec's pid
		# for the parent (the child's parent is the parent)
		got=$(sql "$T/sys$mode.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe
			WHERE p.name = 'syscall:getppid:return' AND e.retval > 1 AND e.errno = 0" | tail -n1)
		[ "$got" = $((N + M)) ] && pass syscall-return-values-$mode ||
			fail syscall-return-values-$mode "$got returns with a pid value, want $((N + M))"
		"$CAPCHECK" "$T/sys$mode.dtc" >"$T/cc" 2>&1
		ev=$(awk '$1=="events"{print $2}' "$T/cc"); kr=$(awk '$1=="kernel_read"{print $2}' "$T/cc")
		kp=$(awk '$1=="kernel_produced"{print $2}' "$T/cc"); kd=$(awk '$1=="kernel_dropped"{print $2}' "$T/cc")
		[ -n "$ev" ] && [ "$ev" = "$kr" ] && [ "$kp" = $((kr + kd)) ] && pass syscall-accounting-$mode ||
			fail syscall-accounting-$mode "events $ev read $kr produced $kp dropped $kd"
	else
		for t in count-exact count-per-process return-values accounting; do
			fail syscall-$t-$mode "recording failed: $(head -c 300 "$T/sys$mode.err")"
		done
	fi
	unset DTREC_PERF_NO_RAW_SYSCALLS
done

# ---- any tracepoint, decoded: exec's filename, signal_generate's fields
cp "$SYSLOOP" "$T/execme"
if rec exec -o "$T/exec.dtc" -e tracepoint:sched:sched_process_exec -- sh -c "$T/execme 1"; then
	found=
	while IFS=, read -r a0 a1 a2 a3 a4 a5 a6 a7 pid; do
		[ "$(slots_text "$a0" "$a1" "$a2" "$a3" "$a4" "$a5" "$a6" "$a7")" = "$T/execme" ] && found=$pid
	done < <(sql "$T/exec.dtc" "SELECT arg0,arg1,arg2,arg3,arg4,arg5,arg6,arg7,arg8 FROM events" | tail -n +2)
	[ -n "$found" ] && [ "$found" -gt 0 ] && pass exec-filename ||
		fail exec-filename "no exec event names $T/execme: $(sql "$T/exec.dtc" 'SELECT * FROM events' | head -c 300)"
	args=$(sql "$T/exec.dtc" "SELECT a.name || ':' || a.type || ':' || a.slot FROM probe_args a
		JOIN probes p ON p.id = a.probe WHERE p.name LIKE '%sched_process_exec' ORDER BY a.idx" | tail -n +2 | tr '\n' ' ')
	[ "$args" = "filename:char[64]:0 pid:pid_t:8 old_pid:pid_t:9 " ] && pass exec-arg-table ||
		fail exec-arg-table "$args"
else
	fail exec-filename "recording failed: $(head -c 300 "$T/exec.err")"
	fail exec-arg-table "no recording"
fi
if rec sig -o "$T/sig.dtc" -e tracepoint:signal:signal_generate -- sh -c 'trap "" USR1; kill -USR1 $$'; then
	row=$(sql "$T/sig.dtc" "SELECT e.arg0, e.arg3, e.arg4 FROM events e
		WHERE e.arg0 = 10" | tail -n +2 | head -n1)
	IFS=, read -r signo c0 c1 <<<"$row"
	[ "$signo" = 10 ] && [ "$(slots_text "$c0" "$c1")" = sh ] && pass signal-generate-decoded ||
		fail signal-generate-decoded "row '$row' (want sig 10, comm sh)"
else
	fail signal-generate-decoded "recording failed: $(head -c 300 "$T/sig.err")"
fi

# ---- targets: a command and its descendants; -p; never dtrec itself
cp "$SYSLOOP" "$T/busyloop"
"$T/busyloop" 2000000000 &
BUSY=$!
BG+=("$BUSY")
if rec cmd -o "$T/cmd.dtc" -e profile:hz:997 -e 'syscall:getppid:entry' -- "$SYSLOOP" 300000 5000; then
	other=$(sql "$T/cmd.dtc" "SELECT count(*) FROM events WHERE comm <> 'sysloop'" | tail -n1)
	busy=$(sql "$T/cmd.dtc" "SELECT count(*) FROM events WHERE pid = $BUSY" | tail -n1)
	[ "$other" = 0 ] && [ "$busy" = 0 ] && pass command-only ||
		fail command-only "$other events of other commands, $busy of the busy loop"
	npid=$(sql "$T/cmd.dtc" "SELECT count(DISTINCT pid) FROM events" | tail -n1)
	[ "$npid" = 2 ] && pass command-descendants || fail command-descendants "$npid processes, want 2"
else
	fail command-only "recording failed: $(head -c 300 "$T/cmd.err")"
	fail command-descendants "no recording"
fi
if rec pid -o "$T/pid.dtc" -p "$BUSY" -e profile:hz:997 -e 'syscall:getppid:entry' -d 1s; then
	got=$(sql "$T/pid.dtc" "SELECT count(*), sum(pid = $BUSY) FROM events" | tail -n1)
	IFS=, read -r all mine <<<"$got"
	[ "${all:-0}" -gt 100 ] && [ "$all" = "$mine" ] && pass pid-only ||
		fail pid-only "$got (events, of them the target's)"
else
	fail pid-only "recording failed: $(head -c 300 "$T/pid.err")"
fi
"$DTREC" --source perf -q -o "$T/self.dtc" -e 'syscall:*:entry' -e profile:hz:997 -d 1500ms 2>"$T/self.err" &
SELF=$!
wait $SELF
got=$(sql "$T/self.dtc" "SELECT count(*), sum(pid = $SELF) FROM events" | tail -n1)
IFS=, read -r all mine <<<"$got"
[ "${all:-0}" -gt 0 ] && [ "$mine" = 0 ] && pass never-self || fail never-self "$got (events, dtrec's own)"

# the capture takes its name once recording runs: wait for that
started() {	# file pid
	for _ in $(seq 100); do
		[ -e "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ---- ends cleanly on signals, and a small ring counts its drops
for sig in INT TERM; do
	"$DTREC" --source perf -q -o "$T/s$sig.dtc" -e profile:hz:997 -e 'syscall:*:entry' 2>"$T/s$sig.err" &
	p=$!
	started "$T/s$sig.dtc" $p
	sleep 1
	kill -$sig $p
	wait $p
	rc=$?
	"$CAPCHECK" "$T/s$sig.dtc" >"$T/cc" 2>&1
	warn=$(sed -n 's/^warning //p' "$T/cc")
	ev=$(awk '$1=="events"{print $2}' "$T/cc"); kr=$(awk '$1=="kernel_read"{print $2}' "$T/cc")
	[ $rc = 0 ] && [ "$warn" = none ] && [ "${ev:-0}" -gt 0 ] && [ "$ev" = "$kr" ] && pass sig$sig-finishes ||
		fail sig$sig-finishes "rc $rc, warning '$warn', events $ev, read $kr"
done
if rec drops -o "$T/drops.dtc" -b 8k -e 'syscall:getppid:entry' -- "$SYSLOOP" 3000000; then
	"$CAPCHECK" "$T/drops.dtc" >"$T/cc" 2>&1
	ev=$(awk '$1=="events"{print $2}' "$T/cc"); kr=$(awk '$1=="kernel_read"{print $2}' "$T/cc")
	kd=$(awk '$1=="kernel_dropped"{print $2}' "$T/cc")
	[ "${kd:-0}" -gt 0 ] && [ "$ev" = "$kr" ] && [ $((kr + kd)) -eq 3000000 ] && pass small-ring-drops-counted ||
		fail small-ring-drops-counted "events $ev read $kr dropped $kd (want drops, read+dropped = 3000000)"
	"$DTREPORT" stats "$T/drops.dtc" >"$T/st" 2>&1
	grep -Eq 'DROP' "$T/st" && pass small-ring-drops-in-stats || fail small-ring-drops-in-stats "$(head -c 300 "$T/st")"
else
	fail small-ring-drops-counted "recording failed: $(head -c 300 "$T/drops.err")"
	fail small-ring-drops-in-stats "no recording"
fi

# ---- nothing the user owns is destroyed
cp "$T/hot.dtc" "$T/precious.dtc" 2>/dev/null || cp "$T/allowed.dtc" "$T/precious.dtc"
cp "$T/precious.dtc" "$T/precious.orig"
"$DTREC" --source perf -q -o "$T/precious.dtc" -e profile:hz:997 -- "$T/nonexistent" 2>"$T/err"
rc=$?
[ $rc = 127 ] && cmp -s "$T/precious.dtc" "$T/precious.orig" && pass failed-command-keeps-capture ||
	fail failed-command-keeps-capture "rc $rc, capture $(cmp "$T/precious.dtc" "$T/precious.orig" 2>&1)"
"$DTREC" --source perf -q -o "$T/precious.dtc" -e tracepoint:nosuch:probe -d 1s 2>"$T/err"
rc=$?
[ $rc = 1 ] && cmp -s "$T/precious.dtc" "$T/precious.orig" && pass bad-probe-keeps-capture ||
	fail bad-probe-keeps-capture "rc $rc"
ls -a "$T" | grep -q '^\.precious' && fail no-temp-left "$(ls -a "$T" | grep '^\.')" || pass no-temp-left
ln -s precious.dtc "$T/link.dtc"
rec link -o "$T/link.dtc" -e profile:hz:97 -d 200ms
[ -L "$T/link.dtc" ] && ! cmp -s "$T/precious.dtc" "$T/precious.orig" && "$CAPCHECK" "$T/precious.dtc" >/dev/null 2>&1 &&
	pass symlink-output-kept || fail symlink-output-kept "the link was replaced, or its target not written"
rec devnull -o /dev/null -e profile:hz:97 -d 200ms
[ -c /dev/null ] && pass device-output-in-place || fail device-output-in-place "/dev/null is no longer a device"

# ---- SIGKILL loses at most the last flush interval
"$DTREC" --source perf -q --flush-interval 1s -o "$T/kill.dtc" -e profile:hz:997 2>"$T/kill.err" &
p=$!
started "$T/kill.dtc" $p
sleep 2.6
killed=$(python3 -c 'import os, sys, time; t = time.monotonic_ns(); os.kill(int(sys.argv[1]), 9); print(t)' $p)
wait $p 2>/dev/null
last=$(sql --partial "$T/kill.dtc" "SELECT max(ts) FROM events" | tail -n1)
if [ -n "$last" ] && [ "$last" -gt 0 ] 2>/dev/null; then
	gap=$(( (killed - last) / 1000000 ))
	# one interval, plus scheduling slack on a loaded machine
	[ $gap -le 1800 ] && pass sigkill-loses-one-interval ||
		fail sigkill-loses-one-interval "the last event kept is ${gap} ms before the kill (interval 1 s)"
else
	fail sigkill-loses-one-interval "no event survived: $(head -c 300 "$T/sql.err")"
fi

# ---- the summary comes after the footer: a closed stderr pipe costs nothing
"$DTREC" --source perf -o "$T/pipe.dtc" -e profile:hz:997 -d 1s 2>&1 | true
"$CAPCHECK" "$T/pipe.dtc" >"$T/cc" 2>&1
[ "$(sed -n 's/^warning //p' "$T/cc")" = none ] && pass closed-pipe-capture-complete ||
	fail closed-pipe-capture-complete "$(head -c 300 "$T/cc")"
rec summary -o "$T/sum.dtc" -e profile:hz:97 -d 200ms
"$DTREC" --source perf -o "$T/sum.dtc" -e profile:hz:97 -d 200ms 2>"$T/sum.err"
grep -q 'from the perf source' "$T/sum.err" && pass summary-names-source ||
	fail summary-names-source "$(cat "$T/sum.err")"

# ---- privileges: a user without CAP_PERFMON gets the reason, with the sysctl
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	chmod 1777 "$T"
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$B/bin/dtrec" --source perf -q -o "$T/nobody.dtc" -e profile:hz:997 -d 200ms 2>"$T/err"
	rc=$?
	[ $rc = 1 ] && grep -q 'perf_event_paranoid' "$T/err" && pass unprivileged-message ||
		fail unprivileged-message "rc $rc: $(head -c 300 "$T/err")"
	chmod 755 "$T"
else
	fail unprivileged-message "no user nobody or no setpriv"
fi

# ---- arguments by name on a real recording (issue 23 item 1): the probe's
# view gives AT_FDCWD as -100, errno by name, sched_switch's fields by name,
# and the events column describe names for prev_pid holds the same values
ARGPROG=$B/tests/perfsrc/argprog
for mode in raw pertp; do
	if [ $mode = pertp ]; then export DTREC_PERF_NO_RAW_SYSCALLS=1; fi
	if rec args$mode -o "$T/args$mode.dtc" -b 4M -e tracepoint:sched:sched_switch \
		-e syscall:openat:entry -e syscall:openat:return -- "$ARGPROG" 7; then
		A=$T/args$mode.dtc
		got=$(sql "$A" 'SELECT count(*) FROM "syscall:openat:entry"
			WHERE comm = '"'argprog'"' AND dfd = -100 AND flags & 65536' | tail -n1)
		[ "$got" = 7 ] && pass args-at-fdcwd-$mode || fail args-at-fdcwd-$mode "$got openat(-100, O_DIRECTORY), want 7"
		got=$(sql "$A" 'SELECT count(*) FROM "syscall:openat:return"
			WHERE comm = '"'argprog'"' AND errno_name = '"'ENOTDIR'"' AND retval = -20' | tail -n1)
		[ "$got" = 7 ] && pass args-errno-name-$mode || fail args-errno-name-$mode "$got ENOTDIR returns, want 7"
		pid=$(sql "$A" "SELECT DISTINCT pid FROM events WHERE comm = 'argprog'" | tail -n +2)
		got=$(sql "$A" 'SELECT count(*) FROM "tracepoint:sched:sched_switch"
			WHERE prev_comm = '"'argprog'"' AND prev_pid = '"${pid:-0}" | tail -n1)
		[ -n "$pid" ] && [ "${got:-0}" -ge 7 ] && pass args-switch-by-name-$mode ||
			fail args-switch-by-name-$mode "pid '$pid': $got switches away from argprog, want >= 7"
		col=$("$DTSH" -c 'describe tracepoint:sched:sched_switch' "$A" 2>>"$T/args$mode.err" |
			awk '$1 == "prev_pid" { print $3 }')
		got=$(sql "$A" "SELECT count(*) FROM events WHERE probe_name = 'tracepoint:sched:sched_switch'
			AND ${col:-arg1} = ${pid:-0}" | tail -n1)
		[ -n "$col" ] && [ "$got" = "$(sql "$A" 'SELECT count(*) FROM "tracepoint:sched:sched_switch"
			WHERE prev_pid = '"${pid:-0}" | tail -n1)" ] && pass args-describe-agrees-$mode ||
			fail args-describe-agrees-$mode "describe says prev_pid is '$col': $got rows there"
	else
		fail args-at-fdcwd-$mode "recording failed: $(head -c 300 "$T/args$mode.err")"
	fi
	unset DTREC_PERF_NO_RAW_SYSCALLS
done
# dtrec -l -v lists the fields as describe and the view name them
"$DTREC" --source perf -l -v tracepoint:sched:sched_switch >"$T/lv.out" 2>"$T/lv.err"
"$DTSH" -c 'describe tracepoint:sched:sched_switch' "$T/argsraw.dtc" 2>>"$T/lv.err" |
	sed -n '/fields by name/,$p' >"$T/lv.describe"
cols=$(awk '/^  column/ { on = 1; next } on && NF >= 3 { printf "%s%s", sep, $1; sep = "," }' "$T/lv.out")
got=$(sql "$T/argsraw.dtc" "SELECT $cols FROM \"tracepoint:sched:sched_switch\" LIMIT 1" | head -1)
if grep -Eq '^  prev_pid +pid_t +arg[0-9]+ as int32$' "$T/lv.out" &&
   diff <(sed -n '/fields by name/,$p' "$T/lv.out") "$T/lv.describe" >/dev/null && [ "$got" = "$cols" ]; then
	pass list-v-fields
else
	fail list-v-fields "$(head -c 300 "$T/lv.out" "$T/lv.err") / view header '$got'"
fi

# ---- dtsh's live mode lists and records through the same source
"$DTSH" -c 'probes syscall:getppid:*' >"$T/dtsh.out" 2>"$T/dtsh.err"
grep -q 'syscall:getppid:entry' "$T/dtsh.out" && pass dtsh-live-probes ||
	fail dtsh-live-probes "$(head -c 300 "$T/dtsh.err")"
sanitizer_clean dtsh-asan "$T/dtsh.err" && pass dtsh-asan
for f in "$T"/*.err; do sanitizer_clean "asan-$(basename "$f" .err)" "$f" || break; done && pass no-sanitizer-reports
exit 0
