// Real answers of a running server match the OpenAPI document's response schemas (ajv, draft 2020-12).
import {Ajv2020} from 'ajv/dist/2020.js';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ok, startWorld, type World} from '@gristlite/conformance';
import {nodeTarget} from './target.js';

test('answers of the main operations match their documented schemas, errors match {error}', async () => {
  let world: World | undefined;
  try {
    world = await startWorld(nodeTarget());
    const w = world;
    const {api, chimpy} = w;
    const doc = ok(await api.get('/api/openapi.json')).body;
    const ajv = new Ajv2020({strict: false, validateFormats: false});
    ajv.addSchema({$id: 'openapi', components: doc.components}, 'openapi');
    const check = async (method: string, path: string, pattern: string, body?: unknown, status = 200) => {
      const res = await api.call(method, path, body === undefined ? chimpy.as : {...chimpy.as, json: body});
      assert.is(res.status, status, `${method} ${path}: ${res.text.slice(0, 200)}`);
      const op = doc.paths[pattern][method.toLowerCase()];
      const spec = op.responses[String(status)];
      const response = spec.$ref ? doc.components.responses[spec.$ref.split('/').pop()] : spec;
      const schema = JSON.parse(
        JSON.stringify(response.content['application/json'].schema).replace(/"#\/components/g, '"openapi#/components'),
      );
      const valid = ajv.validate(schema, res.body);
      assert.ok(valid, `${method} ${path}: ${ajv.errorsText()} in ${res.text.slice(0, 300)}`);
      return res.body;
    };
    const ws = await w.homeWs(chimpy);
    const docId = await w.newDoc(chimpy, ws, 'Shapes');
    const T = `/api/docs/${docId}/tables/Table1`;
    await check('GET', '/api/orgs', '/api/orgs');
    await check('GET', `/api/orgs/docs-${chimpy.id}`, '/api/orgs/{oid}');
    await check('GET', `/api/orgs/docs-${chimpy.id}/workspaces`, '/api/orgs/{oid}/workspaces');
    await check('GET', `/api/workspaces/${ws}`, '/api/workspaces/{wid}');
    await check('GET', `/api/docs/${docId}`, '/api/docs/{docId}');
    await check('GET', `/api/docs/${docId}/access`, '/api/docs/{docId}/access');
    await check('GET', `/api/orgs/docs-${chimpy.id}/access`, '/api/orgs/{oid}/access');
    await check('GET', '/api/profile/user', '/api/profile/user');
    await check('POST', `/api/orgs/docs-${chimpy.id}/workspaces`, '/api/orgs/{oid}/workspaces', {name: 'W2'});
    await check('GET', `/api/docs/${docId}/tables?expand=column`, '/api/docs/{docId}/tables');
    await check('POST', `/api/docs/${docId}/tables`, '/api/docs/{docId}/tables', {
      tables: [{id: 'T2', columns: [{id: 'X'}]}],
    });
    await check('GET', `${T}/columns`, '/api/docs/{docId}/tables/{tableId}/columns');
    await check('POST', `${T}/columns`, '/api/docs/{docId}/tables/{tableId}/columns', {
      columns: [{id: 'N', fields: {type: 'Numeric'}}],
    });
    await check('POST', `${T}/records`, '/api/docs/{docId}/tables/{tableId}/records', {
      records: [{fields: {A: 'x', N: 1}}],
    });
    await check('PATCH', `${T}/records`, '/api/docs/{docId}/tables/{tableId}/records', {
      records: [{id: 1, fields: {N: 2}}],
    });
    await check('GET', `${T}/records?limit=5&sort=-N`, '/api/docs/{docId}/tables/{tableId}/records');
    await check('GET', `${T}/data`, '/api/docs/{docId}/tables/{tableId}/data');
    await check('POST', `${T}/data`, '/api/docs/{docId}/tables/{tableId}/data', {A: ['y']});
    await check(
      'GET',
      `/api/docs/${docId}/sql?q=${encodeURIComponent('select * from Table1')}`,
      '/api/docs/{docId}/sql',
    );
    await check('POST', `/api/docs/${docId}/apply`, '/api/docs/{docId}/apply', [
      ['AddRecord', 'Table1', null, {A: 'z'}],
    ]);
    await check('GET', `/api/docs/${docId}/webhooks`, '/api/docs/{docId}/webhooks');
    await check('DELETE', `/api/docs/${docId}/webhooks/queue`, '/api/docs/{docId}/webhooks/queue');
    await check('GET', `/api/docs/${docId}/attachments`, '/api/docs/{docId}/attachments');
    await check('GET', `/api/docs/${docId}/attachments/store`, '/api/docs/{docId}/attachments/store');
    await check('POST', `/api/docs/${docId}/copy`, '/api/docs/{docId}/copy', {workspaceId: ws, documentName: 'Copy'});
    await check('DELETE', `${T}/columns/N`, '/api/docs/{docId}/tables/{tableId}/columns/{colId}');
    await check('GET', '/api/orgs/nowhere', '/api/orgs/{oid}', undefined, 404);
    await check('GET', `${T}/records?limit=abc`, '/api/docs/{docId}/tables/{tableId}/records', undefined, 400);
  } finally {
    await world?.server.close();
  }
});

test.run();
