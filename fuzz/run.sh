#!/bin/bash
# run.sh - builds every fuzz target of fuzz/ with clang's libFuzzer (plus ASan
# and UBSan) straight from the sources and runs each for a bounded time on its
# seed corpus. See fuzz/README.md.
#
# Usage: fuzz/run.sh [SECONDS] [TARGET...]   (default 60 s each, every target)
# A target is fuzz/<name>_fuzz.cpp with its seeds in fuzz/corpus/<name>/; its
# first lines say what it links:
#   // fuzz-sources: lib/foo.cpp scim/bar.cpp   (paths from the source root; each
#                                               one's folder is on the include path)
#   // fuzz-pkg: libcjson yaml-cpp               (pkg-config names)
# A key may repeat (lines stay under the 100 columns clang-format keeps).
# Environment: FUZZ_BUILD (build/output dir, default /tmp/allot-fuzz-$UID),
# CXX (default clang++). Findings land in $FUZZ_BUILD/<name>/crash-* and fail
# the target. The tree's corpus is only read; new inputs go to $FUZZ_BUILD.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
SECONDS_EACH=${1:-60}
shift || true
OUT=${FUZZ_BUILD:-/tmp/allot-fuzz-$(id -u)}
CXX=${CXX:-clang++}
mkdir -p "$OUT"
pass=0 fail=0

if ! command -v "$CXX" >/dev/null; then
    echo "not ok - $CXX not found (apt-get install clang)"
    echo "0 passed, 1 failed"
    exit 1
fi

# The values of the `// fuzz-<key>:` header lines of $1 (a key may repeat).
header() { sed -n "s|^// fuzz-$2: *||p" "$1" | tr '\n' ' '; }

build() {
    local name=$1 file=$HERE/$1_fuzz.cpp srcs=() incs=() pkgs flags
    # Each source's folder is on the include path (its own headers).
    for s in $(header "$file" sources); do
        srcs+=("$SRC/$s")
        incs+=("-I$SRC/$(dirname "$s")")
    done
    pkgs=$(header "$file" pkg)
    flags=$([ -n "$pkgs" ] && pkg-config --cflags --libs $pkgs)
    # shellcheck disable=SC2086
    "$CXX" -std=c++17 -g -O1 -fno-omit-frame-pointer \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$SRC/lib" -I"$SRC" "${incs[@]}" \
        "$file" "${srcs[@]}" $flags -o "$OUT/$name/fuzzer" 2> "$OUT/$name/build.log"
}

run() {
    local name=$1 seeds=$HERE/corpus/$1
    mkdir -p "$OUT/$name/corpus" "$seeds"
    # New inputs go to the first directory (ours); the tree's seeds are read only.
    "$OUT/$name/fuzzer" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$OUT/$name/" -print_final_stats=1 \
        "$OUT/$name/corpus" "$seeds" > "$OUT/$name/run.log" 2>&1
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$HERE"/*_fuzz.cpp; do
        [ -e "$f" ] && targets+=("$(basename "$f" _fuzz.cpp)")
    done
fi
for name in "${targets[@]}"; do
    mkdir -p "$OUT/$name"
    rm -f "$OUT/$name"/crash-* "$OUT/$name"/leak-* "$OUT/$name"/timeout-* "$OUT/$name"/oom-*
    if ! build "$name"; then
        fail=$((fail + 1))
        echo "not ok - $name: build failed"
        sed 's/^/#   /' "$OUT/$name/build.log" | head -20
        continue
    fi
    if run "$name"; then
        pass=$((pass + 1))
        echo "ok - $name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$name/run.log" | grep -o '[0-9]*$') runs in ${SECONDS_EACH}s, no finding"
    else
        fail=$((fail + 1))
        echo "not ok - $name: finding, see $OUT/$name/ (reproduce: $OUT/$name/fuzzer <crash file>)"
        grep -E 'ERROR|SUMMARY|runtime error' "$OUT/$name/run.log" | head -5 | sed 's/^/#   /'
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
