#!/bin/bash
# unit.sh BUILD - the perf map reader under ASan/UBSan, in a scratch dir.
set -u
. "$(dirname "$0")/../lib.sh"
sanitizers_strict
T=$(mktemp -d /tmp/jit-unit.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$1/tests/jit/jitmap_test" "$T" 2>"$T/err"
rc=$?
if san "$T/err"; then fail jitmap-sanitizers "$(head -c 600 "$T/err")"; fi
exit $rc
