#!/bin/bash
# tests/export/pprof_meta.sh - what `go tool pprof` reads besides the
# numbers: the "[truncated]" frame of stacks the recorder cut short, each
# mapping's build id from the capture, and the main executable as the
# first mapping (else pprof titles the profile "[kernel.kallsyms]").
# Read back with npm pprof-format; the capture is tests/report/mkcap's
# (truncated kernel and user stacks, build ids for the kernel and app).
# Env: B, DTREPORT, MKCAP.
set -u
B=${B:-build}
D=${DTREPORT:-$B/asan/bin/dtreport}
MKCAP=${MKCAP:-$B/tests/report/mkcap}
HERE=$(cd "$(dirname "$0")" && pwd)
export NPM=$(cd "$B" && pwd)/npm
T=$(mktemp -d "${TMPDIR:-/tmp}/dtppmeta.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict
check() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$(echo "$2" | head -c 300)' want '$(echo "$3" | head -c 300)'"; fi
}

for tool in "$D" "$MKCAP" node python3; do
	command -v "$tool" >/dev/null 2>&1 || { fail pprof_meta_setup "missing $tool"; exit 0; }
done
if ! why=$("$HERE/npm.sh" "$NPM"); then
	fail pprof_meta_npm "$why"
	exit 0
fi
C=$T/m.dtc
"$MKCAP" "$C" 7 20000 || { fail pprof_meta_setup "mkcap"; exit 0; }
"$D" export --format pprof -o "$T/p.pb.gz" "$C" >/dev/null 2>"$T/export.err"
check pprof_meta_export "$?" 0
node "$HERE/pprof_meta.mjs" "$T/p.pb.gz" >"$T/meta" 2>"$T/meta.err" || fail pprof_meta_decode "$(tail -2 "$T/meta.err")"
"$D" flame --folded "$C" -o - >"$T/folded" 2>"$T/flame.err"

# the marker: as many samples carry it as the flame graph counts
want=$(awk '/\[truncated\]/ { n += $NF } END { print n + 0 }' "$T/folded")
[ "$want" -gt 0 ] || fail pprof_meta_premise "the capture has no truncated stack"
check pprof_truncated_marker "$(awk '$1=="truncated"{print $2}' "$T/meta")" "$want"
python3 "$HERE/folded_totals.py" <"$T/folded" >"$T/flame.tot"
node "$HERE/pprof.mjs" "$T/p.pb.gz" >"$T/pprof.tot" 2>/dev/null
if cmp -s "$T/pprof.tot" "$T/flame.tot"; then pass pprof_totals_eq_flame_truncated; else
	fail pprof_totals_eq_flame_truncated "$(diff "$T/pprof.tot" "$T/flame.tot" | head -4 | tr '\n' ' ')"; fi

# build ids: the capture's, in hex
check pprof_build_id_exe "$(awk '$1=="map" && $2=="/usr/bin/app" {print $3}' "$T/meta" | sort -u)" \
	"a00102030405060708090a0b0c0d0e0f101112ff"
check pprof_build_id_kernel "$(awk '$1=="map" && $2=="[kernel.kallsyms]" {print $3}' "$T/meta")" \
	"4b65726e656c4275696c644964303132"

# the main binary first: the app has the most user-stack samples
check pprof_main_mapping_first "$(awk '$1=="main"{print $2}' "$T/meta")" "/usr/bin/app"

for f in "$T"/*.err; do
	san "$f" && fail "pprof_meta_sanitizer_$(basename "$f")" "$(grep -m2 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$f")"
done
true
