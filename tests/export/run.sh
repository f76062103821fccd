#!/bin/bash
# tests/export/run.sh - dtreport export --format parquet|pprof|chrome, each
# output read back by independent readers (DuckDB's engine and hyparquet
# for Parquet, pprof-format for pprof, a Python reader for Chrome JSON)
# and compared with `dtreport sql` / `dtreport flame --folded` on the same
# captures.  The readers come from npm, installed into $B/npm; if that
# fails the suite FAILs (never skips).
# Env: B (build dir), DTREPORT (binary under test), DTGEN.
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
G=${DTGEN:-$B/bin/dtgen}
HERE=$(cd "$(dirname "$0")" && pwd)
export NPM=$(cd "$B" && pwd)/npm
T=$(mktemp -d "${TMPDIR:-/tmp}/dtexport.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict
check() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$(echo "$2" | head -c 300)' want '$(echo "$3" | head -c 300)'"; fi
}
# same NAME FILE1 FILE2
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$(diff "$2" "$3" | head -4 | tr '\n' ' ' | head -c 400)"; fi
}
# q CAP SQL: dtreport's CSV without header, CRs stripped
q() { "$D" sql --csv "$1" "$2" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2; }
duck() { node "$HERE/duck.mjs" "$@" 2>>"$T/duck.err"; }

for tool in "$D" "$G" node python3; do
	command -v "$tool" >/dev/null 2>&1 || { fail setup "missing $tool"; exit 0; }
done
if ! why=$("$HERE/npm.sh" "$NPM"); then
	fail npm_readers "$why"
	exit 0
fi
pass npm_readers

# ---------------------------------------------------------------- parquet
C=$T/one.dtc
"$G" -o "$C" -n 60000 -s 7 --syscalls --block 4096 || { fail setup "dtgen"; exit 0; }
DS=$T/ds1
# small row groups, so statistics per row group are exercised
DTREPORT_PARQUET_ROWS=7000 "$D" export --format parquet -o "$DS" "$C" >"$T/exp.out" 2>"$T/exp.err"
check "parquet_export_status" "$?" "0"
san "$T/exp.err" && fail "parquet_export_sanitizer" "$(head -3 "$T/exp.err")"
HOST=$(q "$C" 'SELECT hostname FROM capture')
EV="read_parquet('$DS/events/**/*.parquet', hive_partitioning=true, hive_types_autocast=false)"
for t in events probes probe_args stacks frames processes maps counters capture; do
	f=$DS/$t/host=$HOST/capture=one/part-0.parquet
	[ -f "$f" ] && pass "parquet_layout_$t" || fail "parquet_layout_$t" "no $f"
done
check "parquet_marker" "$(cat "$DS/_dt_dataset" 2>/dev/null)" "dt parquet dataset 1"
check "parquet_no_tmp_left" "$(ls -A "$DS" | grep -c '^\.tmp')" "0"

# DuckDB against dtreport sql: counts, sums, group-bys
for sqlq in \
	"SELECT count(*), sum(pid), sum(tid), sum(cpu), min(ts), max(ts) FROM events" \
	"SELECT count(retval), sum(retval), count(errno), sum(errno), sum(nargs), sum(flags) FROM events" \
	"SELECT comm, count(*) FROM events GROUP BY comm ORDER BY comm" \
	"SELECT probe_name, count(*), sum(kstack), sum(ustack) FROM events GROUP BY probe_name ORDER BY probe_name" \
	"SELECT pid, tid, count(*) FROM events GROUP BY pid, tid ORDER BY pid, tid" \
	"SELECT count(*) FROM events WHERE comm IS NULL" \
	"SELECT cpu, count(*), min(ts), max(ts) FROM events WHERE ts BETWEEN 1000100000000 AND 1000200000000 GROUP BY cpu ORDER BY cpu"; do
	name=$(echo "$sqlq" | tr -cs 'a-z' '_' | cut -c1-60)
	dq=$(echo "$sqlq" | sed "s|FROM events|FROM $EV|")
	check "duckdb_$name" "$(duck "$dq")" "$(q "$C" "$sqlq")"
