// Issue 24 §4 over real HTTP: while one viewer floods a document with 70 runaway statements, another
// user's trivial statements on another document answer long before a runaway's deadline would
// free a worker. The bound is relative to the SQL timeout, not a wall-clock figure, so that it
// holds on a loaded machine; the measured times are printed.
import {createServer} from 'node:http';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Agent, request} from 'undici';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler} from '@gristlite/http';
import {configureServer, toNodeHandler} from '../src/index.js';

const RUNAWAY = 'with recursive c(x) as (select 1 union all select x+1 from c) select count(*) from c';
// A cheap statement that still goes through the pool: `select 1` is provably bounded and runs
// inline on the document's connection (sql/bounded.ts), an aggregate is not.
const CHEAP = 'select count(*) as x from (select 1)';
const TIMEOUT_MS = 3000;

test("70 runaways by a viewer: another user's 12 cheap statements on another document each answer well before a runaway's timeout", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-node-sqlfair-'));
  const engine = await Engine.open({dataDir: dir, sqlTimeoutMs: TIMEOUT_MS});
  const server = configureServer(createServer(toNodeHandler(createApiHandler(engine, {env: {}}))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as {port: number}).port}`;
  const agent = new Agent({keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000});
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await request(base + path, {
      method: method as 'GET',
      dispatcher: agent,
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return {status: res.statusCode, body: text ? JSON.parse(text) : null};
  };
  const keyOf = async (email: string) =>
    (await engine.home.setApiKey((await engine.home.ensureUser(email, email)).id))!;
  try {
    const [owner, viewer, other] = await Promise.all(
      ['owner@example.com', 'viewer@example.com', 'other@example.com'].map(keyOf),
    );
    const newDoc = async (key: string) => {
      const [org] = (await call(key, 'GET', '/api/orgs')).body;
      const [ws] = (await call(key, 'GET', `/api/orgs/${org.id}/workspaces`)).body;
      return (await call(key, 'POST', `/api/workspaces/${ws.id}/docs`, {name: 'D'})).body as string;
    };
    const flooded = await newDoc(owner);
    const share = await call(owner, 'PATCH', `/api/docs/${flooded}/access`, {
      delta: {users: {'viewer@example.com': 'viewers'}},
    });
    assert.is(share.status, 200);
    const elsewhere = await newDoc(other);
    // Workers start on first use, the spare once they are ready (a fork takes 1 s on a loaded machine).
    assert.is((await call(other, 'POST', `/api/docs/${elsewhere}/sql`, {sql: CHEAP})).status, 200);
    for (const start = performance.now(); !engine.sqlWorkers.spare; ) {
      if (performance.now() - start > 20_000) throw new Error('the spare SQL worker did not start');
      await new Promise((r) => setTimeout(r, 10));
    }

    const flood = Array.from({length: 70}, () => call(viewer, 'POST', `/api/docs/${flooded}/sql`, {sql: RUNAWAY}));
    // The flood is under way: both workers run the viewer's runaways.
    await new Promise((r) => setTimeout(r, 300));
    const times: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t = performance.now();
      const res = await call(other, 'POST', `/api/docs/${elsewhere}/sql`, {sql: CHEAP});
      times.push(performance.now() - t);
      assert.is(res.status, 200);
      assert.equal(res.body.records, [{fields: {x: 1}}]);
    }
    // Without preemption the first would wait for a runaway's deadline (TIMEOUT_MS from its start).
    const slowest = Math.max(...times);
    assert.ok(
      slowest < TIMEOUT_MS / 3,
      `another user's cheap statement took ${times.map((x) => x.toFixed(0)).join(', ')} ms`,
    );
    const answers = await Promise.all(flood);
    const count = (s: number) => answers.filter((a) => a.status === s).length;
    // Their share is 4 at a time; one freed by the preemption may admit a later arrival of the flood.
    assert.ok(count(429) >= 60, `${count(429)} refused beyond their share`);
    assert.is(count(400), 70 - count(429), 'the rest interrupted, one of them preempted');
    for (const a of answers.filter((x) => x.status === 400)) {
      assert.is(a.body.error, 'a slow statement resulted in a database interrupt');
    }
    assert.is(engine.sqlPreemptions, 1);
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `  12 cheap statements during the flood: first ${times[0].toFixed(0)} ms, median ${sorted[6].toFixed(1)} ms, ` +
        `slowest ${slowest.toFixed(0)} ms (SQL timeout ${TIMEOUT_MS} ms); the flood: ${count(429)} × 429, ${count(400)} × 400`,
    );
  } finally {
    await agent.close();
    await new Promise<void>((r) => server.close(() => r()));
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
