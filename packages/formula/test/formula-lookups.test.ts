// Lookups, summary groups, triggers on formula dependencies, and Grist's reading of odd cells.
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
const trigger = (
  colId: string,
  type: string,
  text: string,
  recalcDeps: string[] | null,
  recalcWhen = 0,
): ColumnSpec => ({colId, type, isFormula: false, formula: text, recalcWhen, recalcDeps});

function cells(e: FormulaEngine, tableId: string, colId: string): unknown[] {
  return e.rowIdsOf(tableId).map((r) => e.getCell(tableId, colId, r));
}

test('CONTAINS: lookups on RefList and ChoiceList cells, kept current as lists change', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'Tags',
      columns: [
        data('Name', 'Text'),
        formula('Count', 'Int', 'len(Items.lookupRecords(Tags=CONTAINS($id)))'),
        formula('Names', 'Any', "' '.join(Items.lookupRecords(Tags=CONTAINS($id)).Name)"),
      ],
    },
    [1, 2, 3],
    {Name: ['a', 'b', 'c']},
  );
  e.loadTable(
    {
      tableId: 'Items',
      columns: [
        data('Name', 'Text'),
        data('Tags', 'RefList:Tags'),
        data('Colors', 'ChoiceList'),
        formula('Reds', 'Int', "len(Items.lookupRecords(Colors=CONTAINS('red')))"),
        formula('Blank', 'Int', "len(Items.lookupRecords(Colors=CONTAINS('', match_empty='')))"),
        formula('Str', 'Int', "len(Items.lookupRecords(Name=CONTAINS('x')))"),
      ],
    },
    [1, 2, 3],
    {Name: ['x', 'y', 'z'], Tags: [['L', 1, 2], ['L', 2], null], Colors: [['L', 'red', 'blue'], ['L', 'red'], null]},
  );
  e.recomputeAll();
  e.recalc();
  assert.equal(cells(e, 'Tags', 'Count'), [1, 2, 0]);
  assert.equal(cells(e, 'Tags', 'Names'), ['x', 'x y', '']);
  assert.equal(cells(e, 'Items', 'Reds'), [2, 2, 2]);
  assert.equal(cells(e, 'Items', 'Blank'), [1, 1, 1]); // match_empty: the empty list matches ''
  assert.equal(cells(e, 'Items', 'Str'), [0, 0, 0]); // a text cell is no container (Grist)
  // A list gains and loses items: only the tags involved recompute.
  e.updateRecords('Items', [3], {Tags: [['L', 3, 2]]});
  e.updateRecords('Items', [1], {Tags: [['L', 1]]});
  e.recalc();
  assert.equal(cells(e, 'Tags', 'Count'), [1, 2, 1]);
  assert.equal(cells(e, 'Tags', 'Names'), ['x', 'y z', 'z']);
  // A name read through the lookup key changes: the tags whose lists hold the item recompute.
  e.updateRecords('Items', [2], {Name: ['Y']});
  const r = e.recalc();
  assert.equal(r.changes.Tags.Names, {rowIds: [2], values: ['Y z']});
  e.removeRecords('Items', [3]);
  e.recalc();
  assert.equal(cells(e, 'Tags', 'Count'), [1, 1, 0]);
});

test('reads through a lookup key and Table.all: one entry per key and column, same results as per-row tracking', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'C',
      columns: [
        data('Name', 'Text'),
        formula('Sum', 'Numeric', 'SUM(O.lookupRecords(Cust=$id).Amt)'),
        formula('Loop', 'Numeric', 'sum(o.Amt * 2 for o in O.lookupRecords(Cust=$id, order_by="-Amt"))'),
        formula('First', 'Numeric', 'O.lookupOne(Cust=$id, order_by="Amt").Amt'),
        formula('All', 'Numeric', 'SUM(O.all.Amt)'),
      ],
    },
    [1, 2],
    {Name: ['a', 'b']},
  );
  e.loadTable({tableId: 'O', columns: [data('Cust', 'Ref:C'), data('Amt', 'Numeric')]}, [1, 2, 3], {
    Cust: [1, 1, 2],
    Amt: [1, 2, 4],
  });
  e.recomputeAll();
  e.recalc();
  assert.equal(cells(e, 'C', 'Sum'), [3, 4]);
  assert.equal(cells(e, 'C', 'Loop'), [6, 8]);
  assert.equal(cells(e, 'C', 'First'), [1, 4]);
  assert.equal(cells(e, 'C', 'All'), [7, 7]);
  // An amount of customer 2's order: customer 1's lookups stay, Table.all readers recompute.
  e.updateRecords('O', [3], {Amt: [5]});
  let r = e.recalc();
  assert.equal(r.changes.C.Sum, {rowIds: [2], values: [5]});
  assert.equal(r.changes.C.All, {rowIds: [1, 2], values: [8, 8]});
  assert.is(r.evaluations, 2 + 3); // All (2 rows); Sum, Loop, First of customer 2
  // An order moves: both customers recompute.
  e.updateRecords('O', [1], {Cust: [2]});
  r = e.recalc();
  assert.equal(cells(e, 'C', 'Sum'), [2, 6]);
  assert.equal(cells(e, 'C', 'First'), [2, 1]);
  // Added rows join their key.
  e.addRecords('O', [4], {Cust: [1], Amt: [0.5]});
  e.recalc();
  assert.equal(cells(e, 'C', 'Sum'), [2.5, 6]);
  assert.equal(cells(e, 'C', 'First'), [0.5, 1]);
  assert.equal(cells(e, 'C', 'All'), [8.5, 8.5]);
});

