#!/bin/bash
# host.sh DTREC CAPCHECK FAKEDT_SO MANPAGE - dtrec's host-side tests: the
# command line and its error messages (ASan build), and the recording loop
# against tests/dtrec/fakedt.c, an LD_PRELOAD stand-in for /dev/dt.
set -u
DTREC=$1 CAPCHECK=$2 FAKE=$3 MAN=$4
T=$(mktemp -d /tmp/dtrec-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
sanitizers_dtrec
# expect NAME RC 'stderr regex' -- cmd...: exit status and one-line message
expect() {
	local name=$1 want=$2 re=$3; shift 4
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -ne "$want" ]; then
		fail "$name" "exit $rc, wanted $want: $(head -c 300 "$T/err")"
	elif [ -n "$re" ] && ! head -n1 "$T/err" | grep -Eq -- "$re"; then
		fail "$name" "first stderr line '$(head -n1 "$T/err")' does not match '$re'"
	elif grep -q 'Sanitizer' "$T/err"; then
		fail "$name" "sanitizer report: $(grep -m1 Sanitizer "$T/err")"
	else
		pass "$name"
	fi
}
fake() { LD_PRELOAD=$FAKE "$@"; }

# ---- command line
"$DTREC" --help >"$T/help" 2>&1 && [ -s "$T/help" ] && pass help || fail help "--help failed"
missing=
for o in l v o e k u d b q h; do
	grep -q -- "-$o" "$T/help" || missing="$missing help:-$o"
	[ "$o" = h ] || grep -Eq "^\.(Fl|Op Fl|It Fl) [a-z]*$o" "$MAN" || missing="$missing man:-$o"
done
[ -z "$missing" ] && pass help-matches-man || fail help-matches-man "missing:$missing"
if command -v mandoc >/dev/null; then
	lint=$(mandoc -Tlint -Wwarning "$MAN" 2>&1)
	[ -z "$lint" ] && pass man-lint || fail man-lint "$lint"
else
	fail man-lint "mandoc missing (scripts/install-deps.sh)"
fi

if [ -e /dev/dt ]; then
	fail no-device "/dev/dt exists on this host: cannot test the missing-device message"
else
	expect no-device 1 '^dtrec: /dev/dt: no such device: is the dt module loaded\? \(see dt\(4\)\)$' -- \
		"$DTREC" --source dt -l
	expect no-device-record 1 '^dtrec: /dev/dt: no such device' -- \
		"$DTREC" --source dt -o "$T/a.dtc" -e profile:hz:97
	[ -e "$T/a.dtc" ] && fail no-device-no-file "left an empty $T/a.dtc" || pass no-device-no-file
fi
expect bad-duration 2 "^dtrec: bad duration '10x'" -- "$DTREC" -o "$T/a.dtc" -e x -d 10x
expect negative-duration 2 "^dtrec: bad duration '-5'" -- "$DTREC" -o "$T/a.dtc" -e x -d -5
expect unknown-option 2 '^dtrec: unknown option -Z$' -- "$DTREC" -Z
expect unknown-long-option 2 '^dtrec: unknown option --bogus$' -- "$DTREC" --bogus
expect missing-argument 2 '^dtrec: -o needs an argument$' -- "$DTREC" -o
expect no-probe 2 '^dtrec: no probe' -- "$DTREC" -o "$T/a.dtc"
expect no-output 2 '^dtrec: no output file' -- "$DTREC" -e profile:hz:97
expect bad-ringsize 2 "^dtrec: bad ring size '3000'" -- "$DTREC" -o "$T/a.dtc" -e x -b 3000
expect unwritable-output 1 "^dtrec: $T/nodir/a.dtc: No such file or directory$" -- \
	"$DTREC" -o "$T/nodir/a.dtc" -e profile:hz:97
expect output-is-directory 1 "^dtrec: $T: Is a directory$" -- "$DTREC" -o "$T" -e profile:hz:97

