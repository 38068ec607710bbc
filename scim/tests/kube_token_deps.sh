#!/bin/bash
# kube_token_deps.sh - allot-kube-token is a login-node client: the binary links
# liballot, libcurl and libmunge, never SQLite, httplib, OpenSSL directly or any
# of allot-scimd's own code. Checked on the built binary with
# readelf (its direct NEEDED libraries) and nm (the symbols it defines).
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/harness.sh"
BIN=${KUBE_TOKEN:-./allot-kube-token}
[ -x "$BIN" ] || BIN=$(dirname "$0")/../allot-kube-token
[ -x "$BIN" ] || skip "allot-kube-token not built"
command -v readelf >/dev/null && command -v nm >/dev/null || skip "needs readelf and nm (binutils)"
# A libtool wrapper script stands for the real binary in .libs/.
if ! readelf -h "$BIN" >/dev/null 2>&1 && [ -x "$(dirname "$BIN")/.libs/$(basename "$BIN")" ]; then
    BIN=$(dirname "$BIN")/.libs/$(basename "$BIN")
fi

needed=$(readelf -d "$BIN" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
symbols=$(nm -C --defined-only "$BIN")
expect_contains "links libcurl" "$needed" "libcurl"
expect_contains "links libmunge" "$needed" "libmunge"
for lib in libsqlite3 libssl libcrypto libhttplib; do
    expect_not_contains "does not link $lib" "$needed" "$lib"
done
expect_contains "defines its own main and munge client" "$symbols" "allot::kubetoken::munge_encode"
for sym in "sqlite3_" "httplib::" "allot::scimd::"; do
    expect_not_contains "defines no $sym symbol (server code)" "$symbols" "$sym"
done
finish
