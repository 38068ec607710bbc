#!/bin/bash
# scimd-lib.sh - the start of a script test against a real allot-scimd on
# plain HTTP (loopback), on top of tests/lib/harness.sh. Source it, then:
#
#   scimd_setup NAME TOOL...  finds allot-scimd ($SCIMD, else the build tree),
#                             skips when it or a TOOL is missing, and sets
#                             T (a fresh directory), PORT (free), URL and
#                             $T/allot.yaml (store, keys and audience NAME);
#                             S ARGS... runs allot-scimd's commands on it
#   scimd_start               serves it and waits until it answers /healthz,
#                             which every refusal check then probes
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$SRC/tests/lib/harness.sh"

scimd_setup() {
    local name=$1 tool
    shift
    SCIMD=${SCIMD:-$PWD/allot-scimd}
    [ -x "$SCIMD" ] || SCIMD=$PWD/scim/allot-scimd
    [ -x "$SCIMD" ] || skip "allot-scimd is not built"
    for tool in curl "$@"; do command -v "$tool" >/dev/null || skip "$tool is missing"; done
    harness_tmpdir "scimd-$name"
    T=$HARNESS_TMP
    PORT=$(free_port) || abort "no free port"
    URL=http://127.0.0.1:$PORT
    cat >"$T/allot.yaml" <<YAML
cluster:
  name: $name
identity:
  scim_url: $URL/scim/v2
  uid_min: 1000
  uid_max: 60000
  gid_min: 20000
  gid_max: 70000
scim_server:
  listen: 127.0.0.1:$PORT
  store: $T/directory.db
  threads: 1
oidc:
  audience: $name
  keys_dir: $T/oidc
YAML
}

S() { "$SCIMD" -c "$T/allot.yaml" "$@"; }

scimd_start() {
    start_service scimd "$SCIMD" -c "$T/allot.yaml" serve
    wait_port "$PORT" 30 || abort "allot-scimd did not start: $(cat "$T/scimd.log")"
    alive_probe curl -sSf --max-time 20 "$URL/healthz"
}
