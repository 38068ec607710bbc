// peer.mjs - the comparison peer for bench/scim-serve: the same two SCIM reads
// (GET /Users?filter=userName eq "x" and a startIndex/count page) answered by
// Node.js from memory, with the same TLS certificate and the same bearer-token
// check (SHA-256 of the secret compared with a stored hash). It has no SQL, no
// general filter parser and no projection, so it is the "simple in-memory
// implementation of the same job" our SQLite-backed server is measured against.
// One worker per CPU (node:cluster), as our server uses every core.
//
// usage: node peer.mjs PORT CERT KEY USERS.jsonl TOKEN_SHA256_HEX
import cluster from 'node:cluster';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';

const [port, cert, key, usersFile, tokenHash] = process.argv.slice(2);
if (cluster.isPrimary) {
  for (let i = 0; i < os.cpus().length; i++) cluster.fork();
} else {
  const users = readFileSync(usersFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  users.sort((a, b) => (a.userName < b.userName ? -1 : a.userName > b.userName ? 1 : 0));
  const byName = new Map(users.map((u) => [u.userName, u]));
  const list = (items, total, start) => JSON.stringify({
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults: total, startIndex: start, itemsPerPage: items.length, Resources: items,
  });
  https.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    const auth = req.headers.authorization || '';
    if (!auth.startsWith('Bearer ') ||
        createHash('sha256').update(auth.slice(7)).digest('hex') !== tokenHash) {
      res.writeHead(401).end();
      return;
    }
    const url = new URL(req.url, 'https://x');
    if (url.pathname !== '/scim/v2/Users') { res.writeHead(404).end(); return; }
    let body;
    const filter = url.searchParams.get('filter');
    if (filter !== null) {
      const m = /^userName eq "([^"]*)"$/.exec(filter);
      if (!m) { res.writeHead(400).end(); return; }
      const u = byName.get(m[1]);
      body = list(u ? [u] : [], u ? 1 : 0, 1);
    } else {
      const start = Math.max(1, parseInt(url.searchParams.get('startIndex') || '1', 10));
      const count = Math.min(1000, parseInt(url.searchParams.get('count') || '100', 10));
      body = list(users.slice(start - 1, start - 1 + count), users.length, start);
    }
    res.writeHead(200, { 'Content-Type': 'application/scim+json' }).end(body);
  }).listen(Number(port), '127.0.0.1');
}
