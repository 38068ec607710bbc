#!/bin/bash
# run.sh - submission throughput through slurmctld with no job_submit plugin, with the
# job_submit/lua peer (tests/lab/job_submit.lua, the same policy) and with job_submit/allot,
# interleaved in rotating order over ROUNDS rounds in one lab. Prints each rate, the medians,
# and the ratios allot/none and allot/lua. Needs root and a built tree.
#   JOBS=1000 ROUNDS=3 bench/submit-throughput/run.sh
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
BUILD=${ALLOT_TOP_BUILDDIR:-$TOP}
JOBS=${JOBS:-1000} ROUNDS=${ROUNDS:-3}
export LAB=/tmp/allot-bench-submit LAB_PORT_BASE=17800
export ALLOT_CONFIG=$TOP/tests/lab/allot-lab.yaml
export LAB_PLUGINS=$BUILD/plugins/job_submit/.libs/job_submit_allot.so
export LAB_JOB_SUBMIT=""
BIN=$BUILD/bench/submit-throughput/submit_bench
[ -x "$BIN" ] || make -C "$BUILD/bench" submit-throughput/submit_bench >/dev/null
trap '"$TOP/tests/lab/lab-down.sh" >/dev/null 2>&1' EXIT
"$TOP/tests/lab/lab-up.sh" >/dev/null
. "$TOP/tests/lab/lab-lib.sh"
"$TOP/tests/lab/lab-accounts.sh"
cp "$TOP/tests/lab/job_submit.lua" "$LAB/etc/job_submit.lua"
install -m 0755 "$BIN" "$LAB/submit_bench"

declare -A rates
modes=(none lua allot)
for round in $(seq 1 "$ROUNDS"); do
    for k in 0 1 2; do
        mode=${modes[$(( (k + round - 1) % 3 ))]}
        if [ "$mode" = none ]; then conf_set JobSubmitPlugins ""; else conf_set JobSubmitPlugins "$mode"; fi
        scontrol reconfigure; sleep 3
        rate=$(as alice "$LAB/submit_bench" "$JOBS" team-a)
        rates[$mode]="${rates[$mode]:-} $rate"
        printf 'round %d  %-6s %8s jobs/s\n' "$round" "$mode" "$rate"
        scancel -u alice; sleep 1
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
none=$(echo "${rates[none]}" | median); lua=$(echo "${rates[lua]}" | median); allot=$(echo "${rates[allot]}" | median)
echo
printf 'median jobs/s: none %s, lua %s, allot %s (%s held GPU jobs per run, %s rounds)\n' "$none" "$lua" "$allot" "$JOBS" "$ROUNDS"
printf 'ratio allot/none = %.3f (goal >= 0.95), allot/lua = %.3f (goal >= 1)\n' \
    "$(echo "$allot / $none" | bc -l)" "$(echo "$allot / $lua" | bc -l)"
