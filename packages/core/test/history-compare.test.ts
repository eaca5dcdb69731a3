// `/compare` details from real history: Grist's ActionSummary of the actions between two states
// (expected answers from Grist's own tests, test/server/lib/docapi/DocApiDocuments.ts), their
// composition, and refs read as Grist's HashUtil reads them.
import {mkdtempSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {docStates, historyChanges, stateOffset} from '../src/engine/lifecycle.js';
import {composeSummaries, summarizeBundle} from '../src/doc/history/summary.js';

function newDoc(): GristDoc {
  const path = join(mkdtempSync(join(tmpdir(), 'gl-compare-')), 'doc.grist');
  GristDoc.create(path).close();
  return GristDoc.open(path);
}

test("changes within a document, as Grist's test expects them", () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 'a1', B: 'b1'}]);
    doc.addRecords('Table1', [{A: 'a2', B: 'b2'}]);
    doc.updateRecords('Table1', [{id: 1, fields: {A: 'A1'}}]);
    let comp = historyChanges(doc.db, 'HEAD~', 'HEAD', undefined);
    assert.is(comp.summary, 'right');
    assert.equal(comp.parent, comp.left);
    assert.equal([comp.left.n, comp.right.n], [3, 4]);
    assert.equal(comp.details!.leftChanges, {tableRenames: [], tableDeltas: {}});
    assert.equal(comp.details!.rightChanges, {
      tableRenames: [],
      tableDeltas: {
        Table1: {
          updateRows: [1],
          removeRows: [],
          addRows: [],
          columnDeltas: {A: {1: [['a1'], ['A1']]}},
          columnRenames: [],
        },
      },
    });
    assert.equal(historyChanges(doc.db, comp.left.h, comp.right.h, undefined), comp, 'hashes name the same states');
    comp = historyChanges(doc.db, 'HEAD', 'HEAD', undefined);
    assert.is(comp.summary, 'same');
    assert.equal(comp.details!.rightChanges, {tableRenames: [], tableDeltas: {}});
    comp = historyChanges(doc.db, 'HEAD~~', 'HEAD', undefined);
    assert.equal([comp.left.n, comp.right.n], [2, 4]);
    assert.equal(comp.details!.rightChanges, {
      tableRenames: [],
      tableDeltas: {
        Table1: {
          updateRows: [1],
          removeRows: [],
          addRows: [2],
          columnDeltas: {
            A: {1: [['a1'], ['A1']], 2: [null, ['a2']]},
            B: {2: [null, ['b2']]},
            manualSort: {2: [null, [2]]},
          },
          columnRenames: [],
        },
      },
    });
  } finally {
    doc.close();
  }
});

test('a bulk change keeps the cells of maxRows rows (the first and the last), or all', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 0}, {A: 1}]);
    doc.addRecords(
      'Table1',
      Array.from({length: 98}, (_, i) => ({A: i + 2})),
    );
    const ids = Array.from({length: 98}, (_, i) => i + 3);
    const kept = [...ids.slice(0, 9), 100];
    const truncated = historyChanges(doc.db, 'HEAD~', 'HEAD', undefined).details!.rightChanges.tableDeltas.Table1;
    assert.equal(truncated.addRows, ids);
    assert.equal(Object.keys(truncated.columnDeltas.A).map(Number), kept);
    assert.equal(truncated.columnDeltas.A[100], [null, [99]]);
    assert.is(truncated.mayBeIncomplete, true);
    for (const maxRows of [100, null]) {
      const full = historyChanges(doc.db, 'HEAD~', 'HEAD', maxRows).details!.rightChanges.tableDeltas.Table1;
      assert.equal(Object.keys(full.columnDeltas.A).map(Number), ids);
      assert.is(full.mayBeIncomplete, undefined);
    }
  } finally {
    doc.close();
  }
});

test('schema changes: tables and columns added, renamed and removed are keyed by their final names', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 'x'}]);
    doc.applyUserActions([['AddTable', 'T2', [{id: 'X', type: 'Text'}]]]);
    doc.applyUserActions([
      ['RenameColumn', 'Table1', 'A', 'AA'],
      ['UpdateRecord', 'Table1', 1, {AA: 'y'}],
    ]);
    doc.applyUserActions([['RenameTable', 'Table1', 'People']]);
    doc.applyUserActions([['RemoveTable', 'T2']]);
    const s = historyChanges(doc.db, 'HEAD~~~~', 'HEAD', undefined).details!.rightChanges;
    // T2 came and went: no trace of it.
    assert.equal(s.tableRenames, [['Table1', 'People']]);
    assert.ok(!('T2' in s.tableDeltas) && !('-T2' in s.tableDeltas), Object.keys(s.tableDeltas).join());
    const people = s.tableDeltas.People;
    assert.equal(people.columnRenames, [['A', 'AA']]);
    assert.equal(people.columnDeltas.AA, {1: [['x'], ['y']]});
    assert.equal(people.updateRows, [1]);
  } finally {
    doc.close();
  }
});

test('composition: rows added then removed vanish; updates chain their before and after', () => {
  const a = summarizeBundle([['BulkAddRecord', 'T', [1, 2], {A: ['p', 'q']}]], [['BulkRemoveRecord', 'T', [1, 2]]]);
  const b = summarizeBundle(
    [
      ['BulkUpdateRecord', 'T', [1], {A: ['r']}],
      ['BulkRemoveRecord', 'T', [2]],
    ],
    [
      ['BulkUpdateRecord', 'T', [1], {A: ['p']}],
      ['BulkAddRecord', 'T', [2], {A: ['q']}],
    ],
  );
  assert.equal(composeSummaries(a, b).tableDeltas.T, {
    updateRows: [],
    removeRows: [],
    addRows: [1],
    columnDeltas: {A: {1: [null, ['r']]}},
    columnRenames: [],
  });
});

test('refs: HEAD, hashes, ~n and ^; unknown hashes, bad refs and wrong order are 400', () => {
  const doc = newDoc();
  try {
    for (let i = 0; i < 3; i++) doc.addRecords('Table1', [{A: String(i)}]);
    const {states} = docStates(doc.db);
    assert.is(stateOffset(states, 'HEAD'), 0);
    assert.is(stateOffset(states, 'HEAD^'), 1);
    assert.is(stateOffset(states, 'HEAD^1^1'), 2);
    assert.is(stateOffset(states, 'HEAD~3'), 3);
    assert.is(stateOffset(states, `${states[1].h}~`), 2);
    for (const bad of ['nope', `${states[0].h}x`, 'HEAD~4', 'HEAD~99999999999999999999']) {
      assert.throws(
        () => stateOffset(states, bad),
        (e: Error & {status?: number}) => e.message === 'Cannot read hash' && e.status === 400,
        bad,
      );
    }
    assert.throws(() => stateOffset(states, 'HEAD^2'), /cannot parse hash/);
    assert.throws(
      () => historyChanges(doc.db, 'HEAD', 'HEAD~', undefined),
      /Comparisons currently require left to be an ancestor of right/,
    );
  } finally {
    doc.close();
  }
});

test.run();
