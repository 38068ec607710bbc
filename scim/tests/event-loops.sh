#!/bin/bash
# event-loops.sh - reads answered on allot-scimd's event loops are the store's
# answers (a real daemon with several loops on loopback, a Python client).
#
# The loops answer GETs of Users from the pre-rendered users and a cached
# token (server.hpp); everything else goes to a worker. Checked here: 300
# pipelined requests on one connection, a write among them, come back whole
# and in order; a user created over HTTP or by the CLI is found at once on
# another, warm connection; a revoked token is refused on the next request of
# a connection that used it; 32 connections reading while another writes get
# only right answers; requests are counted once in /metrics, which shows what
# the loops answered (and promtool accepts).
set -u
. "$(dirname "$0")/scimd-lib.sh"
scimd_setup loops python3
sed -i 's/^  threads: 1$/  threads: 4/' "$T/allot.yaml"
for i in $(seq -w 1 40); do printf '  - name: u%s\n' "$i"; done | sed '1i users:' >"$T/users.yaml"
S apply "$T/users.yaml" >/dev/null || abort "apply failed"
WRITER=$(S token create writer --scope write) || abort "token create failed"
READER=$(S token create reader --scope read) || abort "token create failed"
scimd_start

# client.py CASE: one case against the server; prints what it found.
cat >"$T/client.py" <<'EOF'
import json, os, socket, subprocess, sys, threading

PORT = int(os.environ["PORT"])
WRITER, READER = os.environ["WRITER"], os.environ["READER"]

def get(name, token):
    return (f"GET /scim/v2/Users?filter=userName%20eq%20%22{name}%22 HTTP/1.1\r\n"
            f"Host: x\r\nAuthorization: Bearer {token}\r\n\r\n").encode()

def post(name):
    body = json.dumps({"userName": name}).encode()
    return (f"POST /scim/v2/Users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {WRITER}\r\n"
            f"Content-Type: application/scim+json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body

class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
        self.buf = b""
    def send(self, data):
        self.s.sendall(data)
    def response(self):  # (status, body bytes)
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk: raise EOFError("connection closed")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for l in lines[1:]:
            k, _, v = l.partition(":")
            if k.lower() == "content-length": length = int(v)
        while len(self.buf) < length:
            chunk = self.s.recv(65536)
            if not chunk: raise EOFError("connection closed in a body")
            self.buf += chunk
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body
    def ask(self, data):
        self.send(data)
        return self.response()

def found(answer, name):
    status, body = answer
    if status != 200: return False
    body = json.loads(body)
    return body["totalResults"] == 1 and body["Resources"][0]["userName"] == name

def pipelined():
    c, names, want = Conn(), [], b""
    for i in range(300):
        if i == 150:
            want += post("piped") + get("piped", READER)
            names += ["(post)", "piped"]
        name = f"u{i % 40 + 1:02d}"
        want += get(name, READER)
        names.append(name)
    c.send(want)
    bad = 0
    for name in names:
        a = c.response()
        ok = a[0] == 201 if name == "(post)" else found(a, name)
        bad += not ok
    print(f"{len(names)} answers, {bad} wrong")

def read_your_writes():
    reader, writer, bad = Conn(), Conn(), 0
    for i in range(20):
        reader.ask(get("u01", READER))  # warm: the loop answers it
        name = f"fresh{i}"
        bad += writer.ask(post(name))[0] != 201
        bad += not found(reader.ask(get(name, READER)), name)
    subprocess.run(sys.argv[2:] + ["user", "add", "bycli"], check=True, stdout=subprocess.DEVNULL)
    bad += not found(reader.ask(get("bycli", READER)), "bycli")
    print(f"{bad} wrong")

def revoked():
    c = Conn()
    before = [c.ask(get("u02", READER))[0] for _ in range(5)]
    subprocess.run(sys.argv[2:] + ["token", "revoke", "reader"], check=True, stdout=subprocess.DEVNULL)
    print(" ".join(map(str, before)), c.ask(get("u02", READER))[0])

def concurrent():
    bad, lock = [0], threading.Lock()
    def reader(k):
        c = Conn()
        for i in range(50):
            name = f"u{(k + i) % 40 + 1:02d}"
            if not found(c.ask(get(name, WRITER)), name):
                with lock: bad[0] += 1
    def writer():
        c = Conn()
        for i in range(40):
            if c.ask(post(f"busy{i}"))[0] != 201:
                with lock: bad[0] += 1
    threads = [threading.Thread(target=reader, args=(k,)) for k in range(32)]
    threads.append(threading.Thread(target=writer))
    for t in threads: t.start()
    for t in threads: t.join()
    print(f"{32 * 50 + 40} requests, {bad[0]} wrong")

def counted():
    def total(c):
        _, body = c.ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        for line in body.decode().splitlines():
            if line.startswith("allot_scimd_requests_total "): return int(line.split()[1])
    c = Conn()
    first = total(c)
    for i in range(25): c.ask(get("u03", WRITER))
    print(total(c) - first)

{"pipelined": pipelined, "read_your_writes": read_your_writes, "revoked": revoked,
 "concurrent": concurrent, "counted": counted}[sys.argv[1]]()
EOF
client() { PORT=$PORT WRITER=$WRITER READER=$READER python3 "$T/client.py" "$1" "$SCIMD" -c "$T/allot.yaml"; }

metrics() { curl -sS --max-time 20 "$URL/metrics"; }
metric() { awk -v k="$1" '$1 == k { print $2 }'; }  # metric NAME < /metrics text
expect_eq "300 pipelined reads with a write among them come back whole and in order" \
    "$(client pipelined 2>&1)" "302 answers, 0 wrong"
# The first 32 lookups at a generation go to workers (they count towards the
# users' rendering), so do those after the write: ~237 of the 301 reads are the loops'.
n=$(metrics | metric allot_scimd_requests_answered_on_loops_total)
check "the loops answered the pipelined reads the read caches hold ($n)" test "${n:-0}" -ge 200
expect_eq "a user created over HTTP or by the CLI is found at once on a warm connection" \
    "$(client read_your_writes 2>&1)" "0 wrong"
expect_eq "a revoked token is refused on the connection's next request" \
    "$(client revoked 2>&1)" "200 200 200 200 200 401"
expect_eq "32 connections reading while another writes get only right answers" \
    "$(client concurrent 2>&1)" "1640 requests, 0 wrong"
expect_eq "each request is counted once (25 reads and the first /metrics)" "$(client counted 2>&1)" 26
out=$(metrics)
expect_match "reads were answered from the pre-rendered users" \
    "$(metric allot_scimd_user_reads_prerendered_total <<<"$out")" '^[1-9][0-9]+$'
if command -v promtool >/dev/null; then
    check "promtool accepts /metrics" bash -c 'promtool check metrics <<<"$1"' _ "$out"
fi
stop_service scimd
check "no crash or sanitizer report in the server log" \
    bash -c "! grep -E 'Sanitizer|runtime error|Segmentation' '$T/scimd.log'"
finish
