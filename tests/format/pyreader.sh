#!/bin/bash
# pyreader.sh BUILD DTGEN DTREPORT DTCDUMP: the capture format as a contract.
# tests/format/pyreader.py, a reader written from formats/FORMAT.md alone,
# must decode every chunk and column of generated captures (a profile, a
# demo-like syscall mix, small blocks, a cut one, a version-2 one) and agree
# with `dtreport sql` row for row on every table, and with libdtcap on the
# kallsyms text and the mapped files.
set -u
b=$1 dtgen=$2 dtreport=$3 dtcdump=$4
here=$(dirname "$0")
t=$(mktemp -d /dev/shm/dt-pyreader.XXXXXX 2>/dev/null || mktemp -d /tmp/dt-pyreader.XXXXXX)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

# the Debian packages, not whatever python3 comes first on PATH
py=/usr/bin/python3
if ! "$py" -c 'import zstandard, xxhash' 2>"$t/pyerr"; then
	no pyreader.modules "python3-zstandard / python3-xxhash missing (scripts/install-deps.sh): $(tail -1 "$t/pyerr")"
	exit 0
fi

"$dtgen" -o "$t/profile.dtc" -n 150000 -s 11 --block 40000 &&
"$dtgen" -o "$t/demo.dtc" -n 100000 -s 12 --syscalls --stacks 3000 --pids 6 &&
"$dtgen" -o "$t/small.dtc" -n 5000 -s 13 --block 7 --stacks 50 --syscalls &&
# SRCL chunks, which pyreader (written before them) does not know: a
# reader skips a chunk type it does not know, and reads the rest as before
"$dtgen" -o "$t/srcl.dtc" -n 20000 -s 15 --stacks 500 --srclines ||
	no pyreader.gen "dtgen failed"
sz=$(stat -c %s "$t/profile.dtc")
head -c $((sz * 9 / 10)) "$t/profile.dtc" >"$t/cut.dtc"

# the last version-2 writer, from the tree's history
v2rev=$(git rev-parse --verify -q 6c853d4^{commit} 2>/dev/null || true)
caps="profile demo small cut srcl"
if [ -n "$v2rev" ] && mkdir -p "$t/v2" &&
	git archive "$v2rev" formats include | tar -x -C "$t/v2" &&
	cc -std=c11 -D_GNU_SOURCE -O1 -I"$t/v2/include" -I"$t/v2/formats" -o "$t/v2/dtgen" \
		"$t/v2/formats/gen/dtgen.c" "$t/v2/formats/"dtcap_*.c -lzstd -lxxhash -lpthread -lm &&
	"$t/v2/dtgen" -o "$t/v2.dtc" -n 20000 -s 14 --syscalls --block 6000; then
	caps="$caps v2"
else
	no pyreader.v2_build "cannot build the version-2 writer from 6c853d4"
fi

for c in $caps; do
	f=$t/$c.dtc
	if ! "$py" "$here/pyreader.py" "$f" --check >"$t/$c.check" 2>&1; then
		no "pyreader.$c.decodes" "$(cat "$t/$c.check")"
		continue
	fi
	ok "pyreader.$c.decodes"
	echo "# $c: $(cat "$t/$c.check")"
	for tab in events probes stacks frames processes maps counters capture; do
		"$py" "$here/pyreader.py" "$f" $tab >"$t/py.csv" 2>"$t/py.err" ||
			{ no "pyreader.$c.$tab" "pyreader: $(tail -1 "$t/py.err")"; continue; }
		cols=$(head -1 "$t/py.csv" | tr -d '\r' | sed 's/\bend\b/"end"/')
		"$dtreport" sql --csv --partial "$f" "SELECT $cols FROM $tab" >"$t/sql.csv" 2>"$t/sql.err" ||
			{ no "pyreader.$c.$tab" "dtreport sql: $(tail -1 "$t/sql.err")"; continue; }
		rows=$(($(wc -l <"$t/py.csv") - 1))
		# a cut capture has no counters yet; everything else has rows
		if cmp -s "$t/py.csv" "$t/sql.csv" &&
			{ [ "$rows" -gt 0 ] || [ "$c.$tab" = cut.counters ]; }; then
			ok "pyreader.$c.$tab"
			echo "# $c.$tab: $rows rows agree"
		else
			no "pyreader.$c.$tab" "$rows rows; first difference: $(diff "$t/py.csv" "$t/sql.csv" | head -3 | tr '\n' ' ')"
		fi
	done
	"$py" "$here/pyreader.py" "$f" --kallsyms >"$t/k.py"
	"$dtcdump" -k "$f" >"$t/k.lib" 2>/dev/null
	[ -s "$t/k.py" ] && cmp -s "$t/k.py" "$t/k.lib" && ok "pyreader.$c.kallsyms" ||
		no "pyreader.$c.kallsyms" "$(wc -c <"$t/k.py") vs $(wc -c <"$t/k.lib") bytes"
	"$py" "$here/pyreader.py" "$f" --files >"$t/f.py"
	"$dtcdump" "$f" 2>/dev/null | grep '^file ' >"$t/f.lib"
	[ -s "$t/f.py" ] && cmp -s "$t/f.py" "$t/f.lib" && ok "pyreader.$c.files" ||
		no "pyreader.$c.files" "$(diff "$t/f.py" "$t/f.lib" | head -2 | tr '\n' ' ')"
