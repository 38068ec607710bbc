#!/bin/bash
# in-root.sh DEBS-DIR - run by install-test.sh as root inside the scratch root (an overlay of
# this machine's root, chrooted, in a private mount namespace): what a site does after
# handing a node over, with the .debs of DEBS-DIR and nothing from the build tree.
#   1. dpkg -i every .deb; the users, directories and units as the packages made them
#   2. /etc/allot/allot.yaml written by the admin; the directory loaded with
#      `allot-scimd apply` as the user allot; allot-scimd started as its unit says
#   3. Slurm (tests/lab/lab-up.sh) with the installed job_submit/allot and spank_allot
#   4. allot-syncd, as allot-syncd-once.service says, creates the accounting and the caches;
#      the directory's users resolve through the installed libnss_allot
#   5. jobs as those users: a team's GPU job runs in its project QOS, a user in no team and
#      a job that can never fit are refused with the policy's message
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/lib/harness.sh"
DEBS=${1:?usage: in-root.sh DEBS-DIR}
PKGS=$(sed -n 's/^Package: //p' "$SRC/debian/control")
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
UNITS=/lib/systemd/system
step() { note "$(date -u +%T) $*"; }

# ------------------------------------------------------------------ 1. install
step "dpkg -i"
expect_eq "a .deb for each package of debian/control" \
    "$(ls "$DEBS"/allot-*.deb | grep -v dbgsym | sed 's|.*/||; s|_.*||' | sort | tr '\n' ' ')" \
    "$(printf '%s\n' $PKGS | sort | tr '\n' ' ')"
mapfile -t debs < <(ls "$DEBS"/allot-*.deb | grep -v dbgsym)
# systemd-analyze verify looks up each unit's Documentation= man page: a root whose dpkg
# drops man pages (the matrix chroots do) must keep allot's. Read last, so it wins.
echo 'path-include=/usr/share/man/*' >/etc/dpkg/dpkg.cfg.d/zz-allot-install-test
out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}" 2>&1)
check "dpkg -i of every package succeeds" test $? = 0 || true
[ -n "$out" ] && printf '%s\n' "$out" | tail -5 | sed 's/^/# dpkg: /'
for p in $PKGS; do
    expect_eq "$p is installed" "$(dpkg-query -W -f '${Status}' "$p" 2>&1)" "install ok installed"
done
expect_match "sysusers.d made the user allot (home its store, no shell)" \
    "$(getent passwd allot)" '^allot:x:[0-9]+:[0-9]+:[^:]*:/var/lib/allot-scimd:/usr/sbin/nologin$'
expect_match "sysusers.d made the user allot-keys" "$(getent passwd allot-keys)" '^allot-keys:x:'
for spec in "/var/lib/allot root:allot-keys 755" "/var/lib/allot-scimd allot:allot 700" \
    "/var/lib/allot-oidc allot:allot 700" "/run/allot root:root 755"; do
    d=${spec%% *}
    expect_eq "$d: owner and mode" "$d $(stat -c '%U:%G %a' "$d" 2>&1)" "$spec"
done
for u in allot-scimd.service allot-syncd.service allot-syncd-once.service allot-exporter.service; do
    exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$UNITS/$u")
    check "$u: ExecStart $exe is an installed program" test -x "$exe"
done
check "systemd-analyze verify on the installed units" sh -c \
    "out=\$(systemd-analyze verify $UNITS/allot-*.service $UNITS/allot-syncd.timer 2>&1); rc=\$?; echo \"\$out\"; [ \$rc = 0 ] && [ -z \"\$out\" ]"
check "job_submit/allot is in Slurm's plugin directory" test -f "/usr/lib/$MA/slurm-wlm/job_submit_allot.so"
check "libnss_allot.so.2 is where glibc looks" test -f "/usr/lib/$MA/libnss_allot.so.2"
[ "$HARNESS_FAILED" = 0 ] || abort "the packages did not install"

