#!/bin/bash
# exports.sh - every shared object exports exactly its ABI and loads with RTLD_NOW.
#
# The installable libtool libraries of every Makefile.am (any *_LTLIBRARIES but
# noinst_/check_/EXTRA_) are the project's shared objects; each must have a
# tests/abi/expected/<file>.syms listing its exports, one a line. A `# preload:`
# line there names what its host process already has loaded (slurmfull:
# libslurmfull.so; slurmctld: slurmctld's own symbols), opened first. For each
# list the script finds <file> in the build tree, compares `nm -D --defined-only`
# with it, and dlopens it with RTLD_NOW.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
CHECK=$BUILD/tests/abi/dlopen_check
EXPECTED=$SRC/tests/abi/expected
SLURMFULL=${SLURM_FULL_LIB:-/usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so}
declare -A PRELOAD_FILE=([slurmfull]=$SLURMFULL [slurmctld]=$BUILD/tests/abi/.libs/libslurmctld_stub.so)
# shellcheck disable=SC1091
. "$SRC/tests/lib/harness.sh"

# The shared objects the build installs: "name.la" per line.
installed_libraries() {
    find "$SRC" -path "$SRC/allot-*" -prune -o -name Makefile.am -print 2>/dev/null |
        xargs sed -E -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' |
        sed -n -E '/^(noinst|check|EXTRA)_LTLIBRARIES/d; s/^[A-Za-z0-9_]+_LTLIBRARIES[[:space:]]*\+?=//p' |
        tr ' \t' '\n\n' | grep '\.la$' | sort -u
}

# Every installed library has its list of exports (so a new .so cannot go unchecked).
for la in $(installed_libraries); do
    stem=${la%.la}
    if compgen -G "$EXPECTED/$stem.so*.syms" >/dev/null; then
        pass "$stem has an expected ABI"
    else
        fail "$la is installed but has no tests/abi/expected/$stem.so.syms"
    fi
done

for expected in "$EXPECTED"/*.syms; do
    [ -e "$expected" ] || continue
    name=$(basename "$expected" .syms)
    so=$(find "$BUILD" -path "$BUILD/allot-*" -prune -o -path '*/.libs/*' -name "$name" -print 2>/dev/null | head -1)
    if [ -z "$so" ]; then fail "$name: not built"; continue; fi
    want=$(grep -v '^#' "$expected" | sort)
    actual=$(nm -D --defined-only --format=posix "$so" | awk '{print $1}' | grep -v '^_init$\|^_fini$' | sort)
    if [ "$actual" = "$want" ]; then
        pass "$name exports exactly its ABI"
    else
        fail "$name exports differ:"
        diff <(echo "$want") <(echo "$actual") | sed 's/^/    # /'
    fi
    preload=()
    for host in $(sed -n 's/^# preload://p' "$expected"); do
        if [ -z "${PRELOAD_FILE[$host]:-}" ]; then fail "$name: unknown preload '$host'"; continue 2; fi
        preload+=(-p "${PRELOAD_FILE[$host]}")
    done
    if out=$("$CHECK" "${preload[@]}" "$so" 2>&1); then
        pass "$name loads with RTLD_NOW"
    else
        fail "$name does not load: $out"
    fi
done
finish
