#!/bin/bash
# tests/scan/run.sh - the report scans on N threads give the same bytes for
# any N: stats, flame and top of dtgen captures at --threads 1, 2 and 7
# (and the default), with and without filters (by contexts of whole blocks,
# and by rows); a damaged block is told the same way for any N; bad
# --threads values are usage errors; dtsh's `set threads'; and the pool
# under TSan against one dtcap_iter walk.
# Block summaries (BSUM): each against its block's rows; captures without
# them (stripped: as older writers wrote) give the same reports by
# decoding; a summary that does not add up, or names a comm the capture
# lacks, is damage; one naming another block is ignored.
# The time analyses (flame --offcpu/--wakers, blame, heatmap, latency,
# syscalls, the SQL tables spans and sched) likewise, on schedgen's and
# dtgen's captures, started on worker threads, and under TSan.
# Env: B, DTREPORT (ASan), DTSH (ASan), DTGEN, POOLTSAN, SCHEDGEN,
# DTREPORT_TSAN.
# Prints PASS/FAIL lines; see tests/run-suite.sh.
set -u
R=${DTREPORT:?}
W=$B/tests/scan/work
rm -rf "$W" && mkdir -p "$W"
. "$(dirname "$0")/../lib.sh"
sanitizers_strict
BSUMCHECK=$B/tests/scan/bsumcheck BSUMEDIT=$B/tests/scan/bsumedit
for tool in "$R" "${DTSH:?}" "${DTGEN:?}" "${POOLTSAN:?}" "$BSUMCHECK" "$BSUMEDIT" python3 \
	"${SCHEDGEN:?}" "${DTREPORT_TSAN:?}" "$B/bin/dtreport" "$B/bin/dtsh" strace; do
	command -v "$tool" >/dev/null || { fail tools "missing $tool"; exit 1; }
done

# Many blocks (997 rows: an exec falls inside some), pids that exec (their
# user stacks are named per snapshot), syscalls; and the library's blocks.
"$DTGEN" -o "$W/g.dtc" -n 300000 -s 11 --stacks 4000 --pids 12 --block 997 ||
	fail dtgen "dtgen g failed"
"$DTGEN" -o "$W/s.dtc" -n 200000 -s 12 --stacks 2000 --pids 6 --syscalls --block 4096 ||
	fail dtgen "dtgen s failed"
"$DTGEN" -o "$W/l.dtc" -n 150000 -s 13 || fail dtgen "dtgen l failed"

