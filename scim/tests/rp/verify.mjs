// verify.mjs - a relying party we did not write (openid-client + jose from npm)
// validates allot-scimd's discovery, JWKS and ID tokens.
//
// usage: node verify.mjs ISSUER AUDIENCE CASES.json
// CASES.json: {"good": "<jwt>", "expired": "<jwt>", ...}; only "good*" must verify.
// Prints "ok <case>" / "not ok <case> <why>" per case; exits 1 if any case is wrong.
import * as client from 'openid-client';
import * as jose from 'jose';
import { readFileSync } from 'node:fs';

const [issuer, audience, casesFile] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, 'utf8'));
let bad = 0;
const report = (ok, name, why = '') => {
  if (!ok) bad++;
  console.log(`${ok ? 'ok' : 'not ok'} ${name}${why ? ' ' + why : ''}`);
};

// Discovery: openid-client checks that the document's issuer equals the URL it came from.
const config = await client.discovery(new URL(issuer), audience);
const meta = config.serverMetadata();
report(meta.issuer === issuer, 'discovery issuer', meta.issuer);
report(typeof meta.jwks_uri === 'string' && meta.jwks_uri.startsWith(issuer), 'discovery jwks_uri', meta.jwks_uri);

const jwks = jose.createRemoteJWKSet(new URL(meta.jwks_uri));
for (const [name, token] of Object.entries(cases)) {
  const shouldPass = name.startsWith('good');
  try {
    const { payload, protectedHeader } = await jose.jwtVerify(token, jwks, {
      issuer, audience, algorithms: ['ES256', 'RS256'],
    });
    const claimsOk = typeof payload.preferred_username === 'string' && Array.isArray(payload.groups);
    report(shouldPass && claimsOk, `${name} accepted`, `${protectedHeader.alg} ${payload.preferred_username} groups=${JSON.stringify(payload.groups)}`);
  } catch (e) {
    report(!shouldPass, `${name} rejected`, e.code || e.message);
  }
}
process.exit(bad ? 1 : 0);
