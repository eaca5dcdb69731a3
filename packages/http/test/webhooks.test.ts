// Webhooks over the in-process pipeline (SPEC §13, §19 items 22-24), with deliveries to a real
// receiver on loopback.
import {createServer, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, queueSize} from '@gristlite/core/internal';
import {createApiHandler, type Handler} from '../src/index.js';

const s = suite('webhooks');
let dir = '';
let engine: Engine;
let handle: Handler;
let key = '';
let editorKey = '';
let wid = 0;
let server: Server;
let port = 0;
const received: {path: string; body: any}[] = [];
let env: Record<string, string> = {};

interface Res {
  status: number;
  json: any;
}

async function call(method: string, url: string, body?: unknown, as = key): Promise<Res> {
  const headers: Record<string, string> = {host: '127.0.0.1', authorization: `Bearer ${as}`};
  let raw: Uint8Array | undefined;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    raw = new TextEncoder().encode(JSON.stringify(body));
  }
  const res = await handle({method, url, headers, body: raw});
  const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body as Uint8Array).toString();
  return {status: res.status, json: text ? JSON.parse(text) : undefined};
}

function ok(res: Res): any {
  assert.is(res.status, 200, JSON.stringify(res.json));
  return res.json;
}

function err(res: Res, status: number, match: RegExp): void {
  assert.is(res.status, status, JSON.stringify(res.json));
  assert.match(`${res.json.error} ${res.json.details?.userError ?? ''}`, match);
}

/** A new doc; the engine records and delivers its events once it is open. */
async function newDoc(): Promise<string> {
  const id = ok(await call('POST', `/api/workspaces/${wid}/docs`, {name: 'Doc'}));
  assert.ok(engine.openDoc(id).webhooks.delivery, 'the engine delivers webhooks of every open doc');
  return id;
}

const hooks = (doc: string) => `/api/docs/${doc}/webhooks`;
const waitFor = async (cond: () => boolean) => {
  const end = Date.now() + 30_000; // generous: a deadline, not a speed check
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

s.before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString())});
      res.statusCode = req.url === '/500' ? 500 : 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  env = {ALLOWED_WEBHOOK_DOMAINS: `example.com,127.0.0.1:${port}`};
  dir = mkdtempSync(join(tmpdir(), 'gl-webhooks-'));
  engine = await Engine.open({dataDir: dir, env: {...env, GRIST_TRIGGER_WAIT_DELAY: '10'}});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  key = await engine.home.setApiKey(user.id);
  const kiwi = await engine.home.ensureUser('kiwi@getgrist.com', 'Kiwi');
  editorKey = await engine.home.setApiKey(kiwi.id);
  handle = createApiHandler(engine, {
    env,
    onError: (e) => {
      throw e;
    },
  });
  const ws = ok(await call('GET', `/api/orgs/docs-${user.id}/workspaces`));
  wid = ws.find((w: any) => w.name === 'Home').id;
});

s.after(async () => {
  for (const id of (await import('node:fs')).readdirSync(join(dir, 'docs'))) {
    const docId = id.replace(/\.grist.*$/, '');
    try {
      await engine.openDoc(docId).webhooks.delivery?.stop();
    } catch {
      // not a document
    }
  }
  await engine.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, {recursive: true, force: true});
});

s('19.22 creation: validation messages and statuses', async () => {
  const doc = await newDoc();
  const post = (fields: unknown) => call('POST', hooks(doc), {webhooks: [{fields}]});
  const good = {url: 'https://example.com/hook', eventTypes: ['add'], tableId: 'Table1'};
  err(await post({tableId: 'Table1'}), 400, /eventTypes is missing/);
  err(await post({...good, eventTypes: []}), 400, /eventTypes must be a non-empty array/);
  err(await post({...good, eventTypes: ['foo']}), 400, /eventTypes\[0] is none of "add", "update"/);
  err(await post({...good, eventTypes: 'add'}), 400, /eventTypes is not an array/);
  err(await post({...good, url: 'https://evil.com'}), 403, /Provided url is forbidden/);
  err(await post({...good, url: 'http://example.com'}), 403, /Provided url is forbidden/);
  err(await post({...good, isReadyColumn: 'bar'}), 404, /Column not found "bar"/);
  err(await post({url: good.url, eventTypes: ['add']}), 400, /tableId is missing/);
  err(await post({...good, tableId: 'Santa'}), 404, /Table not found "Santa"/);
  err(await call('POST', hooks(doc), {}), 400, /webhooks is missing/);
  err(await post({...good, watchedColIds: ['notExisting']}), 404, /Column not found "notExisting"/);
  const three = ok(await call('POST', hooks(doc), {webhooks: [{fields: good}, {fields: good}, {fields: good}]}));
  assert.is(three.webhooks.length, 3);
  assert.is(ok(await call('GET', hooks(doc))).webhooks.length, 3);
});

