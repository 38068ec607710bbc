#!/bin/bash
# bench/scim-serve/run.sh - SCIM read throughput at 10,000 users: allot-scimd
# (TLS, SQLite) vs an in-memory Node.js peer (peer.mjs), both driven by wrk on
# loopback in the same run. Prints requests/s and the ratio.
#
# usage: bench/scim-serve/run.sh [BUILD_DIR]   (needs BUILD_DIR/scim/allot-scimd, wrk, node,
#        openssl, python3, jq); ends with RESULT scim-serve min_allot_over_peer=...
# knobs: DURATION (10s), CONNECTIONS (32), THREADS (2); ports are picked free.
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
HERE=$TOP/bench/scim-serve
SCIMD=$BUILD/scim/allot-scimd
[ -x "$SCIMD" ] || { echo "build allot-scimd first ($SCIMD)"; exit 1; }
DURATION=${DURATION:-10s} CONNECTIONS=${CONNECTIONS:-32} THREADS=${THREADS:-2}
PORT=$(free_port) PEER_PORT=$(free_port)
harness_tmpdir scim-bench
T=$HARNESS_TMP

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

start_service scimd "$SCIMD" -c "$T/allot.yaml" serve
start_service peer node "$HERE/peer.mjs" "$PEER_PORT" "$T/cert.pem" "$T/key.pem" "$T/users.jsonl" "$HASH"
wait_port "$PORT" 60 && wait_port "$PEER_PORT" 60
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
ratios=()
for w in "GET user by filter:filter.lua" "100-entry page:page.lua"; do
    name=${w%%:*} script=${w##*:}
    ours=$(rate "$PORT" "$script")
    peer=$(rate "$PEER_PORT" "$script")
    r=$(ratio "$ours" "$peer")
    printf "%-34s %12s/s %12s/s %8s\n" "$name" "$ours" "$peer" "$r"
    ratios+=("$r")
done
echo "(ratio = allot-scimd / peer; both TLS on loopback, $(nproc) CPUs, 10,000 users)"
result scim-serve min_allot_over_peer="$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)" \
    filter_allot_over_peer="${ratios[0]}" page_allot_over_peer="${ratios[1]}"
