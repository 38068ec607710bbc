#!/bin/bash
# lab-accounts.sh - the lab's accounting, made by the real allot-syncd from a directory.
#
# Serves tests/lab/lab-directory.txt (alice, carol -> team-a; dave -> team-b; bob in no
# team) over SCIM with tests/lib/scim_fixture.py on a free port, and runs
# `allot-syncd --once` with the lab's allot.yaml ($LAB/etc/allot.yaml, copied by lab-up.sh
# from ALLOT_CONFIG) plus an identity section pointing at that server. So every lab test
# runs on exactly the QOS, accounts and associations syncd creates (Organization
# allot-managed, project QOS per team, general, spot, the zero-GPU default account).
# Returns once slurmctld's association cache has them. Needs allot-syncd built:
# ALLOT_SYNCD, else $ALLOT_TOP_BUILDDIR/syncd/allot-syncd, else the source tree's.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
. "$HERE/../lib/harness.sh"
LAB=${LAB:-/tmp/allot-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
TOP=$(cd "$HERE/../.." && pwd)
SYNCD=${ALLOT_SYNCD:-${ALLOT_TOP_BUILDDIR:-$TOP}/syncd/allot-syncd}
[ -x "$SYNCD" ] || { echo "lab-accounts: allot-syncd not built at $SYNCD" >&2; exit 1; }
[ -f "$LAB/etc/allot.yaml" ] || { echo "lab-accounts: no $LAB/etc/allot.yaml (lab-up.sh with ALLOT_CONFIG)" >&2; exit 1; }

DIR=$LAB/directory
mkdir -p "$DIR" "$LAB/identity" "$LAB/run"
harness_tmpdir lab-accounts

# The directory, with each user's uid as it resolves here (lab-up.sh created them with the
# directory's uids; a user that already existed keeps its own).
python3 - "$HERE/lab-directory.txt" "$DIR" <<'PY'
import json, pwd, sys
src, out = sys.argv[1], sys.argv[2]
EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
users, teams = [], {}
for line in open(src):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    name, uid, team = f[0], int(f[1]), f[2]
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        pass
    users.append({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", EXT],
                  "id": "id-" + name, "userName": name, "displayName": name.title(), "active": True,
                  EXT: {"uidNumber": uid, "gidNumber": uid, "homeDirectory": "/home/" + name,
                        "loginShell": "/bin/bash", "sshPublicKeys": []}})
    if team != "-":
        teams.setdefault(team, []).append(name)
groups = [{"id": "g-" + t, "displayName": t, "gidNumber": 42101 + i,
           "members": [{"value": "id-" + m, "type": "User"} for m in ms]}
          for i, (t, ms) in enumerate(sorted(teams.items()))]
json.dump(users, open(out + "/users.json", "w"), indent=1)
json.dump(groups, open(out + "/groups.json", "w"), indent=1)
PY
echo "lab-directory-token-$$" >"$DIR/token"
chmod 600 "$DIR/token"
echo ok >"$DIR/mode"

PORT=$(free_port) || exit 1
start_service scim python3 "$TOP/tests/lib/scim_fixture.py" "$DIR" "$PORT"
wait_port "$PORT" 60 || { cat "$HARNESS_TMP/scim.log"; exit 1; }

{
    cat "$LAB/etc/allot.yaml"
    cat <<YAML
identity:
  scim_url: http://127.0.0.1:$PORT/scim/v2
  token_file: $DIR/token
  uid_min: 1000
  gid_min: 1000
  home_prefix: /home
  cache_dir: $LAB/identity
node:
  run_dir: $LAB/run
YAML
} >"$LAB/etc/syncd.yaml"

# As on a node whose directory users come from libnss_allot: the lab's useradd'ed users
# are hidden from allot-syncd's /etc/passwd (a directory user may not be a local account)
# and still resolve through NSS (tests/lib/with-directory-users.sh, nss_wrapper).
USERS=$(awk '!/^#/ && NF { print $1 }' "$HERE/lab-directory.txt" | tr '\n' ' ')
if ! "$TOP/tests/lib/with-directory-users.sh" "$LAB/syncd-nss" "$USERS" -- \
    "$SYNCD" -c "$LAB/etc/syncd.yaml" --once --lock-file "$LAB/run/syncd.lock" >"$LAB/log/allot-syncd.log" 2>&1; then
    echo "lab-accounts: allot-syncd failed:" >&2
    tail -20 "$LAB/log/allot-syncd.log" >&2
    exit 1
fi

# Tests submit right away: wait until slurmctld's cache has every user's default account.
_in_assoc_mgr() {
    scontrol show assoc_mgr users="$1" flags=users 2>/dev/null | grep -q "DefAccount=$2"
}
for spec in alice:team-a carol:team-a dave:team-b bob:default; do
    wait_for 180 "slurmctld to know ${spec%%:*}" _in_assoc_mgr "${spec%%:*}" "${spec#*:}" || exit 1
done
