// The node adapter's answer headers: a body known in full goes with its Content-Length (its UTF-8
// bytes), beside the handler's own headers, unless the handler set one itself (D157 merges them
// with Object.assign rather than a spread: the same headers must come out).
import {createServer} from 'node:http';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Pool} from 'undici';
import {toNodeHandler} from '../src/index.js';

async function answer(out: {status: number; headers: Record<string, string>; body: string | Uint8Array | null}) {
  const handle = toNodeHandler(async () => out);
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const pool = new Pool(`http://127.0.0.1:${(server.address() as {port: number}).port}`);
  try {
    const res = await pool.request({method: 'GET', path: '/api/x'});
    return {status: res.statusCode, headers: res.headers, text: await res.body.text()};
  } finally {
    await pool.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

test("a whole body gets its Content-Length in bytes, beside the handler's headers", async () => {
  const got = await answer({
    status: 200,
    headers: {'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'private, no-cache', ETag: '"t"'},
    body: '{"a":"héllo"}',
  });
  assert.is(got.status, 200);
  assert.is(got.text, '{"a":"héllo"}');
  assert.is(got.headers['content-length'], String(Buffer.byteLength('{"a":"héllo"}')));
  assert.is(got.headers['content-type'], 'application/json; charset=utf-8');
  assert.is(got.headers['cache-control'], 'private, no-cache');
  assert.is(got.headers.etag, '"t"');
  const bytes = await answer({
    status: 200,
    headers: {'Content-Type': 'application/octet-stream'},
    body: new Uint8Array(7),
  });
  assert.is(bytes.headers['content-length'], '7');
});

test("a handler's own Content-Length is kept; a 304 has none added", async () => {
  const own = await answer({status: 200, headers: {'content-length': '2'}, body: 'ok'});
  assert.is(own.headers['content-length'], '2');
  assert.is(own.text, 'ok');
  const notModified = await answer({status: 304, headers: {ETag: '"t"'}, body: null});
  assert.is(notModified.status, 304);
  assert.is(notModified.headers.etag, '"t"');
  assert.is(notModified.headers['content-length'], undefined);
});

test.run();
