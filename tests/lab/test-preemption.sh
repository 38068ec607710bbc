#!/bin/bash
# test-preemption.sh - a spot job preempted by a project job, in the real cluster: its batch
# script hears the signal allot added (--signal=B:TERM@grace) while it still runs, keeps
# running in its grace window, is requeued (not cancelled), and the project job starts.
# Every wait is for a state; the seconds given are liveness bounds, never assertions.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
. "$HERE/lab-lib.sh"
lab_test_start preempt

cat >"$LAB/tmp/spot.sh" <<'SCRIPT'
#!/bin/bash
# Checkpoints when told: records the signal, then keeps marking that it still runs.
got_term=0
trap 'got_term=1; echo TERM >>"$OUT_DIR/sig.$SLURM_JOB_ID"' TERM
echo "start restart=${SLURM_RESTART_COUNT:-0}" >>"$OUT_DIR/run.$SLURM_JOB_ID"
for _ in $(seq 1 900); do
    sleep 1
    [ $got_term = 1 ] && echo "running after TERM" >>"$OUT_DIR/sig.$SLURM_JOB_ID"
done
SCRIPT
chmod 755 "$LAB/tmp/spot.sh"

spot() { as carol sbatch --parsable --qos=spot --gpus=8 -c 1 --mem-per-gpu=1G --export=ALL,OUT_DIR="$LAB/tmp" -o /dev/null "$LAB/tmp/spot.sh"; }
spot1=$(spot)
spot2=$(spot)
check "both spot jobs start (16 GPUs, uncapped tier)" wait_job_state "$spot1" RUNNING
check "second spot job runs" wait_job_state "$spot2" RUNNING
expect_eq "allot made the spot job requeueable" "$(job_field "$spot1" Requeue)" 1
expect_eq "the spot QOS (made by allot-syncd) has the grace of allot-lab.yaml" \
    "$(sacctmgr -n -P show qos spot format=gracetime)" "00:00:10"

proj=$(as alice sbatch --parsable --gpus=8 -c 1 --mem-per-gpu=1G -o /dev/null --wrap 'sleep 120')
expect_eq "the project job is in team-a's project QOS" "$(job_field "$proj" QOS)" team-a

# Which spot job was chosen: the one whose script got the signal.
victim=""
_signalled() {
    local j
    for j in "$spot1" "$spot2"; do [ -s "$LAB/tmp/sig.$j" ] && victim=$j && return 0; done
    return 1
}
if wait_for 120 "a spot job's script to get SIGTERM" _signalled; then
    _signalled
    pass "the preempted spot job's batch script received SIGTERM"
    # At the signal the victim had not been requeued yet: the signal comes at preemption.
    expect_eq "the signal came at preemption, before the requeue (Restarts=0)" \
        "$(job_field "$victim" Restarts)" 0
else
    fail "the preempted spot job's batch script received SIGTERM" "$(ls -l "$LAB/tmp")"
    victim=$spot1
fi

check "the victim was requeued, not cancelled (Restarts=1)" wait_job_field "$victim" Restarts 1
expect_contains "its script kept running after the signal (the grace window was usable)" \
    "$(cat "$LAB/tmp/sig.$victim" 2>/dev/null)" "running after TERM"
check "the project job starts" wait_job_state "$proj" RUNNING
state=$(job_field "$victim" JobState)
expect_match "the requeued spot job is back in the queue ($state)" "$state" '^(PENDING|REQUEUED|REQUEUE_HOLD|RUNNING)$'
hist=$(sacct -n -X -D -j "$victim" -o State 2>/dev/null | tr -s ' \n' ' ')
expect_contains "accounting records the first run as PREEMPTED" "$hist" PREEMPTED
other=$spot1; [ "$victim" = "$spot1" ] && other=$spot2
expect_eq "the other spot job kept running" "$(job_field "$other" JobState)" RUNNING

finish
