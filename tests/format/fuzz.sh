#!/bin/bash
# fuzz.sh BUILD FUZZER FUZZER_NOSUM DTGEN DTHOSTILE: fuzz the reader for a
# bounded time over a seed corpus made now (small dtgen captures and cuts
# of them, and dthostile's crafted symbol tables, scaled to fit -max_len).
# PASS when libFuzzer finds nothing; crash inputs stay in the scratch dir
# (printed) and are never committed.
set -u
. "$(dirname "$0")/../lib.sh"
b=$1 fz=$2 fz_nosum=$3 dtgen=$4 dthostile=$5
t=$b/fuzz/work
rm -rf "$t" && mkdir -p "$t/seed" "$t/corpus" "$t/crash"
for s in 1 2 3; do
	"$dtgen" -o "$t/seed/g$s.dtc" -n $((150 * s)) -s $s --stacks 40 --pids 2 --block 64 ||
		{ echo "FAIL fuzz.seed: dtgen failed"; exit 0; }
done
"$dtgen" -o "$t/seed/sys.dtc" -n 300 -s 9 --stacks 30 --pids 1 --block 100 --syscalls
"$dtgen" -o "$t/seed/srcl.dtc" -n 200 -s 5 --stacks 20 --pids 1 --block 64 --srclines
"$dtgen" -o "$t/seed/empty.dtc" -n 0 -s 4 --stacks 10 --pids 1
# the captures that made symbol loading quadratic (tests/safety), small
for k in "mods 2000" "aliases 2000" "modranges 1000" "many 1000"; do
	"$dthostile" $k "$t/seed/hostile-${k%% *}.dtc" 8 ||
		{ echo "FAIL fuzz.seed: dthostile $k failed"; exit 0; }
done
"$dthostile" escapes 8 "$t/seed/hostile-escapes.dtc"
sz=$(stat -c %s "$t/seed/g1.dtc")
for cut in 7 16 40 100 $((sz / 3)) $((sz / 2)) $((sz - 40)) $((sz - 1)); do
	head -c $cut "$t/seed/g1.dtc" >"$t/seed/cut$cut.dtc"
done
echo "# seed corpus: $(ls "$t/seed" | wc -l) files"

run() {	# NAME FUZZER SECONDS
	local name=$1 f=$2 secs=$3
	rm -rf "$t/corpus" && mkdir -p "$t/corpus"
	# a 64 KB input may make the reader hold 64 MiB + 256 x its size of
	# metadata and decode blocks of 2^20 rows (80 MiB of arguments): an
	# allocation above 160 MiB, or 1.5 GiB in all, or 10 s, is a finding
	"$f" -max_total_time=$secs -max_len=65536 -malloc_limit_mb=160 -rss_limit_mb=1536 -timeout=10 \
		-artifact_prefix="$t/crash/$name-" -print_final_stats=1 \
		"$t/corpus" "$t/seed" >"$t/$name.log" 2>&1
	fuzz_verdict "$name" $? "$t/$name.log" "$t/crash/$name-" 5 'ERROR|SUMMARY|runtime error'
}
run fuzz.reader_nochecksum "$fz_nosum" 35
run fuzz.reader "$fz" 10
exit 0
