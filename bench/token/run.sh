#!/bin/bash
# bench/token/run.sh - ID tokens per second: allot-scimd's token endpoint (RFC 8693
# exchange of a MUNGE credential: munge_decode via munged, replay check, directory
# lookup, ES256 signature) vs the npm `oidc-provider` issuing ES256 JWT access
# tokens (client_credentials), both over TLS on loopback in the same run, driven
# by the same fixed-count load generator (load.mjs). Prints tokens/s and the ratio.
#
# usage: bench/token/run.sh [BUILD_DIR]   (root, so the credentials can be minted as a
#        directory-only uid; needs node, npm, munged); ends with RESULT token allot_over_peer=...
# knobs: N (4000 tokens), CONCURRENCY (16); ports are picked free.
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
HERE=$TOP/bench/token
SCIMD=$BUILD/scim/allot-scimd
[ -x "$SCIMD" ] || { echo "build allot-scimd first ($SCIMD)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (munged, minting as another uid)"; exit 77; }
N=${N:-4000} CONCURRENCY=${CONCURRENCY:-16}
PORT=$(free_port) PEER_PORT=$(free_port)
harness_tmpdir token-bench
T=$HARNESS_TMP
chmod 755 "$T"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/key.pem" \
    -out "$T/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
cat > "$T/allot.yaml" <<EOF
cluster: {name: bench}
teams: [{group: team-a, account: team-a, gpus: 1}]
identity: {scim_url: "https://127.0.0.1:$PORT/scim/v2", uid_min: 1000}
scim_server:
  listen: 127.0.0.1:$PORT
  tls_cert: $T/cert.pem
  tls_key: $T/key.pem
  store: $T/directory.db
oidc: {issuer: "https://127.0.0.1:$PORT", audience: bench, keys_dir: $T/oidc}
EOF
S() { "$SCIMD" -c "$T/allot.yaml" "$@"; }
mkdir -p "$T/munge" && chmod 755 "$T/munge"
mungekey -c -k "$T/munge/munge.key" -b 1024 >/dev/null 2>&1 && chmod 600 "$T/munge/munge.key"
munged -S "$T/munge/sock" --key-file="$T/munge/munge.key" --pid-file="$T/munge/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" --num-threads=4
MPID=$(cat "$T/munge/pid")
stop_munged() { kill "$MPID"; }
on_exit stop_munged
# Directory users must not be local accounts (allot refuses those): uids no local account
# holds, minted with setpriv. allot-scimd keeps at most 256 live exchanges per uid (its
# replay cache, fail closed), so the N requests are spread over N/200 users, 200 each, as
# many researchers would send them.
USERS=$(((N + 199) / 200))
BUID=45999 uids=()
while [ ${#uids[@]} -lt "$USERS" ]; do
    getent passwd "$BUID" >/dev/null || getent group "$BUID" >/dev/null || uids+=("$BUID")
    BUID=$((BUID + 1))
done
members=()
for k in "${!uids[@]}"; do
    S user add "tokbench$k" --uid "${uids[$k]}" >/dev/null
    members+=(--member "tokbench$k")
done
S group add team-a "${members[@]}" >/dev/null

# Single-use credentials, minted ahead (each is good for munged's 300 s TTL; our
# server accepts them for 60 s after encoding, so mint in one burst and run at once).
start=$(date +%s.%N)
: >"$T/creds"
for k in "${!uids[@]}"; do
    per=$(((N - k * 200) < 200 ? N - k * 200 : 200))
    setpriv --reuid="${uids[$k]}" --regid="${uids[$k]}" --clear-groups bash -c \
        "for i in \$(seq $per); do munge -S '$T/munge/sock' -s 'allot-token-exchange aud=bench'; done" >>"$T/creds"
done
echo "minted $N MUNGE credentials for $USERS directory users in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
python3 - "$T/creds" > "$T/ours.txt" <<'EOF'
import sys, urllib.parse
for line in open(sys.argv[1]):
    print("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
          "&subject_token_type=urn%3Aallot%3Aparams%3Aoauth%3Atoken-type%3Amunge"
          "&subject_token=" + urllib.parse.quote(line.strip(), safe=""))
EOF
yes "grant_type=client_credentials&scope=kube" | head -n "$N" > "$T/peer.txt"

mkdir -p "$T/npm" && cp "$HERE/load.mjs" "$HERE/peer.mjs" "$T/npm/"
(cd "$T/npm" && npm init -y >/dev/null && npm install --no-audit --no-fund oidc-provider@9 jose@6 >/dev/null 2>&1) \
    || { echo "npm install oidc-provider failed"; exit 1; }
start_service scimd "$SCIMD" -c "$T/allot.yaml" serve --munge-socket "$T/munge/sock" --munge-max-age 900
start_service peer bash -c "cd '$T/npm' && exec node peer.mjs '$PEER_PORT' '$T/cert.pem' '$T/key.pem'"
wait_port "$PORT" 60 && wait_port "$PEER_PORT" 60
ours=$(cd "$T/npm" && node load.mjs "https://127.0.0.1:$PORT/oidc/token" "$T/ours.txt" "$CONCURRENCY")
peer=$(cd "$T/npm" && node load.mjs "https://127.0.0.1:$PEER_PORT/token" "$T/peer.txt" "$CONCURRENCY" \
    "Basic $(printf bench:bench-secret-bench-secret-bench-secret | base64 -w0)")
echo "allot-scimd (munge exchange): $ours"
echo "oidc-provider (client_credentials, JWT AT): $peer"
r1=$(echo "$ours" | sed 's/.*: \([0-9.]*\) req\/s.*/\1/') r2=$(echo "$peer" | sed 's/.*: \([0-9.]*\) req\/s.*/\1/')
printf "%-40s %10s tokens/s\n%-40s %10s tokens/s\nratio allot-scimd / oidc-provider: %s  (concurrency %s, %s CPUs)\n" \
    "allot-scimd token exchange" "$r1" "oidc-provider token endpoint" "$r2" "$(echo "scale=2; $r1 / $r2" | bc)" "$CONCURRENCY" "$(nproc)"
for o in "$ours" "$peer"; do
    case $o in *" 0 errors"*) ;; *) echo "a server refused requests: no ratio"; result token failed; exit 1 ;; esac
done
result token allot_over_peer="$(ratio "$r1" "$r2")" allot_tokens_s="$r1" peer_tokens_s="$r2"
