#!/bin/bash
# integration.sh - allot-scimd for real: the daemon on loopback with TLS, the real
# SQLite store, a real munged (its own socket and key), curl as the SCIM client,
# allot-kube-token run as a real user, and an OIDC relying party we did not write
# (npm openid-client + jose, installed into a temp dir) validating our discovery,
# JWKS and tokens. Hostile HTTP input and slow clients too.
#
# Runs only with ALLOT_LAB=1 as root (exit 77 = skipped otherwise).
# Knobs: SCIMD_TEST_PORT (default: a free port), ALLOT_SKIP_NPM=1 (skip the node RP part).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../tests/lib/harness.sh"
if [ "${ALLOT_LAB:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
    skip "integration.sh needs ALLOT_LAB=1 and root"
fi
BUILD=${SCIMD_BUILD:-$(pwd)}
SCIMD=$BUILD/allot-scimd
KUBETOKEN=$BUILD/allot-kube-token
[ -x "$SCIMD" ] || SCIMD=$BUILD/scim/allot-scimd
[ -x "$KUBETOKEN" ] || KUBETOKEN=$BUILD/scim/allot-kube-token
PORT=${SCIMD_TEST_PORT:-$(free_port)}
T=$(mktemp -d /tmp/scimd-it.XXXXXX)
chmod 755 "$T"
ok() { pass "$*"; }
nok() { fail "$*"; }
SPID="" MPID=""
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    [ -n "$MPID" ] && kill "$MPID" 2>/dev/null
    [ -n "${SLOWPID:-}" ] && kill "$SLOWPID" 2>/dev/null
    rm -rf "$T"
}
on_exit cleanup

# ------------------------------------------------------------------ setup
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/key.pem" \
    -out "$T/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
chmod 644 "$T/cert.pem"
ISS="https://127.0.0.1:$PORT"
cat > "$T/allot.yaml" <<EOF
cluster:
  name: it
teams:
  - group: team-a
    account: team-a
    gpus: 2
    kubernetes:
      namespace: team-a
      gpus: 1
      cpus: 8
      memory: 32G
  - group: team-b
    account: team-b
    gpus: 2
identity:
  scim_url: https://127.0.0.1:$PORT/scim/v2
  uid_min: 1000
  uid_max: 60000
  gid_min: 20000
  gid_max: 60000
scim_server:
  listen: 127.0.0.1:$PORT
  tls_cert: $T/cert.pem
  tls_key: $T/key.pem
  store: $T/directory.db
  max_body_bytes: 65536
  threads: 2
oidc:
  issuer: $ISS
  audience: it-kube
  token_lifetime_seconds: 600
  keys_dir: $T/oidc
EOF
chmod 644 "$T/allot.yaml"
S() { "$SCIMD" -c "$T/allot.yaml" "$@"; }

mkdir -p "$T/munge" && chmod 755 "$T/munge"
mungekey -c -k "$T/munge/munge.key" -b 1024 >/dev/null 2>&1 && chmod 600 "$T/munge/munge.key"
munged -S "$T/munge/sock" --key-file="$T/munge/munge.key" --pid-file="$T/munge/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" || { echo "munged failed"; exit 1; }
MPID=$(cat "$T/munge/pid")

# Users the box really has (the lab's alice/bob), so munge creds carry their uids.
for u in alice bob; do id "$u" >/dev/null 2>&1 || useradd -M "$u"; done
ALICE_UID=$(id -u alice) BOB_UID=$(id -u bob)
S user add alice --uid "$ALICE_UID" --display-name "Alice" >/dev/null
S user add bob --uid "$BOB_UID" >/dev/null
S group add team-a --member alice --member bob >/dev/null
S group add lab-only --member alice >/dev/null
RTOKEN=$(S token create reader --scope read)
WTOKEN=$(S token create writer --scope write)
check "token secrets are shown once and look random" test ${#RTOKEN} -ge 40 -a "$RTOKEN" != "$WTOKEN"
check "the store keeps only token hashes" bash -c "! sqlite3 '$T/directory.db' 'select hash from api_tokens' | grep -q '$RTOKEN'"

"$SCIMD" -c "$T/allot.yaml" serve --munge-socket "$T/munge/sock" 2> "$T/serve.log" &
SPID=$!
wait_for 60 "allot-scimd to answer" curl -s --cacert "$T/cert.pem" "$ISS/healthz"
check "server is up with TLS" curl -sf --cacert "$T/cert.pem" "$ISS/healthz" -o /dev/null
check "keys are 0600 in a 0700 dir" bash -c "[ \$(stat -c %a '$T/oidc') = 700 ] && [ -z \"\$(find '$T/oidc' -name '*.pem' ! -perm 600)\" ]"
check "plain HTTP on the TLS port is refused" bash -c "! curl -sf http://127.0.0.1:$PORT/healthz -o /dev/null"

# A client dripping one header byte every 2 s (under the 5 s read timeout) must
# still be cut by the per-request deadline (30 s); it runs while the rest goes on.
cat > "$T/drip.py" <<'EOF'
import socket, ssl, sys, time
ctx = ssl.create_default_context(cafile=sys.argv[2])
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="127.0.0.1")
s.sendall(b"GET /healthz HTTP/1.1\r\n")
t = time.time()
try:
    while time.time() - t < 60:
        s.sendall(b"X")
        time.sleep(2)
    print("drip not-cut 60")
