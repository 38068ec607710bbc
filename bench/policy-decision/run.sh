#!/bin/bash
# run.sh - ns per policy decision: allot's C++ core next to the Lua peer, same job mix, one run.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
BUILD=${ALLOT_TOP_BUILDDIR:-$TOP}
N=${N:-1000000}
BIN=$BUILD/bench/policy-decision/policy_bench
[ -x "$BIN" ] || make -C "$BUILD/bench" policy-decision/policy_bench >/dev/null
for round in 1 2 3; do
    a=$("$BIN" "$TOP/tests/lab/allot-lab.yaml" "$N")
    l=$(lua5.1 "$HERE/policy_bench.lua" "$TOP/tests/lab/job_submit.lua" "$N")
    printf 'round %d: allot %s ns/decision, lua peer %s ns/decision, lua/allot = %.2f\n' "$round" "$a" "$l" "$(echo "$l / $a" | bc -l)"
done
