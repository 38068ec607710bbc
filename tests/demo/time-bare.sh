#!/bin/bash
# time-bare.sh - how long `./dev.sh demo` takes on a bare Debian 12 machine, packages
# included: a fresh `debootstrap --variant=minbase bookworm` root stands in for the machine
# (its making is not counted: a machine comes with its system), a clone of this tree's HEAD
# is put in it, and `./dev.sh demo` runs there as root, with this machine's network (apt
# downloads from the mirror this machine uses). The demo prints its own breakdown (install,
# build, start, first sync, first GPU job); then it is stopped and the root removed.
#
#   tests/demo/time-bare.sh [DIR]      (root; DIR default /tmp/allot-bare, removed first)
set -euo pipefail
{
[ "$(id -u)" = 0 ] || { echo "time-bare.sh: run as root"; exit 1; }
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/matrix/test-ns.sh"
ROOT=${1:-/tmp/allot-bare}
if [ -z "${ALLOT_BARE_NS:-}" ]; then # every mount private to this run
    ALLOT_BARE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
say() { printf '[bare %4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
T0=$(date +%s)
mirror=$(bash -c ". <(sed -n '/^host_mirror()/,/^}/p' '$TOP/tests/matrix/run.sh'); host_mirror")

MOUNTED=()
cleanup() {
    local rc=$?
    release_root "$ROOT"
    rm -rf "$ROOT"
    exit $rc
}
trap cleanup EXIT

rm -rf "$ROOT"
say "debootstrap bookworm from $mirror (not counted)"
debootstrap --variant=minbase bookworm "$ROOT" "$mirror" >/tmp/allot-bare-debootstrap.log 2>&1 ||
    { tail -5 /tmp/allot-bare-debootstrap.log; exit 1; }
# No service starts at package install (the host's MariaDB port): the demo starts its own.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod 755 "$ROOT/usr/sbin/policy-rc.d"
apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' >"$ROOT/etc/apt/apt.conf.d/99allot-bare" || true
mount --bind "$ROOT" "$ROOT" && MOUNTED+=("$ROOT")
mount -t proc proc "$ROOT/proc" && MOUNTED+=("$ROOT/proc")
mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys" && MOUNTED+=("$ROOT/sys") # with its cgroup tree, as a machine has
mount --bind /dev "$ROOT/dev" && MOUNTED+=("$ROOT/dev")
mount --bind /dev/pts "$ROOT/dev/pts" && MOUNTED+=("$ROOT/dev/pts")
mount -t tmpfs -o mode=1777 shm "$ROOT/dev/shm" && MOUNTED+=("$ROOT/dev/shm")
mount -t tmpfs -o mode=0755 run "$ROOT/run" && MOUNTED+=("$ROOT/run")
cp /etc/resolv.conf /etc/hosts "$ROOT/etc/"
git clone -q "$TOP" "$ROOT/root/allot"
say "./dev.sh demo in the bare root"
rc=0
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    bash -c 'cd /root/allot && ./dev.sh demo' 2>&1 | tee /tmp/allot-bare-demo.log |
    grep -E '^==> |Time to the first|install .* total|did not come up' || rc=1
grep -q 'total [0-9]* s' /tmp/allot-bare-demo.log || rc=1
rm -rf /tmp/allot-bare-logs && cp -a "$ROOT/run/allot-demo/log" /tmp/allot-bare-logs 2>/dev/null &&
    cp -a "$ROOT/run/allot-demo/lab/log" /tmp/allot-bare-logs/lab 2>/dev/null || true
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    bash -c 'cd /root/allot && ./dev.sh demo-down' >/dev/null 2>&1 || true
say "done (the demo's output: /tmp/allot-bare-demo.log, its logs: /tmp/allot-bare-logs)"
exit $rc
}
