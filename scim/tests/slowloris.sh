#!/bin/bash
# slowloris.sh - slow clients never stall allot-scimd.
#
# A real allot-scimd on loopback, attacked by slow_client.py: 60 connections
# from 127.0.0.1 that drip one byte every 0.5 s (the TLS ClientHello itself,
# the request headers, or the body; plain HTTP too), reconnecting whenever the
# server cuts them. While the attack runs, normal requests (curl) must be
# answered; afterwards every dripping connection must have been closed by the
# server (header and body deadlines). A second attacker from 127.0.0.2 opens
# more connections than scim_server.max_connections_per_address allows: the
# excess is refused at once and a request from 127.0.0.1 is still answered.
#
# Time bounds below (curl --max-time, wait_for) are liveness bounds only.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/harness.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
SCIMD=${SCIMD:-$PWD/allot-scimd}
[ -x "$SCIMD" ] || SCIMD=$PWD/scim/allot-scimd
[ -x "$SCIMD" ] || skip "allot-scimd is not built"
for tool in python3 curl openssl; do command -v $tool >/dev/null || skip "$tool is missing"; done
harness_tmpdir scimd-slowloris
T=$HARNESS_TMP
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/key.pem" \
    -out "$T/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null

# server NAME tls|plain: starts allot-scimd; sets URL and TOKEN.
server() {
    local name=$1 mode=$2 port scheme=http tls=""
    port=$(free_port) || abort "no free port"
    if [ "$mode" = tls ]; then
        scheme=https
        tls="  tls_cert: $T/cert.pem
  tls_key: $T/key.pem"
    fi
    cat >"$T/$name.yaml" <<EOF
cluster:
  name: slow
identity:
  scim_url: $scheme://127.0.0.1:$port/scim/v2
  uid_min: 1000
  uid_max: 60000
  gid_min: 20000
  gid_max: 60000
scim_server:
  listen: 127.0.0.1:$port
$tls
  store: $T/$name.db
  threads: 2
  header_timeout_seconds: 3
  body_timeout_seconds: 3
  max_connections_per_address: 64
oidc:
  audience: slow
  keys_dir: $T/$name-oidc
EOF
    "$SCIMD" -c "$T/$name.yaml" user add alice --uid 1500 >/dev/null || abort "user add failed"
    TOKEN=$("$SCIMD" -c "$T/$name.yaml" token create "$name" --scope write) || abort "token failed"
    start_service "$name" "$SCIMD" -c "$T/$name.yaml" serve
    wait_port "$port" 30 || abort "$name did not start: $(cat "$T/$name.log")"
    URL=$scheme://127.0.0.1:$port
    PORT=$port
}

# attack NAME ARGS...: starts slow_client.py; returns once all its connections are open.
attack() {
    local name=$1
    shift
    rm -f "$T/$name.stop" "$T/$name.report"
    start_service "$name" python3 "$HERE/slow_client.py" --port "$PORT" --stop-file "$T/$name.stop" \
        --report "$T/$name.report" "$@"
    wait_for 60 "$name to open its connections" grep -q attacking "$T/$name.log" ||
        abort "$name did not start: $(cat "$T/$name.log")"
}

# end_attack NAME: tells the attacker to stop and waits for its report.
end_attack() {
    touch "$T/$1.stop"
    wait_for 90 "$1's report" test -s "$T/$1.report"
    stop_service "$1"
    REPORT=$(tr '\n' ' ' <"$T/$1.report")
}
field() { awk -v k="$1" '$1 == k { print $2 }' "$T/$2.report"; }

# normal NAME: a reader's request and a writer's request, answered during the attack.
normal() {
    local what=$1 out code
    out=$(curl -sS --max-time 20 --cacert "$T/cert.pem" -H "Authorization: Bearer $TOKEN" \
        "$URL/scim/v2/Users?filter=userName%20eq%20%22alice%22" 2>&1)
    expect_contains "$what: GET /Users is answered" "$out" '"totalResults":1'
    code=$(curl -sS --max-time 20 --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' \
        -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/scim+json' \
        -X POST "$URL/scim/v2/Users" -d "{\"userName\":\"u$RANDOM$RANDOM\"}" 2>&1)
    expect_eq "$what: POST /Users is answered" "$code" 201
}

all_closed() { # all_closed NAME WHAT
    local opened closed open
    opened=$(field opened "$1") closed=$(field closed-by-server "$1") open=$(field still-open "$1")
    if [ -n "$opened" ] && [ "$open" = 0 ] && [ "$closed" = "$opened" ]; then
        pass "$2 ($REPORT)"
    else
        fail "$2" "$REPORT"
    fi
}

# ------------------------------------------------------------------ TLS
server tls tls
alive_probe curl -sSf --max-time 20 --cacert "$T/cert.pem" "$URL/healthz"
attack drip-tls --ca "$T/cert.pem" --count 60 --modes tls-hello,tls-headers,tls-body --reconnect
normal "TLS, 60 dripping connections from 127.0.0.1"
end_attack drip-tls
all_closed drip-tls "TLS: the server closed every dripping connection (handshake, headers, body)"
check "TLS: answered after the attack" curl -sSf --max-time 20 --cacert "$T/cert.pem" "$URL/healthz"

# More connections from one address than the cap: the excess is refused at once.
attack flood-tls --ca "$T/cert.pem" --source 127.0.0.2 --count 100 --modes tls-headers
normal "TLS, 127.0.0.2 over its connection cap"
end_attack flood-tls
refused=$(field refused-at-once flood-tls)
check "TLS: connections over the per-address cap are refused at once ($REPORT)" test "${refused:-0}" -ge 1
all_closed flood-tls "TLS: the server closed every connection of the capped address"
check "the cap is logged with the address" grep -q \
    'refusing connections from 127.0.0.2: scim_server.max_connections_per_address (64) reached' \
    "$T/tls.log"
stop_service tls

# ------------------------------------------------------------------ plain HTTP
server plain plain
alive_probe curl -sSf --max-time 20 "$URL/healthz"
attack drip-plain --count 60 --modes headers,body --reconnect
normal "plain HTTP, 60 dripping connections from 127.0.0.1"
end_attack drip-plain
all_closed drip-plain "plain HTTP: the server closed every dripping connection (headers, body)"
check "plain HTTP: answered after the attack" curl -sSf --max-time 20 "$URL/healthz"
stop_service plain
check "no crash or sanitizer report in the server logs" \
    bash -c "! grep -E 'Sanitizer|runtime error|Segmentation' '$T/tls.log' '$T/plain.log'"
finish
