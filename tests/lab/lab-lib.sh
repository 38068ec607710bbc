#!/bin/bash
# lab-lib.sh - helpers for lab tests: `source tests/lab/lab-lib.sh`, then lab_test_start.
#
# Sources tests/lib/harness.sh (check/expect_*/finish, services, free ports, on_exit) and
# adds: lab_test_start NAME (a lab of one's own on free ports, accounts made by allot-syncd),
# lab_up [--accounts] (the bring-up alone, for tests that set $LAB and the plugins themselves),
# as <user> <cmd...> (run with the lab's SLURM_CONF), conf_set KEY VALUE, ctld_restart /
# slurmd_restart (by PID), job_field <jobid> <Field> (from scontrol show job),
# wait_job_state <jobid> <STATE> [seconds], wait_job_field <jobid> <Field> <value> [seconds],
# ctld_reconfigure (scontrol reconfigure, returning once slurmctld has reloaded), ctld_pid.
# shellcheck disable=SC1091
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd)/harness.sh"
_LAB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC1091
. "$_LAB_LIB_DIR/lab-pids.sh"
LAB=${LAB:-/tmp/allot-lab}
# shellcheck disable=SC1091
[ -f "$LAB/env.sh" ] && . "$LAB/env.sh"
export SLURM_CONF=$LAB/etc/slurm.conf

