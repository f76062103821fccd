#!/bin/bash
# npm.sh DIR - install the independent readers the export tests use into
# DIR (under build/, never committed): DuckDB's engine, hyparquet (+ its
# zstd codec) and pprof-format, at pinned versions.  Prints nothing on
# success; on failure one line saying why, exit 1 (the caller FAILs: an
# unreachable registry is a failure, not a skip).
set -u
D=$1
PKGS=(@duckdb/node-api@1.5.6-r.1 hyparquet@1.31.5 hyparquet-compressors@1.1.2 pprof-format@2.3.2)
have() {
	for p in "${PKGS[@]}"; do
		local name=${p%@*} ver=${p##*@}
		local got
		got=$(node -e "console.log(require('$D/node_modules/$name/package.json').version)" 2>/dev/null) || return 1
		[ "$got" = "$ver" ] || return 1
	done
}
command -v node >/dev/null || { echo "node is not installed"; exit 1; }
command -v npm >/dev/null || { echo "npm is not installed"; exit 1; }
have && exit 0
mkdir -p "$D"
if ! out=$(timeout 600 npm install --prefix "$D" --no-audit --no-fund --no-save "${PKGS[@]}" 2>&1); then
	echo "npm install failed (registry unreachable?): $(echo "$out" | grep -v 'warn' | tail -2 | tr '\n' ' ')"
	exit 1
fi
have || { echo "npm install did not leave ${PKGS[*]} in $D"; exit 1; }
