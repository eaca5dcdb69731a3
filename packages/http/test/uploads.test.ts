// Issue 11 item 1: no upload can crash or bloat the server. Truncated, aborted and oversized
// multipart bodies answer 4xx; access and size are checked before the body is read; uploads go
// to private temporary files that are gone once the request is answered.
import {existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, type Handler, type HttpResponse} from '../src/index.js';
import {sweepUploadDirs} from '../src/multipart.js';

const s = suite('uploads');
const LIMIT = 256 * 1024;
let dir = '';
let uploads = '';
let engine: Engine;
let handle: Handler;
let key = '';
let strangerKey = '';
let wid = 0;
let doc = '';
const unexpected: unknown[] = [];

const B = 'XyZ';
const CT = {'content-type': `multipart/form-data; boundary=${B}`};
const XHR = {'x-requested-with': 'XMLHttpRequest'};

function part(name: string, data: string | Buffer, filename?: string): Buffer {
  const disp = `form-data; name="${name}"${filename !== undefined ? `; filename="${filename}"` : ''}`;
  return Buffer.concat([
    Buffer.from(`--${B}\r\nContent-Disposition: ${disp}\r\n\r\n`),
    Buffer.from(data),
    Buffer.from('\r\n'),
  ]);
}
const END = Buffer.from(`--${B}--\r\n`);

/**
 * A streamed body that counts what the server pulled: `parts` first, then `fill` bytes of file
 * content in 16 KB chunks, then `tail`; `abortAfter` makes it fail like a dropped connection.
 */
function body(opts: {
  head: Buffer;
  fill?: number;
  tail?: Buffer;
  abortAfter?: number;
  onChunk?: (pulled: number) => Promise<void>;
}) {
  const stats = {pulled: 0};
  async function* gen(): AsyncGenerator<Uint8Array> {
    const emit = async (c: Buffer) => {
      if (opts.abortAfter !== undefined && stats.pulled >= opts.abortAfter) {
        const e = new Error('aborted') as NodeJS.ErrnoException;
        e.code = 'ECONNRESET';
        throw e;
      }
      stats.pulled += c.byteLength;
      await opts.onChunk?.(stats.pulled);
      return c;
    };
    yield await emit(opts.head);
    for (let left = opts.fill ?? 0; left > 0; left -= 16384) yield await emit(Buffer.alloc(Math.min(16384, left), 97));
    if (opts.tail) yield await emit(opts.tail);
  }
  return {stream: gen(), stats};
}

type Res = HttpResponse & {json: any};
async function call(
  method: string,
  url: string,
  opts: {body?: any; headers?: Record<string, string>; as?: string | null} = {},
): Promise<Res> {
  const auth = opts.as === null ? {} : {authorization: `Bearer ${opts.as ?? key}`};
  const res = await handle({method, url, headers: {host: '127.0.0.1', ...auth, ...opts.headers}, body: opts.body});
  return {...res, json: typeof res.body === 'string' ? JSON.parse(res.body) : undefined};
}

function leftovers(): string[] {
  return existsSync(uploads) ? readdirSync(uploads).filter((n) => n.startsWith('upload-')) : [];
}

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-uploads-'));
  uploads = join(dir, 'tmp');
  engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  key = await engine.home.setApiKey(user.id);
  const kiwi = await engine.home.ensureUser('kiwi@getgrist.com', 'Kiwi');
  strangerKey = await engine.home.setApiKey(kiwi.id);
  handle = createApiHandler(engine, {
    env: {},
    maxUploadBytes: LIMIT,
    maxBodyBytes: 64 * 1024,
    onError: (e) => unexpected.push(e),
  });
  wid = (await call('GET', `/api/orgs/docs-${user.id}/workspaces`)).json.find((w: any) => w.name === 'Home').id;
  doc = (
    await call('POST', `/api/workspaces/${wid}/docs`, {
      body: Buffer.from('{"name":"D"}'),
      headers: {'content-type': 'application/json'},
    })
  ).json;
});

/**
 * A test that ends with the leak checks. They are part of the test, not an `after.each` hook:
 * uvu 0.5 swallows an error thrown by a hook (no message, and exit 0 when this file runs alone).
 */
