// load.mjs - fixed-count HTTPS POST load generator for bench/token (wrk cannot
// send each request a different, single-use body such as a MUNGE credential).
// Keep-alive connections, CONCURRENCY requests in flight, every response must be 200.
//
// usage: node load.mjs URL BODIES.txt CONCURRENCY [AUTH_HEADER]
//   BODIES.txt: one form-encoded request body per line; each is sent once.
// prints: "<n> requests in <s> s: <rate> req/s, <errors> errors"
import https from 'node:https';
import { readFileSync } from 'node:fs';

const [url, bodiesFile, concurrency, auth] = process.argv.slice(2);
const bodies = readFileSync(bodiesFile, 'utf8').split('\n').filter(Boolean);
const agent = new https.Agent({ keepAlive: true, maxSockets: Number(concurrency), rejectUnauthorized: false });
let next = 0, errors = 0, firstError = '';
const one = (body) => new Promise((resolve) => {
  const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) };
  if (auth) headers.Authorization = auth;
  const req = https.request(url, { method: 'POST', agent, headers }, (res) => {
    let data = '';
    res.on('data', (c) => { data += c; });
    res.on('end', () => {
      if (res.statusCode !== 200 || !data.includes('"access_token"')) {
        errors++;
        if (!firstError) firstError = `${res.statusCode} ${data.slice(0, 200)}`;
      }
      resolve();
    });
  });
  req.on('error', (e) => { errors++; if (!firstError) firstError = e.message; resolve(); });
  req.end(body);
});
const worker = async () => { while (next < bodies.length) await one(bodies[next++]); };
const t0 = process.hrtime.bigint();
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`${bodies.length} requests in ${s.toFixed(2)} s: ${(bodies.length / s).toFixed(1)} req/s, ${errors} errors${firstError ? ' (first: ' + firstError + ')' : ''}`);
agent.destroy();
