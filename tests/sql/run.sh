#!/bin/bash
# tests/sql/run.sh - dtreport sql / export, each answer checked against a
# path that shares no code with dtsql: mksql's own tallies, the count tool
# (dtcap_iter), queries that defeat pushdown, and the exported database
# read by the sqlite3 CLI.
# Env: B (build dir), DTREPORT (the binary under test), DTGEN (optional).
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
G=${DTGEN:-$B/bin/dtgen}
T=$(mktemp -d "${TMPDIR:-/tmp}/dtsql.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
sanitizers_strict
# check NAME GOT WANT
check() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2' want '$3'"; fi
}
# q CAP SQL: CSV result without its header line, CRs stripped
q() {
	"$D" sql --csv "$1" "$2" 2>"$T/err" | tr -d '\r' | tail -n +2
	cat "$T/err" >>"$T/q.err"
}

for tool in "$D" "$B/tests/sql/mksql" "$B/tests/sql/count" python3 sqlite3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "setup" "missing $tool"
		exit 0
	fi
done

C=$T/cap.dtc
if ! "$B/tests/sql/mksql" "$C" "$T/exp" 60000 2>"$T/mk.err"; then
	fail "setup" "mksql: $(cat "$T/mk.err")"
	exit 0
fi
exp() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$T/exp"; }
TOTAL=$(exp total)
TMIN=$(exp tmin)
TMAX=$(exp tmax)
"$B/tests/sql/count" "$C" >"$T/count.all" || fail "count" "count tool failed"

# ---- totals and group counts against the generator and the walker
check "count_total" "$(q "$C" 'SELECT count(*) FROM events')" "$TOTAL"
check "count_total_walker" "$(awk '$1=="total"{print $2}' "$T/count.all")" "$TOTAL"

q "$C" 'SELECT comm, count(*) FROM events GROUP BY comm' |
	python3 -c 'import csv,sys
for r in csv.reader(sys.stdin): print("comm", r[0], r[1])' | sort >"$T/sql.comm"
grep '^comm ' "$T/count.all" | sort >"$T/walk.comm"
exp comm | sed 's/^/comm /' | sort >"$T/gen.comm"
if cmp -s "$T/sql.comm" "$T/walk.comm" && cmp -s "$T/sql.comm" "$T/gen.comm"; then
	pass "group_by_comm"
else
	fail "group_by_comm" "$(diff "$T/sql.comm" "$T/walk.comm" | head -5 | tr '\n' ' ')"
fi
q "$C" 'SELECT pid, count(*) FROM events GROUP BY pid' | tr ',' ' ' | sed 's/^/pid /' | sort >"$T/sql.pid"
grep '^pid ' "$T/count.all" | sort >"$T/walk.pid"
cmp -s "$T/sql.pid" "$T/walk.pid" && pass "group_by_pid" ||
	fail "group_by_pid" "$(diff "$T/sql.pid" "$T/walk.pid" | head -4 | tr '\n' ' ')"
q "$C" 'SELECT probe, count(*) FROM events GROUP BY probe' | tr ',' ' ' | sed 's/^/probe /' | sort >"$T/sql.probe"
grep '^probe ' "$T/count.all" | sort >"$T/walk.probe"
cmp -s "$T/sql.probe" "$T/walk.probe" && pass "group_by_probe" ||
	fail "group_by_probe" "$(diff "$T/sql.probe" "$T/walk.probe" | head -4 | tr '\n' ' ')"
q "$C" 'SELECT probe, probe_name, count(*) FROM events GROUP BY probe_name' | tr ',' ' ' |
	sed 's/^/probe /' | sort >"$T/sql.pname"
exp probe | sed 's/^/probe /' | sort >"$T/gen.pname"
cmp -s "$T/sql.pname" "$T/gen.pname" && pass "group_by_probe_name" ||
	fail "group_by_probe_name" "$(diff "$T/sql.pname" "$T/gen.pname" | head -4 | tr '\n' ' ')"

# ---- ordered delivery: same multiset, and really in order
for col in comm pid tid cpu probe probe_name ts; do
	for dir in ASC DESC; do
		a=$(q "$C" "SELECT $col FROM events ORDER BY $col $dir" | md5sum)
		b=$(q "$C" "SELECT $col FROM events ORDER BY $col||'' $dir" | md5sum)
		[ "$col" != comm ] && [ "$col" != probe_name ] &&
			b=$(q "$C" "SELECT $col FROM events ORDER BY $col+0 $dir" | md5sum)
		check "order_by_${col}_$dir" "$a" "$b"
	done
done

# several terms (a window's PARTITION BY tid ORDER BY ts is one): against
# sqlite's own sorter, made to sort by an extra rowid term
for ob in "tid, ts" "tid DESC, ts" "comm, pid DESC" "cpu, probe_name DESC, ts DESC" "pid, tid, cpu, probe"; do
	check "order_by_terms_$(echo "$ob" | tr -cd 'a-z_')" \
		"$(q "$C" "SELECT tid, ts, comm, pid, cpu, probe_name, probe FROM events ORDER BY $ob" | md5sum)" \
		"$(q "$C" "SELECT tid, ts, comm, pid, cpu, probe_name, probe FROM events ORDER BY $ob, rowid" | md5sum)"
done

check "rowid_when_ordered" "$(q "$C" 'SELECT rowid, pid FROM events WHERE ts > 0 ORDER BY pid' | md5sum)" \
	"$(q "$C" 'SELECT rowid, pid FROM events WHERE ts > 0 ORDER BY pid+0, rowid' | md5sum)"

# ---- the plans: grouping done by the table (no sqlite sorter), constraints pushed
check "plan_group_by_no_sorter" "$(q "$C" 'EXPLAIN QUERY PLAN SELECT comm, count(*) FROM events GROUP BY comm' | grep -c 'TEMP B-TREE')" "0"
check "plan_group_by_expr_sorts" "$(q "$C" "EXPLAIN QUERY PLAN SELECT comm, count(*) FROM events GROUP BY comm||''" | grep -c 'TEMP B-TREE')" "1"
check "plan_window_no_sorter" "$(q "$C" "EXPLAIN QUERY PLAN SELECT LAG(ts) OVER (PARTITION BY tid ORDER BY ts) FROM events" | grep -c 'TEMP B-TREE')" "0"
check "plan_pushdown" "$(q "$C" "EXPLAIN QUERY PLAN SELECT count(*) FROM events WHERE ts BETWEEN 1 AND 2 AND pid IN (1,2) AND probe_name = 'x'" | grep -o 'INDEX [0-9]*:[a-zA-Z=<>]*' | sed 's/.*://' | fold -w1 | sort | tr -d '\n')" "Pgln"
check "plan_comm_pushdown" "$(q "$C" "EXPLAIN QUERY PLAN SELECT count(*) FROM events WHERE comm = 'bash'" | grep -c 'INDEX [0-9]*:c$')" "1"

# ---- pushdown must not change results: compare with ts+0, pid+0 forms
span=$((TMAX - TMIN))
i=0
for frac in "0 10" "10 11" "45 55" "90 100" "0 100" "99 200"; do
	set -- $frac
	lo=$((TMIN + span * $1 / 100)); hi=$((TMIN + span * $2 / 100))
	a=$(q "$C" "SELECT count(*), sum(pid), min(ts), max(ts) FROM events WHERE ts BETWEEN $lo AND $hi")
	b=$(q "$C" "SELECT count(*), sum(pid), min(ts), max(ts) FROM events WHERE ts+0 BETWEEN $lo AND $hi")
	w=$("$B/tests/sql/count" "$C" "$lo" "$hi" | awk '$1=="total"{print $2}')
	check "ts_between_$i" "$a" "$b"
	check "ts_between_walker_$i" "${a%%,*}" "$w"
	a=$(q "$C" "SELECT count(*) FROM events WHERE ts > $lo AND ts < $hi")
	b=$(q "$C" "SELECT count(*) FROM events WHERE ts+0 > $lo AND ts+0 < $hi")
	check "ts_open_range_$i" "$a" "$b"
	i=$((i + 1))
done
one=$(q "$C" "SELECT ts FROM events LIMIT 1 OFFSET 31337")
check "ts_eq" "$(q "$C" "SELECT count(*), min(pid) FROM events WHERE ts = $one")" \
	"$(q "$C" "SELECT count(*), min(pid) FROM events WHERE ts+0 = $one")"
check "ts_float_bound" "$(q "$C" "SELECT count(*) FROM events WHERE ts >= $one.5")" \
	"$(q "$C" "SELECT count(*) FROM events WHERE ts+0 >= $one.5")"
check "ts_text_bound" "$(q "$C" "SELECT count(*) FROM events WHERE ts < '$one'")" \
	"$(q "$C" "SELECT count(*) FROM events WHERE ts+0 < CAST('$one' AS INTEGER)")"
check "ts_empty_range" "$(q "$C" "SELECT count(*) FROM events WHERE ts < 0")" "0"
check "pid_eq" "$(q "$C" 'SELECT count(*), max(ts) FROM events WHERE pid = 101')" \
	"$(q "$C" 'SELECT count(*), max(ts) FROM events WHERE pid+0 = 101')"
check "pid_eq_walker" "$(q "$C" 'SELECT count(*) FROM events WHERE pid = 101')" \
	"$(awk '$1=="pid" && $2==101 {print $3}' "$T/count.all")"
check "pid_in" "$(q "$C" 'SELECT count(*) FROM events WHERE pid IN (100, 103, 99999)')" \
	"$(q "$C" 'SELECT count(*) FROM events WHERE pid+0 IN (100, 103, 99999)')"
check "pid_in_text" "$(q "$C" "SELECT count(*) FROM events WHERE pid IN ('100', 103)")" \
	"$(q "$C" "SELECT count(*) FROM events WHERE pid+0 IN (100, 103)")"
check "pid_missing" "$(q "$C" 'SELECT count(*) FROM events WHERE pid = 5')" "0"
check "probe_eq" "$(q "$C" 'SELECT count(*) FROM events WHERE probe = 2')" \
	"$(q "$C" 'SELECT count(*) FROM events WHERE probe+0 = 2')"
check "probe_name_eq" "$(q "$C" "SELECT count(*) FROM events WHERE probe_name = 'syscall:openat:entry'")" \
	"$(exp probe | awk '$2=="syscall:openat:entry"{print $3}')"
check "comm_eq" "$(q "$C" "SELECT count(*) FROM events WHERE comm = 'a,b\"c'")" "$(exp comm | awk '$1=="a,b\"c"{print $2}')"
check "comm_in" "$(q "$C" "SELECT count(*) FROM events WHERE comm IN ('bash', 'make', 'nope')")" \
	"$(q "$C" "SELECT count(*) FROM events WHERE comm||'' IN ('bash', 'make', 'nope')")"
check "comm_nocase" "$(q "$C" "SELECT count(*) FROM events WHERE comm = 'BASH' COLLATE NOCASE")" \
	"$(exp comm | awk '$1=="bash"{print $2}')"
for pat in "probe_name LIKE 'SYSCALL:%'" "probe_name GLOB 'syscall:*:return'" "probe_name GLOB 'SYSCALL*'" \
	   "comm LIKE 'a,%'" "comm GLOB '*a*'" "comm LIKE 'nope'" "comm LIKE 5"; do
	nopush=$(echo "$pat" | sed "s/^\(comm\|probe_name\)/(\1||'')/")
	check "pattern_$(echo "$pat" | tr -cd 'a-zA-Z_')" "$(q "$C" "SELECT count(*) FROM events WHERE $pat")" \
		"$(q "$C" "SELECT count(*) FROM events WHERE $nopush")"
