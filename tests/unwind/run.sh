#!/bin/bash
# run.sh BUILD_DIR RESULTS_DIR DTREC DTREPORT - the unwind suite (see suite.mk).
set -u
dir=$1 results=$2 dtrec=$3 dtreport=$4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

run() {
	local t=$dir/unwtest target=$dir/target tmp=$dir/tmp chain=level5,level4,level3,level2,level1,main
	rm -rf "$tmp" && mkdir -p "$tmp"

	# 1. the five-deep chain, -O2 -fomit-frame-pointer, its own .symtab;
	#    then cut, corrupted, garbage and orphaned stacks of it
	"$t" -n fp-omitted -c $chain -p 95 -x -- "$target" 2

	# 2. Debian binaries (stripped; libc names from libc6-dbg's debug file)
	seq 1 700000 >"$tmp/data.txt"
	"$t" -n xz -e -p 90 -x -O /dev/null -- xz -T1 -6 -c "$tmp/data.txt"
	"$t" -n gzip -e -p 90 -O /dev/null -- sh -c "exec gzip -9 -c $tmp/data.txt"
	"$t" -n python3 -e -p 90 -- /usr/bin/python3 -c '
import time
def work(n):
    return sum(i * i for i in range(n))
t = time.time()
while time.time() - t < 1.5:
    work(2000)'

	# 3. names of stripped binaries.  Negative control first: stripped, no
	#    debug information anywhere, the chain check must fail.
	cp "$target" "$tmp/stripped" && strip --strip-all "$tmp/stripped"
	if DT_DEBUG_DIR=$tmp/nodebug "$t" -n neg -c $chain -- "$tmp/stripped" 0.5 | grep -q '^FAIL neg/chain'; then
		echo "PASS names/control: a stripped binary without debug files has no level names"
	else
		echo "FAIL names/control: the chain check passed on a binary without names"
	fi
	#    Separate debug file, found by build id under DT_DEBUG_DIR.
	bid=$(readelf -n "$target" | awk '/Build ID/ { print $3 }')
	mkdir -p "$tmp/debug/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$target" "$tmp/debug/.build-id/${bid:0:2}/${bid:2}.debug"
	DT_DEBUG_DIR=$tmp/debug "$t" -n names-buildid -c $chain -- "$tmp/stripped" 1
	#    A debug file of another build under that id is not used.
	echo 'int level1(void){return 1;} int main(void){return level1();}' >"$tmp/o.c"
	cc -g -o "$tmp/o" "$tmp/o.c" && mkdir -p "$tmp/wrong/.build-id/${bid:0:2}" &&
		cp "$tmp/o" "$tmp/wrong/.build-id/${bid:0:2}/${bid:2}.debug"
	if DT_DEBUG_DIR=$tmp/wrong "$t" -n wrongid -c $chain -- "$tmp/stripped" 0.5 | grep -q '^FAIL wrongid/chain'; then
		echo "PASS names/wrong-build-id: a debug file of another build is ignored"
	else
		echo "FAIL names/wrong-build-id: names were taken from a debug file of another build"
	fi
	#    MiniDebugInfo: the local function symbols, xz-compressed into
	#    .gnu_debugdata (the recipe of Fedora's find-debuginfo).
	nm -D "$target" --format=posix --defined-only | awk '{ print $1 }' | sort >"$tmp/dynsyms"
	nm "$target" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort >"$tmp/funcsyms"
	comm -13 "$tmp/dynsyms" "$tmp/funcsyms" >"$tmp/keep"
	objcopy --only-keep-debug "$target" "$tmp/mini.debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$tmp/keep" "$tmp/mini.debug" "$tmp/mini"
	xz -f "$tmp/mini"
	cp "$tmp/stripped" "$tmp/minidebug"
	objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/minidebug"
	DT_DEBUG_DIR=$tmp/nodebug "$t" -n names-minidebuginfo -c $chain -- "$tmp/minidebug" 1
	#    A damaged .gnu_debugdata costs its names, nothing else.
	head -c 200 "$tmp/mini.xz" >"$tmp/bad.xz"
	cp "$tmp/stripped" "$tmp/badmini"
	objcopy --add-section .gnu_debugdata="$tmp/bad.xz" "$tmp/badmini"
	if DT_DEBUG_DIR=$tmp/nodebug "$t" -n badmini -c $chain -- "$tmp/badmini" 0.5 >"$tmp/badmini.log" 2>&1 &&
	   grep -q '^FAIL badmini/chain' "$tmp/badmini.log"; then
		echo "PASS names/damaged-minidebuginfo: read without names, no crash"
	else
		echo "FAIL names/damaged-minidebuginfo: $(grep -m1 -E 'FAIL|ERROR' "$tmp/badmini.log")"
	fi

	#    CFI only in .debug_frame, moved with the names to a separate
	#    debug file: libdwfl finds it by build id
	cp "$dir/target-nocfi" "$tmp/nocfi" && strip --strip-all "$tmp/nocfi"
	bid=$(readelf -n "$dir/target-nocfi" | awk '/Build ID/ { print $3 }')
	mkdir -p "$tmp/nocfi-debug/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$dir/target-nocfi" "$tmp/nocfi-debug/.build-id/${bid:0:2}/${bid:2}.debug"
	DT_DEBUG_DIR=$tmp/nocfi-debug "$t" -n debug-frame -c $chain -- "$tmp/nocfi" 1
	if DT_DEBUG_DIR=$tmp/nodebug "$t" -n nocfi -c level5,level4 -- "$tmp/nocfi" 0.5 |
	   grep -q '^FAIL nocfi/chain'; then
		echo "PASS debug-frame/control: without its debug file the binary cannot be unwound"
	else
		echo "FAIL debug-frame/control: unwound without any CFI (the check cannot fail?)"
	fi

	#    the workers' routing: a process's changes to its worker alone
	"$dir/pooltest"
	#    the sample path with its threads (submit, spool, collect), TSan
	mkdir -p "$tmp/unwpool"
	TSAN_OPTIONS=halt_on_error=1 "$dir/../../tsan/bin/unwpooltsan" "$tmp/unwpool" 2>"$tmp/unwpool.err"
	rc=$?
	if [ $rc -ne 0 ] || grep -q ThreadSanitizer "$tmp/unwpool.err"; then
		echo "FAIL unwpool-tsan/clean: status $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$tmp/unwpool.err")"
	else
		echo "PASS unwpool-tsan/clean: no ThreadSanitizer report"
	fi

	# 4. parsers under fuzz: damaged copies of the ELF files we read
	"$t" -n fuzz -z "$tmp/minidebug" -z "$target" -z /usr/bin/xz

	# 5. dtrec: --user-stacks through the perf source, end to end
	"$here/dtrec.sh" "$dtrec" "$dtreport" "$target" "$tmp/dtrec"

	# 6. dtrec: the dt source's stack copies, against fakedt.so
	"$here/dtsrc.sh" "$dtrec" "$dtreport" "$dir/../dtrec/fakedt.so" "$tmp/dtsrc" "$target"

	# 7. dtrec: samples past the unwinding budget spooled, still unwound
	"$here/spool.sh" "$dtrec" "$dtreport" "$target" "$tmp/spool"
}

mkdir -p "$results"
"$top/tests/run-suite.sh" "$results" unwind bash -c \
	"$(declare -f run); dir=$dir here=$here dtrec=$dtrec dtreport=$dtreport; run"
