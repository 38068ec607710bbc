#!/usr/bin/env python3
"""munge_flood.py - trade many fresh MUNGE credentials at allot-scimd's token endpoint.

  munge_flood.py --socket S --url http://127.0.0.1:P --audience A --count N

Mints N credentials as the calling uid with the real munged (libmunge), each
bound to the token exchange's payload, and posts them one after another on one
keep-alive connection. Prints one line per distinct answer, with its count:
  <count> <status> <error_description or "issued">
"""
import argparse
import collections
import ctypes
import http.client
import json
import sys
import urllib.parse

MUNGE_OPT_SOCKET = 8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--audience", required=True)
    ap.add_argument("--count", type=int, required=True)
    args = ap.parse_args()
    lib = ctypes.CDLL("libmunge.so.2")
    lib.munge_ctx_create.restype = ctypes.c_void_p
    lib.munge_ctx_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p]
    lib.munge_encode.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p,
                                 ctypes.c_char_p, ctypes.c_int]
    lib.munge_strerror.restype = ctypes.c_char_p
    ctx = lib.munge_ctx_create()
    if lib.munge_ctx_set(ctx, MUNGE_OPT_SOCKET, args.socket.encode()) != 0:
        sys.exit("munge_ctx_set failed")
    payload = ("allot-token-exchange aud=" + args.audience).encode()
    url = urllib.parse.urlparse(args.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    answers = collections.Counter()
    for _ in range(args.count):
        cred = ctypes.c_char_p()
        rc = lib.munge_encode(ctypes.byref(cred), ctx, payload, len(payload))
        if rc != 0:
            sys.exit("munge_encode: " + lib.munge_strerror(rc).decode())
        body = urllib.parse.urlencode({
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token_type": "urn:allot:params:oauth:token-type:munge",
            "subject_token": cred.value.decode(),
        })
        conn.request("POST", "/oidc/token", body,
                     {"Content-Type": "application/x-www-form-urlencoded"})
        resp = conn.getresponse()
        data = json.loads(resp.read() or b"{}")
        what = "issued" if resp.status == 200 and "access_token" in data else \
            data.get("error_description", "?")
        answers[(resp.status, what)] += 1
    for (status, what), n in sorted(answers.items()):
        print(n, status, what)


if __name__ == "__main__":
    main()
