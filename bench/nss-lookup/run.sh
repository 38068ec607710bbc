#!/bin/bash
# bench/nss-lookup/run.sh - libnss_allot vs the peers sites run, same users, one run.
#
# For N = 10,000 and 100,000 users (SIZES="10000 100000"), builds an /etc/passwd and
# /etc/group with those users and groups of the shape GROUP_SHAPE says (not GROUPS, which is
# bash's own): "realistic" (the default, issue 18's): N/10 groups benchg<g> (gid 300000+g) of
# 190 members and N/500 groups benchbig<k> (gid 400000+k) of 500 members, every user bench<i>
# a member of 20 groups (19 benchg, one of them its primary group benchg<i/10>, and
# benchbig<i/500>); "ten" (until 2026-12-04): N/10 groups of 10, each user a member of its
# primary group only. The same users in libnss-cache's files
# (/etc/passwd.cache, /etc/group.cache and their sorted indexes, written as nsscache
# writes them: nsscache-index.py) and allot caches of the same users, then runs
# nss_bench in a private mount namespace once per module: "files" over the big files
# (bind-mounted over /etc/passwd and /etc/group), "cache" (Debian's libnss-cache) over
# its files (overlay on /etc) and "allot" over the caches (overlay on /var/lib, module
# via LD_LIBRARY_PATH): env "host".
# Then, env "deb12", in a private Debian 12 root (peer-run.sh: overlay of the cached root
# tests/matrix made, own mount and PID namespaces, nothing started on the host): files, cache
# and allot again, nscd over files and sssd's files provider (libnss_sss answering from its
# memory cache), each daemon started for the run; its first pass fills its cache ("-cold"
# rows), the measured pass repeats the same lookups, as a site's long-running daemon serves.
# Prints ns per lookup and, per env, the ratio of the fastest peer to allot (>1: allot faster),
# and (rows "allot-floor" and "allot-replace", not compared) getpwuid through glibc against the
# module called directly (nss_bench floor: what of allot's steady figure is glibc's own per-call
# work) and the first lookup after the writer republishes under a running process.
# The closing RESULT line gives allot's first lookup at 100,000 users (us, host) and, over every
# figure (first lookup, getpwnam, getpwuid, getgrgid, getgrouplist, getgrnam and getgrgid of the
# big groups (the 500-member ones; in "ten" the groups of 10) at both sizes, both envs;
# ratios only within one env), the worst ratio of allot's time to the fastest peer's; peers=
# names the peers measured (sss and nscd only when they answered at both sizes).
# Needs libnss-cache on the host; for sss/nscd the cached root
# ${ALLOT_CHROOT_CACHE:-/var/cache/allot}/chroot-bookworm and, once, Debian's archive (the
# packages are kept in ${ALLOT_NSS_PEERS_DIR:-/var/tmp/allot-nss-peers}); without them the
# daemons are left out and said so. ALLOT_NSS_DEB12_MAX_USERS=N measures env deb12 only up to N
# users (nscd's first pass at 100,000 realistic users scans a 22 MB /etc/group per miss).
# Root only (mount namespaces). Usage: bench/nss-lookup/run.sh [BUILD_DIR]
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
HERE=$TOP/bench/nss-lookup
B=$BUILD
[ "$(id -u)" = 0 ] || { echo "needs root (mount namespaces)"; exit 77; }
harness_tmpdir nssbench
W=$HARNESS_TMP
g++ -std=c++17 -O2 -o "$W/nss_bench" "$HERE/nss_bench.cpp" -ldl
mkdir -p "$W/lib"
cp "$B/plugins/nss/.libs/libnss_allot.so.2" "$W/lib/"

GROUP_SHAPE=${GROUP_SHAPE:-realistic}
case $GROUP_SHAPE in realistic | ten) ;; *) echo "GROUP_SHAPE is realistic or ten"; exit 2 ;; esac

