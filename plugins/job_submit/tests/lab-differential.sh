#!/bin/bash
# lab-differential.sh - allot's decisions against slurmctld's own record, on random requests.
#
# Generates request forms from every field that can ask for GPUs, nodes, tasks, tier,
# account, time and requeue (seeded: DIFF_SEED, bounded: DIFF_CASES, default 300), submits
# each held with sbatch, and compares what allot decided (its debug line "allot: decided
# job '<name>' ...", under `scontrol setdebug debug`) with what slurmctld records for the job
# (`scontrol show job`): GPUs, QOS, Account, TimeLimit and Requeue. A form allot rejects
# over a cap is submitted again in the uncapped spot tier, so its GPU count is checked too.
# A third of the accepted jobs are then updated by the user (tier, time limit, requeue) and
# what allot decided for the update ("allot: decided update of job J ...": the GPUs it read
# from the job's record, tier, time, requeue) is compared with the record after it. Any mismatch is a failure; each one prints the form to replay it.
#
# slurmctld's GPUs for a job: the gres/gpu of its TRES; for a node range, its GPUs per node
# at the range's top; for a whole-node (--exclusive, OverSubscribe=NO) job, every GPU of
# every node it holds (slurmctld's node table); nodes as slurmctld records them, at least
# tasks / ntasks-per-node rounded up. The pending TRES counts a range at its bottom, an
# exclusive job without its GPUs and a task-spread job on its estimated nodes; these are
# what the job holds once it runs.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
. "$HERE/../../../tests/lab/lab-lib.sh"
lab_test_start diff
# shellcheck disable=SC1091
. "$HERE/lab-policy-lib.sh"
policy_lab_begin

SEED=${DIFF_SEED:-12}
CASES=${DIFF_CASES:-300}
RANDOM=$SEED
note "seed $SEED, $CASES cases (DIFF_SEED=$SEED DIFF_CASES=$CASES to replay)"
scontrol setdebug debug
# Gres=gpu:8 or, on typed nodes (lab-differential-typed.sh), Gres=gpu:a100:8.
NODE_GPUS=$(scontrol show node n1 | tr ' ' '\n' | sed -n 's/^Gres=gpu:\([^:(]*:\)\{0,1\}\([0-9][0-9]*\).*/\2/p')
TYPE=${LAB_GPU_TYPE:-}

pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }

# One random form: GPU fields, node/task shape, tier, account spelling, time, requeue.
# On typed nodes, half the GPU requests name the type (t="a100:"), and the duplicate gres
# list mixes a typed and an untyped entry: each must be counted once, as Slurm counts them.
random_form() {
    local f=() n t=""
    [ -n "$TYPE" ] && [ $((RANDOM % 2)) = 0 ] && t="$TYPE:"
    case $((RANDOM % 10)) in
        0) f+=(--gpus="$t$((RANDOM % 10 + 1))") ;;
        1) f+=(--gres=gpu:"$t$((RANDOM % 5 + 1))") ;;
        2) f+=(--gres="gpu:$t$((RANDOM % 4 + 1)),gpu:$((RANDOM % 4 + 1))") ;;
        3) f+=(--gpus-per-node="$t$((RANDOM % 4 + 1))" -N "$(pick 1 2 1-2)") ;;
        4) f+=(--gpus-per-task="${t}1" -n "$((RANDOM % 10 + 1))") ;;
        5) f+=(--gpus-per-task="${t}1" --ntasks-per-node="$((RANDOM % 3 + 1))" -N "$(pick 1 2)") ;;
        6) n=$((RANDOM % 3 + 1)); f+=(--ntasks-per-gpu="$n" -n "$((n * (RANDOM % 5 + 1)))") ;;
        7) f+=(--exclusive -N "$(pick 1 2)") ;;
        8) f+=(--gres=gpu:"${t}1" -n "$((RANDOM % 30 + 1))" $(pick "" --ntasks-per-node=8 --ntasks-per-node=16)) ;;
        9) f+=(--gpus-per-socket="$t$((RANDOM % 3 + 1))" --sockets-per-node=2 -N "$(pick 1 2)") ;;
    esac
    case $((RANDOM % 4)) in 0) f+=(-p main,main) ;; 1) f+=(-p main) ;; *) ;; esac
    case $((RANDOM % 6)) in
        0) f+=(--qos=general) ;; 1) f+=(--qos=spot) ;; 2) f+=(--qos=SPOT) ;;
        3) f+=(--qos=team-a) ;; *) ;;
    esac
    case $((RANDOM % 4)) in 0) f+=(-A team-a) ;; 1) f+=(-A TEAM-A) ;; *) ;; esac
    case $((RANDOM % 4)) in 0) f+=(-t "$(pick 30 2:00:00 1-00:00:00)") ;; *) ;; esac
    case $((RANDOM % 4)) in 0) f+=(--requeue) ;; 1) f+=(--no-requeue) ;; *) ;; esac
    echo "${f[@]}"
}

