#!/bin/bash
# harness-test.sh - the shell test library itself: verdicts, the alive probe, services,
# clean-up and free ports. Each case runs in a child bash so a wrong verdict is visible.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/harness.sh"

child() { # child SCRIPT: runs SCRIPT after sourcing the library; prints its output
    bash -c ". '$HERE/harness.sh'; $1" 2>&1
}

out=$(child 'check "t" true; check "f" false; expect_eq "e" a a; finish')
expect_contains "a passing and a failing check are counted" "$out" "2 passed, 1 failed"
expect_contains "failures print not ok" "$out" "not ok - f"
out=$(child 'expect_eq "e" a a; finish'); rc=$?
expect_eq "finish exits 0 when all passed" "$rc" 0
out=$(child 'fail x; finish'); rc=$?
expect_eq "finish exits 1 when one failed" "$rc" 1

out=$(child 'alive_probe true; check_fails "refused" false; finish')
expect_contains "check_fails passes when refused and the probe answers" "$out" "1 passed, 0 failed"
out=$(child 'alive_probe false; check_fails "refused" false; finish')
expect_contains "check_fails fails when the server is dead" "$out" "0 passed, 1 failed"
out=$(child 'alive_probe false; expect_refused "refused" "401 denied" denied; finish')
expect_contains "expect_refused fails when the server is dead" "$out" "did not answer its positive request"
out=$(child 'alive_probe false; expect_refused_eq "exit 5" 5 5; alive_probe true; expect_refused_eq "exit 5" 5 5; finish')
expect_contains "expect_refused_eq needs the alive probe too" "$out" "1 passed, 1 failed"
out=$(child 'check_fails "ok" true; finish')
expect_contains "check_fails fails when the command succeeds" "$out" "0 passed, 1 failed"

harness_tmpdir harness-test
port=$(free_port)
expect_match "free_port prints a port" "$port" '^[0-9]+$'
check "the port is reserved for this test" test "$(cat "$HARNESS_PORT_DIR/$port/owner")" = $$
check "the port can be bound" _ports_bindable "$port" 1
start_service listener python3 -c "import socket,time;s=socket.socket();s.bind(('127.0.0.1',$port));s.listen();time.sleep(600)"
check "start_service + wait_port" wait_port "$port" 30
check_fails "a port in use is not bindable" _ports_bindable "$port" 1
base=$(free_port_block 5)
check "free_port_block reserves every port of the block" \
    test -d "$HARNESS_PORT_DIR/$base" -a -d "$HARNESS_PORT_DIR/$((base + 4))"
other=$(free_port)
check "two allocations never overlap" test "$other" != "$port" -a \( "$other" -lt "$base" -o "$other" -gt $((base + 4)) \)
pid=$(service_pid listener)
stop_service listener
check_fails "stop_service stopped exactly that PID" kill -0 "$pid"

# Clean-up of a child test: its services stop, its reservations go, on_exit runs.
marker=$HARNESS_TMP/marker
out=$(child "harness_tmpdir child; start_service s sleep 600; echo \$(service_pid s) >'$marker.pid';
    p=\$(free_port); echo \$p >'$marker.port'; on_exit touch '$marker'; exit 3")
rc=$?
expect_eq "the exit status survives the clean-up" "$rc" 3
check "on_exit ran" test -e "$marker"
check_fails "the child's service was stopped" kill -0 "$(cat "$marker.pid")"
check_fails "the child's ports were released" test -e "$HARNESS_PORT_DIR/$(cat "$marker.port")"
bash -c "set -e; . '$HERE/harness.sh'; start_service s sleep 600; true" >/dev/null 2>&1
expect_eq "a set -e script that stops a service at exit still exits 0" "$?" 0
HARNESS_TMP_SAVE=$HARNESS_TMP
out=$(HARNESS_TMP=$HARNESS_TMP child 'true')
check "a child sourcing the library never removes the parent's directory" test -d "$HARNESS_TMP_SAVE"
finish
