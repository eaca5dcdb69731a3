// Records: reading (filter/sort/limit, formats) and writing (add, update, upsert, delete), the
// SPEC 19 acceptance items expressed against the engine.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc, marshalDumps, type TableChange} from '../src/doc/index.js';
import {copyFixture, tempPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

/** Hello.grist is SPEC 19's "Timesheets" Table1: A..E, rows 1 (A=hello, E=HELLO), 2 (B=world), 3, 4. */
function hello(): GristDoc {
  return GristDoc.open(copyFixture('Hello.grist'));
}

function ids(doc: GristDoc, q: Parameters<GristDoc['fetchRecords']>[1]): number[] {
  return doc.fetchRecords('Table1', q).records.map((r) => r.id);
}

ftest('19.1 GET records: visible fields, ascending ids, hidden adds manualSort', () => {
  const doc = hello();
  const {records} = doc.fetchRecords('Table1');
  assert.equal(records[0], {id: 1, fields: {A: 'hello', B: '', C: '', D: null, E: 'HELLO'}});
  assert.equal(records[1], {id: 2, fields: {A: '', B: 'world', C: '', D: null, E: ''}});
  assert.equal(
    records.map((r) => r.id),
    [1, 2, 3, 4],
  );
  assert.is(doc.fetchRecords('Table1', {hidden: true}).records[0].fields.manualSort, 1);
  doc.close();
});

ftest('19.3 filters: matches, AND across columns, impossible filter, errors', () => {
  const doc = hello();
  assert.equal(doc.fetchColumns('Table1', {filter: {B: ['world']}}), {
    id: [2],
    manualSort: [2],
    A: [''],
    B: ['world'],
    C: [''],
    D: [null],
    E: [''],
  });
  assert.equal(ids(doc, {filter: {B: [''], A: ['']}}), [3, 4]);
  assert.equal(doc.fetchColumns('Table1', {filter: {B: ['world'], C: ['Neptune']}}), {
    id: [],
    manualSort: [],
    A: [],
    B: [],
    C: [],
    D: [],
    E: [],
  });
  assert.equal(ids(doc, {filter: {id: [4, 2]}}), [2, 4]);
  assert.equal(ids(doc, {filter: {D: [null]}}), [1, 2, 3, 4]);
  assert.equal(ids(doc, {filter: {}}), [1, 2, 3, 4]);
  assert.throws(
    () => ids(doc, {filter: {BadCol: ['']}}),
    (e: any) => e.status === 400 && /BadCol/.test(e.message),
  );
  assert.throws(
    () => ids(doc, {filter: {B: 'world'}}),
    (e: any) => e.status === 400 && /filter values must be arrays/.test(e.message),
  );
  doc.close();
});

test('filters follow Python equality: 1 == 1.0 == True, "1" != 1', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'N', fields: {type: 'Numeric'}},
        {id: 'F', fields: {type: 'Bool'}},
        {id: 'X', fields: {type: 'Any'}},
        {id: 'S', fields: {type: 'Text'}},
      ],
    },
  ]);
  doc.addRecords(
    'T',
    [
      {N: 1, F: true, X: 1, S: '1'},
      {N: 2, F: false, X: '1', S: 'one'},
      {N: '12abc', F: false, X: true, S: 'x'},
    ],
    {parse: false},
  );
  const f = (filter: Record<string, unknown[]>) => doc.fetchRecords('T', {filter}).records.map((r) => r.id);
  assert.equal(f({N: [1]}), [1]);
  assert.equal(f({N: [true]}), [1]);
  assert.equal(f({F: [1]}), [1]);
  assert.equal(f({F: [false]}), [2, 3]);
  assert.equal(f({X: [1]}), [1, 3], 'Any column: 1 matches 1 and True');
  assert.equal(f({X: ['1']}), [2]);
  assert.equal(f({N: ['12abc']}), [3], 'a string stored marshalled in a numeric column');
  assert.equal(f({S: [1]}), [], '"1" != 1');
  doc.close();
});

