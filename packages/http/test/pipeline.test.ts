// The request pipeline in-process: createApiHandler(engine) with plain request objects. Org
// resolution, routing, error mapping, body limit, JSON strictness, CORS and CSRF.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError, BadRequest, Engine} from '@gristlite/core/internal';
import {
  RawResponse,
  createApiHandler,
  type Handler,
  type HttpRequest,
  type HttpResponse,
  type Route,
} from '../src/index.js';

const s = suite('pipeline');
let dir = '';
let engine: Engine;
let handle: Handler;
let key = '';
let acme = 0;
const errors: unknown[] = [];

// Extra routes for the tests; they are matched before the built-in table.
const testRoutes: Route[] = [
  {
    method: 'POST',
    path: '/api/test/echo',
    summary: '',
    tag: 'test',
    handler: async (ctx) => ({body: await ctx.json(), org: ctx.org}),
  },
  {
    method: 'GET',
    path: '/api/test/echo/:a/:b',
    summary: '',
    tag: 'test',
    handler: async (ctx) => ({params: ctx.params, path: ctx.path, org: ctx.org, q: ctx.query.get('q')}),
  },
  {
    method: 'GET',
    path: '/api/test/boom',
    summary: '',
    tag: 'test',
    handler: async () => {
      throw new Error('kaboom');
    },
  },
  {
    method: 'GET',
    path: '/api/test/teapot',
    summary: '',
    tag: 'test',
    handler: async () => {
      throw new ApiError(418, 'short and stout', {userError: 'u', code: 'TEA'});
    },
  },
  {
    method: 'GET',
    path: '/api/test/nodetails',
    summary: '',
    tag: 'test',
    handler: async () => {
      throw new BadRequest('plain', {});
    },
  },
  {
    method: 'GET',
    path: '/api/test/raw',
    summary: '',
    tag: 'test',
    handler: async () => new RawResponse(201, 'hello', {'Content-Type': 'text/plain', 'X-Extra': '1'}),
  },
  {method: 'GET', path: '/api/test/undefined', summary: '', tag: 'test', handler: async () => undefined},
];

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-http-'));
  engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  key = await engine.home.setApiKey(user.id);
  acme = (await engine.store.createOrg({name: 'Acme', domain: 'acme', ownerUserId: user.id, personal: false})).id;
  handle = createApiHandler(engine, {
    env: {},
    baseDomain: 'example.test',
    maxBodyBytes: 1000,
    routes: testRoutes,
    onError: (e) => errors.push(e),
  });
});

s.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

interface Call {
  method?: string;
  headers?: Record<string, string>;
  body?: HttpRequest['body'];
  auth?: boolean;
}

async function call(url: string, opts: Call = {}): Promise<HttpResponse & {json: any}> {
  const headers: Record<string, string> = {host: '127.0.0.1:8484', ...(opts.headers ?? {})};
  if (opts.auth !== false) headers.authorization ??= `Bearer ${key}`;
  const res = await handle({method: opts.method ?? 'GET', url, headers, body: opts.body});
  let text = '';
  if (typeof res.body === 'string') text = res.body;
  else if (res.body instanceof Uint8Array) text = Buffer.from(res.body).toString();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {...res, json};
}

const post = (
  url: string,
  body: string | Uint8Array | AsyncIterable<Uint8Array>,
  headers: Record<string, string> = {'content-type': 'application/json'},
) => call(url, {method: 'POST', headers, body: typeof body === 'string' ? new TextEncoder().encode(body) : body});

s('unknown paths: 404 "not found: <original url>" including prefix and query', async () => {
  let res = await call('/api/nothing?x=1');
  assert.is(res.status, 404);
  assert.equal(res.json, {error: 'not found: /api/nothing?x=1'});
  res = await call('/o/acme/api/nothing');
  assert.equal([res.status, res.json], [404, {error: 'not found: /o/acme/api/nothing'}]);
  res = await call('/api/orgs', {method: 'PUT'});
  assert.equal([res.status, res.json], [404, {error: 'not found: /api/orgs'}]);
});