done
check "duckdb_args_sum" "$(duck "SELECT $(for i in 0 1 2 3 4 5 6 7 8 9; do printf 'sum(arg%d)::VARCHAR%s' $i "$([ $i = 9 ] || echo ', ')"; done) FROM $EV")" \
	"$(python3 - "$C" "$D" <<'PY'
import csv, subprocess, sys
out = subprocess.run([sys.argv[2], "sql", "--csv", sys.argv[1], "SELECT " + ",".join("arg%d" % i for i in range(10)) + " FROM events"], capture_output=True, text=True).stdout
s = [0] * 10
for r in list(csv.reader(out.splitlines()))[1:]:
    for i in range(10):
        s[i] += int(r[i])
print(",".join(map(str, s)))
PY
)"
check "duckdb_frames" "$(duck "SELECT count(*), count(DISTINCT stack_id), sum(depth) FROM read_parquet('$DS/frames/**/*.parquet')")" \
	"$(q "$C" 'SELECT count(*), count(DISTINCT stack_id), sum(depth) FROM frames')"
check "duckdb_hive_columns" "$(duck "SELECT DISTINCT host, capture FROM $EV")" "$HOST,one"
# statistics: ts min/max per row group as DuckDB reads them from the footer
check "duckdb_rowgroups" "$(duck "SELECT count(*) > 5 FROM parquet_metadata('$DS/events/*/*/part-0.parquet') WHERE path_in_schema = 'ts'")" "true"
check "duckdb_stats_ts" "$(duck "SELECT min(stats_min_value::BIGINT), max(stats_max_value::BIGINT) FROM parquet_metadata('$DS/events/*/*/part-0.parquet') WHERE path_in_schema = 'ts'")" \
	"$(q "$C" 'SELECT min(ts), max(ts) FROM events')"
check "duckdb_encodings" "$(duck "SELECT DISTINCT compression FROM parquet_metadata('$DS/events/*/*/part-0.parquet')")" "ZSTD"
check "duckdb_dictionary" "$(duck "SELECT DISTINCT encodings FROM parquet_metadata('$DS/events/*/*/part-0.parquet') WHERE path_in_schema IN ('comm', 'probe_name')")" \
	"\"PLAIN, RLE_DICTIONARY, RLE\""

# the three integer encodings all occur, so both readers below decode each
encs=$(duck "SELECT string_agg(DISTINCT encodings, '|' ORDER BY encodings) FROM parquet_metadata('$DS/*/*/*/*.parquet') WHERE type IN ('INT32', 'INT64')")
for e in 'DELTA_BINARY_PACKED' 'PLAIN, RLE|' 'RLE_DICTIONARY'; do
	case "$encs" in *"$e"*) pass "parquet_int_encoding_$(echo "$e" | tr -cd 'A-Z_')" ;;
	*) fail "parquet_int_encoding_$(echo "$e" | tr -cd 'A-Z_')" "not among $encs" ;; esac
done

# hyparquet: every column of every table equals dtreport sql's SELECT *
for t in events probes probe_args stacks frames processes maps counters capture; do
	f=$DS/$t/host=$HOST/capture=one/part-0.parquet
	if ! node "$HERE/hyp.mjs" "$f" >"$T/hyp.$t" 2>"$T/hyp.err"; then
		fail "hyparquet_$t" "$(tail -2 "$T/hyp.err" | tr '\n' ' ' | head -c 300)"
		continue
	fi
	"$D" sql --csv "$C" "SELECT * FROM $t" | tr -d '\r' >"$T/sql.$t"
	same "hyparquet_$t" "$T/hyp.$t" "$T/sql.$t"
done
check "hyparquet_events_rows" "$(wc -l <"$T/hyp.events")" "60001"

