#!/bin/bash
# build-kernel.sh - the debug kernel of `make check-debug`: Debian's
# linux-source-6.1 configured like the installed cloud kernel (its
# /boot/config, discovered) plus KASAN, lockdep (PROVE_LOCKING),
# DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS and KMEMLEAK, built once and cached
# outside the tree under a key of the source tarball and the final
# .config.  Prints the cache directory on success:
#	DIR/bzImage	the kernel
#	DIR/src		the built tree (KDIR for dt.ko)
#	DIR/modules	an empty modules directory (everything is built in)
#
#   build-kernel.sh [CACHE_ROOT]	(default $DT_DEBUG_CACHE or /var/tmp/dt-debug-kernel)
#
# Modules are off (virtio built in): only vmlinux is compiled, which on 2
# shared cores still takes the better part of an hour.  Build output goes
# to DIR.log; a half-built tree is never taken for a finished one (DIR/ok)
# and is resumed by the next call.
set -u
root=${1:-${DT_DEBUG_CACHE:-/var/tmp/dt-debug-kernel}}
tarball=$(ls -1 /usr/src/linux-source-6.1.tar.xz 2>/dev/null | head -n1)
base=$(ls -1 /boot/config-*-cloud-amd64 2>/dev/null | sort -V | tail -n1)
[ -n "$tarball" ] || { echo "build-kernel: no /usr/src/linux-source-6.1.tar.xz (apt-get install linux-source-6.1)" >&2; exit 1; }
[ -n "$base" ] || { echo "build-kernel: no /boot/config-*-cloud-amd64" >&2; exit 1; }
for t in bison flex bc make gcc; do
	command -v $t >/dev/null || { echo "build-kernel: $t missing (scripts/install-deps.sh)" >&2; exit 1; }
done
mkdir -p "$root" || exit 1

# The configuration, computed in a scratch tree of the source's scripts
# only: its hash names the cache entry.
work=$(mktemp -d "$root/cfg.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
tar -xJf "$tarball" -C "$work" || exit 1
src0=$(ls -1d "$work"/linux-source-6.1* | head -n1)
cp "$base" "$src0/.config"
cfg() { "$src0/scripts/config" --file "$src0/.config" "$@"; }
# everything =m becomes =n: nothing but vmlinux to build
sed -i 's/^\(CONFIG_[A-Za-z0-9_]*\)=m$/# \1 is not set/' "$src0/.config"
cfg -e VIRTIO -e VIRTIO_PCI -e VIRTIO_BLK -e BLK_DEV \
    -d MODULE_SIG -d MODVERSIONS -d MODULE_SIG_ALL \
    --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
    -d DEBUG_INFO_BTF -d DEBUG_INFO_DWARF5 -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
    -e DEBUG_INFO_NONE -d DEBUG_INFO \
    -e KASAN -e KASAN_GENERIC -e KASAN_INLINE \
    -e PROVE_LOCKING -e DEBUG_LOCKDEP -e DEBUG_ATOMIC_SLEEP \
    -e DEBUG_OBJECTS -e DEBUG_OBJECTS_FREE -e DEBUG_OBJECTS_TIMERS \
    -e DEBUG_OBJECTS_WORK -e DEBUG_OBJECTS_RCU_HEAD -e DEBUG_OBJECTS_PERCPU_COUNTER \
    -e DEBUG_KMEMLEAK -d DEBUG_KMEMLEAK_DEFAULT_OFF -e DEBUG_KMEMLEAK_AUTO_SCAN \
    --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 16000 \
    -e KPROBES -e KPROBES_ON_FTRACE -e FTRACE_SYSCALLS -e UNWINDER_ORC -e HOTPLUG_CPU \
    -e FUSE_FS -e USERFAULTFD -e SECURITY_LOCKDOWN_LSM
make -s -C "$src0" olddefconfig >/dev/null 2>&1 || { echo "build-kernel: olddefconfig failed" >&2; exit 1; }
# FUSE_FS, USERFAULTFD, SECURITY_LOCKDOWN_LSM: the upfuse, flightstall and
# lockdown tests (the cloud kernel has FUSE as a module, =n here otherwise)
for want in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS DEBUG_KMEMLEAK VIRTIO_BLK UNWINDER_ORC KPROBES \
	FUSE_FS USERFAULTFD SECURITY_LOCKDOWN_LSM; do
	grep -q "^CONFIG_$want=y" "$src0/.config" || { echo "build-kernel: CONFIG_$want did not stick" >&2; exit 1; }
done
key=$( (sha256sum "$tarball" | cut -c1-64; grep '^CONFIG_' "$src0/.config" | sort) | sha256sum | cut -c1-16)
dir=$root/$key
# one builder per key: a second caller waits for the first one's result
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/ok" ]; then
	echo "$dir"
	exit 0
fi
# A tree an interrupted build left under the same key (same tarball, same
# .config) is resumed: make rebuilds only what is missing or older.
if [ -f "$dir/src/.config" ] && cmp -s "$dir/src/.config" "$src0/.config"; then
	echo "build-kernel: resuming $dir" >&2
else
	rm -rf "$dir" && mkdir -p "$dir" || exit 1
	mv "$src0" "$dir/src"
fi
log=$dir.log
echo "build-kernel: building $dir (log $log)" >&2
if ! nice -n 19 make -C "$dir/src" -j2 >>"$log" 2>&1; then
	echo "build-kernel: kernel build failed, see $log" >&2
	exit 1
fi
cp "$dir/src/arch/x86/boot/bzImage" "$dir/bzImage" || exit 1
kver=$(make -s -C "$dir/src" kernelrelease)
mkdir -p "$dir/modules/$kver/kernel"
: >"$dir/modules/$kver/modules.dep"
echo "$kver" >"$dir/kver"
touch "$dir/ok"
echo "$dir"