done
check "probe_name_unknown" "$(q "$C" "SELECT count(*) FROM events WHERE probe_name IN ('nope', 'x')")" "0"
check "probe_name_in_ints" "$(q "$C" "SELECT count(*) FROM events WHERE probe_name IN (1, 2)")" "0"
check "pid_in_null" "$(q "$C" 'SELECT count(*) FROM events WHERE pid IN (NULL, 101)')" \
	"$(q "$C" 'SELECT count(*) FROM events WHERE pid+0 IN (NULL, 101)')"
check "probe_name_in" "$(q "$C" "SELECT count(*) FROM events WHERE probe_name IN ('profile:hz:97','nope')")" \
	"$(q "$C" "SELECT count(*) FROM events WHERE probe_name||'' IN ('profile:hz:97','nope')")"
check "combined_pushdown" \
	"$(q "$C" "SELECT count(*) FROM events WHERE pid IN (101,102) AND probe = 1 AND ts BETWEEN $((TMIN + span / 3)) AND $((TMIN + span / 2))")" \
	"$(q "$C" "SELECT count(*) FROM events WHERE pid+0 IN (101,102) AND probe+0 = 1 AND ts+0 BETWEEN $((TMIN + span / 3)) AND $((TMIN + span / 2))")"
# a join: pid pushed from the outer loop
check "join_processes" \
	"$(q "$C" "SELECT count(*) FROM processes p JOIN events e ON e.pid = p.pid WHERE p.comm = 'make'")" \
	"$(exp comm | awk '$1=="make"{print $2}')"
# keyed lookups (probes by id, processes and maps by pid: a sorted index)
# give the rows a full walk gives ('+' keeps the key from the table)
for j in "probes x ON x.id = e.probe|probes x ON +x.id = e.probe" \
	 "probe_args x ON x.probe = e.probe|probe_args x ON +x.probe = e.probe" \
	 "processes x ON x.pid = e.pid|processes x ON +x.pid = e.pid" \
	 "maps x ON x.pid = e.pid|maps x ON +x.pid = e.pid"; do
	tab=${j%% *}
	keyed="SELECT count(*), total(x.rowid), total(e.tid) FROM events e CROSS JOIN ${j%%|*}"
	walked="SELECT count(*), total(x.rowid), total(e.tid) FROM events e CROSS JOIN ${j##*|}"
	got=$(q "$C" "$keyed")
	check "join_keyed_$tab" "$got" "$(q "$C" "$walked")"
	[ "${got%%,*}" -gt 0 ] || fail "join_keyed_${tab}_rows" "no rows: $got"
	q "$C" "EXPLAIN QUERY PLAN $keyed" | grep -q 'VIRTUAL TABLE INDEX 1:' ||
		fail "join_keyed_${tab}_plan" "the key is not used: $(q "$C" "EXPLAIN QUERY PLAN $keyed" | tr '\n' ' ')"
done
check "keyed_absent" "$(q "$C" 'SELECT count(*) FROM processes WHERE pid = 999999'),$(q "$C" 'SELECT count(*) FROM probes WHERE id = -1'),$(q "$C" 'SELECT count(*) FROM maps WHERE pid = 0')" \
	"$(q "$C" 'SELECT count(*) FROM processes WHERE +pid = 999999'),$(q "$C" 'SELECT count(*) FROM probes WHERE +id = -1'),$(q "$C" 'SELECT count(*) FROM maps WHERE +pid = 0')"

# ---- frames are named from the capture's symbols
while read -r _ id names n; do
	got=$(q "$C" "SELECT group_concat(name) FROM (SELECT name FROM frames WHERE stack_id = $id ORDER BY depth)" | tr -d '"')
	check "frames_stack_$id" "$got" "$names"
	check "stack_use_$id" "$(q "$C" "SELECT count(*) FROM events WHERE kstack = $id OR ustack = $id")" "$n"
done < <(grep -E '^(kstack|ustack) ' "$T/exp")
check "stacks_table" "$(q "$C" 'SELECT id, kernel, depth, truncated FROM stacks ORDER BY id' | tr '\n' ' ')" \
	"1,1,3,0 2,1,1,1 3,0,2,0 "
check "sym_function" "$(q "$C" "SELECT sym(pc, kernel) FROM frames WHERE stack_id = 2")" "schedule"

# ---- latency from entry/return pairs (the doc/SQL.md query)
LATQ="WITH s AS (
  SELECT tid, ts, probe_name, flags,
         LAG(ts) OVER w AS prev_ts, LAG(probe_name) OVER w AS prev_probe
  FROM events WHERE probe_name LIKE 'syscall:%'
  WINDOW w AS (PARTITION BY tid ORDER BY ts))
SELECT substr(probe_name, 9, length(probe_name) - 15) AS syscall,
       count(*), sum(ts - prev_ts), max(ts - prev_ts)
FROM s WHERE flags & 1 AND prev_probe = replace(probe_name, ':return', ':entry')
GROUP BY syscall ORDER BY syscall"
q "$C" "$LATQ" | tr ',' ' ' >"$T/lat.sql"
exp lat | sort >"$T/lat.gen"
cmp -s "$T/lat.sql" "$T/lat.gen" && pass "latency_pairs" ||
	fail "latency_pairs" "$(paste -d'|' "$T/lat.sql" "$T/lat.gen" | tr '\n' ' ')"
check "errno_column" "$(q "$C" 'SELECT count(*) FROM events WHERE errno = 2 AND retval = -1')" "$(exp errors)"
check "retval_null_on_entry" "$(q "$C" "SELECT count(*) FROM events WHERE retval IS NOT NULL AND probe_name LIKE '%:entry'")" "0"

# ---- small tables
check "probes_rows" "$(q "$C" 'SELECT count(*) FROM probes')" "5"
check "probes_split" "$(q "$C" "SELECT provider, function, probe, is_return FROM probes WHERE id = 2")" \
	"syscall,read,return,1"
check "probe_args" "$(q "$C" "SELECT group_concat(name, ' ') FROM probe_args WHERE probe = 1")" "fd buf count"
check "processes" "$(q "$C" 'SELECT count(*), min(pid), max(pid) FROM processes')" "$(exp procs),100,103"
check "counters" "$(q "$C" 'SELECT count(*), sum(dropped) FROM counters')" "$(exp counters),14"
check "counters_recorder" "$(q "$C" 'SELECT dropped FROM counters WHERE snapshot = 1 AND cpu IS NULL')" "3"
check "maps" "$(q "$C" "SELECT count(*) FROM maps WHERE name = '/usr/bin/sqltest'")" "4"

# ---- output formats
"$D" sql --csv "$C" "SELECT comm, count(*) AS n, 1.5 AS f, NULL AS z, x'00ff' AS b FROM events GROUP BY comm" >"$T/o.csv" 2>"$T/err"
python3 - "$T/o.csv" <<'EOF' && pass "csv_wellformed" || fail "csv_wellformed" "$(head -3 "$T/o.csv")"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
assert rows[0] == ['comm', 'n', 'f', 'z', 'b'], rows[0]
assert sorted(r[0] for r in rows[1:]) == sorted(['bash', 'make', 'a,b"c', 'kworker/0:1']), rows
assert all(r[2] == '1.5' and r[3] == '' and r[4] == "x'00ff'" for r in rows[1:])
EOF
"$D" sql --json "$C" "SELECT comm, count(*) AS n, 1.5 AS f, NULL AS z FROM events GROUP BY comm" >"$T/o.json" 2>"$T/err"
python3 - "$T/o.json" "$T/exp" <<'EOF' && pass "json_wellformed" || fail "json_wellformed" "$(head -c 300 "$T/o.json")"
import json, sys
d = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    k, *rest = line.split()
    if k == 'comm':
        want[' '.join(rest[:-1])] = int(rest[-1])
assert {r['comm']: r['n'] for r in d} == want, d
assert all(r['f'] == 1.5 and r['z'] is None for r in d)
EOF
"$D" sql --json "$C" "SELECT CAST(x'ff41c3a90a' AS TEXT) AS t, 'tab	\"q\\' AS u" >"$T/u.json" 2>&1
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d == [{"t": "\ufffdAé\n", "u": "tab\t\"q\\"}], d' "$T/u.json" &&
	pass "json_escapes" || fail "json_escapes" "$(cat "$T/u.json")"
"$D" sql --json "$C" "SELECT 1 WHERE 0" >"$T/e.json" 2>&1
python3 -c 'import json,sys; assert json.load(open(sys.argv[1])) == []' "$T/e.json" &&
	pass "json_empty" || fail "json_empty" "$(cat "$T/e.json")"
"$D" sql --table "$C" "SELECT comm, count(*) AS n FROM events GROUP BY comm" >"$T/o.txt" 2>&1
python3 - "$T/o.txt" <<'EOF' && pass "table_aligned" || fail "table_aligned" "$(cat "$T/o.txt")"
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].split() == ['comm', 'n'] and set(lines[1]) <= set('- '), lines
assert lines[-1] == '(4 rows)', lines[-1]
body = lines[2:-1]
assert len(body) == 4 and len({len(l) for l in body}) == 1, body   # right edge aligned
EOF
# default when stdout is not a tty: CSV
check "default_csv_on_pipe" "$("$D" sql "$C" "SELECT 1 AS a, 'x' AS b" | tr -d '\r' | tr '\n' ' ')" "a,b 1,x "
check "stdin_query" "$(echo 'SELECT count(*) FROM probes;' | "$D" sql --csv "$C" | tr -d '\r' | tail -1)" "5"
check "multi_statement" \
	"$("$D" sql --csv "$C" "CREATE TEMP TABLE t AS SELECT pid FROM events WHERE pid = 100; SELECT count(*) FROM t;" | tr -d '\r' | tail -1)" \
	"$(exp pid | awk '$1==100{print $2}')"

# ---- errors: sqlite's own message (and the closest keywords), exit 1
"$D" sql "$C" "SELEC 1" >"$T/o" 2>"$T/err"; rc=$?
check "bad_sql_status" "$rc" "1"
check "bad_sql_message" "$(cat "$T/err")" 'dtreport sql: near "SELEC": syntax error; did you mean SELECT?'
"$D" sql "$C" "SELECT nosuch FROM events" >"$T/o" 2>"$T/err"; rc=$?
check "bad_column" "$rc:$(cat "$T/err")" '1:dtreport sql: no such column: nosuch'
"$D" sql "$C" "SELECT 1; SELEC 2" >"$T/o" 2>"$T/err"; rc=$?
check "bad_second_statement" "$rc:$(tr -d '\r' <"$T/o" | tr '\n' ' ')" "1:1 1 "
"$D" sql "$T/nope.dtc" "SELECT 1" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "^dtreport sql: .*nope.dtc" "$T/err" && pass "missing_file" ||
	fail "missing_file" "rc=$rc $(cat "$T/err")"
head -c 100000 /dev/urandom >"$T/garbage.dtc"
"$D" sql "$T/garbage.dtc" "SELECT count(*) FROM events" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "^dtreport sql: .*garbage.dtc" "$T/err" && ! san "$T/err" && pass "garbage_capture" ||
	fail "garbage_capture" "rc=$rc $(head -3 "$T/err")"
