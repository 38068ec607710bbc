#!/bin/bash
# syncd-lab.sh - allot-syncd against a SCIM fixture server on loopback and the
# REAL slurmdbd of a lab cluster: first sync, jobs under the right account and
# QOS, membership change, team removal, drift, source outage, empty source,
# hostile records, lock, kill -9 mid-apply, convergence and the no-op rerun.
#
# Unix users: the lab creates alice, bob, carol and dave with useradd (jobs run
# as them) and the fixture gives them their real uids; allot-syncd sees them as
# directory users, not local accounts (with-directory-users.sh). The kill -9
# part adds 300 users that exist only in SCIM.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LABDIR=$(cd "$HERE/../../tests/lab" && pwd)
. "$LABDIR/lab-lib.sh"
skip_unless_lab

BUILD=${ALLOT_TOP_BUILDDIR:-$(cd "$(pwd)/.." && pwd)}
SYNCD=$BUILD/syncd/allot-syncd
[ -x "$SYNCD" ] || { echo "allot-syncd not built at $SYNCD"; echo "0 passed, 1 failed"; exit 1; }
# A lab of its own on ports free right now, so this test runs beside any other.
export LAB=/tmp/allot-lab-syncd.$$
export LAB_NODES=${LAB_NODES:-2}
SCIM_PORT=$(free_port) || abort "no free port for the SCIM fixture"
JS=$BUILD/plugins/job_submit/.libs/job_submit_allot.so
if [ -f "$JS" ]; then export LAB_PLUGINS=$JS LAB_JOB_SUBMIT=allot; else export LAB_JOB_SUBMIT=; fi
W=$(mktemp -d /tmp/allot-syncd-lab.XXXXXX)
FIX=$W/scim
mkdir -p "$FIX"

on_exit rm -rf "$W"
on_exit "$LABDIR/lab-down.sh"

# ---- config and fixture data ---------------------------------------------
write_config() { # write_config <teams yaml>
    cat >"$W/allot.yaml" <<YAML
cluster:
  name: lab
  partition: main
  default_account: default
  mem_per_gpu: 8G
  cpus_per_gpu: 2
tiers:
  project:
    priority: 100
  general:
    qos: general
    pool_gpus: 8
    per_team_gpus: 4
    max_time: 3-00:00:00
    default_time: 1-00:00:00
    priority: 50
  spot:
    qos: spot
    max_time: 1-00:00:00
    default_time: 04:00:00
    grace_seconds: 10
    priority: 0
teams:
$1
identity:
  scim_url: http://127.0.0.1:$SCIM_PORT/scim/v2
  token_file: $W/token
  uid_min: 1000
  gid_min: 1000
  home_prefix: /home
  cache_dir: $W/cache
  max_removals: 400
  source_max_cycle_bytes: 67108864
  source_deadline_seconds: ${DEADLINE:-60}
node:
  run_dir: $W/run
YAML
}
TEAMS_AB='  - group: team-a
    account: team-a
    gpus: 8
  - group: team-b
    account: team-b
    gpus: 4'
TEAMS_A='  - group: team-a
    account: team-a
    gpus: 8'
mkdir -p "$W/cache" "$W/run" "$W/nss"
# allot-syncd runs as on a node whose directory users come from libnss_allot:
# the lab's useradd'ed users are hidden from its /etc/passwd (a directory user
# may not be a local account) and resolve, with the 300 SCIM-only users
# ku000-ku299, through nss_wrapper (with-directory-users.sh).
for i in $(seq 0 299); do printf 'ku%03d:x:%d:%d::/home/ku%03d:/bin/bash\n' "$i" $((30000 + i)) $((30000 + i)) "$i"; done >"$W/nss/extra-passwd"
LAB_USERS=$(awk '!/^#/ && NF { print $1 }' "$LABDIR/lab-directory.txt" | tr '\n' ' ')
WITH_NSS=("$HERE/../../tests/lib/with-directory-users.sh" "$W/nss" "$LAB_USERS" --)
echo "fixture-token-$$" >"$W/token"; chmod 600 "$W/token"
cp "$W/token" "$FIX/token"
write_config "$TEAMS_AB"
export ALLOT_CONFIG=$W/allot.yaml

# fixture <team-a members> <team-b members> [extra users N] [hostile]
fixture() {
    python3 - "$FIX" "$1" "$2" "${3:-0}" "${4:-}" <<'PY'
import json, pwd, sys
d, a, b, extra, hostile = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4]), sys.argv[5]
EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f lab"
def user(name, uid, home=None, shell="/bin/bash", keys=(KEY,)):
    return {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", EXT], "id": "id-" + name,
            "userName": name, "displayName": name.title(), "active": True,
            EXT: {"uidNumber": uid, "gidNumber": uid, "homeDirectory": home or "/home/" + name,
                  "loginShell": shell, "sshPublicKeys": list(keys)}}
