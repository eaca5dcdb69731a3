// The document data endpoints over the in-process pipeline: SPEC §19 items 1-19 as requests.
import {copyFileSync, mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, type Handler} from '../src/index.js';
import {docDataRoutes} from '../src/routes/docdata.js';
import {fixture, withFixtures} from './helpers.js';

const s = suite('docdata');
const fixtureTest = withFixtures(s);
let dir = '';
let engine: Engine;
let handle: Handler;
let key = '';
let viewerKey = '';
let wid = 0;

interface Res {
  status: number;
  json: any;
  headers: Record<string, string>;
}

async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
  as = key,
): Promise<Res> {
  const h: Record<string, string> = {host: '127.0.0.1', authorization: `Bearer ${as}`, ...headers};
  let raw: Uint8Array | undefined;
  if (body !== undefined) {
    h['content-type'] = 'application/json';
    raw = new TextEncoder().encode(JSON.stringify(body));
  }
  const res = await handle({method, url, headers: h, body: raw});
  const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body as Uint8Array).toString();
  return {status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers};
}

const get = (url: string, headers?: Record<string, string>) => call('GET', url, undefined, headers);

function ok(res: Res): any {
  assert.is(res.status, 200, JSON.stringify(res.json));
  return res.json;
}

function err(res: Res, status: number, match: RegExp | string, userError?: string): void {
  assert.is(res.status, status, JSON.stringify(res.json));
  if (typeof match === 'string') {
    assert.is(res.json.error, match);
  } else {
    assert.match(res.json.error, match);
  }
  if (userError !== undefined) {
    assert.is(res.json.details?.userError, userError);
  }
}

/** A new doc (Table1 with empty A, B, C), or a copy of a fixture in its place. */
async function newDoc(fromFixture?: string): Promise<string> {
  const id = ok(await call('POST', `/api/workspaces/${wid}/docs`, {name: 'Doc'}));
  if (fromFixture) {
    copyFileSync(fixture(fromFixture), engine.docPath(id));
  }
  return id;
}

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-docdata-'));
  engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  key = await engine.home.setApiKey(user.id);
  const kiwi = await engine.home.ensureUser('kiwi@getgrist.com', 'Kiwi');
  viewerKey = await engine.home.setApiKey(kiwi.id);
  handle = createApiHandler(engine, {
    env: {},
    routes: docDataRoutes,
    onError: (e) => {
      throw e;
    },
  });
  const ws = ok(await get(`/api/orgs/docs-${user.id}/workspaces`));
  wid = ws.find((w: any) => w.name === 'Home').id;
});

s.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

fixtureTest('19.1 GET records, by tableId or tableRef, hidden', async () => {
  const doc = await newDoc('Hello.grist');
  const body = ok(await get(`/api/docs/${doc}/tables/Table1/records`));
  assert.equal(body.records[0], {id: 1, fields: {A: 'hello', B: '', C: '', D: null, E: 'HELLO'}});
  assert.equal(ok(await get(`/api/docs/${doc}/tables/1/records`)), body);
  assert.is(ok(await get(`/api/docs/${doc}/tables/Table1/records?hidden=true`)).records[0].fields.manualSort, 1);
  err(await get(`/api/docs/${doc}/tables/Typo1/records`), 404, 'Table not found "Typo1"');
  err(
    await get(`/api/docs/${doc}/tables/Table1/records?cellFormat=odd`),
    400,
    'cellFormat parameter odd should be one of normal,typed',
  );
});

