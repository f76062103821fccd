#!/bin/bash
# summarize.sh RESULTS_DIR SUITE...  - the closing line of make check.
set -u
dir=$1; shift
pass=0 fail=0
for s in "$@"; do
	res=$dir/$s.res
	if [ ! -f "$res" ]; then
		echo "FAIL $s: suite produced no result (build failed?)"
		fail=$((fail + 1))
		continue
	fi
	p=$(grep -c '^PASS ' "$res"); f=$(grep -c '^FAIL ' "$res")
	pass=$((pass + p)); fail=$((fail + f))
done
if [ $fail -ne 0 ]; then
	echo "failures:"
	cat "$dir"/*.res 2>/dev/null | grep '^FAIL ' | sed 's/^/  /'
fi
if [ $((pass + fail)) -eq 0 ]; then
	echo "FAIL: no test ran"
	fail=1
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
