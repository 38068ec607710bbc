#!/bin/bash
# doctor-lab.sh - allot-doctor against a real Slurm lab (tests/lab): the correct lab
# reports no problem; then each Slurm and accounting check in turn: break exactly that
# thing (slurm.conf key + restart, scontrol update, sacctmgr modify), show the finding
# with its fix, apply the printed fix as printed and show the check passes again.
# Skips (77) unless ALLOT_LAB=1 and root.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
D=${DOCTOR_BIN:-$BUILD/doctor/allot-doctor}
# shellcheck disable=SC1091
. "$SRC/tests/lab/lab-lib.sh"
skip_unless_lab
command -v jq >/dev/null || skip "jq missing"
lab_test_start doctor

doctor() { "$D" -c "$ALLOT_CONFIG" --role controller --json; }
# finding ID FIELD: one field of one finding of a fresh run.
finding() { doctor | jq -r --arg id "$1" ".findings[] | select(.id == \$id) | .$2"; }

# apply_fix FIX: runs what a fix says, as an operator would: a command in backquotes is
# run; a slurm.conf line in backquotes is set, then slurmctld restarted or reconfigured
# as the fix says.
apply_fix() {
    local cmd
    cmd=$(sed -n 's/^[^`]*`\([^`]*\)`.*/\1/p' <<<"$1")
    case $cmd in
    sacctmgr* | scontrol*) eval "$cmd" >/dev/null ;;
    *=*)
        conf_set "${cmd%%=*}" "${cmd#*=}"
        if [[ "$1" == *"restart slurmctld"* ]]; then ctld_restart; else ctld_reconfigure; fi ;;
    *) echo "cannot apply: $1" >&2; return 1 ;;
    esac
}

# broken_then_fixed ID SEVERITY NEEDLE: the check ID reports SEVERITY with NEEDLE in its
# fix, the fix applied makes it ok.
broken_then_fixed() {
    local fix
    expect_eq "$1 reports $2" "$(finding "$1" severity)" "$2"
    fix=$(finding "$1" fix)
    expect_contains "$1 fix" "$fix" "$3"
    expect_match "$1 says why" "$(finding "$1" why)" '.+\.$'
    apply_fix "$fix" || fail "$1 fix applied" "$fix"
    expect_eq "$1 passes after the fix" "$(finding "$1" severity)" ok
}

# --------------------------------------------------------------- the correct lab
out=$(doctor); rc=$?
expect_eq "correct lab: exit 0" "$rc" 0
expect_eq "correct lab: no problem" "$(jq -r '[.findings[] | select(.severity != "ok")] | length' <<<"$out")" 0
expect_eq "correct lab: every Slurm check ran" \
    "$(jq -r '[.findings[] | select(.id | startswith("slurm."))] | length' <<<"$out")" 7
text=$("$D" -c "$ALLOT_CONFIG" --role controller)
expect_contains "text report counts" "$text" "0 problems"

# --------------------------------------------------------------- slurm.conf, one key at a time
conf_set AccountingStorageTRES "" && ctld_restart
out=$(doctor); rc=$?
expect_eq "broken lab: exit 2" "$rc" 2
broken_then_fixed slurm.accounting_tres fail "AccountingStorageTRES=gres/gpu"

conf_set AccountingStorageEnforce associations && ctld_restart
broken_then_fixed slurm.accounting_enforce fail "AccountingStorageEnforce=associations,limits,qos,safe"

# preempt/none cannot be combined with PreemptMode=REQUEUE (slurmctld refuses to start).
conf_set PreemptType preempt/partition_prio && ctld_restart
broken_then_fixed slurm.preempt_type fail "PreemptType=preempt/qos"

conf_set PreemptMode CANCEL && ctld_restart
broken_then_fixed slurm.preempt_mode fail "PreemptMode=REQUEUE"

conf_set SlurmctldParameters "" && conf_set PreemptParameters "" && ctld_restart
broken_then_fixed slurm.preempt_signal fail "send_user_signal"

conf_set JobSubmitPlugins "" && ctld_restart
broken_then_fixed slurm.job_submit fail "JobSubmitPlugins=allot"

scontrol update PartitionName=main Default=NO
out=$(doctor); rc=$?
expect_eq "warning only: exit 1" "$rc" 1
broken_then_fixed slurm.partition warn "scontrol update PartitionName=main Default=YES"

# --------------------------------------------------------------- accounting
sacctmgr -i modify qos spot set PreemptMode=cancel GraceTime=0 >/dev/null
broken_then_fixed accounting.spot_requeue fail "PreemptMode=requeue GraceTime=10"

sacctmgr -i modify qos general set Preempt= >/dev/null
broken_then_fixed accounting.preempts_spot.general fail "modify qos general set Preempt+=spot"

sacctmgr -i modify qos team-a set Preempt= >/dev/null
broken_then_fixed accounting.preempts_spot.team-a fail "modify qos team-a set Preempt+=spot"

out=$(doctor); rc=$?
expect_eq "every fix applied: exit 0" "$rc" 0
finish
