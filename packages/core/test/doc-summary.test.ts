// Summary tables made through user actions (issue 26 §4): CreateViewSection with group-by columns,
// UpdateSummaryViewSection, removal with the last section, reuse of a grouping, and rows kept in
// step with the source. Metadata and cells are checked against what Grist writes (its
// test_summary*.py and the summaries Grist stored in fixtures).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {openGristUpload} from '../src/import/grist.js';
import {copyFixture, tempPath, withFixtures} from './doc-helpers.js';
import {findFixtures} from '../src/testing/fixtures.js';

const ftest = withFixtures(test, ['grist', 'corpus']);
/** A copy of a document of the fixture corpus. */
const corpusCopy = (name: string) => copyFixture(`${findFixtures()!.corpus}/${name}`);

type Row = Record<string, any>;

function rows(doc: GristDoc, sql: string, ...params: unknown[]): Row[] {
  return doc.db.prepare(sql).all(...params) as Row[];
}

function tableRef(doc: GristDoc, tableId: string): number {
  return rows(doc, 'SELECT id FROM _grist_Tables WHERE tableId = ?', tableId)[0]?.id ?? 0;
}

function colRef(doc: GristDoc, tableId: string, colId: string): number {
  return rows(
    doc,
    `SELECT c.id FROM _grist_Tables_column c JOIN _grist_Tables t ON t.id = c.parentId
     WHERE t.tableId = ? AND c.colId = ?`,
    tableId,
    colId,
  )[0].id;
}

function columns(doc: GristDoc, tableId: string): Row[] {
  return rows(
    doc,
    `SELECT c.colId, c.type, c.isFormula, c.formula, c.label, c.widgetOptions, c.summarySourceCol
     FROM _grist_Tables_column c JOIN _grist_Tables t ON t.id = c.parentId
     WHERE t.tableId = ? ORDER BY c.parentPos`,
    tableId,
  );
}

function fieldColIds(doc: GristDoc, sectionRef: number): string[] {
  return rows(
    doc,
    `SELECT c.colId FROM _grist_Views_section_field f JOIN _grist_Tables_column c ON c.id = f.colRef
     WHERE f.parentId = ? ORDER BY f.parentPos`,
    sectionRef,
  ).map((r) => r.colId);
}

/** A table's records as the API gives them, without `group` (checked by itself where it matters). */
function records(doc: GristDoc, tableId: string): Row[] {
  return doc.fetchRecords(tableId).records.map((r) => {
    const {group: _group, ...fields} = r.fields;
    return {id: r.id, ...fields};
  });
}

/** A document with Items(Category, Region, Qty Int, Price Numeric, Note Text) and five rows. */
function itemsDoc(): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.applyUserActions([
    [
      'AddTable',
      'Items',
      [
        {id: 'Category', type: 'Text', isFormula: false},
        {id: 'Region', type: 'Choice', isFormula: false, widgetOptions: '{"choices":["N","S"],"rulesOptions":[]}'},
        {id: 'Qty', type: 'Int', isFormula: false},
        {id: 'Price', type: 'Numeric', isFormula: false, label: 'Unit price'},
        {id: 'Note', type: 'Text', isFormula: false},
      ],
    ],
    [
      'BulkAddRecord',
      'Items',
      [null, null, null, null, null],
      {
        Category: ['a', 'b', 'a', 'c', 'b'],
        Region: ['N', 'N', 'S', 'N', 'N'],
        Qty: [1, 2, 3, 4, 5],
        Price: [1.5, 2, 2.5, 3, 3.5],
        Note: ['x', 'y', 'z', 'w', 'v'],
      },
    ],
  ]);
  return doc;
}