ftest('19.4 sort and limit', () => {
  const doc = hello();
  assert.equal(ids(doc, {sort: 'A'}), [2, 3, 4, 1]);
  assert.equal(ids(doc, {sort: '-A'}), [1, 2, 3, 4]);
  assert.equal(ids(doc, {sort: 'B,-A'}), [1, 3, 4, 2]);
  assert.equal(ids(doc, {sort: ['-B', 'A'], limit: 2}), [2, 3]);
  assert.equal(ids(doc, {sort: '-id', limit: 2}), [4, 3]);
  assert.equal(ids(doc, {limit: 1}), [1]);
  assert.equal(ids(doc, {limit: 0}), [1, 2, 3, 4]);
  assert.equal(ids(doc, {limit: -1}), [1, 2, 3], 'negative limit drops rows from the end');
  assert.equal(ids(doc, {sort: '-id', limit: -3}), [4]);
  assert.equal(ids(doc, {filter: {A: ['']}, limit: -1}), [2, 3]);
  assert.throws(
    () => ids(doc, {sort: 'Nope'}),
    (e: any) => e.status === 400 && /Nope/.test(e.message),
  );
  // Grist ignores flags it does not know (recorded from Grist 1.7.17: `Age:emptyFirst` sorts by Age).
  assert.equal(ids(doc, {sort: 'A:bogusFlag'}), ids(doc, {sort: 'A'}));
  doc.close();
});

test('typed sort order: booleans < numbers < null < lists < strings; flags', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'X', fields: {type: 'Any'}},
        {id: 'S', fields: {type: 'Text'}},
        {id: 'C', fields: {type: 'Choice', widgetOptions: '{"choices":["red","green","blue"]}'}},
      ],
    },
  ]);
  const values = ['blue', 2.5, null, ['L', 'zing', 3], 'Green', 1, 'red', 5, ''];
  doc.addRecords(
    'T',
    values.map((X) => ({X})),
    {parse: false},
  );
  const sorted = doc.fetchRecords('T', {sort: 'X'}).records.map((r) => r.fields.X);
  assert.equal(sorted, [1, 2.5, 5, null, ['L', 'zing', 3], '', 'blue', 'Green', 'red']);
  doc.addRecords(
    'T',
    ['a10', 'a2', '', 'A1', 'b'].map((S) => ({S})),
  );
  const nat = doc
    .fetchRecords('T', {sort: 'S:naturalSort', filter: {S: ['a10', 'a2', 'A1', 'b']}})
    .records.map((r) => r.fields.S);
  assert.equal(nat, ['A1', 'a2', 'a10', 'b']);
  const emptyLast = doc.fetchRecords('T', {sort: '-S:emptyLast', filter: {X: [null]}}).records.map((r) => r.fields.S);
  assert.equal(emptyLast.slice(0, 5), ['b', 'a2', 'a10', 'A1', '']);
  doc.addRecords(
    'T',
    ['blue', 'red', 'green', 'other'].map((C) => ({C})),
  );
  const byChoice = doc
    .fetchRecords('T', {sort: 'C:orderByChoice', filter: {C: ['blue', 'red', 'green', 'other']}})
    .records.map((r) => r.fields.C);
  assert.equal(byChoice, ['red', 'green', 'blue', 'other']);
  doc.close();
});

test('ties are broken by manualSort, then id', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [
    {A: 'x', manualSort: 3},
    {A: 'x', manualSort: 1},
    {A: 'x', manualSort: 2},
  ]);
  assert.equal(
    doc.fetchRecords('Table1', {sort: 'A'}).records.map((r) => r.id),
    [2, 3, 1],
  );
  doc.close();
});

