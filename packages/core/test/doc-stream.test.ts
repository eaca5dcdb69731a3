// Streamed answers (stream.ts, D61, D62): GET /records and GET /data streamed are byte-identical
// to the answers built whole, on every table of every fixture; one snapshot whatever is written
// meanwhile; the snapshot is let go at the end, when the reader stops, and at the time limit.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc, type PageEnd, type RecordQuery} from '../src/doc/index.js';
import {loadMeta} from '../src/doc/meta.js';
import {ReadCache} from '../src/doc/readcache.js';
import {StreamSlots} from '../src/doc/stream.js';
import {xlsxStream} from '../src/export/xlsx.js';
import {copyFixture, FIXTURE_NAMES, tempPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);
const ALWAYS = {minCells: 0, chunkChars: 512};

async function text(body: string | AsyncIterable<Uint8Array>): Promise<string> {
  if (typeof body === 'string') return body;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

function variants(doc: GristDoc, tableId: string): RecordQuery[] {
  const visible = Object.keys(doc.fetchRecords(tableId).records[0]?.fields ?? {});
  const out: RecordQuery[] = [{}, {hidden: true}, {cellFormat: 'typed'}, {limit: 2}, {limit: -1}];
  if (visible.length) {
    const first = visible[0];
    const value = doc.fetchRecords(tableId).records[0].fields[first];
    out.push(
      {sort: `-${first}`, limit: 2},
      {sort: visible, limit: -1},
      {sort: `${first}:naturalSort`, limit: 3, hidden: true},
      {filter: {[first]: [value ?? null]}, cellFormat: 'typed'},
      {sort: visible.map((c) => `-${c}`)},
    );
  }
  return out;
}

/** One read, streamed and whole, with the page end of each. */
async function compare(doc: GristDoc, tableId: string, q: RecordQuery, columns: boolean): Promise<void> {
  const pageA: PageEnd = {next: null};
  const pageB: PageEnd = {next: null};
  const streamed = columns
    ? await text(doc.streamColumnsJson(tableId, q, pageA, ALWAYS))
    : await text(doc.streamRecordsJson(tableId, q, pageA, ALWAYS));
  const whole = columns ? JSON.stringify(doc.fetchColumns(tableId, q, pageB)) : doc.fetchRecordsJson(tableId, q, pageB);
  const what = `${columns ? '/data' : '/records'} ${tableId} ${JSON.stringify(q)}`;
  assert.is(streamed, whole, what);
  assert.equal(pageA.next, pageB.next, `${what}: page end`);
}

for (const name of FIXTURE_NAMES) {
  ftest(`${name}: streamed /records and /data are byte-identical to whole answers`, async () => {
    // Without a read cache: each answer built, none served as another path's text.
    const doc = GristDoc.open(copyFixture(name), {readCache: new ReadCache(0)});
    try {
      for (const tableId of loadMeta(doc.db).userTables.map((t) => t.tableId)) {
        for (const q of variants(doc, tableId)) {
          await compare(doc, tableId, q, false);
          await compare(doc, tableId, q, true);
        }
      }
    } finally {
      doc.close();
    }
  });
}

/** A document of `rows` rows in `T` (Name, N); `cached: false` opens it without a read cache. */
function bigDoc(rows: number, {cached = true} = {}): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'N', fields: {type: 'Numeric'}},
      ],
    },
  ]);
  const recs = Array.from({length: rows}, (_, i) => ({Name: `name ${i}`, N: i + 0.5}));
  for (let i = 0; i < rows; i += 500) doc.addRecords('T', recs.slice(i, i + 500));
  if (cached) return doc;
  doc.close();
  return GristDoc.open(doc.path, {readCache: new ReadCache(0)});
}

/** Whether a reader holds back the WAL (a checkpoint cannot reset it). */
function readerHolds(doc: GristDoc): boolean {
  doc.updateRecords('T', [{id: 1, fields: {N: Math.random()}}]);
  const [r] = doc.db.pragma('wal_checkpoint(TRUNCATE)') as {busy: number}[];
  return r.busy === 1;
}