users = [user(n, pwd.getpwnam(n).pw_uid) for n in ("alice", "bob", "carol", "dave")]
users += [user("ku%03d" % i, 30000 + i) for i in range(extra)]
if hostile:
    users += [user("mallory", 0), user("eve", 31001, home="/home/../etc"),
              user("trudy", 31002, shell="/bin/evil"), user("-rf", 31003),
              user("oscar", 31004, keys=('command="/bin/sh" ' + KEY,)),
              user("root", 31010), user("daemon", 31011),
              user("longhome", 31012, home="/home/" + "h" * 5000),
              user("manykeys", 31013, keys=(KEY,) * 1100)]
def group(name, gid, members):
    return {"id": "g-" + name, "displayName": name, "gidNumber": gid,
            "members": [{"value": "id-" + m, "type": "User"} for m in members]}
groups = [group("team-a", 40001, a), group("team-b", 40002, b),
          group("everyone", 40003, [u["userName"] for u in users])]
if hostile:
    groups += [group("sudo", 40010, ["alice"]), group("adm", 40011, ["alice"])]
json.dump(users, open(d + "/users.json", "w"))
json.dump(groups, open(d + "/groups.json", "w"))
PY
}
mode() { echo "$1" >"$FIX/mode"; }

sync_() { "${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" "$@"; }
acct_of() { sacctmgr -n -P show user "$1" format=defaultaccount 2>/dev/null | head -1; }
assocs_of() { sacctmgr -n -P show assoc user="$1" format=account 2>/dev/null | sort | tr '\n' ' '; }

# ---- bring up --------------------------------------------------------------
lab_up
fixture "alice carol" "dave"
mode ok
start_service scim python3 "$HERE/../../tests/lib/scim_fixture.py" "$FIX" "$SCIM_PORT"
wait_port "$SCIM_PORT" 60 || abort "the SCIM fixture did not start"

echo "# plan on an empty accounting database writes nothing"
out=$(sync_ --plan 2>&1); rc=$?
expect_eq "--plan exits 0" "$rc" 0
expect_contains "--plan lists the team QOS with scaled cpu/mem" "$out" "add qos team-a: Description='allot-managed: project QOS of team-a' GrpTRES=cpu=16,gres/gpu=8,mem=65536"
expect_contains "--plan lists alice's association" "$out" "add assoc alice@team-a: QOS=general,spot,team-a DefaultQOS=team-a"
expect_eq "--plan created no account" "$(sacctmgr -n -P show account team-a format=account)" ""

echo "# first sync creates everything"
out=$(sync_ --once --metrics-file "$W/metrics.prom" 2>&1); rc=$?
expect_eq "first sync exits 0" "$rc" 0
q=$(sacctmgr -n -P show qos format=name,grptres,maxtrespa,maxwall,preempt,preemptmode,gracetime,priority 2>/dev/null)
expect_contains "team-a QOS" "$q" "team-a|cpu=16,gres/gpu=8,mem=64G|||spot|cluster|00:00:00|100"
expect_contains "team-a QOS preempts spot, priority 100" "$q" "|spot|cluster|00:00:00|100"
expect_contains "general QOS pool and per-account cap" "$q" "general|gres/gpu=8|gres/gpu=4|3-00:00:00|spot|cluster|00:00:00|50"
expect_contains "spot QOS requeue, grace 10 s" "$q" "spot|||1-00:00:00||requeue|00:00:10|0"
a=$(sacctmgr -n -P show assoc where account=default format=account,user,grptres 2>/dev/null)
expect_contains "default account capped at 0 GPUs" "$a" "default||gres/gpu=0"
expect_eq "alice's default account" "$(acct_of alice)" team-a
expect_eq "bob (no team) lands in default" "$(acct_of bob)" default
expect_eq "dave's default account" "$(acct_of dave)" team-b
o=$(sacctmgr -n -P show account team-a format=org,descr 2>/dev/null)
expect_eq "accounts are marked allot-managed" "$o" "allot-managed|team team-a"
check "identity caches published" test -s "$W/cache/passwd.cache" -a -s "$W/cache/group.cache" -a -e "$W/cache/keys.cache"
m=$(cat "$W/metrics.prom" 2>/dev/null)
expect_contains "metrics textfile written" "$m" "allot_syncd_last_status 0"