test('19.2/19.5 errors map in normal format, inline in typed format', () => {
  const doc = GristDoc.create(tempPath());
  doc.applyUserActions([
    [
      'AddTable',
      'T',
      [
        {id: 'A', type: 'Any', isFormula: true, formula: '1/0'},
        {id: 'B', type: 'Text'},
      ],
    ],
  ]);
  // Formulas are not evaluated: store an error value as Grist would have computed it.
  doc.db
    .prepare(`INSERT INTO T (id, manualSort, A, B) VALUES (1, 1, ?, 'Hi')`)
    .run(marshalDumps(['E', 'ZeroDivisionError']));
  const rec = doc.fetchRecords('T').records[0];
  assert.equal(rec, {id: 1, fields: {A: null, B: 'Hi'}, errors: {A: 'ZeroDivisionError'}});
  assert.equal(doc.fetchColumns('T').A, [['E', 'ZeroDivisionError']]);
  assert.equal(doc.fetchRecords('T', {cellFormat: 'typed'}).records[0], {
    id: 1,
    fields: {A: ['E', 'ZeroDivisionError'], B: 'Hi'},
  });
  doc.close();
});

test('19.5 typed format on an empty row', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'CL', fields: {type: 'ChoiceList'}},
        {id: 'RL', fields: {type: 'RefList:T'}},
        {id: 'R', fields: {type: 'Ref:T'}},
        {id: 'I', fields: {type: 'Int'}},
        {id: 'B', fields: {type: 'Bool'}},
        {id: 'S', fields: {type: 'Text'}},
        {id: 'D', fields: {type: 'Date'}},
      ],
    },
  ]);
  doc.addRecords('T', [{}]);
  assert.equal(doc.fetchRecords('T', {cellFormat: 'typed'}).records[0].fields, {
    CL: ['L'],
    RL: ['r', 'T', []],
    R: ['R', 'T', 0],
    I: 0,
    B: false,
    S: '',
    D: null,
  });
  doc.close();
});

test('19.6 POST records: ids max+1, numbers to Text, blank rows', () => {
  const doc = GristDoc.create(tempPath());
  assert.equal(doc.addRecords('Table1', [{}, {}]), [1, 2]);
  doc.addTables([{id: 'Foo', columns: [{id: 'A'}, {id: 'B'}]}]);
  doc.addRecords('Foo', [{}, {}, {}, {}]);
  assert.equal(
    doc.addRecords('Foo', [
      {A: 'John', B: 55},
      {A: 'Jane', B: 0},
    ]),
    [5, 6],
  );
  assert.equal(doc.fetchColumns('Foo', {filter: {id: [5, 6]}}).B, ['55', '0']);
  doc.close();
});

test('union of keys: a missing key is null, which the column type then converts', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'A', fields: {type: 'Numeric'}},
        {id: 'F', fields: {type: 'Bool'}},
        {id: 'S', fields: {type: 'Text'}},
      ],
    },
  ]);
  doc.addRecords('T', [{A: 1, F: true}, {S: 'x'}]);
  assert.equal(doc.fetchColumns('T'), {id: [1, 2], manualSort: [1, 2], A: [1, null], F: [true, false], S: [null, 'x']});
  doc.close();
});

test('7.5 empty columns get a type from their first data', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [{A: 1}, {B: 2}, {}]);
  assert.equal(doc.fetchColumns('Table1'), {
    id: [1, 2, 3],
    manualSort: [1, 2, 3],
    A: [1, null, null],
    B: [null, 2, null],
    C: [null, null, null],
  });
  const types = Object.fromEntries(doc.listColumns('Table1').map((c) => [c.id, [c.fields.type, c.fields.isFormula]]));
  assert.equal(types, {A: ['Numeric', false], B: ['Numeric', false], C: ['Any', true]});
  const doc2 = GristDoc.create(tempPath());
  doc2.addRecords('Table1', [{A: '1970-01-02', B: '1970-01-02 12:00', C: 'true'}]);
  doc2.addColumns('Table1', [{id: 'D'}, {id: 'E'}, {id: 'F'}]);
  doc2.updateRecords('Table1', [{id: 1, fields: {D: '1.2', E: 'hello', F: ''}}]);
  assert.equal(doc2.fetchRecords('Table1').records[0].fields, {
    A: 86400,
    B: 129600,
    C: true,
    D: 1.2,
    E: 'hello',
    F: null,
  });
  const t2 = Object.fromEntries(doc2.listColumns('Table1').map((c) => [c.id, c.fields.type]));
  assert.equal(t2, {A: 'Date', B: 'DateTime:UTC', C: 'Bool', D: 'Numeric', E: 'Text', F: 'Any'});
  assert.is(doc2.listColumns('Table1').find((c) => c.id === 'F')!.fields.isFormula, true, 'all blank: stays empty');
  doc.close();
  doc2.close();
});

