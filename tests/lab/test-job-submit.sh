#!/bin/bash
# test-job-submit.sh - job_submit/allot inside a real slurmctld: every rule of the policy
# through real sbatch/srun/scontrol, checking `scontrol show job` or the exact message, on
# the accounting allot-syncd creates from the lab directory. Every rejection is checked
# together with an accepted submission (the alive probe), so a dead slurmctld never passes.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
. "$HERE/lab-lib.sh"
lab_test_start js
# shellcheck disable=SC1091
. "$HERE/../../plugins/job_submit/tests/ctld-watch.sh"
ctld_watch_begin  # its checks at the end; the alive probe is this file's own, below

submit() { # submit <user> <sbatch args...>: prints "OK <jobid>" or the error text
    local user=$1 out; shift
    if out=$(as "$user" sbatch --parsable -o "$LAB/tmp/%j.out" "$@" 2>&1); then echo "OK ${out%%;*}"; else echo "$out"; fi
}
jobid() { [[ "$1" == OK* ]] && echo "${1#OK }"; }
accepts() { # the positive request of every refusal check: a plain job is accepted (then cancelled)
    local j
    j=$(as alice sbatch --parsable --hold -o /dev/null --wrap true) || return 1
    scancel "${j%%;*}"
}
alive_probe accepts

echo "# zero-GPU default account"
r=$(submit bob --gpus=1 --wrap true)
expect_refused "bob's GPU job in the default account is rejected" "$r" \
    "allot: you are not yet in a team with a GPU allocation (account 'default' has 0 GPUs); ask your PI"
expect_refused "the rejection names the fix" "$r" "then submit with -A <team>"
r=$(submit bob -A default --gres=gpu:1 --wrap true)
expect_refused "explicit -A default with --gres is rejected too" "$r" "not yet in a team"
r=$(submit bob --wrap true)
expect_contains "bob's CPU job in the default account is accepted" "$r" "OK "
r=$(as bob srun --gpus=1 -t 1 true 2>&1)
expect_refused "srun goes through the same rule" "$r" "not yet in a team"

echo "# project tier and per-GPU defaults"
r=$(submit alice --hold --gpus=2 --wrap true); j=$(jobid "$r")
expect_eq "alice's job without --qos gets her team's project QOS" "$(job_field "$j" QOS)" team-a
# 8G is more than a lab node gives per GPU (64000 MB / 8): the node's share applies
expect_eq "mem-per-gpu default applied (a node's share at most)" "$(per_gpu "$(job_field "$j" MemPerTres)")" 8000
expect_eq "cpus-per-gpu default applied" "$(per_gpu "$(job_field "$j" CpusPerTres)")" 2
expect_eq "project tier has no walltime limit" "$(job_field "$j" TimeLimit)" UNLIMITED
r=$(submit alice --hold --gpus=1 --mem=1G -c 3 --wrap true); j=$(jobid "$r")
expect_eq "explicit --mem keeps MemPerTres unset" "$(job_field "$j" MemPerTres)" ""
expect_eq "explicit -c keeps CpusPerTres unset" "$(job_field "$j" CpusPerTres)" ""
expect_eq "explicit --mem is kept" "$(job_field "$j" MinMemoryNode)" "1G"
r=$(submit alice --hold --gpus=1 --mem-per-cpu=500 --wrap true); j=$(jobid "$r")
expect_eq "--mem-per-cpu is respected (no mem-per-gpu added)" "$(job_field "$j" MemPerTres)" ""
r=$(submit alice --hold --gpus=1 --mem-per-gpu=2G --cpus-per-gpu=1 --wrap true); j=$(jobid "$r")
expect_eq "explicit --mem-per-gpu is kept" "$(per_gpu "$(job_field "$j" MemPerTres)")" 2048
expect_eq "explicit --cpus-per-gpu is kept" "$(per_gpu "$(job_field "$j" CpusPerTres)")" 1
r=$(submit alice --hold --wrap true); j=$(jobid "$r")
expect_eq "CPU-only job gets no per-GPU defaults" "$(job_field "$j" MemPerTres)" ""