except Exception:
    print("drip cut after", round(time.time() - t), "s")
EOF
cat > "$T/flood.py" <<'EOF'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="127.0.0.1")
s.settimeout(10)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
try:
    for i in range(20000):  # 160 MB of headers, 8 KB lines (each under the line limit)
        s.sendall(b"X-Filler: " + b"a" * 8000 + b"\r\n")
    sys.exit(1)
except Exception:
    sys.exit(0)
EOF
python3 -u "$T/drip.py" "$PORT" "$T/cert.pem" > "$T/drip.out" 2>&1 &
DRIPPID=$!

C() { curl -s --cacert "$T/cert.pem" "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" "$@"; }
AR=(-H "Authorization: Bearer $RTOKEN")
AW=(-H "Authorization: Bearer $WTOKEN" -H "Content-Type: application/scim+json")

# ------------------------------------------------------------------ SCIM over the wire
check "GET by filter" bash -c "[ \"\$(curl -s --cacert '$T/cert.pem' -H 'Authorization: Bearer $RTOKEN' '$ISS/scim/v2/Users?filter=userName%20eq%20%22alice%22' | jq -r '.Resources[0][\"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser\"].uidNumber')\" = $ALICE_UID ]"
NEW=$(C "${AW[@]}" -X POST "$ISS/scim/v2/Users" -d '{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"carol","emails":[{"value":"carol@example.org","primary":true}]}')
CID=$(echo "$NEW" | jq -r .id)
check "POST creates a user with an allocated uid" bash -c "[ \"\$(echo '$NEW' | jq -r '.[\"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser\"].uidNumber')\" -ge 1000 ]"
check "PATCH (Entra style) works" test "$(code "${AW[@]}" -X PATCH "$ISS/scim/v2/Users/$CID" -d '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"displayName","value":"Carol"}]}')" = 200
check "PATCH of uidNumber is refused (400)" test "$(code "${AW[@]}" -X PATCH "$ISS/scim/v2/Users/$CID" -d '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:uidNumber","value":1}]}')" = 400
CUID=$(S user list --filter 'userName eq "carol"' | cut -d: -f2)
check "DELETE gives 204" test "$(code "${AW[@]}" -X DELETE "$ISS/scim/v2/Users/$CID")" = 204
NEW2=$(C "${AW[@]}" -X POST "$ISS/scim/v2/Users" -d '{"userName":"carol"}')
check "a recreated user never gets the old uid back" bash -c "[ \"\$(echo '$NEW2' | jq -r '.[\"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser\"].uidNumber')\" != '$CUID' ]"
check "cursor paging returns nextCursor" bash -c "curl -s --cacert '$T/cert.pem' -H 'Authorization: Bearer $RTOKEN' '$ISS/scim/v2/Users?cursor=&count=1' | jq -e '.nextCursor | length > 0' >/dev/null"
check "discovery endpoints" test "$(code "$ISS/scim/v2/ServiceProviderConfig")$(code "$ISS/scim/v2/ResourceTypes")$(code "$ISS/scim/v2/Schemas")" = 200200200

