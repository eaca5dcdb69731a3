// Issue 27: Grist's access rules through the REST API, for owners, editors and viewers. The
// scenarios follow Grist's own (test/nbrowser/AccessRules1.ts, test/server/lib/GranularAccess.ts),
// on documents built here.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, importUpload} from '@gristlite/core';
import {createApiHandler} from '../src/index.js';
import {corpusFiles, withFixtures} from './helpers.js';

const fixtureTest = withFixtures(test);

type Res = {status: number; body: any};

interface World {
  engine: Engine;
  docId: string;
  importDoc(path: string): Promise<string>;
  as(who: string, method: string, url: string, body?: unknown): Promise<Res>;
  close(): Promise<void>;
}

/** An engine with ada (owner), owen (second owner), kiwi (editor) and vic (viewer) on one document. */
async function world(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-acl-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  const handle = createApiHandler(engine, {
    onError: (e) => {
      throw e;
    },
  });
  const keys: Record<string, string> = {};
  for (const name of ['ada', 'owen', 'kiwi', 'vic']) {
    const s = await engine.forUser(`${name}@example.com`, name);
    keys[name] = await engine.home.setApiKey(s.principal.user.id);
  }
  const as = async (who: string, method: string, url: string, body?: unknown): Promise<Res> => {
    const res = await handle({
      method,
      url,
      headers: {authorization: `Bearer ${keys[who]}`, 'content-type': 'application/json'},
      ...(body === undefined ? {} : {body: new TextEncoder().encode(JSON.stringify(body))}),
    });
    let text = '';
    if (typeof res.body === 'string') text = res.body;
    else if (res.body && typeof (res.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function') {
      const parts: Buffer[] = [];
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parts.push(Buffer.from(chunk));
      text = Buffer.concat(parts).toString('utf8');
    } else if (res.body instanceof Uint8Array) text = Buffer.from(res.body).toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a download): kept as it is.
    }
    return {status: res.status, body: parsed};
  };
  const ada = await engine.forUser('ada@example.com');
  const home = await ada.personalWorkspace();
  const docId = await ada.createDoc(home.id, {name: 'Rules'});
  const shared = await as('ada', 'PATCH', `/api/docs/${docId}/access`, {
    delta: {
      users: {'owen@example.com': 'owners', 'kiwi@example.com': 'editors', 'vic@example.com': 'viewers'},
    },
  });
  assert.is(shared.status, 200);
  return {
    engine,
    docId,
    importDoc: async (path: string) => {
      const p = ada.principal;
      const r = await importUpload(engine, home.id, p, {fileName: path.slice(path.lastIndexOf('/') + 1), path});
      await as('ada', 'PATCH', `/api/docs/${r.id}/access`, {
        delta: {users: {'owen@example.com': 'owners', 'kiwi@example.com': 'editors', 'vic@example.com': 'viewers'}},
      });
      return r.id;
    },
    as,
    close: async () => {
      await engine.close();
      rmSync(dir, {recursive: true, force: true});
    },
  };
}

/** The ACL-Test tables of Grist's AccessRules1 test, with its rows. */
async function clientsAndFinancials(w: World) {
  const r = await w.as('ada', 'POST', `/api/docs/${w.docId}/tables`, {
    tables: [
      {
        id: 'ClientsTable',
        columns: [{id: 'Name'}, {id: 'Agent_Email'}, {id: 'Shared', fields: {type: 'Bool'}}, {id: 'RumorsColumn'}],
      },
      {id: 'FinancialsTable', columns: [{id: 'Amount', fields: {type: 'Numeric'}}]},
    ],
  });
  assert.is(r.status, 200);
  const clients = [
    {Name: 'Acme', Agent_Email: 'ada@example.com', Shared: false, RumorsColumn: 'r1'},
    {Name: 'Bolt', Agent_Email: 'kiwi@example.com', Shared: false, RumorsColumn: 'r2'},
    {Name: 'Cog', Agent_Email: 'ada@example.com', Shared: true, RumorsColumn: 'r3'},
    {Name: 'Dart', Agent_Email: 'KIWI@example.com', Shared: false, RumorsColumn: 'r4'},
  ];
  await w.as('ada', 'POST', `/api/docs/${w.docId}/tables/ClientsTable/records`, {
    records: clients.map((fields) => ({fields})),
  });
  await w.as('ada', 'POST', `/api/docs/${w.docId}/tables/FinancialsTable/records`, {
    records: [{fields: {Amount: 10}}, {fields: {Amount: 20}}],
  });
}

