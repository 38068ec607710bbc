#!/bin/bash
# oidc-rotation.sh - a key rotation that kube-apiserver survives, checked with the
# verifier kube-apiserver uses. One allot-scimd (TLS on loopback) and one stand-in
# API server (go-oidc v2 from Debian, scim/tests/go-oidc/verify.go: discovery over
# TLS with the test CA, the JWKS kept for its Cache-Control max-age) run for the
# whole test; neither restarts. Tokens verify before, during and after
# `keys rotate`; a key rotated in with --activate (signing at once) is refused
# while the verifier's JWKS is fresh, which is what the schedule avoids; a token
# of a removed key, and tokens with a wrong aud, iss or an expired exp, are refused.
# As root with ALLOT_LAB=1 the tokens also come from allot-kube-token (a private
# munged, the lab's user alice), and, where kubectl is installed, from kubectl
# running allot-kube-token as its exec plugin (skipped with a note otherwise;
# ALLOT_KUBECTLS="PATH..." adds more kubectls, e.g. Debian's 1.20 beside a newer one).
# Skips (77) only when go is not installed.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/scim/tests/scimd-lib.sh"
command -v go >/dev/null || skip "go is not installed (golang-go)"
scimd_setup rot openssl python3
KUBETOKEN=${KUBETOKEN:-$(dirname "$SCIMD")/allot-kube-token}

# The JWKS max-age the server sends and the schedule of `keys rotate`, both from
# allot.yaml (oidc.jwks_max_age_seconds, oidc.activate_after_seconds): short so the
# test waits about a minute, long enough that the verifier's cache (refetched by
# go-oidc only in the last 30 s of the max-age) holds for 30 s.
MAX_AGE=60 ACTIVATE_AFTER=65

# ------------------------------------------------------------------ set-up
note "building the go-oidc verifier offline (GO111MODULE=off, GOPATH=/usr/share/gocode)"
if ! GO111MODULE=off GOPATH=${ALLOT_GOPATH:-/usr/share/gocode} GOCACHE=$T/gocache \
    go build -o "$T/oidc-verify" "$SRC/scim/tests/go-oidc/verify.go" >"$T/go-build.log" 2>&1; then
    abort "go build of the verifier (needs golang-github-coreos-go-oidc-dev): $(cat "$T/go-build.log")"
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/key.pem" \
    -out "$T/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
chmod 644 "$T/cert.pem"
chmod 755 "$T"
ISS=https://127.0.0.1:$PORT
config() { # config ISSUER
    cat <<YAML
cluster:
  name: rot
teams:
  - group: team-a
    account: team-a
    gpus: 1
identity:
  scim_url: $ISS/scim/v2
  uid_min: 1000
  uid_max: 60000
  gid_min: 20000
  gid_max: 70000
scim_server:
  listen: 127.0.0.1:$PORT
  tls_cert: $T/cert.pem
  tls_key: $T/key.pem
  store: $T/directory.db
  threads: 1
oidc:
  issuer: $1
  audience: rot-kube
  keys_dir: $T/oidc
  jwks_max_age_seconds: $MAX_AGE
  activate_after_seconds: $ACTIVATE_AFTER
YAML
}
config "$ISS" >"$T/allot.yaml"
config "https://elsewhere.example.org" >"$T/other-issuer.yaml"
chmod 644 "$T/allot.yaml"

ALICE_UID=$(id -u alice 2>/dev/null || echo 4242)
S user add alice --uid "$ALICE_UID" >/dev/null || abort "user add alice"
S group add team-a --member alice >/dev/null || abort "group add"
# allot-kube-token and kubectl as alice (root and ALLOT_LAB=1 only: a private munged, setpriv).
KT=0
if [ "${ALLOT_LAB:-}" = 1 ] && [ "$(id -u)" = 0 ] && id alice >/dev/null 2>&1 &&
    command -v munged >/dev/null && command -v mungekey >/dev/null && [ -x "$KUBETOKEN" ]; then
    mkdir -p "$T/munge" "$T/alice" && chmod 755 "$T/munge" && chown alice "$T/alice" && chmod 700 "$T/alice"
    mungekey -c -k "$T/munge/munge.key" -b 1024 >/dev/null 2>&1 && chmod 600 "$T/munge/munge.key"
    if munged -S "$T/munge/sock" --key-file="$T/munge/munge.key" --pid-file="$T/munge/pid" \
        --log-file="$T/munge/log" --seed-file="$T/munge/seed"; then
        on_exit kill "$(cat "$T/munge/pid")"
        KT=1
    else
        fail "private munged did not start"
    fi
else
    note "allot-kube-token part skipped (needs ALLOT_LAB=1, root, the user alice, munged, allot-kube-token)"
