/**
 * Endpoints of today's Grist (1.7.17) beyond REST API 1.0.1 (issue 29), from grist-core's
 * `test/server/lib/docapi` tests: the trigger records behind webhooks (DocApiTriggers.ts), and the
 * document lifecycle (force-reload, states/remove, snapshots, assign, replace, compare).
 */
import {createServer, type ServerResponse, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import Database from 'better-sqlite3';
import * as assert from 'uvu/assert';
import {multipart} from './attachments.js';
import {importFixture, tablePath} from './docdata.js';
import {withFixtures} from '@gristlite/core/testing';
import {areaSuite, isError, isErrorLike, isInvalidPayload, ok, useWorld, type Target} from './world.js';

export function lifecycleSuite(target: Target): void {
  const s = areaSuite(target, 'lifecycle');
  // A receiver that never answers: events stay waiting while their delivery is in flight.
  let receiver: Server;
  let host = '';
  const held: ServerResponse[] = [];
  s.before(async () => {
    receiver = createServer((_req, res) => void held.push(res));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    host = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  const world = useWorld(s, target, () => ({
    GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: `example.com,${host}`,
  }));
  s.after(async () => {
    for (const res of held) res.destroy();
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
  });
  let doc = '';
  const triggers = () => `/api/docs/${doc}/triggers`;
  const tableRef = async (tableId = 'Table1') => {
    const {api, chimpy} = world();
    const res = ok(await api.get(`/api/docs/${doc}/tables/_grist_Tables/records`, chimpy.as));
    return res.body.records.find((r: any) => r.fields.tableId === tableId).id as number;
  };
  const list = async () => ok(await world().api.get(triggers(), world().chimpy.as)).body.records as any[];

  s('a new document has no triggers; only owners reach them (DocApiTriggers)', async () => {
    const {api, chimpy, kiwi} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Triggers');
    assert.equal(ok(await api.get(triggers(), chimpy.as)).body, {
      records: [],
    });
    await world().share(chimpy, `/api/docs/${doc}`, {
      [kiwi.email]: 'editors',
    });
    isErrorLike(await api.get(triggers(), kiwi.as), 403, /No view access|access/i);
    isErrorLike(await api.post(triggers(), {records: []}, kiwi.as), 403, /access/i);
    isErrorLike(await api.get(`${triggers()}/monitor`, kiwi.as), 403, /access/i);
  });

  s('triggers are created, listed, updated and removed as records', async () => {
    const {api, chimpy} = world();
    const ref = await tableRef();
    const added = ok(
      await api.post(
        triggers(),
        {
          records: [
            {fields: {tableRef: ref, label: 'A', enabled: true}},
            {fields: {tableRef: ref, label: 'B', memo: 'old'}},
          ],
        },
        chimpy.as,
      ),
    ).body;
    assert.is(added.records.length, 2);
    const [a, b] = added.records.map((r: any) => r.id);
    assert.type(a, 'number');
    let records = await list();
    assert.equal(
      records.map((r) => [r.id, r.fields.label, r.fields.tableRef, r.fields.enabled, r.fields.actions]),
      [
        [a, 'A', ref, true, '[]'],
        [b, 'B', ref, true, '[]'],
      ],
      'enabled by default, as Grist adds them',
    );
    ok(
      await api.patch(
        triggers(),
        {
          records: [
            {
              id: b,
              fields: {label: 'After', memo: 'new', enabled: false},
            },
          ],
        },
        chimpy.as,
      ),
    );
    records = await list();
    const rb = records.find((r) => r.id === b);
    assert.equal([rb.fields.label, rb.fields.memo, rb.fields.enabled], ['After', 'new', false]);
    // A trigger without actions is no webhook.
    assert.equal(ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body, {webhooks: []});
    ok(await api.post(`${triggers()}/delete`, {ids: [a, b]}, chimpy.as));
    assert.equal(await list(), []);
  });

  s('trigger bodies are checked as Grist checks them; unknown tables and rows are refused', async () => {
    const {api, chimpy} = world();
    isInvalidPayload(
      await api.post(triggers(), {records: [{fields: {label: 'x'}}]}, chimpy.as),
      'Error: value.records[0].fields is not a TriggerFields; value.records[0].fields.tableRef is missing',
    );
    isInvalidPayload(await api.post(triggers(), {}, chimpy.as), 'Error: value.records is missing');
    isInvalidPayload(
      await api.post(`${triggers()}/delete`, {ids: ['x']}, chimpy.as),
      'Error: value.ids[0] is not a number',
    );
    isError(await api.post(triggers(), {records: [{fields: {tableRef: 999}}]}, chimpy.as), 404, 'Table not found: 999');
    isError(
      await api.patch(triggers(), {records: [{id: 999, fields: {label: 'x'}}]}, chimpy.as),
      400,
      'Invalid row id 999',
    );
    isError(await api.post(`${triggers()}/delete`, {ids: [999]}, chimpy.as), 400, 'Invalid row id 999');
    const ref = await tableRef();
    isError(
      await api.post(
        triggers(),
        {
          records: [
            {
              fields: {
                tableRef: ref,
                actions: JSON.stringify([{type: 'sms'}]),
              },
            },
          ],
        },
        chimpy.as,
      ),
      400,
      'Invalid trigger action: Error: value is none of WebhookAction, EmailAction',
    );
    isErrorLike(
      await api.post(
        triggers(),
        {
          records: [
            {
              fields: {
                tableRef: ref,
                actions: JSON.stringify([{type: 'webhook', url: 'https://evil.com/x'}]),
              },
            },
          ],
        },
        chimpy.as,
      ),
      403,
      // Grist's words, then gristlite's hint naming the setting (decision D73).
      /^Provided url is forbidden \(/,
    );
    // A refused request writes nothing, the valid records before the bad one included.
    isError(
      await api.post(
        triggers(),
        {
          records: [{fields: {tableRef: ref}}, {fields: {tableRef: 999}}],
        },
        chimpy.as,
      ),
      404,
      'Table not found: 999',
    );
    assert.equal(await list(), []);
  });

  s('webhook actions keep their secrets out of the document and are the webhooks of /webhooks', async () => {
    const {api, chimpy} = world();
    const ref = await tableRef();
    const [{id}] = ok(await api.post(triggers(), {records: [{fields: {tableRef: ref, label: 'Mixed'}}]}, chimpy.as))
      .body.records;
    const actions = [
      {type: 'email', to: 'a@b.com', subject: 'S', body: 'B'},
      {
        type: 'webhook',
        url: 'https://example.com/w',
        authorization: 'Bearer secret123',
      },
    ];
    ok(await api.patch(triggers(), {records: [{id, fields: {actions: JSON.stringify(actions)}}]}, chimpy.as));
    let got = JSON.parse((await list())[0].fields.actions);
    assert.is(got.length, 2);
    assert.equal([got[0].type, got[0].to, got[0].subject, got[0].body], ['email', 'a@b.com', 'S', 'B']);
    assert.type(got[0].id, 'string');
    assert.equal([got[1].type, got[1].url], ['webhook', 'https://example.com/w']);
    assert.is(got[1].authorization, 'Bearer secr...', 'masked as GET /webhooks masks it (D51)');
    assert.type(got[1].id, 'string');
    const webhookId = got[1].id;
    // The document holds only the type and id (Grist keeps the rest in its home database).
    const stored = ok(await api.get(`/api/docs/${doc}/tables/_grist_Triggers/records`, chimpy.as)).body.records[0];
    assert.equal(JSON.parse(stored.fields.actions)[1], {
      type: 'webhook',
      id: webhookId,
    });
    const hooks = ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body.webhooks;
    assert.equal(
      hooks.map((h: any) => [h.id, h.fields.url, h.fields.name, h.fields.tableId]),
      [[webhookId, 'https://example.com/w', 'Mixed', 'Table1']],
    );
    // Sending the listing back (masked authorization included) changes only what was edited.
    got[0].subject = 'Updated';
    ok(await api.patch(triggers(), {records: [{id, fields: {actions: JSON.stringify(got)}}]}, chimpy.as));
    got = JSON.parse((await list())[0].fields.actions);
    assert.is(got[0].subject, 'Updated');
    assert.equal([got[1].id, got[1].url, got[1].authorization], [webhookId, 'https://example.com/w', 'Bearer secr...']);
    // Dropping the webhook action removes the webhook.
    ok(await api.patch(triggers(), {records: [{id, fields: {actions: JSON.stringify([got[0]])}}]}, chimpy.as));
    assert.equal(ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body, {webhooks: []});
    // A webhook made through /webhooks is a trigger here; removing the trigger removes it.
    const made = ok(
      await api.post(
        `/api/docs/${doc}/webhooks`,
        {
          webhooks: [
            {
              fields: {
                tableId: 'Table1',
                eventTypes: ['add'],
                url: 'https://example.com/h',
                name: 'H',
              },
            },
          ],
        },
        chimpy.as,
      ),
    ).body.webhooks[0].id;
    const t = (await list()).find((r) => r.fields.label === 'H');
    assert.equal(t.fields.eventTypes, ['L', 'add']);
    assert.equal(t.fields.watchedColRefList, ['L'], 'no watched columns');
    const hook = JSON.parse(t.fields.actions)[0];
    assert.equal([hook.id, hook.url, typeof hook.unsubscribeKey], [made, 'https://example.com/h', 'string']);
    // Another trigger naming H's webhook id gets a webhook of its own: H's stays as it was.
    const [{id: other}] = ok(
      await api.post(triggers(), {records: [{fields: {tableRef: ref, label: 'Other'}}]}, chimpy.as),
    ).body.records;
    const borrowed = [{type: 'webhook', id: made, url: 'https://example.com/taken'}];
    ok(await api.patch(triggers(), {records: [{id: other, fields: {actions: JSON.stringify(borrowed)}}]}, chimpy.as));
    const otherHook = JSON.parse((await list()).find((r) => r.id === other).fields.actions)[0];
    assert.ok(otherHook.id !== made, 'a new webhook id');
    const urls = ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body.webhooks.map((h: any) => [
      h.id,
      h.fields.url,
    ]);
    assert.ok(
      urls.some(([i, u]: [string, string]) => i === made && u === 'https://example.com/h'),
      JSON.stringify(urls),
    );
    // One record per trigger in a PATCH.
    isError(
      await api.patch(
        triggers(),
        {
          records: [
            {id: other, fields: {label: 'a'}},
            {id: other, fields: {label: 'b'}},
          ],
        },
        chimpy.as,
      ),
      400,
      `Duplicate row id ${other}`,
    );
    ok(await api.post(`${triggers()}/delete`, {ids: (await list()).map((r) => r.id)}, chimpy.as));
    assert.equal(ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body, {webhooks: []});
  });

  s('the trigger monitor lists the events waiting for delivery', async () => {
    const {api, chimpy} = world();
    assert.equal(ok(await api.get(`${triggers()}/monitor`, chimpy.as)).body, {
      delivered: [],
      pending: [],
    });
    const hook = ok(
      await api.post(
        `/api/docs/${doc}/webhooks`,
        {
          webhooks: [
            {
              fields: {
                tableId: 'Table1',
                eventTypes: ['add'],
                url: `http://${host}/m`,
                name: 'M',
              },
            },
          ],
        },
        chimpy.as,
      ),
    ).body.webhooks[0].id;
    ok(
      await api.post(
        `/api/docs/${doc}/tables/Table1/records`,
        {records: [{fields: {A: 'x'}}, {fields: {A: 'y'}}]},
        chimpy.as,
      ),
    );
    const monitor = ok(await api.get(`${triggers()}/monitor`, chimpy.as)).body;
    assert.equal(monitor.delivered, [], 'no delivery log is kept (D51)');
    assert.equal(
      monitor.pending.map((p: any) => [
        p.id,
        p.fields.actionId,
        p.fields.actionType,
        p.fields.triggerName,
        p.fields.tableName,
        p.fields.rowId,
        p.fields.destination,
      ]),
      [
        [1, hook, 'webhook', 'M', 'Table1', 1, host],
        [2, hook, 'webhook', 'M', 'Table1', 2, host],
      ],
    );
    ok(await api.del(`/api/docs/${doc}/webhooks/queue`, chimpy.as));
    assert.equal(ok(await api.get(`${triggers()}/monitor`, chimpy.as)).body.pending, []);
    ok(await api.post(`${triggers()}/delete`, {ids: (await list()).map((r) => r.id)}, chimpy.as));
  });

  s(
    'force-reload closes the document; it reopens with its data, formulas and webhooks (editors, as Grist)',
    async () => {
      const {api, chimpy, kiwi, charon} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Reload');
      await world().share(chimpy, `/api/docs/${d}`, {
        [kiwi.email]: 'editors',
        [charon.email]: 'viewers',
      });
      ok(
        await api.post(
          `/api/docs/${d}/apply`,
          [['ModifyColumn', 'Table1', 'C', {isFormula: true, formula: '$A.upper()'}]],
          chimpy.as,
        ),
      );
      ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'apple'}}]}, chimpy.as));
      const before = await world().engine.withDoc(d, (x) => x);
      const res = ok(await api.post(`/api/docs/${d}/force-reload`, null, chimpy.as));
      assert.is(res.body, null);
      assert.ok(before.grist.db.open === false, 'the connection was closed');
      assert.ok((await world().engine.withDoc(d, (x) => x)) !== before, 'opened afresh on use');
      ok(await api.post(`/api/docs/${d}/force-reload`, null, kiwi.as), 'editors may');
      isError(await api.post(`/api/docs/${d}/force-reload`, null, charon.as), 403, 'No write access');
      // Reopened on use: data kept, formulas computed on the next write.
      ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'pear'}}]}, kiwi.as));
      const rows = ok(await api.get(`${tablePath(d)}/records`, chimpy.as)).body.records;
      assert.equal(
        rows.map((r: any) => [r.fields.A, r.fields.C]),
        [
          ['apple', 'APPLE'],
          ['pear', 'PEAR'],
        ],
      );
      // A webhook created before a reload still fires after it (its event is queued in the outbox).
      const hook = ok(
        await api.post(
          `/api/docs/${d}/webhooks`,
          {
            webhooks: [
              {
                fields: {
                  tableId: 'Table1',
                  eventTypes: ['add'],
                  url: `http://${host}/r`,
                },
              },
            ],
          },
          chimpy.as,
        ),
      ).body.webhooks[0].id;
      ok(await api.post(`/api/docs/${d}/force-reload`, null, chimpy.as));
      ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'plum'}}]}, chimpy.as));
      const pending = ok(await api.get(`/api/docs/${d}/triggers/monitor`, chimpy.as)).body.pending;
      assert.equal(
        pending.map((p: any) => [p.fields.actionId, p.fields.rowId]),
        [[hook, 3]],
      );
      ok(await api.del(`/api/docs/${d}/webhooks/queue`, chimpy.as));
    },
  );

  // test/server/lib/docapi/DocApiDocuments.ts:51-65 "allows forced reloads": the support user may
  // reload through the housekeeping API (and not through the document's own), regular users not.
  s('housekeeping force-reload: the support user (GRIST_SUPPORT_EMAIL default) only', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Housekeeping');
    const support = await world().newUser('support@getgrist.com', 'Support');
    const path = `/api/housekeeping/docs/${d}/force-reload`;
    isError(await api.post(`/api/docs/${d}/force-reload`, null, support.as), 403, 'No view access');
    const before = await world().engine.withDoc(d, (x) => x);
    assert.equal([(await api.post(path, null, support.as)).status, before.grist.db.open], [200, false]);
    isError(await api.post(path, null, chimpy.as), 403, 'access denied');
    isError(await api.post(path, {}, {}), 401, 'user not authorized');
    isError(
      await api.post('/api/housekeeping/docs/nosuchdoc/force-reload', null, support.as),
      404,
      'document not found',
    );
  });

  // DocApiDocuments.ts:68-82 "allows assignments": the support user may force an assignment only
  // through the housekeeping API; a regular user is refused there.
  s('housekeeping assign: the support user only, answering as /assign does', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'HousekeepingAssign');
    const support = await world().newUser('support@getgrist.com', 'Support');
    const path = `/api/housekeeping/docs/${d}/assign`;
    isError(await api.post(`/api/docs/${d}/assign`, null, support.as), 403, 'No view access');
    assert.equal(ok(await api.post(path, null, support.as)).body, false);
    assert.equal(ok(await api.post(`${path}?group=`, null, support.as)).body, false);
    isError(await api.post(path, null, chimpy.as), 403, 'access denied');
    isError(await api.post(path, {}, {}), 401, 'user not authorized');
    isError(await api.post('/api/housekeeping/docs/nosuchdoc/assign', null, support.as), 404, 'document not found');
  });

  s('assign answers false (one worker group); snapshots list the current state', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Assign');
    await world().share(chimpy, `/api/docs/${d}`, {
      [kiwi.email]: 'editors',
      [charon.email]: 'viewers',
    });
    assert.is(ok(await api.post(`/api/docs/${d}/assign`, null, chimpy.as)).body, false);
    assert.is(ok(await api.post(`/api/docs/${d}/assign`, null, kiwi.as)).body, false);
    isError(await api.post(`/api/docs/${d}/assign`, null, charon.as), 403, 'No write access');
    const snaps = ok(await api.get(`/api/docs/${d}/snapshots`, charon.as)).body.snapshots;
    assert.is(snaps.length, 1);
    assert.equal(Object.keys(snaps[0]).sort(), ['docId', 'lastModified', 'snapshotId']);
    assert.equal([snaps[0].docId, snaps[0].snapshotId], [d, 'current']);
    assert.ok(!Number.isNaN(Date.parse(snaps[0].lastModified)));
    // Rules that hide something: a snapshot would show it.
    await world().addTableRule(chimpy, d, 'Table1', 'user.Access != OWNER');
    isError(
      await api.get(`/api/docs/${d}/snapshots`, charon.as),
      403,
      'cannot confirm access to snapshots because of access rules',
    );
    ok(await api.get(`/api/docs/${d}/snapshots`, chimpy.as));
  });

  // Grist's own history: a document Grist wrote (skipped without ../shared outside CI, failed under CI).
  withFixtures(s)('states/remove truncates the action history Grist recorded (owners)', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await importFixture(world(), 'Hello.grist');
    await world().share(chimpy, `/api/docs/${d}`, {
      [kiwi.email]: 'editors',
    });
    const states = ok(await api.get(`/api/docs/${d}/states`, kiwi.as)).body.states;
    assert.ok(states.length > 5, `states: ${states.length}`);
    assert.ok(states[0].n > states[1].n, 'newest first');
    assert.type(states[0].h, 'string');
    isError(await api.post(`/api/docs/${d}/states/remove`, {keep: 3}, kiwi.as), 403, 'No owner access');
    isError(
      await api.post(`/api/docs/${d}/states/remove`, {keep: 'many'}, chimpy.as),
      400,
      'keep parameter cannot be understood as an integer: many',
    );
    assert.is(ok(await api.post(`/api/docs/${d}/states/remove`, {keep: 3}, chimpy.as)).body, null);
    assert.equal(ok(await api.get(`/api/docs/${d}/states`, chimpy.as)).body.states, states.slice(0, 3));
    ok(await api.post(`/api/docs/${d}/states/remove`, {keep: 1}, chimpy.as));
    assert.equal(ok(await api.get(`/api/docs/${d}/states`, chimpy.as)).body.states, states.slice(0, 1));
    // Grist's quirk, kept: 0 removes nothing.
    ok(await api.post(`/api/docs/${d}/states/remove`, {keep: 0}, chimpy.as));
    assert.is(ok(await api.get(`/api/docs/${d}/states`, chimpy.as)).body.states.length, 1);
    // A new document has no history.
    const fresh = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Fresh');
    assert.equal(ok(await api.get(`/api/docs/${fresh}/states`, chimpy.as)).body, {states: []});
  });

  s("replace: the target's owner, read access to all of the source (DocApiDocuments)", async () => {
    const {api, chimpy, kiwi} = world();
    const ws = await world().homeWs(chimpy);
    const [doc1, doc2, doc3, doc4] = [
      await world().newDoc(chimpy, ws, 'testdoc1'),
      await world().newDoc(chimpy, ws, 'testdoc2'),
      await world().newDoc(chimpy, ws, 'testdoc3'),
      await world().newDoc(chimpy, ws, 'testdoc4'),
    ];
    await world().share(chimpy, `/api/docs/${doc2}`, {
      [kiwi.email]: 'editors',
    });
    await world().share(chimpy, `/api/docs/${doc3}`, {
      [kiwi.email]: 'viewers',
    });
    await world().share(chimpy, `/api/docs/${doc4}`, {
      [kiwi.email]: 'owners',
    });
    ok(await api.post(`${tablePath(doc3)}/data`, {A: ['Orange']}, chimpy.as));
    isError(
      await api.post(`/api/docs/${doc2}/replace`, {sourceDocId: doc3}, kiwi.as),
      403,
      'Only owners can replace a document',
    );
    isError(await api.post(`/api/docs/${doc1}/replace`, {sourceDocId: doc3}, kiwi.as), 403, 'No view access');
    isError(await api.post(`/api/docs/${doc4}/replace`, {sourceDocId: doc1}, kiwi.as), 403, 'access denied');
    // Grist confirms read access to the source before the replacement checks ownership of the
    // target: an editor naming a source they cannot see hears 'access denied' (DocApiDocuments.ts:201-206).
    isError(await api.post(`/api/docs/${doc2}/replace`, {sourceDocId: doc1}, kiwi.as), 403, 'access denied');
    isErrorLike(await api.post(`/api/docs/${doc4}/replace`, {sourceDocId: 'nosuchdoc'}, kiwi.as), 404, /not found/);
    // Partial read access to the source is not enough.
    await world().addTableRule(chimpy, doc3, 'Table1', 'user.Access not in [OWNER]');
    isErrorLike(await api.post(`/api/docs/${doc4}/replace`, {sourceDocId: doc3}, kiwi.as), 403, /not authorized/);
    const rules = ok(await api.get(`/api/docs/${doc3}/tables/_grist_ACLRules/records`, chimpy.as)).body.records;
    ok(await api.post(`/api/docs/${doc3}/tables/_grist_ACLRules/data/delete`, [rules[rules.length - 1].id], chimpy.as));
    ok(
      await api.post(`${tablePath(doc4)}/records`, {records: [{fields: {A: 'Apple'}}, {fields: {A: 'Kiwi'}}]}, kiwi.as),
    );
    assert.is(ok(await api.post(`/api/docs/${doc4}/replace`, {sourceDocId: doc3}, kiwi.as)).body, null);
    const rows = ok(await api.get(`${tablePath(doc4)}/records`, kiwi.as)).body.records;
    assert.equal(
      rows.map((r: any) => [r.id, r.fields.A]),
      [[1, 'Orange']],
      "doc3's content",
    );
    // The replaced document takes writes, and the source is untouched.
    ok(await api.post(`${tablePath(doc4)}/records`, {records: [{fields: {A: 'Lemon'}}]}, kiwi.as));
    assert.is(ok(await api.get(`${tablePath(doc4)}/records`, kiwi.as)).body.records.length, 2);
    assert.is(ok(await api.get(`${tablePath(doc3)}/records`, chimpy.as)).body.records.length, 1);
    // A snapshot: only the current state exists.
    ok(await api.post(`/api/docs/${doc4}/replace`, {snapshotId: 'current'}, kiwi.as));
    isError(await api.post(`/api/docs/${doc4}/replace`, {snapshotId: 'v1'}, kiwi.as), 404, 'Snapshot not found: v1');
    isError(await api.post(`/api/docs/${doc4}/replace`, {}, kiwi.as), 400, 'sourceDocId or snapshotId is required');
    assert.is(ok(await api.get(`${tablePath(doc4)}/records`, kiwi.as)).body.records.length, 2);
  });

  s('replace carries webhooks as a copy does: triggers disabled, secrets left behind', async () => {
    const {api, chimpy} = world();
    const ws = await world().homeWs(chimpy);
    const src = await world().newDoc(chimpy, ws, 'WithHook');
    const dst = await world().newDoc(chimpy, ws, 'Target');
    ok(
      await api.post(
        `/api/docs/${src}/webhooks`,
        {
          webhooks: [
            {
              fields: {
                tableId: 'Table1',
                eventTypes: ['add'],
                url: 'https://example.com/s',
              },
            },
          ],
        },
        chimpy.as,
      ),
    );
    ok(await api.post(`/api/docs/${dst}/replace`, {sourceDocId: src}, chimpy.as));
    const t = ok(await api.get(`/api/docs/${dst}/triggers`, chimpy.as)).body.records;
    assert.is(t.length, 1);
    assert.is(t[0].fields.enabled, false);
    assert.is(JSON.parse(t[0].fields.actions)[0].url, undefined, 'no secret in the target');
    assert.equal(ok(await api.get(`/api/docs/${dst}/webhooks`, chimpy.as)).body, {webhooks: []});
    assert.is(ok(await api.get(`/api/docs/${src}/webhooks`, chimpy.as)).body.webhooks.length, 1);
  });

  s("copy: Grist's parameter rules and checks; asTemplate keeps the structure without the data", async () => {
    const {api, chimpy, kiwi, charon} = world();
    const ws = await world().homeWs(chimpy);
    const src = await world().newDoc(chimpy, ws, 'Source');
    ok(
      await api.post(
        `/api/docs/${src}/apply`,
        [['ModifyColumn', 'Table1', 'C', {isFormula: true, formula: '$A.upper()'}]],
        chimpy.as,
      ),
    );
    ok(await api.post(`${tablePath(src)}/records`, {records: [{fields: {A: 'x', B: 'y'}}]}, chimpy.as));
    const copy = (body: unknown, as = chimpy.as) => api.post(`/api/docs/${src}/copy`, body, as);
    const full = ok(await copy({workspaceId: String(ws), documentName: 'Full copy'})).body;
    assert.type(full, 'string');
    assert.is(ok(await api.get(`/api/docs/${full}`, chimpy.as)).body.name, 'Full copy');
    assert.equal(
      ok(await api.get(`${tablePath(full)}/records`, chimpy.as)).body.records.map((r: any) => r.fields),
      [{A: 'x', B: 'y', C: 'X'}],
    );
    const tmpl = ok(
      await copy({
        workspaceId: ws,
        documentName: 'Template',
        asTemplate: 'true',
      }),
    ).body;
    assert.equal(ok(await api.get(`${tablePath(tmpl)}/records`, chimpy.as)).body.records, [], 'no data');
    const cols = ok(await api.get(`${tablePath(tmpl)}/columns`, chimpy.as)).body.columns;
    assert.equal(
      cols.map((c: any) => [c.id, c.fields.isFormula, c.fields.formula]),
      [
        ['A', false, ''],
        ['B', false, ''],
        ['C', true, '$A.upper()'],
      ],
      'structure kept',
    );
    ok(await api.post(`${tablePath(tmpl)}/records`, {records: [{fields: {A: 'z'}}]}, chimpy.as));
    assert.is(ok(await api.get(`${tablePath(tmpl)}/records`, chimpy.as)).body.records[0].fields.C, 'Z');
    isError(await copy({workspaceId: ws, asTemplate: 'maybe'}), 400, 'asTemplate parameter should be a boolean: maybe');
    isError(await copy({workspaceId: 'abc'}), 400, 'workspaceId parameter cannot be understood as an integer: abc');
    isError(await copy({workspaceId: ws, documentName: 5}), 400, 'documentName parameter should be a string: 5');
    // The source first: a caller who cannot see it hears that, whatever the parameters.
    isError(await copy({workspaceId: 'abc'}, kiwi.as), 403, 'No view access');
    await world().share(chimpy, `/api/docs/${src}`, {
      [kiwi.email]: 'viewers',
      [charon.email]: 'viewers',
    });
    isError(await copy({workspaceId: ws}, kiwi.as), 403, 'access denied', "kiwi cannot add to chimpy's workspace");
    const kiwiWs = await world().homeWs(kiwi);
    const mine = ok(await copy({workspaceId: kiwiWs}, kiwi.as)).body;
    assert.is(ok(await api.get(`/api/docs/${mine}`, kiwi.as)).body.name, 'Source', "the source's name by default");
    await world().addTableRule(chimpy, src, 'Table1', 'user.Access != OWNER');
    isError(await copy({workspaceId: kiwiWs}, kiwi.as), 403, 'Insufficient access to document to copy it entirely');
  });

  s('a copied trigger loses its webhook secret; PATCH /triggers makes it a new one (DocApiTriggers)', async () => {
    const {api, chimpy} = world();
    const ws = await world().homeWs(chimpy);
    const src = await world().newDoc(chimpy, ws, 'Orphans');
    const ref = ok(await api.get(`/api/docs/${src}/tables/_grist_Tables/records`, chimpy.as)).body.records[0].id;
    const actions = [
      {type: 'webhook', url: 'https://example.com'},
      {type: 'email', to: 'a@b.com', subject: 'S', body: 'B'},
    ];
    ok(
      await api.post(
        `/api/docs/${src}/triggers`,
        {
          records: [
            {
              fields: {
                tableRef: ref,
                label: 'Mixed',
                enabled: true,
                actions: JSON.stringify(actions),
              },
            },
          ],
        },
        chimpy.as,
      ),
    );
    const srcHook = JSON.parse(
      ok(await api.get(`/api/docs/${src}/triggers`, chimpy.as)).body.records[0].fields.actions,
    )[0];
    const copy = ok(await api.post(`/api/docs/${src}/copy`, {workspaceId: ws, documentName: 'orphan'}, chimpy.as)).body;
    const [t] = ok(await api.get(`/api/docs/${copy}/triggers`, chimpy.as)).body.records;
    const copied = JSON.parse(t.fields.actions);
    assert.equal(copied[0], {type: 'webhook', id: srcHook.id}, 'the id stays, without a url');
    assert.is(t.fields.enabled, false, 'disabled, as Grist disables triggers of copies');
    const patched = copied.map((a: any) => (a.type === 'webhook' ? {...a, url: 'https://example.com'} : a));
    ok(
      await api.patch(
        `/api/docs/${copy}/triggers`,
        {
          records: [{id: t.id, fields: {actions: JSON.stringify(patched)}}],
        },
        chimpy.as,
      ),
    );
    const healed = JSON.parse(
      ok(await api.get(`/api/docs/${copy}/triggers`, chimpy.as)).body.records[0].fields.actions,
    );
    assert.is.not(healed[0].id, srcHook.id, 'a new webhook');
    assert.is(healed[0].url, 'https://example.com');
    assert.is(healed[1].to, 'a@b.com');
    // The source's webhook is untouched.
    const again = JSON.parse(
      ok(await api.get(`/api/docs/${src}/triggers`, chimpy.as)).body.records[0].fields.actions,
    )[0];
    assert.equal([again.id, again.url], [srcHook.id, 'https://example.com']);
  });

  withFixtures(s)("compare: histories as Grist compares them, extended by gristlite's writes (D54, D120)", async () => {
    const {api, chimpy, kiwi} = world();
    const cmp = (a: string, b: string, as = chimpy.as, q = '') => api.get(`/api/docs/${a}/compare/${b}${q}`, as);
    const a = await importFixture(world(), 'Hello.grist');
    const b = await importFixture(world(), 'Hello.grist');
    const head = ok(await api.get(`/api/docs/${a}/states`, chimpy.as)).body.states[0];
    const c = ok(await cmp(a, b)).body;
    assert.equal(c, {
      left: head,
      right: head,
      parent: head,
      summary: 'same',
    });
    // Truncated history still shares its newest state.
    ok(await api.post(`/api/docs/${b}/states/remove`, {keep: 1}, chimpy.as));
    assert.is(ok(await cmp(a, b)).body.summary, 'same');
    // An older version of the same document (its newest action undone in the file) is behind.
    const older = await importFixture(world(), 'Hello.grist');
    const db = new Database(world().docPath(older));
    try {
      db.prepare(
        `UPDATE _gristsys_ActionHistoryBranch SET actionRef = (SELECT parentRef FROM _gristsys_ActionHistory WHERE id = actionRef) WHERE name = 'local_unsent'`,
      ).run();
    } finally {
      db.close();
    }
    const prev = ok(await api.get(`/api/docs/${older}/states`, chimpy.as)).body.states[0];
    assert.is(prev.n, head.n - 1);
    assert.equal(ok(await cmp(a, older)).body, {
      left: head,
      right: prev,
      parent: prev,
      summary: 'left',
    });
    assert.equal(ok(await cmp(older, a)).body, {
      left: prev,
      right: head,
      parent: prev,
      summary: 'right',
    });
    // A write through gristlite extends the history (D120): b has moved on from their common state.
    ok(await api.post(`/api/docs/${b}/apply`, [['AddRecord', 'Table1', null, {}]], chimpy.as));
    const bHead = ok(await api.get(`/api/docs/${b}/states`, chimpy.as)).body.states[0];
    assert.is(bHead.n, head.n + 1);
    assert.equal(ok(await cmp(a, b)).body, {
      left: head,
      right: bHead,
      parent: head,
      summary: 'right',
    });
    // Documents gristlite created have no history until their first write: the empty state, then
    // their contents; once written, each starts a chain of its own, so they are unrelated.
    const ws = await world().homeWs(chimpy);
    const [x, y] = [await world().newDoc(chimpy, ws, 'x'), await world().newDoc(chimpy, ws, 'y')];
    const empty = {n: 0, h: ''};
    assert.equal(ok(await cmp(x, y)).body, {
      left: empty,
      right: empty,
      parent: empty,
      summary: 'same',
    });
    ok(await api.post(`${tablePath(y)}/records`, {records: [{fields: {A: 'Orange'}}]}, chimpy.as));
    const yHead = ok(await api.get(`/api/docs/${y}/states`, chimpy.as)).body.states[0];
    assert.equal(ok(await cmp(x, y)).body, {left: empty, right: yHead, parent: null, summary: 'unrelated'});
    ok(await api.post(`/api/docs/${x}/replace`, {sourceDocId: y}, chimpy.as));
    assert.equal(ok(await cmp(x, y)).body, {left: yHead, right: yHead, parent: yHead, summary: 'same'}, 'replaced');
    assert.equal(ok(await cmp(x, a)).body, {
      left: yHead,
      right: head,
      parent: null,
      summary: 'unrelated',
    });
    // Grist's checks and what gristlite leaves out.
    isError(await cmp(x, y, chimpy.as, '?maxRows=0'), 400, 'maxRows parameter is invalid: 0');
    await world().share(chimpy, `/api/docs/${x}`, {
      [kiwi.email]: 'viewers',
    });
    isError(await cmp(x, a, kiwi.as), 403, 'access denied');
    isError(await cmp(a, x, kiwi.as), 403, 'No view access');
    await world().share(chimpy, `/api/docs/${y}`, {
      [kiwi.email]: 'viewers',
    });
    assert.is(ok(await cmp(x, y, kiwi.as)).body.summary, 'same');
    await world().addTableRule(chimpy, x, 'Table1', 'user.Access != OWNER');
    isError(await cmp(x, y, kiwi.as), 403, 'insufficient access');
    isError(await cmp(y, x, kiwi.as), 403, 'insufficient access');
  });

  s('force-reload removes attachments unused for 7 days, as Grist does when it closes a document', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Attachments');
    const form = multipart([
      {name: 'hello.doc', content: 'foobar'},
      {name: 'world.jpg', content: '123456'},
      {name: 'hello2.doc', content: 'foobar'},
    ]);
    assert.equal(
      ok(
        await api.call('POST', `/api/docs/${d}/attachments`, {
          ...chimpy.as,
          ...form,
        }),
      ).body,
      [1, 2, 3],
    );
    // None is in a cell: marked unused now, so none has been unused for 7 days yet.
    ok(await api.post(`/api/docs/${d}/force-reload`, null, chimpy.as));
    const ids = async () =>
      ok(await api.get(`/api/docs/${d}/attachments`, chimpy.as)).body.records.map((r: any) => r.id);
    assert.equal(await ids(), [1, 2, 3]);
    // Attachment 1 unused for 8 days (set in the file: the API lets only renames through, D25).
    await world().engine.withDoc(d, (doc) => {
      doc.db.prepare('UPDATE _grist_Attachments SET timeDeleted = ? WHERE id = 1').run(Date.now() / 1000 - 8 * 86400);
    });
    ok(await api.post(`/api/docs/${d}/force-reload`, null, chimpy.as));
    assert.equal(await ids(), [2, 3]);
    ok(await api.post(`/api/docs/${d}/attachments/verifyFiles`, null, chimpy.as));
    ok(await api.post(`/api/docs/${d}/attachments/removeUnused?verifyfiles=1`, null, chimpy.as));
    assert.equal(await ids(), []);
  });

  s.run();
}
