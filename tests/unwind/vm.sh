#!/bin/bash
# vm.sh KO DTREC DTREPORT TARGET BADSTACK UCOPY_TEST OUTDIR DLPROG LIBDLT - the vm-unwind
# suite: one VM boot running vm-guest.sh (dt.ko's stack copies through
# /dev/dt, then dtrec --source dt --user-stacks dwarf), then its captures
# checked here: the five-deep -fomit-frame-pointer chain whole in >= 95%
# of the samples, frame pointers as the control, the fall-behind counter,
# and bad stacks (corrupted, unmapped, cut by a hole, too short a copy)
# giving short stacks marked truncated, never a crash or an invented caller;
# and processes of 30 ms that dlopen a library, named whole from dt.ko's
# proc events (exec, mmap), with their comm and executable's path.
set -u
ko=$1 dtrec=$2 dtreport=$3 target=$4 badstack=$5 ucopy=$6 out=$7 dlprog=$8 libdlt=$9
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/chain.sh"
rm -rf "$out" && mkdir -p "$out"
for f in "$ko" "$dtrec" "$dtreport" "$target" "$badstack" "$ucopy" "$dlprog" "$libdlt"; do
	[ -f "$f" ] || { echo "FAIL setup: $f is missing (build failed?)"; exit 0; }
done
"$top/tests/vm/run.sh" --single-thread --script "$here/vm-guest.sh" --ko "$ko" \
	--bin "$dtrec" --file "$target:bin/target" --bin "$badstack" --bin "$ucopy" \
	--bin "$dlprog" --file "$libdlt:lib/libdlt.so" \
	--file "$(readlink -f /lib64/ld-linux-x86-64.so.2):lib64/ld-linux-x86-64.so.2" \
	--file "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6):lib/x86_64-linux-gnu/libc.so.6" \
	--out "$out" --timeout 300 </dev/null
rc=$?
[ $rc -eq 0 ] && echo "PASS vm-status" || echo "FAIL vm-status: run.sh exited $rc (124 timeout, 125 no boot)"
if grep -Eq 'BUG:|WARNING:|Oops|general protection' "$out/dmesg.txt" 2>/dev/null; then
	echo "FAIL kernel-log: $(grep -Em1 'BUG:|WARNING:|Oops|general protection' "$out/dmesg.txt")"
else
	echo "PASS kernel-log: no BUG, WARNING or oops"
fi

recorded() {	# name: dtrec exited 0 and left a capture
	local rc
	rc=$(cat "$out/$1.rc" 2>/dev/null)
	if [ "$rc" = 0 ] && [ -s "$out/$1.dtc" ]; then
		return 0
	fi
	echo "FAIL $1: dtrec exited ${rc:-?}: $(head -c 300 "$out/$1.err" 2>/dev/null)"
	return 1
}
counts() {	# capture: "dwarf dwarf_truncated fp_behind events"
	"$dtreport" stats --json "$1" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
u = d["counters"]["user_stacks"]
print(u["dwarf"], u["dwarf_truncated"], u["fp_behind"])' 2>/dev/null || echo "? ? ?"
}

# 1. the chain through dt.ko: dwarf, auto (the default), fp as the control
for mode in dwarf auto; do
	recorded t-$mode || continue
	"$dtreport" flame --folded --user "$out/t-$mode.dtc" >"$out/t-$mode.folded"
	read -r pct n < <(chain_pct "$out/t-$mode.folded")
	if awk -v p="$pct" -v n="$n" 'BEGIN { exit !(p >= 95 && n >= 100) }'; then
		echo "PASS chain-$mode: $pct% of $n samples in main..level5 show the whole chain"
	else
		echo "FAIL chain-$mode: $pct% of $n samples in main..level5 show the whole chain (need 95% of >= 100)"
	fi
done
if recorded t-dwarf; then
	read -r dw dwt fpb < <(counts "$out/t-dwarf.dtc")
	if [ "$fpb" = 0 ] && [ "$dw" -gt 100 ] 2>/dev/null; then
		echo "PASS counts: $dw stacks unwound with DWARF ($dwt stopped short), none fell behind"
	else
		echo "FAIL counts: dwarf $dw, stopped short $dwt, fell behind $fpb"
	fi
