#!/bin/bash
# vm.sh KO DTREC HOTLOOP CAPCHECK OUTDIR - one VM boot running guest.sh,
# then the captures it brought back checked on the host.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ko=$1 dtrec=$2 hotloop=$3 capcheck=$4 out=$5
rm -rf "$out"
args=(--single-thread --script "$here/guest.sh" --bin "$dtrec" --bin "$hotloop" --out "$out" --timeout 120)
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

# symbolization on the host, if dtreport is built
dtreport=$top/build/bin/dtreport
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
exit 0
