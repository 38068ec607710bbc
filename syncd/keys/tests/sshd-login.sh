#!/bin/bash
# sshd-login.sh - a real sshd on loopback with allot-keys as its
# AuthorizedKeysCommand, pam_allot in its account stack and libnss_allot
# resolving the users (who exist only in allot's caches), against a live
# SCIM fixture server (tests/lib/scim_fixture.py).
#
# Everything runs in one private mount namespace held by a sleeping process
# (nsswitch.conf, /etc/pam.d, /var/lib and the library dir are bind/overlay
# mounts there; sshd and every allot-keys run enter it); /etc/pam.d/sshd is
# never edited. Needs root; runs only with ALLOT_LAB=1. Ports are picked free.
#
# Directory users named `root` and `daemon`, with SSH keys
# in the caches and at the source, never log in as those local accounts (on a
# compute node with a job and an admin group that would admit them, and on a
# login node), while directory users still do; allot-keys offers no key from a
# keys.cache or passwd.cache anyone could have written; a node without
# node.role admits no one but root.
set -u
. "${ALLOT_TOP_SRCDIR:?}/tests/lib/harness.sh"
if [ "${ALLOT_LAB:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
    skip "needs ALLOT_LAB=1 and root"
fi
B=${ALLOT_TOP_BUILDDIR:?}
S=${ALLOT_TOP_SRCDIR:?}
PORT=$(free_port) || abort "no free port"
SCIM_PORT=$(free_port) || abort "no free port"
UNUSED_PORT=$(free_port) || abort "no free port"
LIBDIR=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')")")
# Not under /tmp: sshd refuses an AuthorizedKeysCommand below a world-writable directory.
W=$(mktemp -d /run/allot-sshd-XXXXXX)
chmod 755 "$W"
[ -n "${KEEP:-}" ] || on_exit rm -rf "$W"
if [ ! -d /run/sshd ]; then
    mkdir -m 0755 /run/sshd
    on_exit rmdir /run/sshd
fi
# The directory users' ids must not be the host's own (the node layers would rightly refuse them).
for id in 43000 43001 43002 43003 43004 43005 43006 43010; do
    if getent passwd "$id" >/dev/null || getent group "$id" >/dev/null; then
        skip "id $id is a local account or group of this host"
    fi
done

mkdir -p "$W/bin" "$W/lib" "$W/libup" "$W/libwk" "$W/up/allot" "$W/wk" "$W/src" "$W/scim" \
    "$W/authorized" "$W/run" "$W/keys"
chmod 755 "$W/up" "$W/up/allot"
cp "$B/syncd/keys/allot-keys" "$W/bin/"
cp "$B/plugins/pam/.libs/pam_allot.so" "$W/lib/"
cp "$B/plugins/nss/.libs/libnss_allot.so.2" "$W/libup/"
chgrp nogroup "$W/up/allot"  # keys.cache takes this group: readable by nobody (the AKC user)
# dirroot and dirdaemon: the keys of the directory users named root and daemon.
for u in sshalice sshbob sshadmin sshcarol root dirroot dirdaemon; do
    ssh-keygen -q -t ed25519 -N '' -C "$u@test" -f "$W/keys/$u"
done
key() { cut -d' ' -f1-3 < "$W/keys/$1.pub"; }
cat > "$W/src/passwd" <<'P'
sshalice:x:43001:43000:Alice:/home/sshalice:/bin/bash
sshbob:x:43002:43000:Bob:/home/sshbob:/bin/bash
sshadmin:x:43003:43000:Admin:/home/sshadmin:/bin/bash
sshcarol:x:43004:43000:Carol:/home/sshcarol:/bin/bash
root:x:43005:43000:Directory root:/home/root:/bin/bash
daemon:x:43006:43000:Directory daemon:/home/daemon:/bin/bash
P
# The directory's root and daemon are admins, like sshadmin: the admin group must not help them.
cat > "$W/src/group" <<'G'
sshusers:x:43000:
sshadmins:x:43010:sshadmin,root,daemon
G
{
    for u in sshalice sshbob sshadmin sshcarol; do printf '%s\t%s\n' "$u" "$(key $u)"; done
    printf 'root\t%s\n' "$(key dirroot)"
    printf 'daemon\t%s\n' "$(key dirdaemon)"
} > "$W/src/keys"
"$B/plugins/nss/allot-make-cache" "$W/up/allot" "$W/src/passwd" "$W/src/group" "$W/src/keys" ||
    abort "cannot make cache"

# SCIM source: the same users, with their keys (root and daemon too: the live
# answer must not help them either).
scim_users() {  # $@: users whose key the source still has
    python3 - "$W" "$@" <<'PY'
import json, sys
w, keep = sys.argv[1], set(sys.argv[2:])
ext = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
people = [("sshalice", 43001, "sshalice"), ("sshbob", 43002, "sshbob"),
          ("sshadmin", 43003, "sshadmin"), ("sshcarol", 43004, "sshcarol"),
          ("root", 43005, "dirroot"), ("daemon", 43006, "dirdaemon")]
users = []
for name, uid, keyfile in people:
    key = open(f"{w}/keys/{keyfile}.pub").read().split()[:3]
    users.append({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", ext],
                  "id": f"id-{name}", "userName": name, "active": True,
                  ext: {"uidNumber": uid, "gidNumber": 43000,
                        "homeDirectory": f"/home/{name}", "loginShell": "/bin/bash",
                        "sshPublicKeys": [" ".join(key)] if name in keep else []}})
json.dump(users, open(f"{w}/scim/users.json.new", "w"))
PY
    mv "$W/scim/users.json.new" "$W/scim/users.json"
}
ALL="sshalice sshbob sshadmin sshcarol root daemon"
scim_users $ALL
echo '[]' > "$W/scim/groups.json"
echo "test-token" > "$W/scim/token"
echo ok > "$W/scim/mode"
start_service scim python3 "$S/tests/lib/scim_fixture.py" "$W/scim" "$SCIM_PORT"
printf 'test-token\n' > "$W/token"
chown nobody "$W/token"
chmod 0400 "$W/token"

write_config() {  # $1: role ("" leaves node.role out)
    {
        cat <<Y
identity:
  scim_url: http://127.0.0.1:$SCIM_PORT/scim/v2
  token_file: $W/token
  keys_timeout_ms: 800
  cache_dir: /var/lib/allot
node:
Y
        [ -n "$1" ] && echo "  role: $1"
        cat <<Y
  admin_group: sshadmins
  run_dir: $W/run
Y
    } > "$W/allot.yaml.new"
    chmod 0644 "$W/allot.yaml.new"
    mv "$W/allot.yaml.new" "$W/allot.yaml"
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
grep -q pam_allot "$W/pam.d/sshd" || abort "cannot stack pam_allot"
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
$(sshd_test_options)
C
start_service ns unshare -m --propagation private sh -c '
    W=$1; LIBDIR=$2
    mount --bind "$W/nsswitch.conf" /etc/nsswitch.conf &&
    mount --bind "$W/pam.d" /etc/pam.d &&
    mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$W/up",workdir="$W/wk" /var/lib &&
    mount -t overlay overlay -o lowerdir="$LIBDIR",upperdir="$W/libup",workdir="$W/libwk" "$LIBDIR" &&
    touch "$W/ns.ready" && exec sleep 100000' sh "$W" "$LIBDIR"
wait_for 10 "the mount namespace" test -e "$W/ns.ready" || abort "no namespace"
NSPID=$(service_pid ns)
# -r -w: entering a mount namespace resets root and cwd to its root (the host's, in a chroot).
inns() { nsenter -t "$NSPID" -m -r -w -- "$@"; }
# sshd's privilege separation directory, which its unit (RuntimeDirectory=sshd) makes: absent
# where no sshd was ever started (a fresh root, the matrix chroots).
mkdir -p -m 0755 /run/sshd
start_service sshd nsenter -t "$NSPID" -m -r -w -- /usr/sbin/sshd -D -f "$W/sshd_config" -E "$W/sshd.log"
wait_port "$PORT" 10 || { cat "$W/sshd.log" 2>/dev/null; abort "sshd did not start"; }
wait_port "$SCIM_PORT" 10 || abort "the SCIM fixture did not start"

login() {  # login USER KEY → rc of `ssh USER@127.0.0.1 id -un` with keys/KEY; output in $W/out
    ssh -p "$PORT" -i "$W/keys/$2" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=5 \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        "$1@127.0.0.1" id -un >"$W/out" 2>"$W/err"
}
logs_in() {  # logs_in NAME USER KEY WANT: USER gets in and is WANT
    local rc
    login "$2" "$3"; rc=$?
    if [ $rc = 0 ] && [ "$(cat "$W/out")" = "$4" ]; then pass "$1"; else
        fail "$1" "rc=$rc out=$(cat "$W/out") err=$(cat "$W/err")"
    fi
}
# The positive request of every refusal: root still logs in with its own key.
alive_probe login root root
refused() {  # refused NAME USER KEY
    local rc
    login "$2" "$3"; rc=$?
    if [ $rc = 255 ]; then expect_refused "$1" "rc=$rc" "rc=255"; else
        fail "$1" "rc=$rc out=$(cat "$W/out")"
    fi
}
entry() {  # $1 job id, $2 user, $3 uid: a root-written registry entry, as the prolog writes
    mkdir -p -m 0755 "$W/run/jobs"
    printf 'allot-job-entry 1\njob_id=%s\nuid=%s\nuser=%s\nnode=n1\nboot_id=%s\nstart=%s\nexpires=0\ntier=\nqos=\npreemptible=0\ngrace_seconds=0\n' \
        "$1" "$3" "$2" "$(cat /proc/sys/kernel/random/boot_id)" "$(date +%s)" > "$W/run/jobs/$1.n1"
}
keys_for() {  # keys_for USER [allot-keys options]: allot-keys' output in the namespace, as nobody
    local user=$1
    shift
    inns setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$W/bin/allot-keys" --config "$W/allot.yaml" "$@" "$user" 2>/dev/null
}

refused "compute node: user without a job is refused" sshalice sshalice
entry 901 sshalice 43001
logs_in "compute node: user with a job gets in" sshalice sshalice sshalice
check "sshd used allot-keys" grep -q "allot-keys" "$W/sshd.log"
refused "compute node: sshbob (no job, alice has one) refused" sshbob sshbob
logs_in "compute node: admin group member gets in" sshadmin sshadmin sshadmin
logs_in "compute node: root gets in with its own key" root root root
refused "key from a file but no job: refused by pam_allot" sshcarol sshcarol
check "pam_allot said why" grep -q "Access denied for user sshcarol by PAM account configuration" \
    "$W/sshd.log"

# --- directory users named like local accounts ----------------
# Jobs for their directory uids and for the local uids, and admin-group membership:
# nothing may help them.
entry 902 root 43005
entry 903 daemon 43006
entry 904 daemon "$(id -u daemon)"
for role in compute login; do
    write_config $role
    refused "$role node: directory user 'root' cannot log in as root" root dirroot
    refused "$role node: directory user 'daemon' cannot log in as daemon" daemon dirdaemon
    ssh -p "$PORT" -i "$W/keys/dirroot" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        root@127.0.0.1 id -u >"$W/out" 2>/dev/null
    expect_eq "$role node: ssh -i <directory root's key> root@ id -u prints no uid" \
        "$(cat "$W/out")" ""
    logs_in "$role node: a directory user still gets in" sshalice sshalice sshalice
    expect_eq "$role node: allot-keys root prints nothing" "$(keys_for root)" ""
    expect_eq "$role node: allot-keys daemon prints nothing" "$(keys_for daemon)" ""
    expect_eq "$role node: allot-keys root --cache-only prints nothing" \
        "$(keys_for root --cache-only)" ""
    expect_eq "$role node: allot-keys sshalice prints her key" "$(keys_for sshalice)" \
        "$(key sshalice)"
done
logs_in "login node: root still gets in with its own key" root root root
expect_eq "getent passwd root in the namespace: the local root" "$(inns getent passwd root)" \
    "$(getent passwd root)"
check "allot-keys said why (syslog is absent here: -v)" sh -c \
    "nsenter -t $NSPID -m -r -w -- '$W/bin/allot-keys' -v --config '$W/allot.yaml' root 2>&1 |
     grep -q 'source=not-directory-user'"

write_config login
login sshbob sshbob; rc=$?
expect_eq "login node: never gated" "$rc" 0
login sshcarol sshcarol; rc=$?
expect_eq "login node: pam_allot lets sshcarol in" "$rc" 0

# --- no node.role, no login but root's ----------------------------
write_config ""
refused "no node.role: admin refused" sshadmin sshadmin
refused "no node.role: user with a job refused" sshalice sshalice
refused "no node.role: key from a file refused by pam_allot" sshcarol sshcarol
logs_in "no node.role: root still gets in" root root root
check "no node.role: allot-keys says what to set" sh -c \
    "nsenter -t $NSPID -m -r -w -- '$W/bin/allot-keys' -v --config '$W/allot.yaml' sshalice 2>&1 |
     grep -q 'node.role is not set'"
write_config compute

# --- caches anyone could have written ------------------------
echo down > "$W/scim/mode"  # the cache is all allot-keys has
expect_eq "source down: allot-keys serves sshalice from keys.cache" "$(keys_for sshalice)" \
    "$(key sshalice)"
chmod 0666 "$W/up/allot/keys.cache"
expect_eq "world-writable keys.cache: no key" "$(keys_for sshalice)" ""
refused "world-writable keys.cache: sshalice cannot log in" sshalice sshalice
chmod 0640 "$W/up/allot/keys.cache"
chown nobody "$W/up/allot/keys.cache"
expect_eq "keys.cache owned by nobody: no key" "$(keys_for sshalice)" ""
chown root "$W/up/allot/keys.cache"
chmod 0646 "$W/up/allot/passwd.cache"
expect_eq "world-writable passwd.cache: no key" "$(keys_for sshalice)" ""
chmod 0644 "$W/up/allot/passwd.cache"
chmod 1777 "$W/up/allot"
expect_eq "caches in a world-writable directory: no key" "$(keys_for sshalice)" ""
chmod 0755 "$W/up/allot"
expect_eq "caches fixed: sshalice's key again" "$(keys_for sshalice)" "$(key sshalice)"
logs_in "caches fixed: source down, cached key works" sshalice sshalice sshalice
echo ok > "$W/scim/mode"

scim_users sshbob sshadmin sshcarol root daemon  # sshalice's key removed at the source
refused "key removed at the source: refused at the next login" sshalice sshalice
scim_users $ALL

sed -i "s|127.0.0.1:$SCIM_PORT|127.0.0.1:$UNUSED_PORT|" "$W/allot.yaml"
expect_eq "source unreachable: allot-keys falls back to the cache" \
    "$(keys_for sshalice | wc -l)" 1
expect_eq "allot-keys: hostile user name gives no output" "$(keys_for 'sshalice
root'; echo "rc=$?")" "rc=0"
finish
