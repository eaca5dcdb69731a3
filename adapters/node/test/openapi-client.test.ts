// A TypeScript client generated from the OpenAPI document (openapi-typescript types, openapi-fetch)
// compiles with the project (tsc -b) and calls the API served by the Node adapter.
import {spawnSync} from 'node:child_process';
import {readFileSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import createClient from 'openapi-fetch';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import type {components, paths} from '@gristlite/conformance/openapi';
import {startWorld, type World} from '@gristlite/conformance';
import {nodeTarget} from './target.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

test('the generated types are what openapi-typescript makes of the current document', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'openapi-client.mjs'), '--stdout'], {encoding: 'utf8'});
  assert.is(r.status, 0, r.stderr);
  const committed = readFileSync(join(ROOT, 'packages', 'conformance', 'src', 'generated', 'openapi.ts'), 'utf8');
  assert.ok(r.stdout === committed, 'stale: run `pnpm build && node scripts/openapi-client.mjs`');
});

test('the typed client calls GET /api/orgs with a key and gets the orgs', async () => {
  let world: World | undefined;
  try {
    world = await startWorld(nodeTarget());
    const client = createClient<paths>({
      baseUrl: world.server.url.replace(/\/$/, ''),
      headers: {Authorization: `Bearer ${world.chimpy.key}`},
    });
    const {data, error, response} = await client.GET('/api/orgs');
    assert.is(response.status, 200);
    assert.is(error, undefined);
    // Typed: an array of Org (ids are numbers, names strings); this line would not compile otherwise.
    const orgs: components['schemas']['Org'][] = data ?? [];
    const ids: number[] = orgs.map((o) => o.id);
    assert.equal(
      ids.sort(),
      (await world.api.get('/api/orgs', world.chimpy.as)).body.map((o: {id: number}) => o.id).sort(),
    );
    assert.ok(orgs.some((o) => o.owner?.id === world!.chimpy.id));

    // Typed parameters and errors: a path parameter, a typed query flag, and the {error} body.
    const missing = await client.GET('/api/orgs/{oid}', {params: {path: {oid: 'nowhere'}}});
    assert.is(missing.response.status, 404);
    assert.type(missing.error?.error, 'string');
    const merged = await client.GET('/api/orgs', {params: {query: {merged: true}}});
    assert.is(merged.response.status, 200);
    // @ts-expect-error: a path that is not in the document does not compile.
    await client.GET('/api/nope').catch(() => undefined);
  } finally {
    await world?.server.close();
  }
});

test.run();
