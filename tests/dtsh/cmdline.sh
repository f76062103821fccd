#!/bin/bash
# tests/dtsh/cmdline.sh - what dtsh says and does for a command line:
# several -c run in order, record with dtrec's options (dtrec's parser: the
# same messages; a COMMAND after '--' on the stand-in device), probes WORD
# as dtrec -l WORD, the closest names
# for an unknown command or an SQL keyword typo, flame -o saying what it
# wrote; then ptyedit.py on a pseudo-terminal (Ctrl-C during Ctrl-R, a
# multi-line statement as one history entry).
# Env: B.
set -u
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
DTSH=${DTSH:-$B/asan/bin/dtsh}
MKCAP=$B/tests/dtsh/mkcap
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/dtsh-cmdline.XXXXXX)
trap 'rm -rf "$T"' EXIT
export DTSH_HISTORY=$T/history
. "$HERE/../lib.sh"
sanitizers_strict

for f in "$DTSH" "$MKCAP"; do
	[ -x "$f" ] || { fail cmdline_setup "$f is missing"; exit 0; }
done
command -v python3 >/dev/null || { fail cmdline_setup "python3 is missing"; exit 0; }
"$MKCAP" "$T/s.dtc" "$T/exp" 2>"$T/mk.err" || { fail cmdline_setup "mkcap: $(cat "$T/mk.err")"; exit 0; }
CAP=$T/s.dtc
run() { "$DTSH" "$@" </dev/null >"$T/out" 2>"$T/err"; RC=$?; }

# ---- -c A -c B: both, in order
run -c 'sql SELECT 11 AS a' -c 'sql SELECT 22 AS b' "$CAP"
if [ "$RC" = 0 ] && [ "$(grep -E '^ *(11|22) *$' "$T/out" | tr -d ' ' | tr '\n' ,)" = "11,22," ]; then
	pass c-twice-runs-both
else
	fail c-twice-runs-both "rc=$RC out=$(cat "$T/out") err=$(cat "$T/err")"
fi
run -c quit -c 'sql SELECT 33 AS c' "$CAP"
[ "$RC" = 0 ] && ! grep -q 33 "$T/out" && pass c-quit-stops-the-rest ||
	fail c-quit-stops-the-rest "rc=$RC out=$(cat "$T/out")"
run -c 'nosuch' -c 'sql SELECT 44 AS d' "$CAP"
[ "$RC" = 1 ] && grep -q 44 "$T/out" && pass c-failure-goes-on-exit-1 ||
	fail c-failure-goes-on-exit-1 "rc=$RC out=$(cat "$T/out")"

# ---- probes WORD: as dtrec -l WORD, the names holding it
run -c 'probes sched_switch' "$CAP"
[ "$RC" = 0 ] && [ "$(cat "$T/out")" = "tracepoint:sched:sched_switch" ] && pass probes-word ||
	fail probes-word "rc=$RC out=$(cat "$T/out") err=$(cat "$T/err")"
run -c 'probes sched_sw*' "$CAP"
[ "$RC" = 1 ] && grep -q "no probe matches 'sched_sw\*'" "$T/err" && pass probes-glob-stays-a-glob ||
	fail probes-glob-stays-a-glob "rc=$RC out=$(cat "$T/out") err=$(cat "$T/err")"

# ---- closest names: commands and the words that start a query
run -c 'selct 1' "$CAP"
[ "$RC" = 1 ] && grep -q "unknown command 'selct'; did you mean 'select'" "$T/err" && pass suggest-sql-word ||
	fail suggest-sql-word "rc=$RC err=$(cat "$T/err")"
run -c 'SELEC 1' "$CAP"
grep -q "did you mean 'select'" "$T/err" && pass suggest-sql-word-upper || fail suggest-sql-word-upper "$(cat "$T/err")"
run -c 'tabels' "$CAP"
grep -q "did you mean.*'tables'" "$T/err" && pass suggest-command || fail suggest-command "$(cat "$T/err")"
# two letters swapped are one typo, as git counts them
run -c 'tpo' "$CAP"
grep -q "did you mean 'top'" "$T/err" && pass suggest-command-swap || fail suggest-command-swap "$(cat "$T/err")"
run -c 'sql SELECT * FRM events' "$CAP"
[ "$RC" = 1 ] && grep -q 'syntax error; did you mean.* FROM' "$T/err" && pass suggest-sql-keyword ||
	fail suggest-sql-keyword "rc=$RC err=$(cat "$T/err")"
