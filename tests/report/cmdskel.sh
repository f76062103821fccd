#!/bin/bash
# cmdskel.sh - the command-line skeleton the engine's reports share
# (cli/lib/report/cmd_run.c): top, callers, callees, latency, syscalls,
# blame and heatmap each take one capture in dtreport, say the same thing
# when given none or two, answer --help on stdout with status 0, report a
# capture that cannot be opened with status 1, and in dtsh take none and
# refuse --salvage.  Prints PASS/FAIL lines.
#
#	DTREPORT=... DTSH=... DTGEN=... cmdskel.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
sanitizers_strict
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$DTGEN" -o "$T/c.dtc" -n 2000 -s 1 --syscalls >/dev/null 2>&1 ||
	{ fail cmdskel-capture "dtgen could not write a capture"; exit 0; }

# CMD and the words before its capture operand (callers/callees: FUNC;
# blame: its required --tid)
while read -r cmd pre; do
	# run NAME ARGS...: dtreport with stdout in $T/out, stderr in $T/err, status in RC
	"$DTREPORT" $cmd $pre >"$T/out" 2>"$T/err"; RC=$?
	if [ $RC = 2 ] && grep -qx "dtreport $cmd: no capture given" "$T/err" &&
	   grep -q "^usage: dtreport $cmd " "$T/err" && ! san "$T/err"; then
		pass "$cmd-no-capture"
	else
		fail "$cmd-no-capture" "rc $RC: $(head -3 "$T/err")"
	fi
	"$DTREPORT" $cmd $pre "$T/c.dtc" "$T/c.dtc" >"$T/out" 2>"$T/err"; RC=$?
	if [ $RC = 2 ] &&
	   grep -qxF "dtreport $cmd: unexpected argument '$T/c.dtc' ($cmd takes one capture)" "$T/err" &&
	   grep -q "^usage: dtreport $cmd " "$T/err" && [ ! -s "$T/out" ] && ! san "$T/err"; then
		pass "$cmd-two-captures"
	else
		fail "$cmd-two-captures" "rc $RC: $(head -3 "$T/err")"
	fi
	"$DTREPORT" $cmd --help >"$T/out" 2>"$T/err"; RC=$?
	if [ $RC = 0 ] && grep -q "^usage: dtreport $cmd " "$T/out" && [ ! -s "$T/err" ]; then
		pass "$cmd-help"
	else
		fail "$cmd-help" "rc $RC: $(head -3 "$T/err")"
	fi
	"$DTREPORT" $cmd $pre "$T/none.dtc" >"$T/out" 2>"$T/err"; RC=$?
	if [ $RC = 1 ] && grep -q "^dtreport $cmd: .*none.dtc" "$T/err" && [ ! -s "$T/out" ] &&
	   ! san "$T/err"; then
		pass "$cmd-unopenable"
	else
		fail "$cmd-unopenable" "rc $RC: $(head -3 "$T/err")"
	fi
	"$DTSH" -c "$cmd $pre zz" "$T/c.dtc" >"$T/out" 2>"$T/err"; RC=$?
	if [ $RC != 0 ] &&
	   grep -qxF "dtsh $cmd: unexpected argument 'zz' ($cmd reads the open capture)" "$T/err" &&
	   ! san "$T/err"; then
		pass "dtsh-$cmd-operand"
	else
		fail "dtsh-$cmd-operand" "rc $RC: $(head -3 "$T/err")"
	fi
	"$DTSH" -c "$cmd $pre --salvage" "$T/c.dtc" >"$T/out" 2>"$T/err"; RC=$?
	if [ $RC != 0 ] && grep -q "^dtsh $cmd: --salvage: the capture is open already" "$T/err" &&
	   ! san "$T/err"; then
		pass "dtsh-$cmd-salvage"
	else
		fail "dtsh-$cmd-salvage" "rc $RC: $(head -3 "$T/err")"
	fi
done <<'LIST'
top
callers main
callees main
latency
syscalls
blame --tid 1
heatmap
LIST

# top's own dtsh words ([N] [by KEY]) before the operands
"$DTSH" -c "top 2 by comm" "$T/c.dtc" >"$T/out" 2>"$T/err"; RC=$?
n=$(grep -cE '^ +[0-9]+ +[0-9.]+% ' "$T/out")
if [ $RC = 0 ] && [ "$n" = 2 ] && grep -q ' comm ' "$T/out" && ! san "$T/err"; then
	pass dtsh-top-words
else
	fail dtsh-top-words "rc $RC, $n rows: $(head -3 "$T/out") $(head -2 "$T/err")"
fi
"$DTSH" -c "top 2 by" "$T/c.dtc" >"$T/out" 2>"$T/err"; RC=$?
if [ $RC != 0 ] && grep -q '^usage: top ' "$T/err" && ! san "$T/err"; then
	pass dtsh-top-by-needs-key
else
	fail dtsh-top-by-needs-key "rc $RC: $(head -2 "$T/err")"
fi
# flame --from-folded is dtreport's: dtsh's flame refuses it, drawing nothing
printf 'a;b 3\n' >"$T/x.folded"
"$DTSH" -c "flame --from-folded $T/x.folded --folded" "$T/c.dtc" >"$T/out" 2>"$T/err"; RC=$?
if [ $RC != 0 ] && grep -q 'only dtreport flame reads folded text' "$T/err" && [ ! -s "$T/out" ] &&
   ! san "$T/err"; then
	pass dtsh-flame-no-from-folded
else
	fail dtsh-flame-no-from-folded "rc $RC: $(head -2 "$T/err")"
fi
exit 0
