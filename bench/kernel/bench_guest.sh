# bench_guest.sh - runs inside the VM (tests/vm/run.sh --script): one boot,
# all kernel benchmark figures.  dt.ko was insmodded by the harness, perf
# and its libraries copied to /perf.
[ -c /dev/dt ] || { echo "bench-kernel: /dev/dt missing (insmod failed?)"; exit 1; }
[ -e /sys/kernel/tracing/events/raw_syscalls ] || { echo "bench-kernel: tracefs not mounted"; exit 1; }
[ -x /perf/perf ] || { echo "bench-kernel: /perf/perf missing"; exit 1; }
kbench ${KBENCH_CALLS:-500000} ${KBENCH_ROUNDS:-5} ${KBENCH_PERF_CALLS:-200000} /perf
