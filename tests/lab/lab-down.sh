#!/bin/bash
# lab-down.sh - stop exactly what lab-up.sh started in $LAB, by PID, never by name.
#
# Order: cancel jobs, slurmd, this lab's leftover slurmstepd, slurmctld, slurmdbd, mariadbd,
# munged; a recorded PID only while it is still this lab's process (lab-pids.sh). Then
# removes the test users this lab created (unless another lab still runs) and $LAB itself
# (LAB_KEEP=1 keeps it for reading logs).
LAB=${LAB:-/tmp/allot-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
[ -d "$LAB/run" ] || { echo "lab-down: no lab at $LAB"; exit 0; }

# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/lab-pids.sh"
pid_in() { [ -s "$1" ] && cat "$1"; }

if lab_owns "$(pid_in "$LAB/run/slurmctld.pid")" || lab_owns "$(pid_in "$LAB/run/slurmctld.launch.pid")"; then
    timeout 10 scancel --full -u root >/dev/null 2>&1
    # shellcheck disable=SC2046
    timeout 10 scancel --full $(timeout 10 squeue -h -o %i 2>/dev/null) >/dev/null 2>&1
    for _ in $(seq 1 50); do [ -z "$(timeout 5 squeue -h -t R,CG 2>/dev/null)" ] && break; sleep 0.2; done
fi
for f in "$LAB"/run/slurmd-*.launch.pid; do
    [ -e "$f" ] && lab_stop_recorded "$(basename "$f" .launch.pid)" "$f"
done
for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmstepd ] || continue
    ls -l "/proc/$p/fd" 2>/dev/null | grep -q "$LAB/" && lab_stop_pid slurmstepd "$p" 5
done
# Job processes orphaned when their slurmstepd went away: users' processes whose
# environment names this lab's slurm.conf (the test users submit with it exported).
for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$(stat -c %u "/proc/$p" 2>/dev/null)" = 0 ] && continue
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$LAB/etc/slurm.conf" &&
        lab_stop_pid "job process" "$p" 2
done
# slurmctld is a daemon whose PID changes at each reconfigure from 23.11 (gotcha G22): the
# one its pid file names now, and the one last recorded if that differs.
lab_stop_recorded slurmctld "$LAB/run/slurmctld.pid" 20
lab_stop_recorded slurmctld "$LAB/run/slurmctld.launch.pid" 20
lab_stop_recorded slurmdbd "$LAB/run/slurmdbd.launch.pid" 20
lab_stop_recorded mariadbd "$LAB/run/mariadbd.pid" 30
lab_stop_recorded munged "$LAB/run/munged.pid" 10

# Users: those some lab created (never a user that was there before), removed by the last
# lab out: no other lab's mark is left (lab-up.sh marks under the same lock).
exec 8>/tmp/allot-lab-users.lock
flock 8
rm -f "$LAB/run/uses-lab-users"
if [ -s /tmp/allot-lab-created-users ] && [ "${LAB_KEEP_USERS:-0}" != 1 ] &&
    ! ls /tmp/*/run/uses-lab-users >/dev/null 2>&1; then
    while read -r u; do userdel "$u" 2>/dev/null; done </tmp/allot-lab-created-users
    rm -f /tmp/allot-lab-created-users
fi
exec 8>&-
rm -f "$LAB"/run/*.pid
if [ "${LAB_KEEP:-0}" = 1 ]; then echo "lab-down: stopped; kept $LAB"; else rm -rf "$LAB"; echo "lab-down: stopped and removed $LAB"; fi