run_ns() {  # run_ns <files|cache|allot> <N> <iters> <getgrouplist iters | floor | replace | first>
    local mode=$1 n=$2 it=$3 gl=$4
    sed "s/^passwd:.*/passwd: $mode/; s/^group:.*/group: $mode/" /etc/nsswitch.conf > "$W/nss.$mode"
    # shellcheck disable=SC2016
    unshare -m --propagation private sh -c '
        W=$1 mode=$2 n=$3 it=$4 gl=$5
        case $mode in
        files) mount --bind "$W/$n/passwd" /etc/passwd && mount --bind "$W/$n/group" /etc/group ;;
        cache) mkdir -p "$W/$n/etcwk" && mount -t overlay overlay \
                -o lowerdir=/etc,upperdir="$W/$n/etcup",workdir="$W/$n/etcwk" /etc ;;
        allot) mkdir -p "$W/$n/wk" && mount -t overlay overlay \
                -o lowerdir=/var/lib,upperdir="$W/$n/up",workdir="$W/$n/wk" /var/lib ;;
        esac
        mount --bind "$W/nss.$mode" /etc/nsswitch.conf
        # One lookup by another process first: the mounts above are new, and the first
        # access to each path through them (an overlay most of all) costs the kernel 20-60 us
        # that a process on a running node does not pay. nss_bench stays a fresh process.
        LD_LIBRARY_PATH="$W/lib" getent passwd bench0 > /dev/null || true
        case $gl in floor | replace | first) set -- "$gl" "$n" "$it" ;; *) set -- "$n" "$it" "$gl" ;; esac
        LD_LIBRARY_PATH="$W/lib" exec "$W/nss_bench" "$@"' sh "$W" "$mode" "$n" "$it" "$gl"
}

ldconfig -p | grep -q 'libnss_cache\.so\.2 ' ||
    { echo "libnss-cache is not installed (Debian package libnss-cache)"; exit 1; }

# The daemons (sssd, nscd) run in a private Debian 12 root, never on the host: an overlay of the
# cached root (tests/matrix's, read-only), a layer holding the packages (made once, kept in
# $PEERS_DIR) and a fresh writable layer per run, in its own mount and PID namespaces
# (peer-run.sh). files, cache and allot are measured there too, so its ratios are
# same-environment.
PEERS_LOWER=${ALLOT_CHROOT_CACHE:-/var/cache/allot}/chroot-bookworm
PEERS_DIR=${ALLOT_NSS_PEERS_DIR:-/var/tmp/allot-nss-peers}
PKG=$PEERS_DIR/pkg
peers_layer() {
    [ -d "$PEERS_LOWER/usr/sbin" ] ||
        { echo "no cached Debian 12 root $PEERS_LOWER (tests/matrix/run.sh bookworm makes it)"; return 1; }
    [ -x "$PKG/usr/sbin/sssd" ] && [ -x "$PKG/usr/sbin/nscd" ] && return 0
    rm -rf "$PEERS_DIR/pkgwk"
    mkdir -p "$PKG" "$PEERS_DIR/pkgwk" "$PEERS_DIR/root"
    # shellcheck disable=SC2016
    unshare -m -p -f --mount-proc --propagation private sh -c '
        L=$1 D=$2 R=$2/root
        mount -t overlay overlay -o "lowerdir=$L,upperdir=$D/pkg,workdir=$D/pkgwk" "$R" &&
        mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" &&
        cp /etc/resolv.conf "$R/etc/resolv.conf" &&
        printf "#!/bin/sh\nexit 101\n" > "$R/usr/sbin/policy-rc.d" && chmod +x "$R/usr/sbin/policy-rc.d" &&
        chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
            DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -q &&
            apt-get install -y -q --no-install-recommends sssd-common libnss-sss nscd libnss-cache"
        ' sh "$PEERS_LOWER" "$PEERS_DIR" > "$W/apt.log" 2>&1 ||
        { tail -5 "$W/apt.log"; echo "could not install sssd and nscd in the private root"; return 1; }
}
daemons=1
peers_layer || daemons=0
peer_ns() {  # peer_ns <mode> <N> <iters> <getgrouplist iters>
    unshare -m -p -f --mount-proc --propagation private "$HERE/peer-run.sh" "$1" "$2" "$3" "$4" \
        "$W" "$PKG" "$PEERS_LOWER" 2>> "$W/peers.log"
}

us() { LC_ALL=C awk -v a="$1" 'BEGIN { printf "%.1f\n", a / 1000 }'; }
best() { LC_ALL=C awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b ? a : b) }'; }
worst=0
declare -A V  # V[env/n/mode] = "first name uid gid gl" (ns)
echo "groups: $GROUP_SHAPE"
printf '%-8s %-7s %-10s %12s %14s %14s %14s %16s %14s %14s\n' users env module "first(us)" "getpwnam(ns)" \
    "getpwuid(ns)" "getgrgid(ns)" "getgrouplist(ns)" "grnam-big(ns)" "grgid-big(ns)"