function t(name: string, fn: () => Promise<void>): void {
  s(name, async () => {
    await fn();
    assert.equal(unexpected.map(String), [], 'nothing reached the unexpected-error log');
    assert.equal(leftovers(), [], 'no temporary upload is left behind');
  });
}

s.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

t('a multipart body that ends early answers 400 on each upload route (busboy used to throw)', async () => {
  const truncated = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="upload"; filename="a.csv"\r\n\r\nx`);
  const routes = ['/api/docs', `/api/workspaces/${wid}/import`, `/api/docs/${doc}/attachments`];
  for (const url of routes) {
    for (const b of [truncated, body({head: truncated}).stream]) {
      const res = await call('POST', url, {body: b, headers: {...CT, ...XHR}});
      assert.equal([res.status, res.json], [400, {error: 'stream ended unexpectedly'}], url);
    }
  }
  // Ends inside the part headers, and before the first boundary.
  for (const b of [`--${B}\r\nContent-Disposition: form-da`, '--X', '']) {
    const res = await call('POST', `/api/docs/${doc}/attachments`, {body: Buffer.from(b), headers: {...CT, ...XHR}});
    assert.is(res.status, 400, b);
  }
  // A form that is whole still works.
  const ok = await call('POST', `/api/docs/${doc}/attachments`, {
    body: Buffer.concat([part('upload', 'hello', 'a.txt'), END]),
    headers: CT,
  });
  assert.equal([ok.status, ok.json], [200, [1]]);
});

t('a client that disconnects mid-upload: a quiet 400, files closed and removed', async () => {
  const routes = ['/api/docs', `/api/workspaces/${wid}/import`, `/api/docs/${doc}/attachments`];
  for (const url of routes) {
    const fields = url === '/api/docs' ? part('workspaceId', String(wid)) : Buffer.alloc(0);
    const head = Buffer.concat([
      fields,
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="upload"; filename="a.csv"\r\n\r\n`),
    ]);
    const {stream, stats} = body({head, fill: 200_000, tail: END, abortAfter: 100_000});
    const res = await call('POST', url, {body: stream, headers: CT});
    assert.is(res.status, 400, url);
    assert.match(res.json.error, /^request aborted/);
    assert.is(res.headers.Connection, 'close');
    assert.ok(stats.pulled < 120_000);
  }
  // A JSON body cut off the same way is not an "unexpected error" either.
  const {stream} = body({head: Buffer.from('{"name": "'), fill: 50_000, abortAfter: 20_000});
  const res = await call('POST', `/api/workspaces/${wid}/docs`, {
    body: stream,
    headers: {'content-type': 'application/json'},
  });
  assert.equal(res.status, 400);
});

t('a declared length over the limit is refused at once, with Connection: close, nothing read', async () => {
  const cases: [string, Record<string, string>, number][] = [
    [`/api/docs/${doc}/attachments`, CT, LIMIT + 64 * 1024 + 1],
    ['/api/docs', CT, 10 * LIMIT],
    [`/api/workspaces/${wid}/import`, CT, 10 * LIMIT],
    [`/api/workspaces/${wid}/docs`, {'content-type': 'application/json'}, 64 * 1024 + 1],
    [`/api/docs/${doc}/apply`, {'content-type': 'application/json'}, 10 * LIMIT],
  ];
  for (const [url, headers, length] of cases) {
    const {stream, stats} = body({head: Buffer.alloc(1000), fill: length});
    const res = await call('POST', url, {body: stream, headers: {...headers, 'content-length': String(length)}});
    assert.is(res.status, 413, url);
    assert.is(res.headers.Connection, 'close');
    assert.is(stats.pulled, 0, url);
  }
});

