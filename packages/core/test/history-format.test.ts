// Grist's action history format, proven on Grist's own files: every stored body of every corpus
// document decodes and re-encodes byte for byte, and every stored actionHash recomputes from the
// body and its parent's hash (the hash chain is the oracle).
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {checkActionHistory} from '../src/doc/history/chain.js';
import {
  computeActionHash,
  decodeBundle,
  encodeBundle,
  hashAndEncode,
  type ActionBundle,
} from '../src/doc/history/format.js';
import {corpusFiles, fixturePath, FIXTURE_NAMES, withFixtures} from '../src/testing/fixtures.js';

const ftest = withFixtures(test, ['grist', 'corpus']);

function open(path: string): Database.Database | null {
  try {
    const db = new Database(path, {readonly: true, fileMustExist: true});
    db.prepare('SELECT count(*) FROM _gristsys_ActionHistory').get();
    return db;
  } catch {
    return null; // Not a readable Grist document (the corpus holds a few on purpose).
  }
}

ftest('every stored action of the fixtures re-encodes byte for byte and its hash recomputes', () => {
  let docs = 0;
  let actions = 0;
  let verified = 0;
  const problems: string[] = [];
  for (const path of [...FIXTURE_NAMES.map(fixturePath), ...corpusFiles()]) {
    const db = open(path);
    if (!db) continue;
    try {
      const report = checkActionHistory(db);
      docs++;
      actions += report.actions;
      verified += report.verified;
      for (const p of report.problems) problems.push(`${path.split('/').pop()} #${p.actionNum}: ${p.problem}`);
    } finally {
      db.close();
    }
  }
  console.log(`history format: ${docs} documents, ${actions} stored actions, ${verified} verified`);
  assert.ok(docs >= 79, `readable documents: ${docs}`);
  assert.ok(actions > 4000, `stored actions: ${actions}`);
  assert.equal(problems, []);
  assert.is(verified, actions);
});

ftest('a changed body or parent changes the hash', () => {
  const db = open(corpusFiles().find((f) => f.endsWith('/World-v39.grist'))!)!;
  try {
    const row = db
      .prepare('SELECT actionNum, actionHash, body FROM _gristsys_ActionHistory ORDER BY id DESC LIMIT 1')
      .get() as {
      actionNum: number;
      actionHash: string;
      body: Buffer;
    };
    const b = decodeBundle(row.body);
    assert.is(computeActionHash(b), row.actionHash);
    assert.is.not(computeActionHash({...b, parentActionHash: 'x'}), row.actionHash);
    assert.is.not(computeActionHash({...b, actionNum: b.actionNum + 1}), row.actionHash);
    const info = {...b.info[1], user: 'someone@else'};
    assert.is.not(computeActionHash({...b, info: [b.info[0], info]}), row.actionHash);
    // Undo and user actions are outside the hash, as in Grist.
    assert.is(computeActionHash({...b, undo: [], userActions: []} as ActionBundle), row.actionHash);
  } finally {
    db.close();
  }
});

const BUNDLE_KEYS = 'actionHash,actionNum,calc,envelopes,info,parentActionHash,stored,undo,userActions';

ftest('the one-pass hashAndEncode writes the bodies and hashes Grist stored', () => {
  let checked = 0;
  for (const path of corpusFiles()) {
    const db = open(path);
    if (!db) continue;
    try {
      const rows = db.prepare('SELECT actionHash, body FROM _gristsys_ActionHistory').all() as Array<{
        actionHash: string;
        body: Buffer;
      }>;
      for (const row of rows) {
        const b = decodeBundle(row.body);
        if (Object.keys(b).sort().join() !== BUNDLE_KEYS || b.stored.some(([env]) => env !== 0)) continue;
        const body = hashAndEncode({...b, actionHash: null});
        assert.is(body.toString('hex'), row.body.toString('hex'), `${path.split('/').pop()} #${b.actionNum}`);
        assert.is(computeActionHash(b), row.actionHash);
        checked++;
      }
    } finally {
      db.close();
    }
  }
  assert.ok(checked > 2000, `bundles checked: ${checked}`);
});

test('hashAndEncode, with user actions that are the stored actions, equals hashing then encoding', () => {
  const rows = Array.from({length: 400}, (_, i) => i + 1);
  for (const parent of [null, 'ab'.repeat(32)]) {
    for (const n of [0, 1, 3]) {
      const actions: Array<[string, ...unknown[]]> = Array.from({length: n}, (_, k) => [
        'BulkAddRecord',
        `T${k}`,
        rows,
        {Name: rows.map((r) => `näme-${r}`), Qty: rows.map((r) => (r % 7 ? r * 1.5 : null)), manualSort: rows},
      ]);
      const bundle: ActionBundle = {
        actionNum: 7,
        actionHash: null,
        parentActionHash: parent,
        envelopes: [{recipients: ['#ALL']}],
        info: [0, {time: 1_700_000_000_000, user: 'a@b.c', inst: 'unset-inst', desc: null, otherId: 0, linkId: 0}],
        stored: actions.map((a) => [0, a] as [number, [string, ...unknown[]]]),
        calc: [],
        userActions: actions,
        undo: actions.map((a) => ['BulkRemoveRecord', a[1], rows] as [string, ...unknown[]]),
      };
      const hash = computeActionHash(bundle);
      const expected = encodeBundle({...bundle, actionHash: hash});
      const body = hashAndEncode(bundle);
      assert.is(bundle.actionHash, hash);
      assert.is(body.toString('hex'), expected.toString('hex'), `parent ${parent}, ${n} actions`);
    }
  }
});

test('encoding sorts dict keys and keeps byte strings as byte strings', () => {
  const bundle: ActionBundle = {
    actionNum: 1,
    actionHash: null,
    parentActionHash: null,
    envelopes: [],
    info: [0, {time: 1, user: 'grist', inst: '', desc: null, otherId: 0, linkId: 0}],
    stored: [[0, ['UpdateRecord', 'T', 1, {b: new Uint8Array([1, 2]), a: -0, c: 2 ** 40}]]],
    calc: [],
    userActions: [],
    undo: [],
  };
  const body = encodeBundle(bundle);
  const again = decodeBundle(body);
  assert.equal(encodeBundle(again), body);
  const cells = (again.stored[0][1] as unknown[])[3] as Record<string, unknown>;
  assert.equal(Object.keys(cells), ['a', 'b', 'c']);
  assert.ok(cells.b instanceof Uint8Array);
  assert.ok(Object.is(cells.a, -0));
  // Keys are written sorted: 'actionHash' is the first key after the dict code.
  assert.is(body.subarray(1, 6).toString('latin1'), 'u\x0a\x00\x00\x00');
  assert.is(body.subarray(6, 16).toString(), 'actionHash');
});

test('a body that is not a bundle is refused', () => {
  assert.throws(() => decodeBundle(Buffer.from([0x69, 1, 0, 0, 0])), /not a bundle/);
  assert.throws(() => decodeBundle(Buffer.from([0x7b])), /not marshalled/);
});

test.run();
