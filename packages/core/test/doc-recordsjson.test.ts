// GET /records JSON written by SQLite (recordsjson.ts) is byte-identical to JSON.stringify of
// fetchRecords: on every table of every fixture, on adversarial values of every column type, with
// filters, sorts, limits, hidden columns and typed cells; it is used only where provably the same,
// and follows writes that change that.
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ColumnClasses, StoredValues} from '../src/doc/colstats.js';
import {type CellValue, GristDoc, marshalDumps, type RecordQuery} from '../src/doc/index.js';
import {quoteIdent} from '../src/doc/identifiers.js';
import {loadMeta} from '../src/doc/meta.js';
import {recordJsonSql} from '../src/doc/recordsjson.js';
import {copyFixture, FIXTURE_NAMES, tempPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

type Path = 'sql' | 'js';

/** fetchRecordsJson (not cached) against JSON.stringify(fetchRecords): equal; returns the path taken. */
function compare(doc: GristDoc, tableId: string, q: RecordQuery, what = ''): Path {
  const before = {...doc.recordsJsonPaths};
  const json = doc.fetchRecordsJson(tableId, q);
  const expected = JSON.stringify(doc.fetchRecords(tableId, q));
  if (json !== expected) {
    let i = 0;
    while (json[i] === expected[i]) {
      i++;
    }
    const around = (text: string) => text.slice(Math.max(0, i - 60), i + 60);
    assert.unreachable(
      `${tableId} ${JSON.stringify(q)} ${what}: differs at ${i}:\n  sql: ${around(json)}\n  js:  ${around(expected)}`,
    );
  }
  const sql = doc.recordsJsonPaths.sql - before.sql;
  const js = doc.recordsJsonPaths.js - before.js;
  assert.is(sql + js, 1, 'computed once, not cached');
  return sql ? 'sql' : 'js';
}

/**
 * For each column on its own: the SQL of its record JSON, wherever the rule allows it, against the
 * JS path's record cut down to that column. Covers the columns of tables that, whole, take the JS
 * path because of another column. Returns the ids of the columns checked.
 */
function compareColumns(doc: GristDoc, tableId: string, typed: boolean): string[] {
  const table = loadMeta(doc.db).tables.get(tableId)!;
  const stats = new ColumnClasses(doc.db);
  const records = doc.fetchRecords(tableId, {hidden: true, cellFormat: typed ? 'typed' : 'normal'}).records;
  const checked: string[] = [];
  for (const col of table.columns) {
    const sql = recordJsonSql(table, [col], typed, stats, true);
    if (sql === null) {
      continue;
    }
    const rows = doc.db
      .prepare(`SELECT ${sql} FROM ${quoteIdent(tableId)} ORDER BY id`)
      .pluck()
      .all() as string[];
    const expected = records.map((r) => JSON.stringify({id: r.id, fields: {[col.colId]: r.fields[col.colId]}}));
    rows.forEach((row, i) =>
      assert.is(row, expected[i], `${tableId}.${col.colId} typed=${typed} row ${records[i].id}`),
    );
    checked.push(col.colId);
  }
  return checked;
}

/** The read variants compared on every table. */
function variants(doc: GristDoc, tableId: string): RecordQuery[] {
  const cols = doc.fetchRecords(tableId, {hidden: true}).records[0]?.fields ?? {};
  const visible = Object.keys(doc.fetchRecords(tableId).records[0]?.fields ?? {});
  const out: RecordQuery[] = [{}, {hidden: true}, {cellFormat: 'typed'}, {hidden: true, cellFormat: 'typed'}];
  if (visible.length) {
    const first = visible[0];
    out.push(
      {sort: `-${first}`, limit: 2},
      {sort: visible, limit: -1},
      {sort: `${first}:naturalSort`, limit: 3, hidden: true},
      {filter: {[first]: [cols[first] ?? null]}, cellFormat: 'typed'},
      {sort: visible.map((c) => `-${c}`)},
    );
  }
  return out;
}

for (const name of FIXTURE_NAMES) {
  ftest(`${name}: SQLite's records JSON is byte-identical on every table, whole and column by column`, () => {
    const doc = GristDoc.open(copyFixture(name));
    try {
      const paths: Path[] = [];
      let columns = 0;
      for (const tableId of loadMeta(doc.db).tables.keys()) {
        for (const q of variants(doc, tableId)) {
          paths.push(compare(doc, tableId, q));
        }
        columns += compareColumns(doc, tableId, false).length + compareColumns(doc, tableId, true).length;
      }
      assert.ok(paths.includes('sql'), 'some reads take the SQL path');
      assert.ok(columns > 10, `columns checked on their own: ${columns}`);
    } finally {
      doc.close();
    }
  });
}

/** One column per type: colId to type. */
const COLUMNS: Record<string, string> = {
  Text: 'Text',
  Int: 'Int',
  Numeric: 'Numeric',
  Bool: 'Bool',
  Date: 'Date',
  DateTime: 'DateTime:America/New_York',
  RefT: 'Ref:T',
  RefListT: 'RefList:T',
  ChoiceList: 'ChoiceList',
  Choice: 'Choice',
  Any: 'Any',
  Attachments: 'Attachments',
  PositionNumber: 'PositionNumber',
};
const COL_IDS = Object.keys(COLUMNS);

/** Values bound to SQLite as they are (numbers as REAL, BigInt as INTEGER, Buffers via CAST as text). */
type Raw = number | bigint | string | null | {blob: Buffer} | {text: Buffer};

const STRINGS: Raw[] = [
  '',
  'plain',
  'quote" back\\slash',
  "apostrophe'",
  'nul\u0000inside',
  '\u0001\u001f\u007f',
  '\b\f\n\r\t',
  '\u2028\u2029',
  '😀 emoji',
  'lone \ud800 surrogate',
  'e\u0301 combining',
  '<script>',
  '[1,2]',
  '["a","b"]',
  '[]',
  '{"a":1}',
  '1e5',
  ' 12',
  'true',
  '[1, 2]',
  '["a\\u0041"]',
  // Invalid UTF-8 stored as TEXT: lone bytes, truncated and overlong sequences, surrogates, beyond U+10FFFF.
  ...['ff', 'c3', '61e282', 'eda080', 'f4908080', 'c080', '61ff62', 'f09f98', '80', 'e2'].map((hex) => ({
    text: Buffer.from(hex, 'hex'),
  })),
];
const EXACT_NUMBERS: Raw[] = [
  0n,
  1n,
  -1n,
  0.1,
  2.5,
  -2.5,
  0.30000000000000004,
  0.0001,
  0.000123,
  123456.789,
  1e15 - 0.5,
  4503599627370495.5,
  12345678.9,
  1.5e300,
  1.7976931348623157e308,
  2n ** 53n,
  -(2n ** 53n),
  2n ** 53n + 2n,
  7n,
];
const INEXACT_NUMBERS: Raw[] = [
  0,
  2.0,
  -0.0,
  1e-7,
  1e-5,
  1 / 3,
  2 / 3,
  1e16,
  1e20,
  1e21,
  5e-324,
  2 ** 53,
  2n ** 53n + 1n,
  2n ** 60n,
  -(2n ** 63n),
  Infinity,
  -Infinity,
];
const MARSHALLED: Raw[] = [
  ['L', 'a', 'b'],
  ['E', 'ValueError', 'bad'],
  ['d', 0],
  'alt',
  2.5,
  true,
  null,
  ['L'],
  ['O', {a: 1}],
].map((v) => ({blob: marshalDumps(v)}));
const OTHERS: Raw[] = [null, '[1,2]', '["x"]'];

function valueSql(v: Raw): {sql: string; param: unknown} {
  if (v !== null && typeof v === 'object') {
    return 'blob' in v ? {sql: '?', param: v.blob} : {sql: 'CAST(? AS TEXT)', param: v.text};
  }
  return {sql: '?', param: v};
}

function adversarialDoc(): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: COL_IDS.map((id) => ({id, fields: {type: COLUMNS[id], isFormula: false}}))}]);
  doc.addRecords('T', [
    // List columns hold only nulls, so that they can take the SQL path (list JSON cannot).
    {
      Text: 'a',
      Int: 1,
      Numeric: 1.5,
      Bool: true,
      Date: 86400,
      DateTime: 3600.5,
      RefT: 1,
      RefListT: null,
      ChoiceList: null,
      Choice: 'c',
      Any: 'z',
      Attachments: null,
      PositionNumber: 2.5,
    },
    {},
    {
      Text: 'c',
      Int: 3,
      Numeric: -0.5,
      Bool: false,
      Date: null,
      DateTime: null,
      RefT: 0,
      RefListT: null,
      ChoiceList: null,
      Choice: '',
      Any: 3,
      Attachments: null,
      PositionNumber: 7,
    },
  ]);
  return doc;
}

