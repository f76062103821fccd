# kernel_tests.sh - runs inside the VM (tests/vm/run.sh --script): the
# vm-kernel suite.  dt.ko was insmodded from /ko by the harness.
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# Everything to the console from now on: if the guest locks up, the
# console (console.txt on the host) is the only record that survives.
echo 8 >/proc/sys/kernel/printk

# phase NAME LIMIT CMD...: a hung phase FAILs and dumps blocked tasks and
# CPU backtraces to the kernel log instead of eating the whole VM timeout.
phase() {
	name=$1 limit=$2
	shift 2
	"$@" &
	p=$!
	i=0
	while kill -0 $p 2>/dev/null; do
		if [ $i -ge $((limit * 5 * ${KTEST_SLOW:-1})) ]; then
			fail "$name.hang" "still running after ${limit}s (sysrq w,l dumped to dmesg)"
			echo w >/proc/sysrq-trigger
			echo l >/proc/sysrq-trigger
			kill -9 $p
			break
		fi
		sleep 0.2
		i=$((i + 1))
	done
	wait $p
}

if grep -q '^dt ' /proc/modules && [ -c /dev/dt ]; then
	pass module.loaded
else
	fail module.loaded "dt not in /proc/modules or no /dev/dt (see dt-vm: lines above)"
fi

# KTEST_PART (kernel_suite.sh): "main" all but the race phase, "race" the
# race phase alone (its own boot, with parallel vCPUs), else everything.
if [ "${KTEST_PART:-all}" = race ]; then
	phase race 120 dt_ktest race=${RACE_SECS:-15}
	bad=$(dmesg | grep -E 'BUG|Oops|WARNING|general protection|suspected memory leak|unreferenced object|Call Trace|refcount_t|rcu.*stall')
	[ -z "$bad" ] && pass race.dmesg-clean || { fail race.dmesg-clean "kernel log has errors:"; echo "$bad" | head -n 40 | sed 's/^/#   /'; }
	exit 0
fi

phase main 420 dt_ktest list syscall profile sched kprobe conserve nesting wakeup kpmiss \
	frames io unpriv passed account budget nmibudget uregspriv wrap misc kpreap filter flight flightstall uprobe upreap upmount kpmod kpnotrace noring pollwake ucopyfree tgfollow tgreuse upfuse proc
# CPU 1 goes offline and back mid-recording
phase hotplug 60 dt_ktest hotplug

# rmmod with a reader blocked in read(): refused, or safe.
dt_ktest hold >/tmp/hold.log 2>&1 &
hp=$!
i=0
while ! grep -q 'holder ready' /tmp/hold.log && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
if ! grep -q 'holder ready' /tmp/hold.log; then
	fail rmmod.while-open "holder did not start: $(cat /tmp/hold.log)"
elif rmmod dt 2>/tmp/rmmod.err; then
	# Allowed only if nothing broke: the holder must get an error, not a crash.
	sleep 1
	if kill -0 $hp 2>/dev/null; then kill $hp; fi
	wait $hp
	st=$?
	if [ $st -ge 128 ] && [ $st -ne 143 ]; then
		fail rmmod.while-open "rmmod succeeded and the reader died with status $st"
	else
		pass rmmod.while-open
	fi
	insmod /ko/dt.ko || fail rmmod.reinsmod-after-forced "insmod failed"
else
	echo "# rmmod refused while open: $(cat /tmp/rmmod.err)"
	pass rmmod.while-open
	kill -0 $hp 2>/dev/null && pass rmmod.reader-survives || fail rmmod.reader-survives "holder gone"
	kill $hp
	wait $hp
fi
kill $hp 2>/dev/null

phase fuzz 120 dt_ktest fuzz=${FUZZ_SECS:-15}
[ "${KTEST_PART:-all}" = main ] || phase race 120 dt_ktest race=${RACE_SECS:-15}

