// Issue 11, over the whole in-process API: alias hijack, owner-only metadata, nothing reported
// failed after it committed, and the malformed inputs the fuzzer found.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, type Handler} from '../src/index.js';

const s = suite('hardening');
let dir = '';
let engine: Engine;
let handle: Handler;
const keys: Record<string, string> = {};
const homes: Record<string, number> = {};

interface Res {
  status: number;
  json: any;
}

async function call(
  as: string,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Res> {
  const h: Record<string, string> = {host: '127.0.0.1', authorization: `Bearer ${keys[as]}`, ...headers};
  let raw: Uint8Array | undefined;
  if (body !== undefined) {
    h['content-type'] = 'application/json';
    raw = new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  }
  const res = await handle({method, url, headers: h, body: raw});
  const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body as Uint8Array).toString();
  let json: unknown = text;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return {status: res.status, json};
}

function ok(res: Res): any {
  assert.is(res.status, 200, JSON.stringify(res.json));
  return res.json;
}

function err(res: Res, status: number, match: RegExp | string): void {
  assert.is(res.status, status, JSON.stringify(res.json));
  if (typeof match === 'string') {
    assert.is(res.json.error, match);
  } else {
    assert.match(res.json.error, match);
  }
}

async function newDoc(as: string, name = 'Doc', wid = homes[as]): Promise<string> {
  return ok(await call(as, 'POST', `/api/workspaces/${wid}/docs`, {name}));
}

/**
 * The schema statements `fn` makes a document run (better-sqlite3's `exec`, which every table and
 * column change goes through): table copies (`CREATE TABLE _tmp_...`), per-column ALTERs, and all.
 * Counting them shows "one copy, not one per column" and "refused before any work" on any machine.
 */
async function schemaWork<T>(
  docId: string,
  fn: () => Promise<T>,
): Promise<{copies: number; alters: number; all: number}> {
  const proto = await engine.withDoc(docId, (d) => Object.getPrototypeOf(d.grist.db));
  const exec = proto.exec;
  const seen: string[] = [];
  proto.exec = function (this: unknown, sql: string) {
    seen.push(sql);
    return exec.call(this, sql);
  };
  try {
    await fn();
  } finally {
    proto.exec = exec;
  }
  const ddl = seen.filter((q) => /\b(CREATE|ALTER|DROP)\s+(TABLE|INDEX)\b/i.test(q));
  return {
    copies: ddl.filter((q) => /CREATE TABLE "?_tmp_/i.test(q)).length,
    alters: ddl.filter((q) => /ALTER TABLE\s+"?[A-Za-z]\w*"?\s+(ADD|DROP|RENAME)\s+COLUMN/i.test(q)).length,
    all: ddl.length,
  };
}

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-hardening-'));
  const env = {ALLOWED_WEBHOOK_DOMAINS: 'example.com'};
  engine = await Engine.open({dataDir: dir, env});
  handle = createApiHandler(engine, {
    env,
    onError: (e) => {
      throw e;
    },
  });
  for (const name of ['owner', 'attacker', 'editor']) {
    const user = await engine.home.ensureUser(`${name}@example.com`, name);
    keys[name] = await engine.home.setApiKey(user.id);
    const ws = ok(await call(name, 'GET', `/api/orgs/docs-${user.id}/workspaces`));
    homes[name] = ws.find((w: any) => w.name === 'Home').id;
  }
});

s.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