test('reads through a Ref/RefList cell of the own row: recorded per column, dirtying the referring rows only', () => {
  const e = new FormulaEngine();
  e.loadTable({tableId: 'C', columns: [data('Name', 'Text'), data('Price', 'Numeric')]}, [1, 2, 3], {
    Name: ['a', 'b', 'c'],
    Price: [1, 2, 4],
  });
  e.loadTable(
    {
      tableId: 'O',
      columns: [
        data('Cust', 'Ref:C'),
        data('Items', 'RefList:C'),
        data('Pick', 'Int'),
        formula('CName', 'Text', '$Cust.Name'),
        formula('Total', 'Numeric', 'SUM($Items.Price)'),
        formula('PickRef', 'Ref:C', '$Pick'),
        formula('PickName', 'Text', '$PickRef.Name'),
        formula('Other', 'Text', 'O.lookupOne(id=1).Cust.Name'),
      ],
    },
    [1, 2, 3],
    {Cust: [1, 2, 1], Items: [['L', 1, 2], ['L', 3], null], Pick: [3, 3, 2]},
  );
  e.recomputeAll();
  e.recalc();
  assert.equal(cells(e, 'O', 'CName'), ['a', 'b', 'a']);
  assert.equal(cells(e, 'O', 'Total'), [3, 4, 0]);
  assert.equal(cells(e, 'O', 'PickName'), ['c', 'c', 'b']);
  assert.equal(cells(e, 'O', 'Other'), ['a', 'a', 'a']);
  // Renaming customer 1: the orders referring to it, and the cells reading it through another row.
  e.updateRecords('C', [1], {Name: ['A']});
  let r = e.recalc();
  assert.equal(r.changes.O.CName, {rowIds: [1, 3], values: ['A', 'A']});
  assert.equal(r.changes.O.Other, {rowIds: [1, 2, 3], values: ['A', 'A', 'A']});
  assert.is(r.evaluations, 2 + 3);
  // A price in a RefList.
  e.updateRecords('C', [2], {Price: [20]});
  r = e.recalc();
  assert.equal(r.changes.O, {Total: {rowIds: [1], values: [21]}});
  assert.is(r.evaluations, 1);
  // The Ref cell changes: the new target is read (and followed afterwards).
  e.updateRecords('O', [2], {Cust: [3], Items: [['L', 2, 3]]});
  e.recalc();
  e.updateRecords('C', [3], {Name: ['C3'], Price: [40]});
  e.recalc();
  assert.equal(cells(e, 'O', 'CName'), ['A', 'C3', 'A']);
  assert.equal(cells(e, 'O', 'Total'), [21, 60, 0]);
  // Through a formula Ref column.
  assert.equal(cells(e, 'O', 'PickName'), ['C3', 'C3', 'b']);
  e.updateRecords('O', [1], {Pick: [1]});
  e.updateRecords('C', [1], {Name: ['AA']});
  e.recalc();
  assert.equal(cells(e, 'O', 'PickName'), ['AA', 'C3', 'b']);
  // The referenced row goes (references stay, as Grist's doc actions send their own updates), then comes back.
  e.removeRecords('C', [3]);
  e.recalc();
  assert.equal(cells(e, 'O', 'CName'), ['AA', '', 'AA']);
  assert.equal(cells(e, 'O', 'Total'), [21, 20, 0]);
  e.addRecords('C', [3], {Name: ['back'], Price: [1]});
  e.recalc();
  assert.equal(cells(e, 'O', 'CName'), ['AA', 'back', 'AA']);
  assert.equal(cells(e, 'O', 'PickName'), ['AA', 'back', 'b']);
});

