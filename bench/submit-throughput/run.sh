#!/bin/bash
# run.sh - submission cost in slurmctld with no job_submit plugin, with the job_submit/lua
# peer (tests/lab/job_submit.lua, the same policy) and with job_submit/allot, interleaved in
# rotating order over ROUNDS rounds in one lab (ports free at run time). Two figures per run:
# jobs/s of the in-process submitter (submit_bench), and slurmctld's own account of the
# REQUEST_SUBMIT_BATCH_JOB RPC from sdiag (counters reset before each run; the average is
# the time inside slurmctld, without the client and network spread). Needs root.
# Usage: bench/submit-throughput/run.sh [BUILD_DIR]      (JOBS=1000 ROUNDS=15: fewer rounds cannot separate the plugins, bench/README.md)
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
[ "$(id -u)" = 0 ] || { echo "needs root (the lab)"; exit 77; }
JOBS=${JOBS:-1000} ROUNDS=${ROUNDS:-15}
export LAB=/tmp/allot-bench-submit.$$
unset LAB_PORT_BASE
export ALLOT_CONFIG=$TOP/tests/lab/allot-lab.yaml
export LAB_PLUGINS=$BUILD/plugins/job_submit/.libs/job_submit_allot.so
export LAB_JOB_SUBMIT=""
BIN=$BUILD/bench/submit-throughput/submit_bench
make -s -C "$BUILD/bench" submit-throughput/submit_bench >/dev/null
on_exit "$TOP/tests/lab/lab-down.sh"
"$TOP/tests/lab/lab-up.sh" >/dev/null
# shellcheck disable=SC1091
. "$TOP/tests/lab/lab-lib.sh"
"$TOP/tests/lab/lab-accounts.sh"
cp "$TOP/tests/lab/job_submit.lua" "$LAB/etc/job_submit.lua"
install -m 0755 "$BIN" "$LAB/submit_bench"

# sdiag's average time (µs) of the submit RPC since the last `sdiag -r`.
submit_rpc_us() {
    sdiag | awk '/^Remote Procedure Call statistics by message type/ { on = 1 }
        on && $1 == "REQUEST_SUBMIT_BATCH_JOB" { for (i = 1; i <= NF; i++) if ($i ~ /^ave_time:/) { sub(/ave_time:/, "", $i); print $i; exit } }'
}
_queue_empty() { [ -z "$(squeue -h -u alice)" ]; }

declare -A rates rpcs
modes=(none lua allot)
for round in $(seq 1 "$ROUNDS"); do
    for k in 0 1 2; do
        mode=${modes[$(((k + round - 1) % 3))]}
        if [ "$mode" = none ]; then conf_set JobSubmitPlugins ""; else conf_set JobSubmitPlugins "$mode"; fi
        ctld_reconfigure
        sdiag -r >/dev/null
        rate=$(as alice "$LAB/submit_bench" "$JOBS" team-a)
        rpc=$(submit_rpc_us)
        rates[$mode]="${rates[$mode]:-} $rate"
        rpcs[$mode]="${rpcs[$mode]:-} $rpc"
        printf 'round %d  %-6s %8s jobs/s   submit RPC in slurmctld %6s us (sdiag average)\n' "$round" "$mode" "$rate" "$rpc"
        scancel -u alice
        wait_for 300 "alice's jobs to leave the queue" _queue_empty
    done
done
for m in none lua allot; do
    eval "${m}_rate=\$(echo \"\${rates[$m]}\" | median)"
    eval "${m}_rpc=\$(echo \"\${rpcs[$m]}\" | median)"
done
# shellcheck disable=SC2154
{
    echo
    printf 'median jobs/s: none %s, lua %s, allot %s (%s held GPU jobs per run, %s rounds)\n' \
        "$none_rate" "$lua_rate" "$allot_rate" "$JOBS" "$ROUNDS"
    printf 'median submit RPC (us): none %s, lua %s, allot %s\n' "$none_rpc" "$lua_rpc" "$allot_rpc"
    result submit-throughput rpc_allot_over_none="$(ratio "$allot_rpc" "$none_rpc")" \
        rpc_lua_over_none="$(ratio "$lua_rpc" "$none_rpc")" \
        jobs_allot_over_none="$(ratio "$allot_rate" "$none_rate")" \
        jobs_allot_over_lua="$(ratio "$allot_rate" "$lua_rate")" \
        rpc_none_us="$none_rpc" rpc_lua_us="$lua_rpc" rpc_allot_us="$allot_rpc"
}
