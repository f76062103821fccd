#!/bin/bash
# dtsh suite: scripted sessions (stdin, -c) on captures written by mkcap
# (known counts) and dtgen, then interactive sessions on a pseudo-terminal
# (pty.py).  Prints PASS/FAIL lines.
set -u
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
DTSH=$B/asan/bin/dtsh
MKCAP=$B/tests/dtsh/mkcap
DTGEN=$B/bin/dtgen
DTREPORT=$B/bin/dtreport
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/dtsh-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export DTSH_HISTORY=$T/history
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
. "$HERE/../lib.sh"

# run NAME: runs dtsh with the remaining arguments, stdin from $IN;
# leaves $OUT, $ERR and $RC.
run() {
	"$DTSH" "$@" <"${IN:-/dev/null}" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}
# --help: usage on stdout, status 0; a bad option: usage on stderr, status 2
run --help
[ "$RC" = 0 ] && grep -q '^usage: dtsh' "$T/out" && [ -z "$ERR" ] && pass help ||
	fail help "rc=$RC out=$OUT err=$ERR"
run -x
[ "$RC" = 2 ] && grep -q '^usage: dtsh' "$T/err" && pass bad-option ||
	fail bad-option "rc=$RC err=$ERR"

script() {
	printf '%s\n' "$@" >"$T/in"
	IN=$T/in
}

for f in "$DTSH" "$MKCAP"; do
	[ -x "$f" ] || { fail setup "$f is missing"; exit 1; }
done
if ! "$MKCAP" "$T/s.dtc" "$T/exp" 2>"$T/err"; then
	fail mkcap "$(cat "$T/err")"
	exit 1
fi
CAP=$T/s.dtc
exp() { awk -v k="$1" -v n="$2" '$1 == k && $2 == n { print $3 }' "$T/exp"; }

# ---- probes and describe from the capture's probe table
script 'probes'
run "$CAP"
n=$(printf '%s\n' "$OUT" | grep -c .)
[ "$RC" = 0 ] && [ "$n" = 8 ] && pass probes-all || fail probes-all "rc=$RC, $n lines: $OUT $ERR"

