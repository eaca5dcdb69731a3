// Formulas in documents: dependencies through references, lookups and display helpers; triggers;
// renames; reference clearing on removal (issue 14).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';

/** Customers (Name) and Orders (Customer: Ref, Amount, CustName = $Customer.Name); Customers.Total sums its orders. */
function orders(): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'Customers', columns: [{id: 'Name', fields: {type: 'Text', isFormula: false}}]},
    {
      id: 'Orders',
      columns: [
        {id: 'Customer', fields: {type: 'Ref:Customers', isFormula: false}},
        {id: 'Amount', fields: {type: 'Numeric', isFormula: false}},
        {id: 'CustName', fields: {type: 'Text', isFormula: true, formula: '$Customer.Name'}},
      ],
    },
  ]);
  doc.addColumns('Customers', [
    {
      id: 'Total',
      fields: {type: 'Numeric', isFormula: true, formula: 'SUM(Orders.lookupRecords(Customer=$id).Amount)'},
    },
    {id: 'N', fields: {type: 'Int', isFormula: true, formula: 'len(Orders.lookupRecords(Customer=$id))'}},
  ]);
  doc.addRecords('Customers', [{Name: 'Ann'}, {Name: 'Bob'}]);
  doc.addRecords('Orders', [
    {Customer: 1, Amount: 10},
    {Customer: 1, Amount: 5},
    {Customer: 2, Amount: 7},
  ]);
  return doc;
}

const col = (doc: GristDoc, t: string, c: string) => doc.fetchColumns(t)[c];

test('through references and lookups, with every write path', () => {
  const doc = orders();
  assert.equal(col(doc, 'Orders', 'CustName'), ['Ann', 'Ann', 'Bob']);
  assert.equal(col(doc, 'Customers', 'Total'), [15, 7]);
  // /records
  doc.updateRecords('Customers', [{id: 1, fields: {Name: 'Anna'}}]);
  assert.equal(col(doc, 'Orders', 'CustName'), ['Anna', 'Anna', 'Bob']);
  // /data
  doc.updateColumnar('Orders', {id: [2], Customer: [2]});
  assert.equal(col(doc, 'Customers', 'Total'), [10, 12]);
  assert.equal(col(doc, 'Customers', 'N'), [1, 2]);
  doc.addColumnar('Orders', {Customer: [1], Amount: [1]});
  assert.equal(col(doc, 'Customers', 'Total'), [11, 12]);
  // add-or-update
  doc.upsertRecords('Orders', [{require: {Amount: 1}, fields: {Amount: 100}}]);
  assert.equal(col(doc, 'Customers', 'Total'), [110, 12]);
  // /apply, several actions, one recalc
  doc.applyUserActions([
    ['AddRecord', 'Customers', null, {Name: 'Cy'}],
    ['AddRecord', 'Orders', null, {Customer: 3, Amount: 3}],
  ]);
  assert.equal(col(doc, 'Customers', 'Total'), [110, 12, 3]);
  assert.equal(col(doc, 'Orders', 'CustName'), ['Anna', 'Bob', 'Bob', 'Anna', 'Cy']);
  doc.close();
});

test('change listeners see formula changes in other tables as updates of their rows', () => {
  const doc = orders();
  const seen: Array<[string, number[], number[]]> = [];
  doc.onChange((c) => seen.push([c.tableId, c.added, c.updated]));
  doc.updateRecords('Customers', [{id: 2, fields: {Name: 'Rob'}}]);
  assert.equal(seen, [
    ['Customers', [], [2]],
    ['Orders', [], [3]],
  ]);
  seen.length = 0;
  doc.addRecords('Orders', [{Customer: 1, Amount: 1}]);
  assert.equal(seen, [
    ['Orders', [4], []],
    ['Customers', [], [1]],
  ]);
  doc.close();
});

test('formulas reading metadata tables see schema changes', () => {
  const doc = orders();
  doc.addColumns('Customers', [
    {
      id: 'Cols',
      fields: {
        type: 'Any',
        isFormula: true,
        formula: "[c.colId for c in _grist_Tables_column.all if c.parentId.tableId == 'Orders']",
      },
    },
  ]);
  assert.equal(col(doc, 'Customers', 'Cols')[0], ['L', 'manualSort', 'Customer', 'Amount', 'CustName']);
  doc.addColumns('Orders', [{id: 'Note', fields: {type: 'Text', isFormula: false}}]);
  assert.equal(col(doc, 'Customers', 'Cols')[0], ['L', 'manualSort', 'Customer', 'Amount', 'CustName', 'Note']);
  doc.updateColumns('Orders', [{id: 'Note', fields: {colId: 'Memo'}}]);
  assert.equal(col(doc, 'Customers', 'Cols')[1], ['L', 'manualSort', 'Customer', 'Amount', 'CustName', 'Memo']);
  doc.close();
});

