#!/bin/bash
# bench/sync-scale/run.sh - allot-syncd at scale against the REAL slurmdbd of a lab,
# next to the way sites load accounting today, all in one run:
#   A. allot-syncd --once from an empty database (cold converge), then a no-op sync;
#   B. one `sacctmgr -i add ...` call per object (QOS, account, user);
#   C. `sacctmgr -i load` of a flat file (after the QOS it cannot create).
# Each approach starts from a fresh lab (lab-down/lab-up are not timed).
# Knobs: USERS=10000 TEAMS=500 (teams = groups, users spread evenly),
#        PER_OBJECT_USERS=<n> PER_OBJECT_TEAMS=<t>: run B on a sample (t teams and
#        their QOS, n of their users) and extrapolate linearly per object (said so
#        in the output), because at ~0.8 s per sacctmgr call the full B takes hours.
#        PARTS=A: only part A (for iterating on allot-syncd; no RESULT line).
# The allot-syncd runs log at -v (phase and slurmdbd timings) into $W/a-*.log, kept
# in KEEP_LOGS=<dir> when set.
# Needs root (the lab); ports are picked free at run time.
# Usage: bench/sync-scale/run.sh [BUILD_DIR]
set -u
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
USERS=${USERS:-10000}
TEAMS=${TEAMS:-500}
PER_OBJECT_USERS=${PER_OBJECT_USERS:-$USERS}
PER_OBJECT_TEAMS=${PER_OBJECT_TEAMS:-$TEAMS}
PARTS=${PARTS:-ABC}
LABDIR=$TOP/tests/lab
SYNCD=$BUILD/syncd/allot-syncd
[ -x "$SYNCD" ] || { echo "build allot-syncd first ($SYNCD)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (lab)"; exit 77; }
export LAB=${BENCH_LAB:-/tmp/allot-lab-syncd-bench.$$} LAB_JOB_SUBMIT=
unset LAB_PORT_BASE
export SLURM_CONF=$LAB/etc/slurm.conf
PORT=$(free_port)
harness_tmpdir sync-bench
W=$HARNESS_TMP
on_exit "$LABDIR/lab-down.sh"
now() { date +%s.%N; }
lab() { "$LABDIR/lab-down.sh" >/dev/null 2>&1; "$LABDIR/lab-up.sh" >"$W/lab.log" 2>&1 || { cat "$W/lab.log"; exit 1; }; }

# ---- data: fixture JSON, allot.yaml, sacctmgr scripts ----------------------
mkdir -p "$W/scim" "$W/cache" "$W/run"
echo bench-token >"$W/token"; chmod 600 "$W/token"; cp "$W/token" "$W/scim/token"; echo ok >"$W/scim/mode"
python3 - "$W" "$USERS" "$TEAMS" "$PORT" "$PER_OBJECT_USERS" "$PER_OBJECT_TEAMS" <<'PY'
import json, sys
w, n, g, port, sample, steams = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
users = [{"id": "u%d" % i, "userName": "bu%05d" % i, "active": True,
          EXT: {"uidNumber": 100000 + i, "gidNumber": 100000 + i, "homeDirectory": "/home/bu%05d" % i,
                "loginShell": "/bin/bash"}} for i in range(n)]
team = lambda i: "bt%03d" % (i % g)
groups = [{"id": "g%d" % t, "displayName": "bt%03d" % t, "gidNumber": 200000 + t,
           "members": [{"value": "u%d" % i} for i in range(t, n, g)]} for t in range(g)]
json.dump(users, open(w + "/scim/users.json", "w"))
json.dump(groups, open(w + "/scim/groups.json", "w"))
teams = "".join("  - group: bt%03d\n    account: bt%03d\n    gpus: 1\n" % (t, t) for t in range(g))
open(w + "/allot.yaml", "w").write(f"""cluster:
  name: lab
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
    priority: 50
  spot:
    qos: spot
    max_time: 1-00:00:00
    grace_seconds: 600
teams:
{teams}identity:
  scim_url: http://127.0.0.1:{port}/scim/v2
  token_file: {w}/token
  uid_min: 10000
  gid_min: 10000
  cache_dir: {w}/cache
  max_removals: 1000000
node:
  run_dir: {w}/run
""")
# The same objects, the sacctmgr way. QOS first (load cannot create QOS).
qos = ["add qos spot MaxWall=1-00:00:00 PreemptMode=requeue GraceTime=600 Priority=0",
       "add qos general GrpTRES=gres/gpu=8 MaxTRESPerAccount=gres/gpu=4 MaxWall=3-00:00:00 Priority=50 Preempt=spot"]
qos += ["add qos bt%03d GrpTRES=gres/gpu=1,cpu=2,mem=8192 Priority=100 Preempt=spot" % t for t in range(g)]
open(w + "/qos.cmds", "w").write("\n".join(qos) + "\n")
open(w + "/qos-sample.cmds", "w").write("\n".join(qos[:2 + steams]) + "\n")
acc = ["add account default Organization=allot-managed Description=default GrpTRES=gres/gpu=0"]
acc += ["add account bt%03d Organization=allot-managed Description=team" % t for t in range(steams)]
usr = ["add user bu%05d account=%s qos=%s,general,spot defaultqos=%s" % (i, team(i), team(i), team(i))
       for i in range(n) if i % g < steams][:sample]
open(w + "/objects.cmds", "w").write("\n".join(acc + usr) + "\n")
# sacctmgr load file: accounts under root, users under their account.
lines = ["Cluster - 'lab'", "Parent - 'root'",
         "Account - 'default':Description='default':Organization='allot-managed':GrpTRES=gres/gpu=0"]
