import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {FormulaEngine, type ColumnSpec} from '../src/engine.js';
import {PyCallable, truthy, type Value} from '../src/values.js';

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, type: string, text: string): ColumnSpec => ({
  colId,
  type,
  isFormula: true,
  formula: text,
});

// A minimal stand-in for the function library's IF/SUM (lazy IF receives thunks, as in Grist).
const lib = {
  functions: {
    SUM: new PyCallable('SUM', (args) => {
      let s = 0;
      for (const a of args)
        for (const x of Array.isArray(a) ? a : [a]) if (typeof x === 'number' || typeof x === 'bigint') s += Number(x);
      return s;
    }),
    IF: new PyCallable('IF', (args) => {
      const v = truthy(args[0]) ? args[1] : args[2];
      return v instanceof PyCallable ? v.call([], null) : (v ?? null);
    }),
  },
  modules: {},
};

function orders(): FormulaEngine {
  const e = new FormulaEngine({library: lib});
  e.loadTable(
    {
      tableId: 'Customers',
      columns: [
        data('Name', 'Text'),
        formula('Orders', 'RefList:Orders', 'Orders.lookupRecords(Customer=$id)'),
        formula('Total', 'Numeric', 'SUM(Orders.lookupRecords(Customer=$id).Amount)'),
        formula('Count', 'Int', 'len($Orders)'),
      ],
    },
    [1, 2],
    {Name: ['Ann', 'Bob']},
  );
  e.loadTable(
    {
      tableId: 'Orders',
      columns: [
        data('Customer', 'Ref:Customers'),
        data('Price', 'Numeric'),
        data('Qty', 'Int'),
        formula('Amount', 'Numeric', '$Price * $Qty'),
        formula('CustName', 'Text', '$Customer.Name.upper()'),
      ],
    },
    [1, 2, 3],
    {Customer: [1, 1, 2], Price: [2.5, 10, 4], Qty: [2, 1, 3]},
  );
  e.recomputeAll();
  return e;
}

test('formulas compute, through references and lookups', () => {
  const e = orders();
  const r = e.recalc();
  assert.equal(r.changes.Orders.Amount, {rowIds: [1, 2, 3], values: [5, 10, 12]});
  assert.equal(r.changes.Orders.CustName.values, ['ANN', 'ANN', 'BOB']);
  assert.equal(r.changes.Customers.Total.values, [15, 12]);
  assert.equal(r.changes.Customers.Orders.values, [
    ['L', 1, 2],
    ['L', 3],
  ]);
  assert.equal(r.changes.Customers.Count.values, [2, 1]);
  assert.equal(r.rowsChanged, {Customers: [1, 2], Orders: [1, 2, 3]});
  // Nothing dirty: nothing recomputed.
  assert.is(e.recalc().evaluations, 0);
});

test('incremental: only affected cells recompute, and only changes are returned', () => {
  const e = orders();
  e.recalc();
  e.updateRecords('Orders', [3], {Qty: [4]});
  let r = e.recalc();
  assert.equal(r.changes, {
    Orders: {Amount: {rowIds: [3], values: [16]}},
    Customers: {Total: {rowIds: [2], values: [16]}},
  });
  assert.is(r.evaluations, 2);
  // Renaming a customer reaches the orders that reference it.
  e.updateRecords('Customers', [1], {Name: ['Amy']});
  r = e.recalc();
  assert.equal(r.changes, {Orders: {CustName: {rowIds: [1, 2], values: ['AMY', 'AMY']}}});
  assert.is(r.evaluations, 2);
  // Moving an order to another customer updates both lookups.
  e.updateRecords('Orders', [2], {Customer: [2]});
  r = e.recalc();
  assert.equal(r.changes.Customers.Total, {rowIds: [1, 2], values: [5, 26]});
  assert.equal(r.changes.Customers.Orders.values, [
    ['L', 1],
    ['L', 2, 3],
  ]);
  assert.equal(r.changes.Orders.CustName, {rowIds: [2], values: ['BOB']});
  // Adding and removing rows.
  e.addRecords('Orders', [4], {Customer: [1], Price: [1], Qty: [1]});
  r = e.recalc();
  assert.equal(r.changes.Orders.Amount, {rowIds: [4], values: [1]});
  assert.equal(r.changes.Customers.Total, {rowIds: [1], values: [6]});
  e.removeRecords('Orders', [1]);
  r = e.recalc();
  assert.equal(r.changes.Customers.Total, {rowIds: [1], values: [1]});
  assert.equal(r.changes.Customers.Count, {rowIds: [1], values: [1]});
});

