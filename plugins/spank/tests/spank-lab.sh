#!/bin/bash
# spank-lab.sh - spank_allot.so in a real Slurm lab (tests/lab): a job's prolog
# writes the registry entry (with the tier from slurmctld's QOS), the job sees
# ALLOT_TIER/ALLOT_PREEMPTIBLE/ALLOT_GRACE_SECONDS (a forged value is replaced),
# allot-keys on a compute node lets the job's user in while it runs, and the
# epilog removes the entry. Accounting made by allot-syncd (tests/lab/lab-accounts.sh),
# ports free at run time. Root and ALLOT_LAB=1 only.
set -u
S=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
B=${ALLOT_TOP_BUILDDIR:-$S}
# shellcheck disable=SC1091
. "$S/tests/lab/lab-lib.sh"
export LAB_NODES=1
export LAB_PLUGINS="$B/plugins/spank/.libs/spank_allot.so"
lab_test_start spank
RUN=$LAB/allot-run
echo "required $LAB/plugins/spank_allot.so config=$ALLOT_CONFIG run_dir=$RUN" >>"$LAB/etc/plugstack.conf"
# slurmd decides at start whether SPANK has a job prolog/epilog to run.
check "slurmd restarts with the SPANK plugin" slurmd_restart

# allot-keys as a compute node would run it, reading this lab's registry.
ALICE_UID=$(id -u alice)
ssh-keygen -q -t ed25519 -N '' -f "$LAB/tmp/alicekey"
printf 'alice:x:%s:%s::/home/alice:/bin/bash\nbob:x:%s:%s::/home/bob:/bin/bash\n' \
    "$ALICE_UID" "$(id -g alice)" "$(id -u bob)" "$(id -g bob)" >"$LAB/tmp/passwd"
: >"$LAB/tmp/group"
printf 'alice\t%s\nbob\t%s\n' "$(cut -d' ' -f1-2 <"$LAB/tmp/alicekey.pub")" \
    "$(cut -d' ' -f1-2 <"$LAB/tmp/alicekey.pub")" >"$LAB/tmp/keys"
# allot-keys answers only for directory users: alice and bob are local accounts
# of the lab host, so allot-keys runs in a mount namespace whose /etc/passwd and /etc/group
# lack them and where libnss_allot resolves them from the caches, kept in a trusted
# directory (an overlay on /var/lib, as on a node).
NSSW=$LAB/nss
mkdir -p "$NSSW/up/allot" "$NSSW/wk" "$NSSW/lib" "$NSSW/etc"
chmod 755 "$NSSW/up" "$NSSW/up/allot"
cp "$B/plugins/nss/.libs/libnss_allot.so.2" "$NSSW/lib/"
grep -v '^\(alice\|bob\):' /etc/passwd >"$NSSW/passwd"
grep -v '^\(alice\|bob\):' /etc/group >"$NSSW/group"
sed 's/^passwd:.*/passwd: files allot/; s/^group:.*/group: files allot/' /etc/nsswitch.conf >"$NSSW/nsswitch.conf"
"$B/plugins/nss/allot-make-cache" "$NSSW/up/allot" "$LAB/tmp/passwd" "$LAB/tmp/group" "$LAB/tmp/keys"
printf 'identity:\n  cache_dir: /var/lib/allot\nnode:\n  role: compute\n  admin_group: nosuchgroup\n  run_dir: %s\n' \
    "$RUN" >"$LAB/tmp/keys.yaml"
keys() {
    unshare -m --propagation private sh -c '
        N=$1; shift
        # An overlay on /etc, not binds over its files (docs/lab.md G25).
        mount -t tmpfs tmpfs "$N/etc" && mkdir "$N/etc/upper" "$N/etc/work" &&
            mount -t overlay overlay -o lowerdir=/etc,upperdir="$N/etc/upper",workdir="$N/etc/work" /etc &&
            for f in passwd group nsswitch.conf; do cat "$N/$f" >"/etc/$f" || exit 1; done || exit 1
        mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$N/up",workdir="$N/wk" /var/lib &&
        LD_LIBRARY_PATH="$N/lib" exec "$@"' sh "$NSSW" \
        "$B/syncd/keys/allot-keys" -v --cache-only --config "$LAB/tmp/keys.yaml" "$1" | wc -l
}

expect_eq "before any job: alice gets no key on the compute node" "$(keys alice)" 0

