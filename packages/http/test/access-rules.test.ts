// Issue 27: Grist's access rules through the REST API, for owners, editors and viewers. The
// scenarios follow Grist's own (test/nbrowser/AccessRules1.ts, test/server/lib/GranularAccess.ts),
// on documents built here.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, importUpload} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';
import {corpusFiles, readAnswer, withFixtures} from './helpers.js';

const fixtureTest = withFixtures(test, ['grist', 'corpus']);

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
    const {json: parsed} = await readAnswer(res.body);
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
    // Add-or-update matches rows by reading the table: only for those who read all of it.
    const put = await w.as('kiwi', 'PUT', `${d}/tables/ClientsTable/records`, {
      records: [{require: {Name: 'Bolt'}, fields: {Shared: true}}],
    });
    assert.equal([put.status, put.body.error], [403, 'Blocked by table read access rules']);
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

fixtureTest("ACL-Test.grist with the rules of Grist's AccessRules1 test: what kiwi sees", async () => {
  const w = await world();
  try {
    const path = corpusFiles().find((f) => f.endsWith('/ACL-Test.grist'))!;
    const doc = await w.importDoc(path);
    const kiwi = await w.engine.forUser('gristoid+kiwi@gmail.com', 'Kiwi');
    const ada = await w.engine.forUser('ada@example.com');
    await w.engine.home.updateAccess('doc', {doc}, ada.principal, null, {
      delta: {users: {'gristoid+kiwi@gmail.com': 'editors'}},
    });
    const applied = await w.as('ada', 'POST', `/api/docs/${doc}/apply`, ruleActions('ada@example.com'));
    assert.is(applied.status, 200, JSON.stringify(applied.body));
    const session = await kiwi.doc(doc);
    assert.equal(
      (await session.fetchRecords('ClientsTable')).map((r) => r.id),
      [2, 3, 9, 12, 13, 14, 15, 16, 17, 18, 19],
    );
    assert.not.ok((await session.listColumns('ClientsTable')).some((c) => c.id === 'RumorsColumn'));
    const fin = await session.fetchRecords('FinancialsTable').catch((e) => e);
    assert.is(fin.message, 'Blocked by table read access rules');
    // The owner reads every row.
    assert.is((await w.as('ada', 'GET', `/api/docs/${doc}/tables/ClientsTable/records`)).body.records.length, 19);
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
      // The editor cannot repair it; the owner can, through /apply (Grist's recovery mode), by
      // removing the duplicate resource with its rule.
      const fix = [
        ['RemoveRecord', '_grist_ACLRules', 2],
        ['RemoveRecord', '_grist_ACLResources', 4],
      ];
      assert.is((await w.as('kiwi', 'POST', `/api/docs/${doc}/apply`, fix)).status, 400);
      const half = await w.as('ada', 'POST', `/api/docs/${doc}/apply`, [fix[1]]);
      // Grist's engine sets the rule's resource to 0 when its resource goes (useractions.py:1258-1276).
      assert.equal([half.status, half.body.error], [400, 'ACLRule 2 refers to an invalid ACLResource 0']);
      // A repair that leaves the duplicate is refused in Grist's words (GranularAccess.ts:645-668).
      const dup = await w.as('ada', 'POST', `/api/docs/${doc}/apply`, [fix[0]]);
      assert.equal(
        [dup.status, dup.body],
        [400, {error: 'Duplicate ACLResource 4: an ACLResource with the same tableId and colIds already exists'}],
      );
      const repaired = await w.as('ada', 'POST', `/api/docs/${doc}/apply`, fix);
      assert.is(repaired.status, 200, JSON.stringify(repaired.body));
      assert.is((await w.as('kiwi', 'GET', `/api/docs/${doc}/tables/Table1/records`)).status, 200);
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

test("rule edits: Grist's parsed text stored, bad rules refused with Grist's messages, owners only", async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    const add = (aclFormula: string, permissionsText = '-R', who = 'ada') =>
      w.as(who, 'POST', `${d}/apply`, [
        ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: '*'}],
        ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula, permissionsText, rulePos: 1}],
      ]);
    const ok = await add('user.Email in ["a@b.c", "d@e.f"] and not $A # memo');
    assert.is(ok.status, 200, JSON.stringify(ok.body));
    const rules = (await w.as('ada', 'GET', `${d}/tables/_grist_ACLRules/records`)).body.records;
    const mine = rules.find((r: any) => r.fields.aclFormula.startsWith('user.Email'));
    assert.is(
      mine.fields.aclFormulaParsed,
      '["Comment", ["And", ["In", ["Attr", ["Name", "user"], "Email"], ["List", ["Const", "a@b.c"], ["Const", "d@e.f"]]], ["Not", ["Attr", ["Name", "rec"], "A"]]], "memo"]',
    );
    // A second resource for the same table: Grist refuses the duplicate; nothing is written.
    const dup = await add('True');
    assert.is(dup.status, 400);
    assert.match(
      dup.body.error,
      /^Duplicate ACLResource \d+: an ACLResource with the same tableId and colIds already exists$/,
    );
    const count = (await w.as('ada', 'GET', `${d}/tables/_grist_ACLResources/records`)).body.records.length;
    const again = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: 'A'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'len(rec.A) > 1', permissionsText: '-R'}],
    ]);
    assert.equal([again.status, again.body.error], [400, "Unknown variable 'len'"]);
    const syntax = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: 'B'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'rec.A ==', permissionsText: '-R'}],
    ]);
    assert.equal(
      [syntax.status, syntax.body.error],
      [400, 'Error manipulating data: [Sandbox] SyntaxError invalid syntax on line 1 col 9'],
    );
    const perms = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: 'C'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: '', permissionsText: 'R+'}],
    ]);
    assert.equal([perms.status, perms.body.error], [400, 'Invalid permissions specification "R+"']);
    // Rules must name tables and columns that exist (Grist's findRuleProblems).
    const entity = (tableId: string, colIds: string) =>
      w.as('ada', 'POST', `${d}/apply`, [
        ['AddRecord', '_grist_ACLResources', -1, {tableId, colIds}],
        ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: '', permissionsText: '-R'}],
      ]);
    const noTable = await entity('Nope', '*');
    assert.equal([noTable.status, noTable.body.error], [400, 'Invalid tables in rules: Nope']);
    const noCol = await entity('Table1', 'A,Zed');
    assert.equal([noCol.status, noCol.body.error], [400, 'Invalid columns in rules for table Table1: Zed']);
    assert.is((await w.as('ada', 'GET', `${d}/tables/_grist_ACLResources/records`)).body.records.length, count);
    // Only owners edit rules.
    const kiwi = await w.as('kiwi', 'POST', `${d}/apply`, [
      ['UpdateRecord', '_grist_ACLRules', mine.id, {permissionsText: '+R'}],
    ]);
    assert.equal([kiwi.status, kiwi.body.error], [403, 'Only owners can modify access rules']);
  } finally {
    await w.close();
  }
});