as() { local u=$1; shift; runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"; }

conf_set() { sed -i "/^$1=/d" "$SLURM_CONF"; [ -n "$2" ] && echo "$1=$2" >>"$SLURM_CONF"; true; }

_all_idle() { [ "$(sinfo -h -N -o %T | grep -vc idle)" = 0 ]; }
lab_wait_idle() { wait_for 120 "every node idle" _all_idle; }
_pid_gone() { ! _pid_alive "$1"; }

# The scripted workload of the lab tests that compare a view of the policy with
# Slurm's (mylimits, allot-exporter): sub USER SBATCH-ARGS... submits a 300 s
# sleeper; gpus_of JOB; sum_gpus SQUEUE-FILTERS... (GPUs of running jobs).
sub() { as "$1" sbatch --parsable -o /dev/null "${@:2}" --time=10 --wrap 'sleep 300'; }
gpus_of() { scontrol show job "$1" | tr ' ,' '\n\n' | sed -n 's/^gres\/gpu=//p' | head -1; }
sum_gpus() {
    local t=0 j
    for j in $(squeue -h -t R -o %i "$@"); do t=$((t + $(gpus_of "$j"))); done
    echo $t
}
# lab_jobs_in_every_tier: on team-a (8 GPUs, general burst cap 4) sets spot (alice's
# spot job, preempted and requeued by gen), proj and cproj (team-a at its cap),
# over (a project job over the cap) and gen, cgen (general, team-a at its burst cap).
lab_jobs_in_every_tier() {
    spot=$(sub alice --qos=spot --gpus=8 -c 1 --mem-per-gpu=1G --requeue)
    check "alice's spot job runs" wait_job_state "$spot" RUNNING 60
    proj=$(sub alice --qos=team-a --gpus=4 -c 1 --mem-per-gpu=1G)
    check "alice's project job runs" wait_job_state "$proj" RUNNING 60
    cproj=$(sub carol --qos=team-a --gpus=4 -c 1 --mem-per-gpu=1G)
    check "carol's project job runs (team-a at its cap of 8)" wait_job_state "$cproj" RUNNING 60
    over=$(sub alice --qos=team-a --gpus=2 -c 1 --mem-per-gpu=1G)
    gen=$(sub alice --qos=general --gpus=2 -c 1 --mem-per-gpu=1G)
    check "alice's general job runs by preempting her spot job" wait_job_state "$gen" RUNNING 90
    cgen=$(sub carol --qos=general --gpus=2 -c 1 --mem-per-gpu=1G)
    check "carol's general job runs (team-a at its general burst cap of 4)" wait_job_state "$cgen" RUNNING 60
}

# ctld_restart / slurmd_restart: stop the daemon by its recorded PID and start it again.
# slurmctld runs as a daemon (lab-up.sh, gotcha G22): its PID is the one its SlurmctldPidFile
# names, copied to slurmctld.launch.pid, which lab-down and the tests read.
ctld_pid() { cat "$LAB/run/slurmctld.launch.pid"; }
ctld_restart() {
    local pid
    pid=$(ctld_pid)
    lab_owns "$pid" && kill -TERM "$pid"
    wait_for 60 "slurmctld $pid to stop" _pid_gone "$pid" || return 1
    rm -f "$LAB/run/slurmctld.pid"
    (cd "$LAB" && setsid slurmctld </dev/null >>"$LAB/log/slurmctld.stdout" 2>&1)
    if ! wait_for 120 "slurmctld to answer" scontrol ping; then
        echo "slurmctld did not come back:"; tail -5 "$LAB/log/slurmctld.log"; return 1
    fi
    cp "$LAB/run/slurmctld.pid" "$LAB/run/slurmctld.launch.pid"
    lab_wait_idle
}

slurmd_restart() {
    local f n pid
    for f in "$LAB"/run/slurmd-*.launch.pid; do
        n=$(basename "$f" .launch.pid); n=${n#slurmd-}; pid=$(cat "$f")
        lab_owns "$pid" && kill -TERM "$pid"
        wait_for 60 "slurmd $n to stop" _pid_gone "$pid" || return 1
        setsid slurmd -D -N "$n" </dev/null >>"$LAB/log/slurmd-$n.stdout" 2>&1 &
        echo $! >"$f"
    done
    lab_wait_idle
}

# job_field <jobid> <Field>: the value of Field= in `scontrol show job` (one line per field).
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# A MemPerTres/CpusPerTres value without its GPU prefix, the same on every release
# ("gres:gpu:8000" in 22.05, "gres/gpu:8000" from 23.02): per_gpu "$(job_field J MemPerTres)".
per_gpu() { sed 's|^gres[:/]gpu[:=]||' <<<"$1"; }

# wait_job_field <jobid> <Field> <value-regex> [seconds]: until the field matches; the
# seconds are a liveness bound (default 120), never a claim about how fast Slurm is.
wait_job_field() {
    local end=$(($(date +%s) + ${4:-120})) v
    while [ "$(date +%s)" -lt "$end" ]; do
        v=$(job_field "$1" "$2")
        [[ "$v" =~ ^($3)$ ]] && return 0
        sleep 0.3
    done
    echo "job $1 has $2=$(job_field "$1" "$2"), wanted $3" >&2
    return 1
}
wait_job_state() { wait_job_field "$1" JobState "$2" "${3:-120}"; } # <jobid> <STATE-regex> [seconds]

# ctld_reconfigure: `scontrol reconfigure`, returning once slurmctld runs on the new
# configuration, so a test never guesses how long that takes; fails when slurmctld refuses it.
# Up to 23.02 the running slurmctld re-reads its files and logs that it has; from 23.11 it
# starts a new slurmctld and hands over only once that one is up (scontrol returns then, with
# an error when the new process could not start and the old one goes on: gotcha G22).
_reconf_count() { grep -c '_slurm_rpc_reconfigure_controller: completed' "$LAB/log/slurmctld.log" 2>/dev/null || true; }
_reconf_after() { [ "$(_reconf_count)" -gt "$1" ]; }
# A new slurmctld in charge: the pid file names a live process other than the old one, and
# it answers.
_ctld_replaced() {
    local pid
    pid=$(cat "$LAB/run/slurmctld.pid" 2>/dev/null)
    [ -n "$pid" ] && [ "$pid" != "$1" ] && _pid_alive "$pid" && scontrol ping >/dev/null
}
# After a refused reconfigure (log lines past $1): the old slurmctld has started over and answers.
_ctld_resumed() {
    tail -n +"$(($1 + 1))" "$LAB/log/slurmctld.log" |
        sed -n '/Resuming operation, reconfigure failed/,$p' | grep -q 'Running as primary controller' &&
        scontrol ping >/dev/null
}
# Whether `scontrol reconfigure` starts a new slurmctld process (23.11 and later).
ctld_reconfigure_execs() {
    case $(slurmctld -V | awk '{print $2}') in
    2[0-2].* | 23.0[0-5].*) return 1 ;;
    *) return 0 ;;
    esac
}
# slurm_conf.last_update, which job_submit/allot compares to decide to reload, counts whole
# seconds: two reconfigures in one second look like one, so a new one starts in a later
# second. The second is kept in a file: tests call this in a subshell (check ...).
_later_second() { [ "$(date +%s)" -gt "$(cat "$LAB/run/reconfigured-at" 2>/dev/null || echo 0)" ]; }
ctld_reconfigure() {
    local before old lines
    wait_for 5 "the next second" _later_second
    before=$(_reconf_count)
    lines=$(wc -l <"$LAB/log/slurmctld.log")
    old=$(ctld_pid)
    date +%s >"$LAB/run/reconfigured-at"
    if ! ctld_reconfigure_execs; then
        scontrol reconfigure || return 1
        wait_for 120 "slurmctld to finish reconfiguring" _reconf_after "$before"
        return
    fi
    if ! scontrol reconfigure; then
        echo "slurmctld refused the new configuration; slurmctld $old goes on:"
        grep -E 'fatal|allot: ' "$LAB/log/slurmctld.log" | tail -5
        # scontrol returns as the old process starts over (it re-initialises as at a start,
        # "Running as primary controller"): the caller's next request waits for that.
        wait_for 120 "slurmctld $old to resume" _ctld_resumed "$lines"
        return 1
    fi
    wait_for 120 "a new slurmctld to take over from $old" _ctld_replaced "$old" || return 1
    cp "$LAB/run/slurmctld.pid" "$LAB/run/slurmctld.launch.pid"
}

