// Engine-only timings of the benchmark shapes (the `pnpm bench` scenarios add SQLite).
// Limits are loose (2 shared cores); the numbers are printed. GRISTLITE_PERF_RUNS=n repeats each.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type ColumnSpec, FormulaEngine} from '../src/formula/engine.js';

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, type: string, text: string): ColumnSpec => ({
  colId,
  type,
  isFormula: true,
  formula: text,
});
const RUNS = Number(process.env.GRISTLITE_PERF_RUNS ?? 3);
const N = 100_000;

function ids(n: number, from = 1): number[] {
  return Array.from({length: n}, (_, i) => i + from);
}

/** The best of RUNS timings of `measure` (each run on fresh state from `setup`). */
function best<S>(setup: () => S, measure: (s: S) => void): number {
  let min = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const s = setup();
    const t0 = performance.now();
    measure(s);
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

function ordersEngine(): FormulaEngine {
  const e = new FormulaEngine();
  const rows = ids(N);
  e.loadTable({tableId: 'Customers', columns: [data('Name', 'Text')]}, ids(1000), {
    Name: ids(1000).map((i) => `C${i}`),
  });
  e.loadTable(
    {tableId: 'Orders', columns: [data('Price', 'Numeric'), data('Qty', 'Int'), data('Cust', 'Ref:Customers')]},
    rows,
    {
      Price: rows.map((i) => (i % 97) + 0.5),
      Qty: rows.map((i) => i % 13),
      Cust: rows.map((i) => (i % 1000) + 1),
    },
  );
  return e;
}

test('perf: 100k-row $Price * $Qty column', () => {
  const ms = best(ordersEngine, (e) => {
    e.addColumn('Orders', formula('Total', 'Numeric', '$Price * $Qty'));
    const r = e.recalc();
    assert.is(r.evaluations, N);
  });
  console.log(`  100k-row $Price * $Qty: ${ms.toFixed(1)} ms`);
  assert.ok(ms < 1500, `${ms} ms`);
});

test('perf: 100k-row $Cust.Name through a reference', () => {
  const ms = best(ordersEngine, (e) => {
    e.addColumn('Orders', formula('CName', 'Text', '$Cust.Name'));
    e.recalc();
  });
  console.log(`  100k-row $Cust.Name: ${ms.toFixed(1)} ms`);
  assert.ok(ms < 3000, `${ms} ms`);
});

test('perf: 1,000 SUM(Orders.lookupRecords(Cust=$id).Price) over 100k rows', () => {
  let e0: FormulaEngine | null = null;
  const ms = best(ordersEngine, (e) => {
    e.addColumn('Customers', formula('Total', 'Numeric', 'SUM(Orders.lookupRecords(Cust=$id).Price)'));
    e.recalc();
    e0 = e;
  });
  const e = e0!;
  console.log(`  1,000 lookup sums over 100k rows (index build included): ${ms.toFixed(1)} ms`);
  assert.ok(ms < 1500, `${ms} ms`);
  // Incremental: a price change recomputes the one sum that read it.
  const before = e.getCell('Customers', 'Total', 6) as number;
  e.updateRecords('Orders', [5], {Price: [1000.5]});
  const t0 = performance.now();
  const r = e.recalc();
  const one = performance.now() - t0;
  console.log(`  one price change under the lookup sums: ${one.toFixed(2)} ms, ${r.evaluations} evaluation(s)`);
  assert.is(r.evaluations, 1);
  assert.is(e.getCell('Customers', 'Total', 6), before - ((5 % 97) + 0.5) + 1000.5);
  // Moving an order to another customer recomputes both sums.
  e.updateRecords('Orders', [5], {Cust: [7]});
  assert.is(e.recalc().evaluations, 2);
  assert.is(e.getCell('Customers', 'Total', 6), before - ((5 % 97) + 0.5));
});

test('perf: lookups on a formula key column computed after them (the key column computed once, not per lookup)', () => {
  const n = 20_000;
  const rows = ids(n);
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [data('A', 'Int'), formula('N', 'Int', 'len(T.lookupRecords(K=$K))'), formula('K', 'Int', '$A % 100')],
    },
    rows,
    {A: rows},
  );
  e.recomputeAll();
  const t0 = performance.now();
  const r = e.recalc();
  const ms = performance.now() - t0;
  console.log(`  20k lookups waiting for their 20k-row formula key column: ${ms.toFixed(1)} ms`);
  assert.ok(r.evaluations <= 2 * n + 2, `${r.evaluations} evaluations`);
  assert.is(e.getCell('T', 'N', 1), 200);
  assert.ok(ms < 3000, `${ms} ms`);
});

test('perf: a running total with PREVIOUS over 4,000 rows (the order cached, not re-sorted per row)', () => {
  const n = 4000;
  const rows = ids(n);
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Int'),
        formula('Cum', 'Int', 'PREVIOUS(rec, order_by="K").Cum + $A'),
        formula('K', 'Int', '-$A'),
      ],
    },
    rows,
    {A: rows},
  );
  e.recomputeAll();
  const t0 = performance.now();
  e.recalc();
  const ms = performance.now() - t0;
  console.log(`  4,000-row running total with PREVIOUS: ${ms.toFixed(1)} ms`);
  assert.is(e.getCell('T', 'Cum', 1), (n * (n + 1)) / 2);
  assert.is(e.getCell('T', 'Cum', n), n);
  // A change re-sorts once and recomputes the rows after it in the order.
  e.updateRecords('T', [n], {A: [n + 1]});
  e.recalc();
  assert.is(e.getCell('T', 'Cum', 1), (n * (n + 1)) / 2 + 1);
  assert.ok(ms < 3000, `${ms} ms`);
});

test('perf: a one-cell update with 100 dependents', () => {
  const e = new FormulaEngine();
  e.loadTable({tableId: 'Customers', columns: [data('Name', 'Text')]}, [1, 2], {Name: ['a', 'b']});
  const rows = ids(10_000);
  e.loadTable(
    {tableId: 'Orders', columns: [data('Cust', 'Ref:Customers'), formula('CName', 'Text', '$Cust.Name')]},
    rows,
    {Cust: rows.map((i) => (i <= 100 ? 1 : 2))},
  );
  e.recomputeAll();
  e.recalc();
  let min = Infinity;
  for (let i = 0; i < Math.max(RUNS, 5); i++) {
    e.updateRecords('Customers', [1], {Name: [`a${i}`]});
    const t0 = performance.now();
    const r = e.recalc();
    min = Math.min(min, performance.now() - t0);
    assert.is(r.evaluations, 100);
  }
  console.log(`  one-cell update with 100 dependents: ${min.toFixed(2)} ms`);
  assert.ok(min < 20, `${min} ms`);
});

test.run();