test('a stream is one snapshot: writes while it is read do not show', async () => {
  for (const columns of [false, true]) {
    const doc = bigDoc(3000, {cached: false});
    try {
      const q = {sort: '-N'};
      const before = columns ? JSON.stringify(doc.fetchColumns('T', q)) : doc.fetchRecordsJson('T', q);
      const body = columns
        ? doc.streamColumnsJson('T', q, undefined, ALWAYS)
        : doc.streamRecordsJson('T', q, undefined, ALWAYS);
      assert.type(body, 'object', 'streamed');
      const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
      const first = await it.next();
      assert.ok(!first.done);
      const chunks = [Buffer.from(first.value!)];
      // Every row changed, some removed, one added, mid-stream.
      doc.updateRecords(
        'T',
        Array.from({length: 3000}, (_, i) => ({id: i + 1, fields: {Name: 'changed', N: -i}})),
      );
      doc.removeRecords('T', [5, 6, 7]);
      doc.addRecords('T', [{Name: 'new', N: 1e9}]);
      for (let r = await it.next(); !r.done; r = await it.next()) chunks.push(Buffer.from(r.value));
      assert.ok(chunks.length > 2, `chunked (${chunks.length})`);
      assert.is(Buffer.concat(chunks).toString('utf8'), before);
    } finally {
      doc.close();
    }
  }
});

