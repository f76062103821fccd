#!/bin/bash
# tests/export/parquet_hive.sh - the Parquet dataset as other engines read
# its paths and footers: an empty hostname reads back as dtreport sql
# shows it (NULL), partition values escaped as Hive/Spark unescape them
# (%XX is one character, so UTF-8 stays raw), all-numeric capture names
# with the documented hive_types, `created_by` in the form Java's parquet
# library parses, and --parquet-compat writing no DELTA_BINARY_PACKED.
# Readers: DuckDB and hyparquet from npm.
# Env: B, DTREPORT, DTGEN.
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
G=${DTGEN:-$B/bin/dtgen}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
export NPM=$(cd "$B" && pwd)/npm
T=$(mktemp -d "${TMPDIR:-/tmp}/dthive.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict
check() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$(echo "$2" | head -c 300)' want '$(echo "$3" | head -c 300)'"; fi
}
duck() { node "$HERE/duck.mjs" "$@" 2>>"$T/duck.err"; }
q() { "$D" sql --csv "$1" "$2" 2>>"$T/sql.err" | tr -d '\r' | tail -n +2; }

for tool in "$D" "$G" node python3; do
	command -v "$tool" >/dev/null 2>&1 || { fail hive_setup "missing $tool"; exit 0; }
done
if ! why=$("$HERE/npm.sh" "$NPM"); then
	fail hive_npm "$why"
	exit 0
fi

# ---- an empty hostname: NULL in dtreport sql and in DuckDB alike
"$G" -o "$T/nohost.dtc" -n 5000 -s 2 --hostname "" || { fail hive_setup dtgen; exit 0; }
"$D" export --format parquet -o "$T/ds1" "$T/nohost.dtc" >/dev/null 2>"$T/e1.err"
check hive_empty_host_export "$?" 0
n=$(q "$T/nohost.dtc" "SELECT count(*) FROM events")
check hive_empty_host_sql_null "$(q "$T/nohost.dtc" "SELECT count(*) FROM capture WHERE hostname IS NULL")" 1
check hive_empty_host_duckdb_events "$(duck "SELECT count(*) FROM read_parquet('$T/ds1/events/**/*.parquet', hive_partitioning=true) WHERE host IS NULL")" "$n"
check hive_empty_host_duckdb_capture "$(duck "SELECT count(*) FROM read_parquet('$T/ds1/capture/**/*.parquet', hive_partitioning=true) WHERE host IS NULL AND hostname IS NULL")" 1

# ---- escaping as Hive does: ':' and '=' escaped, UTF-8 kept as it is
HN=$(printf 'h\xc3\xb4te:1')
CN=$(printf 'run=2 \xc3\xa9t\xc3\xa9')
"$G" -o "$T/$CN.dtc" -n 5000 -s 3 --hostname "$HN" || { fail hive_setup dtgen; exit 0; }
"$D" export --format parquet -o "$T/ds2" "$T/$CN.dtc" >/dev/null 2>"$T/e2.err"
check hive_escape_export "$?" 0
dir=$(cd "$T/ds2/events" && echo host=*/capture=*)
check hive_escape_path "$dir" "$(printf 'host=h\xc3\xb4te%%3A1/capture=run%%3D2 \xc3\xa9t\xc3\xa9')"
# Spark's and Hive's unescapePathName: each %XX one character
check hive_escape_spark_reads "$(python3 - "$dir" <<'PY'
import re, sys
h, c = (p.split("=", 1)[1] for p in sys.argv[1].split("/"))
un = lambda s: re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), s)
print(un(h) + "|" + un(c))
PY
)" "$HN|$CN"
check hive_escape_duckdb_reads "$(duck "SELECT DISTINCT host || '|' || capture FROM read_parquet('$T/ds2/events/**/*.parquet', hive_partitioning=true)")" "$HN|$CN"

# ---- all-numeric capture names: VARCHAR with the documented hive_types
"$G" -o "$T/20240101.dtc" -n 3000 -s 4 || { fail hive_setup dtgen; exit 0; }
"$D" export --format parquet -o "$T/ds3" "$T/20240101.dtc" >/dev/null 2>"$T/e3.err"
check hive_numeric_capture_like "$(duck "SELECT count(*) > 0 FROM read_parquet('$T/ds3/events/**/*.parquet', hive_partitioning = true, hive_types = {'capture': VARCHAR}) WHERE capture LIKE '2024%'")" true

# ---- created_by as parquet-mr's VersionParser parses it
f=$(ls "$T"/ds3/events/host=*/capture=*/part-0.parquet | head -1)
node "$HERE/pq_meta.mjs" "$f" >"$T/meta" 2>"$T/meta.err" || fail hive_meta "$(tail -1 "$T/meta.err")"
check parquet_created_by_parses "$(python3 - "$(sed -n 's/^created_by //p' "$T/meta")" <<'PY'
import re, sys
# org.apache.parquet.VersionParser.FORMAT
m = re.fullmatch(r"(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?", sys.argv[1])
print("%s %s" % (m.group(1), m.group(2)) if m and re.fullmatch(r"\d+\.\d+\.\d+.*", m.group(2) or "") else "unparsed: " + sys.argv[1])
PY
)" "dt $(cat "$TOP/VERSION")"
grep -q '^enc ts .*DELTA_BINARY_PACKED' "$T/meta" && pass parquet_default_delta ||
	fail parquet_default_delta "ts not DELTA_BINARY_PACKED by default: $(grep '^enc ts' "$T/meta")"

# ---- --parquet-compat: no DELTA_BINARY_PACKED anywhere, same data
"$D" export --format parquet --parquet-compat -o "$T/ds4" "$T/20240101.dtc" >/dev/null 2>"$T/e4.err"
check parquet_compat_export "$?" 0
bad=
for f in "$T"/ds4/*/host=*/capture=*/part-0.parquet; do
	node "$HERE/pq_meta.mjs" "$f" >"$T/m4" 2>>"$T/meta.err" || bad="$bad unreadable:$f"
	grep -q DELTA_BINARY_PACKED "$T/m4" && bad="$bad $(grep DELTA_BINARY_PACKED "$T/m4" | head -1)"
done
check parquet_compat_no_delta "$bad" ""
sq="SELECT count(*), sum(ts), sum(pid), sum(cpu) FROM"
check parquet_compat_same_rows "$(duck "$sq read_parquet('$T/ds4/events/**/*.parquet')")" "$(duck "$sq read_parquet('$T/ds3/events/**/*.parquet')")"
"$D" export --format pprof --parquet-compat -o "$T/x.pb.gz" "$T/20240101.dtc" >/dev/null 2>"$T/e5.err"
check parquet_compat_only_parquet "$?-$(ls "$T/x.pb.gz" 2>/dev/null | wc -l)" "2-0"

for f in "$T"/*.err; do
	san "$f" && fail "hive_sanitizer_$(basename "$f")" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$f")"
done
true
