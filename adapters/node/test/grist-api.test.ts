// The official `grist-api` npm client (0.1.7), used unchanged against gristlite's Node adapter.
// It reads with GET /data (with `filter`), writes with POST/PATCH /data, and deletes with POST
// /apply [["BulkRemoveRecord", ...]]. Not covered: its `attach()`, which POSTs a WHATWG FormData
// to `/api/docs/{docId}/attach` (a route Grist does not have) through axios 0.21, which refuses
// such a body in Node before sending anything; and `call()`, which 0.1.7 does not have.
import {GristDocAPI} from 'grist-api';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {ok, startWorld, type World} from '@gristlite/conformance';
import {nodeTarget} from './target.js';

const s = suite('grist-api client');
let world: World;
let docId = '';
let api: GristDocAPI;

s.before(async () => {
  world = await startWorld(nodeTarget());
  const {chimpy} = world;
  docId = await world.newDoc(chimpy, await world.homeWs(chimpy), 'Client');
  ok(
    await world.api.post(
      `/api/docs/${docId}/tables`,
      {tables: [{id: 'People', columns: [{id: 'Name'}, {id: 'Age', fields: {type: 'Numeric'}}, {id: 'Team'}]}]},
      chimpy.as,
    ),
  );
  api = new GristDocAPI(docId, {apiKey: chimpy.key, server: world.server.url});
});

s.after(async () => {
  await world?.server.close();
});

/** Asserts that a call fails with a message matching `pattern`. */
async function rejects(fn: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  let error: unknown = null;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof Error, `expected a failure matching ${pattern}`);
  assert.match((error as Error).message, pattern);
}

/** The table as the REST API itself reports it, for comparison. */
async function table(): Promise<Record<string, unknown[]>> {
  return ok(await world.api.get(`/api/docs/${docId}/tables/People/data`, world.chimpy.as)).body;
}

s('addRecords and fetchTable (with and without filters)', async () => {
  assert.equal(
    await api.addRecords('People', [
      {Name: 'Ann', Age: 30, Team: 'red'},
      {Name: 'Bo', Age: 25, Team: 'blue'},
      {Name: 'Cy', Age: 41},
    ]),
    [1, 2, 3],
  );
  assert.equal(await api.fetchTable('People'), [
    {id: 1, manualSort: 1, Name: 'Ann', Age: 30, Team: 'red'},
    {id: 2, manualSort: 2, Name: 'Bo', Age: 25, Team: 'blue'},
    {id: 3, manualSort: 3, Name: 'Cy', Age: 41, Team: null},
  ]);
  assert.equal(await api.fetchTable('People', {Name: ['Bo']}), [
    {id: 2, manualSort: 2, Name: 'Bo', Age: 25, Team: 'blue'},
  ]);
  assert.equal(
    (await api.fetchTable('People', {Team: ['red', 'blue'], Age: [30]})).map((r) => r.id),
    [1],
  );
  assert.equal(await api.fetchTable('People', {Name: ['nobody']}), []);
  assert.equal(await api.addRecords('People', []), [], 'nothing to send');
});

s('updateRecords: one PATCH per set of columns', async () => {
  await api.updateRecords('People', [
    {id: 1, Age: 31},
    {id: 2, Name: 'Bob', Age: 26},
    {id: 3, Age: 42},
  ]);
  const t = await table();
  assert.equal(
    [t.Name, t.Age],
    [
      ['Ann', 'Bob', 'Cy'],
      [31, 26, 42],
    ],
  );
});

s('deleteRecords goes through /apply', async () => {
  await api.deleteRecords('People', [2]);
  assert.equal((await table()).id, [1, 3]);
  await api.deleteRecords('People', [999]);
  assert.equal((await table()).id, [1, 3], 'unknown ids are ignored');
});

