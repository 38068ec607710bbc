#!/bin/bash
# lab-policy-lib.sh - what lab-policy.sh and lab-differential.sh share, after lab_test_start:
#   submit USER ARGS...  sbatch as USER: prints "OK <jobid>" or the error text
#   jobid TEXT           the job id of an "OK <jobid>" line
#   tres_gpus JOBID      gres/gpu of the job's TRES in `scontrol show job` (0 when none)
#   policy_lab_begin     records slurmctld's PID, sets the alive probe
#   policy_lab_end       checks slurmctld is the same process and logged no allot error

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

tres_gpus() {
    local tres
    tres=$(scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^TRES=//p' | head -1)
    tres=$(printf '%s' "$tres" | tr ',' '\n' | sed -n 's|^gres/gpu=||p' | head -1)
    echo "${tres:-0}"
}

policy_lab_begin() {
    POLICY_CTLD_PID=$(cat "$LAB/run/slurmctld.launch.pid")
    POLICY_LOG_START=$(wc -l <"$LAB/log/slurmctld.log")
    mkdir -p "$LAB/tmp"
    alive_probe scontrol ping
}

policy_lab_end() {
    echo "# slurmctld after the test"
    check "slurmctld is still the process it was at the start ($POLICY_CTLD_PID)" \
        _pid_alive "$POLICY_CTLD_PID"
    expect_eq "and it still answers" "$(scontrol ping 2>&1 | grep -c 'is UP')" 1
    # Rejections are logged at info level ("allot: rejected ..."); anything at error level
    # from allot (internal errors, config errors) is a failure here.
    local errors
    errors=$(tail -n +"$((POLICY_LOG_START + 1))" "$LAB/log/slurmctld.log" |
        grep -E 'error: (allot|.*job_submit/allot)|allot: internal error' || true)
    expect_eq "slurmctld's log has no error line from allot" "$errors" ""
}