minutes() { # scontrol's TimeLimit -> minutes (UNLIMITED stays)
    local t=$1 d=0 h m s
    [ "$t" = UNLIMITED ] && { echo UNLIMITED; return; }
    [[ "$t" == *-* ]] && { d=${t%%-*}; t=${t#*-}; }
    IFS=: read -r h m s <<<"$t"
    echo $(( (10#$d * 24 + 10#$h) * 60 + 10#$m ))
}

gpus_of_tres() { printf '%s' "$1" | tr ',' '\n' | sed -n 's/^\(gres[:/]\)\{0,1\}gpu:\([^:]*:\)\{0,1\}\([0-9]*\)$/\3/p' | sort -n | tail -1; }

whole_nodes() {
    if grep -q '^Exclusive=' <<<"$1"; then
        ! grep -qx 'Exclusive=NO' <<<"$1"
    else
        grep -qx 'OverSubscribe=NO' <<<"$1"
    fi
}

# slurmctld's GPUs for the job (see the header).
ctld_gpus() {
    local j=$1 node_range=$2 rec nodes top per g tasks tpn
    rec=$(scontrol show job "$j" | tr ' ' '\n')
    g=$(tres_gpus "$j")
    nodes=$(sed -n 's/^NumNodes=//p' <<<"$rec")
    # A range the user asked for (-N min-max) counts at its top. Without -N, 26.05 records
    # an implicit maximum of one node per task ("1-9" for -n 9; JOB_IMPLICIT_MAX_NODES,
    # set after job_submit): not a request, the job still packs as on earlier releases.
    top=${nodes#*-}
    [ "$node_range" = asked ] || top=${nodes%%-*}
    # The pending estimate floors tasks / ntasks-per-node; the running job holds the ceiling
    # (13 tasks at 8 per node run on 2 nodes with 2 GPUs).
    tasks=$(sed -n 's/^NumTasks=//p' <<<"$rec")
    tpn=$(sed -n 's/^NtasksPerN:B:S:C=\([0-9]*\):.*/\1/p' <<<"$rec")
    if [ -n "$tpn" ] && [ "$tpn" -gt 0 ] && [ -n "$tasks" ] && [ "$tasks" -gt 0 ] &&
        [ $(( (tasks + tpn - 1) / tpn )) -gt "$top" ]; then
        top=$(( (tasks + tpn - 1) / tpn ))
    fi
    per=$(gpus_of_tres "$(sed -n 's/^TresPerNode=//p' <<<"$rec")")
    [ -n "$per" ] && [ $((per * top)) -gt "$g" ] && g=$((per * top))
    # Whole nodes: OverSubscribe=NO until 25.11; from 26.05 every job says OverSubscribe=NO
    # unless it may share, and Exclusive= (NO, USER, MCS, TOPO or YES) tells whole nodes.
    if whole_nodes "$rec" && [ $((NODE_GPUS * top)) -gt "$g" ]; then
        g=$((NODE_GPUS * top))
    fi
    echo "$g"
}

node_range() { [[ " $* " == *" -N "* ]] && echo asked || echo none; }

decision_of() { grep "allot: decided job '$1' " "$LAB/log/slurmctld.log" | tail -1; }
field_of() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

# An update by the user (tier, time, requeue), decided by allot's job_modify: what it
# decided ("allot: decided update of job J ...") must be what slurmctld then records;
# a refused update must leave the record as it was.
random_update() {
    local i=$1 j=$2 u=() before after d got want t said
    u+=(qos="$(pick general spot SPOT team-a)")
    case $((RANDOM % 4)) in 0) u+=(timelimit="$(pick 30 2:00:00 2-00:00:00)") ;; 1) u+=(requeue=0) ;; *) ;; esac
    before="$(job_field "$j" QOS) $(minutes "$(job_field "$j" TimeLimit)") $(job_field "$j" Requeue)"
    said=$(as alice scontrol update jobid="$j" "${u[@]}" 2>&1)
    d=$(grep "allot: decided update of job $j: " "$LAB/log/slurmctld.log" | tail -1)
    after="$(job_field "$j" QOS) $(minutes "$(job_field "$j" TimeLimit)") $(job_field "$j" Requeue)"
    updates=$((updates + 1))
    # The update changes no GPU field: allot must count the job read back from slurmctld's
    # record as slurmctld holds it, whether it accepts or refuses the update. Known limit
    # (docs/policy.md): the record slurmctld copies for job_modify has no --ntasks-per-gpu
    # (copy_job_record_to_job_desc leaves ntasks_per_tres out on every release), so a job
    # whose GPUs come only from it is counted with none at an update.
    if [[ " ${form[*]} " != *" --ntasks-per-gpu="* ]] &&
        [ "$(field_of "$d" gpus)" != "$(ctld_gpus "$j" "$(node_range "${form[@]}")")" ]; then
        mismatches=$((mismatches + 1))
        fail "case $i update ${u[*]}" "allot counted $(field_of "$d" gpus) GPUs in the job's record; slurmctld: $(ctld_gpus "$j" "$(node_range "${form[@]}")")
job submitted as: ${form[*]}"
        return
    fi
    if [ "$(field_of "$d" accepted)" != 1 ]; then
        [ "$after" = "$before" ] && return
        mismatches=$((mismatches + 1))
        fail "case $i update ${u[*]}" "allot refused it, but the job changed from '$before' to '$after'"
        return
    fi
    t=$(field_of "$d" time); [ "$t" = 4294967295 ] || [ "$t" = none ] && t=UNLIMITED
    want="$(field_of "$d" qos) $t $(field_of "$d" requeue)"
    got=$after
    if [ "$got" != "$want" ]; then
        mismatches=$((mismatches + 1))
        fail "case $i update ${u[*]}" "allot decided: $want
slurmctld has: $got (before: $before)${said:+; scontrol: $said}
job submitted as: ${form[*]}"
    fi
}

compared=0 mismatches=0 slurm_refused=0 allot_refused=0 updates=0
for i in $(seq 1 "$CASES"); do
    read -r -a form <<<"$(random_form)"
    name="diff-$SEED-$i"
    r=$(submit alice --hold -J "$name" "${form[@]}" --wrap true)
    d=$(decision_of "$name")
    if [[ "$r" != OK* ]]; then
        if [[ "$r" == *"allot: "*"asks for "* ]]; then
            allot_refused=$((allot_refused + 1))
            said=$(sed -n 's/.*asks for \([0-9]*\) GPU.*/\1/p' <<<"$r" | head -1)
            name="$name-spot"
            r=$(submit alice --hold -J "$name" "${form[@]}" --qos=spot -t 60 --wrap true)
            [[ "$r" == OK* ]] || { slurm_refused=$((slurm_refused + 1)); continue; }
            j=$(jobid "$r"); d=$(decision_of "$name")
            if [ "$said" != "$(field_of "$d" gpus)" ] || [ "$said" != "$(ctld_gpus "$j" "$(node_range "${form[@]}")")" ]; then
                mismatches=$((mismatches + 1))
                fail "case $i: ${form[*]}" "allot said $said GPUs, decided $(field_of "$d" gpus) in spot; slurmctld: $(ctld_gpus "$j" "$(node_range "${form[@]}")")"
            fi
        elif [[ "$r" == *"allot: "* ]]; then
            allot_refused=$((allot_refused + 1))  # a walltime above the tier's maximum
        else
            slurm_refused=$((slurm_refused + 1))  # sbatch or slurmctld refused the form itself
        fi
        continue
    fi
    j=$(jobid "$r")
    compared=$((compared + 1))
    want_time=$(field_of "$d" time); [ "$want_time" = none ] && want_time=UNLIMITED
    [ "$want_time" = 4294967295 ] && want_time=UNLIMITED
    want_requeue=$(field_of "$d" requeue); [ "$want_requeue" = default ] && want_requeue=1
    got="gpus=$(ctld_gpus "$j" "$(node_range "${form[@]}")") qos=$(job_field "$j" QOS) account=$(job_field "$j" Account) time=$(minutes "$(job_field "$j" TimeLimit)") requeue=$(job_field "$j" Requeue)"
    want="gpus=$(field_of "$d" gpus) qos=$(field_of "$d" qos) account=$(field_of "$d" account) time=$want_time requeue=$want_requeue"
    if [ "$got" != "$want" ]; then
        mismatches=$((mismatches + 1))
        fail "case $i: ${form[*]}" "allot decided: $want
slurmctld has: $got"
    fi
    [ $((RANDOM % 3)) = 0 ] && random_update "$i" "$j"
    scancel "$j" 2>/dev/null
done
note "$updates updates by the user compared,"
note "$compared accepted forms compared, $allot_refused refused by allot (GPU counts checked in spot), $slurm_refused refused by Slurm itself"
expect_eq "every decision matches slurmctld's record" "$mismatches" 0
check "most forms were compared, not refused" test "$compared" -ge $((CASES / 2))
scontrol setdebug info

policy_lab_end
finish