# ------------------------------------------------------------------ allot-syncd's SCIM client against us
SYNCD=${SYNCD:-$BUILD/../syncd/allot-syncd}
KEYS=${ALLOT_KEYS:-$BUILD/../syncd/keys/allot-keys}
if [ -x "$SYNCD" ] && [ -x "$KEYS" ]; then
    KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop"
    S key add alice "$KEY"
    printf %s "$(S token create syncd --scope read)" > "$T/syncd.token" && chmod 600 "$T/syncd.token"
    # alice and bob are local accounts here (munge credentials need real uids), and
    # allot never takes a local account for a directory user: run syncd and allot-keys
    # as on a node whose directory users resolve through NSS only, with the caches in a
    # directory the readers trust (root-owned up to /, unlike /tmp).
    CACHE=$(mktemp -d /run/allot-scimd-it.XXXXXX) && chmod 755 "$CACHE" && on_exit rm -rf "$CACHE"
    AS_NODE=("$HERE/../../tests/lib/with-directory-users.sh" "$T/nss" "alice bob" --)
    mkdir -p "$T/run"
    sed "s|^identity:|identity:\n  token_file: $T/syncd.token\n  ca_file: $T/cert.pem\n  cache_dir: $CACHE|" "$T/allot.yaml" > "$T/syncd.yaml"
    printf 'node:\n  role: login\n  run_dir: %s\n' "$T/run" >> "$T/syncd.yaml"
    "${AS_NODE[@]}" "$SYNCD" -c "$T/syncd.yaml" --once --no-accounting > "$T/syncd.out" 2>&1
    check "allot-syncd syncs from allot-scimd ($(tail -1 "$T/syncd.out"))" grep -q "sync ok" "$T/syncd.out"
    check "allot-keys prints alice's key from the synced cache" bash -c "$(printf '%q ' "${AS_NODE[@]}") '$KEYS' -c '$T/syncd.yaml' --cache-only alice | grep -qF '$KEY'"
    check "allot-keys live lookup (filter userName eq) against allot-scimd" bash -c "$(printf '%q ' "${AS_NODE[@]}") '$KEYS' -c '$T/syncd.yaml' -v alice 2>&1 | grep -q 'source=live keys=1'"
else
    echo "# allot-syncd/allot-keys not built next to scim/ ($SYNCD): sync test skipped"
fi

# ------------------------------------------------------------------ hostile input over HTTP
check "no token: 401 with WWW-Authenticate" bash -c "curl -si --cacert '$T/cert.pem' '$ISS/scim/v2/Users' | grep -qi '^www-authenticate: Bearer'"
check "read token cannot write: 403" test "$(code "${AR[@]}" -H 'Content-Type: application/scim+json' -X POST "$ISS/scim/v2/Users" -d '{"userName":"mallory"}')" = 403
check "garbage token: 401" test "$(code -H 'Authorization: Bearer allot_nope' "$ISS/scim/v2/Users")" = 401
check "malformed JSON: 400 invalidSyntax" bash -c "curl -s --cacert '$T/cert.pem' -H 'Authorization: Bearer $WTOKEN' -H 'Content-Type: application/scim+json' -X POST '$ISS/scim/v2/Users' -d '{\"userName\":' | jq -e '.scimType == \"invalidSyntax\"' >/dev/null"
head -c 200000 /dev/zero | tr '\0' 'a' > "$T/big"
check "oversized body: 413 before it is read" test "$(code "${AW[@]}" -X POST "$ISS/scim/v2/Users" --data-binary @"$T/big")" = 413
check "malformed filter: 400 invalidFilter" bash -c "curl -s --cacert '$T/cert.pem' -H 'Authorization: Bearer $RTOKEN' '$ISS/scim/v2/Users?filter=userName%20eq' | jq -e '.scimType == \"invalidFilter\"' >/dev/null"
for inj in "userName%20eq%20%22x%27%20OR%20%271%27%3D%271%22" "userName%20co%20%22%25%22" "userName%20eq%20%22alice%5C%22%3B%20DROP%20TABLE%20users%3B--%22"; do
    check "SQL injection through filter finds nothing ($inj)" bash -c "[ \"\$(curl -s --cacert '$T/cert.pem' -H 'Authorization: Bearer $RTOKEN' '$ISS/scim/v2/Users?filter=$inj' | jq -r '.totalResults // .status')\" = 0 ]"
