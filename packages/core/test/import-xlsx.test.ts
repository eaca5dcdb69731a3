// XLSX and JSON files as new tables (issue 42 §3): real spreadsheets written by Excel,
// LibreOffice and Google Sheets (Grist's own import fixtures, read from the grist-core mirror when
// it is there), with the column types and values Grist's import_xls tests expect of them; and the
// zip checks on both sides of their bound.
import {execFileSync} from 'node:child_process';
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {deflateRawSync} from 'node:zlib';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/gristdoc.js';
import {writeJsonTables} from '../src/import/json.js';
import {writeSourceTables} from '../src/import/sheets.js';
import {readTables} from '../src/import/sources.js';
import {checkZipFile} from '../src/import/zipcheck.js';

const test = suite('import-xlsx');
const MIRROR = '/work/.mirror/gristlabs+grist-core/repo';
const LIMITS = {maxUnzippedBytes: 64 * 1024 * 1024, maxEntries: 1000, maxJsonBytes: 1024 * 1024};
let dir = '';

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gl-import-xlsx-'));
});
test.after(() => rmSync(dir, {recursive: true, force: true}));

/** One of Grist's fixture files, or null when the mirror is not on this machine. */
function fixture(name: string): string | null {
  if (!existsSync(MIRROR)) return null;
  const path = join(dir, name);
  writeFileSync(
    path,
    execFileSync('git', ['-C', MIRROR, 'show', `v1.7.17:sandbox/grist/imports/fixtures/${name}`], {
      maxBuffer: 64 << 20,
    }),
  );
  return path;
}

/** Imports a file into a new document; per table, [colId, type] and the rows. */
async function imported(path: string, format: 'xlsx') {
  const doc = GristDoc.create(join(dir, `${Math.random()}.grist`));
  try {
    const ids = await writeSourceTables(doc, readTables(path, 'file', format, {}, LIMITS), 'sheet', 'UTC');
    return ids.map((id) => ({
      id,
      columns: doc.listColumns(id).map((c) => [c.id, c.fields.type]),
      data: doc.fetchColumns(id),
    }));
  } finally {
    doc.close();
  }
}

