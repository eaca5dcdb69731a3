// Decision 3: no per-document concurrency cap unless GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC sets one.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, type Route} from '../src/index.js';

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

test.run();
