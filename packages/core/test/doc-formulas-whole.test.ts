// A formula column added over existing rows is written in one bulk UPDATE when its changed cells
// are dense in their id range (formulas.ts writeRecalc); with no gap in the ids the engine's
// encoded values are handed to SQLite as they are (issue 43 §1). What each path stores is checked
// against the same column computed one row at a time (one cell per write: a statement per row),
// on random data with None, wrong types in an Any column and error cells, on both sides of the
// bulk threshold (200 cells) and of the density rule (half the id range). The whole column is
// computed in one loop from 64 dirty cells (formula/column-loop.ts), each row alone per cell.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {StoredValues} from '../src/doc/colstats.js';
import {type CellValue, GristDoc} from '../src/doc/index.js';
import {seededRandom} from '../src/testing/random.js';
import {tempPath} from './doc-helpers.js';

function randomRows(n: number, seed: number): Array<Record<string, CellValue>> {
  const rand = seededRandom(seed);
  const anyCell = (): CellValue => {
    const k = Math.floor(rand() * 6);
    if (k === 0) return null;
    if (k === 1) return `t${Math.floor(rand() * 5)}`;
    if (k === 2) return rand() < 0.5;
    if (k === 3) return Math.floor(rand() * 10);
    return Math.round(rand() * 1000) / 16 - 20;
  };
  return Array.from({length: n}, () => ({
    A: anyCell(),
    N: rand() < 0.1 ? null : Math.round(rand() * 1000) / 8,
    D: Math.floor(rand() * 4), // 0: ZeroDivisionError
  }));
}

const FORMULAS: Array<[string, string]> = [
  ['$A * 2', 'Any'],
  ['$N / $D', 'Numeric'],
  ['$A', 'Text'],
  ['$N * $D', 'Numeric'],
  ['$A + $N', 'Any'],
  ['$N ** 40', 'Numeric'],
  ['PEEK($A) if $D else $N', 'Any'],
];

function table(doc: GristDoc, withFormulas: boolean): void {
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'A', fields: {type: 'Any', isFormula: false}},
        {id: 'N', fields: {type: 'Numeric', isFormula: false}},
        {id: 'D', fields: {type: 'Int', isFormula: false}},
        ...(withFormulas
          ? FORMULAS.map(([formula, type], i) => ({id: `F${i}`, fields: {type, isFormula: true, formula}}))
          : []),
      ],
    },
  ]);
}

/** Every stored cell of the formula columns with its storage class (blobs as hex). */
function stored(doc: GristDoc): unknown[] {
  const cols = FORMULAS.map((_, i) => `F${i}, typeof(F${i})`).join(', ');
  return (doc.db.prepare(`SELECT id, ${cols} FROM T ORDER BY id`).raw(true).all() as unknown[][]).map((row) =>
    row.map((v) => (Buffer.isBuffer(v) ? `x'${v.toString('hex')}'` : v)),
  );
}

test('a formula column over existing rows stores what one-row-at-a-time writes store', () => {
  // [rows, keep every k-th row]: contiguous ids below and above 200 cells; ids with gaps, dense
  // (2 of 3 kept: the bulk UPDATE with its per-row check) and sparse (1 of 3: a statement a row).
  // 63 and 64 rows: either side of the column loop's threshold (formula/column-loop.ts, D180).
  const cases: Array<[number, number]> = [
    [63, 0],
    [64, 0],
    [150, 0],
    [450, 0],
    [600, 3],
    [900, -3],
  ];
  for (const [n, every] of cases) {
    const rows = randomRows(n, n);
    const gone = (id: number) => every !== 0 && (every > 0 ? id % every === 0 : id % -every !== 0);
    // One row at a time: each write recalculates one cell of each formula.
    const ref = GristDoc.create(tempPath());
    table(ref, true);
    for (const r of rows) ref.addRecords('T', [r]);
    const removed = Array.from({length: n}, (_, i) => i + 1).filter(gone);
    if (removed.length) ref.removeRecords('T', removed);
    // The whole column at once, over the same rows.
    const doc = GristDoc.create(tempPath());
    table(doc, false);
    doc.addRecords('T', rows);
    if (removed.length) doc.removeRecords('T', removed);
    doc.addColumns(
      'T',
      FORMULAS.map(([formula, type], i) => ({id: `F${i}`, fields: {type, isFormula: true, formula}})),
    );
    const want = stored(ref);
    const got = stored(doc);
    assert.is(got.length, n - removed.length);
    assert.equal(got, want, `${n} rows, every ${every}`);
    // Errors, None and numbers all occur among the cells compared.
    const classes = new Set(got.flatMap((row) => (row as unknown[]).filter((_, j) => j % 2 === 0 && j > 0)));
    for (const c of ['blob', 'null', 'real', 'text']) assert.ok(classes.has(c), `${n} rows: some ${c} cells`);
    ref.close();
    doc.close();
  }
});

test('StoredValues.addAll: what `add` of each value records, reals listed when asked', () => {
  const rand = seededRandom(7);
  const pick = (): unknown => {
    const k = Math.floor(rand() * 9);
    if (k === 0) return null;
    if (k === 1) return 'x';
    if (k === 2) return Buffer.from([1, 2]);
    if (k === 3) return BigInt(Math.floor(rand() * 10)) * (rand() < 0.3 ? 2n ** 60n : 1n);
    if (k === 4) return Number.NaN;
    if (k === 5) return Math.floor(rand() * 100) - 50;
    if (k === 6) return 2 ** 53 + 2;
    return rand() * 10 - 5;
  };
  for (const declType of ['NUMERIC', 'INTEGER', 'REAL', 'BLOB', 'TEXT']) {
    for (let round = 0; round < 50; round++) {
      const one = new StoredValues(declType);
      const all = new StoredValues(declType);
      // Single values and arrays interleaved: the reals keep the order written.
      for (let part = 0; part < 4; part++) {
        const values = Array.from({length: Math.floor(rand() * 12)}, pick);
        for (const v of values) one.add(v);
        if (rand() < 0.3) {
          for (const v of values) all.add(v);
        } else {
          all.addAll(values);
        }
      }
      const view = (s: StoredValues) => [s.classes, s.min, s.max, s.fractions, s.reals];
      assert.equal(view(all), view(one), `${declType} round ${round}`);
      assert.equal(view(all), view(one), `${declType} round ${round}: asked twice`);
    }
  }
});

test.run();