test('test_excel.xlsx: numbers, text, booleans and corner cases; one table per sheet', async () => {
  const path = fixture('test_excel.xlsx');
  if (!path) return console.log('skipped: no grist-core mirror');
  const [s1, s2] = await imported(path, 'xlsx');
  assert.is(s1.id, 'Sheet1');
  assert.is(s2.id, 'Sheet2');
  assert.equal(s1.columns.slice(0, 4), [
    ['numbers', 'Numeric'],
    ['letters', 'Text'],
    ['boolean', 'Bool'],
    ['corner_cases', 'Text'],
  ]);
  assert.equal(s1.data.numbers, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(s1.data.boolean, [true, false, true, false, true, false, true, false]);
  assert.equal(s1.data.corner_cases, [
    '=function()',
    '3',
    'two spaces after  ',
    '  two spaces before',
    '!@#$',
    '€€€',
    '√∫abc$$',
    'line\nbreak',
  ]);
  assert.equal(s2.data[String(s2.columns[0][0])], ['a', 'b', 'c', 'd']);
});

test('test_excel_types.xlsx: dates and datetimes, big numbers, type detection among mixed values', async () => {
  const path = fixture('test_excel_types.xlsx');
  if (!path) return console.log('skipped: no grist-core mirror');
  const [types, detection] = await imported(path, 'xlsx');
  const col = (t: typeof types, id: string) => [t.columns.find((c) => c[0] === id)?.[1], t.data[id]];
  assert.equal(col(types, 'int1'), ['Numeric', [-1234123, null, null]]);
  assert.equal(col(types, 'num2'), ['Numeric', [123456789.123456, null, null]]);
  assert.equal(col(types, 'date1'), ['DateTime:UTC', [Date.UTC(2015, 11, 22, 11, 59) / 1000, null, null]]);
  assert.equal(col(types, 'date2'), ['Date', [Date.UTC(2015, 11, 20) / 1000, null, null]]);
  // Grist's "Any" columns are guessed from their text afterwards (as CSV columns are): a number
  // a float cannot hold exactly stays text, as Grist's guesser (which formats it back) leaves it.
  assert.equal(col(types, 'textint'), ['Text', ['12345678902345689', '', '']]);
  assert.equal(col(types, 'datetimetext')[1], ['12/22/2015', '12/22/2015 1:15pm', '2018-02-27 16:08:39 +0000']);
  const dates = col(detection, 'date_with_other');
  assert.is(dates[0], 'DateTime:UTC');
  assert.equal((dates[1] as unknown[]).slice(0, 7), [
    1467676800,
    1451606400,
    1451692800,
    1454544000,
    1199577600,
    1467732614,
    'n/a',
  ]);
  assert.equal(col(detection, 'float_not_int'), [
    'Numeric',
    [1, 2, 3, 4, 5, null, 6, 7, 8, 9, 10, 10.25, 11, 12, 13, 14, 15, 16, 17, 18],
  ]);
  assert.equal(col(detection, 'int_as_bool'), [
    'Numeric',
    [0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0],
  ]);
  const notText = col(detection, 'float_not_text');
  assert.is(notText[0], 'Numeric');
  assert.equal((notText[1] as unknown[]).slice(0, 5), [-10.25, -8, -5.75, -3.5, 'n/a']);
});

test('test_empty_rows.xlsx and test_boolean.xlsx read without error, empty rows left out', async () => {
  for (const name of ['test_empty_rows.xlsx', 'test_boolean.xlsx', 'test_excel_numeric_gs.xlsx']) {
    const path = fixture(name);
    if (!path) return console.log('skipped: no grist-core mirror');
    const tables = await imported(path, 'xlsx');
    assert.ok(tables.length >= 1, name);
  }
  const gs = await imported(fixture('test_excel_numeric_gs.xlsx')!, 'xlsx');
  assert.equal(gs[0].data.TagId, [10, 20, 30, 40.5]);
});

test('zip checks: an archive within the bound passes, one byte over it is refused', async () => {
  const data = Buffer.alloc(100_000, 32);
  const packed = deflateRawSync(data);
  const name = Buffer.from('xl/worksheets/sheet1.xml');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(packed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(name.length, 26);
  const cdh = Buffer.alloc(46);
  cdh.writeUInt32LE(0x02014b50, 0);
  cdh.writeUInt16LE(8, 10);
  cdh.writeUInt32LE(packed.length, 20);
  cdh.writeUInt32LE(data.length, 24);
  cdh.writeUInt16LE(name.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(46 + name.length, 12);
  end.writeUInt32LE(30 + name.length + packed.length, 16);
  const path = join(dir, 'one.zip');
  writeFileSync(path, Buffer.concat([local, name, packed, cdh, name, end]));
  const ok = await checkZipFile(path, {maxUnzippedBytes: 100_000, maxEntries: 10});
  assert.equal(
    ok.map((e) => [e.name, e.size]),
    [['xl/worksheets/sheet1.xml', 100_000]],
  );
  try {
    await checkZipFile(path, {maxUnzippedBytes: 99_999, maxEntries: 10});
    assert.unreachable('over the bound');
  } catch (e) {
    assert.match((e as Error).message, /unpacks to more than 99999 bytes \(GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES\)/);
  }
  try {
    await checkZipFile(path, {maxUnzippedBytes: 100_000, maxEntries: 0});
    assert.unreachable('too many entries');
  } catch (e) {
    assert.match((e as Error).message, /holds 1 entries; at most 0 are read/);
  }
});

test('JSON as Grist makes tables of it: a column typed by the first row that has it, nested objects and arrays as tables', () => {
  const doc = GristDoc.create(join(dir, `${Math.random()}.grist`));
  try {
    const ids = writeJsonTables(
      doc,
      [
        {z: null, a: 'x', who: {name: 'Ann'}, tags: ['red', 'blue']},
        {z: 3, a: 5, who: {name: 'Ben'}, tags: []},
        {z: 'text', a: 'y'},
      ],
      'items',
    );
    assert.equal(ids, ['Items', 'Items_tags', 'Items_who']);
    assert.equal(
      doc.listColumns('Items').map((c) => [c.id, c.fields.type]),
      // Grist's order: the last row's keys (sorted), then keys only earlier rows have.
      [
        ['a', 'Text'],
        ['z', 'Text'],
        ['who', 'Ref:Items_who'],
      ],
    );
    const items = doc.fetchColumns('Items');
    assert.equal(items.a, ['x', '5', 'y']);
    assert.equal(items.who, [1, 2, 0]);
    assert.equal(doc.fetchColumns('Items_who').name, ['Ann', 'Ben']);
    // Items of an array: rows of their own table, each referring to the row it came from.
    const tags = doc.listColumns('Items_tags').map((c) => [c.id, c.fields.type]);
    assert.equal(
      tags.map((t) => t[1]),
      ['Text', 'Ref:Items'],
    );
    const tagRows = doc.fetchColumns('Items_tags');
    assert.equal(tagRows[String(tags[0][0])], ['red', 'blue']);
    assert.equal(tagRows[String(tags[1][0])], [1, 1]);
  } finally {
    doc.close();
  }
});

test.run();