const QUERIES: RecordQuery[] = [
  {},
  {hidden: true},
  {cellFormat: 'typed'},
  {hidden: true, cellFormat: 'typed'},
  {sort: '-Text', limit: 2},
  {sort: ['Numeric', '-Any'], limit: -1},
  {filter: {Int: [1, 3]}, sort: 'id'},
  {sort: 'Text:naturalSort,-Bool', limit: 1, cellFormat: 'typed'},
];

test('adversarial values in every column type: identical, whole table and column by column', () => {
  const doc = adversarialDoc();
  const sqlColumns = new Set<string>();
  for (const v of [...STRINGS, ...EXACT_NUMBERS, ...INEXACT_NUMBERS, ...MARSHALLED, ...OTHERS]) {
    // The value in row 2 of every column (each column applies its affinity, as in a real document).
    const {sql, param} = valueSql(v);
    for (const id of COL_IDS) {
      doc.db.prepare(`UPDATE T SET ${quoteIdent(id)} = ${sql} WHERE id = 2`).run(param);
      for (const q of QUERIES) {
        compare(doc, 'T', q, `value ${String(param)} in ${COLUMNS[id]}`);
      }
      for (const typed of [false, true]) {
        for (const c of compareColumns(doc, 'T', typed)) {
          sqlColumns.add(c);
        }
      }
    }
    doc.db.prepare(`UPDATE T SET ${COL_IDS.map((id) => `${quoteIdent(id)} = NULL`).join(', ')} WHERE id = 2`).run();
  }
  assert.equal(
    COL_IDS.filter((id) => !sqlColumns.has(id)),
    [],
    'every column type takes the SQL path for some value',
  );
  doc.close();
});