s("issue 11.2: a urlId held by another user's document cannot be taken, seen or not", async () => {
  const victim = await newDoc('owner', 'Budget');
  ok(await call('owner', 'PATCH', `/api/docs/${victim}`, {urlId: 'budget'}));
  const mine = await newDoc('attacker', 'Trap');
  // The attacker cannot see the victim's document: same 400 as Grist's "urlId already in use".
  err(await call('attacker', 'GET', '/api/docs/budget'), 403, /access/i);
  err(await call('attacker', 'PATCH', `/api/docs/${mine}`, {urlId: 'budget'}), 400, 'urlId already in use');
  err(
    await call('attacker', 'POST', `/api/workspaces/${homes.attacker}/docs`, {name: 'T', urlId: 'budget'}),
    400,
    'urlId already in use',
  );
  err(
    await call('attacker', 'PATCH', `/api/docs/${mine}`, {urlId: victim}),
    400,
    'urlId already in use as document id',
  );
  // The victim's former alias is not free for someone else either.
  ok(await call('owner', 'PATCH', `/api/docs/${victim}`, {urlId: 'budget-2025'}));
  err(await call('attacker', 'PATCH', `/api/docs/${mine}`, {urlId: 'budget'}), 400, 'urlId already in use');
  // Even shared with the owner, the attacker's document never answers to the owner's alias.
  const owner = (await engine.store.getUserByEmail('owner@example.com'))!;
  ok(await call('attacker', 'PATCH', `/api/docs/${mine}/access`, {delta: {users: {'owner@example.com': 'owners'}}}));
  assert.is(ok(await call('owner', 'GET', '/api/docs/budget')).id, victim);
  assert.is(
    ok(await call('owner', 'GET', `/api/orgs/docs-${owner.id}`)).id,
    (await engine.store.getPersonalOrg(owner.id))!.id,
  );
  ok(await call('owner', 'POST', '/api/docs/budget/tables/Table1/records', {records: [{fields: {A: 'mine'}}]}));
  const rows = ok(await call('owner', 'GET', `/api/docs/${victim}/tables/Table1/records`)).records;
  assert.equal(
    rows.map((r: any) => r.fields.A),
    ['mine'],
    "the write landed in the owner's document",
  );
  assert.equal(ok(await call('attacker', 'GET', `/api/docs/${mine}/tables/Table1/records`)).records, []);
  // The owner's own new document may take back the owner's former alias (Grist's alias reuse).
  const again = await newDoc('owner', 'Budget v2');
  ok(await call('owner', 'PATCH', `/api/docs/${again}`, {urlId: 'budget'}));
  assert.is(ok(await call('owner', 'GET', '/api/docs/budget')).id, again);
});

async function sharedDoc(): Promise<string> {
  const doc = await newDoc('owner', 'Shared');
  ok(await call('owner', 'PATCH', `/api/docs/${doc}/access`, {delta: {users: {'editor@example.com': 'editors'}}}));
  return doc;
}

