import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes, openApiDocument } from '../src/index.js';

test('every route of the table is in the OpenAPI document, with its method and body schema', () => {
  const routes = allRoutes();
  const doc = openApiDocument(routes, 'x') as { openapi: string; paths: Record<string, Record<string, any>> };
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
    assert.is(Boolean(op.requestBody), Boolean(r.body), `${r.method} ${r.path} body`);
    for (const name of [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1])) {
      assert.ok(op.parameters.some((p: any) => p.in === 'path' && p.name === name), `${r.path} param ${name}`);
    }
  }
  const count = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  assert.is(count, routes.filter((r) => !r.internal).length, 'no duplicate method+path in the table');
  assert.ok(routes.some((r) => r.internal && r.path === '/apiconsole'), 'the console is in the table');
});

test('the document is served at /api/openapi.json from the same table', async () => {
  const routes = allRoutes();
  const served = routes.find((r) => r.path === '/api/openapi.json');
  assert.ok(served);
  const doc = (await served!.handler({} as never)) as { paths: Record<string, unknown> };
  assert.ok(doc.paths['/api/docs/{docId}/sql']);
  assert.ok(doc.paths['/api/orgs/{oid}/workspaces']);
});

test.run();