# lab_test_start <name>: the common start of a lab test. Skips unless asked for the lab,
# brings up a lab of its own (lab_up --accounts) with job_submit/allot (plus LAB_PLUGINS)
# and tests/lab/allot-lab.yaml (or ALLOT_CONFIG), and stops the lab when the test exits.
# LAB_JOB_SUBMIT= (empty) runs without the job_submit plugin.
lab_test_start() {
    skip_unless_lab
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    export ALLOT_TOP_SRCDIR=${ALLOT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
    export ALLOT_TOP_BUILDDIR=${ALLOT_TOP_BUILDDIR:-$ALLOT_TOP_SRCDIR}
    export LAB=/tmp/allot-lab-$1.$$
    export LAB_NODES=${LAB_NODES:-2}
    export ALLOT_CONFIG=${ALLOT_CONFIG:-$here/allot-lab.yaml}
    if [ "${LAB_JOB_SUBMIT-allot}" = allot ]; then
        export LAB_PLUGINS="$ALLOT_TOP_BUILDDIR/plugins/job_submit/.libs/job_submit_allot.so ${LAB_PLUGINS:-}"
    fi
    on_exit "$here/lab-down.sh"
    lab_up --accounts
}

# lab_up [--accounts]: lab-up.sh in $LAB on ports free right now (so any test runs beside
# any other), then with --accounts lab-accounts.sh (the real allot-syncd makes the
# accounting of allot-lab.yaml from the lab directory); sources $LAB/env.sh. A bring-up
# that fails is printed (# lines, with the end of every daemon log) and tried once more
# from nothing on new ports: CI runs this beside two other legs on two CPUs, and one slow
# start must not cost a whole run, while a plugin that keeps slurmctld from starting still
# fails both times. The caller registers lab-down.sh with on_exit.
lab_up() {
    _lab_up_once "$@" && return 0
    note "the lab did not come up (above); once more, from nothing, on new ports"
    "$_LAB_LIB_DIR/lab-down.sh" >/dev/null 2>&1
    _lab_up_once "$@" || abort "the lab did not come up twice (output above)"
}

_lab_up_once() {
    local out=$LAB.bring-up.log rc=0 log
    LAB_PORT_BASE=$(free_port_block $((21 + LAB_NODES))) || abort "no free ports for the lab"
    export LAB_PORT_BASE
    # Into a file, not $(...): a daemon lab-up starts may keep an inherited stdout open.
    "$_LAB_LIB_DIR/lab-up.sh" >"$out" 2>&1 || rc=$?
    if [ $rc = 0 ]; then
        # shellcheck disable=SC1091
        . "$LAB/env.sh"
        if [ "${1:-}" = --accounts ]; then "$_LAB_LIB_DIR/lab-accounts.sh" >>"$out" 2>&1 || rc=$?; fi
    fi
    if [ $rc != 0 ]; then
        tail -30 "$out" | sed 's/^/# /'
        lab_log_ends 8
    fi
    rm -f "$out"
    return $rc
}

# lab_log_ends <lines> [log...]: the last lines of these logs (default: every daemon log of
# this lab), as # lines.
lab_log_ends() {
    local n=$1 log
    shift
    [ $# -gt 0 ] || set -- "$LAB"/log/*.log "$LAB"/log/*.stdout
    for log in "$@"; do
        [ -s "$log" ] && [ "${log##*/}" != mariadb-install.log ] || continue
        echo "# --- the end of $log"
        tail -"$n" "$log" | sed 's/^/#   /'
    done
}

# finish, in a lab test: when a case failed, first the ends of the Slurm daemons' logs
# (slurmctld's last, where CI's tail of the test log shows it) and whether slurmctld still
# runs (the lab and its logs are gone once the test exits), then the harness's closing line.
# (Once: sourced again, the harness's finish would otherwise become this one.)
declare -F _harness_finish >/dev/null || eval "_harness_$(declare -f finish)"
finish() {
    if [ "$HARNESS_FAILED" != 0 ] && [ -n "${LAB:-}" ] && [ -d "$LAB/log" ]; then
        local pid
        lab_log_ends 10 "$LAB"/log/slurmd-*.log "$LAB/log/slurmdbd.log"
        lab_log_ends 25 "$LAB/log/slurmctld.log"
        pid=$(cat "$LAB/run/slurmctld.pid" 2>/dev/null)
        if lab_owns "$pid"; then note "slurmctld ($pid) runs"; else note "slurmctld (${pid:-no pid file}) is gone"; fi
    fi
    _harness_finish
}

# skip_unless_lab: exit 77 (automake's SKIP) unless asked for the lab and able to run it.
skip_unless_lab() {
    [ "${ALLOT_LAB:-0}" = 1 ] || skip "set ALLOT_LAB=1 to run lab tests (needs root)"
    [ "$(id -u)" = 0 ] || skip "lab tests need root"
}