echo "# spot job"
j=$(as alice env ALLOT_TIER=forged ALLOT_GRACE_SECONDS=99999 sbatch --parsable -A team-a --qos=spot \
    --gpus=1 -t 5 -o "$LAB/tmp/%j.out" \
    --wrap 'env | grep -E "^ALLOT_(TIER|PREEMPTIBLE|GRACE_SECONDS)=" | sort; srun env | grep ^ALLOT_TIER; sleep 30')
check "spot job $j runs" wait_job_state "$j" RUNNING
check "prolog created the registry entry" wait_for 60 "the registry entry" test -e "$RUN/jobs/$j.n1"
entry=$(cat "$RUN/jobs/$j.n1" 2>/dev/null)
expect_contains "prolog wrote the registry entry" "$entry" "job_id=$j"
expect_contains "entry has the job's uid" "$entry" "uid=$ALICE_UID"
expect_contains "entry has the tier from slurmctld's QOS" "$entry" "tier=spot"
expect_contains "entry has the spot grace" "$entry" "grace_seconds=10"
expect_contains "entry has this boot's id" "$entry" "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
expect_eq "entry is owned by root, mode 0644" "$(stat -c '%U %a' "$RUN/jobs/$j.n1" 2>/dev/null)" "root 644"
expect_eq "while the job runs: alice gets her key on the compute node" "$(keys alice)" 1
expect_eq "bob (no job) gets nothing" "$(keys bob)" 0
_two_lines() { [ "$(grep -c ALLOT_TIER "$LAB/tmp/$j.out" 2>/dev/null)" = 2 ]; }
check "batch script and srun step both printed their environment" wait_for 60 "the job's output" _two_lines
out=$(cat "$LAB/tmp/$j.out")
expect_contains "batch script sees ALLOT_TIER=spot (forged value replaced)" "$out" "ALLOT_TIER=spot"
expect_contains "batch script sees ALLOT_PREEMPTIBLE=1" "$out" "ALLOT_PREEMPTIBLE=1"
expect_contains "batch script sees ALLOT_GRACE_SECONDS=10" "$out" "ALLOT_GRACE_SECONDS=10"
expect_eq "an srun step inside the job sees it too" "$(grep -c '^ALLOT_TIER=spot' "$LAB/tmp/$j.out")" 2
expect_not_contains "no forged value survives" "$out" "forged"
expect_not_contains "no forged grace survives" "$out" "99999"
scancel "$j"
check "epilog removed the entry" wait_for 60 "the epilog" test ! -e "$RUN/jobs/$j.n1"
expect_eq "after the job: alice gets no key" "$(keys alice)" 0

echo "# project job"
j=$(as alice sbatch --parsable --gpus=1 -o "$LAB/tmp/%j.out" --wrap 'env | grep -E "^ALLOT_(TIER|PREEMPTIBLE|GRACE_SECONDS)=" | sort')
check "project job $j completes" wait_job_state "$j" COMPLETED
out=$(cat "$LAB/tmp/$j.out")
expect_contains "project job: ALLOT_TIER=project" "$out" "ALLOT_TIER=project"
expect_contains "project job: ALLOT_PREEMPTIBLE=0" "$out" "ALLOT_PREEMPTIBLE=0"
expect_not_contains "project job: no grace variable" "$out" "ALLOT_GRACE_SECONDS"
check "completed job: entry removed" wait_for 60 "the epilog" test ! -e "$RUN/jobs/$j.n1"

echo "# stale entries"
printf 'allot-job-entry 1\njob_id=999999\nuid=%s\nuser=alice\nnode=n1\nboot_id=00000000-0000-0000-0000-000000000000\nstart=1\nexpires=0\n' \
    "$ALICE_UID" >"$RUN/jobs/999999.n1"
expect_eq "an entry from another boot grants nothing" "$(keys alice)" 0
printf 'allot-job-entry 1\njob_id=999998\nuid=%s\nuser=alice\nnode=n1\nboot_id=%s\nstart=1\nexpires=2\n' \
    "$ALICE_UID" "$(cat /proc/sys/kernel/random/boot_id)" >"$RUN/jobs/999998.n1"
expect_eq "an expired entry grants nothing" "$(keys alice)" 0
j=$(as alice sbatch --parsable -o /dev/null --wrap true)
check "the next job completes" wait_job_state "$j" COMPLETED
expect_eq "the next prolog pruned the other boot's entry" \
    "$([ -e "$RUN/jobs/999999.n1" ] && echo present || echo gone)" gone
finish