echo "# second run reports zero changes"
out=$(sync_ --plan 2>&1)
expect_contains "plan after sync is empty" "$out" "plan: 0 to add, 0 to modify, 0 to remove (0 drift)"
out=$(sync_ --once 2>&1)
expect_contains "second apply: 0 changes" "$out" " 0 changes,"

echo "# jobs run under the right account and QOS"
_knows_alice() { scontrol show assoc_mgr users=alice flags=users 2>/dev/null | grep -q 'DefAccount=team-a'; }
wait_for 60 "slurmctld to know alice's account" _knows_alice
j=$(as alice sbatch --parsable --hold -o /dev/null --gpus=1 --wrap true 2>&1)
expect_eq "alice's job account" "$(job_field "${j%%;*}" Account)" team-a
expect_eq "alice's job QOS" "$(job_field "${j%%;*}" QOS)" team-a
j=$(as alice sbatch --parsable --hold -o /dev/null --qos=spot --gpus=1 --wrap true 2>&1)
expect_eq "alice may opt into spot" "$(job_field "${j%%;*}" QOS)" spot
j=$(as dave sbatch --parsable -o /dev/null --gpus=1 --wrap 'sleep 1' 2>&1)
wait_job_state "${j%%;*}" "RUNNING|COMPLETED|COMPLETING" 30 && pass "dave's GPU job runs in team-b" || fail "dave's GPU job runs" "$(scontrol show job "${j%%;*}")"
r=$(as bob sbatch --parsable -o /dev/null --gpus=1 --wrap true 2>&1)
if [ -n "${LAB_PLUGINS:-}" ]; then
    expect_contains "bob's GPU job is rejected by job_submit/allot (default account)" "$r" "not yet in a team"
else
    wait_job_field "${r%%;*}" Reason "AssocGrpGRES.*" 60
    expect_contains "bob's GPU job pends on the 0-GPU cap" "$(job_field "${r%%;*}" Reason)" "AssocGrpGRES"
fi
scancel -u alice -u bob -u dave 2>/dev/null

echo "# membership change: carol moves from team-a to team-b"
fixture "alice" "dave carol"
out=$(sync_ --once 2>&1); rc=$?
expect_eq "sync exits 0" "$rc" 0
expect_eq "carol's default account moved" "$(acct_of carol)" team-b
expect_eq "carol's associations" "$(assocs_of carol)" "team-b "

echo "# drift: a hand edit of an owned QOS is reported and fixed"
sacctmgr -i modify qos team-a set GrpTRES=gres/gpu=64 >/dev/null
out=$(sync_ --plan 2>&1)
expect_contains "drift reported" "$out" "[drift: changed outside allot]"
sync_ --once >/dev/null 2>&1
expect_contains "drift fixed" "$(sacctmgr -n -P show qos team-a format=grptres)" "gres/gpu=8"

echo "# hand-made objects are never touched"
sacctmgr -i add account physics Description=hand Organization=phys >/dev/null
sacctmgr -i add user alice account=physics >/dev/null
out=$(sync_ --once 2>&1)
expect_contains "alice keeps her hand-made association" "$(assocs_of alice)" "physics"
expect_eq "physics account untouched" "$(sacctmgr -n -P show account physics format=org)" phys

echo "# team removal"
write_config "$TEAMS_A"
out=$(sync_ --plan 2>&1)
expect_contains "plan removes team-b" "$out" "remove account team-b"
expect_contains "plan removes its QOS" "$out" "remove qos team-b"
out=$(sync_ --once 2>&1); rc=$?
expect_eq "team removal sync exits 0" "$rc" 0
expect_eq "team-b account gone" "$(sacctmgr -n -P show account team-b format=account)" ""
expect_eq "dave lands in default" "$(acct_of dave)" default
expect_contains "no-op afterwards" "$(sync_ --plan 2>&1)" "plan: 0 to add, 0 to modify, 0 to remove"