run -c 'sql SELECT count(*) FROM FROM events' "$CAP"
grep -q 'syntax error' "$T/err" && ! grep -q 'did you mean' "$T/err" && pass no-suggestion-for-a-keyword ||
	fail no-suggestion-for-a-keyword "$(cat "$T/err")"

# ---- flame -o: says what it wrote
(cd "$T" && "$DTSH" -c 'flame -o f.svg' "$CAP" >"$T/out" 2>"$T/err"); RC=$?
sz=$(stat -c %s "$T/f.svg" 2>/dev/null)
[ "$RC" = 0 ] && grep -qx "flame: wrote f.svg (SVG, $sz bytes)" "$T/out" && pass flame-o-says-written ||
	fail flame-o-says-written "rc=$RC out=$(cat "$T/out") err=$(cat "$T/err") size=$sz"
(cd "$T" && "$DTSH" -c 'flame --folded -o f.txt' "$CAP" >"$T/out" 2>"$T/err")
sz=$(stat -c %s "$T/f.txt" 2>/dev/null)
grep -qx "flame: wrote f.txt (folded stacks, $sz bytes)" "$T/out" && pass flame-o-folded-says-written ||
	fail flame-o-folded-says-written "out=$(cat "$T/out") err=$(cat "$T/err")"

# ---- record: dtrec's options through dtrec's parser, the same messages
DTREC=${DTREC:-$B/asan/bin/dtrec}
FAKE=${FAKE:-$B/tests/dtrec/fakedt.so}
for args in "-b 3k" "--user-stacks bogus" "-p 12x" "-a -p 1" "--trigger x" "--comm ''"; do
	name=record-same-message-$(echo "$args" | tr -cs 'a-z0-9' '-' | sed 's/-$//')
	"$DTSH" -c "record $args" "$CAP" </dev/null >/dev/null 2>"$T/sh.err"; rc=$?
	eval "\"\$DTREC\" $args -e profile:hz:97 -o \"\$T/never.dtc\"" </dev/null >/dev/null 2>"$T/rec.err"
	want=$(head -1 "$T/rec.err" | sed 's/^dtrec: //')
	got=$(head -1 "$T/sh.err" | sed 's/^dtsh record: //')
	[ "$rc" = 1 ] && [ -n "$want" ] && [ "$got" = "$want" ] && pass "$name" ||
		fail "$name" "rc=$rc dtsh: $(head -1 "$T/sh.err") dtrec: $(head -1 "$T/rec.err")"
done
run -c 'record 5s extra' "$CAP"
[ "$RC" = 1 ] && grep -q "a COMMAND follows '--'" "$T/err" && pass record-command-after-dashes ||
	fail record-command-after-dashes "rc=$RC err=$(cat "$T/err")"
# a COMMAND ends the recording, on the stand-in device; -e besides enable
if [ -f "$FAKE" ]; then
	(cd "$T" && ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1 LD_PRELOAD=$FAKE \
		"$DTSH" -c 'enable syscall:read:entry; record -e profile:hz:97 -o r1.dtc -b 64k -- sleep 0.3; sql SELECT command FROM capture; probes' \
		</dev/null >"$T/out" 2>"$T/err"); RC=$?
	if [ "$RC" = 0 ] && grep -q 'dtsh: record syscall:read:entry -e profile:hz:97 -o r1.dtc -b 64k -- sleep 0.3' "$T/out" &&
	   grep -qx 'profile:hz:97' "$T/out" && grep -qx 'syscall:read:entry' "$T/out"; then
		pass record-command-and-options
	else
		fail record-command-and-options "rc=$RC out=$(head -c 400 "$T/out") err=$(head -c 300 "$T/err")"
	fi
else
	fail record-command-and-options "missing $FAKE"
fi

# ---- line editing on a pseudo-terminal
python3 "$HERE/ptyedit.py" "$DTSH" "$CAP" "$T" 2>"$T/pty.err" || fail ptyedit "$(tail -3 "$T/pty.err")"

san "$T/err" "$T/pty.err" && fail cmdline_sanitizer "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$T/err" "$T/pty.err")"
true