/** Which path a one-column table takes with `v` stored in a column of `type`, after checking equality. */
function pathWith(type: string, v: Raw, q: RecordQuery = {}): Path {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: [{id: 'C', fields: {type, isFormula: false}}]}]);
  const {sql, param} = valueSql(v);
  doc.db.prepare(`INSERT INTO T (id, manualSort, C) VALUES (1, 1, ${sql})`).run(param);
  const path = compare(doc, 'T', q, `${String(param)} in ${type}`);
  doc.close();
  return path;
}

test('the SQL path is taken exactly where its text is provably the same', () => {
  for (const v of STRINGS) {
    assert.is(pathWith('Text', v), 'sql', `text ${JSON.stringify(v)}`);
    assert.is(pathWith('Any', v, {cellFormat: 'typed'}), 'sql', `text ${JSON.stringify(v)} in Any`);
  }
  for (const v of EXACT_NUMBERS) {
    assert.is(pathWith('Any', v), 'sql', `number ${String(v)}`);
    assert.is(pathWith('Date', v, {cellFormat: 'typed'}), 'sql', `date ${String(v)}`);
  }
  // SQLite writes these differently (2.0, -0.0, 1.0e-07, 0.33333333333333332, 9.0e+999, all the
  // digits of integers JS reads rounded): the JS path answers.
  for (const v of INEXACT_NUMBERS) {
    assert.is(pathWith('Any', v), 'js', `number ${String(v)}`);
  }
  for (const v of MARSHALLED) {
    assert.is(pathWith('Any', v), 'js', 'marshalled');
  }
  assert.is(pathWith('ChoiceList', '["a"]'), 'js', 'list JSON becomes ["L", ...]');
  assert.is(pathWith('RefList:T', '[1]'), 'js');
  assert.is(pathWith('ChoiceList', null, {cellFormat: 'typed'}), 'sql');
  assert.is(pathWith('Bool', 1), 'sql');
  assert.is(pathWith('Bool', 0.5), 'sql');
  for (const [type, v] of [
    ['Numeric', 2.0],
    ['Numeric', -0.0],
    ['Int', 5],
  ] as const) {
    assert.is(pathWith(type, v), 'sql', `${type} stores ${v} as an INTEGER`);
  }
});

/** A document whose table T has column B, plus `addSql` run on the file by another writer. */
function docEditedElsewhere(addSql: (db: Database.Database, tableRef: number) => void): GristDoc {
  const path = tempPath();
  const doc = GristDoc.create(path);
  doc.addTables([{id: 'T', columns: [{id: 'B', fields: {type: 'Text'}}]}]);
  doc.addRecords('T', [{B: 'b'}]);
  doc.close();
  const db = new Database(path);
  addSql(db, db.prepare(`SELECT id FROM _grist_Tables WHERE tableId = 'T'`).pluck().get() as number);
  db.close();
  return GristDoc.open(path);
}

