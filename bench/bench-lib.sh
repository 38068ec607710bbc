#!/bin/bash
# bench-lib.sh - what every bench/<name>/run.sh shares. Source it first:
#   . "$(dirname "$0")/../bench-lib.sh" "$@"
# Sets TOP (the source tree) and BUILD: the build directory given as the first argument,
# else $ALLOT_TOP_BUILDDIR, else the source tree itself (an in-tree build). Brings in
# tests/lib/harness.sh (free_port, free_port_block, start_service, on_exit, wait_port),
# and gives ratio A B (A/B, 3 decimals), median (of the numbers on stdin) and
# result NAME KEY=VALUE... which prints the one machine-readable closing line
# `RESULT NAME KEY=VALUE ...` that `make bench` collects.
BENCH_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$BENCH_HERE/.." && pwd)
BUILD=${1:-${ALLOT_TOP_BUILDDIR:-$TOP}}
BUILD=$(cd "$BUILD" && pwd) || { echo "no build directory $BUILD" >&2; exit 1; }
export ALLOT_TOP_BUILDDIR=$BUILD ALLOT_TOP_SRCDIR=$TOP
# shellcheck disable=SC1091
. "$TOP/tests/lib/harness.sh"

ratio() { LC_ALL=C awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "nan"; else printf "%.3f\n", a / b }'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
result() { echo "RESULT $*"; }