ftest("writing to a formula column fails with Grist's message, and nothing is applied", () => {
  const doc = hello();
  assert.throws(
    () => doc.addRecords('Table1', [{D: 5, E: 'x'}]),
    (e: any) =>
      e.status === 400 &&
      e.message === "Error manipulating data: [Sandbox] ValueError Can't save value to formula column E",
  );
  // D (empty) would have turned into a Numeric data column first: rolled back with the rest.
  const d = doc.listColumns('Table1').find((c) => c.id === 'D')!;
  assert.equal([d.fields.type, d.fields.isFormula], ['Any', true]);
  assert.is(doc.fetchRecords('Table1').records.length, 4);
  doc.close();
});

ftest('unknown table and column', () => {
  const doc = hello();
  assert.throws(
    () => doc.addRecords('Typo1', [{}]),
    (e: any) => e.status === 404 && e.message === 'Table not found "Typo1"',
  );
  assert.throws(
    () => doc.addRecords('Table1', [{X: 1}]),
    (e: any) => e.status === 400 && e.message === 'Invalid column "X"',
  );
  assert.throws(
    () => doc.fetchRecords('Typo1'),
    (e: any) => e.status === 404,
  );
  doc.close();
});

ftest('19.8/19.9 updates: one cell, invalid row ids and columns change nothing', () => {
  const doc = hello();
  doc.updateRecords('Table1', [{id: 1, fields: {A: 'Father Christmas'}}]);
  assert.equal(doc.fetchColumns('Table1').A, ['Father Christmas', '', '', '']);
  const before = doc.fetchColumns('Table1');
  assert.throws(() => doc.updateColumnar('Table1', {id: [1, 5], A: ['Alice', 'Felix']}), /Invalid row id 5/);
  assert.throws(() => doc.updateColumnar('Table1', {id: [10, 5], A: ['Alice', 'Felix']}), /Invalid row id 10/);
  assert.throws(() => doc.updateColumnar('Table1', {id: [1], A: ['Alice'], X: ['mystery']}), /Invalid column "X"/);
  assert.equal(doc.fetchColumns('Table1'), before);
  doc.updateRecords('Table1', [
    {id: 2, fields: {B: '11'}},
    {id: 2, fields: {B: '12'}},
  ]);
  assert.is(doc.fetchColumns('Table1').B[1], '12', 'the later duplicate wins');
  doc.close();
});

test('19.10 delete: missing ids ignored, ids reused', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'Foo', columns: [{id: 'A'}]}]);
  doc.addRecords('Foo', [{}, {}, {}, {}, {}, {}]);
  doc.removeRecords('Foo', [3, 4, 5, 6, 999]);
  assert.equal(doc.fetchColumns('Foo').id, [1, 2]);
  doc.removeRecords('Foo', []);
  assert.equal(doc.addColumnar('Foo', {A: ['Alice', 'Felix']}), [3, 4]);
  assert.throws(
    () => doc.removeRecords('Foo', ['x']),
    (e: any) => e.status === 400 && /Error manipulating data/.test(e.message),
  );
  doc.close();
});

