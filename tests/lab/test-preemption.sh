#!/bin/bash
# test-preemption.sh - a spot job preempted by a project job, in the real cluster: its batch
# script hears the signal allot added (--signal=B:TERM@grace), it is requeued (not
# cancelled) after the grace window, and the project job starts.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab-lib.sh"
SPOT_GRACE=10 lab_test_start preempt 16900

cat >"$LAB/tmp/spot.sh" <<'SCRIPT'
#!/bin/bash
# Checkpoints when told: records the signal and when it came.
trap 'echo "TERM $(date +%s)" >>"$OUT_DIR/sig.$SLURM_JOB_ID"' TERM
echo "start $(date +%s) restart=${SLURM_RESTART_COUNT:-0}" >>"$OUT_DIR/run.$SLURM_JOB_ID"
for _ in $(seq 1 900); do sleep 1; done
SCRIPT
chmod 755 "$LAB/tmp/spot.sh"

spot1=$(as carol sbatch --parsable --qos=spot --gpus=8 -c 1 --mem-per-gpu=1G --export=ALL,OUT_DIR="$LAB/tmp" -o /dev/null "$LAB/tmp/spot.sh")
spot2=$(as carol sbatch --parsable --qos=spot --gpus=8 -c 1 --mem-per-gpu=1G --export=ALL,OUT_DIR="$LAB/tmp" -o /dev/null "$LAB/tmp/spot.sh")
check "both spot jobs start (16 GPUs, uncapped tier)" wait_job_state "$spot1" RUNNING 60
check "second spot job runs" wait_job_state "$spot2" RUNNING 60
expect_eq "allot made the spot job requeueable" "$(job_field "$spot1" Requeue)" 1

proj=$(as alice sbatch --parsable --gpus=8 -c 1 --mem-per-gpu=1G -o /dev/null --wrap 'sleep 120')
t_submit=$(date +%s)
expect_eq "the project job is in team-a's project QOS" "$(job_field "$proj" QOS)" team-a

# Which spot job was chosen: the one whose script got the signal.
victim=""
for _ in $(seq 1 60); do
    for j in "$spot1" "$spot2"; do [ -s "$LAB/tmp/sig.$j" ] && victim=$j; done
    [ -n "$victim" ] && break
    sleep 0.5
done
if [ -n "$victim" ]; then
    pass "the preempted spot job's batch script received SIGTERM"
    t_sig=$(awk '{print $2; exit}' "$LAB/tmp/sig.$victim")
    [ $((t_sig - t_submit)) -le 10 ] && pass "the signal came at preemption ($((t_sig - t_submit)) s), so the grace window can be used" ||
        fail "the signal came at preemption" "$((t_sig - t_submit)) s after the project job"
else
    fail "the preempted spot job's batch script received SIGTERM" "$(ls -l "$LAB/tmp")"
    victim=$spot1 t_sig=$t_submit
fi

restarted=""
for _ in $(seq 1 150); do
    [ "$(job_field "$victim" Restarts)" = 1 ] && { restarted=$(date +%s); break; }
    sleep 0.5
done
if [ -n "$restarted" ]; then
    pass "the victim was requeued, not cancelled (Restarts=1)"
    [ $((restarted - t_sig)) -ge 10 ] && pass "requeue came after the ${SPOT_GRACE:-10}s grace window ($((restarted - t_sig)) s)" ||
        fail "requeue came after the grace window" "$((restarted - t_sig)) s"
else
    fail "the victim was requeued, not cancelled (Restarts=1)" "$(scontrol show job "$victim")"
fi
check "the project job starts" wait_job_state "$proj" RUNNING 90
state=$(job_field "$victim" JobState)
[[ "$state" =~ ^(PENDING|REQUEUED|REQUEUE_HOLD|RUNNING)$ ]] && pass "the requeued spot job is back in the queue ($state)" || fail "the requeued spot job is back in the queue" "$state"
hist=$(sacct -n -X -D -j "$victim" -o State 2>/dev/null | tr -s ' \n' ' ')
expect_contains "accounting records the first run as PREEMPTED" "$hist" PREEMPTED
other=$spot1; [ "$victim" = "$spot1" ] && other=$spot2
expect_eq "the other spot job kept running" "$(job_field "$other" JobState)" RUNNING

finish