test('a column read from a RecordSet before it is computed: its cells computed together, cycles found', () => {
  const n = 2000;
  const rows = Array.from({length: n}, (_, i) => i + 1);
  const e = new FormulaEngine();
  e.loadTable(
    {tableId: 'S', columns: [formula('Sum', 'Int', 'SUM(T.all.X)'), formula('Loop', 'Int', 'sum(r.X for r in T.all)')]},
    [1],
    {},
  );
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Int'),
        formula('X', 'Int', '$A * 2'),
        formula('Y', 'Int', 'SUM(T.all.Y)'),
        formula('Z', 'Int', 'SUM(T.lookupRecords(A=$A).Z) + 1'),
      ],
    },
    rows,
    {A: rows},
  );
  e.recomputeAll();
  const r = e.recalc();
  assert.is(e.getCell('S', 'Sum', 1), n * (n + 1));
  assert.is(e.getCell('S', 'Loop', 1), n * (n + 1));
  // X once per row, the two sums once and once more after waiting; Y and Z are cycles (Grist: CircularRefError).
  assert.ok(r.evaluations <= 2 + 2 + 3 * n, `${r.evaluations} evaluations`);
  assert.equal(e.getCell('T', 'Y', 1), ['E', 'CircularRefError']);
  assert.equal(e.getCell('T', 'Y', n), ['E', 'CircularRefError']);
  assert.equal(e.getCell('T', 'Z', 5), ['E', 'CircularRefError']);
});

test('summary tables: $group from the group-by columns (CONTAINS for list columns), kept current', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {tableId: 'Src', columns: [data('Region', 'Text'), data('Tags', 'ChoiceList'), data('N', 'Numeric')]},
    [1, 2, 3, 4],
    {Region: ['E', 'W', 'E', 'E'], Tags: [['L', 'a', 'b'], ['L', 'b'], null, ['L', 'a']], N: [1, 2, 4, 8]},
  );
  e.loadTable(
    {
      tableId: 'Src_summary_Region',
      summarySourceTable: 'Src',
      summaryGroupBy: ['Region'],
      columns: [
        data('Region', 'Text'),
        formula('group', 'RefList:Src', 'table.getSummarySourceGroup(rec)'),
        formula('count', 'Int', 'len($group)'),
        formula('N', 'Numeric', 'SUM($group.N)'),
      ],
    },
    [1, 2],
    {Region: ['E', 'W']},
  );
  // Group-by columns inferred (data columns also in the source) when summaryGroupBy is not given.
  e.loadTable(
    {
      tableId: 'Src_summary_Tags',
      summarySourceTable: 'Src',
      columns: [
        data('Tags', 'Choice'),
        formula('group', 'RefList:Src', 'table.getSummarySourceGroup(rec)'),
        formula('N', 'Numeric', 'SUM($group.N)'),
      ],
    },
    [1, 2, 3],
    {Tags: ['a', 'b', '']},
  );
  e.recomputeAll();
  e.recalc();
  assert.equal(cells(e, 'Src_summary_Region', 'group'), [
    ['L', 1, 3, 4],
    ['L', 2],
  ]);
  assert.equal(cells(e, 'Src_summary_Region', 'count'), [3, 1]);
  assert.equal(cells(e, 'Src_summary_Region', 'N'), [13, 2]);
  assert.equal(cells(e, 'Src_summary_Tags', 'group'), [
    ['L', 1, 4],
    ['L', 1, 2],
    ['L', 3],
  ]); // the empty list groups under ''
  assert.equal(cells(e, 'Src_summary_Tags', 'N'), [9, 3, 4]);
  e.updateRecords('Src', [3], {Region: ['W'], Tags: [['L', 'b']]});
  e.recalc();
  assert.equal(cells(e, 'Src_summary_Region', 'N'), [9, 6]);
  assert.equal(cells(e, 'Src_summary_Tags', 'group'), [['L', 1, 4], ['L', 1, 2, 3], null]);
  // A source value read through $group: only the groups holding the row.
  e.updateRecords('Src', [4], {N: [80]});
  const r = e.recalc();
  assert.equal(r.changes.Src_summary_Region, {N: {rowIds: [1], values: [81]}});
  assert.equal(r.changes.Src_summary_Tags, {N: {rowIds: [1], values: [81]}});
  assert.is(r.evaluations, 2);
});