test('deleting rows clears references: Ref to 0, ids leave RefLists', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'P', columns: [{id: 'Name'}]},
    {
      id: 'Q',
      columns: [
        {id: 'R', fields: {type: 'Ref:P'}},
        {id: 'RL', fields: {type: 'RefList:P'}},
        {id: 'F', fields: {type: 'Ref:P', isFormula: true, formula: '$R'}},
      ],
    },
  ]);
  doc.addRecords('P', [{Name: 'a'}, {Name: 'b'}, {Name: 'c'}]);
  doc.addRecords('Q', [
    {R: 1, RL: ['L', 1, 2]},
    {R: 2, RL: ['L', 1]},
    {R: 3, RL: ['L', 3]},
  ]);
  doc.removeRecords('P', [1]);
  const q = doc.fetchColumns('Q');
  assert.equal(q.R, [0, 2, 3]);
  assert.equal(q.RL, [['L', 2], null, ['L', 3]]);
  doc.close();
});

test('removing attachment metadata rows clears them from Attachments cells', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: [{id: 'Files', fields: {type: 'Attachments'}}]}]);
  // Rows come from uploads (metarules.ts refuses adds through the record paths).
  doc.db
    .prepare(`INSERT INTO _grist_Attachments (id, fileName, fileSize) VALUES (1, 'a.txt', 1), (2, 'b.txt', 2)`)
    .run();
  assert.throws(
    () => doc.addRecords('_grist_Attachments', [{fileName: 'c.txt'}]),
    (e: any) => e.status === 403,
  );
  doc.addRecords('T', [{Files: ['L', 1, 2]}, {Files: ['L', 2]}]);
  doc.removeRecords('_grist_Attachments', [2]);
  assert.equal(doc.fetchColumns('T').Files, [['L', 1], null]);
  assert.equal(doc.fetchColumns('_grist_Attachments').fileName, ['a.txt']);
  doc.close();
});

test('/data columnar add and update', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: [{id: 'A'}, {id: 'B', fields: {type: 'Int'}}]}]);
  assert.equal(doc.addColumnar('T', {A: ['x', 'y'], B: [1]}), [1, 2]);
  doc.updateColumnar('T', {id: [2], A: ['z']});
  assert.equal(
    doc.fetchColumns('T'),
    {id: [1, 2], manualSort: [1, 2], A: ['x', 'z'], B: [1, 0]},
    'a short column fills with its type default, as in Grist',
  );
  assert.throws(
    () => doc.addColumnar('T', {}),
    (e: any) => e.status === 400,
  );
  doc.close();
});

test('noparse only switches off format-aware parsing (SPEC 7.4)', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'N', fields: {type: 'Numeric'}},
        {id: 'D', fields: {type: 'Date'}},
        {id: 'CL', fields: {type: 'ChoiceList'}},
        {id: 'B', fields: {type: 'Bool'}},
        {id: 'S', fields: {type: 'Text'}},
      ],
    },
  ]);
  doc.addRecords('T', [{N: '$55', D: '02/14/2024', CL: 'a,b', B: 'yes', S: true}], {parse: false});
  doc.addRecords('T', [{N: '$55', D: '2024-02-14', CL: 'a,b', B: null, S: 2.0}]);
  assert.equal(doc.fetchColumns('T', {}), {
    id: [1, 2],
    manualSort: [1, 2],
    N: ['$55', 55],
    D: ['02/14/2024', 1707868800],
    CL: ['a,b', ['L', 'a', 'b']],
    B: [true, false],
    S: ['True', '2'],
  });
  doc.close();
});

