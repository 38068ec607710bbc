#!/bin/bash
# lab-lib.sh - helpers for lab tests: `source tests/lab/lab-lib.sh` after lab-up.sh.
#
# Gives: as <user> <cmd...> (run with the lab's SLURM_CONF), conf_set KEY VALUE,
# ctld_restart / slurmd_restart (by PID), job_field <jobid> <Field> (from scontrol show
# job), wait_job_state <jobid> <STATE> [seconds], and a tiny TAP-like reporter:
# check "<name>" <cmd...>, expect_contains "<name>" <haystack> <needle>, finish.
LAB=${LAB:-/tmp/allot-lab}
# shellcheck disable=SC1091
[ -f "$LAB/env.sh" ] && . "$LAB/env.sh"
export SLURM_CONF=$LAB/etc/slurm.conf

as() { local u=$1; shift; runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"; }

conf_set() { sed -i "/^$1=/d" "$SLURM_CONF"; [ -n "$2" ] && echo "$1=$2" >>"$SLURM_CONF"; true; }

_lab_alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

lab_wait_idle() {
    local i
    for i in $(seq 1 300); do
        [ "$(sinfo -h -N -o %T | grep -vc idle)" = 0 ] && return 0
        sleep 0.1
    done
    return 1
}

ctld_restart() {
    local pid i
    pid=$(cat "$LAB/run/slurmctld.launch.pid")
    kill -TERM "$pid"
    for i in $(seq 1 200); do _lab_alive "$pid" || break; sleep 0.1; done
    setsid slurmctld -D </dev/null >>"$LAB/log/slurmctld.stdout" 2>&1 &
    echo $! >"$LAB/run/slurmctld.launch.pid"
    for i in $(seq 1 300); do
        scontrol ping >/dev/null 2>&1 && break
        _lab_alive $! || { echo "slurmctld died on start:"; tail -5 "$LAB/log/slurmctld.log"; return 1; }
        sleep 0.1
    done
    lab_wait_idle
}

slurmd_restart() {
    local f n pid i
    for f in "$LAB"/run/slurmd-*.launch.pid; do
        n=$(basename "$f" .launch.pid); n=${n#slurmd-}; pid=$(cat "$f")
        kill -TERM "$pid" 2>/dev/null
        for i in $(seq 1 100); do _lab_alive "$pid" || break; sleep 0.1; done
        setsid slurmd -D -N "$n" </dev/null >>"$LAB/log/slurmd-$n.stdout" 2>&1 &
        echo $! >"$f"
    done
    lab_wait_idle
}

# job_field <jobid> <Field>: the value of Field= in `scontrol show job` (one line per field).
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

wait_job_state() { # wait_job_state <jobid> <STATE-regex> [seconds]
    local end=$(( $(date +%s) + ${3:-60} )) st
    while [ "$(date +%s)" -lt "$end" ]; do
        st=$(job_field "$1" JobState)
        [[ "$st" =~ ^($2)$ ]] && return 0
        sleep 0.5
    done
    echo "job $1 is $(job_field "$1" JobState), wanted $2" >&2
    return 1
}

LAB_PASSED=0 LAB_FAILED=0
pass() { LAB_PASSED=$((LAB_PASSED + 1)); echo "ok - $1"; }
fail() { LAB_FAILED=$((LAB_FAILED + 1)); echo "not ok - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/    # /'; }
check() { local name=$1; shift; if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi; }
expect_contains() { # expect_contains <name> <text> <needle>
    if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1" "expected to find: $3
in: $2"; fi
}
expect_not_contains() {
    if [[ "$2" != *"$3"* ]]; then pass "$1"; else fail "$1" "did not expect: $3
in: $2"; fi
}
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$3', got '$2'"; fi; }
finish() {
    echo "$LAB_PASSED passed, $LAB_FAILED failed"
    [ "$LAB_FAILED" = 0 ]
}

# lab_test_start <name> <port-base>: the common start of a lab test. Skips unless asked
# for the lab, brings up a lab of its own (ports from <port-base>, so `make check -j` can run
# tests together) with job_submit/allot and tests/lab/allot-lab.yaml, creates the accounts of
# that file, and stops the lab when the test exits.
lab_test_start() {
    skip_unless_lab
    local here build
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    build=${ALLOT_TOP_BUILDDIR:-$(cd "$here/../.." && pwd)}
    export LAB=/tmp/allot-lab-$1.$$
    export LAB_PORT_BASE=$2
    export ALLOT_CONFIG=${ALLOT_CONFIG:-$here/allot-lab.yaml}
    export LAB_PLUGINS="$build/plugins/job_submit/.libs/job_submit_allot.so ${LAB_PLUGINS:-}"
    # shellcheck disable=SC2064
    trap "'$here/lab-down.sh' >/dev/null 2>&1" EXIT
    "$here/lab-up.sh" || { echo "0 passed, 1 failed"; exit 1; }
    # shellcheck disable=SC1091
    . "$LAB/env.sh"
    "$here/lab-accounts.sh"
}

# skip_unless_lab: exit 77 (automake's SKIP) unless asked for the lab and able to run it.
skip_unless_lab() {
    if [ "${ALLOT_LAB:-0}" != 1 ]; then echo "SKIP: set ALLOT_LAB=1 to run lab tests (needs root)"; exit 77; fi
    if [ "$(id -u)" != 0 ]; then echo "SKIP: lab tests need root"; exit 77; fi
}
