#!/bin/bash
# run.sh BUILD - the checklib suite: tests/check.h written to from 8
# threads at once (check_test), under TSan and ASan+UBSan.  Its own lines
# are not results: this script checks them and says PASS or FAIL.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
B=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
nthread=8 ncheck=400
for f in tsan asan; do
	TSAN_OPTIONS=halt_on_error=1 "$B/tests/checklib/check_test-$f" >"$w/out" 2>"$w/err"
	st=$?
	if [ $st -ne 0 ] || san "$w/err" || grep -q 'ThreadSanitizer' "$w/err"; then
		fail "$f/clean" "exit $st: $(grep -m1 -E 'Sanitizer|runtime error|WARNING' "$w/err")"
	else
		pass "$f/clean"
	fi
	# every line whole: a PASS of an even check or a FAIL of an odd one
	# with its reason intact (two runs of 599 of the thread's letter)
	bad=$(grep -vcE '^(PASS t[0-7]\.[0-9]*[02468]|FAIL t([0-7])\.[0-9]*[13579]: ([a-h]{599})\|\3|count [0-9]+ status [0-9]+)$' "$w/out")
	whole=$(grep -cE '^(PASS|FAIL) ' "$w/out")
	[ "$bad" -eq 0 ] && [ "$whole" -eq $((nthread * ncheck)) ] && pass "$f/lines-whole" ||
		fail "$f/lines-whole" "$bad torn lines, $whole of $((nthread * ncheck)) result lines"
	# the reason's letter is its thread's
	mixed=$(grep -E '^FAIL ' "$w/out" | awk '{ t = substr($2, 2, 1); c = substr($3, 1, 1);
		if (index("abcdefgh", c) != t + 1) n++ } END { print n + 0 }')
	[ "$mixed" -eq 0 ] && pass "$f/reason-own-thread" ||
		fail "$f/reason-own-thread" "$mixed FAIL lines carry another thread's reason"
	want="count $((nthread * ncheck / 2)) status 1"
	got=$(grep '^count ' "$w/out")
	[ "$got" = "$want" ] && pass "$f/count" || fail "$f/count" "'$got', want '$want'"
done
exit 0
