#!/bin/bash
# exports.sh - every shared object exports exactly its ABI and loads with RTLD_NOW.
#
# For each tests/abi/expected/<file>.syms, finds <file> in the build tree, compares
# `nm -D --defined-only` with the list, and dlopens it (RTLD_NOW) with what its host
# provides preloaded: libslurmfull.so (+ slurmctld's symbols for job_submit plugins).
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
CHECK=$BUILD/tests/abi/dlopen_check
STUB=$BUILD/tests/abi/.libs/libslurmctld_stub.so
SLURMFULL=${SLURM_FULL_LIB:-/usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so}
passed=0 failed=0
for expected in "$SRC"/tests/abi/expected/*.syms; do
    [ -e "$expected" ] || continue
    name=$(basename "$expected" .syms)
    so=$(find "$BUILD" -path "$BUILD/allot-*" -prune -o -path '*/.libs/*' -name "$name" -print 2>/dev/null | head -1)
    if [ -z "$so" ]; then echo "not ok - $name: not built"; failed=$((failed + 1)); continue; fi
    actual=$(nm -D --defined-only --format=posix "$so" | awk '{print $1}' | grep -v '^_init$\|^_fini$' | sort)
    if [ "$actual" = "$(grep -v '^#' "$expected" | sort)" ]; then
        echo "ok - $name exports exactly its ABI"; passed=$((passed + 1))
    else
        echo "not ok - $name exports differ:"; diff <(grep -v '^#' "$expected" | sort) <(echo "$actual") | sed 's/^/    # /'
        failed=$((failed + 1))
    fi
    preload=()
    case "$name" in
    job_submit_*) preload=(-p "$SLURMFULL" -p "$STUB") ;;
    spank_*) preload=(-p "$SLURMFULL") ;;
    esac
    if out=$("$CHECK" "${preload[@]}" "$so" 2>&1); then
        echo "ok - $name loads with RTLD_NOW"; passed=$((passed + 1))
    else
        echo "not ok - $name does not load: $out"; failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
