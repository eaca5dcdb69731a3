// Issue 16: access checks are as consistent in-process as over HTTP. The same operations, by an
// owner, an editor, a viewer and a stranger, through `engine.as(principal)` and through the REST
// API, succeed or fail alike, with the same status and message.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError, Engine, type Session} from '@gristlite/core';
import {createApiHandler} from '../src/index.js';

type Outcome = {status: number; error?: string};

async function inProcess(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    await fn();
    return {status: 200};
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return {status: e.status, error: e.message};
  }
}

type Handle = ReturnType<typeof createApiHandler>;

/** An engine in a temporary directory with its HTTP handler (errors thrown, not logged), closed after `fn`. */
async function withEngine(fn: (engine: Engine, handle: Handle) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-session-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  try {
    const handle = createApiHandler(engine, {
      onError: (e) => {
        throw e;
      },
    });
    await fn(engine, handle);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

test('owner, editor, viewer and stranger: the same outcomes in-process and over HTTP', () =>
  withEngine(async (engine, handle) => {
    const people = ['ada', 'bob', 'cy', 'dee'];
    const sessions: Record<string, Session> = {};
    const keys: Record<string, string> = {};
    for (const name of people) {
      sessions[name] = await engine.forUser(`${name}@example.com`, name);
      keys[name] = await engine.home.setApiKey(sessions[name].principal.user.id);
    }
    const http = async (who: string, method: string, url: string, body?: unknown): Promise<Outcome> => {
      const res = await handle({
        method,
        url,
        headers: {authorization: `Bearer ${keys[who]}`, 'content-type': 'application/json'},
        ...(body === undefined ? {} : {body: new TextEncoder().encode(JSON.stringify(body))}),
      });
      return res.status === 200 ? {status: 200} : {status: res.status, error: JSON.parse(res.body as string).error};
    };

    const ada = sessions.ada;
    const home = await ada.personalWorkspace();
    assert.is(home.name, 'Home');
    const docId = await ada.createDoc(home.id, {name: 'Shared'});
    assert.is(
      (
        await http('ada', 'PATCH', `/api/docs/${docId}/access`, {
          delta: {users: {'bob@example.com': 'editors', 'cy@example.com': 'viewers'}},
        })
      ).status,
      200,
    );
    await (await ada.doc(docId)).addTables([{id: 'Items', columns: [{id: 'Name', fields: {type: 'Text'}}]}]);

    // Each operation, in-process and over HTTP.
    const ops: Array<[string, (s: Session) => Promise<unknown>, (who: string) => Promise<Outcome>]> = [
      [
        'read records',
        async (s) => (await s.doc(docId)).fetchRecords('Items'),
        (w) => http(w, 'GET', `/api/docs/${docId}/tables/Items/records`),
      ],
      [
        'add records',
        async (s) => (await s.doc(docId)).addRecords('Items', [{Name: 'x'}]),
        (w) => http(w, 'POST', `/api/docs/${docId}/tables/Items/records`, {records: [{fields: {Name: 'x'}}]}),
      ],
      [
        'add a table',
        async (s) => (await s.doc(docId)).addTables([{id: 'More', columns: [{id: 'A'}]}]),
        (w) => http(w, 'POST', `/api/docs/${docId}/tables`, {tables: [{id: 'More', columns: [{id: 'A'}]}]}),
      ],
      [
        'write access rules',
        async (s) =>
          (await s.doc(docId)).applyUserActions([
            ['AddRecord', '_grist_ACLResources', null, {tableId: '*', colIds: '*'}],
          ]),
        (w) =>
          http(w, 'POST', `/api/docs/${docId}/apply`, [
            ['AddRecord', '_grist_ACLResources', null, {tableId: '*', colIds: '*'}],
          ]),
      ],
      [
        'run SQL',
        (s) => s.runSql(docId, 'select count(*) as n from Items'),
        (w) => http(w, 'POST', `/api/docs/${docId}/sql`, {sql: 'select count(*) as n from Items'}),
      ],
      [
        "create a doc in ada's Home",
        (s) => s.createDoc(home.id, {name: 'Another'}),
        (w) => http(w, 'POST', `/api/workspaces/${home.id}/docs`, {name: 'Another'}),
      ],
    ];
    const seen: string[] = [];
    for (const who of people) {
      for (const [what, viaSession, viaHttp] of ops) {
        // Tables added by one path would make the other's add differ: undo between the two.
        // What one path adds would make the other's add differ (a second table More, a duplicate
        // rule resource): undo between the two.
        const undo = async (o: Outcome) => {
          if (o.status !== 200) return;
          const doc = await ada.doc(docId);
          if (what === 'add a table') await doc.applyUserActions([['RemoveTable', 'More']]);
          if (what === 'write access rules') {
            const ids = (await doc.fetchRecords('_grist_ACLResources')).map((r) => r.id);
            await doc.applyUserActions([['RemoveRecord', '_grist_ACLResources', Math.max(...ids)]]);
          }
        };
        const mine = await inProcess(() => viaSession(sessions[who]));
        await undo(mine);
        const theirs = await viaHttp(who);
        await undo(theirs);
        assert.equal(mine, theirs, `${who}: ${what}`);
        seen.push(`${who} ${what}: ${mine.status}`);
      }
    }
    // The outcomes themselves follow the roles.
    const status = (line: string) => seen.find((s) => s.startsWith(line))!.split(': ')[1];
    assert.is(status('ada write access rules'), '200');
    assert.is(status('bob add records'), '200');
    assert.is(status('bob write access rules'), '403');
    assert.is(status('cy read records'), '200');
    assert.is(status('cy add records'), '403');
    assert.is(status('cy run SQL'), '200');
    assert.is(status('dee read records'), '403');
    assert.is(status("dee create a doc in ada's Home"), '403');
  }));

// Issue 23: every record write of SessionDoc refuses the malformed inputs its HTTP twin refuses,
// with the same status and message (paths start at the argument, `records`, instead of `body.records`),
// and leaves the rows as they were. The inputs are those of the conformance records tests.
test('SessionDoc writes refuse malformed input as their HTTP twins do, and change nothing', () =>
  withEngine(async (engine, handle) => {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const key = await engine.home.setApiKey(ada.principal.user.id);
    const home = await ada.personalWorkspace();
    const docId = await ada.createDoc(home.id, {name: 'Bad input'});
    const doc = await ada.doc(docId);
    await doc.addTables([
      {id: 'Tasks', columns: [{id: 'Title'}, {id: 'Owner'}, {id: 'Hours', fields: {type: 'Numeric'}}]},
    ]);
    await doc.addRecords('Tasks', [
      {Title: 'a', Owner: 'ann', Hours: 1},
      {Title: 'b', Owner: 'bo', Hours: 2},
      {Title: 'c', Owner: 'cy', Hours: 3},
    ]);
    const before = await doc.fetchRecords('Tasks');
    const http = async (method: string, body: unknown): Promise<Outcome> => {
      const res = await handle({
        method,
        url: `/api/docs/${docId}/tables/Tasks/records`,
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
        body: new TextEncoder().encode(JSON.stringify(body)),
      });
      if (res.status === 200) return {status: 200};
      const b = JSON.parse(res.body as string);
      return {status: res.status, error: [b.error, b.details?.userError].filter(Boolean).join(' ')};
    };
    const session = async (fn: () => Promise<unknown>): Promise<Outcome> => {
      try {
        await fn();
        return {status: 200};
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const details = (e as ApiError & {details?: {userError?: string}}).details?.userError;
        return {status: e.status, error: [e.message, details].filter(Boolean).join(' ')};
      }
    };
    // Message paths: `body.records` over HTTP, the argument `records` in-process.
    const bad: unknown[] = [
      1,
      'hi',
      [],
      [1],
      [null],
      [{}],
      [{id: 'x'}],
      [{id: 1}],
      [{id: 1, fields: 5}],
      [{id: 1, fields: {Title: {nested: true}}}],
      [{id: 1, fields: {Title: ['Z', 1]}}],
      [
        {id: 1, fields: {Hours: 10}},
        {id: 3, fields: {Title: 'x'}},
      ],
      [
        {id: 1, fields: {Hours: 10}},
        {id: 3, fields: {Hours: 11, Title: 'x'}},
      ],
    ];
    // POST /records takes `{fields}` per record, SessionDoc.addRecords the fields themselves.
    const badFields: unknown[] = [5, 'x', null, [1], {Title: {nested: true}}, {Title: ['Z', 1]}];
    let checked = 0;
    for (const fields of badFields) {
      const mine = await session(() => doc.addRecords('Tasks', [{Title: 'ok'}, fields] as never));
      const theirs = await http('POST', {records: [{fields: {Title: 'ok'}}, {fields}]});
      assert.equal(mine, {...theirs, error: theirs.error?.replaceAll('body.records', 'records')}, `add ${fields}`);
      assert.is(mine.status, 400, `add ${JSON.stringify(fields)} is refused`);
      assert.equal(await doc.fetchRecords('Tasks'), before, `add ${JSON.stringify(fields)} changed nothing`);
      checked++;
    }
    for (const records of bad) {
      const inputs: Array<[string, () => Promise<unknown>, () => Promise<Outcome>]> = [
        ['update', () => doc.updateRecords('Tasks', records as never), () => http('PATCH', {records})],
        ['upsert', () => doc.upsertRecords('Tasks', records as never), () => http('PUT', {records})],
      ];
      for (const [what, viaSession, viaHttp] of inputs) {
        const mine = await session(viaSession);
        const theirs = await viaHttp();
        assert.equal(
          mine,
          {...theirs, error: theirs.error?.replaceAll('body.records', 'records')},
          `${what} ${JSON.stringify(records)}`,
        );
        assert.is(mine.status, 400, `${what} ${JSON.stringify(records)} is refused`);
        assert.equal(await doc.fetchRecords('Tasks'), before, `${what} ${JSON.stringify(records)} changed nothing`);
        checked++;
      }
    }
    assert.ok(checked >= 30, `${checked} inputs compared`);
    // The mixed update of issue 23, by name: refused, no cell nulled.
    const e = await session(() =>
      doc.updateRecords('Tasks', [
        {id: 1, fields: {Hours: 10}},
        {id: 3, fields: {Title: 'x'}},
      ]),
    );
    assert.equal(e, {status: 400, error: 'PATCH requires all records to have same fields'});
    assert.equal((await doc.fetchRecords('Tasks'))[0].fields, {Title: 'a', Owner: 'ann', Hours: 1});
  }));

// Issue 27: under access rules, SessionDoc answers each user as the same request over HTTP does:
// the same rows, columns and tables, the same refusals.
test('under access rules, Session reads and writes answer as HTTP does', () =>
  withEngine(async (engine, handle) => {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const kiwi = await engine.forUser('kiwi@example.com', 'Kiwi');
    const key = await engine.home.setApiKey(kiwi.principal.user.id);
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Rules'});
    const doc = await ada.doc(docId);
    await engine.home.updateAccess('doc', {doc: docId}, ada.principal, null, {
      delta: {users: {'kiwi@example.com': 'editors'}},
    });
    await doc.addTables([
      {id: 'Deals', columns: [{id: 'Owner'}, {id: 'Amount', fields: {type: 'Numeric'}}, {id: 'Note'}]},
      {id: 'Secrets', columns: [{id: 'X'}]},
    ]);
    await doc.addRecords('Deals', [
      {Owner: 'kiwi@example.com', Amount: 1, Note: 'a'},
      {Owner: 'ada@example.com', Amount: 2, Note: 'b'},
    ]);
    await doc.addRecords('Secrets', [{X: 'hidden'}]);
    await doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Deals', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Deals', colIds: 'Note'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Secrets', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -1,
          aclFormula: 'user.Access != OWNER and rec.Owner != user.Email',
          permissionsText: '-RU',
          rulePos: 1,
        },
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
        {resource: -3, aclFormula: 'user.Access != OWNER', permissionsText: '-R', rulePos: 3},
      ],
    ]);
    const http = async (method: string, url: string, body?: unknown) => {
      const res = await handle({
        method,
        url: `/api/docs/${docId}${url}`,
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
        ...(body === undefined ? {} : {body: new TextEncoder().encode(JSON.stringify(body))}),
      });
      const parsed = JSON.parse(res.body as string);
      return res.status === 200 ? {status: 200, body: parsed} : {status: res.status, error: parsed.error};
    };
    const mine = async (fn: () => Promise<unknown>) => {
      try {
        return {status: 200, body: await fn()};
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return {status: e.status, error: e.message};
      }
    };
    const kdoc = await kiwi.doc(docId);
    const pairs: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
      [
        'records',
        async () => ({records: await kdoc.fetchRecords('Deals')}),
        () => http('GET', '/tables/Deals/records'),
      ],
      [
        'hidden table',
        async () => ({records: await kdoc.fetchRecords('Secrets')}),
        () => http('GET', '/tables/Secrets/records'),
      ],
      ['tables', async () => ({tables: await kdoc.listTables()}), () => http('GET', '/tables')],
      ['columns', async () => ({columns: await kdoc.listColumns('Deals')}), () => http('GET', '/tables/Deals/columns')],
      [
        'hidden columns',
        async () => ({columns: await kdoc.listColumns('Secrets')}),
        () => http('GET', '/tables/Secrets/columns'),
      ],
      ['sql', () => kdoc.runSql('select 1'), () => http('POST', '/sql', {sql: 'select 1'})],
      [
        'update not hers',
        () => kdoc.updateRecords('Deals', [{id: 2, fields: {Amount: 5}}]),
        () => http('PATCH', '/tables/Deals/records', {records: [{id: 2, fields: {Amount: 5}}]}),
      ],
    ];
    for (const [what, viaSession, viaHttp] of pairs) {
      const a = await mine(viaSession);
      const b = (await viaHttp()) as {status: number};
      if (a.status !== 200 || what === 'sql' || what === 'update not hers') {
        assert.equal(
          {status: a.status, error: (a as {error?: string}).error},
          {status: b.status, error: (b as {error?: string}).error},
          what,
        );
      } else assert.equal(a, b, what);
    }
    // And what they show: her row only, without the note, and no Secrets.
    assert.equal(
      (await kdoc.fetchRecords('Deals')).map((r) => r.fields),
      [{Owner: 'kiwi@example.com', Amount: 1}],
    );
    assert.equal(
      (await kdoc.listTables()).map((t) => t.id),
      ['Table1', 'Deals'],
    );
  }));

