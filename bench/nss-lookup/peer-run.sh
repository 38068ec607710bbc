#!/bin/bash
# bench/nss-lookup/peer-run.sh - one module's nss_bench run inside a private Debian 12 root,
# for the peers that are daemons (sssd, nscd) and, for same-environment ratios, the others.
#
#   peer-run.sh MODE N ITERS GL_ITERS W PKG LOWER     (run.sh calls it under
#                                                     unshare -m -p -f --mount-proc)
# MODE is files, cache, allot, sss or nscd. The root is an overlay: LOWER (the cached Debian 12
# root, read-only), PKG (the layer holding sssd-common, libnss-sss, nscd and libnss-cache,
# made once by run.sh) and a fresh writable layer under W/env/N/MODE, so no run sees another's
# daemon state and nothing on the host changes. W/N holds what run.sh wrote for N users.
# Prints nss_bench's line; for a daemon first the line of the pass that fills its cache
# (prefixed "cold"), then the measured pass over the same lookups (the same seed, so the same
# names and ids). All mounts and processes go with the namespaces when this script exits.
set -eu
mode=$1 n=$2 it=$3 gl=$4 W=$5 PKG=$6 LOWER=$7
# sssd's files provider loads every user into its ldb cache at start: 84-87 s of CPU for 10,000
# users here; for 100,000 it had not answered after 9 minutes of CPU (its timestamps cache
# was then 116 MB, against 5.9 MB once 10,000 were loaded: faster than linear), hence a bound.
if [ "$mode" = sss ] && ! [ "$n" -le "${ALLOT_NSS_SSS_MAX_USERS:-20000}" ]; then
    echo "peer-run.sh: sss not run for $n users: sssd's files provider takes more than" \
        "9 minutes to load them (ALLOT_NSS_SSS_MAX_USERS=$n to try)" >&2
    exit 1
fi
E=$W/env/$n/$mode
R=$E/root
mkdir -p "$E/up" "$E/wk" "$R"
mount -t overlay overlay -o "lowerdir=$PKG:$LOWER,upperdir=$E/up,workdir=$E/wk" "$R"
mount -t proc proc "$R/proc"
mount --bind /dev "$R/dev"
mkdir -p "$R/opt/nss-bench/lib"
cp "$W/nss_bench" "$R/opt/nss-bench/"
cp "$W/lib/libnss_allot.so.2" "$R/opt/nss-bench/lib/"
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
bench() {
    in_root LD_LIBRARY_PATH=/opt/nss-bench/lib ALLOT_BENCH_BIG="${ALLOT_BENCH_BIG:-}" \
        /opt/nss-bench/nss_bench "$n" "$it" "$gl"
}
# One lookup by another process before the measured one: the root was just mounted and a
# node's is not (run.sh's run_ns); the daemons' cold pass does the same for theirs.
warm() { in_root LD_LIBRARY_PATH=/opt/nss-bench/lib getent passwd bench0 > /dev/null || true; }
nss() {  # nss PASSWD GROUP [INITGROUPS]
    sed -i "s/^passwd:.*/passwd: $1/; s/^group:.*/group: $2/; /^initgroups:/d" "$R/etc/nsswitch.conf"
    [ -z "${3:-}" ] || echo "initgroups: $3" >> "$R/etc/nsswitch.conf"
}
big_files() { cp "$W/$n/passwd" "$R/etc/passwd" && cp "$W/$n/group" "$R/etc/group"; }
# Wait until the daemon answers bench<N-1> itself (not a fallback module): up to 30 min.
wait_answer() {  # wait_answer getent-args...
    local i
    for ((i = 0; i < 9000; i++)); do
        in_root getent "$@" > /dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "peer-run.sh: $mode never answered $*" >&2
    return 1
}
case $mode in
files)
    big_files && nss files files && warm && bench ;;
cache)
    cp "$W/$n/etcup/"* "$R/etc/" && nss cache cache && warm && bench ;;
allot)
    mkdir -p "$R/var/lib/allot" && cp "$W/$n/up/allot/"* "$R/var/lib/allot/" && nss allot allot &&
        warm && bench ;;
sss)
    # sssd's files provider (sssd 2.8: id_provider = files) over the big files, its memory
    # cache (/var/lib/sss/mc, read by libnss_sss without asking the daemon) sized so that every
    # user fits: the 8/6/10 MiB defaults hold fewer entries than 100,000 users.
    # nsswitch as the files provider is meant to be run: sss first, files behind it (sssd
    # itself resolves through files); an initgroups line so that a user sss found is not
    # looked up again in /etc/group (without it glibc asks every module for initgroups).
    big_files
    cat > "$R/etc/sssd/sssd.conf" <<EOF
[sssd]
services = nss
domains = files
[nss]
timeout = 3600
# no negative entries: the readiness probe below must not leave one behind
entry_negative_timeout = 0
local_negative_timeout = 0
reconnection_retries = 1000
memcache_size_passwd = 128
memcache_size_group = 128
memcache_size_initgroups = 128
[domain/files]
id_provider = files
timeout = 3600
EOF
    chmod 600 "$R/etc/sssd/sssd.conf"
    nss "sss files" "sss files" "sss files"
    t0=$(date +%s)
    in_root sssd -i --logger=stderr -d 1 > "$E/sssd.log" 2>&1 &
    wait_answer -s sss passwd "bench$((n - 1))"
    echo "sssd answered after $(($(date +%s) - t0)) s (files provider loading $n users)" >&2
    printf 'cold '; bench
    bench ;;
nscd)
    # nscd over files, with its shared (mapped) databases as Debian ships them; the hash
    # tables sized for the users (suggested-size a prime above their number, as nscd.conf(5)
    # asks) and room for all of them.
    big_files && nss files files
    sed -i -E 's/^(\s*suggested-size\s+(passwd|group)\s+).*/\1200003/;
        s/^(\s*max-db-size\s+(passwd|group)\s+).*/\1268435456/' "$R/etc/nscd.conf"
    mkdir -p "$R/run/nscd"
    in_root nscd -F > "$E/nscd.log" 2>&1 &
    for ((i = 0; i < 100; i++)); do [ -S "$R/run/nscd/socket" ] && break; sleep 0.1; done
    [ -S "$R/run/nscd/socket" ] || { echo "peer-run.sh: nscd did not start" >&2; exit 1; }
    printf 'cold '; bench
    bench ;;
*) echo "peer-run.sh: unknown mode $mode" >&2; exit 2 ;;
esac