test('ReplaceTableData recomputes what read the replaced rows', () => {
  const doc = orders();
  doc.applyUserActions([['ReplaceTableData', 'Orders', [1, 2], {Customer: [2, 2], Amount: [1, 2]}]]);
  assert.equal(col(doc, 'Customers', 'Total'), [0, 3]);
  assert.equal(col(doc, 'Orders', 'CustName'), ['Bob', 'Bob']);
  doc.close();
});

test('summary tables grouped by a formula column follow its recomputed values', () => {
  const doc = orders();
  doc.addColumns('Orders', [
    {id: 'Size', fields: {type: 'Text', isFormula: true, formula: '"big" if $Amount > 6 else "small"'}},
  ]);
  doc.addTables([
    {
      id: 'Orders_summary_Size',
      columns: [
        {id: 'Size', fields: {type: 'Text', isFormula: false}},
        {id: 'group', fields: {type: 'RefList:Orders', isFormula: true, formula: 'table.getSummarySourceGroup(rec)'}},
        {id: 'count', fields: {type: 'Int', isFormula: true, formula: 'len($group)'}},
      ],
    },
  ]);
  const ref = (t: string) => doc.listTables().find((x) => x.id === t)!.fields.tableRef;
  const colRef = (t: string, c: string) => doc.listColumns(t).find((x) => x.id === c)!.fields.colRef;
  doc.applyUserActions([
    ['UpdateRecord', '_grist_Tables', ref('Orders_summary_Size'), {summarySourceTable: ref('Orders')}],
    [
      'UpdateRecord',
      '_grist_Tables_column',
      colRef('Orders_summary_Size', 'Size'),
      {summarySourceCol: colRef('Orders', 'Size')},
    ],
  ]);
  const summary = () => doc.fetchRecords('Orders_summary_Size').records.map((r) => [r.fields.Size, r.fields.count]);
  doc.updateRecords('Orders', [{id: 3, fields: {Amount: 8}}]);
  assert.equal(summary(), [
    ['big', 2],
    ['small', 1],
  ]);
  doc.updateRecords('Orders', [{id: 2, fields: {Amount: 9}}]);
  assert.equal(summary(), [['big', 3]]);
  doc.close();
});

test('removing rows clears references to them, and dependents recompute', () => {
  const doc = orders();
  doc.removeRecords('Customers', [1]);
  assert.equal(col(doc, 'Orders', 'Customer'), [0, 0, 2]);
  assert.equal(col(doc, 'Orders', 'CustName'), ['', '', 'Bob']);
  doc.removeRecords('Orders', [3]);
  assert.equal(col(doc, 'Customers', 'Total'), [0]);
  doc.close();
});

test('display helper columns follow the shown column', () => {
  const doc = orders();
  doc.applyUserActions([['SetDisplayFormula', 'Orders', null, 'Customer', '$Customer.Name']]);
  assert.equal(col(doc, 'Orders', 'gristHelper_Display'), ['Ann', 'Ann', 'Bob']);
  doc.updateRecords('Customers', [{id: 2, fields: {Name: 'Rob'}}]);
  assert.equal(col(doc, 'Orders', 'gristHelper_Display'), ['Ann', 'Ann', 'Rob']);
  doc.close();
});

test('display helpers: shared between fields, replaced, and removed with the last field using them (grist-core test_display_cols)', () => {
  const doc = orders();
  const customer = doc.listColumns('Orders').find((c) => c.id === 'Customer')!.fields.colRef as number;
  const raw = doc.listTables().find((t) => t.id === 'Orders')!.fields.rawViewSectionRef;
  const fields = doc
    .fetchRecords('_grist_Views_section_field')
    .records.filter((f) => f.fields.colRef === customer && f.fields.parentId !== raw)
    .map((f) => f.id);
  assert.equal(fields.length, 2);
  const helpers = () =>
    doc
      .listColumns('Orders', {hidden: true})
      .filter((c) => c.id.startsWith('gristHelper_'))
      .map((c) => [c.id, c.fields.formula]);
  doc.applyUserActions([['SetDisplayFormula', 'Orders', null, customer, '$Customer.Name']]);
  doc.applyUserActions([['SetDisplayFormula', 'Orders', fields[0], null, '$Customer.N']]);
  doc.applyUserActions([['SetDisplayFormula', 'Orders', fields[1], null, '$Customer.N']]);
  assert.equal(helpers(), [
    ['gristHelper_Display', '$Customer.Name'],
    ['gristHelper_Display2', '$Customer.N'],
  ]);
  assert.equal(col(doc, 'Orders', 'gristHelper_Display2'), [2, 2, 1]);
  // A field moving to a formula no helper has gets a new one; the shared one stays for the other field.
  doc.applyUserActions([['SetDisplayFormula', 'Orders', fields[1], null, '$Customer.Total']]);
  assert.equal(helpers(), [
    ['gristHelper_Display', '$Customer.Name'],
    ['gristHelper_Display2', '$Customer.N'],
    ['gristHelper_Display3', '$Customer.Total'],
  ]);
  // Removing the only field using a helper removes the helper.
  doc.applyUserActions([['RemoveRecord', '_grist_Views_section_field', fields[1]]]);
  assert.equal(helpers(), [
    ['gristHelper_Display', '$Customer.Name'],
    ['gristHelper_Display2', '$Customer.N'],
  ]);
  // A helper added by hand that nothing uses is removed at the end of its write.
  doc.applyUserActions([['AddHiddenColumn', 'Orders', 'gristHelper_Display', {isFormula: true, formula: '$Amount'}]]);
  assert.equal(helpers().length, 2);
  doc.close();
});

