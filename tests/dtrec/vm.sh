#!/bin/bash
# vm.sh KO DTREC HOTLOOP CAPCHECK OUTDIR - one VM boot running guest.sh,
# then the captures it brought back checked on the host.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ko=$1 dtrec=$2 hotloop=$3 capcheck=$4 out=$5 ktest=$6
rm -rf "$out"
args=(--single-thread --script "$here/guest.sh" --bin "$dtrec" --bin "$hotloop" --bin "$ktest"
	--out "$out" --timeout 180
	--bin "$B/tests/dtrec/ucall" --bin "$B/tests/rectruth/nofp" --bin "$B/tests/dtrec/withfp" --file "$B/tests/dtrec/libdtuc.so:lib/libdtuc.so"
	--file "$(readlink -f /lib64/ld-linux-x86-64.so.2):lib64/ld-linux-x86-64.so.2"
	--file "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6):lib/x86_64-linux-gnu/libc.so.6")
if [ -f "$ko" ]; then
	args+=(--ko "$ko")
else
	echo "FAIL vm.module-built: $ko does not exist (kernel build failed?)"
fi
"$top/tests/vm/run.sh" "${args[@]}" </dev/null
rc=$?
[ $rc -eq 0 ] && echo "PASS vm.status" || echo "FAIL vm.status: run.sh exited $rc (124 timeout, 125 no boot)"

field() { awk -v k="$1" '$1==k {print $2}' "$2"; }
# conservation and a clean finish, for one capture
conserved() {	# name file
	local name=$1 f=$2 cc=$out/$1.cc
	if ! "$capcheck" "$f" hot_heavy hot_medium hot_light >"$cc" 2>&1; then
		echo "FAIL $name-opens: $(head -n1 "$cc")"; return 1
	fi
	echo "PASS $name-opens"
	local w ev kr rs
	w=$(sed -n 's/^warning //p' "$cc")
	[ "$w" = none ] && echo "PASS $name-finalized" || echo "FAIL $name-finalized: $w"
	# events of processes other than a command's are read, then left out
	ev=$(field events "$cc") kr=$(field kernel_read "$cc") rs=$(field recorder_skipped "$cc")
	if [ -n "$ev" ] && [ "$ev" != 0 ] && [ $((ev + ${rs:-0})) = "$kr" ]; then
		echo "PASS $name-conserved"
	else
		echo "FAIL $name-conserved: capture has $ev events + $rs left out, kernel read counter says $kr"
	fi
}
conserved prov "$out/prov.dtc"
if [ -f "$out/prov.cc" ]; then
	for p in profile: interval: syscall: tracepoint:sched:sched_switch kprobe:vfs_read:entry; do
		n=$(awk -v p="$p" '$1=="probe" && index($2,p)==1 {s+=$3} END {print s+0}' "$out/prov.cc")
		[ "$n" -gt 0 ] && echo "PASS provider-$p" || echo "FAIL provider-$p: no events"
	done
	[ "$(field kstacks "$out/prov.cc")" -gt 0 ] 2>/dev/null && echo "PASS kstacks" || echo "FAIL kstacks: none"
	[ "$(field ustacks "$out/prov.cc")" -gt 0 ] 2>/dev/null && echo "PASS ustacks" || echo "FAIL ustacks: none"
	grep -q '^sym hot_heavy yes' "$out/prov.cc" && echo "PASS elf-symbols" ||
		echo "FAIL elf-symbols: hotloop's symbols are not in the capture"
	[ "$(field kallsyms "$out/prov.cc")" = yes ] && echo "PASS kallsyms" || echo "FAIL kallsyms: missing"
fi
conserved sigint "$out/int.dtc"
if [ -f "$out/full.dtc" ]; then
	"$capcheck" "$out/full.dtc" >"$out/full.cc" 2>&1 && echo "PASS diskfull-opens" ||
		echo "FAIL diskfull-opens: $(head -n1 "$out/full.cc")"
else
	echo "FAIL diskfull-opens: no capture left on the full disk"
fi

dtreport=$top/build/bin/dtreport
sql() { "$dtreport" sql "$@" 2>>"$out/sql.err" | tr -d '\r' | tail -n +2; }