s('issue 11.3: editors cannot write access rules, shares or triggers; owners can', async () => {
  const doc = await sharedDoc();
  const apply = (as: string, actions: unknown[]) => call(as, 'POST', `/api/docs/${doc}/apply`, actions);
  const count = async (tableId: string) =>
    ok(await call('owner', 'GET', `/api/docs/${doc}/tables/${tableId}/data`)).id.length;
  const rules0 = await count('_grist_ACLRules');
  err(
    await apply('editor', [['AddRecord', '_grist_ACLResources', null, {tableId: '*', colIds: '*'}]]),
    403,
    'Only owners can modify access rules',
  );
  err(
    await apply('editor', [
      ['AddRecord', '_grist_ACLRules', null, {resource: 1, aclFormula: 'True', permissionsText: '-CRUD'}],
    ]),
    403,
    'Only owners can modify access rules',
  );
  err(
    await apply('editor', [['BulkUpdateRecord', '_grist_ACLRules', [1], {permissionsText: ['-CRUD']}]]),
    403,
    'Only owners can modify access rules',
  );
  err(await apply('editor', [['RemoveRecord', '_grist_ACLRules', 1]]), 403, 'Only owners can modify access rules');
  err(
    await apply('editor', [['AddRecord', '_grist_Triggers', null, {tableRef: 1, enabled: true}]]),
    403,
    'Only owners can modify _grist_Triggers',
  );
  err(
    await apply('editor', [['AddRecord', '_grist_Shares', null, {linkId: 'x'}]]),
    403,
    'Only owners can modify _grist_Shares',
  );
  // The record endpoints are write paths too.
  err(
    await call('editor', 'POST', `/api/docs/${doc}/tables/_grist_ACLRules/records`, {
      records: [{fields: {aclFormula: 'True'}}],
    }),
    403,
    'Only owners can modify access rules',
  );
  err(
    await call('editor', 'PATCH', `/api/docs/${doc}/tables/_grist_Triggers/data`, {id: [1], enabled: [false]}),
    403,
    'Only owners can modify _grist_Triggers',
  );
  err(
    await call('editor', 'POST', `/api/docs/${doc}/tables/_grist_ACLRules/data/delete`, [1]),
    403,
    'Only owners can modify access rules',
  );
  err(
    await call('editor', 'PUT', `/api/docs/${doc}/tables/_grist_ACLRules/records`, {
      records: [{require: {aclFormula: 'x'}}],
    }),
    400,
    /metadata table/,
  );
  // Nothing changed; a refused action in a bundle rolls back the rest of the bundle.
  err(
    await apply('editor', [
      ['AddRecord', 'Table1', null, {A: 'x'}],
      ['AddRecord', '_grist_Triggers', null, {}],
    ]),
    403,
    /Only owners/,
  );
  assert.equal(ok(await call('owner', 'GET', `/api/docs/${doc}/tables/Table1/records`)).records, []);
  assert.is(await count('_grist_ACLRules'), rules0);
  assert.is(await count('_grist_Triggers'), 0);
  // Editors keep schema edits (Grist's default SchemaEdit rule) and layout metadata.
  ok(
    await apply('editor', [
      ['AddTable', 'Made', [{id: 'X'}]],
      ['UpdateRecord', '_grist_Views', 1, {name: 'Renamed'}],
    ]),
  );
  // No one writes what keeps the file a Grist document, or a table with no rule.
  err(
    await apply('owner', [['UpdateRecord', '_grist_DocInfo', 1, {schemaVersion: 25}]]),
    400,
    '_grist_DocInfo.schemaVersion cannot be changed',
  );
  err(
    await apply('owner', [['AddRecord', '_grist_Attachments', null, {fileName: 'x'}]]),
    403,
    '_grist_Attachments modification is not allowed',
  );
  err(await apply('owner', [['AddRecord', '_gristsys_ActionHistory', null, {}]]), 400, /KeyError/);
  // Owners may.
  ok(await apply('owner', [['AddRecord', '_grist_Triggers', null, {tableRef: 1, enabled: false}]]));
  ok(await apply('owner', [['AddRecord', '_grist_Shares', null, {linkId: 'x'}]]));
  const added = ok(
    await apply('owner', [['AddRecord', '_grist_ACLResources', null, {tableId: 'Table1', colIds: '*'}]]),
  );
  assert.is(typeof added.retValues[0], 'number');
  assert.is(await count('_grist_Triggers'), 1);
});

s('issue 11.4: a deeply nested value is refused before the transaction; nothing is half-written', async () => {
  const doc = await sharedDoc();
  // Built as text: JSON.stringify itself overflows the stack at this depth.
  const deep = '["L",'.repeat(50000) + '"x"' + ']'.repeat(50000);
  const before = ok(await call('owner', 'POST', `/api/docs/${doc}/apply`, [['AddRecord', 'Table1', null, {A: 'one'}]]));
  err(
    await call('owner', 'POST', `/api/docs/${doc}/apply`, `[["AddRecord", "Table1", null, {"A": ${deep}}]]`),
    400,
    /nested deeper than 64 levels/,
  );
  err(
    await call('owner', 'POST', `/api/docs/${doc}/tables/Table1/records`, `{"records": [{"fields": {"A": ${deep}}}]}`),
    400,
    /nested deeper/,
  );
  err(
    await call(
      'owner',
      'PATCH',
      `/api/docs/${doc}/tables/Table1/columns`,
      `{"columns": [{"id": "A", "fields": {"label": ${deep}}}]}`,
    ),
    400,
    /nested deeper/,
  );
  err(
    await call(
      'owner',
      'POST',
      `/api/docs/${doc}/tables`,
      `{"tables": [{"id": "N", "columns": [{"id": "A", "fields": {"type": ${deep}}}]}]}`,
    ),
    400,
    /nested deeper/,
  );
  assert.equal(
    ok(await call('owner', 'GET', `/api/docs/${doc}/tables/Table1/records`)).records.map((r: any) => r.fields.A),
    ['one'],
  );
  const after = ok(await call('owner', 'POST', `/api/docs/${doc}/apply`, [['AddRecord', 'Table1', null, {A: 'two'}]]));
  assert.is(after.actionNum, before.actionNum + 1, 'the refused bundle took no action number');
  // A value within the limit round-trips.
  let ok64: unknown = 'x';
  for (let i = 0; i < 40; i++) {
    ok64 = ['L', ok64];
  }
  ok(await call('owner', 'POST', `/api/docs/${doc}/apply`, [['AddRecord', 'Table1', null, {A: ok64}]]));
});

