// CSV / TSV / DSV export of a table (SPEC §6.2): Grist's display formatting, header choice,
// column and row order, every fixture table, and streaming with bounded memory.
import {setFlagsFromString} from 'node:v8';
import {runInNewContext} from 'node:vm';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {loadMeta} from '../src/doc/meta.js';
import {exportTableDsv, exportTableDsvText} from '../src/export/csv.js';
import {createFormatter} from '../src/export/format.js';
import {planTableExport} from '../src/export/plan.js';
import {copyFixture, FIXTURE_NAMES, tempPath, withFixtures} from './doc-helpers.js';

const test = suite('export-csv');
const ftest = withFixtures(test);

/** SPEC §19's Timesheets Table1, built through GristDoc: A, B, C Text; D empty; E = $A.upper(). */
function timesheets(): GristDoc {
  const doc = GristDoc.create(tempPath('Timesheets.grist'));
  doc.applyUserActions([
    ['ModifyColumn', 'Table1', 'A', {type: 'Text', isFormula: false}],
    ['ModifyColumn', 'Table1', 'B', {type: 'Text', isFormula: false}],
    ['ModifyColumn', 'Table1', 'C', {type: 'Text', isFormula: false}],
    ['AddVisibleColumn', 'Table1', 'D', {}],
    ['AddVisibleColumn', 'Table1', 'E', {type: 'Any', isFormula: true, formula: '$A.upper()'}],
  ]);
  doc.addRecords('Table1', [{A: 'hello'}, {B: 'world'}, {}, {}]);
  // gristlite does not evaluate formulas: store what Grist's engine would have computed.
  doc.db.prepare('UPDATE Table1 SET E = upper(A)').run();
  return doc;
}

ftest('§19 Timesheets: the exact CSV text', async () => {
  const doc = timesheets();
  assert.is(await exportTableDsvText(doc, 'Table1'), 'A,B,C,D,E\nhello,,,,HELLO\n,world,,,\n,,,,\n,,,,\n');
  // The same from Grist's own file of that table.
  const hello = GristDoc.open(copyFixture('Hello.grist'));
  assert.is(await exportTableDsvText(hello, 'Table1'), 'A,B,C,D,E\nhello,,,,HELLO\n,world,,,\n,,,,\n,,,,\n');
  hello.close();
  doc.close();
});

test('header=colId, labels by default; tsv and the 💩 dsv; hidden columns left out', async () => {
  const doc = timesheets();
  doc.updateColumns('Table1', [{id: 'A', fields: {label: 'First, name', untieColIdFromLabel: true}}]);
  assert.is(
    await exportTableDsvText(doc, 'Table1', {header: 'colId'}),
    'A,B,C,D,E\nhello,,,,HELLO\n,world,,,\n,,,,\n,,,,\n',
  );
  assert.is((await exportTableDsvText(doc, 'Table1')).split('\n')[0], '"First, name",B,C,D,E');
  assert.is(
    await exportTableDsvText(doc, 'Table1', {format: 'tsv', header: 'colId'}),
    'A\tB\tC\tD\tE\nhello\t\t\t\tHELLO\n\tworld\t\t\t\n\t\t\t\t\n\t\t\t\t\n',
  );
  assert.is(
    (await exportTableDsvText(doc, 'Table1', {format: 'dsv', header: 'colId'})).split('\n').slice(0, 2).join('\n'),
    'A💩B💩C💩D💩E\nhello💩💩💩💩HELLO',
  );
  const exp = exportTableDsv(doc, 'Table1', {format: 'tsv'});
  assert.is(exp.contentType, 'text/tab-separated-values; charset=utf-8');
  assert.is(exp.extension, '.tsv');
  doc.close();
});

test('unknown tables: 404 "Table X not found." (metadata tables too)', () => {
  const doc = timesheets();
  for (const t of ['MissingTableId', '_grist_Tables', 'table1']) {
    assert.throws(
      () => exportTableDsv(doc, t),
      (e: any) => e.status === 404 && e.message === `Table ${t} not found.`,
    );
  }
  doc.close();
});

