#!/bin/bash
# lab-pids.sh - which recorded PIDs are still this lab's; sourced by lab-down.sh and lab-lib.sh.
#
# A daemon that died leaves its PID in $LAB/run. Labs run side by side in one PID namespace
# (a CI leg) whose PIDs wrap at pid_max within a run, so that PID may by now be another
# lab's slurmctld: a PID is stopped only when the process is this lab's.

# lab_alive <pid>: the process exists and is not a zombie.
lab_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# lab_owns <pid>: alive, and its command line names $LAB (munged, mariadbd) or its
# environment holds this lab's SLURM_CONF (the Slurm daemons, started with it exported).
lab_owns() {
    lab_alive "$1" || return 1
    tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$LAB/" && return 0
    tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$LAB/etc/slurm.conf"
}

# lab_stop_pid <name> <pid> [seconds]: TERM, then KILL after the seconds (default 15).
lab_stop_pid() {
    local name=$1 pid=$2 t=${3:-15} i
    lab_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < t * 10; i++)); do lab_alive "$pid" || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    echo "lab-down: killed $name ($pid)"
}

# lab_stop_recorded <name> <pid-file> [seconds]: lab_stop_pid of the PID the file records,
# if that process is still this lab's.
lab_stop_recorded() {
    local pid
    pid=$(cat "$2" 2>/dev/null) && lab_owns "$pid" && lab_stop_pid "$1" "$pid" "${3:-15}"
    return 0
}