done
check "users table intact after injection attempts" bash -c "[ \$(sqlite3 '$T/directory.db' 'select count(*) from users') -ge 3 ]"
for p in "/scim/v2/Users/../../../etc/passwd" "/scim/v2/Users/%2e%2e/%2e%2e/etc/passwd" "/scim/v2//Users" "/scim/v2/Users/%00" "/../../etc/passwd"; do
    c=$(code --path-as-is "${AR[@]}" "$ISS$p")
    check "path trick $p refused ($c)" test "$c" = 400 -o "$c" = 404
done
check "huge header refused, server alive" bash -c "c=\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$T/cert.pem' -H \"X-Big: \$(head -c 100000 /dev/zero | tr '\\0' a)\" '$ISS/healthz'); [ \"\$c\" != 200 ] && curl -sf --cacert '$T/cert.pem' '$ISS/healthz' >/dev/null"
check "an endless header stream is cut off" python3 "$T/flood.py" "$PORT" "$T/cert.pem"
check "server memory stayed bounded ($(awk '/VmRSS/{print $2}' /proc/$SPID/status) kB)" test "$(awk '/VmRSS/{print $2}' /proc/$SPID/status)" -lt 200000
check "unknown method refused" test "$(code -X OPTIONS "$ISS/scim/v2/Users")" != 200

# Slow clients: 40 connections that stall mid-request (TLS done, half a header) must
# not delay a normal request, and are cut off by the read timeout.
python3 - "$PORT" "$T/cert.pem" > "$T/slow.out" 2>&1 <<'EOF' &
import socket, ssl, sys, time
port, ca = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=ca)
socks = []
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port))
    if i % 2:
        s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finish the headers
    socks.append(s)  # the even ones never even start TLS
print("opened", len(socks), flush=True)
time.sleep(12)
closed = 0
for s in socks:
    s.settimeout(0.5)
    try:
        s.recv(4096)  # b"" (closed) or the server's error response before it closes
        closed += 1
    except socket.timeout:
        pass  # still open: the server did not cut it
    except (ssl.SSLError, ConnectionError, OSError):
        closed += 1  # TLS EOF / reset: cut by the server
print("closed-by-server", closed, flush=True)
EOF
SLOWPID=$!
wait_for 60 "the slow clients to connect" grep -q opened "$T/slow.out"
# Served while they hang: the answer arrives before the server has cut any of them
# (no timing threshold; -m 5 only bounds a hung curl).
R=$(C -m 5 "${AR[@]}" "$ISS/scim/v2/Users?filter=userName%20eq%20%22bob%22" | jq -r .totalResults)
STILL_HANGING=$(grep -c closed-by-server "$T/slow.out")
check "a normal request is served while 40 slow clients hang" test "$R" = 1 -a "$STILL_HANGING" = 0
wait "$SLOWPID"
SLOWPID=""
check "slow clients were cut off by the server ($(grep closed-by-server "$T/slow.out"))" bash -c "[ \$(awk '/closed-by-server/{print \$2}' '$T/slow.out') = 40 ]"

