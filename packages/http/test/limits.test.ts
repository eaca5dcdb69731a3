// Decision 3: no per-document concurrency cap unless GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC sets one;
// streamed reads are capped process-wide by GRISTLITE_STREAM_MAX_OPEN.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, type Route} from '../src/index.js';
import {mcpRequest, readAnswer} from './helpers.js';

const slow: Route = {
  method: 'GET',
  path: '/api/docs/:docId/slowtest',
  summary: '',
  tag: 'test',
  handler: () => new Promise((resolve) => setTimeout(() => resolve('ok'), 40)),
};

async function burst(env: Record<string, string>, n: number, docIds: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'gl-limit-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const handle = createApiHandler(engine, {env, routes: [slow]});
    const res = await Promise.all(
      Array.from({length: n}, (_, i) =>
        handle({method: 'GET', url: `/api/docs/${docIds[i % docIds.length]}/slowtest`, headers: {}}),
      ),
    );
    return res;
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

test('without a cap, 30 concurrent requests on one document all succeed', async () => {
  const res = await burst({}, 30, ['doc1']);
  assert.equal(
    res.map((r) => r.status),
    Array(30).fill(200),
  );
});

test("with a cap of 10, 30 concurrent requests give 10 x 200 and 20 x 429 with Grist's message", async () => {
  const res = await burst({GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC: '10'}, 30, ['doc1']);
  assert.is(res.filter((r) => r.status === 200).length, 10);
  const refused = res.filter((r) => r.status === 429);
  assert.is(refused.length, 20);
  assert.equal(JSON.parse(refused[0].body as string), {
    error: 'Too many backlogged requests for document doc1 - try again later?',
  });
});

test('the cap counts per document', async () => {
  const res = await burst({GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC: '2'}, 4, ['docA', 'docB']);
  assert.equal(
    res.map((r) => r.status),
    [200, 200, 200, 200],
  );
});

test('streamed reads beyond GRISTLITE_STREAM_MAX_OPEN answer 429; a slot frees when a reader is done', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-limit-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
    const key = await engine.home.setApiKey(user.id);
    const env = {GRISTLITE_STREAM_MAX_OPEN: '1', GRISTLITE_STREAM_MIN_CELLS: '1'};
    const handle = createApiHandler(engine, {env, onError: (e) => assert.unreachable(String(e))});
    const call = (method: string, url: string, body?: unknown) =>
      handle({
        method,
        url,
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
        body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      });
    const text = (body: unknown) => (typeof body === 'string' ? body : Buffer.from(body as Uint8Array).toString());
    const spaces = JSON.parse(text((await call('GET', `/api/orgs/docs-${user.id}/workspaces`)).body));
    const docId = JSON.parse(text((await call('POST', `/api/workspaces/${spaces[0].id}/docs`, {name: 'S'})).body));
    await call('POST', `/api/docs/${docId}/tables/Table1/records`, {records: [{fields: {A: 'x'}}, {fields: {A: 'y'}}]});
    const url = `/api/docs/${docId}/tables/Table1/records`;
    const first = await call('GET', url);
    assert.is(first.status, 200);
    const body = first.body as AsyncIterable<Uint8Array>;
    assert.type(body[Symbol.asyncIterator], 'function', 'streamed');
    const refused = await call('GET', `${url}?sort=-A`);
    assert.is(refused.status, 429);
    assert.match(JSON.parse(text(refused.body)).error, /Too many large reads streaming at once \(1\)/);
    for await (const _ of body) {
      // read to the end: the slot is free again
    }
    const again = await call('GET', `${url}?sort=-A`);
    assert.is(again.status, 200);
    for await (const _ of again.body as AsyncIterable<Uint8Array>) {
      // drained
    }
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('an MCP tool call takes a slot of its document too: refused while the cap is held, answered after', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-limit-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const hold: Route = {...slow, path: '/api/docs/:docId/holdtest', handler: async () => (await held, 'ok')};
    const handle = createApiHandler(engine, {env: {GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC: '1'}, routes: [hold]});
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const key = await engine.home.setApiKey(ada.principal.user.id);
    const ws = (await ada.personalWorkspace()).id;
    const docId = await ada.createDoc(ws, {name: 'Capped'});
    const other = await ada.createDoc(ws, {name: 'Free'});
    const read = async (doc: string) => {
      const res = await handle(
        mcpRequest(key, 'tools/call', {name: 'read_records', arguments: {docId: doc, tableId: 'Table1'}}),
      );
      const answer = (await readAnswer(res.body)).json as {result: {isError?: boolean; content: Array<{text: string}>}};
      return {isError: answer.result.isError === true, body: JSON.parse(answer.result.content[0].text)};
    };
    const holding = handle({
      method: 'GET',
      url: `/api/docs/${docId}/holdtest`,
      headers: {authorization: `Bearer ${key}`},
    });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await read(docId), {
      isError: true,
      body: {error: `Too many backlogged requests for document ${docId} - try again later?`, status: 429},
    });
    assert.is((await read(other)).isError, false, 'another document has its own slots');
    release();
    assert.is((await holding).status, 200);
    const after = await read(docId);
    assert.is(after.isError, false);
    assert.equal(after.body.records, []);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
