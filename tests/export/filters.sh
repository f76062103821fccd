#!/bin/bash
# tests/export/filters.sh - exports are reports: each filter reaches each
# export (its rows or samples are what `dtreport stats` or `flame` count
# under the same filter), a filter value the capture never saw is an
# error that writes nothing, the progress line is the reports' one, and
# an interrupted export leaves no file and the user's file as it was.
# dtsh's `export` (the same parser, Ctrl-C) is ptyexport.py.
# Env: B (build dir), DTREPORT, DTSH (binaries under test), DTGEN.
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
SH=${DTSH:-$B/asan/bin/dtsh}
G=${DTGEN:-$B/bin/dtgen}
HERE=$(cd "$(dirname "$0")" && pwd)
export NPM=$(cd "$B" && pwd)/npm
T=$(mktemp -d "${TMPDIR:-/tmp}/dtexpf.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict
check() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$(echo "$2" | head -c 300)' want '$(echo "$3" | head -c 300)'"; fi
}

for tool in "$D" "$SH" "$G" node python3 sqlite3; do
	command -v "$tool" >/dev/null 2>&1 || { fail setup "missing $tool"; exit 0; }
done
if ! why=$("$HERE/npm.sh" "$NPM"); then
	fail npm_readers "$why"
	exit 0
fi

C=$T/c.dtc
# small blocks: --since/--until and --cpu skip whole blocks by their index
"$G" -o "$C" -n 100000 -s 5 --syscalls --stacks 300 --block 2048 >/dev/null ||
	{ fail setup "dtgen"; exit 0; }
TID=$("$D" sql --csv "$C" 'SELECT tid FROM events GROUP BY tid ORDER BY count(*) DESC LIMIT 1' |
	tr -d '\r' | tail -1)
PID=$("$D" sql --csv "$C" 'SELECT pid FROM events WHERE pid > 0 GROUP BY pid ORDER BY count(*) LIMIT 1' |
	tr -d '\r' | tail -1)

# matched N: the events `dtreport stats` counts under the filters
matched() {
	"$D" stats --json "$@" "$C" 2>>"$T/stats.err" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["events_matched"])'
}
# samples N: what `dtreport flame` counts under the filters
samples() {
	"$D" flame --folded "$@" "$C" 2>>"$T/flame.err" | awk '{ n += $NF } END { print n + 0 }'
}
# chrome's events, back to capture events: an instant each, a slice two
chrome_events() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = 0
for e in d["traceEvents"]:
    n += {"i": 1, "X": 2}.get(e["ph"], 0)
print(n)
PY
}