test('renames rewrite dependent formulas and keep computing', () => {
  const doc = orders();
  doc.updateColumns('Customers', [{id: 'Name', fields: {colId: 'FullName'}}]);
  const formula = (t: string, c: string) => doc.listColumns(t).find((x) => x.id === c)!.fields.formula;
  assert.is(formula('Orders', 'CustName'), '$Customer.FullName');
  doc.applyUserActions([['RenameColumn', 'Orders', 'Customer', 'Client']]);
  assert.is(formula('Orders', 'CustName'), '$Client.FullName');
  assert.is(formula('Customers', 'Total'), 'SUM(Orders.lookupRecords(Client=$id).Amount)');
  doc.applyUserActions([['RenameTable', 'Orders', 'Sales']]);
  assert.is(formula('Customers', 'Total'), 'SUM(Sales.lookupRecords(Client=$id).Amount)');
  doc.addRecords('Sales', [{Client: 2, Amount: 1}]);
  assert.equal(col(doc, 'Customers', 'Total'), [15, 8]);
  doc.updateRecords('Customers', [{id: 2, fields: {FullName: 'B'}}]);
  assert.equal(col(doc, 'Sales', 'CustName'), ['Ann', 'Ann', 'B', 'B']);
  doc.close();
});

test('several renames in one update: formulas follow all of them', () => {
  const doc = orders();
  doc.addColumns('Orders', [
    {id: 'Both', fields: {type: 'Text', isFormula: true, formula: 'str($Amount) + $CustName'}},
  ]);
  doc.updateColumns('Orders', [
    {id: 'Amount', fields: {colId: 'Amt'}},
    {id: 'CustName', fields: {colId: 'Who'}},
  ]);
  const formula = (c: string) => doc.listColumns('Orders').find((x) => x.id === c)!.fields.formula;
  assert.is(formula('Both'), 'str($Amt) + $Who');
  doc.updateRecords('Orders', [{id: 1, fields: {Amt: 3}}]);
  assert.is(col(doc, 'Orders', 'Both')[0], '3.0Ann');
  doc.close();
});

test('many renames at once (one table rebuild): formulas follow, the engine keeps computing', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'T', columns: ['A', 'B', 'C', 'D', 'E'].map((id) => ({id, fields: {type: 'Numeric', isFormula: false}}))},
  ]);
  doc.addColumns('T', [{id: 'S', fields: {type: 'Numeric', isFormula: true, formula: '$A + $B + $C + $D + $E'}}]);
  doc.addRecords('T', [{A: 1, B: 2, C: 3, D: 4, E: 5}]);
  doc.updateColumns(
    'T',
    ['A', 'B', 'C', 'D', 'E'].map((id) => ({id, fields: {colId: `${id}2`}})),
  );
  assert.is(doc.listColumns('T').find((x) => x.id === 'S')!.fields.formula, '$A2 + $B2 + $C2 + $D2 + $E2');
  doc.updateRecords('T', [{id: 1, fields: {E2: 50}}]);
  assert.equal(col(doc, 'T', 'S'), [60]);
  doc.close();
});

test('errors and cycles are cells; fixing the cause recomputes', () => {
  const doc = orders();
  doc.addColumns('Orders', [
    {id: 'X', fields: {type: 'Numeric', isFormula: true, formula: '$Y + 1'}},
    {id: 'Y', fields: {type: 'Numeric', isFormula: true, formula: '$X + 1'}},
    {id: 'Inv', fields: {type: 'Numeric', isFormula: true, formula: '1 / $Amount'}},
  ]);
  const rec = doc.fetchRecords('Orders').records[0];
  assert.equal(rec.errors, {X: 'CircularRefError', Y: 'CircularRefError'});
  doc.updateRecords('Orders', [{id: 1, fields: {Amount: 0}}]);
  assert.equal(doc.fetchRecords('Orders').records[0].errors?.Inv, 'ZeroDivisionError');
  doc.updateColumns('Orders', [{id: 'Y', fields: {formula: '2'}}]);
  assert.equal(col(doc, 'Orders', 'X'), [3, 3, 3]);
  doc.close();
});

