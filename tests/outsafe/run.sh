#!/bin/bash
# tests/outsafe/run.sh - what dtrec, dtreport and dtsh do with output and
# input paths a hostile or unlucky user prepared (issue 21, "Output files
# and devices" and the FIFO item of "Inputs that hang"): every case
# asserts that nothing was written where it must not be, not only the
# exit status.  Runs as root: links are made `nobody`'s with chown -h.
# Env: B, DTREPORT, DTREC, DTSH (ASan builds), DTGEN.
set -u
B=${B:-build}
R=${DTREPORT:-$B/asan/bin/dtreport}
REC=${DTREC:-$B/asan/bin/dtrec}
SH=${DTSH:-$B/asan/bin/dtsh}
G=${DTGEN:-$B/bin/dtgen}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/dtoutsafe.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$HERE/../lib.sh"
sanitizers_strict

# ok NAME CMD...: PASS if the command succeeds, else FAIL with $why
ok() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "${why:-}"; fi; }
# refused NAME RC ERRFILE PATTERN: a non-zero exit (not a timeout, not a
# sanitizer report) whose message matches PATTERN
refused() {
	local n=$1 rc=$2 e=$3 pat=$4
	if [ "$rc" -eq 0 ]; then fail "$n" "exit 0: not refused"
	elif [ "$rc" -eq 124 ]; then fail "$n" "blocked (killed by timeout)"
	elif san "$e"; then fail "$n" "sanitizer: $(head -3 "$e" | tr '\n' ' ')"
	elif ! grep -qE "$pat" "$e"; then fail "$n" "status $rc, message '$(head -c 300 "$e" | tr '\n' ' ')' lacks /$pat/"
	else pass "$n"; fi
}

[ "$(id -u)" -eq 0 ] || { fail setup "must run as root (links owned by nobody, mknod)"; exit 0; }
for tool in "$R" "$REC" "$SH" "$G" python3 mknod mkfifo timeout; do
	command -v "$tool" >/dev/null 2>&1 || { fail setup "missing $tool"; exit 0; }
done
id nobody >/dev/null 2>&1 || { fail setup "no user nobody"; exit 0; }

C=$T/cap.dtc
"$G" -o "$C" -n 20000 -s 3 --syscalls >/dev/null 2>&1 || { fail setup dtgen; exit 0; }
# bigger, for writers to be caught in the middle (ASan makes them slow)
BIG=$T/big.dtc
"$G" -o "$BIG" -n 1500000 -s 5 --stacks 50000 >/dev/null 2>&1 || { fail setup dtgen-big; exit 0; }

# ------------------------------------------------ planted symbolic links
# a root-only file a hostile link points at, and a world-writable sticky
# directory (as /tmp) for the links
SECRET=$T/secret
printf 'root only\n' >"$SECRET"
chmod 600 "$SECRET"
cp "$SECRET" "$T/secret.orig"
ST=$T/sticky
mkdir "$ST" && chmod 1777 "$ST"
# plant NAME TARGET [DIR]: a link owned by nobody
plant() { ln -sfn "$2" "${3:-$ST}/$1" && chown -h nobody "${3:-$ST}/$1"; }
intact() { cmp -s "$SECRET" "$T/secret.orig" && [ "$(stat -c %a "$SECRET")" = 600 ]; }

for w in flame diff folded chrome pprof sqlite dtsh-flame dtrec; do
	out=$ST/$w.out
	plant "$w.out" "$SECRET"
	case $w in
	flame) "$R" flame "$C" -o "$out" ;;
	diff) "$R" diff "$C" "$C" -o "$out" ;;
	folded) "$R" flame --folded "$C" -o "$out" ;;
	chrome) "$R" export --format chrome -o "$out" "$C" ;;
	pprof) "$R" export --format pprof -o "$out" "$C" ;;
	sqlite) "$R" export "$C" -o "$out" ;;
	dtsh-flame) "$SH" -c "flame -o $out" "$C" ;;
	dtrec) timeout 20 "$REC" --source perf -q -o "$out" -e profile:hz:97 -d 200ms ;;
	esac >"$T/l.out" 2>"$T/l.err"
	rc=$?
	case $w in
	# exports never replace: an existing name, link or not, is refused first
	chrome|pprof) refused "link-nobody-sticky-$w" $rc "$T/l.err" 'exists|symbolic link owned by uid 65534' ;;
	*) refused "link-nobody-sticky-$w" $rc "$T/l.err" 'symbolic link owned by uid 65534' ;;
	esac
	ok "link-nobody-sticky-$w-target-intact" intact
	why="$(compgen -G "$ST/.$w.out.*" | head -2)"
	ok "link-nobody-sticky-$w-no-temporary" bash -c "! ls -A '$ST' | grep -q '^\.$w\.out\.'"
	why=
