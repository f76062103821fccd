#!/bin/bash
# fuzz.sh BUILD FUZZER MKSQL DTGEN: fuzz the GROUP BY fast path's rewrite
# (tests/sql/fuzz_groupby.c: a rewritten statement must give the rows of the
# statement as written; one not rewritten, read ahead on the pool, the rows
# it gives on one thread) for a bounded time, from a seed corpus of the
# shapes tests/sql/run.sh names and a dictionary of SQL words.  PASS when
# libFuzzer finds nothing; crash inputs stay in the scratch dir (printed)
# and are never committed.
set -u
. "$(dirname "$0")/../lib.sh"
b=$1 fz=$2 mksql=$3 dtgen=$4
t=$b/fuzz/sql
rm -rf "$t" && mkdir -p "$t/seed" "$t/corpus" "$t/crash"
"$mksql" "$t/a.dtc" "$t/a.exp" 3000 nulls tidblocks >/dev/null 2>&1 &&
	"$dtgen" -o "$t/b.dtc" -n 3000 -s 5 --stacks 50 --pids 3 --block 500 --syscalls \
		--batch 700 --ts-step 200000 ||
	{ echo "FAIL fuzz.groupby: captures not made"; exit 0; }
i=0
while IFS= read -r q; do
	[ -n "$q" ] && printf '%s' "$q" >"$t/seed/q$((i++))"
