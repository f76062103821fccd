#!/bin/busybox sh
# /init of the test VM (see tests/vm/README.md).  Runs as PID 1: it must
# never exit, so every path ends in poweroff -f.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/ TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null ||
	mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mkdir -p /out /.vm
# ttyS0 carries the kernel console (host: boot detection, panics);
# ttyS1 carries only the script's output, raw so that bytes pass unchanged.
echo "dt-vm: booted" >/dev/ttyS0
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 1>/dev/ttyS1 2>&1 </dev/null

for m in $(cat /.vm/modules 2>/dev/null); do
	insmod "/lib/vm-modules/$m" || echo "dt-vm: insmod $m failed"
done
for ko in $(cat /.vm/ko 2>/dev/null); do
	insmod "/ko/$ko" || echo "dt-vm: insmod $ko failed"
done

timeout=$(cat /.vm/timeout)
# setsid gives the script its own process group so the watchdog can kill
# everything it started, not just the shell.
OUT=/out setsid sh -c 'cd /tmp && exec sh /.vm/script' &
pid=$!
(sleep "$timeout"; echo timeout >/.vm/timedout; kill -9 -"$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null) &
wd=$!
wait "$pid"
rc=$?
kill "$wd" 2>/dev/null
[ -e /.vm/timedout ] && rc=124
echo "$rc" >/.vm/rc
dmesg >/.vm/dmesg.txt
cd / && rm -f /.vm/script && tar -cf /dev/vda .vm out
sync
echo "dt-vm: done rc=$rc" >/dev/ttyS0
poweroff -f
