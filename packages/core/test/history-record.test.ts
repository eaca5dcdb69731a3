// Each committed write appends one action bundle to Grist's history (D120): numbered and hashed
// after its parent, with the stored actions, their undo and the user; documents Grist wrote keep
// their chain; pruning follows Grist's limits; a rolled-back write records nothing.
import Database from 'better-sqlite3';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc, marshalDumps} from '../src/doc/index.js';
import {Engine} from '../src/engine/engine.js';
import type {DocMeta} from '../src/doc/meta.js';
import {checkActionHistory} from '../src/doc/history/chain.js';
import {decodeBundle, type ActionBundle} from '../src/doc/history/format.js';
import {historySettingsFromEnv, type HistorySettings} from '../src/doc/history/recorder.js';
import {groupChanged, readRows} from '../src/doc/history/rows.js';
import {copyFixture, corpusFiles, withFixtures} from '../src/testing/fixtures.js';

const ftest = withFixtures(test, ['grist', 'corpus']);

function newDoc(history?: HistorySettings): GristDoc {
  const path = join(mkdtempSync(join(tmpdir(), 'gl-history-')), 'doc.grist');
  GristDoc.create(path).close();
  return GristDoc.open(path, {history});
}

function bundles(db: Database.Database): Array<ActionBundle & {id: number; parentRef: number | null}> {
  const rows = db.prepare('SELECT id, parentRef, body FROM _gristsys_ActionHistory ORDER BY id').all() as Array<{
    id: number;
    parentRef: number | null;
    body: Buffer;
  }>;
  return rows.map((r) => ({...decodeBundle(r.body), id: r.id, parentRef: r.parentRef}));
}

function tips(db: Database.Database): Record<string, number | null> {
  const rows = db.prepare('SELECT name, actionRef FROM _gristsys_ActionHistoryBranch').all() as Array<{
    name: string;
    actionRef: number | null;
  }>;
  return Object.fromEntries(rows.map((r) => [r.name, r.actionRef]));
}

test('a new document starts a chain as Grist does: an empty first action, then one bundle per write', () => {
  const doc = newDoc();
  try {
    assert.is(bundles(doc.db).length, 0, 'creating a document records nothing');
    doc.addRecords('Table1', [{A: 'a'}, {A: 'b'}]);
    const b = bundles(doc.db);
    assert.is(b.length, 2);
    assert.equal([b[0].actionNum, b[0].parentActionHash, b[0].stored, b[0].envelopes], [1, null, [], []]);
    assert.is(b[0].info[1].user, 'grist');
    assert.is(b[1].actionNum, 2);
    assert.is(b[1].parentActionHash, b[0].actionHash);
    assert.is(b[1].parentRef, b[0].id);
    assert.equal(b[1].envelopes, [{recipients: ['#ALL']}]);
    const add = b[1].stored.map(([, a]) => a).find((a) => a[0] === 'BulkAddRecord' && a[1] === 'Table1');
    assert.ok(add, 'the added rows are a stored BulkAddRecord');
    assert.equal(add[2], [1, 2]);
    assert.equal((add[3] as Record<string, unknown>).A, ['a', 'b']);
    assert.ok(
      b[1].undo.some((a) => JSON.stringify(a) === '["BulkRemoveRecord","Table1",[1,2]]'),
      JSON.stringify(b[1].undo),
    );
    assert.equal(tips(doc.db), {shared: b[1].id, local_sent: b[1].id, local_unsent: b[1].id});
    assert.equal(checkActionHistory(doc.db).problems, []);
  } finally {
    doc.close();
  }
});