test('Ref values: display-value lookups through the visible column', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'People', columns: [{id: 'Name'}]},
    {
      id: 'T',
      columns: [
        {id: 'P', fields: {type: 'Ref:People'}},
        {id: 'PL', fields: {type: 'RefList:People'}},
        {id: 'Raw', fields: {type: 'Ref:People'}},
      ],
    },
  ]);
  doc.addRecords('People', [{Name: 'Alice'}, {Name: 'Bob'}]);
  const nameRef = doc.listColumns('People').find((c) => c.id === 'Name')!.fields.colRef as number;
  doc.updateColumns('T', [
    {id: 'P', fields: {visibleCol: nameRef}},
    {id: 'PL', fields: {visibleCol: nameRef}},
  ]);
  doc.addRecords('T', [
    {P: 'Bob', PL: 'Alice, Bob', Raw: '2'},
    {P: 'Nobody', PL: '["Bob", "Zed"]', Raw: '7'},
    {P: '', PL: '', Raw: ['l', 'Alice', {column: 'Name'}]},
  ]);
  assert.equal(doc.fetchColumns('T'), {
    id: [1, 2, 3],
    manualSort: [1, 2, 3],
    P: [2, 'Nobody', 0],
    PL: [['L', 1, 2], '["Bob", "Zed"]', null],
    Raw: [2, '7', 1],
  });
  doc.close();
});

test('19.11-19.15 add-or-update', () => {
  const doc = GristDoc.create(tempPath());
  doc.replaceColumns(
    'Table1',
    [
      {id: 'A', fields: {type: 'Numeric', isFormula: false}},
      {id: 'B', fields: {type: 'Numeric', isFormula: false}},
    ],
    {replaceall: true},
  );
  const put = (records: any[], options = {}) => doc.upsertRecords('Table1', records, options);
  const data = () => {
    const d = doc.fetchColumns('Table1');
    return {A: d.A, B: d.B};
  };
  assert.equal(put([{require: {A: 1}}, {require: {A: 2}, fields: {A: 3}}, {require: {A: 4}, fields: {B: 5}}]), {
    recordIds: [[1], [2], [3]],
    addRecordIds: [1, 2, 3],
    updateRecordIds: [],
  });
  assert.equal(data(), {A: [1, 3, 4], B: [0, 0, 5]});
  assert.equal(put([{require: {A: 1}}, {require: {A: 3}, fields: {A: 33}}, {require: {A: 4}, fields: {B: 6}}]), {
    recordIds: [[1], [2], [3]],
    addRecordIds: [],
    updateRecordIds: [[1], [2], [3]],
  });
  assert.equal(data(), {A: [1, 33, 4], B: [0, 0, 6]});
  assert.equal(put([{require: {A: 100}}], {noadd: true}), {recordIds: [[]], addRecordIds: [], updateRecordIds: []});
  assert.equal(put([{require: {A: 1}, fields: {A: 11}}], {noupdate: true}), {
    recordIds: [[]],
    addRecordIds: [],
    updateRecordIds: [],
  });
  assert.equal(data(), {A: [1, 33, 4], B: [0, 0, 6]});
  // 19.13 onmany
  assert.equal(put([{require: {B: 0}, fields: {B: 1}}], {onmany: 'all'}).recordIds, [[1, 2]]);
  assert.equal(put([{require: {B: 1}, fields: {B: 2}}]).recordIds, [[1]]);
  assert.equal(data().B, [2, 1, 6]);
  assert.equal(
    put([
      {require: {B: 2}, fields: {B: 7}},
      {require: {A: 4}, fields: {B: 1}},
    ]).recordIds,
    [[1], [3]],
  );
  assert.equal(put([{require: {B: 1}, fields: {A: 9}}], {onmany: 'none'}), {
    recordIds: [[]],
    addRecordIds: [],
    updateRecordIds: [],
  });
  // 19.14 parsing and empty require
  doc.updateColumnar('Table1', {id: [1], A: [4]});
  assert.equal(put([{require: {A: '$4'}, fields: {A: '$44'}}]).updateRecordIds, [[1]]);
  assert.is(doc.fetchColumns('Table1').A[0], 44);
  put([{require: {A: 44}, fields: {A: '$55'}}], {parse: false});
  assert.is(doc.fetchColumns('Table1').A[0], '$55');
  assert.equal(put([{require: {A: '$33'}}], {parse: false}), {
    recordIds: [[4]],
    addRecordIds: [4],
    updateRecordIds: [],
  });
  assert.throws(() => put([{require: {}}]), /ValueError require is empty but allow_empty_require isn't set/);
  put([{require: {}, fields: {A: 99, B: 99}}], {allowEmptyRequire: true, onmany: 'all'});
  assert.equal(data(), {A: [99, 99, 99, 99], B: [99, 99, 99, 99]});
  // 19.15 errors
  assert.throws(() => put([{require: {NoColumn: 1}}]), /Invalid column "NoColumn"/);
  assert.throws(() => doc.upsertRecords('Table2', [{require: {A: 1}}]), /Table not found/);
  doc.close();
});

test('add-or-update: require.id creates that id, duplicates refused, fields win over require', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: [{id: 'A'}, {id: 'B'}, {id: 'F', fields: {formula: '$A', type: 'Text'}}]}]);
  doc.addRecords('T', [{A: 'a'}, {A: 'b'}, {A: 'c'}]);
  assert.equal(doc.upsertRecords('T', [{require: {id: 50}, fields: {A: 'x'}}]), {
    recordIds: [[50]],
    addRecordIds: [50],
    updateRecordIds: [],
  });
  assert.equal(doc.upsertRecords('T', [{require: {id: 2}, fields: {B: 'y'}}]).updateRecordIds, [[2]]);
  assert.throws(() => doc.upsertRecords('T', [{require: {id: 1000001}}]), /ValueError Row ID too high/);
  // Ids the table picks itself go past 1,000,000, as in Grist (issue 42: imports into big tables).
  doc.applyUserActions([['AddRecord', 'T', 1000000, {A: 'last given'}]]);
  assert.equal(doc.addRecords('T', [{A: 'picked'}, {A: 'picked too'}]), [1000001, 1000002]);
  doc.removeRecords('T', [1000000, 1000001, 1000002]);
  assert.throws(
    () => doc.upsertRecords('T', [{require: {A: 'q'}}, {require: {A: 'q'}}]),
    /require values must be unique/,
  );
  assert.equal(doc.upsertRecords('T', [{require: {A: 'new', F: 'zzz'}, fields: {A: 'over'}}]).addRecordIds, [51]);
  const row = doc.fetchRecords('T', {filter: {id: [51]}}).records[0].fields;
  assert.equal(
    [row.A, row.F],
    ['over', 'over'],
    'formula columns are only matched (then computed), fields override require',
  );
  assert.equal(doc.fetchColumns('T').id, [1, 2, 3, 50, 51]);
  doc.close();
});