fixtureTest('19.3 filters over GET and POST records/list', async () => {
  const doc = await newDoc('Hello.grist');
  const q = (f: unknown) => `/api/docs/${doc}/tables/Table1/data?filter=${encodeURIComponent(JSON.stringify(f))}`;
  assert.equal(ok(await get(q({B: ['world']}))), {
    id: [2],
    manualSort: [2],
    A: [''],
    B: ['world'],
    C: [''],
    D: [null],
    E: [''],
  });
  assert.equal(ok(await get(q({B: [''], A: ['']}))).id, [3, 4]);
  assert.equal(ok(await get(q({B: ['world'], C: ['Neptune']}))), {
    id: [],
    manualSort: [],
    A: [],
    B: [],
    C: [],
    D: [],
    E: [],
  });
  err(await get(q({BadCol: ['']})), 400, /BadCol/);
  err(await get(q({B: 'world'})), 400, /filter values must be arrays/);
  err(await get(`/api/docs/${doc}/tables/Table1/records?filter=%7Bnope`), 400, /filter/);
  const list = ok(await call('POST', `/api/docs/${doc}/tables/Table1/records/list`, {filter: {B: ['world']}}));
  assert.equal(
    list,
    ok(await get(`/api/docs/${doc}/tables/Table1/records?filter=${encodeURIComponent('{"B":["world"]}')}`)),
  );
  err(await call('POST', `/api/docs/${doc}/tables/Table1/records/list`, {sort: 'A'}), 400, 'Invalid payload');
  err(
    await call('POST', `/api/docs/${doc}/tables/Table1/records/list`, {filter: {B: 'world'}}),
    400,
    'Invalid payload',
  );
});

fixtureTest('19.4 sort and limit, as query parameters or X-Sort/X-Limit headers', async () => {
  const doc = await newDoc('Hello.grist');
  const ids = async (qs: string, headers?: Record<string, string>) =>
    ok(await get(`/api/docs/${doc}/tables/Table1/records${qs}`, headers)).records.map((r: any) => r.id);
  assert.equal(await ids('?sort=A'), [2, 3, 4, 1]);
  assert.equal(await ids('?sort=-A'), [1, 2, 3, 4]);
  assert.equal(await ids('?sort=B,-A'), [1, 3, 4, 2]);
  assert.equal(await ids('?sort=-B,A&limit=2'), [2, 3]);
  assert.equal(await ids('?sort=-id&limit=2'), [4, 3]);
  assert.equal(await ids('?limit=1'), [1]);
  assert.equal(await ids('', {'x-sort': '-B,A', 'x-limit': '2'}), [2, 3]);
  assert.equal(await ids('?sort=A', {'x-sort': '-A'}), [2, 3, 4, 1], 'the query parameter wins');
  err(await get(`/api/docs/${doc}/tables/Table1/records?limit=abc`), 400, 'limit is not a number');
  err(await get(`/api/docs/${doc}/tables/Table1/records?sort=Nope`), 400, /Nope/);
});

s('19.6/19.7 POST records and its validation messages', async () => {
  const doc = await newDoc();
  const url = `/api/docs/${doc}/tables/Table1/records`;
  assert.equal(ok(await call('POST', url, {records: [{}, {fields: {}}]})), {records: [{id: 1}, {id: 2}]});
  err(await call('POST', url, {}), 400, 'Invalid payload', 'Error: body.records is missing');
  err(await call('POST', url, {records: 1}), 400, 'Invalid payload', 'Error: body.records is not an array');
  err(await call('POST', url, {records: 'hi'}), 400, 'Invalid payload');
  err(await call('POST', url, {records: []}), 400, 'Invalid payload');
  const long =
    'Error: body.records[0] is not a NewRecord; body.records[0].fields.A is not a CellValue; ' +
    'body.records[0].fields.A is none of number, string, boolean, null, 1 more; body.records[0].fields.A[0] is not a GristObjCode; ' +
    'body.records[0].fields.A[0] is not a valid enum value';
  err(await call('POST', url, {records: [{fields: {A: []}}]}), 400, 'Invalid payload', long);
  err(await call('POST', url, {records: [{fields: {A: ['ZZ']}}]}), 400, 'Invalid payload', long);
  for (const code of ['L', 'O', 'D', 'd', 'R', 'r', 'E', 'P', 'U', 'C', 'S', 'V', 'l']) {
    ok(await call('POST', url, {records: [{fields: {A: [code]}}]}));
  }
  err(await call('POST', url, {records: [{fields: {X: 1}}]}), 400, 'Invalid column "X"');
  // flat: a bare array of field maps.
  const flat = ok(await call('POST', `${url}?flat=1`, [{B: 'x', id: 99}, {fields: {B: 'y'}}]));
  assert.equal(flat.records.length, 2);
});