test('CreateViewSection: Grist naming, columns, formulas, metadata, sections and rows', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const [cat, region] = [colRef(doc, 'Items', 'Category'), colRef(doc, 'Items', 'Region')];
  const views = rows(doc, 'SELECT id FROM _grist_Views').length;
  const res = doc.applyUserActions([['CreateViewSection', items, 0, 'record', [region, cat], null]])
    .retValues[0] as Row;
  assert.is(res.tableRef, items);
  // viewRef 0: a new page, "New page" of type empty, with its tab and page entry.
  assert.equal(rows(doc, 'SELECT name, type FROM _grist_Views WHERE id = ?', res.viewRef), [
    {name: 'New page', type: 'empty'},
  ]);
  assert.is(rows(doc, 'SELECT id FROM _grist_Views').length, views + 1);
  assert.is(rows(doc, 'SELECT id FROM _grist_TabBar WHERE viewRef = ?', res.viewRef).length, 1);
  assert.is(rows(doc, 'SELECT id FROM _grist_Pages WHERE viewRef = ?', res.viewRef).length, 1);

  // Named by the sorted colIds; group-by columns in the order asked, then group, count, the sums.
  const table = rows(doc, "SELECT * FROM _grist_Tables WHERE tableId = 'Items_summary_Category_Region'")[0];
  assert.ok(table, 'summary table named as Grist names it');
  assert.is(table.summarySourceTable, items);
  assert.is(table.primaryViewId, 0);
  assert.is(table.recordCardViewSectionRef, 0);
  assert.equal(columns(doc, 'Items_summary_Category_Region'), [
    {
      colId: 'Region',
      type: 'Choice',
      isFormula: 0,
      formula: '',
      label: 'Region',
      // Python's json.dumps of the source's options, conditional rules left out (_copy_widget_options).
      widgetOptions: '{"choices": ["N", "S"]}',
      summarySourceCol: region,
    },
    {
      colId: 'Category',
      type: 'Text',
      isFormula: 0,
      formula: '',
      label: 'Category',
      widgetOptions: '',
      summarySourceCol: cat,
    },
    {
      colId: 'group',
      type: 'RefList:Items',
      isFormula: 1,
      formula: 'table.getSummarySourceGroup(rec)',
      label: 'group',
      widgetOptions: '',
      summarySourceCol: 0,
    },
    {
      colId: 'count',
      type: 'Int',
      isFormula: 1,
      formula: 'len($group)',
      label: 'count',
      widgetOptions: '',
      summarySourceCol: 0,
    },
    {
      colId: 'Qty',
      type: 'Int',
      isFormula: 1,
      formula: 'SUM($group.Qty)',
      label: 'Qty',
      widgetOptions: '',
      summarySourceCol: 0,
    },
    {
      colId: 'Price',
      type: 'Numeric',
      isFormula: 1,
      formula: 'SUM($group.Price)',
      label: 'Unit price',
      widgetOptions: '',
      summarySourceCol: 0,
    },
  ]);
  assert.not.ok(
    rows(doc, "SELECT name FROM pragma_table_info('Items_summary_Category_Region')").some(
      (r) => r.name === 'manualSort',
    ),
    'a summary table has no manualSort',
  );
  // The raw section (untitled) and the new section: fields for every column but group.
  const raw = rows(doc, 'SELECT * FROM _grist_Views_section WHERE id = ?', table.rawViewSectionRef)[0];
  assert.equal([raw.parentId, raw.parentKey, raw.title, raw.tableRef], [0, 'record', '', table.id]);
  assert.equal(fieldColIds(doc, table.rawViewSectionRef), ['Region', 'Category', 'count', 'Qty', 'Price']);
  const section = rows(doc, 'SELECT * FROM _grist_Views_section WHERE id = ?', res.sectionRef)[0];
  assert.equal(
    [section.tableRef, section.parentId, section.parentKey, section.borderWidth, section.defaultWidth],
    [table.id, res.viewRef, 'record', 1, 100],
  );
  assert.equal(fieldColIds(doc, res.sectionRef), ['Region', 'Category', 'count', 'Qty', 'Price']);

  // One row per group, in the order of each group's first source row, computed at once.
  assert.equal(records(doc, 'Items_summary_Category_Region'), [
    {id: 1, Region: 'N', Category: 'a', count: 1, Qty: 1, Price: 1.5},
    {id: 2, Region: 'N', Category: 'b', count: 2, Qty: 7, Price: 5.5},
    {id: 3, Region: 'S', Category: 'a', count: 1, Qty: 3, Price: 2.5},
    {id: 4, Region: 'N', Category: 'c', count: 1, Qty: 4, Price: 3},
  ]);
  assert.equal(
    rows(doc, 'SELECT "group" FROM Items_summary_Category_Region ORDER BY id').map((r) => r.group),
    ['[1]', '[2,5]', '[3]', '[4]'],
  );
  doc.close();
});

