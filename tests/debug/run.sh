#!/bin/bash
# run.sh CACHE OUT KTEST DTREC - the debug lane (see suite.mk): build or reuse the
# debug kernel, build dt.ko against it, run the vm-kernel suite under it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=$1 out=$2 ktest=$3 dtrec=${4:-}
dir=$("$here/build-kernel.sh" "$cache") || { echo "FAIL debug.kernel-built: see the build log under $cache"; exit 0; }
echo "PASS debug.kernel-built"
# dt.ko for that kernel, in a scratch copy (the tree's objects are the
# cloud kernel's)
rm -rf "$out/ko" && mkdir -p "$out/ko/kernel" "$out/ko/include" "$out/ko/scripts"
cp "$top"/kernel/*.c "$top"/kernel/*.h "$top"/kernel/Kbuild "$out/ko/kernel/"
rm -f "$out/ko/kernel/dt_systab.h"
cp "$top"/include/dt_abi.h "$out/ko/include/"
cp "$top"/scripts/systab.sed "$out/ko/scripts/"
if make -C "$dir/src" M="$out/ko/kernel" modules >"$out/ko.log" 2>&1 && [ -f "$out/ko/kernel/dt.ko" ]; then
	echo "PASS debug.module-built"
else
	echo "FAIL debug.module-built: $(tail -5 "$out/ko.log" | tr '\n' ' ')"
	exit 0
fi
# Everything is slower under KASAN and lockdep: longer limits, more memory.
VM_KERNEL=$dir/bzImage VM_KVER=$(cat "$dir/kver") VM_MODULES=$dir/modules \
KSUITE_TIMEOUT=${KSUITE_TIMEOUT:-2400} KSUITE_MEM=${KSUITE_MEM:-1536} KTEST_SLOW=4 \
	"$top/tests/vm/kernel_suite.sh" "$out/ko/kernel/dt.ko" "$ktest" "$out/kernel-out" "$dtrec" |
	sed 's/^\(PASS\|FAIL\) /\1 debug./'
# The interrupt budget with events dearer than its window (a loaded host).
VM_KERNEL=$dir/bzImage VM_KVER=$(cat "$dir/kver") VM_MODULES=$dir/modules \
KSUITE_MEM=${KSUITE_MEM:-1536} "$here/stalled.sh" "$out/ko/kernel/dt.ko" "$ktest" "$out/stalled" |
	sed 's/^\(PASS\|FAIL\) /\1 debug./'
exit 0
