// A real OAuth 2 / OpenID Connect authorization server on loopback for the
// gateway's resource-server tests: the npm package `oauth2-mock-server`
// (pinned in tests/node/package.json), with hooks that let a test choose
// what each token carries. Run by tests/tests/oauth.rs:
//
//   node tests/oauth/authorization_server.mjs [--code-subject SUB] [--code-scopes "S1 S2"]
//       [--introspection-client ID:SECRET] [--no-jwks-uri]
//
// The packages are resolved from tests/node/node_modules (`npm ci` there).
//
// When it listens it prints one JSON line, {"issuer": "http://127.0.0.1:PORT"},
// and serves what the package serves:
//   GET  /.well-known/openid-configuration  discovery (also served at the RFC
//                                           8414 name /.well-known/oauth-authorization-server)
//   GET  /jwks                              the JWK Set (RS256 keys)
//   GET  /authorize                         auto-approves, redirects with a code (PKCE S256 or plain)
//   POST /token                             client_credentials, authorization_code (+ PKCE), refresh_token
// and, added here in place of the package's own (which answer {"active": true}
// to anything, and revoke nothing):
//   POST /introspect                        token introspection (RFC 7662), answered from
//                                           the tokens this server issued
//   POST /revoke                            token revocation (RFC 7009): the token is
//                                           inactive from then on
// Both need the client of --introspection-client (default
// `mcp-gateway:introspection-secret`) by HTTP Basic (RFC 6749 section 2.3.1:
// each part form-urlencoded); other credentials, or none, are answered 401
// `invalid_client`. With --no-jwks-uri the discovery document names no
// `jwks_uri`, as an issuer of opaque tokens only may (RFC 8414): a resource
// server then has no keys to check a JWT with.
//
// The token endpoint's client_credentials grant takes, as form parameters:
//   sub          the token's subject
//   scope        space-separated scopes
//   resource     the audience (RFC 8707); repeated, an array; `aud` also works
//   expires_in   the lifetime in seconds, negative for a token already expired
//   not_before_in  seconds from now until the token is valid (`nbf`)
//   claims       a JSON object merged into the claims last (it may override any
//                of them, `iss` included)
//   token_format `opaque` for a random opaque access token, known only to /introspect
//   signing_key  `unpublished` to sign with a key the JWKS never serves
// `expires_in`, `not_before_in`, `claims` and `token_format` apply to the
// authorization-code grant too. A token from the authorization-code grant
// carries `sub` = --code-subject (default "sdk-user"), the scopes asked at
// /authorize (only those in --code-scopes, when given), and `aud` = the
// `resource` the client sent (at the token endpoint, else at /authorize).
//
// Commands, one per line on stdin, each answered by one JSON line on stdout:
//   rotate  a new signing key replaces the old one, in the JWKS as for
//           signing: tokens issued from now on carry its new `kid` and the
//           old key is no longer published -> {"rotated": "<new kid>"}
//   kid     -> {"kid": "<the current signing key's kid>"}
//   introspections  -> {"introspections": [{"client": "<id or null>",
//           "authenticated": true|false, "active": true|false|null}, ...]}: every
//           request to /introspect so far, in order (`active` null when refused)
// The server exits when stdin closes, so it does not outlive the test.

import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const nodeModules = createRequire(new URL('../node/package.json', import.meta.url));
const { HttpServer, JWKStore, OAuth2Issuer, OAuth2Service } = await import(
  pathToFileURL(nodeModules.resolve('oauth2-mock-server')).href
);

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}
const CODE_SUBJECT = option('--code-subject', 'sdk-user');
const CODE_SCOPES = option('--code-scopes', undefined)?.split(' ').filter(Boolean);
const INTROSPECTION_CLIENT = option('--introspection-client', 'mcp-gateway:introspection-secret');
const NO_JWKS_URI = process.argv.includes('--no-jwks-uri');