test('CreateViewSection: summary of no columns, into an existing page; the same grouping is reused', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const page = rows(doc, 'SELECT primaryViewId FROM _grist_Tables WHERE id = ?', items)[0].primaryViewId;
  const [a] = doc.applyUserActions([['CreateViewSection', items, page, 'record', [], null]]).retValues as Row[];
  assert.is(a.viewRef, page);
  assert.equal(
    columns(doc, 'Items_summary').map((c) => c.colId),
    ['group', 'count', 'Qty', 'Price'],
  );
  assert.equal(records(doc, 'Items_summary'), [{id: 1, count: 5, Qty: 15, Price: 12.5}]);

  const [cat, region] = [colRef(doc, 'Items', 'Category'), colRef(doc, 'Items', 'Region')];
  const [b, c] = doc.applyUserActions([
    ['CreateViewSection', items, page, 'record', [cat, region], null],
    ['CreateViewSection', items, page, 'chart', [region, cat], null],
  ]).retValues as Row[];
  const summaries = rows(doc, 'SELECT tableId FROM _grist_Tables WHERE summarySourceTable = ?', items);
  assert.equal(
    summaries.map((r) => r.tableId),
    ['Items_summary', 'Items_summary_Category_Region'],
    'a grouping in another order reuses the summary table',
  );
  const sumRef = tableRef(doc, 'Items_summary_Category_Region');
  assert.equal(
    rows(
      doc,
      'SELECT tableRef, parentKey FROM _grist_Views_section WHERE id IN (?, ?) ORDER BY id',
      b.sectionRef,
      c.sectionRef,
    ),
    [
      {tableRef: sumRef, parentKey: 'record'},
      {tableRef: sumRef, parentKey: 'chart'},
    ],
  );
  // Fields follow the order asked for in each section.
  assert.equal(fieldColIds(doc, b.sectionRef).slice(0, 2), ['Category', 'Region']);
  assert.equal(fieldColIds(doc, c.sectionRef).slice(0, 2), ['Region', 'Category']);
  doc.close();
});

