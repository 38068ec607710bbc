#!/bin/bash
# syncd-private-groups-lab.sh - allot-syncd reading the REAL allot-scimd, with
# private groups off, on (scim_server.private_groups in allot.yaml) and off
# again (`serve --no-private-groups` over the file), into the REAL slurmdbd of a
# lab cluster. allot-scimd lists each user's private group marked
# userPrivateGroup; allot-syncd leaves those out, so every phase gives the same
# accounting and the same caches (enumerated with getent through the built
# libnss_allot in a private mount namespace): no group per user, no deactivated
# user's group, no team made of a private group named like the team's group,
# and nothing removed when the option goes off again (identity.max_removals: 0).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LABDIR=$(cd "$HERE/../../tests/lab" && pwd)
. "$LABDIR/lab-lib.sh"
skip_unless_lab

BUILD=${ALLOT_TOP_BUILDDIR:-$(cd "$(pwd)/.." && pwd)}
SYNCD=$BUILD/syncd/allot-syncd
SCIMD=$BUILD/scim/allot-scimd
NSS_SO=$BUILD/plugins/nss/.libs/libnss_allot.so.2
for f in "$SYNCD" "$SCIMD" "$NSS_SO"; do
    [ -f "$f" ] || { echo "not built: $f"; echo "0 passed, 1 failed"; exit 1; }
done
command -v curl >/dev/null || skip "curl is missing"
export LAB=/tmp/allot-lab-scimd-pg.$$
export LAB_NODES=${LAB_NODES:-1}
export LAB_JOB_SUBMIT=
SCIM_PORT=$(free_port) || abort "no free port for allot-scimd"
URL=http://127.0.0.1:$SCIM_PORT/scim/v2
W=$(mktemp -d /tmp/allot-scimd-pg-lab.XXXXXX)
chmod 755 "$W"
mkdir -p "$W/cache" "$W/run" "$W/nss" "$W/lib" "$W/up/allot" "$W/wk" "$W/scimd"
chmod 700 "$W/scimd"
chmod 755 "$W/up" "$W/up/allot"
on_exit rm -rf "$W"
on_exit "$LABDIR/lab-down.sh"

# ku001 is also a team's group: only its private group would carry that name.
write_config() { # write_config <scim_server.private_groups>
    cat >"$W/allot.yaml" <<YAML
cluster:
  name: lab
  partition: main
  default_account: default
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
  - group: team-b
    account: team-b
    gpus: 4
  - group: ku001
    account: solo
    gpus: 1
identity:
  scim_url: $URL
  token_file: $W/token
  uid_min: 1000
  gid_min: 1000
  home_prefix: /home
  cache_dir: $W/cache
  max_removals: 0
node:
  run_dir: $W/run
scim_server:
  listen: 127.0.0.1:$SCIM_PORT
  store: $W/scimd/directory.db
  threads: 2
  private_groups: $1
oidc:
  audience: lab
  keys_dir: $W/scimd/oidc
YAML
}
# The directory: the lab's users with their real uids, SCIM-only ku000..ku009
# (ku009 deactivated), every id pinned so none is a local one.
directory() {
    python3 - "$LABDIR/lab-directory.txt" <<'PY'
import pwd, sys
teams = {}
print("users:")
names = []
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    uid = pwd.getpwnam(f[0]).pw_uid
    print(f"  - name: {f[0]}\n    uid: {uid}\n    gid: {uid}")
    names.append(f[0])
    if f[2] != "-":
        teams.setdefault(f[2], []).append(f[0])
for i in range(10):
    print(f"  - name: ku{i:03d}\n    uid: {30000 + i}\n    gid: {30000 + i}")
    if i == 9:
        print("    active: false")
    names.append(f"ku{i:03d}")
print("groups:")
for gid, (team, members) in enumerate(sorted(teams.items()), start=40001):
    print(f"  - name: {team}\n    gid: {gid}\n    members: [{', '.join(members)}]")
print(f"  - name: everyone\n    gid: 40100\n    members: [{', '.join(names)}]")
PY
}
for i in $(seq 0 9); do printf 'ku%03d:x:%d:%d::/home/ku%03d:/bin/bash\n' "$i" $((30000 + i)) $((30000 + i)) "$i"; done >"$W/nss/extra-passwd"
LAB_USERS=$(awk '!/^#/ && NF { print $1 }' "$LABDIR/lab-directory.txt" | tr '\n' ' ')
WITH_NSS=("$HERE/../../tests/lib/with-directory-users.sh" "$W/nss" "$LAB_USERS" --)