lines += ["Account - 'bt%03d':Description='team':Organization='allot-managed'" % t for t in range(g)]
for t in range(g):
    lines.append("Parent - 'bt%03d'" % t)
    lines += ["User - 'bu%05d':DefaultAccount='bt%03d':QOS='bt%03d,general,spot':DefaultQOS='bt%03d'" % (i, t, t, t)
              for i in range(t, n, g)]
open(w + "/load.cfg", "w").write("\n".join(lines) + "\n")
PY
start_service scim python3 "$TOP/tests/lib/scim_fixture.py" "$W/scim" "$PORT"
wait_port "$PORT" 60

# ---- A. allot-syncd ---------------------------------------------------------
lab
echo "# sync-scale: $USERS users in $TEAMS groups/teams ($(nproc) cores), $(sacctmgr -V)"
# The SCIM-only users resolve through nss_wrapper, as libnss_allot makes them resolve on a node.
{ cat /etc/passwd; seq 0 $((USERS - 1)) | awk '{printf "bu%05d:x:%d:%d::/home/bu%05d:/bin/bash\n", $1, 100000 + $1, 100000 + $1, $1}'; } >"$W/passwd"
S() { LD_PRELOAD=$(ls /usr/lib/*/libnss_wrapper.so | head -1) NSS_WRAPPER_PASSWD=$W/passwd NSS_WRAPPER_GROUP=/etc/group \
      "$SYNCD" -c "$W/allot.yaml" --lock-file "$W/run/lock" --state-file "$W/state" --no-caches "$@"; }
t0=$(now); S --once -v >"$W/a-cold.log" 2>&1; rc=$?; t1=$(now)
cold=$(echo "$t1 - $t0" | bc)
nusers=$(sacctmgr -n -P show user format=user | grep -c '^bu')
t0=$(now); S --once -v >"$W/a-noop.log" 2>&1; rc2=$?; t1=$(now)
noop=$(echo "$t1 - $t0" | bc)
plan=$(S --plan 2>/dev/null | tail -1)
t0=$(now); S --once -q --no-accounting >/dev/null 2>&1; t1=$(now)
fetch=$(echo "$t1 - $t0" | bc)
echo "A allot-syncd cold converge: ${cold}s (rc $rc, $nusers users in slurmdbd)"
echo "A allot-syncd no-op sync:    ${noop}s (rc $rc2; $plan)"
echo "  of which SCIM fetch+validate alone: ${fetch}s"
for run in cold noop; do
    echo "  $run: $(grep -h 'cycle phases\|slurmdbd: ' "$W/a-$run.log" | sed 's/^allot-syncd: debug: //' | paste -sd';')"
done
[ -n "${KEEP_LOGS:-}" ] && mkdir -p "$KEEP_LOGS" && cp "$W"/a-*.log "$KEEP_LOGS"/
[ "$PARTS" = A ] && exit 0

# ---- B. one sacctmgr call per object ----------------------------------------
lab
t0=$(now)
while read -r l; do sacctmgr -i $l >/dev/null 2>&1; done <"$W/qos-sample.cmds"
while read -r l; do sacctmgr -i $l >/dev/null 2>&1; done <"$W/objects.cmds"
t1=$(now)
per_obj=$(echo "$t1 - $t0" | bc)
nb=$(sacctmgr -n -P show user format=user | grep -c '^bu')
if [ "$PER_OBJECT_USERS" -lt "$USERS" ] || [ "$PER_OBJECT_TEAMS" -lt "$TEAMS" ]; then
    nobj=$(( PER_OBJECT_TEAMS * 2 + 3 + nb )); full=$(( TEAMS * 2 + 3 + USERS ))
    per_obj_full=$(echo "scale=1; $per_obj * $full / $nobj" | bc)
    echo "B sacctmgr per object:       ${per_obj}s for $nobj objects ($nb users) -> extrapolated ${per_obj_full}s for $full objects"
else
    per_obj_full=$per_obj
    echo "B sacctmgr per object:       ${per_obj}s ($nb users)"
fi

# ---- C. sacctmgr load ---------------------------------------------------------
lab
t0=$(now)
while read -r l; do sacctmgr -i $l >/dev/null 2>&1; done <"$W/qos.cmds"
t1=$(now)
sacctmgr -i load "$W/load.cfg" >"$W/load.log" 2>&1; rcl=$?
t2=$(now)
qos_t=$(echo "$t1 - $t0" | bc); load_t=$(echo "$t2 - $t1" | bc); load_all=$(echo "$t2 - $t0" | bc)
nc=$(sacctmgr -n -P show user format=user | grep -c '^bu')
echo "C sacctmgr load:             ${load_all}s (QOS by sacctmgr ${qos_t}s + load ${load_t}s, rc $rcl, $nc users)"

echo "ratios: cold allot / sacctmgr-load = $(echo "scale=2; $cold / $load_all" | bc)" \
     "(vs the load step alone, QOS excluded: $(echo "scale=2; $cold / $load_t" | bc))," \
     "cold allot / sacctmgr-per-object = $(echo "scale=3; $cold / $per_obj_full" | bc)," \
     "no-op sync = ${noop}s (goal < 2 s)"
result sync-scale cold_over_load_step="$(ratio "$cold" "$load_t")" noop_s="$noop" \
    cold_s="$cold" load_step_s="$load_t" cold_over_load="$(ratio "$cold" "$load_all")" \
    users="$USERS" teams="$TEAMS"
