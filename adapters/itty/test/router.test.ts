// gristlite registered on a caller's itty-router, beside the caller's own routes.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Router} from 'itty-router';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler} from '@gristlite/http';
import {registerGristlite} from '../src/index.js';

test("own routes before and after the API keep working; API errors come out in Grist's shape", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-itty-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const router = Router();
    router.get('/before', () => new Response('before'));
    registerGristlite(router, createApiHandler(engine, {env: {}}));
    router.get('/after', () => new Response('after'));
    router.all('*', () => new Response('app 404', {status: 404}));
    const call = (path: string, init?: RequestInit) =>
      router.fetch(new Request(`http://localhost${path}`, init)) as Promise<Response>;
    assert.is(await (await call('/before')).text(), 'before');
    assert.is(await (await call('/after')).text(), 'after');
    assert.is(await (await call('/elsewhere')).text(), 'app 404');
    assert.is(await (await call('/apiconsolex')).text(), 'app 404');
    assert.is((await call('/apiconsole')).headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(await (await call('/status')).text(), /is alive/);
    assert.is(await (await call('/statusx')).text(), 'app 404');
    const unknown = await call('/api/zig');
    assert.is(unknown.status, 404);
    assert.equal(await unknown.json(), {error: 'not found: /api/zig'});
    const badKey = await call('/api/orgs', {headers: {Authorization: 'Bearer nope'}});
    assert.is(badKey.status, 401);
    assert.equal(await badKey.json(), {error: 'Bad request: invalid API key'});
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
