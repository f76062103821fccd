#!/bin/bash
# check-kbuild.sh KDIR SCRATCH: build dt.ko in a scratch copy with W=1,
# then have sparse check every file (C=2); any warning or error line from
# the compiler, modpost or sparse is a FAIL.
set -u
kdir=$1 scratch=$2
top=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -d "$kdir" ]; then
	echo "FAIL headers: no kernel build directory $kdir"
	exit 0
fi
rm -rf "$scratch" && mkdir -p "$scratch/kernel" "$scratch/include" "$scratch/scripts"
cp "$top"/kernel/*.c "$top"/kernel/*.h "$top"/kernel/Kbuild "$scratch/kernel/"
rm -f "$scratch/kernel/dt_systab.h"
cp "$top"/include/dt_abi.h "$scratch/include/"
cp "$top"/scripts/systab.sed "$scratch/scripts/"

# the noise kbuild prints on every out-of-tree build of this kernel package
benign='Skipping BTF generation'

check() {	# name make-args...
	local name=$1 log=$scratch/$1.log
	shift
	make -C "$kdir" M="$scratch/kernel" "$@" >"$log" 2>&1
	local rc=$?
	local bad
	bad=$(grep -Ei 'warning|error' "$log" | grep -v "$benign")
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: make exited $rc"
		tail -20 "$log"
	elif [ -n "$bad" ]; then
		echo "FAIL $name: $(printf '%s\n' "$bad" | wc -l) warning lines"
		printf '%s\n' "$bad" | head -40
	elif [ ! -f "$scratch/kernel/dt.ko" ]; then
		echo "FAIL $name: no dt.ko"
	else
		echo "PASS $name"
	fi
}

if ! command -v sparse >/dev/null; then
	echo "FAIL sparse-installed: sparse not found (scripts/install-deps.sh)"
fi
check w1 W=1 modules
# C=2: sparse checks every source, even those W=1 just compiled
command -v sparse >/dev/null && check sparse C=2 modules
# User memory is read only through copy_from_user_nmi (dt.h, dt_copy_user):
# copy_from_user_nofault was not NMI-safe before mainline d319f344561d and
# nothing at build time tells whether a kernel has the fix.
und=$(nm -u "$scratch/kernel/dt.ko" 2>/dev/null)
if [ -z "$und" ]; then
	echo "FAIL nmi-safe-copy: cannot list dt.ko's undefined symbols (nm)"
elif printf '%s\n' "$und" | grep -qw copy_from_user_nofault; then
	echo "FAIL nmi-safe-copy: dt.ko calls copy_from_user_nofault"
elif ! printf '%s\n' "$und" | grep -qw copy_from_user_nmi; then
	echo "FAIL nmi-safe-copy: dt.ko does not call copy_from_user_nmi"
else
	echo "PASS nmi-safe-copy"
fi
# the generated syscall table came from the headers and is not empty
n=$(grep -c '^DT_SYSCALL(' "$scratch/kernel/dt_systab.h" 2>/dev/null || echo 0)
if [ "$n" -gt 300 ] && grep -q '^DT_SYSCALL(0, read)$' "$scratch/kernel/dt_systab.h"; then
	echo "PASS systab ($n syscalls)"
else
	echo "FAIL systab: $n entries"
fi
exit 0