# same NAME CAP ARGS...: the report at every thread count, byte for byte;
# N=1 must have said something (status 0, output, no sanitizer report).
same() {
	local name=$1 cap=$2; shift 2
	local base=$W/$name.1 bad=""
	"$R" "$@" --threads 1 "$W/$cap.dtc" >"$base" 2>"$base.err"
	local rc=$?
	if [ $rc -ne 0 ] || [ ! -s "$base" ] || san "$base.err"; then
		fail "$name" "--threads 1: status $rc, $(wc -c <"$base") bytes: $(head -c 300 "$base.err")"
		return
	fi
	for n in 2 7 default; do
		local t=(--threads "$n")
		[ "$n" = default ] && t=()
		"$R" "$@" "${t[@]}" "$W/$cap.dtc" >"$W/$name.$n" 2>"$W/$name.$n.err"
		rc=$?
		if [ $rc -ne 0 ] || san "$W/$name.$n.err"; then
			bad="$bad --threads $n: status $rc $(head -c 200 "$W/$name.$n.err");"
		elif ! cmp -s "$base" "$W/$name.$n"; then
			bad="$bad --threads $n: output differs from --threads 1 ($(cmp "$base" "$W/$name.$n" | head -1));"
		fi
	done
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

for cap in g s l; do
	same "stats-$cap" $cap stats --all
	same "stats-json-$cap" $cap stats --json --top 50
	same "flame-folded-$cap" $cap flame --folded
	same "flame-svg-$cap" $cap flame
	same "flame-reverse-$cap" $cap flame --folded --reverse
	for by in comm pid probe stack syscall sym dso; do
		same "top-$by-$cap" $cap top --by "$by" -n 100
	done
	# sym --children, callers and callees name flame's fold
	same "top-sym-children-$cap" $cap top --by sym --children -n 100
	# filters: the row path
	same "stats-filtered-$cap" $cap stats --cpu 0,1 --since 0.5
	same "flame-filtered-$cap" $cap flame --folded --cpu 1,2
	same "top-filtered-$cap" $cap top --by stack --since 1 --until 100
done
# entry/return pairs: their events collected on the pool, in block order
for cap in s g; do
	same "latency-$cap" $cap latency --json
	same "latency-tid-$cap" $cap latency --by tid
	same "syscalls-$cap" $cap syscalls --by comm
	same "syscalls-filtered-$cap" $cap syscalls --cpu 0,1 --json
done
# ------------------------------------------- the time analyses on the pool
# Their events (entry/return pairs, scheduler switches and wakeups, the
# samples blame spreads on-CPU time over, heatmap cells, the first event
# after a lost switch in) collected by the workers, appended in block
# order; the pairing and the replay on one thread.  k: schedgen's
# switches, wakeups and syscalls on 8 CPUs in per-CPU batches (11 blocks);
# s: dtgen's syscalls and switches of threads that move between CPUs.
# The SQL tables are computed, not read from a cache (DT_CACHE=off).
"$SCHEDGEN" -o "$W/k.dtc" -n 700000 || fail schedgen "schedgen k failed"
# kl: every 7th switch names no thread switched to, as when the kernel lost
# the switch in: those intervals end at the thread's next event, found by
# a second scan (on the pool too)
"$SCHEDGEN" -o "$W/kl.dtc" -n 700000 -l 7 || fail schedgen "schedgen kl failed"
# m: two CPUs' streams share their threads, so threads' events are out of
# time order in the file and their pairs nest or lose an end, and half
# the tids lie past 2^22; km: with lost switches too.  What the models
# collected by N workers must give alike.
"$SCHEDGEN" -o "$W/m.dtc" -n 400000 -m || fail schedgen "schedgen m failed"
"$SCHEDGEN" -o "$W/km.dtc" -n 400000 -m -l 5 || fail schedgen "schedgen km failed"
export DT_CACHE=off
# same_sh NAME CAP QUERY: dtsh's SQL at `set threads' 1, 2 and 7 (dtreport
# sql takes no --threads), byte for byte
same_sh() {
	local name=$1 cap=$2 q=$3 bad="" rc n
	for n in 1 2 7; do
		"$DTSH" -c "set threads $n" -c "$q" "$W/$cap.dtc" >"$W/$name.$n" 2>"$W/$name.$n.err"
		rc=$?
		if [ $rc -ne 0 ] || san "$W/$name.$n.err" || [ ! -s "$W/$name.$n" ]; then
			bad="$bad N=$n: status $rc $(head -c 200 "$W/$name.$n.err");"
		elif ! cmp -s "$W/$name.1" "$W/$name.$n"; then
			bad="$bad N=$n: output differs from N=1;"
		fi
	done
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}
sqlq() { "$R" sql --csv "$W/$1.dtc" "$2" 2>/dev/null | tr -d '\r' | tail -n +2; }
for cap in k s; do
	same "heatmap-$cap" $cap heatmap
	same "heatmap-filtered-$cap" $cap heatmap --cpu 0,1,2
	same "latency-json-$cap" $cap latency --json
	same "latency-filtered-$cap" $cap latency --cpu 1,3 --by tid
	same "syscalls-json-$cap" $cap syscalls --json
	same_sh "sql-spans-$cap" $cap 'SELECT * FROM spans'
done
# Unfiltered, the models place each block's events where the block
# summaries say they go (no run appended, nothing copied).  A summary
# whose lists add up but are not its block's counts (bsumedit swap: two
# probes' counts exchanged) is noticed, and the events appended instead:
# the same report as from the intact file, at every thread count.
"$BSUMEDIT" swap "$W/s.dtc" "$W/bs-swap.dtc" || fail bsum-swap "bsumedit swap failed"
"$BSUMEDIT" swap "$W/k.dtc" "$W/k-swap.dtc" || fail bsum-swap "bsumedit swap failed"
nocap() { sed 's|"capture":"[^"]*"||; s|^capture .*||' "$1"; }
for rep in "latency --json" "syscalls --json" "flame --offcpu --folded" "flame --wakers --folded"; do
	for pair in s:bs-swap k:k-swap; do
		orig=${pair%%:*} sw=${pair##*:} bad=""
		case "$rep:$orig" in flame*:s) continue ;; esac
		# shellcheck disable=SC2086
		"$R" $rep "$W/$orig.dtc" >"$W/sw.ref" 2>/dev/null
		for n in 1 2 7; do
			# shellcheck disable=SC2086
			"$R" $rep --threads $n "$W/$sw.dtc" >"$W/sw.out" 2>"$W/sw.err"
			rc=$?
			if [ $rc -ne 0 ] || san "$W/sw.err" || [ ! -s "$W/sw.ref" ] ||
			   ! cmp -s <(nocap "$W/sw.out") <(nocap "$W/sw.ref"); then
				bad="$bad N=$n: status $rc $(head -c 200 "$W/sw.err");"
			fi
		done
		n=bsum-swap-${rep// --/-}-$orig
		if [ -z "$bad" ]; then pass "$n"; else fail "$n" "$bad"; fi
	done
done

# k only: dtgen's switches make no off-CPU intervals (no wakeups either)
same offcpu-folded-k k flame --offcpu --folded
same offcpu-svg-k k flame --offcpu
same offcpu-state-k k flame --offcpu --state S,D --folded
same_sh sql-sched-k k 'SELECT * FROM sched'
same offcpu-lost-kl kl flame --offcpu --folded
same wakers-lost-kl kl flame --wakers --folded
same_sh sql-sched-lost-kl kl 'SELECT * FROM sched'
"$R" flame --offcpu --folded "$W/kl.dtc" 2>&1 >/dev/null | grep -q "off-CPU intervals have no switch back in" &&
	pass lost-switches-noted || fail lost-switches-noted "kl's lost switches were not noted"
# a thread with the most off-CPU time: its blame at every thread count
T=$(sqlq k 'SELECT tid FROM sched GROUP BY tid ORDER BY sum("end" - start) DESC, tid LIMIT 1')
if [ -n "$T" ]; then
	same blame-k k blame --tid "$T" --depth 3
	same blame-folded-k k blame --tid "$T" --folded
else
	fail blame-k "no thread in the sched table"
fi
same wakers-folded-k k flame --wakers --folded
same wakers-svg-k k flame --wakers

# ---- the pairing and the replay of disordered threads and big tids (m, km)
# the captures are what they claim: threads out of time order in the
# file, tids past 2^22 next to small ones, unmatched ends
dis=$(sqlq m 'SELECT count(*) FROM (SELECT ts < lag(ts) OVER (PARTITION BY tid ORDER BY rowid) AS back FROM events) WHERE back')
big=$(sqlq m 'SELECT count(DISTINCT tid) FROM events WHERE tid > 4194304')
small=$(sqlq m 'SELECT count(DISTINCT tid) FROM events WHERE tid <= 4194304')
if [ "${dis:-0}" -gt 0 ] && [ "${big:-0}" -gt 0 ] && [ "${small:-0}" -gt 0 ]; then
	pass schedgen-m-mixed
else
	fail schedgen-m-mixed "events back in time ${dis:-none}, big tids ${big:-none}, small ${small:-none}"
fi
# tids past 2^22 next to smaller ones once made the pairing's hash refuse
# its entries: "out of memory" for latency, syscalls and the spans table
for cap in m km; do
	same "latency-json-$cap" $cap latency --json
	same "latency-tid-$cap" $cap latency --by tid
	same "latency-filtered-$cap" $cap latency --cpu 1,2 --by tid
	same "syscalls-json-$cap" $cap syscalls --json
	same "offcpu-folded-$cap" $cap flame --offcpu --folded
	same "wakers-folded-$cap" $cap flame --wakers --folded
	same "offcpu-state-$cap" $cap flame --offcpu --state R,S --folded
	same_sh "sql-spans-$cap" $cap 'SELECT * FROM spans'
	same_sh "sql-sched-$cap" $cap 'SELECT * FROM sched'
	T=$(sqlq $cap 'SELECT tid FROM sched GROUP BY tid ORDER BY sum("end" - start) DESC, tid LIMIT 1')
	same "blame-$cap" $cap blame --tid "${T:-1}" --depth 3
done
# the scheduler events' time sort goes on the pool from 2^20 of them:
# kb has 1.25 million (a quarter of schedgen's events)
"$SCHEDGEN" -o "$W/kb.dtc" -n 5000000 || fail schedgen "schedgen kb failed"
nsched=$(sqlq kb "SELECT count(*) FROM events WHERE probe IN (SELECT id FROM probes WHERE name LIKE 'tracepoint:sched:%')")
[ "${nsched:-0}" -gt 1048576 ] && pass schedgen-kb-size ||
	fail schedgen-kb-size "${nsched:-no} scheduler events, not over 2^20"
same offcpu-folded-kb kb flame --offcpu --folded
TSAN_OPTIONS=halt_on_error=1 "$DTREPORT_TSAN" flame --offcpu --folded --threads 3 "$W/kb.dtc" \
	>"$W/tkb.out" 2>"$W/tkb.err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q ThreadSanitizer "$W/tkb.err" && [ -s "$W/tkb.out" ] &&
   cmp -s "$W/tkb.out" "$W/offcpu-folded-kb.1"; then
	pass tsan-offcpu-sort-kb
else
	fail tsan-offcpu-sort-kb "status $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$W/tkb.err" || head -c 200 "$W/tkb.err")"
fi
um=$("$R" latency --json "$W/m.dtc" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["unmatched_returns"], sum(g["unmatched"] for g in d["groups"]), sum(g["count"] for g in d["groups"]))')
read -r ur ue np <<<"$um"
if [ "${ur:-0}" -gt 0 ] && [ "${ue:-0}" -gt 0 ] && [ "${np:-0}" -gt 0 ]; then
	pass latency-unmatched-m
else
	fail latency-unmatched-m "unmatched returns, entries, pairs: ${um:-none}"
fi

# The pool is what runs them: --threads 4 starts worker threads (clone),
# one thread starts none.  The plain build: ASan's own threads would count.
RP=$B/bin/dtreport
threads_used() {	# threads_used NAME ARGS...
	local name=$1 c1 c4; shift
	c1=$(strace -f -qq -e trace=clone,clone3 -o "$W/st1" "$RP" "$@" --threads 1 "$W/k.dtc" \
		>/dev/null 2>"$W/st.err" && grep -c clone "$W/st1")
	c4=$(strace -f -qq -e trace=clone,clone3 -o "$W/st4" "$RP" "$@" --threads 4 "$W/k.dtc" \
		>/dev/null 2>>"$W/st.err" && grep -c clone "$W/st4")
	if [ "${c1:-x}" = 0 ] && [ "${c4:-0}" -ge 3 ]; then
		pass "$name"
	else
		fail "$name" "threads started: ${c1:-failed} at --threads 1, ${c4:-failed} at --threads 4 $(head -c 200 "$W/st.err")"
	fi
}
T=$(sqlq k 'SELECT tid FROM sched GROUP BY tid ORDER BY count(*) DESC, tid LIMIT 1')
threads_used threads-used-latency latency
threads_used threads-used-syscalls syscalls
threads_used threads-used-offcpu flame --offcpu --folded
threads_used threads-used-wakers flame --wakers --folded
threads_used threads-used-heatmap heatmap
threads_used threads-used-blame blame --tid "$T"
# and only the scan: the pairing and the replay are one walk each on the
# calling thread (split by thread they were bound by memory and cost more
# than one walk, doc/SCALE.md), so building a model starts exactly the
# threads of one scan, heatmap's.  The spans table is the pairing alone
# (latency and syscalls add the pool's key and sort parts after it).
clones4() {	# clones4 CMD...: the threads CMD starts
	strace -f -qq -e trace=clone,clone3 -o "$W/st4" "$@" >/dev/null 2>"$W/st.err" &&
		grep -c clone "$W/st4"
}
scan4=$(clones4 "$RP" heatmap --threads 4 "$W/k.dtc")
one_walk() {	# one_walk NAME CMD...
	local name=$1 c4; shift
	c4=$(clones4 "$@")
	if [ "${scan4:-0}" -ge 3 ] && [ "${c4:-x}" = "$scan4" ]; then
		pass "$name"
	else
		fail "$name" "threads started at 4: ${c4:-failed}, one scan's: ${scan4:-failed} $(head -c 200 "$W/st.err")"
	fi
}
one_walk threads-one-walk-replay-offcpu "$RP" flame --offcpu --folded --threads 4 "$W/k.dtc"
one_walk threads-one-walk-replay-wakers "$RP" flame --wakers --folded --threads 4 "$W/k.dtc"
one_walk threads-one-walk-pairing-sql-spans "$B/bin/dtsh" -c 'set threads 4' \
	-c 'SELECT count(*) FROM spans' "$W/k.dtc"
one_walk threads-one-walk-replay-sql-sched "$B/bin/dtsh" -c 'set threads 4' \
	-c 'SELECT count(*) FROM sched' "$W/k.dtc"
for tab in spans sched; do
	c1=$(strace -f -qq -e trace=clone,clone3 -o "$W/st1" "$B/bin/dtsh" -c 'set threads 1' \
		-c "SELECT count(*) FROM $tab" "$W/k.dtc" >/dev/null 2>"$W/st.err" && grep -c clone "$W/st1")
	c4=$(strace -f -qq -e trace=clone,clone3 -o "$W/st4" "$B/bin/dtsh" -c 'set threads 4' \
		-c "SELECT count(*) FROM $tab" "$W/k.dtc" >/dev/null 2>>"$W/st.err" && grep -c clone "$W/st4")
	if [ "${c1:-x}" = 0 ] && [ "${c4:-0}" -ge 3 ]; then
		pass "threads-used-sql-$tab"
	else
		fail "threads-used-sql-$tab" "threads started: ${c1:-failed} at 1, ${c4:-failed} at 4 $(head -c 200 "$W/st.err")"
	fi
done

# user-stack naming across an exec: the per-snapshot counting must hold
# its first-time rule across the workers' boundaries too
same flame-user-g g flame --folded --user

# The multi-threaded counts are the counts: stats' per-probe events sum to
# the capture's, and the folded samples add up to the timer probe's events.
python3 - "$W/stats-json-g.7" "$W/flame-folded-g.7" <<'EOF' && pass counts-add-up || fail counts-add-up "see above"
import json, sys
s = json.load(open(sys.argv[1]))
tot = sum(p["events"] for p in s["probes"])
if tot != s["events"]:
    print("# probes sum %d, events %d" % (tot, s["events"])); sys.exit(1)
timer = sum(p["events"] for p in s["probes"] if p["timer"])
fold = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
if fold != timer:
    print("# folded %d, timer events %d" % (fold, timer)); sys.exit(1)
EOF

# ----------------------------------------------------- bad --threads values
for v in 0 257 -1 abc 2x "" 99999999999999999999; do
	"$R" stats --threads "$v" "$W/l.dtc" >"$W/bad.out" 2>"$W/bad.err"
	rc=$?
	n=bad-threads-${v//[^a-z0-9]/_}
	if [ $rc -eq 2 ] && grep -q -- "--threads" "$W/bad.err" && [ ! -s "$W/bad.out" ] &&
	   ! san "$W/bad.err"; then
		pass "$n"
	else
		fail "$n" "status $rc, $(head -c 200 "$W/bad.err")"
	fi
done

# ------------------------------------ a damaged block: one message for any N
# a byte of the middle event block's columns flipped: opening still works
# (columns are checked when decoded), every scan must fail on it.
python3 - "$W/l.dtc" "$W/dmg.dtc" <<'EOF' || fail damage-setup "could not make the damaged copy"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, evnt = 32, []
while off + 32 <= len(b):
    typ, flags, xlen, clen = b[off:off + 4], *struct.unpack_from("<III", b, off + 4)
    if typ == b"EVNT":
        evnt.append((off, xlen, clen))
    off += 32 + xlen + clen
if len(evnt) < 3:
    sys.exit(1)
o, x, c = evnt[len(evnt) // 2]
b[o + 32 + x + c // 2] ^= 0x55
open(sys.argv[2], "wb").write(b)
EOF
# (plain stats reads the block summaries, not the columns: a filter makes
# it decode them; see damage-stats-summaries)
for rep in "stats --since 0" "flame --folded" "top --by stack"; do
	msgs=""
	ok=1
	for n in 1 2 7; do
		# shellcheck disable=SC2086
		"$R" $rep --threads $n "$W/dmg.dtc" >"$W/dmg.out" 2>"$W/dmg.err"
		rc=$?
		if [ $rc -ne 1 ] || ! grep -q "damaged EVNT chunk at offset" "$W/dmg.err" ||
		   san "$W/dmg.err" || [ "$(wc -l <"$W/dmg.err")" -ne 1 ]; then
			ok=0
			msgs="$msgs N=$n: status $rc $(head -c 200 "$W/dmg.err");"
		fi
		[ $n = 1 ] && cp "$W/dmg.err" "$W/dmg.err1"
		cmp -s "$W/dmg.err" "$W/dmg.err1" || { ok=0; msgs="$msgs N=$n: another message;"; }
	done
	name=damage-${rep%% *}
	if [ $ok = 1 ]; then pass "$name"; else fail "$name" "$msgs"; fi
done
# sql's grouped scan on the pool: the same one message for any N
msgs="" ok=1
for n in 1 2 7; do
	"$R" sql --csv --threads $n "$W/dmg.dtc" 'SELECT comm, cpu, count(*) FROM events GROUP BY 1, 2' \
		>"$W/dmg.out" 2>"$W/dmg.err"
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "damaged EVNT chunk at offset" "$W/dmg.err" || san "$W/dmg.err"; then
		ok=0
		msgs="$msgs N=$n: status $rc $(head -c 200 "$W/dmg.err");"
	fi
	[ $n = 1 ] && cp "$W/dmg.err" "$W/dmg.err1"
	cmp -s "$W/dmg.err" "$W/dmg.err1" || { ok=0; msgs="$msgs N=$n: another message;"; }
done
if [ $ok = 1 ]; then pass damage-sql; else fail damage-sql "$msgs"; fi
"$R" stats --json "$W/dmg.dtc" >"$W/dmg.sj" 2>"$W/dmg.err"
"$R" stats --json "$W/l.dtc" >"$W/l.sj" 2>/dev/null
if python3 "$(dirname "$0")/samecounts.py" --intact "$W/dmg.sj" "$W/l.sj"; then
	pass damage-stats-summaries
else
	fail damage-stats-summaries "stats of the summaries differ: $(head -c 200 "$W/dmg.err")"
fi

# --------------------- Parquet export: blocks decoded ahead, same files
bad=""
for n in 1 2 7; do
	rm -rf "$W/pq$n"
	"$R" export --format parquet --threads $n -o "$W/pq$n" "$W/s.dtc" >/dev/null 2>"$W/pq$n.err" ||
		bad="$bad N=$n: status $? $(head -c 200 "$W/pq$n.err");"
	san "$W/pq$n.err" && bad="$bad N=$n: sanitizer report;"
done
if [ -z "$bad" ] && [ -s "$W/pq1/events/host=synth12/capture=s/part-0.parquet" ] &&
   diff -r "$W/pq1" "$W/pq2" >/dev/null && diff -r "$W/pq1" "$W/pq7" >/dev/null; then
	pass export-parquet-threads
else
	fail export-parquet-threads "$bad $(diff -rq "$W/pq1" "$W/pq7" 2>&1 | head -3)"
fi
ok=1 msgs=""
for n in 1 2 7; do
	rm -rf "$W/pqd$n"
	"$R" export --format parquet --threads $n -o "$W/pqd$n" "$W/dmg.dtc" >/dev/null 2>"$W/pqd$n.err"
	rc=$?
	if [ $rc -eq 0 ] || ! grep -q "damaged EVNT chunk at offset" "$W/pqd$n.err" ||
	   san "$W/pqd$n.err" || [ -e "$W/pqd$n/events" ]; then
		ok=0 msgs="$msgs N=$n: status $rc $(head -c 200 "$W/pqd$n.err");"
	fi
done
if [ $ok = 1 ]; then pass export-parquet-damage; else fail export-parquet-damage "$msgs"; fi
"$R" export --format parquet --threads 0 -o "$W/pqbad" "$W/s.dtc" >/dev/null 2>"$W/pqbad.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--threads" "$W/pqbad.err" && [ ! -e "$W/pqbad" ] &&
	pass export-bad-threads || fail export-bad-threads "status $rc, $(head -c 200 "$W/pqbad.err")"

# ------------------------------------------------------- block summaries
for cap in g s l; do
	"$BSUMCHECK" "bsum-rows-$cap" "$W/$cap.dtc"
done
# the lines that do not depend on how the file was written
body() { grep -v '^capture \|^written by ' "$1" | sed 's/"file":"[^"]*"//'; }
for mode in copy strip stale; do
	"$BSUMEDIT" $mode "$W/s.dtc" "$W/bs-$mode.dtc" || fail "bsum-$mode" "bsumedit $mode failed"
	for rep in "stats --all" "stats --json" "flame --folded" "top --by pid"; do
		n=bsum-$mode-${rep// /_}
		# shellcheck disable=SC2086
		"$R" $rep "$W/bs-$mode.dtc" >"$W/$n.out" 2>"$W/$n.err"
		rc=$?
		# shellcheck disable=SC2086
		"$R" $rep "$W/s.dtc" >"$W/$n.ref" 2>/dev/null
		if [ $rc -eq 0 ] && [ -s "$W/$n.ref" ] && cmp -s <(body "$W/$n.out") <(body "$W/$n.ref") &&
		   ! san "$W/$n.err"; then
			pass "$n"
		else
			fail "$n" "status $rc; $(diff <(body "$W/$n.ref") <(body "$W/$n.out") | head -4) $(head -c 200 "$W/$n.err")"
		fi
	done
done
# SQL's scans filtered by thread read a block's own contexts first (not its
# summary) to skip it: a capture without summaries (stripped, as older
# writers wrote) gives the rows of the capture as written and of SQLite's
# plain plan, for the rarest thread and two ids no thread has
ttid=$("$R" sql --csv "$W/s.dtc" 'SELECT tid FROM events WHERE tid != 0 GROUP BY tid ORDER BY count(*), tid LIMIT 1' 2>/dev/null | tail -1 | tr -d '\r')
tq="SELECT tid, cpu, count(*), sum(cpu) FROM events WHERE tid IN (${ttid:-0}, 1, 12) GROUP BY 1, 2"
"$R" sql --csv --threads 2 "$W/bs-strip.dtc" "$tq" >"$W/sqltid.out" 2>"$W/sqltid.err"
rc=$?
"$R" sql --csv "$W/s.dtc" "$tq" >"$W/sqltid.ref" 2>/dev/null
DT_SQL_NO_GROUPED=1 "$R" sql --csv "$W/bs-strip.dtc" "$tq" >"$W/sqltid.plain" 2>/dev/null
if [ $rc -eq 0 ] && [ -n "$ttid" ] && [ "$(wc -l <"$W/sqltid.ref")" -gt 1 ] &&
   cmp -s "$W/sqltid.out" "$W/sqltid.ref" && cmp -s "$W/sqltid.out" "$W/sqltid.plain" &&
   ! san "$W/sqltid.err"; then
	pass bsum-strip-sql-tid
else
	fail bsum-strip-sql-tid "status $rc, tid '$ttid': $(diff "$W/sqltid.ref" "$W/sqltid.out" | head -3) $(diff "$W/sqltid.plain" "$W/sqltid.out" | head -3) $(head -c 200 "$W/sqltid.err")"
fi
"$BSUMCHECK" bsum-stripped-has-none "$W/bs-strip.dtc" none
"$R" stats --json "$W/s.dtc" >"$W/bs-ref.sj" 2>/dev/null
for mode in lie badid; do
	"$BSUMEDIT" $mode "$W/s.dtc" "$W/bs-$mode.dtc" || fail "bsum-$mode" "bsumedit $mode failed"
	"$R" stats "$W/bs-$mode.dtc" >"$W/bs-$mode.out" 2>"$W/bs-$mode.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "damaged BSUM chunk at offset [0-9]" "$W/bs-$mode.err" &&
	   [ ! -s "$W/bs-$mode.out" ] && ! san "$W/bs-$mode.err"; then
		pass "bsum-$mode-is-damage"
	else
		fail "bsum-$mode-is-damage" "status $rc: $(head -c 200 "$W/bs-$mode.err")"
	fi
	# salvage skips it: the counts come from the rows, and are the true ones
	"$R" stats --salvage --partial --json "$W/bs-$mode.dtc" >"$W/bs-$mode.sj" 2>"$W/bs-$mode.serr"
	if python3 "$(dirname "$0")/samecounts.py" "$W/bs-$mode.sj" "$W/bs-ref.sj"; then
		pass "bsum-$mode-salvaged"
	else
		fail "bsum-$mode-salvaged" "salvaged stats differ from the true ones: $(head -c 200 "$W/bs-$mode.serr")"
	fi
done

# --------------------------------------------------------- dtsh set threads
"$DTSH" -c 'set threads 1' -c stats "$W/g.dtc" >"$W/sh1.out" 2>"$W/sh1.err"
rc1=$?
"$DTSH" -c 'set threads 7' -c stats -c set "$W/g.dtc" >"$W/sh7.out" 2>"$W/sh7.err"
rc7=$?
if [ $rc1 -eq 0 ] && [ $rc7 -eq 0 ] && grep -q "^events " "$W/sh1.out" &&
   cmp -s "$W/sh1.out" <(sed '$d' "$W/sh7.out") && [ "$(tail -1 "$W/sh7.out")" = "threads 7" ] &&
   ! san "$W/sh1.err" "$W/sh7.err"; then
	pass dtsh-set-threads
else
	fail dtsh-set-threads "status $rc1/$rc7; $(diff "$W/sh1.out" "$W/sh7.out" | head -5) $(head -c 200 "$W/sh7.err")"
fi
"$DTSH" -c 'set threads lots' "$W/g.dtc" >"$W/sh.out" 2>"$W/sh.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not a number of threads" "$W/sh.err" && ! san "$W/sh.err" &&
	pass dtsh-set-threads-bad || fail dtsh-set-threads-bad "status $rc, $(head -c 200 "$W/sh.err")"
# set threads reaches sql's grouped statements: the same rows for 1 and 7
SQ='SELECT pid, cpu, count(*), median(tid) FROM events GROUP BY 1, 2; SELECT (ts - 0) / 1000000 AS b, count(*) FROM events GROUP BY b'
"$DTSH" -c 'set threads 1' -c "sql --csv $SQ" "$W/g.dtc" >"$W/shq1.out" 2>"$W/shq1.err"
rc1=$?
"$DTSH" -c 'set threads 7' -c "sql --csv $SQ" "$W/g.dtc" >"$W/shq7.out" 2>"$W/shq7.err"
rc7=$?
if [ $rc1 -eq 0 ] && [ $rc7 -eq 0 ] && [ "$(wc -l <"$W/shq1.out")" -gt 20 ] &&
   cmp -s "$W/shq1.out" "$W/shq7.out" && ! san "$W/shq1.err" "$W/shq7.err"; then
	pass dtsh-set-threads-sql
else
	fail dtsh-set-threads-sql "status $rc1/$rc7; $(diff "$W/shq1.out" "$W/shq7.out" | head -5) $(head -c 200 "$W/shq1.err" "$W/shq7.err")"
fi

# ------------------------------------- the time analyses' pools, TSan
# dtreport built with TSan, 4 workers: the models' collections and merges
# (what the SQL tables are made of too), the heatmap's cells, blame's
# samples.
tsan_same() {	# tsan_same NAME ARGS...: 4 workers under TSan, the bytes of one thread
	local name=$1 cap rc; shift
	for cap in k s; do
		TSAN_OPTIONS=halt_on_error=1 "${DTREPORT_TSAN:?}" "$@" --threads 4 "$W/$cap.dtc" \
			>"$W/ts.out" 2>"$W/ts.err"
		rc=$?
		"$R" "$@" --threads 1 "$W/$cap.dtc" >"$W/ts.ref" 2>/dev/null
		if [ $rc -eq 0 ] && ! grep -q ThreadSanitizer "$W/ts.err" && [ -s "$W/ts.out" ] &&
		   cmp -s "$W/ts.out" "$W/ts.ref"; then
			pass "$name-$cap"
		else
			fail "$name-$cap" "status $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$W/ts.err" || head -c 200 "$W/ts.err")"
		fi
	done
}
tsan_same tsan-latency latency
tsan_same tsan-latency-filtered latency --cpu 0,2
tsan_same tsan-syscalls syscalls --json
tsan_same tsan-heatmap heatmap
tsan_same tsan-heatmap-filtered heatmap --cpu 0,1
# k only: s has no wakeups, and blame needs a thread of the capture
for cap in k; do
	T=$(sqlq k 'SELECT tid FROM sched GROUP BY tid ORDER BY count(*) DESC, tid LIMIT 1')
	TSAN_OPTIONS=halt_on_error=1 "$DTREPORT_TSAN" blame --tid "$T" --threads 4 "$W/k.dtc" \
		>"$W/ts.out" 2>"$W/ts.err"
	rc=$?
	"$R" blame --tid "$T" --threads 1 "$W/k.dtc" >"$W/ts.ref" 2>/dev/null
	TSAN_OPTIONS=halt_on_error=1 "$DTREPORT_TSAN" flame --wakers --folded --threads 4 \
		"$W/k.dtc" >"$W/tw.out" 2>"$W/tw.err"
	rc2=$?
	"$R" flame --wakers --folded --threads 1 "$W/k.dtc" >"$W/tw.ref" 2>/dev/null
	TSAN_OPTIONS=halt_on_error=1 "$DTREPORT_TSAN" flame --offcpu --folded --threads 4 \
		"$W/k.dtc" >"$W/to.out" 2>"$W/to.err"
	rc3=$?
	"$R" flame --offcpu --folded --threads 1 "$W/k.dtc" >"$W/to.ref" 2>/dev/null
	TSAN_OPTIONS=halt_on_error=1 "$DTREPORT_TSAN" flame --offcpu --folded --threads 4 \
		"$W/kl.dtc" >"$W/tl.out" 2>"$W/tl.err" || rc3=$?
	"$R" flame --offcpu --folded --threads 1 "$W/kl.dtc" >"$W/tl.ref" 2>/dev/null
	if [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] &&
	   ! grep -q ThreadSanitizer "$W/ts.err" "$W/tw.err" "$W/to.err" "$W/tl.err" &&
	   [ -s "$W/to.out" ] && cmp -s "$W/to.out" "$W/to.ref" &&
	   [ -s "$W/tl.out" ] && cmp -s "$W/tl.out" "$W/tl.ref" &&
	   [ -s "$W/ts.out" ] && [ -s "$W/tw.out" ] && cmp -s "$W/ts.out" "$W/ts.ref" &&
	   cmp -s "$W/tw.out" "$W/tw.ref"; then
		pass tsan-blame-wakers-offcpu-k
	else
		fail tsan-blame-wakers-offcpu-k "status $rc/$rc2/$rc3: $(grep -h -m3 -A3 'WARNING: ThreadSanitizer' "$W/ts.err" "$W/tw.err" "$W/to.err" "$W/tl.err" || head -c 200 "$W/ts.err")"
	fi
done

# the pairing and the replay after a collection by 4 workers under TSan,
# on the captures that take every path (out of order, big tids, lost
# switches)
for cap in m km; do
	bad=""
	for rep in "latency --json" "syscalls --json" "flame --offcpu --folded" "flame --wakers --folded"; do
		# shellcheck disable=SC2086
		TSAN_OPTIONS=halt_on_error=1 "$DTREPORT_TSAN" $rep --threads 4 "$W/$cap.dtc" \
			>"$W/ts.out" 2>"$W/ts.err"
		rc=$?
		# shellcheck disable=SC2086
		"$R" $rep --threads 1 "$W/$cap.dtc" >"$W/ts.ref" 2>/dev/null
		if [ $rc -ne 0 ] || grep -q ThreadSanitizer "$W/ts.err" || [ ! -s "$W/ts.out" ] ||
		   ! cmp -s "$W/ts.out" "$W/ts.ref"; then
			bad="$bad $rep: status $rc $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$W/ts.err" || head -c 200 "$W/ts.err");"
		fi
	done
	if [ -z "$bad" ]; then pass "tsan-pair-replay-$cap"; else fail "tsan-pair-replay-$cap" "$bad"; fi
done

# ------------------------------------------------------------ the pool, TSan
for n in 1 2 7; do
	TSAN_OPTIONS=halt_on_error=1 "$POOLTSAN" "$W/g.dtc" $n >"$W/tsan$n.out" 2>"$W/tsan$n.err"
	rc=$?
	cat "$W/tsan$n.out"
	if [ $rc -ne 0 ] || grep -q ThreadSanitizer "$W/tsan$n.err"; then
		fail "tsan-$n" "status $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$W/tsan$n.err")"
	fi
done
exit 0