s('19.23 listing, update, delete, owner-only', async () => {
  const doc = await newDoc();
  ok(await call('POST', `/api/docs/${doc}/tables`, {tables: [{id: 'Table2', columns: [{id: 'X'}]}]}));
  const url = `http://127.0.0.1:${port}/200`;
  const {webhooks} = ok(
    await call('POST', hooks(doc), {
      webhooks: [1, 2].map(() => ({
        fields: {url, eventTypes: ['add', 'update'], tableId: 'Table1', isReadyColumn: 'B'},
      })),
    }),
  );
  const list = ok(await call('GET', hooks(doc))).webhooks;
  assert.equal(
    list.map((w: any) => w.id),
    webhooks.map((w: any) => w.id),
  );
  for (const w of list) {
    assert.equal(w.fields, {
      url,
      authorization: '',
      unsubscribeKey: w.fields.unsubscribeKey,
      eventTypes: ['add', 'update'],
      isReadyColumn: 'B',
      watchedColIds: [],
      tableId: 'Table1',
      enabled: true,
      name: '',
      memo: '',
    });
    assert.equal(w.usage, {status: 'idle', numWaiting: 0, lastEventBatch: null});
  }
  const id = webhooks[0].id;
  const field = async (name: string) => ok(await call('GET', hooks(doc))).webhooks[0].fields[name];
  assert.equal(ok(await call('PATCH', `${hooks(doc)}/${id}`, {tableId: 'Table2'})), {success: true});
  assert.equal(
    [await field('tableId'), await field('isReadyColumn'), await field('watchedColIds')],
    ['Table2', null, []],
  );
  err(await call('PATCH', `${hooks(doc)}/${id}`, {tableId: 'Santa'}), 404, /Table not found "Santa"/);
  ok(await call('PATCH', `${hooks(doc)}/${id}`, {isReadyColumn: null}));
  ok(await call('PATCH', `${hooks(doc)}/${id}`, {authorization: 'Bearer fake-token'}));
  assert.is(await field('authorization'), 'Bearer fake...');
  err(await call('PATCH', `${hooks(doc)}/${id}`, {eventTypes: ['nope']}), 400, /none of/);
  err(await call('DELETE', `${hooks(doc)}/foo`), 404, /Webhook not found "foo"/);
  ok(await call('PATCH', `/api/docs/${doc}/access`, {delta: {users: {'kiwi@getgrist.com': 'editors'}}}));
  err(await call('DELETE', `${hooks(doc)}/${id}`, undefined, editorKey), 403, /No owner access/);
  err(await call('GET', hooks(doc), undefined, editorKey), 403, /No owner access/);
  assert.equal(ok(await call('DELETE', `${hooks(doc)}/${id}`)), {success: true});
  assert.is(ok(await call('GET', hooks(doc))).webhooks.length, 1);
  assert.equal(ok(await call('DELETE', `${hooks(doc)}/queue`)), {success: true});
  assert.equal(ok(await call('DELETE', `${hooks(doc)}/queue/${webhooks[1].id}`)), {success: true});
});

s('19.24 firing through the records endpoints: payloads and batches', async () => {
  received.length = 0;
  const doc = await newDoc();
  ok(
    await call('POST', `/api/docs/${doc}/tables`, {
      tables: [
        {id: 'Things', columns: [{id: 'A', fields: {type: 'Numeric'}}, {id: 'B', fields: {type: 'Bool'}}, {id: 'C'}]},
      ],
    }),
  );
  ok(
    await call('POST', hooks(doc), {
      webhooks: [{fields: {url: `http://127.0.0.1:${port}/all`, eventTypes: ['add', 'update'], tableId: 'Things'}}],
    }),
  );
  const recs = `/api/docs/${doc}/tables/Things/records`;
  const db = engine.openDoc(doc).db;
  ok(await call('POST', recs, {records: [{fields: {A: 1, B: true}}, {fields: {A: 2}}]}));
  await waitFor(() => queueSize(db) === 0 && received.length === 1);
  // Rows added in one write go in one POST, each the full row.
  const c = received[0].body[0].C; // the new column's default
  assert.equal(received[0].body, [
    {id: 1, manualSort: 1, A: 1, B: true, C: c},
    {id: 2, manualSort: 2, A: 2, B: false, C: c},
  ]);
  ok(await call('PATCH', recs, {records: [{id: 2, fields: {C: 'x'}}]}));
  await waitFor(() => queueSize(db) === 0 && received.length === 2);
  assert.equal(received[1].body, [{id: 2, manualSort: 2, A: 2, B: false, C: 'x'}]);
  // 200 new rows arrive as two POSTs of 100.
  ok(await call('POST', recs, {records: Array.from({length: 200}, (_, i) => ({fields: {A: 100 + i}}))}));
  await waitFor(() => queueSize(db) === 0 && received.length === 4);
  assert.equal(
    received.slice(2).map((r) => r.body.length),
    [100, 100],
  );
  const usage = ok(await call('GET', hooks(doc))).webhooks[0].usage;
  assert.equal(
    [usage.status, usage.numWaiting, usage.lastHttpStatus, usage.lastEventBatch.size],
    ['idle', 0, 200, 100],
  );
});