test("user attributes: a row found by the user's email (case-insensitive) gives user.Team.X", async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    await w.as('ada', 'POST', `${d}/tables`, {
      tables: [
        {id: 'Team', columns: [{id: 'Email'}, {id: 'Region'}]},
        {id: 'Sales', columns: [{id: 'Region'}, {id: 'Amount', fields: {type: 'Numeric'}}]},
      ],
    });
    await w.as('ada', 'POST', `${d}/tables/Team/records`, {
      records: [
        {fields: {Email: 'KIWI@Example.com', Region: 'North'}},
        {fields: {Email: 'vic@example.com', Region: 'South'}},
      ],
    });
    await w.as('ada', 'POST', `${d}/tables/Sales/records`, {
      records: [
        {fields: {Region: 'North', Amount: 1}},
        {fields: {Region: 'South', Amount: 2}},
        {fields: {Region: 'North', Amount: 3}},
      ],
    });
    const r = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: '*', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Sales', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -1,
          aclFormula: '',
          permissionsText: '',
          rulePos: 1,
          userAttributes: JSON.stringify({name: 'Team', tableId: 'Team', lookupColId: 'Email', charId: 'Email'}),
        },
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -2, aclFormula: 'user.Access == OWNER', permissionsText: 'all', rulePos: 2},
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -2, aclFormula: 'rec.Region != user.Team.Region', permissionsText: '-R', rulePos: 3},
      ],
    ]);
    assert.is(r.status, 200, JSON.stringify(r.body));
    const ids = async (who: string) =>
      (await w.as(who, 'GET', `${d}/tables/Sales/records`)).body.records.map((x: {id: number}) => x.id);
    assert.equal(await ids('kiwi'), [1, 3]);
    assert.equal(await ids('vic'), [2]);
    assert.equal(await ids('ada'), [1, 2, 3]);
    // Moving kiwi to the South changes what she sees at once (the attribute table is read per request).
    await w.as('ada', 'PATCH', `${d}/tables/Team/records`, {records: [{id: 1, fields: {Region: 'South'}}]});
    assert.equal(await ids('kiwi'), [2]);
  } finally {
    await w.close();
  }
});