# cut short: refused with status 3 and the reason; --partial sees a prefix
# of the events (with a warning), or fails cleanly
sz=$(stat -c %s "$C")
for cut in $((sz / 3)) $((sz * 2 / 3)) $((sz - 7)); do
	head -c "$cut" "$C" >"$T/cut.dtc"
	"$D" sql "$T/cut.dtc" "SELECT count(*) FROM events" >"$T/o" 2>"$T/err"; rc=$?
	if [ $rc = 3 ] && [ ! -s "$T/o" ] && grep -q '^dtreport sql: .*truncated at offset' "$T/err" &&
	   grep -q -- '--partial reads them' "$T/err" && ! san "$T/err"; then
		pass "truncated_status_$cut"
	else
		fail "truncated_status_$cut" "rc=$rc $(head -2 "$T/err")"
	fi
	"$D" sql --partial "$T/cut.dtc" "SELECT count(*) FROM events" >"$T/o" 2>"$T/err"; rc=$?
	n=$(tr -d '\r' <"$T/o" | tail -1)
	if san "$T/err"; then
		fail "truncated_$cut" "sanitizer: $(head -3 "$T/err")"
	elif [ $rc = 0 ] && [ "$n" -le "$TOTAL" ] 2>/dev/null && grep -q 'warning: .*truncated' "$T/err"; then
		pass "truncated_$cut"
	elif [ $rc = 1 ] && grep -q '^dtreport sql: ' "$T/err"; then
		pass "truncated_$cut"
	else
		fail "truncated_$cut" "rc=$rc out=$n $(head -2 "$T/err")"
	fi
done
: >"$T/empty0.dtc"
"$D" sql "$T/empty0.dtc" "SELECT count(*) FROM events" >"$T/o" 2>"$T/err"; rc=$?
check "empty_file_status" "$rc" "3"
# export of a capture cut short: a sound database with what the capture holds
head -c $((sz * 2 / 3)) "$C" >"$T/cut.dtc"
"$D" export "$T/cut.dtc" -o "$T/cut.sqlite" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 3 ] && [ ! -e "$T/cut.sqlite" ] && pass "export_truncated_status" ||
	fail "export_truncated_status" "rc=$rc $(head -2 "$T/err")"
if "$D" export --partial "$T/cut.dtc" -o "$T/cut.sqlite" >"$T/o" 2>"$T/err"; then
	check "export_truncated" "$(sqlite3 "$T/cut.sqlite" 'PRAGMA integrity_check; SELECT count(*) FROM events' | tr '\n' ' ')" \
		"ok $("$D" sql --csv --partial "$T/cut.dtc" 'SELECT count(*) FROM events' 2>/dev/null | tr -d '\r' | tail -1) "
elif grep -q '^dtreport export: ' "$T/err" && ! san "$T/err"; then
	pass "export_truncated"
else
	fail "export_truncated" "$(head -2 "$T/err")"
fi
# damage inside the data: a clear error (or, if the damage missed the data, an answer)
cp "$C" "$T/bad.dtc"
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$T/bad.dtc" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
"$D" sql "$T/bad.dtc" "SELECT count(*), sum(ts) FROM events" >"$T/o" 2>"$T/err"; rc=$?
if san "$T/err"; then fail "damaged_block" "sanitizer: $(head -3 "$T/err")"
elif [ $rc = 1 ] && grep -q '^dtreport sql: ' "$T/err"; then pass "damaged_block"
elif [ $rc = 0 ]; then pass "damaged_block"
else fail "damaged_block" "rc=$rc $(head -2 "$T/err")"; fi

# Ctrl-C (SIGINT) stops an endless query: sqlite's "interrupted", exit 1
"$D" sql "$C" "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c" \
	>"$T/o" 2>"$T/int.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid; rc=$?
check "sigint_interrupts" "$rc:$(cat "$T/int.err")" "1:dtreport sql: interrupted"

"$D" export "$T/bad.dtc" -o "$T/bad.sqlite" >"$T/o" 2>"$T/err"; rc=$?
if san "$T/err"; then fail "export_damaged" "sanitizer: $(head -3 "$T/err")"
elif [ $rc = 1 ] && grep -q '^dtreport export: ' "$T/err" && [ ! -e "$T/bad.sqlite" ]; then pass "export_damaged"
elif [ $rc = 0 ] && [ "$(sqlite3 "$T/bad.sqlite" 'PRAGMA integrity_check')" = ok ]; then pass "export_damaged"
else fail "export_damaged" "rc=$rc $(head -2 "$T/err")"; fi

# ---- export: the sqlite3 CLI reads it and agrees with the vtab
X=$T/out.sqlite
"$D" export "$C" -o "$X" >"$T/o" 2>"$T/err"; rc=$?
check "export_status" "$rc" "0"
check "export_events" "$(sqlite3 "$X" 'SELECT count(*) FROM events')" "$TOTAL"
for t in probes probe_args stacks frames processes maps counters; do
	check "export_rows_$t" "$(sqlite3 "$X" "SELECT count(*) FROM $t")" "$(q "$C" "SELECT count(*) FROM $t")"
done
check "export_group_by_comm" "$(sqlite3 -csv "$X" 'SELECT comm, count(*) FROM events GROUP BY comm ORDER BY comm' | tr -d '\r' | md5sum)" \
	"$(q "$C" 'SELECT comm, count(*) FROM events GROUP BY comm ORDER BY comm' | md5sum)"
check "export_full_rows" "$(sqlite3 -csv "$X" 'SELECT * FROM events ORDER BY rowid' | tr -d '\r' | md5sum)" \
	"$(q "$C" 'SELECT * FROM events' | md5sum)"
check "export_rowids" "$(sqlite3 -csv "$X" 'SELECT rowid, ts, tid FROM events WHERE rowid % 997 = 1' | tr -d '\r' | md5sum)" \
	"$(q "$C" 'SELECT rowid, ts, tid FROM events WHERE rowid % 997 = 1' | md5sum)"
check "export_indexes" "$(sqlite3 "$X" "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='events' ORDER BY name)")" \
	"events_pid,events_ts"
check "export_uses_ts_index" "$(sqlite3 "$X" "EXPLAIN QUERY PLAN SELECT * FROM events WHERE ts > 5" | grep -c events_ts)" "1"
check "export_integrity" "$(sqlite3 "$X" 'PRAGMA integrity_check')" "ok"
check "export_latency_query" "$(sqlite3 -csv "$X" "$LATQ" | tr -d '\r' | tr ',' ' ')" "$(cat "$T/lat.gen")"
# the page writer against sqlite's own INSERT path (DTSQL_EXPORT_SQL=1)
DTSQL_EXPORT_SQL=1 "$D" export "$C" -o "$T/slow.sqlite" >"$T/o" 2>"$T/err"
check "export_pages_eq_insert" "$(sqlite3 "$T/slow.sqlite" 'SELECT * FROM events ORDER BY rowid' | md5sum)" \
	"$(sqlite3 "$X" 'SELECT * FROM events ORDER BY rowid' | md5sum)"
check "export_ts_index_eq" "$(sqlite3 "$X" "SELECT count(*), sum(rowid) FROM events WHERE ts BETWEEN $TMIN + 1000000 AND $TMIN + 9000000")" \
	"$(sqlite3 "$T/slow.sqlite" "SELECT count(*), sum(rowid) FROM events WHERE ts BETWEEN $TMIN + 1000000 AND $TMIN + 9000000")"
check "export_pid_index_eq" "$(sqlite3 "$X" "SELECT pid, count(*) FROM events WHERE pid IN (100, 102) GROUP BY pid")" \
	"$(sqlite3 "$T/slow.sqlite" "SELECT pid, count(*) FROM events WHERE pid+0 IN (100, 102) GROUP BY pid")"
mksql_empty=$T/empty.dtc
"$B/tests/sql/mksql" "$mksql_empty" "$T/empty.exp" 0 2>/dev/null
"$D" export "$mksql_empty" -o "$T/empty.sqlite" >"$T/o" 2>"$T/err"
check "export_empty" "$(sqlite3 "$T/empty.sqlite" 'PRAGMA integrity_check; SELECT count(*) FROM events' | tr '\n' ' ')" "ok 0 "
"$D" export "$C" -o "$T/nodir/x.sqlite" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q '^dtreport export: ' "$T/err" && pass "export_bad_path" ||
	fail "export_bad_path" "rc=$rc $(cat "$T/err")"
cp "$C" "$T/self.dtc"
"$D" export "$T/self.dtc" -o "$T/self.dtc" >"$T/o" 2>"$T/err"; rc=$?
check "export_onto_capture" "$rc:$(cmp -s "$C" "$T/self.dtc" && echo intact)" "1:intact"
"$D" export "$T/garbage.dtc" -o "$T/g.sqlite" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ ! -e "$T/g.sqlite" ] && pass "export_garbage" || fail "export_garbage" "rc=$rc"

# ---- export never destroys: output = input (links too), failure keeps the old file
ln -sf self.dtc "$T/self-link.sqlite"
ln -f "$T/self.dtc" "$T/self-hard.sqlite"
for o in self-link.sqlite self-hard.sqlite; do
	"$D" export "$T/self.dtc" -o "$T/$o" >"$T/o" 2>"$T/err"; rc=$?
	[ $rc = 1 ] && cmp -s "$C" "$T/self.dtc" && grep -q 'refusing to overwrite the input' "$T/err" &&
		pass "export_onto_capture_$o" || fail "export_onto_capture_$o" "rc=$rc $(cat "$T/err")"
done
echo "precious" >"$T/keep.sqlite"
"$D" export "$T/garbage.dtc" -o "$T/keep.sqlite" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(cat "$T/keep.sqlite")" = precious ] && pass "export_failure_keeps_file" ||
	fail "export_failure_keeps_file" "rc=$rc: $(head -c 100 "$T/keep.sqlite")"
"$D" export "$C" -o "$T/keep.sqlite" >"$T/o" 2>"$T/err"; rc=$?
check "export_replaces_on_success" "$rc:$(sqlite3 "$T/keep.sqlite" 'SELECT count(*) FROM events')" "0:$TOTAL"
check "export_no_temp_left" "$(ls -a "$T" | grep -c '^\.keep\.sqlite\.\|^\.g\.sqlite\.')" "0"
"$D" export "$C" -o - >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 2 ] && [ ! -e ./- ] && [ ! -s "$T/o" ] && grep -q 'standard output' "$T/err" &&
	pass "export_dash_refused" || fail "export_dash_refused" "rc=$rc $(cat "$T/err")"
"$D" export "$C" "$C" -o "$T/x2.sqlite" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "unexpected argument" "$T/err" && pass "export_extra_argument" ||
	fail "export_extra_argument" "rc=$rc $(cat "$T/err")"
# progress on a terminal's stderr while a long export runs, none on a pipe:
# the reports' line (scan_pool.c's in-order scan, as every export's, drawn
# from 0.2 s on), not a ticker of the export's own.  3M events: seconds
# under ASan.
"$G" -o "$T/long.dtc" -n 3000000 >/dev/null 2>&1
python3 - "$D" "$T/long.dtc" "$T/pty.sqlite" <<'PYEOF'
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen([sys.argv[1], "export", sys.argv[2], "-o", sys.argv[3]],
                     stderr=s, stdout=subprocess.DEVNULL)
