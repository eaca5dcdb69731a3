// Issue 16: access checks are as consistent in-process as over HTTP. The same operations, by an
// owner, an editor, a viewer and a stranger, through `engine.as(principal)` and through the REST
// API, succeed or fail alike, with the same status and message.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError, Engine, type Session} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';

type Outcome = {status: number; error?: string; result?: any};

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

test('owner, editor, viewer and stranger: the same outcomes and results in-process and over HTTP', () =>
  withEngine(async (engine, handle) => {
    const people = ['ada', 'bob', 'cy', 'dee'];
    const sessions: Record<string, Session> = {};
    const keys: Record<string, string> = {};
    for (const name of people) {
      sessions[name] = await engine.forUser(`${name}@example.com`, name);
      keys[name] = await engine.home.setApiKey(sessions[name].principal.user.id);
    }
    /** The answer over HTTP: status, and the error or the parsed result. */
    const http = async (who: string, method: string, url: string, body?: unknown): Promise<Outcome> => {
      const res = await handle({
        method,
        url,
        headers: {authorization: `Bearer ${keys[who]}`, 'content-type': 'application/json'},
        ...(body === undefined ? {} : {body: new TextEncoder().encode(JSON.stringify(body))}),
      });
      const parsed = JSON.parse(res.body as string);
      return res.status === 200 ? {status: 200, result: parsed} : {status: res.status, error: parsed.error};
    };
    /** The answer in-process, the result shaped as its HTTP twin's JSON. */
    const inProcessAs = async (fn: () => Promise<unknown>): Promise<Outcome> => {
      try {
        return {status: 200, result: JSON.parse(JSON.stringify(await fn()))};
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return {status: e.status, error: e.message};
      }
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
    const adaDoc = await ada.doc(docId);
    await adaDoc.addTables([{id: 'Items', columns: [{id: 'Name', fields: {type: 'Text'}}]}]);
    await adaDoc.addRecords('Items', [{Name: 'first'}]);
    const rule = ['AddRecord', '_grist_ACLResources', null, {tableId: '*', colIds: '*'}];

    // Each operation in-process (its result shaped as the HTTP answer) and over HTTP; `undo`
    // removes what a success added, so that both paths start from the same document.
    type Op = {
      what: string;
      session: (s: Session) => Promise<unknown>;
      http: (who: string) => Promise<Outcome>;
      /** Only what both answers must share (ids that cannot match, such as a new doc's, left out). */
      shape?: (result: any) => Promise<unknown> | unknown;
      undo?: (result: any) => Promise<unknown>;
    };
    const ops: Op[] = [
      {
        what: 'read records',
        session: async (s) => ({records: await (await s.doc(docId)).fetchRecords('Items')}),
        http: (w) => http(w, 'GET', `/api/docs/${docId}/tables/Items/records`),
      },
      {
        what: 'add records',
        session: async (s) => ({
          records: (await (await s.doc(docId)).addRecords('Items', [{Name: 'x'}])).map((id) => ({id})),
        }),
        http: (w) => http(w, 'POST', `/api/docs/${docId}/tables/Items/records`, {records: [{fields: {Name: 'x'}}]}),
        undo: (r) => adaDoc.applyUserActions([['BulkRemoveRecord', 'Items', r.records.map((x: {id: number}) => x.id)]]),
      },
      {
        what: 'add a table',
        session: async (s) => ({
          tables: (await (await s.doc(docId)).addTables([{id: 'More', columns: [{id: 'A'}]}])).map((id) => ({id})),
        }),
        http: (w) => http(w, 'POST', `/api/docs/${docId}/tables`, {tables: [{id: 'More', columns: [{id: 'A'}]}]}),
        undo: () => adaDoc.applyUserActions([['RemoveTable', 'More']]),
      },
      {
        what: 'write access rules',
        session: async (s) => (await s.doc(docId)).applyUserActions([rule]),
        http: (w) => http(w, 'POST', `/api/docs/${docId}/apply`, [rule]),
        // The action number grows with each write: the values returned are what must match.
        shape: (r) => r.retValues,
        undo: (r) => adaDoc.applyUserActions([['RemoveRecord', '_grist_ACLResources', r.retValues[0]]]),
      },
      {
        what: 'run SQL',
        session: (s) => s.runSql(docId, 'select count(*) as n from Items'),
        http: (w) => http(w, 'POST', `/api/docs/${docId}/sql`, {sql: 'select count(*) as n from Items'}),
      },
      {
        what: "create a doc in ada's Home",
        session: (s) => s.createDoc(home.id, {name: 'Another'}),
        http: (w) => http(w, 'POST', `/api/workspaces/${home.id}/docs`, {name: 'Another'}),
        // A new id each time: what must match is the document made (its name and workspace).
        shape: async (id: string) => {
          const doc = (await http('ada', 'GET', `/api/docs/${id}`)).result;
          return {name: doc.name, workspace: doc.workspace.id};
        },
        undo: (id: string) => http('ada', 'DELETE', `/api/docs/${id}`),
      },
    ];
    const seen: Record<string, number> = {};
    let compared = 0;
    for (const who of people) {
      for (const op of ops) {
        const settle = async (o: Outcome): Promise<Outcome> => {
          if (o.status !== 200) return o;
          const shaped = {status: 200, result: op.shape ? await op.shape(o.result) : o.result};
          await op.undo?.(o.result);
          return shaped;
        };
        const mine = await settle(await inProcessAs(() => op.session(sessions[who])));
        const theirs = await settle(await op.http(who));
        assert.equal(mine, theirs, `${who}: ${op.what}`);
        if (mine.status === 200) {
          assert.ok(mine.result !== undefined && mine.result !== null, `${who}: ${op.what} returned a result`);
          compared++;
        }
        seen[`${who} ${op.what}`] = mine.status;
      }
    }
    // Every one of the 24 outcomes, as the roles decide: viewers read and query, editors also
    // write records and tables, only owners change the rules; creating a doc needs a role on the
    // workspace, which the doc's guests lack; a stranger gets nothing.
    const expected: Record<string, number[]> = {
      //   read  add  table rules  sql  create
      ada: [200, 200, 200, 200, 200, 200],
      bob: [200, 200, 200, 403, 200, 403],
      cy: [200, 403, 403, 403, 200, 403],
      dee: [403, 403, 403, 403, 403, 403],
    };
    const pinned: Record<string, number> = {};
    for (const who of people) ops.forEach((op, i) => (pinned[`${who} ${op.what}`] = expected[who][i]));
    assert.equal(seen, pinned);
    assert.is(compared, 6 + 4 + 2, 'every success compared by its result');
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
      // Issue 40: conditions, counts, aggregates and writes by condition.
      [
        'where',
        async () => ({records: await kdoc.fetchRecords('Deals', {where: '$Amount > 0'})}),
        () => http('GET', `/tables/Deals/records?where=${encodeURIComponent('$Amount > 0')}`),
      ],
      [
        'where on a hidden column',
        async () => ({records: await kdoc.fetchRecords('Deals', {where: '$Note == "a"'})}),
        () => http('GET', `/tables/Deals/records?where=${encodeURIComponent('$Note == "a"')}`),
      ],
      [
        'count',
        async () => ({count: await kdoc.countRecords('Deals', {where: '$Amount > 0'})}),
        () => http('GET', `/tables/Deals/records?count=true&where=${encodeURIComponent('$Amount > 0')}`),
      ],
      [
        'aggregate',
        async () => ({records: await kdoc.aggregate('Deals', {groupBy: ['Owner'], agg: ['count', 'sum:Amount']})}),
        () => http('GET', '/tables/Deals/aggregate?group_by=Owner&agg=count,sum:Amount'),
      ],
      [
        'aggregate of a hidden column',
        async () => ({records: await kdoc.aggregate('Deals', {groupBy: ['Note']})}),
        () => http('GET', '/tables/Deals/aggregate?group_by=Note'),
      ],
      [
        'update where',
        async () => ({records: (await kdoc.updateRecordsWhere('Deals', 'True', {Amount: 1})).map((id) => ({id}))}),
        () => http('PATCH', '/tables/Deals/records?where=True', {fields: {Amount: 1}}),
      ],
      [
        'update without a condition',
        () => kdoc.updateRecordsWhere('Deals', ' ', {Amount: 1}),
        () => http('PATCH', '/tables/Deals/records?where=%20', {fields: {Amount: 1}}),
      ],
      [
        'remove where',
        async () => ({records: (await kdoc.removeRecordsWhere('Deals', '$Amount > 100')).map((id) => ({id}))}),
        () => http('POST', `/tables/Deals/records/delete?where=${encodeURIComponent('$Amount > 100')}`),
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
    let refused: unknown = null;
    try {
      await doc.fetchRecordsPage('Table1', {sort: 'A', limit: 2, cursor});
    } catch (e) {
      refused = e;
    }
    assert.instance(refused, ApiError);
    assert.is((refused as ApiError).status, 400);
    assert.match((refused as ApiError).message, /^Invalid cursor/);
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