test('errors: stored as Grist stores them, re-raised by readers, cycles', () => {
  const e = new FormulaEngine({library: lib});
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Numeric'),
        formula('B', 'Numeric', '1 / $A'),
        formula('C', 'Any', '$B * 2'),
        formula('D', 'Text', 'type($B).__name__'),
        formula('X', 'Int', '$Y + 1'),
        formula('Y', 'Int', '$X + 1'),
        formula('S', 'Int', '1 +'),
      ],
    },
    [1, 2],
    {A: [0, 4]},
  );
  e.recomputeAll();
  const r = e.recalc();
  // Grist stores a formula error as its type only; the engine keeps the message for readers.
  assert.equal(r.changes.T.B.values, [['E', 'ZeroDivisionError'], 0.25]);
  assert.equal(e.errorMessage('T', 'B', 1), 'float division by zero');
  assert.equal(r.changes.T.C.values, [['E', 'ZeroDivisionError'], 0.5]);
  assert.equal(e.errorMessage('T', 'C', 1), 'float division by zero');
  assert.equal(r.changes.T.X.values, [
    ['E', 'CircularRefError'],
    ['E', 'CircularRefError'],
  ]);
  assert.equal(r.changes.T.Y.values, [
    ['E', 'CircularRefError'],
    ['E', 'CircularRefError'],
  ]);
  assert.equal((r.changes.T.S.values[0] as string[])[0], 'E');
  assert.is((r.changes.T.S.values[0] as string[])[1], 'SyntaxError');
  e.updateRecords('T', [1], {A: [2]});
  assert.equal(e.recalc().changes.T.B.values, [0.5]);
  assert.is(e.errorMessage('T', 'B', 1), undefined);
});

test('conversions to the column type', () => {
  const e = new FormulaEngine({library: lib});
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        formula('I', 'Int', '7 / 2'),
        formula('N', 'Numeric', '3'),
        formula('Txt', 'Text', '42'),
        formula('B', 'Bool', '1'),
        formula('Bad', 'Numeric', "'abc'"),
        formula('ReadBad', 'Any', '$Bad'),
        formula('Big', 'Any', '2 ** 40'),
        formula('L', 'Any', '[1, "a", None]'),
        formula('R', 'Ref:T', 'T.lookupOne(id=1)'),
        formula('RL', 'RefList:T', 'T.all'),
        formula('CL', 'ChoiceList', "('a', 'b')"),
        formula('Rec', 'Any', 'rec'),
        formula('Dict', 'Any', "{'a': 1}"),
        formula('Empty', 'Int', ''),
        formula('F', 'Any', '1.0'),
      ],
    },
    [1, 2],
    {},
  );
  e.recomputeAll();
  const c = e.recalc().changes.T;
  assert.equal(c.I.values[0], 3);
  assert.equal(c.N.values[0], 3);
  assert.equal(c.Txt.values[0], '42');
  assert.equal(c.B.values[0], true);
  assert.equal(c.Bad.values[0], 'abc');
  // Alt text passes through a formula as Grist's AltText (stored back as its text).
  assert.equal(c.ReadBad.values[0], 'abc');
  assert.equal(c.Big.values[0], ['U', '1099511627776']);
  assert.equal(c.L.values[0], ['L', 1, 'a', null]);
  assert.equal(c.R.values, [1, 1]);
  assert.equal(c.RL.values[0], ['L', 1, 2]);
  assert.equal(c.CL.values[0], ['L', 'a', 'b']);
  assert.equal(c.Rec.values, [
    ['R', 'T', 1],
    ['R', 'T', 2],
  ]);
  assert.equal(c.Dict.values[0], ['O', {a: 1}]);
  assert.is(c.Empty, undefined); // the default 0 is already stored
  assert.equal(c.F.values[0], 1);
});