s('syncTable: updates changed rows, adds new ones, honours filters', async () => {
  await api.syncTable(
    'People',
    [
      {Name: 'Ann', Age: 32, Team: 'red'},
      {Name: 'Cy', Age: 42},
      {Name: 'Dee', Age: 19, Team: 'red'},
    ],
    ['Name'],
  );
  assert.equal(await api.fetchTable('People'), [
    {id: 1, manualSort: 1, Name: 'Ann', Age: 32, Team: 'red'},
    {id: 3, manualSort: 3, Name: 'Cy', Age: 42, Team: null},
    {id: 4, manualSort: 4, Name: 'Dee', Age: 19, Team: 'red'},
  ]);
  // With filters, only the red team is matched and new rows outside it are left out.
  await api.syncTable(
    'People',
    [
      {Team: 'red', Name: 'Ann', Age: 33},
      {Team: 'blue', Name: 'Eve', Age: 50},
      {Team: 'red', Name: 'Fay', Age: 22},
    ],
    ['Team', 'Name'],
    {filters: {Team: ['red']}},
  );
  const t = await table();
  assert.equal(
    [t.id, t.Name, t.Age],
    [
      [1, 3, 4, 5],
      ['Ann', 'Cy', 'Dee', 'Fay'],
      [33, 42, 19, 22],
    ],
  );
});

s('chunking, dry runs, doc URLs with an org, and errors', async () => {
  const {chimpy, server} = world;
  const chunked = new GristDocAPI(docId, {apiKey: chimpy.key, server: server.url, chunkSize: 2});
  assert.equal(await chunked.addRecords('People', [{Name: 'G'}, {Name: 'H'}, {Name: 'I'}]), [6, 7, 8]);
  await chunked.deleteRecords('People', [6, 7, 8]);
  const dry = new GristDocAPI(docId, {apiKey: chimpy.key, server: server.url, dryrun: true});
  assert.equal(await dry.addRecords('People', [{Name: 'Nope'}]), [], 'a dry run sends nothing');
  assert.equal((await table()).id, [1, 3, 4, 5]);
  // A doc URL (with the /o/<org> prefix) instead of an id.
  const byUrl = new GristDocAPI(`${server.url}/o/docs/${docId}`, {apiKey: chimpy.key});
  assert.is(byUrl.docId, docId);
  assert.equal(
    (await byUrl.fetchTable('People', {Name: ['Ann']})).map((r) => r.Age),
    [33],
  );
  await rejects(() => api.fetchTable('Nope'), /Grist: Table not found "Nope"/);
  await rejects(() => api.addRecords('People', [{Nope: 1}]), /Grist: Invalid column "Nope"/);
  const stranger = new GristDocAPI(docId, {apiKey: world.kiwi.key, server: server.url});
  await rejects(() => stranger.fetchTable('People'), /Grist: No view access/);
  assert.equal((await table()).id, [1, 3, 4, 5], 'failed calls changed nothing');
});

s("computed formula values: a new formula column, and cells following the client's writes", async () => {
  ok(
    await world.api.post(
      `/api/docs/${docId}/tables/People/columns`,
      {columns: [{id: 'Older', fields: {type: 'Numeric', isFormula: true, formula: '$Age + 10'}}]},
      world.chimpy.as,
    ),
  );
  const before = await api.fetchTable('People');
  assert.equal(
    before.map((r) => r.Older),
    before.map((r) => (r.Age as number) + 10),
  );
  await api.updateRecords('People', [{id: before[0].id as number, Age: 1}]);
  assert.is((await api.fetchTable('People'))[0].Older, 11);
  await api.addRecords('People', [{Name: 'Eve', Age: 5}]);
  assert.is((await api.fetchTable('People', {Name: ['Eve']}))[0].Older, 15);
});

s("computed values through a lookup follow the client's writes to other rows", async () => {
  ok(
    await world.api.post(
      `/api/docs/${docId}/tables/People/columns`,
      {
        columns: [
          {id: 'TeamSize', fields: {type: 'Int', isFormula: true, formula: 'len(People.lookupRecords(Team=$Team))'}},
        ],
      },
      world.chimpy.as,
    ),
  );
  // Each row's TeamSize is the number of rows with its Team, as the client reads them.
  const check = async () => {
    const rows = await api.fetchTable('People');
    assert.ok(rows.length >= 2);
    for (const r of rows) assert.is(r.TeamSize, rows.filter((o) => o.Team === r.Team).length, `row ${r.id}`);
    return rows;
  };
  const rows = await check();
  await api.updateRecords('People', [
    {id: rows[0].id as number, Team: 'green'},
    {id: rows[1].id as number, Team: 'green'},
  ]);
  assert.is((await check())[0].TeamSize, 2);
  await api.addRecords('People', [{Name: 'Gus', Team: 'green'}]);
  assert.is((await check())[0].TeamSize, 3);
  await api.deleteRecords('People', [rows[1].id as number]);
  assert.is((await check())[0].TeamSize, 2);
});

s.run();