s('routing is case-insensitive and non-strict; params are decoded', async () => {
  const res = await call('/API/Test/Echo/a%20b/C/?q=1');
  assert.is(res.status, 200);
  assert.equal(res.json, {params: {a: 'a b', b: 'C'}, path: '/API/Test/Echo/a%20b/C/', org: null, q: '1'});
});

s('a malformed percent-escape in a path parameter or org prefix is a 400, not a 500', async () => {
  for (const url of ['/api/test/echo/%E0%A4%A/b', '/o/%zz/api/orgs']) {
    const res = await call(url);
    assert.is(res.status, 400, url);
    assert.match(res.json.error, /Invalid URL encoding in path/);
  }
});

s('org context from /o/<org>/, from the Host subdomain, both, and a mismatch', async () => {
  assert.is((await call('/o/acme/api/test/echo/x/y')).json.org, 'acme');
  assert.is((await call('/o/acme/api/test/echo/x/y')).json.path, '/api/test/echo/x/y');
  assert.is((await call('/api/test/echo/x/y', {headers: {host: 'acme.example.test'}})).json.org, 'acme');
  assert.is((await call('/api/test/echo/x/y', {headers: {host: 'ACME.example.test:8080'}})).json.org, 'acme');
  assert.is((await call('/o/acme/api/test/echo/x/y', {headers: {host: 'acme.example.test'}})).json.org, 'acme');
  const res = await call('/o/other/api/test/echo/x/y', {headers: {host: 'acme.example.test'}});
  assert.equal([res.status, res.json], [400, {error: "Wrong org for this domain: 'other' does not match 'acme'"}]);
  // Hosts that are not a single-label subdomain of the base name no org.
  for (const host of ['example.test', 'a.b.example.test', 'acme.other.test', 'localhost:8484']) {
    assert.is((await call('/api/test/echo/x/y', {headers: {host}})).json.org, null, host);
  }
  // The /dw/<worker>/v/<tag>/ prefix is dropped.
  assert.is((await call('/dw/w1/v/abc/o/acme/api/test/echo/x/y')).json.org, 'acme');
  // Each part alone too, as Grist strips /dw/<worker>/ and /v/<tag>/ separately (its docapi test
  // "doc worker endpoints ignore any /dw/.../ prefix" reads /dw/zing/api/docs/...).
  assert.is((await call('/dw/zing/api/test/echo/x/y')).json.path, '/api/test/echo/x/y');
  assert.is((await call('/v/abc/o/acme/api/test/echo/x/y')).json.org, 'acme');
  // And the org context reaches the home API: current.
  assert.is((await call('/o/acme/api/orgs/current')).json.id, acme);
  assert.is((await call('/api/orgs/current', {headers: {host: 'acme.example.test'}})).json.id, acme);
  assert.equal((await call('/api/orgs/current')).json, {error: 'No organization chosen'});
});

s('without a base domain the Host header names no org', async () => {
  const plain = createApiHandler(engine, {env: {}, routes: testRoutes});
  const res = await plain({
    method: 'GET',
    url: '/api/test/echo/x/y',
    headers: {host: 'acme.example.test', authorization: `Bearer ${key}`},
  });
  assert.is(JSON.parse(String(res.body)).org, null);
  const env = createApiHandler(engine, {env: {GRISTLITE_BASE_DOMAIN: 'example.test'}, routes: testRoutes});
  const res2 = await env({
    method: 'GET',
    url: '/api/test/echo/x/y',
    headers: {host: 'acme.example.test', authorization: `Bearer ${key}`},
  });
  assert.is(JSON.parse(String(res2.body)).org, 'acme');
  // D140: without a base domain, a sibling of the request's host is not a trusted origin (Grist
  // takes the Host's parent domain as the base and would trust it).
  const sibling = await plain({
    method: 'GET',
    url: '/api/test/echo/x/y',
    headers: {host: 'api.example.test', origin: 'http://front.example.test', authorization: `Bearer ${key}`},
  });
  assert.equal(
    [sibling.status, JSON.parse(String(sibling.body))],
    [403, {error: 'Credentials not supported for cross-origin requests'}],
  );
  const sameHost = await plain({
    method: 'GET',
    url: '/api/test/echo/x/y',
    headers: {host: 'api.example.test', origin: 'http://api.example.test', authorization: `Bearer ${key}`},
  });
  assert.is(sameHost.headers?.['Access-Control-Allow-Origin'], 'http://api.example.test');
});