done <<'EOF'
SELECT comm, count(*) FROM events GROUP BY comm
SELECT comm, count(*) FROM events GROUP BY comm ORDER BY count(*) DESC, comm
SELECT probe_name, count(*) AS n, min(pid), max(tid), count(DISTINCT pid) FROM events GROUP BY probe_name ORDER BY n
SELECT pid, tid, comm, count(comm), count() FROM events WHERE comm IS NOT NULL AND pid IN (100, 101) GROUP BY pid, tid, comm
SELECT comm, count(*) FROM events WHERE comm LIKE 'b%' OR comm IS NULL GROUP BY comm HAVING count(*) > 10 ORDER BY 2 DESC LIMIT 3
SELECT cpu, ctx, count(*) c FROM events GROUP BY cpu, ctx
SELECT kstack, ustack, flags, count(*) FROM events WHERE probe = 3 GROUP BY kstack, ustack, flags
SELECT upper(comm) AS u, count(*), max(probe_name) FROM events GROUP BY comm ORDER BY u DESC
SELECT probe, probe_name, count(probe_name) FROM events WHERE probe_name GLOB 'sys*' GROUP BY probe, probe_name
SELECT comm, count( * ) /* n */ * 2 + 1, length(comm) FROM events GROUP BY comm LIMIT 2 OFFSET 1
SELECT count(*), comm FROM events GROUP BY comm ORDER BY length(comm)
SELECT capture, host, comm, count(*) FROM events GROUP BY capture, host, comm
SELECT host, count(DISTINCT capture) FROM events WHERE capture < 'b' GROUP BY host
SELECT events.comm, count(*) n FROM events WHERE pid = 101 GROUP BY comm
SELECT comm, CAST(count(*) AS TEXT) || 'x', iif(comm IS NULL, 1, 2) FROM events GROUP BY comm
SELECT comm, max(CASE WHEN tid % 2 = 0 THEN 1 ELSE 1.0 END) FROM events GROUP BY comm
SELECT pid, min(comm COLLATE NOCASE), max(DISTINCT events.comm) FROM events GROUP BY pid
SELECT count(*) FROM events WHERE comm = 'bash'
SELECT count(*), min(pid), count(DISTINCT comm) FROM events WHERE ts > 5000900000 AND pid < 103
SELECT comm AS c, count(*) FROM events GROUP BY 1 ORDER BY c
SELECT comm, count(*) FROM events WHERE ts BETWEEN 1000000500000 AND 1000300000000 GROUP BY comm
SELECT cpu, count(*) FROM events WHERE ts > 5000800000 AND 1000200000000 >= events.ts AND pid > 1 GROUP BY cpu
SELECT probe_name, count(*) FROM events WHERE ts < 5000900000 GROUP BY probe_name
SELECT comm, sum(pid), total(tid), avg(cpu), count(*) FROM events GROUP BY comm ORDER BY comm
SELECT count(*), sum(cpu) FROM events WHERE tid = (SELECT tid FROM events WHERE tid != 0 GROUP BY tid ORDER BY count(*) DESC, tid LIMIT 1)
SELECT kstack, count(*) FROM events WHERE pid = (SELECT pid FROM events WHERE pid != 0 GROUP BY pid ORDER BY count(*) DESC, pid LIMIT 1) AND kstack != 0 GROUP BY kstack ORDER BY 2 DESC, 1 LIMIT 10
SELECT probe_name, quantile_disc(tid, 0.99), quantile_cont(pid, 0.25), median(kstack) FROM events GROUP BY probe_name
SELECT median(retval), quantile_disc(retval, 0.9), min(retval) FROM events WHERE probe_name LIKE 'syscall:%'
SELECT (ts - 1000) / 1000000 AS sec, count(*) FROM events GROUP BY sec
SELECT (ts - -5000) / 300000 AS b, comm, count(*), sum(cpu) FROM events GROUP BY 1, comm ORDER BY 1 DESC LIMIT 20
SELECT (events.ts + 5) / 7000 b, cpu, count(*) FROM events WHERE pid > 3 GROUP BY (events.ts + 5) / 7000, cpu HAVING count(*) > 1
SELECT f.name, count(*) FROM events e JOIN frames f ON f.stack_id = e.kstack AND f.depth = 0 WHERE e.kstack != 0 GROUP BY f.name ORDER BY 2 DESC, 1 LIMIT 10
SELECT p.name, count(*), sum(e.tid) FROM events e JOIN probes p ON p.id = e.probe GROUP BY p.name
SELECT retval, count(*) FROM events GROUP BY retval
SELECT sum(pid) FROM events WHERE pid = (SELECT max(pid) FROM events WHERE pid < 0)
SELECT comm, count(*) FROM events WHERE tid IN (1001, 1003) AND kstack BETWEEN 1 AND 40 GROUP BY comm
SELECT count(*), sum(cpu) FROM events WHERE tid > 1002 AND tid <= 1006 OR pid < 101
SELECT ustack, flags, count(*) FROM events WHERE ustack = 2 OR flags >= 1 GROUP BY 1, 2
SELECT pid, count(*) FROM events WHERE pid > 100 AND pid <= 102 AND tid != 1003 GROUP BY pid
SELECT probe_name, quantile_disc(retval, 0.99), count(retval) FROM events WHERE tid < 1005 AND probe_name LIKE '%return%' GROUP BY 1
SELECT comm, retval, count(*) FROM events WHERE kstack IN (0, 3) GROUP BY comm, retval
SELECT ts, tid, comm FROM events WHERE probe_name GLOB 'sys*' AND ts > 5000800000 ORDER BY ts LIMIT 20
SELECT * FROM events WHERE pid = 101
SELECT rowid, ts, kstack FROM events WHERE tid IN (1001, 1003) AND kstack > 2
SELECT e.ts, f.name FROM events e JOIN frames f ON f.stack_id = e.kstack WHERE e.pid > 100 LIMIT 50
SELECT ts, tid, ts - lag(ts) OVER (PARTITION BY tid ORDER BY ts) FROM events WHERE cpu = 1 LIMIT 40
SELECT ts, comm FROM events WHERE comm LIKE 'b%' LIMIT 5 OFFSET 3
SELECT ts FROM events WHERE ustack = 2 AND flags >= 0 ORDER BY comm, ts
SELECT rowid, ts, cpu FROM events ORDER BY ts DESC LIMIT 30
SELECT rowid, ts, comm FROM events WHERE tid IN (1001, 1003) ORDER BY ts LIMIT 40 OFFSET 7
SELECT ts, pid FROM events WHERE cpu = 1 ORDER BY ts DESC
SELECT count(*), sum(cpu) FROM events WHERE tid = 5001
SELECT tid, cpu, count(*) FROM events WHERE tid IN (5000, 5002) GROUP BY 1, 2
SELECT comm, count(*) FROM events WHERE tid >= 5002 OR tid BETWEEN 4000 AND 5000 GROUP BY comm
SELECT (ts - 5000000000) / 100000 AS b, count(*) FROM events WHERE tid = 5002 GROUP BY b
SELECT probe_name, quantile_disc(retval, 0.5) FROM events WHERE tid IN (5001, 1002) GROUP BY 1
SELECT comm, count(*) FROM events WHERE probe IN (2, 16777216) AND tid > 5003 GROUP BY comm
SELECT rowid, tid, probe FROM events WHERE probe IN (3, 4294967295) AND comm LIKE 'm%'
EOF
cat >"$t/dict" <<'EOF'
"SELECT"
" FROM events"
" WHERE "
" GROUP BY "
" HAVING "
" ORDER BY "
" LIMIT "
" OFFSET "
" DESC"
" AS "
" AND "
" OR "
" NOT "
" IS NULL"
" IN ("
" LIKE "
" GLOB "
" COLLATE NOCASE"
" DISTINCT "
"count(*)"
"count("
"min("
"max("
"sum("
"avg("
"total("
"quantile_disc("
"quantile_cont("
"median("
", 0.99)"
"retval"
"(ts - 1000) / 1000000"
"(ts + 7) / 3"
" JOIN frames f ON f.stack_id = e.kstack"
" JOIN probes p ON p.id = e.probe"
" events e"
"e."
"f.name"
"f.depth"
" = (SELECT "
"(SELECT max(pid) FROM events)"
"9223372036854775807"
"16777216"
"-1"
"length("
"upper("
"coalesce("
"CASE WHEN "
" THEN "
" ELSE "
" END"
"comm"
"pid"
"tid"
"cpu"
"probe"
"probe_name"
"kstack"
"ustack"
"flags"
"ctx"
"ts"
"arg0"
"capture"
"host"
"'bash'"
"NULL"
"1.0"
" COLLATE RTRIM"
"'BASH'"
"'bash '"
"(SELECT 1)"
"events."
"\"comm\""
"--"
"/*"
"*/"
";"
EOF
echo "# seed corpus: $(ls "$t/seed" | wc -l) statements"
# a statement of 4 KB at most; 10 s for one is a finding
FUZZ_SQL_CAPS="$t/a.dtc:$t/b.dtc" "$fz" -max_total_time=30 -max_len=4096 -timeout=10 \
	-rss_limit_mb=1536 -dict="$t/dict" -artifact_prefix="$t/crash/groupby-" \
	-print_final_stats=1 "$t/corpus" "$t/seed" >"$t/groupby.log" 2>&1
fuzz_verdict fuzz.groupby $? "$t/groupby.log" "$t/crash/groupby-" 8 \
	'ERROR|SUMMARY|runtime error|differ|^SELECT|^--'
exit 0