test('an update stores the new cells and undoes to the old ones; the user and API key are in the info', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 'old', B: 1}]);
    const who = doc.as(null, {userId: 5, email: 'ann@example.com', name: 'Ann', apiKeyId: 7});
    who.updateRecords('Table1', [{id: 1, fields: {A: 'new'}}]);
    const last = bundles(doc.db).at(-1)!;
    assert.equal(
      last.stored.map(([, a]) => a),
      [['BulkUpdateRecord', 'Table1', [1], {A: ['new']}]],
    );
    // One row: the single form, as Grist's simplify() leaves undo actions.
    assert.equal(last.undo, [['UpdateRecord', 'Table1', 1, {A: 'old'}]]);
    assert.is(last.info[1].user, 'ann@example.com');
    assert.is(last.info[1].apiKeyId, 7);
    assert.equal(last.userActions, [['BulkUpdateRecord', 'Table1', [1], {A: ['new']}]]);
    assert.equal(checkActionHistory(doc.db).problems, []);
  } finally {
    doc.close();
  }
});

test('/apply records the user actions as given, their formula results, and answers the recorded hash', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{B: 2}]);
    const actions = [['AddColumn', 'Table1', 'D', {type: 'Numeric', isFormula: true, formula: '$B * 10'}]];
    const r = doc.applyUserActions(actions);
    const last = bundles(doc.db).at(-1)!;
    assert.is(r.actionNum, last.actionNum);
    assert.is(r.actionHash, last.actionHash);
    assert.equal(last.userActions, actions);
    const stored = last.stored.map(([, a]) => a);
    assert.equal(stored[0], ['AddColumn', 'Table1', 'D', {type: 'Numeric', isFormula: true, formula: '$B * 10'}]);
    assert.ok(
      stored.some((a) => a[0] === 'BulkUpdateRecord' && a[1] === 'Table1' && JSON.stringify(a[3]) === '{"D":[20]}'),
    );
    // Undo in the order of the actions, as Grist stores it (it applies them last to first).
    assert.equal(last.undo.at(0), ['RemoveColumn', 'Table1', 'D']);
    // A bundle that changes nothing is still an action in Grist (stored empty).
    const none = doc.applyUserActions([['BulkUpdateRecord', 'Table1', [], {}]]);
    assert.is(none.actionNum, r.actionNum + 1);
    assert.equal(bundles(doc.db).at(-1)!.stored, []);
  } finally {
    doc.close();
  }
});

test('schema actions: renames, removals and modifications are stored with their inverses', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 'x', B: 3}]);
    doc.applyUserActions([
      ['RenameColumn', 'Table1', 'B', 'BB'],
      ['RemoveRecord', 'Table1', 1],
      ['RenameTable', 'Table1', 'People'],
    ]);
    const last = bundles(doc.db).at(-1)!;
    const stored = last.stored.map(([, a]) => a);
    assert.ok(
      stored.some((a) => JSON.stringify(a) === '["RenameColumn","People","B","BB"]'),
      JSON.stringify(stored),
    );
    assert.ok(stored.some((a) => JSON.stringify(a) === '["RenameTable","Table1","People"]'));
    const readd = last.undo.find((a) => a[0] === 'AddRecord' && a[1] === 'People');
    assert.ok(readd, 'removing a row is undone by adding it back with its cells');
    assert.equal((readd[3] as Record<string, unknown>).A, 'x');
    assert.equal(checkActionHistory(doc.db).problems, []);
  } finally {
    doc.close();
  }
});

