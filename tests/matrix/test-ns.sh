# test-ns.sh - sourced by run.sh and run-one.sh: how a suite's root runs its tests.
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