/** A table with one column per interesting type and format, written through GristDoc. */
function typed(): GristDoc {
  const doc = GristDoc.create(tempPath('Typed.grist'));
  doc.addTables([
    {
      id: 'People',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Born', fields: {type: 'Date'}},
      ],
    },
  ]);
  doc.addRecords(
    'People',
    [
      {Name: 'Ann', Born: 0},
      {Name: 'Bob, Jr.', Born: 86400},
    ],
    {parse: false},
  );
  const wo = (o: object) => JSON.stringify(o);
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'Plain', fields: {type: 'Numeric'}},
        {id: 'Dec', fields: {type: 'Numeric', widgetOptions: wo({numMode: 'decimal', decimals: 2})}},
        {id: 'Cur', fields: {type: 'Numeric', widgetOptions: wo({numMode: 'currency'})}},
        {
          id: 'Eur',
          fields: {type: 'Numeric', widgetOptions: wo({numMode: 'currency', currency: 'EUR', numSign: 'parens'})},
        },
        {id: 'Pct', fields: {type: 'Numeric', widgetOptions: wo({numMode: 'percent', maxDecimals: 1})}},
        {id: 'Sci', fields: {type: 'Numeric', widgetOptions: wo({numMode: 'scientific'})}},
        {id: 'Int', fields: {type: 'Int'}},
        {id: 'Bool', fields: {type: 'Bool'}},
        {id: 'Date', fields: {type: 'Date'}},
        {id: 'DateUS', fields: {type: 'Date', widgetOptions: wo({dateFormat: 'MM/DD/YY'})}},
        {id: 'DateLong', fields: {type: 'Date', widgetOptions: wo({dateFormat: 'dddd, MMMM Do YYYY'})}},
        {id: 'DT', fields: {type: 'DateTime:America/New_York'}},
        {
          id: 'DT24',
          fields: {
            type: 'DateTime:Europe/Paris',
            widgetOptions: wo({dateFormat: 'DD.MM.YYYY', timeFormat: 'HH:mm:ss z'}),
          },
        },
        {id: 'Choice', fields: {type: 'Choice'}},
        {id: 'Choices', fields: {type: 'ChoiceList'}},
        {id: 'Person', fields: {type: 'Ref:People'}},
        {id: 'PersonId', fields: {type: 'Ref:People'}},
        {id: 'Persons', fields: {type: 'RefList:People'}},
        {id: 'Files', fields: {type: 'Attachments'}},
        {id: 'Text', fields: {type: 'Text'}},
      ],
    },
  ]);
  const meta = doc.listColumns('People');
  const nameRef = meta.find((c) => c.id === 'Name')!.fields.colRef;
  doc.updateColumns('T', [
    {id: 'Person', fields: {visibleCol: nameRef}},
    {id: 'Persons', fields: {visibleCol: nameRef}},
  ]);
  doc.addRecords(
    'T',
    [
      {
        Plain: 3.14159265358979,
        Dec: 1234567.891,
        Cur: -1234.5,
        Eur: -1234.5,
        Pct: 0.1234,
        Sci: 12345,
        Int: 42,
        Bool: true,
        Date: 1707868800,
        DateUS: 1707868800,
        DateLong: 1707868800,
        DT: 1707868800 + 3600 * 15.5,
        DT24: 1720000000,
        Choice: 'x',
        Choices: ['L', 'a', 'b, c'],
        Person: 2,
        PersonId: 1,
        Persons: ['L', 2, 1],
        Files: ['L', 1, 2],
        Text: 'say "hi"\nbye',
      },
      {
        Plain: 0,
        Int: 0,
        Bool: false,
        Person: 0,
        PersonId: 0,
        Persons: null,
        Text: '',
      },
      {
        Plain: 'n/a',
        Date: 'soon',
        Person: 99,
        Text: ' padded ',
      },
    ],
    {parse: false},
  );
  return doc;
}

test('display formatting: numbers, dates, times, bools, lists, references, quoting', async () => {
  const doc = typed();
  const text = await exportTableDsvText(doc, 'T');
  const {parse} = await import('csv-parse/sync');
  const [header, ...rows] = parse(text) as string[][];
  assert.is(
    text.split('\n')[0],
    'Plain,Dec,Cur,Eur,Pct,Sci,Int,Bool,Date,DateUS,DateLong,DT,DT24,Choice,Choices,Person,PersonId,' +
      'Persons,Files,Text',
  );
  const row = (i: number) => Object.fromEntries(header.map((h, j) => [h, rows[i][j]]));
  assert.equal(row(0), {
    Plain: '3.1415926536',
    Dec: '1,234,567.891',
    Cur: '-$1,234.50',
    Eur: '(€1,234.50)',
    Pct: '12.3%',
    Sci: '1.235E4',
    Int: '42',
    Bool: 'true',
    Date: '2024-02-14',
    DateUS: '02/14/24',
    DateLong: 'Wednesday, February 14th 2024',
    DT: '2024-02-14 10:30am',
    DT24: '03.07.2024 11:46:40 CEST',
    Choice: 'x',
    Choices: 'a, "b, c"',
    Person: 'Bob, Jr.',
    PersonId: 'People[1]',
    Persons: '"Bob, Jr.", Ann',
    Files: '1, 2',
    Text: 'say "hi"\nbye',
  });
  // Empty reference: the visible column's default; row-id display of 0 is empty; null list empty.
  assert.equal(rows[1], ['0', '', '', '', '', '', '0', 'false', '', '', '', '', '', '', '', '', '', '', '', '']);
  // Alt-text stays as written; a dangling reference shows the visible column's default; a
  // missing value in a batch where others have one is null (empty), as Grist stores it.
  assert.equal(rows[2], [
    'n/a',
    '',
    '',
    '',
    '',
    '',
    '',
    'false',
    'soon',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    ' padded ',
  ]);
  assert.is(rows.length, 3);
  // Quoting is csv-stringify's: quotes doubled, cells with commas, quotes or newlines quoted.
  assert.ok(text.includes(',"say ""hi""\nbye"\n'));
  doc.close();
});

