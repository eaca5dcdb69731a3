// The engine's work on the benchmark shapes, counted: formula cells evaluated and order_by
// sorts done. A regression to per-row work (a key column recomputed per lookup, an order re-sorted
// per row) shows here as a count, on any machine; how fast each shape runs is measured by the
// benchmarks against raw SQLite (bench/src/formulas.ts, F1-F7, docs/performance.md).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type ColumnSpec, FormulaEngine} from '../src/engine.js';

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, type: string, text: string): ColumnSpec => ({
  colId,
  type,
  isFormula: true,
  formula: text,
});
const N = 100_000;

function ids(n: number, from = 1): number[] {
  return Array.from({length: n}, (_, i) => i + from);
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

test('100k-row $Price * $Qty column: one evaluation a row', () => {
  const e = ordersEngine();
  e.addColumn('Orders', formula('Total', 'Numeric', '$Price * $Qty'));
  assert.is(e.recalc().evaluations, N);
  assert.is(e.getCell('Orders', 'Total', 5), ((5 % 97) + 0.5) * (5 % 13));
});

test('100k-row $Cust.Name through a reference: one evaluation a row', () => {
  const e = ordersEngine();
  e.addColumn('Orders', formula('CName', 'Text', '$Cust.Name'));
  assert.is(e.recalc().evaluations, N);
  assert.is(e.getCell('Orders', 'CName', 1), 'C2');
  assert.is(e.getCell('Orders', 'CName', 1000), 'C1');
});

test('1,000 SUM(Orders.lookupRecords(Cust=$id).Price) over 100k rows: one evaluation a sum, then one a change', () => {
  const e = ordersEngine();
  e.addColumn('Customers', formula('Total', 'Numeric', 'SUM(Orders.lookupRecords(Cust=$id).Price)'));
  assert.is(e.recalc().evaluations, 1000);
  // Incremental: a price change recomputes the one sum that read it.
  const before = e.getCell('Customers', 'Total', 6) as number;
  e.updateRecords('Orders', [5], {Price: [1000.5]});
  assert.is(e.recalc().evaluations, 1);
  assert.is(e.getCell('Customers', 'Total', 6), before - ((5 % 97) + 0.5) + 1000.5);
  // Moving an order to another customer recomputes both sums.
  e.updateRecords('Orders', [5], {Cust: [7]});
  assert.is(e.recalc().evaluations, 2);
  assert.is(e.getCell('Customers', 'Total', 6), before - ((5 % 97) + 0.5));
});

test('lookups on a formula key column computed after them: the key column computed once, not per lookup', () => {
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
  const r = e.recalc();
  // Each of the 2n cells once, give or take the lookup that found K dirty and waited for it.
  assert.ok(r.evaluations <= 2 * n + 2, `${r.evaluations} evaluations`);
  assert.is(e.getCell('T', 'N', 1), 200);
});

test('a running total with PREVIOUS over 4,000 rows: the order sorted once, not per row', () => {
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
  const first = e.recalc();
  assert.ok(first.sorts <= 2, `${first.sorts} sorts for ${n} rows`);
  assert.is(e.getCell('T', 'Cum', 1), (n * (n + 1)) / 2);
  assert.is(e.getCell('T', 'Cum', n), n);
  // A change re-sorts once and recomputes the rows after it in the order.
  e.updateRecords('T', [n], {A: [n + 1]});
  const again = e.recalc();
  assert.ok(again.sorts <= 2, `${again.sorts} sorts after one change`);
  assert.is(e.getCell('T', 'Cum', 1), (n * (n + 1)) / 2 + 1);
});

test('a one-cell update with 100 dependents evaluates those 100, each time', () => {
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
  for (let i = 0; i < 5; i++) {
    e.updateRecords('Customers', [1], {Name: [`a${i}`]});
    assert.is(e.recalc().evaluations, 100);
    assert.is(e.getCell('Orders', 'CName', 100), `a${i}`);
    assert.is(e.getCell('Orders', 'CName', 101), 'b');
  }
});

test.run();
