#!/bin/bash
# run.sh BUILD - user-space probes (uprobe:, usdt:) through the perf source
# on this host: a test program whose functions and SDT probes run a known
# number of times with known arguments, recorded with the ASan dtrec.
# Needs perf_event_open and the uprobe PMU: without them every test fails
# saying so; nothing here skips.
set -u
B=$1
DTREC=$B/asan/bin/dtrec DTREPORT=$B/bin/dtreport CAPCHECK=$B/tests/dtrec/capcheck
DTSH=$B/asan/bin/dtsh
U=$B/tests/uprobe/utarget LIB=$B/tests/uprobe/libdtut.so
T=$(mktemp -d /tmp/uprobe-test.XXXXXX)
chmod 755 "$T"
BG=()
trap 'for p in "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"	# pass, fail, rec
sanitizers_dtrec
sql() { "$DTREPORT" sql "$@" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2; }
# count(*) of probe NAME's events in capture FILE [extra WHERE]
count() { sql "$1" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe
	WHERE p.name = '$2' ${3:+AND $3}"; }
sanitizer_clean() {
	if grep -q Sanitizer "$2"; then fail "$1" "$(grep -m1 Sanitizer "$2")"; else pass "$1"; fi
}

# ---- the parsers, fuzzed (SDT argument strings; mutated ELF files); the
# executable named as a bare file name from its directory, the library by
# its path
(cd "${U%/*}" && exec "$B/tests/uprobe/upfuzz" "${U##*/}" "$LIB") 2>"$T/fuzz.err" && pass fuzz-clean ||
	fail fuzz-clean "upfuzz failed: $(grep -m1 -E 'Sanitizer|runtime error' "$T/fuzz.err")"

[ -e /sys/bus/event_source/devices/uprobe/type ] && pass uprobe-pmu ||
	fail uprobe-pmu "this kernel has no uprobe PMU: every test below fails"

# ---- listing a file's functions and SDT probes
"$DTREC" -l "uprobe:$U:up_*" >"$T/list" 2>&1
[ "$(sort "$T/list" | tr "\n" " ")" = "uprobe:$U:up_args:entry uprobe:$U:up_args:return uprobe:$U:up_count:entry uprobe:$U:up_count:return uprobe:$U:up_insn:entry uprobe:$U:up_insn:return uprobe:$U:up_ret:entry uprobe:$U:up_ret:return " ] &&
	pass list-functions || fail list-functions "$(head -c 300 "$T/list")"
"$DTREC" -l "usdt:$U" >"$T/list" 2>&1
[ "$(sort "$T/list" | tr '\n' ' ')" = "usdt:$U:dttest:gated usdt:$U:dttest:tick " ] &&
	pass list-usdt || fail list-usdt "$(head -c 300 "$T/list")"
# a bare library name is found in the library directories
"$DTREC" -l 'uprobe:libc.so.6:getpid:entry' >"$T/list" 2>&1
grep -Eq '^uprobe:/.*/libc\.so\.6:getpid:entry$' "$T/list" && pass list-bare-library ||
	fail list-bare-library "$(head -c 300 "$T/list")"

# ---- exact call counts, argument and return values, entry and return
N=2000
if rec calls -o "$T/calls.dtc" -e "uprobe:$U:up_*:*" -- "$U" calls $N; then
	bad=
	for f in up_count up_args up_ret; do
		for w in entry return; do
			got=$(count "$T/calls.dtc" "uprobe:$U:$f:$w")
			[ "$got" = $N ] || bad="$bad $f:$w=$got"
		done
	done
	[ -z "$bad" ] && pass call-counts-exact || fail call-counts-exact "want $N each:$bad"
	got=$(count "$T/calls.dtc" "uprobe:$U:up_args:entry" \
		"arg0 = 1 AND arg1 = 2 AND arg2 = 3 AND arg3 = 4 AND arg4 = 5 AND arg5 = 6")
	[ "$got" = $N ] && pass entry-arguments || fail entry-arguments "$got of $N with args 1..6"
	got=$(count "$T/calls.dtc" "uprobe:$U:up_args:return" "retval = 21 AND errno = 0")
	[ "$got" = $N ] && pass return-value || fail return-value "$got of $N returned 21"
	# up_ret(i) returns 3i - 7 for i = 0..N-1: every value once, in call order
	got=$(sql "$T/calls.dtc" "SELECT count(DISTINCT e.retval), min(e.retval), max(e.retval),
		sum(e.retval) FROM events e JOIN probes p ON p.id = e.probe
		WHERE p.name = 'uprobe:$U:up_ret:return'")
	[ "$got" = "$N,-7,$((3 * (N - 1) - 7)),$((3 * N * (N - 1) / 2 - 7 * N))" ] &&
		pass return-values-each || fail return-values-each "distinct,min,max,sum $got"
	got=$(sql "$T/calls.dtc" "SELECT count(DISTINCT e.arg0), min(e.arg0), max(e.arg0)
		FROM events e JOIN probes p ON p.id = e.probe WHERE p.name = 'uprobe:$U:up_ret:entry'")
	[ "$got" = "$N,0,$((N - 1))" ] && pass entry-argument-each || fail entry-argument-each "$got"
	got=$(sql "$T/calls.dtc" "SELECT count(*) FROM events WHERE flags & 1 = 1")
	[ "$got" = $((3 * N)) ] && pass return-flag || fail return-flag "$got events flagged return"
	args=$(sql "$T/calls.dtc" "SELECT a.name || ':' || a.type FROM probe_args a JOIN probes p
		ON p.id = a.probe WHERE p.name = 'uprobe:$U:up_args:entry' ORDER BY a.idx" | tr '\n' ' ')
	[ "$args" = "arg0:long arg1:long arg2:long arg3:long arg4:long arg5:long " ] &&
		pass arg-table || fail arg-table "$args"
	"$CAPCHECK" "$T/calls.dtc" >"$T/cc" 2>&1
	ev=$(awk '$1=="events"{print $2}' "$T/cc"); kd=$(awk '$1=="kernel_dropped"{print $2}' "$T/cc")
	[ "$ev" = $((6 * N)) ] && [ "$kd" = 0 ] && pass calls-accounting ||
		fail calls-accounting "events $ev (want $((6 * N))), dropped $kd"
else
	for t in call-counts-exact entry-arguments return-value return-values-each \
		 entry-argument-each return-flag arg-table calls-accounting; do
		fail $t "recording failed: $(head -c 300 "$T/calls.err")"
	done
fi
sanitizer_clean calls-asan "$T/calls.err"

# ---- user stacks on a uprobe: every event has one, its leaf the probed
# function (at a function's first instruction the frame-pointer walk cannot
# see the caller yet: dtrec(8) BUGS)
if rec stack -o "$T/stack.dtc" -u -e "uprobe:$U:up_count:entry" -- "$U" calls 10; then
	"$DTREPORT" flame "$T/stack.dtc" --folded >"$T/stack.folded" 2>"$T/stack.ferr"
	grep -q ';up_count 10$' "$T/stack.folded" && pass uprobe-user-stack ||
		fail uprobe-user-stack "$(head -c 300 "$T/stack.folded")"
else
	fail uprobe-user-stack "recording failed: $(head -c 300 "$T/stack.err")"
fi

# ---- USDT: register, constant and stack operands; a semaphore-gated probe
if rec usdt -o "$T/usdt.dtc" -e "usdt:$U:dttest:*" -- "$U" usdt 500; then
	got=$(count "$T/usdt.dtc" "usdt:$U:dttest:tick" "arg1 = -5 AND arg2 = 2 * arg0 AND arg3 = 1000 + arg0")
	all=$(sql "$T/usdt.dtc" "SELECT count(DISTINCT e.arg0), min(e.arg0), max(e.arg0) FROM events e
		JOIN probes p ON p.id = e.probe WHERE p.name = 'usdt:$U:dttest:tick'")
	[ "$got" = 500 ] && [ "$all" = "500,0,499" ] && pass usdt-arguments ||
		fail usdt-arguments "$got of 500 decoded (i, -5, 2i, 1000+i); arg0 distinct,min,max $all"
	# dttest:gated fires only while a tool holds its semaphore
	got=$(count "$T/usdt.dtc" "usdt:$U:dttest:gated")
	[ "$got" = 500 ] && pass usdt-semaphore || fail usdt-semaphore "$got gated events, want 500"
else
	fail usdt-arguments "recording failed: $(head -c 300 "$T/usdt.err")"
	fail usdt-semaphore "no recording"
fi
sanitizer_clean usdt-asan "$T/usdt.err"
# without a recording the semaphore is 0: the gated probe does not fire
if rec nogate -o "$T/nogate.dtc" -e "usdt:$U:dttest:tick" -- "$U" usdt 50; then
	# (the gated probe is not enabled, so its semaphore stays 0; nothing to
	# count, but tick is still exact)
	got=$(count "$T/nogate.dtc" "usdt:$U:dttest:tick")
	[ "$got" = 50 ] && pass usdt-count-exact || fail usdt-count-exact "$got of 50"
else
	fail usdt-count-exact "recording failed: $(head -c 300 "$T/nogate.err")"
fi

# ---- a library used by two processes of the command; a third outside it
"$U" lib 100000000 >/dev/null &
BG+=($!)
outsider=$!
if rec lib -o "$T/lib.dtc" -e "uprobe:$LIB:dtut_mark:entry" -e "uprobe:$LIB:dtut_mark:return" \
	-- sh -c "$U lib 300 & $U lib 700; wait"; then
	got=$(sql "$T/lib.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe
		WHERE p.name LIKE '%:entry' GROUP BY e.pid ORDER BY 1" | tr '\n' ' ')
	[ "$got" = "300 700 " ] && pass library-two-processes ||
		fail library-two-processes "entries per process '$got', want '300 700 '"
	got=$(sql "$T/lib.dtc" "SELECT count(*) FROM events e JOIN probes p ON p.id = e.probe
		WHERE e.pid = $outsider")
	[ "$got" = 0 ] && pass library-outsider-filtered || fail library-outsider-filtered "$got events of a process outside the command"
else
	fail library-two-processes "recording failed: $(head -c 300 "$T/lib.err")"
	fail library-outsider-filtered "no recording"
fi
kill -9 $outsider 2>/dev/null
# ---- the command is recorded from its exec on: dtrec's own execvp in the
# forked child is not, the command's exit is.  Both run on a private copy
# of libc (LD_LIBRARY_PATH), and the probes sit on that copy's inode: no
# other process on this machine maps it, so none can be hit.
mkdir -p "$T/privlib"
cp "$(ldd "$U" | awk '$1 == "libc.so.6" { print $3 }')" "$T/privlib/libc.so.6"
if LD_LIBRARY_PATH=$T/privlib rec preexec -o "$T/preexec.dtc" \
	-e "uprobe:$T/privlib/libc.so.6:execvp:entry" -e "uprobe:$T/privlib/libc.so.6:exit:entry" \
	-- "$U" calls 1; then
	got=$(sql "$T/preexec.dtc" "SELECT sum(p.name LIKE '%:execvp:entry'), sum(p.name LIKE '%:exit:entry')
		FROM events e JOIN probes p ON p.id = e.probe")
	[ "$got" = "0,1" ] && pass command-from-exec-on || fail command-from-exec-on "execvp,exit events: $got (want 0,1)"
else
	fail command-from-exec-on "recording failed: $(head -c 300 "$T/preexec.err")"
fi

# ---- the probed process dies mid-recording: events before it are kept
"$U" spin >/dev/null &
BG+=($!)
spinner=$!
rec exit -o "$T/exit.dtc" -d 4s -p $spinner -e "uprobe:$U:up_count:entry" &
recpid=$!
# the ASan dtrec starts in well under 2 s even on a busy machine
sleep 2
kill -9 $spinner
wait $recpid
rc=$?
got=$(sql "$T/exit.dtc" "SELECT count(*) FROM events WHERE pid = $spinner")
[ $rc = 0 ] && [ "${got:-0}" -gt 50 ] && pass target-exits-mid-recording ||
	fail target-exits-mid-recording "rc $rc, $got events of the killed process: $(head -c 200 "$T/exit.err")"
sanitizer_clean exit-asan "$T/exit.err"

# ---- +OFFSET only on an instruction boundary (decoded with capstone):
# up_insn is a 10-byte movabs at +0, a 3-byte add at +0xa, ret at +0xd
bad_off=
for o in 1 5 9; do
	"$DTREC" --source perf -q -o "$T/off.dtc" -e "uprobe:$U:up_insn+$o:entry" -d 1s 2>"$T/off.err"
	rc=$?
	if [ $rc != 1 ] || [ -e "$T/off.dtc" ] ||
	   ! grep -q "offset +$(printf '%#x' $o) is inside the instruction at up_insn+0 (movabs" "$T/off.err" ||
	   ! grep -q "10 bytes).*nearest instruction boundaries are +0 and +0xa" "$T/off.err"; then
		bad_off="$bad_off +$o: rc $rc $(head -c 200 "$T/off.err")"
	fi
	rm -f "$T/off.dtc"
done
[ -z "$bad_off" ] && pass offset-inside-instruction-refused ||
	fail offset-inside-instruction-refused "$bad_off"
# the same rule on the dt source (here dt.ko's stand-in: the refusal comes
# before anything reaches the device)
LD_PRELOAD=$B/tests/dtrec/fakedt.so "$DTREC" --source dt -q -o "$T/off.dtc" \
	-e "uprobe:$U:up_insn+3:entry" -d 1s 2>"$T/off.err"
rc=$?
[ $rc = 1 ] && [ ! -e "$T/off.dtc" ] &&
	grep -q "offset +0x3 is inside the instruction at up_insn+0 (movabs" "$T/off.err" &&
	pass offset-inside-instruction-refused-dt ||
	fail offset-inside-instruction-refused-dt "rc $rc: $(head -c 300 "$T/off.err")"
rm -f "$T/off.dtc"
"$DTREC" --source perf -q -o "$T/off.dtc" -e "uprobe:$U:up_insn+0xb:entry" -d 1s 2>"$T/off.err"
rc=$?
[ $rc = 1 ] && [ ! -e "$T/off.dtc" ] &&
	grep -q "inside the instruction at up_insn+0xa (add rax, rdi, 3 bytes).*boundaries are +0xa and +0xd" "$T/off.err" &&
	pass offset-inside-second-instruction-refused ||
	fail offset-inside-second-instruction-refused "rc $rc: $(head -c 300 "$T/off.err")"
rm -f "$T/off.dtc"
# boundaries are accepted and count every call; the program computes right
N=1500
if rec insn -o "$T/insn.dtc" -e "uprobe:$U:up_insn+0xa:entry" -e "uprobe:$U:up_insn+13:entry" \
	-e "uprobe:$U:up_insn:entry" -- "$U" insn $N; then
	bad=
	for o in "" +0xa +0xd; do
		got=$(count "$T/insn.dtc" "uprobe:$U:up_insn$o:entry")
		[ "$got" = $N ] || bad="$bad up_insn$o=$got"
	done
	[ -z "$bad" ] && pass offset-boundary-call-counts || fail offset-boundary-call-counts "want $N each:$bad"
else
	fail offset-boundary-call-counts "rc $?: $(head -c 300 "$T/insn.err")"
fi
sanitizer_clean insn-asan "$T/insn.err"

# ---- dtsh completes the file, then its functions
python3 "$(dirname "$0")/ptycomplete.py" "$DTSH" "$U"

# ---- bad names: clear errors, no capture left behind
bad() {	# bad NAME SPEC PATTERN
	"$DTREC" --source perf -q -o "$T/bad.dtc" -e "$2" -d 1s 2>"$T/bad.err"
	local rc=$?
	if [ $rc = 1 ] && grep -q -- "$3" "$T/bad.err" && [ ! -e "$T/bad.dtc" ]; then
		pass "$1"
	else
		fail "$1" "rc $rc: $(head -c 300 "$T/bad.err")"
	fi
}
bad bad-no-such-file "uprobe:$T/nothere:main:entry" "$T/nothere: No such file or directory"
bad bad-no-such-symbol "uprobe:$U:up_cuont:entry" "no function 'up_cuont' in $U: did you mean 'up_count'?"
echo 'not an ELF' >"$T/text"
bad bad-not-elf "uprobe:$T/text:main:entry" "$T/text: not an ELF file"
bad bad-probe-name "uprobe:$U:up_count:middle" "a uprobe is SYMBOL:entry or SYMBOL:return"
bad bad-no-usdt "usdt:$LIB:x:y" "has no SDT probes"
bad bad-usdt-name "usdt:$U:dttest:tock" "no SDT probe of $U matches 'dttest:tock'"
bad bad-relative-path "uprobe:tests/x:main:entry" "give an absolute path"
bad bad-too-many "uprobe:libc.so.6:*:entry" "more than 512 user-space probe sites"