test("pages: Session.fetchRecordsPage and GET /records page alike, and take each other's cursors", () =>
  withEngine(async (engine, handle) => {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const key = await engine.home.setApiKey(ada.principal.user.id);
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Paged'});
    const doc = await ada.doc(docId);
    await doc.addRecords(
      'Table1',
      ['c', 'a', null, 'b', 'a', 'd', 'e'].map((A) => ({A})),
    );
    const get = async (url: string) => {
      const res = await handle({method: 'GET', url, headers: {authorization: `Bearer ${key}`}});
      assert.is(res.status, 200, String(res.body));
      return {records: JSON.parse(res.body as string).records, link: res.headers.Link ?? null};
    };
    const all = await doc.fetchRecords('Table1', {sort: '-A'});
    const pages: unknown[] = [];
    let cursor: string | undefined;
    for (let i = 0; ; i++) {
      // Odd pages through Session, even ones over HTTP, each continuing the other's cursor.
      if (i % 2) {
        const p = await doc.fetchRecordsPage('Table1', {sort: '-A', limit: 2, cursor});
        pages.push(...p.records);
        if (!p.next) break;
        cursor = p.next;
      } else {
        const p = await get(
          `/api/docs/${docId}/tables/Table1/records?sort=-A&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        pages.push(...p.records);
        if (!p.link) break;
        cursor = /cursor=([^&>]+)/.exec(p.link)![1];
      }
      assert.ok(i < 10);
    }
    assert.equal(pages, all);
    const refused = await inProcess(() => doc.fetchRecordsPage('Table1', {sort: 'A', limit: 2, cursor}));
    assert.is(refused.status, 400);
    assert.match(refused.error ?? '', /^Invalid cursor/);
  }));

test('document API keys: made and revoked in-process, used and listed over HTTP alike', () =>
  withEngine(async (engine, handle) => {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const key = await engine.home.setApiKey(ada.principal.user.id);
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Keyed'});
    const doc = await ada.doc(docId);
    const made = await doc.createApiKey({name: 'etl', access: 'viewers'});
    const get = async (url: string, bearer: string) => {
      const res = await handle({method: 'GET', url, headers: {authorization: `Bearer ${bearer}`}});
      return {status: res.status, body: JSON.parse(res.body as string)};
    };
    assert.is((await get(`/api/docs/${docId}/tables/Table1/records`, made.key)).status, 200);
    const overHttp = (await get(`/api/docs/${docId}/apikeys`, key)).body;
    assert.equal(overHttp, await doc.listApiKeys());
    assert.is(overHttp.apikeys[0].name, 'etl');
    await doc.deleteApiKey(made.id);
    assert.equal(await get(`/api/docs/${docId}/tables/Table1/records`, made.key), {
      status: 401,
      body: {error: 'Bad request: invalid API key'},
    });
  }));

test.run();