test('column ids a JS object would reorder, drop or merge take the JS path', () => {
  const cases = [
    ['12', 'an array index, which JS puts first'],
    ['__proto__', 'not an own property'],
    ['B', 'twice'],
  ];
  for (const [odd, why] of cases) {
    const doc = docEditedElsewhere((db, tableRef) => {
      if (odd !== 'B') {
        db.exec(`ALTER TABLE T ADD COLUMN ${quoteIdent(odd)} TEXT DEFAULT 'x'`);
      }
      db.prepare(`INSERT INTO _grist_Tables_column (parentId, parentPos, colId, type) VALUES (?, 9, ?, 'Text')`).run(
        tableRef,
        odd,
      );
    });
    assert.is(compare(doc, 'T', {}), 'js', why);
    doc.close();
  }
});

test('a REAL-affinity column keeps integral numbers REAL, which SQLite writes as 2.0', () => {
  const doc = docEditedElsewhere((db, tableRef) => {
    db.exec(`ALTER TABLE T ADD COLUMN R REAL`);
    db.prepare(`INSERT INTO _grist_Tables_column (parentId, parentPos, colId, type) VALUES (?, 9, 'R', 'Numeric')`).run(
      tableRef,
    );
  });
  doc.addRecords('T', [{R: 2.5}]);
  assert.is(compare(doc, 'T', {}), 'sql');
  doc.addRecords('T', [{R: 2}]);
  assert.is(compare(doc, 'T', {}), 'js');
  doc.close();
});

test('row ids beyond 2^53, which JS reads rounded, take the JS path', () => {
  const doc = docEditedElsewhere((db) => {
    db.prepare(`INSERT INTO T (id, B) VALUES (?, 'far')`).run(2n ** 53n + 1n);
  });
  assert.is(compare(doc, 'T', {}), 'js');
  doc.db.prepare(`UPDATE T SET id = ? WHERE B = 'far'`).run(2n ** 53n);
  assert.is(compare(doc, 'T', {}), 'sql');
  doc.close();
});

test('writes through the engine, other code and other connections keep the choice exact', () => {
  const path = tempPath();
  const doc = GristDoc.create(path);
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'N', fields: {type: 'Numeric'}},
        {id: 'A', fields: {type: 'Any', isFormula: false}},
        {id: 'P', fields: {type: 'PositionNumber', isFormula: false}},
      ],
    },
  ]);
  doc.addRecords('T', [
    {N: 1.25, A: 'x', P: 1.5},
    {N: 3, A: 2, P: 2},
  ]);
  const read = (q: RecordQuery = {}) => compare(doc, 'T', q);
  assert.is(read(), 'sql');
  // Engine writes: numbers stored as REAL are checked when next needed.
  doc.addRecords('T', [{N: 0.1, P: 3}]);
  assert.is(read(), 'sql');
  // A row that makes the JS path answer; removed, and after a write the engine did not make (all
  // is rescanned), the SQL path again.
  const withRow = (fields: Record<string, CellValue>, why: string) => {
    const ids = doc.addRecords('T', [fields]);
    assert.is(read(), 'js', why);
    doc.removeRecords('T', ids);
    doc.db.prepare('UPDATE T SET A = A').run();
    assert.is(read(), 'sql', why);
  };
  withRow({N: 1e-7, P: 4}, 'a number SQLite writes as 1.0e-07');
  withRow({N: 2 ** 60, P: 5}, 'an INTEGER JS reads rounded');
  withRow({N: 1}, 'P took its SQL default, 1e999 (Infinity: null in JS)');
  doc.updateRecords('T', [{id: 1, fields: {N: 1 / 3}}]);
  assert.is(read(), 'js', 'an update');
  doc.updateRecords('T', [{id: 1, fields: {N: 5}}]);
  doc.db.prepare('UPDATE T SET N = N').run();
  assert.is(read(), 'sql');
  // Integral numbers in a BLOB-affinity column are bound as integers; a REAL written by others is not.
  doc.updateRecords('T', [{id: 2, fields: {A: 7}}]);
  assert.is(read({sort: 'A'}), 'sql');
  doc.db.prepare('UPDATE T SET A = 2.0 WHERE id = 2').run();
  assert.is(read({sort: '-A'}), 'js');
  doc.db.prepare('UPDATE T SET A = 2 WHERE id = 2').run();
  assert.is(read({sort: 'N'}), 'sql');
  // Another connection's commit.
  const other = new Database(path);
  other.prepare('UPDATE T SET N = 1e300 WHERE id = 3').run();
  other.close();
  assert.is(read({hidden: true}), 'js');
  // A rolled-back bundle forgets what it wrote.
  doc.db.prepare('UPDATE T SET N = 0.5 WHERE id = 3').run();
  assert.is(read(), 'sql');
  assert.throws(() =>
    doc.applyUserActions([
      ['UpdateRecord', 'T', 3, {N: 1e-9}],
      ['UpdateRecord', 'T', 99, {N: 1}],
    ]),
  );
  assert.is(read(), 'sql');
  doc.close();
});