fixtureTest('19.8/19.9 PATCH records and /data', async () => {
  const doc = await newDoc('Hello.grist');
  const url = `/api/docs/${doc}/tables/Table1`;
  ok(await call('PATCH', `${url}/records`, {records: [{id: 1, fields: {A: 'Father Christmas'}}]}));
  assert.equal(ok(await get(`${url}/data`)).A, ['Father Christmas', '', '', '']);
  err(
    await call('PATCH', `${url}/records`, {
      records: [
        {id: 1, fields: {A: 'x'}},
        {id: 2, fields: {B: 'y'}},
      ],
    }),
    400,
    'PATCH requires all records to have same fields',
  );
  err(
    await call('PATCH', `${url}/records`, {records: []}),
    400,
    'Invalid payload',
    'Error: body.records[0] is not a Record; body.records[0] is not an object',
  );
  err(
    await call('PATCH', `${url}/records`, {records: [{}]}),
    400,
    'Invalid payload',
    'Error: body.records[0] is not a Record\n    body.records[0].id is missing\n    body.records[0].fields is missing',
  );
  err(
    await call('PATCH', `${url}/records`, {records: [{id: '1'}]}),
    400,
    'Invalid payload',
    'Error: body.records[0] is not a Record\n    body.records[0].id is not a number\n    body.records[0].fields is missing',
  );
  err(await call('PATCH', `${url}/data`, {id: [1, 5], A: ['Alice', 'Felix']}), 400, /Invalid row id 5/);
  err(await call('PATCH', `${url}/data`, {id: [10, 5], A: ['Alice', 'Felix']}), 400, /Invalid row id 10/);
  err(await call('PATCH', `${url}/data`, {id: [1], A: ['Alice'], X: ['mystery']}), 400, /Invalid column "X"/);
  assert.equal(ok(await get(`${url}/data`)).A, ['Father Christmas', '', '', '']);
});

s('19.10 delete via records/delete and data/delete; ids reused', async () => {
  const doc = await newDoc();
  const url = `/api/docs/${doc}/tables/Table1`;
  ok(await call('POST', `${url}/records`, {records: [{}, {}, {}, {}, {}, {}]}));
  assert.is(ok(await call('POST', `${url}/records/delete`, [3, 4])), null);
  ok(await call('POST', `${url}/data/delete`, [5, 6, 999]));
  assert.equal(ok(await get(`${url}/data`)).id, [1, 2]);
  assert.equal(ok(await call('POST', `${url}/data`, {A: ['Alice', 'Felix']})), [3, 4]);
  err(await call('POST', `${url}/data`, {}), 400, /./);
  err(await call('DELETE', `${url}/records`), 404, `not found: ${url}/records`);
});