s("issue 11.8: the fuzzer's findings answer 400 (or work, where Grist accepts them)", async () => {
  const doc = await newDoc('owner', 'Fuzzed');
  const D = `/api/docs/${doc}`;
  const ids = (n: number, id = 'X') => Array.from({length: n}, () => ({id}));
  // 2000 duplicate column ids: past SQLite's 2000 columns once made unique (Grist's limit too).
  err(
    await call('owner', 'POST', `${D}/tables`, {tables: [{id: 'Dups', columns: ids(2000)}]}),
    400,
    /Too many columns/,
  );
  // 1000 are fine, made unique as Grist does, created together (no ALTER per column).
  const add = await schemaWork(doc, async () => {
    assert.equal(ok(await call('owner', 'POST', `${D}/tables`, {tables: [{id: 'Wide', columns: ids(1000)}]})).tables, [
      {id: 'Wide'},
    ]);
  });
  assert.equal([add.alters, add.copies], [0, 0], 'AddTable creates its columns together');
  const wide = ok(await call('owner', 'GET', `${D}/tables/Wide/columns`)).columns.map((c: any) => c.id);
  assert.equal(wide.slice(0, 3), ['X', 'X2', 'X3']);
  assert.is(wide.length, 1000);
  // replaceall with 1000 duplicate ids: refused at once (it kept the document busy for 7.5 s).
  const refused = await schemaWork(doc, async () => {
    err(
      await call('owner', 'PUT', `${D}/tables/Table1/columns?replaceall=1`, {
        columns: ids(1000, 'Z').map((c) => ({...c, fields: {}})),
      }),
      400,
      /appears more than once/,
    );
    err(
      await call('owner', 'POST', `${D}/tables/Table1/columns`, {columns: ids(101, 'Y')}),
      400,
      /at most 100 per request/,
    );
  });
  assert.is(refused.all, 0, 'refused before any work');
  assert.equal(
    ok(await call('owner', 'GET', `${D}/tables/Table1/columns`)).columns.map((c: any) => c.id),
    ['A', 'B', 'C'],
  );
  // Ids that normalise to sqlite_* (reserved by SQLite) get Grist's prefix.
  assert.equal(
    ok(await call('owner', 'POST', `${D}/tables`, {tables: [{id: 'sqlite_master', columns: [{id: 'A'}]}]})).tables,
    [{id: 'TSqlite_master'}],
  );
  assert.equal(
    ok(await call('owner', 'POST', `${D}/apply`, [['AddTable', '__SQLITE_x', [{id: 'A'}]]])).retValues[0].table_id,
    'TSQLITE_x',
  );
  assert.is(
    ok(await call('owner', 'POST', `${D}/apply`, [['RenameTable', 'TSqlite_master', 'sqlite_y']])).retValues[0],
    'TSqlite_y',
  );
  // Rows to query.
  ok(
    await call('owner', 'POST', `${D}/tables/Table1/records`, {
      records: [{fields: {A: 'a', B: 1}}, {fields: {A: '7', B: 2.5}}, {fields: {A: 12, B: 'x'}}],
    }),
  );
  // ~1000 query parameters and a limit beyond 2^53 (was "datatype mismatch", 500).
  const many = Array.from({length: 1000}, (_, i) => `p${i}=${i}`).join('&');
  assert.is(
    ok(
      await call('owner', 'GET', `${D}/tables/Table1/records?${many}`, undefined, {
        'x-limit': '99999999999999999999999',
      }),
    ).records.length,
    3,
  );
  assert.is(ok(await call('owner', 'GET', `${D}/tables/Table1/records?limit=1e20`)).records.length, 3);
  // A filter of 40,000 values works (Grist accepts it); a sort of 2000 keys too (repeats dropped).
  const values = Array.from({length: 40000}, (_, i) => i + 100);
  const filter = (f: unknown) => `${D}/tables/Table1/records?filter=${encodeURIComponent(JSON.stringify(f))}`;
  const small = ok(await call('owner', 'GET', filter({A: ['a', '7'], B: ['1', '2.5']}))).records.map((r: any) => r.id);
  assert.equal(small, [1, 2]);
  assert.equal(
    ok(
      await call('owner', 'GET', filter({A: [...values, 'a', '7'], B: [...values.map(String), '1', '2.5']})),
    ).records.map((r: any) => r.id),
    small,
  );
  assert.equal(
    ok(
      await call('owner', 'POST', `${D}/tables/Table1/records/list`, {filter: {B: [...values.map(String), '2.5']}}),
    ).records.map((r: any) => r.id),
    [2],
  );
  const sort = Array.from({length: 2000}, (_, i) => ['-B', 'A', 'C:naturalSort'][i % 3]).join(',');
  assert.equal(
    ok(await call('owner', 'GET', `${D}/tables/Table1/records?sort=${sort}`)).records.map((r: any) => r.id),
    [3, 2, 1],
    'by -B: x, 2.5, 1',
  );
  const distinct = Array.from({length: 201}, (_, i) => `-c${i}`).join(',');
  err(await call('owner', 'GET', `${D}/tables/Table1/records?sort=${distinct}`), 400, /Invalid sort/);
  // Row ids that are not integers ("SQLite3 can only bind numbers, ..." was a 500).
  err(
    await call('owner', 'POST', `${D}/apply`, [['UpdateRecord', 'Table1', true, {A: 1}]]),
    400,
    'Invalid row id true',
  );
  err(await call('owner', 'POST', `${D}/apply`, [['UpdateRecord', 'Table1', {}, {A: 1}]]), 400, 'Invalid row id {}');
  err(
    await call('owner', 'POST', `${D}/apply`, [['BulkUpdateRecord', 'Table1', [1, null], {A: [1, 2]}]]),
    400,
    'Invalid row id null',
  );
  err(await call('owner', 'PATCH', `${D}/tables/Table1/data`, {id: [true, {}], A: [1, 2]}), 400, 'Invalid row id true');
  err(await call('owner', 'POST', `${D}/tables/Table1/data/delete`, [true, {}]), 400, /Invalid row id true/);
  err(await call('owner', 'POST', `${D}/apply`, [['AddRecord', 'Table1', '5', {}]]), 400, /Invalid row id "5"/);
  // Deeply nested ["L", ...] cells.
  const deep = '["L",'.repeat(80) + '1' + ']'.repeat(80);
  err(
    await call('owner', 'POST', `${D}/tables/Table1/records`, `{"records": [{"fields": {"A": ${deep}}}]}`),
    400,
    /nested deeper/,
  );
  err(await call('owner', 'POST', `${D}/tables/Table1/data`, `{"A": [${deep}]}`), 400, /nested deeper/);
  err(
    await call('owner', 'PUT', `${D}/tables/Table1/records`, `{"records": [{"require": {"A": ${deep}}}]}`),
    400,
    /nested deeper/,
  );
  assert.is(ok(await call('owner', 'GET', `${D}/tables/Table1/records`)).records.length, 3, 'nothing was written');
});