test('trigger formulas: on new records, on listed columns, on any update, never', () => {
  const doc = orders();
  const cols = doc.listColumns('Orders');
  const amountRef = cols.find((c) => c.id === 'Amount')!.fields.colRef as number;
  doc.addColumns('Orders', [
    {id: 'Created', fields: {type: 'Text', isFormula: false, formula: '"new:" + str($Amount)'}},
    {
      id: 'OnAmount',
      fields: {type: 'Numeric', isFormula: false, formula: '$Amount * 10', recalcDeps: ['L', amountRef]},
    },
    {id: 'Touched', fields: {type: 'Int', isFormula: false, formula: '($Touched or 0) + 1', recalcWhen: 2}},
    {id: 'Never', fields: {type: 'Text', isFormula: false, formula: '"x"', recalcWhen: 1}},
  ]);
  doc.addRecords('Orders', [{Customer: 2, Amount: 4}]);
  const last = () => doc.fetchRecords('Orders').records.at(-1)!.fields;
  assert.equal([last().Created, last().OnAmount, last().Touched, last().Never], ['new:4.0', 40, 1, '']);
  doc.updateRecords('Orders', [{id: 4, fields: {Amount: 6}}]);
  assert.equal([last().Created, last().OnAmount, last().Touched], ['new:4.0', 60, 2]);
  doc.updateRecords('Orders', [{id: 4, fields: {Customer: 1}}]);
  assert.equal([last().OnAmount, last().Touched], [60, 3]);
  // A value given explicitly wins.
  doc.addRecords('Orders', [{Customer: 1, Amount: 1, Created: 'mine'}]);
  assert.is(last().Created, 'mine');
  doc.close();
});

test('summary tables: groups added and removed, group/count/formulas follow the source', () => {
  const doc = orders();
  // A summary of Orders by Customer, made as Grist stores one (CreateViewSection is not an API action).
  doc.addTables([
    {
      id: 'Orders_summary_Customer',
      columns: [
        {id: 'Customer', fields: {type: 'Ref:Customers', isFormula: false}},
        {id: 'group', fields: {type: 'RefList:Orders', isFormula: true, formula: 'table.getSummarySourceGroup(rec)'}},
        {id: 'count', fields: {type: 'Int', isFormula: true, formula: 'len($group)'}},
        {id: 'Amount', fields: {type: 'Numeric', isFormula: true, formula: 'SUM($group.Amount)'}},
      ],
    },
  ]);
  const tables = doc.listTables();
  const ordersRef = tables.find((t) => t.id === 'Orders')!.fields.tableRef;
  const sumRef = tables.find((t) => t.id === 'Orders_summary_Customer')!.fields.tableRef;
  const custRef = doc.listColumns('Orders').find((c) => c.id === 'Customer')!.fields.colRef;
  const sumCustRef = doc.listColumns('Orders_summary_Customer').find((c) => c.id === 'Customer')!.fields.colRef;
  doc.applyUserActions([
    ['UpdateRecord', '_grist_Tables', sumRef, {summarySourceTable: ordersRef}],
    ['UpdateRecord', '_grist_Tables_column', sumCustRef, {summarySourceCol: custRef}],
  ]);
  doc.addRecords('Orders', [{Customer: 2, Amount: 1}]);
  const summary = () =>
    doc
      .fetchRecords('Orders_summary_Customer')
      .records.map((r) => [r.fields.Customer, r.fields.group, r.fields.count, r.fields.Amount]);
  assert.equal(summary(), [
    [1, ['L', 1, 2], 2, 15],
    [2, ['L', 3, 4], 2, 8],
  ]);
  doc.updateRecords('Orders', [{id: 1, fields: {Amount: 20}}]);
  assert.equal(summary(), [
    [1, ['L', 1, 2], 2, 25],
    [2, ['L', 3, 4], 2, 8],
  ]);
  doc.applyUserActions([
    ['AddRecord', 'Customers', null, {Name: 'Cy'}],
    ['UpdateRecord', 'Orders', 2, {Customer: 3}],
  ]);
  assert.equal(summary(), [
    [1, ['L', 1], 1, 20],
    [2, ['L', 3, 4], 2, 8],
    [3, ['L', 2], 1, 5],
  ]);
  doc.removeRecords('Orders', [1]);
  assert.equal(summary(), [
    [2, ['L', 3, 4], 2, 8],
    [3, ['L', 2], 1, 5],
  ]);
  doc.close();
});

test.run();
