// The Node adapter as middleware in an app with its own routes, and streaming in both directions.
import {createServer} from 'node:http';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler} from '@gristlite/http';
import {toNodeHandler} from '../src/index.js';

test('requests outside /api and /apiconsole reach the app; /api, /o/<org>/api, /API and the console reach gristlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-node-mw-'));
  const engine = await Engine.open({dataDir: dir});
  const gristlite = toNodeHandler(createApiHandler(engine, {env: {}}));
  const server = createServer((req, res) => {
    void gristlite(req, res, () => {
      res.writeHead(200, {'Content-Type': 'text/plain'});
      res.end(`app: ${req.url}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as {port: number}).port}`;
  try {
    assert.is(await (await fetch(`${base}/hello`)).text(), 'app: /hello');
    assert.is(await (await fetch(`${base}/apix`)).text(), 'app: /apix');
    const orgs = await fetch(`${base}/api/orgs`);
    assert.is(orgs.status, 200);
    assert.equal(await orgs.json(), []);
    const missing = await fetch(`${base}/o/nowhere/api/zig`);
    assert.is(missing.status, 404);
    assert.equal(await missing.json(), {error: 'not found: /o/nowhere/api/zig'}); // the original URL, as Express reports it
    assert.is((await fetch(`${base}/API/orgs`)).status, 200);
    assert.is(await (await fetch(`${base}/apiconsolex`)).text(), 'app: /apiconsolex');
    const page = await fetch(`${base}/apiconsole`);
    assert.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.is(
      (await fetch(`${base}/o/acme/apiconsole/swagger-ui.css`)).headers.get('content-type'),
      'text/css; charset=utf-8',
    );
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