s('issue 37 §6: a body that is not JSON is named in the refusal; GET / tells where to go', async () => {
  const doc = await newDoc('owner', 'NotJson');
  const url = `/api/docs/${doc}/tables/Table1/records`;
  const body = new TextEncoder().encode('{"records": [{"fields": {"A": 1}}]}');
  // curl -d sends application/x-www-form-urlencoded: Grist reads `{}`, then misses `records`.
  for (const ct of ['application/x-www-form-urlencoded', undefined]) {
    const headers: Record<string, string> = {authorization: `Bearer ${keys.owner}`};
    if (ct) headers['content-type'] = ct;
    const res = await handle({method: 'POST', url, headers, body});
    assert.is(res.status, 400);
    const json = JSON.parse(String(res.body));
    assert.is(
      json.error,
      `Invalid payload (the request body was not read: its Content-Type is ${ct ?? 'none'}, not application/json)`,
    );
    assert.equal(json.details, {userError: 'Error: body.records is missing'});
  }
  // With JSON's Content-Type, the same body is read; an empty body is Grist's plain answer.
  ok(await call('owner', 'POST', url, '{"records": [{"fields": {"A": 1}}]}'));
  const empty = await handle({method: 'POST', url, headers: {authorization: `Bearer ${keys.owner}`}});
  assert.is(JSON.parse(String(empty.body)).error, 'Invalid payload');

  const root = await handle({method: 'GET', url: '/', headers: {}});
  assert.is(root.status, 200);
  const index = JSON.parse(String(root.body));
  assert.is(index.console, '/apiconsole');
  assert.is(index.status, '/status');
  err(await call('owner', 'GET', '/nope'), 404, 'not found: /nope');
});

