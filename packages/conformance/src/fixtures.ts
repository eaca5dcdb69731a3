/**
 * Real Grist documents (the shared fixtures, schema versions 25, 36 and 46) served through the
 * adapter: for every table of every fixture, GET /records and GET /data equal what the engine's
 * GristDoc reads from the file, and a few values per fixture (read with the sqlite3 CLI) are
 * pinned literally. Older schema versions are upgraded to 46 when first opened; newer ones (the
 * corpus's DownmigrateTest.grist: without the corpus that test fails under CI) are read-only.
 */
import {createHash} from 'node:crypto';
import {existsSync, readdirSync, readFileSync} from 'node:fs';
import {dirname, join} from 'node:path';
import * as assert from 'uvu/assert';
import {withFixtures} from '@gristlite/core/testing';
import {multipart} from './attachments.js';
import {TIMESHEETS, filterQs, fixturePath, importFixture, tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, ok, useWorld, type Target} from './world.js';

/** A value as it travels as JSON (Infinity becomes null, -0 becomes 0, ...). */
function asJson(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v));
}

export function fixturesSuite(target: Target): void {
  const s = areaSuite(target, 'fixtures');
  const world = useWorld(s, target);
  const test = withFixtures(s);
  const corpusTest = withFixtures(s, ['grist', 'corpus']);
  const files = () =>
    readdirSync(dirname(fixturePath('Hello.grist')))
      .filter((f) => f.endsWith('.grist'))
      .sort();
  const docs = new Map<string, string>();

  test('every fixture is served: /tables, and /records and /data of every table equal the file', async () => {
    const {api, chimpy} = world();
    assert.ok(files().length >= 6, `fixtures found: ${files().join(', ')}`);
    for (const file of files()) {
      const doc = await importFixture(world(), file);
      docs.set(file, doc);
      const tables = ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as), file).body.tables.map(
        (t: {id: string}) => t.id,
      );
      const grist = world().engine.openDoc(doc).grist;
      assert.equal(
        tables,
        grist.listTables().map((t) => t.id),
        `${file} tables`,
      );
      assert.ok(tables.length > 0, `${file} has tables`);
      for (const tableId of tables) {
        const what = `${file} ${tableId}`;
        const records = ok(await api.get(`${tablePath(doc, tableId)}/records`, chimpy.as), what).body;
        assert.equal(records, asJson(grist.fetchRecords(tableId)), `${what} /records`);
        const hidden = ok(await api.get(`${tablePath(doc, tableId)}/records?hidden=1`, chimpy.as), what).body;
        assert.equal(hidden, asJson(grist.fetchRecords(tableId, {hidden: true})), `${what} /records?hidden`);
        const data = ok(await api.get(`${tablePath(doc, tableId)}/data`, chimpy.as), what).body;
        assert.equal(data, asJson(grist.fetchColumns(tableId)), `${what} /data`);
        assert.equal(
          data.id,
          records.records.map((r: {id: number}) => r.id),
          `${what} same rows`,
        );
        const typed = ok(await api.get(`${tablePath(doc, tableId)}/records?cellFormat=typed`, chimpy.as), what).body;
        assert.equal(typed, asJson(grist.fetchRecords(tableId, {cellFormat: 'typed'})), `${what} typed`);
        const cols = ok(await api.get(`${tablePath(doc, tableId)}/columns`, chimpy.as), what).body.columns;
        assert.equal(cols, asJson(grist.listColumns(tableId)), `${what} /columns`);
      }
    }
  });

  test('Hello.grist: Timesheets exactly', async () => {
    const {api, chimpy} = world();
    const doc = docs.get('Hello.grist')!;
    assert.equal(ok(await api.get(`${tablePath(doc)}/records`, chimpy.as)).body, {records: TIMESHEETS});
    assert.equal(ok(await api.get(`${tablePath(doc)}/data?${filterQs({B: ['world']})}`, chimpy.as)).body, {
      id: [2],
      A: [''],
      B: ['world'],
      C: [''],
      D: [null],
      E: [''],
      manualSort: [2],
    });
  });

  test('TypeEncoding.grist: every type, alt-text, errors and encoded Any values', async () => {
    const {api, chimpy} = world();
    const types = tablePath(docs.get('TypeEncoding.grist')!, 'Types');
    const byId = new Map<number, any>(
      ok(await api.get(`${types}/records`, chimpy.as)).body.records.map((r: any) => [r.id, r]),
    );
    assert.equal([...byId.keys()], [1, 2, 24]);
    const r24 = byId.get(24).fields;
    assert.equal(
      [r24.Bool, r24.Date, r24.DateTime, r24.Numeric, r24.Text, r24.Reference, r24.ReferenceList, r24.Attachments],
      [true, 1593561600, 1598030380.705, 17.25, 'Hello!', 2, ['L', 2, 24], ['L', 1]],
    );
    assert.equal(
      [r24.AnyDate, r24.AnyDateTime, r24.AnyRef, r24.AnyRefList, r24.AnyAttachment],
      [
        ['d', 1593648000],
        ['D', 651259180.705, 'America/New_York'],
        ['R', 'Types', 2],
        ['r', 'Types', [2, 24]],
        ['r', '_grist_Attachments', [1]],
      ],
    );
    const r2 = byId.get(2);
    assert.equal(
      [r2.fields.Date, r2.fields.Numeric, r2.fields.Reference, r2.fields.ReferenceList, r2.fields.Attachments],
      ['Not-a-Date', 'Not-a-Number', 'No-Ref', 'No-RefList', 'No-Att'],
      'alt-text is kept as given',
    );
    assert.equal(r2.errors, {
      AnyDate: 'InvalidTypedValue',
      AnyDateTime: 'InvalidTypedValue',
      AnyRef: 'AssertionError',
      AnyRefList: 'AssertionError',
      AnyAttachment: 'AssertionError',
    });
    assert.equal(byId.get(1).fields.ReferenceList, null);
    const typed = ok(await api.get(`${types}/records?cellFormat=typed&${filterQs({id: [24]})}`, chimpy.as)).body
      .records[0].fields;
    assert.equal(
      [typed.Date, typed.DateTime, typed.Reference, typed.ReferenceList, typed.Attachments],
      [
        ['d', 1593561600],
        ['D', 1598030380.705, 'America/New_York'],
        ['R', 'Types', 2],
        ['r', 'Types', [2, 24]],
        ['r', '_grist_Attachments', [1]],
      ],
    );
    const data = ok(await api.get(`${types}/data?${filterQs({id: [2]})}`, chimpy.as)).body;
    assert.equal(
      [data.AnyDate, data.AnyRef],
      [[['E', 'InvalidTypedValue', 'Date', 'Not-a-Date']], [['E', 'AssertionError']]],
      '/data keeps errors raw',
    );
  });

  test('GridWithAllFields.grist: widgets, Choice/ChoiceList, Ref/RefList, DateTime with a zone', async () => {
    const {api, chimpy} = world();
    const t = tablePath(docs.get('GridWithAllFields.grist')!);
    const [r1, r2] = ok(await api.get(`${t}/records`, chimpy.as)).body.records;
    assert.equal(
      [
        r1.fields.TextBox,
        r1.fields.Numeric_TextBox,
        r1.fields.Integer_TextBox,
        r1.fields.Checkbox,
        r1.fields.Choice,
        r1.fields.Choice_List,
        r1.fields.Reference,
        r1.fields.Reference_List,
        r1.fields.Attachment,
        r1.fields.Date,
        r1.fields.DateTime,
      ],
      [
        'textbox text',
        3.14159265359,
        42,
        true,
        'One',
        ['L', 'Two', 'Three'],
        1,
        ['L', 1, 2],
        ['L', 1, 2],
        1774224000,
        1774159200,
      ],
    );
    assert.equal(
      [
        r2.fields.TextBox,
        r2.fields.Integer_TextBox,
        r2.fields.Checkbox,
        r2.fields.Choice_List,
        r2.fields.Reference_List,
      ],
      ['', 0, false, null, ['L', 1]],
    );
    const cols = ok(await api.get(`${t}/columns`, chimpy.as)).body.columns;
    const dt = cols.find((c: any) => c.id === 'DateTime').fields.type;
    assert.match(dt, /^DateTime:/);
  });

  test('CursorWithRefLists1.grist: Ref and RefList across tables', async () => {
    const {api, chimpy} = world();
    const doc = docs.get('CursorWithRefLists1.grist')!;
    assert.equal(ok(await api.get(`${tablePath(doc, 'Tags')}/records?limit=1`, chimpy.as)).body.records, [
      {id: 4, fields: {Tag: 'a'}},
    ]);
    const items = ok(await api.get(`${tablePath(doc, 'Items')}/data`, chimpy.as)).body;
    assert.equal(
      [items.Name.slice(0, 3), items.Tags.slice(0, 3)],
      [
        ['Apple', 'Banana', 'Orange'],
        [
          ['L', 5, 4],
          ['L', 5, 6],
          ['L', 6, 5, 4],
        ],
      ],
    );
    assert.equal(
      ok(await api.get(`${tablePath(doc, 'Selector')}/records?cellFormat=typed`, chimpy.as)).body.records[0].fields.Tag,
      ['R', 'Tags', 4],
    );
  });

  test('World.grist (schema 36): large tables, formulas, refs, sort and filter', async () => {
    const {api, chimpy} = world();
    const doc = docs.get('World.grist')!;
    const city = ok(await api.get(`${tablePath(doc, 'City')}/data`, chimpy.as)).body;
    assert.is(city.id.length, 4079);
    assert.equal(ok(await api.get(`${tablePath(doc, 'City')}/records?limit=1`, chimpy.as)).body.records, [
      {id: 1, fields: {Name: 'Kabul', District: 'Kabol', Population: 1780000, Country: 2, PopulationK: 1780}},
    ]);
    const aruba = ok(await api.get(`${tablePath(doc, 'Country')}/records?${filterQs({Code: ['ABW']})}`, chimpy.as)).body
      .records;
    assert.equal(
      [aruba.length, aruba[0].fields.Name, aruba[0].fields.IndepYear, aruba[0].fields.Capital],
      [1, 'Aruba', '', 129],
    );
    assert.is(ok(await api.get(`${tablePath(doc, 'Country')}/data`, chimpy.as)).body.id.length, 239);
    assert.is(ok(await api.get(`${tablePath(doc, 'CountryLanguage')}/data`, chimpy.as)).body.id.length, 984);
    const biggest = ok(await api.get(`${tablePath(doc, 'City')}/records?sort=-Population&limit=1`, chimpy.as)).body
      .records[0].fields.Name;
    assert.is(biggest, 'Mumbai (Bombay)');
  });

  test('Favorite_Films.grist (schema 25): read as stored', async () => {
    const {api, chimpy} = world();
    const doc = docs.get('Favorite_Films.grist')!;
    assert.equal(ok(await api.get(`${tablePath(doc, 'Films')}/records?limit=2`, chimpy.as)).body.records, [
      {id: 1, fields: {Title: 'Toy Story', Budget_millions: 30, Release_Date: 816998400}},
      {id: 2, fields: {Title: 'Forrest Gump', Budget_millions: 55, Release_Date: 773452800}},
    ]);
    assert.is(ok(await api.get(`${tablePath(doc, 'Films')}/data`, chimpy.as)).body.id.length, 6);
    assert.equal(ok(await api.get(`${tablePath(doc, 'Friends')}/records?limit=1`, chimpy.as)).body.records, [
      {id: 1, fields: {Name: 'Roger', Favorite_Film: 2, Age: '22'}},
    ]);
    assert.equal(
      ok(await api.get(`${tablePath(doc, 'Performances')}/records?limit=1&hidden=1`, chimpy.as)).body.records[0].fields,
      {manualSort: 1, Actor: 'Tom Hanks', Film: 1, Character: 'Woody', gristHelper_Display: 'Toy Story'},
    );
  });

  test('older schema versions are upgraded to 46 and take writes; a current one takes writes', async () => {
    const {api, chimpy} = world();
    for (const [file, table] of [
      ['World.grist', 'City'],
      ['Favorite_Films.grist', 'Films'],
    ]) {
      const doc = docs.get(file)!;
      assert.is(world().engine.openDoc(doc).grist.schemaVersion, 46, file);
      const added = ok(await api.post(`${tablePath(doc, table)}/records`, {records: [{}]}, chimpy.as), file).body
        .records[0].id;
      ok(await api.post(`/api/docs/${doc}/tables`, {tables: [{columns: [{}]}]}, chimpy.as), file);
      ok(await api.post(`${tablePath(doc, table)}/records/delete`, [added], chimpy.as), file);
    }
    // A current-version fixture takes writes.
    const hello = docs.get('Hello.grist')!;
    assert.equal(ok(await api.post(`${tablePath(hello)}/records`, {records: [{fields: {A: 'new'}}]}, chimpy.as)).body, {
      records: [{id: 5}],
    });
    isError(
      await api.post(`${tablePath(hello)}/records`, {records: [{fields: {E: 'x'}}]}, chimpy.as),
      400,
      "Error manipulating data: [Sandbox] ValueError Can't save value to formula column E",
    );
  });

  // DownmigrateTest.grist (schema 999999), from the corpus beside the fixtures.
  corpusTest('a newer schema version (DownmigrateTest.grist) is read-only and never changed', async () => {
    const {api, chimpy} = world();
    const newer = join(dirname(fixturePath('Hello.grist')), '../grist-corpus/DownmigrateTest.grist');
    assert.ok(existsSync(newer), `${newer} is in the corpus`);
    const doc = await importFixture(world(), '../grist-corpus/DownmigrateTest.grist');
    const before = createHash('sha256')
      .update(readFileSync(world().docPath(doc)))
      .digest('hex');
    const tables = ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body.tables as Array<{id: string}>;
    assert.ok(tables.length > 0);
    isErrorLike(
      await api.post(`${tablePath(doc, tables[0].id)}/records`, {records: [{}]}, chimpy.as),
      400,
      /schema version 999999, newer than gristlite's 46/,
    );
    isErrorLike(await api.post(`/api/docs/${doc}/tables`, {tables: [{columns: [{}]}]}, chimpy.as), 400, /999999.*46/);
    const after = createHash('sha256')
      .update(readFileSync(world().docPath(doc)))
      .digest('hex');
    assert.is(after, before, 'DownmigrateTest.grist is unchanged');
    // Uploaded, it is imported and the answer says it will be read-only, and why.
    const {body, headers} = multipart([{name: 'Newer.grist', content: readFileSync(newer)}]);
    const imported = ok(
      await api.call('POST', `/api/workspaces/${await world().homeWs(chimpy)}/import`, {
        key: chimpy.key,
        body,
        headers,
      }),
    ).body;
    assert.is(imported.title, 'Newer');
    assert.match(
      imported.readOnly,
      /^Document has schema version 999999, newer than gristlite's 46: it is served read-only$/,
    );
    isErrorLike(
      await api.post(`${tablePath(imported.id, tables[0].id)}/records`, {records: [{}]}, chimpy.as),
      400,
      /999999/,
    );
  });

  s.run();
}
