/**
 * Endpoints of today's Grist (1.7.17) beyond REST API 1.0.1 (issue 29), from grist-core's
 * `test/server/lib/docapi` tests: the trigger records behind webhooks (DocApiTriggers.ts), and the
 * document lifecycle (force-reload, states/remove, snapshots, assign, replace, compare).
 */
import {createServer, type ServerResponse, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import * as assert from 'uvu/assert';
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
    isError(
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
      'Provided url is forbidden',
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

  s.run();
}