s('errors map to status and {"error", "details"?}; anything else is a logged 500', async () => {
  let res = await call('/api/test/teapot');
  assert.equal([res.status, res.json], [418, {error: 'short and stout', details: {userError: 'u', code: 'TEA'}}]);
  res = await call('/api/test/nodetails');
  assert.equal([res.status, res.json], [400, {error: 'plain'}]);
  const before = errors.length;
  res = await call('/api/test/boom');
  assert.equal([res.status, res.json], [500, {error: 'internal error'}]);
  assert.is(errors.length, before + 1);
  assert.is((errors.at(-1) as Error).message, 'kaboom');
  assert.match(res.headers['Content-Type'], /^application\/json/);
  assert.is(res.headers['Cache-Control'], 'no-cache');
});

s('results: JSON with 200, undefined as null, RawResponse as given, HEAD without a body', async () => {
  let res = await call('/api/test/undefined');
  assert.equal([res.status, res.body], [200, 'null']);
  res = await call('/api/test/raw');
  assert.equal(
    [res.status, res.body, res.headers['X-Extra'], res.headers['Content-Type']],
    [201, 'hello', '1', 'text/plain'],
  );
  assert.is(res.headers['Cache-Control'], 'no-cache');
  res = await call('/api/test/raw', {method: 'HEAD'});
  assert.equal([res.status, res.body], [201, null]);
});

s('authentication: bad keys and schemes are 401, no key is anonymous', async () => {
  let res = await call('/api/orgs', {headers: {authorization: 'Bearer nope'}});
  assert.equal([res.status, res.json], [401, {error: 'Bad request: invalid API key'}]);
  res = await call('/api/orgs', {headers: {authorization: 'Token abc'}});
  assert.equal(
    [res.status, res.json],
    [401, {error: "Bad request: unsupported Authorization scheme, expected 'Bearer'"}],
  );
  res = await call('/api/orgs', {auth: false});
  assert.equal([res.status, res.json], [200, []]);
});

s('JSON bodies: objects and arrays pass; other top-level values and malformed JSON are 400', async () => {
  assert.equal((await post('/api/test/echo', '{"a":1}')).json.body, {a: 1});
  assert.equal((await post('/api/test/echo', '[1,2]')).json.body, [1, 2]);
  assert.equal((await post('/api/test/echo', '')).json.body, {});
  assert.equal((await post('/api/test/echo', '  \n')).json.body, {});
  assert.equal(
    (await post('/api/test/echo', '{"a":1}', {'content-type': 'application/json; charset=utf-8'})).json.body,
    {a: 1},
  );
  assert.equal((await post('/api/test/echo', '{"a":1}', {'content-type': 'application/vnd.api+json'})).json.body, {
    a: 1,
  });
  // Not declared as JSON: the body is {} (as Express leaves req.body).
  assert.equal((await post('/api/test/echo', '{"a":1}', {'content-type': 'text/plain'})).json.body, {});
  assert.equal((await post('/api/test/echo', '{"a":1}', {})).json.body, {});
  for (const body of ['"str"', '1', 'true', 'null']) {
    const res = await post('/api/test/echo', body);
    assert.is(res.status, 400, body);
    assert.type(res.json.error, 'string');
  }
  for (const body of ['{', '{"a":}', "{'a':1}", '{"a":1}}']) {
    const res = await post('/api/test/echo', body);
    assert.is(res.status, 400, body);
    assert.match(res.json.error, /JSON/, body);
  }
});

