#!/bin/bash
# doctor-lab.sh - allot-doctor --role controller against a real Slurm lab (tests/lab),
# with the allot.yaml allot-syncd ran from (identity: the lab's token, caches and state):
# the lab as brought up gives 8 GPUs x 8G more than a node's RealMemory, which is fixed
# first; then the correct lab reports no problem; then each Slurm, accounting and
# controller identity check in turn: break exactly that thing (slurm.conf key + restart,
# scontrol update, sacctmgr, file modes and ages), show the finding with its fix, apply
# the printed fix as printed and show the check passes again. The node checks are in
# doctor-node.sh. Skips (77) unless ALLOT_LAB=1 and root.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
D=${DOCTOR_BIN:-$BUILD/doctor/allot-doctor}
# shellcheck disable=SC1091
. "$SRC/tests/lab/lab-lib.sh"
skip_unless_lab
command -v jq >/dev/null || skip "jq missing"
lab_test_start doctor

doctor() { "$D" -c "$LAB/etc/syncd.yaml" --role controller --json; }
# The SCIM source of syncd.yaml (the fixture directory lab-accounts.sh served), up again
# for the doctor on the port syncd.yaml names; lab-accounts.sh stops its own when done.
scim_port() { sed -n 's|^  scim_url: http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$LAB/etc/syncd.yaml"; }
scim_up() {
    stop_service doctor-scim 5
    start_service doctor-scim python3 "$SRC/tests/lib/scim_fixture.py" "$LAB/directory" "$(scim_port)"
    wait_port "$(scim_port)" 60
}
scim_up || abort "the lab's SCIM fixture"
# finding ID FIELD: one field of one finding of a fresh run.
finding() { doctor | jq -r --arg id "$1" ".findings[] | select(.id == \$id) | .$2"; }

# apply_fix FIX: runs what a fix says, as an operator would: a command in backquotes is
# run; a slurm.conf line in backquotes is set, then slurmctld restarted or reconfigured
# as the fix says; an allot.yaml `cluster.KEY: VALUE` is set in syncd.yaml.
apply_fix() {
    local cmd
    # shellcheck disable=SC2016 # backquotes, not an expansion
    cmd=$(sed -n 's/^[^`]*`\([^`]*\)`.*/\1/p' <<<"$1")
    case $cmd in
    sacctmgr* | scontrol* | chmod* | chown*) eval "$cmd" >/dev/null ;;
    "allot-syncd --once") "$SRC/tests/lab/lab-accounts.sh" >/dev/null && scim_up ;;
    cluster.*:*)
        local key=${cmd#cluster.}
        sed -i "s/^  ${key%%:*}:.*/  $key/" "$LAB/etc/syncd.yaml" ;;
    RealMemory=*)
        sed -i "/^NodeName=/s/RealMemory=[0-9]*/$cmd/" "$SLURM_CONF"
        ctld_restart && slurmd_restart ;;
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

# --------------------------------------------------------------- the lab as brought up
broken_then_fixed slurm.gpu_defaults_fit warn "RealMemory=65536"

# --------------------------------------------------------------- the correct lab
out=$(doctor); rc=$?
expect_eq "correct lab: exit 0" "$rc" 0
expect_eq "correct lab: no problem" "$(jq -r '[.findings[] | select(.severity != "ok")] | length' <<<"$out")" 0
expect_eq "correct lab: every Slurm check ran" \
    "$(jq -r '[.findings[] | select(.id | startswith("slurm."))] | length' <<<"$out")" 9
expect_eq "correct lab: problems listed" \
    "$(jq -r '[.findings[] | select(.severity != "ok") | .id + ": " + .what] | join("; ")' <<<"$out")" ""
text=$("$D" -c "$LAB/etc/syncd.yaml" --role controller)
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

# Under preempt/qos the spot QOS's own PreemptMode (requeue, as allot-syncd writes it)
# replaces slurm.conf's for spot jobs: CANCEL cluster-wide is then fine.
conf_set PreemptMode CANCEL && ctld_restart
expect_eq "slurm.preempt_mode: spot's QOS requeues over CANCEL" "$(finding slurm.preempt_mode severity)" ok
expect_contains "slurm.preempt_mode says why it passes" "$(finding slurm.preempt_mode what)" \
    'QOS "spot" has PreemptMode=requeue, which replaces slurm.conf'"'"'s PreemptMode=CANCEL'
sacctmgr -i modify qos spot set PreemptMode=cluster >/dev/null
broken_then_fixed slurm.preempt_mode fail "PreemptMode=REQUEUE"
broken_then_fixed accounting.spot_requeue fail "modify qos spot set PreemptMode=requeue"
sacctmgr -i modify qos spot set PreemptMode=cancel >/dev/null
broken_then_fixed slurm.preempt_mode fail "sacctmgr -i modify qos spot set PreemptMode=requeue"

conf_set SlurmctldParameters "" && conf_set PreemptParameters "" && ctld_restart
broken_then_fixed slurm.preempt_signal fail "send_user_signal"

