#!/bin/bash
# run.sh BUILD: the ring test under ASan+UBSan then TSan.  Each flavour's
# PASS/FAIL lines are prefixed with its name; a sanitizer report or a crash
# is a FAIL even if every assertion passed.
B=$1
rc=0
for f in asan tsan; do
	n=100000
	[ $f = tsan ] && n=40000
	out=$(TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
		"$B/$f/bin/ring_test" $n 2>&1)
	st=$?
	printf '%s\n' "$out" | sed -n "s/^\(PASS\|FAIL\) /\1 $f\//p"
	if [ $st -ne 0 ] || printf '%s\n' "$out" | grep -q 'Sanitizer\|runtime error'; then
		echo "FAIL $f/clean: exit $st"
		printf '%s\n' "$out" | grep -v '^\(PASS\|FAIL\)' | head -40
		rc=1
	else
		echo "PASS $f/clean"
	fi
done
exit 0
