// Issue 17: placement and fencing in PostgreSQL. One holder per document; a crashed holder's
// documents are free at once (its session is gone), a stalled one's when its lease expires; an
// outdated epoch appends nothing.
import pg from 'pg';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Fenced, Unrecorded, type LogEntry, type SnapshotRef} from '@gristlite/core/internal';
import {waitFor} from '@gristlite/core/testing';
import {PgPlacement} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

/** One query on its own connection (the test's admin connection may be inside a transaction). */
async function pgOnce(sql: string, params: unknown[]): Promise<pg.QueryResult> {
  const c = new pg.Client({connectionString: PG_URL});
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}
const entry = (seq: number, gen = 0, offset = 0): LogEntry => ({seq, gen, offset, bytes: Buffer.from(`e${seq}`)});

if (await pgAvailable('document placement')) {
  const t = suite('store-postgres: document placement');
  const open: PgPlacement[] = [];
  const schemas: string[] = [];
  const worker = async (self: string, schema: string, leaseMs = 10_000) => {
    const p = await PgPlacement.connect(PG_URL, {schema, self, leaseMs, keepSnapshots: 2});
    open.push(p);
    return p;
  };
  // A record needs its upload's intent, as the worker's snapshot path announces it first.
  const record = async (p: PgPlacement, docId: string, epoch: number, snap: SnapshotRef) => {
    await p.intendUpload(docId, snap.key);
    await p.recordSnapshot(docId, epoch, snap);
  };
  const schema = () => {
    const s = freshSchema('gl_place');
    schemas.push(s);
    return s;
  };
  t.after.each(async () => {
    for (const p of open.splice(0)) await p.close();
  });
  t.after(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  t('one holder; another worker is told who it is; the workers share one secret', async () => {
    const s = schema();
    const a = await worker('http://a', s);
    const b = await worker('http://b', s);
    assert.equal(await a.claim('d1'), {missing: true});
    assert.is(await a.create('d1'), 1);
    assert.equal(await b.claim('d1'), {mine: false, holder: 'http://a'});
    assert.equal(await a.claim('d1', 1), {mine: true, takeover: null}, 'the holder renews');
    assert.ok(a.secret.length >= 64);
    assert.is(b.secret, a.secret);
  });

  t('appends need the current epoch; a takeover after a crash replays the log after the snapshot', async () => {
    const s = schema();
    const a = await worker('http://a', s);
    const b = await worker('http://b', s);
    await a.create('d1');
    await record(a, 'd1', 1, {key: 'k0', sha256: 'x', size: 1, seq: 0});
    await a.append('d1', 1, [entry(1), entry(2, 0, 10)]);
    await record(a, 'd1', 1, {key: 'k2', sha256: 'y', size: 2, seq: 2});
    await a.append('d1', 1, [entry(3, 1, 0), entry(4, 1, 3)]);
    // The crash: a's lease connection dies with its process.
    const admin = new pg.Client({connectionString: PG_URL});
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [a.leasePid]);
    await admin.end();
    // An orphan, to adopt with no request, once PostgreSQL has ended the session.
    await waitFor(async () => (await b.orphans(10)).includes('d1'), 'the crashed holder to leave pg_stat_activity');
    assert.equal(await b.orphans(10), ['d1']);
    const c = await b.claim('d1');
    assert.ok('mine' in c && c.mine && c.takeover, 'taken at once, no lease to wait for');
    assert.equal(await b.orphans(10), [], 'adopted');
    const tk = (c as {takeover: NonNullable<Extract<typeof c, {mine: true}>['takeover']>}).takeover;
    assert.is(tk.epoch, 2);
    assert.equal(tk.snapshot, {key: 'k2', sha256: 'y', size: 2, seq: 2});
    assert.equal(tk.previous, [{key: 'k0', sha256: 'x', size: 1, seq: 0}], 'the previous snapshot, to fall back on');
    const rows = (log: typeof tk.log) => log.map((e) => [e.seq, e.gen, e.offset, e.bytes.toString()]);
    assert.equal(
      rows(tk.log),
      [
        [3, 1, 0, 'e3'],
        [4, 1, 3, 'e4'],
      ],
      'the log after the newest snapshot',
    );
    assert.equal(
      rows(await tk.logSince(0)),
      [
        [1, 0, 0, 'e1'],
        [2, 0, 10, 'e2'],
        [3, 1, 0, 'e3'],
        [4, 1, 3, 'e4'],
      ],
      'the whole log kept, for the previous snapshot to stand in',
    );
    assert.is(tk.nextGen, 2);
    try {
      await a.append('d1', 1, [entry(5, 1, 6)]);
      assert.unreachable('appended under an outdated epoch');
    } catch (e) {
      assert.instance(e, Fenced);
    }
    await b.append('d1', 2, [entry(5, 2, 0)]);
  });

  t('a stalled holder (no renewals) loses its documents when the lease expires, not before', async () => {
    const s = schema();
    const a = await worker('http://a', s, 3000);
    const b = await worker('http://b', s, 3000);
    await a.create('d1');
    clearInterval((a as unknown as {renewTimer: NodeJS.Timeout}).renewTimer); // as if SIGSTOPped
    assert.equal(await b.claim('d1'), {mine: false, holder: 'http://a'}, 'not before');
    // Claimed again until the lease (by PostgreSQL's clock) has run out.
    let c: Awaited<ReturnType<PgPlacement['claim']>> | undefined;
    await waitFor(async () => {
      b.forgetHolder('d1');
      c = await b.claim('d1');
      return 'mine' in c && c.mine;
    }, 'the stalled lease to expire');
    // Safety: by the time another worker could take it, the holder had stopped trusting it.
    assert.ok(a.validUntil('d1', 1) < performance.now(), 'the holder itself stopped trusting its lease');
    assert.ok(c && 'mine' in c && c.mine && c.takeover?.epoch === 2);
    try {
      await a.append('d1', 1, [entry(1)]);
      assert.unreachable('the stalled holder appended');
    } catch (e) {
      assert.instance(e, Fenced);
    }
  });

  t('renewals keep a live holder; a takeover is heard by the old holder at once (NOTIFY)', async () => {
    const s = schema();
    const a = await worker('http://a', s, 1500);
    const b = await worker('http://b', s, 1500);
    await a.create('d1');
    const firstExpiry = a.validUntil('d1', 1);
    await waitFor(
      () => performance.now() > firstExpiry && a.validUntil('d1', 1) > performance.now(),
      'a renewal past the first expiry',
    );
    assert.equal(await b.claim('d1'), {mine: false, holder: 'http://a'}, 'renewed past its first expiry');
    const lost: (string | null)[] = [];
    a.onLost((id) => lost.push(id));
    // A takeover by force (as after a cut): expire the row.
    const admin = new pg.Client({connectionString: PG_URL});
    await admin.connect();
    await admin.query(
      `UPDATE ${pg.escapeIdentifier(s)}.gristlite_placement SET lease_until = clock_timestamp() - interval '1 s'`,
    );
    await admin.end();
    b.forgetHolder('d1');
    const c = await b.claim('d1');
    assert.ok('mine' in c && c.mine);
    await waitFor(() => lost.length > 0, 'the old holder to hear of the takeover');
    assert.equal(lost, ['d1']);
    assert.is(a.validUntil('d1', 1), 0);
  });

  t('a worker whose lease connection drops gives up its documents, reconnects, and can take them back', async () => {
    const s = schema();
    const a = await worker('http://a', s, 2000);
    await a.create('d1');
    const lost: (string | null)[] = [];
    a.onLost((id) => lost.push(id));
    const before = a.leasePid;
    const admin = new pg.Client({connectionString: PG_URL});
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [before]);
    await admin.end();
    await waitFor(() => a.leasePid !== before && lost.length > 0, 'a new lease connection');
    assert.equal(lost, [null], 'everything given up at once');
    assert.is(a.validUntil('d1', 1), 0);
    assert.not.equal(a.leasePid, before, 'a new lease connection');
    const c = await a.claim('d1');
    assert.ok('mine' in c && c.mine && c.takeover?.epoch === 2, 'taken back under a new epoch');
  });

  t(
    'snapshot history: pruning names only what a committed newer snapshot supersedes; intents guard records',
    async () => {
      const s = schema();
      const a = await worker('http://a', s);
      await a.create('d1');
      await record(a, 'd1', 1, {key: 'k1', sha256: 'a', size: 1, seq: 1});
      await record(a, 'd1', 1, {key: 'k2', sha256: 'b', size: 1, seq: 2});
      assert.equal(await a.prunable('d1'), [], 'the newest two are kept');
      await record(a, 'd1', 1, {key: 'k3', sha256: 'c', size: 1, seq: 3});
      assert.equal(await a.prunable('d1'), ['k1']);
      assert.ok(await a.snapshotRecorded('d1', 'k1'), 'still recorded until forgotten');
      await a.forgetSnapshots('d1', ['k1', 'k3']);
      assert.not.ok(await a.snapshotRecorded('d1', 'k1'));
      assert.ok(await a.snapshotRecorded('d1', 'k3'), 'the current snapshot is never forgotten');
      try {
        await a.recordSnapshot('d1', 7, {key: 'k9', sha256: 'c', size: 1, seq: 9});
        assert.unreachable('recorded under a wrong epoch');
      } catch (e) {
        assert.instance(e, Fenced);
      }
      // Upload intents: recording ends one; a stale unrecorded one is taken by the sweep, after
      // which it can no longer be recorded.
      await a.intendUpload('d1', 'k4');
      await a.intendUpload('d1', 'orphan');
      await a.recordSnapshot('d1', 1, {key: 'k4', sha256: 'd', size: 1, seq: 4});
      assert.equal(await a.takeStaleUploads(60_000, 10), [], 'nothing stale yet');
      assert.equal(await a.takeStaleUploads(0, 10), [{docId: 'd1', key: 'orphan'}]);
      assert.equal(await a.takeStaleUploads(0, 10), []);
      try {
        await a.recordSnapshot('d1', 1, {key: 'orphan', sha256: 'e', size: 1, seq: 5});
        assert.unreachable('recorded a swept upload');
      } catch (e) {
        assert.instance(e, Unrecorded);
      }
      assert.not.ok(await a.snapshotRecorded('d1', 'orphan'));
      assert.equal((await a.remove('d1')).sort(), ['k2', 'k3', 'k4']);
      assert.equal(await a.claim('d1'), {missing: true});
    },
  );

  t(
    'a document created while a lease renewal runs stays held (the renewal only judges what it asked about)',
    async () => {
      const s = schema();
      const a = await worker('http://a', s);
      await a.create('d1');
      // Hold d1's row so that the renewal's UPDATE waits, with its snapshot taken before d2 exists.
      const admin = new pg.Client({connectionString: PG_URL});
      await admin.connect();
      try {
        await admin.query('BEGIN');
        await admin.query(`SELECT 1 FROM ${pg.escapeIdentifier(s)}.gristlite_placement WHERE doc_id = 'd1' FOR UPDATE`);
        const renewing = (a as unknown as {renew(): Promise<void>}).renew();
        // Until the renewal's UPDATE is waiting for the row lock.
        await waitFor(async () => {
          const {rows} = await pgOnce('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [a.leasePid]);
          return rows[0]?.wait_event_type === 'Lock';
        }, 'the renewal to wait for the row lock');
        await a.create('d2');
        assert.ok(a.validUntil('d2', 1) > 0);
        await admin.query('COMMIT');
        await renewing;
        assert.ok(a.validUntil('d2', 1) > 0, 'd2 still held after the renewal that could not see it');
        assert.ok(a.validUntil('d1', 1) > 0, 'd1 renewed');
      } finally {
        await admin.end();
      }
    },
  );

  t('a holder cut off inside a transaction does not keep its row lock past the lease', async () => {
    const s = schema();
    const a = await worker('http://a', s, 1500);
    const b = await worker('http://b', s, 1500);
    await a.create('d1');
    clearInterval((a as unknown as {renewTimer: NodeJS.Timeout}).renewTimer); // no renewals either
    // As if cut off mid-claim: one of its placement connections holds the row lock and never
    // sends another statement (its session lives on: nothing tells the server of the cut).
    const stuck = await (a as unknown as {pool: pg.Pool}).pool.connect();
    stuck.on('error', () => {}); // the server ends this session
    await stuck.query('BEGIN');
    await stuck.query(`SELECT 1 FROM ${pg.escapeIdentifier(s)}.gristlite_placement WHERE doc_id = 'd1' FOR UPDATE`);
    let c: Awaited<ReturnType<PgPlacement['claim']>> | undefined;
    try {
      await waitFor(async () => {
        b.forgetHolder('d1');
        c = await b.claim('d1').catch(() => undefined); // waits on the lock (query timeout) until it goes
        return c !== undefined && 'mine' in c && c.mine;
      }, 'a takeover past the stuck transaction');
    } finally {
      stuck.release(true);
    }
    assert.ok(c && 'mine' in c && c.mine && c.takeover?.epoch === 2);
  });

  t('many workers claim one free document at once: exactly one takes it', async () => {
    const s = schema();
    const ws = await Promise.all([1, 2, 3, 4, 5].map((i) => worker(`http://w${i}`, s)));
    await ws[0].create('d1');
    await ws[0].release('d1', 1);
    const claims = await Promise.all(ws.map((w) => w.claim('d1')));
    const winners = claims.filter((c) => 'mine' in c && c.mine);
    assert.is(winners.length, 1);
    const holder = ws[claims.findIndex((c) => 'mine' in c && c.mine)].self;
    for (const c of claims) if ('holder' in c) assert.is(c.holder, holder);
  });

  t.run();
}