done
# the parquet dataset directory as a planted link to a root-only directory
mkdir "$T/rootdir" && chmod 700 "$T/rootdir"
plant ds "$T/rootdir"
"$R" export --format parquet -o "$ST/ds" "$C" >"$T/l.out" 2>"$T/l.err"
refused link-nobody-sticky-parquet $? "$T/l.err" 'symbolic link owned by uid 65534'
ok link-nobody-sticky-parquet-dir-untouched bash -c "[ -z \"\$(ls -A '$T/rootdir')\" ]"

# the flight recorder's numbered dumps beside -o: a planted directory link
plant fl "$T/rootdir"
timeout 20 "$REC" --source perf -q -o "$ST/fl/f.dtc" --flight 64k -e profile:hz:97 -d 300ms \
	>/dev/null 2>"$T/l.err"
refused link-nobody-sticky-flight $? "$T/l.err" 'symbolic link owned by uid 65534'
ok link-nobody-sticky-flight-nothing bash -c "[ -z \"\$(ls -A '$T/rootdir')\" ]"

# outside a sticky directory too: a link another user owns is not followed
mkdir "$T/plain"
plant x.svg "$SECRET" "$T/plain"
"$R" flame "$C" -o "$T/plain/x.svg" >/dev/null 2>"$T/l.err"
refused link-nobody-plain-dir $? "$T/l.err" 'owned by another user'
ok link-nobody-plain-dir-intact intact
# a link in the middle of the path counts as much as the last one
plant sub "$T/rootdir"
"$R" flame "$C" -o "$ST/sub/y.svg" >/dev/null 2>"$T/l.err"
refused link-nobody-directory-component $? "$T/l.err" 'symbolic link owned by uid 65534'
ok link-nobody-directory-component-nothing bash -c "[ -z \"\$(ls -A '$T/rootdir')\" ]"
# the caller's own links are followed: the file they name is replaced, the link stays
printf 'old\n' >"$T/mine.svg"
ln -s "$T/mine.svg" "$ST/mine.svg"
"$R" flame "$C" -o "$ST/mine.svg" >/dev/null 2>"$T/l.err"
why="status $? $(head -c 200 "$T/l.err")"
ok link-own-followed bash -c "[ -L '$ST/mine.svg' ] && grep -q '<svg' '$T/mine.svg'"
# a link of the sticky directory's owner is followed (protected_symlinks):
# the directory is nobody's, the link too, the caller root
mkdir "$T/nbsticky" && chmod 1777 "$T/nbsticky" && chown nobody "$T/nbsticky"
printf 'old\n' >"$T/nbtarget.svg"
plant z.svg "$T/nbtarget.svg" "$T/nbsticky"
"$R" flame "$C" -o "$T/nbsticky/z.svg" >/dev/null 2>"$T/l.err"
why="status $? $(head -c 200 "$T/l.err")"
ok link-dir-owner-followed grep -q '<svg' "$T/nbtarget.svg"
why=

# ------------------------------------------------------------- devices
# a character device that is not /dev/null nor a standard stream: /dev/zero's
# numbers (writes vanish, so the old code's acceptance shows as exit 0)
mknod "$T/zero" c 1 5
# a block device stand-in: a loop minor nobody uses (never opened: refused first)
mknod "$T/blk" b 7 250
for w in flame chrome dtrec dtsh-flame; do
	for dev in zero blk; do
		case $w in
		flame) timeout 20 "$R" flame "$C" -o "$T/$dev" ;;
		chrome) timeout 20 "$R" export --format chrome -o "$T/$dev" "$C" ;;
		dtrec) timeout 20 "$REC" --source perf -q -o "$T/$dev" -e profile:hz:97 -d 200ms ;;
		dtsh-flame) timeout 20 "$SH" -c "flame -o $T/$dev" "$C" ;;
		esac >/dev/null 2>"$T/d.err"
		rc=$?
		if [ $w = chrome ]; then
			# the export never replaces: an existing node is "exists" already
			refused "device-$dev-$w" $rc "$T/d.err" 'exists|device'
		elif [ $dev = zero ]; then
			refused "device-$dev-$w" $rc "$T/d.err" 'refusing to write into a character device'
		else
			refused "device-$dev-$w" $rc "$T/d.err" 'refusing to write into a block device'
		fi
	done
