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
#    report.h's exit statuses and rpt_err);
#  - the recording session (record.c and the files it was split into)
#    never asks a source about processes: what the kernel says of them
#    reaches it through the machine (machine.h), and struct dtsrc_ops has
#    no process call;
#  - no C file in cli/ is over 1,500 lines;
#  - /proc/PID/maps is read (procmaps.h dtpm_read, or the file opened by
#    name) only by the machine: machine.c and its table, proctab.c.
#  - the recording sources (src_*.c, perf_*.c, source.c) feed the machine
#    and hand it their samples, never look a process up (no proctab_*
#    call, no dtm_proc/dtm_comm);
# The last four rules are also run on a copy of the tree broken on purpose,
# and must fail there.
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
	bad="$bad$(grep -nE 'getopt|optind|\brpt_open\(|\bdtcap_open(_opts)?\(|(^|[^_a-z])exit\(|#include "cmd_run\.h"' "$rep/$f" |
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

# ---- the recording session asks no source about processes.
# session_asks TOP: code lines of the session's files that do (ops->proc
# or any ops member about processes, a proctab_* call: that table is the
# machine's, fed by the sources), and source.h's process members.
session_files="record.c record_int.h snapshots.c flight.c spawn.c"
session_asks() {
	local r=$1/cli/lib/rec f
	for f in $session_files; do
		[ -e "$r/$f" ] || { echo "$f: missing (update session_files and DESIGN.md)"; continue; }
		grep -nE 'ops->[a-z_]*(proc|filters_targets)[a-z_]*|\bproctab_[a-z_]+\(|dtsrc_proc' "$r/$f" |
			grep -vE '^[0-9]+:[[:space:]]*(/?\*|//)' | sed "s|^|$f:|"
	done
	# the operations table itself: no member about processes
	sed -n '/^struct dtsrc_ops {/,/^};/p' "$r/source.h" |
		grep -nE '\(\*[a-z_]*(proc|filters_targets)[a-z_]*\)' | sed 's|^|source.h:|'
}
bad=$(session_asks "$top" | tr '\n' ' ')
[ -z "$bad" ] && pass session-asks-no-source-about-processes ||
	fail session-asks-no-source-about-processes "$bad"

# ---- data flows one way: the sources feed the machine and hand it their
# samples (dtm_feed*, dtm_observe, dtm_sample); they never look a process
# up.  source_looks_up TOP: code lines of the source files that include or
# call the machine's table (proctab.h, proctab_*, ->pt) or a lookup of the
# machine's (dtm_proc, dtm_comm, dtm_set_code) or the session's calls
# (dtm_event, dtm_read_end).
source_looks_up() {
	local r=$1/cli/lib/rec f
	for f in $(cd "$r" && ls -1 src_*.c perf_*.c perf_int.h source.c source.h 2>/dev/null); do
		grep -nE '\bproctab_[a-z_]+\(|->pt\b|\bdtm_(proc|comm|set_code|event|read_end)\(|#include "proctab\.h"' "$r/$f" |
			grep -vE '^[0-9]+:[[:space:]]*(/?\*|//)' | sed "s|^|$f:|"
	done
}
bad=$(source_looks_up "$top" | tr '\n' ' ')
[ -z "$bad" ] && pass sources-never-look-up-processes ||
	fail sources-never-look-up-processes "$bad"

# ---- no file in cli/ over 1,500 lines
max_lines=1500
# too_long TOP: "FILE (LINES)" for each file over the limit
too_long() {
	local t=$1 f n
	(cd "$t" && find cli -name '*.[ch]' | sort) | while read -r f; do
		n=$(wc -l <"$t/$f")
		[ "$n" -gt $max_lines ] && echo "$f ($n lines)"
	done
}
bad=$(too_long "$top" | tr '\n' ' ')
[ -z "$bad" ] && pass cli-files-under-1500-lines || fail cli-files-under-1500-lines "$bad"