# ---- against the stand-in device
expect fake-list 0 '' -- fake "$DTREC" -l 'syscall:*'
grep -qx 'syscall:read:entry' "$T/out" && ! grep -q profile "$T/out" &&
	pass fake-list-glob || fail fake-list-glob "$(tr '\n' ' ' <"$T/out")"
ABI=$(sed -n 's/^#define DT_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' include/dt_abi.h)
expect abi-mismatch 1 "^dtrec: /dev/dt: ABI version $((ABI + 1)), but this tool speaks version $ABI" -- \
	env FAKEDT_VERSION=$((ABI + 1)) LD_PRELOAD="$FAKE" "$DTREC" -l
expect unknown-probe 1 "^dtrec: unknown probe 'syscal:read:entry': did you mean 'syscall:read:entry'\?" -- \
	fake "$DTREC" -o "$T/a.dtc" -e syscal:read:entry
expect unknown-kprobe 1 "^dtrec: kprobe:nosuchfn:entry: no such kernel function" -- \
	fake "$DTREC" -o "$T/a.dtc" -e kprobe:nosuchfn:entry
expect period-too-short 1 "^dtrec: profile:hz:1000000: period 1000 ns is below the minimum" -- \
	fake "$DTREC" -o "$T/a.dtc" -e profile:hz:1000000

expect two-rates 1 "^dtrec: profile:hz:997: the profile probe is already enabled with another rate" -- \
	fake "$DTREC" -o "$T/a.dtc" -e profile:hz:97 -e profile:hz:997
expect ringsize-ok 0 '' -- fake "$DTREC" -q -o "$T/b.dtc" -e profile:hz:97 -b 64k -d 200ms

# conservation: every event the "kernel" says it handed out is in the file
check_cap() {	# name file [filtered]: every event left out by the kernel as not the targets'
	local name=$1 f=$2 filtered=${3:-}
	if ! "$CAPCHECK" "$f" >"$T/cc" 2>&1; then
		fail "$name" "capture does not open: $(head -n1 "$T/cc")"; return 1
	fi
	local ev kr warn
	ev=$(awk '$1=="events"{print $2}' "$T/cc")
	kr=$(awk '$1=="kernel_read"{print $2}' "$T/cc")
	warn=$(sed -n 's/^warning //p' "$T/cc")
	if [ "$warn" != none ]; then fail "$name" "opens with a warning: $warn"; return 1; fi
	if [ -n "$filtered" ]; then
		# the kernel filters targets: dtrec reads and leaves out nothing
		local rs
		rs=$(awk '$1=="recorder_skipped"{print $2}' "$T/cc")
		if [ "$ev" != 0 ] || [ "$kr" != 0 ] || [ "${rs:-0}" != 0 ]; then
			fail "$name" "events $ev, left out by dtrec $rs, kernel read $kr: wanted none"
			return 1
		fi
	elif [ -z "$ev" ] || [ "$ev" = 0 ] || [ "$ev" != "$kr" ]; then
		fail "$name" "events $ev != kernel read counter $kr"; return 1
	fi
	pass "$name"
}
expect fake-record 0 '' -- env FAKEDT_RATE=50000 LD_PRELOAD="$FAKE" "$DTREC" -q -o "$T/r.dtc" \
	-e profile:hz:997 -e 'syscall:*:entry' -e kprobe:vfs_read:entry -d 1s
check_cap fake-record-conserved "$T/r.dtc"
grep -q '^probe kprobe:vfs_read:entry [1-9]' "$T/cc" && grep -q '^probe profile:hz:997 [1-9]' "$T/cc" &&
	pass fake-record-probes || fail fake-record-probes "$(grep ^probe "$T/cc" | tr '\n' ' ')"
# the stand-in's user frames point into itself, a shared object with symbols
"$CAPCHECK" "$T/r.dtc" fakeopen >"$T/cc2" 2>&1
grep -q '^sym fakeopen yes' "$T/cc2" && pass fake-record-elfsyms ||
	fail fake-record-elfsyms "no symbol fakeopen among the capture's files"
