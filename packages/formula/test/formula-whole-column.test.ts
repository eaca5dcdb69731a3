// A whole formula column computed at once (issue 43 §1): its rows marked dirty in one pass
// (RowSet.addAll) and its changes kept in arrays sized to its dirty cells. These check both against
// the one-at-a-time behaviour they replace, on random data: rows listed twice or missing, None,
// wrong types in Any columns, errors, and more changes than the arrays were sized for.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type ColumnSpec, FormulaEngine, RecalcWhen} from '../src/engine.js';
import {RowSet} from '../src/rows.js';
import type {CellValue} from '../src/cells/types.js';

/** A small deterministic generator (the same cases on every run). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

function snapshot(set: RowSet): {list: number[]; size: number; has: boolean[]} {
  const has: boolean[] = [];
  for (let r = -2; r < 80; r++) has.push(set.has(r));
  return {list: [...set], size: set.size, has};
}

test('RowSet.addAll: the same set, order and result as `add` one row at a time', () => {
  const rand = rng(43);
  for (let round = 0; round < 400; round++) {
    const a = new RowSet();
    const b = new RowSet();
    // Some sets start with rows (the list is appended to), some empty (the list is replaced).
    const start = Array.from({length: Math.floor(rand() * 4) * Math.floor(rand() * 10)}, () => Math.floor(rand() * 60));
    for (const r of start) {
      a.add(r);
      b.add(r);
    }
    // Rows listed twice, out of order, beyond the flags' size, and ones `keep` rejects.
    const rows = Array.from({length: Math.floor(rand() * 40)}, () => Math.floor(rand() * 75) - 1);
    const dropAll = rand() < 0.1;
    const keep = (r: number) => !dropAll && r >= 1 && r % 7 !== 3;
    const expected: number[] = [];
    for (const r of rows) {
      if (!a.has(r) && keep(r)) {
        a.add(r);
        expected.push(r);
      }
    }
    const copy = rows.slice();
    const fresh = b.addAll(rows, keep);
    assert.equal(fresh, expected, `round ${round}: the rows added`);
    assert.equal(snapshot(b), snapshot(a), `round ${round}: the set`);
    assert.equal(rows, copy, `round ${round}: the rows given are left as they were`);
    // Later adds and deletes behave the same on both.
    for (let i = 0; i < 5; i++) {
      const r = Math.floor(rand() * 70) + 1;
      if (rand() < 0.5) {
        a.add(r);
        b.add(r);
      } else {
        a.delete(r);
        b.delete(r);
      }
    }
    assert.equal(snapshot(b), snapshot(a), `round ${round}: after more changes`);
  }
});

test('RowSet.addAll into an empty set: rows added while iterating it are visited, as with add', () => {
  const set = new RowSet();
  const rows = [1, 2, 3, 4];
  set.addAll(rows, () => true);
  const seen: number[] = [];
  for (const r of set) {
    seen.push(r);
    if (r === 2) set.addAll([9, 3, 10], () => true);
  }
  assert.equal(seen, [1, 2, 3, 4, 9, 10]);
  assert.equal(rows, [1, 2, 3, 4], 'the caller keeps its array');
});

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});

/** Cells of every kind an Any column may hold, and a Numeric column with None and wrong types. */
function randomTable(n: number, seed: number): {ids: number[]; A: CellValue[]; N: CellValue[]} {
  const rand = rng(seed);
  const ids: number[] = [];
  for (let id = 1; ids.length < n; id++) if (rand() < 0.8) ids.push(id); // gaps between ids
  const anyCell = (): CellValue => {
    const k = Math.floor(rand() * 8);
    if (k === 0) return null;
    if (k === 1) return 'text';
    if (k === 2) return true;
    if (k === 3) return ['L', 1, 2];
    if (k === 4) return Math.floor(rand() * 10);
    if (k === 5) return ['E', 'ValueError'];
    return rand() * 100 - 50;
  };
  const numCell = (): CellValue => {
    const k = Math.floor(rand() * 10);
    if (k === 0) return null;
    if (k === 1) return 'alt text';
    if (k === 2) return 0;
    return Math.round(rand() * 1000) / 8;
  };
  return {ids, A: ids.map(anyCell), N: ids.map(numCell)};
}

