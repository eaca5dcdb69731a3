// Issue 29 follow-up, "a complete Session" again: the routes added since issue 23 (triggers, the
// document lifecycle, forms, copies) through `SessionDoc` / `Session`, each run against its HTTP
// twin by an owner, an editor, a viewer and a stranger: the same status and error, and for a
// success the same answer (or, for calls answering nothing, the same effect).
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError, Engine, importGristDoc, type Session} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';
import {corpusFiles, fixture, withFixtures} from './helpers.js';

type Handle = ReturnType<typeof createApiHandler>;

/** What a call answered: its status, and its error or its result. */
interface Outcome {
  status: number;
  error?: string;
  body?: unknown;
}

async function inProcess(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    // Shaped as JSON, as the HTTP answer is (`undefined` from a void call is HTTP's `null`).
    const body = await fn();
    return {status: 200, body: body === undefined ? null : JSON.parse(JSON.stringify(body))};
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return {status: e.status, error: e.message};
  }
}

/** One JSON call through the handler with the caller's key, as its Outcome. */
async function overHttp(handle: Handle, key: string, method: string, url: string, body?: unknown): Promise<Outcome> {
  const res = await handle({
    method,
    url,
    headers: {host: 'localhost', authorization: `Bearer ${key}`, 'content-type': 'application/json'},
    ...(body === undefined ? {} : {body: new TextEncoder().encode(JSON.stringify(body))}),
  });
  const parsed = JSON.parse(res.body as string);
  return res.status === 200 ? {status: 200, body: parsed} : {status: res.status, error: parsed.error};
}

/** What one call needs fresh (a trigger to change, a document to truncate or replace, ...). */
interface Fresh {
  trigger?: number;
  doc?: string;
}

interface Op {
  what: string;
  /** Makes what the call consumes, once per call (by the owner, outside the comparison). */
  fresh?: () => Promise<Fresh>;
  session: (s: Session, f: Fresh) => Promise<unknown>;
  http: (f: Fresh) => [method: string, url: string, body?: unknown];
  /** What must match after a success, given each side's answer and fresh things; default: the answers. */
  same?: (mine: Outcome, theirs: Outcome, fm: Fresh, ft: Fresh) => Promise<[unknown, unknown]>;
}

const ftest = withFixtures(test);