# kmemleak (the debug lane's kernel): nothing dt allocated may be left
# unreferenced once every descriptor is closed.
if [ -d /sys/kernel/debug ] && ! [ -e /sys/kernel/debug/kmemleak ]; then
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	leaks=$(awk '/^unreferenced object/ { obj = $0; show = 0 } /\[dt\]/ { show = 1 }
		show && obj != "" { print obj; obj = "" }' /sys/kernel/debug/kmemleak)
	if [ -z "$leaks" ]; then
		pass kmemleak.dt-clean
	else
		fail kmemleak.dt-clean "objects allocated by dt unreferenced:"
		echo "$leaks" | head -n 20 | sed 's/^/#   /'
	fi
fi

sleep 0.5
if rmmod dt; then
	pass rmmod.after-close
	[ ! -e /dev/dt ] && pass rmmod.node-gone || fail rmmod.node-gone "/dev/dt still exists"
else
	fail rmmod.after-close "rmmod failed with no opener"
fi
if insmod /ko/dt.ko; then pass rmmod.insmod-again; else fail rmmod.insmod-again "insmod failed"; fi
i=0
while [ ! -c /dev/dt ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
dt_ktest version && pass rmmod.works-after-reload || fail rmmod.works-after-reload "DTIOCGVERSION failed"
phase reload 120 dt_ktest syscall | sed 's/^\(PASS\|FAIL\) syscall\./\1 reload.syscall./'
rmmod dt && pass rmmod.final || fail rmmod.final "final rmmod failed"

# Kernel lockdown last: it cannot be lowered again.  Raised at run time:
# booted with lockdown=confidentiality the kernel would refuse the unsigned
# dt.ko (module signatures are an integrity reason), and dt.ko checks
# lockdown when a probe is made and at every enable, so a raise counts the
# same as the boot option.
if insmod /ko/dt.ko; then
	dt_ktest lockdown-pre
	mkdir -p /sys/kernel/security
	grep -q securityfs /proc/mounts || mount -t securityfs securityfs /sys/kernel/security
	echo confidentiality >/sys/kernel/security/lockdown
	phase lockdown 60 dt_ktest lockdown
	# dtrec says what the lockdown refused (not "needs CAP_PERFMON")
	dtrec_says() {	# NAME DTREC-ARGS...
		n=lockdown.dtrec-says-$1
		shift
		if ! command -v dtrec >/dev/null; then
			fail $n "no dtrec in the guest (kernel_suite.sh's 4th argument)"
			return
		fi
		out=$(timeout 30 dtrec -o /tmp/ld.dtc -d 1s "$@" 2>&1)
		rc=$?
		if [ $rc -ne 0 ] && echo "$out" | grep -q 'refused by kernel lockdown (confidentiality)'; then
			pass $n
		else
			fail $n "dtrec $*: exit $rc: $out"
		fi
	}
	dtrec_says kprobe -e kprobe:vfs_write:entry
	dtrec_says kstack -k -e syscall:getppid:entry
	rmmod dt || fail lockdown.rmmod "rmmod after the lockdown tests failed"
else
	fail lockdown.insmod "insmod before the lockdown tests failed"
fi

# (kmemleak's own start-up lines say "leak" too: its reports say "suspected")
# The nmibudget test asks for CPU backtraces (sysrq l) between its two
# marks: their call traces, and only those, are expected.
bad=$(dmesg | awk '/dt_ktest: nmi backtraces begin/ { nmi = 1 }
	/dt_ktest: nmi backtraces end/ { nmi = 0 }
	!(nmi && /Call Trace/)' | grep -E 'BUG|Oops|WARNING|general protection|suspected memory leak|unreferenced object|Call Trace|refcount_t|rcu.*stall')
if [ -z "$bad" ]; then
	pass dmesg.clean
else
	fail dmesg.clean "kernel log has errors:"
	echo "$bad" | head -n 40 | sed 's/^/#   /'
fi
exit 0
