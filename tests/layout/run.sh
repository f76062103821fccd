#!/bin/bash
# run.sh TOP - cli/lib's two halves stay apart: nothing in cli/lib/rec/
# includes a header of cli/lib/report/ or the other way round, and cli/lib
# itself holds only what both use.  Prints PASS/FAIL lines.
set -u
top=$1
lib=$top/cli/lib
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

headers() { (cd "$lib/$1" && ls -1 *.h); }
# crosses HALF OTHER: files of HALF that include a header only OTHER has
crosses() {
	local h bad=""
	for h in $(headers "$2"); do
		[ -e "$lib/$1/$h" ] && continue
		bad="$bad$(grep -l "#include \"$h\"" "$lib/$1"/*.[ch] 2>/dev/null | sed "s|$lib/||;s|$| ($h)|" | tr '\n' ' ')"
	done
	echo "$bad"
}
for half in rec report; do
	[ -n "$(headers $half)" ] || { fail "$half-headers" "cli/lib/$half has no header"; continue; }
	other=$([ $half = rec ] && echo report || echo rec)
	bad=$(crosses $half $other)
	[ -z "$bad" ] && pass "$half-stays-apart" || fail "$half-stays-apart" "includes of cli/lib/$other: $bad"
done
# shared: util only; every other file belongs to a half
extra=$(cd "$lib" && ls -1 *.c *.h 2>/dev/null | grep -vx 'util\.[ch]' | tr '\n' ' ')
[ -z "$extra" ] && pass shared-is-util || fail shared-is-util "cli/lib/ also holds: $extra (rec/ or report/?)"
# the shared part includes neither half
bad=$(for h in $(headers rec) $(headers report); do grep -l "#include \"$h\"" "$lib"/util.[ch]; done 2>/dev/null | sort -u | tr '\n' ' ')
[ -z "$bad" ] && pass util-includes-no-half || fail util-includes-no-half "$bad"