fi
if recorded t-fp; then
	"$dtreport" flame --folded --user "$out/t-fp.dtc" >"$out/t-fp.folded"
	read -r pct n < <(chain_pct "$out/t-fp.folded")
	if [ "$n" -gt 0 ] && awk -v p="$pct" 'BEGIN { exit !(p < 50) }'; then
		echo "PASS chain-fp-control: frame pointers show the whole chain in only $pct% of $n samples"
	else
		echo "FAIL chain-fp-control: frame pointers showed the chain in $pct% of $n (the check cannot fail?)"
	fi
fi

# 2. a 1k copy cannot hold the chain: shorter stacks, marked truncated
if recorded t-1k; then
	"$dtreport" flame --folded --user "$out/t-1k.dtc" >"$out/t-1k.folded"
	read -r dw dwt fpb < <(counts "$out/t-1k.dtc")
	# samples in level5 need all five frames' buffers: more than 1k
	l5=$(awk '/;level5 [0-9]+$/ { t += $NF; if ($0 ~ /^[^;]*;\[truncated\];/) tr += $NF }
		  END { print t + 0, tr + 0 }' "$out/t-1k.folded")
	if [ "${l5% *}" -gt 0 ] && [ "${l5% *}" = "${l5#* }" ] && [ "$dwt" -gt 0 ] 2>/dev/null; then
		echo "PASS short-copy: all ${l5% *} level5 samples end in [truncated] ($dwt of $dw DWARF stacks stopped short)"
	else
		echo "FAIL short-copy: level5 samples, truncated: $l5; dwarf $dw, stopped short $dwt"
	fi
fi

# 3. falling behind: frame-pointer stacks, counted, warned about
if recorded behind; then
	read -r dw dwt fpb < <(counts "$out/behind.dtc")
	nev=$("$dtreport" sql "$out/behind.dtc" "SELECT count(*) FROM events WHERE ustack != 0" 2>/dev/null |
	      tail -n +2 | tr -d ' \r')
	# dt.ko does not filter by process: samples of other processes read
	# meanwhile count too, then recording leaves them out; samples taken in
	# exec or exit (no user context) carry no copy and no user stack
	if [ "$nev" -gt 0 ] 2>/dev/null && [ $((fpb * 100)) -ge $((nev * 98)) ] && [ "$dw" = 0 ] && grep -q "samples kept their frame-pointer user stack" "$out/behind.err"; then
		echo "PASS behind: $fpb of $nev samples with user stacks kept frame pointers, none unwound, counted and warned about"
	else
		echo "FAIL behind: events $nev, fell behind $fpb, dwarf $dw: $(head -c 200 "$out/behind.err")"
	fi
	# the target has no frame pointers: dt.ko was asked for no walk, and
	# a sample never unwound keeps the copy's pc alone, marked truncated
	"$dtreport" flame --folded --user "$out/behind.dtc" >"$out/behind.folded"
	read -r ok all < <(pc_only "$out/behind.folded")
	if [ "$all" -gt 50 ] 2>/dev/null && [ $((ok * 100)) -ge $((all * 95)) ] && grep -q "only the pc" "$out/behind.err"; then
		echo "PASS behind-pc-only: $ok of $all samples never unwound kept the pc alone, marked truncated"
	else
		echo "FAIL behind-pc-only: $ok of $all samples kept the pc alone: $(head -c 300 "$out/behind.folded")"
	fi
fi
if recorded spool; then
	read -r dw dwt fpb < <(counts "$out/spool.dtc")
	nev=$("$dtreport" sql "$out/spool.dtc" "SELECT count(*) FROM events WHERE ustack != 0" 2>/dev/null |
	      tail -n +2 | tr -d ' \r')
	if [ "$nev" -gt 0 ] 2>/dev/null && [ "$fpb" = 0 ] && [ $((dw * 100)) -ge $((nev * 99)) ] &&
	   grep -q "samples waited in the spool file" "$out/spool.err" &&
	   ! grep -v '\.\(dtc\|rc\|err\|txt\|ls\|folded\)$' "$out/spool.ls" | grep -q .; then
		echo "PASS spool: a budget of 1 byte: $dw of $nev samples unwound through the spool beside the capture, no file left"
	else
		echo "FAIL spool: events $nev, dwarf $dw, behind $fpb, files $(tr '\n' ' ' <"$out/spool.ls"): $(head -c 300 "$out/spool.err")"
	fi
fi

# 4. bad stacks: the sampled function alone, marked truncated; no caller
# invented from garbage.  spin_on swaps rsp only for its loop: a sample on
# the few instructions before the swap or after the restore has a good
# stack and rightly unwinds whole to main; those may be a small share
# (they were 1 in 1474 once), and only as main's true chain.
for m in garbage unmapped edge; do
	recorded bad-$m || continue
	"$dtreport" flame --folded --user "$out/bad-$m.dtc" >"$out/bad-$m.folded" 2>"$out/bad-$m.ferr"
	r=$(awk '/spin_on [0-9]+$/ { t += $NF; s = $0; sub(/ [0-9]+$/, "", s); sub(/^[^;]*;/, "", s)
		 if (s == "[truncated];spin_on") ok += $NF
		 else if (s ~ /(^|;)main;spin_on$/ && s !~ /truncated/) whole += $NF
		 else bad = bad " " s }
		 END { printf "%d %d %d%s\n", t, ok, whole, bad }' "$out/bad-$m.folded")
	read -r t ok whole rest <<<"$r"
	if [ "$t" -gt 20 ] && [ $((ok + whole)) = "$t" ] && [ $((whole * 50)) -le "$t" ]; then
		echo "PASS bad-$m: $ok of $t samples in spin_on are [truncated];spin_on, $whole whole to main (sampled outside the loop)"
	else
		echo "FAIL bad-$m: $ok of $t samples in spin_on are [truncated];spin_on, $whole whole to main; others: $(echo "$rest" | head -c 300)"
	fi
done

# 5. short-lived processes, recorded system-wide: a stack whose process
# was gone before it was unwound ends early, marked truncated; none holds
# a frame out of the chain's order
if recorded exitrace; then
	"$dtreport" flame --folded --user "$out/exitrace.dtc" >"$out/exitrace.folded"
	read -r t whole tr bad ex < <(/usr/bin/python3 "$here/chaincheck.py" "$out/exitrace.folded" "$target" target)
	# the checker itself: a caller skipped, an order swapped, an unmarked cut
	printf 'target;_start;__libc_start_main_impl;__libc_start_call_main;main;level2 3\ntarget;[truncated];level2;level1 2\ntarget;main;level1 1\n' >"$out/wrong.folded"
	read -r ct cw ctr cbad _ < <(/usr/bin/python3 "$here/chaincheck.py" "$out/wrong.folded" "$target" target)
	if [ "$ct" = 6 ] && [ "$cbad" = 6 ] && [ "${t:-0}" -ge 100 ] && [ "$whole" -gt 0 ] && [ "$bad" = 0 ]; then
		echo "PASS exit-race: $t samples of 25 processes of 30 ms: $whole whole, $tr cut short and marked truncated, none wrong"
	else
		echo "FAIL exit-race: $t samples: $whole whole, $tr truncated, $bad wrong: $(echo "$ex" | head -c 300) (checker control: $cbad of $ct wrong, want 6 of 6)"
	fi
fi

# 7. processes of 30 ms that dlopen a library, recorded system-wide: gone
# long before /proc could be read, their samples are named from dt.ko's
# exec and mmap events (dlprog's frames and the library's), and the
# capture's process table has their comm and the executable's path
if recorded dlopen; then
	"$dtreport" flame --folded --user "$out/dlopen.dtc" >"$out/dlopen.folded" 2>"$out/dlopen.ferr"
	"$dtreport" sql "$out/dlopen.dtc" "SELECT start, end FROM maps WHERE prot & 4 AND pid IN
		(SELECT pid FROM processes WHERE comm = 'dlprog')" >"$out/dlopen.maps" 2>>"$out/dlopen.sqlerr"
	read -r t lib whole bad ex < <(/usr/bin/python3 "$here/dlcheck.py" "$out/dlopen.folded" "$out/dlopen.maps")
	# the checker's control: an unnamed library frame, and a pc in known
	# code left bare, are caught; a bare guess outside all code is not
	lo=$(awk -F, 'NR == 2 { print $1 }' "$out/dlopen.maps" | tr -d '"\r')
	printf 'dlprog;main;libdlt.so+0x10 1\ndlprog;main;0x%x 2\ndlprog;main;0x10 4\n' "${lo:-0}" >"$out/dlwrong.folded"
	read -r ct _ _ cbad _ < <(/usr/bin/python3 "$here/dlcheck.py" "$out/dlwrong.folded" "$out/dlopen.maps")
	# (most samples of a process this short are in ld.so under emulation)
	if [ "$lib" -ge 60 ] && [ $((whole * 10)) -ge $((lib * 9)) ] && [ "$bad" = 0 ] &&
	   [ "$ct" = 7 ] && [ "$cbad" = 3 ]; then
		echo "PASS dlopen-named: $t samples of dlprog, $lib in the library, $whole of them main..dlt_inner whole, none unnamed"
	else
		echo "FAIL dlopen-named: $t samples of dlprog, $lib in the library, $whole whole, $bad with unnamed frames ($(echo "$ex" | head -c 200)) (checker control: $cbad of $ct bad, want 3 of 7)"
	fi
	cons=$("$dtreport" stats --json "$out/dlopen.dtc" 2>/dev/null |
	       /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["accounting"]["conserved"])' 2>/dev/null)
	# the proc records kept for the table alone are in no counter
	[ "$cons" = True ] && echo "PASS dlopen-conserved" || echo "FAIL dlopen-conserved: accounting says '$cons'"
	sql() { "$dtreport" sql "$out/dlopen.dtc" "$1" 2>>"$out/dlopen.sqlerr" | tail -n +2 | head -n1 | tr -d ' \r'; }
	np=$(sql "SELECT count(DISTINCT pid) FROM events WHERE comm = 'dlprog'")
	nt=$(sql "SELECT count(DISTINCT pid) FROM processes WHERE comm = 'dlprog' AND exe = '/bin/dlprog'")
	if [ "${np:-0}" -ge 5 ] 2>/dev/null && [ "$np" = "$nt" ]; then
		echo "PASS exec-named: all $np dlprog processes with events are in the process table as dlprog, /bin/dlprog"
	else
		echo "FAIL exec-named: $np dlprog processes with events, $nt of them in the process table as dlprog, /bin/dlprog ($(head -c 200 "$out/dlopen.sqlerr" 2>/dev/null))"
	fi
fi

# 8. the same program as dtrec's command: dt.ko's filter makes it a target
# at its exec, before the image is mapped, so its own exec and mmap events
# pass, and its frames are named
if recorded dlcmd; then
	"$dtreport" flame --folded --user "$out/dlcmd.dtc" >"$out/dlcmd.folded" 2>"$out/dlcmd.ferr"
	"$dtreport" sql "$out/dlcmd.dtc" "SELECT start, end FROM maps WHERE prot & 4 AND pid IN
		(SELECT pid FROM processes WHERE comm = 'dlprog')" >"$out/dlcmd.maps" 2>>"$out/dlcmd.sqlerr"
	read -r t lib whole bad ex < <(/usr/bin/python3 "$here/dlcheck.py" "$out/dlcmd.folded" "$out/dlcmd.maps")
	exe=$("$dtreport" sql "$out/dlcmd.dtc" "SELECT exe FROM processes WHERE comm = 'dlprog' LIMIT 1" \
	      2>>"$out/dlcmd.sqlerr" | tail -n +2 | tr -d ' \r')
	if [ "$lib" -ge 5 ] && [ $((whole * 10)) -ge $((lib * 9)) ] && [ "$bad" = 0 ] && [ "$exe" = /bin/dlprog ]; then
		echo "PASS dlopen-command: $t samples, $lib in the library, $whole whole, none unnamed, exe $exe"
	else
		echo "FAIL dlopen-command: $t samples, $lib in the library, $whole whole, $bad unnamed ($(echo "$ex" | head -c 200)), exe '$exe'"
	fi
fi

# 6. a ring too small for the copies
rc=$(cat "$out/small.rc" 2>/dev/null)
if [ "$rc" != 0 ] && grep -q "too small for user stack copies" "$out/small.err" && [ ! -s "$out/small.dtc" ]; then
	echo "PASS small-ring: $(head -n1 "$out/small.err")"
else
	echo "FAIL small-ring: status ${rc:-?}: $(head -c 300 "$out/small.err" 2>/dev/null)"
fi
exit 0