os.close(s)
out = b""
while True:
    try:
        d = os.read(m, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
p.wait()
import re
line = re.search(rb"\rdtreport: reading: +[0-9]+% \([0-9]+ of 3000000 events\)", out)
print("PASS export_progress" if p.returncode == 0 and line and b"export: writing" not in out
      else "FAIL export_progress: rc %d, stderr %r" % (p.returncode, out[:300]))
p = subprocess.run([sys.argv[1], "export", sys.argv[2], "-o", sys.argv[3]],
                   stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
print("PASS export_progress_pipe_quiet" if p.returncode == 0 and not p.stderr
      else "FAIL export_progress_pipe_quiet: %r" % p.stderr[:200])
PYEOF
rm -f "$T/long.dtc" "$T/pty.sqlite"

# ---- write errors: status 1 and the reason, never a silent 0
if [ -w /dev/full ]; then
	for f in csv json table; do
		"$D" sql --$f "$C" "SELECT * FROM events" >/dev/full 2>"$T/err"; rc=$?
		[ $rc = 1 ] && grep -q '^dtreport sql: writing standard output' "$T/err" &&
			pass "dev_full_$f" || fail "dev_full_$f" "rc=$rc $(cat "$T/err")"
	done
	"$D" sql "$C" "SELECT 1" >/dev/full 2>"$T/err"; rc=$?
	[ $rc = 1 ] && pass "dev_full_small" || fail "dev_full_small" "rc=$rc $(cat "$T/err")"
	"$D" sql --schema >/dev/full 2>"$T/err"; rc=$?
	[ $rc = 1 ] && pass "dev_full_schema" || fail "dev_full_schema" "rc=$rc"
	"$D" export "$C" -o "$T/full.sqlite" >/dev/full 2>"$T/err"; rc=$?
	[ $rc = 1 ] && grep -q 'standard output' "$T/err" && pass "dev_full_export_report" ||
		fail "dev_full_export_report" "rc=$rc $(cat "$T/err")"
else
	fail "dev_full" "/dev/full is not writable"
fi
# sql output appended to its own capture is refused
cp "$C" "$T/app.dtc"
"$D" sql "$T/app.dtc" "SELECT 1" >>"$T/app.dtc" 2>"$T/err"; rc=$?
[ $rc = 1 ] && cmp -s "$C" "$T/app.dtc" && pass "sql_append_to_input" ||
	fail "sql_append_to_input" "rc=$rc $(cat "$T/err")"

# on a terminal with no query, dtreport says it reads SQL from standard input
python3 - "$D" "$C" <<'PYEOF'
import os, pty, subprocess, sys, time
m, s = pty.openpty()
p = subprocess.Popen([sys.argv[1], "sql", "--csv", sys.argv[2]], stdin=s, stdout=subprocess.PIPE,
                     stderr=s)
os.close(s)
time.sleep(1.0)
os.write(m, b"SELECT 6*7 AS x;\n")
time.sleep(0.3)
os.write(m, b"\x04")   # one Ctrl-D ends the input
try:
    out, _ = p.communicate(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    out, _ = p.communicate()
err = b""
try:
    while True:
        d = os.read(m, 4096)
        if not d:
            break
        err += d
except OSError:
    pass
ok = p.returncode == 0 and b"reading SQL from standard input" in err and b"42" in out
print("PASS stdin_tty_says_so" if ok else "FAIL stdin_tty_says_so: rc %r out %r err %r" % (p.returncode, out, err[:300]))
PYEOF

# ---- discovery and options
check "dot_tables" "$("$D" sql "$C" .tables | head -1)" "events  probes  probe_args  stacks  frames  processes  maps  counters  capture  spans  sched"
check "dot_tables_probe_views" "$("$D" sql "$C" .tables | tail -n +2 | tr '\n' ' ')" '"profile:hz:97" "syscall:openat:entry" "syscall:openat:return" "syscall:read:entry" "syscall:read:return" '
check "dot_schema" "$("$D" sql "$C" '.schema stacks' | tr '\n' ' ')" \
	"CREATE TABLE stacks(   id INTEGER,   kernel INTEGER,   depth INTEGER,   truncated INTEGER ); "
check "schema_option" "$("$D" sql --schema frames | head -2 | tr '\n' ' ')" "CREATE TABLE frames(   stack_id INTEGER, "
check "schema_all" "$("$D" sql --schema | grep -c '^CREATE TABLE')" "11"
check "schema_with_capture" "$("$D" sql --schema "$C" | grep -c '^CREATE TABLE')" "11"
"$D" sql --schema nosuch >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q 'no such table: nosuch' "$T/err" && pass "schema_unknown" ||
	fail "schema_unknown" "rc=$rc $(cat "$T/err")"
# every table of the schema answers a query with exactly those columns
for t in events probes probe_args stacks frames processes maps counters capture; do
	want=$("$D" sql --schema "$t" | sed -n 's/^  \([a-z0-9_"]*\) .*/\1/p' | tr -d '"' | tr '\n' ',' | sed 's/,$//')
	got=$("$D" sql --csv "$C" "SELECT * FROM $t LIMIT 0" | tr -d '\r')
	check "schema_matches_$t" "$got" "$want"
done
"$D" sql "$C" .nosuch >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q 'unknown command' "$T/err" && pass "dot_unknown" || fail "dot_unknown" "rc=$rc $(cat "$T/err")"
"$D" sql --tsv "$C" "SELECT 1" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 2 ] && [ ! -s "$T/o" ] && grep -q 'unknown option --tsv' "$T/err" && pass "unknown_option" ||
	fail "unknown_option" "rc=$rc $(cat "$T/o" "$T/err")"
"$D" sql "$C" --tsv "SELECT 1" >"$T/o" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q 'unknown option --tsv' "$T/err" && pass "unknown_option_after_file" ||
	fail "unknown_option_after_file" "rc=$rc $(cat "$T/o" "$T/err")"
check "option_after_file" "$("$D" sql "$C" --json "SELECT 1 AS a")" '[
{"a":1}
]'
# a query word that starts with '-' belongs to the query
check "negative_number_word" "$("$D" sql --csv "$C" SELECT -1 AS x | tr -d '\r' | tail -1)" "-1"
# ... also its first word: a query that is "-1", or begins with a -- comment
# ("-1" alone is no SQL: SQLite's error, status 1, not an unknown option)
"$D" sql --csv "$C" -1 >"$T/o" 2>"$T/err"; rc=$?
check "query_starts_with_dash" "$rc $(cat "$T/err")" '1 dtreport sql: near "-": syntax error'
"$D" sql --csv "$C" "-- how many events
SELECT count(*) FROM events" >"$T/o" 2>"$T/err"; rc=$?
check "query_starts_with_comment" "$rc $(tr -d '\r' <"$T/o" | tail -1)" "0 $TOTAL"
"$D" sql "$C" --csv -- "-- after the options
SELECT -2" >"$T/o" 2>"$T/err"; rc=$?
check "query_after_double_dash" "$rc $(tr -d '\r' <"$T/o" | tail -1)" "0 -2"
# several statements with --json: one JSON document
"$D" sql --json "$C" "SELECT 1 AS a; SELECT 'x' AS b, 2 AS c; CREATE TEMP TABLE t(x); SELECT count(*) AS n FROM t" >"$T/j" 2>"$T/err"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ok = d == [[{"a": 1}], [{"b": "x", "c": 2}], [{"n": 0}]]
print("PASS json_multi_statement" if ok else "FAIL json_multi_statement: %r" % d)' "$T/j" 2>&1 |
	sed 's/^Traceback.*/FAIL json_multi_statement: not one JSON document/' | grep -E '^(PASS|FAIL)'
check "json_single_unchanged" "$("$D" sql --json "$C" "SELECT 1 AS a;" | python3 -c 'import json,sys; print(json.load(sys.stdin))')" "[{'a': 1}]"

# ---- rows out of time order (as with several CPUs): pushdown and export
U=$T/unsorted.dtc
if "$B/tests/sql/mksql" "$U" "$T/uexp" 30000 unsorted 2>"$T/mk.err"; then
	check "unsorted_is_unsorted" "$(q "$U" 'SELECT count(*) > 0 FROM (SELECT ts, LAG(ts) OVER (ORDER BY rowid) AS p FROM events) WHERE ts < p')" "1"
	umin=$(q "$U" 'SELECT min(ts) FROM events'); umax=$(q "$U" 'SELECT max(ts) FROM events')
	for frac in "0 7" "33 34" "50 90"; do
		set -- $frac
		lo=$((umin + (umax - umin) * $1 / 100)); hi=$((umin + (umax - umin) * $2 / 100))
		check "unsorted_ts_between_$1" \
			"$(q "$U" "SELECT count(*), sum(tid) FROM events WHERE ts BETWEEN $lo AND $hi")" \
			"$(q "$U" "SELECT count(*), sum(tid) FROM events WHERE ts+0 BETWEEN $lo AND $hi")"
	done
	for dir in ASC DESC; do
		check "unsorted_order_by_ts_$dir" "$(q "$U" "SELECT ts FROM events WHERE pid != 101 ORDER BY ts $dir" | md5sum)" \
			"$(q "$U" "SELECT ts FROM events WHERE pid != 101 ORDER BY ts+0 $dir" | md5sum)"
	done
	check "plan_order_by_ts" "$(q "$U" 'EXPLAIN QUERY PLAN SELECT ts FROM events ORDER BY ts' | grep -c 'TEMP B-TREE')" "0"
	"$D" export "$U" -o "$T/u.sqlite" >"$T/o" 2>"$T/err"
	check "unsorted_export_integrity" "$(sqlite3 "$T/u.sqlite" 'PRAGMA integrity_check')" "ok"
	check "unsorted_export_ts_index" \
		"$(sqlite3 "$T/u.sqlite" "SELECT group_concat(rowid) FROM (SELECT rowid FROM events WHERE ts > $((umin + (umax - umin) / 2)) ORDER BY ts, rowid)" | md5sum)" \
		"$(sqlite3 "$T/u.sqlite" "SELECT group_concat(rowid) FROM (SELECT rowid FROM events WHERE ts+0 > $((umin + (umax - umin) / 2)) ORDER BY ts+0, rowid)" | md5sum)"
else
	fail "unsorted" "mksql: $(cat "$T/mk.err")"
fi

# ---- a dtgen capture: the vtab and the walker agree at scale
if [ -x "$G" ]; then
	if "$G" -o "$T/gen.dtc" -n 300000 --syscalls --block 8192 >"$T/gen.out" 2>&1; then
		"$B/tests/sql/count" "$T/gen.dtc" >"$T/gcount" 2>&1
		check "dtgen_total" "$(q "$T/gen.dtc" 'SELECT count(*) FROM events')" \
			"$(awk '$1=="total"{print $2}' "$T/gcount")"
		q "$T/gen.dtc" 'SELECT pid, count(*) FROM events GROUP BY pid' | tr ',' ' ' | sed 's/^/pid /' | sort >"$T/g.sql"
		grep '^pid ' "$T/gcount" | sort >"$T/g.walk"
		cmp -s "$T/g.sql" "$T/g.walk" && pass "dtgen_group_by_pid" || fail "dtgen_group_by_pid" "differs"
		gmin=$(q "$T/gen.dtc" 'SELECT min(ts) FROM events'); gmax=$(q "$T/gen.dtc" 'SELECT max(ts) FROM events')
		mid=$(( (gmin + gmax) / 2 ))
		check "dtgen_ts_range" "$(q "$T/gen.dtc" "SELECT count(*) FROM events WHERE ts BETWEEN $gmin AND $mid")" \
			"$("$B/tests/sql/count" "$T/gen.dtc" "$gmin" "$mid" | awk '$1=="total"{print $2}')"
	else
		fail "dtgen" "$G failed: $(head -3 "$T/gen.out")"
	fi
else
	fail "dtgen" "$G not built"
fi

# ---- the GROUP BY fast path (dtsql_groupby.c): what it rewrites gives what
# the statement as written gives (DT_SQL_NO_GROUPED=1), in every format, on
# captures with NULL comms and unnamed probes, several blocks, several
# captures; and it takes the shapes it should, and only those
GR=$B/tests/sql/grouped
N=$T/nulls.dtc
S=$T/small.dtc	# several captures read every column on the plain path: small ones
"$B/tests/sql/mksql" "$N" "$T/nexp" 20000 nulls 2>"$T/mk.err" &&
	"$B/tests/sql/mksql" "$S" "$T/sexp" 4000 nulls 2>"$T/mk.err" ||
	fail "grouped_setup" "mksql nulls: $(cat "$T/mk.err")"
check "grouped_nulls_capture" "$(q "$N" 'SELECT count(*) > 0 FROM events WHERE comm IS NULL') $(q "$N" 'SELECT count(*) > 0 FROM events WHERE probe_name IS NULL')" "1 1"
FASTQ=(
	'SELECT comm, count(*) FROM events GROUP BY comm'
	'SELECT comm, count(*) FROM events GROUP BY comm ORDER BY count(*) DESC, comm'
	'SELECT probe_name, count(*) AS n, min(pid), max(events.tid), count(DISTINCT pid), min(DISTINCT comm) FROM events GROUP BY probe_name ORDER BY n, probe_name'
	'SELECT pid, tid, comm, count(comm), count() FROM events WHERE comm IS NOT NULL AND pid IN (100, 101, 102) GROUP BY pid, tid, comm'
	"SELECT comm, count(*) FROM events WHERE comm LIKE 'b%' OR comm IS NULL GROUP BY comm HAVING count(*) > 10 ORDER BY 2 DESC LIMIT 3"
	'SELECT cpu, ctx, count(*) c FROM events GROUP BY cpu, ctx'
	'SELECT kstack, ustack, flags, count(*) FROM events WHERE probe = 3 GROUP BY kstack, ustack, flags'
	'SELECT upper(comm) AS u, count(*), max(probe_name) FROM events GROUP BY comm ORDER BY u DESC'
	"SELECT probe, probe_name, count(probe_name), count(DISTINCT comm) FROM events WHERE probe_name IS NULL OR probe_name GLOB 'sys*' GROUP BY probe, probe_name"
	'SELECT comm, count( * ) /* n */ * 2 + 1, length(comm) FROM events GROUP BY comm LIMIT 2 OFFSET 1'
	'SELECT tid, count(*) FROM events WHERE pid = 101 GROUP BY tid'
	"SELECT comm, count(*) FROM events WHERE comm IN ('bash', 'make', 'nope') GROUP BY comm"
	'SELECT count(*), comm FROM events GROUP BY comm ORDER BY 1'
	'SELECT cpu, count(*) FROM events GROUP BY cpu'
	'SELECT cpu, comm, count(*) FROM events WHERE comm IS NOT NULL GROUP BY cpu, comm'
	'SELECT pid, count(*) FROM events GROUP BY pid HAVING min(tid) > 1000 ORDER BY count(*) DESC'
	'SELECT comm, count(*) FROM events GROUP BY comm ORDER BY length(comm)'
	'SELECT events.comm, count(*) n FROM events WHERE pid = 999 GROUP BY comm'
	"SELECT comm, count(*) FROM events WHERE abs(pid) >= 0 AND probe_name LIKE '%return' GROUP BY comm"
	"SELECT comm, count(*) FROM events WHERE pid = '101' GROUP BY comm"
	'SELECT comm, count(*) FROM events WHERE pid > 100.5 GROUP BY comm'
	'SELECT pid, comm, count(*) FROM events GROUP BY pid, comm ORDER BY pid DESC'
	'SELECT comm, cpu, count(*) FROM events GROUP BY comm, cpu ORDER BY cpu'
	'SELECT comm FROM events GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE ts > 5 GROUP BY comm'
	'SELECT comm, count(*) FROM events GROUP BY 1'
	'SELECT comm AS c, count(*) FROM events GROUP BY c ORDER BY c DESC'
	'SELECT events.comm c, pid, count(*) FROM events GROUP BY 1, 2'
	'SELECT count(*) FROM events'
	"SELECT count(*), count(DISTINCT pid), min(comm), max(tid) FROM events WHERE comm LIKE 'b%'"
	'SELECT count(*) FROM events WHERE pid = 999'
	'SELECT count(comm), min(pid), count(DISTINCT tid) FROM events WHERE ts < 0'
	'SELECT count(*) + 1 AS n FROM events ORDER BY n'
	'SELECT count(*), comm FROM events WHERE CASE WHEN pid > 100 AND pid < 103 THEN 1 ELSE 0 END = 0 GROUP BY comm'
)
# tsq CAPTURE: ts ranges (integers) the table applies, within the capture
tsq() {
	local lo hi a b
	lo=$(q "$1" 'SELECT min(ts) FROM events'); hi=$(q "$1" 'SELECT max(ts) FROM events')
	a=$((lo + (hi - lo) / 3)); b=$((lo + (hi - lo) * 2 / 3))
	TSA=$a TSB=$b
	TSQ=(
		"SELECT comm, count(*) FROM events WHERE ts BETWEEN $a AND $b GROUP BY comm"
		"SELECT cpu, count(*) FROM events WHERE ts < $a GROUP BY cpu"
		"SELECT probe_name, count(*) FROM events WHERE $b <= events.ts AND comm IS NOT NULL GROUP BY probe_name"
		"SELECT pid, count(*) FROM events WHERE ts > $a AND pid > 100 AND ts <= $b GROUP BY pid"
		"SELECT comm, count(*) FROM events WHERE ts = $a GROUP BY comm"
		"SELECT comm, count(*) FROM events WHERE ts > $b AND ts < $a GROUP BY comm"
		"SELECT cpu, comm, count(*) FROM events WHERE ts >= -$a AND ts < $b GROUP BY cpu, comm"
	)
}
TSPLAINQ=(
	'SELECT comm, count(*) FROM events WHERE ts > 5 OR comm IS NULL GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE ts >= 1.5 GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE ts + 0 > 5 GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE ts NOT BETWEEN 1 AND 5 GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE ts != 5 GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE ts > 99999999999999999999 GROUP BY comm'
)
MULTIQ=(
	'SELECT capture, host, comm, count(*) FROM events GROUP BY capture, host, comm'
	"SELECT host, count(*), count(DISTINCT capture) FROM events WHERE capture < 'z' OR comm IS NULL GROUP BY host"
)
PLAINQ=(
	'SELECT comm, sum(arg0) FROM events GROUP BY comm'
	'SELECT comm, pid, count(*) FROM events GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE pid IN (SELECT pid FROM processes) GROUP BY comm'
	'SELECT comm, group_concat(DISTINCT pid) FROM events GROUP BY comm'
	'SELECT comm, count(*) FROM events GROUP BY comm COLLATE NOCASE'
	'SELECT comm FROM events WHERE pid = 100 LIMIT 3'
	'SELECT max(pid, tid) FROM events LIMIT 2'
	'SELECT comm, avg(DISTINCT tid) FROM events GROUP BY comm'
	'SELECT upper(comm) u, count(*) FROM events GROUP BY u'
	'SELECT comm, count(*) OVER () FROM events GROUP BY comm'
	'SELECT comm, count(arg0) FROM events GROUP BY comm'
	'SELECT DISTINCT comm, count(*) FROM events GROUP BY comm'
	'SELECT comm, count(*) AS pid FROM events GROUP BY comm ORDER BY pid'
	'SELECT e.comm, count(*) FROM events e GROUP BY e.comm'
	'SELECT comm, count(*) FROM events, probes WHERE probes.id = events.probe GROUP BY comm'
	'SELECT comm, max(ts) FROM events GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE abs(random()) >= 0 GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE comm > sym(1, 1) GROUP BY comm'
	'SELECT comm, count(nargs) FROM events GROUP BY comm'
	'SELECT comm, max(CASE WHEN tid % 2 = 0 THEN 1 ELSE 1.0 END), min(CASE WHEN tid % 2 = 1 THEN 1 ELSE 1.0 END) FROM events GROUP BY comm'
	'SELECT pid, max(comm COLLATE NOCASE) FROM events GROUP BY pid'
	'SELECT pid, max(upper(comm)) FROM events GROUP BY pid'
)
# classify NAME CAPTURES... -- WANT QUERIES...: each query fast or plain as WANT
classify() {
	local name=$1 caps=() want
	shift
	while [ "$1" != "--" ]; do caps+=("$1"); shift; done
	shift; want=$1; shift
	"$GR" "${caps[@]}" -- "$@" >"$T/gr.out" 2>"$T/gr.err"
	local bad
	bad=$(awk -F'\t' -v w="$want" '$1 != w { print $2 }' "$T/gr.out" | head -2)
	if [ "$(wc -l <"$T/gr.out")" != "$#" ]; then
		fail "$name" "grouped: $(head -2 "$T/gr.err")"
	elif [ -n "$bad" ]; then
		fail "$name" "not $want: $bad"
	else
		pass "$name"
	fi
}
# same NAME FMT CAPTURES... -- QUERIES...: one script of all, both paths
same() {
	local name=$1 fmt=$2 caps=() script=""
	shift 2
	while [ "$1" != "--" ]; do caps+=("$1"); shift; done
	shift
	for s in "$@"; do script+="$s;"$'\n'; done
	"$D" sql $fmt "${caps[@]}" "$script" >"$T/fast.out" 2>"$T/fast.err"
	local rf=$?
	DT_SQL_NO_GROUPED=1 "$D" sql $fmt "${caps[@]}" "$script" >"$T/plain.out" 2>"$T/plain.err"
	local rp=$?
	if [ $rf != 0 ] || [ $rp != 0 ]; then
		fail "$name" "rc $rf/$rp: $(head -2 "$T/fast.err" "$T/plain.err" | tr '\n' ' ')"
	elif ! cmp -s "$T/fast.out" "$T/plain.out"; then
		fail "$name" "$(diff "$T/fast.out" "$T/plain.out" | head -4 | tr '\n' ' ')"
	elif ! [ -s "$T/fast.out" ]; then
		fail "$name" "no output"
	else
		pass "$name"
	fi
	cat "$T/fast.err" "$T/plain.err" >>"$T/q.err"
}
GEN=$T/gen.dtc
[ -f "$GEN" ] || GEN=$C
tsq "$N"
classify "grouped_fast_shapes" "$N" -- fast "${FASTQ[@]}" "${TSQ[@]}"
classify "grouped_plain_shapes" "$N" -- plain "${PLAINQ[@]}" "${TSPLAINQ[@]}"
classify "grouped_fast_shapes_many" "$S" "$N" -- fast "${FASTQ[@]}" "${MULTIQ[@]}" "${TSQ[@]}"
classify "grouped_plain_shapes_many" "$S" "$N" -- plain "${PLAINQ[@]}" "${TSPLAINQ[@]}"
same "grouped_same_ts_csv" --csv "$N" -- "${TSQ[@]}" "${TSPLAINQ[@]}"
# Ctrl-C during a counting statement: the grouped scan is one xFilter call,
# where sqlite's progress handler never runs; the scan checks the flag
"$GR" --cancelled "$S" "$N" -- "${FASTQ[@]}" >"$T/gr.out" 2>"$T/gr.err"
bad=$(awk -F'\t' '$1 != "interrupted" { print $1 ": " $2 }' "$T/gr.out" | head -2)
if [ "$(wc -l <"$T/gr.out")" != ${#FASTQ[@]} ]; then
	fail "grouped_cancelled_interrupts" "grouped: $(head -2 "$T/gr.err")"
elif [ -n "$bad" ]; then
	fail "grouped_cancelled_interrupts" "$bad"
else
	pass "grouped_cancelled_interrupts"
fi
same "grouped_same_ts_many_csv" --csv "$S" "$N" -- "${TSQ[@]}"
# the range's counts against the walker (dtcap_iter over [a, b])
check "grouped_ts_between" "$(q "$N" "${TSQ[0]}" | awk -F, '{ s += $NF } END { print s }')" \
	"$("$B/tests/sql/count" "$N" "$TSA" "$TSB" | awk '$1 == "total" { print $2 }')"
tsq "$GEN"
same "grouped_same_ts_dtgen_csv" --csv "$GEN" -- "${TSQ[@]}"
same "grouped_same_csv" --csv "$C" -- "${FASTQ[@]}" "${PLAINQ[@]}"
same "grouped_same_nulls_csv" --csv "$N" -- "${FASTQ[@]}" "${PLAINQ[@]}"
same "grouped_same_nulls_json" --json "$N" -- "${FASTQ[@]}"
same "grouped_same_nulls_table" "" "$N" -- "${FASTQ[@]}"
same "grouped_same_dtgen_csv" --csv "$GEN" -- "${FASTQ[@]}"
same "grouped_same_many_csv" --csv "$S" "$N" -- "${FASTQ[@]}" "${MULTIQ[@]}" "${PLAINQ[@]:0:4}"
same "grouped_same_many_json" --json "$N" "$S" -- "${FASTQ[@]:0:6}" "${MULTIQ[@]}"
# the bench's statement: its counts add up to every event
q "$N" 'SELECT comm, count(*) FROM events GROUP BY comm' | sort >"$T/gq.sql"
check "grouped_total_nulls" "$(awk -F, '{ s += $NF } END { print s }' "$T/gq.sql")" "20000"
# a table or view of the user's named events is what the statement reads
same "grouped_shadow_temp" --csv "$N" -- 'CREATE TEMP TABLE events AS SELECT comm FROM main.events LIMIT 5' 'SELECT comm, count(*) FROM events GROUP BY comm'
check "grouped_shadow_temp_rows" "$(tail -n +2 "$T/fast.out" | tr -d '\r' | awk -F, '{ s += $NF } END { print s }')" "5"
# a real table in main cannot be made (SQL writes no file: doc/SQL.md),
# so a shadow of events is TEMP only, above
"$D" sql --csv "$N" "CREATE TABLE events(comm TEXT); SELECT comm, count(*) FROM events GROUP BY comm" \
	>"$T/fast.out" 2>"$T/fast.err"
rc=$?
[ $rc = 1 ] && [ ! -s "$T/fast.out" ] && grep -q "CREATE (not TEMP) main.events refused" "$T/fast.err" &&
	pass "grouped_shadow_main_refused" || fail "grouped_shadow_main_refused" "rc=$rc $(head -2 "$T/fast.err")"
same "grouped_shadow_view_many" --csv "$S" "$N" -- 'DROP VIEW events' 'CREATE TEMP VIEW events AS SELECT * FROM main.events__c0 WHERE pid = 100' 'SELECT comm, count(*) FROM events GROUP BY comm'

# ---- the scan engine's shapes (issue 26): weighted sum/total/avg and
# quantiles over the groups, scalar subqueries computed once, all giving
# what the statement as written gives
ENGQ=(
	'SELECT comm, sum(pid), total(tid), avg(cpu), count(*) FROM events GROUP BY comm ORDER BY comm'
	'SELECT count(*), sum(cpu) FROM events WHERE tid = (SELECT tid FROM events WHERE tid != 0 GROUP BY tid ORDER BY count(*) DESC, tid LIMIT 1)'
	'SELECT kstack, count(*) FROM events WHERE pid = (SELECT pid FROM events WHERE pid != 0 GROUP BY pid ORDER BY count(*) DESC, pid LIMIT 1) AND kstack != 0 GROUP BY kstack ORDER BY 2 DESC, 1 LIMIT 10'
	'SELECT probe_name, quantile_disc(tid, 0.99), quantile_cont(pid, 0.25), median(kstack) FROM events GROUP BY probe_name ORDER BY 1'
	'SELECT quantile_disc(cpu, 0), quantile_disc(cpu, 1), quantile_cont(tid, 0.5), median(tid) FROM events'
	'SELECT sum(pid), avg(pid), total(pid), median(pid) FROM events WHERE pid = 999'
	'SELECT comm, sum(ustack) FROM events WHERE pid = (SELECT max(pid) FROM events WHERE pid < 0) GROUP BY comm'
	'SELECT comm, avg(tid) FROM events GROUP BY comm HAVING sum(tid) > 10 ORDER BY avg(tid) DESC, comm'
	'SELECT pid, count(*) FROM events WHERE tid >= (SELECT min(tid) FROM events) AND pid != (SELECT count(*) FROM events) GROUP BY pid'
	'SELECT flags, sum(flags) * 2, avg(probe) + 1 FROM events GROUP BY 1'
	'SELECT (ts - 1000) / 1000000 AS sec, count(*) FROM events GROUP BY sec'
	'SELECT (ts - 5000000000) / 300000 AS b, comm, count(*), sum(cpu) FROM events GROUP BY 1, comm ORDER BY 1 DESC, 2 LIMIT 20'
	'SELECT (ts + 5) / 7000 AS b, count(*) FROM events WHERE pid > 3 GROUP BY (ts + 5) / 7000 HAVING count(*) > 1 ORDER BY b LIMIT 5'
	'SELECT (events.ts - -1000) / 100000000 * 2 b, cpu, count(*), median(tid) FROM events GROUP BY (events.ts - -1000) / 100000000, cpu'
	'SELECT (ts - 99999999999999) / 1000000000, count(*) FROM events GROUP BY 1'
	'SELECT median(retval), quantile_disc(retval, 0.99), quantile_cont(retval, 0.9), min(retval), max(retval) FROM events'
	"SELECT quantile_disc(retval, 0.99) FROM events WHERE probe_name LIKE 'syscall:%:return'"
	'SELECT retval, count(*), count(retval) FROM events GROUP BY retval ORDER BY 2 DESC, 1 LIMIT 20'
	'SELECT probe, (ts - 0) / 100000000, quantile_disc(retval, 0.5) FROM events WHERE retval IS NOT NULL GROUP BY 1, 2'
)
ENGPLAINQ=(
	'SELECT comm, sum(retval) FROM events GROUP BY comm'
	'SELECT comm, sum(comm) FROM events GROUP BY comm'
	'SELECT comm, sum(DISTINCT pid) FROM events GROUP BY comm'
	'SELECT comm, sum(pid + 1) FROM events GROUP BY comm'
	'SELECT comm, count(*) FROM events WHERE pid = (SELECT pid FROM events) GROUP BY comm'
	"SELECT comm, count(*) FROM events WHERE pid = (SELECT 'x') GROUP BY comm"
	'SELECT comm, count(*) FROM events WHERE pid = (SELECT 1.5) GROUP BY comm'
	'SELECT comm, quantile_disc(pid, tid) FROM events GROUP BY comm'
	'SELECT sum(retval), avg(retval) FROM events'
	'SELECT ts FROM events WHERE pid = (SELECT max(pid) FROM events) LIMIT 2'
	'SELECT 2 * (ts - 5) / 7, count(*) FROM events GROUP BY 2 * (ts - 5) / 7'
	"SELECT (ts - 5) / 7 || 'x', count(*) FROM events GROUP BY (ts - 5) / 7"
	'SELECT (ts - 5) / 7, count(*) FROM events GROUP BY comm'
	'SELECT (ts - 5) / 7, (ts - 6) / 7, count(*) FROM events GROUP BY 1, 2'
	'SELECT (ts - 5) / 1e9, count(*) FROM events GROUP BY 1'
	'SELECT (ts - 5) / 0, count(*) FROM events GROUP BY 1'
)
# joins with one small table by key: the events grouped first, then joined
ENGJOINQ=(
	'SELECT f.name, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack AND f.depth = 0 WHERE e.kstack != 0 GROUP BY f.name ORDER BY 2 DESC, 1 LIMIT 10'
	'SELECT f.name, e.comm, count(*), sum(e.cpu) FROM events AS e INNER JOIN frames AS f ON f.stack_id = e.ustack GROUP BY f.name, e.comm ORDER BY 3 DESC, 1, 2 LIMIT 20'
	'SELECT f.name n, count(f.depth), median(e.tid) FROM events e JOIN frames f ON f.stack_id = e.kstack GROUP BY n ORDER BY n'
	'SELECT p.name, count(*) FROM events e JOIN probes p ON p.id = e.probe GROUP BY p.name'
	'SELECT f.name, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack WHERE e.pid = (SELECT max(pid) FROM events) GROUP BY 1'
)
ENGJOINPLAINQ=(
	'SELECT f.name, f.depth, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack GROUP BY f.name'
	'SELECT name, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack GROUP BY name'
	'SELECT f.name, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack JOIN stacks s ON s.id = e.kstack GROUP BY f.name'
	'SELECT f.name, count(*) FROM events e LEFT JOIN frames f ON f.stack_id = e.kstack GROUP BY f.name'
	'SELECT f.name, count(*) FROM events e JOIN frames f ON f.stack_id = e.ts GROUP BY f.name'
)
classify "engine_join_fast_shapes" "$N" -- fast "${ENGJOINQ[@]}"
classify "engine_join_plain_shapes" "$N" -- plain "${ENGJOINPLAINQ[@]}"
classify "engine_join_plain_many" "$S" "$N" -- plain "${ENGJOINQ[@]:0:2}"
same "engine_join_same_nulls_csv" --csv "$N" -- "${ENGJOINQ[@]}" "${ENGJOINPLAINQ[@]:0:2}"
same "engine_join_same_dtgen_csv" --csv "$GEN" -- "${ENGJOINQ[@]}"
classify "engine_fast_shapes" "$N" -- fast "${ENGQ[@]}"
classify "engine_plain_shapes" "$N" -- plain "${ENGPLAINQ[@]}"
classify "engine_fast_shapes_many" "$S" "$N" -- fast "${ENGQ[@]}"
same "engine_same_nulls_csv" --csv "$N" -- "${ENGQ[@]}" "${ENGPLAINQ[@]:0:4}"
same "engine_same_nulls_json" --json "$N" -- "${ENGQ[@]}"
same "engine_same_dtgen_csv" --csv "$GEN" -- "${ENGQ[@]}"
same "engine_same_many_csv" --csv "$S" "$N" -- "${ENGQ[@]}"
# filters on the per-context columns (tid, kstack, ustack, flags; pid's
# ranges): given to events_grouped (its idxStr codes, dtsql_events.c: t/T
# tid, s/S kstack, u/U ustack sets, the xr_codes characters ranges),
# evaluated once per context of a block, and the same rows as the plain plan
TOPTID='(SELECT tid FROM events WHERE tid != 0 GROUP BY tid ORDER BY count(*) DESC, tid LIMIT 1)'
ENGCTXQ=(
	"SELECT count(*), sum(cpu) FROM events WHERE tid = $TOPTID"
	"SELECT comm, count(*) FROM events WHERE tid IN (1001, 1003, 99) GROUP BY comm"
	'SELECT pid, count(*), median(cpu) FROM events WHERE tid > 1002 AND tid <= 1006 GROUP BY pid'
	'SELECT kstack, count(*) FROM events WHERE kstack BETWEEN 1 AND 100000 GROUP BY 1 ORDER BY 2 DESC, 1'
	'SELECT ustack, comm, count(*) FROM events WHERE ustack IN (0, 1, 2, 3) GROUP BY 1, 2'
	'SELECT flags, count(*) FROM events WHERE flags >= 1 AND pid < 102 GROUP BY 1'
	"SELECT count(*) FROM events WHERE pid < 101 OR tid = $TOPTID"
	'SELECT count(*) FROM events WHERE tid = 1001 OR kstack IN (1, 2) OR flags > 0'
	'SELECT comm, count(*) FROM events WHERE (tid = 1001 OR tid > 1005) AND pid >= 100 GROUP BY comm'
	'SELECT count(*) FROM events WHERE tid > 4294967295 OR tid < 0 OR tid <= -5'
	"SELECT count(*), sum(cpu) FROM events WHERE tid >= 1.5 AND tid < '1004' AND tid = tid"
	'SELECT probe_name, quantile_disc(retval, 0.5) FROM events WHERE tid BETWEEN 1000 AND 1003 GROUP BY 1'
	'SELECT f.name, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack AND f.depth = 0 WHERE e.kstack IN (1, 2, 3) AND e.tid != 1002 GROUP BY f.name ORDER BY 2 DESC, 1'
)
classify "engine_ctx_fast_shapes" "$N" -- fast "${ENGCTXQ[@]}"
same "engine_ctx_same_nulls_csv" --csv "$N" -- "${ENGCTXQ[@]}"
same "engine_ctx_same_dtgen_csv" --csv "$GEN" -- "${ENGCTXQ[@]}"
same "engine_ctx_same_many_csv" --csv "$S" "$N" -- "${ENGCTXQ[@]}"

# ---- the grouped scans on N threads (scan_pool.c's workers, issue 26):
# every grouped shape above, on dtgen's capture of many blocks, gives the
# same bytes with --threads 1, 2 and 7 (before the capture, and as
# --threads=N after it), and the rows of the statement as written
tsq "$GEN"
THRQ=("${FASTQ[@]}" "${ENGQ[@]}" "${ENGCTXQ[@]}" "${ENGJOINQ[@]}" "${TSQ[@]}")
classify "threads_shapes_are_grouped" "$GEN" -- fast "${THRQ[@]}"
thr_script=""
for s in "${THRQ[@]}"; do thr_script+="$s;"$'\n'; done
DT_SQL_NO_GROUPED=1 "$D" sql --csv "$GEN" "$thr_script" >"$T/thr.plain" 2>"$T/thr.plain.err"
for n in 1 2 7; do
	"$D" sql --csv --threads $n "$GEN" "$thr_script" >"$T/thr.$n" 2>"$T/thr.$n.err"
	rc=$?
	"$D" sql --csv "$GEN" --threads=$n "$thr_script" >"$T/thr.$n.after" 2>>"$T/thr.$n.err"
	rca=$?
	if [ $rc != 0 ] || [ $rca != 0 ] || san "$T/thr.$n.err" || ! [ -s "$T/thr.$n" ]; then
		fail "threads_$n" "rc $rc/$rca: $(head -c 300 "$T/thr.$n.err")"
	elif ! cmp -s "$T/thr.$n" "$T/thr.plain"; then
		fail "threads_$n" "not the rows as written: $(diff "$T/thr.$n" "$T/thr.plain" | head -4 | tr '\n' ' ')"
	elif ! cmp -s "$T/thr.$n" "$T/thr.$n.after"; then
		fail "threads_$n" "--threads=$n after the capture answers otherwise"
	else
		pass "threads_$n"
	fi
done
# ---- filters by context read a block's contexts first (the filters'
# columns alone) and skip the blocks none of whose contexts pass, unread
# (dtsql_gscan.c two_read_block).  mksql tidblocks: thread 5000 + k lives
# in block k alone (1000 events a block, 20 blocks): the first, the last,
# a middle one, two neighbours, ranges whose bounds are those threads, a
# thread of no block.  A block skipped wrongly, or a second read paired
# with the wrong contexts, changes the counts: each statement is compared
# with the plain plan (DT_SQL_NO_GROUPED=1, sqlite's row loop reading
# every row), on 1, 2 and 7 threads and with the one-read path
# (DT_SQL_ONE_READ=1).
TB=$T/tidblocks.dtc
if ! "$B/tests/sql/mksql" "$TB" "$T/tbexp" 20000 tidblocks 2>"$T/mk.err"; then
	fail "tidblocks_setup" "mksql tidblocks: $(cat "$T/mk.err")"
else
	TBQ=(
		'SELECT count(*), sum(cpu) FROM events WHERE tid = 5000'
		'SELECT count(*), sum(cpu) FROM events WHERE tid = 5019'
		'SELECT count(*), sum(cpu) FROM events WHERE tid = 5007'
		'SELECT count(*), sum(cpu) FROM events WHERE tid = 5020'
		'SELECT tid, cpu, count(*) FROM events WHERE tid IN (5007, 5008) GROUP BY 1, 2'
		'SELECT comm, count(*) FROM events WHERE tid BETWEEN 5007 AND 5007 GROUP BY comm'
		'SELECT cpu, count(*) FROM events WHERE tid >= 5019 GROUP BY cpu'
		'SELECT cpu, count(*) FROM events WHERE tid <= 5000 AND tid >= 1007 GROUP BY cpu'
		'SELECT pid, count(*) FROM events WHERE tid > 5018 OR tid < 1001 GROUP BY pid'
		'SELECT probe_name, count(*) FROM events WHERE tid = 5012 AND pid < 1000 GROUP BY 1'
		'SELECT (ts - 5000000000) / 1000000 AS ms, count(*) FROM events WHERE tid = 5003 GROUP BY ms'
		'SELECT probe_name, quantile_disc(retval, 0.5), count(*) FROM events WHERE tid IN (5000, 5019, 1003) GROUP BY 1'
		'SELECT kstack, count(*) FROM events WHERE tid = 5010 AND kstack != 0 GROUP BY kstack'
		'SELECT probe_name, count(*) FROM events WHERE probe IN (2, 16777216) AND tid >= 5010 GROUP BY 1'
		'SELECT comm, count(*) FROM events WHERE probe IN (7, 4294967295) GROUP BY comm'
	)
	# the layout the test relies on: each such thread in one block, and
	# the first and last blocks' among them
	lay=$("$D" sql --csv "$TB" 'SELECT count(DISTINCT tid), min(tid), max(tid), max(n) FROM (SELECT tid, count(DISTINCT rowid / 1000) AS n FROM events WHERE tid >= 5000 GROUP BY tid)' 2>&1 | tail -1 | tr -d '\r')
	if [ "$lay" != "20,5000,5019,1" ]; then
		fail "tidblocks_layout" "threads 5000.. not one block each: $lay"
	else
		pass "tidblocks_layout"
	fi
	classify "tidblocks_shapes_are_grouped" "$TB" -- fast "${TBQ[@]}"
	tb_script=""
	for s in "${TBQ[@]}"; do tb_script+="$s;"$'\n'; done
	DT_SQL_NO_GROUPED=1 "$D" sql --csv "$TB" "$tb_script" >"$T/tb.plain" 2>"$T/tb.plain.err"
	if ! grep -q '^[1-9][0-9]*,' "$T/tb.plain" || [ "$(grep -c . "$T/tb.plain")" -lt 20 ]; then
		fail "tidblocks_plain" "the plain plan found no thread's events: $(head -c 300 "$T/tb.plain" "$T/tb.plain.err")"
	fi
	for n in 1 2 7 one; do
		if [ $n = one ]; then
			DT_SQL_ONE_READ=1 "$D" sql --csv --threads 2 "$TB" "$tb_script" >"$T/tb.$n" 2>"$T/tb.$n.err"
		else
			"$D" sql --csv --threads $n "$TB" "$tb_script" >"$T/tb.$n" 2>"$T/tb.$n.err"
		fi
		rc=$?
		if [ $rc != 0 ] || san "$T/tb.$n.err" || ! [ -s "$T/tb.$n" ]; then
			fail "tidblocks_threads_$n" "rc $rc: $(head -c 300 "$T/tb.$n.err")"
		elif ! cmp -s "$T/tb.$n" "$T/tb.plain"; then
			fail "tidblocks_threads_$n" "not the plain plan's rows: $(diff "$T/tb.$n" "$T/tb.plain" | head -4 | tr '\n' ' ')"
		else
			pass "tidblocks_threads_$n"
		fi
	done
fi
"$D" sql --csv --threads 0 "$GEN" 'SELECT 1' >"$T/thr.bad" 2>"$T/thr.bad.err"
rc=$?
"$D" sql --csv "$GEN" --threads 3 'SELECT 1' >"$T/thr.bad2" 2>"$T/thr.bad2.err"
rc2=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && ! [ -s "$T/thr.bad" ] && ! [ -s "$T/thr.bad2" ] &&
	grep -q "not a number of threads" "$T/thr.bad.err" && grep -q -- "--threads=N" "$T/thr.bad2.err" &&
	pass "threads_bad_usage" || fail "threads_bad_usage" "rc $rc/$rc2: $(head -c 200 "$T/thr.bad.err" "$T/thr.bad2.err")"
# the same under TSan: the workers share the reader and the cursor's
# filters, each counts into its own groups
if [ -x "${SQLTSAN:-}" ]; then
	for n in 2 7; do
		TSAN_OPTIONS=halt_on_error=1 "$SQLTSAN" "$GEN" $n "${ENGQ[@]:0:6}" "${ENGCTXQ[@]:0:4}" \
			"${TSQ[@]:0:2}" "${FASTQ[@]:0:6}" >"$T/tsan$n.out" 2>"$T/tsan$n.err"
		rc=$?
		cat "$T/tsan$n.out"
		if [ $rc -ne 0 ] || grep -q ThreadSanitizer "$T/tsan$n.err" || ! grep -q '^PASS' "$T/tsan$n.out"; then
			fail "tsan_$n" "status $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$T/tsan$n.err") $(head -c 200 "$T/tsan$n.err")"
		fi
	done
else
	fail "tsan" "SQLTSAN (the TSan build of tests/sql/sqltsan.c) not given"
fi
# the plans: each filter reaches events_grouped as its code
"$GR" --plan "$N" -- "SELECT count(*), sum(cpu) FROM events WHERE tid = 1003" \
	'SELECT pid, count(*) FROM events WHERE tid > 5 AND tid <= 1552 AND kstack IN (1, 2) GROUP BY pid' \
	'SELECT count(*) FROM events WHERE flags >= 1 AND pid < 7 AND ustack = 3' \
	>"$T/plan.out" 2>"$T/plan.err"
got=$(awk -F'\t' '$1 == "plan" && /events_grouped/ { sub(/.*INDEX [0-9]*:/, ""); print }' "$T/plan.out" | tr '\n' ' ')
check "engine_ctx_pushed_down" "$got" "t 47S M2u "
# a join on a pushed-down column with a small table still reads the
# capture once, outside: not once per row of the table (kstack = f.stack_id
# given to events, the 's' code)
DT_SQL_NO_GROUPED=1 "$D" sql --csv "$N" "EXPLAIN QUERY PLAN SELECT f.name, count(*) FROM events e JOIN (SELECT * FROM frames LIMIT 3) f ON f.stack_id = e.kstack GROUP BY 1" >"$T/jp.out" 2>&1
got=$(grep -c 'SCAN e VIRTUAL TABLE INDEX [0-9]*:[^s]*$' "$T/jp.out")
check "engine_ctx_join_scans_once" "$got" "1"
# the plain path's row filter: the same rows as with the filters hidden
# from the table (unary + makes a term no constraint of it)
for fq in 'tid = 1003' 'tid IN (1001, 1004)' 'tid > 1002 AND tid <= 1005' 'kstack BETWEEN 1 AND 3' \
	  'ustack = 1' 'flags > 0 AND pid <= 101' 'tid < 0'; do
	hid=$(echo "$fq" | sed -E 's/(tid|kstack|ustack|flags|pid) /+\1 /g')
	a=$(DT_SQL_NO_GROUPED=1 q "$N" "SELECT ts, cpu, tid, kstack FROM events WHERE $fq" | md5sum)
	b=$(DT_SQL_NO_GROUPED=1 q "$N" "SELECT ts, cpu, tid, kstack FROM events WHERE $hid" | md5sum)
	[ "$a" = "$b" ] || { fail "engine_ctx_rows_plain" "$fq"; break; }
done
[ "$a" = "$b" ] && pass "engine_ctx_rows_plain"
# return values over the whole 64 bits and more keys than the dense
# table of retvals takes: the grouped counts are the plain plan's
W=$T/wide.dtc
if "$B/tests/sql/mksql" "$W" "$T/wexp" 40000 wide 2>"$T/mk.err"; then
	same "engine_retval_wide_csv" --csv "$W" -- \
		'SELECT retval, count(*), count(retval) FROM events GROUP BY retval ORDER BY 1' \
		'SELECT tid, retval, count(*) FROM events GROUP BY 1, 2 ORDER BY 1, 2' \
		'SELECT quantile_disc(retval, 0.99), quantile_disc(retval, 0.01), median(retval), quantile_cont(retval, 0.3) FROM events' \
		"SELECT probe_name, quantile_disc(retval, 0.9) FROM events WHERE probe_name LIKE '%return%' GROUP BY 1" \
		'SELECT comm, quantile_disc(retval, 0.5), count(*) FROM events WHERE tid > 1500 GROUP BY comm'
	check "engine_retval_wide_keys" "$(q "$W" 'SELECT count(*) > 512 FROM (SELECT DISTINCT tid FROM events WHERE retval IS NOT NULL)') $(q "$W" 'SELECT count(*) FROM events WHERE retval IN (-4097, 4096, -9223372036854775808, 9223372036854775807)' | awk '{ print ($1 > 0) }')" "1 1"
else
	fail "engine_retval_wide_csv" "mksql wide: $(cat "$T/mk.err")"
fi
# the quantiles' definition (doc/SQL.md), DuckDB's: position ceil(q * n) - 1
# of the sorted non-NULL values; _cont interpolates at q * (n - 1)
check "quantile_values" "$(q "$C" 'SELECT quantile_disc(column1, 0.5), quantile_disc(column1, 0.99), quantile_cont(column1, 0.5), median(column1), quantile_cont(column1, 0.1), quantile_disc(column1, 0) FROM (VALUES (4), (1), (NULL), (3), (2), (10))')" "3,10,3.0,3.0,1.4,1"
check "quantile_empty_null" "$(q "$C" 'SELECT quantile_disc(x, 0.5) IS NULL, median(x) IS NULL FROM (SELECT 1 AS x WHERE 0)')" "1,1"
"$D" sql --csv "$C" "SELECT quantile_disc(column1, 2) FROM (VALUES (1))" >"$T/qe.out" 2>"$T/qe.err"
rc=$?
[ $rc = 1 ] && grep -q "fraction must be a number from 0 to 1" "$T/qe.err" &&
	pass "quantile_bad_fraction" || fail "quantile_bad_fraction" "rc=$rc $(cat "$T/qe.err")"
"$D" sql --csv "$C" "SELECT median(column1) FROM (VALUES ('a'))" >"$T/qe.out" 2>"$T/qe.err"
rc=$?
[ $rc = 1 ] && grep -q "values must be numbers" "$T/qe.err" &&
	pass "quantile_text_refused" || fail "quantile_text_refused" "rc=$rc $(cat "$T/qe.err")"
# the weighted sum overflows where SQLite's sum does, with its message
"$D" sql --csv "$C" "SELECT sum(column1) FROM (VALUES (4611686018427387904), (4611686018427387904))" >"$T/ov1.out" 2>"$T/ov1.err"
r1=$?
"$D" sql --csv "$C" "SELECT _dt_wsum(4611686018427387904, 2)" >"$T/ov2.out" 2>"$T/ov2.err"
r2=$?
[ $r1 = 1 ] && [ $r2 = 1 ] && grep -q "integer overflow" "$T/ov1.err" && grep -q "integer overflow" "$T/ov2.err" &&
	pass "engine_sum_overflow" || fail "engine_sum_overflow" "rc $r1/$r2: $(cat "$T/ov1.err" "$T/ov2.err")"
check "engine_wsum_edge" "$(q "$C" 'SELECT _dt_wsum(4611686018427387903, 2), _dt_wsum(-4611686018427387904, 2), _dt_wavg(3, 2), _dt_wtotal(NULL, 5) FROM (SELECT 1)')" "9223372036854775806,-9223372036854775808,3.0,0.0"

# ---- arguments by name: a view per probe (issue 23 item 1)
A=$T/args.dtc
if "$B/tests/sql/mkargs" "$A" 2>"$T/mkargs.err"; then
	SW='"tracepoint:sched:sched_switch"'
	check "view_prev_pid_is_arg2" "$(q "$A" "SELECT prev_pid, arg2 FROM $SW v JOIN events e USING (ts) WHERE e.probe = 1 ORDER BY ts" | tr '\n' ' ')" "4242,4242 7,7 "
	# a probe whose name differs only in case (SQL's names do not): one view
	# with both probes' rows, each decoded by its own layout
	check "view_names_fold_case" "$(q "$A" 'SELECT prev_pid, next_comm IS NULL FROM "TRACEPOINT:SCHED:SCHED_SWITCH" ORDER BY ts' | tr '\n' ' ')" "4242,0 7,0 99,1 "
	check "view_next_pid_signed" "$(q "$A" "SELECT next_pid FROM $SW WHERE next_pid IS NOT NULL ORDER BY ts" | tr '\n' ' ')" "0 -1 "
	check "view_char16_text" "$(q "$A" "SELECT typeof(next_comm), next_comm FROM $SW WHERE next_comm IS NOT NULL ORDER BY ts" | tr '\n' ' ')" "text,swapper/0 text,kworker/0:1 "
	# cut mid-character by the kernel: valid UTF-8 out, the stray byte as U+FFFD
	check "view_char16_invalid_utf8" "$(q "$A" "SELECT hex(prev_comm) FROM $SW ORDER BY ts LIMIT 1")" \
		"$(printf 'sauvegarde-don' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)EFBFBD"
	check "view_char16_csv_quoted" "$(q "$A" "SELECT prev_comm FROM $SW WHERE prev_pid = 7")" '"a,b"'
	check "view_at_fdcwd" "$(q "$A" 'SELECT dfd, e.arg0 FROM "syscall:openat:entry" JOIN events e USING (ts)')" "-100,4294967196"
	check "view_umode_t" "$(q "$A" 'SELECT mode FROM "syscall:openat:entry"')" "420"
	check "view_errno_name" "$(q "$A" 'SELECT retval, errno, errno_name FROM "syscall:openat:return" ORDER BY ts' | tr '\n' ' ')" "-2,2,ENOENT 3,0, "
	check "errno_name_function" "$(q "$A" 'SELECT errno_name(13), errno_name(-2), errno_name(0) IS NULL, errno_name(100000) IS NULL')" "EACCES,ENOENT,1,1"
	# a field named as an event column keeps the name; the event's becomes event_NAME
	check "view_field_shadows_event" "$(q "$A" 'SELECT pid, event_pid, comm, event_comm FROM "tracepoint:sched:sched_wakeup"')" "555,100,woken,argtest"
	check "view_count_is_probe_count" "$(q "$A" "SELECT (SELECT count(*) FROM $SW), (SELECT count(*) FROM events WHERE probe_name LIKE 'tracepoint:sched:sched_switch')")" "3,3"
	"$D" sql "$A" .tables >"$T/tables.out" 2>>"$T/q.err"
	grep -qx "$SW" "$T/tables.out" && grep -qx '"syscall:openat:return"' "$T/tables.out" &&
		pass "tables_lists_probe_views" || fail "tables_lists_probe_views" "$(tr '\n' ' ' <"$T/tables.out")"
	# several captures: one view over them, with capture and host
	cp "$A" "$T/args2.dtc"
	check "view_many_captures" "$("$D" sql --csv "$A" "$T/args2.dtc" "SELECT capture, host, prev_pid FROM $SW WHERE prev_comm IS NOT NULL ORDER BY capture, ts" 2>>"$T/q.err" | tail -n +2 | tr '\n' ' ')" \
		"args,mkargs,4242 args,mkargs,7 args2,mkargs,4242 args2,mkargs,7 "
else
	fail "mkargs" "$(cat "$T/mkargs.err")"
fi

# ---- options anywhere; CSV lines end in LF (issue 23 item 14)
"$D" sql "$C" 'SELECT 1 AS a' --json >"$T/o14.out" 2>"$T/o14.err"
check "option_after_query" "$(tr -d '\n' <"$T/o14.out")" '[{"a":1}]'
"$D" sql "$C" 'SELECT 1 AS a' --bogus >"$T/o14.out" 2>"$T/o14.err"
rc=$?
[ "$rc" = 2 ] && grep -q 'unknown option --bogus' "$T/o14.err" && [ ! -s "$T/o14.out" ] &&
	pass "unknown_option_after_query" || fail "unknown_option_after_query" "status $rc: $(cat "$T/o14.err" "$T/o14.out" | head -3)"
"$D" sql --table "$C" SELECT 2 AS b --csv >"$T/o14.out" 2>"$T/o14.err"
check "option_after_query_words" "$(cat "$T/o14.out")" "b
2"
"$D" sql --csv "$C" -- SELECT -3 AS c >"$T/o14.out" 2>"$T/o14.err"
check "double_dash_ends_options" "$(cat "$T/o14.out")" "c
-3"
"$D" sql --csv "$C" "SELECT 'x' AS a, 'y,z' AS b UNION ALL SELECT 'line
two', NULL" >"$T/lf.out" 2>"$T/lf.err"
check "csv_lf_line_ends" "$(od -An -c "$T/lf.out" | tr -s ' \n' ' ')" \
	"$(printf 'a,b\nx,"y,z"\n"line\ntwo",\n' | od -An -c | tr -s ' \n' ' ')"
grep -q $'\r' "$T/lf.out" && fail "csv_no_cr" "a CR in the CSV" || pass "csv_no_cr"

# ---- statements that are not grouped, read ahead on the pool (issue 26)
. "$(dirname "$0")/rows.sh"

# nothing above may have tripped a sanitizer
san "$T"/err "$T"/*.err && fail "sanitizers" "$(grep -h -m3 -E 'Sanitizer|runtime error' "$T"/err "$T"/*.err)" || pass "sanitizers"
exit 0
