#!/bin/bash
# tests/matrix/run-one.sh - a few lab tests against one suite's Slurm, in its cached chroot,
# without a whole leg (for iterating on one deliverable; run.sh runs the whole suite).
#
#   tests/matrix/run-one.sh trixie|sid|bookworm TEST...      (as root)
#   e.g. tests/matrix/run-one.sh sid plugins/job_submit/tests/lab-policy.sh
#
# TEST is a script path relative to the source tree (or an absolute path of a script of
# one's own, which can source /root/run-one-src/tests/lab/lab-lib.sh). The cached root that run.sh made
# ($ALLOT_CHROOT_CACHE/chroot-<suite>, default /var/cache/allot) is used read-only: an
# overlay whose writable layer is $ALLOT_RUN_ONE_DIR (default /tmp/allot-run-one-<suite>)
# holds this tree's copy (/root/run-one-src), an out-of-tree build (/root/run-one-build) kept
# between runs, so a rebuild is incremental, and whatever the lab writes (users, /tmp).
# Only what lab tests of job_submit, SPANK and syncd need is built (lib, the plugins,
# syncd, the test harness), not the whole tree; ALLOT_RUN_ONE_MAKE="dir ..." overrides.
#
# Everything is mounted in a private mount namespace of this script (the overlay, /proc,
# /sys, /dev, /dev/pts, /dev/shm), unmounted in reverse at exit, and never seen by run.sh
# legs using the same cached root at the same time. The tests run as run.sh runs them:
# own network and PID namespaces, loopback plus a veth with a private IPv4 (slurmdbd
# 24.11+ binds through getaddrinfo(AI_ADDRCONFIG)). Each test's output is printed; the
# last line is the sum of the tests' closing lines, `N passed, N failed`. /tmp is a tmpfs
# of this run (emptied at its end), so a test can mount an overlay of its own there.
set -euo pipefail
# One compound command: bash has read all of it before it starts, so editing this file while
# it runs is safe.
{
SUITE=${1:-}
case "$SUITE" in
bookworm | trixie | sid) shift ;;
*) sed -n '2,21p' "$0"; exit 2 ;;
esac
[ $# -gt 0 ] || { sed -n '2,6p' "$0"; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run-one.sh: run as root (overlay, chroot, namespaces)"; exit 1; }
command -v rsync >/dev/null || { echo "run-one.sh: needs rsync (apt-get install rsync)"; exit 1; }

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/test-ns.sh"
TOP=$(cd "$HERE/../.." && pwd)
LOWER=${ALLOT_CHROOT_CACHE:-/var/cache/allot}/chroot-$SUITE
WORK=${ALLOT_RUN_ONE_DIR:-/tmp/allot-run-one-$SUITE}
ROOT=$WORK/root
[ -d "$LOWER/usr/sbin" ] || { echo "run-one.sh: no cached root $LOWER: run tests/matrix/run.sh $SUITE once"; exit 1; }

# The rest runs in a mount namespace of its own: no mount leaks to the host or to a leg.
if [ -z "${ALLOT_RUN_ONE_NS:-}" ]; then
    ALLOT_RUN_ONE_NS=1 exec unshare --mount --propagation private "$0" "$SUITE" "$@"
fi

say() { printf '[run-one %s] %s\n' "$SUITE" "$*"; }

MOUNTED=()
cleanup() {
    local rc=$?
    release_root "$ROOT"
    exit $rc
}
trap cleanup EXIT

mkdir -p "$WORK/upper" "$WORK/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$LOWER,upperdir=$WORK/upper,workdir=$WORK/work" "$ROOT" &&
    MOUNTED+=("$ROOT")
mount -t proc proc "$ROOT/proc" && MOUNTED+=("$ROOT/proc")
mount -t sysfs sysfs "$ROOT/sys" && MOUNTED+=("$ROOT/sys")
mount --bind /dev "$ROOT/dev" && MOUNTED+=("$ROOT/dev")
mount --bind /dev/pts "$ROOT/dev/pts" && MOUNTED+=("$ROOT/dev/pts")
mount -t tmpfs -o mode=1777 shm "$ROOT/dev/shm" && MOUNTED+=("$ROOT/dev/shm")
# /tmp and /run on tmpfs: a test's own overlay (spank-lab.sh's NSS view, sshd-login.sh's)
# needs an upper layer that is not itself on overlayfs.
mount -t tmpfs -o mode=1777 tmp "$ROOT/tmp" && MOUNTED+=("$ROOT/tmp")
mount -t tmpfs -o mode=0755 run "$ROOT/run" && MOUNTED+=("$ROOT/run") # likewise (sshd-login.sh)
chmod 0711 "$ROOT/root" # lab users run programs of the tree under /root (as run.sh)
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
cp /etc/hosts "$ROOT/etc/hosts"

# This tree as it is now, without the autotools output: the suite's own autoreconf makes
# that (the host's is another automake, and other builds rewrite it in place). Excluded
# files survive --delete, so the copy's generated files are kept between runs. Files are
# compared by content and a changed one gets the time of the copy, not the host's: an
# object built from an older copy must never look newer than the file it now depends on.
rsync -rlpD --checksum --delete --exclude=.git --exclude=autom4te.cache --exclude='*.o' --exclude='*.lo' \
    --exclude='.libs' --exclude='.deps' --exclude=Makefile.in --exclude=/configure \
    --exclude=/aclocal.m4 --exclude=/build-aux --exclude='/config.h.in*' --exclude='/configure~' \
    --exclude='/m4/libtool.m4' --exclude='/m4/lt*.m4' "$TOP/" "$ROOT/root/run-one-src/"

in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 "$@"; }

