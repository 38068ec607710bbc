#!/bin/bash
# tests/matrix/run.sh - build and test allot against one Debian release's Slurm, in a chroot.
#
#   tests/matrix/run.sh bookworm|trixie|sid [prepare]      (as root)
#
# `prepare` does steps 1 and 2 only, so CI can start them before allot is built.
#
# 1. creates the suite's root with debootstrap from this machine's Debian mirror, or reuses
#    it (cached in $ALLOT_CHROOT_CACHE/chroot-<suite>, default /var/cache/allot);
# 2. installs .ci/packages there (names that differ per suite: tests/matrix/packages.map);
# 3. builds the dist tarball on the host (`make dist`), then inside the root: configure, make,
#    the RPMs (rpmbuild --nodeps -ta) and the whole lab suite (ALLOT_LAB=1 make check, via
#    dev.sh check), which ends with its closing line `N passed, N failed`.
#
# The tests run in their own network and PID namespaces: the lab's fixed ports cannot clash
# with a lab on the host, and every daemon a test leaves behind ends with the namespace.
# A sid whose packages cannot be installed (the archive mid-transition) prints SKIP with
# apt's own error and exits 0; a failure to build or test allot always fails.
#
# Knobs: ALLOT_CHROOT_CACHE, ALLOT_MATRIX_MIRROR (default: the host's Debian mirror),
# ALLOT_MATRIX_BUILD (a configured host build dir for `make dist`; default a fresh one in
# /tmp), ALLOT_MATRIX_TARBALL (use this tarball instead), ALLOT_MATRIX_RPM=0 (no RPMs).
set -euo pipefail

SUITE=${1:-}
MODE=${2:-all}
case "$MODE" in all | prepare) ;; *) sed -n '2,15p' "$0"; exit 2 ;; esac
case "$SUITE" in
bookworm | trixie | sid) ;;
*) sed -n '2,15p' "$0"; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "run.sh: run as root (debootstrap, chroot, mounts)"; exit 1; }

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/test-ns.sh"
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${ALLOT_CHROOT_CACHE:-/var/cache/allot}
ROOT=$CACHE/chroot-$SUITE
JOBS=$(nproc)
LEG_START=$(date +%s)
CLOSING=""   # the suite's closing line, printed last

say() { printf '[matrix %s %4ss] %s\n' "$SUITE" "$(($(date +%s) - LEG_START))" "$*"; }
die() { say "FAILED: $*"; exit 1; }

# skip_or_die <log> <what>: the archive's own fault skips sid; anything else fails.
skip_or_die() {
    local errors
    errors=$(grep -E '^(E|W): |^ [^ ].*: Depends|broken packages|unmet|^dpkg: error' "$1" | head -20 || true)
    [ -n "$errors" ] || errors=$(tail -20 "$1")
    if [ "$SUITE" = sid ]; then
        say "SKIP: sid cannot be installed from the archive ($2); apt said:"
        printf '%s\n' "$errors"
        CLOSING="0 passed, 0 failed, 1 skipped"
        exit 0
    fi
    printf '%s\n' "$errors"
    die "$2 (log: $1)"
}

# The Debian mirror this machine's apt uses (deb822 .sources or one-line sources.list).
host_mirror() {
    local uri
    uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
        /^URIs:/ { u = $2 }
        /^Suites:/ && u !~ /security/ && u ~ /debian/ { print u; exit }')
    [ -n "$uri" ] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        sed 's/\[[^]]*\]//' | awk '$1 == "deb" && $2 !~ /security/ && $2 ~ /debian/ { print $2; exit }')
    echo "${uri:-http://deb.debian.org/debian}"
}
MIRROR=${ALLOT_MATRIX_MIRROR:-$(host_mirror)}

# ------------------------------------------------------------------ the root
# Built in a .partial directory and renamed when complete, so an interrupted
# debootstrap is never mistaken for a usable root.
create_root() {
    [ -d "$ROOT" ] && { say "reusing $ROOT"; return 0; }
    local t0 log=$CACHE/debootstrap-$SUITE.log
    command -v debootstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=900 install -y -q debootstrap >/dev/null
    mkdir -p "$CACHE"
    rm -rf "$ROOT.partial"
    say "debootstrap $SUITE from $MIRROR (log: $log)"
    t0=$(date +%s)
    debootstrap --variant=minbase "$SUITE" "$ROOT.partial" "$MIRROR" >"$log" 2>&1 ||
        skip_or_die "$log" "debootstrap $SUITE"
    # Package installs must not start services inside the root (MariaDB on the host's port).
    printf '#!/bin/sh\nexit 101\n' >"$ROOT.partial/usr/sbin/policy-rc.d"
    chmod 755 "$ROOT.partial/usr/sbin/policy-rc.d"
    mv "$ROOT.partial" "$ROOT"
    say "debootstrap took $(($(date +%s) - t0))s"
}

