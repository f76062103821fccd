#!/bin/bash
# run-suite.sh RESULTS_DIR SUITE CMD [ARGS...]
# Runs one test suite.  The command prints lines "PASS name" or
# "FAIL name: why"; everything it prints goes to RESULTS_DIR/SUITE.log and
# its PASS/FAIL lines to RESULTS_DIR/SUITE.res.  A non-zero exit, or no
# PASS/FAIL line at all, adds a FAIL line: a suite cannot go green silently.
set -u
dir=$1 suite=$2; shift 2
mkdir -p "$dir"
log=$dir/$suite.log res=$dir/$suite.res
start=$(date +%s)
"$@" >"$log" 2>&1
rc=$?
grep -aE '^(PASS|FAIL) ' "$log" | sed "s/^\(PASS\|FAIL\) /\1 $suite\//" >"$res"
if [ $rc -ne 0 ]; then
	echo "FAIL $suite: exited with status $rc (see $log)" >>"$res"
elif [ ! -s "$res" ]; then
	echo "FAIL $suite: ran no test (see $log)" >>"$res"
fi
p=$(grep -c '^PASS ' "$res"); f=$(grep -c '^FAIL ' "$res")
printf '%-12s %4d passed, %d failed (%ds)\n' "$suite" "$p" "$f" $(( $(date +%s) - start ))
grep '^FAIL ' "$res" | sed 's/^/    /'
exit 0
