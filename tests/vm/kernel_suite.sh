#!/bin/bash
# kernel_suite.sh KO KTEST OUTDIR [DTREC] - the vm-kernel suite, host side
# (DTREC: a static dtrec, for the lockdown messages): two
# boots running kernel_tests.sh (see boot below), then each guest's kernel
# log checked here too (a guest that crashed cannot check its own).
set -u
here=$(cd "$(dirname "$0")" && pwd)
ko=$1 ktest=$2 out=$3 dtrec=${4:-}
# A private directory, renamed at the end: a concurrent run of the same
# suite must not mix its files into ours.
mkdir -p "$(dirname "$out")"
run=$(mktemp -d "$out.XXXXXX")
# KSUITE_TIMEOUT, KSUITE_MEM: the debug lane's slower kernel needs more.
# KTEST_SLOW multiplies the in-guest phase limits (kernel_tests.sh).
#
# Two boots.  Everything but the race phase runs with both vCPUs on one
# host thread (--single-thread): qemu's multi-threaded TCG sometimes keeps
# executing a stale int3 after a static key is patched while the other
# vCPU runs that code, and both vCPUs then spin forever (run.sh); the
# functional tests toggle probes hundreds of times, and a run hung so in
# CI.  The race phase gets a boot of its own with parallel vCPUs, so its
# races are real; that short boot is tried a second time only if it hangs
# (a hang, not a failure, and said so), and fails if it hangs again.
# boot PART ACCEL_ARG DIR TIMEOUT: one boot of kernel_tests.sh; status in $rc
boot() {
	local part=$1 accel=$2 dir=$3 limit=$4 script=$3.script
	{ echo "KTEST_SLOW=${KTEST_SLOW:-1}"; echo "KTEST_PART=$part"; cat "$here/kernel_tests.sh"; } >"$script"
	local args=(--script "$script" --bin "$ktest" --out "$dir" --timeout "$limit"
		--mem "${KSUITE_MEM:-512}")
	[ -n "$accel" ] && args+=("$accel")
	[ -f "$ko" ] && args+=(--ko "$ko")
	[ -n "$dtrec" ] && [ -f "$dtrec" ] && args+=(--bin "$dtrec")
	# built beside dt.ko (kernel/Kbuild): the kpmod test loads and unloads it
	[ -f "$(dirname "$ko")/dt_kptarget.ko" ] &&
		args+=(--file "$(dirname "$ko")/dt_kptarget.ko:/kmod/dt_kptarget.ko")
	# the booted kernel's FUSE module, for upfuse (none if built in)
	[ -n "$fusekmod" ] && args+=(--file "$fusekmod:/kmod/fuse.ko")
	# A locked-up guest cannot run its own watchdog: keep the host backstop short.
	VM_BOOT_ALLOWANCE=${VM_BOOT_ALLOWANCE:-90} "$here/run.sh" "${args[@]}" </dev/null
	rc=$?
}
# host_dmesg NAME DIR: the guest's kernel log as the host got it
host_dmesg() {
	local bad
	bad=$(cat "$2/dmesg.txt" "$2/console.txt" 2>/dev/null |
		grep -E 'BUG|Oops|WARNING|general protection|suspected memory leak|unreferenced object|Kernel panic|rcu.*stall')
	if [ -f "$2/dmesg.txt" ] && [ -z "$bad" ]; then
		echo "PASS $1"
	else
		echo "FAIL $1: kernel log missing or has errors"
		echo "$bad" | head -n 40 | sed 's/^/#   /'
	fi
}
[ -f "$ko" ] || echo "FAIL module.built: $ko does not exist (kernel build failed?)"
# the modules of the kernel run.sh boots (VM_KERNEL: the debug lane's)
if [ -n "${VM_KERNEL:-}" ]; then
	kmods=${VM_MODULES:-}/${VM_KVER:-}
else
	kmods=
	for k in $(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
		[ -d "/lib/modules/$k/kernel" ] && kmods=/lib/modules/$k
	done
fi
fusekmod=
[ -f "$kmods/kernel/fs/fuse/fuse.ko" ] && fusekmod=$kmods/kernel/fs/fuse/fuse.ko
trap 'rm -rf "$run" "$run.script" "$run.race" "$run.race.script"' EXIT

boot main --single-thread "$run" "${KSUITE_TIMEOUT:-720}"
if [ $rc -eq 0 ]; then
	echo "PASS vm.status"
else
	echo "FAIL vm.status: run.sh exited $rc (124 timeout, 125 no boot/crash)"
fi
host_dmesg host.dmesg-clean "$run"

race_limit=${KSUITE_RACE_TIMEOUT:-$((240 * ${KTEST_SLOW:-1}))}
boot race "" "$run.race" "$race_limit"
if [ $rc -eq 124 ]; then
	echo "# the race boot hung (qemu's parallel TCG, see above): once more"
	rm -rf "$run.race"
	boot race "" "$run.race" "$race_limit"
fi
if [ $rc -eq 0 ]; then
	echo "PASS vm.race-status"
else
	echo "FAIL vm.race-status: run.sh exited $rc (124 timeout, 125 no boot/crash)"
fi
host_dmesg host.race-dmesg-clean "$run.race"

rm -rf "$out" && mv "$run" "$out" && { [ ! -d "$run.race" ] || mv "$run.race" "$out/race"; }
exit 0