// Grist's GranularAccess test "reports memos sensibly", in our words: a denial carries the memos of
// the rules that denied (reasons) and of the rules that would have allowed (remedies).
test('memos: reasons and remedies come with a denial', async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    const rule = (aclFormula: string, permissionsText: string, memo = '') => [
      'AddRecord',
      '_grist_ACLRules',
      null,
      {resource: -1, aclFormula, permissionsText, memo},
    ];
    const r = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddTable', 'T1', [{id: 'A'}]],
      ['AddRecord', 'T1', null, {A: 'test1'}],
      ['AddRecord', 'T1', null, {A: 'test2'}],
      ['AddTable', 'T2', [{id: 'A'}]],
      ['AddRecord', '_grist_ACLResources', -1, {tableId: '*', colIds: '*'}],
      rule('rec.A == "test1"', 'none'),
      rule('rec.A == "test2"', '-D', 'rule_d1'),
      rule('rec.A == "test2"', '-D', 'rule_d2'),
      rule('rec.A == "test1"', '+U', 'rule_u'),
      rule('True', '-S', 'rule_s'),
      rule('', '-U'),
    ]);
    assert.is(r.status, 200, JSON.stringify(r.body));
    const denied = async (res: Promise<Res>, memos: string[], error?: string) => {
      const got = await res;
      assert.is(got.status, 403, JSON.stringify(got.body));
      if (error) assert.is(got.body.error, error);
      // Always present, strings in Grist 1.7.17 (test/server/lib/GranularAccess.ts:4600-4607).
      assert.equal(got.body.details, {memos}, JSON.stringify(got.body));
    };
    await denied(w.as('ada', 'POST', `${d}/tables/T1/records/delete`, [1]), []);
    await denied(w.as('ada', 'POST', `${d}/tables/T1/records/delete`, [2]), ['rule_d1', 'rule_d2']);
    await denied(w.as('ada', 'PATCH', `${d}/tables/T1/records`, {records: [{id: 2, fields: {A: 'x'}}]}), ['rule_u']);
    await denied(
      w.as('ada', 'POST', `${d}/apply`, [['AddVisibleColumn', 'T2', 'B', {}]]),
      ['rule_s'],
      'Blocked by table structure access rules',
    );
    // Changes that may carry formulas are checked against the whole document (Grist's "full").
    await denied(
      w.as('ada', 'POST', `${d}/apply`, [['ModifyColumn', 'T2', 'A', {formula: 'a formula'}]]),
      ['rule_s'],
      'Blocked by full structure access rules',
    );
    await denied(
      w.as('ada', 'PATCH', `${d}/tables/T2/columns`, {columns: [{id: 'A', fields: {label: 'x'}}]}),
      ['rule_s'],
      'Blocked by full structure access rules',
    );
  } finally {
    await w.close();
  }
});

