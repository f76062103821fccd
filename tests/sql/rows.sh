# tests/sql/rows.sh - statements that are not grouped, read ahead on the
# pool (issue 26): the events cursor's blocks decoded and its pushed-down
# constraints applied by scan_pool.c's helpers (dtsp_ahead_new_rows).
# Sourced by run.sh (its D, G, B, T, q, check, pass, fail, san).
#
# Each shape must give, with --threads 1, 2 and 7, the bytes of the same
# statement on one thread (DT_SQL_NO_READAHEAD=1) and the rows of its twin
# whose constraints are hidden from the table (a unary + makes a term no
# constraint of it: sqlite's plain plan, every row filtered by sqlite).

RC=$T/rows.dtc
if ! "$G" -o "$RC" -n 400000 -s 11 --syscalls --pids 6 --block 2048 >"$T/rows.gen" 2>&1; then
	fail "rows_setup" "dtgen: $(head -c 300 "$T/rows.gen")"
	return 0 2>/dev/null || exit 0
fi
rq() { DT_SQL_NO_READAHEAD=1 q "$RC" "$1"; }
R0=$(rq 'SELECT min(ts) FROM events') R1=$(rq 'SELECT max(ts) FROM events')
RA=$((R0 + (R1 - R0) * 30 / 100)) RB=$((R0 + (R1 - R0) * 60 / 100))
RP=$(rq 'SELECT pid FROM events WHERE pid != 0 LIMIT 1 OFFSET 5000')
RT1=$(rq 'SELECT tid FROM events WHERE tid != 0 LIMIT 1 OFFSET 7000')
RT2=$(rq "SELECT tid FROM events WHERE tid NOT IN (0, $RT1) LIMIT 1 OFFSET 3000")
RCM=$(rq "SELECT substr(comm, 1, 2) FROM events WHERE comm IS NOT NULL AND pid != 0 LIMIT 1 OFFSET 100")

# statement|its twin with the constraints hidden
ROWSQ=(
"SELECT ts, tid, comm FROM events WHERE probe_name GLOB 'syscall*' AND ts BETWEEN $RA AND $RB ORDER BY ts LIMIT 20|SELECT ts, tid, comm FROM events WHERE +probe_name GLOB 'syscall*' AND +ts BETWEEN $RA AND $RB ORDER BY ts LIMIT 20"
"SELECT * FROM events WHERE pid = $RP|SELECT * FROM events WHERE +pid = $RP"
"SELECT rowid, ts, cpu, pid, tid, probe, kstack FROM events WHERE tid IN ($RT1, $RT2) AND kstack > 5|SELECT rowid, ts, cpu, pid, tid, probe, kstack FROM events WHERE +tid IN ($RT1, $RT2) AND +kstack > 5"
"SELECT ts, comm, probe_name, ctx FROM events WHERE comm LIKE '$RCM%' AND ts >= $RA LIMIT 700|SELECT ts, comm, probe_name, ctx FROM events WHERE +comm LIKE '$RCM%' AND +ts >= $RA LIMIT 700"
"SELECT e.ts, e.tid, f.name FROM events e JOIN frames f ON f.stack_id = e.kstack AND f.depth = 0 WHERE e.pid = $RP AND e.ts < $RB ORDER BY 1, 2, 3|SELECT e.ts, e.tid, f.name FROM events e JOIN frames f ON f.stack_id = +e.kstack AND f.depth = 0 WHERE +e.pid = $RP AND +e.ts < $RB ORDER BY 1, 2, 3"
"SELECT ts, tid, ts - lag(ts) OVER (PARTITION BY tid ORDER BY ts) FROM events WHERE probe_name GLOB '*sched_switch' AND ustack IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9) LIMIT 400|SELECT ts, tid, ts - lag(ts) OVER (PARTITION BY tid ORDER BY ts) FROM events WHERE +probe_name GLOB '*sched_switch' AND +ustack IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9) LIMIT 400"
"SELECT ts, pid, comm, flags FROM events WHERE pid BETWEEN $RP AND $((RP + 3)) AND flags >= 0 ORDER BY comm, ts LIMIT 900|SELECT ts, pid, comm, flags FROM events WHERE +pid BETWEEN $RP AND $((RP + 3)) AND +flags >= 0 ORDER BY comm, ts LIMIT 900"
"SELECT rowid, ts, arg0, retval FROM events WHERE probe_name IN ('syscall:read:return', 'syscall:write:return', 'nosuch') AND cpu = 1 LIMIT 500 OFFSET 20|SELECT rowid, ts, arg0, retval FROM events WHERE +probe_name IN ('syscall:read:return', 'syscall:write:return', 'nosuch') AND +cpu = 1 LIMIT 500 OFFSET 20"
"SELECT ts FROM events WHERE tid = 4000000000|SELECT ts FROM events WHERE +tid = 4000000000"
"SELECT ts, probe FROM events WHERE ts > $RB LIMIT 3000|SELECT ts, probe FROM events WHERE +ts > $RB LIMIT 3000"
)
rows_script="" hid_script=""
for s in "${ROWSQ[@]}"; do
	rows_script+="${s%%|*};"$'\n'
	hid_script+="${s#*|};"$'\n'
