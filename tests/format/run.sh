#!/bin/bash
# run.sh BUILD FMT_TEST DTGEN FMT_TEST_TSAN FMT_ROBUST DTCDUMP TABLE_TEST: the
# format suite (PASS/FAIL lines).
set -u
b=$1 fmt_test=$2 dtgen=$3 fmt_tsan=$4 fmt_robust=$5 dtcdump=$6 table_test=$7
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
# every tool answers --version; usage errors exit 2
v=$("$dtcdump" --version 2>&1)
[ "$v" = "dtcdump $(cat "$b/dt-version")" ] && ok dump.version || no dump.version "$v"
"$dtcdump" --version >/dev/full 2>"$t/err"
[ $? = 1 ] && grep -q 'No space left on device' "$t/err" && ok dump.version_stdout_full ||
	no dump.version_stdout_full "$(head -c 200 "$t/err")"
"$dtcdump" -e 12x "$t/g0.dtc" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] && ok dump.bad_count_usage || no dump.bad_count_usage "dtcdump -e 12x: status $rc"

# the growth helper and hash table every array and index uses; a failed
# allocation must come back as NULL for the ENOMEM case to be tested
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 "$table_test"
rc=$?
[ $rc -eq 0 ] || no table_test "exited with status $rc"

"$fmt_test" "$t" "$t/g1.dtc"
rc=$?
[ $rc -eq 0 ] || no fmt_test "exited with status $rc"
"$fmt_tsan" --tsan "$t"
rc=$?
[ $rc -eq 0 ] || no fmt_test_tsan "exited with status $rc (TSan report above?)"

# damaged, cut, hostile and future captures (issue #10)
"$dtgen" -o "$t/r.dtc" -n 60000 -s 5 --block 8192 --syscalls &&
"$dtgen" -o "$t/r0.dtc" -n 0 -s 5 ||
	no robust.gen "dtgen failed"
"$fmt_robust" "$t" "$t/r.dtc" "$t/r0.dtc"
rc=$?
[ $rc -eq 0 ] || no fmt_robust "exited with status $rc"

# version-2 captures (before feature bits) still read, field for field: the
# last version-2 writer and dumper are built from the tree's history
v2rev=$(git rev-parse --verify -q 6c853d4^{commit} 2>/dev/null || true)
if [ -z "$v2rev" ]; then
	no v2.reads "commit 6c853d4 (last version-2 writer) not in this checkout"
else
	mkdir -p "$t/v2" &&
	git archive "$v2rev" formats include | tar -x -C "$t/v2" &&
	for p in dtgen dtcdump; do
		cc -std=c11 -D_GNU_SOURCE -O1 -I"$t/v2/include" -I"$t/v2/formats" -o "$t/v2/$p" \
			"$t/v2/formats/gen/$p.c" "$t/v2/formats/"dtcap_*.c -lzstd -lxxhash -lpthread -lm ||
			exit 1
	done &&
	"$t/v2/dtgen" -o "$t/v2.dtc" -n 30000 -s 4 --block 8192 --syscalls ||
		no v2.build "cannot build the version-2 writer from $v2rev"
	"$t/v2/dtcdump" -e 30000 "$t/v2.dtc" >"$t/v2.old" 2>&1
	"$dtcdump" -e 30000 "$t/v2.dtc" >"$t/v2.new" 2>&1
	grep -q '^meta format 2 ' "$t/v2.new" && ok v2.version_reported ||
		no v2.version_reported "$(grep '^meta' "$t/v2.new")"
	grep -v '^meta ' "$t/v2.new" | sed 's/ ctx 255 nargs/ nargs/' >"$t/v2.newf"
	if [ "$(grep -c '^ev ' "$t/v2.old")" -eq 30000 ] && cmp -s "$t/v2.old" "$t/v2.newf"; then
		ok v2.reads_field_for_field
	else
		no v2.reads_field_for_field "$(diff "$t/v2.old" "$t/v2.newf" | head -3)"
	fi
fi

rm -rf "$t"
exit 0
