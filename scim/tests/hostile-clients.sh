#!/bin/bash
# hostile-clients.sh - local accounts cannot shut allot-scimd's token exchange
# with the real munged and the real daemon on loopback.
#
# A uid that is not in the directory trades 2,000 fresh MUNGE credentials:
# every one is refused and none takes a replay slot, so alice's fresh
# credential is still exchanged. A directory uid (bob) flooding is limited to
# its own slots and never refuses alice either. A replayed credential is refused.
#
# Runs only with ALLOT_LAB=1 as root (it mints credentials as other uids).
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/harness.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
[ "${ALLOT_LAB:-}" = 1 ] && [ "$(id -u)" = 0 ] || skip "needs ALLOT_LAB=1 and root"
SCIMD=${SCIMD:-$PWD/allot-scimd}
[ -x "$SCIMD" ] || SCIMD=$PWD/scim/allot-scimd
[ -x "$SCIMD" ] || skip "allot-scimd is not built"
for tool in munged mungekey munge setpriv python3 curl jq; do
    command -v $tool >/dev/null || skip "$tool is missing"
done
harness_tmpdir scimd-hostile
T=$HARNESS_TMP
chmod 755 "$T"
ALICE=4101 BOB=4102 OUTSIDER=4999 AUD=hostile
# The system interpreter: one from root's environment may not be readable by other uids.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

mkdir -p "$T/munge" && chmod 755 "$T/munge"
mungekey -c -k "$T/munge/munge.key" -b 1024 >/dev/null 2>&1 && chmod 600 "$T/munge/munge.key"
munged -S "$T/munge/sock" --key-file="$T/munge/munge.key" --pid-file="$T/munge/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" || abort "munged did not start"
on_exit kill "$(cat "$T/munge/pid")"

PORT=$(free_port) || abort "no free port"
URL=http://127.0.0.1:$PORT
cat >"$T/allot.yaml" <<EOF
cluster:
  name: hostile
identity:
  scim_url: $URL/scim/v2
  uid_min: 1000
  uid_max: 60000
  gid_min: 20000
  gid_max: 60000
scim_server:
  listen: 127.0.0.1:$PORT
  store: $T/directory.db
  threads: 2
oidc:
  audience: $AUD
  keys_dir: $T/oidc
EOF
"$SCIMD" -c "$T/allot.yaml" user add alice --uid $ALICE >/dev/null || abort "user add alice"
"$SCIMD" -c "$T/allot.yaml" user add bob --uid $BOB >/dev/null || abort "user add bob"
start_service scimd "$SCIMD" -c "$T/allot.yaml" serve --munge-socket "$T/munge/sock"
wait_port "$PORT" 30 || abort "allot-scimd did not start: $(cat "$T/scimd.log")"
alive_probe curl -sSf --max-time 20 "$URL/healthz"

as() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
cred() { as "$1" munge -S "$T/munge/sock" -s "allot-token-exchange aud=$AUD"; }
exchange() { # exchange CREDENTIAL: prints the token response
    curl -sS --max-time 20 "$URL/oidc/token" \
        --data-urlencode grant_type=urn:ietf:params:oauth:grant-type:token-exchange \
        --data-urlencode subject_token_type=urn:allot:params:oauth:token-type:munge \
        --data-urlencode "subject_token=$1"
}
flood() { as "$1" "$PY" "$HERE/munge_flood.py" --socket "$T/munge/sock" --url "$URL" \
    --audience $AUD --count "$2"; }

# ------------------------------------------------------------------ an outsider floods
OUT=$(flood $OUTSIDER 2000 2>&1)
expect_eq "2,000 credentials of uid $OUTSIDER (not in the directory) are all refused" \
    "$OUT" "2000 400 uid $OUTSIDER is not in the directory"
A1=$(cred $ALICE)
R=$(exchange "$A1")
check "alice's fresh credential is exchanged after the outsider's flood ($(echo "$R" | head -c 120))" \
    bash -c "echo '$R' | jq -e '.access_token | length > 20' >/dev/null"
R=$(exchange "$A1")
expect_refused "alice's credential cannot be traded twice" "$R" "credential already used"

# ------------------------------------------------------------------ a directory uid floods
OUT=$(flood $BOB 300 2>&1)
expect_contains "bob's flood: his own slots are issued" "$OUT" "256 200 issued"
expect_contains "bob's flood: past his slots he is told to retry" "$OUT" \
    "44 400 too many token exchanges for this uid; retry later"
R=$(exchange "$(cred $ALICE)")
check "alice is still served while bob's slots are full" \
    bash -c "echo '$R' | jq -e '.access_token | length > 20' >/dev/null"
check "metrics count the refusals" \
    bash -c "curl -sS --max-time 20 '$URL/metrics' | grep -q '^allot_scimd_tokens_refused_total [1-9]'"
stop_service scimd
check "no crash or sanitizer report in the server log" \
    bash -c "! grep -E 'Sanitizer|runtime error|Segmentation' '$T/scimd.log'"
finish