# ---- the writer alone: extremes, wrapping deltas, NULL row groups, UTF-8
PQ=${PQGEN:-$B/tests/export/pqgen}
for rows in 40000 0 1; do
	if "$PQ" "$T/w$rows.parquet" "$T/w$rows.csv" $rows 7777 2>"$T/pq$rows.err"; then
		node "$HERE/hyp.mjs" "$T/w$rows.parquet" >"$T/w$rows.hyp" 2>>"$T/pqh.err"
		same "writer_hyparquet_$rows" "$T/w$rows.hyp" "$T/w$rows.csv"
		duck "SELECT * FROM read_parquet('$T/w$rows.parquet')" >"$T/w$rows.duck"
		tail -n +2 "$T/w$rows.csv" >"$T/w$rows.body"
		same "writer_duckdb_$rows" "$T/w$rows.duck" "$T/w$rows.body"
	else
		fail "writer_$rows" "$(head -3 "$T/pq$rows.err")"
	fi
done
PB=${PQBITS:-$B/tests/export/pqbits}
if "$PB" >"$T/pqbits.out" 2>"$T/pqbits.err" && ! san "$T/pqbits.err"; then
	cat "$T/pqbits.out"
	grep -q '^PASS' "$T/pqbits.out" || fail "writer_bitpack" "pqbits printed no result"
else
	fail "writer_bitpack" "pqbits: $(head -3 "$T/pqbits.err" | tr '\n' ' ')"
fi
check "writer_empty_strings" "$(duck "SELECT count(*) FROM read_parquet('$T/w40000.parquet') WHERE big = ''")" \
	"$(awk 'NR > 1 && /,,,-?[0-9]+,-?[0-9]+,-?[0-9]+$/' "$T/w40000.csv" | wc -l)"
encs=$(duck "SELECT string_agg(DISTINCT encodings, '|' ORDER BY encodings) FROM parquet_metadata('$T/w40000.parquet')")
for e in DELTA_BINARY_PACKED RLE_DICTIONARY 'PLAIN, RLE|'; do
	case "$encs" in *"$e"*) pass "writer_encoding_$(echo "$e" | tr -cd 'A-Z_')" ;;
	*) fail "writer_encoding_$(echo "$e" | tr -cd 'A-Z_')" "not among $encs" ;; esac
done
"$G" -o "$T/zero.dtc" -n 0 || fail setup "dtgen 0"
"$D" export --format parquet -o "$T/dszero" "$T/zero.dtc" >/dev/null 2>"$T/zero.err"
check "parquet_empty_capture" "$?-$(duck "SELECT count(*) FROM read_parquet('$T/dszero/events/**/*.parquet')")" "0-0"

# ---------------------------------------------------- a dataset of many
M=$T/many
mkdir -p "$M"
for s in 1 2 3 4; do
	"$G" -o "$M/cap$s.dtc" -n $((20000 + s * 5000)) -s $s --syscalls --block 8192 || fail setup "dtgen $s"
done
cp "$M/cap1.dtc" "$M/again.dtc"	# a second capture of host synth1
DM=$T/dsmany
"$D" export --format parquet -o "$DM" "$M" >"$T/expm.out" 2>"$T/expm.err"
check "parquet_many_status" "$?" "0"
EVM="read_parquet('$DM/events/**/*.parquet', hive_partitioning=true, hive_types_autocast=false)"
want=$(for c in again cap1 cap2 cap3 cap4; do
	echo "$(q "$M/$c.dtc" 'SELECT hostname FROM capture'),$c,$(q "$M/$c.dtc" 'SELECT count(*), sum(pid), min(ts), max(ts) FROM events')"
done | sort)
check "duckdb_many_per_capture" "$(duck "SELECT host, capture, count(*), sum(pid), min(ts), max(ts) FROM $EVM GROUP BY host, capture ORDER BY host, capture")" "$want"
want=$(for c in again cap1 cap2 cap3 cap4; do q "$M/$c.dtc" 'SELECT comm, count(*) FROM events GROUP BY comm'; done |
	awk -F, '{ n[$1] += $2 } END { for (k in n) print k "," n[k] }' | sort)
