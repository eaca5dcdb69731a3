// The numbers a column holds (colstats.ts `range`), which let a `where` translation prove cases
// empty, are kept across the engine's writes and widened by what they store, rather than scanned
// again after every write: a condition read after a write must see the values it wrote.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';

test('a where condition after writes that leave the range (fractions, larger, text) sees them', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'T', columns: [{id: 'N', fields: {type: 'Numeric'}}]},
    {id: 'Other', columns: [{id: 'X', fields: {type: 'Int'}}]},
  ]);
  doc.addRecords('T', [{N: 1}, {N: 2}, {N: 3}]);
  const ids = (w: string) => doc.whereIds('T', w);
  // The range is read (whole numbers 1..3), then kept across a write to another table.
  assert.equal(ids('$N == 2'), [2]);
  assert.equal(ids('$N == 2.5'), []);
  doc.addRecords('Other', [{X: 1}]);
  assert.equal(ids('$N > 2'), [3]);
  // A fraction: the range is no longer whole.
  doc.updateRecords('T', [{id: 2, fields: {N: 2.5}}]);
  assert.equal(ids('$N == 2.5'), [2]);
  // Beyond its bounds, an insert.
  doc.addRecords('T', [{N: 1e12}, {N: -7}]);
  assert.equal(ids('$N > 1e11'), [4]);
  assert.equal(ids('$N < 0'), [5]);
  // Text that SQLite's numeric affinity could store as a number: the range is read again.
  doc.updateRecords('T', [{id: 1, fields: {N: 'abc'}}]);
  assert.equal(ids('$N == 1'), []);
  assert.equal(ids('$N is None or $N < 0'), [5]);
  // Each answer matches the formula engine's.
  for (const w of ['$N == 2.5', '$N > 1e11', '$N < 0', '$N == 3', '$N > 2']) {
    assert.equal(ids(w), doc.whereIds('T', w, {forceEngine: true}), w);
  }
  doc.close();
});

test('a fraction written to an Int column, a number beyond dates to a Date column: SQL still agrees with the engine', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'I', fields: {type: 'Int'}},
        {id: 'D', fields: {type: 'Date'}},
      ],
    },
  ]);
  doc.addRecords('T', [
    {I: 1, D: 0},
    {I: 2, D: 86400},
    {I: 3, D: 2 * 86400},
  ]);
  const conds = ['$I > 1', '$I == 2', 'not ($I > 1)', '$D > DATE(1970, 1, 1)', '$D'];
  const same = (when: string) => {
    for (const w of conds)
      assert.equal(doc.whereIds('T', w), doc.whereIds('T', w, {forceEngine: true}), `${when}: ${w}`);
  };
  same('before');
  // Values the translation reads by the range (a whole Int, a Date within dates' bounds) are no longer so.
  doc.updateRecords('T', [{id: 2, fields: {I: 2.5, D: 1e15}}]);
  same('after');
  doc.close();
});

test.run();