test('CreateViewSection: a formula column of another summary is copied (sister columns); a plain section', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const [cat, region] = [colRef(doc, 'Items', 'Category'), colRef(doc, 'Items', 'Region')];
  doc.applyUserActions([
    ['CreateViewSection', items, 0, 'record', [cat], null],
    ['ModifyColumn', 'Items_summary_Category', 'Qty', {formula: 'MAX($group.Qty)'}],
  ]);
  doc.applyUserActions([['CreateViewSection', items, 0, 'record', [region], null]]);
  const qty = columns(doc, 'Items_summary_Region').find((c) => c.colId === 'Qty');
  assert.is(qty?.formula, 'MAX($group.Qty)');
  assert.equal(
    records(doc, 'Items_summary_Region').map((r) => [r.Region, r.Qty]),
    [
      ['N', 5],
      ['S', 3],
    ],
  );
  // groupbyColRefs null: a plain section of the table, with a field per visible column.
  const [plain] = doc.applyUserActions([['CreateViewSection', items, 0, 'record', null, null]]).retValues as Row[];
  assert.equal(fieldColIds(doc, plain.sectionRef), ['Category', 'Region', 'Qty', 'Price', 'Note']);
  // A chart takes the first two columns; a form the first nine that are not formulas.
  doc.applyUserActions([['AddColumn', 'Items', 'Twice', {type: 'Int', isFormula: true, formula: '$Qty * 2'}]]);
  const [chart, form] = doc.applyUserActions([
    ['CreateViewSection', items, 0, 'chart', null, null],
    ['CreateViewSection', items, 0, 'form', null, null],
  ]).retValues as Row[];
  assert.equal(fieldColIds(doc, chart.sectionRef), ['Category', 'Region']);
  assert.equal(fieldColIds(doc, form.sectionRef), ['Category', 'Region', 'Qty', 'Price', 'Note']);
  // tableRef 0: a new empty table (no page of its own) shown by the section.
  const [fresh] = doc.applyUserActions([['CreateViewSection', 0, 0, 'record', null, 'Fresh']]).retValues as Row[];
  assert.is(rows(doc, 'SELECT tableId FROM _grist_Tables WHERE id = ?', fresh.tableRef)[0].tableId, 'Fresh');
  assert.equal(fieldColIds(doc, fresh.sectionRef), ['A', 'B', 'C']);
  doc.close();
});

test('summary rows follow writes to the source: new groups added, emptied groups removed', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const cat = colRef(doc, 'Items', 'Category');
  doc.applyUserActions([['CreateViewSection', items, 0, 'record', [cat], null]]);
  doc.applyUserActions([['AddRecord', 'Items', null, {Category: 'd', Qty: 10}]]);
  doc.applyUserActions([['UpdateRecord', 'Items', 4, {Category: 'a'}]]);
  doc.applyUserActions([['BulkRemoveRecord', 'Items', [2, 5]]]);
  assert.equal(
    records(doc, 'Items_summary_Category').map((r) => [r.Category, r.count, r.Qty]),
    [
      ['a', 3, 8],
      ['d', 1, 10],
    ],
  );
  doc.close();
});

test('UpdateSummaryViewSection: regroups into a new or reused summary; the old one goes with its last section', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const [cat, region, qty] = ['Category', 'Region', 'Qty'].map((c) => colRef(doc, 'Items', c));
  const [s1] = doc.applyUserActions([['CreateViewSection', items, 0, 'record', [cat], null]]).retValues as Row[];
  doc.applyUserActions([
    [
      'UpdateRecord',
      '_grist_Views_section',
      s1.sectionRef,
      {sortColRefs: JSON.stringify([-colRef(doc, 'Items_summary_Category', 'Qty')])},
    ],
  ]);
  doc.applyUserActions([['UpdateSummaryViewSection', s1.sectionRef, [cat, region]]]);
  const ids = () =>
    rows(doc, 'SELECT tableId FROM _grist_Tables WHERE summarySourceTable = ?', items).map((r) => r.tableId);
  assert.equal(ids(), ['Items_summary_Category_Region'], 'the old summary went with its only section');
  const newRef = tableRef(doc, 'Items_summary_Category_Region');
  const sec = rows(doc, 'SELECT * FROM _grist_Views_section WHERE id = ?', s1.sectionRef)[0];
  assert.is(sec.tableRef, newRef);
  assert.is(sec.sortColRefs, JSON.stringify([-colRef(doc, 'Items_summary_Category_Region', 'Qty')]));
  // The kept group-by field first, the new one after it, then the formula fields, moved.
  assert.equal(fieldColIds(doc, s1.sectionRef), ['Category', 'Region', 'count', 'Qty', 'Price']);
  for (const f of rows(doc, 'SELECT colRef FROM _grist_Views_section_field WHERE parentId = ?', s1.sectionRef)) {
    assert.is(rows(doc, 'SELECT parentId FROM _grist_Tables_column WHERE id = ?', f.colRef)[0].parentId, newRef);
  }
  assert.is(records(doc, 'Items_summary_Category_Region').length, 4);

  // Grouping by a numeric column drops its sum; ungrouping it brings the sum back, in the place
  // of the group-by column (update_summary_section walks the old columns in order).
  doc.applyUserActions([['UpdateSummaryViewSection', s1.sectionRef, [qty]]]);
  assert.equal(
    columns(doc, 'Items_summary_Qty').map((c) => c.colId),
    ['Qty', 'group', 'count', 'Price'],
  );
  doc.applyUserActions([['UpdateSummaryViewSection', s1.sectionRef, []]]);
  assert.equal(ids(), ['Items_summary']);
  assert.equal(
    columns(doc, 'Items_summary').map((c) => [c.colId, c.formula]),
    [
      ['Qty', 'SUM($group.Qty)'],
      ['group', 'table.getSummarySourceGroup(rec)'],
      ['count', 'len($group)'],
      ['Price', 'SUM($group.Price)'],
    ],
  );
  assert.equal(records(doc, 'Items_summary'), [{id: 1, Qty: 15, count: 5, Price: 12.5}]);

  // Two sections of one summary: regrouping one keeps the table for the other.
  const [s2] = doc.applyUserActions([['CreateViewSection', items, 0, 'record', [], null]]).retValues as Row[];
  doc.applyUserActions([['UpdateSummaryViewSection', s2.sectionRef, [region]]]);
  assert.equal(ids(), ['Items_summary', 'Items_summary_Region']);
  doc.close();
});