s('issue 11.10: row id 0 is refused; pragma_database_list is refused; _unsubscribe checks the table', async () => {
  const doc = await newDoc('owner', 'Small');
  const D = `/api/docs/${doc}`;
  err(await call('owner', 'POST', `${D}/apply`, [['AddRecord', 'Table1', 0, {A: 'x'}]]), 400, /Row ID 0 is reserved/);
  err(
    await call('owner', 'POST', `${D}/apply`, [['BulkAddRecord', 'Table1', [null, 0], {A: ['x', 'y']}]]),
    400,
    /Row ID 0 is reserved/,
  );
  err(
    await call('owner', 'PUT', `${D}/tables/Table1/records`, {records: [{require: {id: 0}, fields: {A: 'z'}}]}),
    400,
    /Row ID 0 is reserved/,
  );
  assert.equal(ok(await call('owner', 'GET', `${D}/tables/Table1/records`)).records, []);
  assert.equal(
    ok(await call('owner', 'PUT', `${D}/tables/Table1/records`, {records: [{require: {id: 5}, fields: {A: 'z'}}]}))
      .addRecordIds,
    [5],
  );
  // The server's file path stays private, however the pragma is spelled.
  for (const q of [
    'select * from pragma_database_list',
    'SELECT file FROM "PRAGMA_DATABASE_LIST"',
    'select * from main.[pragma_Database_List]',
  ]) {
    err(
      await call('owner', 'GET', `${D}/sql?q=${encodeURIComponent(q)}`),
      400,
      /pragma_database_list is not available/,
    );
    err(await call('owner', 'POST', `${D}/sql`, {sql: q}), 400, /pragma_database_list is not available/);
  }
  assert.equal(ok(await call('owner', 'GET', `${D}/sql?q=${encodeURIComponent('select id from Table1')}`)).records, [
    {fields: {id: 5}},
  ]);
  // _unsubscribe through another table's path does not find the webhook.
  ok(await call('owner', 'POST', `${D}/apply`, [['AddTable', 'Other', [{id: 'X'}]]]));
  const sub = ok(
    await call('owner', 'POST', `${D}/tables/Table1/_subscribe`, {
      url: 'https://example.com/hook',
      eventTypes: ['add'],
    }),
  );
  err(
    await call('owner', 'POST', `${D}/tables/Other/_unsubscribe`, {
      webhookId: sub.webhookId,
      unsubscribeKey: sub.unsubscribeKey,
    }),
    404,
    `Webhook not found "${sub.webhookId}"`,
  );
  assert.is(ok(await call('owner', 'GET', `${D}/webhooks`)).webhooks.length, 1);
  ok(
    await call('owner', 'POST', `${D}/tables/Table1/_unsubscribe`, {
      webhookId: sub.webhookId,
      unsubscribeKey: sub.unsubscribeKey,
    }),
  );
  assert.is(ok(await call('owner', 'GET', `${D}/webhooks`)).webhooks.length, 0);
});

