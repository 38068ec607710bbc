#!/bin/bash
# install-test.sh - the .debs installed for real and the system started from what they
# installed (tests/install/in-root.sh says what is checked). Needs ALLOT_LAB=1 and root.
#
# The scratch root is an overlay whose lower layer is this machine's own root (read-only to
# it) and whose upper layer is a tmpfs, mounted in a private mount namespace and entered
# with chroot: dpkg, the system users, /etc and the daemons' state all land in the tmpfs
# and vanish with the namespace, so the host is untouched. It costs no debootstrap (the CI
# machine is the Debian release the packages are built for, with Slurm, MariaDB and munge
# installed from .ci/packages). ALLOT_INSTALL_LOWER=DIR uses another root instead (e.g. a
# cached chroot, never written: it is only the lower layer).
#
# The .debs: ALLOT_DEBS=DIR if given (e.g. from an earlier run), else built here the
# standard way from this tree's dist tarball (make dist; dpkg-buildpackage -b), without
# their unit tests (make check runs those) and without optimisation (noopt: the build is
# most of this test's time).
set -u
S=$(cd "$(dirname "$0")/../.." && pwd)
B=${ALLOT_TOP_BUILDDIR:-$PWD}
. "$S/tests/lib/harness.sh"
if [ "${ALLOT_LAB:-}" != 1 ] || [ "$(id -u)" != 0 ]; then skip "needs ALLOT_LAB=1 and root"; fi
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
    skip "needs dpkg-dev and debhelper (.ci/packages)"
LOWER=${ALLOT_INSTALL_LOWER:-/}
harness_tmpdir install
T=$HARNESS_TMP
chmod 755 "$T"
t0=$(date +%s)

DEBS=${ALLOT_DEBS:-}
if [ -z "$DEBS" ]; then
    note "building the .debs from the dist tarball"
    [ -f "$B/Makefile" ] || abort "no build tree at $B"
    env -u MAKEFLAGS -u MFLAGS make -s -C "$B" dist-gzip distdir=allot-install-src >"$T/dist.log" 2>&1 ||
        { tail -20 "$T/dist.log"; abort "make dist failed"; }
    mv "$B/allot-install-src.tar.gz" "$T/" && tar -C "$T" -xzf "$T/allot-install-src.tar.gz" &&
        mv "$T/allot-install-src" "$T/allot-src" && rm -f "$T/allot-install-src.tar.gz"
    # The dist tarball carries debian/: build as a packager would.
    if ! (cd "$T/allot-src" && DEB_BUILD_OPTIONS="nocheck noopt parallel=$(nproc)" \
        dpkg-buildpackage -b -uc -us) >"$T/deb-build.log" 2>&1; then
        tail -30 "$T/deb-build.log"
        abort "dpkg-buildpackage failed"
    fi
    DEBS=$T/debs
    mkdir -p "$DEBS" && mv "$T"/*.deb "$DEBS"/
    rm -rf "$T/allot-src"
fi
t1=$(date +%s)
note "packages: $(cd "$DEBS" && ls *.deb | tr '\n' ' ')"

# The scratch root. Ports reserved by other tests stay visible to the lab's free-port
# choice (the reservation directory is shared).
mkdir -p "$HARNESS_PORT_DIR"
unshare -m --propagation private bash -s "$T" "$LOWER" "$S" "$DEBS" "$HARNESS_PORT_DIR" <<'IN'
set -e
T=$1 LOWER=$2 S=$3 DEBS=$4 PORTS=$5
mkdir -p "$T/ov"
mount -t tmpfs -o mode=755 tmpfs "$T/ov"
mkdir -p "$T/ov/up" "$T/ov/wk" "$T/ov/root"
mount -t overlay overlay -o lowerdir="$LOWER",upperdir="$T/ov/up",workdir="$T/ov/wk" "$T/ov/root"
R=$T/ov/root
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount --rbind /sys "$R/sys"
mount -t tmpfs -o mode=755 tmpfs "$R/run"
mkdir -p "$R/run/lock"
mkdir -p "$R$PORTS" && mount --bind "$PORTS" "$R$PORTS"
# the source tree (its lab scripts) and the packages, as the chroot sees them
for d in "$S" "$DEBS"; do mkdir -p "$R$d" && mount --bind "$d" "$R$d"; done
set +e
chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    HARNESS_PORT_DIR="$PORTS" bash "$S/tests/install/in-root.sh" "$DEBS"
IN
rc=$?
t2=$(date +%s)
note "time: packages $((t1 - t0)) s, install and run $((t2 - t1)) s"
exit $rc
