#!/bin/bash
# run.sh TOP - the source tree keeps the shape doc/DESIGN.md describes:
#  - cli/lib's two halves stay apart: nothing in cli/lib/rec/ includes a
#    header of cli/lib/report/ or the other way round, and cli/lib itself
#    holds only what both use;
#  - the recording sources (cli/lib/rec/src_*.c) never include each
#    other's headers;
#  - formats/ (libdtcap, libdtpq, the generators) depends on nothing of
#    cli/: no include of a cli/ header, no cli/ file in its fragments;
#  - the report engine (engine.h and the files computing reports) takes no
#    argv, opens nothing and never exits: that is the command lines' layer
#    (cmd_*.c, their skeleton cmd_run.h), which it never includes; engine.h
#    includes neither report.h nor cmd_run.h (the engine's files take only
#    report.h's exit statuses and dtr_err).
# Prints PASS/FAIL lines.
set -u
top=$1
lib=$top/cli/lib
. "$top/tests/lib.sh"

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

# ---- sources: src_X.c includes no src_Y header nor src_Y.c (what they
# share is source.h)
srcs=$(cd "$lib/rec" && ls -1 src_*.c 2>/dev/null)
if [ "$(echo "$srcs" | grep -c .)" -lt 2 ]; then
	fail sources-apart "fewer than two cli/lib/rec/src_*.c: $srcs"
else
	bad=
	for s in $srcs; do
		own=${s%.c}
		bad="$bad$(grep -o '#include "[^"]*src_[^"]*"' "$lib/rec/$s" |
			grep -v "\"$own\.h\"" | sed "s|^|$s: |" | tr '\n' ' ')"
	done
	[ -z "$bad" ] && pass sources-apart || fail sources-apart "$bad"
fi
# the perf source's shared structures stay its own: perf_int.h is included
# by src_perf.c and its perf_*.c files only (the dt source, the recording
# loop and the rest know the perf source through source.h)
if [ -e "$lib/rec/perf_int.h" ]; then
	bad=$(grep -l '#include "perf_int.h"' "$lib"/*/*.[ch] 2>/dev/null |
		grep -vE '/rec/(src_perf\.c|perf_[a-z_]+\.c)$' | sed "s|$lib/||" | tr '\n' ' ')
	[ -z "$bad" ] && pass perf-int-private || fail perf-int-private "perf_int.h included by $bad"
else
	fail perf-int-private "no cli/lib/rec/perf_int.h"
fi

# ---- formats/ depends on nothing of cli/
cli_h=$(cd "$top/cli" && find . -name '*.h' -printf '%f\n' | sort -u)
fmt_files=$(cd "$top" && find formats -name '*.[ch]' | sort)
bad=
for f in $fmt_files; do
	for inc in $(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$top/$f"); do
		b=${inc##*/}
		# a header of formats/ or include/ itself is fine, even if cli/ has one so named
		if [ -e "$top/$(dirname "$f")/$inc" ] || [ -e "$top/include/$inc" ] ||
		   [ -e "$top/formats/$inc" ] || [ -e "$top/formats/parquet/$inc" ]; then
			continue
		fi
		if echo "$cli_h" | grep -qx "$b" || [[ $inc == *cli/* ]]; then
			bad="$bad$f ($inc) "
		fi
	done
done
[ -n "$fmt_files" ] || fail formats-no-cli "no source under formats/"
[ -n "$fmt_files" ] && { [ -z "$bad" ] && pass formats-no-cli || fail formats-no-cli "includes of cli/: $bad"; }
# (comments may say so)
bad=$(cd "$top" && for m in $(find formats -name '*.mk'); do
	grep -v '^[[:space:]]*#' "$m" | grep -q 'cli/' && echo "$m"; done | tr '\n' ' ')
[ -z "$bad" ] && pass formats-fragments-no-cli || fail formats-fragments-no-cli "$bad"

# ---- the engine's layer: no argv, no opening, no exit, no command header
rep=$lib/report
engine="engine.h report_stats.c report_flame.c report_top.c report_frames.c report_offcpu.c
	report_blame.c report_latency.c report_syscalls.c report_heatmap.c sched_model.c
	span_model.c sort_keys.c stack_names.c"
missing= bad=
for f in $engine; do
	[ -e "$rep/$f" ] || { missing="$missing$f "; continue; }
	# code lines only: comments may say what the engine does not do
	bad="$bad$(grep -nE 'getopt|optind|\bdtr_open\(|\bdtcap_open(_opts)?\(|(^|[^_a-z])exit\(|#include "cmd_run\.h"' "$rep/$f" |
		grep -vE '^[0-9]+:[[:space:]]*(/?\*|//)' | sed "s|^|$f:|" | tr '\n' ' ')"
done
[ -z "$missing" ] || fail engine-files "gone or renamed (update this list and DESIGN.md): $missing"
[ -z "$bad" ] && pass engine-no-argv-open-exit || fail engine-no-argv-open-exit "$bad"
bad=$(grep -n '#include "\(report\|cmd_run\)\.h"' "$rep/engine.h")
[ -z "$bad" ] && pass engine-header-below-commands || fail engine-header-below-commands "engine.h: $bad"

# ---- the build: flags defined once (the Makefile's CFLAGS_STD, CFLAGS_INC,
# FUZZ_CFLAGS), every needed fragment read with include (only the compiler's
# .d files are optional).
frags=$(cd "$top" && find . -name '*.mk' -not -path './build/*' -not -path './kernel/.*' | sort)
bad=$(cd "$top" && for m in $frags; do
	grep -v '^[[:space:]]*#' "$m" | grep -q -- '-std=c11' && echo "$m"; done | tr '\n' ' ')
[ -z "$bad" ] && pass build-flags-once || fail build-flags-once "copies of the C flags in: $bad"
bad=$(cd "$top" && grep -n '^[[:space:]]*-include' Makefile $frags | grep -v "\.d'" | tr '\n' ' ')
[ -z "$bad" ] && pass build-fragments-required || fail build-fragments-required "optional includes: $bad"
