#!/bin/bash
# dtsrc.sh DTREC DTREPORT FAKEDT TMPDIR TARGET - the dt source's user stack copies
# on the host, against tests/dtrec/fakedt.so (LD_PRELOAD /dev/dt): its
# records with registers and stack copies (some with a copy size that lies)
# go to the unwinding workers or keep frame pointers, and never reach the
# capture; the ring size is checked against the copy size.  The real
# device is the vm-unwind suite's.
set -u
dtrec=$1 dtreport=$2 fake=$3 tmp=$4 target=$5
mkdir -p "$tmp"
# fakedt.so is preloaded before the ASan runtime
export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1
counts() {	# capture: "dwarf dwarf_truncated fp_behind events"
	"$dtreport" stats --json "$1" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
u = d["counters"]["user_stacks"]
print(u["dwarf"], u["dwarf_truncated"], u["fp_behind"], d["events"])' 2>/dev/null || echo "? ? ? ?"
}

# 1. copies of this shell's "samples" (garbage stacks: the ip alone, marked
#    truncated), the lying ones left with their frame-pointer stack
env FAKEDT_RATE=20000 FAKEDT_UREGS_PID=$$ LD_PRELOAD="$fake" "$dtrec" --source dt -q \
	-o "$tmp/dt.dtc" -e profile:hz:97 --user-stacks dwarf -d 1s 2>"$tmp/dt.err"
rc=$?
read -r dw dwt fpb ev < <(counts "$tmp/dt.dtc")
if [ $rc = 0 ] && [ "$dw" -gt 1000 ] 2>/dev/null && [ "$dwt" = "$dw" ] && [ "$fpb" = 0 ] &&
   ! grep -q 'ERROR: \|runtime error' "$tmp/dt.err"; then
	echo "PASS dtsrc/unwound: $dw of $ev samples unwound from their copies (all to the ip alone, truncated)"
else
	echo "FAIL dtsrc/unwound: status $rc, dwarf $dw, stopped short $dwt, behind $fpb, events $ev: $(head -c 300 "$tmp/dt.err")"
fi
# the capture holds stacks, not stack bytes: far below a 16k copy per sample
sz=$(stat -c %s "$tmp/dt.dtc" 2>/dev/null || echo 0)
if [ "$ev" -gt 0 ] 2>/dev/null && [ $((sz / ev)) -lt 200 ]; then
	echo "PASS dtsrc/no-stack-bytes: $((sz / ev)) capture bytes per event"
else
	echo "FAIL dtsrc/no-stack-bytes: $sz bytes for $ev events"
fi

# 2. falling behind: every copy refused, frame-pointer stacks, counted
env FAKEDT_RATE=20000 FAKEDT_UREGS_PID=$$ DTREC_UNWIND_SPOOL=0 DTREC_UNWIND_BUDGET=1 LD_PRELOAD="$fake" "$dtrec" \
	--source dt -q -o "$tmp/behind.dtc" -e profile:hz:97 --user-stacks dwarf -d 1s 2>"$tmp/behind.err"
read -r dw dwt fpb ev < <(counts "$tmp/behind.dtc")
if [ "$dw" = 0 ] && [ "$fpb" -gt 1000 ] 2>/dev/null && grep -q "kept their frame-pointer user stack" "$tmp/behind.err"; then
	echo "PASS dtsrc/behind: $fpb of $ev samples kept frame pointers, counted and warned about"
else
	echo "FAIL dtsrc/behind: dwarf $dw, behind $fpb, events $ev: $(head -c 300 "$tmp/behind.err")"
fi

# 2b. a command built without frame pointers: copies without dt.ko's walk
#     (DTEVT_UREGS, not DTEVT_USTACK); one built with them keeps the walk
enables() {	# PROGRAM: the evtflags dtrec enabled profile:hz:97 with
	rm -f "$tmp/enable.log"
	env FAKEDT_ENABLELOG="$tmp/enable.log" LD_PRELOAD="$fake" "$dtrec" --source dt -q \
		-o "$tmp/en.dtc" -u -e profile:hz:97 --user-stacks dwarf -- "$1" 0.2 2>/dev/null
	# the one probe with a user stack (the proc probes' have none)
	sed -n 's/.*evtflags=//p' "$tmp/enable.log" | while read -r f; do
		(( f & 0x14 )) && { echo "$f"; break; }
	done
}
a=$(enables "$target") b=$(enables "$target-fp")
if [ -n "$a" ] && [ -n "$b" ] && (( (a & 0x10) && !(a & 0x4) && (b & 0x10) && (b & 0x4) )); then
	echo "PASS dtsrc/nofp-no-walk: copies without the walk for a program without frame pointers ($a), with it for one with them ($b)"
else
	echo "FAIL dtsrc/nofp-no-walk: evtflags without frame pointers '$a', with them '$b'"
fi

