# test-ns.sh - sourced by run.sh, run-one.sh and tests/demo/time-bare.sh: how a root runs
# its tests, and how it is let go.
#
# in_test_ns ROOT VAR=VALUE... CMD...: CMD chrooted in ROOT with a clean environment (the
# VARs added), in network and PID namespaces of its own. Besides loopback the network has
# one veth pair with a private address: getaddrinfo(AI_ADDRCONFIG), with which slurmdbd
# 24.11+ binds its port, finds no IPv4 at all on a loopback-only host.
in_test_ns() {
    local root=$1
    shift
    unshare --net --pid --fork --kill-child --mount-proc="$root/proc" sh -c 'ip link set lo up &&
        ip link add allot0 type veth peer name allot1 && ip addr add 10.254.0.1/30 dev allot0 &&
        ip link set allot0 up && ip link set allot1 up && exec "$@"' sh \
        chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 "$@"
}

# release_root ROOT: kills what still runs with ROOT as its root directory (by PID, nothing
# else), then unmounts the caller's MOUNTED array in reverse order.
release_root() {
    local pid i
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
        [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$1" ] && kill -KILL "$pid" 2>/dev/null
    done
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}"
    done
    return 0
}
