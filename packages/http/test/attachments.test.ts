// Attachments over the in-process pipeline (SPEC §12, §19 item 25): multipart upload, list,
// metadata, download, and the errors Grist answers.
import {randomBytes} from 'node:crypto';
import {copyFileSync, mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, type Handler, type HttpResponse} from '../src/index.js';
import {attachmentRoutes} from '../src/routes/attachments.js';
import {fixture, withFixtures} from './helpers.js';

const s = suite('attachments');
const fixtureTest = withFixtures(s);
let dir = '';
let engine: Engine;
let handle: Handler;
let key = '';
let strangerKey = '';
let wid = 0;

type Res = HttpResponse & {json: any; bytes: Buffer};

async function call(
  method: string,
  url: string,
  opts: {body?: Uint8Array; headers?: Record<string, string>; as?: string} = {},
): Promise<Res> {
  const headers = {host: '127.0.0.1', authorization: `Bearer ${opts.as ?? key}`, ...opts.headers};
  const res = await handle({method, url, headers, body: opts.body});
  let bytes: Buffer;
  if (res.body === null) bytes = Buffer.alloc(0);
  else if (typeof res.body === 'string') bytes = Buffer.from(res.body);
  else if (res.body instanceof Uint8Array) bytes = Buffer.from(res.body);
  else {
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(Buffer.from(c));
    bytes = Buffer.concat(chunks);
  }
  let json: any;
  if ((res.headers['Content-Type'] ?? '').includes('json')) json = JSON.parse(bytes.toString());
  return {...res, json, bytes};
}

interface Part {
  name: string;
  filename?: string;
  type?: string;
  data: string | Buffer;
}

function multipart(parts: Part[]): {body: Buffer; headers: Record<string, string>} {
  const boundary = '----gristlite' + randomBytes(8).toString('hex');
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(
      Buffer.from(head + '\r\n'),
      Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {body: Buffer.concat(chunks), headers: {'content-type': `multipart/form-data; boundary=${boundary}`}};
}

async function upload(doc: string, parts: Part[], as?: string): Promise<Res> {
  const {body, headers} = multipart(parts);
  return call('POST', `/api/docs/${doc}/attachments`, {
    body,
    headers: {...headers, 'x-requested-with': 'XMLHttpRequest'},
    as,
  });
}

async function newDoc(fromFixture?: string): Promise<string> {
  const res = await call('POST', `/api/workspaces/${wid}/docs`, {
    body: Buffer.from(JSON.stringify({name: 'Doc'})),
    headers: {'content-type': 'application/json'},
  });
  assert.is(res.status, 200, JSON.stringify(res.json));
  if (fromFixture) copyFileSync(fixture(fromFixture), engine.docPath(res.json));
  return res.json;
}

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-attach-'));
  engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  key = await engine.home.setApiKey(user.id);
  const kiwi = await engine.home.ensureUser('kiwi@getgrist.com', 'Kiwi');
  strangerKey = await engine.home.setApiKey(kiwi.id);
  handle = createApiHandler(engine, {
    env: {},
    maxUploadBytes: 1024 * 1024,
    routes: attachmentRoutes,
    onError: (e) => {
      throw e;
    },
  });
  const ws = (await call('GET', `/api/orgs/docs-${user.id}/workspaces`)).json;
  wid = ws.find((w: any) => w.name === 'Home').id;
});

s.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