echo "# caps: a job that can never fit is rejected, one that merely waits is accepted"
r=$(submit alice --gpus=12 --wrap true)
expect_refused "12 GPUs over team-a's share of 8 is rejected" "$r" \
    "allot: this job asks for 12 GPUs but team team-a's project share is 8 GPUs running at once, so it could never start; ask for 8 or fewer"
expect_refused "the rejection offers general and spot" "$r" "--qos=general (up to 4 GPUs per team) or run preemptible with --qos=spot"
r=$(submit alice --gres=gpu:4 -N 3 --wrap true)
expect_refused "--gres=gpu:4 on 3 nodes counts 12" "$r" "asks for 12 GPUs"
r=$(submit alice -n 9 --gpus-per-task=1 --wrap true)
expect_refused "--gpus-per-task=1 with 9 tasks counts 9" "$r" "asks for 9 GPUs"
r=$(submit alice --gpus-per-node=5 -N 2 --wrap true)
expect_refused "--gpus-per-node=5 on 2 nodes counts 10" "$r" "asks for 10 GPUs"
r=$(submit alice --gres=gpu:h100:9 --wrap true)
expect_refused "typed gpu:h100:9 is counted" "$r" "asks for 9 GPUs"
r=$(submit alice --gpus=8 -c 1 --mem-per-gpu=1G --wrap 'sleep 300'); j1=$(jobid "$r")
expect_contains "exactly the share (8) is accepted" "$r" "OK "
check "and runs" wait_job_state "$j1" RUNNING
r=$(submit carol --gpus=2 -c 1 --mem-per-gpu=1G --wrap 'sleep 300'); j2=$(jobid "$r")
expect_contains "a job over what is free now is accepted" "$r" "OK "
check "and pends on the team's cap, not rejected" wait_job_field "$j2" Reason QOSGrpGRES
scancel "$j1" "$j2"

echo "# general tier"
r=$(submit alice --hold --qos=general --gpus=1 --wrap true); j=$(jobid "$r")
expect_eq "general without --time gets the tier default" "$(job_field "$j" TimeLimit)" "1-00:00:00"
expect_eq "general keeps its QOS" "$(job_field "$j" QOS)" general
r=$(submit alice --qos=general --gpus=1 -t 4-00:00:00 --wrap true)
expect_refused "general over 3 days is rejected with the limit" "$r" \
    "allot: general jobs may run at most 3-00:00:00 but this job asks for 4-00:00:00; use --time=3-00:00:00 or less"
r=$(submit alice --qos=general --gpus=5 --wrap true)
expect_refused "general over the per-team cap is rejected" "$r" "the general tier allows 4 GPUs per team"
r=$(submit alice --qos=team-b --gpus=1 --wrap true)
expect_refused "another team's project QOS is refused" "$r" "'team-b' is the project QOS of account 'team-b'"

echo "# spot tier"
r=$(submit alice --hold --qos=spot --gpus=16 --no-requeue --wrap true); j=$(jobid "$r")
expect_contains "spot is uncapped (16 GPUs accepted)" "$r" "OK "
expect_eq "spot is made requeueable even with --no-requeue" "$(job_field "$j" Requeue)" 1
expect_eq "spot gets its default time" "$(job_field "$j" TimeLimit)" "04:00:00"
r=$(submit alice --qos=spot --gpus=1 -t 2-00:00:00 --wrap true)
expect_refused "spot over 1 day is rejected" "$r" "spot jobs may run at most 1-00:00:00"

echo "# scontrol update (job_modify)"
r=$(submit alice --hold --qos=general --gpus=1 -t 60 --wrap true); j=$(jobid "$r")
r=$(as alice scontrol update jobid="$j" qos=team-b 2>&1)
expect_refused "a user cannot move a job into another team's QOS" "$r" "Invalid qos specification"
case $(slurmctld -V | awk '{print $2}') in
2[01].* | 22.*) ;; # job_modify has no err_msg before 23.02: the refusal cannot say why
*) expect_refused "the refused update says why, as the rejected submission did" "$r" \
    "'team-b' is the project QOS of account 'team-b'" ;;