// As Grist 1.7.17 stored the undo of the same writes (compared on its files, D124): RemoveColumn
// is undone by a BulkUpdateRecord of the column's cells that are not the default (formula columns
// too; UpdateRecord for one row, nothing for none) stored before AddColumn; RemoveTable by a
// BulkAddRecord of every row with every column, formula ones too, stored before AddTable. Grist
// applies undo actions last to first.
test('removed columns and tables are undone with their cells, as Grist records them (D124)', () => {
  const doc = newDoc();
  try {
    doc.addColumns('Table1', [{id: 'F', fields: {isFormula: true, formula: '$B * 2', type: 'Numeric'}}]);
    doc.addRecords('Table1', [
      {A: 'x', B: 3},
      {A: '', B: 0},
      {A: 'z', B: 5},
    ]);
    doc.applyUserActions([['RemoveColumn', 'Table1', 'A']]);
    let undo = bundles(doc.db).at(-1)!.undo;
    const addAt = undo.findIndex((a) => a[0] === 'AddColumn' && a[2] === 'A');
    const fill = undo.findIndex((a) => a[0] === 'BulkUpdateRecord' && a[1] === 'Table1');
    assert.ok(fill >= 0 && addAt === fill + 1, JSON.stringify(undo));
    // Row 2 held the default: left out.
    assert.equal(undo[fill], ['BulkUpdateRecord', 'Table1', [1, 3], {A: ['x', 'z']}]);
    // A formula column: its computed cells (row 2's is the default); Grist stored the same.
    doc.applyUserActions([['RemoveColumn', 'Table1', 'F']]);
    undo = bundles(doc.db).at(-1)!.undo;
    assert.ok(
      undo.some((a) => JSON.stringify(a) === '["BulkUpdateRecord","Table1",[1,3],{"F":[6,10]}]'),
      JSON.stringify(undo),
    );
    // One non-default cell: the single form.
    doc.updateRecords('Table1', [
      {id: 1, fields: {B: 0}},
      {id: 3, fields: {B: 0}},
    ]);
    doc.updateRecords('Table1', [{id: 2, fields: {B: 7}}]);
    doc.applyUserActions([['RemoveColumn', 'Table1', 'B']]);
    undo = bundles(doc.db).at(-1)!.undo;
    assert.ok(
      undo.some((a) => JSON.stringify(a) === '["UpdateRecord","Table1",2,{"B":7}]'),
      JSON.stringify(undo),
    );
    doc.addTables([
      {
        id: 'T2',
        columns: [
          {id: 'N', fields: {type: 'Int'}},
          {id: 'G', fields: {isFormula: true, formula: '$N + 1'}},
        ],
      },
    ]);
    doc.addRecords('T2', [{N: 1}, {N: 2}]);
    doc.applyUserActions([['RemoveTable', 'T2']]);
    undo = bundles(doc.db).at(-1)!.undo;
    const addTable = undo.findIndex((a) => a[0] === 'AddTable' && a[1] === 'T2');
    const rows = undo.findIndex((a) => a[0] === 'BulkAddRecord' && a[1] === 'T2');
    assert.ok(rows >= 0 && addTable === rows + 1, JSON.stringify(undo));
    assert.equal(undo[rows][2], [1, 2]);
    const cells = undo[rows][3] as Record<string, unknown[]>;
    assert.equal(
      [cells.N, cells.G, cells.manualSort],
      [
        [1, 2],
        [2, 3],
        [1, 2],
      ],
    );
    assert.equal(checkActionHistory(doc.db).problems, []);
  } finally {
    doc.close();
  }
});

test('a removal with more cells than GRISTLITE_HISTORY_MAX_UNDO_CELLS is undone by its structure alone', () => {
  const doc = newDoc({maxUndoCells: 2});
  try {
    doc.addRecords('Table1', [{A: 'x'}, {A: 'y'}, {A: 'z'}]);
    doc.applyUserActions([['RemoveColumn', 'Table1', 'A']]);
    const undo = bundles(doc.db).at(-1)!.undo;
    assert.ok(undo.some((a) => a[0] === 'AddColumn' && a[2] === 'A'));
    assert.not.ok(
      undo.some((a) => a[0] === 'BulkUpdateRecord'),
      JSON.stringify(undo),
    );
  } finally {
    doc.close();
  }
});

test('a write that fails records nothing', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 'x'}]);
    const n = bundles(doc.db).length;
    assert.throws(() =>
      doc.applyUserActions([
        ['UpdateRecord', 'Table1', 1, {A: 'y'}],
        ['RemoveTable', 'Nope'],
      ]),
    );
    assert.is(bundles(doc.db).length, n);
    const r = doc.applyUserActions([['UpdateRecord', 'Table1', 1, {A: 'z'}]]);
    assert.is(r.actionNum, n + 1, 'numbering continues from what was committed');
  } finally {
    doc.close();
  }
});

