#!/bin/bash
# check.sh - fuzz/run.sh as a `make check` test: skipped (77) unless
# ALLOT_FUZZ=1; ALLOT_FUZZ_SECONDS sets the time per target (default 30).
if [ "${ALLOT_FUZZ:-}" != 1 ]; then
    echo "fuzz: skipped (set ALLOT_FUZZ=1)"
    exit 77
fi
exec "$(dirname "$0")/run.sh" "${ALLOT_FUZZ_SECONDS:-30}"