s('19.11-19.15 PUT records (add-or-update)', async () => {
  const doc = await newDoc();
  const url = `/api/docs/${doc}/tables/Table1/records`;
  ok(
    await call('PUT', `/api/docs/${doc}/tables/Table1/columns?replaceall=1`, {
      columns: [
        {id: 'A', fields: {type: 'Numeric', isFormula: false}},
        {id: 'B', fields: {type: 'Numeric', isFormula: false}},
      ],
    }),
  );
  assert.equal(
    ok(
      await call('PUT', url, {
        records: [{require: {A: 1}}, {require: {A: 2}, fields: {A: 3}}, {require: {A: 4}, fields: {B: 5}}],
      }),
    ),
    {recordIds: [[1], [2], [3]], addRecordIds: [1, 2, 3], updateRecordIds: []},
  );
  assert.equal(
    ok(
      await call('PUT', url, {
        records: [{require: {A: 1}}, {require: {A: 3}, fields: {A: 33}}, {require: {A: 4}, fields: {B: 6}}],
      }),
    ),
    {recordIds: [[1], [2], [3]], addRecordIds: [], updateRecordIds: [[1], [2], [3]]},
  );
  assert.equal(ok(await call('PUT', `${url}?noadd=1`, {records: [{require: {A: 100}}]})), {
    recordIds: [[]],
    addRecordIds: [],
    updateRecordIds: [],
  });
  assert.equal(ok(await call('PUT', `${url}?noupdate=1`, {records: [{require: {A: 1}, fields: {A: 11}}]})), {
    recordIds: [[]],
    addRecordIds: [],
    updateRecordIds: [],
  });
  assert.equal(ok(await call('PUT', `${url}?onmany=all`, {records: [{require: {B: 0}, fields: {B: 1}}]})).recordIds, [
    [1, 2],
  ]);
  err(
    await call('PUT', `${url}?onmany=foo`, {records: [{require: {A: 1}}]}),
    400,
    'onmany parameter foo should be one of first,none,all',
  );
  ok(await call('PATCH', `/api/docs/${doc}/tables/Table1/data`, {id: [1], A: [4]}));
  assert.equal(ok(await call('PUT', url, {records: [{require: {A: '$4'}, fields: {A: '$44'}}]})).updateRecordIds, [
    [1],
  ]);
  ok(await call('PUT', `${url}?noparse=1`, {records: [{require: {A: 44}, fields: {A: '$55'}}]}));
  assert.is(ok(await get(`/api/docs/${doc}/tables/Table1/data`)).A[0], '$55');
  err(
    await call('PUT', url, {records: [{require: {}}]}),
    400,
    /ValueError require is empty but allow_empty_require isn't set/,
  );
  ok(await call('PUT', `${url}?allow_empty_require=1&onmany=all`, {records: [{require: {}, fields: {A: 99, B: 99}}]}));
  assert.equal(ok(await get(`/api/docs/${doc}/tables/Table1/data`)).A, [99, 99, 99]);
  err(
    await call('PUT', `/api/docs/${doc}/tables/Table2/records`, {records: [{require: {A: 1}}]}),
    404,
    /Table not found/,
  );
  err(await call('PUT', url, {records: [{require: {NoColumn: 1}}]}), 400, /Invalid column "NoColumn"/);
  err(
    await call('PUT', url, {records: [{fields: {}}]}),
    400,
    'Invalid payload',
    'Error: body.records[0] is not a AddOrUpdateRecord; body.records[0].require is missing',
  );
  err(
    await call('PUT', url, {records: [{require: {id: '1'}}]}),
    400,
    'Invalid payload',
    'Error: body.records[0] is not a AddOrUpdateRecord; body.records[0].require.id is not a number',
  );
  err(await call('PUT', url, {}), 400, 'Invalid payload', 'Error: body.records is missing');
});

fixtureTest('19.16-19.18 columns: GET, PUT, DELETE', async () => {
  const hello = await newDoc('Hello.grist');
  const cols = ok(await get(`/api/docs/${hello}/tables/Table1/columns`)).columns;
  assert.equal(
    cols.map((c: any) => c.id),
    ['A', 'B', 'C', 'D', 'E'],
  );
  assert.is(cols[0].fields.colRef, 2);
  assert.is(ok(await get(`/api/docs/${hello}/tables/Table1/columns?hidden=true`)).columns[0].id, 'manualSort');
  const doc = await newDoc();
  const url = `/api/docs/${doc}/tables/Table1/columns`;
  ok(
    await call('PUT', url, {
      columns: [
        {id: 'Foo', fields: {type: 'Text', label: 'FooLabel'}},
        {id: 'A', fields: {type: 'Numeric', colId: 'NewA'}},
      ],
    }),
  );
  assert.equal(
    ok(await get(url)).columns.map((c: any) => c.id),
    ['NewA', 'B', 'C', 'Foo'],
  );
  err(
    await call('PUT', `/api/docs/${doc}/tables/NonExistingTable/columns`, {columns: [{id: 'A', fields: {}}]}),
    404,
    'Table not found "NonExistingTable"',
  );
  err(await call('PUT', url, {columns: [{id: 'A'}]}), 400, 'Invalid payload');
  assert.match((await call('PUT', url, {})).json.details.userError, /^Error: value\.columns/);
  err(await call('PUT', url, {columns: [{id: 'A', fields: {}}]}, {}, viewerKey), 403, /./);
  ok(await call('DELETE', `${url}/NewA`));
  // Grist's order (D49): the last column record takes the removed one's place.
  assert.equal(
    ok(await get(url)).columns.map((c: any) => c.id),
    ['Foo', 'B', 'C'],
  );
  err(await call('DELETE', `${url}/NonExistingColId`), 404, 'Table or column not found "Table1.NonExistingColId"');
  err(
    await call('DELETE', `/api/docs/${doc}/tables/NonExistingTable/columns/A`),
    404,
    'Table or column not found "NonExistingTable.A"',
  );
});

