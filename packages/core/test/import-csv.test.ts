// Importing CSV files: parsing and header detection as Grist's import plugin does it, column
// types guessed as Grist guesses them, and the new document holding one table.
import {writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {Readable} from 'node:stream';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {useHomeWorld} from './doc-helpers.js';
import {guessColumn} from '@gristlite/formula';
import {
  CSV_READ_AHEAD_CELLS,
  decodeText,
  detectEncoding,
  guessImportColumns,
  parseCsv,
  readCsvBatches,
  sniffDelimiter,
} from '../src/import/csv.js';
import {parse as parseCsvSync} from 'csv-parse/sync';
import {
  IMPORT_GUESS_ROWS,
  MAX_IMPORT_COLUMNS,
  importCsvDoc,
  importUpload,
  type ImportProgress,
} from '../src/import/index.js';
import {exportTableDsvText} from '../src/export/csv.js';

const test = suite('import-csv');
const world = useHomeWorld(test, 'gl-import-csv-');

test('delimiters are sniffed among , tab ; |', () => {
  assert.is(sniffDelimiter('a,b,c\n1,2,3\n'), ',');
  assert.is(sniffDelimiter('a;b;c\n1,5;2;3\n4;5,5;6\n'), ';');
  assert.is(sniffDelimiter('a\tb\n"x,y"\t2\n'), '\t');
  assert.is(sniffDelimiter('a|b\n1|2\n'), '|');
  assert.is(sniffDelimiter('just one column\nno delimiters\n'), ',');
});

test('the first non-empty row is the header when it looks like one', () => {
  assert.equal(parseCsv('Name,Age\nAnn,31\nBob,42\n'), {
    headers: ['Name', 'Age'],
    rows: [
      ['Ann', '31'],
      ['Bob', '42'],
    ],
    delimiter: ',',
  });
  // A numeric cell: the row is data, and the columns have no names.
  assert.equal(parseCsv('Ann,31\nBob,42\n').headers, ['', '']);
  assert.equal(parseCsv('Ann,31\nBob,42\n').rows, [
    ['Ann', '31'],
    ['Bob', '42'],
  ]);
  // A header value repeated in its column below: data too.
  assert.equal(parseCsv('yes,x\nyes,y\n').headers, ['', '']);
  // Blank lines and empty leading rows are skipped; headers are trimmed; longer rows widen the table.
  assert.equal(parseCsv('\n,,\n Name , Age \nAnn,31,extra\n'), {
    headers: ['Name', 'Age', ''],
    rows: [['Ann', '31', 'extra']],
    delimiter: ',',
  });
  // Quoted cells keep delimiters, quotes and newlines; short rows are padded.
  assert.equal(parseCsv('A,B\n"x, ""y""\nz",1\nonly\n').rows, [
    ['x, "y"\nz', '1'],
    ['only', ''],
  ]);
});

test('text is UTF-8 without its BOM, else as chardet detects it (Windows-1252 when unsure)', () => {
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
  assert.equal(
    cols.map((c) => c.header),
    ['Name', 'Price', 'Paid', 'Born', 'Seen', 'Qty', 'Notes', 'Nothing', 'Mixed'],
  );
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
  const csv =
    'First Name,Age,Member,Joined,class\nAnn,31,true,2024-02-14,A\nBob,42,false,2023-01-02,B\n"Lee, Jr.",,false,,C\n';
  const res = await importUpload(world.engine, world.wid, world.owner, {
    fileName: 'club members.csv',
    data: Buffer.from(csv),
  });
  assert.is(res.title, 'club members');
  const doc = world.engine.openDoc(res.id).grist;
  assert.equal(
    doc.listTables().map((t) => t.id),
    ['Club_members'],
  );
  const cols = doc.listColumns('Club_members');
  assert.equal(
    cols.map((c) => [c.id, c.fields.label, c.fields.type]),
    [
      ['First_Name', 'First Name', 'Text'],
      ['Age', 'Age', 'Numeric'],
      ['Member', 'Member', 'Bool'],
      ['Joined', 'Joined', 'Date'],
      ['cclass', 'class', 'Text'],
    ],
  );
  assert.equal(doc.fetchRecords('Club_members').records, [
    {id: 1, fields: {First_Name: 'Ann', Age: 31, Member: true, Joined: 1707868800, cclass: 'A'}},
    {id: 2, fields: {First_Name: 'Bob', Age: 42, Member: false, Joined: 1672617600, cclass: 'B'}},
    {id: 3, fields: {First_Name: 'Lee, Jr.', Age: null, Member: false, Joined: null, cclass: 'C'}},
  ]);
  // And it exports back to the same text (labels as headers).
  assert.is(
    await exportTableDsvText(doc, 'Club_members'),
    'First Name,Age,Member,Joined,class\nAnn,31,true,2024-02-14,A\nBob,42,false,2023-01-02,B\n"Lee, Jr.",,false,,C\n',
  );
});

test('headerless files get columns A, B, ...; TSV by extension; a timezone for date-times', async () => {
  const res = await importUpload(
    world.engine,
    world.wid,
    world.owner,
    {fileName: 'data.tsv', data: Buffer.from('1\t2024-02-14 10:30\n2\t2024-02-15 11:00\n')},
    {documentName: 'Numbers', timezone: 'America/New_York'},
  );
  assert.is(res.title, 'Numbers');
  const doc = world.engine.openDoc(res.id).grist;
  assert.equal(
    doc.listColumns('Data').map((c) => [c.id, c.fields.type]),
    [
      ['A', 'Numeric'],
      ['B', 'DateTime:America/New_York'],
    ],
  );
  assert.equal(doc.fetchColumns('Data').A, [1, 2]);
  assert.equal(doc.fetchColumns('Data').B, [1707924600, 1708012800]);
});

test('records are read in batches of at most CSV_READ_AHEAD_CELLS cells, the same records as one parse', async () => {
  const batchesOf = async (text: string, chunk: number) => {
    const data = Buffer.from(text);
    const chunks = Array.from({length: Math.ceil(data.length / chunk)}, (_, i) =>
      data.subarray(i * chunk, (i + 1) * chunk),
    );
    const out: string[][][] = [];
    for await (const b of readCsvBatches(Readable.from(chunks))) out.push(b);
    return out;
  };
  const opts = {relax_column_count: true, relax_quotes: true, skip_empty_lines: true};
  // Below the bound: the records as they come. Above it (4 cells a record with the count of its
  // end): the parser pauses, and batches stay within the bound.
  const small = ['a,b,c', '1,"x, y",3', '', '4,"multi\nline",6', 'short'].join('\n');
  const smallBatches = await batchesOf(small, 1 << 20);
  assert.ok(smallBatches.length <= 2, `${smallBatches.length} batches`);
  assert.equal(smallBatches.flat(), parseCsvSync(small, opts));
  // UTF-8 reaches the parser as bytes: characters split between chunks, a BOM and bytes that are
  // not UTF-8 past the part the encoding is told from read as the decoder reads them.
  const utf8Data = Buffer.concat([
    Buffer.from(`\ufeffName,City\n${'Zoë,"Kraków, 😀"\n'.repeat(7000)}end,x`, 'utf8'),
    Buffer.from([0xc3, 0x28, 0xe2, 0x82, 0xff]),
    Buffer.from('y\n'),
  ]);
  // The first SNIFF_BYTES are UTF-8: the file is read as UTF-8 (the rest's bad bytes replaced).
  const decodedRecords = parseCsvSync(new TextDecoder('utf-8').decode(utf8Data), opts);
  assert.ok(decodedRecords[decodedRecords.length - 1][1].includes('\ufffd'));
  assert.is(decodedRecords[0][0], 'Name', 'no BOM');
  // (In one chunk the whole file would be what the encoding is told from: not UTF-8.)
  for (const chunk of [4093, 1]) {
    const read: string[][] = [];
    const chunks = Array.from({length: Math.ceil(utf8Data.length / chunk)}, (_, i) =>
      utf8Data.subarray(i * chunk, (i + 1) * chunk),
    );
    for await (const b of readCsvBatches(Readable.from(chunks))) read.push(...b);
    assert.equal(read, decodedRecords, `UTF-8 in ${chunk}-byte chunks`);
  }
  const rows = ['a,b,c'];
  for (let i = 0; i < CSV_READ_AHEAD_CELLS; i++) rows.push(`${i},"q${i % 5 ? '' : ',\n'}",${i * 2}`);
  const big = rows.join('\r\n');
  const expected = parseCsvSync(big, opts);
  for (const chunk of [1 << 20, 4096, 7]) {
    const batches = await batchesOf(big, chunk);
    assert.ok(batches.length >= 4, `${batches.length} batches of ${chunk}-byte chunks`);
    for (const b of batches) assert.ok(b.length * 4 <= CSV_READ_AHEAD_CELLS + 4, `${b.length} records`);
    assert.equal(batches.flat(), expected, `${chunk}-byte chunks`);
  }
});

test('large files are written in batches, with progress', async () => {
  const lines = ['id,value'];
  for (let i = 1; i <= 60000; i++) lines.push(`${i},v${i % 7}`);
  const progress: ImportProgress[] = [];
  const res = await importCsvDoc(
    world.engine,
    world.wid,
    world.owner,
    {fileName: 'big.csv', data: Buffer.from(lines.join('\n'))},
    {onProgress: (p) => progress.push(p)},
  );
  // IMPORT_BATCH_CELLS cells a batch: 25,000 rows of two columns.
  assert.equal(
    progress.map((p) => p.rows),
    [25000, 50000, 60000],
  );
  assert.is(progress[progress.length - 1].fraction, 1);
  const doc = world.engine.openDoc(res.id).grist;
  assert.is(doc.fetchRecords('Big').records.length, 60000);
  assert.equal(
    doc.listColumns('Big').map((c) => [c.id, c.fields.type]),
    [
      ['id2', 'Numeric'],
      ['value', 'Text'],
    ],
  );
});

test('UTF-16 (LE and BE, with BOM: Excel\'s "Unicode text") and UTF-8 with a BOM import as text', async () => {
  const text = 'Name\tCity\tPrice\r\nZoë\tKraków\t3.50\r\nJosé\tZürich\t12\r\n';
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  const be = Buffer.from(le).swap16();
  const utf8 = Buffer.from('\ufeff' + text.replace(/\t/g, ','), 'utf8');
  for (const [fileName, data] of [
    ['le.txt', le],
    ['be.txt', be],
    ['bom.csv', utf8],
  ] as const) {
    assert.is(decodeText(data), fileName === 'bom.csv' ? text.replace(/\t/g, ',') : text, fileName);
    const res = await importUpload(world.engine, world.wid, world.owner, {fileName, data});
    const doc = world.engine.openDoc(res.id).grist;
    const [{id: table}] = doc.listTables();
    assert.equal(
      doc.listColumns(table).map((c) => [c.id, c.fields.type]),
      [
        ['Name', 'Text'],
        ['City', 'Text'],
        ['Price', 'Numeric'],
      ],
      fileName,
    );
    assert.equal(
      doc.fetchColumns(table),
      {id: [1, 2], manualSort: [1, 2], Name: ['Zoë', 'José'], City: ['Kraków', 'Zürich'], Price: [3.5, 12]},
      fileName,
    );
  }
  assert.is(detectEncoding(le), 'UTF-16LE');
  assert.is(detectEncoding(be), 'UTF-16BE');
  assert.is(detectEncoding(utf8), 'utf-8');
  // Not UTF-8 and nothing chardet is sure of: Windows-1252, as Excel writes.
  assert.is(detectEncoding(Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x2c, 0x80, 0x0a])), 'windows-1252');
});

