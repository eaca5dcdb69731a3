// Add-or-update's kept column indexes (doc/keyindex.ts, issue 28): after any sequence of writes
// (adds, key and other updates, removals, upserts, rolled-back writes, a transaction with several
// upserts, a formula key column recomputed, a rename), an upsert keyed on a column matches exactly
// the rows a full scan of the table finds.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/internal.js';
import {findMatches} from '../src/doc/lookup.js';
import {loadMeta} from '../src/doc/meta.js';
import type {CellValue} from '@gristlite/formula';
import {seededRandom as rng} from '../src/testing/random.js';

// Values Python equality groups in interesting ways: 1 == 1.0 == True, '1' != 1, lists, null.
const VALUES: CellValue[] = ['a', 'b', 'c', '1', 1, 1.0, true, false, 0, null, 2.5, ['L', 1, 2], ['L', 'a']];

/** Rows of `tableId` whose `colId` equals each probe, by a full scan (no kept index). */
function scanned(doc: GristDoc, tableId: string, colId: string, probes: CellValue[]): number[][] {
  // Probes are strings for Text and anything for Any: values add-or-update keeps as they are.
  return findMatches(
    doc.db,
    loadMeta(doc.db).tables.get(tableId)!,
    [colId],
    probes.map((p) => [p]),
  );
}

/** The same through add-or-update (its kept index), adding and changing nothing. */
function upserted(doc: GristDoc, tableId: string, colId: string, probes: CellValue[]): number[][] {
  return probes.map(
    (p) => doc.upsertRecords(tableId, [{require: {[colId]: p}}], {noadd: true, onmany: 'all'}).recordIds[0] ?? [],
  );
}