# The command line a unit runs, with its configure-made paths.
exec_of() { sed -n 's/^ExecStart=//p' "$UNITS/$1"; }
as_allot() { (umask 0077 && exec setpriv --reuid=allot --regid=allot --init-groups -- "$@"); }

# ------------------------------------------------------------------ 2. allot-scimd
step "allot.yaml, directory, allot-scimd"
SCIM_PORT=$(free_port)
cp /etc/allot/allot.yaml /etc/allot/allot.yaml.dist
{
    # The lab's policy (two teams on one 8-GPU node) and this host's services.
    cat "$SRC/tests/lab/allot-lab.yaml"
    cat <<YAML
identity:
  scim_url: http://127.0.0.1:$SCIM_PORT/scim/v2
  token_file: /etc/allot/scim.token
  home_prefix: /home
node:
  role: login
  admin_group: root
scim_server:
  listen: 127.0.0.1:$SCIM_PORT
oidc:
  issuer: https://id.install.test
  audience: install-test
YAML
} >/etc/allot/allot.yaml
cat >/etc/allot/directory.yaml <<'YAML'
users:
  - {name: instalice, display_name: Alice, uid: 44501}
  - {name: instbob, display_name: Bob, uid: 44502}
  - {name: instdave, display_name: Dave, uid: 44504}
groups:
  - {name: team-a, gid: 44601, members: [instalice]}
  - {name: team-b, gid: 44602, members: [instdave]}
YAML
for u in instalice instbob instdave team-a team-b; do
    getent passwd $u >/dev/null || getent group $u >/dev/null && skip "$u is a local name here"
done
SCIMD=$(exec_of allot-scimd.service | awk '{print $1}')
check "allot-scimd apply (as allot) loads the directory" \
    as_allot "$SCIMD" -c /etc/allot/allot.yaml apply /etc/allot/directory.yaml
tok=$(as_allot "$SCIMD" -c /etc/allot/allot.yaml token create syncd --scope read-inactive 2>&1)
token=$(printf '%s\n' "$tok" | grep -o 'allot_[A-Za-z0-9_-]*' | head -1)
expect_match "a read-inactive token for allot-syncd" "$token" '^allot_'
(umask 077 && printf '%s\n' "$token" >/etc/allot/scim.token)
check "the store is in allot-scimd's own directory" test -s /var/lib/allot-scimd/directory.db
# As the unit runs it: its ExecStart, its user, its umask.
# shellcheck disable=SC2046
start_service scimd sh -c "umask 0077 && exec setpriv --reuid=allot --regid=allot --init-groups -- $(exec_of allot-scimd.service)"
wait_port "$SCIM_PORT" 30 || { cat "$HARNESS_TMP/scimd.log"; abort "allot-scimd did not start"; }
check "allot-scimd serves the directory" sh -c \
    "curl -fsS -H 'Authorization: Bearer $token' http://127.0.0.1:$SCIM_PORT/scim/v2/Users | grep -q instalice"
check "the OIDC keys are in their own directory" sh -c '[ -n "$(ls -A /var/lib/allot-oidc)" ]'

# ------------------------------------------------------------------ 3. Slurm
# The directory's users resolve through the installed module once allot-syncd has published
# the caches (until then it answers nothing and files still answer).
sed -i -e 's/^passwd:.*/passwd:         files allot/' -e 's/^group:.*/group:          files allot/' \
    /etc/nsswitch.conf
step "Slurm lab with the installed plugins"
export LAB=/tmp/allot-install-lab
on_exit "$SRC/tests/lab/lab-down.sh"
if ! LAB_USERS_FILE=/dev/null LAB_NODES=1 LAB_JOB_SUBMIT=allot ALLOT_CONFIG=/etc/allot/allot.yaml \
    "$SRC/tests/lab/lab-up.sh" >"$HARNESS_TMP/lab-up.log" 2>&1; then
    tail -20 "$HARNESS_TMP/lab-up.log"
    abort "the Slurm lab did not start"