s("19.25 upload, list with sort and limit, download with Grist's headers", async () => {
  const doc = await newDoc();
  const r1 = await upload(doc, [
    {name: 'upload', filename: 'hello.doc', type: 'application/msword', data: 'foobar'},
    {name: 'upload', filename: 'world.jpg', type: 'image/jpeg', data: '123456'},
  ]);
  assert.is(r1.status, 200, JSON.stringify(r1.json));
  assert.equal(r1.json, [1, 2]);
  assert.equal(
    (await upload(doc, [{name: 'upload', filename: 'hello.png', type: 'image/png', data: 'abcdef'}])).json,
    [3],
  );

  const list = await call('GET', `/api/docs/${doc}/attachments?sort=-fileName&limit=2`);
  assert.is(list.status, 200);
  assert.equal(
    list.json.records.map((r: any) => [r.id, r.fields.fileName, r.fields.fileSize]),
    [
      [2, 'world.jpg', 6],
      [3, 'hello.png', 6],
    ],
  );
  assert.equal(Object.keys(list.json.records[0].fields), ['fileName', 'fileSize', 'timeUploaded']);
  assert.match(list.json.records[0].fields.timeUploaded, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const viaHeaders = await call('GET', `/api/docs/${doc}/attachments`, {
    headers: {'x-sort': '-fileName', 'x-limit': '2'},
  });
  assert.equal(viaHeaders.json, list.json);
  const filtered = await call(
    'GET',
    `/api/docs/${doc}/attachments?filter=${encodeURIComponent('{"fileName":["hello.doc"]}')}`,
  );
  assert.equal(
    filtered.json.records.map((r: any) => r.id),
    [1],
  );

  const meta = await call('GET', `/api/docs/${doc}/attachments/2`);
  assert.equal(Object.keys(meta.json), ['fileName', 'fileSize', 'timeUploaded']);
  assert.is(meta.json.fileName, 'world.jpg');

  const dl = await call('GET', `/api/docs/${doc}/attachments/2/download`);
  assert.is(dl.status, 200);
  assert.is(dl.headers['Content-Type'], 'image/jpeg');
  assert.is(dl.headers['Content-Disposition'], 'attachment; filename="world.jpg"');
  assert.is(dl.headers['Cache-Control'], 'private, max-age=3600');
  assert.is(dl.headers['Content-Security-Policy'], "sandbox; default-src 'none'");
  assert.is(dl.headers['Content-Length'], '6');
  assert.is(dl.bytes.toString(), '123456');
  const inline = await call('GET', `/api/docs/${doc}/attachments/1/download?inline=1&name=x.doc`);
  assert.is(inline.headers['Content-Disposition'], 'inline; filename="x.doc"');
  assert.is(inline.headers['Content-Type'], 'application/msword');
});

s("GET /api/orgs/{org}/usage sums the org's attachment files, each once (decision D75)", async () => {
  const json = {'content-type': 'application/json'};
  const body = (v: unknown) => Buffer.from(JSON.stringify(v));
  const org = (await call('POST', '/api/orgs', {body: body({name: 'Usage', domain: 'usage'}), headers: json})).json;
  const ws = (await call('POST', `/api/orgs/${org}/workspaces`, {body: body({name: 'W'}), headers: json})).json;
  const doc = (await call('POST', `/api/workspaces/${ws}/docs`, {body: body({name: 'D'}), headers: json})).json;
  const usage = async () => (await call('GET', `/api/orgs/${org}/usage`)).json;
  assert.equal(await usage(), {
    countsByDataLimitStatus: {approachingLimit: 0, gracePeriod: 0, deleteOnly: 0},
    attachments: {totalBytes: 0},
  });
  await upload(doc, [
    {name: 'upload', filename: 'a.txt', type: 'text/plain', data: 'foobar'},
    {name: 'upload', filename: 'b.txt', type: 'text/plain', data: 'foobar'},
    {name: 'upload', filename: 'c.txt', type: 'text/plain', data: '12345'},
  ]);
  assert.equal((await usage()).attachments, {totalBytes: 11});
  // A soft-deleted document does not count; only owners may ask.
  await call('POST', `/api/docs/${doc}/remove`);
  assert.equal((await usage()).attachments, {totalBytes: 0});
  assert.is((await call('GET', `/api/orgs/${org}/usage`, {as: strangerKey})).status, 403);
  assert.is((await call('GET', '/api/orgs/nosuchorg/usage')).status, 404);
});

s('errors: 404, 400, 415, missing payload, 413, and access', async () => {
  const doc = await newDoc();
  const e404 = await call('GET', `/api/docs/${doc}/attachments/22`);
  assert.equal([e404.status, e404.json], [404, {error: 'Attachment not found: 22'}]);
  assert.equal((await call('GET', `/api/docs/${doc}/attachments/22/download`)).json, {
    error: 'Attachment not found: 22',
  });
  const moo = await call('GET', `/api/docs/${doc}/attachments/moo`);
  assert.equal([moo.status, moo.json.error], [400, 'attId parameter cannot be understood as an integer: moo']);
  const partial = await call('GET', `/api/docs/${doc}/attachments/1?tableId=Table1`);
  assert.equal([partial.status, partial.json.error], [400, 'define all of tableId, colId and rowId, or none.']);

  const notMultipart = await call('POST', `/api/docs/${doc}/attachments`, {
    body: Buffer.from('{}'),
    headers: {'content-type': 'application/json'},
  });
  assert.is(notMultipart.status, 415);
  const empty = await call('POST', `/api/docs/${doc}/attachments`, {
    body: Buffer.alloc(0),
    headers: {'content-type': 'multipart/form-data; boundary=xyz', 'x-requested-with': 'XMLHttpRequest'},
  });
  assert.equal([empty.status, empty.json.error], [400, 'stream ended unexpectedly']);
  const noUpload = await upload(doc, [
    {name: 'other', filename: 'a.txt', data: 'a'},
    {name: 'upload', data: 'not a file'},
  ]);
  assert.equal([noUpload.status, noUpload.json.error], [400, 'missing payload']);
  const big = await upload(doc, [{name: 'upload', filename: 'big.bin', data: randomBytes(1024 * 1024 + 1)}]);
  assert.equal([big.status, big.json.error], [413, 'Attachments must not exceed 1.0MB']);
  const many = await upload(
    doc,
    [0, 1, 2].map((i) => ({name: 'upload', filename: `part${i}.bin`, data: randomBytes(400 * 1024)})),
  );
  assert.equal([many.status, many.json.error], [413, 'Attachments must not exceed 1.0MB']);
  assert.equal((await call('GET', `/api/docs/${doc}/attachments`)).json, {records: []});

  const stranger = await upload(doc, [{name: 'upload', filename: 'a.txt', data: 'a'}], strangerKey);
  assert.equal([stranger.status, stranger.json.error], [403, 'No view access']);
  assert.is((await call('GET', `/api/docs/${doc}/attachments`, {as: strangerKey})).status, 403);
});

fixtureTest("binary round trip, UTF-8 names, and the fixture's attachment downloads intact", async () => {
  const doc = await newDoc('TypeEncoding.grist');
  const dl = await call('GET', `/api/docs/${doc}/attachments/1/download`);
  assert.is(dl.status, 200);
  assert.is(dl.bytes.byteLength, 3106);
  assert.is(dl.headers['Content-Type'], 'image/png');
  assert.is(dl.bytes.subarray(1, 4).toString(), 'PNG');
  const bytes = randomBytes(200_000);
  const up = await upload(doc, [
    {name: 'upload', filename: 'données.bin', type: 'application/octet-stream', data: bytes},
  ]);
  assert.equal(up.json, [2]);
  const back = await call('GET', `/api/docs/${doc}/attachments/2/download`);
  assert.ok(back.bytes.equals(bytes));
  assert.is(
    back.headers['Content-Disposition'],
    'attachment; filename="donnees.bin"; filename*=UTF-8\'\'donn%C3%A9es.bin',
  );
  assert.is((await call('GET', `/api/docs/${doc}/attachments/2`)).json.fileName, 'données.bin');
  assert.equal((await call('GET', `/api/docs/${doc}/attachments/store`)).json, {type: 'internal'});
});

s.run();