/** A new document for `fn`, removed afterwards. */
function withDoc(fn: (doc: GristDoc) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'gl-keyindex-'));
  const doc = GristDoc.create(join(dir, 'k.grist'));
  try {
    fn(doc);
  } finally {
    doc.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

for (const type of ['Any', 'Text']) {
  test(`${type} key: a kept index matches what a scan finds after 300 random writes`, () => {
    withDoc((doc) => {
      doc.addTables([
        {
          id: 'T',
          columns: [
            {id: 'K', fields: {type}},
            {id: 'N', fields: {type: 'Int'}},
            {id: 'F', fields: {type: 'Any', isFormula: true, formula: '$K'}},
          ],
        },
      ]);
      const random = rng(type === 'Any' ? 7 : 11);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
      const value = (): CellValue => (type === 'Text' ? pick(['a', 'b', 'c', 'd', 'e']) : pick(VALUES));
      const probes: CellValue[] = type === 'Text' ? ['a', 'b', 'c', 'd', 'e', 'zz'] : VALUES;
      doc.addRecords(
        'T',
        Array.from({length: 40}, () => ({K: value(), N: 0})),
      );
      const ids = () => doc.fetchRecords('T').records.map((r) => r.id);
      for (let step = 0; step < 300; step++) {
        const live = ids();
        const op = Math.floor(random() * 9);
        const some = () => [...new Set(Array.from({length: 1 + Math.floor(random() * 4)}, () => pick(live)))];
        if (op === 0)
          doc.addRecords(
            'T',
            Array.from({length: 1 + Math.floor(random() * 3)}, () => ({K: value()})),
          );
        else if (op === 1 && live.length)
          doc.updateRecords(
            'T',
            some().map((id) => ({id, fields: {K: value()}})),
          );
        else if (op === 2 && live.length)
          doc.updateRecords(
            'T',
            some().map((id) => ({id, fields: {N: step}})),
          );
        else if (op === 3 && live.length > 5) doc.removeRecords('T', some());
        else if (op === 4) doc.upsertRecords('T', [{require: {K: value()}, fields: {N: step}}]);
        else if (op === 5) {
          // Rolled back: nothing it did may stay in the index.
          assert.throws(() =>
            doc.transaction(() => {
              doc.addRecords('T', [{K: value()}]);
              if (live.length) doc.updateRecords('T', [{id: pick(live), fields: {K: value()}}]);
              throw new Error('undo');
            }),
          );
        } else if (op === 6) {
          // Several upserts in one write: the later ones see the earlier ones' rows.
          doc.transaction(() => {
            doc.upsertRecords('T', [{require: {K: value()}, fields: {N: 1}}]);
            doc.upsertRecords('T', [{require: {K: value()}, fields: {N: 2}}]);
          });
        } else if (op === 7) {
          // Keyed on the formula column: its cells change through recalculation only.
          const probe = value();
          assert.equal(upserted(doc, 'T', 'F', [probe]), scanned(doc, 'T', 'F', [probe]), `step ${step}: F`);
        } else if (op === 8 && step % 50 === 0) {
          // A schema change: the index is dropped and built again under the new name.
          doc.applyUserActions([['RenameColumn', 'T', 'K', 'K2']]);
          doc.applyUserActions([['RenameColumn', 'T', 'K2', 'K']]);
        }
        assert.equal(upserted(doc, 'T', 'K', probes), scanned(doc, 'T', 'K', probes), `step ${step} (op ${op})`);
      }
    });
  });
}

test('the kept index is what answers: the table is not read again for a second upsert', () => {
  withDoc((doc) => {
    doc.addTables([
      {
        id: 'T',
        columns: [
          {id: 'K', fields: {type: 'Text'}},
          {id: 'N', fields: {type: 'Int'}},
        ],
      },
    ]);
    doc.addRecords(
      'T',
      Array.from({length: 1000}, (_, i) => ({K: `k${i}`})),
    );
    doc.upsertRecords('T', [{require: {K: 'k5'}, fields: {N: 1}}]);
    // Every statement that reads K from the whole table, from now on.
    const prepare = doc.db.prepare.bind(doc.db);
    const scans: string[] = [];
    doc.db.prepare = ((sql: string) => {
      if (/SELECT "K" FROM "T" WHERE id > \?/.test(sql)) scans.push(sql);
      return prepare(sql);
    }) as typeof doc.db.prepare;
    const r = doc.upsertRecords('T', [
      {require: {K: 'k7'}, fields: {N: 2}},
      {require: {K: 'new'}, fields: {N: 3}},
    ]);
    assert.equal(r.updateRecordIds, [[8]]);
    assert.equal(r.addRecordIds, [1001]);
    assert.equal(scans, []);
  });
});

test('a write that fails after the index followed it (at its commit) leaves no trace in the index', () => {
  withDoc((doc) => {
    doc.addTables([{id: 'T', columns: [{id: 'K', fields: {type: 'Text'}}]}]);
    doc.addRecords('T', [{K: 'a'}]);
    assert.equal(upserted(doc, 'T', 'K', ['a', 'b']), [[1], []]);
    // The last step before COMMIT (the request's idempotency record) fails: everything rolls back.
    doc.beforeCommit = () => {
      throw new Error('disk full');
    };
    assert.throws(() => doc.addRecords('T', [{K: 'b'}]), /disk full/);
    doc.beforeCommit = null;
    assert.equal(upserted(doc, 'T', 'K', ['a', 'b']), [[1], []]);
    assert.equal(scanned(doc, 'T', 'K', ['a', 'b']), [[1], []]);
  });
});

test('the bound counts what the indexes hold: removed rows leave it, added ones join it', () => {
  withDoc((doc) => {
    doc.addTables([{id: 'T', columns: [{id: 'K', fields: {type: 'Text'}}]}]);
    doc.addRecords(
      'T',
      Array.from({length: 10}, (_, i) => ({K: `k${i}`})),
    );
    const indexes = (doc as unknown as {storage: {keyIndexes: {cells: number}}}).storage.keyIndexes;
    assert.is(indexes.cells, 0);
    upserted(doc, 'T', 'K', ['k1']);
    assert.is(indexes.cells, 10);
    doc.removeRecords('T', [1, 2, 3]);
    assert.is(indexes.cells, 7);
    doc.addRecords('T', [{K: 'x'}, {K: 'y'}]);
    assert.is(indexes.cells, 9);
  });
});

test.run();
