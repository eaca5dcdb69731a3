// Importing CSV files: parsing and header detection as Grist's import plugin does it, column
// types guessed as Grist guesses them, and the new document holding one table.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/engine.js';
import type {Principal} from '../src/home/principal.js';
import {decodeText, guessImportColumns, parseCsv, sniffDelimiter} from '../src/import/csv.js';
import {importUpload} from '../src/import/index.js';
import {exportTableDsvText} from '../src/export/csv.js';

const test = suite('import-csv');
let dir = '';
let engine: Engine;
let owner: Principal;
let wid = 0;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-import-csv-'));
  engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  owner = await engine.home.authenticate(`Bearer ${await engine.home.setApiKey(user.id)}`);
  const ws = await engine.home.listWorkspaces(`docs-${user.id}`, owner, null, false) as Array<{id: number, name: string}>;
  wid = ws.find((w) => w.name === 'Home')!.id;
});

test.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

test('delimiters are sniffed among , tab ; |', () => {
  assert.is(sniffDelimiter('a,b,c\n1,2,3\n'), ',');
  assert.is(sniffDelimiter('a;b;c\n1,5;2;3\n4;5,5;6\n'), ';');
  assert.is(sniffDelimiter('a\tb\n"x,y"\t2\n'), '\t');
  assert.is(sniffDelimiter('a|b\n1|2\n'), '|');
  assert.is(sniffDelimiter('just one column\nno delimiters\n'), ',');
});

test('the first non-empty row is the header when it looks like one', () => {
  assert.equal(parseCsv('Name,Age\nAnn,31\nBob,42\n'), {headers: ['Name', 'Age'], rows: [['Ann', '31'], ['Bob', '42']], delimiter: ','});
  // A numeric cell: the row is data, and the columns have no names.
  assert.equal(parseCsv('Ann,31\nBob,42\n').headers, ['', '']);
  assert.equal(parseCsv('Ann,31\nBob,42\n').rows, [['Ann', '31'], ['Bob', '42']]);
  // A header value repeated in its column below: data too.
  assert.equal(parseCsv('yes,x\nyes,y\n').headers, ['', '']);
  // Blank lines and empty leading rows are skipped; headers are trimmed; longer rows widen the table.
  assert.equal(parseCsv('\n,,\n Name , Age \nAnn,31,extra\n'), {headers: ['Name', 'Age', ''], rows: [['Ann', '31', 'extra']], delimiter: ','});
  // Quoted cells keep delimiters, quotes and newlines; short rows are padded.
  assert.equal(parseCsv('A,B\n"x, ""y""\nz",1\nonly\n').rows, [['x, "y"\nz', '1'], ['only', '']]);
});

test('text is UTF-8 without its BOM, else Windows-1252', () => {
  assert.is(decodeText(Buffer.from('\ufeffCafé,x', 'utf8')), 'Café,x');
  assert.is(decodeText(Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x80])), 'Café€');
});

test('column types are guessed as Grist guesses them', () => {
  const csv = [
    'Name,Price,Paid,Born,Seen,Qty,Notes,Nothing,,Mixed',
    'Ann,"$1,234.50",true,2024-02-14,2024-02-14 10:30,1,,,,1',
    'Bob,$5.00,false,1999-12-31,2024-02-15 11:45,2,hello,,,x',
  ].join('\n');
  const cols = guessImportColumns(parseCsv(csv), {locale: 'en-US'}, 'UTC');
  const byHeader = Object.fromEntries(cols.map((c) => [c.header, c]));
  assert.equal(cols.map((c) => c.header), ['Name', 'Price', 'Paid', 'Born', 'Seen', 'Qty', 'Notes', 'Nothing', 'Mixed']);
  assert.equal(byHeader.Name.spec.fields, {label: 'Name', type: 'Text', isFormula: false});
  assert.equal(byHeader.Price.spec.fields!.type, 'Numeric');
  assert.equal(JSON.parse(String(byHeader.Price.spec.fields!.widgetOptions)), {numMode: 'currency', decimals: 2});
  assert.equal(byHeader.Price.values, [1234.5, 5]);
  assert.equal(byHeader.Paid.spec.fields!.type, 'Bool');
  assert.equal(byHeader.Paid.values, [true, false]);
  assert.equal(byHeader.Born.spec.fields!.type, 'Date');
  assert.equal(byHeader.Born.values, [1707868800, 946598400]);
  assert.equal(byHeader.Seen.spec.fields!.type, 'DateTime:UTC');
  assert.equal(byHeader.Seen.values, [1707906600, 1707997500]);
  assert.equal(byHeader.Qty.spec.fields!.type, 'Numeric');
  assert.equal(byHeader.Qty.values, [1, 2]);
  assert.equal(byHeader.Notes.spec.fields!.type, 'Text');
  assert.equal(byHeader.Notes.values, ['', 'hello']);
  // A named column of blanks becomes an empty column; an unnamed one is dropped.
  assert.equal(byHeader.Nothing.spec.fields, {label: 'Nothing', type: 'Any', isFormula: true, formula: ''});
  assert.is(byHeader.Nothing.values, null);
  assert.equal(byHeader.Mixed.spec.fields!.type, 'Text');
});

