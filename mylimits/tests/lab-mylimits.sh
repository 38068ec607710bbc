#!/bin/bash
# lab-mylimits.sh - mylimits against a real Slurm cluster (tests/lab), field by field.
#
# Runs on the accounting allot-syncd creates from the lab directory
# (tests/lab/lab-accounts.sh), runs jobs of alice in every tier: a running project job,
# a project job pending over the team cap (QOSGrpGRES), general jobs up to and over the
# per-team burst cap (MaxGRESPerAccount), and a spot job that a general job preempts and
# Slurm requeues. bob, in the zero-GPU default account, has a GPU job that can
# never start (AssocGrpGRES). Then every number mylimits prints is compared with
# what scontrol, squeue and sacctmgr say, with and without PrivateData, through
# slurmctld and through slurmdbd (MYLIMITS_SOURCE=slurmdbd), plus the permission
# rules and exit codes. Skips (77) unless ALLOT_LAB=1 and root.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
M=${MYLIMITS_BIN:-$BUILD/mylimits/mylimits}
# shellcheck disable=SC1091
. "$SRC/tests/lab/lab-lib.sh"
skip_unless_lab
command -v jq >/dev/null || skip "jq missing"

export LAB_JOB_SUBMIT="" # no job_submit plugin: bob's GPU job must reach the queue
QMNT=""
unmount_quota() { [ -n "$QMNT" ] && mountpoint -q "$QMNT" && umount "$QMNT"; }
on_exit unmount_quota
lab_test_start mylimits

# Quota sources: the kernel here has no quota support (so home fails, reported),
# a site command in the `lfs quota` format and an hourly-recorder snapshot.
Q=$LAB/quota
mkdir -p "$Q"
cat >"$Q/lfs" <<'EOF'
#!/bin/sh
echo "Disk quotas for usr $3 (uid 1001):"
echo "     Filesystem  kbytes   quota   limit   grace   files   quota   limit   grace"
echo "       $4  2097152  1048576 4194304  6d23h     120       0       0       -"
EOF
chmod 755 "$Q" "$Q/lfs"
cat >"$Q/scratch.json" <<EOF
{"schema":"allot.quota-snapshot/1","generated_at":$(date +%s),"filesystem":"/scratch",
 "entries":[{"kind":"user","name":"alice","id":$(id -u alice),"bytes_used":1073741824,
             "bytes_soft":null,"bytes_hard":10737418240,"files_used":5}]}
EOF
chmod 644 "$Q/scratch.json"
cat >"$Q/quota.conf" <<EOF
home     quotactl  /
project  command   $Q/lfs quota -u {user} /lustre/project
scratch  snapshot  $Q/scratch.json
EOF
chmod 644 "$Q/quota.conf"
export ALLOT_QUOTA_CONF=$Q/quota.conf

