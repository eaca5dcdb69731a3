// PREVIOUS/NEXT/RANK fast paths (issue 43 §1, F6): a row's place in a cached order is looked up
// (not scanned for), and a record from PREVIOUS computes the dirty rows before it in order first
// (computed ahead, D162). Each is checked against the general path: the same running total read
// through `T.lookupOne(id=...)`, whose records carry neither, on random data (ties, None keys,
// mixed types in an Any key, groups) and through writes that reorder rows.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import type {CellValue} from '../src/cells/types.js';
import {type ColumnSpec, FormulaEngine} from '../src/engine.js';

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, type: string, text: string): ColumnSpec => ({
  colId,
  type,
  isFormula: true,
  formula: text,
});

/** A small deterministic generator (mulberry32), so a failure repeats. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function ids(n: number): number[] {
  return Array.from({length: n}, (_, i) => i + 1);
}

const cellsOf = (e: FormulaEngine, col: string, rows: number[]): Array<CellValue | undefined> =>
  rows.map((r) => e.getCell('T', col, r));

test('a PREVIOUS running total gives what the same total read through lookupOne gives, on random data and writes', () => {
  const orders = ['"K"', '"-K"', '("K", "A")', '("-G", "K")'];
  const groups = ['', ', group_by="G"'];
  for (let seed = 1; seed <= 40; seed++) {
    const rnd = seeded(seed);
    const n = 1 + Math.floor(rnd() * 60);
    const rows = ids(n);
    const key = (): CellValue => {
      const x = rnd();
      if (x < 0.15) return null;
      if (x < 0.2) return `t${Math.floor(rnd() * 3)}`;
      return Math.floor(rnd() * 8) - 4;
    };
    const order = orders[seed % orders.length];
    const group = groups[Math.floor(seed / orders.length) % groups.length];
    const prev = `PREVIOUS(rec${group}, order_by=${order})`;
    const e = new FormulaEngine();
    e.loadTable(
      {
        tableId: 'T',
        columns: [
          data('A', 'Int'),
          data('K', 'Any'),
          data('G', 'Int'),
          formula('X', 'Any', `(${prev}.X or 0) + $A`),
          formula('Y', 'Any', `(T.lookupOne(id=${prev}.id).Y or 0) + $A`),
          formula('R', 'Any', `RANK(rec${group}, order_by=${order})`),
          formula('Nx', 'Any', `NEXT(rec${group}, order_by=${order}).A`),
        ],
      },
      rows,
      {A: rows.map(() => Math.floor(rnd() * 100)), K: rows.map(key), G: rows.map(() => Math.floor(rnd() * 3))},
    );
    e.recomputeAll();
    e.recalc();
    const check = (when: string) => {
      const x = cellsOf(e, 'X', rows);
      assert.equal(x, cellsOf(e, 'Y', rows), `seed ${seed} ${prev} ${when}`);
      // RANK and NEXT from the looked-up place agree with the order PREVIOUS walks.
      const byRank = rows.slice().sort((a, b) => {
        const ga = e.getCell('T', 'G', a) as number,
          gb = e.getCell('T', 'G', b) as number;
        return group && ga !== gb ? ga - gb : (e.getCell('T', 'R', a) as number) - (e.getCell('T', 'R', b) as number);
      });
      for (let i = 0; i + 1 < byRank.length; i++) {
        const [a, b] = [byRank[i], byRank[i + 1]];
        if (group && e.getCell('T', 'G', a) !== e.getCell('T', 'G', b)) continue;
        assert.is(e.getCell('T', 'Nx', a), e.getCell('T', 'A', b), `seed ${seed} NEXT ${when}`);
      }
    };
    check('after the first compute');
    for (let step = 0; step < 5; step++) {
      const some = rows.filter(() => rnd() < 0.3);
      if (!some.length) continue;
      const which = rnd();
      if (which < 0.4) e.updateRecords('T', some, {K: some.map(key)});
      else if (which < 0.7) e.updateRecords('T', some, {A: some.map(() => Math.floor(rnd() * 100))});
      else e.updateRecords('T', some, {G: some.map(() => Math.floor(rnd() * 3))});
      e.recalc();
      check(`after write ${step}`);
    }
  }
});

test('a PREVIOUS running total against its order computes each row once', () => {
  const n = 4000;
  const rows = ids(n);
  const e = new FormulaEngine();
  // K descends with the row id: the first row computed (row 1) is the last in the order.
  e.loadTable(
    {
      tableId: 'T',
      columns: [data('A', 'Int'), data('K', 'Int'), formula('Cum', 'Int', 'PREVIOUS(rec, order_by="K").Cum + $A')],
    },
    rows,
    {A: rows, K: rows.map((a) => -a)},
  );
  e.recomputeAll();
  const r = e.recalc();
  // Row 1 waits once for the rows before it; every other row computes once.
  assert.ok(r.evaluations <= n + 1, `${r.evaluations} evaluations for ${n} rows`);
  assert.is(e.getCell('T', 'Cum', 1), (n * (n + 1)) / 2);
  assert.is(e.getCell('T', 'Cum', n), n);
});

test('a cycle met only by a row computed ahead is no cycle: the row is left for when it is needed', () => {
  // Order by K: rows 3, 2, 1. Row 1 reads PREVIOUS (row 2), which computes row 3 ahead; row 3 reads
  // row 1 (waiting): not a cycle of the real dependencies (row 2 reads nothing), so no error.
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Int'),
        data('K', 'Int'),
        formula('X', 'Any', 'PREVIOUS(rec, order_by="K").X if $A == 1 else (T.lookupOne(A=1).X if $A == 3 else 7)'),
      ],
    },
    [1, 2, 3],
    {A: [1, 2, 3], K: [-1, -2, -3]},
  );
  e.recomputeAll();
  e.recalc();
  assert.equal(cellsOf(e, 'X', [1, 2, 3]), [7, 7, 7]);
});

test('a real cycle through PREVIOUS is still a CircularRefError in each of its cells', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Int'),
        data('K', 'Int'),
        formula('X', 'Any', 'PREVIOUS(rec, order_by="K").X if $A != 3 else T.lookupOne(A=1).X'),
      ],
    },
    [1, 2, 3],
    {A: [1, 2, 3], K: [-1, -2, -3]},
  );
  e.recomputeAll();
  e.recalc();
  for (const r of [1, 2, 3]) {
    const cell = e.getCell('T', 'X', r);
    assert.ok(
      Array.isArray(cell) && cell[0] === 'E' && cell[1] === 'CircularRefError',
      `row ${r}: ${JSON.stringify(cell)}`,
    );
  }
});

test('an order_by string is not taken for a cached order of another spec ("+K", "-K,+A" name no column)', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Int'),
        data('K', 'Int'),
        formula('R1', 'Any', 'RANK(rec, order_by="K")'),
        formula('R2', 'Any', 'RANK(rec, order_by=("-K", "A"))'),
        formula('X1', 'Any', 'RANK(rec, order_by="+K")'),
        formula('X2', 'Any', 'RANK(rec, order_by="-K,+A")'),
      ],
    },
    [1, 2, 3],
    {A: [1, 2, 3], K: [3, 1, 2]},
  );
  e.recomputeAll();
  e.recalc();
  assert.equal(cellsOf(e, 'R1', [1, 2, 3]), [3, 1, 2]);
  assert.equal(cellsOf(e, 'R2', [1, 2, 3]), [1, 3, 2]);
  for (const col of ['X1', 'X2'])
    for (const r of [1, 2, 3]) {
      const cell = e.getCell('T', col, r);
      assert.ok(
        Array.isArray(cell) && cell[0] === 'E' && cell[1] === 'AttributeError',
        `${col} ${r}: ${JSON.stringify(cell)}`,
      );
    }
});

test.run();
