#!/bin/bash
# bench/scim-serve/run.sh - SCIM read throughput at 10,000 users: allot-scimd
# (TLS, SQLite) vs an in-memory Node.js peer (peer.mjs), both driven by wrk on
# loopback in the same run. Prints requests/s and the ratio.
#
# usage: bench/scim-serve/run.sh [BUILD_DIR]   (default /work/build/scimd; needs
#        BUILD_DIR/scim/allot-scimd, wrk, node, openssl, python3)
# knobs: DURATION (10s), CONNECTIONS (32), THREADS (2), PORT (17420), PEER_PORT (17421)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-/work/build/scimd}
SCIMD=$BUILD/scim/allot-scimd
DURATION=${DURATION:-10s} CONNECTIONS=${CONNECTIONS:-32} THREADS=${THREADS:-2}
PORT=${PORT:-17420} PEER_PORT=${PEER_PORT:-17421}
T=$(mktemp -d /tmp/scim-bench.XXXXXX)
SPID="" PPID_=""
trap '[ -n "$SPID" ] && kill $SPID; [ -n "$PPID_" ] && kill $PPID_; rm -rf "$T"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/key.pem" \
    -out "$T/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
cat > "$T/allot.yaml" <<EOF
cluster: {name: bench}
identity: {scim_url: "https://127.0.0.1:$PORT/scim/v2"}
scim_server:
  listen: 127.0.0.1:$PORT
  tls_cert: $T/cert.pem
  tls_key: $T/key.pem
  store: $T/directory.db
oidc: {issuer: "https://127.0.0.1:$PORT", audience: bench, keys_dir: $T/oidc}
EOF
S() { "$SCIMD" -c "$T/allot.yaml" "$@"; }

python3 - "$T/directory.yaml" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("users:\n")
    for i in range(10000):
        f.write(f"  - name: u{i:05d}\n    display_name: User {i}\n    email: u{i:05d}@example.org\n"
                f"    ssh_keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl u{i}\"]\n")
    f.write("groups:\n")
    for g in range(20):
        f.write(f"  - name: team-{g:02d}\n    members: [" + ", ".join(f"u{i:05d}" for i in range(g, 10000, 20)) + "]\n")
EOF
start=$(date +%s.%N)
S apply "$T/directory.yaml" > /dev/null
echo "populated 10,000 users + 20 groups with 'allot-scimd apply' in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
TOKEN=$(S token create bench --scope read)
S user list --json > "$T/users.jsonl"
HASH=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)

"$SCIMD" -c "$T/allot.yaml" serve 2>"$T/serve.log" & SPID=$!
node "$HERE/peer.mjs" "$PEER_PORT" "$T/cert.pem" "$T/key.pem" "$T/users.jsonl" "$HASH" & PPID_=$!
for _ in $(seq 100); do
    curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && \
    curl -sk -o /dev/null "https://127.0.0.1:$PEER_PORT/scim/v2/Users" 2>/dev/null && break
    sleep 0.1
done
# Same answers from both (sanity): the same user comes back from each.
Q='/scim/v2/Users?filter=userName%20eq%20%22u04242%22'
A=$(curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$Q" | jq -r '.Resources[0].userName')
B=$(curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PEER_PORT$Q" | jq -r '.Resources[0].userName')
[ "$A" = u04242 ] && [ "$B" = u04242 ] || { echo "sanity check failed: '$A' '$B'"; exit 1; }

rate() {  # port script -> requests/s (and fails on non-2xx)
    local out
    out=$(TOKEN=$TOKEN wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$HERE/$2" "https://127.0.0.1:$1")
    if echo "$out" | grep -q "Non-2xx"; then echo "$out" >&2; echo 0; return; fi
    echo "$out" | awk '/Requests\/sec/ {print $2}'
}
printf "%-34s %14s %14s %8s\n" "workload (wrk -t$THREADS -c$CONNECTIONS -d$DURATION)" "allot-scimd" "node peer" "ratio"
for w in "GET user by filter:filter.lua" "100-entry page:page.lua"; do
    name=${w%%:*} script=${w##*:}
    ours=$(rate "$PORT" "$script")
    peer=$(rate "$PEER_PORT" "$script")
    printf "%-34s %12s/s %12s/s %8s\n" "$name" "$ours" "$peer" "$(echo "scale=2; $ours / $peer" | bc)"
done
echo "(ratio = allot-scimd / peer; both TLS on loopback, $(nproc) CPUs, 10,000 users)"
