#!/bin/bash
# run.sh - boot Debian's cloud kernel under qemu TCG with a busybox
# initramfs, run one script inside, carry /out back.  See README.md.
#
#   run.sh --script FILE [--ko FILE] [--bin FILE]... [--file SRC:DST]...
#          [--out DIR] [--timeout SECONDS] [--mem MB] [--single-thread]
#
# --single-thread runs both vCPUs on one host thread (-accel
# tcg,thread=single).  qemu's multi-threaded TCG sometimes keeps executing
# a stale int3 after the guest patches a static key (a tracepoint turned on
# or off) while the other vCPU runs that code, and both vCPUs then spin in
# text_poke_bp's int3 handler forever (seen about once in 20 probe
# toggles).  Runs that test recording rather than races take it; the
# kernel suite keeps parallel vCPUs so its races are real.  VM_ACCEL, when
# set, overrides both.
#
# Exit: the script's status; 124 on timeout; 125 if the guest did not boot
# (or died before reporting a status).
#
# qemu is ended with SIGTERM, then SIGKILL after VM_KILL_GRACE seconds
# (default 10): a TCG vCPU thread spinning in qemu's own page_collection_lock
# once ignored SIGTERM for 17 minutes and held make check with it.  Every
# kill that ends a run prints the guest console's tail to stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${B:-$top/build}

die() { echo "run.sh: $*" >&2; exit 125; }

script= out= timeout=300 mem=512 accel=tcg
kos=() bins=() files=()
while [ $# -gt 0 ]; do
	case $1 in
	--script) script=$2; shift 2 ;;
	--ko) kos+=("$2"); shift 2 ;;
	--bin) bins+=("$2"); shift 2 ;;
	--file) files+=("$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--single-thread) accel=tcg,thread=single; shift ;;
	*) die "unknown argument: $1" ;;
	esac
done
[ -n "$script" ] && [ -f "$script" ] || die "--script FILE is required"
[[ $timeout =~ ^[0-9]+$ ]] || die "bad --timeout"
[[ $mem =~ ^[0-9]+$ ]] || die "bad --mem"
for f in "${kos[@]}" "${bins[@]}"; do [ -f "$f" ] || die "no such file: $f"; done

# The newest installed cloud kernel whose modules are present.
kver=
mroot=/lib/modules
if [ -n "${VM_KERNEL:-}" ]; then
	# another kernel (the debug lane): VM_KVER names it, VM_MODULES holds
	# VM_MODULES/VM_KVER/modules.dep (empty when everything is built in)
	kver=${VM_KVER:-}
	mroot=${VM_MODULES:-}
	[ -n "$kver" ] && [ -f "$mroot/$kver/modules.dep" ] ||
		die "VM_KERNEL needs VM_KVER and VM_MODULES/VM_KVER/modules.dep"
	kernel=$VM_KERNEL