fi
. "$LAB/env.sh"
. "$SRC/tests/lab/lab-lib.sh" # slurmd_restart, job_field, per_gpu
# spank_allot as plugstack.conf.snippet says, reading the installed allot.yaml; slurmd
# decides at start whether SPANK has a job prolog to run.
echo "required /usr/lib/$MA/slurm-wlm/spank_allot.so run_dir=/run/allot" >>"$LAB/etc/plugstack.conf"
check "slurmd restarts with the installed spank_allot" slurmd_restart
expect_contains "slurmctld loaded the installed job_submit/allot with allot.yaml" \
    "$(grep 'allot: loaded' "$LAB/log/slurmctld.log")" "(2 teams)"

# ------------------------------------------------------------------ 4. allot-syncd
step "allot-syncd (allot-syncd-once.service)"
# Its unit's command line; its log to stderr rather than to a syslog this root has not.
syncd_once() { $(exec_of allot-syncd-once.service | sed 's/ --syslog//'); }
check "allot-syncd --once as its unit runs it" syncd_once
# A second cycle, as the timer runs it: users whose uid did not resolve yet in the first
# (the caches it published) get their associations now.
check "a second cycle converges" syncd_once
for f in passwd.cache group.cache keys.cache; do
    check "$f published in /var/lib/allot" test -s "/var/lib/allot/$f"
done
expect_eq "keys.cache belongs to group allot-keys" "$(stat -c %G /var/lib/allot/keys.cache 2>&1)" allot-keys
expect_match "instalice resolves through the installed libnss_allot" "$(getent passwd instalice)" \
    '^instalice:[^:]*:44501:'
expect_contains "team-a resolves through libnss_allot" "$(getent group team-a)" "instalice"
in_assoc() { scontrol show assoc_mgr users="$1" flags=users 2>/dev/null | grep -q "DefAccount=$2"; }
for spec in instalice:team-a instdave:team-b instbob:default; do
    if wait_for 60 "slurmctld to know ${spec%%:*}" in_assoc "${spec%%:*}" "${spec#*:}"; then
        pass "allot-syncd gave ${spec%%:*} the account ${spec#*:}"
    else fail "allot-syncd gave ${spec%%:*} the account ${spec#*:}" "$(sacctmgr -n list assoc format=user,account,qos 2>&1)"
    fi
done

# ------------------------------------------------------------------ 5. jobs
step "jobs under the policy"
as() { local u=$1; shift; (cd "$LAB/tmp" && setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- "$@"); }
out=$(as instalice sbatch --parsable --gpus=1 -o "$LAB/tmp/alice-%j.out" --wrap 'id -un; echo tier=$ALLOT_TIER' 2>&1)
job=$(printf '%s\n' "$out" | grep -E '^[0-9]+$' | tail -1)
expect_match "alice's GPU job is accepted" "$job" '^[0-9]+$'
if [ -n "$job" ]; then
    expect_contains "it runs in team-a's project QOS" "$(scontrol show job "$job" 2>&1)" "QOS=team-a"
    # mem_per_gpu 8G, lowered to what the lab's node has per GPU (64000 MB / 8)
    expect_eq "with the per-GPU memory default" "$(per_gpu "$(job_field "$job" MemPerTres)")" 8000
    done_ok() { grep -q tier= "$LAB/tmp/alice-$job.out" 2>/dev/null; }
    if wait_for 90 "job $job to finish" done_ok; then
        expect_eq "it ran as alice (resolved on the node through libnss_allot)" \
            "$(head -1 "$LAB/tmp/alice-$job.out")" instalice
        expect_eq "spank_allot gave it its tier" "$(sed -n 's/^tier=//p' "$LAB/tmp/alice-$job.out")" project
    else fail "alice's job ran" "$(scontrol show job "$job" 2>&1 | head -20)"
    fi
fi
out=$(as instbob sbatch --gpus=1 --wrap hostname 2>&1)
expect_contains "bob (in no team) is refused a GPU job, told how to join" "$out" "ask your PI"
out=$(as instalice sbatch --gpus=12 --wrap hostname 2>&1)
expect_contains "a job that can never fit is refused at submit, with the cap" "$out" \
    "accounting/QOS policy"
step "done"
finish