# ------------------------------------------------------------------ munge token exchange
mkdir -p "$T/alice-cache" && chown alice "$T/alice-cache" && chmod 700 "$T/alice-cache"
AS_ALICE=(setpriv --reuid=alice --regid="$(id -g alice)" --clear-groups)
KT=("$KUBETOKEN" -c "$T/allot.yaml" --cacert "$T/cert.pem" --munge-socket "$T/munge/sock" --cache-dir "$T/alice-cache")
"${AS_ALICE[@]}" "${KT[@]}" > "$T/cred1.json" 2> "$T/kt.err"
check "allot-kube-token as alice prints an ExecCredential" jq -e >/dev/null '.kind == "ExecCredential" and (.status.token | length > 100)' "$T/cred1.json"
ALICE_JWT=$(jq -r .status.token "$T/cred1.json")
check "token names alice, with only the cluster's groups" bash -c "claims() { local p; p=\$(echo \"\$1\" | cut -d. -f2 | tr '_-' '/+'); while [ \$(( \${#p} % 4 )) != 0 ]; do p=\"\$p=\"; done; echo \"\$p\" | base64 -d; }; claims '$ALICE_JWT' | jq -e '.preferred_username == \"alice\" and .groups == [\"team-a\"] and .aud == \"it-kube\"' >/dev/null"
check "token cache file is 0600 and owned by alice" bash -c "[ \"\$(stat -c '%a %U' $T/alice-cache/*.json)\" = '600 alice' ]"
"${AS_ALICE[@]}" "${KT[@]}" > "$T/cred2.json"
check "second call is served from the cache" test "$(jq -r .status.token "$T/cred2.json")" = "$ALICE_JWT"
# Issue 13: the cache directory is made with its parents (a first login has no
# ~/.cache), a refused token can be dropped, and a token whose key the issuer
# has not published yet is never cached.
mkdir -p "$T/alice-home" && chown alice "$T/alice-home" && chmod 700 "$T/alice-home"
KTH=("$KUBETOKEN" -c "$T/allot.yaml" --cacert "$T/cert.pem" --munge-socket "$T/munge/sock" --cache-dir "$T/alice-home/.cache/allot")
"${AS_ALICE[@]}" "${KTH[@]}" > "$T/cred3.json" 2> "$T/kt3.err"
check "a missing ~/.cache is created with its parents, 0700" bash -c "[ \"\$(stat -c '%a %U' $T/alice-home/.cache $T/alice-home/.cache/allot | sort -u)\" = '700 alice' ] && [ -s \"\$(ls $T/alice-home/.cache/allot/kube-token-*.json)\" ]"
check "and the token printed there is the one cached" test "$(jq -r .status.token "$T/cred3.json")" = "$(jq -r .token "$T"/alice-home/.cache/allot/kube-token-*.json)"
"${AS_ALICE[@]}" "${KTH[@]}" --drop-cache > "$T/cred4.json"
check "--drop-cache exchanges a fresh token and caches that" bash -c "[ \"\$(jq -r .status.token $T/cred4.json)\" != \"\$(jq -r .status.token $T/cred3.json)\" ] && [ \"\$(jq -r .status.token $T/cred4.json)\" = \"\$(jq -r .token $T/alice-home/.cache/allot/kube-token-*.json)\" ]"
check "an old kubectl without KUBERNETES_EXEC_INFO gets --api-version" bash -c "'${AS_ALICE[0]}' ${AS_ALICE[*]:1} ${KTH[*]} --api-version client.authentication.k8s.io/v1beta1 | jq -e '.apiVersion == \"client.authentication.k8s.io/v1beta1\"' >/dev/null"
# A stand-in issuer that signs with a kid its JWKS does not list (yet).
STUB_PORT=$((PORT + 1))
cat > "$T/stub.py" <<'PY'
import base64, http.server, json, ssl, sys
port, cert, key, published = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
b64 = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_GET(self):
        self.answer({"keys": [{"kty": "EC", "kid": published}]})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        jwt = b64({"alg": "ES256", "kid": "next-key"}) + "." + b64({"sub": "alice"}) + ".c2ln"
        self.answer({"access_token": jwt, "expires_in": 600, "token_type": "N_A"})
