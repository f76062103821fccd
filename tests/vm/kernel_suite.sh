#!/bin/bash
# kernel_suite.sh KO KTEST OUTDIR - the vm-kernel suite, host side: one
# boot running kernel_tests.sh, then the guest's kernel log checked here too
# (a guest that crashed cannot check its own).
set -u
here=$(cd "$(dirname "$0")" && pwd)
ko=$1 ktest=$2 out=$3
# A private directory, renamed at the end: a concurrent run of the same
# suite must not mix its files into ours.
mkdir -p "$(dirname "$out")"
run=$(mktemp -d "$out.XXXXXX")
trap 'rm -rf "$run" "$run.script"' EXIT
# KSUITE_TIMEOUT, KSUITE_MEM: the debug lane's slower kernel needs more.
# KTEST_SLOW multiplies the in-guest phase limits (kernel_tests.sh).
script=$run.script
{ echo "KTEST_SLOW=${KTEST_SLOW:-1}"; cat "$here/kernel_tests.sh"; } >"$script"
args=(--script "$script" --bin "$ktest" --out "$run" --timeout "${KSUITE_TIMEOUT:-720}"
	--mem "${KSUITE_MEM:-512}")
if [ -f "$ko" ]; then
	args+=(--ko "$ko")
else
	echo "FAIL module.built: $ko does not exist (kernel build failed?)"
fi
# A locked-up guest cannot run its own watchdog: keep the host backstop short.
VM_BOOT_ALLOWANCE=${VM_BOOT_ALLOWANCE:-90} "$here/run.sh" "${args[@]}" </dev/null
rc=$?
if [ $rc -eq 0 ]; then
	echo "PASS vm.status"
else
	echo "FAIL vm.status: run.sh exited $rc (124 timeout, 125 no boot/crash)"
fi
rm -rf "$out" && mv "$run" "$out"
bad=$(cat "$out/dmesg.txt" "$out/console.txt" 2>/dev/null |
	grep -E 'BUG|Oops|WARNING|general protection|suspected memory leak|unreferenced object|Kernel panic|rcu.*stall')
if [ -f "$out/dmesg.txt" ] && [ -z "$bad" ]; then
	echo "PASS host.dmesg-clean"
else
	echo "FAIL host.dmesg-clean: kernel log missing or has errors"
	echo "$bad" | head -n 40 | sed 's/^/#   /'
fi
exit 0
