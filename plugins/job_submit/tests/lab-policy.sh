#!/bin/bash
# lab-policy.sh - in a real slurmctld, the policy holds for every way Slurm lets a
# user ask for or change resources (sbatch, srun, salloc, #SBATCH lines, SBATCH_* variables,
# arrays, heterogeneous jobs, `scontrol update` by the user). Each case shows the resulting
# `scontrol show job` fields or the exact message. Last, the node lines move into an
# included file for one reconfigure. At the end slurmctld must be the process it was at the
# start (a reconfigure's hand-over aside: lab-policy-lib.sh), and its log must hold no allot
# error line.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
. "$HERE/../../../tests/lab/lab-lib.sh"
lab_test_start policy
# shellcheck disable=SC1091
. "$HERE/lab-policy-lib.sh"
policy_lab_begin

CAP="but team team-a's project share is 8 GPUs running at once, so it could never start; ask for 8 or fewer"

echo "# names as slurmctld holds them"
r=$(submit alice -A TEAM-A --gpus=12 --wrap true)
expect_refused "-A TEAM-A is team-a (slurmctld lowers accounts after job_submit)" "$r" \
    "allot: this job asks for 12 GPUs $CAP"
r=$(submit alice --hold --qos=SPOT --gpus=1 --wrap true); j=$(jobid "$r")
expect_eq "--qos=SPOT is the spot tier, written back as slurmctld spells it" "$(job_field "$j" QOS)" spot
expect_eq "and gets spot's requeue" "$(job_field "$j" Requeue)" 1
expect_eq "and spot's default time" "$(job_field "$j" TimeLimit)" 04:00:00
r=$(submit alice -p main,main --gpus=12 --wrap true)
expect_refused "-p main,main is governed" "$r" "allot: this job asks for 12 GPUs $CAP"
r=$(submit bob -p main,main --gpus=1 --wrap true)
expect_refused "a partition list in the default account is governed too" "$r" "not yet in a team"
r=$(submit alice -p MAIN --gpus=12 --wrap true)
expect_refused "partition names are exact: slurmctld itself refuses -p MAIN" "$r" "Invalid partition name specified"
r=$(submit alice --qos=" spot" --gpus=1 --wrap true)
expect_refused "a QOS with a space is slurmctld's to refuse (no such QOS)" "$r" "Invalid qos specification"

echo "# one GPU count from every field, through every client"
r=$(submit alice --ntasks-per-gpu=2 -n 18 --wrap true)
expect_refused "--ntasks-per-gpu=2 -n 18 holds 9 GPUs" "$r" "asks for 9 GPUs $CAP"
r=$(submit alice --exclusive -N 2 --wrap true)
expect_refused "--exclusive on 2 GPU nodes holds their 16 GPUs" "$r" "asks for 16 GPUs $CAP"
r=$(as alice srun --exclusive -N 2 -t 1 true 2>&1)
expect_refused "srun --exclusive -N 2 too" "$r" "asks for 16 GPUs $CAP"
r=$(submit alice --gpus-per-node=6 -N 1-2 --wrap true)
expect_refused "a 1-2 node range counts at its maximum" "$r" "asks for 12 GPUs $CAP"
r=$(submit alice --gres=gpu:1 -n 20 --ntasks-per-node=2 --wrap true)
expect_refused "20 tasks at 2 per node need 10 nodes, 1 GPU each" "$r" "asks for 10 GPUs $CAP"
r=$(submit alice --gres=gpu:2,gpu:9 --wrap true)
expect_refused "a repeated gres entry counts as slurmctld counts it (the last)" "$r" \
    "asks for 9 GPUs $CAP"
r=$(submit alice --gres=gpu:9,gpu:2 --wrap true)
expect_refused "in either order (slurmctld's TRES keeps the larger)" "$r" "asks for 9 GPUs $CAP"
r=$(submit alice --hold --qos=spot --gres=gpu:9,gpu:2 --wrap true); j=$(jobid "$r")
expect_eq "and slurmctld's record says 9" "$(tres_gpus "$j")" 9
printf '#!/bin/bash\n#SBATCH --gpus-per-task=1\n#SBATCH -n 9\ntrue\n' >"$LAB/tmp/pertask.sh"
chmod 755 "$LAB/tmp/pertask.sh"
r=$(submit alice "$LAB/tmp/pertask.sh")
expect_refused "#SBATCH --gpus-per-task=1 and -n 9" "$r" "asks for 9 GPUs $CAP"
r=$(SBATCH_GPUS=9 submit alice --wrap true)
expect_refused "SBATCH_GPUS=9" "$r" "asks for 9 GPUs $CAP"
r=$(SBATCH_EXCLUSIVE=exclusive submit alice -N 2 --wrap true)
expect_refused "SBATCH_EXCLUSIVE with -N 2" "$r" "asks for 16 GPUs $CAP"
r=$(as alice salloc --gpus=9 true 2>&1)
expect_refused "salloc --gpus=9" "$r" "asks for 9 GPUs $CAP"
r=$(submit alice --array=0-3 --gpus=9 --wrap true)
expect_refused "an array of 9-GPU jobs" "$r" "asks for 9 GPUs $CAP"
r=$(submit alice --hold --array=0-1 --qos=general --gpus=1 --wrap true); j=$(jobid "$r")
expect_eq "each array element gets general's default time" "$(job_field "${j}_1" TimeLimit)" 1-00:00:00