s('19.24 the ready-column sequence through PATCH records', async () => {
  received.length = 0;
  const doc = await newDoc();
  // Ready-column logic compares old and new values: the engine reports rows before they change.
  ok(
    await call('POST', `/api/docs/${doc}/tables`, {
      tables: [
        {id: 'Things', columns: [{id: 'A', fields: {type: 'Numeric'}}, {id: 'B', fields: {type: 'Bool'}}, {id: 'C'}]},
      ],
    }),
  );
  const mk = (path: string, eventTypes: string[]) => ({
    fields: {url: `http://127.0.0.1:${port}${path}`, eventTypes, tableId: 'Things', isReadyColumn: 'B'},
  });
  ok(
    await call('POST', hooks(doc), {
      webhooks: [mk('/add', ['add']), mk('/update', ['update']), mk('/both', ['add', 'update'])],
    }),
  );
  const recs = `/api/docs/${doc}/tables/Things/records`;
  ok(await call('POST', recs, {records: [{fields: {A: 1, B: true}}, {fields: {A: 2, B: false}}]}));
  for (const fields of [{A: 3}, {A: 4, B: true}, {A: 5, B: false}, {A: 6}, {A: 7, B: true}, {A: 8}]) {
    ok(await call('PATCH', recs, {records: [{id: 2, fields}]}));
  }
  const db = engine.openDoc(doc).db;
  await waitFor(() => queueSize(db) === 0);
  const rowsAt = (path: string) => received.filter((r) => r.path === path).flatMap((r) => r.body);
  const c = rowsAt('/add')[0].C;
  assert.equal(rowsAt('/add'), [
    {id: 1, manualSort: 1, A: 1, B: true, C: c},
    {id: 2, manualSort: 2, A: 4, B: true, C: c},
    {id: 2, manualSort: 2, A: 7, B: true, C: c},
  ]);
  assert.equal(rowsAt('/update'), [{id: 2, manualSort: 2, A: 8, B: true, C: c}]);
  assert.equal(
    rowsAt('/both').map((r: any) => r.A),
    [1, 4, 7, 8],
  );
});

s('unsubscribe as an editor, and the deprecated _subscribe', async () => {
  const doc = await newDoc();
  const {webhooks} = ok(
    await call('POST', hooks(doc), {
      webhooks: [{fields: {url: `http://127.0.0.1:${port}/x`, eventTypes: ['add'], tableId: 'Table1'}}],
    }),
  );
  ok(await call('PATCH', `/api/docs/${doc}/access`, {delta: {users: {'kiwi@getgrist.com': 'editors'}}}));
  const unsub = (body: unknown) => call('POST', `/api/docs/${doc}/tables/Table1/_unsubscribe`, body, editorKey);
  const {unsubscribeKey} = ok(await call('GET', hooks(doc))).webhooks[0].fields;
  err(await unsub({webhookId: webhooks[0].id}), 400, /^Bad request: unsubscribeKey required/);
  err(await unsub({webhookId: webhooks[0].id, unsubscribeKey: 'wrong'}), 401, /^Wrong unsubscribeKey/);
  assert.equal(ok(await unsub({webhookId: webhooks[0].id, unsubscribeKey})), {success: true});
  err(
    await unsub({webhookId: webhooks[0].id, unsubscribeKey}),
    404,
    new RegExp(`Webhook not found "${webhooks[0].id}"`),
  );
  err(await unsub({}), 404, /Webhook not found ""/);
  const sub = ok(
    await call('POST', `/api/docs/${doc}/tables/Table1/_subscribe`, {
      url: `http://127.0.0.1:${port}/sub`,
      eventTypes: ['add'],
    }),
  );
  assert.equal(Object.keys(sub).sort(), ['triggerId', 'unsubscribeKey', 'webhookId']);
  assert.is(typeof sub.triggerId, 'number');
  err(
    await call('POST', `/api/docs/${doc}/tables/Nope/_subscribe`, {
      url: `http://127.0.0.1:${port}/sub`,
      eventTypes: ['add'],
    }),
    404,
    /Table not found "Nope"/,
  );
});

s.run();
