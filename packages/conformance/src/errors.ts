/**
 * Bad input everywhere: authentication, unknown paths, bodies, the CSRF rule, CORS, and routing
 * details (SPEC §1.1-§1.5).
 */
import * as assert from 'uvu/assert';
import {areaSuite, BASE_DOMAIN, isError, isErrorLike, isInvalidPayload, ok, useWorld, type Target} from './world.js';

/** What gristlite adds to a 400 caused by a body it did not read (D74). */
const UNREAD_TEXT = ' (the request body was not read: its Content-Type is text/plain, not application/json)';

const CSRF =
  "Unauthenticated requests require one of the headers'Content-Type: application/json' or 'X-Requested-With: XMLHttpRequest'";

export function errorsSuite(target: Target): void {
  const s = areaSuite(target, 'errors');
  const world = useWorld(s, target);
  let org = 0;
  let doc = '';

  s('authentication: no key is anonymous; wrong key, empty key and wrong scheme are 401', async () => {
    const {api, chimpy} = world();
    org = await world().newOrg(chimpy, 'Errs', 'errs');
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'D');
    assert.equal(ok(await api.get('/api/orgs')).body, []);
    isError(await api.get(`/api/orgs/${org}`), 403, 'access denied');
    const bad = 'Bad request: invalid API key';
    isError(await api.get('/api/orgs', {key: 'f'.repeat(40)}), 401, bad);
    isError(await api.get('/api/orgs', {headers: {authorization: 'Bearer '}}), 401, bad);
    isError(await api.get('/api/orgs', {headers: {authorization: 'Bearer'}}), 401, bad);
    const scheme = "Bad request: unsupported Authorization scheme, expected 'Bearer'";
    isError(await api.get('/api/orgs', {headers: {authorization: `Basic ${chimpy.key}`}}), 401, scheme);
    isError(await api.get('/api/orgs', {headers: {authorization: chimpy.key}}), 401, scheme);
    // A bad key is refused even where anonymous access would be fine.
    isError(await api.get('/api/profile/user', {key: 'nope'}), 401, bad);
    isError(await api.post('/api/orgs', {name: 'X'}, {key: 'nope'}), 401, bad);
  });

  s('403 versus 404: unknown ids are 404, existing resources without access are 403', async () => {
    const {api, chimpy, kiwi} = world();
    const wid = await world().homeWs(chimpy);
    isError(await api.get(`/api/orgs/${org}`, kiwi.as), 403, 'access denied');
    isError(await api.get('/api/orgs/424242', kiwi.as), 404, 'organization not found');
    isError(await api.get(`/api/workspaces/${wid}`, kiwi.as), 403, 'access denied');
    isError(await api.get('/api/workspaces/424242', kiwi.as), 404, 'workspace not found');
    isError(await api.get(`/api/docs/${doc}`, kiwi.as), 403, 'access denied');
    isError(await api.get('/api/docs/AAAAAAAAAAAAAAAAAAAAAA', kiwi.as), 404, 'document not found');
    isError(await api.get(`/api/docs/${doc}/access`, kiwi.as), 403, 'access denied');
    isError(await api.patch(`/api/docs/${doc}`, {name: 'x'}, kiwi.as), 403, 'access denied');
    isError(await api.del(`/api/docs/${doc}`, kiwi.as), 403, 'No view access');
  });

  s('unknown /api paths are 404 "not found: <url>" with the query string', async () => {
    const {api, chimpy} = world();
    isError(await api.get('/api/zig', chimpy.as), 404, 'not found: /api/zig');
    isError(await api.get('/api/zig?x=1&y=2', chimpy.as), 404, 'not found: /api/zig?x=1&y=2');
    isError(await api.get('/api'), 404, 'not found: /api');
    isError(await api.get('/o/errs/api/nothing/here', chimpy.as), 404, 'not found: /o/errs/api/nothing/here');
    isError(await api.call('PUT', '/api/orgs', {...chimpy.as, json: {}}), 404, 'not found: /api/orgs');
    isError(
      await api.get(`/api/orgs/${org}/extra/segments`, chimpy.as),
      404,
      `not found: /api/orgs/${org}/extra/segments`,
    );
  });

  s('routing is case-insensitive and accepts a trailing slash', async () => {
    const {api, chimpy} = world();
    assert.ok(Array.isArray(ok(await api.get('/api/ORGS', chimpy.as)).body));
    assert.ok(Array.isArray(ok(await api.get('/api/orgs/', chimpy.as)).body));
    assert.is(ok(await api.get(`/API/Orgs/${org}/`, chimpy.as)).body.id, org);
    assert.is(ok(await api.get(`/api/docs/${doc}/ACCESS`, chimpy.as)).status, 200);
  });

  s('bodies: malformed JSON is 400 naming the problem; strict top level; non-objects refused', async () => {
    const {api, chimpy} = world();
    const json = {...chimpy.as, headers: {'content-type': 'application/json'}};
    const path = `/api/orgs/${org}/workspaces`;
    const malformed = await api.call('POST', path, {...json, body: '{"name": "x",}'});
    isErrorLike(malformed, 400, /JSON/);
    isErrorLike(await api.call('POST', path, {...json, body: '{"name"'}), 400, /JSON/);
    for (const body of ['"just a string"', '42', 'true', 'null']) {
      assert.is((await api.call('POST', path, {...json, body})).status, 400, body);
    }
    // body-parser's strict check, in its words (the parser's own message for the text, issue 24).
    isError(
      await api.call('POST', path, {...json, body: '"just a string"'}),
      400,
      `Unexpected token '"', ""just a string"" is not valid JSON`,
    );
    isError(await api.call('POST', path, {...json, body: ' 42'}), 400, `Unexpected token '4', " 42" is not valid JSON`);
    isError(
      await api.call('POST', `/api/docs/${doc}/tables/Table1/records`, {...json, body: '"x"'}),
      400,
      `Unexpected token '"', ""x"" is not valid JSON`,
    );
    isErrorLike(await api.call('POST', path, {...json, body: '[1, 2]'}), 400, /./);
    isErrorLike(await api.call('PATCH', `/api/orgs/${org}`, {...json, body: '["name"]'}), 400, /./);
    // A JSON body that is not declared as JSON is ignored ({}), so the name is missing; the
    // refusal says the body was not read (decision D74).
    isError(
      await api.call('POST', path, {...chimpy.as, headers: {'content-type': 'text/plain'}, body: '{"name":"x"}'}),
      400,
      `Bad request: name required${UNREAD_TEXT}`,
    );
    // A charset parameter still counts as JSON for parsing.
    const wid = ok(
      await api.call('POST', path, {
        ...chimpy.as,
        headers: {'content-type': 'application/json; charset=utf-8'},
        body: '{"name":"Charset"}',
      }),
    ).body;
    assert.type(wid, 'number');
    // Wrong shapes inside a valid object.
    isError(await api.patch(`/api/docs/${doc}`, {name: true}, chimpy.as), 400, 'Bad request: name required');
    isError(
      await api.patch(`/api/orgs/${org}/access`, {delta: 'x'}, chimpy.as),
      400,
      'Bad request: invalid permission delta',
    );
    isError(
      await api.patch(`/api/orgs/${org}/access`, {delta: {users: ['a@b.com']}}, chimpy.as),
      400,
      'Bad request: invalid permission delta',
    );
  });

  s("document texts as Grist's: owners' endpoints, upsert require, filter lists, SQL args (issue 24)", async () => {
    const {api, chimpy, kiwi} = world();
    const d = ok(await api.post(`/api/orgs/${org}/workspaces`, {name: 'Texts'}, chimpy.as)).body;
    const id = ok(await api.post(`/api/workspaces/${d}/docs`, {name: 'Texts'}, chimpy.as)).body;
    const t = `/api/docs/${id}/tables/Table1`;
    ok(await api.post(`${t}/records`, {records: [{fields: {A: 'a'}}, {fields: {A: 'b'}}]}, chimpy.as));
    // A viewer on an owners' endpoint: Grist's assertAccess says "No owner access".
    ok(await api.patch(`/api/docs/${id}/access`, {delta: {users: {[kiwi.email]: 'viewers'}}}, chimpy.as));
    isError(await api.get(`/api/docs/${id}/webhooks`, kiwi.as), 403, 'No owner access');
    isError(await api.post(`${t}/records`, {records: [{}]}, kiwi.as), 403, 'No write access');
    // require: Grist's checker takes any JS object, a list included (its indexes as keys).
    const put = (require: unknown) => api.call('PUT', `${t}/records`, {...chimpy.as, json: {records: [{require}]}});
    isError(await put(['a']), 400, 'Invalid column "0"');
    isError(
      await put([]),
      400,
      "Error manipulating data: [Sandbox] ValueError require is empty but allow_empty_require isn't set",
    );
    // `require` is an intersection of two object types: Grist's checker reports each (recorded).
    const notObject =
      'Error: body.records[0] is not a AddOrUpdateRecord\n    body.records[0].require is not an object\n' +
      '    body.records[0].require is not an object';
    isInvalidPayload(await put(5), notObject);
    isInvalidPayload(await put(null), notObject);
    // filter: any JSON value is read by its keys, as Grist's Object.keys does.
    const filtered = (f: string) => api.get(`${t}/records?filter=${encodeURIComponent(f)}`, chimpy.as);
    isError(await filtered('[1, 2]'), 400, 'Invalid query: filter values must be arrays');
    isError(await filtered('"x"'), 400, 'Invalid query: filter values must be arrays');
    assert.is(ok(await filtered('[]')).body.records.length, 2);
    assert.is(ok(await filtered('5')).body.records.length, 2);
    // SQL args: Grist's union type, named.
    isInvalidPayload(
      await api.post(`/api/docs/${id}/sql`, {sql: 'select 1', args: 5}, chimpy.as),
      'Error: body.args is none of any[], null',
    );
    isInvalidPayload(
      await api.post(`/api/docs/${id}/sql`, {sql: 'select 1', args: {a: 1}}, chimpy.as),
      'Error: body.args is none of any[], null',
    );
    ok(await api.post(`/api/docs/${id}/sql`, {sql: 'select ?', args: null}, chimpy.as));
  });

  s(
    'objects carrying their own toString/valueOf keys where a string or number is expected are 400 (issue 24)',
    async () => {
      const {api, chimpy} = world();
      const trap = {toString: 1, valueOf: 1, hasOwnProperty: 1};
      const wid = ok(await api.post(`/api/orgs/${org}/workspaces`, {name: 'Traps'}, chimpy.as)).body;
      const id = ok(await api.post(`/api/workspaces/${wid}/docs`, {name: 'Traps'}, chimpy.as)).body;
      const is400 = async (res: Promise<{status: number; body: any}>, what: string) => {
        const r = await res;
        assert.is(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
        assert.type(r.body.error, 'string', what);
      };
      await is400(api.patch(`/api/orgs/${org}/access`, {delta: {users: {'a@b.c': trap}}}, chimpy.as), 'org role');
      isError(
        await api.patch(`/api/orgs/${org}/access`, {delta: {users: {'a@b.c': trap}}}, chimpy.as),
        400,
        'Invalid user role [object Object]',
      );
      await is400(api.patch(`/api/workspaces/${wid}/access`, {delta: {maxInheritedRole: trap}}, chimpy.as), 'max role');
      await is400(api.patch(`/api/docs/${id}/access`, {delta: {users: {'a@b.c': trap}}}, chimpy.as), 'doc role');
      isError(
        await api.patch(`/api/docs/${id}/move`, {workspace: trap}, chimpy.as),
        400,
        'workspace parameter cannot be understood as an integer: [object Object]',
      );
      await is400(api.post('/api/orgs', {name: 'T', domain: trap}, chimpy.as), 'org domain');
      await is400(api.post('/api/docs', {workspaceId: trap, documentName: 'x'}, chimpy.as), 'new doc workspaceId');
      await is400(api.post(`/api/docs/${id}/copy`, {workspaceId: wid, documentName: trap}, chimpy.as), 'copy name');
      const apply = (actions: unknown[]) => api.post(`/api/docs/${id}/apply`, actions, chimpy.as);
      for (const action of [
        ['UpdateRecord', trap, 1, {}],
        ['UpdateRecord', '_grist_Tables_column', trap, {colId: 'Q'}],
        ['AddTable', trap, [{id: 'X'}]],
        ['AddTable', 'T2', [{id: trap}]],
        ['AddTable', 'T2', [{id: 'X', type: trap}]],
        ['AddColumn', 'Table1', trap, {}],
        ['AddColumn', 'Table1', 'X', {formula: trap}],
        ['ModifyColumn', 'Table1', 'A', trap],
        ['ModifyColumn', 'Table1', trap, {type: 'Text'}],
        ['RenameColumn', 'Table1', 'A', trap],
        ['RenameTable', 'Table1', trap],
        ['RemoveColumn', 'Table1', trap],
        ['SetDisplayFormula', 'Table1', null, trap, '$A'],
      ]) {
        await is400(apply([action]), JSON.stringify(action));
      }
    },
  );

  s('bodies over 1 MB are 413, declared or streamed', async () => {
    const {api, chimpy} = world();
    const big = JSON.stringify({name: 'x'.repeat(1024 * 1024 + 10)});
    // Grist's text, then the limit and its setting (D65).
    const tooLarge = 'request entity too large (over 1048576 bytes: GRISTLITE_MAX_BODY_BYTES)';
    isError(await api.post(`/api/orgs/${org}/workspaces`, JSON.parse(big), chimpy.as), 413, tooLarge);
    async function* chunks() {
      const piece = new TextEncoder().encode('x'.repeat(64 * 1024));
      yield new TextEncoder().encode('{"name":"');
      for (let i = 0; i < 20; i++) yield piece;
      yield new TextEncoder().encode('"}');
    }
    isError(
      await api.call('POST', `/api/orgs/${org}/workspaces`, {
        ...chimpy.as,
        headers: {'content-type': 'application/json'},
        body: chunks(),
      }),
      413,
      tooLarge,
    );
    // Just under the limit is fine (and the name is accepted as given).
    const almost = 'y'.repeat(1024 * 1024 - 100);
    assert.type(ok(await api.post(`/api/orgs/${org}/workspaces`, {name: almost}, chimpy.as)).body, 'number');
  });

  s('CSRF: anonymous non-GET requests need JSON content type or X-Requested-With', async () => {
    const {api, chimpy} = world();
    isError(
      await api.call('POST', '/api/orgs', {headers: {'content-type': 'text/plain'}, body: '{"name":"x"}'}),
      401,
      CSRF,
    );
    isError(await api.call('POST', '/api/orgs', {}), 401, CSRF);
    isError(
      await api.call('POST', '/api/orgs', {
        headers: {'content-type': 'application/json; charset=utf-8'},
        body: '{"name":"x"}',
      }),
      401,
      CSRF,
    );
    isError(await api.call('DELETE', `/api/docs/${doc}`), 401, CSRF);
    isError(
      await api.call('PATCH', `/api/orgs/${org}`, {headers: {'content-type': 'text/plain'}, body: 'x'}),
      401,
      CSRF,
    );
    // With the header the request goes on (and is refused for being anonymous).
    isError(
      await api.call('POST', '/api/orgs', {headers: {'x-requested-with': 'XMLHttpRequest'}}),
      401,
      'user not authorized',
    );
    isError(await api.post('/api/orgs', {name: 'x'}), 401, 'user not authorized');
    // GET is exempt, and API-key requests are exempt.
    ok(await api.get('/api/orgs'));
    isError(
      await api.call('POST', '/api/orgs', {...chimpy.as, headers: {'content-type': 'text/plain'}, body: 'x'}),
      400,
      `Bad request: name required${UNREAD_TEXT}`,
    );
  });

  s('CORS: credentials from an untrusted origin are 403; trusted origins are echoed', async () => {
    const {api, chimpy} = world();
    const evil = 'https://evil.example.com';
    isError(
      await api.get('/api/orgs', {...chimpy.as, headers: {origin: evil}}),
      403,
      'Credentials not supported for cross-origin requests',
    );
    isError(
      await api.get('/api/orgs', {headers: {origin: evil, cookie: 'session=1'}}),
      403,
      'Credentials not supported for cross-origin requests',
    );
    const anon = ok(await api.get('/api/orgs', {headers: {origin: evil}}));
    assert.is(anon.headers['access-control-allow-origin'], '*');
    assert.is(anon.headers['access-control-allow-credentials'], undefined);
    assert.is(anon.headers['access-control-allow-headers'], 'Content-Type, X-Requested-With');
    assert.is(anon.headers['access-control-allow-methods'], 'GET, PATCH, PUT, POST, DELETE, OPTIONS');
    const trusted = `https://errs.${BASE_DOMAIN}`;
    const res = ok(await api.get('/api/orgs', {...chimpy.as, headers: {origin: trusted}}));
    assert.is(res.headers['access-control-allow-origin'], trusted);
    assert.is(res.headers['access-control-allow-credentials'], 'true');
    assert.is(res.headers['access-control-allow-headers'], 'Authorization, Content-Type, X-Requested-With');
    assert.match(res.headers.vary ?? '', /Origin/);
    const nullOrigin = ok(await api.get('/api/orgs', {headers: {origin: 'null'}}));
    assert.is(nullOrigin.headers['access-control-allow-origin'], '*');
    isError(
      await api.get('/api/orgs', {...chimpy.as, headers: {origin: 'null'}}),
      403,
      'Credentials not supported for cross-origin requests',
    );
    isErrorLike(await api.get('/api/orgs', {headers: {origin: 'not a url'}}), 400, /^Invalid origin: /);
    const pre = await api.call('OPTIONS', '/api/orgs', {headers: {origin: trusted}});
    assert.is(pre.status, 200);
    assert.is(pre.headers['access-control-allow-origin'], trusted);
    assert.is(pre.headers['access-control-allow-methods'], 'GET, PATCH, PUT, POST, DELETE, OPTIONS');
  });

  s('every /api response says Cache-Control: no-cache and JSON bodies are JSON', async () => {
    const {api, chimpy} = world();
    for (const res of [
      await api.get('/api/orgs', chimpy.as),
      await api.get('/api/zig'),
      await api.get('/api/orgs/424242', chimpy.as),
    ]) {
      assert.is(res.headers['cache-control'], 'no-cache');
      assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    }
  });

  s('integer parameters: non-numeric ids are 400 naming the parameter', async () => {
    const {api, chimpy} = world();
    isError(
      await api.get('/api/workspaces/abc', chimpy.as),
      400,
      'wid parameter cannot be understood as an integer: abc',
    );
    isError(
      await api.patch('/api/workspaces/abc', {name: 'x'}, chimpy.as),
      400,
      'wid parameter cannot be understood as an integer: abc',
    );
    isError(
      await api.post('/api/workspaces/abc/docs', {name: 'x'}, chimpy.as),
      400,
      'wid parameter cannot be understood as an integer: abc',
    );
    isError(
      await api.get('/api/workspaces/abc/access', chimpy.as),
      400,
      'wid parameter cannot be understood as an integer: abc',
    );
  });

  s.run();
}
