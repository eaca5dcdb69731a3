/**
 * The API console (`/apiconsole`): its page and files, served by every adapter from the route
 * table, with their content types and caching, and nothing else from the disk.
 */
import * as assert from 'uvu/assert';
import {areaSuite, isError, ok, useWorld, type Target} from './world.js';

export function apiConsoleSuite(target: Target): void {
  const s = areaSuite(target, 'apiconsole');
  const world = useWorld(s, target);

  s('the page is HTML that loads Swagger UI from this server and points it at the OpenAPI document', async () => {
    const res = ok(await world().api.get('/apiconsole'));
    assert.is(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.is(res.headers['cache-control'], 'no-cache');
    assert.is(res.headers['x-content-type-options'], 'nosniff');
    assert.match(res.headers['content-security-policy'], /script-src 'self'/);
    assert.match(res.text, /data-openapi="\/api\/openapi.json"/);
    const srcs = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(srcs.length >= 4, srcs.join(' '));
    for (const src of srcs) assert.match(src, /^\/(apiconsole|api)\//, `${src} is served here, not from a CDN`);
  });

  s('on a team site the page links stay on the site', async () => {
    const res = ok(await world().api.get('/o/acme/apiconsole/'));
    assert.match(res.text, /data-openapi="\/o\/acme\/api\/openapi.json"/);
    assert.match(res.text, /src="\/o\/acme\/apiconsole\/swagger-ui-bundle.js\?v=[^"]+"/);
  });

  s('every file the page names is served with its content type, a validator and a cache lifetime', async () => {
    const page = ok(await world().api.get('/apiconsole')).text;
    const types: Record<string, RegExp> = {
      js: /^text\/javascript; charset=utf-8$/,
      css: /^text\/css; charset=utf-8$/,
      png: /^image\/png$/,
    };
    const files = [...page.matchAll(/(?:src|href)="(\/apiconsole\/[^"]+)"/g)].map((m) => m[1]);
    assert.ok(files.some((f) => f.includes('swagger-ui-bundle.js')));
    for (const file of files) {
      const res = ok(await world().api.get(file), file);
      assert.match(res.headers['content-type'], types[/\.(\w+)\?/.exec(file)![1]], file);
      assert.is(res.headers['cache-control'], 'public, max-age=86400', file);
      assert.ok(res.raw.length > 0, file);
      const etag = res.headers.etag;
      assert.match(etag, /^"[^"]+"$/, file);
      const again = await world().api.get(file, {headers: {'if-none-match': etag}});
      assert.is(again.status, 304, `${file} revalidates`);
      assert.is(again.raw.length, 0);
    }
    const bundle = ok(await world().api.get('/apiconsole/swagger-ui-bundle.js'));
    assert.ok(bundle.raw.length > 100_000, 'the real Swagger UI bundle');
    const head = await world().api.call('HEAD', '/apiconsole/swagger-ui.css');
    assert.is(head.status, 200);
    assert.is(head.raw.length, 0);
  });

  s('no other file is reachable: traversal, other package files and odd names are 404', async () => {
    for (const path of [
      '/apiconsole/..%2F..%2Fpackage.json',
      '/apiconsole/..%2fpackage.json',
      '/apiconsole/%2e%2e%2fpackage.json',
      '/apiconsole/index.html',
      '/apiconsole/package.json',
      '/apiconsole/swagger-ui.js.map',
      '/apiconsole/__proto__',
      '/apiconsole/constructor',
      '/apiconsole/%2Fetc%2Fpasswd',
      '/apiconsole/swagger-ui.css%00.png',
      '/apiconsole/assets/swagger-ui.css',
      '/apiconsole/..%5Cpackage.json',
    ]) {
      const res = await world().api.get(path);
      assert.is(res.status, 404, `${path}: ${res.status} ${res.text.slice(0, 80)}`);
      assert.type(res.body.error, 'string', path);
    }
    isError(await world().api.get('/apiconsole/nope.js'), 404, 'not found: /apiconsole/nope.js');
    // A WHATWG URL resolves the dots before sending (to /package.json, outside the API): never served.
    const dots = await world().api.get('/apiconsole/../package.json');
    assert.is.not(dots.status, 200);
    assert.not.match(dots.text, /swagger-ui-dist|"version"/);
  });

  s.run();
}