test('200,000 rows (beyond the 150,000 that overflowed the stack) import from a file, with progress', async () => {
  // The type guess over a data-sized column once spread it into Math.max.
  assert.equal(guessColumn(new Array(200_000).fill('1.50'), {locale: 'en-US'}, 'UTC')!.widgetOptions, {decimals: 2});
  const path = join(world.dir, 'rows.csv');
  const lines = ['n,price,day,flag'];
  for (let i = 1; i <= 200_000; i++)
    lines.push(`${i},${i % 100}.50,2024-01-${10 + (i % 18)},${i % 2 ? 'true' : 'false'}`);
  writeFileSync(path, lines.join('\n') + '\n');
  const progress: ImportProgress[] = [];
  const t = performance.now();
  const res = await importUpload(
    world.engine,
    world.wid,
    world.owner,
    {fileName: 'rows.csv', path},
    {onProgress: (p) => progress.push(p)},
  );
  const ms = performance.now() - t;
  // A guard against a hang, not a speed target (those are benchmarks): about 5 s on a quiet machine.
  assert.ok(ms < 60_000, `${ms} ms`);
  assert.is(progress[progress.length - 1].rows, 200_000);
  assert.is(progress[progress.length - 1].fraction, 1);
  assert.ok(progress.length >= 10, 'a batch at a time');
  const doc = world.engine.openDoc(res.id).grist;
  assert.equal(
    doc.listColumns('Rows').map((c) => c.fields.type),
    ['Numeric', 'Numeric', 'Date', 'Bool'],
  );
  assert.is(doc.fetchRecords('Rows', {limit: 1}).records.length, 1);
  const last = doc.fetchRecords('Rows', {sort: ['-n'], limit: 1}).records[0];
  assert.equal(last, {id: 200_000, fields: {n: 200_000, price: 0.5, day: Date.UTC(2024, 0, 12) / 1000, flag: false}});
  console.log(`  200,000 rows x 4 columns in ${ms.toFixed(0)} ms`);
});

