// Issue 30 §3: the Idempotency-Key goes into the write's own transaction. A request that dies after
// its write committed and before its answer was kept (a crash in between) is never applied again:
// its repeat answers 409. A write that rolls back takes its key with it.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError, Engine, IDEMPOTENCY_TABLE, Replay, requestFingerprint} from '../src/internal.js';

async function withDoc(fn: (engine: Engine, docId: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-idem-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  try {
    const session = await engine.forUser('ada@example.com', 'Ada');
    const docId = await session.createDoc((await session.personalWorkspace()).id, {name: 'K'});
    await fn(engine, docId);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

const fp = requestFingerprint(1, 'POST', '/x?', {a: 1});

test('the key is written in the write transaction: a lost answer is 409, never a second write', () =>
  withDoc(async (engine, docId) => {
    const open = engine.openDoc(docId);
    // The request: claimed, written, then "crashed" before its answer was kept (no finish).
    await engine.idempotency.run('k1', async () => {
      engine.claimIdempotent(open, fp);
      open.grist.addRecords('Table1', [{A: 'x'}]);
    });
    const row = open.db.prepare(`SELECT status, body FROM ${IDEMPOTENCY_TABLE} WHERE key = 'k1'`).get();
    assert.equal(row, {status: null, body: null});
    let refused: unknown;
    await engine.idempotency.run('k1', async () => {
      try {
        engine.claimIdempotent(open, fp);
      } catch (e) {
        refused = e;
      }
    });
    assert.instance(refused, ApiError);
    assert.is((refused as ApiError).status, 409);
    assert.match((refused as ApiError).message, /was applied, but its answer was not kept/);
    assert.is(open.grist.fetchRecords('Table1').records.length, 1);
  }));

test('a write that rolls back keeps no key; a kept answer replays', () =>
  withDoc(async (engine, docId) => {
    const open = engine.openDoc(docId);
    await engine.idempotency.run('k2', async () => {
      engine.claimIdempotent(open, fp);
      assert.throws(() => open.grist.addRecords('Table1', [{Nope: 1}]));
      engine.idempotency.finish({status: 400, contentType: 'application/json', body: '{"error":"x"}'});
    });
    // Nothing kept, not even the table: only a write that commits writes its key.
    assert.is(open.db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = ?`).pluck().get(IDEMPOTENCY_TABLE), 0);
    await engine.idempotency.run('k2', async () => {
      engine.claimIdempotent(open, fp);
      open.grist.addRecords('Table1', [{A: 'y'}]);
      engine.idempotency.finish({status: 200, contentType: 'application/json', body: '{"records":[{"id":1}]}'});
    });
    let replay: unknown;
    await engine.idempotency.run('k2', async () => {
      try {
        engine.claimIdempotent(open, fp);
      } catch (e) {
        replay = e;
      }
    });
    assert.instance(replay, Replay);
    assert.is((replay as Replay).answer.body.toString(), '{"records":[{"id":1}]}');
  }));

test.run();