DTREPORT=$(dirname "$0")/../../build/bin/dtreport
if [ -x "$DTREPORT" ]; then
	"$DTREPORT" flame "$T/r.dtc" --folded >"$T/folded" 2>&1
	grep -q ';fakeopen' "$T/folded" && pass fake-record-symbolized ||
		fail fake-record-symbolized "user frames in a shared object not named: $(head -n2 "$T/folded")"
else
	fail fake-record-symbolized "$DTREPORT is not built"
fi

# code mapped mid-recording (dlopen) gets its symbols too
LIB=$(dirname "$FAKE")/fakelib.so
expect dlopen-record 0 '' -- env FAKEDT_RATE=20000 FAKEDT_DLOPEN="$LIB" LD_PRELOAD="$FAKE" \
	"$DTREC" -q -o "$T/dl.dtc" -e profile:hz:97 -d 1s
"$CAPCHECK" "$T/dl.dtc" fake_dlopened_fn >"$T/cc3" 2>&1
grep -q '^sym fake_dlopened_fn yes' "$T/cc3" && pass dlopen-symbols ||
	fail dlopen-symbols "a library loaded mid-recording has no symbols in the capture"

# SIGINT: the capture is finalized, not cut
LD_PRELOAD=$FAKE FAKEDT_RATE=50000 "$DTREC" -q -o "$T/i.dtc" -e profile:hz:997 2>"$T/err" &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 0 ] && pass sigint-exit || fail sigint-exit "exit $rc: $(head -c 300 "$T/err")"
check_cap sigint-finalized "$T/i.dtc"

LD_PRELOAD=$FAKE FAKEDT_RATE=50000 "$DTREC" -q -o "$T/t.dtc" -e 'syscall:*:entry' 2>"$T/err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 0 ] && pass sigterm-exit || fail sigterm-exit "exit $rc: $(head -c 300 "$T/err")"
check_cap sigterm-finalized "$T/t.dtc"

expect list-word 0 '' -- fake "$DTREC" -l write
[ "$(cat "$T/out")" = "syscall:write:entry" ] && pass list-word-matches ||
	fail list-word-matches "dtrec -l write listed: $(tr '\n' ' ' <"$T/out")"

# dt(4) gives each tracepoint argument the slots dt.ko stores it in (the
# capture's argN columns): the page and kernel/dt_tp.c's tables agree
python3 - man/dt.4 kernel/dt_tp.c >"$T/dt4.out" 2>&1 <<'PYEOF'
import re, sys
man, src = open(sys.argv[1]).read(), open(sys.argv[2]).read()
tabs = {m.group(1): [(f, t, int(a), int(n)) for f, t, a, n in
        re.findall(r'\{ "(\w+)", "([^"]+)", (\d+), (\d+) \}', m.group(2))]
        for m in re.finditer(r'dt_arg_info (\w+)\[\] = \{(.*?)\n\};', src, re.S)}
bad = 0
for sysn, ev, tab in re.findall(r'TPDEF\("(\w+)", (\w+), \w+,\s*(\w+)', src):
    m = re.search(r'^\.It Cm tracepoint:%s:%s\n(.*?)(?=^\.It )' % (sysn, ev), man, re.M | re.S)
    doc = re.findall(r'^\.Va (\w+)\n\.Pq Vt (.+?) , Va arg(\d+)(?:\.\.arg(\d+))?', m.group(1), re.M) if m else []
    want = [(f, t, str(a), str(a + n - 1) if n > 1 else '') for f, t, a, n in tabs.get(tab, [])]
    if [tuple(d) for d in doc] != want:
        print("tracepoint:%s:%s: dt.4 %s, dt_tp.c %s" % (sysn, ev, doc, want)); bad = 1
sys.exit(bad)
PYEOF
[ $? -eq 0 ] && pass man-dt4-arg-slots || fail man-dt4-arg-slots "$(head -c 400 "$T/dt4.out")"