test('a write undone after its action was recorded leaves the chain as committed; the next links to the committed tip', () => {
  const doc = newDoc();
  try {
    doc.addRecords('Table1', [{A: 'x'}]);
    const committed = bundles(doc.db).at(-1)!;
    // The last step of a write, after its bundle was appended (the request's idempotency key).
    doc.beforeCommit = () => {
      throw new Error('key taken');
    };
    assert.throws(() => doc.updateRecords('Table1', [{id: 1, fields: {A: 'y'}}]), /key taken/);
    doc.beforeCommit = null;
    assert.is(bundles(doc.db).at(-1)!.id, committed.id);
    doc.updateRecords('Table1', [{id: 1, fields: {A: 'z'}}]);
    const mine = bundles(doc.db).at(-1)!;
    assert.is(mine.actionNum, committed.actionNum + 1);
    assert.is(mine.parentRef, committed.id);
    assert.is(mine.parentActionHash, committed.actionHash);
    assert.equal(checkActionHistory(doc.db).problems, []);
  } finally {
    doc.close();
  }
});

test('actions another connection appended: the next write links to them, and pruning counts them', () => {
  // 17.5 actions allowed (Grist's 1.25 grace over 14), checked every 10th.
  const doc = newDoc({maxRows: 14});
  try {
    doc.addRecords('Table1', [{A: 'x'}]);
    for (let n = 3; n <= 10; n++) doc.updateRecords('Table1', [{id: 1, fields: {A: `a${n}`}}]);
    assert.is(bundles(doc.db).length, 10, 'counted at the 10th, not pruned');
    // Another connection (a tool, or Grist on the file) continues the chain with four actions.
    const other = new Database(doc.path);
    let last = bundles(other).at(-1)!;
    const body = other.prepare('SELECT body FROM _gristsys_ActionHistory WHERE id = ?').pluck().get(last.id) as Buffer;
    let tipId = last.id;
    for (let k = 1; k <= 4; k++) {
      tipId = Number(
        other
          .prepare('INSERT INTO _gristsys_ActionHistory (actionHash, parentRef, actionNum, body) VALUES (?, ?, ?, ?)')
          .run(String(k).repeat(64), tipId, last.actionNum + k, body).lastInsertRowid,
      );
    }
    other.prepare('UPDATE _gristsys_ActionHistoryBranch SET actionRef = ?').run(tipId);
    other.close();
    doc.updateRecords('Table1', [{id: 1, fields: {A: 'z'}}]);
    last = bundles(doc.db).at(-1)!;
    assert.is(last.actionNum, 15);
    assert.is(last.parentRef, tipId);
    assert.is(last.parentActionHash, '4'.repeat(64));
    // At the 20th: 20 in the chain, over 17.5 (a count of only its own appends, 16, would not prune).
    for (let n = 16; n <= 20; n++) doc.updateRecords('Table1', [{id: 1, fields: {A: `b${n}`}}]);
    assert.equal(
      doc.db.prepare('SELECT actionNum FROM _gristsys_ActionHistory ORDER BY id').pluck().all(),
      [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    );
  } finally {
    doc.close();
  }
});

test('history can be turned off: nothing is recorded', () => {
  const doc = newDoc({enabled: false});
  try {
    doc.addRecords('Table1', [{A: 'x'}]);
    doc.applyUserActions([['UpdateRecord', 'Table1', 1, {A: 'y'}]]);
    assert.is(bundles(doc.db).length, 0);
  } finally {
    doc.close();
  }
});

test('a formula column added over existing rows is undone to the cells a read gives, for every type', () => {
  const doc = newDoc();
  try {
    doc.addTables([{id: 'T', columns: [{id: 'A', fields: {type: 'Int'}}]}]);
    doc.addRecords('T', [{A: 1}, {A: 2}, {A: 0}, {A: -3}]);
    const types = ['Text', 'Int', 'Numeric', 'Bool', 'Date', 'DateTime:UTC', 'Choice', 'ChoiceList', 'Any'];
    types.push('Ref:T', 'RefList:T', 'Attachments', 'PositionNumber');
    for (const type of types) {
      // What a column of the type holds in existing rows when added (read as the history reads).
      doc.addColumns('T', [{id: 'G', fields: {type}}]);
      const table = (doc as unknown as {storage: {meta: DocMeta}}).storage.meta.tables.get('T')!;
      const read = readRows((sql) => doc.db.prepare(sql), table, [1, 2, 3, 4], ['G']).map((r) => r.G);
      doc.removeColumn('T', 'G');
      // Added as a formula in one write: its first change is captured without reading the column.
      doc.addColumns('T', [{id: 'F', fields: {type, isFormula: true, formula: '$A + 5'}}]);
      const last = bundles(doc.db).at(-1)!;
      const undo = last.undo.find((a) => a[0] === 'BulkUpdateRecord' && a[1] === 'T');
      assert.ok(undo, type);
      const ids = undo![2] as number[];
      const cells = (undo![3] as Record<string, unknown[]>).F;
      assert.equal(
        cells,
        ids.map((id) => read[id - 1]),
        type,
      );
      assert.is(
        marshalDumps(cells).toString('hex'),
        marshalDumps(ids.map((id) => read[id - 1])).toString('hex'),
        `${type}: the same bytes`,
      );
      doc.removeColumn('T', 'F');
    }
  } finally {
    doc.close();
  }
});

test("a column a write did not change is left out of its rows' update, beside one it added", () => {
  const doc = newDoc();
  try {
    doc.addTables([{id: 'T', columns: [{id: 'A', fields: {type: 'Int'}}]}]);
    doc.addRecords('T', [{A: 1}, {A: 2}]);
    doc.applyUserActions([
      ['AddColumn', 'T', 'F', {type: 'Numeric', isFormula: true, formula: '$A * 10'}],
      ['UpdateRecord', 'T', 1, {A: 7}],
    ]);
    const last = bundles(doc.db).at(-1)!;
    const updates = last.stored.map(([, a]) => a).filter((a) => a[0] === 'BulkUpdateRecord' && a[1] === 'T');
    const changedA = updates.filter((a) => 'A' in (a[3] as object));
    assert.equal(
      changedA.map((a) => [a[2], (a[3] as Record<string, unknown[]>).A]),
      [[[1], [7]]],
    );
    const changedF = updates.find((a) => 'F' in (a[3] as object))!;
    assert.equal(
      [changedF[2], (changedF[3] as Record<string, unknown[]>).F],
      [
        [1, 2],
        [70, 20],
      ],
    );
    // Its undo, in Grist's single-row form, restores row 1's A alone.
    const undoA = last.undo.filter((a) => a[1] === 'T' && typeof a[3] === 'object' && 'A' in (a[3] as object));
    assert.equal(undoA, [['UpdateRecord', 'T', 1, {A: 1}]]);
  } finally {
    doc.close();
  }
});

test('columns are grouped by the exact rows they changed, groups in the order they first appear', () => {
  const rows = [1, 2, 3, 4, 5].map((id) => ({id}));
  // a and d change rows 1,3,5; b changes 1,2,5 (same count and ends as a); c every row; e none.
  const sets: Record<string, number[]> = {a: [1, 3, 5], b: [1, 2, 5], c: [1, 2, 3, 4, 5], d: [1, 3, 5], e: []};
  const groups = groupChanged(['a', 'b', 'c', 'd', 'e'], rows, (r, c) => sets[c].includes(r.id as number));
  assert.equal(
    groups.map(([ids, cols]) => [[...ids], cols]),
    [
      [
        [1, 3, 5],
        ['a', 'd'],
      ],
      [[1, 2, 5], ['b']],
      [[1, 2, 3, 4, 5], ['c']],
    ],
  );
});

test('added rows are recorded with the cells as stored, whether taken from the insert or read back', () => {
  const doc = newDoc();
  try {
    doc.addTables([
      {
        id: 'T',
        columns: [
          {id: 'Txt', fields: {type: 'Text'}},
          {id: 'Int', fields: {type: 'Int'}},
          {id: 'Num', fields: {type: 'Numeric'}},
          {id: 'Yes', fields: {type: 'Bool'}},
          {id: 'Day', fields: {type: 'Date'}},
          {id: 'Tags', fields: {type: 'ChoiceList'}},
          {id: 'Any', fields: {type: 'Any'}},
        ],
      },
    ]);
    const rows = [
      {Txt: 'a', Int: 1, Num: 2, Yes: true, Day: 86400, Tags: ['L', 'x', 'y'], Any: ['L', 1, 'two']},
      {Txt: 5, Int: 'seven', Num: 1.5, Yes: false, Day: null, Tags: null, Any: {nested: true}},
      {Txt: '', Int: 0, Num: 0, Yes: false, Day: 0, Tags: ['L'], Any: null},
    ];
    // One insert alone (taken from the insert), then the same rows added beside an update of another
    // row of the table in the same bundle (read back): both must record what SQLite holds.
    const table = (doc as unknown as {storage: {meta: DocMeta}}).storage.meta.tables.get('T')!;
    const check = () => {
      const bundle = bundles(doc.db).at(-1)!;
      const add = bundle.stored.map(([, a]) => a).find((a) => a[0] === 'BulkAddRecord' && a[1] === 'T')!;
      const ids = add[2] as number[];
      const stored = readRows((sql) => doc.db.prepare(sql), table, ids);
      assert.ok(Object.keys(add[3] as object).length >= 7, 'the columns given, and manualSort');
      for (const [colId, values] of Object.entries(add[3] as Record<string, unknown[]>)) {
        assert.equal(
          values,
          stored.map((r) => r[colId]),
          `${bundle.actionNum} ${colId}`,
        );
      }
    };
    doc.addRecords('T', rows as never);
    check();
    doc.applyUserActions([
      [
        'BulkAddRecord',
        'T',
        [null, null, null],
        Object.fromEntries(Object.keys(rows[0]).map((k) => [k, rows.map((r) => (r as never)[k])])),
      ],
      ['UpdateRecord', 'T', 1, {Txt: 'b'}],
    ]);
    check();
  } finally {
    doc.close();
  }
});

test('settings from the environment: GRISTLITE_HISTORY=0 turns recording off; limits as Grist names them too', () => {
  assert.equal(historySettingsFromEnv({}), {enabled: true, maxRows: 1000, maxBytes: 1e9, maxUndoCells: 1_000_000});
  assert.is(historySettingsFromEnv({GRISTLITE_HISTORY: '0'}).enabled, false);
  assert.is(historySettingsFromEnv({GRISTLITE_HISTORY: 'false'}).enabled, false);
  assert.is(historySettingsFromEnv({GRISTLITE_HISTORY: '1'}).enabled, true);
  assert.equal(historySettingsFromEnv({GRIST_ACTION_HISTORY_MAX_ROWS: '50', GRISTLITE_HISTORY_MAX_BYTES: '9000'}), {
    enabled: true,
    maxRows: 50,
    maxBytes: 9000,
    maxUndoCells: 1_000_000,
  });
  assert.is(historySettingsFromEnv({GRISTLITE_HISTORY_MAX_UNDO_CELLS: '0'}).maxUndoCells, 0);
  assert.throws(() => historySettingsFromEnv({GRISTLITE_HISTORY_MAX_ROWS: '0'}), /at least 1/);
  assert.throws(() => historySettingsFromEnv({GRISTLITE_HISTORY_MAX_BYTES: 'lots'}), /integer/);
});

test('pruning follows Grist: checked every 10th action, only when 1.25 times over, down to the limit', () => {
  // 10 actions (the empty first one and nine writes) against a limit of 8: 10 <= 8 * 1.25, kept.
  const kept = newDoc({maxRows: 8});
  // Against a limit of 7: 10 > 8.75, the oldest go and the newest 7 stay.
  const pruned = newDoc({maxRows: 7});
  try {
    for (const doc of [kept, pruned]) {
      doc.addRecords('Table1', [{A: 0}]);
      for (let i = 1; i <= 8; i++) doc.updateRecords('Table1', [{id: 1, fields: {A: String(i)}}]);
    }
    assert.equal(
      bundles(kept.db).map((b) => b.actionNum),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    assert.equal(
      bundles(pruned.db).map((b) => b.actionNum),
      [4, 5, 6, 7, 8, 9, 10],
    );
    // The oldest kept action's parent was pruned; the chain from the tip is whole.
    assert.equal(checkActionHistory(pruned.db).problems, []);
    assert.is(tips(pruned.db).local_unsent, bundles(pruned.db).at(-1)!.id);
    pruned.updateRecords('Table1', [{id: 1, fields: {A: 'more'}}]);
    assert.is(bundles(pruned.db).at(-1)!.actionNum, 11);
    // A limit in bytes prunes too (each body here is a few hundred bytes).
    const bytes = newDoc({maxBytes: 1});
    bytes.addRecords('Table1', [{A: 0}]);
    for (let i = 1; i <= 8; i++) bytes.updateRecords('Table1', [{id: 1, fields: {A: String(i)}}]);
    assert.equal(
      bundles(bytes.db).map((b) => b.actionNum),
      [10],
      'at least the newest action stays',
    );
    bytes.close();
  } finally {
    kept.close();
    pruned.close();
  }
});

test('after /states/remove, pruning counts the chain that is left', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-history-'));
  // 12.5 actions allowed before a prune (Grist's 1.25 grace), checked every 10th action.
  const engine = await Engine.open({dataDir: dir, history: {maxRows: 10}});
  try {
    const user = await engine.home.ensureUser('ada@example.com', 'Ada');
    const p = engine.home.principalFor(user, true);
    const [home] = await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id);
    const docId = await engine.createDoc(home.id, p, {name: 'D'});
    const doc = await engine.as(p).doc(docId);
    const nums = () => bundles(engine.openDoc(docId).db).map((b) => b.actionNum);
    await doc.addRecords('Table1', [{A: 'x'}]);
    const first = nums().at(-1)!;
    // Up to a 10th action (counted then, not pruned: 10 <= 12.5).
    for (let n = first + 1; n <= 10; n++) await doc.updateRecords('Table1', [{id: 1, fields: {A: `a${n}`}}]);
    assert.is(nums().length, 10);
    await doc.removeStates(2);
    assert.equal(nums(), [9, 10]);
    // Ten more: 12 in the chain at the 20th check, under 12.5, all kept (a count of 20 would prune to 10).
    for (let n = 11; n <= 20; n++) await doc.updateRecords('Table1', [{id: 1, fields: {A: `b${n}`}}]);
    assert.equal(nums(), [9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    assert.equal(checkActionHistory(engine.openDoc(docId).db).problems, []);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

ftest("a document Grist wrote continues Grist's chain", () => {
  for (const name of ['World-v39.grist', 'TypeConversions.grist']) {
    const path = copyFixture(corpusFiles().find((f) => f.endsWith(`/${name}`))!);
    const before = new Database(path, {readonly: true});
    const last = before
      .prepare(
        `SELECT h.id, h.actionNum, h.actionHash FROM _gristsys_ActionHistoryBranch b
         JOIN _gristsys_ActionHistory h ON h.id = b.actionRef WHERE b.name = 'local_unsent'`,
      )
      .get() as {id: number; actionNum: number; actionHash: string};
    before.close();
    const doc = GristDoc.open(path);
    try {
      const table = doc.listTables()[0].id;
      const r = doc.applyUserActions([['AddRecord', table, null, {}]]);
      assert.is(r.actionNum, last.actionNum + 1, name);
      const mine = bundles(doc.db).at(-1)!;
      assert.is(mine.parentRef, last.id);
      assert.is(mine.parentActionHash, last.actionHash);
      assert.equal(checkActionHistory(doc.db).problems, [], name);
    } finally {
      doc.close();
    }
  }
});

test.run();