fi
MUNGE_ARGS=()
[ "$KT" = 1 ] && MUNGE_ARGS=(--munge-socket "$T/munge/sock")
start_service scimd "$SCIMD" -c "$T/allot.yaml" serve "${MUNGE_ARGS[@]}"
wait_port "$PORT" 30 || abort "allot-scimd did not start: $(cat "$T/scimd.log")"
reloads() { grep -c "reloaded OIDC keys" "$T/scimd.log"; }
reloaded_since() { [ "$(reloads)" -gt "$1" ]; }
hup_scimd() { # SIGHUP, as `systemctl reload allot-scimd`, and wait until it is done
    local before
    before=$(reloads)
    kill -HUP "$(service_pid scimd)"
    wait_for 30 "the reload" reloaded_since "$before"
}

VPORT=$(free_port) || abort "no free port"
start_service verifier "$T/oidc-verify" -issuer "$ISS" -client-id rot-kube -cacert "$T/cert.pem" \
    -listen "127.0.0.1:$VPORT" -tls-cert "$T/cert.pem" -tls-key "$T/key.pem"
wait_port "$VPORT" 30 || abort "the verifier did not start: $(cat "$T/verifier.log")"
alive_probe curl -sSf --cacert "$T/cert.pem" "$ISS/healthz"

# api TOKEN: the stand-in API server's answer, "<status> <user> <groups>" or "<status> <message>".
api() {
    curl -s -H "Authorization: Bearer $1" -w '\n%{http_code}' --cacert "$T/cert.pem" "https://127.0.0.1:$VPORT/api" |
        python3 -c 'import json,sys
lines = sys.stdin.read().rsplit("\n", 1)
b = json.loads(lines[0]) if lines[0].strip() else {}
print(lines[1], b["user"], ",".join(b["groups"])) if "user" in b else print(lines[1], b.get("message", ""))'
}
kid() { python3 -c 'import base64,json,sys; h=sys.argv[1].split(".")[0]; print(json.loads(base64.urlsafe_b64decode(h+"="*(-len(h)%4)))["kid"])' "$1"; }
jwks_kids() { curl -s --cacert "$T/cert.pem" "$ISS/oidc/jwks" | python3 -c 'import json,sys; print(" ".join(sorted(k["kid"] for k in json.load(sys.stdin)["keys"])))'; }
mint() { S oidc mint alice "$@"; }
ok_for_alice() { expect_eq "$1" "$(api "$2")" "200 alice team-a"; }
refused() { local got; got=$(api "$2"); expect_refused "$1" "$got" "401 Unauthorized"; }