# -l -v: dt.ko describes a syscall entry as six registers arg0..arg5; the
# listing (and the capture, whose views read them) names them as tracefs does
expect list-fields 0 '' -- fake "$DTREC" -l -v syscall:write:entry
if grep -Eq '^  fd +unsigned int +arg0 as uint32$' "$T/out" && grep -Eq '^  buf +const char \* +arg1$' "$T/out" &&
   grep -Eq '^  count +size_t +arg2$' "$T/out" && ! grep -q 'arg3' "$T/out"; then
	pass list-fields-syscall-names
else
	fail list-fields-syscall-names "$(tr '\n' '|' <"$T/out")"
fi
expect list-v-alone 2 'dtrec: -v goes with -l' -- "$DTREC" -v -o "$T/v.dtc" -e profile:hz:97

# -- command: recording ends when it exits; its status is reported
start=$(date +%s)
expect command 3 '' -- fake "$DTREC" -o "$T/c.dtc" -e profile:hz:997 -- sh -c 'sleep 0.5; exit 3'
grep -q 'the command exited with status 3' "$T/err" && pass command-status ||
	fail command-status "summary does not report status 3: $(tr '\n' ' ' <"$T/err")"
[ $(( $(date +%s) - start )) -lt 10 ] && pass command-ends || fail command-ends "took too long"
# the stand-in's events are all the recorder's own: none is the command's
check_cap command-finalized "$T/c.dtc" filtered
expect command-not-found 127 "^dtrec: $T/nosuchcmd: No such file or directory$" -- \
	fake "$DTREC" -q -o "$T/n.dtc" -e profile:hz:997 -- "$T/nosuchcmd"
expect command-not-found-path 127 "^dtrec: nosuchcmd-dt: command not found$" -- \
	fake "$DTREC" -q -o "$T/n.dtc" -e profile:hz:997 -- nosuchcmd-dt
: >"$T/notexec"
expect command-not-executable 126 "^dtrec: $T/notexec: Permission denied$" -- \
	fake "$DTREC" -q -o "$T/n.dtc" -e profile:hz:997 -- "$T/notexec"
# killed by a signal: 128+N, as time(1) says; the capture is complete
expect command-signal-status 132 '' -- fake "$DTREC" -q -o "$T/sig.dtc" -e profile:hz:97 -- \
	sh -c 'kill -ILL $$'
check_cap command-signal-finalized "$T/sig.dtc" filtered
# dtrec's own failure with a COMMAND: 125 and a message saying so, whatever
# the command's status (an output that cannot be written)
expect command-dtrec-failed 125 '' -- fake "$DTREC" -q -o "$T/nodir/x.dtc" -e profile:hz:97 -- true
grep -q '^dtrec: recording failed.*exit status 125$' "$T/err" && pass command-dtrec-failed-says ||
	fail command-dtrec-failed-says "$(tr '\n' ' ' <"$T/err" | head -c 300)"

# a process that runs (a zombie waiting for init to reap it has ended)
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# stopped early (-d), dtrec ends the command's whole process group: what it
# started in the background too, SIGTERM first
rm -f "$T/bg.pid"
expect group-ended 143 '' -- fake "$DTREC" -q -o "$T/g.dtc" -e profile:hz:97 -d 1s -- \
	sh -c 'sleep 300 & echo $! >"$0"; wait' "$T/bg.pid"
bg=$(cat "$T/bg.pid" 2>/dev/null)
sleep 0.2
if [ -z "$bg" ]; then fail group-ended-background "the command did not start"
elif alive "$bg"; then fail group-ended-background "its background process $bg lives on"; kill -9 "$bg"
else pass group-ended-background; fi
# ... and SIGKILL two seconds on when SIGTERM is ignored
rm -f "$T/bg.pid"
start=$(date +%s%N)
expect group-killed 137 '' -- fake "$DTREC" -q -o "$T/g.dtc" -e profile:hz:97 -d 500ms -- \
	sh -c 'trap "" TERM; sleep 300 & echo $! >"$0"; wait; wait' "$T/bg.pid"