# The cached root keeps what a previous leg's tests left in /etc/passwd and /etc/group
# (docs/lab.md G25, G26): scim's integration.sh makes alice and bob with the next free uids
# when no lab holds them, so a lab of this leg would run with those, not the lab directory's;
# doctor-node.sh before G25 could write its `clash` user and `clashgrp` group into the real
# files, and its check of a correct node then finds them. Both go before the suite.
forget_test_users() {
    local u uid _ now
    while read -r u uid _; do
        case $u in '#'* | '') continue ;; esac
        now=$(in_root id -u "$u" 2>/dev/null) || continue
        [ "$now" = "$uid" ] && continue
        if in_root userdel "$u"; then say "removed $u (uid $now), left by an earlier run"
        else say "could not remove $u (uid $now): this leg's labs run with that uid"; fi
    done <"$TOP/tests/lab/lab-directory.txt"
    if grep -q '^clash:' "$ROOT/etc/passwd" || grep -q '^clashgrp:' "$ROOT/etc/group"; then
        sed -i '/^clash:/d' "$ROOT/etc/passwd" && sed -i '/^clashgrp:/d' "$ROOT/etc/group" &&
            say "removed doctor-node.sh's clash and clashgrp, left by an earlier run"
    fi
}

MOUNTED=()
mount_root() {
    # The root a mount point of its own: the tests' `unshare -m --propagation private`
    # (NSS, sshd) cannot change the propagation of a / that is not one.
    mount --bind "$ROOT" "$ROOT" && MOUNTED+=("$ROOT")
    mount -t proc proc "$ROOT/proc" && MOUNTED+=("$ROOT/proc")
    mount -t sysfs sysfs "$ROOT/sys" && MOUNTED+=("$ROOT/sys")
    mount --bind /dev "$ROOT/dev" && MOUNTED+=("$ROOT/dev")
    mount --bind /dev/pts "$ROOT/dev/pts" && MOUNTED+=("$ROOT/dev/pts")
    mount -t tmpfs -o mode=1777 shm "$ROOT/dev/shm" && MOUNTED+=("$ROOT/dev/shm")
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    cp /etc/hosts "$ROOT/etc/hosts"
}

# Runs on every exit: stops what still runs inside the root (only processes whose root
# is this chroot, by PID), then unmounts in reverse order.
cleanup() {
    local rc=$?
    release_root "$ROOT"
    say "leg took $(($(date +%s) - LEG_START))s"
    [ -z "$CLOSING" ] || echo "$CLOSING"   # the suite's closing line stays the last line
    exit $rc
}
trap cleanup EXIT

in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# ------------------------------------------------------------------ packages
# .ci/packages with this suite's names (packages.map: "suite name replacement|-").
suite_packages() {
    local p m
    for p in $(grep -v '^#' "$TOP/.ci/packages" | sort -u) nodejs ca-certificates; do
        m=$(awk -v s="$SUITE" -v p="$p" '$1 == s && $2 == p { print $3 }' "$HERE/packages.map")
        [ "$m" = - ] && continue
        echo "${m:-$p}"
    done
    [ -n "$(host_npm)" ] || echo npm
}

# The host's npm when it is self-contained (NodeSource's, or npm's own install: its
# dependencies inside its directory), copied into the root instead of Debian's npm, which
# brings ~300 node-* packages (minutes per leg). Empty: the root installs Debian's.
host_npm() {
    local cli dir
    cli=$(readlink -f "$(command -v npm 2>/dev/null)" 2>/dev/null) || return 0
    dir=${cli%/bin/npm-cli.js}
    [ "$dir" != "$cli" ] && [ -f "$dir/package.json" ] && [ -d "$dir/node_modules" ] && echo "$dir"
    return 0
}

install_packages() {
    local t0 log=$CACHE/apt-$SUITE.log
    t0=$(date +%s)
    say "installing the build and test packages (log: $log)"
    # The root's apt checks dates as this machine's does (a snapshot mirror's sid Release
    # is past its Valid-Until; the signatures are still checked).
    apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' >"$ROOT/etc/apt/apt.conf.d/99allot-matrix" || true
    # A throw-away root: dpkg need not fsync every file, and nobody reads its man pages.
    printf '%s\n' force-unsafe-io 'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/doc/*' \
        'path-exclude=/usr/share/locale/*' >"$ROOT/etc/dpkg/dpkg.cfg.d/allot-matrix"
    # shellcheck disable=SC2046
    { in_root apt-get update -q && in_root apt-get install -y -q --no-install-recommends \
        $(suite_packages); } >"$log" 2>&1 || skip_or_die "$log" "apt-get install"
    # Trust what this machine trusts (a site's proxy CA) for the npm registry too.
    if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
        cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
        in_root update-ca-certificates >>"$log" 2>&1
    fi
    install_npm >>"$log" 2>&1 || say "npm cache not filled (the scimd relying-party check will say why)"
    say "packages ready in $(($(date +%s) - t0))s: $(in_root dpkg-query -W -f '${Version}' slurmctld | sed 's/^/slurmctld /')"
}