test('a CSV upload becomes a document with one table named after the file', async () => {
  const csv = 'First Name,Age,Member,Joined,class\nAnn,31,true,2024-02-14,A\nBob,42,false,2023-01-02,B\n"Lee, Jr.",,false,,C\n';
  const res = await importUpload(engine, wid, owner, {fileName: 'club members.csv', data: Buffer.from(csv)});
  assert.is(res.title, 'club members');
  const doc = engine.openDoc(res.id).grist;
  assert.equal(doc.listTables().map((t) => t.id), ['Club_members']);
  const cols = doc.listColumns('Club_members');
  assert.equal(cols.map((c) => [c.id, c.fields.label, c.fields.type]), [
    ['First_Name', 'First Name', 'Text'], ['Age', 'Age', 'Numeric'], ['Member', 'Member', 'Bool'],
    ['Joined', 'Joined', 'Date'], ['cclass', 'class', 'Text'],
  ]);
  assert.equal(doc.fetchRecords('Club_members').records, [
    {id: 1, fields: {First_Name: 'Ann', Age: 31, Member: true, Joined: 1707868800, cclass: 'A'}},
    {id: 2, fields: {First_Name: 'Bob', Age: 42, Member: false, Joined: 1672617600, cclass: 'B'}},
    {id: 3, fields: {First_Name: 'Lee, Jr.', Age: null, Member: false, Joined: null, cclass: 'C'}},
  ]);
  // And it exports back to the same text (labels as headers).
  assert.is(await exportTableDsvText(doc, 'Club_members'),
    'First Name,Age,Member,Joined,class\nAnn,31,true,2024-02-14,A\nBob,42,false,2023-01-02,B\n"Lee, Jr.",,false,,C\n');
});

test('headerless files get columns A, B, ...; TSV by extension; a timezone for date-times', async () => {
  const res = await importUpload(engine, wid, owner, {fileName: 'data.tsv', data: Buffer.from('1\t2024-02-14 10:30\n2\t2024-02-15 11:00\n')},
    {documentName: 'Numbers', timezone: 'America/New_York'});
  assert.is(res.title, 'Numbers');
  const doc = engine.openDoc(res.id).grist;
  assert.equal(doc.listColumns('Data').map((c) => [c.id, c.fields.type]), [['A', 'Numeric'], ['B', 'DateTime:America/New_York']]);
  assert.equal(doc.fetchColumns('Data').A, [1, 2]);
  assert.equal(doc.fetchColumns('Data').B, [1707924600, 1708012800]);
});

test('large files are written in batches, with progress', async () => {
  const lines = ['id,value'];
  for (let i = 1; i <= 12000; i++) lines.push(`${i},v${i % 7}`);
  const progress: number[] = [];
  const {importCsvDoc} = await import('../src/import/index.js');
  const res = await importCsvDoc(engine, wid, owner, {fileName: 'big.csv', data: Buffer.from(lines.join('\n'))},
    {onProgress: (done) => progress.push(done)});
  assert.equal(progress, [5000, 10000, 12000]);
  const doc = engine.openDoc(res.id).grist;
  assert.is(doc.fetchRecords('Big').records.length, 12000);
  assert.equal(doc.listColumns('Big').map((c) => [c.id, c.fields.type]), [['id2', 'Numeric'], ['value', 'Text']]);
});

test('a file with nothing to import is refused', async () => {
  for (const data of ['', '\n\n', ',,\n,,\n']) {
    try {
      await importUpload(engine, wid, owner, {fileName: 'empty.csv', data: Buffer.from(data)});
      assert.unreachable();
    } catch (e: any) {
      assert.is(e.status, 400);
      assert.match(e.message, /no data/);
    }
  }
});

test.run();
