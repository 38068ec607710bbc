#!/bin/bash
# harness.sh - the one library of every script test (lab, sshd, NSS, scimd, syncd).
#
#   . "$ALLOT_TOP_SRCDIR/tests/lib/harness.sh"
#
# Reporting (TAP-like lines "ok - NAME" / "not ok - NAME", which dev.sh counts):
#   check NAME CMD...            passes when CMD exits 0 (its output is shown on failure)
#   check_fails NAME CMD...      passes when CMD exits non-zero AND the alive probe succeeds
#   expect_eq NAME GOT WANT      expect_contains / expect_not_contains NAME TEXT NEEDLE
#   expect_match NAME TEXT REGEX expect_refused NAME TEXT NEEDLE (needle + alive probe)
#   expect_refused_eq NAME GOT WANT  (GOT = WANT, e.g. an exit code, + alive probe)
#   alive_probe CMD...           the positive request every refusal check runs in the same
#                                step, so "refused" never passes because the server died
#   pass NAME / fail NAME [DETAIL]; note TEXT ("# TEXT"); skip WHY (exit 77, automake SKIP)
#   abort WHY                    fails the test now (prints the closing line, exits 1)
#   finish                       prints "N passed, N failed"; exit status 0 iff none failed
# Services and clean-up (one EXIT trap; never set your own, use on_exit):
#   on_exit CMD...               run at exit, last registered first
#   harness_tmpdir [NAME]        sets HARNESS_TMP (not exported) to a fresh directory removed
#                                at exit
#   start_service NAME CMD...    starts CMD in its own session, logs to $HARNESS_TMP/NAME.log,
#                                records the PID (service_pid NAME); stopped at exit
#   stop_service NAME [SECONDS]  TERM, wait (default 15 s), then KILL; only that PID
#   wait_for SECONDS WHAT CMD... polls CMD until it succeeds; the bound is a liveness bound
#   wait_port PORT [SECONDS]     waits until 127.0.0.1:PORT accepts connections
# Ports, picked free at run time and reserved until this test exits:
#   free_port                    prints one free TCP port
#   free_port_block N            prints the first of N consecutive free TCP ports
#
# Converting an existing script test (what the others did):
#  1. Replace its own pass/fail/check/expect_*/finish helpers by sourcing this file
#     (lab tests: tests/lab/lab-lib.sh sources it for you).
#  2. Replace fixed ports and port bases by PORT=$(free_port) / B=$(free_port_block N).
#  3. Replace `trap ... EXIT` by on_exit, background `cmd &` + kill by start_service /
#     stop_service, and `for i in $(seq ..); do curl ..; sleep; done` by wait_port/wait_for.
#  4. Every check that expects a refusal (401, exit code, "denied") names the server's
#     positive request: call alive_probe once (e.g. `alive_probe curl -fsS $URL/health`),
#     then use check_fails / expect_refused, which run the probe in the same step.
#  5. No assertion on elapsed time: wait for the state (wait_for), never for a duration.
#  6. End with `finish`; exit 77 through `skip` when the test cannot run here.

[ -n "${HARNESS_LOADED:-}" ] && return 0
HARNESS_LOADED=1
HARNESS_TMP="" # never inherited: a child script that sources this file must not remove ours
HARNESS_PASSED=0
HARNESS_FAILED=0
HARNESS_ALIVE=()
HARNESS_EXIT=()
declare -A HARNESS_PIDS=()
HARNESS_PORT_DIR=${HARNESS_PORT_DIR:-/tmp/allot-test-ports}

# ------------------------------------------------------------------ reporting
pass() { HARNESS_PASSED=$((HARNESS_PASSED + 1)); echo "ok - $1"; }
fail() {
    HARNESS_FAILED=$((HARNESS_FAILED + 1))
    echo "not ok - $1"
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" | head -40 | sed 's/^/    # /'; fi
    return 0
}
note() { echo "# $*"; }

check() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi
}

alive_probe() { HARNESS_ALIVE=("$@"); }

