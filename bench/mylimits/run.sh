#!/bin/bash
# run.sh - mylimits' wall time with 10,000 jobs in the queue, next to the shell recipe it
# replaces (sacctmgr show assoc + sacctmgr show qos + squeue -u + quota), in one lab run.
#
# Phase 1: 10,000 held jobs of other users (carol, dave) + a few of alice's own; phase 2:
# alice herself has 10,000 queued jobs (the worst case for mylimits: it fetches and sorts
# all of them). Each command runs ROUNDS times as alice (runuser, same for both, its own
# cost is printed), interleaved; medians are compared. Needs root and a built tree.
#   ROUNDS=15 JOBS=10000 bench/mylimits/run.sh
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
BUILD=${ALLOT_TOP_BUILDDIR:-$TOP}
M=${MYLIMITS_BIN:-$BUILD/mylimits/mylimits}
JOBS=${JOBS:-10000} ROUNDS=${ROUNDS:-15}
export LAB=${LAB:-/tmp/allot-bench-mylimits} LAB_PORT_BASE=${LAB_PORT_BASE:-17650}
export ALLOT_CONFIG=$TOP/tests/lab/allot-lab.yaml LAB_JOB_SUBMIT=""
[ -x "$M" ] || { echo "build mylimits first ($M)"; exit 1; }
cleanup() {
    # Running jobs first and waited for: with 20,000 queued jobs lab-down's own cancel can
    # come too late for slurmstepd to reap the batch scripts.
    if [ -n "${SLURM_CONF:-}" ]; then
        scancel -t RUNNING 2>/dev/null || true
        for _ in $(seq 1 60); do [ -z "$(squeue -h -t R,CG 2>/dev/null)" ] && break; sleep 0.5; done
    fi
    "$TOP/tests/lab/lab-down.sh" >/dev/null 2>&1
}
trap cleanup EXIT
"$TOP/tests/lab/lab-up.sh" >/dev/null
. "$TOP/tests/lab/lab-lib.sh"
"$TOP/tests/lab/lab-accounts.sh"
export ALLOT_CONFIG=$LAB/etc/allot.yaml
g++ -std=c++17 -O2 -pthread -I"$TOP" -I"$BUILD" -o "$LAB/submit_held" "$HERE/submit_held.cpp" -lslurm
chmod 755 "$LAB/submit_held"
QUOTA=$(command -v quota || true)
[ -n "$QUOTA" ] || echo "note: 'quota' (Debian package quota) is not installed; the recipe runs without it"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
time_as_alice() { # prints milliseconds of one run of "$@" as alice
    local t0 t1
    t0=$(date +%s%N)
    runuser -u alice -- env SLURM_CONF="$SLURM_CONF" ALLOT_CONFIG="$ALLOT_CONFIG" "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}
recipe() { # the commands a user runs by hand today, one after the other
    sacctmgr -n show assoc user=alice format=account,qos%40,grptres%30,maxtres%30 >/dev/null
    sacctmgr -n show qos format=name,grptres%30,maxtrespa%30,maxwall,preempt%30 >/dev/null
    squeue -u alice -o '%.10i %.9q %.9a %.8T %.20r %b' >/dev/null
    [ -z "$QUOTA" ] || "$QUOTA" -u alice >/dev/null 2>&1 || true
}
export -f recipe
export QUOTA
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

measure() { # measure <label>
    local m=() r=() b=() i
    for i in $(seq 1 "$ROUNDS"); do
        if [ $((i % 2)) = 1 ]; then
            m+=("$(time_as_alice "$M" --no-quota)"); r+=("$(time_as_alice bash -c recipe)")
        else
            r+=("$(time_as_alice bash -c recipe)"); m+=("$(time_as_alice "$M" --no-quota)")
        fi
        b+=("$(time_as_alice /bin/true)")
    done
    local mm rm bm mq
    mm=$(printf '%s\n' "${m[@]}" | median); rm=$(printf '%s\n' "${r[@]}" | median)
    bm=$(printf '%s\n' "${b[@]}" | median)
    mq=$(for i in 1 2 3; do time_as_alice "$M"; done | median)
    printf '%-44s mylimits %5s ms (with quota %s ms)  recipe %5s ms  runuser %3s ms  recipe/mylimits %.1fx\n' \
        "$1" "$mm" "$mq" "$rm" "$bm" "$(echo "$rm / $mm" | bc -l)"
    printf '  mylimits runs: %s\n  recipe runs:   %s\n' "${m[*]}" "${r[*]}"
    [ "$mm" -lt 300 ] && echo "  goal < 300 ms: met" || echo "  goal < 300 ms: NOT met"
}

echo "# queue: $JOBS held jobs of carol and dave, 4 of alice"
as carol "$LAB/submit_held" $((JOBS / 2)) 2 team-a team-a 1
as dave "$LAB/submit_held" $((JOBS - JOBS / 2)) 2 team-b team-b 1
as alice sbatch -Q --qos=team-a --gpus=4 -o /dev/null --time=5 --wrap 'sleep 300'
as alice sbatch -Q --qos=team-a --gpus=6 -o /dev/null --time=5 --wrap 'sleep 300'
as alice sbatch -Q --qos=general --gpus=2 -o /dev/null --time=5 --wrap 'sleep 300'
as alice sbatch -Q --qos=spot --gpus=1 -o /dev/null --time=5 --wrap 'sleep 300'
sleep 2
echo "# squeue: $(squeue -h | wc -l) jobs in the queue"
runuser -u alice -- env SLURM_CONF="$SLURM_CONF" ALLOT_CONFIG="$ALLOT_CONFIG" MYLIMITS_TRACE=1 "$M" --no-quota 2>&1 >/dev/null | sed 's/^/  /'
measure "10,000 queued jobs of others"

echo "# queue: + $JOBS held jobs of alice herself"
as alice "$LAB/submit_held" "$JOBS" 2 team-a general 1
echo "# squeue: $(squeue -h | wc -l) jobs in the queue, $(squeue -h -u alice | wc -l) of alice"
measure "10,000 of alice's own jobs queued too"