/** Rules as Grist's UI saves them: resources and rules in one /apply, by negative row ids. */
function ruleActions(user1: string) {
  const isUser1 = `user.Email == '${user1}'`;
  const isUser1Parsed = JSON.stringify(['Eq', ['Attr', ['Name', 'user'], 'Email'], ['Const', user1]]);
  return [
    ['AddRecord', '_grist_ACLResources', -1, {tableId: 'FinancialsTable', colIds: '*'}],
    ['AddRecord', '_grist_ACLResources', -2, {tableId: 'ClientsTable', colIds: 'RumorsColumn'}],
    ['AddRecord', '_grist_ACLResources', -3, {tableId: 'ClientsTable', colIds: '*'}],
    ['AddRecord', '_grist_ACLRules', null, rule(-1, isUser1, isUser1Parsed, 'all', 1)],
    ['AddRecord', '_grist_ACLRules', null, rule(-1, '', '', 'none', 2)],
    ['AddRecord', '_grist_ACLRules', null, rule(-2, isUser1, isUser1Parsed, 'all', 3)],
    ['AddRecord', '_grist_ACLRules', null, rule(-2, '', '', 'none', 4)],
    ['AddRecord', '_grist_ACLRules', null, rule(-3, isUser1, isUser1Parsed, 'all', 5)],
    [
      'AddRecord',
      '_grist_ACLRules',
      null,
      rule(-3, 'rec.Shared', JSON.stringify(['Attr', ['Name', 'rec'], 'Shared']), '+R', 6),
    ],
    [
      'AddRecord',
      '_grist_ACLRules',
      null,
      rule(
        -3,
        'user.Email == rec.Agent_Email',
        JSON.stringify(['Eq', ['Attr', ['Name', 'user'], 'Email'], ['Attr', ['Name', 'rec'], 'Agent_Email']]),
        '+R',
        7,
      ),
    ],
    ['AddRecord', '_grist_ACLRules', null, rule(-3, '', '', 'none', 8)],
  ];
}

function rule(resource: number, aclFormula: string, parsed: string, permissionsText: string, rulePos: number) {
  return {resource, aclFormula, aclFormulaParsed: parsed, permissionsText, rulePos, memo: ''};
}

test('AccessRules1: hidden table, hidden column, rows by rule, for editor, viewer and a second owner', async () => {
  const w = await world();
  try {
    await clientsAndFinancials(w);
    const applied = await w.as('ada', 'POST', `/api/docs/${w.docId}/apply`, ruleActions('ada@example.com'));
    assert.is(applied.status, 200, JSON.stringify(applied.body));
    const d = `/api/docs/${w.docId}`;
    for (const who of ['kiwi', 'vic', 'owen']) {
      // The financials table is hidden from all but ada.
      const fin = await w.as(who, 'GET', `${d}/tables/FinancialsTable/records`);
      assert.equal([fin.status, fin.body.error], [403, 'Blocked by table read access rules'], who);
      const data = await w.as(who, 'GET', `${d}/tables/FinancialsTable/data`);
      assert.is(data.status, 403, who);
      const tables = await w.as(who, 'GET', `${d}/tables`);
      assert.equal(
        tables.body.tables.map((t: {id: string}) => t.id),
        ['Table1', 'ClientsTable'],
        who,
      );
      const cols = await w.as(who, 'GET', `${d}/tables/FinancialsTable/columns`);
      assert.equal([cols.status, cols.body.error], [404, 'Table not found "FinancialsTable"'], who);
      // Clients: shared rows and their own (email matched exactly, as Grist's === does); no rumors.
      const clients = await w.as(who, 'GET', `${d}/tables/ClientsTable/records`);
      assert.is(clients.status, 200, who);
      const expected = who === 'kiwi' ? [2, 3] : [3];
      assert.equal(
        clients.body.records.map((r: {id: number}) => r.id),
        expected,
        who,
      );
      for (const r of clients.body.records) assert.not.ok('RumorsColumn' in r.fields, who);
      const ccols = await w.as(who, 'GET', `${d}/tables/ClientsTable/columns`);
      assert.not.ok(
        ccols.body.columns.some((c: {id: string}) => c.id === 'RumorsColumn'),
        who,
      );
      const cdata = await w.as(who, 'GET', `${d}/tables/ClientsTable/data`);
      assert.equal(cdata.body.id, expected, who);
      assert.not.ok('RumorsColumn' in cdata.body, who);
      // A limit applies after the rows are filtered.
      const one = await w.as(who, 'GET', `${d}/tables/ClientsTable/records?limit=1`);
      assert.equal(
        one.body.records.map((r: {id: number}) => r.id),
        expected.slice(0, 1),
        who,
      );
      // SQL and the .grist file see everything: refused, but to owners (Grist's FullCopies default).
      const sql = await w.as(who, 'GET', `${d}/sql?q=${encodeURIComponent('select * from FinancialsTable')}`);
      if (who === 'owen') assert.is(sql.status, 200);
      else assert.equal([sql.status, sql.body.error], [403, 'insufficient document access'], who);
      const dl = await w.as(who, 'GET', `${d}/download`);
      if (who === 'owen') assert.is(dl.status, 200, 'an owner downloads the whole file');
      else assert.equal([dl.status, dl.body.error], [403, 'not authorized to download this document'], who);
      // The rules themselves read as empty for non-owners.
      const acl = await w.as(who, 'GET', `${d}/tables/_grist_ACLRules/records`);
      if (who !== 'owen') assert.equal(acl.body.records, [], who);
    }
    // ada sees everything.
    const all = await w.as('ada', 'GET', `${d}/tables/ClientsTable/records`);
    assert.equal(
      all.body.records.map((r: {id: number}) => r.id),
      [1, 2, 3, 4],
    );
    assert.is(all.body.records[0].fields.RumorsColumn, 'r1');
    assert.is((await w.as('ada', 'GET', `${d}/tables/FinancialsTable/records`)).body.records.length, 2);
    assert.is((await w.as('ada', 'GET', `${d}/sql?q=select+1`)).status, 200);
  } finally {
    await w.close();
  }
});