test('references show the current visible value, not a stale gristHelper display', async () => {
  const doc = typed();
  doc.updateRecords('People', [{id: 2, fields: {Name: 'Robert'}}]);
  const row = (await exportTableDsvText(doc, 'T', {header: 'colId'})).split('\n')[1];
  assert.ok(row.includes(',Robert,People[1],"Robert, Ann",'), row);
  doc.close();
});

test('errors show as Grist writes them', async () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'E',
      columns: [
        {id: 'A', fields: {type: 'Any', isFormula: true, formula: '1/0'}},
        {id: 'B', fields: {type: 'Numeric', isFormula: true, formula: '$x'}},
        {id: 'C', fields: {type: 'Any'}},
      ],
    },
  ]);
  doc.db.exec(`INSERT INTO E (id, A, B, C) VALUES (1, NULL, NULL, NULL)`);
  const {marshalDumps} = await import('../src/doc/index.js');
  doc.db
    .prepare('UPDATE E SET A = ?, B = ?, C = ?')
    .run(
      marshalDumps(['E', 'ZeroDivisionError', 'division by zero']),
      marshalDumps(['E', 'AttributeError', "Table 'E' has no column 'x'"]),
      marshalDumps(['E', 'InvalidTypedValue', 'Int', 'abc']),
    );
  assert.is(await exportTableDsvText(doc, 'E'), 'A,B,C\n#DIV/0!,#AttributeError,#Invalid Int: abc\n');
  doc.close();
});

ftest('column order is parentPos (then colRef); rows in row-id order', async () => {
  const doc = timesheets();
  doc.updateColumns('Table1', [
    {id: 'E', fields: {parentPos: 0.5}},
    {id: 'C', fields: {parentPos: 2.5}},
  ]);
  doc.db.exec('UPDATE Table1 SET manualSort = 10 - id'); // manualSort does not change the order
  assert.is(
    await exportTableDsvText(doc, 'Table1', {header: 'colId'}),
    'E,A,C,B,D\nHELLO,hello,,,\n,,,world,\n,,,,\n,,,,\n',
  );
  doc.close();
});

// ---------------------------------------------------------------------------------------------
// Real Grist documents

async function fixtureCsv(name: string, tableId: string, opts = {}): Promise<string[]> {
  const doc = GristDoc.open(copyFixture(name));
  try {
    return (await exportTableDsvText(doc, tableId, opts)).split('\n');
  } finally {
    doc.close();
  }
}

ftest('every table of every fixture exports, with one line per row', async () => {
  for (const name of FIXTURE_NAMES) {
    const doc = GristDoc.open(copyFixture(name));
    for (const t of doc.listTables()) {
      const text = await exportTableDsvText(doc, t.id);
      const rows = doc.db.prepare(`SELECT count(*) FROM "${t.id}"`).pluck().get() as number;
      assert.ok(text.endsWith('\n'), `${name}/${t.id}`);
      const visible = doc.listColumns(t.id).length;
      // Count records with csv-parse (cells may hold newlines).
      const {parse} = await import('csv-parse/sync');
      const records = parse(text, {relax_column_count: true}) as string[][];
      assert.is(records.length, rows + 1, `${name}/${t.id}`);
      assert.ok(
        records.every((r) => r.length === visible),
        `${name}/${t.id}`,
      );
    }
    doc.close();
  }
});