check "duckdb_many_group_by_comm" "$(duck "SELECT comm, count(*) FROM $EVM GROUP BY comm" | sort)" "$want"
check "duckdb_many_join_probes" "$(duck "SELECT count(*) FROM $EVM e JOIN read_parquet('$DM/probes/**/*.parquet', hive_partitioning=true, hive_types_autocast=false) p ON e.probe = p.id AND e.host = p.host AND e.capture = p.capture")" \
	"$(duck "SELECT count(*) FROM $EVM")"

# ---- several captures at once: sql, flame, diff (directory or list)
check "sql_many_per_capture" "$(q "$M" 'SELECT host, capture, count(*), sum(pid), min(ts), max(ts) FROM events GROUP BY host, capture ORDER BY host, capture')" \
	"$(duck "SELECT host, capture, count(*), sum(pid), min(ts), max(ts) FROM $EVM GROUP BY host, capture ORDER BY host, capture")"
check "sql_many_group_by_comm" "$(q "$M" 'SELECT comm, count(*) FROM events GROUP BY comm' | sort)" "$want"
check "sql_many_list" "$("$D" sql --csv "$M/cap1.dtc" "$M/cap2.dtc" 'SELECT count(*), count(DISTINCT capture) FROM events' | tr -d '\r' | tail -1)" \
	"$(( $(q "$M/cap1.dtc" 'SELECT count(*) FROM events') + $(q "$M/cap2.dtc" 'SELECT count(*) FROM events') )),2"
check "sql_many_small_tables" "$(q "$M" 'SELECT count(*) FROM frames')" \
	"$(for c in again cap1 cap2 cap3 cap4; do q "$M/$c.dtc" 'SELECT count(*) FROM frames'; done | awk '{ s += $1 } END { print s }')"
check "sql_many_pushdown_same" "$(q "$M" 'SELECT count(*) FROM events WHERE ts BETWEEN 1000100000000 AND 1000300000000 AND pid IN (1016, 1020)')" \
	"$(q "$M" 'SELECT count(*) FROM events WHERE ts+0 BETWEEN 1000100000000 AND 1000300000000 AND pid+0 IN (1016, 1020)')"
mkdir -p "$T/empty"
"$D" sql --csv "$T/empty" 'SELECT 1' >/dev/null 2>"$T/empty.err"
check "sql_many_empty_dir" "$?-$(grep -c 'no .dtc captures' "$T/empty.err")" "1-1"
# flame over a directory: the per-capture folded stacks added up
"$D" flame --folded "$M" -o - 2>>"$T/flm.err" | sort >"$T/flame.many"
for c in again cap1 cap2 cap3 cap4; do "$D" flame --folded "$M/$c.dtc" -o - 2>>"$T/flm.err"; done |
	awk '{ c = $NF; $NF = ""; n[$0] += c } END { for (k in n) print k n[k] }' | sort >"$T/flame.sum"
[ -s "$T/flame.many" ] && same "flame_many_is_sum" "$T/flame.many" "$T/flame.sum" || fail "flame_many_is_sum" "empty"
# stats: one report per capture (JSON: an array)
check "stats_many_text" "$("$D" stats "$M" 2>/dev/null | grep -c '^capture ')" "5"
check "stats_many_json" "$("$D" stats --json "$M" 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin); print(len(d), sum(x["events"] for x in d))' 2>&1)" \
	"5 $(q "$M" 'SELECT count(*) FROM events')"
# diff of two groups: each side's totals are its captures' totals
mkdir -p "$T/ga" "$T/gb" && cp "$M/cap1.dtc" "$M/cap2.dtc" "$T/ga/" && cp "$M/cap3.dtc" "$T/gb/"
"$D" diff --folded "$T/ga" "$T/gb" -o - 2>"$T/dif.err" >"$T/diff.out"
check "diff_groups_a" "$(awk '{ s += $(NF-1) } END { print s }' "$T/diff.out")" \
	"$(cat "$T/ga"/*.dtc >/dev/null; for c in cap1 cap2; do "$D" flame --folded "$M/$c.dtc" -o -; done 2>/dev/null | awk '{ s += $NF } END { print s }')"
