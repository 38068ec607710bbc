#!/bin/bash
# dev.sh - the two set-up commands of the README, and their parts.
#
#   ./dev.sh demo         install what is needed, build, and bring up the whole system on this
#                         machine with allot's policy in force, print its walkthrough and the
#                         time to the first policy-enforced job (stop it: ./dev.sh demo-down)
#   ./dev.sh demo-shell USER   a shell as a demo user (ada, ben, cleo, dan)
#   ./dev.sh test         install, build and run every test: unit tests, the real-cluster lab,
#                         make distcheck and an RPM build (CI runs exactly this)
#
# Parts: install | build | check | distcheck | rpm | asan | tsan | matrix | demo-down. Debian 12;
# commands that need root run through sudo when not started as root.
set -euo pipefail
TOP=$(cd "$(dirname "$0")" && pwd)
cd "$TOP"

step() { printf '\n==> %s\n' "$*"; }

# install_packages [demo]: .ci/packages, or only its part before "# --- tests only" (the demo
# needs no test tool: a bare machine reaches its first job sooner).
install_packages() {
    local part=.ci/packages
    [ "${1:-}" = demo ] && part=".ci/packages up to its tests-only part"
    step "installing build and test dependencies ($part)"
    [ "$(id -u)" = 0 ] || { echo "dev.sh: run as root (sudo)"; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=900 update -q
    # shellcheck disable=SC2046
    apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
        $(if [ "${1:-}" = demo ]; then sed '/^# --- tests only/q' .ci/packages; else cat .ci/packages; fi |
            grep -v '^#' | sort -u)
    [ "${1:-}" != demo ] || return 0
    # Node.js runs the OIDC relying-party test (jose, openid-client) and the benchmark peers.
    # Install Debian's only when none is there: Debian's npm conflicts with NodeSource's nodejs.
    if ! command -v npm >/dev/null 2>&1; then
        apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends nodejs npm
    fi
    # kubectl drives allot-kube-token in the rotation test. Debian's (1.20) only where none is
    # installed: it would overwrite another package's /usr/bin/kubectl and fail the install.
    if ! command -v kubectl >/dev/null 2>&1; then
        apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends kubernetes-client
    fi
}

build() {
    step "building"
    [ -x configure ] || autoreconf -fi
    [ -f Makefile ] || ./configure ${ALLOT_CONFIGURE_FLAGS:-}
    make -j"$(nproc)"
}

# Runs make check with the lab and prints one closing line over every test case.
check() {
    step "make check (unit tests, ABI checks and the real-cluster lab)"
    local rc=0
    # The fuzz targets run for a bounded time each (fuzz/README.md).
    # -k: every directory's tests run, so one failure does not hide the others'.
    ALLOT_LAB=1 ALLOT_FUZZ=1 ALLOT_FUZZ_SECONDS=${ALLOT_FUZZ_SECONDS:-20} make -k -j"$(nproc)" check || rc=$?
    summarize --tails
    return $rc
}

# One closing line over every test case of every test (.trs), gtest and script tests alike
# (`[       OK ]` / `ok - ` lines); a test that failed without naming a failed case (a crash,
# an abort, a timeout) counts as one failure. --tails: each failed test's log excerpt first.
summarize() {
    local passed=0 failed=0 trs log p f failed_logs=()
    while IFS= read -r trs; do
        log=${trs%.trs}.log
        p=$(grep -cE '^\[       OK \]|^ok - ' "$log" 2>/dev/null || true)
        f=$(grep -cE '^\[  FAILED  \] [A-Za-z]+\.[A-Za-z]+ \(|^not ok - ' "$log" 2>/dev/null || true)
        if grep -qE '^:test-result: (FAIL|ERROR)' "$trs"; then
            failed_logs+=("$log")
            [ "${f:-0}" = 0 ] && f=1
        fi
        passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
    done < <(find . -path './allot-*' -prune -o -name '*.trs' -print)
    # CI keeps only this output: a failed test's own words, not just its name.
    [ "${1:-}" = --tails ] || failed_logs=()
    for log in "${failed_logs[@]}"; do
        echo "==> FAILED ${log#./}: its failed cases and last lines"
        { grep -E -A8 '^not ok - |^\[  FAILED  \]' "$log" | head -60; tail -30 "$log"; } | sed 's/^/| /'
    done
    echo "$passed passed, $failed failed"
}

distcheck() {
    step "make distcheck"
    make -j"$(nproc)" distcheck
}

rpm_build() {
    step "rpmbuild -ta on the dist tarball"
    local top tarball
    top=$(mktemp -d)
    tarball=$(ls -t allot-*.tar.gz | head -1)
    # Debian's RPM database is empty, so BuildRequires cannot be checked here (--nodeps).
    rpmbuild --define "_topdir $top" --nodeps -ta "$tarball"
    find "$top/RPMS" -name '*.rpm' -printf '%f\n'
    # Payload, scriptlets and dependencies, and an `rpm --root` install (docs/install.md).
    local rc=0
    rpm/check-rpms.sh "$top/RPMS" || rc=$?
    rm -rf "$top"
    return $rc
}

# sanitized_check <address|thread> <command...>: configure the dist tarball (the tree is
# configured in place) with that sanitizer in a scratch directory and run the command there.
sanitized_check() {
    local kind=$1 dir tarball rc=0
    shift
    dir=$(mktemp -d)
    tarball=$(ls -t allot-*.tar.gz | head -1)
    tar -C "$dir" -xzf "$tarball"
    (cd "$dir"/allot-* && ./configure -q --enable-sanitizers="$kind" && "$@") || rc=1
    # The scratch tree goes: a failed test's own log is printed first.
    grep -l '^:test-result: \(FAIL\|ERROR\)' -r "$dir" --include='*.trs' 2>/dev/null | while read -r trs; do
        echo "==> FAILED ${trs%.trs}.log under $kind: its last lines"
        tail -40 "${trs%.trs}.log" | sed 's/^/| /'
    done || true # grep finds nothing when all passed (pipefail)
    rm -rf "$dir"
    return $rc
}

# Unit and ABI tests again with ASan+UBSan.
asan_check() {
    step "make check with --enable-sanitizers (ASan, UBSan)"
    sanitized_check address bash -c 'make -j"$(nproc)" >/dev/null &&
        ASAN_OPTIONS=detect_leaks=1 make -j"$(nproc)" check'
}

# allot-scimd's threads (event loops, workers, caches) under ThreadSanitizer: lib and scim
# only, its unit tests and the scripts that drive a real daemon (lab ones skip). Any report
# fails the test that started the daemon (halt_on_error, exitcode 66).
tsan_check() {
    step "make check of scim with --enable-sanitizers=thread (TSan)"
    sanitized_check thread bash -c 'make -j"$(nproc)" -C lib >/dev/null && make -j"$(nproc)" -C scim >/dev/null &&
        TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" make -j"$(nproc)" -C scim check'
}

# The other Slurm releases (docs/slurm-versions.md): for each Debian suite, a cached chroot
# builds the dist tarball against that suite's Slurm, its RPMs, and runs the whole lab suite.
# The legs run at the same time as each other (and, in `test`, as bookworm's own steps): each
# in its own network and PID namespace, its output in $MATRIX_LOGS/<suite>.log.
# ALLOT_CI_MATRIX: the suites `test` runs (default both; `ALLOT_CI_MATRIX= ./dev.sh test`
# runs bookworm alone).
MATRIX_SUITES=${ALLOT_CI_MATRIX-trixie sid}
MATRIX_LOGS=${ALLOT_MATRIX_LOGS:-/tmp/allot-matrix-logs}
MATRIX_PIDS=()

# Each suite's root and packages (debootstrap, apt), in the background, before allot is built.
matrix_prepare() {
    local suite
    [ -n "$MATRIX_SUITES" ] || return 0
    rm -rf "$MATRIX_LOGS" && mkdir -p "$MATRIX_LOGS"
    for suite in $MATRIX_SUITES; do
        step "preparing the $suite chroot in the background ($MATRIX_LOGS/$suite.log)"
        (rc=0
            tests/matrix/run.sh "$suite" prepare >"$MATRIX_LOGS/$suite.log" 2>&1 || rc=$?
            echo "$rc" >"$MATRIX_LOGS/$suite.prepared") &
    done
}

# The legs proper, in the background: each waits for its root, then builds this tree's dist
# tarball against its Slurm and runs the lab suite. A sid that printed SKIP stays skipped.
matrix_start() {
    local suite tarball
    [ -n "$MATRIX_SUITES" ] || return 0
    step "make dist for the chroot legs"
    make -s dist >/dev/null
    tarball=$MATRIX_LOGS/$(ls -t allot-*.tar.gz | head -1)
    cp "$(ls -t allot-*.tar.gz | head -1)" "$tarball"
    for suite in $MATRIX_SUITES; do
        (while [ ! -f "$MATRIX_LOGS/$suite.prepared" ]; do sleep 5; done
            rc=$(cat "$MATRIX_LOGS/$suite.prepared")
            if [ "$rc" = 0 ] && ! grep -q 'SKIP: ' "$MATRIX_LOGS/$suite.log"; then
                ALLOT_MATRIX_TARBALL=$tarball tests/matrix/run.sh "$suite" >>"$MATRIX_LOGS/$suite.log" 2>&1 || rc=$?
            fi
            exit "$rc") &
        MATRIX_PIDS+=("$!")
    done
}

# Waits for the legs and prints each one's end (its closing line last). 1: a leg failed.
matrix_wait() {
    local i suite rc=0 leg
    [ -n "$MATRIX_SUITES" ] || return 0
    i=0
    for suite in $MATRIX_SUITES; do
        leg=0
        wait "${MATRIX_PIDS[i]}" || leg=$?
        i=$((i + 1))
        step "Slurm of Debian $suite in a chroot (tests/matrix/run.sh $suite): exit $leg"
        grep -E '^\[matrix |^[0-9]+ passed, [0-9]+ failed|^FAIL: |^ERROR: |^==> FAILED |^\| ' \
            "$MATRIX_LOGS/$suite.log" | tail -"$([ "$leg" = 0 ] && echo 25 || echo 150)"
        [ "$leg" = 0 ] || rc=1
    done
    return $rc
}

matrix() {
    MATRIX_SUITES=${ALLOT_MATRIX_SUITES:-trixie sid}
    matrix_prepare
    [ -f Makefile ] || build
    matrix_start
    matrix_wait
}

# The whole system on this machine (tests/demo/demo-lib.sh), its walkthrough
# (etc/demo/walkthrough.txt) and the time from here to the first policy-enforced GPU job.
demo() {
    local t0 t1 t2
    t0=$(date +%s.%N)
    install_packages demo
    t1=$(date +%s.%N)
    build
    t2=$(date +%s.%N)
    step "starting the demo: allot-scimd, Slurm, allot-syncd, sshd, allot-exporter, allot-report"
    # shellcheck disable=SC1091
    . tests/demo/demo-lib.sh
    set +e # the demo's steps report their own failures
    demo_up || { echo "dev.sh: the demo did not come up; logs in $DEMO/log (./dev.sh demo-down)"; exit 1; }
    step "allot-doctor --role controller"
    demo_doctor || true
    echo
    echo "The demo runs in $DEMO: two 8-GPU nodes; team vision (ada, ben) has 8 GPUs, team"
    echo "nlp (cleo) 4, dan is in no team. Policy: etc/demo/allot.yaml; directory:"
    echo "etc/demo/directory.yaml (allot-scimd on https://127.0.0.1:$SCIM_PORT); compute-node"
    echo "sshd on 127.0.0.1:$SSH_PORT (ssh node); metrics on http://127.0.0.1:$EXPORTER_PORT/metrics;"
    echo "job templates in \$TEMPLATES; allot-report's page, rewritten every minute (\$REPORT in"
    echo "demo-shell): open file://$DEMO/report/index.html in a browser."
    echo "The walkthrough (tests/demo/walkthrough.sh checks it):"
    walk_print
    printf '\nTime to the first policy-enforced job (%s, accepted into its project QOS):\n' "$FIRST_JOB"
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$T_START" -v u="$T_UP" -v e="$T_SYNC" -v f="$T_JOB" 'BEGIN {
        printf "  install %.0f s, build %.0f s, start %.0f s, first sync %.0f s, first GPU job %.0f s: total %.0f s\n",
            b - a, c - b, u - d, e - u, f - e, f - a }'
    echo "Stop it with: ./dev.sh demo-down (as root; sudo ./dev.sh demo-down otherwise)"
}