took=$(( ($(date +%s%N) - start) / 1000000 ))
bg=$(cat "$T/bg.pid" 2>/dev/null)
sleep 0.2
if [ -z "$bg" ]; then fail group-killed-background "the command did not start"
elif alive "$bg"; then fail group-killed-background "$bg ignored SIGTERM and lives on"; kill -9 "$bg"
elif [ "$took" -gt 15000 ]; then fail group-killed-background "took $took ms"
else pass group-killed-background; fi
# dtrec killed outright: its command dies with it (PR_SET_PDEATHSIG)
LD_PRELOAD=$FAKE "$DTREC" -q -o "$T/k.dtc" -e profile:hz:97 -- sleep 300 2>/dev/null &
rpid=$!
child=
for _ in $(seq 50); do
	child=$(pgrep -P $rpid -x sleep) && break
	sleep 0.1
done
kill -9 $rpid
wait $rpid 2>/dev/null
sleep 0.3
if [ -z "$child" ]; then fail command-dies-with-dtrec "the command never started"
elif alive "$child"; then fail command-dies-with-dtrec "sleep $child outlived dtrec"; kill -9 "$child"
else pass command-dies-with-dtrec; fi

# on a terminal the command, in its own group, gets the terminal: it reads
# it, and Control-C ends it (and so the recording: 128+SIGINT)
if command -v script >/dev/null; then
	(sleep 1; echo hello) | timeout 60 script -qec "LD_PRELOAD=$FAKE $DTREC -q -o $T/tty.dtc -e profile:hz:97 -- sh -c 'read x; echo got:\$x; exit 4'; echo rc=\$?" /dev/null >"$T/tty" 2>&1
	tr -d '\r' <"$T/tty" | grep -qx 'got:hello' && tr -d '\r' <"$T/tty" | grep -qx 'rc=4' &&
		pass tty-command-reads-terminal || fail tty-command-reads-terminal "$(tr '\r\n' '||' <"$T/tty" | head -c 300)"
	(sleep 2; printf '\003'; sleep 1) | timeout 60 script -qec "LD_PRELOAD=$FAKE $DTREC -q -o $T/tty.dtc -e profile:hz:97 -- sleep 30; echo rc=\$?" /dev/null >"$T/tty" 2>&1
	tr -d '\r' <"$T/tty" | grep -q 'rc=130$' && pass tty-control-c || fail tty-control-c "$(tr '\r\n' '||' <"$T/tty" | head -c 300)"
	check_cap tty-control-c-finalized "$T/tty.dtc" filtered
else
	fail tty-command-reads-terminal "script(1) missing"
fi

# -p: recording ends when every target has exited
sleep 1 & t1=$!
sleep 2 & t2=$!
start=$(date +%s)
expect pids-exited 0 '' -- fake "$DTREC" -q -o "$T/pids.dtc" -e profile:hz:97 -d 60s -p "$t1,$t2"
took=$(( $(date +%s) - start ))
[ "$took" -lt 20 ] && pass pids-exited-ends || fail pids-exited-ends "recorded ${took}s after its targets exited"
check_cap pids-exited-finalized "$T/pids.dtc" filtered

# --version; standard output that cannot be written is an error (status 1)
expect version 0 '' -- "$DTREC" --version
[ "$(cat "$T/out")" = "dtrec $(cat "$(dirname "$DTREC")/../../dt-version")" ] && pass version-text ||
	fail version-text "$(head -c 100 "$T/out")"
expect list-stdout-full 1 '^dtrec: standard output: No space left on device$' -- \
	sh -c 'LD_PRELOAD="$0" "$1" -l >/dev/full' "$FAKE" "$DTREC"
expect help-stdout-full 1 '^dtrec: standard output: No space left on device$' -- \
	sh -c '"$0" --help >/dev/full' "$DTREC"
expect version-stdout-full 1 '^dtrec: standard output: No space left on device$' -- \
	sh -c '"$0" --version >/dev/full' "$DTREC"

