#!/bin/bash
# dev.sh - the two set-up commands of the README, and their parts.
#
#   sudo ./dev.sh demo    install what is needed, build, and bring up a demo cluster on this
#                         machine with allot's policy in force (stop it: sudo ./dev.sh demo-down)
#   sudo ./dev.sh test    install, build and run every test: unit tests, the real-cluster lab,
#                         make distcheck and an RPM build (CI runs exactly this)
#
# Parts: install | build | check | distcheck | rpm | asan | matrix | demo-down. Debian 12, as root.
set -euo pipefail
TOP=$(cd "$(dirname "$0")" && pwd)
cd "$TOP"

step() { printf '\n==> %s\n' "$*"; }

install_packages() {
    step "installing build and test dependencies (.ci/packages)"
    [ "$(id -u)" = 0 ] || { echo "dev.sh: run as root (sudo)"; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=900 update -q
    # shellcheck disable=SC2046
    apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
        $(grep -v '^#' .ci/packages | sort -u)
    # Node.js runs the OIDC relying-party test (jose, openid-client) and the benchmark peers.
    # Install Debian's only when none is there: Debian's npm conflicts with NodeSource's nodejs.
    if ! command -v npm >/dev/null 2>&1; then
        apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends nodejs npm
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
    ALLOT_LAB=1 ALLOT_FUZZ=1 ALLOT_FUZZ_SECONDS=${ALLOT_FUZZ_SECONDS:-20} make -j"$(nproc)" check || rc=$?
    summarize
    return $rc
}

# One closing line over every test case of every test (.trs), gtest and script tests alike
# (`[       OK ]` / `ok - ` lines); a test that failed without naming a failed case (a crash,
# an abort, a timeout) counts as one failure.
summarize() {
    local passed=0 failed=0 trs log p f
    while IFS= read -r trs; do
        log=${trs%.trs}.log
        p=$(grep -cE '^\[       OK \]|^ok - ' "$log" 2>/dev/null || true)
        f=$(grep -cE '^\[  FAILED  \] [A-Za-z]+\.[A-Za-z]+ \(|^not ok - ' "$log" 2>/dev/null || true)
        if [ "${f:-0}" = 0 ] && grep -qE '^:test-result: (FAIL|ERROR)' "$trs"; then f=1; fi
        passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
    done < <(find . -path './allot-*' -prune -o -name '*.trs' -print)
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

# Unit and ABI tests again with ASan+UBSan, from the dist tarball (the tree is configured in place).
asan_check() {
    step "make check with --enable-sanitizers (ASan, UBSan)"
    local dir tarball
    dir=$(mktemp -d)
    tarball=$(ls -t allot-*.tar.gz | head -1)
    tar -C "$dir" -xzf "$tarball"
    (cd "$dir"/allot-* && ./configure -q --enable-sanitizers && make -j"$(nproc)" >/dev/null &&
        ASAN_OPTIONS=detect_leaks=1 make -j"$(nproc)" check) || { rm -rf "$dir"; return 1; }
    rm -rf "$dir"
}

# The other Slurm releases (docs/slurm-versions.md): for each Debian suite, a cached chroot
# builds the dist tarball against that suite's Slurm, its RPMs, and runs the whole lab suite.
# The legs run at the same time as each other (and, in `test`, as bookworm's own steps): each
# in its own network and PID namespace, its output in $MATRIX_LOGS/<suite>.log.
# ALLOT_CI_MATRIX: the suites `test` runs ("trixie sid"; empty: none).
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
        grep -E '^\[matrix |^[0-9]+ passed, [0-9]+ failed|^FAIL: |^ERROR: ' "$MATRIX_LOGS/$suite.log" | tail -25
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

demo() {
    install_packages
    build
    step "starting the demo cluster"
    export LAB=${LAB:-/tmp/allot-demo}
    export ALLOT_CONFIG=$TOP/tests/lab/allot-lab.yaml
    export LAB_PLUGINS=$TOP/plugins/job_submit/.libs/job_submit_allot.so
    tests/lab/lab-up.sh
    tests/lab/lab-accounts.sh # allot-syncd creates the accounting from tests/lab/lab-directory.txt
    cat <<MSG

The demo cluster runs in $LAB with job_submit/allot enforcing tests/lab/allot-lab.yaml, on
the accounts and QOS that allot-syncd created from the lab directory (tests/lab/lab-directory.txt):
two 8-GPU nodes; team-a (alice, carol) has 8 GPUs, team-b (dave) 4; bob is in no team.
Try, as root:
  source $LAB/env.sh
  runuser -u bob -- sbatch --gpus=1 --wrap hostname            # rejected: not in a team
  runuser -u alice -- sbatch --gpus=12 --wrap hostname         # rejected: can never fit, says why
  runuser -u alice -- sbatch --gpus=2 --wrap 'sleep 60'        # project QOS + per-GPU defaults
  runuser -u alice -- sbatch --qos=spot --gpus=8 --wrap 'sleep 600'   # preemptible, requeued
  scontrol show job <id>
Stop it with: sudo ./dev.sh demo-down
MSG
}

case "${1:-}" in
install) install_packages ;;
build) build ;;
check) check ;;
distcheck) distcheck ;;
rpm) rpm_build ;;
asan) asan_check ;;
matrix) matrix ;;
demo) demo ;;
demo-down) LAB=${LAB:-/tmp/allot-demo} tests/lab/lab-down.sh ;;
test)
    install_packages
    matrix_prepare
    build
    matrix_start
    rc=0
    check || rc=$?
    if [ $rc = 0 ]; then distcheck && rpm_build && asan_check || rc=$?; fi
    summarize
    matrix_wait || rc=1
    exit $rc
    ;;
*) sed -n '2,12p' "$0"; exit 2 ;;
esac