done

# the tools on top: --ctx filters on the new column, stats shows who wrote
# the capture, --salvage reads past a damaged block that stops a plain read
n_py=$("$py" "$here/pyreader.py" "$t/demo.dtc" events | tr -d '\r' | grep -cE ',(hardirq|nmi)$')
n_st=$("$dtreport" stats --json --ctx hardirq,nmi "$t/demo.dtc" | "$py" -c \
	'import json,sys; print(json.load(sys.stdin)["events_matched"])')
[ "$n_py" -gt 0 ] && [ "$n_py" = "$n_st" ] && ok cli.ctx_filter ||
	no cli.ctx_filter "stats --ctx hardirq,nmi: $n_st events, pyreader: $n_py"
"$dtreport" stats "$t/demo.dtc" >"$t/st.txt" 2>&1
grep -q "^written by   dt .*format 3" "$t/st.txt" && grep -q "^machine " "$t/st.txt" &&
	grep -q "^clock " "$t/st.txt" && ok cli.stats_metadata ||
	no cli.stats_metadata "$(head -8 "$t/st.txt" | tr '\n' '|')"
cp "$t/profile.dtc" "$t/salv.dtc"
off=$("$py" - "$t/salv.dtc" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
off, n = 32, 0
while off + 32 <= len(b):
    t = b[off:off + 4]
    x, c = struct.unpack_from("<II", b, off + 8)
    if t == b"EVNT":
        n += 1
        if n == 2:
            print(off + 32 + x + c // 2)
            break
    off += 32 + x + c
PY
)
printf '\x5a' | dd of="$t/salv.dtc" bs=1 seek="$off" conv=notrunc 2>/dev/null
# every column, so the damaged one is decoded (count(*) alone decodes none)
q="SELECT * FROM events"
if "$dtreport" sql --csv "$t/salv.dtc" "$q" >/dev/null 2>"$t/s1.err"; then
	no cli.salvage "a damaged block read without --salvage"
else
	got=$("$dtreport" sql --csv --salvage "$t/salv.dtc" "$q" 2>"$t/s2.err" | tail -n +2 | wc -l)
	if [ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -lt 150000 ] && grep -q salvage "$t/s2.err"; then
		ok cli.salvage
		echo "# salvage: $got of 150000 events; $(head -1 "$t/s2.err")"
		"$dtreport" stats --salvage "$t/salv.dtc" >"$t/st2.txt" 2>&1
		grep -q "^SALVAGED     skipped bytes [0-9]*\.\.[0-9]* (damaged EVNT chunk): 40000 events lost" "$t/st2.txt" &&
			ok cli.stats_lists_salvaged ||
			no cli.stats_lists_salvaged "$(grep -i salv "$t/st2.txt" | head -2 | tr '\n' ' ')"
	else
		no cli.salvage "--salvage gave '$got': $(head -2 "$t/s2.err" | tr '\n' ' ')"
	fi
fi

# it is a reader, not an echo: damage must stop it
cp "$t/profile.dtc" "$t/bad.dtc"
printf '\x55' | dd of="$t/bad.dtc" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
if "$py" "$here/pyreader.py" "$t/bad.dtc" events >/dev/null 2>"$t/bad.err"; then
	no pyreader.detects_damage "a flipped byte went unnoticed"
else
	ok pyreader.detects_damage
fi
exit 0
