#!/usr/bin/env python3
"""slow_client.py - a slowloris attacker for allot-scimd's tests (loopback only).

  slow_client.py --port P [--ca CERT] [--source ADDR] [--count N] [--modes M,M]
                 [--reconnect] --stop-file F --report F

Opens N connections from ADDR to 127.0.0.1:P and keeps every one of them busy
at the slowest pace a server would tolerate per read: one byte every 0.5 s.
Modes (cycled over the connections):
  tls-hello    drips the TLS ClientHello itself (the handshake never completes)
  tls-headers  completes TLS, then drips the request headers
  tls-body     completes TLS, sends headers with Content-Length: 4096, drips the body
  headers      plain HTTP, drips the request headers
  body         plain HTTP, headers then a dripped body
With --reconnect a connection the server closed is opened again, as a real
attacker would, until F (the stop file) exists. Then the attack stops
reconnecting, keeps dripping on what is still open, and waits (bounded, 60 s)
for the server to close those too. The report says:
  opened N / closed-by-server N / still-open N / refused-at-once N
where refused-at-once counts connections the server closed before it read a
byte (the per-address cap). Prints "attacking" once all N are open.
"""
import argparse
import os
import select
import socket
import ssl
import sys
import time

DRIP = 0.5
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 4000 + b"\r\n\r\n"
BODY_HEAD = (b"POST /oidc/token HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\n")


class Slow:
    def __init__(self, mode, args, ctx):
        self.mode = mode
        self.sent_any = False
        self.closed = False
        self.pending = b""
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock = raw
        try:
            if args.source:
                raw.bind((args.source, 0))
            raw.connect(("127.0.0.1", args.port))
            if mode == "tls-hello":
                # The ClientHello bytes, produced in memory, then dripped raw.
                incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
                obj = ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
                try:
                    obj.do_handshake()
                except ssl.SSLWantReadError:
                    pass
                self.pending = outgoing.read()
            elif mode.startswith("tls-"):
                raw.settimeout(10)
                self.sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
                self.pending = REQUEST if mode == "tls-headers" else BODY_HEAD
            else:
                self.pending = REQUEST if mode == "headers" else BODY_HEAD
            if mode.endswith("body"):
                # Headers at once, then the body byte by byte.
                self.sock.sendall(self.pending)
                self.sent_any = True
                self.pending = b"a" * 4096
            self.sock.setblocking(False)
        except (OSError, ssl.SSLError):
            self.closed = True  # refused before the request began

    def drip(self):
        if self.closed or self.server_closed():
            return
        if not self.pending:
            return
        try:
            n = self.sock.send(self.pending[:1])
            if n == 1:
                self.pending = self.pending[1:]
                self.sent_any = True
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            pass
        except (OSError, ssl.SSLError):
            self.closed = True

    def server_closed(self):
        r, _, _ = select.select([self.sock], [], [], 0)
        if not r:
            return False
        try:
            self.sock.recv(65536)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False  # e.g. a TLS 1.3 session ticket: no application data
        except (OSError, ssl.SSLError):
            pass
        # Any answer (an error response, an alert, EOF) means the server gave up on us.
        self.closed = True
        return True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ca")
    ap.add_argument("--source")
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--modes", default="tls-hello,tls-headers,tls-body")
    ap.add_argument("--reconnect", action="store_true")
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    ctx = ssl.create_default_context(cafile=args.ca) if args.ca else None
    modes = args.modes.split(",")
    conns = []
    opened = closed = refused = 0

    def open_one(i):
        nonlocal opened
        c = Slow(modes[i % len(modes)], args, ctx)
        opened += 1
        return c

    for i in range(args.count):
        conns.append(open_one(i))
    print("attacking", flush=True)
    end = None
    while True:
        stopping = os.path.exists(args.stop_file)
        if stopping and end is None:
            end = time.time() + 60  # liveness bound for the server to close the rest
        for i, c in enumerate(conns):
            if c is None:
                continue
            c.drip()
            if c.closed:
                closed += 1
                refused += not c.sent_any
                c.close()
                conns[i] = open_one(i) if args.reconnect and not stopping else None
        live = sum(c is not None for c in conns)
        if end is not None and (live == 0 or time.time() > end):
            break
        time.sleep(DRIP)
    with open(args.report, "w") as f:
        f.write("opened %d\nclosed-by-server %d\nstill-open %d\nrefused-at-once %d\n"
                % (opened, closed, live, refused))
    for c in conns:
        if c is not None:
            c.close()


if __name__ == "__main__":
    sys.exit(main())