# The scimd test installs its npm relying party while offline (its own network namespace):
# npm's cache in the root must already hold what it asks for. The host fills a cache of its
# own (the registry once per machine, then nothing), the root gets a copy of it.
NPM_PACKAGES="jose@6 openid-client@6"
install_npm() {
    local npm_dir cache=$CACHE/npm-cache d
    npm_dir=$(host_npm)
    if [ -n "$npm_dir" ]; then
        mkdir -p "$ROOT/usr/local/lib/node_modules" "$ROOT/usr/local/bin"
        rm -rf "$ROOT/usr/local/lib/node_modules/npm"
        cp -a "$npm_dir" "$ROOT/usr/local/lib/node_modules/npm"
        ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
    fi
    if command -v npm >/dev/null; then
        d=$(mktemp -d)
        # shellcheck disable=SC2086
        (cd "$d" && npm init -y >/dev/null && npm install --cache "$cache" --prefer-offline \
            --no-audit --no-fund $NPM_PACKAGES >/dev/null) || { rm -rf "$d"; return 1; }
        rm -rf "$d"
        mkdir -p "$ROOT/root/.npm"
        rm -rf "$ROOT/root/.npm/_cacache"
        cp -a "$cache/_cacache" "$ROOT/root/.npm/_cacache"
    fi
    # What the test will do, offline: proves the cache is complete.
    in_root bash -c "d=\$(mktemp -d) && cd \"\$d\" && npm init -y >/dev/null &&
        npm install --offline --no-audit --no-fund $NPM_PACKAGES >/dev/null; rc=\$?; rm -rf \"\$d\"; exit \$rc"
}

# ------------------------------------------------------------------ allot
dist_tarball() {
    if [ -n "${ALLOT_MATRIX_TARBALL:-}" ]; then echo "$ALLOT_MATRIX_TARBALL"; return; fi
    # A tree configured in place (dev.sh build) makes its own dist; otherwise a scratch build.
    local scratch=/tmp/allot-matrix-dist
    local build=${ALLOT_MATRIX_BUILD:-$scratch}
    [ -z "${ALLOT_MATRIX_BUILD:-}" ] && [ -f "$TOP/Makefile" ] && build=$TOP
    # A scratch build configured from another tree (an earlier clone) would package that one.
    if [ "$build" = "$scratch" ] && ! grep -qxF "srcdir='$TOP'" "$build/config.status" 2>/dev/null; then
        rm -rf "$build"
    fi
    if [ ! -f "$build/Makefile" ]; then
        [ -x "$TOP/configure" ] || (cd "$TOP" && autoreconf -fi) >&2
        mkdir -p "$build"
        (cd "$build" && "$TOP/configure" -q) >&2
    fi
    rm -f "$build"/allot-*.tar.gz
    make -C "$build" -s dist >&2 || die "make dist in $build"
    ls "$build"/allot-*.tar.gz
}

build_and_test() {
    local tarball t0
    tarball=$(dist_tarball)
    say "dist tarball $(basename "$tarball")"
    rm -rf "$ROOT/root/allot-matrix"
    mkdir -p "$ROOT/root/allot-matrix"
    # Tests run programs of the tree as lab users (kube-token, munge_flood.py): they must
    # reach it under /root, as they reach a build in /tmp or a home on the host.
    chmod 0711 "$ROOT/root"
    cp "$tarball" "$ROOT/root/allot-matrix/"
    t0=$(date +%s)
    in_root bash -c "cd /root/allot-matrix && tar xzf allot-*.tar.gz && cd allot-*/ &&
        ./configure -q && make -j$JOBS >build.log 2>&1 || { tail -40 build.log; exit 1; }" ||
        die "building allot against $SUITE's Slurm"
    say "built in $(($(date +%s) - t0))s"
    if [ "${ALLOT_MATRIX_RPM:-1}" = 1 ]; then
        t0=$(date +%s)
        # --nocheck: the unit tests run in the lab suite below, on this same build.
        in_root bash -c "cd /root/allot-matrix && rm -rf rpm && mkdir rpm &&
            rpmbuild --define '_topdir /root/allot-matrix/rpm' --nodeps --nocheck -ta allot-*.tar.gz \
                >rpmbuild.log 2>&1 || { tail -40 rpmbuild.log; exit 1; }
            find rpm/RPMS -name '*.rpm' -printf '%f\n'" || die "rpmbuild against $SUITE's Slurm"
        say "RPMs built in $(($(date +%s) - t0))s"
    fi
    t0=$(date +%s)
    forget_test_users
    say "ALLOT_LAB=1 make check"
    local rc=0
    # The fuzz targets run briefly here (they fuzz the same code on every release; bookworm's
    # leg gives them 20 s each): CI's time goes to the lab.
    in_test_ns "$ROOT" npm_config_offline=true bash -c "cd /root/allot-matrix/allot-*/ && ALLOT_FUZZ_SECONDS=${ALLOT_MATRIX_FUZZ_SECONDS:-5} ./dev.sh check" 2>&1 |
        tee "$CACHE/check-$SUITE.log" || rc=$?
    CLOSING=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$CACHE/check-$SUITE.log" | tail -1 || true)
    say "lab suite took $(($(date +%s) - t0))s (exit $rc)"
    return $rc
}

main() {
    create_root
    mount_root
    install_packages
    [ "$MODE" = prepare ] || build_and_test
}
# One line: bash has read all of it before it starts, so editing this file mid-run is safe.
main; exit