# arguments by name in dt.ko's capture (issue 23 item 1): dt.ko describes a
# syscall entry as six registers, dtrec names them after tracefs, so the
# probe's view reads openat's dfd as an int (AT_FDCWD -100), and
# sched_switch's char[16] prev_comm as text
if [ -f "$out/prov.dtc" ]; then
	got=$(sql "$out/prov.dtc" 'SELECT sum(dfd = -100), sum(dfd = 4294967196), count(*) FROM "syscall:openat:entry"')
	IFS=, read -r nfdcwd nraw nopen <<<"$got"
	[ "${nfdcwd:-0}" -ge 1 ] && [ "${nraw:-x}" = 0 ] && echo "PASS dt-args-at-fdcwd" ||
		echo "FAIL dt-args-at-fdcwd: '$got' (dfd = -100, = 4294967196, openat entries): $(tail -n 2 "$out/sql.err")"
	# dt.ko copies the path at the entry (kernel/dt_sysstr.c): every dd
	# opens /proc/version read-only (and /dev/null to write), the shell
	# execs hotloop; the rings may drop some of these busy events, so
	# every read-only open dd made that was kept must name /proc/version
	got=$(sql "$out/prov.dtc" "SELECT (SELECT count(*) FROM \"syscall:openat:entry\" WHERE comm = 'dd' AND flags = 0),
		(SELECT count(*) FROM \"syscall:openat:entry\" WHERE comm = 'dd' AND flags = 0 AND filename_str = '/proc/version'),
		(SELECT count(*) FROM \"syscall:execve:entry\" WHERE filename_str LIKE '%/hotloop'),
		(SELECT count(*) FROM \"syscall:openat:entry\" WHERE typeof(filename_str) <> 'text')")
	IFS=, read -r nro nver nexec nnotext <<<"$got"
	[ "${nro:-0}" -ge 1 ] && [ "$nver" = "$nro" ] && [ "${nexec:-0}" -ge 1 ] && [ "${nnotext:-x}" = 0 ] &&
		echo "PASS dt-args-path-copied" ||
		echo "FAIL dt-args-path-copied: '$got' (dd's read-only opens, of them /proc/version, execs of hotloop, non-text): $(tail -n 2 "$out/sql.err")"
	got=$(sql "$out/prov.dtc" "SELECT sum(prev_comm = 'hotloop' AND typeof(prev_pid) = 'integer' AND prev_pid > 0),
		sum(typeof(prev_comm) <> 'text') FROM \"tracepoint:sched:sched_switch\"")
	IFS=, read -r nhot nbad <<<"$got"
	[ "${nhot:-0}" -gt 0 ] && [ "${nbad:-x}" = 0 ] && echo "PASS dt-args-switch-by-name" ||
		echo "FAIL dt-args-switch-by-name: '$got' (hotloop switches, non-text comms)"
else
	echo "FAIL dt-args-at-fdcwd: no prov.dtc from the guest"
fi

# the flight recorder's dump of a quiet command: nothing dropped, and
# produced = read counts only the command's events
if [ -f "$out/flq.1.dtc" ]; then
	"$capcheck" "$out/flq.1.dtc" >"$out/flq.cc" 2>&1
	ev=$(field events "$out/flq.cc") kr=$(field kernel_read "$out/flq.cc")
	kp=$(field kernel_produced "$out/flq.cc") kd=$(field kernel_dropped "$out/flq.cc")
	nwk=$(sql "$out/flq.1.dtc" "SELECT count(*) FROM \"tracepoint:sched:sched_switch\"")
	[ "${ev:-0}" -gt 0 ] && [ "${nwk:-0}" -gt 0 ] && [ "$kd" = 0 ] && [ "$kp" = "$kr" ] && [ "$ev" = "$kr" ] &&
		echo "PASS flight-no-false-drops" ||
		echo "FAIL flight-no-false-drops: events $ev read $kr produced $kp dropped $kd, $nwk switches"
else
	echo "FAIL flight-no-false-drops: no dump flq.1.dtc"
fi

# targets: what the kernel let through
if [ -f "$out/tgt.dtc" ]; then
	busy=$(cat "$out/tgt.busy") rec=$(cat "$out/tgt.rec")
	got=$(sql "$out/tgt.dtc" "SELECT sum(comm = 'busyhot' OR pid = $busy), sum(comm = 'dtrec' OR pid = $rec),
		sum(comm = 'hotloop'), sum(comm = 'dd'), count(*) FROM events")
	IFS=, read -r nbusy nrec nhot ndd nall <<<"$got"
	[ "${nbusy:-x}" = 0 ] && [ "${nall:-0}" -gt 0 ] && echo "PASS targets-busy-left-out" ||
		echo "FAIL targets-busy-left-out: $nbusy events of the busy process ($nall in all)"
	[ "${nrec:-x}" = 0 ] && echo "PASS targets-recorder-left-out" ||
		echo "FAIL targets-recorder-left-out: $nrec events of dtrec itself"
	[ "${nhot:-0}" -gt 0 ] && [ "${ndd:-0}" -gt 0 ] && echo "PASS targets-children-recorded" ||
		echo "FAIL targets-children-recorded: hotloop $nhot events, dd $ndd"
	# dtrec filtered nothing itself: the kernel did
	"$capcheck" "$out/tgt.dtc" >"$out/tgt.cc" 2>&1
	rs=$(field recorder_skipped "$out/tgt.cc")
	[ "${rs:-0}" = 0 ] && echo "PASS targets-filtered-in-kernel" ||
		echo "FAIL targets-filtered-in-kernel: dtrec left out $rs events itself"
else
	echo "FAIL targets-capture: no tgt.dtc"
fi

# -p: only the shell given and the hotloops it forks
if [ -f "$out/pid.dtc" ]; then
	got=$(sql "$out/pid.dtc" "SELECT sum(comm NOT IN ('sh', 'hotloop')), sum(comm = 'hotloop'),
		sum(pid = $(cat "$out/pid.tgt")), count(*) FROM events")
	IFS=, read -r nother nhot nsh nall <<<"$got"
	[ "${nother:-x}" = 0 ] && [ "${nhot:-0}" -gt 0 ] && [ "${nsh:-0}" -gt 0 ] &&
		echo "PASS pid-targets-only" ||
		echo "FAIL pid-targets-only: $nother events of others, $nhot of its hotloops, $nsh of the shell ($nall in all)"
else
	echo "FAIL pid-capture: no pid.dtc"
fi

# --comm: only the named one of two busy copies of hotloop
if [ -f "$out/comm.dtc" ]; then
	read -r ba bb <"$out/comm.pids"
	got=$(sql "$out/comm.dtc" "SELECT sum(comm = 'busya' AND pid = $ba), sum(comm <> 'busya'),
		sum(pid = $bb), count(*) FROM events")
	IFS=, read -r na nother nb nall <<<"$got"
	[ "${na:-0}" -gt 0 ] && [ "$na" = "$nall" ] && [ "${nother:-x}" = 0 ] && [ "${nb:-x}" = 0 ] &&
		echo "PASS comm-only-named" ||
		echo "FAIL comm-only-named: busya $na, other comms $nother, busyb $nb ($nall in all)"
else
	echo "FAIL comm-capture: no comm.dtc"
fi
# --cgroup: only the process in the cgroup's subtree (the perf source's
# --cgroup is tested on the host: this guest's kernel gives perf no state
# for a cgroup made here, ENOENT)
read -r bc bd <"$out/cg.pids" 2>/dev/null
for c in cg; do
	if [ -f "$out/$c.dtc" ]; then
		got=$(sql "$out/$c.dtc" "SELECT sum(pid = $bc AND comm = 'busyc'), sum(pid <> $bc),
			sum(pid = $bd), count(*) FROM events")
		IFS=, read -r nc nother nd nall <<<"$got"
		[ "${nc:-0}" -gt 0 ] && [ "$nc" = "$nall" ] && [ "${nother:-x}" = 0 ] && [ "${nd:-x}" = 0 ] &&
			echo "PASS $c-only-members" ||
			echo "FAIL $c-only-members: busyc $nc, other processes $nother, busyd $nd ($nall in all); $(tr '\n' ' ' <"$out/cg.where")"
	else
		echo "FAIL $c-capture: no $c.dtc"
	fi
done

# flight: a dump holds exactly the newest numbered calls, on one CPU, in
# order, and its counters account for every event (kernel_produced =
# kernel_read + kernel_dropped, the overwritten ones among the dropped)
flight_newest() {	# name file last
	local got n d lo hi ncpu order
	got=$(sql "$2" "SELECT count(*), count(DISTINCT arg0), min(arg0) - 1000000, max(arg0) - 1000000,
		count(DISTINCT cpu) FROM events WHERE probe_name = 'syscall:close:entry' AND arg0 >= 1000000")
	IFS=, read -r n d lo hi ncpu <<<"$got"
	order=$(sql "$2" "SELECT count(*) FROM (SELECT arg0 - lag(arg0) OVER (ORDER BY ts) AS step
		FROM events WHERE probe_name = 'syscall:close:entry' AND arg0 >= 1000000) WHERE step <> 1")
	if [ "${n:-0}" -gt 100 ] && [ "$d" = "$n" ] && [ "$hi" = "$3" ] && [ $((hi - lo + 1)) = "$n" ] &&
	   [ "$ncpu" = 1 ] && [ "$order" = 0 ]; then
		echo "PASS $1"
	else
		echo "FAIL $1: events $n distinct $d range $lo..$hi (want ..$3) cpus $ncpu out of order $order"
	fi
	"$capcheck" "$2" >"$out/$1.cc" 2>&1
	local ev kr kp kd
	ev=$(field events "$out/$1.cc") kr=$(field kernel_read "$out/$1.cc")
	kp=$(field kernel_produced "$out/$1.cc") kd=$(field kernel_dropped "$out/$1.cc")
	if [ -n "$ev" ] && [ "$ev" = "$kr" ] && [ "${kp:-0}" -ge "$(($3 + 1))" ] && [ "$kp" = $((kr + kd)) ]; then
		echo "PASS $1-counters"
	else
		echo "FAIL $1-counters: events $ev read $kr produced $kp dropped $kd (at least $(($3 + 1)) fired)"
	fi
}
flight_newest flight-sigusr2-newest "$out/fl.1.dtc" 49999
flight_newest flight-exit-newest "$out/fl.2.dtc" 79999
flight_newest flight-trigger-newest "$out/ft.1.dtc" 39999
last=$(sql "$out/ft.1.dtc" "SELECT probe_name FROM events ORDER BY ts DESC LIMIT 1")
# the trigger's own event is in its dump (events after it until the freeze may follow)
ntrig=$(sql "$out/ft.1.dtc" "SELECT count(*) FROM events WHERE probe_name = 'syscall:sched_yield:entry'")
[ "${ntrig:-0}" -ge 1 ] && echo "PASS flight-trigger-event" ||
	echo "FAIL flight-trigger-event: no sched_yield event in the trigger's dump (last event: $last)"

# uprobes: exact call counts, arguments and return values
if [ -f "$out/up.dtc" ]; then
	got=$(sql "$out/up.dtc" "SELECT sum(probe_name = 'uprobe:/bin/dt_ktest:up_target:entry'),
		sum(probe_name = 'uprobe:/bin/dt_ktest:up_target:return'),
		count(DISTINCT CASE WHEN probe_name LIKE '%:entry' THEN arg0 END),
		sum(CASE WHEN probe_name LIKE '%:entry' THEN arg0 END),
		sum(CASE WHEN probe_name LIKE '%:return' THEN retval END) FROM events")
	IFS=, read -r ne nr nd sa sr <<<"$got"
	# arguments 0..2999: sum 4498500; returns 3x+1: 3 * 4498500 + 3000
	[ "$ne" = 3000 ] && [ "$nr" = 3000 ] && echo "PASS uprobe-exact-counts" ||
		echo "FAIL uprobe-exact-counts: $ne entries, $nr returns (want 3000 each)"
	[ "$nd" = 3000 ] && [ "$sa" = 4498500 ] && [ "$sr" = 13498500 ] && echo "PASS uprobe-args-retval" ||
		echo "FAIL uprobe-args-retval: $nd distinct arguments summing to $sa (want 4498500), returns sum $sr (want 13498500)"
else
	echo "FAIL uprobe-capture: no up.dtc"
fi

# a shared library's function probed once, hit by two processes at once:
# each process's calls counted exactly, by pid, with its own arguments,
# and the two runs overlap in time
if [ -f "$out/lib2.dtc" ]; then
	lq() { sql "$out/lib2.dtc" "SELECT count(*), count(DISTINCT pid), sum(arg0), count(DISTINCT arg0),
		min(ts), max(ts), sum(comm = 'ucall') FROM events WHERE probe_name = 'uprobe:/lib/libdtuc.so:uc_hit:entry'
		AND arg1 = $1"; }
	IFS=, read -r n1 p1 s1 d1 lo1 hi1 c1 <<<"$(lq 1)"
	IFS=, read -r n2 p2 s2 d2 lo2 hi2 c2 <<<"$(lq 2)"
	np=$(sql "$out/lib2.dtc" "SELECT count(DISTINCT pid) FROM events")
	nall=$(sql "$out/lib2.dtc" "SELECT count(*) FROM events")
	# 0..2999 sum to 4498500, 0..4999 to 12497500
	[ "$n1" = 3000 ] && [ "$d1" = 3000 ] && [ "$s1" = 4498500 ] && [ "$p1" = 1 ] && [ "$c1" = 3000 ] &&
	[ "$n2" = 5000 ] && [ "$d2" = 5000 ] && [ "$s2" = 12497500 ] && [ "$p2" = 1 ] && [ "$c2" = 5000 ] &&
	[ "$np" = 2 ] && [ "$nall" = 8000 ] &&
		echo "PASS ulib-two-processes-exact" ||
		echo "FAIL ulib-two-processes-exact: who=1: $n1 calls ($d1 distinct, sum $s1, $p1 pids); who=2: $n2 ($d2, sum $s2, $p2 pids); $np pids, $nall events (want 3000, 5000, 2, 8000)"
	[ -n "$lo1" ] && [ -n "$lo2" ] && [ "$lo1" -lt "$hi2" ] && [ "$lo2" -lt "$hi1" ] &&
		echo "PASS ulib-concurrent" ||
		echo "FAIL ulib-concurrent: the two processes' calls did not overlap ($lo1..$hi1, $lo2..$hi2)"
else
	echo "FAIL ulib-capture: no lib2.dtc ($(tail -n 2 "$out/lib2.err" 2>/dev/null))"
fi

# USDT: every firing, each operand kind decoded (register, constant,
# computed, on the stack), the gated probe fired because dtrec raised its
# semaphore
if [ -f "$out/usdt.dtc" ]; then
	# (aliases: a column named by a query spanning lines spans lines too)
	got=$(sql "$out/usdt.dtc" "SELECT sum(probe_name = 'usdt:/bin/dt_ktest:dtkt:tick') AS t,
		sum(probe_name = 'usdt:/bin/dt_ktest:dtkt:gated') AS g,
		sum(CASE WHEN probe_name LIKE '%:tick' THEN (arg0 >= 0 AND arg0 < 2000 AND arg1 = -5 AND
			arg2 = 2 * arg0 AND arg3 = 1000 + arg0) END) AS ok,
		count(DISTINCT CASE WHEN probe_name LIKE '%:tick' THEN arg0 END) AS d FROM events")
	IFS=, read -r nt ng nok nd <<<"$got"
	[ "$nt" = 2000 ] && [ "$nok" = 2000 ] && [ "$nd" = 2000 ] && echo "PASS usdt-args" ||
		echo "FAIL usdt-args: $nt tick events, $nok with the right operands, $nd distinct (want 2000)"
	[ "$ng" = 2000 ] && echo "PASS usdt-semaphore" ||
		echo "FAIL usdt-semaphore: $ng gated events (want 2000)"
else
	echo "FAIL usdt-capture: no usdt.dtc"
fi

# symbolization on the host, if dtreport is built
if [ -x "$dtreport" ] && [ -f "$out/prov.dtc" ]; then
	"$dtreport" flame --folded "$out/prov.dtc" >"$out/folded.txt" 2>"$out/folded.err"
	grep -q 'hot_heavy' "$out/folded.txt" && echo "PASS symbolize-user" ||
		echo "FAIL symbolize-user: no hot_heavy frame in dtreport flame --folded ($(head -c 200 "$out/folded.err"))"
	grep -Eq '(^|;)(asm_|__sysvec|sysvec_|do_syscall_64|entry_SYSCALL|vfs_read|schedule|hrtimer)' "$out/folded.txt" &&
		echo "PASS symbolize-kernel" || echo "FAIL symbolize-kernel: no named kernel frame in the folded stacks"
else
	echo "FAIL symbolize: $dtreport is not built"
fi

# the perf source's kprobe PMU, through a shell's children (kprobes placed
# by address: by name, the children's forks fail): every return of dd's
# vfs_read is paired with its entry, the arguments and the bytes returned
# are dd's, and the kernel stacks start in vfs_read, not in the kprobe
# machinery
if [ -x "$dtreport" ] && [ -f "$out/pk.dtc" ]; then
	q() { "$dtreport" sql "$out/pk.dtc" "$1" 2>&1 | tr -d '\r' | tail -n +2; }
	src=$(q "SELECT source FROM capture")
	ent=$(q "SELECT count(*) FROM events WHERE comm='dd' AND probe_name='kprobe:vfs_read:entry'")
	ret=$(q "SELECT count(*) FROM events WHERE comm='dd' AND probe_name='kprobe:vfs_read:return'")
	bytes=$(q "SELECT sum(retval) FROM events WHERE comm='dd' AND probe_name='kprobe:vfs_read:return' AND retval > 0")
	len=$(cat "$out/version.len" 2>/dev/null)
	[ "$src" = perf ] && echo "PASS perf-kprobe-source" || echo "FAIL perf-kprobe-source: capture.source is '$src'"
	[ -n "$ent" ] && [ "$ent" -gt 0 ] 2>/dev/null && [ "$ent" = "$ret" ] &&
		echo "PASS perf-kprobe-pairs" || echo "FAIL perf-kprobe-pairs: $ent entries, $ret returns"
	[ -n "$len" ] && [ "$bytes" = $((5 * len)) ] && echo "PASS perf-kretprobe-retval" ||
		echo "FAIL perf-kretprobe-retval: dd read $bytes bytes, expected 5 x $len"
	# vfs_read(file, buf, count, pos): dd asks for bs=64 bytes each time
	cnt=$(q "SELECT group_concat(DISTINCT arg2) FROM events WHERE comm='dd' AND probe_name='kprobe:vfs_read:entry'")
	[ "$cnt" = 64 ] && echo "PASS perf-kprobe-args" || echo "FAIL perf-kprobe-args: count argument(s) '$cnt', expected 64"
	top=$(q "SELECT f.name FROM events e JOIN frames f ON f.stack_id = e.kstack AND f.depth = 0
		WHERE e.comm='dd' AND e.probe_name='kprobe:vfs_read:entry' GROUP BY f.name ORDER BY count(*) DESC")
	[ "$top" = vfs_read ] && echo "PASS perf-kprobe-first-frame" ||
		echo "FAIL perf-kprobe-first-frame: first kernel frames: $(echo $top | head -c 200)"
else
	echo "FAIL perf-kprobe: no capture $out/pk.dtc ($(tail -n 3 "$out/pk.err" 2>/dev/null))"
fi
# the dt source's frame-pointer stacks end at the first frame outside the
# process's code, marked cut: no 0x727275636e692020 ("  incurr"), no 0x0
for m in ascii zero; do
	f=$out/fpjunk-$m.dtc
	if [ -f "$f" ]; then
		got=$(sql "$f" "SELECT count(*) AS n, sum(s.truncated) AS cut,
			(SELECT count(*) FROM frames f WHERE f.kernel = 0 AND
			 (f.pc = 0 OR f.pc >= 140737488355328 OR f.name LIKE '0x%')) AS junk
			FROM events e JOIN stacks s ON s.id = e.ustack")
		IFS=, read -r n cut junk <<<"$got"
		# a zero return address away from the stack's bottom ends the
		# walk early too: cut (kernel/dt_event.c dt_ustack)
		[ "$n" = 200 ] && [ "$cut" = 200 ] && [ "$junk" = 0 ] && echo "PASS dt-fp-walk-stops-at-junk-$m" ||
			echo "FAIL dt-fp-walk-stops-at-junk-$m: $n stacks, $cut marked cut, $junk junk frames"
	else
		echo "FAIL dt-fp-walk-stops-at-junk-$m: no capture ($(tail -n 2 "$out/fpjunk-$m.err" 2>/dev/null))"
	fi
done
# built with frame pointers, the walk reaches main and its caller, where
# glibc's start code left junk in rbp: the outermost frame, not a cut
if [ -f "$out/fpwhole.dtc" ]; then
	got=$(sql "$out/fpwhole.dtc" "SELECT count(*), sum(s.truncated),
		sum(EXISTS (SELECT 1 FROM frames f WHERE f.stack_id = s.id AND f.name = 'main')),
		sum(s.depth >= 8) FROM events e JOIN stacks s ON s.id = e.ustack")
	IFS=, read -r n cut nmain ndeep <<<"$got"
	[ "$n" = 200 ] && [ "$cut" = 0 ] && [ "$nmain" = 200 ] && [ "$ndeep" = 200 ] &&
		echo "PASS dt-fp-walk-whole-not-cut" ||
		echo "FAIL dt-fp-walk-whole-not-cut: '$got' (stacks, cut, reaching main, 8 frames or more): $(tail -n 2 "$out/sql.err")"
else
	echo "FAIL dt-fp-walk-whole-not-cut: no capture ($(tail -n 2 "$out/fpwhole.err" 2>/dev/null))"
fi

# execve's argv[0] and its length, beside the path
if [ -f "$out/argv0.dtc" ]; then
	long=/tmp/argv0-longer-than-its-copy/hotloop
	got=$(sql "$out/argv0.dtc" "SELECT
		(SELECT count(*) FROM \"syscall:execve:entry\" WHERE argv0 = 'hotloop' AND argv0_len = 7
		 AND filename_str = '/bin/hotloop') AS short,
		(SELECT count(*) FROM \"syscall:execve:entry\" WHERE argv0 = substr('$long', 1, 15)
		 AND argv0_len = length('$long') AND filename_str = substr('$long', 1, 31)) AS long,
		(SELECT count(*) FROM \"syscall:execve:entry\" WHERE typeof(argv0) <> 'text') AS nottext")
	IFS=, read -r nshort nlong nnotext <<<"$got"
	[ "$nshort" = 1 ] && [ "$nlong" = 1 ] && [ "$nnotext" = 0 ] && echo "PASS dt-args-execve-argv0" ||
		echo "FAIL dt-args-execve-argv0: '$got' (short argv0, long one cut with its length, non-text): $(tail -n 2 "$out/sql.err")"
else
	echo "FAIL dt-args-execve-argv0: no capture ($(tail -n 2 "$out/argv0.err" 2>/dev/null))"
fi

# execveat's argv[0] and its length, beside fd, flags and the path
if [ -f "$out/execat.dtc" ]; then
	long=dt-ktest-execveat-argv0
	got=$(sql "$out/execat.dtc" "SELECT
		(SELECT count(*) FROM \"syscall:execveat:entry\" WHERE argv0 = substr('$long', 1, 15)
		 AND argv0_len = length('$long') AND filename_str = '/bin/dt_ktest' AND fd = -100
		 AND flags = 0) AS bypath,
		(SELECT count(*) FROM \"syscall:execveat:entry\" WHERE argv0 = 'ktshort' AND argv0_len = 7
		 AND coalesce(filename_str, '') = '' AND fd >= 0 AND flags = 4096) AS byfd,
		(SELECT count(*) FROM \"syscall:execveat:entry\") AS n")
	IFS=, read -r npath nfd nall <<<"$got"
	[ "$npath" = 1 ] && [ "$nfd" = 1 ] && [ "$nall" = 2 ] && echo "PASS dt-args-execveat-argv0" ||
		echo "FAIL dt-args-execveat-argv0: '$got' (by path with a long argv0, by descriptor, all): $(tail -n 2 "$out/sql.err")"
else
	echo "FAIL dt-args-execveat-argv0: no capture ($(tail -n 2 "$out/execat.err" 2>/dev/null))"
fi

# the flight dump of a -p target waking another process: produced is
# exactly what the ordinary recording beside it read, dropped is what the
# dump lacks of it, and the ring wrapped (it holds fewer than were made)
if [ -f "$out/fpr.dtc" ] && [ -f "$out/fpf.1.dtc" ]; then
	"$capcheck" "$out/fpr.dtc" >"$out/fpr.cc" 2>&1
	"$capcheck" "$out/fpf.1.dtc" >"$out/fpf.cc" 2>&1
	rr=$(field kernel_read "$out/fpr.cc") rp=$(field kernel_produced "$out/fpr.cc")
	rd=$(field kernel_dropped "$out/fpr.cc")
	ev=$(field events "$out/fpf.cc") kr=$(field kernel_read "$out/fpf.cc")
	kp=$(field kernel_produced "$out/fpf.cc") kd=$(field kernel_dropped "$out/fpf.cc")
	if [ "$(cat "$out/fpr.rc")" = 0 ] && [ "$(cat "$out/fpf.rc")" = 0 ] && [ -n "$rr" ] &&
	   [ "$rd" = 0 ] && [ "$rp" = "$rr" ] && [ -n "$kr" ] && [ "$ev" = "$kr" ] && [ "$kr" -lt "$rr" ] &&
	   [ "$kp" = "$rr" ] && [ "$kd" = $((rr - kr)) ]; then
		echo "PASS dt-flight-target-overwritten-exact"
	else
		echo "FAIL dt-flight-target-overwritten-exact: reference read $rr produced $rp dropped $rd; dump events $ev read $kr produced $kp (want $rr) dropped $kd (want $((${rr:-0} - ${kr:-0}))): $(tr '\n' '|' <"$out/fpf.err" | head -c 300)"
	fi
	# the system-wide recording beside them: the target's events are
	# exactly those the -p recording read, none lost to the filter.  Its
	# own drops are not asked to be none (it once dropped 4 wakeups on the
	# CPU ping does not run on): a drop of one of ping's would show here
	# as a difference, never as a pass
	if [ -f "$out/fpa.dtc" ]; then
		"$capcheck" "$out/fpa.dtc" >"$out/fpa.cc" 2>&1
		ad=$(field kernel_dropped "$out/fpa.cc")
		an=$(sql "$out/fpa.dtc" "SELECT count(*) FROM events WHERE pid = $(cat "$out/fp.ping")")
		[ "$(cat "$out/fpa.rc")" = 0 ] && [ -n "$rr" ] && [ "$an" = "$rr" ] &&
			echo "PASS dt-target-filter-loses-nothing" ||
			echo "FAIL dt-target-filter-loses-nothing: the system-wide recording (rc $(cat "$out/fpa.rc"), dropped $ad) has $an events of the target, the -p one read $rr"
	else
		echo "FAIL dt-target-filter-loses-nothing: no fpa.dtc ($(head -c 200 "$out/fpa.err" 2>/dev/null))"
	fi
else
	echo "FAIL dt-flight-target-overwritten-exact: no captures ($(ls "$out" | grep '^fp' | tr '\n' ' ') $(head -c 200 "$out/fpf.err" 2>/dev/null))"
fi
# sched_waking in the waker: the -p recording holds every waking of pong
# that ping did, as many as the system-wide recording saw in ping (its
# drops, interrupt-context events over the budget under a loaded host,
# are none of ping's: a waking runs in the waker's system call), and more
# than the wakeups of pong that ran in ping, most of which ran in the idle
# task of pong's CPU
if [ -f "$out/wk.dtc" ] && [ -f "$out/wks.dtc" ]; then
	read -r wping wpong <"$out/wk.pids"
	wn=$(sql "$out/wk.dtc" "SELECT count(*) FROM events WHERE arg2 = $wpong")
	wo=$(sql "$out/wk.dtc" "SELECT count(*) FROM events WHERE arg2 <> $wpong OR pid <> $wping")
	got=$(sql "$out/wks.dtc" "SELECT
		sum(probe_name = 'tracepoint:sched:sched_waking' AND pid = $wping AND arg2 = $wpong) AS a,
		sum(probe_name = 'tracepoint:sched:sched_wakeup' AND pid = $wping AND arg2 = $wpong) AS b,
		sum(probe_name = 'tracepoint:sched:sched_wakeup' AND pid = 0 AND arg2 = $wpong) AS c
		FROM events")
	IFS=, read -r sw su si <<<"$got"
	[ "$(cat "$out/wk.rc")" = 0 ] && [ "$(cat "$out/wks.rc")" = 0 ] && [ "${wn:-0}" -gt 0 ] &&
	[ "$wn" = "$sw" ] && [ "$wn" -gt "${su:-0}" ] &&
		echo "PASS dt-sched-waking-in-waker" ||
		echo "FAIL dt-sched-waking-in-waker: -p ping's wakings of pong $wn (and $wo other events); system-wide: wakings of pong in ping $sw, wakeups of pong in ping $su, in an idle task $si: $(tail -n 2 "$out/wk.err" "$out/wks.err" 2>/dev/null | tr '\n' '|')"
else
	echo "FAIL dt-sched-waking-in-waker: no captures ($(ls "$out" | grep '^wk' | tr '\n' ' ') $(head -c 200 "$out/wk.err" 2>/dev/null))"
fi
# --offcpu names the waker of each wait: ping's waits end in pong's
# write (both are dt_ktest) on whichever CPU; with sched_wakeup, four in
# five named the idle task of ping's CPU, in an interrupt
if [ -f "$out/wko.dtc" ] && [ "$(cat "$out/wko.rc" 2>/dev/null)" = 0 ]; then
	"$dtreport" flame --wakers --folded "$out/wko.dtc" >"$out/wko.folded" 2>"$out/wko.rerr"
	read -r kw ka <<<"$(awk '/^dt_ktest;/ { a += $NF } /^dt_ktest;dt_ktest;/ { k += $NF }
		END { print k + 0, a + 0 }' "$out/wko.folded")"
	[ "$ka" -gt 0 ] && [ $((kw * 100)) -ge $((ka * 90)) ] &&
		echo "PASS dt-offcpu-waker-not-idle" ||
		echo "FAIL dt-offcpu-waker-not-idle: ${kw}us of ping's ${ka}us woken by pong: $(cut -d';' -f1-2 "$out/wko.folded" | awk '{ print $1 }' | sort | uniq -c | tr '\n' '|') $(head -c 200 "$out/wko.rerr")"
else
	echo "FAIL dt-offcpu-waker-not-idle: no capture (rc $(cat "$out/wko.rc" 2>/dev/null)): $(head -c 200 "$out/wko.err" 2>/dev/null)"
fi
# --offcpu with a command on the dt source: the switches into the sleeps
# and their wakeups, run by other tasks, are kept (without those tasks'
# stacks), nothing of the unrelated hotloop is, and each sleep's
# blocked time is known: five waits of about the 100 ms asked for (90 ms or
# more: a switch out on one vCPU and the wakeup on another are stamped by two
# clocks that TCG keeps a few ms apart; one sleep measured 95.9 ms)
if [ -f "$out/off.dtc" ]; then
	tids="SELECT DISTINCT tid FROM events WHERE comm = 'sleep'"
	# the targets' threads (between fork and exec busybox's children are 'exe')
	all="SELECT DISTINCT tid FROM events WHERE comm IN ('sh', 'sleep')"
	got=$(sql "$out/off.dtc" "SELECT
		sum(probe_name = 'tracepoint:sched:sched_switch' AND comm <> 'sleep' AND arg7 IN ($tids)) AS a,
		sum(probe_name = 'tracepoint:sched:sched_waking' AND comm <> 'sleep' AND arg2 IN ($tids)) AS b,
		sum(tid NOT IN ($all) AND (kstack <> 0 OR ustack <> 0)) AS c,
		sum(tid NOT IN ($all) AND NOT (probe_name = 'tracepoint:sched:sched_switch' AND arg7 IN ($all))
			AND NOT (probe_name LIKE 'tracepoint:sched:sched_wak%' AND arg2 IN ($all))) AS d,
		count(*) AS e FROM events")
	IFS=, read -r nin nwake nforeign nhot nall <<<"$got"
	[ "${nin:-0}" -ge 5 ] && echo "PASS dt-offcpu-switch-into-target" ||
		echo "FAIL dt-offcpu-switch-into-target: $nin switches into sleep by other tasks ($nall events): $(tail -n 2 "$out/sql.err")"
	[ "${nwake:-0}" -ge 5 ] && echo "PASS dt-offcpu-wakeup-of-target" ||
		echo "FAIL dt-offcpu-wakeup-of-target: $nwake wakeups of sleep by other tasks"
	[ "${nforeign:-x}" = 0 ] && echo "PASS dt-offcpu-no-foreign-stacks" ||
		echo "FAIL dt-offcpu-no-foreign-stacks: $nforeign events of other tasks with stacks"
	[ "${nhot:-x}" = 0 ] && echo "PASS dt-offcpu-only-targets" ||
		echo "FAIL dt-offcpu-only-targets: $nhot events of other tasks about no target"
	got=$(sql "$out/off.dtc" "SELECT count(*) AS a, min(blocked) AS b, sum(blocked) AS c FROM sched
		WHERE comm = 'sleep' AND state = 'S' AND blocked >= 90000000")
	IFS=, read -r nb minb sumb <<<"$got"
	[ "${nb:-0}" = 5 ] && [ "${sumb:-0}" -lt 5000000000 ] && echo "PASS dt-offcpu-blocked-time" ||
		echo "FAIL dt-offcpu-blocked-time: $nb waits of sleep of 90 ms or more (want 5; min $minb, sum $sumb ns)"
	# prev_state as tracefs encodes it: a sleep's exit is its last switch
	# (X), not an idle wait (I, the raw TASK_DEAD) lasting to the end
	got=$(sql "$out/off.dtc" "SELECT count(*) AS a, group_concat(DISTINCT state) AS b FROM sched
		WHERE comm = 'sleep' AND state NOT IN ('S', 'R')")
	IFS=, read -r nodd odd <<<"$got"
	[ "${nodd:-x}" = 0 ] && echo "PASS dt-offcpu-exit-not-a-wait" ||
		echo "FAIL dt-offcpu-exit-not-a-wait: $nodd off-CPU intervals of sleep in states $odd"
else
	echo "FAIL dt-offcpu-capture: no off.dtc ($(tail -n 2 "$out/off.err" 2>/dev/null))"
fi
# --offcpu --user-stacks dwarf on the dt source: the scheduler events of
# the targets come with stack copies, unwound (not left to frame pointers)
got=$("$dtreport" stats --json "$out/offdw.dtc" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
u = d["counters"]["user_stacks"]
print(u["dwarf"], u["fp_behind"], d["events"])' 2>/dev/null)
read -r dw fpb nev <<<"$got"
[ "${dw:-0}" -gt 0 ] 2>/dev/null && echo "PASS dt-offcpu-dwarf" ||
	echo "FAIL dt-offcpu-dwarf: '$got' (unwound, left with frame pointers, events): $(tail -n 2 "$out/offdw.err" 2>/dev/null)"
exit 0