ml() { # ml <user> [args...]: mylimits as that user, stdout only; exit code in $ML_RC
    local u=$1; shift
    ML_OUT=$(runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" ALLOT_CONFIG="$ALLOT_CONFIG" \
        ALLOT_QUOTA_CONF="$ALLOT_QUOTA_CONF" ${MYLIMITS_SOURCE:+MYLIMITS_SOURCE=$MYLIMITS_SOURCE} \
        "$M" "$@" 2>"$LAB/tmp/ml.err")
    ML_RC=$?
}

echo "# jobs in every tier"
lab_jobs_in_every_tier
gover=$(sub alice --qos=general --gpus=1 -c 1 --mem-per-gpu=1G)
bobjob=$(sub bob --gpus=1 -c 1 --mem-per-gpu=1G)
check "Slurm requeued the preempted spot job (Restarts=1)" wait_job_field "$spot" Restarts 1
check "the requeued spot job pends" wait_job_state "$spot" PENDING
# A new job first shows Priority/None; the scheduler names the limit on its next pass.
check "over-cap project job pends on QOSGrpGRES" wait_job_field "$over" Reason QOSGrpGRES
check "over-cap general job pends on MaxGRESPerAccount" wait_job_field "$gover" Reason MaxGRESPerAccount
check "bob's GPU job pends on AssocGrpGRES" wait_job_field "$bobjob" Reason AssocGrpGRES

echo "# alice: mylimits --json against sacctmgr / scontrol / squeue"
ml alice --json
J=$ML_OUT
expect_eq "exit 0" "$ML_RC" 0
expect_eq "schema" "$(jq -r .schema <<<"$J")" "allot.mylimits/1"
expect_eq "user name" "$(jq -r .user.name <<<"$J")" alice
expect_eq "uid = id -u" "$(jq -r .user.uid <<<"$J")" "$(id -u alice)"
expect_eq "default account = sacctmgr DefaultAccount" "$(jq -r .user.default_account <<<"$J")" \
    "$(sacctmgr -nP show user alice format=DefaultAccount)"
expect_eq "accounts = sacctmgr assoc accounts" "$(jq -r '[.accounts[].name]|sort|join(",")' <<<"$J")" \
    "$(sacctmgr -nP show assoc user=alice format=Account | sort -u | paste -sd,)"
tier() { jq -r --arg t "$1" --arg f "$2" '.accounts[]|select(.name=="team-a").tiers[]|select(.tier==$t)|.[$f]' <<<"$J"; }
qos_tres() { sacctmgr -nP show qos "$1" format="$2" | tr ',' '\n' | sed -n 's/^gres\/gpu=//p'; }
expect_eq "project QOS name" "$(tier project qos)" team-a
expect_eq "project cap = sacctmgr GrpTRES gres/gpu" "$(tier project gpu_cap)" "$(qos_tres team-a GrpTRES)"
expect_eq "general pool = sacctmgr GrpTRES gres/gpu" "$(tier general gpu_cap)" "$(qos_tres general GrpTRES)"
expect_eq "general per-team cap = sacctmgr MaxTRESPA gres/gpu" "$(tier general team_gpu_cap)" "$(qos_tres general MaxTRESPA)"
expect_eq "spot is uncapped" "$(tier spot gpu_cap)" null
expect_eq "general MaxWall 3-00:00:00 = 4320 min" "$(tier general max_wall_minutes)" 4320
expect_eq "spot MaxWall 1-00:00:00 = 1440 min" "$(tier spot max_wall_minutes)" 1440
expect_eq "project has no walltime limit" "$(tier project max_wall_minutes)" null
expect_eq "spot preemptible (Preempt=spot on project/general)" "$(tier spot preemptible)" true
expect_eq "project not preemptible" "$(tier project preemptible)" false
expect_eq "general not preemptible" "$(tier general preemptible)" false
expect_eq "all tiers allowed (sacctmgr QOS list)" "$(jq -r '[.accounts[].tiers[].allowed]|all' <<<"$J")" true
expect_eq "team project GPUs in use = squeue team-a/team-a running" "$(tier project team_gpus_in_use)" \
    "$(sum_gpus -A team-a -q team-a)"
expect_eq "team general GPUs in use = squeue team-a/general running" "$(tier general team_gpus_in_use)" \
    "$(sum_gpus -A team-a -q general)"
expect_eq "general pool in use = squeue general running" "$(tier general pool_gpus_in_use)" "$(sum_gpus -q general)"
expect_eq "alice's project GPUs = squeue -u alice" "$(tier project user_gpus_in_use)" "$(sum_gpus -u alice -q team-a)"
expect_eq "alice's general GPUs = squeue -u alice" "$(tier general user_gpus_in_use)" "$(sum_gpus -u alice -q general)"
expect_eq "pending project jobs = squeue" "$(tier project pending_jobs)" "$(squeue -h -u alice -q team-a -t PD | wc -l)"
expect_eq "running general jobs = squeue" "$(tier general running_jobs)" "$(squeue -h -u alice -q general -t R | wc -l)"

expect_eq "jobs listed = squeue -u alice" "$(jq -r '[.jobs[].job_id]|sort|join(",")' <<<"$J")" \
    "$(squeue -h -u alice -o %i | sort -n | paste -sd,)"
n_bad=0
while read -r id st reason qos acct; do
    jj=$(jq -c --argjson id "$id" '.jobs[]|select(.job_id==$id)' <<<"$J")
    [ "$(jq -r .state <<<"$jj")" = "$st" ] || { n_bad=$((n_bad+1)); echo "  # job $id state $(jq -r .state <<<"$jj") vs $st"; }
    [ "$(jq -r .qos <<<"$jj")" = "$qos" ] || n_bad=$((n_bad+1))
    [ "$(jq -r .account <<<"$jj")" = "$acct" ] || n_bad=$((n_bad+1))
    if [ "$st" = PENDING ]; then [ "$(jq -r .reason <<<"$jj")" = "$reason" ] || { n_bad=$((n_bad+1)); echo "  # job $id reason $(jq -r .reason <<<"$jj") vs $reason"; }; fi
    [ "$(jq -r .gpus <<<"$jj")" = "$(gpus_of "$id")" ] || { n_bad=$((n_bad+1)); echo "  # job $id gpus $(jq -r .gpus <<<"$jj") vs $(gpus_of "$id")"; }
done < <(squeue -h -u alice -o '%i %T %r %q %a')
expect_eq "every job's state, reason, QOS, account and GPUs match squeue/scontrol" "$n_bad" 0
job() { jq -r --argjson id "$1" --arg f "$2" '.jobs[]|select(.job_id==$id)|.[$f]' <<<"$J"; }
expect_contains "QOSGrpGRES in words, with the cap and the team's usage" "$(job "$over" explanation)" \
    "waiting for your team's project cap of 8 GPUs; 8 in use by your team"
expect_contains "MaxGRESPerAccount in words" "$(job "$gover" explanation)" \
    "waiting for your team's general burst cap of 4 GPUs; 4 in use by your team in general"
expect_eq "spot job restarts = scontrol Restarts" "$(job "$spot" restarts)" "$(job_field "$spot" Restarts)"
expect_eq "spot job marked requeued after preemption" "$(job "$spot" requeued_after_preemption)" true
expect_contains "requeued spot job explained" "$(job "$spot" explanation)" "requeued after preemption (restart 1)"
expect_eq "spot job tier" "$(job "$spot" tier)" spot

expect_eq "storage: three sources" "$(jq -r '.storage|length' <<<"$J")" 3
expect_eq "home quotactl is reported unavailable, not fatal" "$(jq -r '.storage[0].ok' <<<"$J")" false
expect_contains "the reason says why" "$(jq -r '.storage[0].error' <<<"$J")" "quotactl"
expect_eq "lfs-style command parsed: used bytes" "$(jq -r '.storage[1].usage[0].bytes_used' <<<"$J")" $((2097152 * 1024))
expect_eq "snapshot parsed: hard limit" "$(jq -r '.storage[2].usage[0].bytes_hard' <<<"$J")" 10737418240

echo "# alice: the text report"
ml alice
T=$ML_OUT
expect_eq "exit 0" "$ML_RC" 0
long=$(awk 'length($0) > 80' <<<"$T")
expect_eq "every line fits 80 columns" "$long" ""
expect_not_contains "no colour when not a terminal" "$T" $'\033'
expect_contains "the Slurm reason name is shown" "$T" "QOSGrpGRES"
expect_contains "the project row: cap 8, team 8" "$T" "  project team-a         8     8       -"
expect_contains "the requeued spot job is marked" "$T" "(requeued 1x)"
expect_contains "storage row of the command source" "$T" "project  /lustre/project"
ml alice --color=always
expect_contains "--color=always colours" "$ML_OUT" $'\033['

echo "# the real quota(1) tool as a command source (loop ext4 with usrquota, userspace quota files)"
if command -v quota >/dev/null && command -v setquota >/dev/null && command -v quotacheck >/dev/null &&
    command -v mkfs.ext4 >/dev/null; then
    QMNT=$LAB/qmnt
    mkdir -p "$QMNT"
    truncate -s 32M "$LAB/q.img" && mkfs.ext4 -q -F "$LAB/q.img" && mount -o loop,usrquota "$LAB/q.img" "$QMNT"
    quotacheck -cumf "$QMNT" 2>/dev/null
    setquota -u alice 1000 2000 10 20 "$QMNT"
    dd if=/dev/zero of="$QMNT/big" bs=1k count=1500 2>/dev/null; chown alice "$QMNT/big"; sync
    quotacheck -umf "$QMNT" 2>/dev/null
    chmod 644 "$QMNT/aquota.user"   # no kernel quotas here: quota(1) reads the file itself
    printf 'loop command /usr/bin/quota -w -p -u {user}\n' >"$Q/quota-real.conf"; chmod 644 "$Q/quota-real.conf"
    ALLOT_QUOTA_CONF_SAVE=$ALLOT_QUOTA_CONF; ALLOT_QUOTA_CONF=$Q/quota-real.conf
    ml alice --json
    real=$(runuser -u alice -- quota -w -p -u alice 2>/dev/null | awk '/loop/{print $2, $3, $4, $6, $7, $8}')
    u='.storage[0].usage[0]'
    got=$(jq -r "[($u.bytes_used/1024), ($u.bytes_soft/1024), ($u.bytes_hard/1024), $u.files_used, $u.files_soft, $u.files_hard]|map(tostring)|join(\" \")" <<<"$ML_OUT")
    expect_eq "bytes and files used/soft/hard = quota -w -p -u alice" "$got" "${real//\*/}"
    expect_eq "over the soft limit, in grace" "$(jq -r "$u.grace_expires > 0" <<<"$ML_OUT")" true
    ml alice
    expect_contains "text row of the real quota source" "$ML_OUT" "loop     /dev/loop"
    ALLOT_QUOTA_CONF=$ALLOT_QUOTA_CONF_SAVE
    umount "$QMNT"; QMNT=""
else
    check "quota(1), setquota, quotacheck and mkfs.ext4 are installed (packages quota, e2fsprogs)" false
fi

echo "# the same figures through slurmdbd"
# A pending job's start_time is slurmctld's current estimate, which its scheduler may move
# between the two calls (seen on 26.05): not a figure of the limits' source.
same_source() { jq -S 'del(.generated_at,.notes) | walk(if type == "object" then del(.start_time) else . end)'; }
a=$(same_source <<<"$J")
MYLIMITS_SOURCE=slurmdbd ml alice --json
b=$(same_source <<<"$ML_OUT")
expect_eq "slurmctld and slurmdbd give the same report" "$(diff <(echo "$a") <(echo "$b") | head -20)" ""

echo "# bob: only in the zero-GPU default account"
ml bob
expect_eq "exit 0" "$ML_RC" 0
expect_contains "says so plainly" "$ML_OUT" "You are in no team yet."
expect_contains "with the join hint from allot.yaml" "$ML_OUT" "ask your PI to add you to a team"
expect_contains "his GPU job will never start" "$ML_OUT" "will never start"
ml bob --json
expect_eq "only_default_account" "$(jq -r .only_default_account <<<"$ML_OUT")" true
expect_eq "bob's job reason = squeue" "$(jq -r '.jobs[0].reason' <<<"$ML_OUT")" "$(squeue -h -j "$bobjob" -o %r)"

echo "# permissions and exit codes"
# Every refusal below is checked with a positive request in the same step: alice's own
# report still works, so a refusal never passes because slurmctld went away.
_alice_ok() { runuser -u alice -- env SLURM_CONF="$SLURM_CONF" ALLOT_CONFIG="$ALLOT_CONFIG" "$M" --no-quota >/dev/null; }
alive_probe _alice_ok
ml bob --user=alice
expect_refused_eq "--user by a plain user: exit 5" "$ML_RC" 5
ml bob --account=team-a
expect_refused_eq "--account of another team by a plain user: exit 5" "$ML_RC" 5
ml alice --account=team-a --json
expect_eq "--account of one's own team: exit 0" "$ML_RC" 0
ML_OUT=$(env ALLOT_CONFIG="$ALLOT_CONFIG" ALLOT_QUOTA_CONF="$ALLOT_QUOTA_CONF" "$M" --user=alice --json 2>/dev/null)
expect_eq "root may use --user: same jobs as alice sees" "$(jq -r '[.jobs[].job_id]|join(",")' <<<"$ML_OUT")" \
    "$(jq -r '[.jobs[].job_id]|join(",")' <<<"$J")"
sacctmgr -i modify user carol set AdminLevel=Operator >/dev/null
_operator() { scontrol show assoc_mgr users=carol flags=users | grep -q 'AdminLevel=Operator'; }
check "slurmctld knows carol is an Operator" wait_for 60 "carol's AdminLevel" _operator
ml carol --user=alice --json
expect_eq "a Slurm Operator may use --user" "$ML_RC" 0
expect_eq "and sees alice" "$(jq -r .user.name <<<"$ML_OUT")" alice
ml alice --bogus
expect_refused_eq "bad option: exit 2" "$ML_RC" 2
ALLOT_CONFIG_SAVE=$ALLOT_CONFIG; ALLOT_CONFIG=/nonexistent.yaml ml alice; ALLOT_CONFIG=$ALLOT_CONFIG_SAVE
expect_refused_eq "missing allot.yaml: exit 3" "$ML_RC" 3
sed "s/^SlurmctldPort=.*/SlurmctldPort=$(free_port)/" "$SLURM_CONF" >"$LAB/etc/dead.conf"
chmod 644 "$LAB/etc/dead.conf"
ML_OUT=$(runuser -u alice -- env SLURM_CONF="$LAB/etc/dead.conf" ALLOT_CONFIG="$ALLOT_CONFIG" "$M" 2>&1)
expect_refused_eq "slurmctld unreachable: exit 4 (the real one still answers)" "$?" 4
expect_contains "and says which daemon" "$ML_OUT" "cannot reach slurmctld"

if command -v valgrind >/dev/null; then
    echo "# memory: every libslurm structure freed (valgrind, both Slurm paths)"
    for src in slurmctld slurmdbd; do
        runuser -u alice -- env SLURM_CONF="$SLURM_CONF" ALLOT_CONFIG="$ALLOT_CONFIG" \
            ALLOT_QUOTA_CONF="$ALLOT_QUOTA_CONF" MYLIMITS_SOURCE=$src valgrind -q --leak-check=full \
            --suppressions="$SRC/mylimits/tests/valgrind.supp" \
            --errors-for-leak-kinds=definite --error-exitcode=9 "$M" --all >/dev/null 2>"$LAB/tmp/vg.$src"
        rc=$?
        expect_eq "valgrind: no errors, nothing definitely lost ($src)" "$rc" 0
        [ "$rc" = 0 ] || head -40 "$LAB/tmp/vg.$src" | sed 's/^/    # /'
    done
fi

echo "# PrivateData: only the caller's own data"
conf_set PrivateData "accounts,jobs,usage,users"
check "slurmctld reconfigures with PrivateData" ctld_reconfigure
expect_eq "PrivateData is in force (alice's squeue shows only her jobs)" \
    "$(as alice squeue -h -o %u | sort -u | paste -sd,)" alice
ml alice --json
P=$ML_OUT
expect_eq "exit 0 under PrivateData" "$ML_RC" 0
expect_eq "same jobs under PrivateData" "$(jq -r '[.jobs[].job_id]|sort|join(",")' <<<"$P")" \
    "$(jq -r '[.jobs[].job_id]|sort|join(",")' <<<"$J")"
expect_eq "team usage still shown (from the QOS)" "$(jq -r '.accounts[]|select(.name=="team-a").tiers[]|select(.tier=="project").team_gpus_in_use' <<<"$P")" 8
expect_eq "caps still shown" "$(jq -r '.accounts[]|select(.name=="team-a").tiers[]|select(.tier=="general").team_gpu_cap' <<<"$P")" 4
expect_contains "explanation unchanged" "$(jq -r --argjson id "$over" '.jobs[]|select(.job_id==$id).explanation' <<<"$P")" \
    "project cap of 8 GPUs; 8 in use by your team"

finish
