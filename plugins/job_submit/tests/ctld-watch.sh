#!/bin/bash
# ctld-watch.sh - after a lab test file, slurmctld is still the same process and its log has
# no error line from allot but those the test caused. Sourced after lab_test_start (lab-lib.sh):
#   ctld_watch_begin        records slurmctld's PID and log position, sets the alive probe
#   ctld_watch_end [REGEX]  the checks; REGEX matches allot error lines the test caused on
#                           purpose (a config error it wrote); any other is a failure
#
# "The same process" across a test that may reconfigure: up to 23.02 `scontrol reconfigure`
# re-reads the files in the running slurmctld, so its PID must never change; from 23.11 each
# reconfigure starts a new slurmctld ("Attempting to reconfigure"), which takes over
# (lab-lib's ctld_reconfigure records its PID) or fails and leaves the old one running
# ("Resuming operation, reconfigure failed"). Hence: the slurmctld in charge at the end is
# alive and answers; no more slurmctld processes started since the begin ("slurmctld version
# ... started", logged by each) than reconfigures were attempted; and when no reconfigure
# handed over, it is the very process of the begin. A crash, an abort or a restart by anyone
# but reconfigure breaks one of these.
#
# Rejections are logged at info level ("allot: rejected ..."); anything at error level from
# allot (internal errors, config errors) or a fatal naming it is an error line here.

ctld_watch_begin() {
    CTLD_WATCH_PID=$(ctld_pid)
    CTLD_WATCH_LOG_START=$(wc -l <"$LAB/log/slurmctld.log")
    alive_probe scontrol ping
}

_ctld_log_since_begin() { tail -n +"$((CTLD_WATCH_LOG_START + 1))" "$LAB/log/slurmctld.log"; }
_ctld_count_since_begin() { _ctld_log_since_begin | grep -c -E "$1" || true; }

ctld_watch_end() {
    echo "# slurmctld after the test"
    local now starts attempts handovers errors
    now=$(ctld_pid)
    starts=$(_ctld_count_since_begin 'slurmctld version .* started on cluster')
    attempts=$(_ctld_count_since_begin 'Attempting to reconfigure')
    ctld_reconfigure_execs || attempts=0
    handovers=$((attempts - $(_ctld_count_since_begin 'Resuming operation, reconfigure failed')))
    check "the slurmctld in charge ($now) is alive" _pid_alive "$now"
    expect_eq "and it answers" "$(scontrol ping 2>&1 | grep -c 'is UP')" 1
    check "no slurmctld started since the begin but by a reconfigure ($starts started, $attempts reconfigures)" \
        test "$starts" -le "$attempts"
    if [ "$handovers" -le 0 ]; then
        expect_eq "no reconfigure handed over: it is the process of the begin" "$now" "$CTLD_WATCH_PID"
    fi
    errors=$(_ctld_log_since_begin |
        grep -E 'error: (allot|.*job_submit/allot)|allot: internal error|fatal.*allot' |
        grep -v -E "${1:-^$}" || true)
    expect_eq "slurmctld's log has no error line from allot" "$errors" ""
}