// Grist's combining rules, each on its own: owners are not exempt; column rules keep only R and
// U; an erroring rule loses its allows but keeps its denies; link keys reach rules.
test('semantics: owners not exempt, bits per resource kind, erroring rules, link keys', async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    await w.as('ada', 'POST', `${d}/tables`, {tables: [{id: 'T', columns: [{id: 'A'}, {id: 'B'}, {id: 'K'}]}]});
    await w.as('ada', 'POST', `${d}/tables/T/records`, {
      records: [{fields: {A: 'a1', B: 'b1', K: 'red'}}, {fields: {A: 'a2', B: 'b2', K: 'blue'}}],
    });
    const r = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'T', colIds: 'A'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'T', colIds: 'B'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'T', colIds: '*'}],
      // Everyone, owners included, loses A.
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: '', permissionsText: '-R', rulePos: 1}],
      // C and D mean nothing on a column: B stays readable and rows stay deletable.
      ['AddRecord', '_grist_ACLRules', null, {resource: -2, aclFormula: '', permissionsText: '-CD', rulePos: 2}],
      // An erroring rule (None.lower()) keeps its deny: nobody updates rows.
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -3, aclFormula: 'user.Nope.lower() == "x"', permissionsText: '+R-U', rulePos: 3},
      ],
      // Rows by link key: ?K_=red shows the red row only to non-owners.
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -3,
          aclFormula: 'user.Access != OWNER and rec.K != user.LinkKey.K',
          permissionsText: '-R',
          rulePos: 4,
        },
      ],
    ]);
    assert.is(r.status, 200, JSON.stringify(r.body));
    const owner = (await w.as('ada', 'GET', `${d}/tables/T/records`)).body.records;
    assert.equal(
      owner.map((x: {fields: object}) => Object.keys(x.fields).sort()),
      [
        ['B', 'K'],
        ['B', 'K'],
      ],
    );
    const upd = await w.as('ada', 'PATCH', `${d}/tables/T/records`, {records: [{id: 1, fields: {K: 'green'}}]});
    assert.equal([upd.status, upd.body.error], [403, 'Blocked by table update access rules']);
    // Link keys: kiwi sees the row her link names, and none without one.
    const ids = async (q: string) =>
      (await w.as('kiwi', 'GET', `${d}/tables/T/records${q}`)).body.records.map((x: {id: number}) => x.id);
    assert.equal(await ids('?K_=red'), [1]);
    assert.equal(await ids('?K_=blue'), [2]);
    assert.equal(await ids(''), []);
    // `-CD` on a column is ignored (column rules keep R and U): kiwi, an editor, still deletes.
    assert.is((await w.as('kiwi', 'POST', `${d}/tables/T/records/delete`, [2])).status, 200);
  } finally {
    await w.close();
  }
});

