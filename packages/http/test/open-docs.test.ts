// Issue 11 item 5 through the request pipeline: with a cap of 2 open documents, concurrent requests
// on 8 documents all succeed: a document a request is using is never closed under it, and once the
// requests are over the cap holds again.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {waitFor} from '@gristlite/core/testing';
import {createApiHandler, type Route} from '../src/index.js';
import {openDocFor} from '../src/routes/doc-common.js';

/** Documents held by holdRoute at once, and the most open documents seen meanwhile. */
const heldByHold = new Set<string>();
let openedUnder = 0;
let engineOf: Engine | null = null;

// Opens the document and holds it until three documents are held at once (over the cap of 2, all
// in use), then reads it.
const holdRoute: Route = {
  method: 'GET',
  path: '/api/docs/:docId/holdtest',
  summary: '',
  tag: 'test',
  handler: async (ctx) => {
    const {doc} = await openDocFor(ctx, 'viewers');
    heldByHold.add(doc.id);
    await waitFor(() => heldByHold.size >= 3, 'three documents held at once');
    openedUnder = Math.max(openedUnder, engineOf!.openDocCount);
    return doc.grist.listTables().length;
  },
};

test('a cap of 2 open documents: 80 concurrent requests on 8 documents all answer 200', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-opendocs-'));
  // No idle closing during the test: only the cap closes documents.
  const engine = await Engine.open({dataDir: dir, maxOpenDocs: 2, docIdleMs: 600_000});
  engineOf = engine;
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
    assert.ok(openedUnder > 2, `the cap was exceeded by documents in use (${openedUnder} open at most)`);
    assert.is(engine.openDocCount, 2, 'the cap holds once no request uses a document');
    for (const doc of docs) {
      const rows = await handle({method: 'GET', url: `/api/docs/${doc}/tables/Table1/records`, headers});
      assert.is(JSON.parse(rows.body as string).records.length, 5, `every write landed (${doc})`);
      assert.ok(engine.openDocCount <= 2, 'the cap holds between requests');
    }
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