# on a terminal: a live status line; -q: none
if command -v script >/dev/null; then
	LD_PRELOAD=$FAKE script -qec "$DTREC -o $T/s.dtc -e profile:hz:97 -d 1200ms" /dev/null >"$T/tty" 2>&1
	tr '\r' '\n' <"$T/tty" | grep -Eq '^.*[0-9.]+(ms|s)  [0-9.]+k? events  [0-9.]+k?/s  .* written' &&
		pass status-line || fail status-line "no status line on a tty: $(tr '\r' '|' <"$T/tty" | head -c 300)"
	LD_PRELOAD=$FAKE script -qec "$DTREC -q -o $T/s.dtc -e profile:hz:97 -d 600ms" /dev/null >"$T/tty" 2>&1
	[ ! -s "$T/tty" ] && pass quiet || fail quiet "-q printed: $(head -c 200 "$T/tty")"
else
	fail status-line "script(1) missing"
fi

# --comm and --cgroup: usage errors exit 2; the dt source passes them to
# DTIOCSETFILTER (the stand-in logs what it got); perf refuses them
expect comm-too-long 2 "^dtrec: bad --comm '0123456789abcdef': a command name is 1 to 15 bytes" -- \
	"$DTREC" -o "$T/a.dtc" -e x --comm 0123456789abcdef
expect comm-empty 2 "^dtrec: bad --comm '': a command name is 1 to 15 bytes" -- \
	"$DTREC" -o "$T/a.dtc" -e x --comm ''
expect cgroup-missing 2 "^dtrec: --cgroup $T/nocg: No such file or directory$" -- \
	"$DTREC" -o "$T/a.dtc" -e x --cgroup "$T/nocg"
expect cgroup-not-v2 2 "^dtrec: --cgroup $T: not a cgroup v2 directory" -- \
	"$DTREC" -o "$T/a.dtc" -e x --cgroup "$T"
[ ! -e "$T/a.dtc" ] && pass filter-usage-no-file || fail filter-usage-no-file "left $T/a.dtc"
expect comm-perf-refused 1 "^dtrec: --comm: the perf source cannot filter by command name; use --source dt$" -- \
	"$DTREC" --source perf -q -o "$T/p.dtc" -e syscall:read:entry --comm sh -d 100ms
rm -f "$T/flt.log"
expect comm-fake 0 '' -- env FAKEDT_FILTERLOG="$T/flt.log" LD_PRELOAD="$FAKE" \
	"$DTREC" -q -o "$T/f.dtc" -e profile:hz:97 -d 200ms --comm busyname
grep -qx 'flags=0x4 comm=busyname cgroup=0' "$T/flt.log" && pass comm-filter-set ||
	fail comm-filter-set "DTIOCSETFILTER got: $(tr '\n' ' ' <"$T/flt.log" 2>/dev/null)"
rm -f "$T/flt.log"
expect comm-command-fake 0 '' -- env FAKEDT_FILTERLOG="$T/flt.log" LD_PRELOAD="$FAKE" \
	"$DTREC" -q -o "$T/f.dtc" -e profile:hz:97 --comm sleep -- sleep 0.2
grep -qx 'flags=0x7 comm=sleep cgroup=0' "$T/flt.log" && pass comm-and-command ||
	fail comm-and-command "DTIOCSETFILTER got: $(tr '\n' ' ' <"$T/flt.log" 2>/dev/null)"
