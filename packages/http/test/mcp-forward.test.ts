// Issue 42 §4, D130: /api/mcp is stateless, so any worker of a deployment answers any call; a
// tool reaching a document another worker holds has the whole request forwarded there, as REST.
// Two workers in this process (one home store, the in-process placement), the holder over HTTP.
import {mkdtempSync, rmSync} from 'node:fs';
import {createServer} from 'node:http';
import type {AddressInfo} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {DirObjectStore, Engine, MemoryPlacementHub, SqliteHomeStore} from '@gristlite/core/internal';
import {createApiHandler, type Handler} from '../src/index.js';
import {mcpRequest, readAnswer} from './helpers.js';

/** The JSON-RPC POST a client sends for one tool call. */
function toolCall(key: string, name: string, args: Record<string, unknown>) {
  return mcpRequest(key, 'tools/call', {name, arguments: args});
}

test('a tool call reaching a document another worker holds is forwarded there and answered alike', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-mcp-forward-'));
  let handlerA: Handler | null = null;
  const server = createServer(async (req, res) => {
    const out = await handlerA!({method: req.method!, url: req.url!, headers: req.headers as never, body: req});
    res.writeHead(out.status, out.headers);
    if (out.body === null || typeof out.body === 'string' || out.body instanceof Uint8Array) res.end(out.body ?? '');
    else {
      for await (const chunk of out.body) res.write(chunk);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const urlA = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const hub = new MemoryPlacementHub(3000, 2);
  const home = new SqliteHomeStore(join(dir, 'home.sqlite3'));
  const objects = new DirObjectStore(join(dir, 'objects'));
  const cluster = (self: string) => ({placement: hub.worker(self), store: objects, snapshotDelayMs: 30});
  const a = await Engine.open({dataDir: join(dir, 'a'), home, cluster: cluster(urlA), resumeWebhooks: false});
  // Each engine closes its own view of the one store.
  const keep = {close: async () => {}} as unknown as SqliteHomeStore;
  const b = await Engine.open({
    dataDir: join(dir, 'b'),
    home: Object.assign(Object.create(home), keep),
    cluster: cluster('http://b.invalid'),
    resumeWebhooks: false,
  });
  try {
    const throwIt = {
      env: {},
      onError: (e: unknown) => {
        throw e;
      },
    };
    handlerA = createApiHandler(a, throwIt);
    const handlerB = createApiHandler(b, throwIt);
    const ada = await a.forUser('ada@example.com', 'Ada');
    const key = await a.home.setApiKey(ada.principal.user.id);
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Held by A'});
    await (await ada.doc(docId)).addRecords('Table1', [{A: 'one'}, {A: 'two'}]);

    const viaB = await handlerB(toolCall(key, 'read_records', {docId, tableId: 'Table1'}));
    const viaA = await handlerA(toolCall(key, 'read_records', {docId, tableId: 'Table1'}));
    assert.is(viaB.status, 200, String(viaB.body));
    assert.is(viaB.headers['X-Gristlite-Forwarded-To'] ?? viaB.headers['x-gristlite-forwarded-to'], urlA);
    const result = async (res: {body: unknown}) => ((await readAnswer(res.body)).json as {result: any}).result;
    const forwarded = await result(viaB);
    assert.equal(forwarded, await result(viaA));
    const records = JSON.parse(forwarded.content[0].text).records;
    assert.equal(
      records.map((r: {fields: {A: string}}) => r.fields.A),
      ['one', 'two'],
    );
    assert.is(b.openDocCount, 0, 'B never opened the document');
    // A write through B lands on A, once.
    const added = await handlerB(
      toolCall(key, 'add_records', {docId, tableId: 'Table1', records: [{fields: {A: 'three'}}]}),
    );
    assert.is(added.status, 200);
    assert.equal(JSON.parse((await result(added)).content[0].text), {records: [{id: 3}]});
    assert.equal(
      (await (await ada.doc(docId)).fetchRecords('Table1')).map((r) => r.fields.A),
      ['one', 'two', 'three'],
    );
  } finally {
    await b.close().catch(() => {});
    await a.close().catch(() => {});
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