done
# through a planted link to the device: the link is refused first
plant dev.svg "$T/zero"
"$R" flame "$C" -o "$ST/dev.svg" >/dev/null 2>"$T/d.err"
refused device-via-link $? "$T/d.err" 'symbolic link'
# /dev/null and the standard streams stay outputs
"$R" flame "$C" -o /dev/null >/dev/null 2>"$T/d.err"
why="status $? $(head -c 200 "$T/d.err")"
ok device-dev-null-allowed test -z "$(cat "$T/d.err")"
"$R" flame "$C" -o /dev/stdout 2>"$T/d.err" | cat >"$T/pipe.svg"
why="$(head -c 200 "$T/d.err")"
ok device-stdout-pipe-allowed grep -q '<svg' "$T/pipe.svg"
"$R" flame "$C" -o /dev/stderr 2>"$T/stderr.svg" >/dev/null
ok device-stderr-file-allowed grep -q '<svg' "$T/stderr.svg"
why=

# ------------------------------------------------------------- FIFOs
mkfifo "$T/fifo"
timeout 20 "$R" stats "$T/fifo" >/dev/null 2>"$T/f.err"
refused fifo-capture-dtreport $? "$T/f.err" 'a FIFO, not a regular file'
timeout 20 "$R" sql "$T/fifo" 'SELECT 1' >/dev/null 2>"$T/f.err"
refused fifo-capture-sql $? "$T/f.err" 'a FIFO, not a regular file'
timeout 20 "$SH" -c "stats" "$T/fifo" </dev/null >/dev/null 2>"$T/f.err"
refused fifo-capture-dtsh $? "$T/f.err" 'a FIFO, not a regular file'
timeout 20 "$R" stats "$T/zero" >/dev/null 2>"$T/f.err"
refused chardev-capture-dtreport $? "$T/f.err" 'a character device, not a regular file'
timeout 20 "$REC" --source perf -q -o "$T/u.dtc" -e "uprobe:$T/fifo:main:entry" -d 200ms \
	>/dev/null 2>"$T/f.err"
refused fifo-uprobe-path $? "$T/f.err" 'a FIFO, not a regular file'
ok fifo-uprobe-path-no-output test ! -e "$T/u.dtc"
# an output FIFO nobody reads: an error at once, not a wait for a reader
timeout 20 "$R" flame "$C" -o "$T/fifo" >/dev/null 2>"$T/f.err"
refused fifo-output-no-reader-flame $? "$T/f.err" 'no process reads this FIFO'
timeout 20 "$REC" --source perf -q -o "$T/fifo" -e profile:hz:97 -d 200ms >/dev/null 2>"$T/f.err"
refused fifo-output-no-reader-dtrec $? "$T/f.err" 'no process reads this FIFO'
# with a reader it is written in place
cat "$T/fifo" >"$T/fromfifo.svg" &
rd=$!
timeout 20 "$R" flame "$C" -o "$T/fifo" >/dev/null 2>"$T/f.err"
rc=$?
wait $rd
why="status $rc $(head -c 200 "$T/f.err")"
ok fifo-output-with-reader bash -c "[ $rc -eq 0 ] && grep -q '<svg' '$T/fromfifo.svg'"
why=