// The red-team check of issue 27: a value a rule hides appears in no answer a non-owner can get.
test('red team: no endpoint shows kiwi a value the rules hide from her', async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    await w.as('ada', 'POST', `${d}/tables`, {
      tables: [
        {id: 'Vault', columns: [{id: 'Code'}]},
        {
          id: 'People',
          columns: [
            {id: 'Name'},
            {id: 'Salary'},
            {id: 'Owner'},
            {id: 'Files', fields: {type: 'Attachments'}},
            {id: 'Shout', fields: {formula: '$Salary.upper()', type: 'Any'}},
          ],
        },
      ],
    });
    const open = w.engine.openDoc(w.docId);
    const [attSecret] = await open.addAttachments([
      {fileName: 'SECRET-FILE.txt', mimeType: 'text/plain', data: Buffer.from('SECRET-BYTES')},
    ]);
    await w.as('ada', 'POST', `${d}/tables/Vault/records`, {records: [{fields: {Code: 'SECRET-TABLE'}}]});
    await w.as('ada', 'POST', `${d}/tables/People/records`, {
      records: [
        {fields: {Name: 'kiwi', Salary: 'secret-col-1', Owner: 'kiwi@example.com'}},
        {fields: {Name: 'SECRET-ROW', Salary: 'secret-col-2', Owner: 'ada@example.com', Files: ['L', attSecret]}},
      ],
    });
    const r = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Vault', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'People', colIds: 'Salary,Shout'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'People', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R', rulePos: 1},
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -2, aclFormula: 'user.Access != OWNER', permissionsText: '-R', rulePos: 2},
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -3,
          aclFormula: 'user.Access != OWNER and rec.Owner != user.Email',
          permissionsText: '-R',
          rulePos: 3,
        },
      ],
    ]);
    assert.is(r.status, 200, JSON.stringify(r.body));
    // What an owner sees, so that the check below means something.
    assert.match(JSON.stringify((await w.as('ada', 'GET', `${d}/tables/People/records`)).body), /SECRET-ROW/);
    const gets = [
      '',
      '/tables',
      '/tables/Vault/records',
      '/tables/Vault/data',
      '/tables/Vault/columns',
      '/tables/People/records',
      '/tables/People/records?hidden=1',
      '/tables/People/data',
      '/tables/People/columns?hidden=1',
      '/tables/_grist_Tables/records',
      '/tables/_grist_Tables_column/records',
      '/tables/_grist_ACLRules/records',
      '/tables/_grist_Attachments/records',
      '/tables/_grist_Cells/records',
      '/download',
      '/download/csv?tableId=People',
      '/download/csv?tableId=Vault',
      '/download/table-schema?tableId=People',
      '/attachments',
      `/attachments/${attSecret}`,
      `/attachments/${attSecret}/download`,
      '/attachments/archive',
      `/sql?q=${encodeURIComponent('select * from People')}`,
      '/webhooks',
    ];
    const leaks: string[] = [];
    for (const path of gets) {
      const res = await w.as('kiwi', 'GET', `${d}${path}`);
      const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
      if (/SECRET|secret-col/i.test(text)) leaks.push(`GET ${path}: ${res.status} ${text.slice(0, 120)}`);
    }
    const posts: Array<[string, unknown]> = [
      ['/tables/People/records/list', {}],
      ['/sql', {sql: 'select Name, Salary from People'}],
      ['/copy', {workspaceId: 1, documentName: 'mine'}],
    ];
    for (const [path, body] of posts) {
      const res = await w.as('kiwi', 'POST', `${d}${path}`, body);
      const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
      if (/SECRET|secret-col/i.test(text) || (path === '/copy' && res.status === 200)) {
        leaks.push(`POST ${path}: ${res.status} ${text.slice(0, 120)}`);
      }
    }
    assert.equal(leaks, []);
    // Filtering or sorting on a hidden column would tell its values by which rows come back.
    const byHidden = await w.as(
      'kiwi',
      'GET',
      `${d}/tables/People/records?filter=${encodeURIComponent('{"Salary":["secret-col-1"]}')}`,
    );
    // Decision DA6: refused in plain words (Grist filters first, then hides the column).
    const hides = 'access rules hide it from you, and the rows returned would reveal the hidden values';
    assert.equal([byHidden.status, byHidden.body.error], [403, `Cannot filter by column "Salary": ${hides}`]);
    const sortHidden = await w.as('kiwi', 'GET', `${d}/tables/People/records?sort=Salary`);
    assert.equal([sortHidden.status, sortHidden.body.error], [403, `Cannot sort by column "Salary": ${hides}`]);
    // A negative limit counts from the end of the rows she may read (one: none left).
    assert.equal((await w.as('kiwi', 'GET', `${d}/tables/People/records?limit=-1`)).body.records, []);
    // Kiwi still reads her own row, without the hidden columns.
    const mine = (await w.as('kiwi', 'GET', `${d}/tables/People/records`)).body.records;
    assert.equal(
      mine.map((x: {id: number}) => x.id),
      [1],
    );
    assert.not.ok('Salary' in mine[0].fields || 'Shout' in mine[0].fields);
  } finally {
    await w.close();
  }
});

