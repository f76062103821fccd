#!/bin/bash
# spool.sh DTREC DTREPORT TARGET TMPDIR - dtrec's DWARF samples past the
# unwinding workers' memory budget wait in a spool file beside the capture
# (cli/lib/rec/unwind_pool.c) and are still unwound: the capture keeps
# DWARF stacks, the spool file has no name while it lives and none is left
# after any exit (the end, SIGINT, SIGTERM, SIGKILL), and a full disk
# turns the rest into counted frame-pointer stacks, never a hang or a
# silent loss.
set -u
dtrec=$1 dtreport=$2 target=$3 tmp=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$tmp"

. "$here/chain.sh"

counts() {	# capture: "dwarf fp_behind events"
	"$dtreport" stats --json "$1" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
u = d["counters"]["user_stacks"]
print(u["dwarf"], u["fp_behind"], d["events"])' 2>/dev/null || echo "? ? ?"
}

# only the capture is left in dir (no spool, no temporary capture)
only_capture() {	# dir name
	local left
	left=$(cd "$1" && ls -A | grep -vx "$2")
	[ -z "$left" ] || { echo "$left"; return 1; }
}

# 1. every sample over the budget (1 byte): all spooled, all unwound
d=$tmp/all && rm -rf "$d" && mkdir -p "$d"
DTREC_UNWIND_BUDGET=1 "$dtrec" --source perf -o "$d/s.dtc" -e profile:hz:997 --user-stacks dwarf \
	-- "$target" 2 2>"$tmp/all.err"
rc=$?
read -r dw fpb ev < <(counts "$d/s.dtc")
"$dtreport" flame --folded --user "$d/s.dtc" >"$tmp/all.folded" 2>/dev/null
read -r pct n < <(chain_pct "$tmp/all.folded")
if [ "$rc" = 0 ] && [ "$fpb" = 0 ] && awk -v d="$dw" -v e="$ev" -v p="$pct" -v n="$n" \
	'BEGIN { exit !(e >= 50 && d * 100 >= e * 99 && p >= 95 && n >= 50) }' &&
   grep -q "samples waited in the spool file" "$tmp/all.err" && left=$(only_capture "$d" s.dtc); then
	echo "PASS spool/unwound: a budget of 1 byte: $dw of $ev samples unwound with DWARF through the spool, $pct% whole chains, no file left"
else
	echo "FAIL spool/unwound: status $rc, dwarf $dw, behind $fpb, events $ev, chain $pct% of $n, left '${left:-}': $(head -c 300 "$tmp/all.err")"
fi

# 2. both cores busy (two more copies of the target), a small budget:
#    the workers yield, samples spool, and still >= 99% DWARF stacks
d=$tmp/busy && rm -rf "$d" && mkdir -p "$d"
"$target" 3 & b1=$!
"$target" 3 & b2=$!
DTREC_UNWIND_BUDGET=65536 "$dtrec" --source perf -o "$d/s.dtc" -e profile:hz:997 \
	--user-stacks dwarf -- "$target" 2 2>"$tmp/busy.err"
rc=$?
wait $b1 $b2
read -r dw fpb ev < <(counts "$d/s.dtc")
if [ "$rc" = 0 ] && [ "$fpb" = 0 ] && awk -v d="$dw" -v e="$ev" \
	'BEGIN { exit !(e >= 50 && d * 100 >= e * 99) }' && only_capture "$d" s.dtc >/dev/null &&
   grep -q "samples waited in the spool file" "$tmp/busy.err"; then
	echo "PASS spool/busy: both cores busy, 64 KiB budget: $dw of $ev samples unwound with DWARF, $(grep -o '[0-9]* samples waited' "$tmp/busy.err") in the spool"
else
	echo "FAIL spool/busy: status $rc, dwarf $dw, behind $fpb, events $ev: $(head -c 300 "$tmp/busy.err")"
fi

# 3. the spool lives beside the capture without a name, and no signal
#    leaves it behind.  While recording, dtrec holds a deleted file in the
#    capture's directory (O_TMPFILE shows as "DIR/#INODE (deleted)").
for sig in INT TERM KILL; do
	d=$tmp/sig-$sig && rm -rf "$d" && mkdir -p "$d"
	DTREC_UNWIND_BUDGET=1 "$dtrec" --source perf -q -o "$d/s.dtc" -e profile:hz:997 \
		--user-stacks dwarf -- "$target" 30 2>"$tmp/sig-$sig.err" &
	pid=$!
	held=
	for _ in $(seq 100); do
		sleep 0.1
		held=$(ls -l /proc/$pid/fd 2>/dev/null | grep -F -- "-> $d/" | grep -E '/#[0-9]+ \(deleted\)$')
		[ -n "$held" ] && break
	done
	named=$(cd "$d" && ls -A | grep -v '^\.s\.dtc\.' | grep -vx s.dtc)
	kids=$(pgrep -P $pid)
	kill -$sig $pid
	wait $pid 2>/dev/null
	# the command dtrec started outlives a SIGKILL'd dtrec: end it by its id
	for k in $kids; do kill "$k" 2>/dev/null; done
	if [ "$sig" = KILL ]; then
		# a SIGKILL'd dtrec leaves its temporary capture (the next run
		# sweeps it), but no spool: count only what is not the capture's
		left=$(cd "$d" && ls -A | grep -v '^\.s\.dtc\.' | grep -vx s.dtc)
	else
		left=$(only_capture "$d" s.dtc)
	fi
	if [ -n "$held" ] && [ -z "$named" ] && [ -z "$left" ]; then
		echo "PASS spool/sig$sig: the spool was an unnamed file in the capture's directory and SIG$sig left nothing"
	else
		echo "FAIL spool/sig$sig: held '$held', named '$named', left '$left': $(head -c 300 "$tmp/sig-$sig.err")"
	fi
