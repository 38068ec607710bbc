#!/bin/bash
# sshd-login.sh - a real sshd on loopback with allot-keys as its
# AuthorizedKeysCommand, pam_allot in its account stack and libnss_allot
# resolving the users (who exist only in allot's caches), against a live
# SCIM fixture server (syncd/tests/scim_fixture.py).
#
# Everything runs in a private mount namespace (nsswitch.conf, /etc/pam.d,
# /var/lib and the library dir are bind/overlay mounts there); /etc/pam.d/sshd
# is never edited. Needs root; runs only with ALLOT_LAB=1. Ports 17250-17251.
set -u
if [ "${ALLOT_LAB:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
    echo "0 passed, 0 failed (skipped: needs ALLOT_LAB=1 and root)"
    exit 77
fi
B=${ALLOT_TOP_BUILDDIR:?}
S=${ALLOT_TOP_SRCDIR:?}
PORT=${SSHD_TEST_PORT:-17250}
SCIM_PORT=$((PORT + 1))
LIBDIR=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')")")
W=$(mktemp -d /run/allot-sshd-XXXXXX)
chmod 755 "$W"
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
no() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
made_run_sshd=
[ -d /run/sshd ] || { mkdir -m 0755 /run/sshd; made_run_sshd=1; }
cleanup() {
    [ -f "$W/sshd.pid" ] && kill "$(cat "$W/sshd.pid")" 2>/dev/null
    [ -n "${SCIM_PID:-}" ] && kill "$SCIM_PID" 2>/dev/null
    [ -n "${NS_PID:-}" ] && kill "$NS_PID" 2>/dev/null
    sleep 0.2
    [ -n "${KEEP:-}" ] || rm -rf "$W"
    [ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null
}
trap cleanup EXIT

mkdir -p "$W/bin" "$W/lib" "$W/libup" "$W/libwk" "$W/up/allot" "$W/wk" "$W/src" "$W/scim" \
    "$W/authorized" "$W/run" "$W/keys"
cp "$B/syncd/keys/allot-keys" "$W/bin/"
cp "$B/plugins/pam/.libs/pam_allot.so" "$W/lib/"
cp "$B/plugins/nss/.libs/libnss_allot.so.2" "$W/libup/"
chgrp nogroup "$W/up/allot"  # keys.cache takes this group: readable by nobody (the AKC user)
for u in sshalice sshbob sshadmin sshcarol root; do
    ssh-keygen -q -t ed25519 -N '' -C "$u@test" -f "$W/keys/$u"
done
key() { cut -d' ' -f1-3 < "$W/keys/$1.pub"; }
cat > "$W/src/passwd" <<'P'
sshalice:x:43001:43000:Alice:/home/sshalice:/bin/bash
sshbob:x:43002:43000:Bob:/home/sshbob:/bin/bash
sshadmin:x:43003:43000:Admin:/home/sshadmin:/bin/bash
sshcarol:x:43004:43000:Carol:/home/sshcarol:/bin/bash
P
cat > "$W/src/group" <<'G'
sshusers:x:43000:
sshadmins:x:43010:sshadmin
G
for u in sshalice sshbob sshadmin sshcarol; do printf '%s\t%s\n' "$u" "$(key $u)"; done > "$W/src/keys"
"$B/plugins/nss/allot-make-cache" "$W/up/allot" "$W/src/passwd" "$W/src/group" "$W/src/keys" ||
    { echo "cannot make cache"; exit 1; }

# SCIM source: the same users, with their keys.
scim_users() {  # $@: users whose key the source still has
    python3 - "$W" "$@" <<'PY'
import json, sys
w, keep = sys.argv[1], set(sys.argv[2:])
ext = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
users = []
for i, name in enumerate(["sshalice", "sshbob", "sshadmin", "sshcarol"]):
    key = open(f"{w}/keys/{name}.pub").read().split()[:3]
    users.append({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", ext],
                  "id": f"id-{name}", "userName": name, "active": True,
                  ext: {"uidNumber": 43001 + i, "gidNumber": 43000,
                        "homeDirectory": f"/home/{name}", "loginShell": "/bin/bash",
                        "sshPublicKeys": [" ".join(key)] if name in keep else []}})
json.dump(users, open(f"{w}/scim/users.json.new", "w"))
PY
    mv "$W/scim/users.json.new" "$W/scim/users.json"
}
scim_users sshalice sshbob sshadmin sshcarol
echo '[]' > "$W/scim/groups.json"
echo "test-token" > "$W/scim/token"
echo ok > "$W/scim/mode"
python3 "$S/syncd/tests/scim_fixture.py" "$W/scim" "$SCIM_PORT" &
SCIM_PID=$!
printf 'test-token\n' > "$W/token"
chown nobody "$W/token"
chmod 0400 "$W/token"

write_config() {  # $1: role
    cat > "$W/allot.yaml" <<Y
identity:
  scim_url: http://127.0.0.1:$SCIM_PORT/scim/v2
  token_file: $W/token
  keys_timeout_ms: 800
  cache_dir: /var/lib/allot
node:
  role: $1
  admin_group: sshadmins
  run_dir: $W/run
Y
    chmod 0644 "$W/allot.yaml"
}
write_config compute

# Root logs in with an AuthorizedKeysFile (it is never in the caches).
key root > "$W/authorized/root"
chmod 600 "$W/authorized/root"
# sshcarol also has a key in a file: the PAM account module must still refuse her.
key sshcarol > "$W/authorized/sshcarol"
chmod 644 "$W/authorized/sshcarol"

cp -a /etc/pam.d "$W/pam.d"
sed -i "0,/^@include common-account/s||account required $W/lib/pam_allot.so config=$W/allot.yaml\n@include common-account|" \
    "$W/pam.d/sshd"
grep -q pam_allot "$W/pam.d/sshd" || { echo "cannot stack pam_allot"; exit 1; }
sed 's/^passwd:.*/passwd:         files allot/; s/^group:.*/group:          files allot/' \
    /etc/nsswitch.conf > "$W/nsswitch.conf"
ssh-keygen -q -t ed25519 -N '' -f "$W/hostkey"
cat > "$W/sshd_config" <<C
Port $PORT
ListenAddress 127.0.0.1
HostKey $W/hostkey
PidFile $W/sshd.pid
AuthorizedKeysFile $W/authorized/%u
AuthorizedKeysCommand $W/bin/allot-keys --config $W/allot.yaml %u
AuthorizedKeysCommandUser nobody
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM yes
PermitRootLogin prohibit-password
LogLevel VERBOSE
C
unshare -m --propagation private sh -c '
    W=$1; LIBDIR=$2
    mount --bind "$W/nsswitch.conf" /etc/nsswitch.conf &&
    mount --bind "$W/pam.d" /etc/pam.d &&
    mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$W/up",workdir="$W/wk" /var/lib &&
    mount -t overlay overlay -o lowerdir="$LIBDIR",upperdir="$W/libup",workdir="$W/libwk" "$LIBDIR" &&
    exec /usr/sbin/sshd -D -f "$W/sshd_config" -E "$W/sshd.log"' sh "$W" "$LIBDIR" &
NS_PID=$!
for _ in $(seq 50); do
    (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break
    sleep 0.1
done

login() {  # $1 user → rc of `ssh user@127.0.0.1 id -un`
    ssh -p "$PORT" -i "$W/keys/$1" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=5 \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        "$1@127.0.0.1" id -un >"$W/out" 2>"$W/err"
}
entry() {  # $1 job id, $2 user, $3 uid: a root-written registry entry, as the prolog writes
    mkdir -p -m 0755 "$W/run/jobs"
    printf 'allot-job-entry 1\njob_id=%s\nuid=%s\nuser=%s\nnode=n1\nboot_id=%s\nstart=%s\nexpires=0\ntier=\nqos=\npreemptible=0\ngrace_seconds=0\n' \
        "$1" "$3" "$2" "$(cat /proc/sys/kernel/random/boot_id)" "$(date +%s)" > "$W/run/jobs/$1.n1"
}

login sshalice; rc=$?
check "compute node: user without a job is refused (rc=$rc)" '[ $rc = 255 ]'
entry 901 sshalice 43001
login sshalice; rc=$?
check "compute node: user with a job gets in (rc=$rc)" '[ $rc = 0 ] && [ "$(cat $W/out)" = sshalice ]'
grep -q "allot-keys" "$W/sshd.log" && ok "sshd used allot-keys" || no "sshd used allot-keys"
login sshbob; rc=$?
check "compute node: sshbob (no job, alice has one) refused (rc=$rc)" '[ $rc = 255 ]'
login sshadmin; rc=$?
check "compute node: admin group member gets in (rc=$rc)" '[ $rc = 0 ]'
login root; rc=$?
check "compute node: root gets in (rc=$rc)" '[ $rc = 0 ] && [ "$(cat $W/out)" = root ]'
login sshcarol; rc=$?
check "key from a file but no job: refused by pam_allot (rc=$rc)" \
    '[ $rc = 255 ] && grep -q "Access denied for user sshcarol by PAM account configuration" $W/sshd.log'

write_config login
login sshbob; rc=$?
check "login node: never gated (rc=$rc)" '[ $rc = 0 ]'
login sshcarol; rc=$?
check "login node: pam_allot lets sshcarol in (rc=$rc)" '[ $rc = 0 ]'
write_config compute

scim_users sshbob sshadmin sshcarol   # sshalice's key removed at the source
login sshalice; rc=$?
check "key removed at the source: refused at the next login (rc=$rc)" '[ $rc = 255 ]'
echo down > "$W/scim/mode"
login sshalice; rc=$?
check "source down: cached key works (rc=$rc)" '[ $rc = 0 ]'
echo ok > "$W/scim/mode"
scim_users sshalice sshbob sshadmin sshcarol

# allot-keys latency: live source, source down (503), source unreachable, slow source.
lat() {  # prints the median ms of 15 runs of allot-keys sshalice in the namespace-free form
    for _ in $(seq 15); do
        s=$(date +%s%N)
        "$W/bin/allot-keys" --config "$W/allot.yaml.lat" sshalice >/dev/null 2>&1
        echo $((($(date +%s%N) - s) / 1000))
    done | sort -n | sed -n 8p
}
sed "s|/var/lib/allot|$W/up/allot|" "$W/allot.yaml" > "$W/allot.yaml.lat"
sed -i 's/role: compute/role: login/' "$W/allot.yaml.lat"
live_us=$(lat)
echo down > "$W/scim/mode"; down_us=$(lat)
echo ok > "$W/scim/mode"
sed -i "s|127.0.0.1:$SCIM_PORT|127.0.0.1:$((PORT + 9))|" "$W/allot.yaml.lat"; refused_us=$(lat)
echo "allot-keys median latency: live ${live_us} us, source 503 ${down_us} us, source refused ${refused_us} us"
n=$("$W/bin/allot-keys" --config "$W/allot.yaml.lat" sshalice | wc -l)
check "allot-keys falls back to the cache when the source is unreachable" '[ "$n" = 1 ]'
out=$("$W/bin/allot-keys" --config "$W/allot.yaml.lat" 'sshalice
root'; echo "rc=$?")
check "allot-keys: hostile user name gives no output, rc 0" '[ "$out" = "rc=0" ]'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
