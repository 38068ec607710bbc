#!/bin/bash
# units-verify.sh - every systemd unit of the tree passes `systemd-analyze verify`, and
# carries the sandbox the packages promise (docs/install.md).
#
# The units are made from their .in templates as make makes them, except that sbindir is a
# scratch directory linking the programs just built (verify wants each ExecStart to exist);
# the generated units of the build tree are checked to name configure's sbindir and
# sysconfdir and nothing hard-coded.
set -u
. "${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/harness.sh"
S=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${ALLOT_TOP_BUILDDIR:-$S}
command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
harness_tmpdir units
T=$HARNESS_TMP
mkdir -p "$T/sbin" "$T/units"

# program -> where the build leaves it
declare -A built=([allot-scimd]=scim/allot-scimd [allot-syncd]=syncd/allot-syncd
    [allot-exporter]=exporter/allot-exporter [allot-report]=report/allot-report)
for p in "${!built[@]}"; do
    if [ -x "$B/${built[$p]}" ]; then ln -s "$B/${built[$p]}" "$T/sbin/$p"; else
        # Not built in this tree (a partial build): verify the unit all the same.
        printf '#!/bin/sh\n' >"$T/sbin/$p" && chmod 755 "$T/sbin/$p"
    fi
done
templates=("$S"/etc/*.service.in "$S"/etc/*.timer.in "$S"/exporter/*.service.in
    "$S"/report/*.service.in "$S"/report/*.timer.in)
for in in "${templates[@]}"; do
    sed -e "s|@sbindir@|$T/sbin|g" -e 's|@sysconfdir@|/etc|g' -e 's|@libexecdir@|/usr/libexec|g' \
        -e 's|@localstatedir@|/var|g' \
        "$in" >"$T/units/$(basename "${in%.in}")"
done
check "no @variable@ is left in any unit" sh -c "! grep -n '@[a-z]*@' $T/units/*"

for u in "$T"/units/*; do
    name=$(basename "$u")
    check "systemd-analyze verify $name" sh -c \
        "out=\$(systemd-analyze verify --man=no '$u' 2>&1); rc=\$?; printf '%s' \"\$out\"; [ \$rc = 0 ] && [ -z \"\$out\" ]"
done

# The sandbox of each service. Devices and a capability bound "where possible": the storage
# recorder reads every user's quota (quota(1), quotactl(2) on the block devices) with root's
# full file access, so it keeps devices and capabilities and says so in its unit.
host_access=" allot-report-storage.service "
for u in "$T"/units/*.service; do
    name=$(basename "$u")
    for d in NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes; do
        check "$name: $d" grep -qx "$d" "$u"
    done
    check "$name: ProtectHome" grep -qE '^ProtectHome=(yes|read-only|tmpfs)$' "$u"
    if [[ $host_access != *" $name "* ]]; then
        check "$name: PrivateDevices=yes" grep -qx PrivateDevices=yes "$u"
        check "$name: CapabilityBoundingSet" grep -q '^CapabilityBoundingSet=' "$u"
    fi
done
# One owner per state directory: units that claim the same one run as the same user with
# the same mode (allot-report's two units share its page and storage record).
claims=$(grep -h '^StateDirectory=' "$T"/units/*.service | cut -d= -f2 | tr ' ' '\n' | sort)
for dir in $(printf '%s\n' "$claims" | uniq -d); do
    owners=$(grep -lE "^StateDirectory=(.* )?$dir( |\$)" "$T"/units/*.service | while read -r u; do
        echo "$(sed -n 's/^User=//p' "$u")/$(sed -n 's/^StateDirectoryMode=//p' "$u")"
    done | sort -u)
    expect_eq "/var/lib/$dir: every unit claiming it has the same user and mode" \
        "$(printf '%s\n' "$owners" | wc -l)" 1
done
expect_eq "allot-scimd's state directories: its store and its keys" \
    "$(sed -n 's/^StateDirectory=//p' "$T/units/allot-scimd.service")" "allot-scimd allot-oidc"
check "allot-syncd claims no state directory (tmpfiles.d owns /var/lib/allot)" \
    sh -c "! grep -q '^StateDirectory=\|^RuntimeDirectory=' $T/units/allot-syncd*.service"
check "tmpfiles.d: /var/lib/allot root:allot-keys 0755" \
    grep -qx 'd /var/lib/allot 0755 root allot-keys -' "$S/etc/tmpfiles-allot.conf"
check "sysusers.d: the user allot" grep -q '^u allot ' "$S/etc/sysusers-allot-scimd.conf"

# The units make generated for installation carry configure's paths.
sbindir=$(sed -n 's/^sbindir = //p' "$B/etc/Makefile")
prefix=$(sed -n 's/^prefix = //p' "$B/etc/Makefile")
sbindir=${sbindir//\$\{exec_prefix\}/$prefix}
if [ -f "$B/etc/allot-scimd.service" ]; then
    for u in allot-scimd.service allot-syncd.service allot-syncd-once.service; do
        expect_match "$u: ExecStart in configure's sbindir" "$(grep '^ExecStart=' "$B/etc/$u")" \
            "^ExecStart=${sbindir//./\\.}/allot-"
    done
fi
finish
