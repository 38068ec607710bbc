// peer.mjs - the comparison peer for bench/token: the npm `oidc-provider`
// (a certified OpenID Provider) issuing ES256-signed JWT access tokens through
// its token endpoint (client_credentials grant with a resource indicator, so it
// signs a JWT per request as allot-scimd does), over HTTPS with the same cert.
//
// usage: node peer.mjs PORT CERT KEY
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const [port, cert, key] = process.argv.slice(2);
const issuer = `https://127.0.0.1:${port}`;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'bench' };
const provider = new Provider(issuer, {
  clients: [{
    client_id: 'bench', client_secret: 'bench-secret-bench-secret-bench-secret',
    grant_types: ['client_credentials'], redirect_uris: [], response_types: [],
    id_token_signed_response_alg: 'ES256',
  }],
  jwks: { keys: [jwk] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => 'urn:bench:kube',
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'kube', audience: 'bench', accessTokenTTL: 900, accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;
https.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, provider.callback())
  .listen(Number(port), '127.0.0.1');
