#!/bin/bash
# tests/export/utf8.sh - a capture whose comm the kernel cut mid-character
# ("sauvegarde-doné" kept as the 15 bytes "sauvegarde-don\xC3") read back
# from every writer by readers that refuse invalid UTF-8: DuckDB and
# hyparquet (Parquet), Python's sqlite3 (the SQLite export), a strict
# protobuf walk and pprof-format (pprof), Python's strict decoder (folded,
# SVG, CSV, JSON, Chrome) and flamegraph.pl's input loop in Perl (folded).  Every writer must give the one replacement,
# U+FFFD for the bad byte (dtu_utf8_fix).
# Env: B, DTREPORT, DTGEN, DTCDUMP.
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
G=${DTGEN:-$B/bin/dtgen}
DTCDUMP=${DTCDUMP:-$B/bin/dtcdump}
HERE=$(cd "$(dirname "$0")" && pwd)
export NPM=$(cd "$B" && pwd)/npm
T=$(mktemp -d "${TMPDIR:-/tmp}/dtutf8.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict

for tool in "$D" "$G" "$DTCDUMP" node python3; do
	command -v "$tool" >/dev/null 2>&1 || { fail utf8_setup "missing $tool"; exit 0; }
done
if ! why=$("$HERE/npm.sh" "$NPM"); then
	fail utf8_npm_readers "$why"
	exit 0
fi

C=$T/cut.dtc
# and a probe whose name is not UTF-8 either (a uprobe's path is any bytes)
"$G" -o "$C" -n 30000 -s 5 --syscalls --comm "$(printf 'sauvegarde-don\xc3\xa9')" \
	--switch-probe "$(printf 'uprobe:/tmp/caf\xe9:main:entry')" ||
	{ fail utf8_setup "dtgen"; exit 0; }
# the capture really holds the cut (dtcdump prints comms as they are):
# the premise of every test below
if "$DTCDUMP" "$C" 2>/dev/null | grep -aq "$(printf 'sauvegarde-don\xc3 ')"; then
	pass utf8_capture_cut
else
	fail utf8_capture_cut "the capture holds no comm cut mid-character"
fi
WANT=$(printf 'sauvegarde-don\xef\xbf\xbd')

# strict FILE: exit 0 when the file is valid UTF-8 and holds WANT
strict() {
	python3 - "$1" "$WANT" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
try:
    t = b.decode("utf-8", errors="strict")
except UnicodeDecodeError as e:
    print("invalid UTF-8 at byte %d: %r" % (e.start, b[max(0, e.start - 16):e.start + 4]))
    sys.exit(1)
want = sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8")
if want not in t:
    print("valid, but %r is not in it" % want)
    sys.exit(1)
PY
}
# text NAME FILE: strict, as a test
text() {
	local why
	if why=$(strict "$2"); then pass "$1"; else fail "$1" "$why"; fi
}

# ---- Parquet, read by DuckDB and hyparquet
DS=$T/pq
"$D" export --format parquet -o "$DS" "$C" >/dev/null 2>"$T/pq.err" || fail utf8_parquet_export "$(head -2 "$T/pq.err")"
EV="read_parquet('$DS/events/**/*.parquet', hive_partitioning=true, hive_types_autocast=false)"
got=$(node "$HERE/duck.mjs" "SELECT count(*) FROM $EV WHERE comm = '$WANT'" 2>"$T/duck.err")
want=$("$D" sql --csv "$C" "SELECT count(*) FROM events WHERE comm LIKE 'sauvegarde-don%'" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2)
if [ -n "$want" ] && [ "$want" != 0 ] && [ "$got" = "$want" ]; then
	pass utf8_duckdb_parquet_events
else
	fail utf8_duckdb_parquet_events "DuckDB counted '$got' rows of $WANT, want '$want': $(head -c 300 "$T/duck.err")"
fi
# every string column of every table, not only events.comm
bad=
for t in events probes probe_args stacks frames processes maps counters capture; do
	node "$HERE/duck.mjs" "SELECT * FROM read_parquet('$DS/$t/**/*.parquet', hive_partitioning=true, hive_types_autocast=false)" \
		>/dev/null 2>"$T/duck_$t.err" || bad="$bad $t: $(head -c 200 "$T/duck_$t.err")"
done
[ -z "$bad" ] && pass utf8_duckdb_parquet_all_tables || fail utf8_duckdb_parquet_all_tables "$bad"
for t in events processes; do
	f=$(ls "$DS"/$t/host=*/capture=*/part-0.parquet 2>/dev/null | head -1)
	if [ -n "$f" ] && node "$HERE/hyp_strict.mjs" "$f" "$WANT" >"$T/hyp_$t.out" 2>&1; then
		pass "utf8_hyparquet_$t"
	else
		fail "utf8_hyparquet_$t" "$(grep -m1 -E 'Error|rows' "$T/hyp_$t.out" | head -c 300)"
	fi
done

# ---- SQLite export, read by Python's sqlite3 (text columns decoded strictly)
"$D" export -o "$T/x.sqlite" "$C" >/dev/null 2>"$T/sqlite.err" || fail utf8_sqlite_export "$(head -2 "$T/sqlite.err")"
if why=$(python3 - "$T/x.sqlite" "$WANT" <<'PY' 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want = sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8")
n = 0
for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
    for row in db.execute('SELECT * FROM "%s"' % t):
        n += 1
found = db.execute("SELECT count(*) FROM events WHERE comm = ?", (want,)).fetchone()[0]
if not db.execute("SELECT count(*) FROM events WHERE probe_name = ?",
                  ("uprobe:/tmp/caf\ufffd:main:entry",)).fetchone()[0]:
    print("no event of the probe whose name is not UTF-8, as uprobe:/tmp/caf\ufffd:main:entry")
    sys.exit(1)
procs = db.execute("SELECT count(*) FROM processes WHERE comm = ?", (want,)).fetchone()[0]
if not found or not procs:
    print("read %d rows, but %d events and %d processes have comm %r" % (n, found, procs, want))
    sys.exit(1)
PY
); then pass utf8_python_sqlite3; else fail utf8_python_sqlite3 "$(echo "$why" | tail -2 | tr '\n' ' ')"; fi

# ---- pprof: every string of the table valid (what a strict protobuf
# decoder checks), and pprof-format finds the comm label
"$D" export --format pprof -o "$T/p.pb.gz" "$C" >/dev/null 2>"$T/pprof.err" || fail utf8_pprof_export "$(head -2 "$T/pprof.err")"
if why=$(python3 - "$T/p.pb.gz" "$WANT" <<'PY' 2>&1
import gzip, sys
b = gzip.open(sys.argv[1]).read()
want = sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8")
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
i, strs = 0, []
while i < len(b):
    k, i = varint(b, i)
    f, wt = k >> 3, k & 7
    if wt == 0:
        _, i = varint(b, i)
    elif wt == 2:
        n, i = varint(b, i)
        if f == 6:
            strs.append(b[i:i + n].decode("utf-8", errors="strict"))
        i += n
    elif wt == 1:
        i += 8
    elif wt == 5:
        i += 4
    else:
        raise SystemExit("bad wire type %d" % wt)
if want not in strs:
    raise SystemExit("%d strings, valid, but %r is not one" % (len(strs), want))
PY
); then pass utf8_pprof_strict_strings; else fail utf8_pprof_strict_strings "$(echo "$why" | tail -1)"; fi
cat >"$T/label.mjs" <<'JS'
const { readFileSync } = await import('fs');
const { gunzipSync } = await import('zlib');
const { Profile } = await import(process.env.NPM + '/node_modules/pprof-format/dist/esm/index.js');
const p = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const S = (i) => p.stringTable.strings[Number(i)];
const n = p.sample.filter((s) => s.label.some((l) => S(l.key) === 'comm' && S(l.str) === process.argv[3])).length;
if (!n) { console.log('no sample labelled comm=' + process.argv[3]); process.exit(1); }
JS
if why=$(node "$T/label.mjs" "$T/p.pb.gz" "$WANT" 2>&1); then pass utf8_pprof_format_label; else fail utf8_pprof_format_label "$(echo "$why" | tail -1)"; fi

# ---- folded text, SVG, CSV, JSON, Chrome trace: valid, with the replacement
"$D" flame --folded "$C" >"$T/f.folded" 2>"$T/folded.err"
text utf8_folded "$T/f.folded"
# flamegraph.pl is packaged neither by Debian nor on npm: its input loop
# (a "stack count" line each) under Perl's strict UTF-8 decoding instead,
# the way it dies on a bad byte
if why=$(perl -e 'use warnings FATAL => "utf8"; binmode STDIN, ":encoding(UTF-8)";
	my $n = 0; while (<STDIN>) { chomp; /^(.*)\s+(\d+(?:\.\d*)?)$/ or die "bad line $.\n"; $n += $2 }
	print "$n\n"' <"$T/f.folded" 2>&1) && [ "$why" -gt 0 ] 2>/dev/null; then
	pass utf8_folded_perl_reader
else
	fail utf8_folded_perl_reader "$(echo "$why" | tail -1)"
fi
"$D" flame -o "$T/f.svg" "$C" >/dev/null 2>"$T/svg.err"
text utf8_svg "$T/f.svg"
"$D" sql --csv "$C" "SELECT comm, count(*) FROM events GROUP BY comm" >"$T/q.csv" 2>>"$T/sql.err"
text utf8_csv "$T/q.csv"
# a text a query makes up is cleaned the same way
printf '%s' "$("$D" sql --csv "$C" "SELECT CAST(x'7361757665676172' || x'64652d646f6ec3' AS TEXT) AS t" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2)" >"$T/q2.csv"
text utf8_csv_made_up_text "$T/q2.csv"
"$D" sql --json "$C" "SELECT comm, count(*) AS n FROM events GROUP BY comm" >"$T/q.json" 2>>"$T/sql.err"
if python3 -c 'import json,sys; d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict")); sys.exit(0 if any(r["comm"] == sys.argv[2].encode("utf-8","surrogateescape").decode("utf-8") for r in d) else 1)' "$T/q.json" "$WANT" 2>"$T/json.err"; then
	pass utf8_sql_json
else
	fail utf8_sql_json "$(head -c 300 "$T/q.json") $(tail -1 "$T/json.err")"
fi
"$D" stats --json "$C" >"$T/s.json" 2>"$T/stats.err"
if python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' "$T/s.json" 2>"$T/sj.err"; then
	pass utf8_stats_json
else
	fail utf8_stats_json "$(tail -1 "$T/sj.err")"
fi
"$D" export --format chrome -o "$T/c.json" "$C" >/dev/null 2>"$T/chrome.err"
if why=$(strict "$T/c.json" >/dev/null; python3 - "$T/c.json" "$WANT" <<'PY' 2>&1
import json, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", errors="strict")
want = sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8")
if want not in json.dumps(json.loads(t), ensure_ascii=False):
    raise SystemExit("valid JSON, but no %r in it" % want)
PY
); then pass utf8_chrome; else fail utf8_chrome "$(echo "$why" | tail -1)"; fi

for f in "$T"/*.err; do
	san "$f" && fail "utf8_sanitizer_$(basename "$f")" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$f")"
done
true