# a cgroup2 mount on this host, if there is one, for the positive case
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG2" ]; then
	rm -f "$T/flt.log"
	expect cgroup-fake 0 '' -- env FAKEDT_FILTERLOG="$T/flt.log" LD_PRELOAD="$FAKE" \
		"$DTREC" -q -o "$T/f.dtc" -e profile:hz:97 -d 200ms --cgroup "$CG2"
	grep -qx 'flags=0x10 comm=- cgroup=1' "$T/flt.log" && pass cgroup-filter-set ||
		fail cgroup-filter-set "DTIOCSETFILTER got: $(tr '\n' ' ' <"$T/flt.log" 2>/dev/null)"
	# perf takes a task or a cgroup per event: not both
	expect cgroup-perf-command-refused 125 "^dtrec: --cgroup with -p or a COMMAND: the perf source takes one or the other; use --source dt$" -- \
		"$DTREC" --source perf -q -o "$T/p.dtc" -e syscall:read:entry --cgroup "$CG2" -- true
	[ ! -e "$T/p.dtc" ] && pass filter-perf-no-file || fail filter-perf-no-file "left $T/p.dtc"
	# the perf source on a cgroup made here: of two busy shells only the
	# member's events (per-CPU events opened with PERF_FLAG_PID_CGROUP)
	C=$CG2/dtrec-test.$$
	if mkdir "$C" 2>"$T/mkdir.err"; then
		sh -c "echo \$\$ >$C/cgroup.procs && exec sh -c 'while :; do :; done'" &
		in=$!
		sh -c 'while :; do :; done' &
		outp=$!
		for i in 1 2 3 4 5 6 7 8 9 10; do grep -qx "$in" "$C/cgroup.procs" && break; sleep 0.1; done
		expect cgroup-perf 0 '' -- "$DTREC" --source perf -q -o "$T/cgp.dtc" -e profile:hz:997 \
			-e 'syscall:*:entry' --cgroup "$C" -d 1s
		kill $in $outp; wait $in $outp 2>/dev/null
		rmdir "$C"
		got=$("$DTREPORT" sql "$T/cgp.dtc" "SELECT sum(pid = $in), sum(pid <> $in), sum(pid = $outp),
			count(*) FROM events" 2>&1 | tr -d '\r' | tail -n +2)
		IFS=, read -r nin nother nout nall <<<"$got"
		[ "${nin:-0}" -gt 0 ] && [ "$nin" = "$nall" ] && [ "${nother:-x}" = 0 ] && [ "${nout:-x}" = 0 ] &&
			pass cgroup-perf-only-members ||
			fail cgroup-perf-only-members "member $nin, others $nother, the busy non-member $nout ($got)"
	else
		fail cgroup-perf-mkdir "cannot make a cgroup under $CG2: $(head -c 200 "$T/mkdir.err")"
	fi
else
	echo "note: no cgroup2 mount on this host: --cgroup's positive case is left to the VM"
fi

# unprivileged: tracefs (mode 0700) unreadable, so the perf catalog has the
# timer probes only; -l and an unknown probe say why and what to do
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if ! command -v setpriv >/dev/null; then
	fail tracefs-unreadable "setpriv (util-linux) missing"
elif $NOBODY test -r /sys/kernel/tracing/events 2>/dev/null; then
	fail tracefs-unreadable "tracefs is readable by nobody on this host: the case cannot be made"
else
	$NOBODY "$DTREC" --source perf -l >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 0 ] && grep -qx 'profile:hz:97' "$T/out" &&
		grep -q '^dtrec: warning: only profile and interval are listed: /sys/kernel/tracing is not readable by this user (uid 65534): .*run dtrec as root' "$T/err" &&
		pass tracefs-unreadable-list || fail tracefs-unreadable-list "rc $rc: $(head -c 300 "$T/err")"
	expect tracefs-unreadable-unknown-probe 1 "^dtrec: unknown probe 'syscall:read:entry': only profile and interval are known: /sys/kernel/tracing is not readable by this user .*run dtrec as root" -- \
		$NOBODY "$DTREC" --source perf -q -o /tmp/dtrec-no-such-dir/x.dtc -e syscall:read:entry -d 1s
fi

# a full disk: a clear message and a non-zero exit (/dev/full as standard
# output: -o refuses devices other than /dev/null and the standard streams)
expect disk-full 1 '^dtrec: /dev/stdout: .*No space left on device' -- \
	bash -c '"$@" >/dev/full' - env FAKEDT_RATE=50000 LD_PRELOAD="$FAKE" "$DTREC" -q \
	-o /dev/stdout -e profile:hz:997 -d 1s
exit 0
