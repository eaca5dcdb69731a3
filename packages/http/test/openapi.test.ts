import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {allRoutes, openApiDocument} from '../src/index.js';

test('every route of the table is in the OpenAPI document, with its method and body schema', () => {
  const routes = allRoutes();
  const doc = openApiDocument(routes, 'x') as {openapi: string; paths: Record<string, Record<string, any>>};
  assert.is(doc.openapi, '3.1.0');
  for (const r of routes) {
    if (r.internal) {
      assert.not.ok(doc.paths[r.path], `${r.path} is not part of the REST API`);
      continue;
    }
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const op = doc.paths[path]?.[r.method.toLowerCase()];
    assert.ok(op, `${r.method} ${r.path} missing`);
    assert.is(op.summary, r.summary);
    assert.is(Boolean(op.requestBody), Boolean(r.body || r.upload), `${r.method} ${r.path} body`);
    for (const name of [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1])) {
      assert.ok(
        op.parameters.some((p: any) => p.in === 'path' && p.name === name),
        `${r.path} param ${name}`,
      );
    }
  }
  const count = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  assert.is(count, routes.filter((r) => !r.internal).length, 'no duplicate method+path in the table');
  assert.ok(
    routes.some((r) => r.internal && r.path === '/apiconsole'),
    'the console is in the table',
  );
});

test('every operation has its success schema, error responses, and typed, described query parameters', () => {
  const routes = allRoutes();
  const doc = openApiDocument(routes, 'x') as any;
  assert.ok(doc.info.license?.name, 'info.license');
  assert.ok(doc.servers?.length, 'servers');
  const errorRef = {$ref: '#/components/schemas/Error'};
  for (const [code, res] of Object.entries(doc.components.responses) as [string, any][]) {
    assert.equal(res.content['application/json'].schema, errorRef, code);
  }
  for (const r of routes.filter((x) => !x.internal)) {
    const op = doc.paths[r.path.replace(/:([A-Za-z_]+)/g, '{$1}')][r.method.toLowerCase()];
    const what = `${r.method} ${r.path}`;
    const ok = op.responses['200'];
    const [content] = Object.values(ok.content) as any[];
    assert.ok(
      content.schema && Object.keys(content.schema).length,
      `${what}: success schema (RESPONSES in openapi-schemas.ts)`,
    );
    for (const code of ['400', '401', '403', '404']) assert.ok(op.responses[code], `${what}: ${code}`);
    for (const p of op.parameters ?? []) {
      if (p.in !== 'query') continue;
      assert.ok(p.description && p.description !== p.name, `${what}: ?${p.name} described (QUERY_PARAMS)`);
      assert.ok(p.schema.type, `${what}: ?${p.name} typed`);
    }
  }
  const records = doc.paths['/api/docs/{docId}/tables/{tableId}/records'].get.parameters;
  const param = (name: string) => records.find((p: any) => p.name === name);
  assert.is(param('limit').schema.type, 'integer');
  assert.is(param('sort').schema.type, 'string');
  assert.is(param('filter').schema.type, 'string');
  assert.is(param('hidden').schema.type, 'boolean');
  assert.equal(doc.paths['/api/orgs'].get.responses['200'].content['application/json'].schema, {
    type: 'array',
    items: {$ref: '#/components/schemas/Org'},
  });
});

test('the document is served at /api/openapi.json from the same table', async () => {
  const routes = allRoutes();
  const served = routes.find((r) => r.path === '/api/openapi.json');
  assert.ok(served);
  const doc = (await served!.handler({} as never)) as {paths: Record<string, unknown>};
  assert.ok(doc.paths['/api/docs/{docId}/sql']);
  assert.ok(doc.paths['/api/orgs/{oid}/workspaces']);
});

test.run();
