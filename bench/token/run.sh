#!/bin/bash
# bench/token/run.sh - ID tokens per second: allot-scimd's token endpoint (RFC 8693
# exchange of a MUNGE credential: munge_decode via munged, replay check, directory
# lookup, ES256 signature) vs the npm `oidc-provider` issuing ES256 JWT access
# tokens (client_credentials), both over TLS on loopback in the same run, driven
# by the same fixed-count load generator (load.mjs). Prints tokens/s and the ratio.
#
# usage: bench/token/run.sh [BUILD_DIR]   (default /work/build/scimd; root, so the
#        credentials can be minted as the lab user alice; needs node, npm, munged)
# knobs: N (4000 tokens), CONCURRENCY (16), PORT (17422), PEER_PORT (17423)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-/work/build/scimd}
SCIMD=$BUILD/scim/allot-scimd
N=${N:-4000} CONCURRENCY=${CONCURRENCY:-16} PORT=${PORT:-17422} PEER_PORT=${PEER_PORT:-17423}
T=$(mktemp -d /tmp/token-bench.XXXXXX)
chmod 755 "$T"
SPID="" PPID_="" MPID=""
trap '[ -n "$SPID" ] && kill $SPID; [ -n "$PPID_" ] && kill $PPID_; [ -n "$MPID" ] && kill $MPID; rm -rf "$T"' EXIT

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
id alice >/dev/null 2>&1 || useradd -M alice
S user add alice --uid "$(id -u alice)" >/dev/null
S group add team-a --member alice >/dev/null

# Single-use credentials, minted ahead (each is good for munged's 300 s TTL; our
# server accepts them for 60 s after encoding, so mint in one burst and run at once).
start=$(date +%s.%N)
setpriv --reuid=alice --regid="$(id -g alice)" --clear-groups bash -c \
    "for i in \$(seq $N); do munge -S '$T/munge/sock' -s 'allot-token-exchange aud=bench'; done" > "$T/creds"
echo "minted $N MUNGE credentials in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
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
"$SCIMD" -c "$T/allot.yaml" serve --munge-socket "$T/munge/sock" --munge-max-age 900 2>"$T/serve.log" & SPID=$!
(cd "$T/npm" && exec node peer.mjs "$PEER_PORT" "$T/cert.pem" "$T/key.pem" 2>/dev/null) & PPID_=$!
for _ in $(seq 100); do
    curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && \
    curl -sk -o /dev/null "https://127.0.0.1:$PEER_PORT/.well-known/openid-configuration" 2>/dev/null && break
    sleep 0.1
done
ours=$(cd "$T/npm" && node load.mjs "https://127.0.0.1:$PORT/oidc/token" "$T/ours.txt" "$CONCURRENCY")
peer=$(cd "$T/npm" && node load.mjs "https://127.0.0.1:$PEER_PORT/token" "$T/peer.txt" "$CONCURRENCY" \
    "Basic $(printf bench:bench-secret-bench-secret-bench-secret | base64 -w0)")
echo "allot-scimd (munge exchange): $ours"
echo "oidc-provider (client_credentials, JWT AT): $peer"
r1=$(echo "$ours" | sed 's/.*: \([0-9.]*\) req\/s.*/\1/') r2=$(echo "$peer" | sed 's/.*: \([0-9.]*\) req\/s.*/\1/')
printf "%-40s %10s tokens/s\n%-40s %10s tokens/s\nratio allot-scimd / oidc-provider: %s  (concurrency %s, %s CPUs)\n" \
    "allot-scimd token exchange" "$r1" "oidc-provider token endpoint" "$r2" "$(echo "scale=2; $r1 / $r2" | bc)" "$CONCURRENCY" "$(nproc)"