AS_ALICE=(setpriv --reuid=alice --regid="$(id -g alice 2>/dev/null || echo 0)" --clear-groups env HOME="$T/alice")
KT_ARGS=(-c "$T/allot.yaml" --cacert "$T/cert.pem" --munge-socket "$T/munge/sock" --cache-dir "$T/alice/cache")
kube_token() { "${AS_ALICE[@]}" "$KUBETOKEN" "${KT_ARGS[@]}" --drop-cache | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["token"])' 2>/dev/null; }
# Every kubectl here: the one on PATH and any in $ALLOT_KUBECTLS (e.g. Debian's
# kubernetes-client next to a newer one). Before 1.22 the exec plugin protocol is
# v1beta1 and kubectl sets no KUBERNETES_EXEC_INFO, so allot-kube-token is told
# the apiVersion (docs/kubernetes.md).
KUBECTLS=()
if [ "$KT" = 1 ]; then
    for k in $(command -v kubectl) ${ALLOT_KUBECTLS:-}; do [ -x "$k" ] && KUBECTLS+=("$k"); done
    [ ${#KUBECTLS[@]} = 0 ] &&
        note "kubectl is not installed: the exec-plugin part is skipped (allot-kube-token is still run directly)"
fi
kubectl_minor() { "$1" version --client -o json 2>/dev/null | python3 -c 'import json,re,sys; print(re.sub(r"\D","",json.load(sys.stdin)["clientVersion"]["minor"]))'; }
kubeconfig_for() { # kubeconfig_for KUBECTL: prints the path of a kubeconfig that suits it
    local minor api extra="" args="" a f
    minor=$(kubectl_minor "$1")
    f=$T/alice/kubeconfig-$minor
    if [ "${minor:-0}" -ge 22 ]; then
        api=client.authentication.k8s.io/v1 extra="      interactiveMode: Never"
    else
        api=client.authentication.k8s.io/v1beta1
    fi
    for a in "${KT_ARGS[@]}"; do args="$args\"$a\", "; done
    [ "$api" = client.authentication.k8s.io/v1beta1 ] && args="$args\"--api-version\", \"$api\", "
    cat >"$f" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster: {server: "https://127.0.0.1:$VPORT", certificate-authority: "$T/cert.pem"}
users:
- name: alice
  user:
    exec:
      apiVersion: $api
      command: $KUBETOKEN
      args: [${args%, }]
$extra
contexts:
- name: rot
  context: {cluster: stand-in, user: alice}
current-context: rot
YAML
    chown alice "$f"
    echo "$f"
}
kubectl_ok() { # kubectl_ok NAME: each kubectl, running allot-kube-token, is let in as alice
    local k out minor
    for k in "${KUBECTLS[@]}"; do
        minor=$(kubectl_minor "$k")
        out=$("${AS_ALICE[@]}" "$k" --kubeconfig "$(kubeconfig_for "$k")" get --raw /api 2>&1)
        expect_contains "$1 (kubectl 1.$minor, $k)" "$out" '"user":"alice"'
    done
}
kube_token_ok() { # kube_token_ok NAME WANT-KID
    [ "$KT" = 1 ] || return 0
    local tok
    tok=$(kube_token)
    expect_eq "$1: allot-kube-token's token is signed by the expected key" "$(kid "$tok")" "$2"
    ok_for_alice "$1: allot-kube-token's token accepted" "$tok"
    kubectl_ok "$1: kubectl with allot-kube-token as exec plugin accepted"
}

# ------------------------------------------------------------------ before
expect_contains "the JWKS is served with the configured max-age" \
    "$(curl -s -D - -o /dev/null --cacert "$T/cert.pem" "$ISS/oidc/jwks")" "max-age=$MAX_AGE"
BEFORE=$(mint)
OLD=$(kid "$BEFORE")
ok_for_alice "before: a token is accepted (the verifier now holds the JWKS)" "$BEFORE"
kube_token_ok "before" "$OLD"

# rotate ARGS: keys rotate once the second in which the newest key was made is over (key
# files are named by the second; a rotation within it is refused with "try again").
rotate() {
    local t
    t=$(date +%s)
    while [ "$(date +%s)" -le "$t" ]; do sleep 0.1; done
    S keys rotate "$@"
}

# ------------------------------------------------------------------ during
# The max-age and the delay come from allot.yaml (oidc.*), as for a unit's fixed ExecStart.
out=$(rotate)
expect_contains "keys rotate publishes the new key and schedules it" "$out" "published; it signs from"
expect_contains "keys rotate waits oidc.activate_after_seconds" "$out" "(in ${ACTIVATE_AFTER}s)"
hup_scimd
NEW=$(S keys list | awk '/signs from/ {print $1}')
expect_eq "during: the JWKS lists the old and the new key" "$(jwks_kids)" "$(echo "$OLD $NEW" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
DURING=$(mint)
expect_eq "during: tokens are still signed by the old key" "$(kid "$DURING")" "$OLD"
ok_for_alice "during: a new token is accepted by the verifier holding the old JWKS" "$DURING"
ok_for_alice "during: the token from before is accepted" "$BEFORE"
kube_token_ok "during" "$OLD"

# ------------------------------------------------------------------ after
note "waiting for the scheduled activation (${ACTIVATE_AFTER}s after the rotation)"
new_key_signs() { [ "$(kid "$(mint)")" = "$NEW" ]; }
check "the new key signs from its activation time, no reload" wait_for $((ACTIVATE_AFTER + 60)) "activation" new_key_signs
AFTER=$(mint)
ok_for_alice "after: a token of the new key is accepted (same verifier, its cache had aged)" "$AFTER"
ok_for_alice "after: the token from before (old key, still published) is accepted" "$BEFORE"
ok_for_alice "after: the token from during is accepted" "$DURING"
kube_token_ok "after" "$NEW"

# ------------------------------------------------------------------ what the schedule avoids
# The verifier fetched the JWKS just now (for AFTER). A key that signs at once is
# unknown to it until its cache ages: every new token is refused meanwhile.
out=$(rotate --activate --overlap 1)
expect_contains "keys rotate --activate signs at once" "$out" "signing now"
hup_scimd
NOW_KEY=$(mint)
refused "a token of a key activated at once is refused while the verifier's JWKS is fresh" "$NOW_KEY"
expect_not_contains "the rotation removed the first key (its successor signed for longer than --overlap)" "$(jwks_kids)" "$OLD"
note "waiting for the verifier's JWKS to age ($((MAX_AGE - 30))s)"
accepted() { [ "$(api "$NOW_KEY" | cut -d' ' -f1)" = 200 ]; }
check "once its cache ages the verifier refetches and accepts the new key" wait_for $((MAX_AGE + 30)) "refetch" accepted
refused "a token signed by a removed key is refused" "$BEFORE"

# ------------------------------------------------------------------ claims
refused "a token for another audience is refused" "$(mint --audience other-cluster)"
refused "a token from another issuer is refused" "$("$SCIMD" -c "$T/other-issuer.yaml" oidc mint alice)"
refused "an expired token is refused" "$(mint --lifetime 60 --now-offset 3600)"
GOOD=$(mint)
refused "a tampered token is refused" "${GOOD%.*}x.${GOOD##*.}"
refused "no token is refused" ""
ok_for_alice "the verifier still accepts a good token" "$GOOD"
finish