# A shell as a demo user, in the demo's mount namespace (the host's nsswitch.conf is untouched).
demo_shell() {
    # shellcheck disable=SC1091
    . tests/demo/demo-lib.sh
    set +e
    [ -s "$DEMO/run/ns.pid" ] || { echo "dev.sh: no demo runs in $DEMO (./dev.sh demo)"; exit 1; }
    [ -n "${1:-}" ] || { echo "usage: ./dev.sh demo-shell USER (ada, ben, cleo, dan)"; exit 2; }
    as_user "$1" bash
}

# As printed in the README: root runs these directly (containers, CI); anyone else through sudo.
case "${1:-}" in
install | demo | demo-shell | demo-down | test | matrix)
    if [ "$(id -u)" != 0 ]; then exec sudo "$0" "$@"; fi ;;
esac

case "${1:-}" in
install) install_packages ;;
build) build ;;
check) check ;;
distcheck) distcheck ;;
rpm) rpm_build ;;
asan) asan_check ;;
tsan) tsan_check ;;
matrix) matrix ;;
demo) demo ;;
demo-shell) demo_shell "${2:-}" ;;
demo-down) . tests/demo/demo-lib.sh && set +e && demo_down ;;
test)
    install_packages
    matrix_prepare
    build
    matrix_start
    rc=0
    check || rc=$?
    if [ $rc = 0 ]; then distcheck && rpm_build && asan_check && tsan_check || rc=$?; fi
    summarize
    matrix_wait || rc=1
    exit $rc
    ;;
*) sed -n '2,12p' "$0"; exit 2 ;;
esac
