// Formulas computed in documents (issue 14): every write mirrors its actions to the formula engine,
// recalculates, and stores the changed cells in the same transaction.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import {GristDoc, type TableChange} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';

/** A document with Products (Name, Price, Qty, Total = $Price * $Qty) and three rows. */
function shop(): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'Products',
      columns: [
        {id: 'Name', fields: {type: 'Text', isFormula: false}},
        {id: 'Price', fields: {type: 'Numeric', isFormula: false}},
        {id: 'Qty', fields: {type: 'Int', isFormula: false}},
        {id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$Price * $Qty'}},
      ],
    },
  ]);
  doc.addRecords('Products', [
    {Name: 'a', Price: 2.5, Qty: 4},
    {Name: 'b', Price: 1, Qty: 3},
    {Name: 'c', Price: 10, Qty: 0},
  ]);
  return doc;
}

function col(doc: GristDoc, tableId: string, colId: string): unknown[] {
  return doc.fetchColumns(tableId)[colId];
}

/** What SQLite stores (value and storage class), read through a connection of its own. */
function stored(doc: GristDoc, tableId: string, colId: string): Array<[unknown, string]> {
  const db = new Database(doc.path, {readonly: true});
  try {
    return db
      .prepare(`SELECT "${colId}" AS v, typeof("${colId}") AS t FROM "${tableId}" ORDER BY id`)
      .raw(true)
      .all() as Array<[unknown, string]>;
  } finally {
    db.close();
  }
}

test('new records compute their formula cells in the same write', () => {
  const doc = shop();
  assert.equal(col(doc, 'Products', 'Total'), [10, 3, 0]);
  assert.equal(stored(doc, 'Products', 'Total'), [
    [10, 'integer'],
    [3, 'integer'],
    [0, 'integer'],
  ]);
  doc.close();
});

test('updates recompute dependents; only changed cells are reported as updates', () => {
  const doc = shop();
  const seen: TableChange[] = [];
  doc.onChange((c) => seen.push(c));
  doc.updateRecords('Products', [{id: 2, fields: {Qty: 5}}]);
  assert.equal(col(doc, 'Products', 'Total'), [10, 5, 0]);
  assert.equal(
    seen.map((c) => [c.tableId, c.updated]),
    [['Products', [2]]],
  );
  seen.length = 0;
  doc.updateRecords('Products', [{id: 3, fields: {Name: 'cc'}}]);
  assert.equal(
    seen.map((c) => [c.tableId, c.updated]),
    [['Products', [3]]],
  );
  doc.close();
});

test('a new formula column computes at once; formula edits recompute; type changes convert', () => {
  const doc = shop();
  doc.addColumns('Products', [{id: 'Double', fields: {isFormula: true, formula: '$Price * 2'}}]);
  assert.equal(col(doc, 'Products', 'Double'), [5, 2, 20]);
  doc.updateColumns('Products', [{id: 'Double', fields: {formula: '$Price * 3'}}]);
  assert.equal(col(doc, 'Products', 'Double'), [7.5, 3, 30]);
  doc.updateColumns('Products', [{id: 'Double', fields: {type: 'Text'}}]);
  assert.equal(col(doc, 'Products', 'Double'), ['7.5', '3', '30']);
  doc.applyUserActions([['ModifyColumn', 'Products', 'Double', {type: 'Int', formula: '$Qty + 1'}]]);
  assert.equal(col(doc, 'Products', 'Double'), [5, 4, 1]);
  assert.equal(
    stored(doc, 'Products', 'Double').map(([, t]) => t),
    ['integer', 'integer', 'integer'],
  );
  doc.close();
});

test('errors are cells: /records gives null plus errors, /data the raw error', () => {
  const doc = shop();
  doc.addColumns('Products', [{id: 'Ratio', fields: {type: 'Numeric', isFormula: true, formula: '$Price / $Qty'}}]);
  const {records} = doc.fetchRecords('Products');
  assert.equal(records[0].fields.Ratio, 0.625);
  assert.equal(records[2].fields.Ratio, null);
  assert.equal(records[2].errors, {Ratio: 'ZeroDivisionError'});
  assert.equal(col(doc, 'Products', 'Ratio')[2], ['E', 'ZeroDivisionError']);
  assert.equal(JSON.parse(doc.fetchRecordsJson('Products')).records[2].errors, {Ratio: 'ZeroDivisionError'});
  doc.close();
});

test('an engine loaded again (after a failed write) does not report unchanged error cells', () => {
  const doc = shop();
  doc.addColumns('Products', [{id: 'Ratio', fields: {type: 'Numeric', isFormula: true, formula: '$Price / $Qty'}}]);
  assert.throws(() => doc.updateRecords('Products', [{id: 99, fields: {Qty: 1}}]));
  const seen: TableChange[] = [];
  doc.onChange((c) => seen.push(c));
  doc.updateRecords('Products', [{id: 1, fields: {Name: 'z'}}]);
  assert.equal(
    seen.map((c) => [c.tableId, c.updated]),
    [['Products', [1]]],
  );
  assert.equal(col(doc, 'Products', 'Ratio')[2], ['E', 'ZeroDivisionError']);
  doc.close();
});

test('a formula column computes when the first formula of the document appears', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [
    {A: 1, B: 2},
    {A: 3, B: 4},
  ]);
  doc.applyUserActions([['AddColumn', 'Table1', 'S', {formula: '$A + $B'}]]);
  assert.equal(col(doc, 'Table1', 'S'), [3, 7]);
  doc.addRecords('Table1', [{A: 10, B: 1}]);
  assert.equal(col(doc, 'Table1', 'S'), [3, 7, 11]);
  doc.close();
});

test('a failed write rolls back formula cells and the engine', () => {
  const doc = shop();
  assert.throws(() =>
    doc.applyUserActions([
      ['UpdateRecord', 'Products', 1, {Qty: 100}],
      ['UpdateRecord', 'Products', 99, {Qty: 1}],
    ]),
  );
  assert.equal(col(doc, 'Products', 'Total'), [10, 3, 0]);
  doc.updateRecords('Products', [{id: 2, fields: {Price: 2}}]);
  assert.equal(col(doc, 'Products', 'Total'), [10, 6, 0]);
  doc.close();
});

test('storage classes: Int INTEGER, Numeric NUMERIC, Any 32-bit ints INTEGER and other numbers REAL (as Grist)', () => {
  const doc = shop();
  doc.addColumns('Products', [
    {id: 'I', fields: {type: 'Int', isFormula: true, formula: '$Qty * 2'}},
    {id: 'Big', fields: {type: 'Any', isFormula: true, formula: '2.0 ** 40 + $Qty'}},
    {id: 'BigInt', fields: {type: 'Any', isFormula: true, formula: '2 ** 40'}},
    {id: 'Small', fields: {type: 'Any', isFormula: true, formula: '$Qty + 1'}},
    {id: 'F', fields: {type: 'Any', isFormula: true, formula: '$Price / 2'}},
  ]);
  assert.equal(stored(doc, 'Products', 'I')[0], [8, 'integer']);
  assert.equal(stored(doc, 'Products', 'Big')[0], [2 ** 40 + 4, 'real']);
  assert.equal(stored(doc, 'Products', 'Small')[0], [5, 'integer']);
  assert.equal(
    col(doc, 'Products', 'BigInt')[0],
    ['U', '1099511627776'],
    'an int beyond 32 bits in Any, as Grist encodes it',
  );
  assert.equal(stored(doc, 'Products', 'F')[0], [1.25, 'real']);
  doc.close();
});

test.run();