test('the last section of a summary removed (any way): the summary goes; with its source too', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const [cat, region] = [colRef(doc, 'Items', 'Category'), colRef(doc, 'Items', 'Region')];
  const [a, b, c] = doc.applyUserActions([
    ['CreateViewSection', items, 0, 'record', [cat], null],
    ['CreateViewSection', items, 0, 'record', [cat], null],
    ['CreateViewSection', items, 0, 'record', [region], null],
  ]).retValues as Row[];
  const ids = () => rows(doc, 'SELECT tableId FROM _grist_Tables ORDER BY id').map((r) => r.tableId);
  doc.applyUserActions([['RemoveViewSection', a.sectionRef]]);
  assert.ok(ids().includes('Items_summary_Category'), 'another section still shows it');
  doc.applyUserActions([['RemoveRecord', '_grist_Views_section', b.sectionRef]]);
  assert.not.ok(ids().includes('Items_summary_Category'));
  assert.is(rows(doc, "SELECT name FROM sqlite_master WHERE name = 'Items_summary_Category'").length, 0);
  // A raw section cannot be removed (Grist's message).
  const raw = rows(doc, "SELECT rawViewSectionRef FROM _grist_Tables WHERE tableId = 'Items_summary_Region'")[0];
  assert.throws(
    () => doc.applyUserActions([['RemoveViewSection', raw.rawViewSectionRef]]),
    /Cannot remove raw view section/,
  );
  // Removing the page removes its section, and so the summary.
  doc.applyUserActions([['RemoveView', c.viewRef]]);
  assert.not.ok(ids().includes('Items_summary_Region'));
  doc.applyUserActions([['CreateViewSection', items, 0, 'record', [region], null]]);
  doc.applyUserActions([['RemoveTable', 'Items']]);
  assert.equal(
    ids().filter((t) => t.startsWith('Items')),
    [],
  );
  doc.close();
});