check "diff_groups_b" "$(awk '{ s += $NF } END { print s }' "$T/diff.out")" \
	"$("$D" flame --folded "$M/cap3.dtc" -o - 2>/dev/null | awk '{ s += $NF } END { print s }')"

# append to a dataset; the same capture again is refused, nothing changes
"$G" -o "$T/cap5.dtc" -n 5000 -s 5 || fail setup "dtgen 5"
"$D" export --format parquet -o "$DM" "$T/cap5.dtc" >/dev/null 2>"$T/app.err"
check "parquet_append" "$?-$(duck "SELECT count(*) FROM $EVM WHERE capture = 'cap5'")" "0-5000"
before=$(cd "$DM" && find . -type f -exec md5sum {} + | sort | md5sum)
"$D" export --format parquet -o "$DM" "$T/cap5.dtc" >/dev/null 2>"$T/dup.err"
rc=$?
check "parquet_refuse_duplicate" "$rc-$(grep -c 'already in the dataset' "$T/dup.err")" "1-1"
check "parquet_duplicate_unchanged" "$(cd "$DM" && find . -type f -exec md5sum {} + | sort | md5sum)" "$before"
check "parquet_duplicate_no_tmp" "$(ls -A "$DM" | grep -c '^\.tmp')" "0"

# never write into a user's directory or over a file
mkdir -p "$T/user" && echo precious >"$T/user/notes.txt"
"$D" export --format parquet -o "$T/user" "$C" >/dev/null 2>"$T/u.err"
check "parquet_refuse_nonempty_dir" "$?-$(cat "$T/user/notes.txt")-$(ls -A "$T/user" | wc -l)" "1-precious-1"
grep -q 'not empty and not a dt dataset' "$T/u.err" && pass "parquet_refuse_nonempty_msg" ||
	fail "parquet_refuse_nonempty_msg" "$(cat "$T/u.err")"
echo precious >"$T/file.txt"
"$D" export --format parquet -o "$T/file.txt" "$C" >/dev/null 2>"$T/f.err"
check "parquet_refuse_file" "$?-$(cat "$T/file.txt")-$(grep -c 'not a directory' "$T/f.err")" "1-precious-1"
"$D" export --format parquet -o "$T/no/such/dir" "$C" >/dev/null 2>"$T/n.err"
check "parquet_missing_parent" "$?-$(grep -c 'No such file' "$T/n.err")" "1-1"
head -c 5000 /dev/urandom >"$T/junk.dtc"
"$D" export --format parquet -o "$T/dsj" "$C" "$T/junk.dtc" >/dev/null 2>"$T/j.err"
check "parquet_bad_capture" "$?-$(ls "$T/dsj/events" | wc -l)-$(ls -A "$T/dsj" | grep -c '^\.tmp')" "1-1-0"
san "$T/j.err" && fail "parquet_bad_capture_sanitizer" "$(head -3 "$T/j.err")"
"$D" export --format parquet "$C" >/dev/null 2>&1
check "parquet_no_output_usage" "$?" "2"
"$D" export --format nope -o "$T/x" "$C" >/dev/null 2>&1
check "export_unknown_format" "$?-$(ls "$T/x" 2>/dev/null | wc -l)" "2-0"
# a capture cut short: refused (status 3) unless --partial, as every command
head -c $(( $(stat -c %s "$C") * 2 / 3 )) "$C" >"$T/cut.dtc"
"$D" export --format parquet -o "$T/dscut0" "$T/cut.dtc" >/dev/null 2>"$T/cut0.log"
check "parquet_cut_needs_partial" "$?-$(ls "$T/dscut0/events" 2>/dev/null | wc -l)" "3-0"
"$D" export --format parquet --partial -o "$T/dscut" "$T/cut.dtc" >/dev/null 2>"$T/cut.err"
check "parquet_cut_capture" "$?-$(grep -c warning "$T/cut.err")-$(duck "SELECT count(*) FROM read_parquet('$T/dscut/events/**/*.parquet')")" \
	"0-1-$("$D" sql --csv --partial "$T/cut.dtc" 'SELECT count(*) FROM events' 2>/dev/null | tr -d '\r' | tail -1)"
