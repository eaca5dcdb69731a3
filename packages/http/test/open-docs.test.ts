// Issue 11 item 5 through the request pipeline: with a cap of 2 open documents, concurrent requests
// on 8 documents all succeed: a document a request is using is never closed under it.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core';
import {createApiHandler, type Route} from '../src/index.js';
import {openDocFor} from '../src/routes/doc-common.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Opens the document, waits while other requests open others, then reads it.
const holdRoute: Route = {
  method: 'GET',
  path: '/api/docs/:docId/holdtest',
  summary: '',
  tag: 'test',
  handler: async (ctx) => {
    const {doc} = await openDocFor(ctx, 'viewers');
    await sleep(30);
    return doc.grist.listTables().length;
  },
};

test('a cap of 2 open documents: 80 concurrent requests on 8 documents all answer 200', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-opendocs-'));
  const engine = await Engine.open({dataDir: dir, maxOpenDocs: 2, docIdleMs: 20});
  try {
    const user = await engine.home.ensureUser('ada@example.com', 'Ada');
    const key = await engine.home.setApiKey(user.id);
    const p = engine.home.principalFor(user, true);
    const [home] = await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id);
    const docs: string[] = [];
    for (let i = 0; i < 8; i++) docs.push(await engine.createDoc(home.id, p, {name: `D${i}`}));
    const handle = createApiHandler(engine, {
      routes: [holdRoute],
      onError: (e) => {
        throw e;
      },
    });
    const headers = {authorization: `Bearer ${key}`, 'content-type': 'application/json'};
    const body = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const res = await Promise.all(
      Array.from({length: 80}, (_, i) => {
        const doc = docs[Math.floor(i / 2) % docs.length];
        if (i % 2) return handle({method: 'GET', url: `/api/docs/${doc}/holdtest`, headers});
        return handle({
          method: 'POST',
          url: `/api/docs/${doc}/tables/Table1/records`,
          headers,
          body: body({records: [{fields: {}}]}),
        });
      }),
    );
    assert.equal(
      res.map((r) => r.status),
      Array(80).fill(200),
      res
        .filter((r) => r.status !== 200)
        .map((r) => r.body)
        .join('\n'),
    );
    await sleep(200);
    assert.is(engine.openDocCount, 0, 'all closed once idle');
    const rows = await handle({method: 'GET', url: `/api/docs/${docs[3]}/tables/Table1/records`, headers});
    assert.is(JSON.parse(rows.body as string).records.length, 5, 'every write landed');
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test("running out of descriptors anywhere answers 503 with Grist's error body, never 500", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-emfile-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const emfile: Route = {
      method: 'GET',
      path: '/api/emfiletest',
      summary: '',
      tag: 'test',
      handler: () => {
        throw Object.assign(new Error("EMFILE: too many open files, open '/x'"), {code: 'EMFILE'});
      },
    };
    const handle = createApiHandler(engine, {
      routes: [emfile],
      onError: (e) => {
        throw e;
      },
    });
    const res = await handle({method: 'GET', url: '/api/emfiletest', headers: {}});
    assert.is(res.status, 503);
    assert.match(JSON.parse(res.body as string).error, /too many open files/);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
