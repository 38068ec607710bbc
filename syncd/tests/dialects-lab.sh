#!/bin/bash
# dialects-lab.sh - allot-syncd against the SCIM fixture in each dialect it
# reads (allot, coreweave, a read-only ACTIVATE-like source with 2-item pages,
# 501 writes and an org-scoped base path) and the REAL slurmdbd of a lab
# cluster: every dialect gives the same accounts, caches and `getent` output
# (getent through the built libnss_allot in a private mount namespace). Then a
# source truncated mid-listing and one that suddenly lists 90 % fewer users,
# on the controller and with --no-accounting: caches and accounting untouched
# until --force.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LABDIR=$(cd "$HERE/../../tests/lab" && pwd)
. "$LABDIR/lab-lib.sh"
skip_unless_lab

BUILD=${ALLOT_TOP_BUILDDIR:-$(cd "$(pwd)/.." && pwd)}
SYNCD=$BUILD/syncd/allot-syncd
NSS_SO=$BUILD/plugins/nss/.libs/libnss_allot.so.2
[ -x "$SYNCD" ] || { echo "allot-syncd not built at $SYNCD"; echo "0 passed, 1 failed"; exit 1; }
[ -f "$NSS_SO" ] || { echo "libnss_allot not built at $NSS_SO"; echo "0 passed, 1 failed"; exit 1; }
export LAB=/tmp/allot-lab-dialects.$$
export LAB_NODES=${LAB_NODES:-1}
export LAB_JOB_SUBMIT=
SCIM_PORT=$(free_port) || abort "no free port for the SCIM fixture"
W=$(mktemp -d /tmp/allot-dialects-lab.XXXXXX)
chmod 755 "$W"
FIX=$W/scim
mkdir -p "$FIX" "$W/cache" "$W/run" "$W/nss" "$W/lib" "$W/up/allot" "$W/wk"
chmod 755 "$W/up" "$W/up/allot"
on_exit rm -rf "$W"
on_exit "$LABDIR/lab-down.sh"

EXTRA=30  # SCIM-only users ku000..ku029, so 90 % of the directory can vanish
write_config() { # write_config <base path> <dialect> <max_removals>
    cat >"$W/allot.yaml" <<YAML
cluster:
  name: lab
  partition: main
  default_account: default
  mem_per_gpu: 8G
  cpus_per_gpu: 2
tiers:
  general:
    qos: general
    pool_gpus: 8
    per_team_gpus: 4
  spot:
    qos: spot
teams:
  - group: team-a
    account: team-a
    gpus: 8
identity:
  scim_url: http://127.0.0.1:$SCIM_PORT$1
  token_file: $W/token
  dialect: $2
  uid_min: 1000
  gid_min: 1000
  home_prefix: /home
  cache_dir: $W/cache
  max_removals: $3
node:
  run_dir: $W/run
YAML
}
fixture() { # fixture <extra users>
    python3 - "$FIX" "$1" <<'PY'
import json, pwd, sys
d, extra = sys.argv[1], int(sys.argv[2])
EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f lab"
def user(name, uid):
    return {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", EXT], "id": "id-" + name,
            "userName": name, "displayName": name.title(), "active": True,
            EXT: {"uidNumber": uid, "gidNumber": uid, "homeDirectory": "/home/" + name,
                  "loginShell": "/bin/bash", "sshPublicKeys": [KEY]}}
users = [user(n, pwd.getpwnam(n).pw_uid) for n in ("alice", "bob", "carol", "dave")]
users += [user("ku%03d" % i, 30000 + i) for i in range(extra)]
groups = [{"id": "g-team-a", "displayName": "team-a", "gidNumber": 40001,
           "members": [{"value": "id-" + m, "type": "User", "display": m} for m in ("alice", "carol")]},
          {"id": "g-everyone", "displayName": "everyone", "gidNumber": 40003,
           "members": [{"value": u["id"], "type": "User", "display": u["userName"]} for u in users]}]
json.dump(users, open(d + "/users.json", "w"))
json.dump(groups, open(d + "/groups.json", "w"))
PY
}
for i in $(seq 0 $((EXTRA - 1))); do printf 'ku%03d:x:%d:%d::/home/ku%03d:/bin/bash\n' "$i" $((30000 + i)) $((30000 + i)) "$i"; done >"$W/nss/extra-passwd"
LAB_USERS=$(awk '!/^#/ && NF { print $1 }' "$LABDIR/lab-directory.txt" | tr '\n' ' ')
WITH_NSS=("$HERE/../../tests/lib/with-directory-users.sh" "$W/nss" "$LAB_USERS" --)
echo "fixture-token-$$" >"$W/token"; chmod 600 "$W/token"
cp "$W/token" "$FIX/token"
echo ok >"$FIX/mode"