# _alive_ok: runs the alive probe; on failure sets HARNESS_WHY.
_alive_ok() {
    [ ${#HARNESS_ALIVE[@]} -gt 0 ] || return 0
    local out
    out=$("${HARNESS_ALIVE[@]}" 2>&1) && return 0
    HARNESS_WHY="the server did not answer its positive request (${HARNESS_ALIVE[*]}): $out"
    return 1
}

check_fails() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then
        fail "$name" "expected failure, but it succeeded: $out"
    elif _alive_ok; then
        pass "$name"
    else
        fail "$name" "$HARNESS_WHY"
    fi
}

expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$3', got '$2'"; fi
}
expect_contains() {
    if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1" "expected to find: $3
in: $2"; fi
}
expect_not_contains() {
    if [[ "$2" != *"$3"* ]]; then pass "$1"; else fail "$1" "did not expect: $3
in: $2"; fi
}
expect_match() {
    if [[ "$2" =~ $3 ]]; then pass "$1"; else fail "$1" "expected to match /$3/
in: $2"; fi
}
expect_refused() { # expect_refused NAME TEXT NEEDLE: NEEDLE in TEXT and the server still answers
    if [[ "$2" != *"$3"* ]]; then
        fail "$1" "expected to find: $3
in: $2"
    elif _alive_ok; then
        pass "$1"
    else
        fail "$1" "$HARNESS_WHY"
    fi
}

expect_refused_eq() { # expect_refused_eq NAME GOT WANT: GOT = WANT and the server still answers
    if [ "$2" != "$3" ]; then
        fail "$1" "expected '$3', got '$2'"
    elif _alive_ok; then
        pass "$1"
    else
        fail "$1" "$HARNESS_WHY"
    fi
}

finish() {
    echo "$HARNESS_PASSED passed, $HARNESS_FAILED failed"
    [ "$HARNESS_FAILED" = 0 ]
}
skip() { echo "SKIP: $*"; exit 77; }
abort() { fail "$*"; finish; exit 1; }

# ------------------------------------------------------------------ clean-up
on_exit() { HARNESS_EXIT+=("$(printf '%q ' "$@")"); }