ftest('Session triggers, lifecycle, forms and copies answer as their HTTP twins, for every role', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-session-lifecycle-'));
  // Deliveries to a closed local port fail and are retried, so events stay waiting.
  const engine = await Engine.open({
    dataDir: dir,
    resumeWebhooks: false,
    env: {GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: '127.0.0.1:9'},
  });
  try {
    const handle: Handle = createApiHandler(engine, {
      onError: (e) => {
        throw e;
      },
    });
    const people = ['ada', 'bob', 'cy', 'dee'];
    const sessions: Record<string, Session> = {};
    const keys: Record<string, string> = {};
    for (const name of people) {
      sessions[name] = await engine.forUser(`${name}@example.com`, name);
      keys[name] = await engine.home.setApiKey(sessions[name].principal.user.id);
    }
    const http = (who: string, [method, url, body]: [string, string, unknown?]) =>
      overHttp(handle, keys[who], method, url, body);

    // A team site ada owns, bob edits and cy views; dee is a stranger.
    const ada = sessions.ada;
    const orgId = await ada.createOrg({name: 'Team', domain: 'team'});
    await ada.updateOrgAccess(orgId, {users: {'bob@example.com': 'editors', 'cy@example.com': 'viewers'}});
    const wsId = await ada.createWorkspace(orgId, {name: 'Projects'});
    const docId = await ada.createDoc(wsId, {name: 'Shared'});
    const doc = await ada.doc(docId);
    await doc.addTables([
      {id: 'People', columns: [{id: 'Name'}]},
      {id: 'Items', columns: [{id: 'Name'}, {id: 'Who', fields: {type: 'Ref:People'}}]},
    ]);
    await doc.addRecords('People', [{Name: 'Ann'}, {Name: 'Bo'}]);
    const col = (await doc.fetchRecords('_grist_Tables_column')).find(
      (c) => c.fields.colId === 'Name' && c.fields.parentId === 2,
    )!;
    await doc.applyUserActions([['ModifyColumn', 'Items', 'Who', {visibleCol: col.id}]]);
    // The page section of Items made a form (as Grist's form widget is).
    const tables = await doc.fetchRecords('_grist_Tables');
    const items = tables.find((t) => t.fields.tableId === 'Items')!;
    const section = (await doc.fetchRecords('_grist_Views_section')).find(
      (r) =>
        r.fields.tableRef === items.id &&
        r.id !== items.fields.rawViewSectionRef &&
        r.id !== items.fields.recordCardViewSectionRef,
    )!;
    await doc.applyUserActions([['UpdateRecord', '_grist_Views_section', section.id, {parentKey: 'form'}]]);
    await doc.addWebhooks([{url: 'http://127.0.0.1:9/hook', eventTypes: ['add'], tableId: 'Items'}]);
    await doc.addRecords('Items', [{Name: 'bolts', Who: 1}]);
    // A document Grist wrote, with its action history; and a copy of it, its history alike.
    const hello = (
      await importGristDoc(engine, wsId, ada.principal, {fileName: 'Hello.grist', path: fixture('Hello.grist')})
    ).id;
    const helloCopy = await ada.copyDoc(hello, wsId, {documentName: 'Hello again'});
    assert.ok((await (await ada.doc(hello)).states()).states.length > 5, 'Hello.grist has a history');

    const d = `/api/docs/${docId}`;
    const freshTrigger = async (): Promise<Fresh> => ({
      trigger: (await doc.addTriggers([{tableRef: items.id, label: 'Fresh'}])).records[0].id,
    });
    const freshHello = async (): Promise<Fresh> => ({doc: await ada.copyDoc(hello, wsId)});
    const triggerList = async () => (await doc.listTriggers()).records;
    const triggerOf = async (id: number) => (await triggerList()).find((r) => r.id === id) ?? null;
    const statesOf = async (id: string) => (await (await ada.doc(id)).states()).states;
    const rowsOf = async (id: string) => (await (await ada.doc(id)).fetchRecords('Table1')).map((r) => r.fields);
    const docOf = async (id: string) => {
      const meta = (await http('ada', ['GET', `/api/docs/${id}`])).body as {name: string; workspace: {id: number}};
      return {name: meta.name, workspace: meta.workspace.id, tables: (await (await ada.doc(id)).listTables()).length};
    };

    const ops: Op[] = [
      // triggers
      {
        what: 'list triggers',
        session: async (s) => (await s.doc(docId)).listTriggers(),
        http: () => ['GET', `${d}/triggers`],
      },
      {
        what: 'trigger monitor',
        session: async (s) => (await s.doc(docId)).triggerMonitor(),
        http: () => ['GET', `${d}/triggers/monitor`],
        // A delivery attempt may fall between the two calls: what is waiting must match.
        same: async (a, b) => {
          const waiting = (o: Outcome) =>
            (o.body as {pending: Array<{id: number; fields: Record<string, unknown>}>}).pending.map((p) => {
              const {status: _s, lastResult: _l, ...rest} = p.fields;
              return {id: p.id, ...rest};
            });
          assert.ok(waiting(a).length > 0, 'an event is waiting');
          return [waiting(a), waiting(b)];
        },
      },
      {
        what: 'add a trigger',
        session: async (s) => (await s.doc(docId)).addTriggers([{tableRef: items.id, label: 'New', memo: 'm'}]),
        http: () => ['POST', `${d}/triggers`, {records: [{fields: {tableRef: items.id, label: 'New', memo: 'm'}}]}],
        // New ids each time: the triggers made must match.
        same: async (a, b) => {
          const made = async (o: Outcome) => {
            const [{id}] = (o.body as {records: {id: number}[]}).records;
            return (await triggerOf(id))!.fields;
          };
          return [await made(a), await made(b)];
        },
      },
      {
        what: 'add a trigger on no table',
        session: async (s) => (await s.doc(docId)).addTriggers([{tableRef: 999}]),
        http: () => ['POST', `${d}/triggers`, {records: [{fields: {tableRef: 999}}]}],
      },
      {
        what: 'change a trigger',
        fresh: freshTrigger,
        session: async (s, f) =>
          (await s.doc(docId)).updateTriggers([{id: f.trigger!, fields: {label: 'Changed', enabled: false}}]),
        http: (f) => [
          'PATCH',
          `${d}/triggers`,
          {records: [{id: f.trigger, fields: {label: 'Changed', enabled: false}}]},
        ],
        same: async (_a, _b, fm, ft) => [
          (await triggerOf(fm.trigger!))!.fields,
          (await triggerOf(ft.trigger!))!.fields,
        ],
      },
      {
        what: 'change no trigger',
        session: async (s) => (await s.doc(docId)).updateTriggers([{id: 999, fields: {label: 'x'}}]),
        http: () => ['PATCH', `${d}/triggers`, {records: [{id: 999, fields: {label: 'x'}}]}],
      },
      {
        what: 'remove a trigger',
        fresh: freshTrigger,
        session: async (s, f) => (await s.doc(docId)).removeTriggers([f.trigger!]),
        http: (f) => ['POST', `${d}/triggers/delete`, {ids: [f.trigger]}],
        same: async (_a, _b, fm, ft) => [await triggerOf(fm.trigger!), await triggerOf(ft.trigger!)],
      },
      {
        what: 'remove no trigger',
        session: async (s) => (await s.doc(docId)).removeTriggers([999]),
        http: () => ['POST', `${d}/triggers/delete`, {ids: [999]}],
      },
      // lifecycle
      {
        what: 'force-reload',
        session: async (s) => (await s.doc(docId)).forceReload(),
        http: () => ['POST', `${d}/force-reload`],
      },
      {
        what: 'assign',
        session: async (s) => (await s.doc(docId)).assign(),
        http: () => ['POST', `${d}/assign`],
      },
      {
        what: 'states',
        session: async (s) => (await s.doc(hello)).states(),
        http: () => ['GET', `/api/docs/${hello}/states`],
      },
      {
        what: 'remove states',
        fresh: freshHello,
        session: async (s, f) => (await s.doc(f.doc!)).removeStates(2),
        http: (f) => ['POST', `/api/docs/${f.doc}/states/remove`, {keep: 2}],
        same: async (a, b, fm, ft) => [
          {answer: a.body, states: await statesOf(fm.doc!)},
          {answer: b.body, states: await statesOf(ft.doc!)},
        ],
      },
      {
        what: 'remove states, keep no number',
        session: async (s) => (await s.doc(hello)).removeStates('many' as never),
        http: () => ['POST', `/api/docs/${hello}/states/remove`, {keep: 'many'}],
      },
      {
        what: 'snapshots',
        session: async (s) => (await s.doc(docId)).snapshots(),
        http: () => ['GET', `${d}/snapshots`],
        // `lastModified` is the time of the call.
        same: async (a, b) => {
          const ids = (o: Outcome) =>
            (o.body as {snapshots: Array<{snapshotId: string; docId: string}>}).snapshots.map((x) => [
              x.snapshotId,
              x.docId,
            ]);
          return [ids(a), ids(b)];
        },
      },
      {
        what: 'replace from a document',
        fresh: freshHello,
        session: async (s, f) => (await s.doc(f.doc!)).replace({sourceDocId: docId}),
        http: (f) => ['POST', `/api/docs/${f.doc}/replace`, {sourceDocId: docId}],
        same: async (a, b, fm, ft) => {
          const tablesOf = async (id: string) => (await (await ada.doc(id)).listTables()).map((t) => t.id);
          return [
            {answer: a.body, tables: await tablesOf(fm.doc!)},
            {answer: b.body, tables: await tablesOf(ft.doc!)},
          ];
        },
      },
      {
        what: 'replace from the current snapshot',
        session: async (s) => (await s.doc(hello)).replace({snapshotId: 'current'}),
        http: () => ['POST', `/api/docs/${hello}/replace`, {snapshotId: 'current'}],
      },
      {
        what: 'replace from no snapshot',
        session: async (s) => (await s.doc(hello)).replace({snapshotId: 'nope'}),
        http: () => ['POST', `/api/docs/${hello}/replace`, {snapshotId: 'nope'}],
      },
      {
        what: 'replace from nothing',
        session: async (s) => (await s.doc(hello)).replace({}),
        http: () => ['POST', `/api/docs/${hello}/replace`, {}],
      },
      {
        what: 'compare with a copy',
        session: async (s) => (await s.doc(hello)).compare(helloCopy),
        http: () => ['GET', `/api/docs/${hello}/compare/${helloCopy}`],
      },
      {
        what: 'compare with another document',
        session: async (s) => (await s.doc(hello)).compare(docId),
        http: () => ['GET', `/api/docs/${hello}/compare/${docId}`],
      },
      {
        what: 'compare, maxRows 0',
        session: async (s) => (await s.doc(hello)).compare(helloCopy, {maxRows: 0}),
        http: () => ['GET', `/api/docs/${hello}/compare/${helloCopy}?maxRows=0`],
      },
      // forms
      {
        what: 'form',
        session: async (s) => (await s.doc(docId)).form(section.id),
        http: () => ['GET', `${d}/forms/${section.id}`],
      },
      {
        what: 'form of a raw section',
        session: async (s) => (await s.doc(docId)).form(items.fields.rawViewSectionRef as number),
        http: () => ['GET', `${d}/forms/${items.fields.rawViewSectionRef}`],
      },
      // copies
      {
        what: 'copy',
        session: (s) => s.copyDoc(hello, wsId, {documentName: 'Copied'}),
        http: () => ['POST', `/api/docs/${hello}/copy`, {workspaceId: wsId, documentName: 'Copied'}],
        same: async (a, b) => [
          {...(await docOf(a.body as string)), rows: await rowsOf(a.body as string)},
          {...(await docOf(b.body as string)), rows: await rowsOf(b.body as string)},
        ],
      },
      {
        what: 'copy as a template',
        session: async (s) => (await s.doc(hello)).copy(wsId, {asTemplate: true}),
        http: () => ['POST', `/api/docs/${hello}/copy`, {workspaceId: wsId, asTemplate: true}],
        same: async (a, b) => [
          {...(await docOf(a.body as string)), rows: await rowsOf(a.body as string)},
          {...(await docOf(b.body as string)), rows: await rowsOf(b.body as string)},
        ],
      },
    ];

    const seen = new Map<string, number>();
    for (const who of people) {
      for (const op of ops) {
        const fm = (await op.fresh?.()) ?? {};
        const mine = await inProcess(() => op.session(sessions[who], fm));
        const ft = (await op.fresh?.()) ?? {};
        const theirs = await http(who, op.http(ft));
        const label = `${who}: ${op.what}`;
        assert.equal({status: mine.status, error: mine.error}, {status: theirs.status, error: theirs.error}, label);
        if (mine.status === 200) {
          const [a, b] = op.same ? await op.same(mine, theirs, fm, ft) : [mine.body, theirs.body];
          assert.equal(a, b, `${label} (answer)`);
        }
        seen.set(label, mine.status);
      }
    }
    // The outcomes follow the roles: triggers, history truncation and replacing are the owners';
    // force-reload and assign the editors'; the rest the viewers'; a stranger gets nothing.
    // Columns: list, monitor, add, on no table, change, change none, remove, remove none | reload,
    // assign, states, remove states, keep no number, snapshots, replace from a document, current,
    // no snapshot, nothing, compare with a copy, another, maxRows 0 | form, raw section | copy, template.
    const table: Record<string, string> = {
      ada: '200 200 200 404 200 400 200 400 200 200 200 200 400 200 200 200 404 400 200 200 400 200 404 200 200',
      bob: '403 403 403 403 403 403 403 403 200 200 200 403 403 200 403 403 403 403 200 200 400 200 404 200 200',
      cy: '403 403 403 403 403 403 403 403 403 403 200 403 403 200 403 403 403 403 200 200 400 200 404 403 403',
    };
    const expected: Record<string, number[]> = {};
    for (const [who, row] of Object.entries(table)) expected[who] = row.split(' ').map(Number);
    expected.dee = ops.map(() => 403);
    const pinned = new Map<string, number>();
    for (const who of people) ops.forEach((op, i) => pinned.set(`${who}: ${op.what}`, expected[who][i]));
    assert.equal(Object.fromEntries(seen), Object.fromEntries(pinned));
    // And what the comparisons said: a copy is the same, a document Grist never wrote unrelated.
    const helloDoc = await ada.doc(hello);
    assert.is((await helloDoc.compare(helloCopy)).summary, 'same');
    assert.is((await helloDoc.compare(docId)).summary, 'unrelated');
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

// Under access rules the new calls are gated as their routes gate them: snapshots, comparisons,
// copies and replacements read a document whole, so they need rules that hide nothing; a form is
// read through the rules. With rules Grist would refuse (BadRules.grist), force-reload and assign
// still answer (they check the home access only), reads refuse, and owners still replace.
withFixtures(test, ['grist', 'corpus'])(
  'under access rules, and broken ones, Session answers as HTTP does',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gl-session-lifecycle-rules-'));
    const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
    try {
      const handle: Handle = createApiHandler(engine, {
        onError: (e) => {
          throw e;
        },
      });
      const ada = await engine.forUser('ada@example.com', 'Ada');
      const kiwi = await engine.forUser('kiwi@example.com', 'Kiwi');
      const keys = {
        ada: await engine.home.setApiKey(ada.principal.user.id),
        kiwi: await engine.home.setApiKey(kiwi.principal.user.id),
      };
      const sessions = {ada, kiwi};
      const wsId = (await ada.personalWorkspace()).id;
      const docId = await ada.createDoc(wsId, {name: 'Rules'});
      await ada.updateDocAccess(docId, {users: {'kiwi@example.com': 'editors'}});
      const doc = await ada.doc(docId);
      await doc.addTables([
        {id: 'People', columns: [{id: 'Name'}, {id: 'Private'}]},
        {id: 'Items', columns: [{id: 'Name'}, {id: 'Secret'}, {id: 'Who', fields: {type: 'Ref:People'}}]},
      ]);
      await doc.addRecords('People', [
        {Name: 'Ann', Private: 'no'},
        {Name: 'Bo', Private: 'yes'},
      ]);
      const cols = await doc.fetchRecords('_grist_Tables_column');
      const nameCol = cols.find((c) => c.fields.colId === 'Name' && c.fields.parentId === 2)!;
      await doc.applyUserActions([['ModifyColumn', 'Items', 'Who', {visibleCol: nameCol.id}]]);
      const items = (await doc.fetchRecords('_grist_Tables')).find((t) => t.fields.tableId === 'Items')!;
      const section = (await doc.fetchRecords('_grist_Views_section')).find(
        (r) =>
          r.fields.tableRef === items.id &&
          r.id !== items.fields.rawViewSectionRef &&
          r.id !== items.fields.recordCardViewSectionRef,
      )!;
      await doc.applyUserActions([
        ['UpdateRecord', '_grist_Views_section', section.id, {parentKey: 'form'}],
        ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Items', colIds: 'Secret'}],
        ['AddRecord', '_grist_ACLResources', -2, {tableId: 'People', colIds: '*'}],
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
          {
            resource: -2,
            aclFormula: 'user.Access != OWNER and rec.Private == "yes"',
            permissionsText: '-R',
            rulePos: 2,
          },
        ],
      ]);
      const other = await ada.createDoc(wsId, {name: 'Other'});
      const kiwiOwn = await kiwi.createDoc((await kiwi.personalWorkspace()).id, {name: 'Hers'});
      const badPath = corpusFiles().find((f) => f.endsWith('/BadRules.grist'))!;
      const bad = (await importGristDoc(engine, wsId, ada.principal, {fileName: 'BadRules.grist', path: badPath})).id;
      await ada.updateDocAccess(bad, {users: {'kiwi@example.com': 'editors'}});

      const http = (who: 'ada' | 'kiwi', method: string, url: string, body?: unknown) =>
        overHttp(handle, keys[who], method, url, body);
      const d = `/api/docs/${docId}`;
      type Pair = [who: 'ada' | 'kiwi', what: string, (s: Session) => Promise<unknown>, [string, string, unknown?]];
      const pairs: Pair[] = [
        ['kiwi', 'snapshots', async (s) => (await s.doc(docId)).snapshots(), ['GET', `${d}/snapshots`]],
        ['kiwi', 'compare', async (s) => (await s.doc(docId)).compare(other), ['GET', `${d}/compare/${other}`]],
        [
          'kiwi',
          'compare from',
          async (s) => (await s.doc(other)).compare(docId),
          ['GET', `/api/docs/${other}/compare/${docId}`],
        ],
        ['kiwi', 'states', async (s) => (await s.doc(docId)).states(), ['GET', `${d}/states`]],
        ['kiwi', 'form', async (s) => (await s.doc(docId)).form(section.id), ['GET', `${d}/forms/${section.id}`]],
        [
          'ada',
          'form as owner',
          async (s) => (await s.doc(docId)).form(section.id),
          ['GET', `${d}/forms/${section.id}`],
        ],
        ['kiwi', 'copy', (s) => s.copyDoc(docId, wsId), ['POST', `${d}/copy`, {workspaceId: wsId}]],
        [
          'kiwi',
          'replace hers from it',
          async (s) => (await s.doc(kiwiOwn)).replace({sourceDocId: docId}),
          ['POST', `/api/docs/${kiwiOwn}/replace`, {sourceDocId: docId}],
        ],
        [
          'kiwi',
          'broken: force-reload',
          async (s) => (await s.doc(bad)).forceReload(),
          ['POST', `/api/docs/${bad}/force-reload`],
        ],
        ['kiwi', 'broken: assign', async (s) => (await s.doc(bad)).assign(), ['POST', `/api/docs/${bad}/assign`]],
        ['kiwi', 'broken: states', async (s) => (await s.doc(bad)).states(), ['GET', `/api/docs/${bad}/states`]],
        [
          'kiwi',
          'broken: replace',
          async (s) => (await s.doc(bad)).replace({snapshotId: 'current'}),
          ['POST', `/api/docs/${bad}/replace`, {snapshotId: 'current'}],
        ],
        [
          'ada',
          'broken: replace as owner',
          async (s) => (await s.doc(bad)).replace({snapshotId: 'current'}),
          ['POST', `/api/docs/${bad}/replace`, {snapshotId: 'current'}],
        ],
      ];
      const outcomes: Record<string, number> = {};
      const forms: Record<string, unknown> = {};
      for (const [who, what, viaSession, [method, url, body]] of pairs) {
        const a = await inProcess(() => viaSession(sessions[who]));
        const b = await http(who, method, url, body);
        assert.equal(a, b, what);
        outcomes[what] = a.status;
        if (what.startsWith('form')) forms[who] = a.body;
      }
      assert.equal(outcomes, {
        snapshots: 403,
        compare: 403,
        'compare from': 403,
        states: 200,
        form: 200,
        'form as owner': 200,
        copy: 403,
        'replace hers from it': 403,
        'broken: force-reload': 200,
        'broken: assign': 200,
        'broken: states': 400,
        'broken: replace': 400,
        'broken: replace as owner': 200,
      });
      // What the form shows her: no Secret question, and only the people she may read to choose from.
      const fields = (f: unknown) => Object.values((f as {formFieldsById: object}).formFieldsById);
      assert.equal(
        fields(forms.kiwi).map((x) => x.colId),
        ['Name', 'Who'],
      );
      assert.equal(fields(forms.ada).length, 3);
      assert.equal(fields(forms.kiwi).find((x) => x.colId === 'Who').refValues, [[1, 'Ann']]);
    } finally {
      await engine.close();
      rmSync(dir, {recursive: true, force: true});
    }
  },
);

test.run();