s('issue 11.8: many column renames or removals in one request are one table copy, not one each', async () => {
  const doc = await newDoc('owner', 'Wide');
  const D = `/api/docs/${doc}`;
  const n = 600;
  ok(
    await call('owner', 'POST', `${D}/tables`, {
      tables: [{id: 'W', columns: Array.from({length: n}, (_, i) => ({id: `c${i}`}))}],
    }),
  );
  ok(await call('owner', 'POST', `${D}/tables/W/records`, {records: [{fields: {c0: 'first', [`c${n - 1}`]: 'last'}}]}));
  // Label changes rename the columns (one by one, 1000 took 90 s; removing 999 took 26 s).
  const renames = await schemaWork(doc, async () => {
    ok(
      await call('owner', 'PUT', `${D}/tables/W/columns`, {
        columns: Array.from({length: n}, (_, i) => ({id: `c${i}`, fields: {label: `L${i}`}})),
      }),
    );
  });
  assert.equal([renames.copies, renames.alters], [1, 0], 'renames: one table copy, no RENAME COLUMN each');
  const cols = ok(await call('owner', 'GET', `${D}/tables/W/columns`)).columns.map((c: any) => c.id);
  assert.equal([cols.length, cols[0], cols[n - 1]], [n, 'L0', `L${n - 1}`]);
  assert.equal(ok(await call('owner', 'GET', `${D}/tables/W/records`)).records[0].fields[`L${n - 1}`], 'last');
  // Type changes of every column at once (300 took 4.5 s one copy and one field scan each).
  ok(await call('owner', 'PATCH', `${D}/tables/W/records`, {records: [{id: 1, fields: {L1: '5'}}]}));
  const retypes = await schemaWork(doc, async () => {
    ok(
      await call('owner', 'PATCH', `${D}/tables/W/columns`, {
        columns: Array.from({length: n}, (_, i) => ({id: `L${i}`, fields: {type: 'Numeric'}})),
      }),
    );
  });
  // One copy per 50 retyped columns (their values are held in memory meanwhile), not one each.
  assert.equal([retypes.copies, retypes.alters], [Math.ceil(n / 50), 0], 'type changes: one table copy a group');
  const typed = ok(await call('owner', 'GET', `${D}/tables/W/records`)).records[0].fields;
  assert.equal([typed.L0, typed.L1, typed.L2], ['first', 5, null], 'converted: text stays alt-text, "5" becomes 5');
  ok(await call('owner', 'PATCH', `${D}/tables/W/columns`, {columns: [{id: 'L0', fields: {type: 'Text'}}]}));
  // Schema actions in one /apply bundle are bounded (each rereads the metadata).
  const bounded = await schemaWork(doc, async () => {
    err(
      await call(
        'owner',
        'POST',
        `${D}/apply`,
        Array.from({length: 101}, (_, i) => ['RemoveColumn', 'W', `L${i + 1}`]),
      ),
      400,
      /Too many schema actions in one bundle: at most 100 \(101 given\)/,
    );
    err(
      await call('owner', 'POST', `${D}/apply`, [
        [
          'BulkUpdateRecord',
          '_grist_Tables_column',
          Array.from({length: 101}, (_, i) => i + 1),
          {label: Array(101).fill('x')},
        ],
      ]),
      400,
      /Too many schema actions/,
    );
  });
  assert.is(bounded.all, 0, 'refused before any work');
  const removals = await schemaWork(doc, async () => {
    ok(await call('owner', 'PUT', `${D}/tables/W/columns?replaceall=1`, {columns: [{id: 'L0', fields: {}}]}));
  });
  assert.equal([removals.copies, removals.alters], [1, 0], 'removals: one table copy, no DROP COLUMN each');
  assert.equal(ok(await call('owner', 'GET', `${D}/tables/W/records`)).records, [{id: 1, fields: {L0: 'first'}}]);
  assert.equal(ok(await call('owner', 'GET', `${D}/sql?q=${encodeURIComponent('select * from W')}`)).records, [
    {fields: {id: 1, manualSort: 1, L0: 'first'}},
  ]);
});

s("issue 37: SQL parameter numbers beyond SQLite's bound answer SQLite's 400 at once", async () => {
  const D = `/api/docs/${await newDoc('owner', 'Params')}`;
  for (const sql of ['select ?99999999', `select ?${'9'.repeat(30)}`, 'select ?0']) {
    const started = performance.now();
    err(
      await call('owner', 'POST', `${D}/sql`, {sql, args: [1, 'x'], timeout: 500}),
      400,
      'SQLITE_ERROR: variable number must be between ?1 and ?32766',
    );
    assert.ok(performance.now() - started < 250, `${sql}: ${performance.now() - started} ms`);
  }
  err(
    await call('owner', 'GET', `${D}/sql?q=${encodeURIComponent(`select 1 in (${'?,'.repeat(32767)}1)`)}`),
    400,
    'SQLITE_ERROR: too many SQL variables',
  );
  assert.equal(ok(await call('owner', 'POST', `${D}/sql`, {sql: 'select ?2 as b', args: [1, 'x']})).records, [
    {fields: {b: 'x'}},
  ]);
});

s.run();