else
	for k in $(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
		[ -d "/lib/modules/$k/kernel" ] && kver=$k
	done
	[ -n "$kver" ] || die "no /boot/vmlinuz-*-cloud-amd64 with /lib/modules (run scripts/install-deps.sh)"
	kernel=/boot/vmlinuz-$kver
fi
[ -r "$kernel" ] || die "$kernel is not readable"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing"
busybox=$(command -v busybox) || die "busybox missing"
file -L "$busybox" 2>/dev/null | grep -q dynamic && die "$busybox is not static (install busybox-static)"

mkdir -p "$B/vm"
tmp=$(mktemp -d "$B/vm/run.XXXXXX") || die "mktemp failed"
qpid=
# stop_qemu: SIGTERM, and SIGKILL if qemu is still there after the grace
# period; returns once it is gone.  Sets escalated=1 if SIGKILL was needed.
escalated=0
stop_qemu() {
	local grace=${VM_KILL_GRACE:-10} t
	kill "$qpid" 2>/dev/null || return 0
	t=$SECONDS
	while kill -0 "$qpid" 2>/dev/null; do
		if [ $((SECONDS - t)) -ge "$grace" ]; then
			echo "run.sh: qemu ignored SIGTERM for ${grace}s: SIGKILL" >&2
			kill -KILL "$qpid" 2>/dev/null
			escalated=1
			break
		fi
		sleep 0.2
	done
}
cleanup() {
	[ -n "$qpid" ] && stop_qemu
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Base initramfs: busybox, /init and the virtio block modules.  Cached per
# kernel version and content of this harness; built aside and renamed so
# concurrent runs never see a half-written archive.
key=$( (echo "$kver $kernel"; ls -l "$busybox" "$kernel"; cat "$here/init.sh" "$here/run.sh") | sha256sum | cut -c1-16)
base=$B/vm/base-$kver-$key.cpio.gz
if [ ! -s "$base" ]; then
	st=$tmp/base
	mkdir -p "$st"/{bin,sbin,proc,sys,dev,tmp,out,lib/vm-modules,.vm}
	cp "$busybox" "$st/bin/busybox"
	cp "$here/init.sh" "$st/init"
	chmod 755 "$st/init"
	# virtio_pci + virtio_blk and their dependencies, deps first
	# (modules.dep lists a module's dependencies after the module and
	# each dependency's own dependencies after it, so reversing works).
	mdir=$mroot/$kver
	order=()
	add_mod() {
		local name=$1 line deps d
		line=$(grep -E "(^|/)$name\.ko(\.[a-z]+)?:" "$mdir/modules.dep" | head -n1)
		[ -n "$line" ] || return 0	# built in
		deps=$(echo "$line" | cut -d: -f2)
		for d in $(echo $deps | tr ' ' '\n' | tac); do
			add_mod "$(basename "$d" | sed -E 's/\.ko(\.[a-z]+)?$//')"
		done
		local path=${line%%:*}
		for o in "${order[@]}"; do [ "$o" = "$path" ] && return 0; done
		order+=("$path")
	}
	add_mod virtio_pci
	add_mod virtio_blk
	: >"$st/.vm/modules"
	for p in "${order[@]}"; do
		n=$(basename "$p" | sed -E 's/\.ko(\.[a-z]+)?$//').ko
		case $p in
		*.ko.xz) xz -dc "$mdir/$p" >"$st/lib/vm-modules/$n" ;;
		*.ko.zst) zstd -qdc "$mdir/$p" >"$st/lib/vm-modules/$n" ;;
		*.ko.gz) gzip -dc "$mdir/$p" >"$st/lib/vm-modules/$n" ;;
		*) cp "$mdir/$p" "$st/lib/vm-modules/$n" ;;
		esac || die "cannot copy module $p"
		echo "$n" >>"$st/.vm/modules"
	done
	(cd "$st" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$base.$$" ||
		die "building the initramfs failed"
	mv -f "$base.$$" "$base"
	rm -rf "$st"
fi

# Per-run archive, appended to the base one (the kernel unpacks
# concatenated archives in order, later files winning).
st=$tmp/extra
mkdir -p "$st/.vm" "$st/ko" "$st/bin"
cp "$script" "$st/.vm/script"
echo "$timeout" >"$st/.vm/timeout"
: >"$st/.vm/ko"
for f in "${kos[@]}"; do
	cp "$f" "$st/ko/" && basename "$f" >>"$st/.vm/ko"
done
for f in "${bins[@]}"; do
	cp "$f" "$st/bin/" && chmod 755 "$st/bin/$(basename "$f")"
done
for f in "${files[@]}"; do
	src=${f%%:*} dst=${f#*:}
	[ "$src" != "$f" ] && [ -n "$dst" ] || die "--file wants SRC:DST, got $f"
	[ -e "$src" ] || die "no such file: $src"
	mkdir -p "$st/$(dirname "$dst")" && cp -a "$src" "$st/$dst" || die "cannot stage $f"
done
(cd "$st" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$tmp/extra.cpio.gz" ||
	die "building the per-run initramfs failed"
cat "$base" "$tmp/extra.cpio.gz" >"$tmp/initrd.gz"

# The way back: a sparse raw disk the guest writes one tar onto.
truncate -s 4G "$tmp/disk.img"
: >"$tmp/console.log"
: >"$tmp/script.log"

qemu-system-x86_64 -accel "${VM_ACCEL:-$accel}" -smp 2 -m "$mem" -nodefaults -display none \
	-no-reboot -monitor none \
	-kernel "$kernel" -initrd "$tmp/initrd.gz" \
	-append "console=ttyS0 panic=-1 ${VM_APPEND:-quiet}" \
	-serial "file:$tmp/console.log" -serial "file:$tmp/script.log" \
	-drive "file=$tmp/disk.img,format=raw,if=virtio" \
	</dev/null >"$tmp/qemu.log" 2>&1 &
qpid=$!
# VM_PIDFILE: for a caller that stalls qemu on purpose (tests/debug/stalled.sh)
[ -n "${VM_PIDFILE:-}" ] && echo "$qpid" >"$VM_PIDFILE"
# Stream the script's output as it comes.
tail -s 0.2 -n +1 -f --pid="$qpid" "$tmp/script.log" &
tpid=$!

# The guest enforces --timeout itself (so /out and dmesg still come back);
# the host limit only adds room for booting and collecting.
host_limit=$((timeout + ${VM_BOOT_ALLOWANCE:-180}))
killed=0
start=$SECONDS
while kill -0 "$qpid" 2>/dev/null; do
	if [ $((SECONDS - start)) -ge "$host_limit" ]; then
		stop_qemu
		killed=1
		break
	fi
	sleep 0.2
done
wait "$qpid" 2>/dev/null
qpid=
wait "$tpid" 2>/dev/null

booted=0
grep -q 'dt-vm: booted' "$tmp/console.log" && booted=1
mkdir -p "$tmp/back"
tar -xf "$tmp/disk.img" -C "$tmp/back" --no-same-owner 2>/dev/null
rc=
[ -s "$tmp/back/.vm/rc" ] && rc=$(cat "$tmp/back/.vm/rc")
if [ -z "$rc" ]; then
	rc=$(sed -n 's/.*dt-vm: done rc=\([0-9]*\).*/\1/p' "$tmp/console.log" | tail -n1)
fi

if [ -n "$out" ]; then
	mkdir -p "$out" || die "cannot create $out"
	[ -d "$tmp/back/out" ] && cp -a "$tmp/back/out/." "$out/"
	if [ -f "$tmp/back/.vm/dmesg.txt" ]; then
		cp "$tmp/back/.vm/dmesg.txt" "$out/dmesg.txt"
	else
		# No tar came back: the console is the best record of the kernel log.
		cp "$tmp/console.log" "$out/dmesg.txt"
	fi
	cp "$tmp/console.log" "$out/console.txt"
fi

if [ $booted -eq 0 ]; then
	echo "run.sh: the guest did not boot; console:" >&2
	tail -n 30 "$tmp/console.log" "$tmp/qemu.log" >&2
	exit 125
fi
if [ -z "$rc" ]; then
	if [ $killed -eq 1 ]; then
		echo "run.sh: guest killed after ${host_limit}s$([ $escalated = 1 ] && echo ' (SIGKILL)'); console tail:" >&2
		tail -n 60 "$tmp/console.log" >&2
		exit 124
	fi
	echo "run.sh: the guest died without a status; console tail:" >&2
	tail -n 40 "$tmp/console.log" >&2
	exit 125
fi
[ "$rc" = 124 ] && echo "run.sh: script timed out after ${timeout}s" >&2
exit "$rc"
