#!/bin/bash
# dtrec.sh DTREC DTREPORT TARGET TMPDIR - dtrec's DWARF user stacks through
# the perf source: the five-deep chain whole, frame pointers as the control,
# the fall-behind counter, Debian binaries reaching their entry, agreement
# with perf --call-graph dwarf on the same run, option errors.
set -u
dtrec=$1 dtreport=$2 target=$3 tmp=$4
here=$(cd "$(dirname "$0")" && pwd)
chain='__libc_start_call_main;main;level1'
mkdir -p "$tmp"

. "$here/chain.sh"

# 1. the chain, DWARF (the default, auto, and explicit dwarf)
for mode in auto dwarf; do
	if ! "$dtrec" --source perf -q -o "$tmp/t-$mode.dtc" -e profile:hz:997 --user-stacks $mode \
		-- "$target" 2 2>"$tmp/t-$mode.err"; then
		echo "FAIL dtrec/chain-$mode: dtrec failed: $(head -c 300 "$tmp/t-$mode.err")"
		continue
	fi
	"$dtreport" flame --folded --user "$tmp/t-$mode.dtc" >"$tmp/t-$mode.folded"
	read -r pct n < <(chain_pct "$tmp/t-$mode.folded")
	if awk -v p="$pct" -v n="$n" 'BEGIN { exit !(p >= 95 && n >= 200) }'; then
		echo "PASS dtrec/chain-$mode: $pct% of $n samples in main..level5 show the whole chain"
	else
		echo "FAIL dtrec/chain-$mode: $pct% of $n samples in main..level5 show the whole chain (need 95%)"
	fi
done
# control: frame pointers cannot walk it
"$dtrec" --source perf -q -o "$tmp/t-fp.dtc" -e profile:hz:997 --user-stacks fp -- "$target" 1 2>/dev/null
"$dtreport" flame --folded --user "$tmp/t-fp.dtc" >"$tmp/t-fp.folded"
read -r pct n < <(chain_pct "$tmp/t-fp.folded")
if awk -v p="$pct" 'BEGIN { exit !(p < 50) }'; then
	echo "PASS dtrec/chain-fp-control: frame pointers show the whole chain in only $pct% of $n samples"
else
	echo "FAIL dtrec/chain-fp-control: frame pointers showed the chain in $pct% (the check cannot fail?)"
fi