esac
check "the refusal is logged with its reason" grep -q "allot: refused update of job $j" "$LAB/log/slurmctld.log"
r=$(as alice scontrol update jobid="$j" timelimit=5-00:00:00 2>&1)
expect_refused "a user cannot raise a time limit past the tier's maximum" "$r" "Requested time limit is invalid"
r=$(submit alice --hold --qos=general --gpus=1 -t 60 --signal=B:TERM@120 --wrap true); j=$(jobid "$r")
r=$(as alice scontrol update jobid="$j" qos=spot timelimit=30 2>&1)
expect_eq "moving a job with a --signal to spot is allowed" "$r" ""
expect_eq "and the job becomes requeueable" "$(job_field "$j" Requeue)" 1
r=$(scontrol update jobid="$j" qos=general timelimit=5-00:00:00 2>&1)
expect_eq "an operator (root) may exceed the tier limit" "$(job_field "$j" TimeLimit)" "5-00:00:00"

echo "# garbage never hurts slurmctld"
for args in "--gres=gpu:99999999999999999999" "--gpus=1000001" "--gres=gpu:-1" "--gres=gpu::" \
    "--gpus-per-task=1 -n 100000" "--qos=$(head -c 300 /dev/zero | tr '\0' q)" "--time=99999999"; do
    # shellcheck disable=SC2086
    submit alice $args --wrap true >/dev/null
done
check "slurmctld survives malformed and huge requests" scontrol ping
r=$(submit alice --hold --gpus=1 --wrap true)
expect_contains "and keeps enforcing afterwards" "$r" "OK "

echo "# reconfigure reloads allot.yaml; a broken file keeps the old one"
sed -i 's/mem_per_gpu: 8G/mem_per_gpu: 4G/' "$LAB/etc/allot.yaml"
check "slurmctld reconfigures" ctld_reconfigure
r=$(submit alice --hold --gpus=1 --wrap true); j=$(jobid "$r")
expect_eq "the new per-GPU default applies after reconfigure" "$(per_gpu "$(job_field "$j" MemPerTres)")" 4096
sed -i 's/^cluster:$/cluster:\n  bogus_key: 1/' "$LAB/etc/allot.yaml"
pid=$(ctld_pid)
check "slurmctld reconfigures with the broken file" ctld_reconfigure
if ctld_reconfigure_execs; then
    # 23.11+: the new slurmctld runs on the copy of the last valid allot.yaml, so the
    # hand-over never fails (gotcha G22; plugins/job_submit/last_good.hpp).
    check "the new slurmctld runs on the last valid copy" \
        grep -q "allot: .*allot.yaml is broken; this slurmctld, started by a reconfigure, runs on the last valid copy" "$LAB/log/slurmctld.log"
    check "slurmctld handed over to a new process" test "$(ctld_pid)" != "$pid"
else
    check "slurmctld is still the process it was ($pid)" _pid_alive "$pid"
fi
check "the copy is the last valid file" grep -q "mem_per_gpu: 4G" "$LAB/spool/ctld/allot.yaml.last-good"
check_fails "and never the broken one" grep -q bogus_key "$LAB/spool/ctld/allot.yaml.last-good"
r=$(submit bob --gpus=1 --wrap true)
expect_refused "with a broken file the previous policy stays in force" "$r" "not yet in a team"
check "the config error is logged with its key path" grep -q "allot: .*cluster.bogus_key: unknown key" "$LAB/log/slurmctld.log"
check "slurmctld still answers" scontrol ping
# The broken file's own lines, and from 23.11 the new process's word that it runs on the copy.
ctld_watch_end 'allot: (.*cluster\.bogus_key: unknown key|keeping the previous configuration|.*is broken; this slurmctld, started by a reconfigure, runs on the last valid copy)'

finish