done

# 4. a small disk: the spool stops while a quarter of it is still free,
#    so the capture is written whole; the samples it cannot take keep
#    frame-pointer stacks, counted and warned about; no spool is left
d=$tmp/full && rm -rf "$d" && mkdir -p "$d"
if mount -t tmpfs -o size=512k tmpfs "$d" 2>"$tmp/mount.err"; then
	# both cores busy: the workers fall behind and the spool fills the disk
	"$target" 3 & b1=$!
	"$target" 3 & b2=$!
	DTREC_UNWIND_BUDGET=1 timeout 60 "$dtrec" --source perf -o "$d/s.dtc" -e profile:hz:997 \
		--user-stacks dwarf -- "$target" 2 2>"$tmp/full.err"
	rc=$?
	wait $b1 $b2
	read -r dw fpb ev < <(counts "$d/s.dtc")
	left=$(only_capture "$d" s.dtc)
	free=$(df -k --output=used "$d" | tail -1)
	if [ "$rc" = 0 ] && [ -z "$left" ] && [ "$dw" -gt 0 ] 2>/dev/null && [ "$fpb" -gt 0 ] &&
	   [ $((dw + fpb)) = "$ev" ] && grep -q "kept their frame-pointer user stack" "$tmp/full.err"; then
		echo "PASS spool/full-disk: status $rc, $dw DWARF and $fpb frame-pointer stacks (counted) of $ev, nothing left (${free} KiB used)"
	else
		echo "FAIL spool/full-disk: status $rc, dwarf $dw, behind $fpb, events $ev, left '$left': $(head -c 300 "$tmp/full.err")"
	fi
	umount "$d"
else
	echo "FAIL spool/full-disk: cannot mount a small tmpfs: $(cat "$tmp/mount.err")"
fi

# 5. no spool (DTREC_UNWIND_SPOOL=0) keeps the old fall-behind path
d=$tmp/nospool && rm -rf "$d" && mkdir -p "$d"
DTREC_UNWIND_SPOOL=0 DTREC_UNWIND_BUDGET=1 "$dtrec" --source perf -q -o "$d/s.dtc" \
	-e profile:hz:997 --user-stacks dwarf -- "$target" 1 2>"$tmp/nospool.err"
read -r dw fpb ev < <(counts "$d/s.dtc")
if [ "$dw" = 0 ] && [ "$fpb" = "$ev" ] && [ "$ev" -gt 0 ] 2>/dev/null; then
	echo "PASS spool/off-control: without a spool all $ev samples keep frame pointers (the check above can fail)"
else
	echo "FAIL spool/off-control: dwarf $dw, behind $fpb, events $ev"
fi

# 6. the policies while recording: the unwinding worker SCHED_IDLE, the
#    reading thread and the command as started (SCHED_OTHER)
d=$tmp/policy && rm -rf "$d" && mkdir -p "$d"
"$dtrec" --source perf -q -o "$d/s.dtc" -e profile:hz:997 --user-stacks dwarf -- "$target" 2 \
	2>"$tmp/policy.err" &
pid=$!
cls=
for _ in $(seq 50); do
	sleep 0.1
	cls=$(ps -L -o cls= -p $pid 2>/dev/null | tr -d ' ' | sort | uniq -c | tr -s ' \n' '  ')
	kid=$(pgrep -P $pid)
	case $cls in *IDL*TS*) break ;; esac
done
kcls=$(ps -o cls= -p "$kid" 2>/dev/null | tr -d ' ')
wait $pid
if echo "$cls" | grep -q '^ *1 IDL ' && echo "$cls" | grep -q ' TS' && [ "$kcls" = TS ]; then
	echo "PASS spool/policies: dtrec's threads ($cls): one unwinding worker at SCHED_IDLE, its command at TS"
else
	echo "FAIL spool/policies: dtrec's threads '$cls', the command's '$kcls'"
fi
