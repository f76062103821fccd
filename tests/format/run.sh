#!/bin/bash
# run.sh BUILD FMT_TEST DTGEN FMT_TEST_TSAN: the format suite (PASS/FAIL lines).
set -u
b=$1 fmt_test=$2 dtgen=$3 fmt_tsan=$4
t=$(mktemp -d /dev/shm/dt-format.XXXXXX 2>/dev/null || mktemp -d /tmp/dt-format.XXXXXX)
trap 'rm -rf "$t"' EXIT

ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

# generator: deterministic, seed-sensitive, threaded writes the same bytes
"$dtgen" -o "$t/g1.dtc" -n 150000 -s 7 --block 8192 &&
"$dtgen" -o "$t/g2.dtc" -n 150000 -s 7 --block 8192 &&
"$dtgen" -o "$t/g3.dtc" -n 150000 -s 8 --block 8192 &&
"$dtgen" -o "$t/g4.dtc" -n 150000 -s 7 --block 8192 --threaded ||
	no gen.runs "dtgen failed"
cmp -s "$t/g1.dtc" "$t/g2.dtc" && ok gen.deterministic || no gen.deterministic "same args, different bytes"
cmp -s "$t/g1.dtc" "$t/g3.dtc" && no gen.seed_matters "seeds 7 and 8 gave the same file" || ok gen.seed_matters
cmp -s "$t/g1.dtc" "$t/g4.dtc" && ok gen.threaded_same_bytes || no gen.threaded_same_bytes "--threaded changed the bytes"
out=$("$dtgen" -o "$t/g5.dtc" -n 1000 2>&1)
[ -z "$out" ] && ok gen.quiet || no gen.quiet "printed without -v: $out"
"$dtgen" --help | grep -q -- '--stacks' && ok gen.help || no gen.help "--help lacks --stacks"
"$dtgen" -n 5 2>/dev/null && no gen.needs_output "ran without -o" || ok gen.needs_output
"$dtgen" -o "$t/g6.dtc" -n 20000 --syscalls -s 3 && ok gen.syscalls || no gen.syscalls "dtgen --syscalls failed"
"$dtgen" -o "$t/g0.dtc" -n 0 && ok gen.zero_events || no gen.zero_events "dtgen -n 0 failed"

"$fmt_test" "$t" "$t/g1.dtc"
rc=$?
[ $rc -eq 0 ] || no fmt_test "exited with status $rc"
"$fmt_tsan" --tsan "$t"
rc=$?
[ $rc -eq 0 ] || no fmt_test_tsan "exited with status $rc (TSan report above?)"
rm -rf "$t"
exit 0