_harness_exit() {
    local rc=$? i name
    set +e # clean-up runs to the end even in a `set -e` script
    for ((i = ${#HARNESS_EXIT[@]} - 1; i >= 0; i--)); do eval "${HARNESS_EXIT[$i]}" >/dev/null 2>&1; done
    for name in "${!HARNESS_PIDS[@]}"; do stop_service "$name" 5 >/dev/null 2>&1; done
    _release_ports
    [ -n "${HARNESS_TMP:-}" ] && [ "${HARNESS_KEEP:-0}" != 1 ] && rm -rf "$HARNESS_TMP"
    exit $rc
}
trap _harness_exit EXIT
trap 'exit 130' INT TERM

# sshd_test_options: sshd_config lines every test sshd needs on this OpenSSH. 9.8+ penalises
# a source address after failed logins (PerSourcePenalties): a test's deliberate refusals
# would make sshd drop every later connection from 127.0.0.1. Older sshd rejects the keyword.
sshd_has_penalties() { grep -aq persourcepenalties /usr/sbin/sshd 2>/dev/null; }
sshd_test_options() { if sshd_has_penalties; then echo "PerSourcePenalties no"; fi; }

# private_etc DIR: in the caller's own mount namespace (unshare -m), /etc becomes an overlay
# whose upper layer is a tmpfs of this namespace mounted on DIR/etc-overlay: what the test
# then writes there (passwd, group, sshd_config...) is this namespace's alone. Never a bind
# mount over one file of /etc: the useradd/userdel of labs running beside the test replace
# /etc/passwd and /etc/group by rename, which detaches such a bind in every namespace, and the
# test goes on reading, and writing, the real file (docs/lab.md G25).
private_etc() {
    local o=$1/etc-overlay
    mkdir -p "$o" && mount -t tmpfs tmpfs "$o" && on_exit umount -l "$o" &&
        mkdir "$o/upper" "$o/work" &&
        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$o/upper,workdir=$o/work" /etc &&
        on_exit umount -l /etc
}

harness_tmpdir() { HARNESS_TMP=$(mktemp -d "/tmp/allot-${1:-test}.XXXXXX"); }

# ------------------------------------------------------------------ services
_pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

start_service() { # start_service NAME CMD...
    local name=$1 log
    shift
    [ -n "${HARNESS_TMP:-}" ] || harness_tmpdir test
    log=$HARNESS_TMP/$name.log
    setsid "$@" </dev/null >>"$log" 2>&1 &
    HARNESS_PIDS[$name]=$!
}
service_pid() { echo "${HARNESS_PIDS[$1]:-}"; }
service_alive() { _pid_alive "${HARNESS_PIDS[$1]:-}"; }

stop_service() { # stop_service NAME [SECONDS]
    local name=$1 t=${2:-15} pid i
    pid=${HARNESS_PIDS[$name]:-}
    unset "HARNESS_PIDS[$name]"
    _pid_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < t * 10; i++)); do _pid_alive "$pid" || break; sleep 0.1; done
    _pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
    return 0
}

wait_for() { # wait_for SECONDS WHAT CMD...: a liveness bound, not a timing assertion
    local bound=$1 what=$2 end=$(($(date +%s) + $1))
    shift 2
    while [ "$(date +%s)" -lt "$end" ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "gave up waiting for $what after $bound s" >&2
    return 1
}

_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { wait_for "${2:-30}" "port $1" _port_open "$1"; }

# ------------------------------------------------------------------ ports
# A port is free when nothing can be bound on it now (checked on every address) and no
# running test has reserved it; the reservation (a directory named after the port, holding
# the owner's PID) covers the moment between picking a port and the daemon binding it.
_ports_bindable() { # _ports_bindable FIRST N
    python3 - "$1" "$2" <<'PY'
import socket, sys
first, n = int(sys.argv[1]), int(sys.argv[2])
held = []
try:
    for p in range(first, first + n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        held.append(s)
        s.bind(("", p))
except OSError:
    sys.exit(1)
PY
}

# _reserve PORT: claims PORT for this test (process $$, also from $(...) subshells); a
# claim whose owner has exited is taken over.
_reserve() {
    local d=$HARNESS_PORT_DIR/$1 owner
    mkdir -p "$HARNESS_PORT_DIR" 2>/dev/null && chmod 1777 "$HARNESS_PORT_DIR" 2>/dev/null
    if ! mkdir "$d" 2>/dev/null; then
        owner=$(cat "$d/owner" 2>/dev/null)
        if [ -z "$owner" ]; then # being claimed right now, or its claimer died at once
            [ -n "$(find "$d" -maxdepth 0 -mmin +1 2>/dev/null)" ] || return 1
        elif _pid_alive "$owner"; then
            return 1
        fi
        rm -rf "$d"
        mkdir "$d" 2>/dev/null || return 1
    fi
    echo "${HARNESS_PORT_OWNER:-$$}" >"$d/owner"
}
_unreserve() { local p; for p in "$@"; do rm -rf "${HARNESS_PORT_DIR:?}/$p"; done; }
_release_ports() {
    local d
    for d in "$HARNESS_PORT_DIR"/*/; do
        [ "$(cat "$d/owner" 2>/dev/null)" = "${HARNESS_PORT_OWNER:-$$}" ] && rm -rf "$d"
    done
    return 0
}

free_port_block() { # free_port_block N: first of N consecutive ports, below the ephemeral range
    local n=${1:-1} lo hi base p k got
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
    hi=$((lo - n - 1)) lo=20000
    for _ in $(seq 1 200); do
        base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
        got=()
        for ((k = 0; k < n; k++)); do
            p=$((base + k))
            _reserve "$p" || break
            got+=("$p")
        done
        if [ ${#got[@]} = "$n" ] && _ports_bindable "$base" "$n"; then
            echo "$base"
            return 0
        fi
        _unreserve "${got[@]}"
    done
    echo "free_port_block: no $n free consecutive ports" >&2
    return 1
}
free_port() { free_port_block 1; }
