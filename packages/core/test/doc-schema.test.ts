// Tables and columns: creation, renames, type changes, removal, PUT columns, user actions, and
// the consistency of Grist's metadata (views, sections, fields) with the SQLite tables.
import type Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {copyFixture, tempPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

/** Checks the invariants Grist relies on to open a document. Returns the problems found. */
function inconsistencies(db: Database.Database): string[] {
  const problems: string[] = [];
  const all = (sql: string) => db.prepare(sql).all() as any[];
  const sqlTables = new Set(all(`SELECT name FROM sqlite_master WHERE type = 'table'`).map((r) => r.name));
  const tables = all('SELECT * FROM _grist_Tables');
  const cols = all('SELECT * FROM _grist_Tables_column');
  const sections = all('SELECT * FROM _grist_Views_section');
  const fields = all('SELECT * FROM _grist_Views_section_field');
  const views = new Set(all('SELECT id FROM _grist_Views').map((r) => r.id));
  const tableIds = new Set(tables.map((t) => t.id));
  const colIds = new Set(cols.map((c) => c.id));
  const sectionIds = new Set(sections.map((s) => s.id));
  for (const t of tables) {
    if (!sqlTables.has(t.tableId)) {
      problems.push(`no SQL table ${t.tableId}`);
      continue;
    }
    const sqlCols = all(`SELECT name FROM pragma_table_info('${t.tableId}')`)
      .map((r) => r.name)
      .filter((n) => n !== 'id')
      .sort();
    const metaCols = cols
      .filter((c) => c.parentId === t.id)
      .map((c) => c.colId)
      .sort();
    if (JSON.stringify(sqlCols) !== JSON.stringify(metaCols)) {
      problems.push(`${t.tableId}: SQL ${sqlCols} vs meta ${metaCols}`);
    }
    for (const ref of ['rawViewSectionRef', 'recordCardViewSectionRef']) {
      if (!sectionIds.has(t[ref])) {
        problems.push(`${t.tableId}.${ref} dangles`);
      }
    }
    if (t.primaryViewId && !views.has(t.primaryViewId)) {
      problems.push(`${t.tableId}.primaryViewId dangles`);
    }
  }
  for (const c of cols) {
    if (!tableIds.has(c.parentId)) {
      problems.push(`column ${c.id} without table`);
    }
  }
  for (const s of sections) {
    if (!tableIds.has(s.tableRef)) {
      problems.push(`section ${s.id} without table`);
    }
    if (s.parentId && !views.has(s.parentId)) {
      problems.push(`section ${s.id} without view`);
    }
  }
  for (const f of fields) {
    if (!colIds.has(f.colRef)) {
      problems.push(`field ${f.id} without column`);
    }
    if (!sectionIds.has(f.parentId)) {
      problems.push(`field ${f.id} without section`);
    }
  }
  for (const r of all('SELECT viewRef FROM _grist_Pages UNION ALL SELECT viewRef FROM _grist_TabBar')) {
    if (!views.has(r.viewRef)) {
      problems.push(`page/tab for missing view ${r.viewRef}`);
    }
  }
  return problems;
}

const colIds = (doc: GristDoc, table = 'Table1', hidden = false) => doc.listColumns(table, {hidden}).map((c) => c.id);

ftest('19.16 GET columns: fields of each column, hidden adds manualSort', () => {
  const doc = GristDoc.open(copyFixture('Hello.grist'));
  const cols = doc.listColumns('Table1');
  assert.equal(cols[0], {
    id: 'A',
    fields: {
      colRef: 2,
      parentId: 1,
      parentPos: 1,
      type: 'Text',
      widgetOptions: '',
      isFormula: false,
      formula: '',
      label: 'A',
      description: '',
      untieColIdFromLabel: false,
      summarySourceCol: 0,
      displayCol: 0,
      visibleCol: 0,
      rules: null,
      recalcWhen: 0,
      recalcDeps: null,
      reverseCol: 0,
    },
  });
  const e = cols.find((c) => c.id === 'E')!.fields;
  assert.equal([e.type, e.isFormula, e.formula], ['Any', true, '$A.upper()']);
  const d = cols.find((c) => c.id === 'D')!.fields;
  assert.equal([d.type, d.isFormula, d.formula], ['Any', true, '']);
  const ms = doc.listColumns('Table1', {hidden: true})[0];
  assert.equal([ms.id, ms.fields.colRef, ms.fields.type], ['manualSort', 1, 'ManualSortPos']);
  assert.throws(
    () => doc.listColumns('_grist_Tables'),
    (e: any) => e.status === 400,
  );
  doc.close();
});

test('8.2 GET tables', () => {
  const doc = GristDoc.create(tempPath());
  assert.equal(doc.listTables(), [
    {
      id: 'Table1',
      fields: {
        tableRef: 1,
        primaryViewId: 1,
        summarySourceTable: 0,
        onDemand: false,
        rawViewSectionRef: 2,
        recordCardViewSectionRef: 3,
      },
    },
  ]);
  doc.close();
});

test('19.19 POST tables and columns de-duplicate ids', () => {
  const doc = GristDoc.create(tempPath());
  const tables = doc.addTables([
    {columns: [{}]},
    {id: '', columns: [{id: ''}]},
    {id: 'NewTable1', columns: [{id: 'NewCol1'}]},
    {id: 'NewTable2', columns: [{id: 'NewCol3'}, {id: 'NewCol3'}]},
    {id: 'NewTable2', columns: [{id: 'NewCol1'}]},
  ]);
  assert.equal(tables, [{id: 'Table2'}, {id: 'Table3'}, {id: 'NewTable1'}, {id: 'NewTable2'}, {id: 'NewTable2_2'}]);
  assert.equal(colIds(doc, 'NewTable2'), ['NewCol3', 'NewCol3_2']);
  const cols = doc.addColumns('NewTable2', [
    {},
    {id: ''},
    {id: 'NewCol4'},
    {id: 'NewCol4'},
    {id: 'NewCol5', fields: {label: 'Label5'}},
  ]);
  assert.equal(cols, [{id: 'A'}, {id: 'B'}, {id: 'NewCol4'}, {id: 'NewCol4_2'}, {id: 'NewCol5'}]);
  assert.is(doc.listColumns('NewTable2').find((c) => c.id === 'NewCol5')!.fields.label, 'Label5');
  assert.throws(
    () => doc.addColumns('NoSuchTable', [{}]),
    (e: any) => e.status === 404 && e.message === 'Table not found "NoSuchTable"',
  );
  assert.throws(
    () => doc.updateTables([{id: 'Table9', fields: {tableId: 'X'}}]),
    (e: any) => e.status === 404 && e.message === 'Table not found "Table9"',
  );
  assert.throws(
    () => doc.updateColumns('Table1', [{id: 'Zed', fields: {label: 'x'}}]),
    (e: any) => e.status === 404 && e.message === 'Column not found "Zed"',
  );
  doc.updateColumns('Table1', [{id: 'A', fields: {colId: 'B'}}]);
  assert.equal(colIds(doc), ['B2', 'B', 'C']);
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('8.3 POST tables: data columns of type Text by default; only some fields applied', () => {
  const doc = GristDoc.create(tempPath());
  const [{id}] = doc.addTables([
    {
      id: 'foo bar',
      columns: [
        {id: 'Name'},
        {id: 'Up', fields: {formula: '$Name.upper()'}},
        {id: 'Age', fields: {type: 'Int', label: 'Years', description: 'ignored', recalcWhen: 2}},
      ],
    },
  ]);
  assert.is(id, 'Foo_bar');
  const f = Object.fromEntries(doc.listColumns(id).map((c) => [c.id, c.fields]));
  assert.equal([f.Name.type, f.Name.isFormula, f.Name.label], ['Text', false, 'Name']);
  assert.equal([f.Up.type, f.Up.isFormula, f.Up.formula], ['Any', true, '$Name.upper()']);
  assert.equal([f.Age.type, f.Age.label, f.Age.description, f.Age.recalcWhen], ['Int', 'Years', '', 0]);
  // The page and raw section keep the title as given.
  const view = doc.db
    .prepare(`SELECT name FROM _grist_Views WHERE id = ?`)
    .get(doc.listTables()[1].fields.primaryViewId) as any;
  assert.is(view.name, 'foo bar');
  const raw = doc.db
    .prepare(`SELECT title FROM _grist_Views_section WHERE id = ?`)
    .get(doc.listTables()[1].fields.rawViewSectionRef) as any;
  assert.is(raw.title, 'foo bar');
  // SQL columns declared as Grist declares them.
  const decl = Object.fromEntries(
    (doc.db.prepare(`SELECT name, type, dflt_value AS d FROM pragma_table_info('Foo_bar')`).all() as any[]).map((r) => [
      r.name,
      `${r.type} ${r.d}`,
    ]),
  );
  assert.equal(decl, {
    id: 'INTEGER null',
    manualSort: 'NUMERIC 1e999',
    Name: "TEXT ''",
    Up: 'BLOB NULL',
    Age: 'INTEGER 0',
  });
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('9.2 POST columns: empty Any columns by default, fields in raw, card and record widgets', () => {
  const doc = GristDoc.create(tempPath());
  const [{id}] = doc.addColumns('Table1', [
    {id: 'D', fields: {description: 'not applied', visibleCol: 0, recalcWhen: 1}},
  ]);
  const d = doc.listColumns('Table1').find((c) => c.id === id)!.fields;
  assert.equal([d.type, d.isFormula, d.formula, d.description, d.recalcWhen, d.label], ['Any', true, '', '', 1, 'D']);
  const sections = (
    doc.db.prepare(`SELECT parentId FROM _grist_Views_section_field WHERE colRef = ?`).all(d.colRef) as any[]
  )
    .map((r) => r.parentId)
    .sort();
  assert.equal(sections, [1, 2, 3], 'page widget, raw section and record card');
  const [{id: dataCol}] = doc.addColumns('Table1', [{fields: {isFormula: false, label: 'Some label'}}]);
  assert.is(dataCol, 'E', 'a label does not determine the colId');
  const e = doc.listColumns('Table1').find((c) => c.id === 'E')!.fields;
  assert.equal([e.type, e.label], ['Text', 'Some label']);
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('19.17 PUT columns: add, update, noadd, noupdate, replaceall', () => {
  const body: Array<{id: string; fields: Record<string, string>}> = [
    {id: 'Foo', fields: {type: 'Text', label: 'FooLabel'}},
    {id: 'A', fields: {type: 'Numeric', colId: 'NewA'}},
  ];
  const run = (options: object) => {
    const doc = GristDoc.create(tempPath());
    doc.replaceColumns('Table1', body, options);
    const out = doc.listColumns('Table1', {hidden: true}).map((c) => `${c.id}:${c.fields.type}:${c.fields.label}`);
    assert.equal(inconsistencies(doc.db), []);
    doc.close();
    return out;
  };
  assert.equal(run({}), [
    'manualSort:ManualSortPos:manualSort',
    'NewA:Numeric:A',
    'B:Any:B',
    'C:Any:C',
    'Foo:Text:FooLabel',
  ]);
  assert.equal(run({noadd: true}), ['manualSort:ManualSortPos:manualSort', 'NewA:Numeric:A', 'B:Any:B', 'C:Any:C']);
  assert.equal(run({noupdate: true}), [
    'manualSort:ManualSortPos:manualSort',
    'A:Any:A',
    'B:Any:B',
    'C:Any:C',
    'Foo:Text:FooLabel',
  ]);
  assert.equal(run({replaceall: true}), ['manualSort:ManualSortPos:manualSort', 'NewA:Numeric:A', 'Foo:Text:FooLabel']);
  const doc = GristDoc.create(tempPath());
  assert.throws(
    () => doc.replaceColumns('NonExistingTable', body),
    (e: any) => e.status === 404 && e.message === 'Table not found "NonExistingTable"',
  );
  doc.close();
});

test('19.18 DELETE column', () => {
  const doc = GristDoc.create(tempPath());
  const colRef = doc.listColumns('Table1')[0].fields.colRef;
  doc.removeColumn('Table1', 'A');
  // Grist's order (D49): the last column record, C, takes A's place.
  assert.equal(colIds(doc, 'Table1', true), ['manualSort', 'C', 'B']);
  assert.equal(doc.db.prepare(`SELECT count(*) AS n FROM _grist_Views_section_field WHERE colRef = ?`).get(colRef), {
    n: 0,
  });
  assert.throws(
    () => doc.removeColumn('Table1', 'NonExistingColId'),
    (e: any) => e.status === 404 && e.message === 'Table or column not found "Table1.NonExistingColId"',
  );
  assert.throws(
    () => doc.removeColumn('NonExistingTable', 'A'),
    (e: any) => e.status === 404 && e.message === 'Table or column not found "NonExistingTable.A"',
  );
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('labels rename colIds unless untied; untie false re-syncs', () => {
  const doc = GristDoc.create(tempPath());
  doc.updateColumns('Table1', [{id: 'A', fields: {label: 'My Label!'}}]);
  assert.equal(colIds(doc), ['My_Label_', 'B', 'C']);
  doc.updateColumns('Table1', [{id: 'B', fields: {label: 'Other', untieColIdFromLabel: true}}]);
  assert.equal(colIds(doc), ['My_Label_', 'B', 'C']);
  doc.updateColumns('Table1', [{id: 'B', fields: {untieColIdFromLabel: false}}]);
  assert.equal(colIds(doc), ['My_Label_', 'Other', 'C']);
  doc.updateColumns('Table1', [{id: 'C', fields: {label: 'x', colId: 'Explicit'}}]);
  assert.equal(colIds(doc), ['My_Label_', 'Other', 'Explicit']);
  // Two columns renamed to clashing names in one request get distinct ids.
  doc.updateColumns('Table1', [
    {id: 'Other', fields: {colId: 'Same'}},
    {id: 'Explicit', fields: {colId: 'same'}},
  ]);
  assert.equal(colIds(doc), ['My_Label_', 'Same', 'same2']);
  assert.throws(() => doc.updateColumns('Table1', [{id: 'Same', fields: {bogus: 1}}]), /Invalid column "bogus"/);
  doc.close();
});

test('type changes convert stored values; what does not convert stays as alt-text', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: [{id: 'X', fields: {type: 'Text', widgetOptions: '{"alignment":"left"}'}}]}]);
  doc.addRecords('T', [{X: '12'}, {X: 'abc'}, {X: '3.5'}, {X: ''}, {X: '2024-02-14'}]);
  const x = () => doc.fetchColumns('T').X;
  doc.updateColumns('T', [{id: 'X', fields: {type: 'Numeric'}}]);
  assert.equal(x(), [12, 'abc', 3.5, null, '2024-02-14']);
  const col = doc.listColumns('T')[0].fields;
  assert.is(col.widgetOptions, '', 'a type change resets widgetOptions');
  const decl = doc.db.prepare(`SELECT type, dflt_value AS d FROM pragma_table_info('T') WHERE name = 'X'`).get();
  assert.equal(decl, {type: 'NUMERIC', d: '0'});
  doc.updateColumns('T', [{id: 'X', fields: {type: 'Int'}}]);
  assert.equal(x(), [12, 'abc', 3, null, '2024-02-14']);
  doc.updateColumns('T', [{id: 'X', fields: {type: 'Date'}}]);
  assert.equal(x(), [12, 'abc', 3, null, 1707868800]);
  doc.updateColumns('T', [{id: 'X', fields: {type: 'Text'}}]);
  assert.equal(x(), ['12', 'abc', '3', null, '1707868800']);
  doc.updateColumns('T', [{id: 'X', fields: {type: 'Bool'}}]);
  assert.equal(x(), ['12', 'abc', '3', false, '1707868800']);
  doc.applyUserActions([['ModifyColumn', 'T', 'X', {type: 'Any'}]]);
  assert.equal(x(), ['12', 'abc', '3', false, '1707868800']);
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('formula columns: a formula computes; an empty formula holds the type default', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [{A: 'x', C: 'y'}]);
  doc.updateColumns('Table1', [{id: 'A', fields: {isFormula: true, formula: '$C + "!"'}}]);
  assert.equal(doc.fetchColumns('Table1').A, ['y!']);
  // An empty formula gives the type's default (Grist's compiled empty formula), '' for Text.
  doc.updateColumns('Table1', [{id: 'A', fields: {formula: ''}}]);
  assert.equal(doc.fetchColumns('Table1').A, ['']);
  doc.close();
});

test('renaming a table: references and formulas follow; missing table 404', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'People', columns: [{id: 'Name'}]},
    {
      id: 'Pets',
      columns: [
        {id: 'Owner', fields: {type: 'Ref:People'}},
        {id: 'N', fields: {formula: 'len(People.all) + $Owner.People_count'}},
      ],
    },
  ]);
  doc.addRecords('People', [{Name: 'a'}]);
  doc.addRecords('Pets', [{Owner: 1}]);
  doc.updateTables([{id: 'People', fields: {tableId: 'humans'}}]);
  assert.equal(
    doc.listTables().map((t) => t.id),
    ['Table1', 'Humans', 'Pets'],
  );
  const pets = Object.fromEntries(doc.listColumns('Pets').map((c) => [c.id, c.fields]));
  assert.is(pets.Owner.type, 'Ref:Humans');
  assert.is(pets.N.formula, 'len(Humans.all) + $Owner.People_count');
  assert.equal(doc.fetchColumns('Pets').Owner, [1]);
  assert.equal(doc.fetchColumns('Humans').Name, ['a']);
  assert.is(doc.applyUserActions([['RenameTable', 'Humans', 'HUMANS']]).retValues[0], 'HUMANS');
  assert.throws(
    () => doc.updateTables([{id: 'People', fields: {tableId: 'X'}}]),
    (e: any) => e.status === 404,
  );
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('removing a table removes its views, sections, fields; columns referring to it become Int', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'People', columns: [{id: 'Name'}]},
    {id: 'Pets', columns: [{id: 'Owner', fields: {type: 'Ref:People'}}, {id: 'Kind'}]},
  ]);
  doc.removeTable('People');
  assert.equal(
    doc.listTables().map((t) => t.id),
    ['Table1', 'Pets'],
  );
  // Grist's _convert_reference_col_for_deleted_table (no visible column: row ids kept as Int).
  assert.equal(colIds(doc, 'Pets').sort(), ['Kind', 'Owner']);
  assert.is(doc.listColumns('Pets').find((c) => c.id === 'Owner')?.fields.type, 'Int');
  assert.equal(inconsistencies(doc.db), []);
  assert.equal(doc.db.prepare(`SELECT count(*) AS n FROM _grist_Views`).get(), {n: 2});
  assert.equal(doc.db.prepare(`SELECT count(*) AS n FROM _grist_Pages`).get(), {n: 2});
  // Removing rows of _grist_Tables removes tables too (as the tests of Grist do via /data/delete).
  const petsRef = doc.listTables()[1].fields.tableRef;
  doc.removeRecords('_grist_Tables', [petsRef]);
  assert.equal(
    doc.listTables().map((t) => t.id),
    ['Table1'],
  );
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('/apply: return values, unknown actions, actionNum', () => {
  const doc = GristDoc.create(tempPath());
  const r1 = doc.applyUserActions([
    ['AddTable', 'Things', [{id: 'Name', type: 'Text'}]],
    ['AddRecord', 'Things', null, {Name: 'a'}],
    ['AddColumn', 'Things', 'Size', {type: 'Int'}],
    ['RenameColumn', 'Things', 'Size', 'Weight'],
    ['BulkAddRecord', 'Things', [null, null], {Name: ['b', 'c'], Weight: [1, 2]}],
    ['RemoveColumn', 'Things', 'Weight'],
  ]);
  assert.equal(r1.retValues, [
    {id: 2, table_id: 'Things', columns: ['Name'], views: [{id: 2, sections: [4]}]},
    1,
    {colRef: 7, colId: 'Size'},
    'Weight',
    [2, 3],
    null,
  ]);
  assert.is(r1.isModification, true);
  assert.match(r1.actionHash, /^[0-9a-f]{64}$/);
  const r2 = doc.applyUserActions([['BulkRemoveRecord', 'Things', [99]]]);
  assert.is(r2.actionNum, r1.actionNum + 1);
  assert.is(r2.isModification, false);
  assert.throws(
    () => doc.applyUserActions([['Frobnicate', 'Things']]),
    (e: any) => e.status === 400 && /Frobnicate/.test(e.message),
  );
  assert.throws(
    () => doc.applyUserActions([['AddRecord', 'Nope', null, {}]]),
    (e: any) => e.status === 400 && /KeyError/.test(e.message),
  );
  doc.applyUserActions([['ReplaceTableData', 'Things', [5], {Name: ['only']}]]);
  assert.equal(doc.fetchColumns('Things'), {id: [5], manualSort: [5], Name: ['only']});
  doc.applyUserActions([['AddOrUpdateRecord', 'Things', {Name: 'only'}, {Name: 'ONLY'}, {}]]);
  assert.equal(doc.fetchColumns('Things').Name, ['ONLY']);
  doc.applyUserActions([['RemoveTable', 'Things']]);
  assert.equal(
    doc.listTables().map((t) => t.id),
    ['Table1'],
  );
  assert.equal(inconsistencies(doc.db), []);
  doc.close();
});

test('metadata tables can be read (and written through their record overrides)', () => {
  const doc = GristDoc.create(tempPath());
  const tables = doc.fetchRecords('_grist_Tables').records;
  assert.equal(tables[0].fields.tableId, 'Table1');
  doc.updateRecords('_grist_Tables_column', [{id: 2, fields: {label: 'Renamed'}}]);
  assert.equal(colIds(doc), ['Renamed', 'B', 'C']);
  doc.updateRecords('_grist_Views', [{id: 1, fields: {name: 'My page'}}]);
  assert.is(doc.fetchRecords('_grist_Views').records[0].fields.name, 'My page');
  assert.throws(
    () => doc.fetchRecords('_gristsys_ActionHistory'),
    (e: any) => e.status === 404,
  );
  doc.close();
});

test.run();
