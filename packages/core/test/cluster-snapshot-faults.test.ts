// Issue 22: an acknowledged write must never become unreadable. Each step of a snapshot (upload,
// read-back check, record, prune) fails once here, the record also with its COMMIT done but the
// answer lost; then the holder dies and another worker must read every acknowledged write.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  DirObjectStore,
  Engine,
  MemoryPlacementHub,
  SqliteHomeStore,
  type ObjectStore,
  type Placement,
} from '../src/internal.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Which step fails, once, in the snapshot after the fault is armed. */
type Fault =
  | 'upload-refused' // putFile fails, nothing stored
  | 'upload-answer-lost' // putFile stored the object, then failed
  | 'upload-corrupt' // the store keeps other bytes than were sent, and says OK
  | 'verify-unreachable' // reading the object back fails
  | 'record-refused' // recordSnapshot fails before its commit
  | 'record-answer-lost' // recordSnapshot committed, then the answer was lost (ambiguous commit)
  | 'prune-fails' // deleting old snapshots fails
  | 'newest-lost'; // the newest recorded snapshot's object vanishes afterwards (restore falls back)

interface Rig {
  a: Engine;
  b: Engine;
  hub: MemoryPlacementHub;
  objects: DirObjectStore;
  /** Arms a fault for the next snapshot of `a`; after it fires, the object store refuses uploads. */
  arm(f: Fault): void;
  fired(): boolean;
  storeUp(up: boolean): void;
  errors: string[];
}

