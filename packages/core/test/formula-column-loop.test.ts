// A formula column with many dirty cells is computed in one loop (formula/column-loop.ts, D180)
// when its formula's reads follow from its text. Each formula below is computed whole over random
// rows (the loop, from COLUMN_LOOP_MIN dirty cells) and one row at a time (a row added and
// recalculated at a time: one dirty cell, the per-cell path), on both sides of the threshold; the
// cells, their error messages, and then what later one-cell writes recompute (the cells, their
// values and how many were evaluated) must be the same.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type CellValue, FormulaEngine} from '@gristlite/formula';
import {COLUMN_LOOP_MIN} from '@gristlite/formula/internal';
import {seededRandom} from '../src/testing/random.js';

type Spec = {colId: string; type: string; isFormula: boolean; formula: string};
const data = (colId: string, type: string): Spec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, type: string, text: string): Spec => ({colId, type, isFormula: true, formula: text});

const FORMULAS: Array<[string, string]> = [
  ['$N * $I', 'Numeric'],
  ['$N / $D', 'Numeric'],
  ['$I // $D', 'Int'],
  ['$I * $I * $I', 'Int'],
  ['$A * 2', 'Any'],
  ['$A + $N', 'Any'],
  ['$A', 'Numeric'],
  ['$A', 'Int'],
  ['$A', 'Text'],
  ['$N ** 3', 'Numeric'],
  ['$R.Name', 'Text'],
  ['$R.V * $N', 'Numeric'],
  ['$E + 1', 'Any'],
  ['PEEK($N) + $I', 'Numeric'],
  ['$N if $A else $I', 'Any'],
  ['Other.lookupOne(Name=$A).V', 'Any'],
];

/** Random cells of each data column: None, text where numbers go, huge, tiny, -0.0, ints past 2**53. */
function draw(rand: () => number): Record<string, CellValue> {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const num = (): CellValue =>
    pick<CellValue>([
      null,
      'abc',
      1e308,
      -1e308,
      5e-324,
      -0,
      2 ** 53 + 2,
      2 ** 64,
      Math.round(rand() * 1e6) / 64 - 5000,
      Math.floor(rand() * 100) - 50,
      Math.round(rand() * 100) / 8,
    ]);
  return {
    A: pick<CellValue>([null, 't1', 'n2', true, false, 0, 3, 2 ** 60, 1.5, -0, 1e300, ['L', 1, 2]]),
    N: num(),
    I: pick<CellValue>([null, 0, 1, -7, 123456, 2 ** 53 + 2, 2 ** 62, 'x', 2.5]),
    D: pick<CellValue>([0, 1, 2, 3, -4, null]),
    R: pick<CellValue>([0, 1, 2, 3, 9]),
  };
}

function engine(): FormulaEngine {
  const e = new FormulaEngine();
  e.loadTable({tableId: 'Other', columns: [data('Name', 'Text'), data('V', 'Numeric')]}, [1, 2, 3], {
    Name: ['t1', 'x', null],
    V: [2.5, 'text', 1e300],
  });
  e.loadTable({
    tableId: 'T',
    columns: [
      data('A', 'Any'),
      data('N', 'Numeric'),
      data('I', 'Int'),
      data('D', 'Int'),
      data('R', 'Ref:Other'),
      // Error cells (ZeroDivisionError, TypeError) read by `$E + 1`.
      formula('E', 'Any', '$N / $D'),
    ],
  });
  return e;
}

/** A cell as compared: its JS type, -0 apart from 0, lists and errors as JSON. */
function show(v: CellValue | undefined): string {
  if (typeof v === 'number') return Object.is(v, -0) ? 'number:-0' : `number:${v}`;
  return `${typeof v}:${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x))}`;
}

function column(e: FormulaEngine, colId: string, ids: number[]): string[] {
  return ids.map((r) => `${show(e.getCell('T', colId, r))} ${e.errorMessage('T', colId, r) ?? ''}`);
}

test('a formula column computed in one loop matches one cell at a time, then recomputes the same cells', () => {
  assert.is(COLUMN_LOOP_MIN, 64);
  for (const n of [COLUMN_LOOP_MIN - 1, COLUMN_LOOP_MIN, 300]) {
    FORMULAS.forEach(([text, type], f) => {
      const rand = seededRandom(1000 * n + f);
      const rows = Array.from({length: n}, () => draw(rand));
      const ids = rows.map((_, i) => i + 1);
      const values = (cols: string[], part: Array<Record<string, CellValue>>) =>
        Object.fromEntries(cols.map((c) => [c, part.map((r) => r[c])]));
      const cols = ['A', 'N', 'I', 'D', 'R'];
      // The whole column: rows first, then the formula column over all of them.
      const whole = engine();
      whole.addRecords('T', ids, values(cols, rows));
      whole.recalc();
      whole.addColumn('T', formula('F', type, text));
      const first = whole.recalc();
      // One row at a time, the formula column there from the start.
      const single = engine();
      single.addColumn('T', formula('F', type, text));
      single.recalc();
      rows.forEach((r, i) => {
        single.addRecords('T', [i + 1], values(cols, [r]));
        single.recalc();
      });
      const what = `${text} (${type}), ${n} rows`;
      assert.is(first.evaluations, n, what);
      assert.equal(column(whole, 'F', ids), column(single, 'F', ids), what);
      // Later one-cell writes of each input: the same cells recomputed, to the same values.
      for (let k = 0; k < 12; k++) {
        const row = 1 + Math.floor(rand() * n);
        const col = cols[Math.floor(rand() * cols.length)];
        const v = draw(rand)[col];
        const results = [whole, single].map((e) => {
          e.updateRecords('T', [row], {[col]: [v]});
          const res = e.recalc();
          return {evaluations: res.evaluations, changes: JSON.stringify(res.changes.T ?? {}, (_k, x) => show(x))};
        });
        assert.equal(results[0], results[1], `${what}: ${col} of row ${row} set to ${show(v)}`);
      }
      whole.updateRecords('Other', [1], {V: [7]});
      single.updateRecords('Other', [1], {V: [7]});
      assert.is(whole.recalc().evaluations, single.recalc().evaluations, `${what}: Other.V changed`);
      assert.equal(column(whole, 'F', ids), column(single, 'F', ids), `${what}: after the writes`);
    });
  }
});

test.run();