# ------------------------------------------------------- modes: 0600
for m in 022 000; do
	d=$T/mode$m
	mkdir "$d"
	(
		umask $m
		"$R" flame "$C" -o "$d/f.svg"
		"$R" diff "$C" "$C" -o "$d/d.svg"
		"$R" flame --folded "$C" -o "$d/f.folded"
		"$R" export --format chrome -o "$d/c.json" "$C"
		"$R" export --format pprof -o "$d/p.pb.gz" "$C"
		"$R" export "$C" -o "$d/s.sqlite"
		"$R" export --format parquet -o "$d/pq" "$C"
		"$SH" -c "flame -o $d/sh.svg" "$C" </dev/null
		"$REC" --source perf -q -o "$d/r.dtc" -e profile:hz:97 -d 200ms
	) >/dev/null 2>"$T/m.err"
	for f in f.svg d.svg f.folded c.json p.pb.gz s.sqlite sh.svg r.dtc; do
		why="mode $(stat -c %a "$d/$f" 2>&1) $(head -c 200 "$T/m.err")"
		ok "mode-0600-umask$m-$f" test "$(stat -c %a "$d/$f" 2>/dev/null)" = 600
	done
	why="$(find "$d/pq" -name '*.parquet' ! -perm 600 | head -3)"
	ok "mode-0600-umask$m-parquet" bash -c "[ -n \"\$(find '$d/pq' -name '*.parquet')\" ] &&
		[ -z \"\$(find '$d/pq' -name '*.parquet' ! -perm 600)\" ]"
done
# a replaced file keeps the mode its owner gave it
printf 'x\n' >"$T/keep.svg" && chmod 640 "$T/keep.svg"
"$R" flame "$C" -o "$T/keep.svg" >/dev/null 2>&1
why="mode $(stat -c %a "$T/keep.svg")"
ok mode-replaced-kept bash -c "[ \$(stat -c %a '$T/keep.svg') = 640 ] && grep -q '<svg' '$T/keep.svg'"
why=

# -------------------------------------------- interrupted and killed writers
# waittmp DIR GLOB: wait (up to 60 s) until a temporary matching GLOB exists
waittmp() {
	local _
	for _ in $(seq 600); do
		compgen -G "$1/$2" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# start_export KIND OUT: a long export in the background, $! its pid (the
# tool itself: a subshell would take the signals); SIGINT as a terminal
# gives it (bash starts background jobs with SIGINT ignored)
start_export() {
	local E="env --default-signal=INT $R"
	case $1 in
	chrome) $E export --format chrome -o "$2" "$BIG" >/dev/null 2>"$T/int.err" & ;;
	pprof) $E export --format pprof -o "$2" "$BIG" >/dev/null 2>"$T/int.err" & ;;
	sqlite) $E export "$BIG" -o "$2" >/dev/null 2>"$T/int.err" & ;;
	flame) $E flame "$BIG" -o "$2" >/dev/null 2>"$T/int.err" & ;;
	parquet) $E export --format parquet -o "$2" "$BIG" >/dev/null 2>"$T/int.err" & ;;
	esac
}
for kind in chrome sqlite flame parquet; do
	d=$T/int-$kind
	mkdir "$d"
	case $kind in
	parquet) out=$d/ds; glob='ds/.tmp-export-*' ;;
	*) out=$d/out.$kind; glob=".out.$kind.*" ;;
	esac
	# SIGINT in the middle of writing: no file under the final name, no temporary
	start_export $kind "$out"
	pid=$!
	if waittmp "$d" "$glob" && kill -INT $pid 2>/dev/null; then
		wait $pid
		rc=$?
		left=$(cd "$d" && find . -mindepth 1 \( -name '.out*' -o -name '.tmp-export-*' \) | head -3)
		why="status $rc, left: $left $(ls -A "$d")"
		if [ $kind = parquet ]; then
			ok "sigint-$kind-nothing-left" bash -c "[ $rc -ne 0 ] && [ -z '$left' ] &&
				[ -z \"\$(find '$out' -name '*.parquet')\" ]"
		else
			ok "sigint-$kind-nothing-left" bash -c "[ $rc -ne 0 ] && [ -z '$left' ] && [ ! -e '$out' ]"
		fi
	else
		kill $pid 2>/dev/null; wait $pid
		fail "sigint-$kind-nothing-left" "no temporary appeared before the export ended: $(head -c 200 "$T/int.err")"
	fi
	# SIGKILL: the temporary stays (nothing can remove it) but nothing
	# under the final name; the next run removes it and says so
	rm -rf "$d" && mkdir "$d"
	start_export $kind "$out"
	pid=$!
	if waittmp "$d" "$glob" && kill -KILL $pid 2>/dev/null; then
		wait $pid 2>/dev/null
		stale=$(cd "$d" && compgen -G "$glob" | head -1)
		why="left: $stale $(ls -A "$d")"
		if [ $kind = parquet ]; then
			ok "sigkill-$kind-final-name-clean" test -z "$(find "$out" -name '*.parquet' ! -path '*/.tmp-export-*')"
		else
			ok "sigkill-$kind-final-name-clean" test ! -e "$out"
		fi
		"$R" export --format chrome -o "$d/other.json" "$C" >/dev/null 2>"$T/k.err"
		ok "sigkill-$kind-other-output-keeps-it" test -e "$d/$stale"
		case $kind in
		parquet) "$R" export --format parquet -o "$out" "$C" ;;
		sqlite) "$R" export "$C" -o "$out" ;;
		chrome) "$R" export --format chrome -o "$out" "$C" ;;
		flame) "$R" flame "$C" -o "$out" ;;
		esac >/dev/null 2>"$T/k.err"
		rc=$?
		why="status $rc, $(head -c 300 "$T/k.err" | tr '\n' ' '), left: $(cd "$d" && compgen -G "$glob")"
		ok "sigkill-$kind-next-run-cleans" bash -c "[ $rc -eq 0 ] && [ ! -e '$d/$stale' ] &&
			grep -q 'removed .*left by an interrupted run' '$T/k.err'"
	else
		kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
		fail "sigkill-$kind-final-name-clean" "no temporary appeared before the export ended"
	fi