s('19.19 tables and columns: de-duplication, renames, PATCH errors', async () => {
  const doc = await newDoc();
  const tables = ok(
    await call('POST', `/api/docs/${doc}/tables`, {
      tables: [
        {columns: [{}]},
        {id: '', columns: [{id: ''}]},
        {id: 'NewTable1', columns: [{id: 'NewCol1'}]},
        {id: 'NewTable2', columns: [{id: 'NewCol1'}, {id: 'NewCol3'}, {id: 'NewCol3'}]},
        {id: 'NewTable2', columns: [{id: 'NewCol1'}]},
      ],
    }),
  );
  assert.equal(tables, {
    tables: [{id: 'Table2'}, {id: 'Table3'}, {id: 'NewTable1'}, {id: 'NewTable2'}, {id: 'NewTable2_2'}],
  });
  const cols = ok(
    await call('POST', `/api/docs/${doc}/tables/NewTable2/columns`, {
      columns: [{}, {id: ''}, {id: 'NewCol4'}, {id: 'NewCol4'}, {id: 'NewCol5', fields: {label: 'Label5'}}],
    }),
  );
  assert.equal(cols, {columns: [{id: 'A'}, {id: 'B'}, {id: 'NewCol4'}, {id: 'NewCol4_2'}, {id: 'NewCol5'}]});
  err(
    await call('POST', `/api/docs/${doc}/tables/NoSuchTable/columns`, {columns: [{}]}),
    404,
    'Table not found "NoSuchTable"',
  );
  ok(await call('PATCH', `/api/docs/${doc}/tables`, {tables: [{id: 'Table3', fields: {tableId: 'Renamed'}}]}));
  err(
    await call('PATCH', `/api/docs/${doc}/tables`, {tables: [{id: 'Table3', fields: {tableId: 'X'}}]}),
    404,
    'Table not found "Table3"',
  );
  err(
    await call('PATCH', `/api/docs/${doc}/tables/Table1/columns`, {columns: [{id: 'Zed', fields: {label: 'x'}}]}),
    404,
    'Column not found "Zed"',
  );
  ok(await call('PATCH', `/api/docs/${doc}/tables/Table1/columns`, {columns: [{id: 'A', fields: {colId: 'B'}}]}));
  assert.equal(
    ok(await get(`/api/docs/${doc}/tables/Table1/columns`)).columns.map((c: any) => c.id),
    ['B2', 'B', 'C'],
  );
  err(await call('POST', `/api/docs/${doc}/tables`, {tables: [{id: 'X', columns: []}]}), 400, 'Invalid payload');
  const listed = ok(await get(`/api/docs/${doc}/tables?expand=column`)).tables;
  assert.equal(
    listed.map((t: any) => t.id),
    ['Table1', 'Table2', 'Renamed', 'NewTable1', 'NewTable2', 'NewTable2_2'],
  );
  assert.equal(
    listed[0].columns.map((c: any) => c.id),
    ['B2', 'B', 'C'],
  );
  assert.equal(ok(await get(`/api/docs/${doc}/tables`)).tables[0], {
    id: 'Table1',
    fields: {
      tableRef: 1,
      primaryViewId: 1,
      summarySourceTable: 0,
      onDemand: false,
      rawViewSectionRef: 2,
      recordCardViewSectionRef: 3,
    },
  });
});

s('POST /apply and the tables of metadata', async () => {
  const doc = await newDoc();
  const res = ok(
    await call('POST', `/api/docs/${doc}/apply`, [
      ['AddRecord', 'Table1', null, {A: 1}],
      ['AddTable', 'Extra', [{id: 'X'}]],
    ]),
  );
  assert.is(res.retValues[0], 1);
  assert.is(res.retValues[1].table_id, 'Extra');
  assert.equal(Object.keys(res).sort(), ['actionHash', 'actionNum', 'isModification', 'retValues']);
  err(await call('POST', `/api/docs/${doc}/apply`, [['NoSuchAction']]), 400, /NoSuchAction/);
  ok(await call('POST', `/api/docs/${doc}/tables/_grist_Tables/data/delete`, [2]));
  assert.equal(
    ok(await get(`/api/docs/${doc}/tables`)).tables.map((t: any) => t.id),
    ['Table1'],
  );
  err(await call('POST', `/api/docs/${doc}/apply`, [['AddRecord', 'Table1', null, {}]], {}, viewerKey), 403, /./);
});

s.run();