test('records: empty references give defaults, chains, order_by, Table.all, RECORD, PEEK', () => {
  const e = new FormulaEngine({library: lib});
  e.loadTable(
    {
      tableId: 'P',
      columns: [
        data('Name', 'Text'),
        data('Age', 'Int'),
        data('Boss', 'Ref:P'),
        formula('BossName', 'Text', '$Boss.Name or "-"'),
        formula('BossBossAge', 'Int', '$Boss.Boss.Age'),
        formula('Young', 'Any', "[r.Name for r in P.lookupRecords(Boss=$Boss, order_by='Age')]"),
        formula('Old', 'Any', "P.lookupRecords(Boss=$Boss, order_by=('-Age', 'Name')).Name"),
        formula('N', 'Int', 'len(P.all)'),
        formula('Rec', 'Any', "RECORD($Boss)['Name'] if $Boss else None"),
        formula('Peek', 'Int', 'PEEK($Age) + 0'),
        formula('IdBool', 'Any', '($id, bool($Boss), $Boss.id)'),
      ],
    },
    [1, 2, 3, 4],
    {Name: ['A', 'B', 'C', 'D'], Age: [50, 40, 30, 40], Boss: [0, 1, 1, 2]},
  );
  e.recomputeAll();
  const c = e.recalc().changes.P;
  assert.equal(c.BossName.values, ['-', 'A', 'A', 'B']);
  // Rows 1-3 reach an empty reference and keep the stored default 0.
  assert.equal(c.BossBossAge, {rowIds: [4], values: [50]});
  assert.equal(c.Young.values[1], ['L', 'C', 'B']);
  assert.equal(c.Old.values[1], ['L', 'B', 'C']);
  assert.equal(c.N.values, [4, 4, 4, 4]);
  assert.equal(c.Rec, {rowIds: [2, 3, 4], values: ['A', 'A', 'B']});
  assert.equal(c.IdBool.values[0], ['L', 1, false, 0]);
  e.addRecords('P', [5], {Name: ['E'], Age: [20], Boss: [1]});
  const c2 = e.recalc().changes.P;
  assert.equal(c2.N.values, [5, 5, 5, 5, 5]);
  assert.equal(c2.Young.rowIds, [2, 3, 5]);
  // PEEK reads without a dependency: changing Age does not recompute Peek.
  e.updateRecords('P', [1], {Age: [51]});
  const c3 = e.recalc().changes.P;
  assert.is(c3.Peek, undefined);
});

test('a 10,000-deep chain of references does not overflow the stack', () => {
  const e = new FormulaEngine({library: lib});
  const n = 10000;
  const ids = Array.from({length: n}, (_, i) => i + 1);
  e.loadTable(
    {
      tableId: 'C',
      columns: [data('Next', 'Ref:C'), data('V', 'Int'), formula('Sum', 'Int', '$V + ($Next.Sum if $Next else 0)')],
    },
    ids,
    {Next: ids.map((i) => (i < n ? i + 1 : 0)), V: ids.map(() => 1)},
  );
  e.recomputeAll();
  const r = e.recalc();
  assert.is(r.changes.C.Sum.values[0], n);
  e.updateRecords('C', [n], {V: [2]});
  const r2 = e.recalc();
  assert.is(r2.changes.C.Sum.values.length, n);
  assert.is(r2.changes.C.Sum.values[0], n + 1);
});

test('trigger formulas: new records, recalcDeps, manual updates, explicit values win', () => {
  const e = new FormulaEngine({library: lib});
  const trig = (colId: string, text: string, recalcWhen: number, recalcDeps: string[] | null = null): ColumnSpec => ({
    colId,
    type: 'Any',
    isFormula: false,
    formula: text,
    recalcWhen,
    recalcDeps,
  });
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Int'),
        data('B', 'Int'),
        trig('OnNew', '$A * 10', 0),
        trig('OnA', '$A + 100', 0, ['A']),
        trig('Never', '"x"', 1),
        trig('Any', '$A + $B', 2),
        trig('Clean', '$Clean.strip() if $Clean else ""', 0, ['Clean']),
      ],
    },
    [],
    {},
  );
  // A column present in an action is an explicit value for each of its rows.
  e.addRecords('T', [1], {A: [1], B: [0], Clean: ['  x ']});
  e.addRecords('T', [2], {A: [2], B: [0], OnNew: [7]});
  let c = e.recalc().changes.T;
  assert.equal(c.OnNew, {rowIds: [1], values: [10]}); // row 2's explicit value wins
  assert.equal(c.OnA.values, [101, 102]);
  assert.is(c.Never, undefined);
  assert.equal(c.Any.values, [1, 2]);
  assert.equal(c.Clean.values, ['x', '']); // reads its own column: applies to the given value
  e.updateRecords('T', [1], {A: [5]});
  c = e.recalc().changes.T;
  assert.is(c.OnNew, undefined);
  assert.equal(c.OnA, {rowIds: [1], values: [105]});
  assert.equal(c.Any, {rowIds: [1], values: [5]});
  e.updateRecords('T', [2], {B: [3]});
  c = e.recalc().changes.T;
  assert.equal(Object.keys(c), ['Any']);
  e.updateRecords('T', [1], {Clean: [' y  ']});
  c = e.recalc().changes.T;
  assert.equal(c.Clean, {rowIds: [1], values: ['y']});
});