test('add-or-update: an empty require with no fields returns holes', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [{A: 1}]);
  const r = doc.upsertRecords('Table1', [{require: {A: 1}, fields: {A: 2}}, {require: {}}], {allowEmptyRequire: true});
  assert.is(r.recordIds.length, 1);
  assert.is(
    JSON.stringify(
      doc.upsertRecords('Table1', [{require: {}}, {require: {A: 5}}], {allowEmptyRequire: true}).recordIds,
    ),
    '[null,[2]]',
  );
  doc.close();
});

test('onChange reports added, updated and removed ids inside the transaction', () => {
  const doc = GristDoc.create(tempPath());
  const seen: TableChange[] = [];
  let inTransaction = false;
  doc.onChange((c) => {
    seen.push(c);
    inTransaction = doc.db.inTransaction;
  });
  doc.addRecords('Table1', [{A: 'x'}, {A: 'y'}]);
  assert.ok(inTransaction);
  assert.equal(
    seen.find((c) => c.tableId === 'Table1'),
    {tableId: 'Table1', added: [1, 2], updated: [], removed: [], columns: [], writeSeq: 1, actor: null},
  );
  seen.length = 0;
  doc.applyUserActions([
    ['UpdateRecord', 'Table1', 1, {A: 'z'}],
    ['RemoveRecord', 'Table1', 2],
    ['AddRecord', 'Table1', null, {A: 'w'}],
    ['UpdateRecord', 'Table1', 2, {A: 'v'}],
  ]);
  // `columns`: those the updates set; `actor`: null, as no caller was named (`GristDoc.as`).
  assert.equal(seen, [
    {tableId: 'Table1', added: [2], updated: [1], removed: [], columns: ['A'], writeSeq: 2, actor: null},
  ]);
  seen.length = 0;
  const actor = {userId: 5, email: 'ed@example.com', name: 'Ed', apiKeyId: 3};
  doc.as(null, actor).updateRecords('Table1', [{id: 1, fields: {A: 'by ed'}}]);
  assert.equal(seen, [{tableId: 'Table1', added: [], updated: [1], removed: [], columns: ['A'], writeSeq: 3, actor}]);
  // A listener that throws aborts the write.
  const off = doc.onChange(() => {
    throw new Error('outbox full');
  });
  assert.throws(() => doc.addRecords('Table1', [{}]), /outbox full/);
  off();
  assert.equal(doc.fetchColumns('Table1').id, [1, 2]);
  doc.close();
});

