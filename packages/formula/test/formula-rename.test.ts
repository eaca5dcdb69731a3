import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {formulaRenames, type SchemaTable} from '../src/rename.js';

const schema: SchemaTable[] = [
  {
    tableId: 'Customers',
    columns: [
      {colId: 'Name', type: 'Text', formula: ''},
      {colId: 'Orders', type: 'RefList:Orders', formula: 'Orders.lookupRecords(Customer=$id, order_by="-Amount")'},
      {colId: 'Total', type: 'Numeric', formula: 'SUM(Orders.lookupRecords(Customer=$id).Amount)'},
      {
        colId: 'Big',
        type: 'Any',
        formula: "[o.Amount for o in $Orders if o.Amount > 10]\n# $Amount in a comment, 'Amount' in a string",
      },
      {colId: 'Loop', type: 'Any', formula: 'total = 0\nfor o in Orders.all:\n  total += o.Amount\nreturn total'},
    ],
  },
  {
    tableId: 'Orders',
    columns: [
      {colId: 'Customer', type: 'Ref:Customers', formula: ''},
      {colId: 'Amount', type: 'Numeric', formula: '$Price * 2'},
      {colId: 'Price', type: 'Numeric', formula: ''},
      {colId: 'Label', type: 'Text', formula: '"%s: %s" % ($Customer.Name, $Amount)  # $Amount'},
      {
        colId: 'Other',
        type: 'Any',
        formula: 'rec.Amount + Orders.lookupOne(Customer=$Customer, order_by=("Amount", "-Price")).Amount',
      },
    ],
  },
];

test('renaming a column rewrites references through records, lookups and order_by, not text', () => {
  const edits = formulaRenames(schema, {kind: 'column', tableId: 'Orders', oldId: 'Amount', newId: 'Total'});
  const byCol = Object.fromEntries(edits.map((e) => [`${e.tableId}.${e.colId}`, e.formula]));
  assert.equal(byCol, {
    'Customers.Orders': 'Orders.lookupRecords(Customer=$id, order_by="-Total")',
    'Customers.Total': 'SUM(Orders.lookupRecords(Customer=$id).Total)',
    'Customers.Big': "[o.Total for o in $Orders if o.Total > 10]\n# $Amount in a comment, 'Amount' in a string",
    'Customers.Loop': 'total = 0\nfor o in Orders.all:\n  total += o.Total\nreturn total',
    'Orders.Label': '"%s: %s" % ($Customer.Name, $Total)  # $Amount',
    'Orders.Other': 'rec.Total + Orders.lookupOne(Customer=$Customer, order_by=("Total", "-Price")).Total',
  });
});

test('renaming a lookup key column and a referenced column', () => {
  const edits = formulaRenames(schema, {kind: 'column', tableId: 'Orders', oldId: 'Customer', newId: 'Client'});
  const byCol = Object.fromEntries(edits.map((e) => [`${e.tableId}.${e.colId}`, e.formula]));
  assert.equal(byCol['Customers.Orders'], 'Orders.lookupRecords(Client=$id, order_by="-Amount")');
  assert.equal(byCol['Orders.Label'], '"%s: %s" % ($Client.Name, $Amount)  # $Amount');
  assert.equal(
    byCol['Orders.Other'],
    'rec.Amount + Orders.lookupOne(Client=$Client, order_by=("Amount", "-Price")).Amount',
  );
  const e2 = formulaRenames(schema, {kind: 'column', tableId: 'Customers', oldId: 'Name', newId: 'FullName'});
  assert.equal(e2, [
    {tableId: 'Orders', colId: 'Label', formula: '"%s: %s" % ($Customer.FullName, $Amount)  # $Amount'},
  ]);
});

test('renaming a table rewrites names that refer to it', () => {
  const edits = formulaRenames(schema, {kind: 'table', oldId: 'Orders', newId: 'Sales'});
  assert.equal(
    edits.map((e) => e.formula),
    [
      'Sales.lookupRecords(Customer=$id, order_by="-Amount")',
      'SUM(Sales.lookupRecords(Customer=$id).Amount)',
      'total = 0\nfor o in Sales.all:\n  total += o.Amount\nreturn total',
      'rec.Amount + Sales.lookupOne(Customer=$Customer, order_by=("Amount", "-Price")).Amount',
    ],
  );
});

test.run();
