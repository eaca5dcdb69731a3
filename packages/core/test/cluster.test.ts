// Issue 17: documents written by one worker at a time, every commit's WAL frames in an action log
// before the answer, snapshots in object storage; a new holder rebuilds the file from both.
// Here with the in-process placement and a directory as object store (the PostgreSQL and S3 ones
// run the same model in packages/store-postgres and packages/cli's end-to-end tests).
import Database from 'better-sqlite3';
import {copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  DirObjectStore,
  Engine,
  MemoryPlacementHub,
  SqliteHomeStore,
  WalTail,
  restoreDoc,
  type LogEntry,
  type ObjectStore,
} from '../src/internal.js';
import {fileSha256} from '../src/cluster/replica.js';
import {waitFor} from '../src/testing/index.js';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'gl-cluster-'));
}

test('WalTail returns each commit once, skips a rolled-back spill, and a restore rebuilds the file', async () => {
  const dir = tmp();
  try {
    const path = join(dir, 'a.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    db.pragma('wal_checkpoint(TRUNCATE)');
    const snap = join(dir, 'snap.db');
    copyFileSync(path, snap);
    const tail = new WalTail(`${path}-wal`);
    const log: LogEntry[] = [];
    let seq = 0;
    const take = () => {
      const seg = tail.read();
      if (seg) log.push({seq: ++seq, ...seg});
      return seg;
    };
    assert.is(take(), null, 'nothing committed yet');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('one');
    assert.is(take()!.offset, 0, 'the first segment carries the header');
    assert.is(take(), null, 'a commit is returned once');
    // A big transaction spills pages into the WAL, then rolls back: its frames must never ship.
    db.pragma('cache_size = 5');
    const big = db.transaction(() => {
      for (let i = 0; i < 2000; i++) db.prepare('INSERT INTO t (v) VALUES (?)').run('x'.repeat(500));
      throw new Error('roll back');
    });
    assert.throws(() => big());
    assert.is(take(), null, 'rolled-back frames are not a commit');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('two');
    db.prepare('UPDATE t SET v = ? WHERE v = ?').run('ONE', 'one');
    assert.ok(take(), 'two commits in one segment');
    const expected = db.prepare('SELECT * FROM t ORDER BY id').all();
    db.close();

    const store = new DirObjectStore(join(dir, 'store'));
    await store.putFile('s1', snap);
    const restored = join(dir, 'b.db');
    await restoreDoc(
      restored,
      {
        epoch: 2,
        snapshot: {key: 's1', sha256: await fileSha256(snap), size: 0, seq: 0},
        previous: [],
        log,
        logSince: async () => log,
        nextGen: 1,
      },
      store,
    );
    assert.equal(
      readdirSync(dir).filter((n) => n.startsWith('b.db')),
      ['b.db'],
      'no WAL left beside the restored file',
    );
    const copy = new Database(restored, {readonly: true});
    assert.equal(copy.prepare('SELECT * FROM t ORDER BY id').all(), expected);
    copy.close();
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test('a restore refuses a snapshot whose checksum does not match', async () => {
  const dir = tmp();
  try {
    const path = join(dir, 'a.db');
    new Database(path).exec('CREATE TABLE t (x)');
    const store = new DirObjectStore(join(dir, 'store'));
    await store.putFile('k', path);
    const takeover = {
      epoch: 1,
      snapshot: {key: 'k', sha256: '0'.repeat(64), size: 0, seq: 0},
      previous: [],
      log: [],
      logSince: async () => [],
      nextGen: 0,
    };
    try {
      await restoreDoc(join(dir, 'b.db'), takeover, store);
      assert.unreachable('restored a corrupt snapshot');
    } catch (e) {
      assert.match((e as Error).message, /checksum/);
    }
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

/** Two workers of one deployment in this process: one home store, one hub, private data dirs. */
async function twoWorkers(
  fn: (w: {a: Engine; b: Engine; hub: MemoryPlacementHub; store: string}) => Promise<void>,
  leaseMs = 3000,
  /** The object store as worker b sees it (to watch or slow its downloads). */
  storeOfB: (objects: DirObjectStore) => ObjectStore = (o) => o,
) {
  const dir = tmp();
  const hub = new MemoryPlacementHub(leaseMs, 2);
  const home = new SqliteHomeStore(join(dir, 'home.sqlite3'));
  const objects = new DirObjectStore(join(dir, 'objects'));
  const cluster = (self: string) => ({
    placement: hub.worker(self),
    store: self === 'http://b' ? storeOfB(objects) : objects,
    snapshotDelayMs: 30,
  });
  const keep = {close: async () => {}} as unknown as SqliteHomeStore; // each engine closes its own view
  const a = await Engine.open({dataDir: join(dir, 'a'), home, cluster: cluster('http://a')});
  const b = await Engine.open({
    dataDir: join(dir, 'b'),
    home: Object.assign(Object.create(home), keep),
    cluster: cluster('http://b'),
  });
  try {
    await fn({a, b, hub, store: join(dir, 'objects')});
  } finally {
    await b.close().catch(() => {});
    await a.close().catch(() => {});
    rmSync(dir, {recursive: true, force: true});
  }
}

const values = async (e: Engine, docId: string) =>
  (await (await e.forUser('ada@example.com')).doc(docId)).fetchRecords('Table1').then((r) => r.map((x) => x.fields.A));

test('a document is served by its holder; after the holder dies another worker has every acknowledged write', () =>
  twoWorkers(async ({a, b, hub}) => {
    const sa = await a.forUser('ada@example.com', 'Ada');
    const ws = await sa.personalWorkspace();
    const docId = await sa.createDoc(ws.id, {name: 'shared'});
    const da = await sa.doc(docId);
    for (let i = 0; i < 20; i++) await da.addRecords('Table1', [{A: `a${i}`}]);
    const sb = await b.forUser('ada@example.com');
    try {
      await (await sb.doc(docId)).addRecords('Table1', [{A: 'b?'}]);
      assert.unreachable('a second writer');
    } catch (e) {
      assert.is((e as {status?: number}).status, 503);
    }
    hub.kill('http://a');
    await (await sb.doc(docId)).addRecords('Table1', [{A: 'b0'}]);
    const got = await values(b, docId);
    assert.equal(got, [...Array.from({length: 20}, (_, i) => `a${i}`), 'b0']);
    assert.is(hub.rows.get(docId)!.epoch, 2, 'the takeover made a new epoch');
  }));

test("routing that finds a document's holder dead starts the takeover at once, before any access check", () =>
  twoWorkers(async ({a, b, hub}) => {
    const sa = await a.forUser('ada@example.com', 'Ada');
    const ws = await sa.personalWorkspace();
    const docId = await sa.createDoc(ws.id, {name: 'orphan'});
    await (await sa.doc(docId)).addRecords('Table1', [{A: 'kept'}]);
    assert.is(await b.cluster!.liveHolder(docId), 'http://a', 'routed to its live holder');
    hub.kill('http://a');
    // The adoption sweep runs once a lease time (a minute here): only routing can start it now.
    assert.is(await b.cluster!.liveHolder(docId), null, 'served where the request came');
    await waitFor(() => hub.rows.get(docId)!.worker === 'http://b' && b.openDocCount > 0, 'the takeover by b', 5000);
    assert.is(hub.rows.get(docId)!.epoch, 2, 'taken over under a new epoch');
    assert.equal(await values(b, docId), ['kept']);
    assert.is(hub.rows.get(docId)!.epoch, 2, "the request joined routing's takeover (no second one)");
  }, 60_000));

test("adoption of a dead worker's other documents waits behind the takeover a request waits for", () => {
  // b's downloads, in order, each slowed so that they would overlap.
  const events: string[] = [];
  let requested = '';
  const watched = (objects: DirObjectStore): ObjectStore =>
    Object.assign(Object.create(objects), {
      getFile: async (key: string, path: string) => {
        const which = key.includes(requested) ? 'requested' : 'other';
        events.push(`${which} start`);
        await new Promise((r) => setTimeout(r, 300));
        await objects.getFile(key, path);
        events.push(`${which} end`);
      },
    });
  return twoWorkers(
    async ({a, b, hub}) => {
      const sa = await a.forUser('ada@example.com', 'Ada');
      const ws = await sa.personalWorkspace();
      const other = await sa.createDoc(ws.id, {name: 'other'});
      requested = await sa.createDoc(ws.id, {name: 'requested'});
      for (const id of [other, requested]) await (await sa.doc(id)).addRecords('Table1', [{A: id}]);
      hub.kill('http://a');
      // Adoption looks every lease time (100 ms): it finds both while the request's takeover runs.
      assert.equal(await values(b, requested), [requested]);
      await waitFor(() => events.length === 4, 'the other adopted', 5000);
      assert.is(hub.rows.get(other)!.worker, 'http://b', 'adopted');
      assert.equal(events, ['requested start', 'requested end', 'other start', 'other end']);
    },
    100,
    watched,
  );
});

test('a holder cut off from the placement cannot acknowledge a write after a takeover (fencing)', () =>
  twoWorkers(async ({a, b, hub}) => {
    const sa = await a.forUser('ada@example.com', 'Ada');
    const ws = await sa.personalWorkspace();
    const docId = await sa.createDoc(ws.id, {name: 'fenced'});
    const da = await sa.doc(docId);
    await da.addRecords('Table1', [{A: 'before'}]);
    // B takes over without A hearing of it (A still believes its lease is good).
    const row = hub.rows.get(docId)!;
    row.leaseUntil = 0;
    const notify = hub.notifyMoved;
    hub.notifyMoved = () => {};
    await (await (await b.forUser('ada@example.com')).doc(docId)).addRecords('Table1', [{A: 'by b'}]);
    hub.notifyMoved = notify;
    try {
      await da.addRecords('Table1', [{A: 'stale'}]);
      assert.unreachable('acknowledged under an outdated epoch');
    } catch (e) {
      assert.is((e as {status?: number}).status, 503);
      assert.match((e as Error).message, /no longer held/);
    }
    assert.equal(await values(b, docId), ['before', 'by b']);
  }));

test('snapshots replace the log, old ones are pruned, and a huge transaction is covered by a snapshot', () =>
  twoWorkers(async ({a, b, hub, store}) => {
    const sa = await a.forUser('ada@example.com', 'Ada');
    const ws = await sa.personalWorkspace();
    const docId = await sa.createDoc(ws.id, {name: 'snaps'});
    const da = await sa.doc(docId);
    for (let round = 0; round < 4; round++) {
      await da.addRecords('Table1', [{A: `r${round}`}]);
      // Each write in its own snapshot (snapshotDelayMs is 30), so that there are old ones to prune.
      const written = hub.rows.get(docId)!.log.at(-1)!.seq;
      await waitFor(() => (hub.rows.get(docId)!.snapshot?.seq ?? 0) >= written, `a snapshot of round ${round}`);
    }
    const row = hub.rows.get(docId)!;
    assert.ok(row.snapshot && row.snapshot.seq > 0, 'a snapshot after the writes');
    // The log the previous snapshot covers is gone; after it, kept (that snapshot plus the log stand in).
    const covered = () => row.history.at(-2)!.seq;
    assert.ok(row.log.length > 0 && row.log.every((e) => e.seq > covered()), 'the log since the previous snapshot');
    assert.is(readdirSync(join(store, 'docs', docId)).length, 2, 'two snapshots kept');
    const before = row.snapshot.seq;
    // About 8 MB in one transaction: too big for one log entry, so a snapshot records it.
    const big = Array.from({length: 2000}, (_, i) => ({A: `${i}:${'y'.repeat(4000)}`}));
    await da.addRecords('Table1', big);
    assert.ok(row.snapshot!.seq > before, 'the big write is in a snapshot');
    assert.ok(row.log.every((e) => e.seq > covered()));
    hub.kill('http://a');
    const got = await values(b, docId);
    assert.is(got.length, 4 + 2000);
    assert.is(got[4 + 1999], `1999:${'y'.repeat(4000)}`);
  }));

test('a worker taking back its own document reuses its local file when it matches the snapshot', async () => {
  const dir = tmp();
  const hub = new MemoryPlacementHub(3000, 2);
  const objects = new DirObjectStore(join(dir, 'objects'));
  // Downloads counted: the reuse branch is the one that downloads nothing.
  const downloads: string[] = [];
  const counting = Object.assign(Object.create(objects), {
    getFile: (key: string, path: string) => {
      downloads.push(key);
      return objects.getFile(key, path);
    },
  });
  const engine = await Engine.open({
    dataDir: join(dir, 'a'),
    docIdleMs: 40,
    cluster: {placement: hub.worker('http://a'), store: counting, snapshotDelayMs: 10},
  });
  try {
    const s = await engine.forUser('ada@example.com', 'Ada');
    const docId = await s.createDoc((await s.personalWorkspace()).id, {name: 'reuse'});
    const released = (what: string) => waitFor(() => hub.rows.get(docId)!.worker === null, what);
    await (await s.doc(docId)).addRecords('Table1', [{A: 'x'}]);
    // Closed when idle after a snapshot, the lease given back; the local file stays as a kept copy.
    await released('the document to be released');
    const epoch = hub.rows.get(docId)!.epoch;
    assert.ok(existsSync(engine.docPath(docId)), 'the local copy is kept');
    assert.is(await fileSha256(engine.docPath(docId)), hub.rows.get(docId)!.snapshot!.sha256, 'and matches');
    // Taken back (a new epoch: a takeover, restored from the record), from the local file.
    assert.equal(await values(engine, docId), ['x']);
    assert.is(hub.rows.get(docId)!.epoch, epoch + 1, 'taken back under a new epoch');
    assert.equal(downloads, [], 'the matching local file was used, nothing downloaded');
    await (await s.doc(docId)).addRecords('Table1', [{A: 'y'}]);
    await released('the document to be released again');
    // A local file that no longer matches (changed behind gristlite's back) is replaced.
    const db = new Database(engine.docPath(docId));
    db.prepare("UPDATE Table1 SET A = 'tampered'").run();
    db.close();
    assert.equal(await values(engine, docId), ['x', 'y']);
    assert.equal(downloads, [hub.rows.get(docId)!.snapshot!.key], 'the snapshot downloaded once');
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test("a dead worker's documents are adopted by another with no request (their webhooks resume)", () =>
  twoWorkers(async ({a, b, hub}) => {
    const sa = await a.forUser('ada@example.com', 'Ada');
    const ws = await sa.personalWorkspace();
    const docId = await sa.createDoc(ws.id, {name: 'orphan'});
    await (await sa.doc(docId)).addRecords('Table1', [{A: 'kept'}]);
    assert.is(hub.rows.get(docId)!.worker, 'http://a');
    hub.kill('http://a');
    await waitFor(() => hub.rows.get(docId)!.worker === 'http://b' && b.openDocCount > 0, 'adoption by b');
    assert.is(hub.rows.get(docId)!.worker, 'http://b', 'adopted');
    assert.is(b.openDocCount, 1, 'open at b, as a webhook resume opens it');
    assert.equal(await values(b, docId), ['kept']);
  }, 150));

test('while snapshots fail, writes stop at the log cap with a 503 and reads go on', async () => {
  const dir = tmp();
  const hub = new MemoryPlacementHub(3000, 2);
  const objects = new DirObjectStore(join(dir, 'objects'));
  let storeUp = true;
  const flaky = Object.assign(Object.create(objects), {
    putFile: (key: string, path: string) =>
      storeUp ? objects.putFile(key, path) : Promise.reject(new Error('object store unreachable')),
  });
  const errors: string[] = [];
  const engine = await Engine.open({
    dataDir: join(dir, 'a'),
    cluster: {placement: hub.worker('http://a'), store: flaky, snapshotDelayMs: 20, maxLogBytes: 40_000},
    onError: (e) => errors.push((e as Error).message),
  });
  try {
    const s = await engine.forUser('ada@example.com', 'Ada');
    const docId = await s.createDoc((await s.personalWorkspace()).id, {name: 'capped'});
    const doc = await s.doc(docId);
    storeUp = false;
    const refusals: {status?: number; message: string}[] = [];
    for (let i = 0; i < 50 && !refusals.length; i++) {
      await doc.addRecords('Table1', [{A: `r${i}-${'z'.repeat(2000)}`}]).catch((e) => refusals.push(e));
    }
    assert.is(refusals.length, 1, 'writes stopped');
    assert.is(refusals[0].status, 503);
    assert.match(refusals[0].message, /wait for a snapshot/);
    await waitFor(() => errors.length > 0, 'a failing snapshot to be reported');
    assert.ok(
      errors.some((m) => /object store unreachable/.test(m)),
      'the failing snapshots were reported',
    );
    const before = (await doc.fetchRecords('Table1')).length;
    assert.ok(before > 0, 'reads go on');
    storeUp = true;
    // The refused write again: accepted once a snapshot has succeeded (and trimmed the log).
    await waitFor(() => (hub.rows.get(docId)!.snapshot?.seq ?? 0) > 0, 'a snapshot once the store is back');
    await doc.addRecords('Table1', [{A: `again-${'z'.repeat(2000)}`}]);
    const row = hub.rows.get(docId)!;
    assert.ok(row.snapshot!.seq > 0 && row.log.every((e) => e.seq > row.history.at(-2)!.seq), 'the log was trimmed');
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('an upload a crash left unrecorded is found through its intent and deleted; recorded ones are kept', () =>
  twoWorkers(async ({a, hub, store}) => {
    const sa = await a.forUser('ada@example.com', 'Ada');
    const docId = await sa.createDoc((await sa.personalWorkspace()).id, {name: 'sweep'});
    assert.is(hub.uploads.size, 0, 'the first snapshot was recorded, its intent forgotten');
    // As if a worker died between upload and record:
    const key = `docs/${docId}/00000009-000000000009-deadbeef.grist`;
    await hub.worker('http://c').intendUpload(docId, key);
    await a.cluster!.store.putFile(key, a.docPath(docId));
    assert.is(await a.cluster!.sweepUploads(), 0, 'a recent intent is left alone (its upload may be running)');
    assert.is(await a.cluster!.sweepUploads(0), 1);
    assert.equal(
      readdirSync(join(store, 'docs', docId)).filter((n) => n.includes('deadbeef')),
      [],
      'the orphan is gone',
    );
    assert.is(readdirSync(join(store, 'docs', docId)).length, 1, 'the recorded snapshot stays');
    assert.is(hub.uploads.size, 0);
  }));

test('local copies of released documents are a bounded cache: the least recently released go first', async () => {
  const dir = tmp();
  const hub = new MemoryPlacementHub(3000, 2);
  const engine = await Engine.open({
    dataDir: join(dir, 'a'),
    docIdleMs: 40,
    cluster: {
      placement: hub.worker('http://a'),
      store: new DirObjectStore(join(dir, 'objects')),
      snapshotDelayMs: 10,
      keepLocalCopies: 1,
    },
  });
  try {
    const s = await engine.forUser('ada@example.com', 'Ada');
    const ws = await s.personalWorkspace();
    const ids: string[] = [];
    for (const name of ['first', 'second']) {
      const id = await s.createDoc(ws.id, {name});
      await (await s.doc(id)).addRecords('Table1', [{A: name}]);
      ids.push(id);
      // Released once idle (after a snapshot), which makes it a kept local copy.
      await waitFor(() => hub.rows.get(id)!.worker === null, `${name} to be released`);
      assert.is(hub.rows.get(id)!.worker, null, `${name} released`);
    }
    assert.not.ok(existsSync(engine.docPath(ids[0])), 'the older copy is gone (cap 1)');
    assert.ok(existsSync(engine.docPath(ids[1])), 'the newer copy stays');
    // Both still serve: one from its kept copy, the other downloaded again.
    assert.equal(await values(engine, ids[0]), ['first']);
    assert.equal(await values(engine, ids[1]), ['second']);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
