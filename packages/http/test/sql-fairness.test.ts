// Issue 11 item 6 through the API, scaled down: one user's 70 concurrent runaway queries on their
// document cannot make another user's `select 1` on another document fail.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';

const RUNAWAY = 'with recursive c(x) as (select 1 union all select x+1 from c) select count(*) from c';
// A cheap statement that still goes through the pool: `select 1` is provably bounded and runs
// inline on the document's connection (sql/bounded.ts), an aggregate is not.
const CHEAP = 'select count(*) as x from (select 1)';

test("70 runaways by one user: theirs beyond a share of 4 get 429, the other user's 12 cheap statements all answer", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-sqlfair-'));
  // The runaways ask for 300 ms (Grist's `timeout`); the cheap statements keep the default, so that
  // a machine too busy to run a worker for 300 ms cannot fail them by its own slowness.
  const engine = await Engine.open({dataDir: dir, sqlTimeoutMs: 3000, env: {GRISTLITE_SQL_MAX_PER_USER: '4'}});
  try {
    const handle = createApiHandler(engine, {
      onError: (e) => {
        throw e;
      },
    });
    const setUp = async (email: string) => {
      const user = await engine.home.ensureUser(email, email);
      const key = await engine.home.setApiKey(user.id);
      const [home] = await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id);
      const doc = await engine.createDoc(home.id, engine.home.principalFor(user, true), {name: 'D'});
      const headers = {authorization: `Bearer ${key}`, 'content-type': 'application/json'};
      return (sql: string, timeout?: number) =>
        handle({
          method: 'POST',
          url: `/api/docs/${doc}/sql`,
          headers,
          body: new TextEncoder().encode(JSON.stringify({sql, timeout})),
        });
    };
    const viewer = await setUp('viewer@example.com');
    const other = await setUp('other@example.com');
    const flood = Array.from({length: 70}, () => viewer(RUNAWAY, 300));
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await other(CHEAP));
    assert.equal(
      answers.map((a) => a.status),
      Array(12).fill(200),
    );
    assert.equal(JSON.parse(answers[0].body as string).records, [{fields: {x: 1}}]);
    const refused = await Promise.all(flood);
    const statuses = refused.map((r) => r.status);
    assert.is(statuses.filter((s) => s === 429).length, 66);
    assert.is(statuses.filter((s) => s === 400).length, 4, 'their own four ran and were interrupted');
    assert.match(
      JSON.parse(refused.find((r) => r.status === 429)!.body as string).error,
      /too many SQL statements of yours/,
    );
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