test('a stream imports; a column blank in the rows that guess types becomes Text when data comes', async () => {
  const lines = ['id,late'];
  for (let i = 1; i <= IMPORT_GUESS_ROWS + 5; i++) lines.push(`${i},${i > IMPORT_GUESS_ROWS ? `x${i}` : ''}`);
  const res = await importUpload(world.engine, world.wid, world.owner, {
    fileName: 'late.csv',
    stream: Readable.from([Buffer.from(lines.join('\n'))]),
  });
  const doc = world.engine.openDoc(res.id).grist;
  assert.equal(
    doc.listColumns('Late').map((c) => [c.id, c.fields.type, c.fields.isFormula]),
    [
      ['id2', 'Numeric', false],
      ['late', 'Text', false],
    ],
  );
  const late = doc.fetchColumns('Late').late as unknown[];
  // Rows written while it was an empty column stay blank (null).
  assert.equal(late.slice(-6), [null, 'x10001', 'x10002', 'x10003', 'x10004', 'x10005']);
  assert.is(late.filter((v) => v !== null).length, 5);
});

test("1998 columns import (SQLite's 2000 less id and manualSort); more are refused with a clear 400", async () => {
  const wide = (n: number) =>
    Buffer.from(
      [0, 1, 2].map((r) => Array.from({length: n}, (_, i) => (r ? `${r * i}` : `c${i}`)).join(',')).join('\n'),
    );
  const res = await importUpload(world.engine, world.wid, world.owner, {
    fileName: 'wide.csv',
    data: wide(MAX_IMPORT_COLUMNS),
  });
  const doc = world.engine.openDoc(res.id).grist;
  assert.is(doc.listColumns('Wide').length, MAX_IMPORT_COLUMNS);
  assert.equal(doc.fetchColumns('Wide').c1997, [1997, 3994]);
  const before = ((await world.engine.home.getWorkspace(world.wid, world.owner, false)) as {docs: unknown[]}).docs
    .length;
  for (const n of [MAX_IMPORT_COLUMNS + 1, 2100]) {
    try {
      await importUpload(world.engine, world.wid, world.owner, {fileName: 'wide.csv', data: wide(n)});
      assert.unreachable(`${n} columns`);
    } catch (e: any) {
      assert.is(e.status, 400);
      assert.is(
        e.message,
        `The file has ${n} columns; at most 1998 can be imported (SQLite's limit of columns in a table)`,
      );
    }
  }
  assert.is(
    ((await world.engine.home.getWorkspace(world.wid, world.owner, false)) as {docs: unknown[]}).docs.length,
    before,
    'nothing left behind',
  );
});

test('an unclosed quote is a 400', async () => {
  try {
    await importUpload(world.engine, world.wid, world.owner, {fileName: 'bad.csv', data: Buffer.from('a,b\n1,"2\n')});
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.status, 400);
    assert.match(e.message, /^Could not parse the CSV file: Quote Not Closed/);
  }
});

test('a file with nothing to import is refused', async () => {
  for (const data of ['', '\n\n', ',,\n,,\n']) {
    try {
      await importUpload(world.engine, world.wid, world.owner, {fileName: 'empty.csv', data: Buffer.from(data)});
      assert.unreachable();
    } catch (e: any) {
      assert.is(e.status, 400);
      assert.match(e.message, /no data/);
    }
  }
});

test.run();
