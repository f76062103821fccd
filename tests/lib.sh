# tests/lib.sh - sourced by the suites' scripts (". tests/lib.sh"): what
# every harness wrote for itself before.  The PASS/FAIL lines are the ones
# tests/run-suite.sh collects (see DESIGN.md "Tests").

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# san FILE...: does any of the files hold a sanitizer report?
san() { grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$@" 2>/dev/null; }

# The ASan/UBSan builds under test: a leak is an error, and UBSan stops at
# its first report with a stack, so a finding fails the command that made it.
sanitizers_strict() {
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
}

# The ASan dtrec under LD_PRELOAD (the fake /dev/dt) or recording through
# perf: ASan's link-order check would refuse the preload.
sanitizers_dtrec() {
	export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1
}

# rec NAME ARGS...: the caller's $DTREC through the perf source, quiet;
# its output in $T/NAME.out, its messages in $T/NAME.err.
rec() {
	local name=$1; shift
	"$DTREC" --source perf -q "$@" 2>"$T/$name.err" >"$T/$name.out"
}

# fuzz_verdict NAME RC LOG CRASH_PREFIX MAX PATTERN: the verdict of one
# libFuzzer run that exited RC, wrote LOG and leaves its findings as
# CRASH_PREFIX*: its run counts as comments, then PASS NAME when it exited
# 0 and found nothing, else FAIL with up to MAX log lines matching PATTERN.
fuzz_verdict() {
	local name=$1 rc=$2 log=$3 crash=$4 max=$5 pat=$6
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | sed 's/^/# /'
	if [ "$rc" -eq 0 ] && ! ls "$crash"* >/dev/null 2>&1; then
		echo "PASS $name"
	else
		echo "FAIL $name: libFuzzer exit $rc; see $log and $(dirname "$crash")/"
		grep -m"$max" -E "$pat" "$log"
	fi
}