echo "# source outage, empty source, missing extension, hostile payloads"
before=$(sacctmgr -n -P show assoc format=account,user,qos | sort | md5sum)
cache_before=$(md5sum "$W/cache/passwd.cache" "$W/cache/group.cache")
mode down
out=$(sync_ --once 2>&1); rc=$?
expect_eq "outage exits 2" "$rc" 2
expect_contains "outage message" "$out" "maintenance"
mode empty
out=$(sync_ --once 2>&1); rc=$?
expect_eq "empty source refused (exit 3)" "$rc" 3
expect_contains "empty source message" "$out" "refusing to sync an empty directory"
mode noext
out=$(sync_ --once 2>&1); rc=$?
expect_eq "missing POSIX extension exits 2" "$rc" 2
expect_contains "missing extension message names the uid path" "$out" "no user of the SCIM server has a value at urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:uidNumber"
mode truncated
out=$(sync_ --once 2>&1); rc=$?
expect_eq "truncated JSON exits 2" "$rc" 2
mode huge
out=$(sync_ --once 2>&1); rc=$?
expect_eq "11 MiB response exits 2" "$rc" 2
expect_contains "size cap message" "$out" "larger than 10 MiB"
expect_eq "accounting unchanged by all of the above" "$(sacctmgr -n -P show assoc format=account,user,qos | sort | md5sum)" "$before"
expect_eq "last good caches kept" "$(md5sum "$W/cache/passwd.cache" "$W/cache/group.cache")" "$cache_before"
mode ok
fixture "alice carol" "dave" 0 hostile  # and carol moves back to team-a in the same cycle
out=$(sync_ --once 2>&1); rc=$?
expect_eq "hostile records: sync still succeeds" "$rc" 0
expect_contains "uid 0 rejected" "$out" "rejected user 'mallory': uidNumber 0 (root) is never allowed"
expect_contains "../ home rejected" "$out" "rejected user 'eve': homeDirectory '/home/../etc'"
expect_contains "bad shell rejected" "$out" "rejected user 'trudy'"
expect_contains "leading dash rejected" "$out" "rejected user '-rf'"
expect_contains "key with options dropped" "$out" "rejected ssh-key 'oscar': key carries authorized_keys options"
expect_eq "no association for mallory" "$(assocs_of mallory)" ""
expect_contains "directory user 'root' refused by name" "$out" "rejected user 'root': userName 'root' is"
expect_contains "directory user 'daemon' refused by name" "$out" "rejected user 'daemon'"
expect_contains "directory group 'sudo' refused by name" "$out" "rejected group 'sudo': displayName 'sudo' is"
expect_contains "directory group 'adm' refused by name" "$out" "rejected group 'adm'"
expect_contains "5,000-byte home rejected alone" "$out" "rejected user 'longhome': homeDirectory"
expect_contains "1,100 SSH keys rejected alone" "$out" "rejected user 'manykeys': sshPublicKeys: 1100 keys"
for name in longhome manykeys sudo adm daemon; do
    expect_eq "$name in no cache" "$(cat "$W/cache/passwd.cache" "$W/cache/group.cache" | grep -a -c "$name")" 0
done
check "the other users still published" grep -a -q carol "$W/cache/passwd.cache"
expect_eq "no association for longhome" "$(assocs_of longhome)" ""
expect_eq "carol's change landed beside the rejections" "$(acct_of carol)" team-a
sync_ --once --metrics-file "$W/hostile.prom" >/dev/null 2>&1
n=$(sed -n 's/^allot_syncd_rejected_records_total //p' "$W/hostile.prom")
check "rejections counted in the metrics (${n:-none})" test "${n:-0}" -ge 11

echo "# hostile sources: bounds stop the cycle, caches and accounting untouched"
fixture "alice" "dave carol"
mode ok
sync_ --once >/dev/null 2>&1
before=$(sacctmgr -n -P show assoc format=account,user,qos | sort | md5sum)
cache_before=$(md5sum "$W/cache/passwd.cache" "$W/cache/group.cache" "$W/cache/keys.cache")
mode endless-cursor
out=$(sync_ --once 2>&1); rc=$?
expect_eq "endless cursor listing exits 2" "$rc" 2
expect_contains "endless cursor stopped past totalResults" "$out" "past the 3 resources its totalResults announced"
mode endless-index
out=$(sync_ --once 2>&1); rc=$?
expect_eq "endless index listing exits 2" "$rc" 2
expect_contains "endless index stopped" "$out" "its totalResults announced"
mode bigpages
out=$(/usr/bin/time -f "maxrss_kb=%M" "${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" --once 2>&1); rc=$?
expect_eq "8 MiB pages past the cycle budget exit 2" "$rc" 2
expect_contains "cycle byte budget named" "$out" "identity.source_max_cycle_bytes"
rss=$(printf '%s\n' "$out" | sed -n 's/^maxrss_kb=//p')
if [ -n "$rss" ] && [ "$rss" -lt 262144 ]; then pass "RSS bounded while reading 8 MiB pages ($rss KiB < 256 MiB)"; else fail "RSS bounded while reading 8 MiB pages" "maxrss=$rss KiB"; fi
mode slow; echo 3 >"$FIX/slow"
DEADLINE=2 write_config "$TEAMS_A"
out=$(sync_ --once 2>&1); rc=$?
expect_eq "cycle past its deadline exits 2" "$rc" 2
expect_contains "deadline named" "$out" "identity.source_deadline_seconds"
write_config "$TEAMS_A"
mode ok
check "the source answered all along (alive probe)" curl -sf -o /dev/null -H "Authorization: Bearer $(cat "$W/token")" "http://127.0.0.1:$SCIM_PORT/scim/v2/Users"
expect_eq "accounting unchanged by hostile sources" "$(sacctmgr -n -P show assoc format=account,user,qos | sort | md5sum)" "$before"
expect_eq "caches byte-identical after hostile sources" "$(md5sum "$W/cache/passwd.cache" "$W/cache/group.cache" "$W/cache/keys.cache")" "$cache_before"