DIRS=${ALLOT_RUN_ONE_MAKE:-lib plugins/job_submit plugins/spank plugins/nss plugins/pam syncd syncd/keys tests}
say "building $DIRS against $(in_root dpkg-query -W -f 'slurmctld ${Version}' slurmctld)"
in_root bash -c "cd /root/run-one-src &&
    { [ -x configure ] && [ -z \"\$(find configure.ac m4 -newer configure)\" ] || autoreconf -fi >/dev/null 2>&1; } &&
    mkdir -p /root/run-one-build && cd /root/run-one-build &&
    { [ config.status -nt /root/run-one-src/configure ] || /root/run-one-src/configure -q; } &&
    for d in $DIRS; do make -s -j$(nproc) -C \$d >>make.log 2>&1 || { tail -30 make.log; exit 1; }; done" ||
    { say "FAILED: build"; exit 1; }

# As run.sh runs a leg's tests (test-ns.sh), with this copy's build.
run_test() {
    in_test_ns "$ROOT" ALLOT_LAB=1 ALLOT_TOP_SRCDIR=/root/run-one-src ALLOT_TOP_BUILDDIR=/root/run-one-build \
        ${DIFF_SEED:+DIFF_SEED=$DIFF_SEED} ${DIFF_CASES:+DIFF_CASES=$DIFF_CASES} "$@"
}

passed=0 failed=0 rc=0
for t in "$@"; do
    say "$t"
    out=$(mktemp)
    path=/root/run-one-src/$t
    # A script of one's own outside the tree (a probe): copied in and run from there.
    if [[ "$t" == /* ]]; then
        mkdir -p "$ROOT/root/run-one-extra" && cp "$t" "$ROOT/root/run-one-extra/"
        path=/root/run-one-extra/$(basename "$t")
    fi
    run_test bash "$path" 2>&1 | tee "$out" || rc=1
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1 || true)
    [ -n "$line" ] || { line="0 passed, 1 failed"; rc=1; }
    passed=$((passed + $(cut -d' ' -f1 <<<"$line")))
    failed=$((failed + $(cut -d' ' -f3 <<<"$line")))
    rm -f "$out"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && exit $rc || exit 1
}
