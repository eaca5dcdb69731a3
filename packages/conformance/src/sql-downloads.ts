/**
 * Read-only SQL (SPEC §14, §19 items 20-21) and downloads (§6): the whole `.grist` file (with
 * nohistory/template), CSV/TSV/DSV and the table schema (§19 "Extra checks").
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import ExcelJS from 'exceljs';
import * as assert from 'uvu/assert';
import {addFoo, newTimesheets, tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, isInvalidPayload, ok, useWorld, type Target} from './world.js';

const SQL_ROWS = [
  {fields: {id: 1, manualSort: 1, A: 'hello', B: '', C: '', D: null, E: 'HELLO'}},
  {fields: {id: 2, manualSort: 2, A: '', B: 'world', C: '', D: null, E: ''}},
  {fields: {id: 3, manualSort: 3, A: '', B: '', C: '', D: null, E: ''}},
  {fields: {id: 4, manualSort: 4, A: '', B: '', C: '', D: null, E: ''}},
];

export function sqlDownloadsSuite(target: Target): void {
  const s = areaSuite(target, 'sql-downloads');
  const world = useWorld(s, target);
  let doc = '';
  let tmp = '';
  s.before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'gl-conf-dl-'));
  });
  s.after(() => {
    rmSync(tmp, {recursive: true, force: true});
  });

  s('SQL basics: GET ?q and POST with args; payload errors (item 20)', async () => {
    const {api, chimpy} = world();
    doc = await newTimesheets(world());
    const sql = `/api/docs/${doc}/sql`;
    assert.equal(ok(await api.get(`${sql}?q=select+*+from+Table1+order+by+id`, chimpy.as)).body, {
      statement: 'select * from Table1 order by id',
      records: SQL_ROWS,
    });
    assert.equal(ok(await api.post(sql, {sql: 'select A from Table1 where id = ?', args: [1]}, chimpy.as)).body, {
      statement: 'select A from Table1 where id = ?',
      records: [{fields: {A: 'hello'}}],
    });
    assert.equal(
      ok(await api.post(sql, {sql: 'select A from Table1 where id = 2', args: null}, chimpy.as)).body.records,
      [{fields: {A: ''}}],
    );
    // The statement is echoed as sent, trailing ';' included.
    assert.equal(
      ok(await api.get(`${sql}?q=${encodeURIComponent('select id from Table1 where id < 3;')}`, chimpy.as)).body,
      {statement: 'select id from Table1 where id < 3;', records: [{fields: {id: 1}}, {fields: {id: 2}}]},
    );
    isInvalidPayload(await api.post(sql, {nosql: 'select * from Table1'}, chimpy.as), 'Error: body.sql is missing');
    isError(await api.get(sql, chimpy.as), 400, 'q parameter is required');
    isErrorLike(await api.get(`${sql}?q=select+*+from+Foo`, chimpy.as), 400, /no such table: Foo/);
    isErrorLike(await api.get(`${sql}?q=select+nope+from+Table1`, chimpy.as), 400, /no such column: nope/);
    // Metadata tables can be queried; values are raw SQLite values.
    assert.equal(ok(await api.get(`${sql}?q=select+tableId+from+_grist_Tables`, chimpy.as)).body.records, [
      {fields: {tableId: 'Table1'}},
    ]);
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {
              id: 'Raw',
              columns: [
                {id: 'Bo', fields: {type: 'Bool'}},
                {id: 'CL', fields: {type: 'ChoiceList'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${tablePath(doc, 'Raw')}/records`,
        {records: [{fields: {Bo: true, CL: ['L', 'a', 'b']}}]},
        chimpy.as,
      ),
    );
    assert.equal(ok(await api.get(`${sql}?q=select+Bo,CL+from+Raw`, chimpy.as)).body.records, [
      {fields: {Bo: 1, CL: '["a","b"]'}},
    ]);
    ok(await api.post(`${tablePath(doc, '_grist_Tables')}/data/delete`, [2], chimpy.as));
  });

  s('SQL restrictions: what passes and what is 400; timeout (item 21)', async () => {
    const {api, chimpy} = world();
    const post = (sql: string, extra: Record<string, unknown> = {}) =>
      api.post(`/api/docs/${doc}/sql`, {sql, ...extra}, chimpy.as);
    for (const q of [
      'select * from Table1',
      '  SeLeCT * from Table1',
      'with results as (select 1) select * from results',
    ]) {
      ok(await post(q), q);
    }
    for (const q of [
      'delete from Table1',
      '',
      "delete from Table1 where 'selecty' = 'selecty'",
      "update Table1 set A = 'selecty'",
      "pragma data_store_directory = 'selecty'",
      'create table selecty(x, y)',
      "attach database 'selecty' AS test",
      'select * from Table1; delete from Table1',
    ]) {
      const res = await post(q);
      assert.is(res.status, 400, `${JSON.stringify(q)} gives ${res.status} ${res.text}`);
      assert.type(res.body.error, 'string');
    }
    isError(await post('delete from Table1'), 400, 'only select statements are supported');
    isError(await post(''), 400, 'only select statements are supported');
    const sneaky = ok(await post('select * from Table1); delete from Table1 where id in (select id from Table1'));
    assert.equal(sneaky.body.records, SQL_ROWS);
    assert.is(ok(await api.get(`${tablePath(doc)}/records`, chimpy.as)).body.records.length, 4, 'nothing was deleted');
    const slow = 'with recursive r(i) as (select 1 union all select i + 1 from r) select count(*) from r';
    const started = Date.now();
    isErrorLike(await post(slow, {timeout: 10}), 400, /database interrupt/);
    assert.ok(Date.now() - started < 5000, 'the timeout cut the statement short');
    ok(await post('select count(*) from Table1'), 'the doc still answers after a killed statement');
  });

  s('SQL parameters and statements as Grist binds them (issue 15)', async () => {
    const {api, chimpy} = world();
    const post = (sql: string, args?: unknown[]) => api.post(`/api/docs/${doc}/sql`, {sql, args}, chimpy.as);
    // Numbered parameters take their own position in args.
    assert.equal(ok(await post('select ?2 as b, ?1 as a', [1, 2])).body.records, [{fields: {b: 2, a: 1}}]);
    assert.equal(ok(await post('select ?2 as b', [1, 2])).body.records, [{fields: {b: 2}}]);
    // Too few args bind null, as Grist's driver does.
    assert.equal(ok(await post('select ? as a, ? as b', [1])).body.records, [{fields: {a: 1, b: null}}]);
    assert.equal(ok(await post('select ?3 as c, :x as x', [7])).body.records, [{fields: {c: null, x: null}}]);
    assert.equal(ok(await post('select A from Table1 where id = ?')).body.records, []);
    // Two statements: SQLite's own error, as Grist reports it.
    isError(await post('select 1; select 2'), 400, 'SQLITE_ERROR: near ";": syntax error');
    isError(await post('select 1;;'), 400, 'SQLITE_ERROR: near ";": syntax error');
    // A string holding a `?` is not a parameter.
    assert.equal(ok(await post("select '?' as q, ? as a", [3])).body.records, [{fields: {q: '?', a: 3}}]);
  });

  s('SQL access: strangers 403, viewers 200, owners only once access rules exist', async () => {
    const {api, chimpy, kiwi} = world();
    const q = `/api/docs/${doc}/sql?q=select+A+from+Table1+where+id=1`;
    isError(await api.get(q, kiwi.as), 403, 'No view access');
    isError(await api.post(`/api/docs/${doc}/sql`, {sql: 'select 1'}, kiwi.as), 403, 'No view access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    assert.equal(ok(await api.get(q, kiwi.as)).body.records, [{fields: {A: 'hello'}}]);
    const rules = await world().newDoc(chimpy, await world().homeWs(chimpy), 'WithRules');
    await world().share(chimpy, `/api/docs/${rules}`, {[kiwi.email]: 'viewers'});
    ok(await api.get(`/api/docs/${rules}/sql?q=select+1`, kiwi.as));
    await world().addTableRule(chimpy, rules, 'Table1', 'user.Access != OWNER');
    const denied = await api.get(`/api/docs/${rules}/sql?q=select+1`, kiwi.as);
    assert.is(denied.status, 403, 'decision 9: a doc with access rules is owners-only');
    ok(await api.get(`/api/docs/${rules}/sql?q=select+1`, chimpy.as));
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
  });

  s("GET /download: a .grist file that opens, with the doc's tables; nohistory, template, title, dryrun", async () => {
    const {api, chimpy, kiwi} = world();
    await addFoo(world(), doc);
    const open = (buf: Buffer, name: string) => {
      const path = join(tmp, name);
      writeFileSync(path, buf);
      return new Database(path, {readonly: true, fileMustExist: true});
    };
    const res = ok(await api.get(`/api/docs/${doc}/download`, chimpy.as));
    assert.is(res.headers['content-type'], 'application/x-sqlite3');
    assert.is(res.headers['content-disposition'], 'attachment; filename="Timesheets.grist"');
    assert.is(res.raw.subarray(0, 16).toString('latin1'), 'SQLite format 3\u0000');
    let db = open(res.raw, 'full.grist');
    try {
      assert.equal(
        (db.prepare('SELECT tableId FROM _grist_Tables ORDER BY id').all() as any[]).map((r) => r.tableId),
        ['Table1', 'Foo'],
      );
      assert.equal(db.prepare('SELECT id, A, B, C, D, E FROM Table1 ORDER BY id').all(), [
        {id: 1, A: 'hello', B: '', C: '', D: null, E: 'HELLO'},
        {id: 2, A: '', B: 'world', C: '', D: null, E: ''},
        {id: 3, A: '', B: '', C: '', D: null, E: ''},
        {id: 4, A: '', B: '', C: '', D: null, E: ''},
      ]);
      assert.equal(
        (db.prepare('SELECT A FROM Foo ORDER BY id').all() as any[]).map((r) => r.A),
        ['Santa', 'Bob', 'Alice', 'Felix'],
      );
      assert.is((db.prepare('SELECT schemaVersion FROM _grist_DocInfo').get() as any).schemaVersion, 46);
      assert.is(db.pragma('journal_mode', {simple: true}), 'delete', 'one self-contained file');
    } finally {
      db.close();
    }
    db = open(ok(await api.get(`/api/docs/${doc}/download?template=1`, chimpy.as)).raw, 'template.grist');
    try {
      assert.equal(
        (db.prepare('SELECT tableId FROM _grist_Tables ORDER BY id').all() as any[]).map((r) => r.tableId),
        ['Table1', 'Foo'],
      );
      assert.is((db.prepare('SELECT count(*) AS n FROM Table1').get() as any).n, 0, 'template drops the data');
      assert.is((db.prepare('SELECT count(*) AS n FROM Foo').get() as any).n, 0);
      assert.ok(
        (db.prepare('SELECT count(*) AS n FROM _gristsys_ActionHistory').get() as any).n <= 1,
        'and the history',
      );
      assert.equal(
        (db.prepare('SELECT colId FROM _grist_Tables_column WHERE parentId = 1 ORDER BY parentPos').all() as any[]).map(
          (r) => r.colId,
        ),
        ['manualSort', 'A', 'B', 'C', 'D', 'E'],
        'the columns stay',
      );
    } finally {
      db.close();
    }
    db = open(ok(await api.get(`/api/docs/${doc}/download?nohistory=1`, chimpy.as)).raw, 'nohistory.grist');
    try {
      assert.is((db.prepare('SELECT count(*) AS n FROM Table1').get() as any).n, 4, 'nohistory keeps the data');
      assert.ok(
        (db.prepare('SELECT count(*) AS n FROM _gristsys_ActionHistory').get() as any).n <= 1,
        'and drops the history',
      );
    } finally {
      db.close();
    }
    const titled = ok(await api.get(`/api/docs/${doc}/download?title=Hours`, chimpy.as));
    assert.is(titled.headers['content-disposition'], 'attachment; filename="Hours.grist"');
    assert.equal(ok(await api.get(`/api/docs/${doc}/download?dryrun=1`, chimpy.as)).body, {dryRun: 'allowed'});
    isError(await api.get(`/api/docs/${doc}/download`, kiwi.as), 403, 'No view access');
    isError(await api.get('/api/docs/nosuchdoc/download', chimpy.as), 404, 'document not found');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    assert.is(
      ok(await api.get(`/api/docs/${doc}/download`, kiwi.as)).headers['content-type'],
      'application/x-sqlite3',
      'a viewer may download a doc without rules',
    );
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
  });

  s('GET /download/csv, tsv, dsv: formatted values, headers, errors', async () => {
    const {api, chimpy, kiwi} = world();
    const dl = `/api/docs/${doc}/download`;
    const csv = ok(await api.get(`${dl}/csv?tableId=Table1`, chimpy.as));
    assert.is(csv.text, 'A,B,C,D,E\nhello,,,,HELLO\n,world,,,\n,,,,\n,,,,\n');
    assert.is(csv.headers['content-type'], 'text/csv; charset=utf-8');
    assert.is(csv.headers['content-disposition'], 'attachment; filename="Timesheets-Table1.csv"');
    assert.is(ok(await api.get(`${dl}/csv?tableId=Foo`, chimpy.as)).text, 'A,B\nSanta,1\nBob,11\nAlice,2\nFelix,22\n');
    ok(
      await api.patch(
        `${tablePath(doc, 'Foo')}/columns`,
        {columns: [{id: 'A', fields: {label: 'Name', untieColIdFromLabel: true}}]},
        chimpy.as,
      ),
    );
    assert.is(ok(await api.get(`${dl}/csv?tableId=Foo`, chimpy.as)).text.split('\n')[0], 'Name,B', 'labels by default');
    assert.is(ok(await api.get(`${dl}/csv?tableId=Foo&header=colId`, chimpy.as)).text.split('\n')[0], 'A,B');
    assert.is(
      ok(await api.get(`${dl}/csv?tableId=Foo&title=Export`, chimpy.as)).headers['content-disposition'],
      'attachment; filename="Export.csv"',
    );
    const tsv = ok(await api.get(`${dl}/tsv?tableId=Foo&header=colId`, chimpy.as));
    assert.is(tsv.text, 'A\tB\nSanta\t1\nBob\t11\nAlice\t2\nFelix\t22\n');
    assert.match(tsv.headers['content-type'], /^text\/tab-separated-values/);
    const dsv = ok(await api.get(`${dl}/dsv?tableId=Foo&header=colId`, chimpy.as));
    assert.is(dsv.text, 'A💩B\nSanta💩1\nBob💩11\nAlice💩2\nFelix💩22\n');
    assert.match(dsv.headers['content-type'], /^text\/x-doo-separated-values/);
    isError(await api.get(`${dl}/csv`, chimpy.as), 400, 'tableId parameter is required');
    isError(await api.get(`${dl}/csv?tableId=MissingTableId`, chimpy.as), 404, 'Table MissingTableId not found.');
    isError(
      await api.get(`${dl}/csv?tableId=Foo&header=nope`, chimpy.as),
      400,
      'header parameter nope should be one of label,colId',
    );
    isError(await api.get(`${dl}/csv?tableId=Foo`, kiwi.as), 403, 'No view access');
    ok(await api.patch(`${tablePath(doc, 'Foo')}/columns`, {columns: [{id: 'A', fields: {label: 'A'}}]}, chimpy.as));
  });

  s('GET /download/table-schema: the shape, and its path serves the CSV', async () => {
    const {api, chimpy} = world();
    const res = ok(await api.get(`/api/docs/${doc}/download/table-schema?tableId=Foo`, chimpy.as));
    const {path, ...rest} = res.body;
    assert.equal(rest, {
      format: 'csv',
      mediatype: 'text/csv',
      encoding: 'utf-8',
      dialect: {delimiter: ',', doubleQuote: true},
      name: 'foo',
      title: 'Foo',
      schema: {
        fields: [
          {name: 'A', type: 'string', format: 'default'},
          {name: 'B', type: 'string', format: 'default'},
        ],
      },
    });
    assert.type(path, 'string');
    const url = new URL(path);
    // Grist's getResourceUrl(doc, {purpose: "api"}) (DocApi.ts:1249-1251): the doc's org in the path,
    // `docs` for a personal site (HomeDBManager.normalizeOrgDomain), however the request came.
    assert.match(url.pathname, /^\/o\/docs\/api\/docs\/[^/]+\/download\/csv$/);
    assert.is(url.searchParams.get('tableId'), 'Foo');
    assert.is(
      ok(await api.get(url.pathname + url.search, chimpy.as)).text,
      'A,B\nSanta,1\nBob,11\nAlice,2\nFelix,22\n',
    );
    isError(await api.get(`/api/docs/${doc}/download/table-schema`, chimpy.as), 400, 'tableId parameter is required');
    isError(
      await api.get(`/api/docs/${doc}/download/table-schema?tableId=Nope`, chimpy.as),
      404,
      'Table Nope not found.',
    );
  });

  s(
    'GET /download/table-schema: Choice and ChoiceList fields always carry constraints, {} without choices',
    async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Constraints');
      ok(
        await api.post(
          `${tablePath(d)}/columns`,
          {
            columns: [
              {id: 'Ch', fields: {type: 'Choice'}},
              {id: 'CL', fields: {type: 'ChoiceList'}},
              {id: 'Ch2', fields: {type: 'Choice', widgetOptions: '{"choices":["a","b"]}'}},
              {id: 'Tx', fields: {type: 'Text'}},
            ],
          },
          chimpy.as,
        ),
      );
      const fields = ok(await api.get(`/api/docs/${d}/download/table-schema?tableId=Table1`, chimpy.as)).body.schema
        .fields;
      // Grist writes `constraints: {enum: widgetOptions.choices}`, which JSON makes {} when there are none.
      assert.equal(fields.slice(3), [
        {name: 'Ch', type: 'string', constraints: {}},
        {name: 'CL', type: 'array', constraints: {}},
        {name: 'Ch2', type: 'string', constraints: {enum: ['a', 'b']}},
        {name: 'Tx', type: 'string', format: 'default'},
      ]);
    },
  );

  s('GET /download/xlsx: the whole document, one sheet per table; or one table with tableId (issue 15)', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Book');
    ok(
      await api.post(
        `/api/docs/${d}/tables`,
        {
          tables: [
            {
              id: 'People',
              columns: [
                {id: 'Name', fields: {type: 'Text', label: 'Full name'}},
                {id: 'Age', fields: {type: 'Int'}},
                {id: 'Ok', fields: {type: 'Bool'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `/api/docs/${d}/tables/People/records`,
        {records: [{fields: {Name: 'Ann', Age: 31, Ok: true}}, {fields: {Name: 'Bo', Age: 7}}]},
        chimpy.as,
      ),
    );
    const read = async (raw: Buffer) => {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.load(raw as any);
      return wb.worksheets.map((ws) => [
        ws.name,
        ws
          .getSheetValues()
          .slice(1)
          .map((r: any) => (r ?? []).slice(1)),
      ]);
    };
    const all = ok(await api.get(`/api/docs/${d}/download/xlsx`, chimpy.as));
    assert.is(all.headers['content-type'], 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    assert.is(all.headers['content-disposition'], 'attachment; filename="Book.xlsx"');
    assert.equal(await read(all.raw), [
      ['Table1', [['A', 'B', 'C']]],
      [
        'People',
        [
          ['Full name', 'Age', 'Ok'],
          ['Ann', 31, true],
          ['Bo', 7, false],
        ],
      ],
    ]);
    assert.is(
      ok(await api.get(`/api/docs/${d}/download/xlsx?title=Mine`, chimpy.as)).headers['content-disposition'],
      'attachment; filename="Mine.xlsx"',
    );
    const one = ok(await api.get(`/api/docs/${d}/download/xlsx?tableId=People&header=colId`, chimpy.as));
    assert.is(one.headers['content-disposition'], 'attachment; filename="Book-People.xlsx"');
    assert.equal(await read(one.raw), [
      [
        'People',
        [
          ['Name', 'Age', 'Ok'],
          ['Ann', 31, true],
          ['Bo', 7, false],
        ],
      ],
    ]);
    isError(await api.get(`/api/docs/${d}/download/xlsx?tableId=Nope`, chimpy.as), 404, 'Table Nope not found.');
    // Options without tableId (Grist's DocApiDownloads "tableId is missing and header present"):
    // the whole document, with the headers asked for.
    const byColId = ok(await api.get(`/api/docs/${d}/download/xlsx?header=colId`, chimpy.as));
    assert.is(byColId.headers['content-disposition'], 'attachment; filename="Book.xlsx"');
    assert.equal(await read(byColId.raw), [
      ['Table1', [['A', 'B', 'C']]],
      [
        'People',
        [
          ['Name', 'Age', 'Ok'],
          ['Ann', 31, true],
          ['Bo', 7, false],
        ],
      ],
    ]);
  });

  // gristlite only (issue 40 §5, D87). The answer is checked against the caller's own GET /tables,
  // /columns and /records, so that it cannot say more than they do.
  s('GET /download/json: every table as /columns and /records give it, from one snapshot, streamed', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Whole');
    const docPath = `/api/docs/${d}`;
    await world().share(chimpy, docPath, {[kiwi.email]: 'editors'});
    // Enough rows that the answer crosses the stream's 64 KB pieces several times.
    const many = Array.from({length: 3000}, (_, i) => ({fields: {A: `row ${i}`, B: i % 7, C: i % 3 === 0 ? 'x' : ''}}));
    ok(await api.post(`${tablePath(d)}/records`, {records: many}, chimpy.as));
    ok(
      await api.post(
        `${docPath}/apply`,
        [
          ['ModifyColumn', 'Table1', 'B', {type: 'Numeric'}],
          ['AddColumn', 'Table1', 'Inv', {isFormula: true, formula: '1 / ($B - 3)'}],
          ['AddTable', 'Small', [{id: 'Name'}, {id: 'Ref', type: 'Ref:Table1'}]],
          ['BulkAddRecord', 'Small', [null, null], {Name: ['a', 'b'], Ref: [1, 4]}],
          ['CreateViewSection', 1, 0, 'record', [3], null],
        ],
        chimpy.as,
      ),
    );
    const check = async (user: typeof chimpy) => {
      const res = ok(await api.get(`${docPath}/download/json`, user.as));
      assert.is(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.is(res.headers['content-disposition'], 'attachment; filename="Whole.json"');
      const tables = ok(await api.get(`${docPath}/tables`, user.as)).body.tables as {id: string}[];
      const expected = [];
      for (const {id} of tables.filter((t) => !t.id.startsWith('Table1_summary'))) {
        const columns = ok(await api.get(`${tablePath(d, id)}/columns`, user.as)).body.columns;
        const records = ok(await api.get(`${tablePath(d, id)}/records`, user.as)).body.records;
        expected.push({id, columns, records});
      }
      assert.equal(res.body, {tables: expected});
      return res.body.tables;
    };
    const whole = await check(chimpy);
    assert.equal(
      whole.map((t: {id: string}) => t.id),
      ['Table1', 'Small'],
      'the summary table is left out, as in the XLSX download',
    );
    assert.is(whole[0].records.length, 3000);
    assert.equal(whole[0].records[3], {
      id: 4,
      fields: {A: 'row 3', B: 3, C: 'x', Inv: null},
      errors: {Inv: 'ZeroDivisionError'},
    });
    // Under access rules: a hidden column, rows hidden by a row rule, cells censored in some rows.
    ok(
      await api.post(
        `${docPath}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: 'C'}],
          ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Table1', colIds: '*'}],
          ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Small', colIds: 'Name'}],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -2, aclFormula: 'user.Access != OWNER and rec.B == 5', permissionsText: '-R'},
          ],
          ['AddRecord', '_grist_ACLRules', null, {resource: -3, aclFormula: 'rec.id == 2', permissionsText: '-R'}],
        ],
        chimpy.as,
      ),
    );
    const seen = await check(kiwi);
    assert.equal(
      Object.keys(seen[0].records[0].fields),
      ['A', 'B', 'Inv'],
      'the hidden column is in neither columns nor records',
    );
    assert.ok(seen[0].records.length < 3000 && seen[0].records.every((r: {fields: {B: number}}) => r.fields.B !== 5));
    assert.equal(seen[1].records[1].fields.Name, ['C'], 'a censored cell');
    assert.is((await check(chimpy))[0].records.length, 3000, "the owner's answer keeps every row");
    isError(await api.get(`/api/docs/${d}/download/json`, world().charon.as), 403, 'No view access');
  });

  s("downloads naming an unknown widget (viewSection) answer Grist's 404, before anything else", async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Widgets');
    for (const kind of ['csv', 'tsv', 'dsv', 'xlsx', 'table-schema']) {
      isError(
        await api.get(`/api/docs/${d}/download/${kind}?tableId=Table1&viewSection=9999`, chimpy.as),
        404,
        'No record 9999 in table _grist_Views_section',
      );
      isError(
        await api.get(`/api/docs/${d}/download/${kind}?viewSection=x`, chimpy.as),
        400,
        'viewSection parameter cannot be understood as an integer: x',
      );
    }
    // Table1's raw widget exists: exporting a widget is what gristlite leaves out (decisions.md).
    isError(
      await api.get(`/api/docs/${d}/download/csv?tableId=Table1&viewSection=1`, chimpy.as),
      400,
      'viewSection parameter is not supported: gristlite exports whole tables (use tableId)',
    );
    // 0 is no widget, as in Grist.
    assert.is(ok(await api.get(`/api/docs/${d}/download/csv?tableId=Table1&viewSection=0`, chimpy.as)).text, 'A,B,C\n');
  });

  s.run();
}
