#!/bin/bash
# bench/nss-lookup/run.sh - libnss_allot vs the peers sites run, same users, one run.
#
# For N = 10,000 and 100,000 users (groups of 10), builds an /etc/passwd and
# /etc/group with those users, the same users in libnss-cache's files
# (/etc/passwd.cache, /etc/group.cache and their sorted indexes, written as nsscache
# writes them: nsscache-index.py) and allot caches of the same users, then runs
# nss_bench in a private mount namespace once per module: "files" over the big files
# (bind-mounted over /etc/passwd and /etc/group), "cache" (Debian's libnss-cache) over
# its files (overlay on /etc) and "allot" over the caches (overlay on /var/lib, module
# via LD_LIBRARY_PATH). Prints ns per lookup and the ratio of the fastest peer to allot
# (>1: allot faster).
# The closing RESULT line gives allot's first lookup at 100,000 users (us) and, over every
# figure (first lookup, getpwnam, getpwuid, getgrgid, getgrouplist at both sizes), the worst ratio of
# allot's time to the fastest peer's; the peers measured are named in it (peers=files,cache:
# sssd and nscd are not measured yet).
# Root only (mount namespaces). Usage: bench/nss-lookup/run.sh [BUILD_DIR]
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
HERE=$TOP/bench/nss-lookup
B=$BUILD
[ "$(id -u)" = 0 ] || { echo "needs root (mount namespaces)"; exit 77; }
harness_tmpdir nssbench
W=$HARNESS_TMP
g++ -std=c++17 -O2 -o "$W/nss_bench" "$HERE/nss_bench.cpp"
mkdir -p "$W/lib"
cp "$B/plugins/nss/.libs/libnss_allot.so.2" "$W/lib/"

run_ns() {  # run_ns <files|cache|allot> <N> <iters> <getgrouplist iters>
    local mode=$1 n=$2 it=$3 gl=$4
    sed "s/^passwd:.*/passwd: $mode/; s/^group:.*/group: $mode/" /etc/nsswitch.conf > "$W/nss.$mode"
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
        LD_LIBRARY_PATH="$W/lib" exec "$W/nss_bench" "$n" "$it" "$gl"' sh "$W" "$mode" "$n" "$it" "$gl"
}

ldconfig -p | grep -q 'libnss_cache\.so\.2 ' ||
    { echo "libnss-cache is not installed (Debian package libnss-cache)"; exit 1; }
us() { LC_ALL=C awk -v a="$1" 'BEGIN { printf "%.1f\n", a / 1000 }'; }
best() { LC_ALL=C awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }
worst=0
printf '%-8s %-6s %12s %14s %14s %14s %16s\n' users module "first(us)" "getpwnam(ns)" "getpwuid(ns)" "getgrgid(ns)" "getgrouplist(ns)"
row() { printf '%-8s %-6s %12.1f %14.0f %14.0f %14.0f %16.0f\n' "$1" "$2" "$(us "$3")" "$4" "$5" "$6" "$7"; }
for n in 10000 100000; do
    mkdir -p "$W/$n/up/allot" "$W/$n/etcup"
    { cat /etc/passwd; awk -v n=$n 'BEGIN{for(i=0;i<n;i++) printf "bench%d:x:%d:%d:Bench User %d:/home/bench%d:/bin/bash\n", i, 200000+i, 300000+int(i/10), i, i}'; } > "$W/$n/passwd"
    { cat /etc/group; awk -v n=$n 'BEGIN{for(g=0;g<n/10;g++){ m=""; for(j=0;j<10;j++) m=m (j?",":"") "bench" (g*10+j); printf "benchg%d:x:%d:%s\n", g, 300000+g, m}}'; } > "$W/$n/group"
    grep '^bench' "$W/$n/passwd" > "$W/$n/passwd.only"
    grep '^benchg' "$W/$n/group" > "$W/$n/group.only"
    "$B/plugins/nss/allot-make-cache" "$W/$n/up/allot" "$W/$n/passwd.only" "$W/$n/group.only"
    cp "$W/$n/passwd.only" "$W/$n/etcup/passwd.cache"
    cp "$W/$n/group.only" "$W/$n/etcup/group.cache"
    "$HERE/nsscache-index.py" passwd "$W/$n/etcup/passwd.cache"
    "$HERE/nsscache-index.py" group "$W/$n/etcup/group.cache"
    it_files=$(( n >= 100000 ? 300 : 2000 ))
    # libnss-cache has no initgroups_dyn: glibc enumerates every group through it.
    read -r _ f_first f_name f_uid f_gid _ f_gl < <(run_ns files $n $it_files $it_files)
    read -r _ c_first c_name c_uid c_gid _ c_gl < <(run_ns cache $n 200000 $it_files)
    read -r _ a_first a_name a_uid a_gid _ a_gl < <(run_ns allot $n 200000 20000)
    row $n files "$f_first" "$f_name" "$f_uid" "$f_gid" "$f_gl"
    row $n cache "$c_first" "$c_name" "$c_uid" "$c_gid" "$c_gl"
    row $n allot "$a_first" "$a_name" "$a_uid" "$a_gid" "$a_gl"
    b_first=$(best "$f_first" "$c_first") b_name=$(best "$f_name" "$c_name")
    b_uid=$(best "$f_uid" "$c_uid") b_gid=$(best "$f_gid" "$c_gid") b_gl=$(best "$f_gl" "$c_gl")
    printf '%-8s %-6s %12s %14s %14s %14s %16s\n' $n ratio "best/allot" "$(ratio "$b_name" "$a_name")" \
        "$(ratio "$b_uid" "$a_uid")" "$(ratio "$b_gid" "$a_gid")" "$(ratio "$b_gl" "$a_gl")"
    printf '%-8s %-6s %12s\n' $n "" "first lookup best/allot $(ratio "$b_first" "$a_first")"
    [ "$n" = 100000 ] && first_100k=$(us "$a_first")
    for pair in "$a_first $b_first" "$a_name $b_name" "$a_uid $b_uid" "$a_gid $b_gid" "$a_gl $b_gl"; do
        # shellcheck disable=SC2086
        worst=$(LC_ALL=C awk -v w="$worst" -v r="$(ratio $pair)" 'BEGIN { print (r > w ? r : w) }')
    done
done
result nss-lookup first_lookup_us_100k="$first_100k" allot_over_best_peer="$worst" peers=files,cache