i=0
for F in "--comm app*" "--pid $PID" "--tid $TID" "--cpu 1,2" "--probe syscall:read:*" \
	"--since 2 --until 5" "--ctx softirq" "--comm bash --cpu 0 --since 1"; do
	i=$((i + 1))
	name=$(echo "$F" | tr -cs 'a-z0-9' '_' | sed 's/^_*//; s/_*$//')
	# shellcheck disable=SC2086
	want=$(matched $F)
	[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$want" -lt 100000 ] ||
		{ fail "filter_${name}_selects" "stats matched '$want' of 100000"; continue; }
	# shellcheck disable=SC2086
	"$D" export $F -o "$T/f$i.sqlite" "$C" >"$T/o" 2>"$T/f$i.err"
	check "sqlite_${name}" "$?:$(sqlite3 "$T/f$i.sqlite" 'SELECT count(*) FROM events' 2>&1)" "0:$want"
	# shellcheck disable=SC2086
	"$D" export --format parquet $F -o "$T/ds$i" "$C" >"$T/o" 2>>"$T/f$i.err"
	check "parquet_${name}" "$?:$(node "$HERE/duck.mjs" "SELECT count(*) FROM read_parquet('$T/ds$i/events/**/*.parquet')" 2>&1)" "0:$want"
	# shellcheck disable=SC2086
	"$D" export --format chrome $F -o "$T/f$i.json" "$C" >"$T/o" 2>>"$T/f$i.err"
	check "chrome_${name}" "$?:$(chrome_events "$T/f$i.json" 2>&1)" "0:$want"
	# shellcheck disable=SC2086
	sw=$(samples $F)
	# shellcheck disable=SC2086
	"$D" export --format pprof $F -o "$T/f$i.pb.gz" "$C" >"$T/o" 2>>"$T/f$i.err"
	check "pprof_${name}" "$?:$(node "$HERE/pprof.mjs" "$T/f$i.pb.gz" 2>/dev/null | head -1)" "0:total $sw"
	san "$T/f$i.err" && fail "sanitizer_${name}" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$T/f$i.err")"
done
# the whole capture, no filter: every event, and the filtered sqlite's
# rows are exactly those of the SQL view under the same condition
check "sqlite_no_filter" "$("$D" export -o "$T/all.sqlite" "$C" >/dev/null 2>&1; sqlite3 "$T/all.sqlite" 'SELECT count(*) FROM events')" "100000"
check "sqlite_filtered_rows_are_sqls" \
	"$(sqlite3 "$T/f5.sqlite" 'SELECT sum(ts), sum(pid), sum(arg0), sum(retval) FROM events')" \
	"$(sqlite3 "$T/all.sqlite" "SELECT sum(ts), sum(pid), sum(arg0), sum(retval) FROM events WHERE probe_name GLOB 'syscall:read:*'")"
# --since 2 --until 5 (ds6): the rows SQL finds between those times
# (both ends inclusive), every column summed alike
sq="sum(ts), sum(cpu), sum(pid), sum(arg0), sum(retval), count(errno), count(comm)"
check "parquet_filtered_rows_are_sqls" \
	"$(node "$HERE/duck.mjs" "SELECT $sq FROM read_parquet('$T/ds6/events/**/*.parquet')")" \
	"$("$D" sql --csv "$C" "SELECT $sq FROM events WHERE ts BETWEEN (SELECT start_ns + 2000000000 FROM capture) AND (SELECT start_ns + 5000000000 FROM capture)" | tr -d '\r' | tail -n +2)"

# a value the capture never saw: status 1, the reports' message, no output
for fmt in sqlite parquet pprof chrome; do
	out=$T/none.$fmt
	"$D" export --format $fmt --comm 'no-such-comm' -o "$out" "$C" >/dev/null 2>"$T/none.err"
	rc=$?
	[ $rc = 1 ] && [ ! -e "$out" ] && grep -q "^dtreport export: .*no-such-comm" "$T/none.err" &&
		pass "unknown_comm_$fmt" || fail "unknown_comm_$fmt" "rc=$rc $(ls -d "$out" 2>/dev/null) $(head -c 200 "$T/none.err")"
done
# a bad option value is a usage error before anything is opened
"$D" export --format chrome --pid x -o "$T/bad.json" "$C" >/dev/null 2>"$T/bad.err"
check "bad_filter_usage" "$?-$(ls "$T/bad.json" 2>/dev/null | wc -l)" "2-0"

# progress: the reports' line ("dtreport: reading:  40% (N of M events)",
# as top draws it) on a terminal's stderr, cleared at the end; none on a pipe
python3 - "$D" "$C" "$T" <<'PY'
import os, pty, re, subprocess, sys
D, C, T = sys.argv[1:4]
env = dict(os.environ, DT_PROGRESS_AFTER="0")
line = re.compile(rb"\r(dtreport: reading): +\d+% \(\d+ of 100000 events\)")
def on_pty(args):
    m, s = pty.openpty()
    p = subprocess.Popen([D] + args, stderr=s, stdout=subprocess.DEVNULL, env=env)
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
    return p.returncode, out
rc, st = on_pty(["top", C])
ref = line.search(st)
for fmt, out in (("chrome", "p.json"), ("pprof", "p.pb.gz"), ("parquet", "pds")):
    rc, err = on_pty(["export", "--format", fmt, "-o", os.path.join(T, out), C])
    m = line.search(err)
    ok = rc == 0 and m and ref and b"\r\x1b[K" in err
    print(("PASS progress_%s" % fmt) if ok else
          "FAIL progress_%s: rc %d, stats %r, export %r" % (fmt, rc, st[:80], err[:200]))
    p = subprocess.run([D, "export", "--format", fmt, "-o", os.path.join(T, out + "2"), C],
                       stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    print(("PASS progress_%s_pipe_quiet" % fmt) if p.returncode == 0 and not p.stderr
          else "FAIL progress_%s_pipe_quiet: %r" % (fmt, p.stderr[:200]))
PY

# SIGINT: the user's file under the output name stays as it was, and no
# temporary is left (sqlite replaces only on success; the others refuse)
"$G" -o "$T/big.dtc" -n 3000000 -s 9 --syscalls >/dev/null 2>&1
for fmt in sqlite chrome; do
	d=$T/int-$fmt && mkdir "$d"
	echo precious >"$d/keep.$fmt"
	[ $fmt = chrome ] && out=$d/new.$fmt || out=$d/keep.$fmt
	# SIGINT as a terminal gives it (bash starts background jobs with it ignored)
	env --default-signal=INT "$D" export --format $fmt -o "$out" "$T/big.dtc" >/dev/null 2>"$T/int.err" &
	pid=$!
	for _ in $(seq 200); do
		[ -n "$(cd "$d" && compgen -G ".$(basename "$out").*")" ] && break
		sleep 0.05
	done
	kill -INT $pid 2>/dev/null
	wait $pid
	rc=$?
	left=$(ls -A "$d" | tr '\n' ' ')
	[ $rc -ne 0 ] && [ "$(cat "$d/keep.$fmt")" = precious ] && [ "$left" = "keep.$fmt " ] &&
		pass "sigint_${fmt}_keeps_users_file" || fail "sigint_${fmt}_keeps_users_file" "rc=$rc left: $left"
done

# dtsh's export: the same parser, filters and Ctrl-C, against these
cp "$T/f8.json" "$T/ref.json" && cp "$T/f5.sqlite" "$T/ref.sqlite"
python3 "$HERE/ptyexport.py" "$SH" "$C" "$T/big.dtc" "$T" "$HERE/duck.mjs"

for f in "$T"/*.err; do
	san "$f" && fail "sanitizer_$(basename "$f")" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$f")"
done
true