ftest('World.grist City: references by their visible column, numbers by their decimals', async () => {
  const lines = await fixtureCsv('World.grist', 'City');
  assert.is(lines[0], "Name,Country,District,Population,Pop. '000");
  assert.equal(lines.slice(1, 6), [
    'Kabul,Afghanistan,Kabol,1780000,1780',
    'Qandahar,Afghanistan,Qandahar,237500,237.5',
    'Herat,Afghanistan,Herat,186800,186.8',
    'Mazar-e-Sharif,Afghanistan,Balkh,127800,127.8',
    'Amsterdam,Netherlands,Noord-Holland,731200,731.2',
  ]);
  assert.equal(
    (await fixtureCsv('World.grist', 'City', {header: 'colId'}))[0],
    'Name,Country,District,Population,PopulationK',
  );
  assert.equal((await fixtureCsv('World.grist', 'CountryLanguage')).slice(0, 3), [
    'Country,IsOfficial,Language,Percentage',
    'ABW,true,Dutch,5.3',
    'ABW,false,English,9.5',
  ]);
  const country = await fixtureCsv('World.grist', 'Country', {header: 'colId'});
  assert.is(country[0].split(',').slice(-3).join(','), 'Capital,Code2,Self');
  assert.ok(country[2].endsWith(',1,AF,Country[2]'), country[2]);
});