script 'probes tracepoint:sched:*'
run "$CAP"
[ "$RC" = 0 ] && [ "$OUT" = "tracepoint:sched:sched_switch
tracepoint:sched:sched_wakeup
tracepoint:sched:sched_process_exec" ] && pass probes-glob || fail probes-glob "rc=$RC: $OUT $ERR"

script 'describe tracepoint:sched:sched_switch'
run "$CAP"
if [ "$RC" = 0 ] && grep -q 'prev_comm *char\[16\]' "$T/out" && grep -q 'next_pid *pid_t' "$T/out"; then
	pass describe
else
	fail describe "rc=$RC: $OUT $ERR"
fi

script 'describe tracepoint:sched:sched_swich'
run "$CAP"
if [ "$RC" != 0 ] && grep -q "unknown probe 'tracepoint:sched:sched_swich'" "$T/err" &&
   grep -q 'did you mean.*tracepoint:sched:sched_switch' "$T/err"; then
	pass describe-unknown-suggests
else
	fail describe-unknown-suggests "rc=$RC: $ERR"
fi

# ---- errors: suggestion, non-zero exit, the next commands still run
script 'prbes syscall:read:*' 'probes syscall:read:*' 'sql SELEC 1' 'describe syscall:openat:entry'
run "$CAP"
if [ "$RC" != 0 ] && grep -q "unknown command 'prbes'; did you mean 'probes'" "$T/err" &&
   grep -q '^syscall:read:entry$' "$T/out" && grep -q 'filename' "$T/out"; then
	pass bad-command-continues
else
	fail bad-command-continues "rc=$RC: out=$OUT err=$ERR"
fi
if grep -q 'syntax error' "$T/err"; then
	pass bad-sql-message
else
	fail bad-sql-message "no sqlite message: $ERR"
fi

# ---- -c with ';' and quotes
IN= run -c "probes 'syscall:openat:*' ; describe \"syscall:openat:entry\"" "$CAP"
if [ "$RC" = 0 ] && grep -q '^syscall:openat:return$' "$T/out" && grep -q 'dfd' "$T/out"; then
	pass dash-c
else
	fail dash-c "rc=$RC: $OUT $ERR"
fi
IN= run -c "probes 'syscall:*" "$CAP"
[ "$RC" != 0 ] && grep -q 'unterminated' "$T/err" && pass unterminated-quote ||
	fail unterminated-quote "rc=$RC: $ERR"
IN= run -c "open $T/nonexistent.dtc; help top"
if [ "$RC" != 0 ] && grep -q 'nonexistent.dtc' "$T/err" && grep -q 'usage: top' "$T/out"; then
	pass open-missing-continues
else
	fail open-missing-continues "rc=$RC: $OUT $ERR"
fi
IN= run -c "top"
[ "$RC" != 0 ] && grep -q 'needs a capture' "$T/err" && pass needs-capture ||
	fail needs-capture "rc=$RC: $ERR"
IN= run -c "open $CAP; probes profile:*; close; open $CAP; quit; probes"
[ "$RC" = 0 ] && [ "$OUT" = "profile:hz:97" ] && pass open-close-quit ||
	fail open-close-quit "rc=$RC: $OUT $ERR"

# ---- SQL read until the statement is complete (the man page's multi-line SQL)
script "SELECT count(*) AS n" "  FROM events" "  WHERE cpu >= 0;" "probes profile:*" \
	"SELECT count(*) AS m FROM events" "probes tracepoint:sched:sched_switch"
run "$CAP"
total=$(awk '$1 == "total" { print $2 }' "$T/exp")
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qx " *$total" &&
   [ "$(printf '%s\n' "$OUT" | grep -c "^ *$total\$")" = 2 ] &&
   printf '%s\n' "$OUT" | grep -qx 'profile:hz:97' &&
   printf '%s\n' "$OUT" | grep -qx 'tracepoint:sched:sched_switch'; then
	pass sql-multiline
else
	fail sql-multiline "rc=$RC: $OUT $ERR"
fi
script "SELECT 'a;" "b' AS s;"
run "$CAP"
# the newline is the value's: a table shows it escaped, on the row's line
[ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qxF 'a;\nb' && pass sql-multiline-quote ||
	fail sql-multiline-quote "rc=$RC: $OUT $ERR"
# ---- discovery: tables, schema, .tables, .schema
IN= run -c "tables; schema frames; .schema stacks; .tables" "$CAP"
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qx 'probe_args' &&
   printf '%s\n' "$OUT" | grep -q 'CREATE TABLE frames(' &&
   printf '%s\n' "$OUT" | grep -qx '  stack_id INTEGER,' &&
   printf '%s\n' "$OUT" | grep -q 'CREATE TABLE stacks(' &&
   printf '%s\n' "$OUT" | grep -q '^events  probes  probe_args'; then
	pass sql-discovery
else
	fail sql-discovery "rc=$RC: $OUT $ERR"
fi
IN= run -c "schema nosuch" "$CAP"
[ "$RC" != 0 ] && grep -q 'no such table: nosuch' "$T/err" && pass schema-unknown ||
	fail schema-unknown "rc=$RC: $ERR"
IN= run -c "sql --tsv SELECT 1" "$CAP"
[ "$RC" != 0 ] && grep -q 'unknown option --tsv' "$T/err" && [ -z "$OUT" ] &&
	pass sql-unknown-option || fail sql-unknown-option "rc=$RC: $OUT $ERR"
# ---- errors speak as dtsh, with dtsh's usage
IN= run -c "flame --frobnicate" "$CAP"
if [ "$RC" != 0 ] && grep -q '^dtsh flame: unknown option --frobnicate' "$T/err" &&
   grep -q '^usage: flame ' "$T/err" && ! grep -q 'dtreport' "$T/err"; then
	pass errors-speak-as-dtsh
else
	fail errors-speak-as-dtsh "rc=$RC: $ERR"
fi
# the reports' help in the shell: its usage, no options of opening a capture
IN= run -c "stats --help; top --help; flame --help" "$CAP"
if [ "$RC" = 0 ] && grep -q '^usage: stats ' "$T/out" && grep -q '^usage: top ' "$T/out" &&
   grep -q '^usage: flame ' "$T/out" && grep -q -- '--comm GLOB' "$T/out" &&
   ! grep -q 'dtreport\|--salvage\|--partial\|several captures' "$T/out"; then
	pass report-help-in-shell
else
	fail report-help-in-shell "rc=$RC: $OUT $ERR"
fi
# ---- an output that is the input is refused, the capture intact
cp "$CAP" "$T/keep.dtc"
ln -sf keep.dtc "$T/keep-link.dtc"
IN= run -c "flame -o $T/keep.dtc; flame -o $T/keep-link.dtc --folded" "$T/keep.dtc"
if [ "$RC" != 0 ] && cmp -s "$CAP" "$T/keep.dtc" &&
   [ "$(grep -c 'refusing to overwrite the input' "$T/err")" = 2 ]; then
	pass flame-output-is-input
else
	fail flame-output-is-input "rc=$RC: $ERR"
fi
IN= run -c "record 1s -o $T/keep-link.dtc" "$T/keep.dtc"
[ "$RC" != 0 ] && cmp -s "$CAP" "$T/keep.dtc" && grep -q 'refusing to overwrite the open capture' "$T/err" &&
	pass record-output-is-capture || fail record-output-is-capture "rc=$RC: $ERR"
# ---- write errors: exit non-zero with the reason
if [ -w /dev/full ]; then
	for c in "top 3" "stats" "probes" "SELECT * FROM events" "flame --folded -o -" "schema"; do
		"$DTSH" -c "$c" "$CAP" >/dev/full 2>"$T/err"
		RC=$?
		n=${c// /-}
		if [ "$RC" != 0 ] && grep -q 'No space left on device\|write error' "$T/err"; then
			pass "dev-full-${n//\*/all}"
		else
			fail "dev-full-${n//\*/all}" "rc=$RC: $(cat "$T/err")"
		fi
	done
	printf 'top 3\n' | "$DTSH" "$CAP" >/dev/full 2>"$T/err"
	[ $? != 0 ] && grep -q 'No space left' "$T/err" && pass dev-full-script ||
		fail dev-full-script "$(cat "$T/err")"
else
	fail dev-full "/dev/full is not writable"
fi
# ---- a capture cut short: status 3 unless --partial
head -c $(( $(stat -c %s "$CAP") / 2 )) "$CAP" >"$T/cut.dtc"
IN= run -c "top 3" "$T/cut.dtc"
[ "$RC" = 3 ] && grep -q 'truncated at offset' "$T/err" && grep -q -- '--partial' "$T/err" &&
	pass cut-capture-status || fail cut-capture-status "rc=$RC: $ERR"
IN= run --partial -c "stats; flame --folded -o $T/cut.fold" "$T/cut.dtc"
[ "$RC" = 0 ] && grep -q 'warning: .*truncated' "$T/err" && [ -s "$T/cut.fold" ] &&
	pass cut-capture-partial || fail cut-capture-partial "rc=$RC: $ERR"
IN= run -c "open $T/cut.dtc; open --partial $T/cut.dtc; probes profile:*" "$CAP"
[ "$RC" = 1 ] && [ "$OUT" = "profile:hz:97" ] && pass open-partial ||
	fail open-partial "rc=$RC: $OUT $ERR"
# ---- --version, and usage errors exit 2 with a reason
IN= run --version
[ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qx "dtsh $(cat "$B/dt-version")" &&
	pass version || fail version "rc=$RC: $OUT $ERR"
# standard output that cannot be written: status 1 and the reason
for o in --version --help; do
	"$DTSH" $o >/dev/full 2>"$T/err"
	rc=$?
	[ $rc = 1 ] && grep -q '^dtsh: writing standard output: No space left on device' "$T/err" &&
		pass "stdout-full$o" || fail "stdout-full$o" "rc=$rc: $(head -c 200 "$T/err")"
done
IN= run "$CAP" "$CAP"
[ "$RC" = 2 ] && grep -q "unexpected argument" "$T/err" && pass extra-argument ||
	fail extra-argument "rc=$RC: $ERR"
for c in "close now" "quit now" "help top now" "tables all"; do
	IN= run -c "$c; probes profile:*" "$CAP"
	[ "$RC" = 1 ] && grep -q "unexpected argument" "$T/err" && grep -q '^usage: ' "$T/err" &&
		[ "$OUT" = "profile:hz:97" ] && pass "extra-argument-${c%% *}" ||
		fail "extra-argument-${c%% *}" "rc=$RC: $OUT $ERR"
done

# ---- top against the counts mkcap wrote
top_check() {
	local name=$1 by=$2 key=$3 n=$4
	# every event, as mkcap counted them (by default top counts the
	# timer probes' samples only)
	IN= run -c "top $n by $by --probe *" "$CAP"
	got=$(printf '%s\n' "$OUT" | awk 'NR > 1 { print $1, $3 }')
	want=$(awk -v k="$key" '$1 == k { print $3, $2 }' "$T/exp" | sort -k1,1nr -k2 | head -n "$n")
	if [ "$RC" = 0 ] && [ "$got" = "$want" ]; then
		pass "$name"
	else
		fail "$name" "rc=$RC got [$got] want [$want] $ERR"
	fi
}
top_check top-comm comm comm 5
top_check top-probe probe probe 3
top_check top-syscall syscall syscall 2
IN= run -c "top 1 by stack --probe *" "$CAP"
want="$(exp stack schedule)"
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | awk 'NR == 2' |
   grep -q "^ *$want .*schedule <- do_syscall_64 <- entry_SYSCALL_64\$"; then
	pass top-stack-symbolized
else
	fail top-stack-symbolized "rc=$RC want $want schedule...: $OUT $ERR"
fi
IN= run -c "top by nothing" "$CAP"
[ "$RC" != 0 ] && grep -q "cannot group by 'nothing'" "$T/err" && pass top-bad-key ||
	fail top-bad-key "rc=$RC: $ERR"

# ---- SQL: the same handle across queries, counts as written
script "sql SELECT count(*) AS n FROM events" \
       "select count(*) AS n FROM events WHERE probe IN (SELECT id FROM probes WHERE name LIKE 'syscall:read:%')"
run "$CAP"
total=$(awk '$1 == "total" { print $2 }' "$T/exp")
reads=$(( $(exp probe syscall:read:entry) + $(exp probe syscall:read:return) ))
if [ "$RC" = 0 ] && grep -qw "$total" "$T/out" && grep -qw "$reads" "$T/out"; then
	pass sql
else
	fail sql "rc=$RC want $total and $reads: $OUT $ERR"
fi
IN= run -c "sql --csv SELECT name FROM probes WHERE name LIKE 'tracepoint:sched:sched_w%'" "$CAP"
[ "$RC" = 0 ] && printf "%s\n" "$OUT" | tr -d "\r" | grep -qx tracepoint:sched:sched_wakeup && pass sql-csv ||
	fail sql-csv "rc=$RC: $OUT $ERR"

# ---- describe names the SQL columns that hold each field (issue 23 item 1):
# prev_pid is events.arg2 (prev_comm's char[16] takes arg0 and arg1), and the
# names it gives are the columns of the probe's view
script 'describe tracepoint:sched:sched_switch'
run "$CAP"
if [ "$RC" = 0 ] && grep -Eq '^  prev_comm +char\[16\] +arg0\.\.arg1 as text$' "$T/out" &&
   grep -Eq '^  prev_pid +pid_t +arg2 as int32$' "$T/out" &&
   grep -Eq '^  next_pid +pid_t +arg5 as int32$' "$T/out" &&
   grep -Fq 'SELECT * FROM "tracepoint:sched:sched_switch"' "$T/out"; then
	pass describe-sql-columns
else
	fail describe-sql-columns "rc=$RC: $OUT $ERR"
fi
cols=$(awk '/^  column/ { on = 1; next } on && NF >= 3 { printf "%s%s", sep, $1; sep = ", " }' "$T/out")
IN= run -c "sql --csv SELECT $cols FROM \"tracepoint:sched:sched_switch\" LIMIT 1" "$CAP"
[ "$RC" = 0 ] && [ "$(printf '%s\n' "$OUT" | head -1)" = "${cols//, /,}" ] &&
	pass describe-columns-are-the-view || fail describe-columns-are-the-view "cols '$cols' rc=$RC: $OUT $ERR"

# ---- sql: options after the query as before it; CSV as dtreport's, LF ends
IN= run -c "sql SELECT 1 AS a --json" "$CAP"
[ "$RC" = 0 ] && [ "$(printf '%s' "$OUT" | tr -d '\n')" = '[{"a":1}]' ] && pass sql-option-after-query ||
	fail sql-option-after-query "rc=$RC: $OUT $ERR"
IN= run -c "SELECT 2 AS b --csv" "$CAP"
[ "$RC" = 0 ] && [ "$OUT" = "b
2" ] && pass sql-bare-option-after-query || fail sql-bare-option-after-query "rc=$RC: $OUT $ERR"
q="SELECT comm, count(*) AS n, 'x,y' AS q FROM events GROUP BY comm ORDER BY comm"
"$DTSH" -c "sql --csv $q" "$CAP" >"$T/sh.csv" 2>"$T/err"
"$DTREPORT" sql --csv "$CAP" "$q" >"$T/rep.csv" 2>>"$T/err"
if [ -s "$T/sh.csv" ] && cmp -s "$T/sh.csv" "$T/rep.csv" && ! grep -q $'\r' "$T/sh.csv"; then
	pass sql-csv-same-as-dtreport
else
	fail sql-csv-same-as-dtreport "$(od -c "$T/sh.csv" | head -2) vs $(od -c "$T/rep.csv" | head -2) $(cat "$T/err")"
fi

# ---- stats and flame: dtreport's code on a dtgen capture
if [ -x "$DTGEN" ]; then
	if "$DTGEN" -o "$T/g.dtc" -n 50000 --syscalls >"$T/gen.out" 2>&1; then
		# top against an independent count: dtreport's SQL (the timer
		# probes' samples, as flame counts them)
		for by in comm pid; do
			IN= run -c "top 6 by $by" "$T/g.dtc"
			got=$(printf '%s\n' "$OUT" | awk 'NR > 1 { print $1, $3 }')
			want=$("$DTREPORT" sql --csv "$T/g.dtc" \
				"SELECT count(*), $by FROM events WHERE probe IN (SELECT id FROM probes
				 WHERE provider IN ('profile', 'interval')) GROUP BY $by ORDER BY 1 DESC, 2 LIMIT 6" |
				tr -d '\r' | awk -F, 'NR > 1 { print $1, $2 }')
			if [ "$RC" = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
				pass "top-$by-vs-sql"
			else
				fail "top-$by-vs-sql" "rc=$RC got [$got] want [$want] $ERR"
			fi
		done
		IN= run -c "stats" "$T/g.dtc"
		if [ "$RC" = 0 ] && [ -n "$OUT" ] && [ -x "$DTREPORT" ] &&
		   [ "$OUT" = "$("$DTREPORT" stats "$T/g.dtc" 2>/dev/null)" ]; then
			pass stats-same-as-dtreport
		else
			fail stats-same-as-dtreport "rc=$RC: $OUT $ERR"
		fi
		IN= run -c "flame -o $T/f.svg" "$T/g.dtc"
		if [ "$RC" = 0 ] && head -c 2000 "$T/f.svg" 2>/dev/null | grep -q '<svg'; then
			pass flame-svg
		else
			fail flame-svg "rc=$RC: $ERR"
		fi
		# pid 0 (every CPU's swapper/N) has one name, the one stats uses
		IN= run -c "top 100 by pid" "$T/g.dtc"
		if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qE '%  0 \[idle\]$' &&
		   "$DTREPORT" stats --top 100 "$T/g.dtc" | grep -qE ' 0  \[idle\]$'; then
			pass top-pid0-idle
		else
			fail top-pid0-idle "rc=$RC: $OUT $ERR"
		fi
		IN= run -c "flame -o $T/f2.svg --comm nosuchcomm*; stats" "$T/g.dtc"
		grep -q . "$T/out" && pass flame-then-stats || fail flame-then-stats "rc=$RC: $ERR"
		# ---- the report engine in-process: dtsh and dtreport share it
		# (cmd_*.c parse, engine.h computes), so their outputs are equal
		for by in comm pid probe stack syscall; do
			IN= run -c "top 6 by $by" "$T/g.dtc"
			want=$("$DTREPORT" top -n 6 --by "$by" "$T/g.dtc" 2>&1)
			if [ "$RC" = 0 ] && [ -n "$OUT" ] && [ "$OUT" = "$want" ]; then
				pass "top-$by-same-as-dtreport"
			else
				fail "top-$by-same-as-dtreport" "rc=$RC: [$OUT] want [$want] $ERR"
			fi
		done
		IN= run -c "top 4 by probe --cpu 1 --since 0.01" "$T/g.dtc"
		want=$("$DTREPORT" top --count 4 --by probe --cpu 1 --since 0.01 "$T/g.dtc" 2>&1)
		[ "$RC" = 0 ] && [ -n "$OUT" ] && [ "$OUT" = "$want" ] && pass top-filtered-same-as-dtreport ||
			fail top-filtered-same-as-dtreport "rc=$RC: [$OUT] want [$want] $ERR"
		# a filter narrows top: against SQL's count of the same rows
		got=$("$DTREPORT" top -n 5 --by pid --cpu 0 "$T/g.dtc" | awk 'NR > 1 { print $1, $3 }')
		want=$("$DTREPORT" sql --csv "$T/g.dtc" \
			"SELECT count(*), pid FROM events WHERE cpu = 0 AND probe IN (SELECT id FROM probes
			 WHERE provider IN ('profile', 'interval')) GROUP BY pid ORDER BY 1 DESC, 2 LIMIT 5" |
			tr -d '\r' | awk -F, 'NR > 1 { print $1, $2 }')
		[ -n "$want" ] && [ "$got" = "$want" ] && pass dtreport-top-filter-vs-sql ||
			fail dtreport-top-filter-vs-sql "got [$got] want [$want]"
		IN= run -c "stats --json --comm '*a*' --cpu 0,1" "$T/g.dtc"
		want=$("$DTREPORT" stats --json --comm '*a*' --cpu 0,1 "$T/g.dtc" 2>/dev/null)
		[ "$RC" = 0 ] && [ -n "$OUT" ] && [ "$OUT" = "$want" ] && pass stats-filtered-same-as-dtreport ||
			fail stats-filtered-same-as-dtreport "rc=$RC: $ERR"
		IN= run -c "flame --folded -o - --kernel" "$T/g.dtc"
		want=$("$DTREPORT" flame --folded --kernel "$T/g.dtc" 2>/dev/null)
		[ "$RC" = 0 ] && [ -n "$OUT" ] && [ "$OUT" = "$want" ] && pass flame-folded-same-as-dtreport ||
			fail flame-folded-same-as-dtreport "rc=$RC: $ERR"
		IN= run -c "flame -o $T/sh.svg --title T --probe 'profile:*'" "$T/g.dtc"
		"$DTREPORT" flame -o "$T/rep.svg" --title T --probe 'profile:*' "$T/g.dtc" 2>/dev/null
		# the subtitle names the capture as each was given it: the same path
		[ "$RC" = 0 ] && [ -s "$T/sh.svg" ] && cmp -s "$T/sh.svg" "$T/rep.svg" &&
			pass flame-svg-same-as-dtreport || fail flame-svg-same-as-dtreport "rc=$RC: $ERR"
		# no child process: in a pid namespace of its own, the last pid
		# handed out after report commands is the one after a command
		# that runs nothing (LeakSanitizer's own task counts in both)
		nsrun() {
			unshare --user --pid --fork --map-root-user --mount-proc sh -c \
				'"$1" -c "$2" "$3" >/dev/null 2>&1; read p </proc/sys/kernel/ns_last_pid; echo "$p"' \
				sh "$DTSH" "$1" "$T/g.dtc" 2>"$T/ns.err"
		}
		base=$(nsrun "probes")
		reps=$(cd "$T" && nsrun "stats; flame -o $T/ns.svg; top 3; top 2 by stack; stats --cpu 0")
		if [ -z "$base" ]; then
			fail reports-without-fork "no pid namespace to count in: $(cat "$T/ns.err")"
		elif [ "$reps" = "$base" ] && [ -s "$T/ns.svg" ]; then
			pass reports-without-fork
		else
			fail reports-without-fork "last pid $reps after the reports, $base after probes"
		fi
		# dtreport top: its usage errors
		"$DTREPORT" top >/dev/null 2>"$T/err"; r1=$?
		"$DTREPORT" top --by nothing "$T/g.dtc" >/dev/null 2>"$T/err2"; r2=$?
		"$DTREPORT" top "$T/g.dtc" "$T/g.dtc" >/dev/null 2>"$T/err3"; r3=$?
		if [ $r1 = 2 ] && grep -q 'no capture given' "$T/err" &&
		   [ $r2 = 2 ] && grep -q "^dtreport top: cannot group by 'nothing'" "$T/err2" &&
		   [ $r3 = 2 ] && grep -q 'unexpected argument' "$T/err3"; then
			pass dtreport-top-usage
		else
			fail dtreport-top-usage "$r1 $r2 $r3: $(cat "$T/err" "$T/err2" "$T/err3")"
		fi
		# dtsh: the capture is the open one; --salvage belongs to opening
		IN= run -c "top 3 by comm extra" "$T/g.dtc"
		[ "$RC" != 0 ] && grep -q "^dtsh top: unexpected argument 'extra'" "$T/err" &&
			pass top-extra-argument || fail top-extra-argument "rc=$RC: $ERR"
		IN= run -c "stats --salvage" "$T/g.dtc"
		[ "$RC" != 0 ] && grep -q '^dtsh stats: --salvage' "$T/err" && [ -z "$OUT" ] &&
			pass stats-salvage-refused || fail stats-salvage-refused "rc=$RC: $ERR"
	else
		fail dtgen "$(cat "$T/gen.out")"
	fi
else
	fail dtgen "$DTGEN is missing"
fi

# ---- open of several captures, or a directory: stats, flame and sql read
# them all, as dtreport does with the same list
F=$T/fleet
mkdir -p "$F" "$T/nodtc"
if "$DTGEN" -o "$F/a.dtc" -n 20000 -s 2 >/dev/null 2>&1 &&
   "$DTGEN" -o "$F/b.dtc" -n 30000 -s 3 --syscalls >/dev/null 2>&1; then
	q='SELECT capture, count(*) FROM events GROUP BY capture ORDER BY capture'
	IN= run -c "open $F; sql --csv $q"
	na=$("$DTREPORT" sql --csv "$F/a.dtc" 'SELECT count(*) FROM events' | tr -d '\r' | tail -1)
	nb=$("$DTREPORT" sql --csv "$F/b.dtc" 'SELECT count(*) FROM events' | tr -d '\r' | tail -1)
	got=$(printf '%s\n' "$OUT" | tr -d '\r' | tail -n +2)
	if [ "$RC" = 0 ] && [ "$got" = "a,$na
b,$nb" ] && [ "$na" = 20000 ] && [ "$nb" = 30000 ]; then
		pass open-dir-sql
	else
		fail open-dir-sql "rc=$RC got [$got] want a,$na b,$nb: $ERR"
	fi
	IN= run -c "open $F/b.dtc $F/a.dtc; stats --top 5"
	want=$("$DTREPORT" stats --top 5 "$F/b.dtc" "$F/a.dtc" 2>/dev/null)
	if [ "$RC" = 0 ] && [ -n "$want" ] && [ "$OUT" = "$want" ] &&
	   [ "$OUT" != "$("$DTREPORT" stats --top 5 "$F/b.dtc" 2>/dev/null)" ]; then
		pass open-many-stats
	else
		fail open-many-stats "rc=$RC: $OUT $ERR"
	fi
	IN= run -c "open $F; flame --folded -o $T/many.folded"
	"$DTREPORT" flame --folded -o "$T/many-want.folded" "$F" 2>/dev/null
	"$DTREPORT" flame --folded -o "$T/one.folded" "$F/a.dtc" 2>/dev/null
	if [ "$RC" = 0 ] && [ -s "$T/many.folded" ] && cmp -s "$T/many.folded" "$T/many-want.folded" &&
	   ! cmp -s "$T/many.folded" "$T/one.folded"; then
		pass open-dir-flame
	else
		fail open-dir-flame "rc=$RC: $ERR"
	fi
	# top reads one capture: refused with the reason, the shell goes on
	IN= run -c "open $F; top; sql --csv SELECT count(*) FROM events"
	if [ "$RC" = 1 ] && grep -q "top: reads one capture, and 2 are open" "$T/err" &&
	   [ "$(printf '%s\n' "$OUT" | tr -d '\r' | tail -1)" = $((na + nb)) ]; then
		pass open-many-top-refused
	else
		fail open-many-top-refused "rc=$RC: $OUT $ERR"
	fi
	# a list with one bad member, or a directory without captures, opens
	# nothing: what was open stays open
	IN= run -c "open $CAP; open $F/a.dtc $T/nosuch.dtc; open $T/nodtc; probes tracepoint:sched:*"
	if [ "$RC" = 1 ] && grep -q "nosuch.dtc" "$T/err" && grep -q "nodtc" "$T/err" &&
	   [ "$(printf '%s\n' "$OUT" | head -1)" = "tracepoint:sched:sched_switch" ]; then
		pass open-many-failure-keeps
	else
		fail open-many-failure-keeps "rc=$RC: $OUT $ERR"
	fi
	# close, then one capture again: sql sees no capture column
	IN= run -c "open $F; close; open $F/a.dtc; sql --csv SELECT count(*) FROM events"
	if [ "$RC" = 0 ] && [ "$(printf '%s\n' "$OUT" | tr -d '\r' | tail -1)" = "$na" ]; then
		pass open-many-close-reopen
	else
		fail open-many-close-reopen "rc=$RC: $OUT $ERR"
	fi
else
	fail open-many "dtgen failed"
fi

# ---- live mode without a device: the perf source, as dtrec -l lists it
if [ ! -e /dev/dt ]; then
	IN= run -c "probes syscall:getppid:*"
	if [ "$RC" = 0 ] && grep -q 'syscall:getppid:entry' "$T/out"; then
		pass no-device-perf-source
	else
		fail no-device-perf-source "rc=$RC: $ERR"
	fi
	if [ -x "$B/bin/dtrec" ]; then
		want=$("$B/bin/dtrec" -l 'syscall:getppid:*' 2>&1 | sort | tr '\n' ' ')
		got=$(grep -o 'syscall:getppid:[a-z]*' "$T/out" | sort | tr '\n' ' ')
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			pass no-device-same-as-dtrec
		else
			fail no-device-same-as-dtrec "dtrec listed [$want], dtsh [$got]"
		fi
	fi
fi

# ---- live mode on dtrec's LD_PRELOAD stand-in for /dev/dt
FAKE=$B/tests/dtrec/fakedt.so
live() { env ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1 LD_PRELOAD="$FAKE" "$@"; }
if [ -f "$FAKE" ]; then
	live "$DTSH" -c 'probes syscall:read:*; describe tracepoint:sched:sched_switch' >"$T/out" 2>"$T/err"
	RC=$?
	if [ "$RC" = 0 ] && grep -qx 'syscall:read:return' "$T/out" && grep -q '^  id 6' "$T/out"; then
		pass live-probes-describe
	else
		fail live-probes-describe "rc=$RC: $(cat "$T/out" "$T/err")"
	fi
	live "$DTSH" -c 'enable syscall:reed:entry; disable syscall:read:entry; record 1s' >"$T/out" 2>"$T/err"
	RC=$?
	if [ "$RC" != 0 ] && grep -q "did you mean 'syscall:read:entry'" "$T/err" &&
	   grep -q "'syscall:read:entry' is not enabled" "$T/err" &&
	   grep -q "nothing to record" "$T/err"; then
		pass live-enable-errors
	else
		fail live-enable-errors "rc=$RC: $(cat "$T/err")"
	fi
	printf '%s\n' 'enable profile:hz:97' 'enable syscall:read:entry stacks' \
		"record 1s -o $T/l.dtc" 'probes' 'top by probe' >"$T/in"
	(cd "$T" && live "$DTSH" <"$T/in" >"$T/out" 2>"$T/err")
	RC=$?
	n=$(awk '$3 == "syscall:read:entry" { print $1 }' "$T/out")
	if [ "$RC" = 0 ] && [ -s "$T/l.dtc" ] && [ "${n:-0}" -gt 0 ] 2>/dev/null; then
		pass live-record-then-top
	else
		fail live-record-then-top "rc=$RC: $(cat "$T/out" "$T/err")"
	fi
	# after record, probes lists the new capture's table: the enabled ones
	if [ "$(grep -c ':' <(grep -v '%' "$T/out"))" -ge 2 ] && ! grep -qx 'interval:hz:1' "$T/out"; then
		pass live-record-opens-capture
	else
		fail live-record-opens-capture "$(cat "$T/out")"
	fi
else
	fail live-fake "$FAKE is missing"
fi

# ---- the manual: no mandoc warning (STYLE notes about pages not yet
# installed are not warnings)
top=$(cd "$HERE/../.." && pwd)
if ! command -v mandoc >/dev/null; then
	fail man-lint "mandoc is not installed"
elif lint=$(mandoc -Tlint -Wwarning "$top/man/dtsh.1" 2>&1) && [ -z "$lint" ]; then
	pass man-lint
else
	fail man-lint "$lint"
fi

# ---- mutated lines, many sessions of them: no crash, hang or sanitizer report
"$DTGEN" -o "$T/fuzz.dtc" -n 20000 --syscalls >/dev/null 2>&1 || fail fuzz-capture "dtgen failed"
python3 "$HERE/linefuzz.py" "$DTSH" "$T/fuzz.dtc" "$T/linefuzz" 1

# ---- a pseudo-terminal: completion, history, Ctrl-C, Ctrl-D
# a capture big enough that flame takes seconds (Ctrl-C test)
# (10M events: the ASan flame of 4M now ends in about the half second the
# test waits before its Ctrl-C on an idle machine)
"$DTGEN" -o "$T/big.dtc" -n 10000000 >/dev/null 2>&1 || fail big-capture "dtgen failed"
python3 "$HERE/ptysession.py" "$DTSH" "$CAP" "$T" "$FAKE" "$T/big.dtc"
