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