t('a streamed upload over the limit stops being read at the limit: 413', async () => {
  for (const url of [`/api/docs/${doc}/attachments`, `/api/workspaces/${wid}/import`]) {
    const head = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="upload"; filename="big.csv"\r\n\r\n`);
    const {stream, stats} = body({head, fill: 20 * LIMIT, tail: END});
    const res = await call('POST', url, {body: stream, headers: CT});
    assert.equal([res.status, res.json], [413, {error: 'Attachments must not exceed 256.0KB'}], url);
    assert.is(res.headers.Connection, 'close');
    assert.ok(stats.pulled < LIMIT + 64 * 1024, `read ${stats.pulled} bytes`);
  }
  // Several files whose sum is over the limit, and a field over the field limit.
  const many = Buffer.concat([0, 1, 2].map((i) => part('upload', Buffer.alloc(100 * 1024), `f${i}.bin`)).concat(END));
  assert.is((await call('POST', `/api/docs/${doc}/attachments`, {body: many, headers: CT})).status, 413);
  const field = Buffer.concat([part('workspaceId', 'x'.repeat(70 * 1024)), END]);
  assert.is((await call('POST', '/api/docs', {body: field, headers: CT})).status, 413);
});

t('anonymous and unauthorized uploads are refused before any byte is read', async () => {
  const file = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="upload"; filename="a.csv"\r\n\r\n`);
  const cases: [string, string | null, Record<string, string>, number][] = [
    ['/api/docs', null, XHR, 401],
    ['/api/docs', null, {}, 401], // without X-Requested-With: the CSRF rule
    [`/api/workspaces/${wid}/import`, null, XHR, 403],
    [`/api/workspaces/${wid}/import`, strangerKey, {}, 403],
    [`/api/docs/${doc}/attachments`, null, XHR, 403],
    [`/api/docs/${doc}/attachments`, strangerKey, {}, 403],
  ];
  for (const [url, as, headers, status] of cases) {
    const {stream, stats} = body({head: file, fill: 10 * LIMIT, tail: END});
    const res = await call('POST', url, {body: stream, headers: {...CT, ...headers}, as});
    assert.is(res.status, status, `${url} as ${as}`);
    assert.is(stats.pulled, 0, `${url} as ${as}: read ${stats.pulled} bytes`);
  }
  // POST /api/docs names its workspace in the form: a workspaceId the caller may not add to,
  // sent before the file, stops the upload there.
  const head = Buffer.concat([part('workspaceId', String(wid)), file]);
  const {stream, stats} = body({head, fill: 100 * LIMIT, tail: END});
  const res = await call('POST', '/api/docs', {body: stream, headers: CT, as: strangerKey});
  assert.is(res.status, 403);
  assert.ok(stats.pulled < 64 * 1024, `read ${stats.pulled} bytes`);
});

t('uploads stream to private files under <data>/tmp, removed after success and failure', async () => {
  const seen: {dir: number; file: number; size: number}[] = [];
  const head = Buffer.from(
    `--${B}\r\nContent-Disposition: form-data; name="upload"; filename="t.csv"\r\n\r\nname,qty\n`,
  );
  const check = async (pulled: number) => {
    if (pulled < 100_000 || seen.length) return;
    await new Promise((r) => setTimeout(r, 20)); // let the file writes land
    const [d] = leftovers();
    const files = readdirSync(join(uploads, d));
    assert.is(files.length, 1);
    const st = statSync(join(uploads, d, files[0]));
    seen.push({dir: statSync(join(uploads, d)).mode & 0o777, file: st.mode & 0o777, size: st.size});
  };
  const csvRows = Buffer.from('bolts,4\n'.repeat(20_000));
  const {stream} = body({
    head: Buffer.concat([head, csvRows.subarray(0, 60_000)]),
    fill: 0,
    tail: Buffer.concat([csvRows.subarray(60_000, 150_000), Buffer.from('\r\n'), END]),
    onChunk: check,
  });
  const res = await call('POST', `/api/workspaces/${wid}/import`, {body: stream, headers: CT});
  assert.is(res.status, 200, JSON.stringify(res.json));
  assert.equal(seen.length, 1);
  assert.equal([seen[0].dir, seen[0].file], [0o700, 0o600]);
  assert.ok(seen[0].size > 50_000, `the file was on disk while the body streamed (${seen[0].size} bytes)`);
  const rows = engine.openDoc(res.json.id).grist.fetchRecords('T').records;
  assert.is(rows.length, 150_000 / 8);
});

t('directories left by processes that died are swept; those of live processes stay', async () => {
  mkdirSync(uploads, {recursive: true});
  const dead = join(uploads, 'upload-999999999-abc');
  const live = join(uploads, `upload-${process.ppid}-abc`);
  mkdirSync(dead);
  mkdirSync(live);
  await sweepUploadDirs(uploads);
  assert.is(existsSync(dead), false);
  assert.is(existsSync(live), true);
  rmSync(live, {recursive: true});
});

s.run();
