#!/bin/bash
# selftest.sh - the vm-harness suite: two boots of tests/vm/run.sh checked
# from the host side.  Prints PASS/FAIL lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${B:-$top/build}
mkdir -p "$B/vm"
w=$(mktemp -d "$B/vm/selftest.XXXXXX")
trap 'rm -rf "$w"' EXIT

ok() { echo "PASS $1"; }
ko() { echo "FAIL $1: $2"; }
check() { # name why cmd...
	local n=$1 why=$2; shift 2
	if "$@"; then ok "$n"; else ko "$n" "$why"; fi
}

kver=
for k in $(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
	[ -d "/lib/modules/$k/kernel" ] && kver=$k
done
dummy=/lib/modules/$kver/kernel/drivers/net/dummy.ko

# A random host file must arrive byte for byte, and a guest-made one must
# come back byte for byte (checksums computed on the side that made it).
head -c 1048577 /dev/urandom >"$w/payload"
host_sum=$(sha256sum <"$w/payload" | cut -d' ' -f1)
token=tok$RANDOM$RANDOM
printf '#!/bin/sh\necho bin-ran-%s\n' "$token" >"$w/vmhello"
chmod 755 "$w/vmhello"

cat >"$w/a.sh" <<EOF
echo "guest-says $token"
echo "in-sum \$(sha256sum </data/payload | cut -d' ' -f1)"
vmhello
head -c 777777 /dev/urandom >\$OUT/blob.bin
mkdir -p \$OUT/sub && echo nested >\$OUT/sub/f.txt
echo "out-sum \$(sha256sum <\$OUT/blob.bin | cut -d' ' -f1)"
echo "cpus \$(grep -c ^processor /proc/cpuinfo)"
echo "uid \$(id -u)"
grep -q ' /tmp tmpfs ' /proc/mounts && echo mnt-tmp
grep -q ' /dev devtmpfs ' /proc/mounts && echo mnt-dev
grep -q ' /proc proc ' /proc/mounts && echo mnt-proc
[ -e /sys/kernel/tracing/trace ] && echo mnt-tracefs
grep -q '^dummy ' /proc/modules && echo ko-loaded
echo "stdin \$(head -c 10 | wc -c)"
exit 42
EOF
"$here/run.sh" --script "$w/a.sh" --out "$w/outa" --timeout 120 \
	--bin "$w/vmhello" --file "$w/payload:/data/payload" \
	${kver:+--ko "$dummy"} >"$w/a.log" 2>&1 </dev/null
rc=$?
sed 's/^/    | /' "$w/a.log"
grep -q "^guest-says $token\$" "$w/a.log"; check boot-and-stdout "script output missing" [ $? = 0 ]
check exit-status-propagates "run.sh exited $rc, script exited 42" [ "$rc" = 42 ]
check file-in-intact "checksum in guest differs" grep -q "^in-sum $host_sum\$" "$w/a.log"
gsum=$(sed -n 's/^out-sum //p' "$w/a.log")
hsum=$(sha256sum <"$w/outa/blob.bin" 2>/dev/null | cut -d' ' -f1)
check binary-out-intact "guest sum '$gsum' host sum '$hsum'" [ -n "$gsum" -a "$gsum" = "$hsum" ]
check out-size "blob.bin is not 777777 bytes" [ "$(stat -c %s "$w/outa/blob.bin" 2>/dev/null)" = 777777 ]
check out-subdir "sub/f.txt did not come back" grep -qx nested "$w/outa/sub/f.txt"
check bin-installed "--bin program did not run" grep -q "^bin-ran-$token\$" "$w/a.log"
check two-cpus "guest does not see 2 CPUs" grep -qx 'cpus 2' "$w/a.log"
check runs-as-root "script not uid 0" grep -qx 'uid 0' "$w/a.log"
for m in tmp dev proc tracefs; do
	check "mount-$m" "$m not mounted" grep -qx "mnt-$m" "$w/a.log"
done
check ko-insmod "--ko module not loaded" grep -qx ko-loaded "$w/a.log"
check stdin-empty "script stdin is not empty" grep -qx 'stdin 0' "$w/a.log"
check dmesg-saved "dmesg.txt missing or not a kernel log" grep -q 'Linux version' "$w/outa/dmesg.txt"

# Timeout: the guest kills the script, reports 124 and still brings /out back.
cat >"$w/b.sh" <<'EOF'
echo partial >$OUT/partial.txt
echo started
sleep 1000 &
sleep 1000
echo not-reached
EOF
t0=$SECONDS
"$here/run.sh" --script "$w/b.sh" --out "$w/outb" --timeout 4 >"$w/b.log" 2>&1 </dev/null
rc=$?
el=$((SECONDS - t0))
sed 's/^/    | /' "$w/b.log"
check timeout-status "run.sh exited $rc, want 124" [ "$rc" = 124 ]
check timeout-bounded "took ${el}s for a 4s timeout" [ "$el" -lt 120 ]
check timeout-out-kept "/out not carried back after timeout" grep -qx partial "$w/outb/partial.txt"
check timeout-killed "script continued after the timeout" bash -c "! grep -q not-reached '$w/b.log'"

# Not booting: a kernel that cannot start /init panics; run.sh says 125.
t0=$SECONDS
VM_APPEND="rdinit=/nonexistent" "$here/run.sh" --script "$w/a.sh" --timeout 60 >"$w/c.log" 2>&1 </dev/null
rc=$?
check no-boot-125 "run.sh exited $rc for a guest without init, want 125" [ "$rc" = 125 ]
check no-boot-bounded "took $((SECONDS - t0))s" [ $((SECONDS - t0)) -lt 200 ]

# A qemu that ignores SIGTERM (as a TCG thread spinning in qemu's
# page_collection_lock once did for 17 minutes) is SIGKILLed after the
# grace period: run.sh ends, says 124 and shows the console.  The
# stand-in qemu, first in PATH, says on the console that the guest booted,
# then hangs.
mkdir -p "$w/fakeq"
cat >"$w/fakeq/qemu-system-x86_64" <<'FAKEQ'
#!/bin/bash
trap '' TERM
echo $$ >"${0%/*}/pid"
for a; do case $a in file:*) con=${a#file:}; break ;; esac; done
echo "dt-vm: booted" >>"$con"
echo "fake-console-line" >>"$con"
while :; do sleep 0.5; done
FAKEQ
chmod 755 "$w/fakeq/qemu-system-x86_64"
t0=$SECONDS
# (timeout: a run.sh that waits for qemu forever must not hang this suite)
PATH="$w/fakeq:$PATH" VM_BOOT_ALLOWANCE=1 VM_KILL_GRACE=2 timeout -k 5 60 \
	"$here/run.sh" --script "$w/b.sh" --timeout 1 >"$w/d.log" 2>&1 </dev/null
rc=$?
el=$((SECONDS - t0))
sed 's/^/    | /' "$w/d.log"
fq=$(cat "$w/fakeq/pid" 2>/dev/null)
check stuck-qemu-124 "run.sh exited $rc for a qemu ignoring SIGTERM, want 124" [ "$rc" = 124 ]
check stuck-qemu-bounded "took ${el}s for a 2s limit and a 2s grace" [ "$el" -lt 30 ]
check stuck-qemu-killed "the stand-in qemu (pid '$fq') is still running" \
	bash -c "[ -n '$fq' ] && ! kill -0 '$fq' 2>/dev/null"
check stuck-qemu-sigkill-said "run.sh did not say it sent SIGKILL" grep -q SIGKILL "$w/d.log"
check stuck-qemu-console "the console tail is not in run.sh's output" grep -q fake-console-line "$w/d.log"
[ -n "$fq" ] && kill -KILL "$fq" 2>/dev/null

# Bad arguments: a missing --script is refused before boot with 125.
"$here/run.sh" --script "$w/does-not-exist" >/dev/null 2>&1 </dev/null
rc=$?
check bad-args-125 "run.sh exited $rc, want 125" [ "$rc" = 125 ]
exit 0