async function rig(fn: (r: Rig) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-snapfaults-'));
  const hub = new MemoryPlacementHub(3000, 2);
  const objects = new DirObjectStore(join(dir, 'objects'));
  let armed: Fault | null = null;
  let fired = false;
  let uploadsUp = true;
  const fire = (f: Fault) => {
    if (armed !== f) return false;
    armed = null;
    fired = true;
    return true;
  };
  const faultyStore: ObjectStore = new Proxy(objects, {
    get(t, name, recv) {
      if (name === 'putFile')
        return async (key: string, path: string) => {
          if (!uploadsUp) throw new Error('connect ECONNREFUSED (object store restarting)');
          if (fire('upload-refused')) throw new Error('connect ECONNREFUSED');
          await t.putFile(key, path);
          if (fire('upload-answer-lost')) throw new Error('socket hang up');
          if (fire('upload-corrupt')) writeFileSync(join(t.dir, key), 'not the document');
        };
      if (name === 'delete')
        return async (keys: string[]) => {
          if (fire('prune-fails')) throw new Error('connect ECONNREFUSED');
          return t.delete(keys);
        };
      if (name === 'digest')
        return async (key: string) => {
          if (fire('verify-unreachable')) throw new Error('connect ECONNREFUSED');
          return (t as unknown as {digest(k: string): Promise<unknown>}).digest(key);
        };
      const v = Reflect.get(t, name, recv);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  const pa = hub.worker('http://a');
  const faultyPlacement: Placement = new Proxy(pa, {
    get(t, name, recv) {
      if (name === 'recordSnapshot')
        return async (...args: Parameters<Placement['recordSnapshot']>) => {
          if (fire('record-refused')) throw new Error('Connection terminated unexpectedly');
          const r = await t.recordSnapshot(...args);
          if (fire('record-answer-lost')) throw new Error('Query read timeout');
          return r;
        };
      const v = Reflect.get(t, name, recv);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  const errors: string[] = [];
  const home = new SqliteHomeStore(join(dir, 'home.sqlite3'));
  const keep = {close: async () => {}} as unknown as SqliteHomeStore;
  const a = await Engine.open({
    dataDir: join(dir, 'a'),
    home,
    cluster: {placement: faultyPlacement, store: faultyStore, snapshotDelayMs: 30},
    onError: (e, what) => errors.push(`${what}: ${(e as Error).message}`),
  });
  const b = await Engine.open({
    dataDir: join(dir, 'b'),
    home: Object.assign(Object.create(home), keep),
    cluster: {placement: hub.worker('http://b'), store: objects, snapshotDelayMs: 30},
    onError: (e, what) => errors.push(`${what}: ${(e as Error).message}`),
  });
  try {
    await fn({
      a,
      b,
      hub,
      objects,
      arm: (f) => {
        armed = f;
        fired = false;
      },
      fired: () => fired,
      storeUp: (up) => {
        uploadsUp = up;
      },
      errors,
    });
  } finally {
    await b.close().catch(() => {});
    await a.close().catch(() => {});
    rmSync(dir, {recursive: true, force: true});
  }
}

const values = async (e: Engine, docId: string) =>
  (await (await e.forUser('ada@example.com')).doc(docId)).fetchRecords('Table1').then((r) => r.map((x) => x.fields.A));

/** Writes at `a`, takes snapshots around a fault, kills `a`; `b` must read every acknowledged write. */
async function survives(fault: Fault): Promise<void> {
  await rig(async (r) => {
    const sa = await r.a.forUser('ada@example.com', 'Ada');
    const docId = await sa.createDoc((await sa.personalWorkspace()).id, {name: fault});
    const da = await sa.doc(docId);
    const acked: string[] = [];
    const write = async (v: string) => {
      await da.addRecords('Table1', [{A: v}]);
      acked.push(v);
    };
    const snapshot = () => r.a.withDoc(docId, (d) => d.replica!.snapshot()).catch(() => {});
    // Two good snapshots first, so there is history to prune and to fall back on.
    for (let i = 0; i < 2; i++) {
      await write(`before${i}`);
      await snapshot();
    }
    if (fault === 'newest-lost') {
      await write('covered');
      await snapshot();
      const newest = r.hub.rows.get(docId)!.snapshot!.key;
      await write('after');
      r.storeUp(false); // no newer snapshot rescues it
      await r.objects.delete([newest]);
    } else {
      r.arm(fault);
      await write('during');
      for (let i = 0; i < 20 && !r.fired(); i++) await snapshot();
      assert.ok(r.fired(), `the fault ${fault} fired`);
      // The store goes away right after (as it restarts): no later snapshot may paper over damage.
      r.storeUp(false);
      await write('after');
      await sleep(80); // failing snapshot retries meanwhile
    }
    r.hub.kill('http://a');
    let got: unknown[] | null = null;
    let last: unknown = null;
    for (let i = 0; i < 5 && !got; i++) {
      got = await values(r.b, docId).catch((e) => {
        last = e;
        return null;
      });
      if (!got) await sleep(50);
    }
    assert.ok(got, `the document is readable after ${fault}: ${(last as Error)?.message}\n${r.errors.join('\n')}`);
    for (const v of acked) assert.ok(got!.includes(v), `acknowledged write ${v} survives ${fault}`);
    assert.is(new Set(got).size, got!.length, 'no duplicates');
    if (fault === 'newest-lost') {
      assert.is(r.b.cluster!.damagedSnapshots, 1, 'the damage is counted');
      assert.ok(
        r.errors.some((m) => /snapshot damaged; restored from/.test(m)),
        'and logged',
      );
    } else {
      assert.is(r.b.cluster!.damagedSnapshots, 0);
      const row = r.hub.rows.get(docId)!;
      for (const snap of [row.snapshot!, ...row.history])
        assert.ok(await r.objects.digest(snap.key), `recorded snapshot ${snap.key} is in the store`);
    }
    r.storeUp(true);
    // And the document goes on: writes at the new holder, then its snapshot.
    await (await (await r.b.forUser('ada@example.com')).doc(docId)).addRecords('Table1', [{A: 'at b'}]);
    await r.b.withDoc(docId, (d) => d.replica!.snapshot());
    assert.ok((await values(r.b, docId)).includes('at b'));
  });
}

for (const f of [
  'upload-refused',
  'upload-answer-lost',
  'upload-corrupt',
  'verify-unreachable',
  'record-refused',
  'record-answer-lost',
  'prune-fails',
  'newest-lost',
] as Fault[]) {
  test(`snapshot fault ${f}: every acknowledged write stays readable`, () => survives(f));
}

test.run();
