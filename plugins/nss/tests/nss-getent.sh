#!/bin/bash
# nss-getent.sh - the real getent and id through libnss_allot.so.2.
#
# In a private mount namespace: nsswitch.conf says "files allot", the cache
# directory /var/lib/allot is an overlay holding caches made by the real
# writer, and the built module is found through LD_LIBRARY_PATH. Nothing
# outside the namespace changes. Needs root; runs only with ALLOT_LAB=1.
#
# Besides lookups, hostile caches and crash-freedom, it proves that:
#   - trust: a passwd.cache or group.cache that is world-writable,
#     group-writable or not owned by root, or in a world-writable directory,
#     is not used (getent finds nothing from allot, files still answer) and a
#     correct one is;
#   - local names: cache entries named root or daemon, with a local
#     uid, a group named sudo or with sudo's gid are never answered, nor is a
#     record holding uid 0 (the cache's other records still are).
set -u
. "${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}/tests/lib/harness.sh"
if [ "${ALLOT_LAB:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
    skip "needs ALLOT_LAB=1 and root"
fi
B=${ALLOT_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
SO=$B/plugins/nss/.libs/libnss_allot.so.2
MK=$B/plugins/nss/allot-make-cache
harness_tmpdir nss
W=$HARNESS_TMP
chmod 755 "$W"

mkdir -p "$W/lib" "$W/up/allot" "$W/wk" "$W/src"
chmod 755 "$W/up" "$W/up/allot"
cp "$SO" "$W/lib/"
cat > "$W/src/passwd" <<'P'
nssbob:x:47001:47000:Bob Builder:/home/nssbob:/bin/bash
nssbobby:x:47002:47000:Bobby:/home/nssbobby:/bin/bash
nssalice:x:47003:47000:Alice:/home/nssalice:/bin/sh
P
cat > "$W/src/group" <<'G'
nssusers:x:47000:
nssteam:x:47010:nssbob,nssalice
nssother:x:47011:nssbobby
G
"$MK" "$W/up/allot" "$W/src/passwd" "$W/src/group" || abort "cannot make cache"
# The module rightly refuses ids the host's own files hold: make sure ours are free.
for id in 47000 47001 47002 47003 47004 47010 47011 47100 47101 47103 47200 47201 47999; do
    if getent passwd "$id" >/dev/null || getent group "$id" >/dev/null; then
        skip "id $id is a local account or group of this host"
    fi
done
sed -e 's/^passwd:.*/passwd:         files allot/' -e 's/^group:.*/group:          files allot/' \
    /etc/nsswitch.conf > "$W/nsswitch.conf"

# Runs "$@" inside the namespace with the module and the caches in place.
inns() {
    unshare -m --propagation private sh -c '
        W=$1; shift
        mount --bind "$W/nsswitch.conf" /etc/nsswitch.conf &&
        mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$W/up",workdir="$W/wk" /var/lib &&
        LD_LIBRARY_PATH="$W/lib" exec "$@"' sh "$W" "$@"
}
# The positive request of every refusal below: files still answer in the namespace.
alive_probe inns getent passwd root
# rc of getent inside the namespace (2: not found)
rc_of() { inns "$@" >/dev/null 2>&1; echo $?; }

expect_eq "getent passwd nssbob" "$(inns getent passwd nssbob)" \
    "nssbob:*:47001:47000:Bob Builder:/home/nssbob:/bin/bash"
expect_eq "getent passwd nssbo (prefix) is not found" "$(rc_of getent passwd nssbo)" 2
expect_eq "getent passwd nssbobbyx is not found" "$(rc_of getent passwd nssbobbyx)" 2
out=$(inns getent passwd 47002)
expect_eq "getent passwd 47002 (by uid)" "${out%%:*}" nssbobby
expect_eq "getent group nssteam" "$(inns getent group nssteam)" "nssteam:*:47010:nssbob,nssalice"
expect_eq "getent group 47011 (by gid)" "$(inns getent group 47011)" "nssother:*:47011:nssbobby"
expect_eq "id nssbob (initgroups)" "$(inns id nssbob)" \
    "uid=47001(nssbob) gid=47000(nssusers) groups=47000(nssusers),47010(nssteam)"
expect_eq "getent passwd enumerates the cache (3 users)" "$(inns getent passwd | grep -c '^nss')" 3
expect_eq "getent group enumerates the cache (3 groups)" "$(inns getent group | grep -c '^nss')" 3
out=$(inns getent passwd root)
expect_eq "files still answer first (root)" "${out%%:*}" root
if command -v valgrind >/dev/null; then
    check "valgrind getent passwd nssbob: clean" \
        inns valgrind -q --error-exitcode=9 --leak-check=full getent passwd nssbob
    check "valgrind id nssalice: clean" inns valgrind -q --error-exitcode=9 id nssalice
fi

# --- caches anyone could have written are not used ---------
P=$W/up/allot/passwd.cache
G=$W/up/allot/group.cache
refused() {  # refused NAME: allot answers nothing for nssbob, files still answer root
    local rc
    rc=$(rc_of getent passwd nssbob)
    if [ "$rc" = 2 ]; then expect_refused "$1" "$(inns getent passwd root)" "root:x:0:0"; else
        fail "$1" "getent passwd nssbob: rc $rc (expected 2: not found)"
    fi
}
used() { expect_eq "$1" "$(inns getent passwd nssbob | cut -d: -f1)" nssbob; }
chmod 0666 "$P"; refused "world-writable passwd.cache: refused"
chmod 0664 "$P"; refused "group-writable passwd.cache: refused"
chmod 0644 "$P"; used "passwd.cache 0644 root:root again: used"
chown nobody "$P"; refused "passwd.cache owned by nobody: refused"
chown root "$P"; used "passwd.cache owned by root again: used"
chmod 1777 "$W/up/allot"; refused "cache in a world-writable (sticky) directory: refused"
chmod 0775 "$W/up/allot"; refused "cache in a group-writable directory: refused"
chown nobody "$W/up/allot"; chmod 0755 "$W/up/allot"
refused "cache in a directory owned by nobody: refused"
chown root "$W/up/allot"; used "cache directory fixed: used"
chmod 0666 "$G"
expect_eq "world-writable group.cache: getent group nssteam finds nothing" \
    "$(rc_of getent group nssteam)" 2
expect_eq "world-writable group.cache: files still answer (sudo)" \
    "$(inns getent group sudo | cut -d: -f1)" sudo
expect_eq "world-writable group.cache: id nssbob gets no allot group" \
    "$(inns id -G nssbob)" 47000
chmod 0644 "$G"
expect_eq "group.cache fixed: getent group nssteam" "$(inns getent group nssteam | cut -d: -f3)" 47010

# --- never answer for the node's own accounts and groups ---
sudo_gid=$(getent group sudo | cut -d: -f3)
daemon_uid=$(getent passwd daemon | cut -d: -f3)
cp "$W/src/passwd" "$W/src/passwd.hostile"
cp "$W/src/group" "$W/src/group.hostile"
cat >> "$W/src/passwd.hostile" <<P
root:x:47100:47000:Directory root:/home/root:/bin/bash
daemon:x:47101:47000:Directory daemon:/home/daemon:/bin/bash
nssfakeroot:x:$daemon_uid:47000:Holds daemon's uid:/home/x:/bin/bash
nsssudoer:x:47103:$sudo_gid:Primary group sudo:/home/y:/bin/bash
P
cat >> "$W/src/group.hostile" <<G
sudo:x:47200:nssbob
nssgid:x:$sudo_gid:nssbob
nssmixed:x:47201:nssbob,root,daemon
G
"$MK" "$W/up/allot" "$W/src/passwd.hostile" "$W/src/group.hostile" || abort "cannot make cache"
used "hostile cache in place: nssbob still resolves"
expect_eq "getent passwd root: only the local root" "$(inns getent passwd root)" \
    "$(getent passwd root)"
expect_eq "getent passwd 47100 (directory root's uid): not found" \
    "$(rc_of getent passwd 47100)" 2
expect_eq "getent passwd daemon: only the local daemon" "$(inns getent passwd daemon)" \
    "$(getent passwd daemon)"
expect_eq "getent passwd 47101: not found" "$(rc_of getent passwd 47101)" 2
expect_eq "getent passwd nssfakeroot (a local uid): not found" \
    "$(rc_of getent passwd nssfakeroot)" 2
expect_eq "getent passwd $daemon_uid: the local daemon" \
    "$(inns getent passwd "$daemon_uid" | cut -d: -f1)" daemon
expect_eq "getent passwd nsssudoer (primary gid sudo): not found" \
    "$(rc_of getent passwd nsssudoer)" 2
expect_eq "enumeration: one root, one daemon" \
    "$(inns getent passwd | cut -d: -f1 | grep -cx 'root\|daemon')" 2
expect_eq "getent group sudo: only the local group" "$(inns getent group sudo)" \
    "$(getent group sudo)"
expect_eq "getent group 47200 (directory sudo's gid): not found" \
    "$(rc_of getent group 47200)" 2
expect_eq "getent group nssgid (sudo's gid): not found" "$(rc_of getent group nssgid)" 2
expect_eq "getent group nssmixed: local accounts dropped from members" \
    "$(inns getent group nssmixed)" "nssmixed:*:47201:nssbob"
out=$(inns id nssbob)
expect_not_contains "id nssbob: no sudo from the directory" "$out" "sudo"
expect_contains "id nssbob: allot groups still there" "$out" "47201(nssmixed)"
expect_not_contains "id root: no allot group" "$(inns id root)" "nssmixed"
expect_eq "enumeration: one sudo group" "$(inns getent group | cut -d: -f1 | grep -cx sudo)" 1

# uid 0 in a cache (the writer refuses to make one): the lookup that reaches that
# record refuses it; the cache's valid records are still served.
echo 'nsszero:x:47999:47000::/home/nsszero:/bin/bash' >> "$W/src/passwd"
"$MK" "$W/up/allot" "$W/src/passwd" "$W/src/group" || abort "cannot make cache"
"$MK" --set-uid "$P" 47999 0 || abort "cannot plant uid 0"
expect_eq "cache with uid 0: getent passwd nsszero not found" "$(rc_of getent passwd nsszero)" 2
expect_eq "cache with uid 0: getent passwd 0 is the local root" \
    "$(inns getent passwd 0 | cut -d: -f1)" root
expect_eq "cache with uid 0: the other users still resolve" "$(rc_of getent passwd nssbob)" 0
expect_eq "cache with uid 0: getent passwd 47999 not found" "$(rc_of getent passwd 47999)" 2
expect_not_contains "cache with uid 0: not enumerated" "$(inns getent passwd)" "nsszero"
sed -i '/^nsszero:/d' "$W/src/passwd"
"$MK" "$W/up/allot" "$W/src/passwd" "$W/src/group" || abort "cannot make cache"
used "clean cache again: used"

# Hostile caches: each must give "not found" (rc 2), never a crash (rc >= 128).
cp "$P" "$W/good.cache"
for kind in truncated garbage empty huge-count; do
    case $kind in
        truncated) head -c 100 "$W/good.cache" > "$W/bad" ;;
        garbage) head -c 65536 /dev/urandom > "$W/bad" ;;
        empty) : > "$W/bad" ;;
        huge-count) { head -c 48 "$W/good.cache"; printf '\377\377\377\377'; tail -c +53 "$W/good.cache"; } > "$W/bad" ;;
    esac
    chmod 0644 "$W/bad"
    mv "$W/bad" "$P"
    expect_eq "$kind passwd cache: not found, no crash" "$(rc_of getent passwd nssbob)" 2
done
out=$(inns getent passwd root)
expect_eq "with a corrupt cache, files still answer" "${out%%:*}" root
rm -f "$P"
expect_eq "missing passwd cache: not found" "$(rc_of getent passwd nssbob)" 2

# A republished cache is seen by the next process.
echo 'nsscarol:x:47004:47000::/home/nsscarol:/bin/bash' >> "$W/src/passwd"
"$MK" "$W/up/allot" "$W/src/passwd" "$W/src/group"
out=$(inns getent passwd nsscarol)
expect_eq "republished cache: new user resolves" "${out%%:*}" nsscarol

# The host saw none of it.
getent passwd nssbob >/dev/null
expect_eq "host namespace unchanged" "$?" 2
finish