# ---- the machine is the one reader of a process's /proc maps
# maps_readers TOP: code lines outside machine.c, proctab.c and the parser
# itself that call dtpm_read or name /proc/.../maps
maps_readers() {
	(cd "$1/cli" && grep -rnE '\bdtpm_read\(|/maps"' --include='*.[ch]' . |
		grep -vE '^\./lib/rec/(machine|proctab|procmaps)\.[ch]:' |
		grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' | sed 's|^\./||')
}
bad=$(maps_readers "$top" | tr '\n' ' ')
[ -z "$bad" ] && pass proc-maps-read-by-machine-only || fail proc-maps-read-by-machine-only "$bad"

# ---- the rules above fail on a tree broken on purpose
tmp=$(mktemp -d) || { fail layout-broken-tree "mktemp"; exit 0; }
trap 'rm -rf "$tmp"' EXIT
cp -r "$top/cli" "$tmp/cli"
printf '\nstatic void asks(struct rec *r) { (void)r->src->ops->proc(r->src, 1); }\n' \
	>>"$tmp/cli/lib/rec/snapshots.c"
bad=$(session_asks "$tmp")
case $bad in *snapshots.c*ops-\>proc*) pass session-rule-fails-on-ops-proc ;;
*) fail session-rule-fails-on-ops-proc "a session file calling ops->proc went unseen: $bad" ;; esac
cp "$top/cli/lib/rec/snapshots.c" "$tmp/cli/lib/rec/snapshots.c"
printf '\nstatic void feeds(struct proctab *pt) { proctab_exit(pt, 1); }\n' >>"$tmp/cli/lib/rec/flight.c"
bad=$(session_asks "$tmp")
case $bad in *flight.c*proctab_exit*) pass session-rule-fails-on-proctab ;;
*) fail session-rule-fails-on-proctab "a session file using the sources' table went unseen: $bad" ;; esac
cp "$top/cli/lib/rec/flight.c" "$tmp/cli/lib/rec/flight.c"
sed -i 's|^struct dtsrc_ops {|&\n\tconst struct kproc *(*proc)(struct dtsrc *s, uint32_t pid);|' \
	"$tmp/cli/lib/rec/source.h"
bad=$(session_asks "$tmp")
case $bad in source.h*) pass session-rule-fails-on-ops-member ;;
*) fail session-rule-fails-on-ops-member "a process member of dtsrc_ops went unseen: $bad" ;; esac
printf '\nstatic const char *name(struct src_perf *sp) { return proctab_comm_of(sp->pt, 1, 1, 0); }\n' \
	>>"$tmp/cli/lib/rec/perf_sample.c"
bad=$(source_looks_up "$tmp")
case $bad in *perf_sample.c*proctab_comm_of*) pass lookup-rule-fails-on-proctab ;;
*) fail lookup-rule-fails-on-proctab "a source reading the machine's table went unseen: $bad" ;; esac
cp "$top/cli/lib/rec/perf_sample.c" "$tmp/cli/lib/rec/perf_sample.c"
printf '\nstatic const void *kp(struct src_dt *d) { return dtm_proc(d->m, 1); }\n' >>"$tmp/cli/lib/rec/src_dt.c"
bad=$(source_looks_up "$tmp")
case $bad in *src_dt.c*dtm_proc*) pass lookup-rule-fails-on-machine-lookup ;;
*) fail lookup-rule-fails-on-machine-lookup "a source asking the machine went unseen: $bad" ;; esac
cp "$top/cli/lib/rec/src_dt.c" "$tmp/cli/lib/rec/src_dt.c"
sed -i 's|^#include "machine.h"|&\n#include "proctab.h"|' "$tmp/cli/lib/rec/perf_int.h"
bad=$(source_looks_up "$tmp")
case $bad in *perf_int.h*proctab.h*) pass lookup-rule-fails-on-table-include ;;
*) fail lookup-rule-fails-on-table-include "a source including the machine's table went unseen: $bad" ;; esac
cp "$top/cli/lib/rec/perf_int.h" "$tmp/cli/lib/rec/perf_int.h"
# a file one line over, and one at the limit
seq 1 $((max_lines + 1)) >"$tmp/cli/lib/rec/toolong.c"
bad=$(too_long "$tmp")
case $bad in *"cli/lib/rec/toolong.c ($((max_lines + 1)) lines)"*) pass size-rule-fails-on-long-file ;;
*) fail size-rule-fails-on-long-file "a $((max_lines + 1))-line file went unseen: $bad" ;; esac
seq 1 $max_lines >"$tmp/cli/lib/rec/toolong.c"
bad=$(too_long "$tmp")
case $bad in *toolong.c*) fail size-rule-passes-at-limit "a $max_lines-line file refused: $bad" ;;
*) pass size-rule-passes-at-limit ;; esac
printf '\nstatic char *again(unsigned pid) { return dtpm_read(pid); }\n' >>"$tmp/cli/lib/rec/unwind.c"
bad=$(maps_readers "$tmp")
case $bad in *unwind.c*dtpm_read*) pass maps-rule-fails-on-reader ;;
*) fail maps-rule-fails-on-reader "a worker reading /proc maps went unseen: $bad" ;; esac
