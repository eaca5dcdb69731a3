// Dependencies read off a formula's syntax tree (formula/static-deps.ts): the shapes it takes, and
// every shape where a record could reach code that reads its columns, which it must leave to
// evaluation (a missing dependency would leave a stale cell in a document opened cold).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {staticPlan} from '../src/static-deps.js';

const TYPES: Record<string, Record<string, string>> = {
  Items: {Name: 'Text', Qty: 'Int', Price: 'Numeric', Customer: 'Ref:Customers', Tags: 'RefList:Tags', Extra: 'Any'},
  Customers: {Name: 'Text', Region: 'Ref:Regions', Key: 'Text'},
  Tags: {Label: 'Text'},
  Regions: {Name: 'Text'},
};
const schema = {
  colType: (t: string, c: string) => TYPES[t]?.[c],
  isTable: (name: string) => name in TYPES,
};
const plan = (formula: string, table = 'Items', col = 'F') => staticPlan(formula, table, col, schema);

test('same-row columns, references and lookups are read off the tree', () => {
  assert.equal(plan('$Price * $Qty'), {cols: ['Price', 'Qty'], refs: [], lookups: []});
  assert.equal(plan('$Customer.Name.upper()'), {
    cols: ['Customer'],
    refs: [{ref: 'Customer', col: 'Name'}],
    lookups: [],
  });
  assert.equal(plan('$Customer.Name if $Customer else ""'), {
    cols: ['Customer'],
    refs: [{ref: 'Customer', col: 'Name'}],
    lookups: [],
  });
  assert.equal(plan('len($Tags)'), {cols: ['Tags'], refs: [], lookups: []});
  assert.equal(plan("', '.join($Tags.Label)"), {cols: ['Tags'], refs: [{ref: 'Tags', col: 'Label'}], lookups: []});
  assert.equal(plan('SUM(Items.lookupRecords(Customer=$id).Price)', 'Customers'), {
    cols: [],
    refs: [],
    lookups: [{table: 'Items', keys: [{key: 'Customer', from: {col: 'id'}}], cols: ['Price']}],
  });
  assert.equal(plan('Customers.lookupOne(Key=$Name).Name'), {
    cols: ['Name'],
    refs: [],
    lookups: [{table: 'Customers', keys: [{key: 'Key', from: {col: 'Name'}}], cols: ['Name']}],
  });
  assert.equal(plan('ROUND($Extra * 2, 1)'), {cols: ['Extra'], refs: [], lookups: []});
  assert.equal(plan("f'{$Name}: {$Qty:>4}'"), {cols: ['Name', 'Qty'], refs: [], lookups: []});
});

test('whatever could hand a record to code that reads its columns is left to evaluation', () => {
  for (const formula of [
    'RECORD(rec)', // rec itself
    'PREVIOUS(rec, order_by="Qty")',
    'getattr($Customer, "Name")',
    '"{0.Name}".format($Customer)', // str.format reads attributes of its arguments
    '$Customer.Region.Name', // a second hop
    '$Tags[0].Label',
    '[t.Label for t in $Tags]', // comprehensions
    'Items.lookupRecords(Customer=$Customer, order_by="Qty").Name', // sorted lookups
    'Items.lookupRecords(Tags=CONTAINS($id)).Name', // CONTAINS keys
    'Items.all.Price', // Table.all
    'VLOOKUP(Customers, Key=$Name)', // a table handed to a function
    'table.lookupOne(Name=$Name)',
    '$Extra.Name', // an Any cell may hold a record
    'str($Extra).upper() + $F', // the column itself
    '$Missing',
    'x = $Qty\nreturn x * 2', // statements
    'NOW()', // not a dependency problem, but volatile: evaluated (engine) - here a plain call
  ]) {
    const p = plan(formula);
    if (formula === 'NOW()') {
      // A plain call is static; the engine keeps volatile columns dynamic (trustStored).
      assert.equal(p, {cols: [], refs: [], lookups: []});
      continue;
    }
    assert.is(p, null, formula);
  }
});

test.run();
