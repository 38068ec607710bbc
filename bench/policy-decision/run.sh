#!/bin/bash
# run.sh - ns per policy decision: allot's C++ core next to the Lua peer, same job mix,
# prebuilt requests on both sides, the same (process CPU) clock, three interleaved rounds.
# Usage: bench/policy-decision/run.sh [BUILD_DIR]   (N=1000000 decisions per round)
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
HERE=$TOP/bench/policy-decision
N=${N:-1000000}
BIN=$BUILD/bench/policy-decision/policy_bench
make -s -C "$BUILD/bench" policy-decision/policy_bench >/dev/null
command -v lua5.1 >/dev/null || { echo "needs lua5.1"; exit 77; }
as=() ls=()
for round in 1 2 3; do
    a=$("$BIN" "$TOP/tests/lab/allot-lab.yaml" "$N")
    l=$(lua5.1 "$HERE/policy_bench.lua" "$TOP/tests/lab/job_submit.lua" "$N")
    as+=("$a") ls+=("$l")
    printf 'round %d: allot %s ns/decision, lua peer %s ns/decision, lua/allot = %s\n' "$round" "$a" "$l" "$(ratio "$l" "$a")"
done
a=$(echo "${as[*]}" | median) l=$(echo "${ls[*]}" | median)
result policy-decision lua_over_allot="$(ratio "$l" "$a")" allot_ns="$a" lua_ns="$l"
