# bench/lib.sh - the timing helpers of the benchmark scripts, as tests/lib.sh
# is the tests': source it after setting W (the work directory; each timed
# run's output, errors and times go there).
#
# The headline figures are CPU seconds (user + sys) of runs pinned to one
# core: on a shared build machine the wall clock mostly measures the other
# jobs, while on an idle pinned core the two agree.

# pin CMD...: CMD on core 0 (as it is, where taskset is missing)
pin() { if command -v taskset >/dev/null; then taskset -c 0 "$@"; else "$@"; fi; }

# timed CMD...: sets CPU and WALL (seconds) of one run, its stdout in
# $W/out and stderr in $W/err; 1 on failure, with the first lines of err
timed() {
	local TIMEFORMAT='%R %U %S' rc u s
	{ time "$@" >"$W/out" 2>"$W/err"; rc=$?; } 2>"$W/time"
	[ $rc = 0 ] || { echo "bench: failed: $* : $(head -2 "$W/err")" >&2; return 1; }
	read -r WALL u s <"$W/time"
	CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
}

# lt A B: whether the number A is below B (or B is empty: no best yet)
lt() { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# best3 CMD...: sets BCPU and BWALL, each the best of 3 runs
best3() {
	BCPU= BWALL=
	for _ in 1 2 3; do
		timed "$@" || return 1
		if lt "$CPU" "$BCPU"; then BCPU=$CPU; fi
		if lt "$WALL" "$BWALL"; then BWALL=$WALL; fi
	done
}
