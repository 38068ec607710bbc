#!/bin/bash
# check-rpms.sh DIR - the RPMs rpmbuild left in DIR (RPMS/<arch>/): payload, scriptlets and
# dependencies as rpm reports them (`rpm -qp --scripts --requires --list`), then the whole
# set installed for real with `rpm --root` into a scratch root where the scriptlets run:
# an overlay of this machine's root in a private mount namespace, so the host is untouched.
# Run by `./dev.sh rpm` after rpmbuild; ends with `N passed, N failed`. Needs root for the
# --root install (skipped otherwise).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/lib/harness.sh"
DIR=${1:?usage: check-rpms.sh RPMS-DIR}
mapfile -t rpms < <(find "$DIR" -name 'allot-*.rpm' ! -name '*.src.rpm' ! -name '*debug*' | sort)
[ ${#rpms[@]} -gt 0 ] || abort "no allot RPM under $DIR"
declare -A path=()
for r in "${rpms[@]}"; do path[$(rpm -qp --qf '%{NAME}' "$r" 2>/dev/null)]=$r; done
q() { rpm -qp "$@" 2>/dev/null; }

for p in common slurm node syncd scimd login exporter doctor report; do
    check "allot-$p is built" test -n "${path[allot-$p]:-}"
done
[ -n "${path[allot-scimd]:-}" ] && [ -n "${path[allot-common]:-}" ] || abort "packages missing"
scimd=${path[allot-scimd]} common=${path[allot-common]} syncd=${path[allot-syncd]}
slurm=${path[allot-slurm]} node=${path[allot-node]}

# Payload: one owner per state directory, units and system users where they belong.
modes() { q --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]' "$1"; }
expect_contains "scimd owns its store directory (allot, 0700)" "$(modes "$scimd")" \
    "drwx------ allot:allot /var/lib/allot-scimd"
expect_contains "scimd owns its key directory (allot, 0700)" "$(modes "$scimd")" \
    "drwx------ allot:allot /var/lib/allot-oidc"
expect_contains "common owns the cache directory (root:allot-keys 0755)" "$(modes "$common")" \
    "drwxr-xr-x root:allot-keys /var/lib/allot"
for p in "$scimd" "$syncd" "$slurm" "$node" "${path[allot-login]}" "${path[allot-exporter]}"; do
    expect_not_contains "$(basename "$p"): claims no other package's directory" \
        "$(q --list "$p" | grep -x '/var/lib/allot')" "/var/lib/allot"
done
expect_contains "scimd: its unit" "$(q --list "$scimd")" "/usr/lib/systemd/system/allot-scimd.service"
expect_contains "scimd: sysusers.d" "$(q --list "$scimd")" "/usr/lib/sysusers.d/allot-scimd.conf"
expect_contains "scimd: tmpfiles.d" "$(q --list "$scimd")" "/usr/lib/tmpfiles.d/allot-scimd.conf"
expect_contains "common: sysusers.d" "$(q --list "$common")" "/usr/lib/sysusers.d/allot.conf"
expect_contains "common: tmpfiles.d" "$(q --list "$common")" "/usr/lib/tmpfiles.d/allot.conf"
for u in allot-syncd.service allot-syncd-once.service allot-syncd.timer; do
    expect_contains "syncd: $u" "$(q --list "$syncd")" "/usr/lib/systemd/system/$u"
done
expect_contains "common: allot.yaml is %config(noreplace)" \
    "$(q --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$common")" "cn /etc/allot/allot.yaml"

# Scriptlets: users created before the files they own, through sysusers.d when it is there.
expect_match "scimd %pre creates the user allot" "$(q --scripts "$scimd")" \
    'preinstall scriptlet.*'
expect_contains "scimd %pre: sysusers line" "$(q --scripts "$scimd")" "u allot - "
expect_contains "scimd %pre: shadow-utils fallback" "$(q --scripts "$scimd")" "useradd -r -g allot"
expect_contains "common %pre creates allot-keys" "$(q --scripts "$common")" "u allot-keys - "
expect_contains "common %post runs tmpfiles" "$(q --scripts "$common")" \
    "systemd-tmpfiles --create /usr/lib/tmpfiles.d/allot.conf"
expect_contains "node runs ldconfig" "$(q --scripts "$node")" "/sbin/ldconfig"

# Dependencies: the plugins are tied to one Slurm release; everything needs common.
sv=$(q --qf '%{RELEASE}' "$slurm" | sed -n 's/^1\.slurm\([0-9.]*\).*/\1/p')
check "slurm requires the exact Slurm release it was built for ($sv)" \
    grep -qE "^slurm(\(x86-64\))? = ${sv//./\\.}\$" <<<"$(q --requires "$slurm")"
for p in slurm node syncd scimd login exporter doctor report; do
    expect_contains "allot-$p requires allot-common" "$(q --requires "${path[allot-$p]:-none}")" \
        "allot-common = "
done
expect_contains "scimd requires shadow-utils for %pre" "$(q --requires "$scimd")" \
    "shadow-utils"

# Installed for real: rpm --root into an overlay of / (scriptlets run chrooted there).
if [ "$(id -u)" != 0 ]; then
    note "not root: the rpm --root install is skipped"
    finish
fi
harness_tmpdir rpmroot
T=$HARNESS_TMP
out=$(unshare -m --propagation private bash -s "$T" "${rpms[@]}" <<'IN' 2>&1
set -e
T=$1; shift
mount -t tmpfs tmpfs "$T"
mkdir -p "$T/up" "$T/wk" "$T/root"
mount -t overlay overlay -o lowerdir=/,upperdir="$T/up",workdir="$T/wk" "$T/root"
R=$T/root
mount -t proc proc "$R/proc"; mount --bind /dev "$R/dev"; mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
mkdir -p "$R/pkgs"; cp "$@" "$R/pkgs/"
# the host's RPM database is its own (Debian keeps none): a fresh one in the scratch root
rpm --root "$R" --dbpath /var/lib/rpm --initdb
rpm --root "$R" --dbpath /var/lib/rpm -i --nodeps "$R"/pkgs/*.rpm
echo "== installed"
rpm --root "$R" --dbpath /var/lib/rpm -qa | sort
chroot "$R" sh -c '
  echo "user allot: $(getent passwd allot | cut -d: -f1,6,7)"
  echo "user allot-keys: $(getent passwd allot-keys | cut -d: -f1)"
  stat -c "dir %n %U:%G %a" /var/lib/allot /var/lib/allot-scimd /var/lib/allot-oidc /run/allot
  for u in /usr/lib/systemd/system/allot-*.service; do
      b=$(sed -n "s/^ExecStart=\([^ ]*\).*/\1/p" "$u"); [ -x "$b" ] && echo "exec ok $(basename "$u") $b"
  done
  /usr/sbin/allot-scimd --help >/dev/null 2>&1; echo "scimd runs: $?"
'
IN
)
expect_contains "rpm --root -i installed every package" "$out" "== installed"
for p in "${!path[@]}"; do expect_contains "$p is in the scratch root's database" "$out" "$p-"; done
expect_match "%pre made the user allot (home its store)" "$out" \
    "user allot: allot:/var/lib/allot-scimd:/(usr/)?s?bin/nologin"
expect_contains "%pre made the user allot-keys" "$out" "user allot-keys: allot-keys"
expect_contains "/var/lib/allot root:allot-keys 0755" "$out" "dir /var/lib/allot root:allot-keys 755"
expect_contains "/var/lib/allot-scimd allot 0700" "$out" "dir /var/lib/allot-scimd allot:allot 700"
expect_contains "/var/lib/allot-oidc allot 0700" "$out" "dir /var/lib/allot-oidc allot:allot 700"
expect_contains "/run/allot from tmpfiles.d" "$out" "dir /run/allot root:root 755"
for u in allot-scimd allot-syncd allot-syncd-once allot-exporter; do
    expect_contains "$u.service: ExecStart is an installed program" "$out" "exec ok $u.service"
done
expect_not_contains "the host has no user allot afterwards" "$(getent passwd allot || true)" "allot:"
finish