s = http.server.HTTPServer(("127.0.0.1", port), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
print("ready", flush=True)
s.serve_forever()
PY
stub_run() {  # $1: the kid the stub's JWKS publishes
    rm -rf "$T/stub-cache"; mkdir -p "$T/stub-cache"; chown alice "$T/stub-cache"; chmod 700 "$T/stub-cache"
    python3 "$T/stub.py" "$STUB_PORT" "$T/cert.pem" "$T/key.pem" "$1" > "$T/stub.out" 2>&1 &
    STUBPID=$!
    wait_for 60 "the stand-in issuer" grep -q ready "$T/stub.out"
    "${AS_ALICE[@]}" "$KUBETOKEN" --issuer "https://127.0.0.1:$STUB_PORT" --audience it-kube --cacert "$T/cert.pem" \
        --munge-socket "$T/munge/sock" --cache-dir "$T/stub-cache" > "$T/stub-cred.json" 2>/dev/null
    kill "$STUBPID"; wait "$STUBPID" 2>/dev/null
}
stub_run other-key
check "a token signed with a key the JWKS does not list is printed" jq -e '.status.token | startswith("ey")' "$T/stub-cred.json"
check "but not cached" bash -c "[ -z \"\$(ls -A $T/stub-cache)\" ]"
stub_run next-key
check "once the JWKS lists its key, the token is cached" bash -c "ls $T/stub-cache/kube-token-*.json >/dev/null"
CRED=$("${AS_ALICE[@]}" munge -S "$T/munge/sock" -s "allot-token-exchange aud=it-kube")
ex() { curl -s --cacert "$T/cert.pem" "$ISS/oidc/token" --data-urlencode grant_type=urn:ietf:params:oauth:grant-type:token-exchange \
    --data-urlencode subject_token_type=urn:allot:params:oauth:token-type:munge --data-urlencode "subject_token=$1"; }
check "raw exchange of alice's credential" bash -c "echo '$(ex "$CRED")' | jq -e '.access_token | length > 100' >/dev/null"
check "the same credential again is a replay" bash -c "echo '$(ex "$CRED")' | jq -e '.error == \"invalid_grant\"' >/dev/null"
WRONG=$("${AS_ALICE[@]}" munge -S "$T/munge/sock" -s "something else")
check "a munge credential minted for another purpose is refused" bash -c "echo '$(ex "$WRONG")' | jq -e '.error == \"invalid_grant\"' >/dev/null"
ROOTCRED=$(munge -S "$T/munge/sock" -s "allot-token-exchange aud=it-kube")
check "root (not in the directory) gets no token" bash -c "echo '$(ex "$ROOTCRED")' | jq -e '.error_description | test(\"not in the directory\")' >/dev/null"
check "a forged credential is refused" bash -c "echo '$(ex "MUNGE:AwQFAAB${RANDOM}x:")' | jq -e '.error == \"invalid_grant\"' >/dev/null"
S user set alice --active no >/dev/null
check "a disabled user gets no token" bash -c "echo '$(ex "$("${AS_ALICE[@]}" munge -S "$T/munge/sock" -s "allot-token-exchange aud=it-kube")")' | jq -e '.error_description == \"account is disabled\"' >/dev/null"
S user set alice --active yes >/dev/null

# ------------------------------------------------------------------ a real relying party
if [ "${ALLOT_SKIP_NPM:-}" = 1 ]; then
    echo "# skipping the npm relying party (ALLOT_SKIP_NPM=1)"
else
    mkdir -p "$T/rp" && cp "$HERE/rp/verify.mjs" "$T/rp/"
    if (cd "$T/rp" && npm init -y >/dev/null 2>&1 && npm install --no-audit --no-fund jose@6 openid-client@6 >/dev/null 2>"$T/npm.err"); then
        ok "npm installed jose@6 openid-client@6 into a temp dir"
        # Bad tokens: expired, another audience, a key we never published, tampered, alg none.
        GOOD2=$(S oidc mint bob)
        EXPIRED=$(S oidc mint alice --lifetime 60 --now-offset 3600)
        WRONGAUD=$(S oidc mint alice --audience other-cluster)
        "$SCIMD" -c "$T/allot.yaml" --keys-dir "$T/otherkeys" keys rotate >/dev/null
        WRONGKEY=$("$SCIMD" -c "$T/allot.yaml" --keys-dir "$T/otherkeys" oidc mint alice)
        TAMPERED=$(python3 -c '
import sys, base64, json
h, p, s = sys.argv[1].split(".")
c = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
c["groups"] = ["cluster-admins"]
print(h + "." + base64.urlsafe_b64encode(json.dumps(c).encode()).decode().rstrip("=") + "." + s)' "$ALICE_JWT")
        NONE=$(python3 -c '
import sys, base64
h, p, s = sys.argv[1].split(".")
print(base64.urlsafe_b64encode(b"{\"alg\":\"none\",\"typ\":\"JWT\"}").decode().rstrip("=") + "." + p + ".")' "$ALICE_JWT")
        jq -n --arg good "$ALICE_JWT" --arg good2 "$GOOD2" --arg expired "$EXPIRED" --arg wrongaud "$WRONGAUD" \
            --arg wrongkey "$WRONGKEY" --arg tampered "$TAMPERED" --arg none "$NONE" \
            '{good_munge: $good, good_minted: $good2, expired: $expired, wrong_audience: $wrongaud, wrong_key: $wrongkey, tampered: $tampered, alg_none: $none}' > "$T/cases.json"
        if (cd "$T/rp" && NODE_EXTRA_CA_CERTS="$T/cert.pem" node verify.mjs "$ISS" it-kube "$T/cases.json") > "$T/rp.out" 2>&1; then
            ok "openid-client + jose: discovery, JWKS, good tokens accepted, bad ones rejected"
        else
            nok "openid-client + jose relying party"
        fi
        sed 's/^/#   /' "$T/rp.out"
        # Rotation: after `keys rotate --activate` (the new key signs at once; the scheduled
        # rotation is oidc-rotation.sh's) + SIGHUP both keys are published and old tokens verify.
        S keys rotate --activate >/dev/null
        kill -HUP "$SPID"
        jwks_lists() { [ "$(C "$ISS/oidc/jwks" | jq '.keys | length')" = "$1" ]; }
        wait_for 60 "the reloaded JWKS" jwks_lists 2
        check "after rotation the JWKS publishes old and new keys" jwks_lists 2
        NEWTOK=$(S oidc mint alice)
        jq -n --arg old "$ALICE_JWT" --arg new "$NEWTOK" '{good_old_key: $old, good_new_key: $new}' > "$T/cases2.json"
        check "relying party accepts tokens from both keys across a rotation" bash -c "cd '$T/rp' && NODE_EXTRA_CA_CERTS='$T/cert.pem' node verify.mjs '$ISS' it-kube '$T/cases2.json' > '$T/rp2.out' 2>&1"
        sed 's/^/#   /' "$T/rp2.out"
    else
        nok "npm install jose openid-client (see below; ALLOT_SKIP_NPM=1 to skip)"
        sed 's/^/#   /' "$T/npm.err" | tail -5
    fi
fi

# ------------------------------------------------------------------ admin CLI, apply, kube objects
cat > "$T/directory.yaml" <<EOF
users:
  - name: alice
    uid: $ALICE_UID
    display_name: Alice
  - name: bob
    display_name: Bob Builder
  - name: dave
groups:
  - name: team-a
    members: [alice, dave]
EOF
check "apply --plan shows the diff and changes nothing" bash -c "'$SCIMD' -c '$T/allot.yaml' apply '$T/directory.yaml' --plan | grep -q '^+ user dave' && ! '$SCIMD' -c '$T/allot.yaml' user list | grep -q '^dave:'"
check "apply converges" bash -c "'$SCIMD' -c '$T/allot.yaml' apply '$T/directory.yaml' >/dev/null && '$SCIMD' -c '$T/allot.yaml' apply '$T/directory.yaml' --plan | grep -q '= no changes'"
check "apply refuses to change a uid" bash -c "sed 's/uid: $ALICE_UID/uid: 59999/' '$T/directory.yaml' > '$T/bad.yaml'; ! '$SCIMD' -c '$T/allot.yaml' apply '$T/bad.yaml' 2>/dev/null"
S render-kube --out "$T/kube" >/dev/null
check "render-kube writes one file per Kubernetes team" test -f "$T/kube/team-a.yaml" -a ! -f "$T/kube/team-b.yaml"
check "rendered YAML has the GPU quota and the group subject" bash -c "grep -q 'requests.nvidia.com/gpu: \"1\"' '$T/kube/team-a.yaml' && grep -q 'name: \"team-a\"' '$T/kube/team-a.yaml'"
if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
    check "rendered file is valid YAML with Namespace, RoleBinding, ResourceQuota" /usr/bin/python3 -c '
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
assert [d["kind"] for d in docs] == ["Namespace", "RoleBinding", "ResourceQuota"], docs
assert docs[2]["spec"]["hard"]["requests.nvidia.com/gpu"] == "1"
assert docs[1]["subjects"][0] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a"}
' "$T/kube/team-a.yaml"
fi
check "token revoke takes effect at once" bash -c "'$SCIMD' -c '$T/allot.yaml' token revoke reader && [ \$(curl -s -o /dev/null -w '%{http_code}' --cacert '$T/cert.pem' -H 'Authorization: Bearer $RTOKEN' '$ISS/scim/v2/Users') = 401 ]"
check "server survived everything" curl -sf --cacert "$T/cert.pem" "$ISS/healthz" -o /dev/null
check "metrics count refused tokens" bash -c "curl -s --cacert '$T/cert.pem' '$ISS/metrics' | grep -q '^allot_scimd_tokens_refused_total [1-9]'"

wait "$DRIPPID"
check "a drip-feeding client is cut by the request deadline ($(cat "$T/drip.out"))" grep -q "drip cut" "$T/drip.out"
kill "$SPID" && wait "$SPID"
check "server stopped cleanly on SIGTERM" test $? = 0
SPID=""
check "no sanitizer or runtime error in the server log" bash -c "! grep -E 'Sanitizer|runtime error' '$T/serve.log'"

finish