done
DT_SQL_NO_READAHEAD=1 "$D" sql --csv "$RC" "$rows_script" >"$T/rows.one" 2>"$T/rows.one.err"
r1=$?
DT_SQL_NO_READAHEAD=1 "$D" sql --csv "$RC" "$hid_script" >"$T/rows.hid" 2>"$T/rows.hid.err"
r2=$?
# every shape answers something but the one that matches nothing
nempty=$(awk 'BEGIN { RS = ""; FS = "\n" } NF < 2 { n++ } END { print n + 0 }' "$T/rows.one")
if [ $r1 != 0 ] || [ $r2 != 0 ] || [ "$nempty" != 1 ]; then
	fail "rows_plain_plan" "rc $r1/$r2, $nempty empty results: $(head -c 300 "$T/rows.one.err" "$T/rows.hid.err")"
elif ! cmp -s "$T/rows.one" "$T/rows.hid"; then
	fail "rows_plain_plan" "pushed down and hidden differ: $(diff "$T/rows.one" "$T/rows.hid" | head -4 | tr '\n' ' ')"
else
	pass "rows_plain_plan"
fi
for n in 1 2 7; do
	DT_SQL_DEBUG=1 "$D" sql --csv --threads $n "$RC" "$rows_script" >"$T/rows.$n" 2>"$T/rows.$n.err"
	rc=$?
	ahead=$(grep -c 'events read ahead' "$T/rows.$n.err")
	if [ $rc != 0 ] || san "$T/rows.$n.err"; then
		fail "rows_threads_$n" "rc $rc: $(grep -v 'events read ahead' "$T/rows.$n.err" | head -c 300)"
	elif ! cmp -s "$T/rows.$n" "$T/rows.one"; then
		fail "rows_threads_$n" "not the one-thread rows: $(diff "$T/rows.$n" "$T/rows.one" | head -4 | tr '\n' ' ')"
	elif [ "$ahead" -lt ${#ROWSQ[@]} ]; then
		# each shape reads many blocks: each is read ahead on the pool
		# (with one thread, by this thread a block at a time)
		fail "rows_threads_$n" "only $ahead of ${#ROWSQ[@]} statements read ahead"
	else
		pass "rows_threads_$n"
	fi
done

# LIMIT: once sqlite stops asking, the helpers stop; they decode at most the
# blocks in flight (two per helper, a helper per thread) beyond the ones given
DT_SQL_DEBUG=1 "$D" sql --csv --threads 3 "$RC" 'SELECT ts, comm FROM events LIMIT 10' >"$T/rl.out" 2>"$T/rl.err"
rc=$?
got=$(sed -n 's/.*events read ahead: \([0-9]*\) of \([0-9]*\) blocks decoded.*/\1 \2/p' "$T/rl.err")
dec=${got% *} tot=${got#* }
if [ $rc != 0 ] || [ -z "$got" ] || [ "$(wc -l <"$T/rl.out")" != 11 ]; then
	fail "rows_limit_stops_early" "rc $rc, '$got': $(head -c 200 "$T/rl.err")"
elif [ "$tot" -lt 100 ] || [ "$dec" -gt 8 ]; then
	fail "rows_limit_stops_early" "decoded $dec of $tot blocks for 10 rows"
else
	pass "rows_limit_stops_early"
fi
# a selective filter's LIMIT: the rows are found early in the file, the rest
# is not decoded
DT_SQL_DEBUG=1 "$D" sql --csv --threads 2 "$RC" "SELECT ts FROM events WHERE tid = $RT1 LIMIT 5" >"$T/rl2.out" 2>"$T/rl2.err"
got=$(sed -n 's/.*events read ahead: \([0-9]*\) of \([0-9]*\) blocks decoded.*/\1 \2/p' "$T/rl2.err")
first=$(rq "SELECT (min(rowid) - 1) / 2048 FROM (SELECT rowid FROM events WHERE tid = $RT1 LIMIT 5 OFFSET 4)")
dec=${got% *} tot=${got#* }
if [ -z "$got" ] || [ "$(wc -l <"$T/rl2.out")" != 6 ] || [ -z "$first" ]; then
	fail "rows_limit_filter_stops_early" "'$got' first $first: $(head -c 200 "$T/rl2.err")"
elif [ "$dec" -gt $((first + 1 + 4 + 1)) ] || [ "$first" -gt $((tot / 2)) ]; then
	fail "rows_limit_filter_stops_early" "decoded $dec of $tot blocks, the fifth row in block $first"
else
	pass "rows_limit_filter_stops_early"
fi

# ORDER BY ts alone, either way, is streamed in ts order (the blocks'
# ts ranges say when a held row can go): the bytes of the whole sort of
# its twin (ORDER BY +ts, sqlite's sorter, stable: ties in rowid order),
# at each thread count and on one thread.  On this capture (blocks in
# time order) and on one written as a recorder drains per-CPU rings
# (--batch: blocks overlap in time, rows out of order) with a coarse
# clock (--ts-step: ties across blocks, which both ways must give in
# rowid order).
RCB=$T/rows-batch.dtc
"$G" -o "$RCB" -n 300000 -s 12 --syscalls --pids 6 --block 2048 --batch 3000 --ts-step 10000000 \
	>"$T/rcb.gen" 2>&1 || fail "rows_order_ts_setup" "dtgen --batch: $(head -c 300 "$T/rcb.gen")"
OTQ=""
for dir in "" " DESC"; do
	OTQ+="SELECT rowid, ts, tid, comm, probe_name FROM events WHERE probe_name GLOB 'syscall:read:*' ORDER BY ts$dir LIMIT 1000;
SELECT rowid, ts, cpu FROM events ORDER BY ts$dir LIMIT 5000;
SELECT rowid, * FROM events WHERE pid BETWEEN $RP AND $((RP + 2)) AND ts >= $RA ORDER BY ts$dir;
SELECT ts, arg0 FROM events WHERE tid IN ($RT1, $RT2) ORDER BY ts$dir LIMIT 300 OFFSET 50;
SELECT rowid, ts, pid FROM events WHERE cpu = 1 ORDER BY ts$dir;"$'\n'
done
for cap in rows batch; do
	f=$RC
	[ $cap = batch ] && f=$RCB
	DT_SQL_NO_READAHEAD=1 "$D" sql --csv "$f" "${OTQ//ORDER BY ts/ORDER BY +ts}" >"$T/ot.plain" 2>"$T/ot.plain.err"
	for n in 0 1 2 7; do
		name=rows_order_ts_stream_${n}${cap#rows}
		if [ $n = 0 ]; then
			DT_SQL_NO_READAHEAD=1 "$D" sql --csv "$f" "$OTQ" >"$T/ot.$n" 2>"$T/ot.$n.err"
		else
			"$D" sql --csv --threads $n "$f" "$OTQ" >"$T/ot.$n" 2>"$T/ot.$n.err"
		fi
		rc=$?
		if [ $rc != 0 ] || san "$T/ot.$n.err"; then
			fail "$name" "rc $rc: $(head -c 300 "$T/ot.$n.err")"
		elif [ "$(wc -l <"$T/ot.plain")" -lt 12000 ] || ! cmp -s "$T/ot.$n" "$T/ot.plain"; then
			fail "$name" "not the plain plan's rows: $(diff "$T/ot.$n" "$T/ot.plain" | head -4 | tr '\n' ' ')"
		else
			pass "$name"
		fi
	done
done
# the coarse clock gave ties across blocks, or the batch test proves less
ties=$(DT_SQL_NO_READAHEAD=1 q "$RCB" 'SELECT count(*) FROM (SELECT ts FROM events GROUP BY ts HAVING count(DISTINCT (rowid - 1) / 2048) > 1)')
if [ "${ties:-0}" -lt 100 ]; then
	fail "rows_order_ts_ties_across_blocks" "only '$ties' timestamps are in two blocks"
else
	pass "rows_order_ts_ties_across_blocks"
fi
# ... and its LIMIT stops the read, either way: the first rows in ts
# order are in the first (last) blocks of this capture
for dir in "" " DESC"; do
	name=rows_order_ts_limit_stops_early${dir:+_desc}
	DT_SQL_DEBUG=1 "$D" sql --csv --threads 2 "$RC" "SELECT ts, comm FROM events ORDER BY ts$dir LIMIT 10" >"$T/otl.out" 2>"$T/otl.err"
	rc=$?
	got=$(sed -n 's/.*events read ahead: \([0-9]*\) of \([0-9]*\) blocks decoded.*/\1 \2/p' "$T/otl.err")
	dec=${got% *} tot=${got#* }
	if [ $rc != 0 ] || [ -z "$got" ] || [ "$(wc -l <"$T/otl.out")" != 11 ]; then
		fail "$name" "rc $rc, '$got': $(head -c 200 "$T/otl.err")"
	elif [ "$tot" -lt 100 ] || [ "$dec" -gt 8 ]; then
		fail "$name" "decoded $dec of $tot blocks for 10 rows"
	else
		pass "$name"
	fi
done
# The rows a stream holds stay within what the planner was told
# (stream_peak, from the block index), on blocks that overlap: more than
# one block's rows held, never more than the bound.
for dir in "" " DESC"; do
	name=rows_order_ts_held_within_bound${dir:+_desc}
	DT_SQL_DEBUG=1 "$D" sql --csv "$RCB" "SELECT rowid, ts FROM events ORDER BY ts$dir" >/dev/null 2>"$T/oth.err"
	got=$(sed -n 's/.*streamed: at most \([0-9]*\) rows held (bound \([0-9]*\)).*/\1 \2/p' "$T/oth.err")
	h=${got% *} bd=${got#* }
	if [ -z "$got" ]; then
		fail "$name" "no stream: $(head -c 200 "$T/oth.err")"
	elif [ "$h" -le 2048 ] || [ "$h" -gt "$bd" ]; then
		fail "$name" "held $h rows, bound $bd"
	else
		pass "$name"
	fi
done
# Which captures stream: one in time order whatever its size (sqlite
# would sort every row), one whose overlap would hold more than the
# materialization allows is left to sqlite's sorter (with the rows of the
# plain plan).  DT_SQL_MAT_MAX makes these captures the large ones.
WB=$T/rows-wide.dtc
"$G" -o "$WB" -n 200000 -s 13 --block 2048 --batch 20000 >"$T/wb.gen" 2>&1 ||
	fail "rows_order_ts_setup" "dtgen --batch: $(head -c 300 "$T/wb.gen")"
p1=$(DT_SQL_MAT_MAX=600000 "$D" sql "$RC" "EXPLAIN QUERY PLAN SELECT ts FROM events ORDER BY ts DESC" 2>&1)
p2=$(DT_SQL_MAT_MAX=600000 "$D" sql "$WB" "EXPLAIN QUERY PLAN SELECT ts FROM events ORDER BY ts DESC" 2>&1)
DT_SQL_MAT_MAX=600000 "$D" sql --csv "$WB" "SELECT rowid, ts FROM events ORDER BY ts DESC" >"$T/wb.1" 2>&1
DT_SQL_NO_READAHEAD=1 "$D" sql --csv "$WB" "SELECT rowid, ts FROM events ORDER BY +ts DESC" >"$T/wb.2" 2>&1
if [[ $p1 != *"|a-"* || $p1 == *"TEMP B-TREE"* ]]; then
	fail "rows_order_ts_planned" "in-order capture not streamed: $p1"
elif [[ $p2 != *"TEMP B-TREE"* ]]; then
	fail "rows_order_ts_planned" "overlapping capture streamed past the limit: $p2"
elif [ "$(wc -l <"$T/wb.1")" != 200001 ] || ! cmp -s "$T/wb.1" "$T/wb.2"; then
	fail "rows_order_ts_planned" "sorter's rows differ: $(head -c 200 "$T/wb.1")"
else
	pass "rows_order_ts_planned"
fi

# Ctrl-C: a filter that passes no row never returns to sqlite's loop (whose
# progress handler sees the flag) until the scan ends; the cursor looks at
# the flag before each block, read ahead or not
for ra in 0 1; do
	DT_SQL_NO_READAHEAD=$ra "$GR" --cancelled "$RC" -- "SELECT ts FROM events WHERE tid = 4000000000" \
		"SELECT ts, comm FROM events WHERE pid >= 0 AND tid = 4000000000 ORDER BY comm" >"$T/rcan.out" 2>"$T/rcan.err"
	bad=$(awk -F'\t' '$1 != "interrupted" { print $1 ": " $2 }' "$T/rcan.out" | head -2)
	if [ "$(wc -l <"$T/rcan.out")" != 2 ] || [ -n "$bad" ]; then
		fail "rows_cancelled_interrupts_$ra" "${bad:-$(head -c 200 "$T/rcan.err")}"
	else
		pass "rows_cancelled_interrupts_$ra"
	fi
done

# a damaged block: the read-ahead says what the row-by-row scan says, when
# the statement reaches it (a LIMIT met before it answers, as before)
cp "$RC" "$T/rbad.dtc"
python3 -c 'import os, sys
p = sys.argv[1]; n = os.path.getsize(p)
with open(p, "r+b") as f:
    f.seek(n // 2); b = f.read(64); f.seek(n // 2); f.write(bytes(x ^ 0x5a for x in b))' "$T/rbad.dtc"
for ra in 1 0; do
	DT_SQL_NO_READAHEAD=$ra "$D" sql --csv --threads 2 "$T/rbad.dtc" "SELECT ts, tid FROM events WHERE tid > 5" \
		>"$T/rbad.$ra.out" 2>"$T/rbad.$ra.err"
	echo "rc $?" >>"$T/rbad.$ra.err"
	DT_SQL_NO_READAHEAD=$ra "$D" sql --csv --threads 2 "$T/rbad.dtc" "SELECT ts, tid FROM events WHERE tid > 5 LIMIT 3" \
		>"$T/rbadl.$ra.out" 2>"$T/rbadl.$ra.err"
	echo "rc $?" >>"$T/rbadl.$ra.err"
done
if ! grep -q "damaged EVNT chunk" "$T/rbad.0.err" || ! grep -q "^rc 1$" "$T/rbad.0.err" || san "$T/rbad.0.err"; then
	fail "rows_damaged_block" "$(head -c 300 "$T/rbad.0.err")"
elif ! cmp -s "$T/rbad.0.err" "$T/rbad.1.err"; then
	fail "rows_damaged_block" "read ahead: $(head -c 200 "$T/rbad.0.err"); row by row: $(head -c 200 "$T/rbad.1.err")"
elif ! grep -q "^rc 0$" "$T/rbadl.0.err" || [ "$(wc -l <"$T/rbadl.0.out")" != 4 ] ||
     ! cmp -s "$T/rbadl.0.out" "$T/rbadl.1.out"; then
	fail "rows_damaged_block" "LIMIT before the damage: $(head -c 200 "$T/rbadl.0.err")"
else
	pass "rows_damaged_block"
fi

# A filter on a per-context column reads a block's contexts first and its
# rows only when a context passes (scan_pool.c ahead_two_step).  mksql
# tidblocks (run.sh's $TB): thread 5000 + k lives in block k alone, 1000
# events a block, 20 blocks.  Shapes with the first, the last, a middle
# thread, two neighbours, ranges, a thread of no block, with row ids, ts
# and cpu tests and ORDER BY; each against the cursor on one thread
# (DT_SQL_NO_READAHEAD=1) on 1, 2 and 7 threads and on the one-read path
# (DT_SQL_ONE_READ=1).  A block skipped wrongly, or a row given another's
# values, changes the rows.
if [ -s "${TB:-}" ]; then
	TBR=(
		'SELECT rowid, ts, cpu, pid, tid, comm, probe_name FROM events WHERE tid = 5000'
		'SELECT rowid, ts, tid, kstack FROM events WHERE tid = 5019 ORDER BY ts DESC'
		'SELECT rowid, ts, cpu, tid, ustack, flags FROM events WHERE tid = 5007'
		'SELECT ts FROM events WHERE tid = 5020'
		'SELECT rowid, tid, cpu FROM events WHERE tid IN (5007, 5008) AND cpu = 1'
		'SELECT ts, tid, comm, probe_name FROM events WHERE tid BETWEEN 5011 AND 5012 AND probe_name GLOB '"'"'syscall:read:*'"'"' ORDER BY ts LIMIT 30'
		'SELECT rowid, pid, tid FROM events WHERE tid >= 5018 OR tid < 1001'
		'SELECT rowid, ts FROM events WHERE tid = 5003 AND ts > (SELECT min(ts) + 1000 FROM events WHERE tid = 5003)'
		'SELECT rowid, tid, comm FROM events WHERE comm = '"'"'make'"'"' AND tid > 5015'
	)
	tbr_script=""
	for s in "${TBR[@]}"; do tbr_script+="$s;"$'\n'; done
	DT_SQL_NO_READAHEAD=1 "$D" sql --csv "$TB" "$tbr_script" >"$T/tbr.one" 2>"$T/tbr.one.err"
	rc=$?
	nempty=$(awk 'BEGIN { RS = ""; FS = "\n" } NF < 2 { n++ } END { print n + 0 }' "$T/tbr.one")
	if [ $rc != 0 ] || [ "$nempty" != 1 ]; then
		fail "rows_tidblocks_reference" "rc $rc, $nempty empty results: $(head -c 300 "$T/tbr.one.err")"
	else
		pass "rows_tidblocks_reference"
	fi
	for n in 1 2 7 one; do
		if [ $n = one ]; then
			DT_SQL_ONE_READ=1 "$D" sql --csv --threads 2 "$TB" "$tbr_script" >"$T/tbr.$n" 2>"$T/tbr.$n.err"
		else
			"$D" sql --csv --threads $n "$TB" "$tbr_script" >"$T/tbr.$n" 2>"$T/tbr.$n.err"
		fi
		rc=$?
		if [ $rc != 0 ] || san "$T/tbr.$n.err"; then
			fail "rows_tidblocks_threads_$n" "rc $rc: $(head -c 300 "$T/tbr.$n.err")"
		elif ! cmp -s "$T/tbr.$n" "$T/tbr.one"; then
			fail "rows_tidblocks_threads_$n" "not the one-thread rows: $(diff "$T/tbr.$n" "$T/tbr.one" | head -4 | tr '\n' ' ')"
		else
			pass "rows_tidblocks_threads_$n"
		fi
	done
	# the thread of block 7 alone: the other 19 blocks' rows are never
	# decoded, on any number of threads; the one-read path decodes them
	for n in 1 2 7 one; do
		if [ $n = one ]; then
			DT_SQL_ONE_READ=1 DT_SQL_DEBUG=1 "$D" sql --csv --threads 2 "$TB" 'SELECT rowid, ts, tid FROM events WHERE tid = 5007' \
				>"$T/tbs.out" 2>"$T/tbs.err"
		else
			DT_SQL_DEBUG=1 "$D" sql --csv --threads $n "$TB" 'SELECT rowid, ts, tid FROM events WHERE tid = 5007' \
				>"$T/tbs.out" 2>"$T/tbs.err"
		fi
		got=$(sed -n 's/.*events read ahead: \([0-9]*\) of \([0-9]*\) blocks decoded, \([0-9]*\) by their contexts alone.*/\1 \2 \3/p' "$T/tbs.err")
		want="20 20 19"
		[ $n = one ] && want="20 20 0"
		if [ "$got" != "$want" ] || [ "$(grep -c ',5007' "$T/tbs.out")" != 200 ]; then
			fail "rows_tidblocks_skip_$n" "'$got', not '$want'; $(grep -c ',5007' "$T/tbs.out") rows: $(head -c 200 "$T/tbs.err")"
		else
			pass "rows_tidblocks_skip_$n"
		fi
	done
	# a probe set with an id too large for the filter's id table (2^24
	# and up) is a set of the filter (FLT_X_PROBE), tested per context
	# like the others, not left to sqlite: probe 7 is in no block, so
	# all 20 are given by their contexts alone; with a probe that is,
	# the rows are those of the probe alone
	DT_SQL_DEBUG=1 "$D" sql --csv --threads 2 "$TB" 'SELECT rowid, ts FROM events WHERE probe IN (7, 16777216)' \
		>"$T/pfar.out" 2>"$T/pfar.err"
	rc=$?
	got=$(sed -n 's/.*events read ahead: \([0-9]*\) of \([0-9]*\) blocks decoded, \([0-9]*\) by their contexts alone.*/\1 \2 \3/p' "$T/pfar.err")
	"$D" sql --csv --threads 2 "$TB" 'SELECT rowid, ts, tid FROM events WHERE probe IN (2, 4294967295)' \
		>"$T/pfar2.out" 2>"$T/pfar2.err"
	rc2=$?
	"$D" sql --csv --threads 2 "$TB" 'SELECT rowid, ts, tid FROM events WHERE probe = 2' \
		>"$T/pfar2.ref" 2>>"$T/pfar2.err"
	if [ $rc != 0 ] || [ $rc2 != 0 ] || san "$T/pfar.err" || san "$T/pfar2.err"; then
		fail "rows_probe_set_far_ids" "rc $rc/$rc2: $(head -c 300 "$T/pfar.err" "$T/pfar2.err")"
	elif [ "$got" != "20 20 20" ] || [ "$(grep -c . "$T/pfar.out")" != 1 ]; then
		fail "rows_probe_set_far_ids" "probe IN (7, 2^24): '$got', not '20 20 20' (blocks decoded, of, by contexts alone); $(grep -c . "$T/pfar.out") lines"
	elif [ "$(grep -c . "$T/pfar2.ref")" -lt 100 ] || ! cmp -s "$T/pfar2.out" "$T/pfar2.ref"; then
		fail "rows_probe_set_far_ids" "probe IN (2, 2^32 - 1) is not probe = 2: $(diff "$T/pfar2.out" "$T/pfar2.ref" | head -4 | tr '\n' ' ')"
	else
		pass "rows_probe_set_far_ids"
	fi
	# the contexts are the block's own, not its summary: a capture without
	# block summaries (bsumedit strip, as writers before them wrote) reads
	# and skips alike
	if ! "$B/tests/scan/bsumedit" strip "$TB" "$T/tbns.dtc" 2>"$T/tbns.err"; then
		fail "rows_tidblocks_no_summaries" "bsumedit strip: $(head -c 200 "$T/tbns.err")"
	else
		DT_SQL_DEBUG=1 "$D" sql --csv --threads 2 "$T/tbns.dtc" "$tbr_script" >"$T/tbns.out" 2>"$T/tbns.err"
		rc=$?
		skipped=$(sed -n 's/.*blocks decoded, \([0-9]*\) by their contexts alone.*/\1/p' "$T/tbns.err" | head -1)
		if [ $rc != 0 ] || san "$T/tbns.err"; then
			fail "rows_tidblocks_no_summaries" "rc $rc: $(head -c 300 "$T/tbns.err")"
		elif ! cmp -s "$T/tbns.out" "$T/tbr.one"; then
			fail "rows_tidblocks_no_summaries" "not the one-thread rows: $(diff "$T/tbns.out" "$T/tbr.one" | head -4 | tr '\n' ' ')"
		elif [ "$skipped" != 19 ]; then
			fail "rows_tidblocks_no_summaries" "thread 5000's statement: '$skipped' blocks by their contexts alone, not 19"
		else
			pass "rows_tidblocks_no_summaries"
		fi
	fi
else
	fail "rows_tidblocks" "run.sh's tidblocks capture (TB) is missing"
fi

# the same under TSan: the helpers share the reader and the cursor's filter
if [ -x "${SQLTSAN:-}" ]; then
	for n in 2 7; do
		hs=()
		for s in "${ROWSQ[@]}"; do hs+=("${s%%|*}"); done
		TSAN_OPTIONS=halt_on_error=1 "$SQLTSAN" --rows "$RC" $n "${hs[@]}" >"$T/rtsan$n.out" 2>"$T/rtsan$n.err"
		rc=$?
		cat "$T/rtsan$n.out"
		if [ $rc -ne 0 ] || grep -q ThreadSanitizer "$T/rtsan$n.err" || ! grep -q '^PASS' "$T/rtsan$n.out"; then
			fail "rows_tsan_$n" "status $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$T/rtsan$n.err") $(head -c 200 "$T/rtsan$n.err")"
		fi
	done
else
	fail "rows_tsan" "SQLTSAN (the TSan build of tests/sql/sqltsan.c) not given"
fi
