/**
 * Beyond Grist (issue 42 §3): `POST /api/docs/{doc}/tables/{t}/import`, files imported into an
 * existing table (CSV in several encodings, XLSX built here with exceljs, JSON), every mode, the
 * mapping, the dry run, conversion problems, batches on both sides of their size, access; bad
 * files (truncated XLSX, a zip bomb, an unsupported type, a mapping that does not fit) answer 400
 * saying what is wrong. And `POST /api/workspaces/{wid}/import` of XLSX and JSON files.
 */
import {deflateRawSync} from 'node:zlib';
import ExcelJS from 'exceljs';
import * as assert from 'uvu/assert';
import {tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, ok, useWorld, type Target} from './world.js';

interface FilePart {
  name: string;
  content: string | Uint8Array;
  type?: string;
}

/** A multipart body: the file as `upload`, then plain fields. */
export function importForm(
  file: FilePart,
  fields: Record<string, string> = {},
): {body: Uint8Array; headers: Record<string, string>} {
  const boundary = `----gristlite-import-${Date.now()}`;
  const chunks: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${file.name}"\r\n` +
        `Content-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`,
    ),
    Buffer.from(file.content),
    Buffer.from('\r\n'),
  ];
  for (const [k, v] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    body: new Uint8Array(Buffer.concat(chunks)),
    headers: {'content-type': `multipart/form-data; boundary=${boundary}`},
  };
}

/** An XLSX workbook built by exceljs, as bytes. */
async function workbook(build: (wb: ExcelJS.Workbook) => void): Promise<Uint8Array> {
  const wb = new ExcelJS.Workbook();
  build(wb);
  return new Uint8Array(await wb.xlsx.writeBuffer());
}

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();
function crc32(buf: Buffer): number {
  let c = -1;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** A zip of the given entries (deflated), written by hand: `declare` overrides declared sizes. */
function zipOf(entries: Array<{name: string; data: Buffer; declare?: number}>): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const packed = deflateRawSync(e.data, {level: 9});
    const name = Buffer.from(e.name);
    const size = e.declare ?? e.data.length;
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(crc, 16);
    dir.writeUInt32LE(packed.length, 20);
    dir.writeUInt32LE(size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    central.push(dir, name);
    offset += 30 + name.length + packed.length;
  }
  const dirBuf = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirBuf.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dirBuf, end]);
}