// A fuzz of rules through the API: random formulas and permission texts, written by the owner
// (200 or 400, never 5xx), then every read path as an editor and a viewer (never 5xx), and the
// secret column, denied by a fixed rule listed first, never shows.
test('fuzz: random rules never crash a path or leak the column a rule hides', async () => {
  const w = await world();
  try {
    const d = `/api/docs/${w.docId}`;
    await w.as('ada', 'POST', `${d}/tables`, {
      tables: [
        {
          id: 'T',
          columns: [
            {id: 'A'},
            {id: 'N', fields: {type: 'Numeric'}},
            {id: 'L', fields: {type: 'ChoiceList'}},
            {id: 'S'},
          ],
        },
      ],
    });
    await w.as('ada', 'POST', `${d}/tables/T/records`, {
      records: [
        {fields: {A: 'kiwi@example.com', N: 1, L: ['L', 'x'], S: 'SECRET-1'}},
        {fields: {A: 'x', N: -2.5, L: null, S: 'SECRET-2'}},
        {fields: {A: '', N: 0, L: ['L', 'x', 'y'], S: 'SECRET-3'}},
      ],
    });
    const fixed = await w.as('ada', 'POST', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'T', colIds: 'S'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R', rulePos: 0.5},
      ],
    ]);
    assert.is(fixed.status, 200, JSON.stringify(fixed.body));
    let seed = 20261126;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(xs: T[]) => xs[rand(xs.length)];
    const atoms = [
      'rec.A',
      'rec.N',
      'rec.L',
      'rec.id',
      'newRec.N',
      'user.Email',
      'user.Access',
      'user.Name',
      'user.LinkKey.k',
      'user.Nope.X',
      '"x"',
      '1',
      '-1',
      '2.5',
      'None',
      'True',
      '[1, "x"]',
      'EDITOR',
      'OWNER',
      'rec',
      'len',
      '$A',
      '"kiwi@example.com"',
    ];
    const ops = ['==', '!=', '<', '>=', 'in', 'not in', 'is', 'and', 'or', '+', '*', '/', '%'];
    const formula = (depth: number): string =>
      depth <= 0 || rand(3) === 0
        ? pick(atoms) + (rand(6) === 0 ? '.lower()' : '')
        : rand(5) === 0
          ? `not (${formula(depth - 1)})`
          : `${formula(depth - 1)} ${pick(ops)} ${formula(depth - 1)}`;
    const perms = ['+R', '-R', '+CRUD', '-U', 'all', 'none', '', '+R-U', 'R', '+X', '-S', '+S'];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 60; i++) {
      const rules = Array.from({length: 1 + rand(3)}, (_, j) => [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: rand(8) === 0 ? '' : formula(3), permissionsText: pick(perms), rulePos: 1 + j},
      ]);
      const res = await w.as('ada', 'POST', `${d}/apply`, [
        ['AddRecord', '_grist_ACLResources', -1, {tableId: 'T', colIds: pick(['*', 'A', 'N,L'])}],
        ...rules,
      ]);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      assert.ok(res.status === 200 || res.status === 400, `${res.status} ${JSON.stringify(res.body)}`);
      for (const who of ['kiwi', 'vic']) {
        for (const path of [
          '/tables/T/records',
          '/tables/T/data',
          '/tables/T/columns',
          '/tables',
          '/download/csv?tableId=T',
          '/sql?q=select+1',
          '/tables/T/records?k_=1',
        ]) {
          const r = await w.as(who, 'GET', `${d}${path}`);
          assert.ok(r.status < 500, `${who} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
          assert.not.match(typeof r.body === 'string' ? r.body : JSON.stringify(r.body), /SECRET/, `${who} ${path}`);
        }
        const write = await w.as(who, 'PATCH', `${d}/tables/T/records`, {records: [{id: 1, fields: {N: rand(5)}}]});
        assert.ok(write.status < 500, `${who} write: ${write.status} ${JSON.stringify(write.body)}`);
      }
      if (res.status === 200) {
        // Remove the random resource and its rules again (the fixed one stays).
        const all = (await w.as('ada', 'GET', `${d}/tables/_grist_ACLRules/records`)).body.records as Array<{
          id: number;
          fields: {resource: number};
        }>;
        const resources = (await w.as('ada', 'GET', `${d}/tables/_grist_ACLResources/records`)).body.records as Array<{
          id: number;
        }>;
        const last = Math.max(...resources.map((r) => r.id));
        const removed = await w.as('ada', 'POST', `${d}/apply`, [
          ['BulkRemoveRecord', '_grist_ACLRules', all.filter((r) => r.fields.resource === last).map((r) => r.id)],
          ['RemoveRecord', '_grist_ACLResources', last],
        ]);
        assert.is(removed.status, 200, JSON.stringify(removed.body));
      }
    }
    assert.ok((statuses.get(200) ?? 0) >= 10, `some random rules were accepted: ${[...statuses]}`);
    assert.ok((statuses.get(400) ?? 0) >= 5, `some were refused: ${[...statuses]}`);
  } finally {
    await w.close();
  }
});

test.run();