# 3. fp: no copies asked for, nothing unwound
env FAKEDT_RATE=20000 FAKEDT_UREGS_PID=$$ LD_PRELOAD="$fake" "$dtrec" --source dt -q \
	-o "$tmp/fp.dtc" -e profile:hz:97 --user-stacks fp -d 0.5s 2>"$tmp/fp.err"
read -r dw dwt fpb ev < <(counts "$tmp/fp.dtc")
if [ "$dw" = 0 ] && [ "$fpb" = 0 ] && [ "$ev" -gt 1000 ] 2>/dev/null; then
	echo "PASS dtsrc/fp: $ev samples, none unwound"
else
	echo "FAIL dtsrc/fp: dwarf $dw, behind $fpb, events $ev: $(head -c 300 "$tmp/fp.err")"
fi

# 5. the proc probes: the process table from their records (exec path,
#    a mapping of fakedt.so), odd ones (a path longer than its record, no
#    NUL, no room for the path, too few arguments) skipped whole; kept from
#    the capture and from its read counters, which still add up
env FAKEDT_RATE=20000 FAKEDT_UREGS_PID=$$ FAKEDT_EXEC=/fake/bin/prog LD_PRELOAD="$fake" "$dtrec" \
	--source dt -q -o "$tmp/proc.dtc" -e profile:hz:97 --user-stacks dwarf -d 1s 2>"$tmp/proc.err"
rc=$?
q() { "$dtreport" sql "$tmp/proc.dtc" "$1" 2>>"$tmp/proc.sqlerr" | tail -n +2 | tr -d ' \r' | head -n1; }
exe=$(q "SELECT exe FROM processes WHERE pid = $$ ORDER BY ts DESC LIMIT 1")
fmap=$(q "SELECT count(*) FROM maps WHERE pid = $$ AND name LIKE '%fakedt.so'")
pev=$(q "SELECT count(*) FROM events WHERE probe_name LIKE 'proc:%'")
cons=$("$dtreport" stats --json "$tmp/proc.dtc" 2>/dev/null |
       /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["accounting"]["conserved"])' 2>/dev/null)
if [ $rc = 0 ] && [ "$exe" = /fake/bin/prog ] && [ "${fmap:-0}" -gt 0 ] 2>/dev/null && [ "$pev" = 0 ] &&
   [ "$cons" = True ] && ! grep -q 'ERROR: \|runtime error' "$tmp/proc.err"; then
	echo "PASS dtsrc/proc-table: exe $exe and a fakedt.so mapping from the proc records, none of them stored, counters conserved"
else
	echo "FAIL dtsrc/proc-table: status $rc, exe '$exe', fakedt.so maps '$fmap', proc events stored '$pev', conserved '$cons': $(head -c 300 "$tmp/proc.err" "$tmp/proc.sqlerr" 2>/dev/null)"
fi

# 4. a ring too small for the copies: a clear error, no capture
rm -f "$tmp/small.dtc"
LD_PRELOAD="$fake" "$dtrec" --source dt -o "$tmp/small.dtc" -e profile:hz:97 -b 32k \
	--user-stacks dwarf -d 0.2s 2>"$tmp/small.err"
rc=$?
if [ $rc != 0 ] && grep -q "ring size 32768 is too small for user stack copies of 16384 bytes.*-b 64k" "$tmp/small.err" &&
   [ ! -e "$tmp/small.dtc" ]; then
	echo "PASS dtsrc/small-ring: $(head -n1 "$tmp/small.err")"
else
	echo "FAIL dtsrc/small-ring: status $rc: $(head -c 300 "$tmp/small.err")"
fi

# 6. without the proc probes (a ring too small for their paths), the
#    processes seen are kept by pid for their /proc re-reads: a thousand
#    of them, all but this shell gone, so the table drops the gone ones
#    over and over (each drop moves the last entry into the hole; ASan
#    watches), and every copy is still unwound and every record kept
env FAKEDT_RATE=20000 FAKEDT_UREGS_PID=$$ FAKEDT_UREGS_PIDS=1000 LD_PRELOAD="$fake" "$dtrec" \
	--source dt -q -o "$tmp/many.dtc" -e profile:hz:97 -b 8k --user-stack-size 1k \
	--user-stacks dwarf -d 1s 2>"$tmp/many.err"
rc=$?
read -r dw dwt fpb ev < <(counts "$tmp/many.dtc")
cons=$("$dtreport" stats --json "$tmp/many.dtc" 2>/dev/null |
       /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["accounting"]["conserved"])' 2>/dev/null)
if [ $rc = 0 ] && [ "$dw" -gt 5000 ] 2>/dev/null && [ "$fpb" = 0 ] && [ "$cons" = True ] &&
   ! grep -q 'ERROR: \|runtime error' "$tmp/many.err"; then
	echo "PASS dtsrc/many-processes: $dw of $ev samples over 1000 pids unwound, counters conserved"
else
	echo "FAIL dtsrc/many-processes: status $rc, dwarf $dw, behind $fpb, events $ev, conserved '$cons': $(head -c 300 "$tmp/many.err")"
fi
exit 0
