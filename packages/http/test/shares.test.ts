// Issue 41: the share rate limiter (D99) on a clock of its own, and a form submitted through a
// share seen by a member's change feed as any other write (its author Grist's anonymous user),
// with the home store's copy of the shares following the document.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type DocChange, Engine, TooManyRequests} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';
import {ShareRateLimiter} from '../src/routes/shares.js';

test('the rate limiter: bursts of perMinute, refilled over the minute, per key; 0 is no limit', () => {
  let now = 1_000_000;
  const limiter = new ShareRateLimiter(3, () => now);
  for (let i = 0; i < 3; i++) limiter.take('a');
  assert.throws(
    () => limiter.take('a'),
    (e: unknown) => e instanceof TooManyRequests && e.status === 429,
  );
  limiter.take('b'); // another key has its own bucket
  now += 20_000; // a third of a minute: one request more
  limiter.take('a');
  assert.throws(() => limiter.take('a'));
  now += 10 * 60_000; // never more than a burst
  for (let i = 0; i < 3; i++) limiter.take('a');
  assert.throws(() => limiter.take('a'));
  const off = new ShareRateLimiter(0, () => now);
  for (let i = 0; i < 1000; i++) off.take('a');
});

test('a submission through a share is a write like any other: the change feed sees it, by anon', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-shares-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const handle = createApiHandler(engine, {env: {}});
    const owner = await engine.forUser('owner@example.com');
    const ws = await owner.personalWorkspace();
    const docId = await owner.createDoc(ws.id, {name: 'Shares'});
    const doc = await owner.doc(docId);
    // Table1's page section (the first section of a new document), published on page 1.
    await doc.applyUserActions([
      ['AddRecord', '_grist_Shares', null, {linkId: 'x', options: '{"publish": true}'}],
      ['UpdateRecord', '_grist_Views_section', 1, {parentKey: 'form', shareOptions: '{"publish": true, "form": true}'}],
      ['UpdateRecord', '_grist_Pages', 1, {shareRef: 1}],
    ]);
    const [share] = await engine.home.store.listShares(docId);
    assert.equal([share.linkId, share.options], ['x', {publish: true}]);
    const seen: DocChange[] = [];
    const sub = await doc.subscribe((c) => seen.push(c));
    const res = await handle({
      method: 'POST',
      url: `/api/s/${share.key}/tables/Table1/records`,
      headers: {'content-type': 'application/json'},
      body: Buffer.from(JSON.stringify({records: [{fields: {A: 'hello'}}]})),
    });
    assert.is(res.status, 200, String(res.body));
    for (let i = 0; i < 50 && !seen.some((c) => c.kind === 'change'); i++) await new Promise((r) => setTimeout(r, 10));
    const change = seen.find((c) => c.kind === 'change')!;
    assert.ok(change, 'a change event');
    assert.is(change.actor?.email, 'anon@getgrist.com');
    assert.equal(
      change.tables.map((t) => [t.tableId, t.added.map((r) => r.id)]),
      [['Table1', [1]]],
    );
    await sub.close();
    // The share removed in the document: gone from the home store once that write's request ends.
    await doc.applyUserActions([['RemoveRecord', '_grist_Shares', 1]]);
    assert.equal(await engine.home.store.listShares(docId), []);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