test('the snapshot is let go at the end, when the reader stops, and at the time limit', async () => {
  const doc = bigDoc(2000);
  try {
    assert.not.ok(readerHolds(doc), 'no reader yet');
    // Read to the end.
    const whole = doc.streamRecordsJson('T', {}, undefined, ALWAYS) as AsyncIterable<Uint8Array>;
    assert.ok(readerHolds(doc), 'held while streaming');
    await text(whole);
    assert.not.ok(readerHolds(doc), 'let go at the end');
    // A reader that stops (a client gone): the transport calls return().
    const it = (doc.streamRecordsJson('T', {}, undefined, ALWAYS) as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    await it.next();
    assert.ok(readerHolds(doc));
    await it.return!();
    assert.not.ok(readerHolds(doc), 'let go on return');
    // A reader too slow: the time limit ends it with an error (D62).
    const slow = (doc.streamColumnsJson('T', {}, undefined, {...ALWAYS, maxMs: 50}) as AsyncIterable<Uint8Array>)[
      Symbol.asyncIterator
    ]();
    await slow.next();
    assert.ok(readerHolds(doc));
    await new Promise((r) => setTimeout(r, 120));
    assert.not.ok(readerHolds(doc), 'let go at the time limit');
    try {
      await slow.next();
      assert.unreachable('the stream fails past its time limit');
    } catch (e) {
      assert.match((e as Error).message, /not finished within 50 ms/);
    }
  } finally {
    doc.close();
  }
});

test('a streamed answer read to its end answers the same read again, as text, until a write', async () => {
  const doc = bigDoc(3000);
  try {
    const page: PageEnd = {next: null};
    const q = {sort: '-N', limit: 1000};
    const first = await text(doc.streamRecordsJson('T', q, page, ALWAYS));
    const next = page.next;
    assert.ok(next, 'a page with more after it');
    const again: PageEnd = {next: null};
    const cached = doc.streamRecordsJson('T', q, again, ALWAYS);
    assert.type(cached, 'string', 'from the read cache');
    assert.is(cached, first);
    assert.equal(again.next, next, 'with where the page ended');
    assert.is(doc.fetchRecordsJson('T', q, again), first, 'the whole-built read shares it');
    doc.updateRecords('T', [{id: 3000, fields: {Name: 'written'}}]);
    const after = doc.streamRecordsJson('T', q, undefined, ALWAYS);
    assert.type(after, 'object', 'a write retires it');
    assert.match(await text(after), /"written"/);
    // A stream left before its end keeps nothing.
    doc.updateRecords('T', [{id: 3000, fields: {Name: 'again'}}]);
    const it = (doc.streamRecordsJson('T', {}, undefined, ALWAYS) as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    await it.next();
    await it.return!();
    assert.type(doc.streamRecordsJson('T', {}, undefined, ALWAYS), 'object', 'not kept when the reader stopped');
    // Written meanwhile: the stream is its snapshot, and no later read is answered with it.
    const stale = doc.streamRecordsJson('T', {}, undefined, ALWAYS);
    doc.updateRecords('T', [{id: 1, fields: {Name: 'meanwhile'}}]);
    assert.not.match(await text(stale), /meanwhile/);
    assert.match(await text(doc.streamRecordsJson('T', {}, undefined, ALWAYS)), /meanwhile/);
  } finally {
    doc.close();
  }
});

test('a streamed answer too large for the read cache is not kept', async () => {
  // 3000 rows x 3 cells x 8 characters is more than a quarter of 200 KB.
  const made = bigDoc(3000);
  made.close();
  const doc = GristDoc.open(made.path, {readCache: new ReadCache(200_000)});
  try {
    await text(doc.streamRecordsJson('T', {}, undefined, ALWAYS));
    assert.type(doc.streamRecordsJson('T', {}, undefined, ALWAYS), 'object', 'streamed again');
    const small = {limit: 100};
    await text(doc.streamRecordsJson('T', small, undefined, ALWAYS));
    assert.type(doc.streamRecordsJson('T', small, undefined, ALWAYS), 'string', 'a page that fits is kept');
  } finally {
    doc.close();
  }
});

test('streams beyond their slots answer 429; a slot frees at the end, when the reader stops, on an error', async () => {
  const doc = bigDoc(2000, {cached: false});
  try {
    const slots = new StreamSlots(1);
    const opts = {...ALWAYS, slots};
    const first = doc.streamRecordsJson('T', {}, undefined, opts);
    assert.type(first, 'object', 'streamed');
    assert.is(slots.open, 1);
    assert.throws(
      () => doc.streamRecordsJson('T', {sort: '-N'}, undefined, opts),
      (e: {status?: number; message: string}) => e.status === 429 && /Too many large reads/.test(e.message),
    );
    assert.throws(() => doc.streamColumnsJson('T', {}, undefined, opts), /Too many large reads/);
    await text(first);
    assert.is(slots.open, 0, 'freed at the end');
    const it = (doc.streamColumnsJson('T', {}, undefined, opts) as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    await it.next();
    assert.is(slots.open, 1);
    await it.return!();
    assert.is(slots.open, 0, 'freed when the reader stops');
    assert.throws(() => doc.streamRecordsJson('T', {sort: 'Nope'}, undefined, opts), /unknown column/);
    assert.is(slots.open, 0, 'a stream that fails to start holds none');
    assert.not.ok(readerHolds(doc));
  } finally {
    doc.close();
  }
});

test('/data streamed in batches of rows: byte-identical on both sides of each batch, with gaps in the ids, sorted, filtered, paged', async () => {
  // JSON_BATCH (512) rows a batch: tables of one row fewer and more than one and two batches, and
  // one with a run of more than a batch of ids removed and single ids removed here and there.
  for (const rows of [511, 512, 513, 1023, 1024, 1025, 2000]) {
    const doc = bigDoc(rows, {cached: false});
    try {
      if (rows === 2000) {
        doc.removeRecords('T', [...Array.from({length: 600}, (_, i) => 300 + i), 1, 513, 1024, 1999]);
      }
      const first = (doc.fetchRecords('T', {limit: 1}).records[0].fields.N as number) ?? 0;
      const queries: RecordQuery[] = [
        {},
        {cellFormat: 'typed'},
        {sort: '-N'},
        {sort: 'Name', limit: 700},
        {limit: 513},
        {filter: {N: [first, first + 1, 900.5, 1500.5]}},
      ];
      for (const q of queries) await compare(doc, 'T', q, true);
    } finally {
      doc.close();
    }
  }
});

test('small answers and open writes are not streamed; bad queries fail before any byte', () => {
  const doc = bigDoc(100, {cached: false});
  try {
    assert.type(doc.streamRecordsJson('T'), 'string', 'below minCells: the text itself');
    const big = doc.streamRecordsJson('T', {}, undefined, {minCells: 300});
    assert.type(big, 'object', '100 rows x 3 cells streams');
    void (big as AsyncIterableIterator<Uint8Array>).return!();
    assert.type(doc.streamRecordsJson('T', {limit: 10}, undefined, {minCells: 300}), 'string', 'a small page');
    assert.throws(() => doc.streamRecordsJson('T', {sort: 'Nope'}, undefined, ALWAYS), /unknown column/);
    assert.throws(() => doc.streamColumnsJson('Nope', {}, undefined, ALWAYS), /not found/);
    assert.not.ok(readerHolds(doc), 'a failed stream holds nothing');
  } finally {
    doc.close();
  }
});

test('an XLSX download read slowly leaves the document writable, and is one snapshot', async () => {
  const doc = bigDoc(20_000);
  try {
    const it = xlsxStream(doc.db, ['T'], 'label', undefined, doc.path)[Symbol.asyncIterator]();
    const chunks = [Buffer.from((await it.next()).value!)];
    // The download waits for its reader here; the document's own connection must not be held.
    doc.updateRecords('T', [{id: 1, fields: {Name: 'written meanwhile'}}]);
    assert.is(doc.fetchRecords('T', {limit: 1}).records[0].fields.Name, 'written meanwhile');
    for (let r = await it.next(); !r.done; r = await it.next()) chunks.push(Buffer.from(r.value));
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(Buffer.concat(chunks) as unknown as ArrayBuffer);
    const sheet = wb.getWorksheet('T')!;
    assert.is(sheet.rowCount, 20_001);
    assert.is(sheet.getRow(2).getCell(1).value, 'name 0', 'the snapshot from before the write');
  } finally {
    doc.close();
  }
});

test("XLSX: Date and DateTime cells are Excel dates, the wall-clock time in the column's zone (Grist's ExcelFormatter)", async () => {
  const doc = GristDoc.create(tempPath());
  try {
    doc.addTables([
      {
        id: 'D',
        columns: [
          {id: 'Day', fields: {type: 'Date', widgetOptions: '{"dateFormat":"DD/MM/YYYY"}'}},
          {id: 'At', fields: {type: 'DateTime:America/New_York'}},
          {id: 'Odd', fields: {type: 'Date'}},
        ],
      },
    ]);
    doc.addRecords('D', [{Day: 86400, At: 1700000000, Odd: 'yesterday'}]);
    const chunks: Buffer[] = [];
    for await (const c of xlsxStream(doc.db, ['D'], 'label')) chunks.push(Buffer.from(c));
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(Buffer.concat(chunks) as unknown as ArrayBuffer);
    const row = wb.getWorksheet('D')!.getRow(2);
    assert.equal(row.getCell(1).value, new Date('1970-01-02T00:00:00Z'));
    assert.is(row.getCell(1).numFmt, 'dd/mm/yyyy');
    // 2023-11-14T22:13:20Z is 17:13:20 in New York (UTC-5 in November).
    assert.equal(row.getCell(2).value, new Date('2023-11-14T17:13:20Z'));
    // (exceljs reads the escaped separators back without their backslashes.)
    assert.match(String(row.getCell(2).numFmt), /^yyyy\\?-mm\\?-dd h:mm am\/pm$/);
    assert.is(row.getCell(3).value, 'yesterday', 'a value that is not a date stays text');
  } finally {
    doc.close();
  }
});

test.run();