row() {  # row N ENV MODE first name uid gid gl grnam-big grgid-big
    printf '%-8s %-7s %-10s %12.1f %14.0f %14.0f %14.0f %16.0f %14.0f %14.0f\n' "$1" "$2" "$3" \
        "$(us "$4")" "$5" "$6" "$7" "$8" "$9" "${10}"
}
# take N ENV MODE LINE: records nss_bench's line "n first name uid gid misses gl bigname biggid"
# and prints it
take() {
    local n=$1 env=$2 mode=$3 first name uid gid gl bn bg
    read -r _ first name uid gid _ gl bn bg <<<"$4"
    [ -n "$bg" ] || { echo "$n $env $mode: no figures (see $W/peers.log)"; return 1; }
    V[$env/$n/$mode]="$first $name $uid $gid $gl $bn $bg"
    row "$n" "$env" "$mode" "$first" "$name" "$uid" "$gid" "$gl" "$bn" "$bg"
}
# take_host MODE N ITERS GL: take for env host, with "first" the median of 7 fresh processes
# (one sample moves 2-4x with the load; each process in a namespace of its own, as run_ns makes)
take_host() {
    local line first i
    line=$(run_ns "$1" "$2" "$3" "$4")
    first=$(for i in 1 2 3 4 5 6 7; do run_ns "$1" "$2" 1 first; done | awk '{ print $2 }' | median)
    take "$2" host "$1" "$(awk -v f="$first" '{ $2 = f; print }' <<<"$line")"
}
# compare N ENV PEER...: best peer per figure against allot, folded into worst
compare() {
    local n=$1 env=$2 p i b=() a r
    shift 2
    read -r -a a <<<"${V[$env/$n/allot]}"
    for p in "$@"; do
        [ -n "${V[$env/$n/$p]:-}" ] || continue
        read -r -a r <<<"${V[$env/$n/$p]}"
        for i in 0 1 2 3 4 5 6; do b[i]=$(best "${r[i]}" "${b[i]:-}"); done
    done
    printf '%-8s %-7s %-10s %12s %14s %14s %14s %16s %14s %14s\n' "$n" "$env" "best/allot" \
        "$(ratio "${b[0]}" "${a[0]}")" "$(ratio "${b[1]}" "${a[1]}")" "$(ratio "${b[2]}" "${a[2]}")" \
        "$(ratio "${b[3]}" "${a[3]}")" "$(ratio "${b[4]}" "${a[4]}")" "$(ratio "${b[5]}" "${a[5]}")" \
        "$(ratio "${b[6]}" "${a[6]}")"
    for i in 0 1 2 3 4 5 6; do
        worst=$(LC_ALL=C awk -v w="$worst" -v r="$(ratio "${a[i]}" "${b[i]}")" 'BEGIN { print (r > w ? r : w) }')
    done
}
measured="files,cache"
for n in ${SIZES:-10000 100000}; do
    mkdir -p "$W/$n/up/allot" "$W/$n/etcup"
    { cat /etc/passwd; awk -v n="$n" 'BEGIN{for(i=0;i<n;i++) printf "bench%d:x:%d:%d:Bench User %d:/home/bench%d:/bin/bash\n", i, 200000+i, 300000+int(i/10), i, i}'; } > "$W/$n/passwd"
    if [ "$GROUP_SHAPE" = ten ]; then
        { cat /etc/group; awk -v n="$n" 'BEGIN{for(g=0;g<n/10;g++){ m=""; for(j=0;j<10;j++) m=m (j?",":"") "bench" (g*10+j); printf "benchg%d:x:%d:%s\n", g, 300000+g, m}}'; } > "$W/$n/group"
        export ALLOT_BENCH_BIG="benchg 300000 $((n / 10))"
    else
        # benchg<g> holds the 10 users of primary group (g - k*s) mod G for k = 0..18 (s = G/20:
        # 19 distinct groups of 10), so user i is in benchg<(i/10 + k*s) mod G>; then the
        # 500-member benchbig<k>. N must be a multiple of 500.
        # shellcheck disable=SC2016
        { cat /etc/group; awk -v n="$n" 'BEGIN{G=n/10; s=int(G/20)
            for(g=0;g<G;g++){ m=""; for(k=0;k<19;k++){ b=((g-k*s)%G+G)%G; for(j=0;j<10;j++) m=m (m==""?"":",") "bench" (b*10+j) }
                printf "benchg%d:x:%d:%s\n", g, 300000+g, m }
            for(t=0;t<n/500;t++){ m=""; for(j=0;j<500;j++) m=m (j?",":"") "bench" (t*500+j); printf "benchbig%d:x:%d:%s\n", t, 400000+t, m }}'; } > "$W/$n/group"
        export ALLOT_BENCH_BIG="benchbig 400000 $((n / 500))"
    fi
    grep '^bench' "$W/$n/passwd" > "$W/$n/passwd.only"
    grep -E '^bench(g|big)[0-9]' "$W/$n/group" > "$W/$n/group.only"
    "$B/plugins/nss/allot-make-cache" "$W/$n/up/allot" "$W/$n/passwd.only" "$W/$n/group.only"
    cp "$W/$n/passwd.only" "$W/$n/etcup/passwd.cache"
    cp "$W/$n/group.only" "$W/$n/etcup/group.cache"
    "$HERE/nsscache-index.py" passwd "$W/$n/etcup/passwd.cache"
    "$HERE/nsscache-index.py" group "$W/$n/etcup/group.cache"
    it_files=$(( n >= 100000 ? 300 : 2000 ))
    # libnss-cache's getgrouplist reads the whole group.cache: in the realistic shape 20 times
    # the memberships of "ten", so a tenth of the calls.
    it_cache_gl=$it_files
    [ "$GROUP_SHAPE" = ten ] || it_cache_gl=$((it_files / 10))
    # The daemons' first pass goes to files for every name it has not seen: fewer lookups.
    it_daemon=20000
    # libnss-cache has no initgroups_dyn: glibc enumerates every group through it.
    take_host files $n $it_files $it_files
    take_host cache $n 200000 $it_cache_gl
    take_host allot $n 200000 20000
    # Not compared: how much of allot's steady getpwuid is glibc's own (module_floor.cpp).
    read -r _ fg_hit fg_miss fm_hit fm_miss <<<"$(run_ns allot $n 200000 floor)"
    printf '%-8s %-7s %-10s getpwuid through glibc %s ns (absent uid %s ns), module alone %s ns (absent %s ns)\n' \
        "$n" host allot-floor "$fg_hit" "$fg_miss" "$fm_hit" "$fm_miss"
    # Not compared: the cache replaced under a running process (the writer republishes the same
    # users into the overlay, 20 rounds); the first getpwuid after each publish, then steady.
    read -r _ rp_first rp_steady <<<"$(ALLOT_BENCH_REPUBLISH="'$B/plugins/nss/allot-make-cache' /var/lib/allot '$W/$n/passwd.only' '$W/$n/group.only' > /dev/null" \
        run_ns allot $n 20 replace)"
    printf '%-8s %-7s %-10s first getpwuid after a publish %s ns (median of 20), then %s ns\n' \
        "$n" host allot-replace "$rp_first" "$rp_steady"
    compare $n host files cache
    [ "$n" = 100000 ] && first_100k=$(us "${V[host/$n/allot]%% *}")
    [ "$daemons" = 1 ] || continue
    [ "$n" -le "${ALLOT_NSS_DEB12_MAX_USERS:-$n}" ] ||
        { echo "$n users: env deb12 not measured (ALLOT_NSS_DEB12_MAX_USERS)"; continue; }
    # The big files are this root's own /etc/passwd and /etc/group plus the users.
    { cat "$PEERS_LOWER/etc/passwd"; grep '^bench' "$W/$n/passwd"; } > "$W/$n/passwd.deb12"
    { cat "$PEERS_LOWER/etc/group"; grep -E '^bench(g|big)[0-9]' "$W/$n/group"; } > "$W/$n/group.deb12"
    mv "$W/$n/passwd.deb12" "$W/$n/passwd" && mv "$W/$n/group.deb12" "$W/$n/group"
    take $n deb12 files "$(peer_ns files $n $it_files $it_files)" || true
    take $n deb12 cache "$(peer_ns cache $n 200000 $it_cache_gl)" || true
    take $n deb12 allot "$(peer_ns allot $n 200000 20000)" || true
    for d in nscd sss; do
        out=$(peer_ns $d $n $it_daemon $it_daemon) || true
        take $n deb12 "$d-cold" "$(sed -n 's/^cold //p' <<<"$out")" || true
        take $n deb12 $d "$(grep -v '^cold' <<<"$out")" || true
    done
    [ -n "${V[deb12/$n/allot]:-}" ] && compare $n deb12 files cache sss nscd
done
grep -h -e 'answered after' -e '^peer-run.sh' "$W/peers.log" 2>/dev/null || true
for d in sss nscd; do
    [ -n "${V[deb12/10000/$d]:-}" ] && [ -n "${V[deb12/100000/$d]:-}" ] && measured="$measured,$d"
done
result nss-lookup first_lookup_us_100k="${first_100k:-}" allot_over_best_peer="$worst" peers=$measured
