#!/bin/bash
# lab-policy-lib.sh - what lab-policy.sh and lab-differential.sh share, after lab_test_start:
#   submit USER ARGS...  sbatch as USER: prints "OK <jobid>" or the error text
#   jobid TEXT           the job id of an "OK <jobid>" line
#   tres_gpus JOBID      gres/gpu of the job's TRES in `scontrol show job` (0 when none)
#   num_nodes JOBID      its NumNodes, "1-1" read as 1
#   update_says_why      true when a refused `scontrol update` prints allot's message (23.02+)
#   policy_lab_begin     ctld_watch_begin (ctld-watch.sh): slurmctld's PID and log position
#   policy_lab_end       ctld_watch_end: slurmctld is the same process (a reconfigure's
#                        hand-over aside) and logged no allot error since the begin

submit() {
    local user=$1 out
    shift
    if out=$(as "$user" sbatch --parsable -o /dev/null "$@" 2>&1); then
        echo "OK ${out%%;*}"
    else
        echo "$out"
    fi
}
jobid() { [[ "$1" == OK* ]] && echo "${1#OK }"; }

# Whether this slurmctld returns job_modify's err_msg to `scontrol update` (23.02 and later):
# then a refused update must say why in the words of a rejected submission.
update_says_why() {
    case $(slurmctld -V | awk '{print $2}') in 2[01].* | 22.*) return 1 ;; esac
}

# NumNodes of a job as one number: from 23.02 a pending job's is "min-max" ("1-1").
num_nodes() {
    local n
    n=$(job_field "$1" NumNodes)
    [ "${n#*-}" = "${n%%-*}" ] && n=${n%%-*}
    echo "$n"
}

# `scontrol show job` of 22.05 says TRES= (requested, then allocated); from 23.02 a pending
# job says ReqTRES= and AllocTRES=(null), a running one both.
tres_gpus() {
    local tres
    tres=$(scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^\(Req\)\{0,1\}TRES=//p' | head -1)
    tres=$(printf '%s' "$tres" | tr ',' '\n' | sed -n 's|^gres/gpu=||p' | head -1)
    echo "${tres:-0}"
}

# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/ctld-watch.sh"

policy_lab_begin() {
    mkdir -p "$LAB/tmp"
    ctld_watch_begin
}

policy_lab_end() { ctld_watch_end "$@"; }