# 2. stats and the capture's counter
"$dtreport" stats "$tmp/t-dwarf.dtc" >"$tmp/t.stats"
ev=$("$dtreport" stats --json "$tmp/t-dwarf.dtc" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
u = d["counters"]["user_stacks"]
print(u["dwarf"], u["dwarf_truncated"], u["fp_behind"])' 2>&1)
if grep -q '^  user stacks unwound with DWARF: [1-9]' "$tmp/t.stats" && [ "${ev##* }" = 0 ]; then
	echo "PASS dtrec/stats: dtreport stats counts DWARF-unwound stacks (dwarf, truncated, behind: $ev)"
else
	echo "FAIL dtrec/stats: no DWARF count in dtreport stats (json: $ev)"
fi
# falling behind: a budget too small for any sample, and no spool (spool.sh)
DTREC_UNWIND_SPOOL=0 DTREC_UNWIND_BUDGET=1 "$dtrec" --source perf -q -o "$tmp/behind.dtc" -e profile:hz:997 -- "$target" 1 \
	2>"$tmp/behind.err"
"$dtreport" stats "$tmp/behind.dtc" >"$tmp/behind.stats"
nev=$(awk '/^events/ { print $2; exit }' "$tmp/behind.stats")
if grep -q "samples kept their frame-pointer user stack" "$tmp/behind.err" &&
   grep -q "^  \*\*\* $nev samples kept their frame-pointer user stack" "$tmp/behind.stats"; then
	echo "PASS dtrec/behind: all $nev samples kept frame pointers, counted in the capture and warned about"
else
	echo "FAIL dtrec/behind: $(cat "$tmp/behind.err"; grep -i 'user stack' "$tmp/behind.stats")"
fi

# 2b. a program built without frame pointers: its stack copies come with
#     no frame-pointer walk (strace decodes the attribute), where one built
#     with them keeps the walk; a sample never unwound keeps its pc alone
attr() {	# PROGRAM: the profile event's perf_event_open attribute
	strace -f -v -e trace=perf_event_open -o "$tmp/attr.st" "$dtrec" --source perf -q \
		-o "$tmp/attr.dtc" -u --user-stacks dwarf -e profile:hz:997 -- "$1" 0.3 2>/dev/null
	grep -m1 'config=PERF_COUNT_SW_CPU_CLOCK' "$tmp/attr.st"
}
a=$(attr "$target") b=$(attr "$target-fp")
if [[ $a == *PERF_SAMPLE_STACK_USER* && $a == *exclude_callchain_user=1* && $a != *PERF_SAMPLE_CALLCHAIN* &&
      $b == *PERF_SAMPLE_STACK_USER* && $b == *exclude_callchain_user=0* && $b == *PERF_SAMPLE_CALLCHAIN* ]]; then
	echo "PASS dtrec/nofp-no-walk: a copy without the kernel's walk for a program without frame pointers, with it for one built with them"
else
	echo "FAIL dtrec/nofp-no-walk: without frame pointers: ${a:0:400} / with them: ${b:0:400}"
fi
"$dtreport" flame --folded --user "$tmp/behind.dtc" >"$tmp/behind.folded"
# comm;[truncated];pc's function, and the pc in the target's own code
read -r ok all < <(pc_only "$tmp/behind.folded")
if [ "$all" -gt 50 ] && [ $((ok * 100)) -ge $((all * 95)) ] && grep -q "only the pc" "$tmp/behind.err"; then
	echo "PASS dtrec/behind-pc-only: $ok of $all samples never unwound kept the pc alone, marked truncated"
else
	echo "FAIL dtrec/behind-pc-only: $ok of $all samples kept the pc alone: $(head -c 300 "$tmp/behind.folded")"
fi

# a program deleted while it runs (an upgrade): unwound from its own mapping
cp "$target" "$tmp/deleted-target"
"$dtrec" --source perf -q -o "$tmp/deleted.dtc" -e profile:hz:997 -- "$tmp/deleted-target" 1.5 unlink \
	2>/dev/null
ev=$("$dtreport" stats --json "$tmp/deleted.dtc" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
u = json.load(sys.stdin)["counters"]["user_stacks"]
print(u["dwarf"], u["dwarf_truncated"])' 2>&1)
if [ ! -e "$tmp/deleted-target" ] && awk -v d="${ev% *}" -v t="${ev#* }" 'BEGIN { exit !(d >= 200 && t * 20 <= d) }'; then
	echo "PASS dtrec/deleted: a program deleted while it ran: ${ev#* } of ${ev% *} DWARF stacks stopped short"
else
	echo "FAIL dtrec/deleted: DWARF stacks, stopped short: $ev"
fi

# 3. Debian binaries reach their entry; xz agrees with perf on the same run
seq 1 500000 >"$tmp/data.txt"
entry_pct() {
	awk '{ n = $NF; t += n; if ($0 ~ /__libc_start_call_main/) g += n }
	     END { printf "%.1f %d\n", t ? 100 * g / t : 0, t }' "$1"
}
rm -f "$tmp/perf.data"
if ! command -v perf >/dev/null; then
	echo "FAIL dtrec/xz-vs-perf: perf is not installed (linux-perf)"
else
	"$dtrec" --source perf -q -o "$tmp/xz.dtc" -e profile:hz:997 -- \
		perf record -q -B -N -F 997 --call-graph dwarf -o "$tmp/perf.data" -- \
		xz -T1 -6 -c "$tmp/data.txt" >/dev/null 2>"$tmp/xz.err"
	perf script -i "$tmp/perf.data" -F comm,ip,sym,dso --no-inline >"$tmp/perf.txt" 2>>"$tmp/xz.err"
	[ -s "$tmp/perf.txt" ] || echo "perf said: $(head -c 400 "$tmp/xz.err")"
	"$dtreport" flame --folded --user --comm xz "$tmp/xz.dtc" >"$tmp/xz.folded"
	/usr/bin/python3 "$here/perfcmp.py" "$tmp/perf.txt" "$tmp/xz.folded" dtrec/xz-vs-perf
	read -r pct n < <(entry_pct "$tmp/xz.folded")
	awk -v p="$pct" 'BEGIN { exit !(p >= 90) }' && r=PASS || r=FAIL
	echo "$r dtrec/xz-entry: $pct% of $n xz samples reach __libc_start_call_main (need 90%)"
fi
"$dtrec" --source perf -q -o "$tmp/py.dtc" -e profile:hz:997 -- /usr/bin/python3 -c '
import time
t = time.time()
while time.time() - t < 2.5:
    sum(i * i for i in range(2000))' 2>/dev/null
"$dtreport" flame --folded --user "$tmp/py.dtc" >"$tmp/py.folded"
read -r pct n < <(entry_pct "$tmp/py.folded")
awk -v p="$pct" -v n="$n" 'BEGIN { exit !(p >= 90 && n >= 100) }' && r=PASS || r=FAIL
echo "$r dtrec/python3-entry: $pct% of $n python3 samples reach __libc_start_call_main (need 90% of >= 100)"

# 3b. children forked without exec, owned by other unwinding workers than
#     their parent's (a process's mappings are held by its worker alone):
#     they unwind through what the machine told their worker at the fork
if DTREC_UNWIND_WORKERS=4 "$dtrec" --source perf -q -o "$tmp/fork.dtc" -e profile:hz:997 \
	-- "$target" 1.5 fork 2>"$tmp/fork.err"; then
	"$dtreport" flame --folded --user "$tmp/fork.dtc" >"$tmp/fork.folded"
	read -r pct n < <(chain_pct "$tmp/fork.folded")
	# processes sampled in the chain, and the workers that owned them
	read -r np nw < <("$dtreport" sql "$tmp/fork.dtc" "SELECT count(DISTINCT pid), count(DISTINCT pid % 4)
		FROM events WHERE ustack != 0" 2>&1 | tail -n 1 | tr ',' ' ')
	if awk -v p="$pct" -v n="$n" -v np="$np" -v nw="$nw" \
		'BEGIN { exit !(p >= 95 && n >= 400 && np == 4 && nw >= 2) }'; then
		echo "PASS dtrec/fork-workers: $pct% of $n samples of $np processes on $nw workers show the whole chain"
	else
		echo "FAIL dtrec/fork-workers: $pct% of $n samples (need 95% of >= 400), $np processes (need 4) on $nw workers (need 2)"
	fi
else
	echo "FAIL dtrec/fork-workers: dtrec failed: $(head -c 300 "$tmp/fork.err")"
fi

# 4. option errors: a clear message, status 2, no capture
for bad in "--user-stacks frames" "--user-stack-size 100" "--user-stack-size 1m" "--user-stack-size x"; do
	rm -f "$tmp/bad.dtc"
	# shellcheck disable=SC2086
	"$dtrec" --source perf -o "$tmp/bad.dtc" -e profile:hz:99 $bad -- true 2>"$tmp/bad.err"
	rc=$?
	if [ $rc = 2 ] && grep -q "^dtrec: bad --user-stack" "$tmp/bad.err" && [ ! -e "$tmp/bad.dtc" ]; then
		echo "PASS dtrec/option '$bad': $(head -1 "$tmp/bad.err")"
	else
		echo "FAIL dtrec/option '$bad': status $rc: $(head -1 "$tmp/bad.err")"
	fi
done
exit 0