test('bad arguments: 400 with Grist-like messages, nothing applied', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const cat = colRef(doc, 'Items', 'Category');
  const other = colRef(doc, 'Table1', 'A');
  const tables = rows(doc, 'SELECT count(*) AS n FROM _grist_Tables')[0].n;
  const fails = (action: unknown[], re: RegExp) => {
    try {
      doc.applyUserActions([['AddRecord', 'Items', null, {Category: 'zz'}], action]);
    } catch (e) {
      assert.is((e as {status?: number}).status, 400, String(e));
      assert.match((e as Error).message, re);
      return;
    }
    assert.unreachable(`${JSON.stringify(action)} was accepted`);
  };
  fails(['CreateViewSection', items, 0, 'record', [9999], null], /ValueError Invalid column requested$/);
  fails(['CreateViewSection', items, 0, 'record', [other], null], /Invalid column requested \(wrong table\)/);
  fails(['CreateViewSection', items, 0, 'record', 'Category', null], /TypeError/);
  fails(['CreateViewSection', items, 0, 'record', [cat, cat], null], /twice/);
  fails(['CreateViewSection', items, 999, 'record', [cat], null], /View 999 not found/);
  fails(['CreateViewSection', 'Items', 0, 'record', [cat], null], /table_ref must be a row id/);
  const plainSection = rows(doc, 'SELECT id FROM _grist_Views_section WHERE tableRef = ? AND parentId > 0', items)[0]
    .id;
  fails(['UpdateSummaryViewSection', plainSection, [cat]], /not a summary section/);
  fails(['UpdateSummaryViewSection', 999, [cat]], /View section 999 not found/);
  fails(['RemoveViewSection', 999], /View section 999 not found/);
  assert.is(rows(doc, 'SELECT count(*) AS n FROM _grist_Tables')[0].n, tables);
  assert.is(rows(doc, "SELECT count(*) AS n FROM Items WHERE Category = 'zz'")[0].n, 0);
  doc.close();
});

/** The groups a summary should have, computed from the source's cells (list cells by item). */
function expectedGroups(doc: GristDoc, source: string, cols: string[], lists: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows(doc, `SELECT ${[...cols.map((c) => `"${c}"`), 'id'].join(', ')} FROM "${source}" ORDER BY id`)) {
    let combos: unknown[][] = [[]];
    for (const c of cols) {
      let items: unknown[] = [r[c]];
      if (lists.includes(c)) {
        const parsed = r[c] ? (JSON.parse(r[c]) as unknown[]) : [];
        items = parsed.length ? parsed : [''];
      }
      combos = combos.flatMap((x) => items.map((i) => [...x, i]));
    }
    for (const k of combos.map((x) => JSON.stringify(x))) out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

function actualGroups(doc: GristDoc, summary: string, cols: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows(doc, `SELECT ${[...cols.map((c) => `"${c}"`), 'count'].join(', ')} FROM "${summary}"`)) {
    const key = JSON.stringify(cols.map((c) => r[c]));
    assert.not.ok(out.has(key), `one summary row per group (${key})`);
    out.set(key, r.count);
  }
  return out;
}

