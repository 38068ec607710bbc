#!/bin/bash
# bench/nss-lookup/run.sh - libnss_allot vs glibc's files module, same users, one run.
#
# For N = 10,000 and 100,000 users (groups of 10), builds an /etc/passwd and
# /etc/group with those users and allot caches of the same users, then runs
# nss_bench in a private mount namespace twice: "passwd/group: files" over the
# big files (bind-mounted over /etc/passwd and /etc/group), and "passwd/group:
# allot" over the caches (overlay on /var/lib, module via LD_LIBRARY_PATH).
# Prints ns per lookup and the ratio files/allot (>1: allot faster).
# The closing RESULT line gives allot's first lookup at 100,000 users (us) and, over every
# figure (first lookup, getpwnam, getpwuid, getgrgid at both sizes), the worst ratio of
# allot's time to the fastest peer's; the peers measured are named in it (peers=files:
# libnss-cache, sssd and nscd are not measured yet).
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

run_ns() {  # run_ns <files|allot> <N> <iters>
    local mode=$1 n=$2 it=$3
    sed "s/^passwd:.*/passwd: $mode/; s/^group:.*/group: $mode/" /etc/nsswitch.conf > "$W/nss.$mode"
    unshare -m --propagation private sh -c '
        W=$1 mode=$2 n=$3 it=$4
        mount --bind "$W/nss.$mode" /etc/nsswitch.conf
        if [ "$mode" = files ]; then
            mount --bind "$W/$n/passwd" /etc/passwd && mount --bind "$W/$n/group" /etc/group
        else
            mkdir -p "$W/$n/wk" && mount -t overlay overlay \
                -o lowerdir=/var/lib,upperdir="$W/$n/up",workdir="$W/$n/wk" /var/lib
        fi
        LD_LIBRARY_PATH="$W/lib" exec "$W/nss_bench" "$n" "$it"' sh "$W" "$mode" "$n" "$it"
}

worst=0
printf '%-8s %-6s %12s %14s %14s %14s\n' users module "first(us)" "getpwnam(ns)" "getpwuid(ns)" "getgrgid(ns)"
for n in 10000 100000; do
    mkdir -p "$W/$n/up/allot"
    { cat /etc/passwd; awk -v n=$n 'BEGIN{for(i=0;i<n;i++) printf "bench%d:x:%d:%d:Bench User %d:/home/bench%d:/bin/bash\n", i, 200000+i, 300000+int(i/10), i, i}'; } > "$W/$n/passwd"
    { cat /etc/group; awk -v n=$n 'BEGIN{for(g=0;g<n/10;g++){ m=""; for(j=0;j<10;j++) m=m (j?",":"") "bench" (g*10+j); printf "benchg%d:x:%d:%s\n", g, 300000+g, m}}'; } > "$W/$n/group"
    grep '^bench' "$W/$n/passwd" > "$W/$n/passwd.only"
    grep '^benchg' "$W/$n/group" > "$W/$n/group.only"
    "$B/plugins/nss/allot-make-cache" "$W/$n/up/allot" "$W/$n/passwd.only" "$W/$n/group.only"
    it_files=$(( n >= 100000 ? 300 : 2000 ))
    read -r _ f_first f_name f_uid f_gid _ < <(run_ns files $n $it_files)
    read -r _ a_first a_name a_uid a_gid _ < <(run_ns allot $n 200000)
    printf '%-8s %-6s %12.1f %14.0f %14.0f %14.0f\n' $n files "$(echo "$f_first/1000" | bc -l)" "$f_name" "$f_uid" "$f_gid"
    printf '%-8s %-6s %12.1f %14.0f %14.0f %14.0f\n' $n allot "$(echo "$a_first/1000" | bc -l)" "$a_name" "$a_uid" "$a_gid"
    printf '%-8s %-6s %12s %14.1f %14.1f %14.1f\n' $n ratio "files/allot" \
        "$(echo "$f_name/$a_name" | bc -l)" "$(echo "$f_uid/$a_uid" | bc -l)" "$(echo "$f_gid/$a_gid" | bc -l)"
    [ "$n" = 100000 ] && first_100k=$(LC_ALL=C awk -v a="$a_first" 'BEGIN { printf "%.1f\n", a / 1000 }')
    for pair in "$a_first $f_first" "$a_name $f_name" "$a_uid $f_uid" "$a_gid $f_gid"; do
        # shellcheck disable=SC2086
        worst=$(LC_ALL=C awk -v w="$worst" -v r="$(ratio $pair)" 'BEGIN { print (r > w ? r : w) }')
    done
done
result nss-lookup first_lookup_us_100k="$first_100k" allot_over_best_peer="$worst" peers=files