S() { "$SCIMD" -c "$W/allot.yaml" "$@"; }
serve() { # serve NAME [FLAG]: (re)start allot-scimd from allot.yaml
    stop_service scimd
    start_service scimd "$SCIMD" -c "$W/allot.yaml" serve "$@"
    wait_port "$SCIM_PORT" 30 || abort "allot-scimd did not start: $(tail -5 "$HARNESS_TMP/scimd.log")"
}
sync_() { "${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" "$@"; }
# What accounting holds for the directory users and the teams, in a stable order.
accounting() {
    sacctmgr -n -P show assoc format=account,user,qos 2>/dev/null | grep -E '^(team-a|team-b|solo|default)\||\|(alice|bob|carol|dave|ku[0-9]+)\|' | sort
    sacctmgr -n -P show account format=account 2>/dev/null | sort | tr '\n' ' '
}
# Every user and group in the published caches, enumerated through the built
# libnss_allot alone (no files source), plus lookups by name and by gid.
cp "$NSS_SO" "$W/lib/"
printf 'passwd: allot\ngroup: allot\n' >"$W/nsswitch.conf"
caches() {
    rm -f "$W/up/allot/"*; cp -p "$W"/cache/*.cache "$W/up/allot/"
    unshare -m --propagation private sh -c '
        mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf &&
        mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$1/up",workdir="$1/wk" /var/lib &&
        export LD_LIBRARY_PATH="$1/lib" &&
        echo "## passwd"; getent passwd | sort; echo "## group"; getent group | sort;
        echo "## lookups"; getent group ku000 30000 ku001 30001 ku009 30009 team-a; echo "rc=$?"' sh "$W"
}
groups_seen() { # the displayName and mark of every group syncd's token sees
    curl -sS -H "Authorization: Bearer $(cat "$W/token")" "$URL/Groups?count=100" |
        python3 -c 'import json, sys
EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup"
for g in json.load(sys.stdin)["Resources"]:
    print(g["displayName"] + ("+private" if g.get(EXT, {}).get("userPrivateGroup") is True else ""))'
}

lab_up
harness_tmpdir scimd-pg

echo "# allot-scimd: the directory, a read-inactive token for allot-syncd"
write_config false
directory >"$W/directory.yaml"
out=$(S apply "$W/directory.yaml" 2>&1) || abort "allot-scimd apply failed: $out"
S token create syncd --scope read-inactive 2>"$W/token.err" | grep -o 'allot_[A-Za-z0-9_-]*' >"$W/token"
chmod 600 "$W/token"
[ -s "$W/token" ] || abort "no token: $(cat "$W/token.err")"

echo "# private groups off: the reference"
serve
expect_eq "off: /Groups lists the real groups only" "$(groups_seen | tr '\n' ' ')" "everyone team-a team-b "
out=$(sync_ --once 2>&1); rc=$?
expect_eq "off: sync exits 0" "$rc" 0
expect_not_contains "off: no private group to leave out" "$out" "private groups"
ACCT=$(accounting)
CACHES=$(caches)
expect_contains "off: alice in team-a" "$ACCT" "team-a|alice|"
expect_contains "off: dave in team-b" "$ACCT" "team-b|dave|"
expect_eq "off: no one in the team whose group is missing" "$(printf '%s\n' "$ACCT" | grep -c '^solo|[a-z]')" 0
expect_contains "off: ku000 published" "$CACHES" "ku000:*:30000:30000:"
expect_contains "off: team-a published" "$CACHES" "team-a:*:40001:"
expect_not_contains "off: no deactivated user" "$CACHES" "ku009"
# alice..dave are this host's own accounts too, which libnss_allot never answers.
expect_eq "off: the caches answer ku000..ku008 and 3 groups" \
    "$(printf '%s\n' "$CACHES" | sed -n '/^## passwd/,/^## lookups/p' | grep -c ':\*:')" 12
expect_eq "off: no group is named like a user or has a user's gid" \
    "$(printf '%s\n' "$CACHES" | sed -n '/^## lookups/,$p')" "$(printf '## lookups\nteam-a:*:40001:\nrc=2')"

echo "# private groups on from allot.yaml: the same caches and accounting"
write_config true
serve
seen=$(groups_seen)
expect_eq "on: /Groups lists 3 real and 14 private groups (ku009's too, for a read-inactive token)" \
    "$(printf '%s\n' "$seen" | grep -c '+private$') $(printf '%s\n' "$seen" | grep -vc '+private$')" "14 3"
expect_contains "on: ku001's private group is marked" "$seen" "ku001+private"
expect_contains "on: so is the deactivated ku009's" "$seen" "ku009+private"
out=$(sync_ --once --no-accounting 2>&1); rc=$?
expect_eq "on: a node without accounting: sync exits 0" "$rc" 0
expect_eq "on: a node without accounting: the same caches" "$(caches)" "$CACHES"
out=$(sync_ --plan 2>&1); rc=$?
expect_eq "on: --plan exits 0" "$rc" 0
expect_contains "on: --plan changes nothing" "$out" "plan: 0 to add, 0 to modify, 0 to remove (0 drift)"
out=$(sync_ --once 2>&1); rc=$?
expect_eq "on: sync exits 0" "$rc" 0
expect_contains "on: says it left the private groups out" "$out" "left out 14 users' private groups"
expect_contains "on: no accounting change" "$out" " 0 changes,"
expect_contains "on: 3 groups, as without" "$out" "3 groups,"
expect_eq "on: the same accounting (ku001's private group made no member of solo)" "$(accounting)" "$ACCT"
expect_eq "on: the same caches" "$(caches)" "$CACHES"

echo "# off again with --no-private-groups over allot.yaml: nothing to remove"
serve --no-private-groups
expect_eq "the flag wins over the file" "$(groups_seen | tr '\n' ' ')" "everyone team-a team-b "
out=$(sync_ --once 2>&1); rc=$?
expect_eq "off again: sync exits 0 with identity.max_removals: 0" "$rc" 0
expect_not_contains "off again: no refusal" "$out" "refusing"
expect_eq "off again: the same accounting" "$(accounting)" "$ACCT"
expect_eq "off again: the same caches" "$(caches)" "$CACHES"

stop_service scimd
finish