test('random writes: summary rows always equal the groups of the source (ChoiceList, formula group-by)', () => {
  const doc = GristDoc.create(tempPath());
  doc.applyUserActions([
    [
      'AddTable',
      'Src',
      [
        {id: 'K', type: 'Text', isFormula: false},
        {id: 'Tags', type: 'ChoiceList', isFormula: false},
        {id: 'N', type: 'Int', isFormula: false},
        {id: 'Odd', type: 'Bool', isFormula: true, formula: '$N % 2 == 1'},
      ],
    ],
  ]);
  const src = tableRef(doc, 'Src');
  const [k, tags, odd] = ['K', 'Tags', 'Odd'].map((c) => colRef(doc, 'Src', c));
  doc.applyUserActions([
    ['CreateViewSection', src, 0, 'record', [k, tags], null],
    ['CreateViewSection', src, 0, 'record', [odd], null],
    ['CreateViewSection', src, 0, 'record', [], null],
  ]);
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const tagList = () => ['L', ...['x', 'y', 'z'].filter(() => rand(3) === 0)];
  for (let step = 0; step < 120; step++) {
    const ids = rows(doc, 'SELECT id FROM Src').map((r) => r.id as number);
    const op = ids.length < 3 ? 0 : rand(4);
    if (op === 0) {
      doc.applyUserActions([['AddRecord', 'Src', null, {K: `k${rand(4)}`, Tags: tagList(), N: rand(10)}]]);
    } else if (op === 1) {
      doc.applyUserActions([['UpdateRecord', 'Src', ids[rand(ids.length)], {K: `k${rand(4)}`}]]);
    } else if (op === 2) {
      doc.applyUserActions([['UpdateRecord', 'Src', ids[rand(ids.length)], {Tags: tagList(), N: rand(10)}]]);
    } else {
      doc.applyUserActions([['RemoveRecord', 'Src', ids[rand(ids.length)]]]);
    }
    if (step % 10 === 9 || step === 119) {
      assert.equal(
        actualGroups(doc, 'Src_summary_K_Tags', ['K', 'Tags']),
        expectedGroups(doc, 'Src', ['K', 'Tags'], ['Tags']),
      );
      assert.equal(actualGroups(doc, 'Src_summary_Odd', ['Odd']), expectedGroups(doc, 'Src', ['Odd'], []));
      assert.equal(actualGroups(doc, 'Src_summary', []), expectedGroups(doc, 'Src', [], []));
    }
  }
  // A write that fails after making a new group leaves nothing: the next one makes it again.
  assert.throws(() =>
    doc.applyUserActions([
      ['AddRecord', 'Src', null, {K: 'brand-new', Tags: ['L', 'x'], N: 1}],
      ['UpdateRecord', 'Src', 99999, {K: 'x'}],
    ]),
  );
  doc.applyUserActions([['AddRecord', 'Src', null, {K: 'brand-new', Tags: ['L', 'x'], N: 1}]]);
  assert.equal(
    actualGroups(doc, 'Src_summary_K_Tags', ['K', 'Tags']),
    expectedGroups(doc, 'Src', ['K', 'Tags'], ['Tags']),
  );
  doc.close();
});

test('a one-cell write to the source reads only the rows it changed, never the whole source', () => {
  const doc = itemsDoc();
  const items = tableRef(doc, 'Items');
  const [cat, region] = [colRef(doc, 'Items', 'Category'), colRef(doc, 'Items', 'Region')];
  doc.applyUserActions([['CreateViewSection', items, 0, 'record', [cat, region], null]]);
  doc.applyUserActions([['UpdateRecord', 'Items', 1, {Qty: 9}]]);
  const prepared: string[] = [];
  const prepare = doc.db.prepare.bind(doc.db);
  doc.db.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof doc.db.prepare;
  try {
    doc.applyUserActions([['UpdateRecord', 'Items', 1, {Category: 'new'}]]);
    doc.applyUserActions([['AddRecord', 'Items', null, {Category: 'b', Region: 'S'}]]);
    doc.applyUserActions([['UpdateRecord', 'Items', 3, {Qty: 30}]]);
  } finally {
    doc.db.prepare = prepare;
  }
  const scans = prepared.filter((sql) => /FROM\s+"Items"/.test(sql) && !/WHERE/.test(sql) && /"Category"/.test(sql));
  assert.equal(scans, [], 'no statement reads every source row');
  assert.equal(
    actualGroups(doc, 'Items_summary_Category_Region', ['Category', 'Region']),
    expectedGroups(doc, 'Items', ['Category', 'Region'], []),
  );
  doc.close();
});