test('writes: table, column and row rules refuse the whole request and change nothing', async () => {
  const w = await world();
  try {
    await clientsAndFinancials(w);
    await w.as('ada', 'POST', `/api/docs/${w.docId}/apply`, ruleActions('ada@example.com'));
    const d = `/api/docs/${w.docId}`;
    // kiwi may read some clients but update none: a table-level denial.
    const patch = await w.as('kiwi', 'PATCH', `${d}/tables/ClientsTable/records`, {
      records: [{id: 2, fields: {Name: 'x'}}],
    });
    assert.equal([patch.status, patch.body.error], [403, 'Blocked by table update access rules']);
    const add = await w.as('kiwi', 'POST', `${d}/tables/FinancialsTable/records`, {records: [{fields: {Amount: 1}}]});
    assert.equal([add.status, add.body.error], [403, 'Blocked by table create access rules']);
    const del = await w.as('kiwi', 'POST', `${d}/tables/ClientsTable/records/delete`, [2]);
    assert.equal([del.status, del.body.error], [403, 'Blocked by table delete access rules']);
    const before = (await w.as('ada', 'GET', `${d}/tables/ClientsTable/records`)).body;
    assert.is(before.records[1].fields.Name, 'Bolt');
    assert.is((await w.as('ada', 'GET', `${d}/tables/FinancialsTable/records`)).body.records.length, 2);
  } finally {
    await w.close();
  }
});

test('row update rule newRec.B <= rec.B: lowering allowed, raising refused (GranularAccess)', async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    await w.as('ada', 'POST', `${d}/tables`, {tables: [{id: 'T', columns: [{id: 'B', fields: {type: 'Numeric'}}]}]});
    await w.as('ada', 'POST', `${d}/tables/T/records`, {records: [{fields: {B: 100}}]});
    const parsed = JSON.stringify(['LtE', ['Attr', ['Name', 'newRec'], 'B'], ['Attr', ['Name', 'rec'], 'B']]);
    const notOwner = JSON.stringify(['NotEq', ['Attr', ['Name', 'user'], 'Access'], ['Name', 'OWNER']]);
    const r = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'T', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        rule(
          -1,
          'user.Access != OWNER and not (newRec.B <= rec.B)',
          JSON.stringify(['And', JSON.parse(notOwner), ['Not', JSON.parse(parsed)]]),
          '-U',
          1,
        ),
      ],
    ]);
    assert.is(r.status, 200, JSON.stringify(r.body));
    const down = await w.as('kiwi', 'PATCH', `${d}/tables/T/records`, {records: [{id: 1, fields: {B: 99}}]});
    assert.is(down.status, 200, JSON.stringify(down.body));
    const up = await w.as('kiwi', 'PATCH', `${d}/tables/T/records`, {records: [{id: 1, fields: {B: 101}}]});
    assert.equal([up.status, up.body.error], [403, 'Blocked by row update access rules']);
    assert.is((await w.as('kiwi', 'GET', `${d}/tables/T/records`)).body.records[0].fields.B, 99);
    // The owner is not restricted by this rule (it names non-owners), and can raise it.
    assert.is(
      (await w.as('ada', 'PATCH', `${d}/tables/T/records`, {records: [{id: 1, fields: {B: 500}}]})).status,
      200,
    );
  } finally {
    await w.close();
  }
});