// The package's issuer signs with the key its key store hands out, round-robin
// over every key ever added, and publishes them all; a store has no removal.
// Its `keys` getter is what both signing (OAuth2Issuer#buildToken) and the
// JWKS handler read, so an issuer whose `keys` is a store replaced wholesale
// switches the signing key and the published set together. One more key is
// never published: a token asks for it with `signing_key=unpublished`.
class RotatingIssuer extends OAuth2Issuer {
  #store = new JWKStore();
  #unpublished = new JWKStore();
  #kid = undefined;
  /** Which key the token being built is signed with, set around its key's choice. */
  signingKey = undefined;

  get keys() {
    const published = this.#store;
    const unpublished = this.#unpublished;
    return {
      get: (kid) => (this.signingKey === 'unpublished' ? unpublished : published).get(kid),
      toJSON: (includePrivateFields) => published.toJSON(includePrivateFields),
    };
  }

  get kid() {
    return this.#kid;
  }

  async rotate() {
    const store = new JWKStore();
    const jwk = await store.generate('RS256');
    this.#store = store;
    this.#kid = jwk.kid;
    return jwk.kid;
  }

  async start() {
    await this.#unpublished.generate('RS256');
    await this.rotate();
  }
}

// The issuer picks the signing key synchronously when a token is built
// (before its first await), so `signing_key` is set for exactly that choice.
class Service extends OAuth2Service {
  async buildToken(req, expiresIn, scopesOrTransform) {
    this.issuer.signingKey = formValue(req.body?.signing_key);
    const token = super.buildToken(req, expiresIn, scopesOrTransform);
    this.issuer.signingKey = undefined;
    return await token;
  }
}

const issuer = new RotatingIssuer();
await issuer.start();
const service = new Service(issuer);

// What /authorize granted, by code: read back at the token endpoint.
const grants = new Map();
// Every access token issued, with its claims, for /introspect.
const issued = new Map();

function formValue(value) {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function seconds(value, what) {
  const text = formValue(value);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n)) throw new Error(`${what} is not a whole number of seconds: ${text}`);
  return n;
}

service.on('beforeAuthorizeRedirect', ({ url }, req) => {
  const code = url.searchParams.get('code');
  if (code === null) return;
  const asked = typeof req.query.scope === 'string' ? req.query.scope.split(' ').filter(Boolean) : [];
  const scope = CODE_SCOPES === undefined ? asked : asked.filter((s) => CODE_SCOPES.includes(s));
  grants.set(code, {
    scope: scope.join(' '),
    resource: req.query.resource,
    clientId: req.query.client_id,
  });
});

// Called for the access token and, in the code and refresh grants, for the
// ID token, whose claims the package builds without a `scope`: that one is
// left as the package makes it.
service.on('beforeTokenSigning', (token, req) => {
  const body = req.body ?? {};
  const payload = token.payload;
  if (!('scope' in payload)) return;
  switch (body.grant_type) {
    case 'client_credentials': {
      if (body.sub !== undefined) payload.sub = formValue(body.sub);
      const aud = body.resource ?? body.aud;
      if (aud === undefined) delete payload.aud;
      else payload.aud = aud;
      if (body.client_id !== undefined) payload.client_id = formValue(body.client_id);
      break;
    }
    case 'authorization_code':
    case 'refresh_token': {
      const grant = grants.get(body.code) ?? grants.get(body.refresh_token);
      payload.sub = CODE_SUBJECT;
      if (grant !== undefined) payload.scope = grant.scope;
      const aud = body.resource ?? grant?.resource;
      if (aud !== undefined) payload.aud = aud;
      if (body.client_id !== undefined) payload.client_id = formValue(body.client_id);
      break;
    }
    default:
      break;
  }
  if (payload.scope === undefined) delete payload.scope;
  const lifetime = seconds(body.expires_in, 'expires_in');
  if (lifetime !== undefined) {
    payload.exp = payload.iat + lifetime;
    // An expired token is still a well-formed one: valid for a minute once.
    if (payload.nbf >= payload.exp) {
      payload.iat = payload.exp - 60;
      payload.nbf = payload.iat;
    }
  }
  const notBefore = seconds(body.not_before_in, 'not_before_in');
  if (notBefore !== undefined) payload.nbf = payload.iat + notBefore;
  if (body.claims !== undefined) {
    const claims = JSON.parse(formValue(body.claims));
    if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) {
      throw new Error('claims is not a JSON object');
    }
    Object.assign(payload, claims);
  }
});