echo "# libslurm (slurm_submit_batch_job from a program, as workflow tools submit)"
if make -s -C "$ALLOT_TOP_BUILDDIR/bench" submit-throughput/submit_bench >/dev/null 2>&1; then
    install -m 0755 "$ALLOT_TOP_BUILDDIR/bench/submit-throughput/submit_bench" "$LAB/tmp/submit_bench"
    before=$(squeue -h -u alice -n bench -o %i | sort -n | tail -1)
    r=$(as alice "$LAB/tmp/submit_bench" 1 TEAM-A SPOT 2>&1)
    j=$(squeue -h -u alice -n bench -o %i | sort -n | tail -1)
    check "a libslurm job with account TEAM-A and QOS SPOT is accepted" test -n "$j" -a "$j" != "${before:-none}"
    [ "$j" != "${before:-none}" ] || j=none  # no new job: the checks below fail, not read another
    expect_eq "its QOS is spot, as slurmctld spells it" "$(job_field "$j" QOS)" spot
    expect_eq "its account is team-a" "$(job_field "$j" Account)" team-a
    expect_eq "it gets spot's requeue and default time" \
        "$(job_field "$j" Requeue) $(job_field "$j" TimeLimit)" "1 04:00:00"
else
    fail "build bench/submit-throughput/submit_bench (the libslurm client)"
fi

echo "# heterogeneous jobs are one job"
printf '#!/bin/bash\ntrue\n' >"$LAB/tmp/het.sh"; chmod 755 "$LAB/tmp/het.sh"
r=$(submit alice --gpus=5 : --gpus=5 "$LAB/tmp/het.sh")
expect_refused "5 + 5 GPUs in team-a's project tier is over its 8" "$r" \
    "allot: heterogeneous job component 1: this heterogeneous job asks for 10 GPUs in all (5 GPUs in this component) $CAP"
r=$(as alice srun -t 1 --gpus=5 : --gpus=5 true 2>&1)
expect_refused "srun with components too" "$r" "asks for 10 GPUs in all (5 GPUs in this component)"
r=$(submit alice --hold --gpus=4 : --gpus=4 "$LAB/tmp/het.sh"); j=$(jobid "$r")
expect_eq "4 + 4 is exactly the share: accepted" "$(job_field "${j}+1" QOS)" team-a
r=$(submit bob --hold : --gpus=1 "$LAB/tmp/het.sh")
expect_refused "the default-account rule holds per component, naming it" "$r" \
    "allot: heterogeneous job component 1: you are not yet in a team"

echo "# messages that are true"
sacctmgr -i add user carol account=default >/dev/null
wait_for 30 "carol's default association" sh -c "scontrol show assoc_mgr users=carol accounts=default flags=assoc | grep -q 'Account=default'"
r=$(submit carol -A default --gpus=2 --wrap true)
expect_refused "a team member charging the default account is told their teams" "$r" \
    "allot: account 'default' has no GPU allocation (0 GPUs) and this job asks for 2 GPUs; charge one of your teams instead: -A team-a"

echo "# defaults that fit"
r=$(submit alice --hold --gpus=8 --wrap true); j=$(jobid "$r")
expect_eq "mem-per-gpu is a node's share (64000 MB / 8 GPUs), not 8G" "$(per_gpu "$(job_field "$j" MemPerTres)")" 8000
r=$(as alice sbatch --test-only --gpus=8 --wrap true 2>&1)
expect_contains "and an 8-GPU job fits on one node" "$r" "to start at"
expect_eq "the lowered default is logged once per (re)configure, not per job" \
    "$(grep -c "allot: cluster.mem_per_gpu (8192 MB) is more than a node of partition 'main' has per GPU; GPU jobs get 8000 MB per GPU" "$LAB/log/slurmctld.log")" \
    "$(grep -c "allot: loaded" "$LAB/log/slurmctld.log")"
sacctmgr -i modify qos general set MaxWall=10:00:00 >/dev/null
wait_for 30 "general's new MaxWall" sh -c "scontrol show assoc_mgr qos=general flags=qos | grep -q 'MaxWallPJ=600'"
r=$(submit alice --hold --qos=general --gpus=1 --wrap true); j=$(jobid "$r")
expect_eq "general's 1-day default above a 10 h MaxWall is lowered, not refused" "$(job_field "$j" TimeLimit)" 10:00:00
sacctmgr -i modify qos general set MaxWall=3-00:00:00 >/dev/null