# the sqlite export still works as before, also with --format sqlite
"$D" export --format sqlite "$C" -o "$T/one.sqlite" >/dev/null 2>&1
check "sqlite_format_still" "$?-$(sqlite3 "$T/one.sqlite" 'SELECT count(*) FROM events' 2>/dev/null)" "0-60000"

# ------------------------------------------------------------------ pprof
P=$T/one.pb.gz
"$D" export --format pprof -o "$P" "$C" >"$T/pp.out" 2>"$T/pp.err"
check "pprof_export_status" "$?" "0"
check "pprof_gzip" "$(gzip -t "$P" 2>&1 && echo ok)" "ok"
"$D" flame --folded "$C" -o - 2>"$T/flame.err" | python3 "$HERE/folded_totals.py" >"$T/flame.tot"
if node "$HERE/pprof.mjs" "$P" >"$T/pprof.tot" 2>"$T/pprof.facts"; then
	check "pprof_total_samples" "$(head -1 "$T/pprof.tot")" \
		"total $(q "$C" 'SELECT count(*) FROM events WHERE probe IN (SELECT id FROM probes WHERE flags & 1)')"
	[ "$(wc -l <"$T/flame.tot")" -gt 100 ] && pass "pprof_flame_has_functions" ||
		fail "pprof_flame_has_functions" "only $(wc -l <"$T/flame.tot") lines"
	same "pprof_function_totals_eq_flame" "$T/pprof.tot" "$T/flame.tot"
	check "pprof_sample_types" "$(awk '$1=="types"{print $2}' "$T/pprof.facts")" "samples/count,cpu/nanoseconds"
	check "pprof_period" "$(awk '$1=="period"{print $2}' "$T/pprof.facts")" "$((1000000000 / 997))"
	check "pprof_no_dangling_ids" "$(awk '$1=="dangling"{print $2}' "$T/pprof.facts")" "0"
	check "pprof_labels" "$(awk '$1=="labels"{print $2}' "$T/pprof.facts")" "comm,pid"
	[ "$(awk '$1=="mappings"{print $2}' "$T/pprof.facts")" -ge 2 ] && pass "pprof_mappings" ||
		fail "pprof_mappings" "$(cat "$T/pprof.facts")"
else
	fail "pprof_decode" "$(tail -3 "$T/pprof.facts" | tr '\n' ' ')"
fi
before=$(md5sum <"$P")
"$D" export --format pprof -o "$P" "$C" >/dev/null 2>"$T/pp2.err"
check "pprof_never_replaces" "$?-$(md5sum <"$P")-$(grep -c 'not replaced' "$T/pp2.err")" "1-$before-1"
"$D" export --format pprof -o "$T/junk.pb.gz" "$T/junk.dtc" >/dev/null 2>"$T/pp3.err"
check "pprof_bad_capture" "$?-$(ls "$T/junk.pb.gz" 2>/dev/null | wc -l)" "1-0"

# ----------------------------------------------------------------- chrome
J=$T/one.json
"$D" export --format chrome -o "$J" "$C" >"$T/ch.out" 2>"$T/ch.err"
check "chrome_export_status" "$?" "0"
PAIRQ="probe_name GLOB 'syscall:*:entry' OR probe_name GLOB 'syscall:*:return' OR probe_name GLOB 'kprobe:*:entry' OR probe_name GLOB 'kprobe:*:return'"
q "$C" "SELECT tid, ts, probe_name FROM events WHERE $PAIRQ" >"$T/paired.csv"
q "$C" "SELECT tid, ts FROM events WHERE NOT ($PAIRQ)" >"$T/other.csv"
python3 "$HERE/chrome_check.py" "$J" "$(q "$C" 'SELECT start_ns FROM capture')" "$T/paired.csv" "$T/other.csv" \
	>"$T/chrome.facts" 2>"$T/chrome.err"