ftest('a created summary matches, cell for cell, the one Grist stored (Covid-19, by Date and Region)', () => {
  const path = corpusCopy('Covid-19.grist');
  let doc = GristDoc.open(path);
  const grist = 'Cases_summary_Date_Region';
  const metaOf = (d: GristDoc) =>
    columns(d, grist)
      .map(({colId, type, isFormula, formula, label, widgetOptions, summarySourceCol}) =>
        JSON.stringify({colId, type, isFormula, formula, label, widgetOptions, summarySourceCol}),
      )
      .sort();
  const cellsOf = (d: GristDoc) =>
    rows(d, `SELECT Date, Region, count, Total_Cases, Total_Deaths, "group" FROM ${grist}`)
      .map((r) => JSON.stringify([r.Date, r.Region, r.count, r.Total_Cases, r.Total_Deaths, JSON.parse(r.group)]))
      .sort();
  const storedMeta = metaOf(doc);
  const storedCells = cellsOf(doc);
  assert.ok(storedCells.length > 50);
  const cases = tableRef(doc, 'Cases');
  const [date, region] = [colRef(doc, 'Cases', 'Date'), colRef(doc, 'Cases', 'Region')];
  const sections = rows(
    doc,
    'SELECT s.id FROM _grist_Views_section s WHERE s.tableRef = ? AND s.parentId > 0',
    tableRef(doc, grist),
  );
  doc.applyUserActions(sections.map((s) => ['RemoveViewSection', s.id]));
  assert.is(tableRef(doc, grist), 0, 'the summary went with its sections');

  const [res] = doc.applyUserActions([['CreateViewSection', cases, 0, 'record', [date, region], null]])
    .retValues as Row[];
  assert.ok(tableRef(doc, grist), 'made under the same name');
  assert.equal(metaOf(doc), storedMeta);
  assert.equal(cellsOf(doc), storedCells);
  assert.equal(fieldColIds(doc, res.sectionRef), ['Date', 'Region', 'count', 'Total_Cases', 'Total_Deaths']);
  doc.close();

  // The file passes the .grist upload checks, and reopened, its summary formulas compute.
  openGristUpload(path).close();
  doc = GristDoc.open(path);
  doc.recomputeFormulas();
  assert.equal(cellsOf(doc), storedCells);
  const first = rows(doc, `SELECT id, count FROM ${grist} ORDER BY id LIMIT 1`)[0];
  const member = JSON.parse(rows(doc, `SELECT "group" FROM ${grist} WHERE id = ?`, first.id)[0].group)[0];
  doc.applyUserActions([['RemoveRecord', 'Cases', member]]);
  const after = rows(doc, `SELECT count FROM ${grist} WHERE id = ?`, first.id)[0];
  assert.is(after ? after.count : 0, first.count - 1);
  doc.close();
});

ftest('group-by columns keep their display formula and visible column (DeleteColumnsUndo, by A and B)', () => {
  const doc = GristDoc.open(corpusCopy('DeleteColumnsUndo.grist'));
  const grist = 'Table1_summary_A_B';
  const metaOf = () =>
    rows(
      doc,
      `SELECT c.colId, c.type, c.formula, c.widgetOptions, c.summarySourceCol, c.visibleCol, d.formula AS display
       FROM _grist_Tables_column c JOIN _grist_Tables t ON t.id = c.parentId
       LEFT JOIN _grist_Tables_column d ON d.id = c.displayCol WHERE t.tableId = ? ORDER BY c.parentPos`,
      grist,
    );
  const stored = metaOf();
  const cells = () => rows(doc, `SELECT A, B, count, D FROM ${grist}`);
  const storedCells = cells();
  const sections = rows(
    doc,
    'SELECT id FROM _grist_Views_section WHERE tableRef = ? AND parentId > 0',
    tableRef(doc, grist),
  );
  doc.applyUserActions(sections.map((s) => ['RemoveViewSection', s.id]));
  assert.is(tableRef(doc, grist), 0);
  const [a, b] = [colRef(doc, 'Table1', 'A'), colRef(doc, 'Table1', 'B')];
  doc.applyUserActions([['CreateViewSection', tableRef(doc, 'Table1'), 0, 'record', [a, b], null]]);
  assert.equal(metaOf(), stored);
  assert.equal(cells(), storedCells);
  doc.close();
});

test.run();