echo "# lock: two syncds never write at once"
exec 9>"$W/run/lock"
flock -n 9 || abort "could not take the lock for the test"
out=$(sync_ --once 2>&1); rc=$?
expect_eq "second syncd exits 5 while the lock is held" "$rc" 5
exec 9>&-

echo "# kill -9 mid-apply leaves accounting consistent; rerun converges"
KILL_USERS=300
fixture "alice" "dave carol" "$KILL_USERS"
n0=$(sacctmgr -n -P show user format=user | wc -l)
"${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" --once -v >"$W/killed.log" 2>&1 &
sp=$!
# Kill once the plan is being applied (the store logs "applying N changes"), at once: 24.11's
# slurmdbd adds the 300 users in 0.13 s, more than wait_for's 0.1 s poll may leave.
end=$(($(date +%s) + 60))
until grep -q applying "$W/killed.log" 2>/dev/null || [ "$(date +%s)" -ge "$end" ]; do :; done
sleep ${KILL_AFTER:-0}
kill -9 $sp 2>/dev/null; wait $sp 2>/dev/null
sleep 1
n1=$(sacctmgr -n -P show user format=user | wc -l)
if [ "$n1" = "$n0" ] || [ "$n1" = $((n0 + KILL_USERS)) ]; then pass "after kill -9: all or nothing ($n0 -> $n1 users)"; else fail "after kill -9: partial state" "$n0 -> $n1"; fi
expect_not_contains "the killed cycle had not finished" "$(cat "$W/killed.log")" "sync ok"
out=$("${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" --once 2>&1); rc=$?
expect_eq "rerun after kill -9 exits 0" "$rc" 0
expect_eq "rerun created all users" "$(sacctmgr -n -P show user format=user | wc -l)" $((n0 + KILL_USERS))
expect_contains "then zero changes" "$("${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --plan 2>&1)" "plan: 0 to add, 0 to modify, 0 to remove"

echo "# kill -9 repeatedly: the next start leaves no temporary file behind"
for i in 1 2 3 4 5 6; do
    "${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" --once >/dev/null 2>&1 &
    kp=$!
    sleep "0.$((RANDOM % 10))"
    kill -9 $kp 2>/dev/null; wait $kp 2>/dev/null
done
# What an interrupted publish and state write leave, with allot's own names; and files of others.
for f in .passwd.cache.AbC123 .group.cache.x1Y2z3 .keys.cache.000000 .syncd.state.Qq1234 .other.abcdef notes.txt; do
    echo stale >"$W/cache/$f"
done
out=$(sync_ --once 2>&1); rc=$?
expect_eq "the next start exits 0" "$rc" 0
expect_contains "it says it removed them" "$out" "temporary file(s) left by an interrupted run"
expect_eq "no allot temporary file remains" "$(ls -A "$W/cache" | grep -E '^\.(passwd\.cache|group\.cache|keys\.cache|syncd\.state)\.' | wc -l)" 0
expect_eq "other files are left alone" "$(ls -A "$W/cache" | grep -cE '^(\.other\.abcdef|notes\.txt)$')" 2

echo "# daemon: SIGHUP reloads, SIGTERM stops cleanly"
"${WITH_NSS[@]}" "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" --metrics-file "$W/d.prom" >"$W/daemon.log" 2>&1 &
dp=$!
wait_for 120 "the daemon's first cycle" grep -q "sync ok" "$W/daemon.log"
kill -HUP $dp
wait_for 120 "the daemon to reload" grep -q "configuration reloaded" "$W/daemon.log"
kill -TERM $dp
wait $dp; rc=$?
expect_eq "daemon exits 0 on SIGTERM" "$rc" 0
expect_contains "daemon reloaded on SIGHUP" "$(cat "$W/daemon.log")" "configuration reloaded"

finish
