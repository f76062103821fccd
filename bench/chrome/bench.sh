#!/bin/bash
# bench.sh DTREPORT DTGEN WORKDIR - chrome.*: the Chrome trace export's
# peak memory does not follow the number of syscall entry/return events
# (they are sorted a million at a time through a temporary file): peak RSS
# exporting 6M synthetic events (half of them syscall/sched) against 3M in
# the same run, as "bench NAME VALUE UNIT" lines.  A whole-capture sort
# in memory would need about twice as much for twice the events.
set -u
D=$1 G=$2 W=$3
mkdir -p "$W"
for n in 3000000 6000000; do
	[ -f "$W/s$n.dtc" ] || "$G" -o "$W/s$n.dtc" -n $n -s 4 --syscalls || exit 1
done
# peak resident set of one export, in KiB (the children's ru_maxrss)
rss() {
	rm -f "$W/out.json"
	python3 - "$D" export --format chrome -o "$W/out.json" "$1" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
a=$(rss "$W/s3000000.dtc") || exit 1
b=$(rss "$W/s6000000.dtc") || exit 1
rm -f "$W/out.json"
echo "bench chrome.rss_3m_events $((a / 1024)) MiB"
echo "bench chrome.rss_6m_events $((b / 1024)) MiB"
awk -v a="$a" -v b="$b" 'BEGIN { printf "bench chrome.rss_ratio_6m_to_3m %.2f ratio\n", b / a }'
echo "target <= 1.5"
