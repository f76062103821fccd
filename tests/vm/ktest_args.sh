#!/bin/bash
# ktest_args.sh DT_KTEST - the vm-ktest-args suite: dt_ktest's command line,
# checked on the host (it is a static binary; no test here opens /dev/dt).
# A misspelt test name in kernel_tests.sh must stop the run, not pass it
# by running nothing; a workload with a bad count must not run as zero.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
k=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# $1 name, $2 want status, $3 stderr must contain, rest: the arguments.
# Nothing may be run before the refusal: no PASS/FAIL line on stdout.
refused() {
	local n=$1 want=$2 msg=$3 rc; shift 3
	"$k" "$@" >"$w/out" 2>"$w/err"; rc=$?
	if [ $rc -ne "$want" ]; then fail "$n" "dt_ktest $* exited $rc, want $want"
	elif ! grep -qF -- "$msg" "$w/err"; then fail "$n" "stderr lacks '$msg': $(head -c 200 "$w/err")"
	elif grep -q '^\(PASS\|FAIL\)' "$w/out"; then fail "$n" "ran tests first: $(head -n 1 "$w/out")"
	else pass "$n"; fi
}

refused ktest-args.none 2 "usage: dt_ktest all|"
refused ktest-args.unknown-test 2 "no test nosuch" nosuch
refused ktest-args.unknown-after-known 2 "no test lst" list lst
refused ktest-args.timed-bad-secs 2 "no test fuzz=x" fuzz=x
refused ktest-args.untimed-with-secs 2 "no test list=5" list=5
refused ktest-args.workload-not-number 2 "calls=abc wants calls=N" calls=abc
refused ktest-args.workload-negative 2 "usdt=-1 wants usdt=N" usdt=-1
refused ktest-args.workload-trailing 2 "yields=3x wants yields=N" yields=3x
refused ktest-args.range-reversed 2 "closes=5:3 wants closes=A:B" closes=5:3
refused ktest-args.range-one-number 2 "closes=5 wants closes=A:B" closes=5

# a workload does its work and nothing else: N getppid calls (strace
# counts them; the process's own start-up makes none)
if ! command -v strace >/dev/null; then
	fail ktest-args.workload-count "strace is not installed (scripts/install-deps.sh)"
else
	strace -f -e trace=getppid -o "$w/st" "$k" calls=37 >"$w/out" 2>&1; rc=$?
	n=$(grep -c 'getppid()' "$w/st")
	[ $rc -eq 0 ] && [ "$n" -eq 37 ] && [ ! -s "$w/out" ] && pass ktest-args.workload-count ||
		fail ktest-args.workload-count "calls=37: status $rc, $n getppid calls, output '$(head -c 100 "$w/out")'"
fi

# every test kernel_tests.sh and tests/dtrec/guest.sh ask for is one
# dt_ktest knows (the usage line lists the table)
usage=$("$k" 2>&1 | sed -n 's/^usage: dt_ktest //p' | tr '|' '\n' | sed 's/\[=S\]$//; s/=.*//')
asked=$(cat "$here/kernel_tests.sh" "$here/../dtrec/guest.sh" | grep -o 'dt_ktest [a-z0-9 =:${}_-]*' |
	sed 's/^dt_ktest //' | tr ' ' '\n' | sed 's/=.*//' | grep '^[a-z][a-z0-9-]*$' | sort -u)
bad=
for a in $asked; do grep -qxF -- "$a" <<<"$usage" || bad="$bad $a"; done
[ -n "$asked" ] && [ -z "$bad" ] && pass ktest-args.harness-names ||
	fail ktest-args.harness-names "asked for but unknown:${bad:- (none found: the grep is stale)}"