ftest('TypeEncoding.grist: dates, datetimes, references, lists, errors and records', async () => {
  const lines = await fixtureCsv('TypeEncoding.grist', 'Types', {header: 'colId'});
  assert.is(
    lines[0],
    'Reference,ReferenceList,Attachments,AnyDateTime,AnyRef,AnyDate,AnyAttachment,AnyRefList,RECORD,' +
      'Bool,Date,DateTime,Numeric,Text',
  );
  const {parse} = await import('csv-parse/sync');
  const rows = parse(lines.join('\n')) as string[][];
  const row = (id: number) => Object.fromEntries(rows[0].map((h, i) => [h, rows[id][i]]));
  assert.equal(
    {...row(3), RECORD: undefined},
    {
      Reference: 'Types[2]',
      ReferenceList: 'Types[2], Types[24]',
      Attachments: '1',
      AnyDateTime: '1990-08-21 13:19:40-04:00',
      AnyRef: 'Types[2]',
      AnyDate: '2020-07-02',
      AnyAttachment: '_grist_Attachments[[1]]',
      AnyRefList: 'Types[[2,24]]',
      RECORD: undefined,
      Bool: 'true',
      Date: '2020-07-01',
      DateTime: '2020-08-21 5:19pm',
      Numeric: '17.25',
      Text: 'Hello!',
    },
  );
  assert.match(
    row(3).RECORD,
    /^\{"AnyAttachment": _grist_Attachments\[\[1\]\], "AnyDate": 2020-07-02, "AnyDateTime": 1990-08-21T17:19:40.705Z, /,
  );
  assert.equal(
    {...row(2), RECORD: undefined},
    {
      Reference: 'No-Ref',
      ReferenceList: 'No-RefList',
      Attachments: 'No-Att',
      AnyDateTime: '#Invalid DateTime: Not-a-DateTime',
      AnyRef: '#AssertionError',
      AnyDate: '#Invalid Date: Not-a-Date',
      AnyAttachment: '#AssertionError',
      AnyRefList: '#AssertionError',
      RECORD: undefined,
      Bool: 'true',
      Date: 'Not-a-Date',
      DateTime: 'Not-a-DateTime',
      Numeric: 'Not-a-Number',
      Text: 'Errors',
    },
  );
  assert.equal(
    {...row(1), RECORD: undefined},
    {
      Reference: '',
      ReferenceList: '',
      Attachments: '',
      AnyDateTime: '',
      AnyRef: 'Types[0]',
      AnyDate: '',
      AnyAttachment: '_grist_Attachments[[]]',
      AnyRefList: 'Types[[]]',
      RECORD: undefined,
      Bool: 'false',
      Date: '',
      DateTime: '',
      Numeric: '0',
      Text: '',
    },
  );
});

ftest('Favorite_Films.grist (schema 25) and CursorWithRefLists1.grist', async () => {
  assert.equal((await fixtureCsv('Favorite_Films.grist', 'Films')).slice(0, 3), [
    'Title,Budget (millions),Release Date',
    'Toy Story,30.0,"November 22nd, 1995"',
    'Forrest Gump,55.0,"July 6th, 1994"',
  ]);
  assert.equal((await fixtureCsv('Favorite_Films.grist', 'Friends')).slice(0, 2), [
    'Name,Favorite Film,Age',
    'Roger,Forrest Gump,22',
  ]);
  assert.equal(await fixtureCsv('CursorWithRefLists1.grist', 'Items'), [
    'Tags,Name',
    '"b, a",Apple',
    '"b, c",Banana',
    '"c, b, a",Orange',
    'd,Papaya',
    '',
  ]);
});

ftest('reference displays agree with the gristHelper_Display values Grist stored', () => {
  let compared = 0;
  for (const name of FIXTURE_NAMES) {
    const doc = GristDoc.open(copyFixture(name));
    const meta = loadMeta(doc.db);
    for (const table of meta.userTables) {
      const plan = planTableExport(doc.db, table.tableId, meta);
      for (const col of plan.columns) {
        const c = table.byId.get(col.colId)!;
        const display = meta.colsByRef.get(Number(c.fields.displayCol) || 0)?.col;
        const visible = meta.colsByRef.get(Number(c.fields.visibleCol) || 0)?.col;
        if (!display || !visible) continue;
        const fmt = createFormatter({
          type: c.type,
          options: c.options,
          settings: meta.settings,
          visible: createFormatter({type: visible.type, options: visible.options, settings: meta.settings}),
        });
        const rows = doc.db
          .prepare(`SELECT "${c.colId}", "${display.colId}" FROM "${table.tableId}" ORDER BY id`)
          .raw()
          .all() as unknown[][];
        for (const [raw, shown] of rows) {
          assert.is(col.format(raw), fmt(display.decode(shown)), `${name} ${table.tableId}.${c.colId}`);
          compared++;
        }
      }
    }
    doc.close();
  }
  assert.ok(compared > 4000, String(compared));
});

// ---------------------------------------------------------------------------------------------
// Streaming

/** A table of `n` rows of ~200 bytes each. */
function bigDoc(n: number): GristDoc {
  const doc = GristDoc.create(tempPath('Big.grist'));
  doc.addTables([
    {
      id: 'Big',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Num', fields: {type: 'Numeric'}},
      ],
    },
  ]);
  doc.db.exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT ${n})
    INSERT INTO Big (id, manualSort, Name, Num) SELECT x, x, printf('row %d %.190c', x, 'x'), x * 0.5 FROM c`);
  return doc;
}

function gcFunction(): () => void {
  setFlagsFromString('--expose_gc');
  return runInNewContext('gc') as () => void;
}

test('a 300k-row export streams in chunks with bounded memory', async () => {
  const n = 300_000;
  const doc = bigDoc(n);
  const gc = gcFunction();
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = 0;
  let bytes = 0;
  let chunks = 0;
  let lines = 0;
  let firstChunkBytes = 0;
  for await (const chunk of exportTableDsv(doc, 'Big').body) {
    if (!chunks) firstChunkBytes = chunk.byteLength;
    chunks++;
    bytes += chunk.byteLength;
    for (const b of chunk) if (b === 10) lines++;
    if (chunks % 100 === 0) {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed - base);
    }
  }
  assert.is(lines, n + 1);
  assert.ok(bytes > 60e6, String(bytes));
  assert.ok(chunks > 500, String(chunks));
  assert.ok(firstChunkBytes < 200_000, String(firstChunkBytes));
  // What stays alive while streaming is a chunk or two, not the table (60+ MB of text).
  assert.ok(peak < 8e6, `retained ${peak} bytes while streaming`);
  doc.close();
});

test('a paused stream reads one snapshot and leaves the document writable', async () => {
  const doc = bigDoc(20_000);
  const it = exportTableDsv(doc, 'Big', {header: 'colId', chunkBytes: 1000}).body[Symbol.asyncIterator]();
  const first = await it.next();
  assert.ok(Buffer.from(first.value!).toString().startsWith('Name,Num\nrow 1 '));
  // The document's own connection is free: writes go through while the export is open.
  doc.addRecords('Big', [{Name: 'late', Num: 1}]);
  doc.db.prepare('DELETE FROM Big WHERE id <= 10000').run();
  let text = Buffer.from(first.value!).toString();
  for (let r = await it.next(); !r.done; r = await it.next()) text += Buffer.from(r.value).toString();
  const lines = text.split('\n');
  assert.is(lines.length, 20_002); // header, 20000 rows of the snapshot, final ''
  assert.ok(lines[20_000].startsWith('row 20000 '));
  assert.ok(!text.includes('late'));
  doc.close();
});

test('an abandoned stream closes its connection; an unread one opens none', async () => {
  const doc = bigDoc(5000);
  const it = exportTableDsv(doc, 'Big', {chunkBytes: 100}).body[Symbol.asyncIterator]();
  await it.next();
  await it.return!(undefined);
  exportTableDsv(doc, 'Big'); // never read
  // With no other connection left, switching journal mode (which needs exclusivity) succeeds.
  assert.is(doc.db.pragma('journal_mode = DELETE', {simple: true}), 'delete');
  doc.close();
});

test.run();
