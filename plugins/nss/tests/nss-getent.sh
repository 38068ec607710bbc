#!/bin/bash
# nss-getent.sh - the real getent and id through libnss_allot.so.2.
#
# In a private mount namespace: nsswitch.conf says "files allot", the cache
# directory /var/lib/allot is an overlay holding caches made by the real
# writer, and the built module is found through LD_LIBRARY_PATH. Nothing
# outside the namespace changes. Needs root; runs only with ALLOT_LAB=1.
set -u
if [ "${ALLOT_LAB:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
    echo "0 passed, 0 failed (skipped: needs ALLOT_LAB=1 and root)"
    exit 77
fi
B=${ALLOT_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
SO=$B/plugins/nss/.libs/libnss_allot.so.2
MK=$B/plugins/nss/allot-make-cache
W=$(mktemp -d /tmp/allot-nss-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
no() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }

mkdir -p "$W/lib" "$W/up/allot" "$W/wk" "$W/src"
cp "$SO" "$W/lib/"
cat > "$W/src/passwd" <<'P'
nssbob:x:42001:42000:Bob Builder:/home/nssbob:/bin/bash
nssbobby:x:42002:42000:Bobby:/home/nssbobby:/bin/bash
nssalice:x:42003:42000:Alice:/home/nssalice:/bin/sh
P
cat > "$W/src/group" <<'G'
nssusers:x:42000:
nssteam:x:42010:nssbob,nssalice
nssother:x:42011:nssbobby
G
"$MK" "$W/up/allot" "$W/src/passwd" "$W/src/group" || { echo "cannot make cache"; exit 1; }
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

out=$(inns getent passwd nssbob)
check "getent passwd nssbob" '[ "$out" = "nssbob:*:42001:42000:Bob Builder:/home/nssbob:/bin/bash" ]'
inns getent passwd nssbo >/dev/null; rc=$?
check "getent passwd nssbo (prefix) is not found" '[ $rc = 2 ]'
inns getent passwd nssbobbyx >/dev/null; rc=$?
check "getent passwd nssbobbyx is not found" '[ $rc = 2 ]'
out=$(inns getent passwd 42002)
check "getent passwd 42002 (by uid)" '[ "${out%%:*}" = nssbobby ]'
out=$(inns getent group nssteam)
check "getent group nssteam" '[ "$out" = "nssteam:*:42010:nssbob,nssalice" ]'
out=$(inns getent group 42011)
check "getent group 42011 (by gid)" '[ "$out" = "nssother:*:42011:nssbobby" ]'
out=$(inns id nssbob)
check "id nssbob (initgroups)" '[ "$out" = "uid=42001(nssbob) gid=42000(nssusers) groups=42000(nssusers),42010(nssteam)" ]'
n=$(inns getent passwd | grep -c '^nss')
check "getent passwd enumerates the cache (3 users)" '[ "$n" = 3 ]'
n=$(inns getent group | grep -c '^nss')
check "getent group enumerates the cache (3 groups)" '[ "$n" = 3 ]'
out=$(inns getent passwd root)
check "files still answer first (root)" '[ "${out%%:*}" = root ]'
if command -v valgrind >/dev/null; then
    inns valgrind -q --error-exitcode=9 --leak-check=full getent passwd nssbob >/dev/null 2>"$W/vg"
    rc=$?
    check "valgrind getent passwd nssbob: clean" '[ $rc = 0 ]'
    inns valgrind -q --error-exitcode=9 id nssalice >/dev/null 2>"$W/vg2"; rc=$?
    check "valgrind id nssalice: clean" '[ $rc = 0 ]'
fi

# Hostile caches: each must give "not found" (rc 2), never a crash (rc >= 128).
cp "$W/up/allot/passwd.cache" "$W/good.cache"
for kind in truncated garbage empty huge-count; do
    case $kind in
        truncated) head -c 100 "$W/good.cache" > "$W/bad" ;;
        garbage) head -c 65536 /dev/urandom > "$W/bad" ;;
        empty) : > "$W/bad" ;;
        huge-count) { head -c 48 "$W/good.cache"; printf '\377\377\377\377'; tail -c +53 "$W/good.cache"; } > "$W/bad" ;;
    esac
    mv "$W/bad" "$W/up/allot/passwd.cache"
    inns getent passwd nssbob >/dev/null 2>&1; rc=$?
    check "$kind passwd cache: not found, no crash (rc=$rc)" '[ $rc = 2 ]'
done
out=$(inns getent passwd root)
check "with a corrupt cache, files still answer" '[ "${out%%:*}" = root ]'
rm -f "$W/up/allot/passwd.cache"
inns getent passwd nssbob >/dev/null; rc=$?
check "missing passwd cache: not found" '[ $rc = 2 ]'

# A republished cache is seen by the next process.
echo 'nsscarol:x:42004:42000::/home/nsscarol:/bin/bash' >> "$W/src/passwd"
"$MK" "$W/up/allot" "$W/src/passwd" "$W/src/group"
out=$(inns getent passwd nsscarol)
check "republished cache: new user resolves" '[ "${out%%:*}" = nsscarol ]'

# The host saw none of it.
getent passwd nssbob >/dev/null; rc=$?
check "host namespace unchanged" '[ $rc = 2 ]'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