fact() { awk -v k="$1" '$1==k{print $2}' "$T/chrome.facts"; }
check "chrome_json_parses" "$(fact json_ok)" "1"
check "chrome_every_slice_matches_capture" "$(fact bad_slices)" "0"
check "chrome_slices_nest" "$(fact overlapping_slices)" "0"
check "chrome_slice_count" "$(fact slices)" "$(fact expected_slices)"
# no fewer than the doc/SQL.md pairing query (adjacent entry/return) finds
adj=$(q "$C" "WITH s AS (
  SELECT tid, probe_name, flags, LAG(probe_name) OVER (PARTITION BY tid ORDER BY ts) AS prev
  FROM events WHERE probe_name LIKE 'syscall:%')
SELECT count(*) FROM s WHERE flags & 1 AND prev = replace(probe_name, ':return', ':entry')")
[ "$(fact slices)" -ge "$adj" ] 2>/dev/null && pass "chrome_slices_cover_adjacent_pairs" ||
	fail "chrome_slices_cover_adjacent_pairs" "$(fact slices) < $adj"
[ "$(fact slices)" -gt 1000 ] 2>/dev/null && pass "chrome_has_slices" || fail "chrome_has_slices" "$(fact slices)"
check "chrome_instants_are_the_other_events" "$(fact instants_match)" "1"
before=$(md5sum <"$J")
"$D" export --format chrome -o "$J" "$C" >/dev/null 2>"$T/ch2.err"
check "chrome_never_replaces" "$?-$(md5sum <"$J")" "1-$before"
"$D" export --format chrome -o "$T/junk.json" "$T/junk.dtc" >/dev/null 2>"$T/ch3.err"
check "chrome_bad_capture" "$?-$(ls "$T/junk.json" 2>/dev/null | wc -l)" "1-0"

# ---- damaged captures: every exporter fails cleanly or exports, never crashes
"$G" -o "$T/small.dtc" -n 3000 -s 11 --syscalls --block 512 || fail setup "dtgen small"
python3 - "$T/small.dtc" "$T/fz" <<'PY'
import os, random, sys
data = open(sys.argv[1], "rb").read()
os.makedirs(sys.argv[2], exist_ok=True)
rnd = random.Random(14)
for i in range(24):
    b = bytearray(data)
    if i % 3 == 0:
        b = b[: rnd.randrange(len(b))]
    else:
        for _ in range(rnd.randrange(1, 16)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
    open(f"{sys.argv[2]}/m{i}.dtc", "wb").write(bytes(b))
PY
crashes=0
for m in "$T"/fz/m*.dtc; do
	k=$(basename "$m" .dtc)
	for fmt in parquet pprof chrome; do
		out=$T/fz/$k.$fmt
		p=; [ $((${k#m} % 2)) = 0 ] && p=--partial	# half of them read what they can
		timeout 60 "$D" export --format $fmt $p -o "$out" "$m" >/dev/null 2>"$T/fz/$k.$fmt.log"
		rc=$?
		# 0 exported, 1 damaged, 3 cut short (no --partial); anything else is a crash
		if { [ $rc != 0 ] && [ $rc != 1 ] && [ $rc != 3 ]; } || san "$T/fz/$k.$fmt.log"; then
			crashes=$((crashes + 1))
			echo "fuzz: $k $fmt rc=$rc $(grep -m1 -E 'ERROR|runtime error' "$T/fz/$k.$fmt.log")" >&2
		elif [ $rc != 0 ] && [ "$fmt" != parquet ] && [ -e "$out" ]; then
			crashes=$((crashes + 1))	# a failed export left its output
			echo "fuzz: $k $fmt failed but left $out" >&2
		fi
	done
done
check "fuzz_damaged_captures" "$crashes" "0"

for f in "$T"/*.err; do
	san "$f" && fail "sanitizer_$(basename "$f")" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$f")"
done
true