service.on('beforeResponse', (response, req) => {
  const body = req.body ?? {};
  const answer = response.body;
  if (typeof answer.access_token !== 'string') return;
  const claims = JSON.parse(Buffer.from(answer.access_token.split('.')[1], 'base64url').toString());
  answer.scope = claims.scope;
  if (claims.scope === undefined) delete answer.scope;
  answer.expires_in = claims.exp - Math.floor(Date.now() / 1000);
  if (formValue(body.token_format) === 'opaque') {
    answer.access_token = randomBytes(32).toString('base64url');
  }
  issued.set(answer.access_token, claims);
  if (body.grant_type === 'authorization_code') {
    const grant = grants.get(body.code);
    grants.delete(body.code);
    if (grant !== undefined && typeof answer.refresh_token === 'string') {
      grants.set(answer.refresh_token, grant);
    }
  }
});

function introspect(token) {
  const claims = token === undefined ? undefined : issued.get(token);
  const now = Math.floor(Date.now() / 1000);
  if (claims === undefined || claims.exp <= now || (claims.nbf ?? 0) > now) return { active: false };
  return { active: true, token_type: 'Bearer', ...claims };
}

// The client of an HTTP Basic `Authorization` header, if its credentials are
// those of --introspection-client; `authenticated` false otherwise.
function basicClient(req) {
  const header = req.headers.authorization ?? '';
  const [scheme, encoded] = header.split(' ');
  if (scheme?.toLowerCase() !== 'basic' || encoded === undefined) {
    return { client: null, authenticated: false };
  }
  const pair = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  if (colon < 0) return { client: null, authenticated: false };
  const decode = (part) => decodeURIComponent(part.replaceAll('+', ' '));
  try {
    const client = decode(pair.slice(0, colon));
    const secret = decode(pair.slice(colon + 1));
    return { client, authenticated: `${client}:${secret}` === INTROSPECTION_CLIENT };
  } catch {
    return { client: null, authenticated: false };
  }
}

// Every request to /introspect, for the `introspections` command.
const introspections = [];

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const app = service.requestHandler;
const http = new HttpServer(async (req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'POST' && (path === '/introspect' || path === '/revoke')) {
    try {
      const text = await readBody(req);
      const form = (req.headers['content-type'] ?? '').startsWith('application/json')
        ? JSON.parse(text)
        : Object.fromEntries(new URLSearchParams(text));
      const { client, authenticated } = basicClient(req);
      const entry = { client, authenticated, active: null };
      if (path === '/introspect') introspections.push(entry);
      if (!authenticated) {
        res.writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Basic realm="introspection"',
        });
        res.end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }));
        return;
      }
      let answer = {};
      if (path === '/introspect') {
        answer = introspect(form.token);
        entry.active = answer.active;
      } else if (form.token !== undefined) {
        issued.delete(form.token);
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(answer));
    } catch (error) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_request', error_description: String(error) }));
    }
    return;
  }
  const discovery = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];
  if (req.method === 'GET' && discovery.includes(path)) {
    if (NO_JWKS_URI) {
      service.openidConfigurationHandler(req, {
        json: (document) => {
          delete document.jwks_uri;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(document));
        },
      });
      return;
    }
    req.url = '/.well-known/openid-configuration';
  }
  app(req, res);
});

await http.start(0, '127.0.0.1');
// The package names a loopback server `localhost`; tokens and discovery name
// the address the tests use.
issuer.url = `http://127.0.0.1:${http.address().port}`;

function say(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

say({ issuer: issuer.url });

const commands = createInterface({ input: process.stdin });
for await (const line of commands) {
  const command = line.trim();
  if (command === '') continue;
  try {
    if (command === 'rotate') say({ rotated: await issuer.rotate() });
    else if (command === 'kid') say({ kid: issuer.kid });
    else if (command === 'introspections') say({ introspections });
    else say({ error: `unknown command: ${command}` });
  } catch (error) {
    say({ error: String(error) });
  }
}
await http.stop();
process.exit(0);