# Without job_submit/allot (which marks spot jobs requeueable) JobRequeue=0 makes REQUEUE cancel.
conf_set JobSubmitPlugins "" && conf_set JobRequeue 0 && ctld_restart
broken_then_fixed slurm.preempt_mode fail "JobRequeue=1"
broken_then_fixed slurm.job_submit fail "JobSubmitPlugins=allot"

conf_set MaxMemPerCPU 2048 && ctld_reconfigure
broken_then_fixed slurm.mem_defaults fail "MaxMemPerCPU=4096"

# slurmctld refuses DefMemPerGPU beside DefMemPerCPU: the lab's DefMemPerCPU makes way for it.
conf_set DefMemPerCPU "" && conf_set DefMemPerGPU 4096 && ctld_restart
broken_then_fixed slurm.mem_defaults warn "DefMemPerGPU=8192"
conf_set DefMemPerGPU "" && conf_set DefMemPerCPU 1024 && ctld_restart
conf_set DefCpuPerGPU 3 && ctld_reconfigure
broken_then_fixed slurm.mem_defaults warn "DefCpuPerGPU=2"
# 8 GPUs x 4 CPUs do not fit the lab's 16-CPU nodes.
sed -i 's/^  cpus_per_gpu: .*/  cpus_per_gpu: 4/' "$LAB/etc/syncd.yaml"
broken_then_fixed slurm.gpu_defaults_fit warn "cluster.cpus_per_gpu: 2"

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

sacctmgr -i modify qos team-b set GrpTRES=gres/gpu=2 MaxWall=02:00:00 >/dev/null
broken_then_fixed accounting.qos_settings.team-b fail \
    "modify qos team-b set GrpTRES=cpu=8,gres/gpu=4,mem=32768 MaxWall=-1"

# Another writer: a hand-made association, in a second after allot-syncd's last cycle.
_after_state() { [ "$(date +%s)" -gt "$(stat -c %Y "$LAB/identity/syncd.state")" ]; }
wait_for 5 "a second after allot-syncd's last cycle" _after_state
sacctmgr -i add user bob account=team-b >/dev/null
broken_then_fixed accounting.other_writer warn "allot-syncd --once"
expect_eq "allot-syncd removed the hand-made association" \
    "$(sacctmgr -nP show assoc user=bob account=team-b format=User)" ""

# --------------------------------------------------------------- identity files
chmod 0644 "$LAB/directory/token"
broken_then_fixed identity.token_file fail "chmod g-w,o-rwx $LAB/directory/token"
touch -d '2 hours ago' "$LAB/identity/passwd.cache"
broken_then_fixed identity.cache_fresh warn "allot-syncd --once"
touch -d '2 hours ago' "$LAB/identity/syncd.state"
broken_then_fixed identity.syncd_last_run warn "allot-syncd --once"
chmod 0775 "$LAB/identity"
broken_then_fixed identity.cache_mode.identity fail "chmod go-w $LAB/identity"

# --------------------------------------------------------------- the SCIM source
# The fixes here are the source's own (its token, its extension), done as its admin would.
echo noext >"$LAB/directory/schemas"
expect_eq "identity.scim_extension: /Schemas without it fails" "$(finding identity.scim_extension severity)" fail
expect_contains "identity.scim_extension names /Schemas" "$(finding identity.scim_extension what)" \
    "/Schemas does not list urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
expect_contains "identity.scim_extension fix (/Schemas)" "$(finding identity.scim_extension fix)" \
    "enable the POSIX user extension urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
echo ext >"$LAB/directory/schemas"
expect_eq "identity.scim_extension passes with /Schemas listing it" "$(finding identity.scim_extension severity)" ok
echo noext >"$LAB/directory/mode"
expect_eq "identity.scim_extension reports fail" "$(finding identity.scim_extension severity)" fail
expect_contains "identity.scim_extension fix" "$(finding identity.scim_extension fix)" \
    "enable the POSIX user extension urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
echo ok >"$LAB/directory/mode"
expect_eq "identity.scim_extension passes with the extension" "$(finding identity.scim_extension severity)" ok
(umask 077 && echo "another-token" >"$LAB/directory/token.other")
sed -i "s|^  token_file: .*|  token_file: $LAB/directory/token.other|" "$LAB/etc/syncd.yaml"
expect_contains "a refused token" "$(finding identity.scim_reachable what)" "refuses the token"
sed -i "s|^  token_file: .*|  token_file: $LAB/directory/token|" "$LAB/etc/syncd.yaml"
stop_service doctor-scim 5
expect_contains "an unreachable source" "$(finding identity.scim_reachable what)" "cannot be reached"
scim_up
expect_eq "identity.scim_reachable passes again" "$(finding identity.scim_reachable severity)" ok

out=$(doctor); rc=$?
expect_eq "every fix applied: exit 0" "$rc" 0
expect_eq "every fix applied: problems listed" \
    "$(jq -r '[.findings[] | select(.severity != "ok") | .id + ": " + .what] | join("; ")' <<<"$out")" ""
finish