test('a filtered or limited read scans nothing: it takes the SQL path with what is known', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'S', fields: {type: 'Text'}},
        {id: 'N', fields: {type: 'Numeric'}},
        {id: 'F', fields: {type: 'Numeric', isFormula: false}},
      ],
    },
    {id: 'Tick', columns: [{id: 'N', fields: {type: 'Int'}}]},
  ]);
  doc.addRecords('T', [
    {S: 'a', N: 1.5, F: 2.5},
    {S: 'b', N: 2, F: 0.25},
  ]);
  doc.addRecords('Tick', [{N: 0}]);
  const partial = [{limit: 1}, {filter: {S: ['a']}}, {filter: {N: [2]}, sort: '-S', limit: 5}] as RecordQuery[];
  // Each read after a write to another table (tracked: it keeps what is known), so that none is cached.
  let ticks = 0;
  const read = (q: RecordQuery) => {
    doc.updateRecords('Tick', [{id: 1, fields: {N: ++ticks}}]);
    return compare(doc, 'T', q);
  };
  for (const q of partial) {
    assert.is(read(q), 'js', 'nothing known yet');
  }
  assert.is(read({}), 'sql', 'a whole-table read scans');
  for (const q of partial) {
    assert.is(read(q), 'sql');
  }
  // An insert that leaves columns to their default keeps them known.
  doc.addRecords('T', [{S: 'c'}]);
  for (const q of partial) {
    assert.is(read(q), 'sql', 'after an insert');
  }
  doc.db.prepare(`UPDATE T SET S = 'd' WHERE id = 3`).run();
  for (const q of partial) {
    assert.is(read(q), 'js', 'after a write the engine did not make');
  }
  doc.close();
});

test('StoredValues: the numbers a write leaves to check are those that may land as REAL or read rounded', () => {
  const reals = (declType: string, ...values: unknown[]) => {
    const s = new StoredValues(declType);
    values.forEach((v) => s.add(v));
    return s.reals;
  };
  assert.equal(reals('NUMERIC', 2, -0, 2 ** 53, 5n, 'x', null), [], 'integral doubles become INTEGERs');
  assert.equal(reals('INTEGER', 2.5, 2 ** 53 + 2), [2.5, 2 ** 53 + 2]);
  assert.equal(reals('REAL', 2), [2], 'REAL affinity keeps them REAL');
  assert.equal(reals('BLOB', 2, 7n), [2]);
  assert.equal(reals('BLOB', 2n ** 60n), [2 ** 60], 'a wide integer is checked as a REAL, which fails');
});

test('the benchmark table (Text, Int, Numeric, Bool, Date) takes the SQL path', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'Items',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Qty', fields: {type: 'Int'}},
        {id: 'Price', fields: {type: 'Numeric'}},
        {id: 'Active', fields: {type: 'Bool'}},
        {id: 'Day', fields: {type: 'Date'}},
      ],
    },
  ]);
  const rows: Array<Record<string, CellValue>> = Array.from({length: 500}, (_, n) => ({
    Name: `name-${(n * 7919) % 1000003}`,
    Qty: n % 1000,
    Price: Math.round(((n * 31) % 100000) * 1.25) / 100,
    Active: n % 3 === 0,
    Day: 1_600_000_000 - (1_600_000_000 % 86400) + (n % 3650) * 86400,
  }));
  for (let i = 0; i < rows.length; i += 100) {
    doc.addRecords('Items', rows.slice(i, i + 100));
  }
  for (const q of [
    {},
    {filter: {Active: [true]}, sort: 'Qty,-Price', limit: 100},
    {sort: 'Name', limit: 50},
    {hidden: true},
    {cellFormat: 'typed'},
  ] as RecordQuery[]) {
    assert.is(compare(doc, 'Items', q), 'sql', JSON.stringify(q));
  }
  assert.is(doc.recordsJsonPaths.js, 0);
  doc.close();
});

test.run();