s('body limit: 413 for bytes, streams and declared lengths over the limit; exactly at it is fine', async () => {
  const at = `{"a":"${'x'.repeat(1000 - 8)}"}`;
  assert.is(at.length, 1000);
  assert.is((await post('/api/test/echo', at)).status, 200);
  let res = await post('/api/test/echo', at + ' ');
  assert.equal(
    [res.status, res.json],
    [413, {error: 'request entity too large (over 1000 bytes: GRISTLITE_MAX_BODY_BYTES)'}],
  );
  assert.is(res.headers.Connection, 'close');
  let pulled = 0;
  async function* stream() {
    for (let i = 0; i < 100; i++) {
      pulled++;
      yield new Uint8Array(100).fill(32);
    }
  }
  res = await post('/api/test/echo', stream());
  assert.equal(
    [res.status, res.json],
    [413, {error: 'request entity too large (over 1000 bytes: GRISTLITE_MAX_BODY_BYTES)'}],
  );
  assert.ok(pulled <= 11, `stopped reading early (read ${pulled} chunks)`);
  res = await call('/api/test/echo', {
    method: 'POST',
    headers: {'content-type': 'application/json', 'content-length': '5000'},
    body: new TextEncoder().encode('{}'),
  });
  assert.equal(
    [res.status, res.json],
    [413, {error: 'request entity too large (over 1000 bytes: GRISTLITE_MAX_BODY_BYTES)'}],
  );
  // A stream under the limit is read whole.
  async function* small() {
    yield new TextEncoder().encode('{"a":');
    yield new TextEncoder().encode('2}');
  }
  assert.equal((await post('/api/test/echo', small())).json.body, {a: 2});
});

s('CSRF: anonymous writes need application/json exactly or X-Requested-With', async () => {
  const msg =
    "Unauthenticated requests require one of the headers'Content-Type: application/json' or 'X-Requested-With: XMLHttpRequest'";
  const anon = (headers: Record<string, string>) =>
    call('/api/test/echo', {method: 'POST', auth: false, headers, body: new TextEncoder().encode('{}')});
  assert.equal((await anon({'content-type': 'text/plain'})).json, {error: msg});
  assert.equal((await anon({'content-type': 'application/json; charset=utf-8'})).json, {error: msg});
  assert.is((await anon({'content-type': 'application/json'})).status, 200);
  assert.is((await anon({'x-requested-with': 'XMLHttpRequest'})).status, 200);
  // API keys are exempt.
  assert.is((await call('/api/test/echo', {method: 'POST', headers: {'content-type': 'text/plain'}})).status, 200);
});

s('CORS headers and OPTIONS', async () => {
  let res = await call('/api/orgs', {auth: false, headers: {origin: 'https://evil.test'}});
  assert.equal(
    [res.headers['Access-Control-Allow-Origin'], res.headers['Access-Control-Allow-Credentials']],
    ['*', undefined],
  );
  res = await call('/api/orgs', {headers: {origin: 'https://evil.test'}});
  assert.equal([res.status, res.json], [403, {error: 'Credentials not supported for cross-origin requests'}]);
  res = await call('/api/orgs', {headers: {origin: 'https://acme.example.test'}});
  assert.equal(
    [res.status, res.headers['Access-Control-Allow-Origin'], res.headers['Access-Control-Allow-Credentials']],
    [200, 'https://acme.example.test', 'true'],
  );
  res = await call('/api/orgs', {headers: {origin: 'http://127.0.0.1:8484'}});
  assert.is(res.headers['Access-Control-Allow-Origin'], 'http://127.0.0.1:8484', 'same host is trusted');
  res = await call('/api/orgs', {headers: {origin: '::not a url'}});
  assert.equal([res.status, res.json.error.startsWith('Invalid origin: ')], [400, true]);
  res = await call('/api/anything/at/all', {method: 'OPTIONS', auth: false, headers: {origin: 'https://evil.test'}});
  assert.equal(
    [res.status, res.headers['Access-Control-Allow-Methods']],
    [200, 'GET, PATCH, PUT, POST, DELETE, OPTIONS'],
  );
});

s.run();