/** Every cell of a column, by row id, from the engine's reported changes over loaded values. */
function cellsAfter(e: FormulaEngine, ids: number[], colId: string, defaults: CellValue): Map<number, CellValue> {
  const out = new Map<number, CellValue>(ids.map((r) => [r, defaults]));
  const ch = e.recalc().changes.T?.[colId];
  if (ch) ch.rowIds.forEach((r, i) => out.set(r, ch.values[i]));
  return out;
}

test('a whole formula column on random data: the cells each row computes alone', () => {
  for (const n of [1, 7, 300, 5000]) {
    const {ids, A, N} = randomTable(n, n);
    const load = () => {
      const e = new FormulaEngine();
      e.loadTable({tableId: 'T', columns: [data('A', 'Any'), data('N', 'Numeric')]}, ids, {A, N});
      return e;
    };
    for (const [text, type] of [
      ['$N * 2', 'Numeric'],
      ['$A * 2', 'Any'],
      ['$A + $N', 'Any'],
      ['str($A)', 'Text'],
      ['$N if $N else None', 'Numeric'],
    ] as const) {
      // The whole column at once...
      const whole = load();
      whole.addColumn('T', {colId: 'F', type, isFormula: true, formula: text});
      const got = cellsAfter(whole, ids, 'F', type === 'Numeric' ? 0 : type === 'Text' ? '' : null);
      // ...against each row computed by itself: computed once over placeholders (its dependencies
      // then known), then one row's cells set and recalculated at a time.
      const alone = new FormulaEngine();
      alone.loadTable(
        {
          tableId: 'T',
          columns: [data('A', 'Any'), data('N', 'Numeric'), {colId: 'F', type, isFormula: true, formula: text}],
        },
        ids,
        {A: ids.map(() => 'placeholder'), N: ids.map(() => -1), F: ids.map(() => 'placeholder')},
      );
      alone.recomputeAll();
      alone.recalc();
      const want = new Map<number, CellValue>();
      ids.forEach((r, i) => {
        alone.updateRecords('T', [r], {A: [A[i]], N: [N[i]]});
        const ch = alone.recalc();
        assert.equal(ch.evaluations, 1);
        want.set(r, alone.getCell('T', 'F', r) ?? null);
      });
      for (const r of ids) assert.equal(got.get(r), want.get(r), `${text}, ${n} rows, row ${r}`);
    }
  }
});

test('more changes in a column than it had dirty cells when its first was stored: all reported', () => {
  // G, a trigger formula on F, comes first: its one dirty cell (a new row) is computed first and
  // sizes G's change arrays; F's changes on the other rows then mark G's dirty one at a time.
  for (const n of [3, 250, 4000]) {
    const ids = Array.from({length: n}, (_, i) => i + 1);
    const e = new FormulaEngine();
    e.loadTable(
      {
        tableId: 'T',
        columns: [
          data('X', 'Int'),
          {
            colId: 'G',
            type: 'Any',
            isFormula: false,
            formula: '$F + 1',
            recalcWhen: RecalcWhen.DEFAULT,
            recalcDeps: ['F'],
          },
          {colId: 'F', type: 'Int', isFormula: true, formula: '$X * 10'},
        ],
      },
      ids,
      {X: ids.map(() => 0), G: ids.map(() => 1), F: ids.map(() => 0)},
    );
    e.recomputeAll();
    e.recalc();
    e.addRecords('T', [n + 1], {X: [7]});
    e.updateRecords('T', ids, {X: ids.map((i) => i % 5)});
    const result = e.recalc();
    const changed = [...ids.filter((i) => i % 5 !== 0), n + 1];
    const x = (r: number) => (r === n + 1 ? 7 : r % 5);
    assert.equal(result.changes.T.F.rowIds, changed);
    assert.equal(
      result.changes.T.F.values,
      changed.map((r) => x(r) * 10),
    );
    assert.equal(result.changes.T.G.rowIds, changed, `${n} rows: every trigger cell whose dependency changed`);
    assert.equal(
      result.changes.T.G.values,
      changed.map((r) => x(r) * 10 + 1),
    );
    assert.equal(result.rowsChanged.T, changed);
  }
});

test.run();