test('exports and attachments follow the same rules as reads', async () => {
  const w = await world();
  try {
    await clientsAndFinancials(w);
    await w.as('ada', 'POST', `/api/docs/${w.docId}/apply`, ruleActions('ada@example.com'));
    const d = `/api/docs/${w.docId}`;
    const fin = await w.as('kiwi', 'GET', `${d}/download/csv?tableId=FinancialsTable`);
    assert.equal([fin.status, fin.body.error], [404, 'Cannot find or access table']);
    const schema = await w.as('kiwi', 'GET', `${d}/download/table-schema?tableId=FinancialsTable`);
    assert.is(schema.status, 404);
    // Kiwi's rows only (Bolt is hers, Cog is shared), without the rumors column.
    const res = await w.as('kiwi', 'GET', `${d}/download/csv?tableId=ClientsTable&header=colId`);
    assert.is(res.status, 200);
    assert.is(
      res.body,
      'Name,Agent_Email,Shared,RumorsColumn\nBolt,kiwi@example.com,false,r2\nCog,ada@example.com,true,r3\n'
        .replace(',RumorsColumn', '')
        .replace(',r2', '')
        .replace(',r3', ''),
    );
    const fields = (
      await w.as('kiwi', 'GET', `${d}/download/table-schema?tableId=ClientsTable&header=colId`)
    ).body.schema.fields.map((f: {name: string}) => f.name);
    assert.not.ok(fields.includes('RumorsColumn'));
  } finally {
    await w.close();
  }
});

fixtureTest('SelectionSummary.grist: column M hidden, row 1 of A-L censored, for the owner too', async () => {
  const w = await world();
  try {
    const path = corpusFiles().find((f) => f.endsWith('/SelectionSummary.grist'))!;
    const doc = await w.importDoc(path);
    for (const who of ['ada', 'kiwi']) {
      const r = await w.as(who, 'GET', `/api/docs/${doc}/tables/Table1/records`);
      assert.is(r.status, 200, JSON.stringify(r.body));
      assert.not.ok('M' in r.body.records[0].fields, who);
      assert.equal(r.body.records[0].fields.A, ['C'], who);
      assert.equal(r.body.records[0].fields.L, ['C'], who);
      assert.not.equal(r.body.records[1].fields.A, ['C'], who);
      const cols = (await w.as(who, 'GET', `/api/docs/${doc}/tables/Table1/columns`)).body.columns.map(
        (c: {id: string}) => c.id,
      );
      assert.not.ok(cols.includes('M'), who);
      assert.ok(cols.includes('A'), who);
    }
  } finally {
    await w.close();
  }
});

fixtureTest(
  'BadRules.grist: duplicate resources refuse the document to everyone; the owner can still download',
  async () => {
    const w = await world();
    try {
      const path = corpusFiles().find((f) => f.endsWith('/BadRules.grist'))!;
      const doc = await w.importDoc(path);
      for (const who of ['ada', 'kiwi']) {
        const r = await w.as(who, 'GET', `/api/docs/${doc}/tables/Table1/records`);
        assert.equal(
          [r.status, r.body.error],
          [400, 'Duplicate ACLResource 4: an ACLResource with the same tableId and colIds already exists'],
          who,
        );
      }
      assert.is((await w.as('ada', 'GET', `/api/docs/${doc}/download`)).status, 200);
      assert.is((await w.as('kiwi', 'GET', `/api/docs/${doc}/download`)).status, 400);
    } finally {
      await w.close();
    }
  },
);

fixtureTest('Memos-v34.grist: rules with comments deny and allow as Grist stored them', async () => {
  const w = await world();
  try {
    const path = corpusFiles().find((f) => f.endsWith('/Memos-v34.grist'))!;
    const doc = await w.importDoc(path);
    // Table2's only rule is `False # ...` -R: it never matches, so reads follow the defaults.
    for (const who of ['ada', 'kiwi', 'vic']) {
      const r = await w.as(who, 'GET', `/api/docs/${doc}/tables/Table2/records`);
      assert.is(r.status, 200, `${who} ${JSON.stringify(r.body)}`);
    }
    // The viewer may not write (the built-in rules), the editor may.
    const t1 = await w.as('vic', 'POST', `/api/docs/${doc}/tables/Table1/records`, {records: [{fields: {}}]});
    assert.is(t1.status, 403);
  } finally {
    await w.close();
  }
});

test.run();
