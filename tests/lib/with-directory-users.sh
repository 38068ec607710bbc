#!/bin/sh
# with-directory-users.sh DIR "USER..." -- CMD [ARG...]
#
# Runs CMD (as root) the way it runs on a node whose directory users come
# from libnss_allot, not from files: in a private mount namespace where USER...
# are absent from /etc/passwd and /etc/group (so allot's "a directory user may
# not be a local account" rule does not refuse them), while NSS still resolves
# them, through nss_wrapper, from the real /etc/passwd plus DIR/extra-passwd
# (passwd(5) lines of users that exist only in the directory). The lab creates
# its users with useradd because slurmctld and the jobs need them; allot-syncd
# must see them as directory users. DIR receives the generated files. CMD is
# exec'ed, so a background run's $! is CMD's own pid.
set -eu
dir=$1 users=$2
shift 2
[ "${1:-}" = -- ] && shift
wrapper=$(ls /usr/lib/*/libnss_wrapper.so 2>/dev/null | head -1)
[ -n "$wrapper" ] || { echo "with-directory-users: libnss_wrapper.so missing (Debian package libnss-wrapper)" >&2; exit 1; }
mkdir -p "$dir"
pattern=$(printf '%s\n' $users | sed 's/.*/^&:/' | paste -sd'|' -)
grep -Ev "$pattern" /etc/passwd >"$dir/files-passwd" || true
grep -Ev "$pattern" /etc/group >"$dir/files-group" || true
cat /etc/passwd "$dir/extra-passwd" 2>/dev/null >"$dir/nss-passwd" || true
# /etc is an overlay of this namespace (its upper layer a tmpfs of its own), never a bind
# over /etc/passwd: a lab's useradd beside this replaces that file by rename, which detaches
# such a bind in every namespace (docs/lab.md G25).
mkdir -p "$dir/etc-overlay"
exec unshare --mount --propagation private sh -c '
    o=$1/etc-overlay
    mount -t tmpfs tmpfs "$o" && mkdir "$o/upper" "$o/work" &&
        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$o/upper,workdir=$o/work" /etc &&
        cat "$1/files-passwd" >/etc/passwd && cat "$1/files-group" >/etc/group || exit 1
    dir=$1 wrapper=$2; shift 2
    exec env LD_PRELOAD="$wrapper" NSS_WRAPPER_PASSWD="$dir/nss-passwd" NSS_WRAPPER_GROUP=/etc/group "$@"
' sh "$dir" "$wrapper" "$@"
