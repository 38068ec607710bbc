#!/usr/bin/env python3
"""scim_fixture.py - a canned SCIM 2.0 server for allot-syncd's integration tests.

Serves /Users and /Groups from JSON files in DIR (users.json, groups.json:
arrays of SCIM resources, POSIX attributes in the allot PosixUser extension)
with startIndex/count paging, or cursor paging (nextCursor) when the request
carries `cursor` or DIR/paging says "cursor". DIR/mode (re-read on every
request) switches behaviour: ok | down (503) | empty | noext (drop the
extension) | truncated | huge (11 MiB) | slow (sleeps DIR/slow seconds), and
hostile listings of /Users that never end: endless-cursor (a fresh nextCursor
on every page, totalResults 3) | endless-index (totalResults always one page
ahead) | bigpages (8 MiB pages, a fresh nextCursor each, totalResults 10^6).
Mode gap: the first /Users page holds 2 users and every later one is empty,
although totalResults counts them all (a source truncated mid-listing).
DIR/dialect (re-read on every request) says how users are served:
allot (as stored) | coreweave (POSIX attributes moved into CoreWeave's user
extension, SSH keys as sunkSshKeys) | readonly (ACTIVATE-like: at most 2 items
per page whatever `count` asks, `attributes` ignored, 501 to every write).
DIR/schemas (re-read on every request; absent: /Schemas is 404 as before) makes
/Schemas list the core User and Group schemas: ext (and the dialect's POSIX user
extension) | noext (without it).
Requires `Authorization: Bearer <DIR/token>`. Usage: scim_fixture.py DIR PORT
"""
import json
import os
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
CW_EXT = "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"
DIR, PORT = sys.argv[1], int(sys.argv[2])


def read(name, default=""):
    try:
        with open(os.path.join(DIR, name)) as f:
            return f.read().strip()
    except OSError:
        return default


def synthetic(n):
    return {"id": "z%d" % n, "userName": "zz%07d" % n, "active": True,
            EXT: {"uidNumber": 50000 + n, "gidNumber": 50000 + n,
                  "homeDirectory": "/home/zz%07d" % n, "loginShell": "/bin/bash"}}


def in_dialect(dialect, user):
    """One stored (allot-shaped) user as a source of `dialect` serves it."""
    if dialect == "coreweave" and EXT in user:
        user = dict(user)
        posix = dict(user.pop(EXT))
        if "sshPublicKeys" in posix:
            posix["sunkSshKeys"] = posix.pop("sshPublicKeys")
        user[CW_EXT] = posix
        user["schemas"] = [x for x in user.get("schemas", []) if x != EXT] + [CW_EXT]
    elif dialect == "readonly":
        user = dict(user, emails=[{"value": user.get("userName", "") + "@example.org"}])
    return user


def endless(mode, q):
    """A /Users ListResponse of a source whose listing never ends."""
    count = max(1, min(int(q.get("count", ["100"])[0]), 100))
    cursor = int(q.get("cursor", ["0"])[0] or 0)
    start = int(q.get("startIndex", ["1"])[0])
    body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"]}
    if mode == "endless-index":
        body.update(totalResults=start + 2 * count, startIndex=start,
                    Resources=[synthetic(start + i) for i in range(count)])
    elif mode == "endless-cursor":
        body.update(totalResults=3, nextCursor=str(cursor + 1), Resources=[synthetic(cursor)])
    else:  # bigpages
        body.update(totalResults=1000000, nextCursor=str(cursor + 1), Resources=[synthetic(cursor)],
                    pad="x" * (8 << 20))
    body["itemsPerPage"] = len(body["Resources"])
    return json.dumps(body)


def schemas(which, dialect):
    """/Schemas of a source that does (ext) or does not (noext) serve the POSIX extension."""
    ids = ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:core:2.0:Group"]
    if which == "ext":
        ids.append(CW_EXT if dialect == "coreweave" else EXT)
    return json.dumps({"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
                       "totalResults": len(ids), "Resources": [{"id": i} for i in ids]})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        with open(os.path.join(DIR, "requests.log"), "a") as f:
            f.write("%s\n" % (fmt % args))

    def send(self, status, body, ctype="application/scim+json"):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def refuse_write(self):
        self.send(501, json.dumps({"schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
                                   "status": "501", "detail": "read-only SCIM API"}))

    do_POST = do_PUT = do_PATCH = do_DELETE = refuse_write

    def do_GET(self):
        mode = read("mode", "ok")
        dialect = read("dialect", "allot")
        if self.headers.get("Authorization", "") != "Bearer " + read("token"):
            return self.send(401, json.dumps({"schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
                                              "status": "401", "detail": "invalid token"}))
        if mode == "down":
            return self.send(503, json.dumps({"status": "503", "detail": "maintenance"}))
        if mode == "slow":
            time.sleep(float(read("slow", "5")))
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        if url.path.endswith("/Users") and mode in ("endless-cursor", "endless-index", "bigpages"):
            return self.send(200, endless(mode, q))
        if url.path.endswith("/Users"):
            items = [in_dialect(dialect, u) for u in json.loads(read("users.json", "[]"))]
        elif url.path.endswith("/Groups"):
            items = json.loads(read("groups.json", "[]"))
        elif url.path.endswith("/Schemas") and read("schemas"):
            return self.send(200, schemas(read("schemas"), dialect))
        else:
            return self.send(404, json.dumps({"status": "404", "detail": "no such endpoint"}))
        if mode == "empty":
            items = []
        if mode == "noext":
            items = [{k: v for k, v in i.items() if k not in (EXT, CW_EXT)} for i in items]
        if "filter" in q:  # userName eq "x" only
            want = q["filter"][0].split('"')[1] if '"' in q["filter"][0] else ""
            items = [i for i in items if i.get("userName") == want]
        count = int(q.get("count", ["100"])[0])
        if dialect == "readonly":
            count = min(count, 2)
        body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
                "totalResults": len(items)}
        if "cursor" in q or read("paging") == "cursor":
            start = int(q.get("cursor", ["0"])[0] or 0)
            page = items[start:start + count]
            if start + count < len(items):
                body["nextCursor"] = str(start + count)
        else:
            start = int(q.get("startIndex", ["1"])[0])
            page = items[start - 1:start - 1 + count]
            if mode == "gap" and url.path.endswith("/Users"):
                page = page[:2] if start == 1 else []
            body["startIndex"] = start
        body["itemsPerPage"] = len(page)
        body["Resources"] = page
        text = json.dumps(body)
        if mode == "truncated":
            text = text[: len(text) // 2]
        if mode == "huge":
            text = text[:-1] + ', "pad": "' + "x" * (11 << 20) + '"}'
        self.send(200, text)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that hang up (size cap, kill -9) are part of the tests


Server(("127.0.0.1", PORT), Handler).serve_forever()
