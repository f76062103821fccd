# chain.sh - sourced by the unwind suites' scripts: how whole the five-deep
# chain of target.c is in a folded flame graph (dtreport flame --folded).

# chain_pct FOLDED: share (%) of the samples in main..level5 whose stack
# holds the whole chain from __libc_start_call_main down to their own
# levelN, and how many such samples there were
chain_pct() {
	awk '{ n = $NF; t += n; s = $0; sub(/ [0-9]+$/, "", s)
	       if (s !~ /;level[1-5]$/ && s !~ /;main$/) { other += n; next }
	       k = split(s, f, ";"); leaf = f[k]; want = "__libc_start_call_main;main"
	       for (i = 1; i <= 5 && leaf != "main"; i++) { want = want ";level" i; if (leaf == "level" i) break }
	       if (index(s, want) && substr(s, length(s) - length(want) + 1) == want) good += n; rel += n }
	     END { printf "%.1f %d\n", rel ? 100 * good / rel : 0, rel }' "$1"
}

# pc_only FOLDED: how many samples hold only their pc's function in
# target.c's code (main, level1..5) behind [truncated], and how many
# samples in all (a sample never unwound, its program without frame
# pointers)
pc_only() {
	awk '{ n = $NF; t += n; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
	       if (k == 3 && f[2] == "[truncated]" && f[3] ~ /^(main|level[1-5])$/) g += n }
	     END { print g + 0, t + 0 }' "$1"
}