done
# dtrec: SIGINT ends the recording, whose capture is then complete (it
# opens without --partial) and alone
d=$T/int-dtrec && mkdir "$d"
env --default-signal=INT "$REC" --source perf -q -o "$d/r.dtc" -e profile:hz:97 -d 60s \
	>/dev/null 2>"$T/int.err" &
pid=$!
for _ in $(seq 200); do [ -e "$d/r.dtc" ] && break; sleep 0.05; done
sleep 0.3
kill -INT $pid
wait $pid
rc=$?
"$R" stats "$d/r.dtc" >/dev/null 2>"$T/k.err"
src=$?
why="dtrec status $rc, stats status $src $(head -c 200 "$T/k.err"), dir: $(ls -A "$d")"
ok sigint-dtrec-complete-capture bash -c "[ $src -eq 0 ] && [ \"\$(ls -A '$d')\" = r.dtc ]"

# a temporary of a live process is someone's work in progress: kept
d=$T/live && mkdir "$d"
sleep 60 &
livepid=$!
: >"$d/.x.svg.$livepid.abcdef"
dead=$(bash -c 'echo $$')
: >"$d/.x.svg.$dead.ghijkl"
"$R" flame "$C" -o "$d/x.svg" >/dev/null 2>"$T/k.err"
why="$(ls -A "$d") $(head -c 200 "$T/k.err")"
ok stale-live-process-kept test -e "$d/.x.svg.$livepid.abcdef"
ok stale-dead-process-removed test ! -e "$d/.x.svg.$dead.ghijkl"
# dtrec too sweeps what a killed dtrec left before its rename
: >"$d/.r.dtc.$dead.mnopqr"
"$REC" --source perf -q -o "$d/r.dtc" -e profile:hz:97 -d 200ms >/dev/null 2>"$T/k.err"
why="$(ls -A "$d") $(head -c 200 "$T/k.err")"
ok stale-dtrec-removed bash -c "[ ! -e '$d/.r.dtc.$dead.mnopqr' ] && grep -q 'left by an interrupted run' '$T/k.err'"
# the flight recorder's dumps too: their temporaries are named after the
# process, so what a killed flight recording left is swept by the next
d=$T/flightstale && mkdir "$d"
: >"$d/.f.1.dtc.$dead.stuvwx"
"$REC" --source perf -q -o "$d/f.dtc" --flight 64k -e profile:hz:97 -d 300ms >/dev/null 2>"$T/k.err"
why="$(ls -A "$d") $(head -c 200 "$T/k.err")"
ok stale-flight-dump-removed bash -c "[ ! -e '$d/.f.1.dtc.$dead.stuvwx' ] &&
	grep -q 'left by an interrupted run' '$T/k.err' && [ \"\$(ls -A '$d')\" = f.1.dtc ]"
kill $livepid 2>/dev/null; wait $livepid 2>/dev/null
why=

# ------------------------------------ standard output onto an input capture
cp "$C" "$T/in.dtc"
cp "$C" "$T/in.orig"
# refused_stdout NAME CMD...: run with stdout opened read-write on in.dtc
refused_stdout() {
	local n=$1; shift
	"$@" 1<>"$T/in.dtc" 2>"$T/s.err"
	local rc=$?
	refused "stdout-input-rw-$n" $rc "$T/s.err" 'standard output is the input|refusing to overwrite the input'
	if cmp -s "$T/in.dtc" "$T/in.orig"; then pass "stdout-input-rw-$n-intact"
	else fail "stdout-input-rw-$n-intact" "the capture changed"; cp "$T/in.orig" "$T/in.dtc"; fi
	"$@" >>"$T/in.dtc" 2>"$T/s.err"
	rc=$?
	refused "stdout-input-append-$n" $rc "$T/s.err" 'standard output is the input|refusing to overwrite the input'
	if cmp -s "$T/in.dtc" "$T/in.orig"; then pass "stdout-input-append-$n-intact"
	else fail "stdout-input-append-$n-intact" "the capture changed"; cp "$T/in.orig" "$T/in.dtc"; fi
}
refused_stdout top "$R" top "$T/in.dtc"
refused_stdout stats "$R" stats "$T/in.dtc"
refused_stdout stats-multi "$R" stats "$C" "$T/in.dtc"
refused_stdout flame "$R" flame "$T/in.dtc"
refused_stdout sql "$R" sql "$T/in.dtc" 'SELECT count(*) FROM events'
refused_stdout dtsh-sql "$SH" -c 'SELECT count(*) FROM events' "$T/in.dtc"
refused_stdout dtsh-stats-multi "$SH" -c "open $C $T/in.dtc; stats"
refused_stdout dtsh-stdin "$SH" "$T/in.dtc" <<<'SELECT count(*) FROM events;'

# ---------------------------------------------- two dtrec on one output
two=$T/two.dtc
"$REC" --source perf -q -o "$two" -e profile:hz:97 -d 6s >/dev/null 2>"$T/two1.err" &
first=$!
# wait for its temporary file or its output, whichever we see
for _ in $(seq 200); do
	[ -e "$two" ] || compgen -G "$T/.two.dtc.*" >/dev/null && break
	sleep 0.05
done
"$REC" --source perf -q -o "$two" -e profile:hz:97 -d 200ms >/dev/null 2>"$T/two2.err"
refused two-dtrec-early $? "$T/two2.err" 'another dtrec'
# and once the first one's capture has its name
for _ in $(seq 200); do [ -e "$two" ] && break; sleep 0.05; done
sleep 0.5
"$REC" --source perf -q -o "$two" -e profile:hz:97 -d 200ms >/dev/null 2>"$T/two3.err"
refused two-dtrec-renamed $? "$T/two3.err" 'another dtrec'
wait $first
rc=$?
"$R" stats "$two" >"$T/two.stats" 2>&1
why="first: status $rc $(head -c 200 "$T/two1.err"); $(head -c 300 "$T/two.stats")"
# the first capture lasted its 6 s: it was not replaced by a 200 ms one
ok two-dtrec-first-kept bash -c "[ $rc -eq 0 ] && python3 - '$R' '$two' <<'PY'
import subprocess, sys
out = subprocess.run([sys.argv[1], 'sql', '--csv', sys.argv[2],
	'SELECT (max(ts) - min(ts)) / 1e9 FROM events'], capture_output=True, text=True).stdout
sys.exit(0 if float(out.split()[-1]) > 3 else 1)
PY"
# a relative output is the same file as its temporary's own lock: no
# refusal of oneself
(cd "$T" && "$REC" --source perf -q -o rel.dtc -e profile:hz:97 -d 200ms) >/dev/null 2>"$T/rel.err"
why="status $? $(head -c 200 "$T/rel.err")"
ok dtrec-relative-output bash -c "[ -s '$T/rel.dtc' ] && [ ! -s '$T/rel.err' ]"
# afterwards the output is free again
"$REC" --source perf -q -o "$two" -e profile:hz:97 -d 200ms >/dev/null 2>"$T/two4.err"
why="status $? $(head -c 200 "$T/two4.err")"
ok two-dtrec-after-first-ends test ! -s "$T/two4.err"
why=

# ------------------------------------------------------ dtsh's history
python3 "$HERE/history.py" "$SH" "$C" "$T"
exit 0