test('trigger formulas fire when a formula column in their recalcDeps changes', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('A', 'Numeric'),
        formula('F', 'Numeric', '$A * 2'),
        trigger('OnF', 'Numeric', '$F + 1', ['F']),
        trigger('OnA', 'Numeric', '$F + 100', ['A']),
        trigger('Never', 'Numeric', '$F', ['F'], 1),
      ],
    },
    [1, 2],
    {A: [1, 2], F: [2, 4], OnF: [3, 5], OnA: [102, 104], Never: [0, 0]},
  );
  e.recomputeAll(); // as on open: formulas run (and record their dependencies); nothing changes
  assert.equal(e.recalc().changes, {});
  e.updateRecords('T', [1], {A: [10]});
  let r = e.recalc();
  assert.equal(r.changes.T.F, {rowIds: [1], values: [20]});
  assert.equal(r.changes.T.OnF, {rowIds: [1], values: [21]});
  assert.equal(r.changes.T.OnA, {rowIds: [1], values: [120]});
  assert.is(r.changes.T.Never, undefined);
  // The formula's value does not change: no trigger.
  e.updateRecords('T', [2], {A: [2]});
  r = e.recalc();
  assert.is(r.changes.T, undefined);
  // A renamed dependency keeps the trigger.
  e.renameColumn('T', 'F', 'G');
  e.modifyColumn('T', 'OnF', {formula: '$G + 1'});
  e.updateRecords('T', [2], {A: [3]});
  r = e.recalc();
  assert.equal(r.changes.T.OnF, {rowIds: [2], values: [7]});
});

test('odd cells read as Grist reads them: 32-bit ints, alt text, stored errors', () => {
  const e = new FormulaEngine();
  e.loadTable(
    {
      tableId: 'T',
      columns: [
        data('Any', 'Any'),
        data('N', 'Numeric'),
        data('R', 'Ref:T'),
        data('Name', 'Text'),
        formula('AnyType', 'Text', 'type($Any).__name__'),
        formula('Pass', 'Any', '$N'),
        formula('Plus', 'Any', '$N + 1'),
        formula('Via', 'Any', '$R.Name'),
        formula('Rec', 'Any', 'RECORD(rec)'),
      ],
    },
    [1, 2, 3],
    {Any: [5, 2 ** 40, 5.5], N: ['abc', 1, 2], R: ['hello', 1, 0], Name: ['x', 'y', 'z']},
  );
  e.recomputeAll();
  e.recalc();
  // Grist hands Any cells to Python through a marshaller writing int only within 32 bits.
  assert.equal(cells(e, 'T', 'AnyType'), ['int', 'float', 'float']);
  // Alt text passes through, fails arithmetic with TypeError, and attributes with InvalidTypedValue.
  assert.equal(cells(e, 'T', 'Pass'), ['abc', 1, 2]);
  assert.equal(cells(e, 'T', 'Plus'), [['E', 'TypeError'], 2, 3]);
  assert.equal(cells(e, 'T', 'Via'), [['E', 'InvalidTypedValue', 'Ref', 'hello'], 'x', '']);
  // RECORD: keys sorted as Grist stores dicts, its own column left out, errors under _error_.
  const rec = e.getCell('T', 'Rec', 1) as [string, {[k: string]: unknown}];
  assert.equal(Object.keys(rec[1]), ['Any', 'AnyType', 'N', 'Name', 'Pass', 'Plus', 'R', 'Via', '_error_', 'id']);
  assert.equal(rec[1]._error_, [
    'O',
    {
      Plus: "TypeError: unsupported operand type(s) for +: 'AltText' and 'int'",
      Via: 'InvalidTypedValue: Invalid Ref: hello',
    },
  ]);
  assert.is(rec[1].R, 'hello');
});

test('a new row whose formula key computes to the value it was given is found by lookups', () => {
  // K of a new row is given its default (0) and computes to 0 again: nothing is stored, so the
  // lookup index must have taken the given value when the row was added.
  const e = new FormulaEngine();
  e.loadTable({tableId: 'A', columns: [data('X', 'Int'), formula('K', 'Int', '$X - $X')]}, [1], {X: [5], K: [0]});
  e.loadTable({tableId: 'B', columns: [formula('N', 'Int', 'len(A.lookupRecords(K=0))')]}, [1], {N: [0]});
  e.recomputeAll();
  e.recalc();
  assert.equal(cells(e, 'B', 'N'), [1]);
  e.addRecords('A', [2], {X: [7]});
  e.recalc();
  assert.equal(cells(e, 'B', 'N'), [2]);
});

test.run();
