// The history of writes of many rows kept as columns (D146): the "before" snapshot held as columns
// past COLUMNAR_ROWS, the new cells handed over by the writer (recalc, bulk update) rather than
// read back. Each case runs just below and just above the threshold, and checks that the bundle
// holds what the file holds, and the undo what it held before.
import Database from 'better-sqlite3';
import {mkdtempSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import type {DocMeta} from '../src/doc/meta.js';
import type {CellValue} from '../src/doc/types.js';
import {decodeBundle, type ActionBundle, type DocActionTuple} from '../src/doc/history/format.js';
import {COLUMNAR_ROWS, readRows} from '../src/doc/history/rows.js';
import {MISSING, Snapshot} from '../src/doc/history/snapshot.js';

const SIZES = [COLUMNAR_ROWS - 1, COLUMNAR_ROWS + 1];

function newDoc(): GristDoc {
  const path = join(mkdtempSync(join(tmpdir(), 'gl-hcol-')), 'doc.grist');
  GristDoc.create(path).close();
  return GristDoc.open(path);
}

function lastBundle(db: Database.Database): ActionBundle {
  const row = db.prepare('SELECT body FROM _gristsys_ActionHistory ORDER BY id DESC LIMIT 1').get() as {body: Buffer};
  return decodeBundle(row.body);
}

function tableMeta(doc: GristDoc, tableId: string) {
  return (doc as unknown as {storage: {meta: DocMeta}}).storage.meta.tables.get(tableId)!;
}

/** Every cell of the table as the file holds it, by row id and column. */
function fileCells(doc: GristDoc, tableId: string): Map<number, Record<string, CellValue>> {
  const ids = (doc.db.prepare(`SELECT id FROM "${tableId}" ORDER BY id`).pluck().all() as number[]).map(Number);
  // Read row by row below the threshold: the row-wise read, not the path under test.
  const table = tableMeta(doc, tableId);
  const out = new Map<number, Record<string, CellValue>>();
  for (let i = 0; i < ids.length; i += 500) {
    for (const r of readRows((sql) => doc.db.prepare(sql), table, ids.slice(i, i + 500))) out.set(r.id as number, r);
  }
  return out;
}

/** The BulkUpdateRecord / UpdateRecord actions of `tableId` as [id, column, value] cells. */
function updateCells(actions: DocActionTuple[], tableId: string): Array<[number, string, unknown]> {
  const cells: Array<[number, string, unknown]> = [];
  for (const a of actions) {
    if (a[1] !== tableId) continue;
    if (a[0] === 'BulkUpdateRecord') {
      const ids = a[2] as number[];
      for (const [c, vs] of Object.entries(a[3] as Record<string, unknown[]>)) {
        assert.is(vs.length, ids.length, `${c}: a cell per row`);
        ids.forEach((id, i) => cells.push([id, c, vs[i]]));
      }
    } else if (a[0] === 'UpdateRecord') {
      for (const [c, v] of Object.entries(a[3] as Record<string, unknown>)) cells.push([a[2] as number, c, v]);
    }
  }
  return cells;
}

test('a formula column added over many rows: its cells as computed, undone to the default, both sides of the threshold', () => {
  for (const n of SIZES) {
    const doc = newDoc();
    try {
      doc.addTables([{id: 'T', columns: [{id: 'A', fields: {type: 'Int'}}]}]);
      doc.addColumnar('T', {A: Array.from({length: n}, (_, i) => i % 7)}, {parse: false});
      doc.addColumns('T', [{id: 'F', fields: {type: 'Numeric', isFormula: true, formula: '$A * 3'}}]);
      const b = lastBundle(doc.db);
      const stored = b.stored.map(([, a]) => a).filter((a) => a[0] === 'BulkUpdateRecord' && a[1] === 'T');
      // Row 1, 8, ... hold 0, the default: left out, as Grist leaves unchanged cells out.
      const changed = Array.from({length: n}, (_, i) => i + 1).filter((id) => (id - 1) % 7 !== 0);
      assert.equal(stored, [['BulkUpdateRecord', 'T', changed, {F: changed.map((id) => ((id - 1) % 7) * 3)}]], `${n}`);
      const undo = b.undo.filter((a) => a[1] === 'T' && a[0] === 'BulkUpdateRecord');
      assert.equal(undo, [['BulkUpdateRecord', 'T', changed, {F: changed.map(() => 0)}]], `${n}`);
    } finally {
      doc.close();
    }
  }
});

test('a bulk update of many rows of every type records the cells the file holds and undoes to the old ones', () => {
  const types = ['Text', 'Int', 'Numeric', 'Bool', 'Date', 'Choice', 'ChoiceList', 'Any', 'Ref:T', 'RefList:T'];
  // Values SQLite may store otherwise than bound in some columns (numbers in a Text column, texts
  // in numeric ones, -0, NaN, lists, errors), so that the handed-over cells are checked as read.
  const samples: CellValue[] = [1, 'x', 2.5, '7', -0, true, null, ['L', 'a', 'b'], ['L', 1, 2], '', 0, 1e300];
  for (const n of SIZES) {
    const doc = newDoc();
    try {
      doc.addTables([{id: 'T', columns: types.map((type, i) => ({id: `C${i}`, fields: {type}}))}]);
      const cols = types.map((_, i) => `C${i}`);
      doc.addColumnar('T', Object.fromEntries(cols.map((c) => [c, Array.from({length: n}, (_, i) => i % 5)])), {
        parse: false,
      });
      const before = fileCells(doc, 'T');
      const ids = Array.from({length: n}, (_, i) => i + 1);
      doc.applyUserActions([
        [
          'BulkUpdateRecord',
          'T',
          ids,
          Object.fromEntries(cols.map((c, j) => [c, ids.map((id) => samples[(id + j) % samples.length])])),
        ],
      ]);
      const after = fileCells(doc, 'T');
      const b = lastBundle(doc.db);
      const cells = updateCells(
        b.stored.map(([, a]) => a),
        'T',
      );
      assert.ok(cells.length > n, `${n}: cells recorded`);
      for (const [id, c, v] of cells) assert.equal(v, after.get(id)![c], `${n}: row ${id} ${c} as stored`);
      // Every changed cell is there, no unchanged one.
      let changedCount = 0;
      for (const id of ids)
        for (const c of cols)
          if (JSON.stringify(before.get(id)![c]) !== JSON.stringify(after.get(id)![c])) changedCount++;
      assert.is(cells.length, changedCount, `${n}: exactly the changed cells`);
      for (const [id, c, v] of updateCells(b.undo, 'T'))
        assert.equal(v, before.get(id)![c], `${n}: undo row ${id} ${c}`);
      assert.is(updateCells(b.undo, 'T').length, changedCount, `${n}: an undo per changed cell`);
    } finally {
      doc.close();
    }
  }
});

test('cells written then overwritten later in the same write are recorded as the file holds them', () => {
  for (const n of SIZES) {
    const doc = newDoc();
    try {
      doc.addTables([{id: 'T', columns: [{id: 'A', fields: {type: 'Int'}}]}]);
      doc.addColumnar('T', {A: Array.from({length: n}, (_, i) => i)}, {parse: false});
      doc.addColumns('T', [{id: 'F', fields: {type: 'Int', isFormula: true, formula: '$A * 2'}}]);
      const ids = Array.from({length: n}, (_, i) => i + 1);
      // A bulk update of every row (recomputing F for every row), then row 5 written again, and a
      // later bulk update of half the rows: A and F of those rows are overwritten after being handed over.
      const half = ids.filter((id) => id % 2 === 0);
      doc.applyUserActions([
        ['BulkUpdateRecord', 'T', ids, {A: ids.map((id) => id + 1000)}],
        ['UpdateRecord', 'T', 5, {A: -1}],
        ['BulkUpdateRecord', 'T', half, {A: half.map((id) => id + 5000)}],
      ]);
      const after = fileCells(doc, 'T');
      assert.is(after.get(5)!.A, -1);
      assert.is(after.get(5)!.F, -2);
      assert.is(after.get(4)!.F, 2 * 5004);
      const b = lastBundle(doc.db);
      const cells = updateCells(
        b.stored.map(([, a]) => a),
        'T',
      );
      assert.is(cells.length, 2 * n, `${n}: A and F of every row`);
      for (const [id, c, v] of cells) assert.equal(v, after.get(id)![c], `${n}: row ${id} ${c}`);
      for (const [id, c, v] of updateCells(b.undo, 'T'))
        assert.equal(v, c === 'A' ? id - 1 : 2 * (id - 1), `${n}: undo ${id} ${c}`);
    } finally {
      doc.close();
    }
  }
});

test('rows captured as columns, then some of them again with more columns, keep the cells first captured', () => {
  for (const n of SIZES) {
    const doc = newDoc();
    try {
      doc.addTables([
        {
          id: 'T',
          columns: [
            {id: 'A', fields: {type: 'Int'}},
            {id: 'B', fields: {type: 'Text'}},
          ],
        },
      ]);
      doc.addColumnar(
        'T',
        {A: Array.from({length: n}, (_, i) => i), B: Array.from({length: n}, (_, i) => `b${i}`)},
        {
          parse: false,
        },
      );
      const ids = Array.from({length: n}, (_, i) => i + 1);
      // A of every row (captured A alone), then B and A of rows 1..10 (their B read then, A kept
      // from the first capture), then rows 3 and 4 removed (their whole row kept as first seen).
      doc.applyUserActions([
        ['BulkUpdateRecord', 'T', ids, {A: ids.map((id) => id * 10)}],
        [
          'BulkUpdateRecord',
          'T',
          ids.slice(0, 10),
          {A: ids.slice(0, 10).map(() => 7), B: ids.slice(0, 10).map(() => 'z')},
        ],
        ['BulkRemoveRecord', 'T', [3, 4]],
      ]);
      const b = lastBundle(doc.db);
      const undoAdd = b.undo.find((a) => a[0] === 'BulkAddRecord' && a[1] === 'T')!;
      assert.equal(undoAdd, ['BulkAddRecord', 'T', [3, 4], {A: [2, 3], B: ['b2', 'b3'], manualSort: [3, 4]}], `${n}`);
      const undo = updateCells(b.undo, 'T');
      assert.equal(
        undo
          .filter(([id]) => id === 1 || id === 9 || id === 11)
          .sort((x, y) => x[0] - y[0] || x[1].localeCompare(y[1])),
        [
          [1, 'A', 0],
          [1, 'B', 'b0'],
          [9, 'A', 8],
          [9, 'B', 'b8'],
          [11, 'A', 10],
        ],
        `${n}`,
      );
    } finally {
      doc.close();
    }
  }
});

test('a column declared with another affinity than its type (a file from elsewhere): the cells SQLite stored, not those bound', () => {
  for (const n of SIZES) {
    const path = join(mkdtempSync(join(tmpdir(), 'gl-hcol-')), 'doc.grist');
    let doc = GristDoc.create(path);
    doc.addTables([
      {
        id: 'T',
        columns: [
          {id: 'B', fields: {type: 'Text'}},
          {id: 'N', fields: {type: 'Numeric'}},
        ],
      },
    ]);
    doc.addColumnar('T', {B: Array.from({length: n}, () => 'a'), N: Array.from({length: n}, () => 1)}, {parse: false});
    doc.close();
    // B declared NUMERIC (texts that read as numbers become numbers), N declared TEXT (numbers become text).
    const db = new Database(path);
    db.exec(`CREATE TABLE T2 (id INTEGER PRIMARY KEY, manualSort NUMERIC DEFAULT 1e999, B NUMERIC DEFAULT '', N TEXT DEFAULT 0);
      INSERT INTO T2 SELECT id, manualSort, B, N FROM T; DROP TABLE T; ALTER TABLE T2 RENAME TO T;`);
    db.close();
    doc = GristDoc.open(path);
    try {
      const ids = Array.from({length: n}, (_, i) => i + 1);
      doc.applyUserActions([
        ['BulkUpdateRecord', 'T', ids, {B: ids.map((id) => String(id)), N: ids.map((id) => id + 0.5)}],
      ]);
      const after = fileCells(doc, 'T');
      assert.is(typeof after.get(7)!.B, 'number', 'SQLite stored the text as a number');
      const cells = updateCells(
        lastBundle(doc.db).stored.map(([, a]) => a),
        'T',
      );
      assert.is(cells.length, 2 * n);
      for (const [id, c, v] of cells) assert.equal(v, after.get(id)![c], `${n}: row ${id} ${c}`);
    } finally {
      doc.close();
    }
  }
});

test("formula cells recomputed over many rows by a one-cell write: the undo holds the cells the file held (the engine's values taken where they are the same)", () => {
  // Formulas of several types whose every cell changes with G.N, so that each write's recalc
  // changes all of them on the same rows (the engine then hands its previous values over): numbers
  // in a Text column (stored as text), lists in Any, a Ref, Bools, and errors at N = 3, where the
  // previous values are read instead.
  const formulas: Array<[string, string, string]> = [
    ['FT', 'Text', '$Grp.N if $X % 3 else $Grp.Label + str($Grp.N)'],
    ['FN', 'Numeric', '$Grp.N * 1.5 + $X'],
    ['FI', 'Int', '$Grp.N * 2'],
    ['FA', 'Any', '[$Grp.N, $X] if $X % 2 else str($Grp.N)'],
    ['FB', 'Bool', '$Grp.N % 2 == 0'],
    ['FR', 'Ref:G', '$Grp if $Grp.N % 2 else None'],
    ['FE', 'Numeric', '1 / ($Grp.N - 3) + $X'],
  ];
  for (const n of SIZES) {
    const path = join(mkdtempSync(join(tmpdir(), 'gl-hcol-')), 'doc.grist');
    let doc = GristDoc.create(path);
    try {
      doc.addTables([
        {
          id: 'G',
          columns: [
            {id: 'Label', fields: {type: 'Text'}},
            {id: 'N', fields: {type: 'Int'}},
          ],
        },
        {
          id: 'T',
          columns: [
            {id: 'Grp', fields: {type: 'Ref:G'}},
            {id: 'X', fields: {type: 'Int'}},
          ],
        },
      ]);
      doc.addColumnar('G', {Label: ['a', 'b'], N: [0, 100]}, {parse: false});
      // Group 1 holds n rows (the recalc's), group 2 as many, interleaved.
      doc.addColumnar(
        'T',
        {Grp: Array.from({length: 2 * n}, (_, i) => (i % 2) + 1), X: Array.from({length: 2 * n}, (_, i) => i % 11)},
        {parse: false},
      );
      doc.addColumns(
        'T',
        formulas.map(([id, type, formula]) => ({id, fields: {type, isFormula: true, formula}})),
      );
      for (let step = 1; step <= 6; step++) {
        if (step === 4) {
          // The engine's values read from the file this time.
          doc.close();
          doc = GristDoc.open(path);
        }
        const before = fileCells(doc, 'T');
        doc.updateRecords('G', [{id: 1, fields: {N: step}}]);
        const after = fileCells(doc, 'T');
        const b = lastBundle(doc.db);
        const stored = updateCells(
          b.stored.map(([, a]) => a),
          'T',
        );
        const undo = updateCells(b.undo, 'T');
        let changed = 0;
        for (const [id, row] of after)
          for (const [c] of formulas) if (JSON.stringify(row[c]) !== JSON.stringify(before.get(id)![c])) changed++;
        assert.ok(changed >= n, `${n} step ${step}: cells changed`);
        assert.is(stored.length, changed, `${n} step ${step}: the changed cells`);
        assert.is(undo.length, changed, `${n} step ${step}: an undo per changed cell`);
        for (const [id, c, v] of stored) assert.equal(v, after.get(id)![c], `${n} step ${step}: row ${id} ${c}`);
        for (const [id, c, v] of undo) assert.equal(v, before.get(id)![c], `${n} step ${step}: undo row ${id} ${c}`);
      }
    } finally {
      doc.close();
    }
  }
});

test("formula cells recomputed over many rows in a column declared with another affinity: the undo holds what SQLite stored, not the engine's values", () => {
  for (const n of SIZES) {
    const path = join(mkdtempSync(join(tmpdir(), 'gl-hcol-')), 'doc.grist');
    let doc = GristDoc.create(path);
    doc.addTables([
      {id: 'G', columns: [{id: 'N', fields: {type: 'Int'}}]},
      {id: 'T', columns: [{id: 'Grp', fields: {type: 'Ref:G'}}]},
    ]);
    doc.addColumnar('G', {N: [0]}, {parse: false});
    doc.addColumnar('T', {Grp: Array.from({length: n}, () => 1)}, {parse: false});
    doc.addColumns('T', [{id: 'F', fields: {type: 'Text', isFormula: true, formula: 'str($Grp.N)'}}]);
    doc.close();
    // F declared NUMERIC: the engine's texts ("1") are stored, and read back, as numbers.
    const db = new Database(path);
    db.exec(`CREATE TABLE T2 (id INTEGER PRIMARY KEY, manualSort NUMERIC DEFAULT 1e999, Grp INTEGER DEFAULT 0, F NUMERIC DEFAULT '');
      INSERT INTO T2 SELECT id, manualSort, Grp, F FROM T; DROP TABLE T; ALTER TABLE T2 RENAME TO T;`);
    db.close();
    doc = GristDoc.open(path);
    try {
      for (let step = 1; step <= 3; step++) {
        const before = fileCells(doc, 'T');
        doc.updateRecords('G', [{id: 1, fields: {N: step}}]);
        assert.is(fileCells(doc, 'T').get(1)!.F, step, 'SQLite stored the text as a number');
        const undo = updateCells(lastBundle(doc.db).undo, 'T');
        assert.is(undo.length, n, `${n} step ${step}`);
        for (const [id, c, v] of undo) assert.equal(v, before.get(id)![c], `${n} step ${step}: undo row ${id} ${c}`);
      }
    } finally {
      doc.close();
    }
  }
});

test("a formula column added in the same write that recomputes an existing one over the same rows: the new column undone to its type's default, as the file held it", () => {
  // The recalc changes B, B2 (added: the file holds each type's default, 0 for Numeric, NULL for
  // Any) and C (existing) on every row, so the engine's previous values are offered for all three.
  for (const n of SIZES) {
    const doc = newDoc();
    try {
      doc.addTables([
        {id: 'G', columns: [{id: 'N', fields: {type: 'Int'}}]},
        {id: 'T', columns: [{id: 'Grp', fields: {type: 'Ref:G'}}]},
      ]);
      doc.addColumnar('G', {N: [1]}, {parse: false});
      doc.addColumnar('T', {Grp: Array.from({length: n}, () => 1)}, {parse: false});
      doc.addColumns('T', [{id: 'C', fields: {type: 'Int', isFormula: true, formula: '$Grp.N'}}]);
      const before = fileCells(doc, 'T');
      doc.applyUserActions([
        ['UpdateRecord', 'G', 1, {N: 5}],
        ['AddColumn', 'T', 'B', {type: 'Numeric', isFormula: true, formula: '$Grp.N * 2 + 0.5'}],
        ['AddColumn', 'T', 'B2', {type: 'Any', isFormula: true, formula: '$Grp.N * 3'}],
      ]);
      const after = fileCells(doc, 'T');
      const b = lastBundle(doc.db);
      const stored = updateCells(
        b.stored.map(([, a]) => a),
        'T',
      );
      for (const [id, c, v] of stored) assert.equal(v, after.get(id)![c], `${n}: row ${id} ${c}`);
      const undo = updateCells(b.undo, 'T');
      const byCol = (c: string) => undo.filter(([, col]) => col === c);
      assert.is(byCol('C').length, n, `${n}: C undone in every row`);
      for (const [id, , v] of byCol('C')) assert.is(v, before.get(id)!.C, `${n}: C of row ${id}`);
      assert.is(byCol('B').length, n, `${n}: B undone in every row`);
      for (const [id, , v] of byCol('B')) assert.is(v, 0, `${n}: B of row ${id} undone to Numeric's 0`);
      assert.is(byCol('B2').length, n, `${n}: B2 undone in every row`);
      for (const [id, , v] of byCol('B2')) assert.is(v, null, `${n}: B2 of row ${id} undone to an Any column's NULL`);
    } finally {
      doc.close();
    }
  }
});

test('a snapshot finds rows in its blocks and its row objects, the objects taking precedence', () => {
  const snap = new Snapshot();
  assert.ok(snap.empty);
  snap.setColumns(
    [10, 11, 12],
    ['A', 'B'],
    [
      [1, 2, 3],
      ['x', 'y', 'z'],
    ],
  );
  snap.setColumns([20, 30], ['A'], [[5, 6]]);
  snap.set(11, {id: 11, B: 'yy', C: 9});
  assert.ok(snap.has(12) && snap.has(30) && snap.has(11) && !snap.has(13));
  assert.equal(snap.get(10), {id: 10, A: 1, B: 'x'});
  assert.equal(Object.keys(snap.get(10)!), ['id', 'A', 'B'], 'the cells in the order captured');
  assert.equal(snap.get(11), {id: 11, B: 'yy', C: 9});
  assert.equal(snap.lacking([10, 11, 20, 99], ['A', 'B']), [11, 20]);
  const {held, cells} = snap.columns([10, 11, 20, 99], ['A', 'B']);
  assert.equal([...held!], [1, 1, 1, 0]);
  assert.equal(cells, [
    [1, MISSING, 5, MISSING],
    ['x', 'yy', MISSING, MISSING],
  ]);
  // Exactly a block's rows: its own arrays.
  const whole = snap.columns([20, 30], ['A', 'B']);
  assert.is(whole.held, null);
  assert.equal(whole.cells, [
    [5, 6],
    [MISSING, MISSING],
  ]);
  assert.equal(
    [...snap.values()].map((r) => r.id),
    [11, 10, 12, 20, 30],
  );
});

test.run();