echo "# scontrol update by the user is the merged job submitted anew"
r=$(submit alice --hold --gpus=1 --wrap true); j=$(jobid "$r")
expect_eq "a project job has no time limit" "$(job_field "$j" TimeLimit)" UNLIMITED
as alice scontrol update jobid="$j" qos=general
expect_eq "moved into general it gets general's default time" "$(job_field "$j" TimeLimit)" 1-00:00:00
r=$(as alice scontrol update jobid="$j" qos=spot 2>&1)
expect_refused "moving a job without --signal into spot is refused" "$r" "Access/permission denied"
update_says_why && expect_refused "and scontrol says how to get spot's checkpoint signal" "$r" \
    "cannot get spot's checkpoint signal (Slurm sets --signal only at submission); submit it with --qos=spot, or with --signal=B:"
expect_eq "and the job stays in general" "$(job_field "$j" QOS)" general
r=$(submit alice --hold --gpus=1 --signal=B:USR1@300 --wrap true); j=$(jobid "$r")
as alice scontrol update jobid="$j" qos=spot
expect_eq "with its own --signal, moved into spot it is requeueable" "$(job_field "$j" Requeue)" 1
r=$(as alice scontrol update jobid="$j" requeue=0 2>&1)
expect_refused "Requeue=0 on a spot job is refused" "$r" "Access/permission denied"
update_says_why && expect_refused "and scontrol says why, in the words of a rejected submission" "$r" \
    "allot: spot jobs are requeued when preempted, so Requeue=0 is not allowed in --qos=spot"
expect_eq "and the job stays requeueable" "$(job_field "$j" Requeue)" 1
expect_contains "the refusal is logged with its reason" "$(grep "refused update of job $j " "$LAB/log/slurmctld.log")" \
    "spot jobs are requeued when preempted, so Requeue=0 is not allowed in --qos=spot"
as alice scontrol update jobid="$j" qos=SPOT timelimit=30
expect_eq "QOS=SPOT in an update is spot" "$(job_field "$j" QOS)" spot
r=$(submit alice --hold --gpus-per-node=4 --wrap true); j=$(jobid "$r")
r=$(as alice scontrol update jobid="$j" numnodes=3 2>&1)
expect_refused "NumNodes=3 at 4 GPUs per node is over the share" "$r" "Job violates accounting/QOS policy"
update_says_why && expect_refused "and scontrol says why, with the count Slurm would use" "$r" \
    "allot: this job asks for 12 GPUs $CAP"
expect_eq "and the job keeps its node count" "$(num_nodes "$j")" 1
r=$(as alice scontrol update jobid="$j" gres=gpu:9 2>&1)
expect_refused "Gres=gpu:9 is over the share" "$r" "Job violates accounting/QOS policy"
r=$(as alice scontrol update jobid="$j" account=team-b 2>&1)
expect_refused "moving into another team's account (with this team's QOS) is refused" "$r" "Invalid qos specification"
r=$(submit alice --hold --qos=general --gpus=1 -t 60 --wrap true); j=$(jobid "$r")
r=$(as alice scontrol update jobid="$j" qos=team-b 2>&1)
expect_refused "moving into another team's QOS is refused" "$r" "Invalid qos specification"
scontrol update jobid="$j" qos=general timelimit=5-00:00:00
expect_eq "an operator (root) stays exempt" "$(job_field "$j" TimeLimit)" 5-00:00:00

echo "# the node table through an Include, as slurmctld reads it at reconfigure"
conf=$LAB/etc/slurm.conf
grep '^NodeName=' "$conf" >"$LAB/etc/nodes.conf"
chmod --reference="$conf" "$LAB/etc/nodes.conf"
awk '/^NodeName=/ { if (!moved) print "Include nodes.conf"; moved = 1; next } { print }' "$conf" >"$conf.new"
cat "$conf.new" >"$conf" && rm -f "$conf.new"
check "slurmctld reconfigures with its nodes in an included file" ctld_reconfigure
expect_eq "slurmctld still has both GPU nodes" "$(sinfo -h -N -p main -o %N | sort -u | wc -l)" 2
r=$(submit alice --hold --gpus=8 --wrap true); j=$(jobid "$r")
expect_eq "mem-per-gpu is still the included nodes' share (64000 MB / 8 GPUs)" \
    "$(per_gpu "$(job_field "$j" MemPerTres)")" 8000
expect_eq "the reload read the included nodes (the lowered default is logged at every load)" \
    "$(grep -c "allot: cluster.mem_per_gpu (8192 MB) is more than a node of partition 'main' has per GPU; GPU jobs get 8000 MB per GPU" "$LAB/log/slurmctld.log")" \
    "$(grep -c "allot: loaded" "$LAB/log/slurmctld.log")"

policy_lab_end
finish