sync_() { "${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" "$@"; }
# What accounting holds for the directory users, in a stable order.
accounting() { sacctmgr -n -P show assoc format=account,user,qos 2>/dev/null | grep -E '\|(alice|bob|carol|dave|ku[0-9]+)\|' | sort; }
cache_sums() { sha256sum "$W"/cache/*.cache | sort; }
# getent through the built libnss_allot over exactly the published caches.
cp "$NSS_SO" "$W/lib/"
sed -E 's/^(passwd|group):.*/\1: files allot/' /etc/nsswitch.conf >"$W/nsswitch.conf"
getent_all() {
    rm -f "$W/up/allot/"*; cp -p "$W"/cache/*.cache "$W/up/allot/"
    unshare -m --propagation private sh -c '
        mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf &&
        mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$1/up",workdir="$1/wk" /var/lib &&
        for n in alice bob carol dave ku000 ku029; do LD_LIBRARY_PATH="$1/lib" getent passwd "$n"; done;
        LD_LIBRARY_PATH="$1/lib" getent group team-a everyone' sh "$W"
}

lab_up
fixture $EXTRA
start_service scim python3 "$HERE/../../tests/lib/scim_fixture.py" "$FIX" "$SCIM_PORT"
wait_port "$SCIM_PORT" 60 || abort "the SCIM fixture did not start"

echo "# allot dialect: the reference"
echo allot >"$FIX/dialect"
write_config /scim/v2 allot 50
out=$(sync_ --once 2>&1); rc=$?
expect_eq "allot: sync exits 0" "$rc" 0
ACCT=$(accounting)
GETENT=$(getent_all)
expect_contains "allot: alice in team-a" "$ACCT" "team-a|alice|"
# alice..dave are this host's own accounts (files answers them, and
# libnss_allot leaves local names out of group member lists); ku* come from
# the caches alone.
expect_contains "allot: getent passwd ku000 through libnss_allot" "$GETENT" "ku000:*:30000:30000:Ku000:/home/ku000:/bin/bash"
expect_contains "allot: getent group team-a through libnss_allot" "$GETENT" "team-a:*:40001:"
expect_contains "allot: getent group everyone lists the directory users" "$GETENT" "everyone:*:40003:ku000,ku001,"
expect_eq "allot: getent sees all 6 users and 2 groups" "$(printf '%s\n' "$GETENT" | wc -l)" 8

for d in coreweave readonly; do
    echo "# $d dialect: the same accounts, caches and getent"
    echo "$d" >"$FIX/dialect"
    if [ "$d" = coreweave ]; then write_config /scim/v2 coreweave 50; else write_config /api/organizations/acme/scim/v2 allot 50; fi
    rm -f "$W"/cache/*.cache
    : >"$FIX/requests.log"
    out=$(sync_ --once 2>&1); rc=$?
    expect_eq "$d: sync exits 0" "$rc" 0
    expect_contains "$d: accounting needs no change" "$out" " 0 changes,"
    expect_eq "$d: the same accounting" "$(accounting)" "$ACCT"
    expect_eq "$d: the same getent output" "$(getent_all)" "$GETENT"
    if [ "$d" = coreweave ]; then
        expect_contains "$d: the extension is asked for by name" "$(cat "$FIX/requests.log")" "urn%3Acoreweave%3Aparams%3Ascim%3Aschemas%3Aextension%3Acoreweave%3A2.0%3ACoreWeaveUser"
    else
        expect_match "$d: read through 2-item pages (17+ Users requests)" "$(grep -c '/Users' "$FIX/requests.log")" '^(1[7-9]|[2-9][0-9])$'
        code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $(cat "$W/token")" "http://127.0.0.1:$SCIM_PORT/api/organizations/acme/scim/v2/Users" -d '{}')
        expect_eq "$d: the source answers writes with 501" "$code" 501
    fi
done
echo allot >"$FIX/dialect"
write_config /scim/v2 allot 5

echo "# a source truncated mid-listing changes nothing"
SUMS=$(cache_sums)
echo gap >"$FIX/mode"
for where in controller no-accounting; do
    if [ $where = controller ]; then out=$(sync_ --once 2>&1); rc=$?; else out=$(sync_ --once --no-accounting 2>&1); rc=$?; fi
    expect_eq "truncated ($where): exit 2 (source error)" "$rc" 2
    expect_contains "truncated ($where): says the listing is truncated" "$out" "truncated"
    expect_eq "truncated ($where): caches untouched" "$(cache_sums)" "$SUMS"
    expect_eq "truncated ($where): accounting untouched" "$(accounting)" "$ACCT"
done
echo ok >"$FIX/mode"

echo "# a source listing 90 % fewer users changes nothing until --force"
fixture 0
for where in controller no-accounting; do
    if [ $where = controller ]; then out=$(sync_ --once 2>&1); rc=$?; else out=$(sync_ --once --no-accounting 2>&1); rc=$?; fi
    expect_eq "shrink ($where): refused (exit 3)" "$rc" 3
    expect_contains "shrink ($where): names the limit" "$out" "identity.max_removals=5"
    expect_eq "shrink ($where): caches untouched" "$(cache_sums)" "$SUMS"
    expect_eq "shrink ($where): accounting untouched" "$(accounting)" "$ACCT"
    expect_eq "shrink ($where): getent unchanged" "$(getent_all)" "$GETENT"
done
out=$(sync_ --once --no-accounting --force 2>&1); rc=$?
expect_eq "shrink confirmed with --force on a --no-accounting node: exit 0" "$rc" 0
expect_not_contains "after --force the caches no longer hold ku000" "$(getent_all)" "ku000:"
expect_eq "after --force on a --no-accounting node accounting is still untouched" "$(accounting)" "$ACCT"

finish