test('schema changes: new formula columns compute at once, formula edits recompute, removed columns error', () => {
  const e = orders();
  e.recalc();
  e.addColumn('Orders', formula('Double', 'Numeric', '$Amount * 2'));
  assert.equal(e.recalc().changes.Orders.Double.values, [10, 20, 24]);
  e.modifyColumn('Orders', 'Double', {formula: '$Amount * 3'});
  assert.equal(e.recalc().changes.Orders.Double.values, [15, 30, 36]);
  e.removeColumn('Orders', 'Amount');
  const r = e.recalc();
  assert.equal((r.changes.Orders.Double.values[0] as string[])[1], 'AttributeError');
  void r;
  e.addColumn('Orders', formula('Amount', 'Numeric', '$Price'));
  const r2 = e.recalc();
  assert.equal(r2.changes.Orders.Double.values, [7.5, 30, 12]);
});

test('clock: volatile formulas recompute when the clock is invalidated', () => {
  let now = 1;
  const e = new FormulaEngine({library: {functions: {NOW: new PyCallable('NOW', () => now)}, modules: {}}});
  e.loadTable({tableId: 'T', columns: [formula('N', 'Any', 'NOW()')]}, [1], {});
  e.recomputeAll();
  assert.equal(e.recalc().changes.T.N.values, [1]);
  now = 2;
  assert.is(e.recalc().evaluations, 0);
  e.invalidateClock();
  assert.equal(e.recalc().changes.T.N.values, [2]);
});

test('budgets: a runaway formula becomes an error cell', () => {
  const e = new FormulaEngine({library: lib, budget: {maxIterations: 1000}});
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        formula('X', 'Any', 'while True:\n  pass'),
        formula('Y', 'Any', 'x = 0\nwhile True:\n  x += 1\nreturn x'),
      ],
    },
    [1],
    {},
  );
  e.recomputeAll();
  const c = e.recalc().changes.T;
  assert.equal((c.X.values[0] as string[])[1], 'SyntaxError');
  void c;
  assert.equal((c.Y.values[0] as string[])[1], 'TimeoutError');
});

void (null as unknown as Value);

test('the function library and modules as Grist formulas see them', () => {
  const e = new FormulaEngine();
  const d = (colId: string, type: string) => data(colId, type);
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        d('A', 'Numeric'),
        d('D', 'Date'),
        d('DT', 'DateTime:America/New_York'),
        formula('If', 'Any', 'IF($A > 1, "big", 1/0)'),
        formula('Iferr', 'Any', 'IFERROR(1/0, "x")'),
        formula('Year', 'Int', '$D.year'),
        formula('Add', 'Date', 'DATEADD($D, days=1)'),
        formula('Dt', 'DateTime:America/New_York', 'datetime.datetime(2020, 1, 1, 12, 0)'),
        formula('DtAny', 'Any', '$DT'),
        formula('Sum', 'Numeric', 'SUM(T.all.A)'),
        formula('Re', 'Any', "re.sub('a', 'b', 'banana')"),
        formula('Math', 'Numeric', 'math.sqrt(16)'),
        formula('Bad', 'Any', 'import os\nreturn 1'),
      ],
    },
    [1, 2],
    {A: [2, 0.5], D: [1577836800, 0], DT: [1577898000, 0]},
  );
  e.recomputeAll();
  const c = e.recalc().changes.T;
  assert.equal(c.If.values, ['big', ['E', 'ZeroDivisionError']]);
  assert.equal(c.Iferr.values, ['x', 'x']);
  assert.equal(c.Year.values, [2020, 1970]);
  assert.equal(c.Add.values, [1577923200, 86400]);
  assert.equal(c.Dt.values, [1577898000, 1577898000]); // naive datetime read in the column's zone
  assert.equal(c.DtAny.values[0], ['D', 1577898000, 'America/New_York']);
  assert.equal(c.Sum.values, [2.5, 2.5]); // the table T shadows the function T()
  assert.equal(c.Re.values[0], 'bbnbnb');
  assert.equal(c.Math.values[0], 4);
  assert.equal(c.Bad.values[0], ['E', 'ModuleNotFoundError']);
  assert.is(e.errorMessage('T', 'Bad', 1), "No module named 'os'");
});

test.run();