test('a failing bundle changes nothing', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [{A: 'x'}]);
  const before = doc.fetchColumns('Table1');
  assert.throws(
    () =>
      doc.applyUserActions([
        ['AddRecord', 'Table1', null, {A: 'y'}],
        ['AddTable', 'New', [{id: 'Q'}]],
        ['UpdateRecord', 'Table1', 99, {A: 'z'}],
      ]),
    /Invalid row id 99/,
  );
  assert.equal(doc.fetchColumns('Table1'), before);
  assert.equal(
    doc.listTables().map((t) => t.id),
    ['Table1'],
  );
  doc.close();
});

test('onBeforeRows sees rows before they are updated or removed, in the same write as onChange', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [{A: 'x'}, {A: 'y'}, {A: 'z'}]);
  const before: Array<[string, number[], unknown[]]> = [];
  const seqs: number[] = [];
  doc.onBeforeRows((tableId, ids, seq) => {
    // The old values are still in the table when the hook runs.
    before.push([tableId, ids, ids.map((id) => doc.db.prepare('SELECT A FROM Table1 WHERE id = ?').pluck().get(id))]);
    seqs.push(seq);
  });
  doc.onChange((c) => {
    seqs.push(c.writeSeq);
  });
  doc.updateRecords('Table1', [{id: 2, fields: {A: 'Y'}}]);
  doc.removeRecords('Table1', [3, 99]);
  assert.equal(before, [
    ['Table1', [2], ['y']],
    ['Table1', [3], ['z']],
  ]);
  assert.is(seqs[0], seqs[1], 'before and change hooks of one write share its number');
  assert.is(seqs[2], seqs[3]);
  assert.ok(seqs[2] > seqs[0]);
  doc.close();
});

test("rows that existed while a column was empty get its new type's default when data arrives (SPEC 19.11)", () => {
  const doc = GristDoc.create(tempPath());
  const r = doc.upsertRecords('Table1', [
    {require: {A: 1}},
    {require: {A: 2}, fields: {A: 3}},
    {require: {A: 4}, fields: {B: 5}},
  ]);
  assert.equal(r, {recordIds: [[1], [2], [3]], addRecordIds: [1, 2, 3], updateRecordIds: []});
  const data = doc.fetchColumns('Table1');
  assert.equal(data.A, [1, 3, 4]);
  assert.equal(data.B, [0, 0, 5]);
  // A column that stays empty keeps nulls; a Text guess fills with "".
  assert.equal(data.C, [null, null, null]);
  doc.addRecords('Table1', [{C: 'hello'}]);
  assert.equal(doc.fetchColumns('Table1').C, ['', '', '', 'hello']);
  doc.close();
});

test.run();