export function importsSuite(target: Target): void {
  const s = areaSuite(target, 'imports');
  const world = useWorld(s, target, {
    GRISTLITE_IMPORT_BATCH_ROWS: '3',
    GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES: String(4 * 1024 * 1024),
    GRISTLITE_IMPORT_MAX_ROWS: '50',
  });
  let doc = '';
  const post = async (
    file: FilePart,
    fields: Record<string, string> = {},
    opts: {table?: string; key?: string; d?: string} = {},
  ) => {
    const {api, chimpy} = world();
    const {body, headers} = importForm(file, fields);
    return api.call('POST', `${tablePath(opts.d ?? doc, opts.table ?? 'People')}/import`, {
      key: opts.key ?? chimpy.key,
      body,
      headers,
    });
  };
  const rows = async (table = 'People', d = doc) => {
    const {api, chimpy} = world();
    return ok(await api.get(`${tablePath(d, table)}/records`, chimpy.as)).body.records.map((r: any) => ({
      id: r.id,
      ...r.fields,
    }));
  };

  s('setup: a table with typed columns and a formula', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Imports');
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {
              id: 'People',
              columns: [
                {id: 'Name', fields: {type: 'Text', label: 'Name'}},
                {id: 'Age', fields: {type: 'Numeric', label: 'Age'}},
                {id: 'Born', fields: {type: 'Date', label: 'Born'}},
                {id: 'Member', fields: {type: 'Bool', label: 'Member'}},
                {id: 'City_Name', fields: {type: 'Text', label: 'City Name'}},
                {id: 'Upper', fields: {type: 'Any', isFormula: true, formula: '$Name.upper()'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
  });

  s(
    'CSV append: columns matched by id or label, values converted, what does not convert kept and reported',
    async () => {
      const csv =
        'Name,Age,Born,Member,City Name,Extra\nAda,36,1815-12-10,true,London,x\nBob,old,1990-01-02,maybe,Paris,y\n';
      // A dry run answers what would happen and writes nothing.
      const dry = ok(await post({name: 'people.csv', content: csv, type: 'text/csv'}, {dryRun: 'true'})).body;
      assert.equal(
        {...dry, problems: undefined},
        {
          tableId: 'People',
          dryRun: true,
          mode: 'append',
          rows: 2,
          added: 2,
          updated: 0,
          unchanged: 0,
          removed: 0,
          columns: [
            {source: 'Name', target: 'Name'},
            {source: 'Age', target: 'Age'},
            {source: 'Born', target: 'Born'},
            {source: 'Member', target: 'Member'},
            {source: 'City Name', target: 'City_Name'},
          ],
          skipped: ['Extra'],
          problems: undefined,
        },
      );
      assert.equal(dry.problems, {
        Age: {count: 1, examples: [{row: 2, value: 'old'}]},
        Member: {count: 1, examples: [{row: 2, value: 'maybe'}]},
      });
      assert.equal(await rows(), [], 'a dry run writes nothing');
      const done = ok(await post({name: 'people.csv', content: csv})).body;
      assert.is(done.dryRun, false);
      assert.is(done.added, 2);
      assert.equal(await rows(), [
        {id: 1, Name: 'Ada', Age: 36, Born: -4861728000, Member: true, City_Name: 'London', Upper: 'ADA'},
        // Kept as Grist keeps a value that does not convert: the text itself (alt-text).
        {id: 2, Name: 'Bob', Age: 'old', Born: 631238400, Member: 'maybe', City_Name: 'Paris', Upper: 'BOB'},
      ]);
    },
  );

  s('batches: files on both sides of the batch size (3 here) import whole, in order', async () => {
    const {api, chimpy} = world();
    for (const n of [3, 4, 7]) {
      ok(
        await api.post(
          `/api/docs/${doc}/apply`,
          [
            ['RemoveRecord', 'People', 1],
            ['RemoveRecord', 'People', 2],
          ],
          chimpy.as,
        ),
      ).body;
      const all = (await rows()).map((r: any) => r.id);
      if (all.length) ok(await api.post(`${tablePath(doc, 'People')}/records/delete`, all, chimpy.as));
      const lines = Array.from({length: n}, (_, i) => `p${i},${i}`).join('\n');
      const res = ok(await post({name: 'n.csv', content: `Name,Age\n${lines}\n`})).body;
      assert.is(res.added, n);
      assert.equal(
        (await rows()).map((r: any) => [r.Name, r.Age]),
        Array.from({length: n}, (_, i) => [`p${i}`, i]),
      );
    }
  });

  s('upsert on a key: updated, unchanged, added; a repeated key updates what its first occurrence found', async () => {
    // The table holds p0..p6 with Age 0..6 (from the test before).
    const csv = 'Name,Age\np1,1\np2,20\nnew1,100\np3,3\nnew1,101\np4,40\n';
    const dry = ok(await post({name: 'u.csv', content: csv}, {mode: 'upsert', keys: 'Name', dryRun: '1'})).body;
    assert.equal([dry.rows, dry.added, dry.updated, dry.unchanged], [6, 1, 3, 2]);
    const before = await rows();
    assert.equal(await rows(), before);
    const res = ok(await post({name: 'u.csv', content: csv}, {mode: 'upsert', keys: '["Name"]'})).body;
    assert.equal([res.rows, res.added, res.updated, res.unchanged, res.removed], [6, 1, 3, 2, 0]);
    const after = await rows();
    assert.equal(
      after.map((r: any) => [r.Name, r.Age]),
      [
        ['p0', 0],
        ['p1', 1],
        ['p2', 20],
        ['p3', 3],
        ['p4', 40],
        ['p5', 5],
        ['p6', 6],
        ['new1', 101],
      ],
    );
    // Without repeated keys the matching is planned before the write (D108): the same answers.
    const plain = 'Name,Age\np0,0\np5,50\nnew2,7\n';
    const dry2 = ok(await post({name: 'u2.csv', content: plain}, {mode: 'upsert', keys: 'Name', dryRun: 'true'})).body;
    assert.equal([dry2.added, dry2.updated, dry2.unchanged], [1, 1, 1]);
    const res2 = ok(await post({name: 'u2.csv', content: plain}, {mode: 'upsert', keys: 'Name'})).body;
    assert.equal([res2.added, res2.updated, res2.unchanged], [1, 1, 1]);
    assert.equal((await rows()).map((r: any) => [r.Name, r.Age]).slice(-4), [
      ['p5', 50],
      ['p6', 6],
      ['new1', 101],
      ['new2', 7],
    ]);
    // Keys must be imported columns; upsert needs keys.
    isError(
      await post({name: 'u.csv', content: csv}, {mode: 'upsert'}),
      400,
      'mode upsert needs keys: the columns that find a row',
    );
    isError(
      await post({name: 'u.csv', content: csv}, {mode: 'upsert', keys: 'Born'}),
      400,
      'key column "Born" is not imported from the file (map a column of the file to it)',
    );
    isError(
      await post({name: 'u.csv', content: csv}, {mode: 'merge'}),
      400,
      'mode must be one of append, upsert, replace: merge',
    );
  });

  s("replace: the rows of the file instead of the table's, in one transaction", async () => {
    const res = ok(await post({name: 'r.csv', content: 'Name\nonly\n'}, {mode: 'replace'})).body;
    assert.equal([res.added, res.removed], [1, 9]);
    assert.equal(
      (await rows()).map((r: any) => r.Name),
      ['only'],
    );
    // A file that fails part-way (a row beyond GRISTLITE_IMPORT_MAX_ROWS, 50 here) changes nothing.
    const big = `Name\n${Array.from({length: 51}, (_, i) => `r${i}`).join('\n')}\n`;
    isError(
      await post({name: 'big.csv', content: big}, {mode: 'replace'}),
      400,
      'The file has more than 50 rows; at most that many are imported at once (GRISTLITE_IMPORT_MAX_ROWS)',
    );
    assert.equal(
      (await rows()).map((r: any) => r.Name),
      ['only'],
    );
  });

  s('mapping: chosen columns, skips, and a 400 saying what does not fit', async () => {
    const csv = 'Who,Years,Note\nCy,7,n\n';
    const res = ok(
      await post({name: 'm.csv', content: csv}, {mapping: JSON.stringify({Who: 'Name', Years: 'Age', Note: null})}),
    ).body;
    assert.equal(res.columns, [
      {source: 'Who', target: 'Name'},
      {source: 'Years', target: 'Age'},
    ]);
    assert.equal(res.skipped, ['Note']);
    assert.equal(
      (await rows()).slice(-1).map((r: any) => [r.Name, r.Age]),
      [['Cy', 7]],
    );
    isError(
      await post({name: 'm.csv', content: csv}, {mapping: JSON.stringify({Nope: 'Name'})}),
      400,
      'mapping names "Nope", which is not a column of the file (its columns: "Who", "Years", "Note")',
    );
    isError(
      await post({name: 'm.csv', content: csv}, {mapping: JSON.stringify({Who: 'Nope'})}),
      400,
      'mapping targets "Nope", which is not a column of People',
    );
    isError(
      await post({name: 'm.csv', content: csv}, {mapping: JSON.stringify({Who: 'Upper'})}),
      400,
      'mapping targets "Upper", a formula column of People: it cannot take values',
    );
    isError(
      await post({name: 'm.csv', content: csv}, {mapping: JSON.stringify({Who: 'Name', Years: 'Name'})}),
      400,
      'mapping sends two columns of the file to "Name"',
    );
    isError(await post({name: 'm.csv', content: csv}, {mapping: '{nope'}), 400, 'mapping must be JSON: {nope');
    isError(
      await post({name: 'm.csv', content: 'X,Y\n1,2\n'}),
      400,
      'No column of the file matches a column of People (the file\'s columns: "X", "Y"): give a mapping',
    );
    // Without a header row, columns are named by their letters.
    const noHeader = ok(
      await post(
        {name: 'h.csv', content: 'Dee,9\n'},
        {
          parseOptions: JSON.stringify({include_col_names_as_headers: false}),
          mapping: JSON.stringify({A: 'Name', B: 'Age'}),
        },
      ),
    ).body;
    assert.is(noHeader.added, 1);
    assert.equal(
      (await rows()).slice(-1).map((r: any) => [r.Name, r.Age]),
      [['Dee', 9]],
    );
    isError(
      await post({name: 'h.csv', content: 'Dee,9\n'}, {parseOptions: JSON.stringify({quote: "'"})}),
      400,
      'parseOptions.quote is not an option (delimiter, encoding, include_col_names_as_headers, sheet)',
    );
  });

  s('CSV in several encodings: UTF-8 with BOM, UTF-16 LE, Windows-1252, and one named in parseOptions', async () => {
    const text = 'Name,City Name\nZoë,Besançon\n';
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const latin = Buffer.from(text, 'latin1');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    for (const [name, content] of [
      ['bom.csv', bom],
      ['utf16.csv', utf16],
      ['latin.csv', latin],
    ] as const) {
      const res = ok(await post({name, content}, {mode: 'replace'})).body;
      assert.is(res.added, 1, name);
      assert.equal(
        (await rows()).map((r: any) => [r.Name, r.City_Name]),
        [['Zoë', 'Besançon']],
        name,
      );
    }
    // Greek in ISO-8859-7, which no detector guesses from so little text: named.
    const greek = Buffer.from([0x4e, 0x61, 0x6d, 0x65, 0x0a, 0xc1, 0xeb, 0xfd, 0xea, 0xe7, 0x0a]);
    ok(await post({name: 'el.csv', content: greek}, {mode: 'replace', parseOptions: '{"encoding": "iso-8859-7"}'}));
    assert.equal(
      (await rows()).map((r: any) => r.Name),
      ['Αλύκη'],
    );
    isError(
      await post({name: 'el.csv', content: greek}, {parseOptions: '{"encoding": "klingon"}'}),
      400,
      'Unknown encoding "klingon"',
    );
    // TSV by extension; a delimiter named.
    ok(await post({name: 't.tsv', content: 'Name\tAge\nTab\t3\n'}, {mode: 'replace'}));
    ok(await post({name: 's.csv', content: 'Name;Age\nSemi;4\n'}, {parseOptions: '{"delimiter": ";"}'}));
    assert.equal(
      (await rows()).map((r: any) => [r.Name, r.Age]),
      [
        ['Tab', 3],
        ['Semi', 4],
      ],
    );
  });

  s('XLSX: a sheet by name or the first; dates, booleans and formula results as values', async () => {
    const xlsx = await workbook((wb) => {
      const first = wb.addWorksheet('First');
      first.addRow(['Name', 'Age']);
      first.addRow(['One', 1]);
      const people = wb.addWorksheet('People sheet');
      people.addRow(['Name', 'Age', 'Born', 'Member']);
      people.addRow(['Ann', 41, new Date(Date.UTC(1983, 4, 6)), true]);
      people.addRow(['Ben', {formula: '20+2', result: 22}, new Date(Date.UTC(2001, 0, 2)), false]);
      people.getColumn(3).numFmt = 'yyyy-mm-dd';
    });
    const type = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const res = ok(await post({name: 'book.xlsx', content: xlsx, type}, {mode: 'replace', sheet: 'People sheet'})).body;
    assert.equal([res.rows, res.added, res.problems], [2, 2, {}]);
    assert.equal(
      (await rows()).map((r: any) => [r.Name, r.Age, r.Born, r.Member]),
      [
        ['Ann', 41, 421027200, true],
        ['Ben', 22, 978393600, false],
      ],
    );
    // Without a sheet, the first; by Content-Type alone when the name says nothing.
    ok(await post({name: 'upload', content: xlsx, type}, {mode: 'replace'}));
    assert.equal(
      (await rows()).map((r: any) => [r.Name, r.Age]),
      [['One', 1]],
    );
    isError(
      await post({name: 'book.xlsx', content: xlsx}, {sheet: 'Nope'}),
      400,
      'The XLSX file has no sheet "Nope" (its sheets: "First", "People sheet")',
    );
  });

  s(
    'bad files answer 400 saying what is wrong: truncated XLSX, a zip bomb, not a zip, wrong type, bad JSON',
    async () => {
      const xlsx = await workbook((wb) => wb.addWorksheet('S').addRow(['Name']));
      isErrorLike(
        await post({name: 'cut.xlsx', content: xlsx.subarray(0, xlsx.length - 100)}),
        400,
        /^The XLSX file is damaged or truncated: /,
      );
      isErrorLike(
        await post({name: 'half.xlsx', content: xlsx.subarray(0, 200)}),
        400,
        /^The XLSX file is damaged or truncated: /,
      );
      // 64 MB of spaces in 64 KB: beyond GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES (4 MB here), stopped early.
      const bomb = zipOf([{name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(64 * 1024 * 1024, 32)}]);
      isError(
        await post({name: 'bomb.xlsx', content: bomb}),
        400,
        `The XLSX file unpacks to more than ${4 * 1024 * 1024} bytes (GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES): not imported`,
      );
      // One that lies about its size is caught too.
      const liar = zipOf([{name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(3 * 1024 * 1024, 32), declare: 100}]);
      isError(
        await post({name: 'liar.xlsx', content: liar}),
        400,
        'The XLSX file is damaged or truncated: entry xl/worksheets/sheet1.xml unpacks to more than the 100 bytes it declares',
      );
      isError(
        await post({name: 'fake.xlsx', content: 'Name\nx\n'}),
        400,
        'The XLSX file is not an XLSX spreadsheet: it is not a zip archive'.replace(
          'The XLSX file is not',
          'The file is not',
        ),
      );
      isError(
        await post({name: 'nosheet.xlsx', content: zipOf([{name: 'hello.txt', data: Buffer.from('hi')}])}),
        400,
        'The file is not an XLSX spreadsheet: it has no worksheets (xl/worksheets/*.xml)',
      );
      isError(
        await post({name: 'photo.png', content: 'x', type: 'image/png'}),
        400,
        'Unsupported file type ".png": import CSV, TSV, XLSX or JSON files (by extension or Content-Type)',
      );
      isError(
        await post({name: 'blob', content: 'x', type: 'image/png'}),
        400,
        'Unsupported file type "image/png": import CSV, TSV, XLSX or JSON files (by extension or Content-Type)',
      );
      isErrorLike(await post({name: 'bad.json', content: '[{"Name": '}), 400, /^Could not parse the JSON file: /);
      isError(await post({name: 'empty.csv', content: ''}), 400, 'The file holds no columns to import');
      isError(await post({name: 'empty.json', content: '[]'}), 400, 'The file holds no columns to import');
      isError(
        await post({name: 'list.json', content: '[{"Name": "a"}, 3]'}),
        400,
        'The JSON file must hold an array of objects: item 1 is 3',
      );
      // Not multipart, or no file.
      const {api, chimpy} = world();
      isError(
        await api.post(`${tablePath(doc, 'People')}/import`, {rows: []}, chimpy.as),
        400,
        'Send the file as multipart/form-data, in a field named "upload"',
      );
      isError(await post({name: 'x.csv', content: 'Name\nx\n'}, {}, {table: 'Nope'}), 404, 'Table not found "Nope"');
    },
  );

  s('JSON: an array of objects, keys as columns; nested values as JSON text', async () => {
    const json = JSON.stringify([
      {Name: 'Jay', Age: 5, Member: true, Extra: 1},
      {Name: 'Kay', Age: null, City_Name: {city: 'Oslo'}},
    ]);
    const res = ok(await post({name: 'p.json', content: json}, {mode: 'replace'})).body;
    assert.equal(res.skipped, ['Extra']);
    assert.equal(
      (await rows()).map((r: any) => [r.Name, r.Age, r.Member, r.City_Name]),
      [
        ['Jay', 5, true, ''],
        ['Kay', null, false, '{"city":"Oslo"}'],
      ],
    );
  });

  s('access: viewers 403; access rules check the write as the same record writes', async () => {
    const {api, chimpy, kiwi} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    isError(await post({name: 'x.csv', content: 'Name\nx\n'}, {}, {key: kiwi.key}), 403, 'No write access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    await world().addTableRule(chimpy, doc, 'People', 'user.Access != OWNER', '-C');
    const before = await rows();
    isErrorLike(
      await post({name: 'x.csv', content: 'Name\nx\n'}, {}, {key: kiwi.key}),
      403,
      /Blocked by table create access rules/,
    );
    assert.equal(await rows(), before);
    // Upsert matches on the whole table: refused to whoever cannot read all of it, as PUT /records.
    ok(
      await api.post(
        `/api/docs/${doc}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'People', colIds: 'Age'}],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
        ],
        chimpy.as,
      ),
    );
    isErrorLike(
      await post({name: 'x.csv', content: 'Name\nJay\n'}, {mode: 'upsert', keys: 'Name'}, {key: kiwi.key}),
      403,
      /Blocked by table read access rules/,
    );
  });

  s('POST /api/workspaces/{wid}/import: XLSX (each sheet a table, types guessed) and JSON', async () => {
    const {api, chimpy} = world();
    const wid = await world().homeWs(chimpy);
    const xlsx = await workbook((wb) => {
      const a = wb.addWorksheet('Orders');
      a.addRow(['Item', 'Qty', 'Day', 'Paid', 'Code']);
      a.addRow(['Lamp', 2, new Date(Date.UTC(2024, 0, 5)), true, 'A1']);
      a.addRow(['Desk', {formula: '1+2', result: 3}, new Date(Date.UTC(2024, 1, 6)), false, 'B2']);
      a.getColumn(3).numFmt = 'yyyy-mm-dd';
      const b = wb.addWorksheet('Empty');
      b.addRow([]);
      const c = wb.addWorksheet('Notes');
      c.addRow(['Text']);
      c.addRow(['hello']);
    });
    const form = importForm({name: 'Shop.xlsx', content: xlsx});
    const made = ok(await api.call('POST', `/api/workspaces/${wid}/import`, {key: chimpy.key, ...form})).body;
    assert.is(made.title, 'Shop');
    const tables = ok(await api.get(`/api/docs/${made.id}/tables`, chimpy.as)).body.tables.map((t: any) => t.id);
    assert.equal(tables, ['Orders', 'Notes']);
    const cols = ok(await api.get(`/api/docs/${made.id}/tables/Orders/columns`, chimpy.as)).body.columns;
    assert.equal(
      cols.map((c: any) => [c.id, c.fields.type]),
      [
        ['Item', 'Text'],
        ['Qty', 'Numeric'],
        ['Day', 'Date'],
        ['Paid', 'Bool'],
        ['Code', 'Text'],
      ],
    );
    assert.equal(
      (await rows('Orders', made.id)).map((r: any) => [r.Item, r.Qty, r.Day, r.Paid, r.Code]),
      [
        ['Lamp', 2, 1704412800, true, 'A1'],
        ['Desk', 3, 1707177600, false, 'B2'],
      ],
    );
    const json = importForm({
      name: 'items.json',
      content: JSON.stringify([
        {b: 'x', a: 1},
        {a: 2.5, b: 'y', c: true},
      ]),
    });
    const j = ok(await api.call('POST', `/api/workspaces/${wid}/import`, {key: chimpy.key, ...json})).body;
    const jcols = ok(await api.get(`/api/docs/${j.id}/tables/Items/columns`, chimpy.as)).body.columns;
    assert.equal(
      jcols.map((c: any) => [c.id, c.fields.type]),
      [
        ['a', 'Numeric'],
        ['b', 'Text'],
        ['c', 'Bool'],
      ],
    );
    assert.equal(
      (await rows('Items', j.id)).map((r: any) => [r.a, r.b, r.c]),
      [
        [1, 'x', false],
        [2.5, 'y', true],
      ],
    );
    const bomb = zipOf([{name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(64 * 1024 * 1024, 32)}]);
    isError(
      await api.call('POST', `/api/workspaces/${wid}/import`, {
        key: chimpy.key,
        ...importForm({name: 'b.xlsx', content: bomb}),
      }),
      400,
      `The XLSX file unpacks to more than ${4 * 1024 * 1024} bytes (GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES): not imported`,
    );
  });

  s.run();
}
