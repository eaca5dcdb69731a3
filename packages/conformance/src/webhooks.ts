/**
 * Webhooks (SPEC §13, §19 items 22-24): creation and its validation, listing, update, delete,
 * the deprecated _subscribe/_unsubscribe, and real deliveries to a receiver on loopback (the
 * server's env allows it: GRISTLITE_ALLOWED_WEBHOOK_DOMAINS, GRIST_TRIGGER_WAIT_DELAY=10).
 */
import {createServer, type IncomingHttpHeaders, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import * as assert from 'uvu/assert';
import type {ApiResponse} from './client.js';
import {tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, isInvalidPayload, ok, useWorld, type Target} from './world.js';

interface Delivery {
  path: string;
  body: any;
  headers: IncomingHttpHeaders;
}

/** Asserts a status and that the error (or its schema details) matches, as Grist's tests do. */
function fails(res: ApiResponse, status: number, ...patterns: RegExp[]): void {
  assert.is(res.status, status, `expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
  for (const p of patterns) assert.match(res.body?.details?.userError || res.body?.error, p);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function webhooksSuite(target: Target): void {
  const s = areaSuite(target, 'webhooks');
  let receiver: Server;
  let base = '';
  const deliveries: Delivery[] = [];
  /** Path -> number of failures still to answer before succeeding (-1: always fail). */
  const failures = new Map<string, number>();
  s.before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = decodeURIComponent(req.url ?? '');
        const left = failures.get(path) ?? 0;
        if (left !== 0) {
          failures.set(path, left - 1);
          res.statusCode = 500;
          res.end(`failing on purpose (${left})`);
          return;
        }
        deliveries.push({path, body: JSON.parse(Buffer.concat(chunks).toString() || 'null'), headers: req.headers});
        res.statusCode = 200;
        res.end('OK');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  const world = useWorld(s, target, () => ({
    GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: `example.com,${new URL(base).host}`,
    GRIST_TRIGGER_WAIT_DELAY: '10',
  }));
  s.after(async () => {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
  });

  const at = (path: string) => deliveries.filter((d) => d.path === path).map((d) => d.body);
  const waitFor = async (what: string, cond: () => boolean, ms = 10000) => {
    const end = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > end)
        throw new Error(
          `timed out waiting for ${what}; received ${JSON.stringify(deliveries.map((d) => [d.path, d.body]))}`,
        );
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  /** A new doc whose Table1.B is Bool (the ready column), as Grist's tests set it up. */
  const newDoc = async (name: string) => {
    const {api, chimpy} = world();
    const doc = await world().newDoc(chimpy, await world().homeWs(chimpy), name);
    ok(await api.post(`/api/docs/${doc}/apply`, [['ModifyColumn', 'Table1', 'B', {type: 'Bool'}]], chimpy.as));
    return doc;
  };
  let doc = '';
  const hooks = () => `/api/docs/${doc}/webhooks`;

  s('POST /webhooks validates its input (item 22)', async () => {
    const {api, chimpy} = world();
    doc = await newDoc('Timesheets');
    const post = (body: unknown) => api.post(hooks(), body, chimpy.as);
    const fields = (f: unknown) => post({webhooks: [{fields: f}]});
    fails(await fields({tableId: 'Table1'}), 400, /eventTypes is missing/);
    fails(await fields({tableId: 'Table1', eventTypes: 0}), 400, /url is missing/, /eventTypes is not an array/);
    fails(await fields({tableId: 'Table1', eventTypes: []}), 400, /url is missing/);
    fails(
      await fields({tableId: 'Table1', eventTypes: [], url: 'https://example.com'}),
      400,
      /eventTypes must be a non-empty array/,
    );
    fails(
      await fields({tableId: 'Table1', eventTypes: ['foo'], url: 'https://example.com'}),
      400,
      /eventTypes\[0] is none of "add", "update"/,
    );
    fails(await fields({tableId: 'Table1', eventTypes: ['add']}), 400, /url is missing/);
    fails(
      await fields({tableId: 'Table1', eventTypes: ['add'], url: 'https://evil.com'}),
      403,
      /Provided url is forbidden/,
    );
    fails(
      await fields({tableId: 'Table1', eventTypes: ['add'], url: 'http://example.com'}),
      403,
      /Provided url is forbidden/,
    );
    fails(
      await fields({tableId: 'Table1', eventTypes: ['add'], url: 'https://example.com', isReadyColumn: 'bar'}),
      404,
      /Column not found "bar"/,
    );
    fails(await fields({eventTypes: ['add'], url: 'https://example.com'}), 400, /tableId is missing/);
    fails(await post({}), 400, /webhooks is missing/);
    fails(
      await fields({tableId: 'Table1', eventTypes: ['update'], watchedColIds: ['notExisting'], url: `${base}/200`}),
      404,
      /Column not found "notExisting"/,
    );
    fails(
      await fields({tableId: 'Santa', eventTypes: ['add'], url: 'https://example.com'}),
      404,
      /Table not found "Santa"/,
    );
    isError(
      await fields({tableId: 'Santa', eventTypes: ['add'], url: 'https://example.com'}),
      404,
      'Table not found "Santa"',
    );
    // Grist's words, then a hint naming the setting (decision D73).
    isErrorLike(
      await fields({tableId: 'Table1', eventTypes: ['add'], url: 'https://evil.com'}),
      403,
      /^Provided url is forbidden \(/,
    );
    assert.equal(ok(await api.get(hooks(), chimpy.as)).body, {webhooks: []}, 'nothing was created');
    // The deprecated _subscribe checks the same things.
    const sub = (body: unknown) => api.post(`${tablePath(doc)}/_subscribe`, body, chimpy.as);
    fails(await sub({}), 400, /eventTypes is missing/);
    fails(await sub({eventTypes: 0}), 400, /url is missing/, /eventTypes is not an array/);
    fails(await sub({eventTypes: [], url: 'https://example.com'}), 400, /eventTypes must be a non-empty array/);
    fails(await sub({eventTypes: ['add'], url: 'https://evil.com'}), 403, /Provided url is forbidden/);
    fails(
      await sub({eventTypes: ['add'], url: 'https://example.com', isReadyColumn: 'bar'}),
      404,
      /Column not found "bar"/,
    );
  });

  s('webhook bodies name each Grist type on the way to a failure (Webhook, WebhookFields; issue 24)', async () => {
    const {api, chimpy} = world();
    const fields = (f: unknown) => api.post(hooks(), {webhooks: [{fields: f}]}, chimpy.as);
    const on = 'value.webhooks[0] is not a Webhook; value.webhooks[0].fields is not a WebhookFields; ';
    const good = {tableId: 'Table1', eventTypes: ['update'], url: 'https://example.com'};
    const {url: _u, ...noUrl} = good;
    const {eventTypes: _e, ...noEvents} = good;
    const {tableId: _t, ...noTable} = good;
    isInvalidPayload(await fields(noUrl), `Error: ${on}value.webhooks[0].fields.url is missing`);
    isInvalidPayload(await fields(noEvents), `Error: ${on}value.webhooks[0].fields.eventTypes is missing`);
    isInvalidPayload(await fields(noTable), `Error: ${on}value.webhooks[0].fields.tableId is missing`);
    isInvalidPayload(await fields({...good, memo: null}), `Error: ${on}value.webhooks[0].fields.memo is not a string`);
    // Decision 6 adds "remove" to Grist's event types; anything else is refused.
    isInvalidPayload(
      await fields({...good, eventTypes: ['update', 'unknown']}),
      `Error: ${on}value.webhooks[0].fields.eventTypes[1] is none of "add", "update", "remove"`,
    );
    isInvalidPayload(
      await api.post(hooks(), {webhooks: [5]}, chimpy.as),
      'Error: value.webhooks[0] is not a Webhook; value.webhooks[0] is not an object',
    );
    // The deprecated _subscribe and PATCH check an unnamed top-level value.
    isInvalidPayload(
      await api.post(
        `${tablePath(doc)}/_subscribe`,
        {eventTypes: ['update', 'unknown'], url: 'https://example.com'},
        chimpy.as,
      ),
      'Error: value.eventTypes[1] is none of "add", "update", "remove"',
    );
    assert.equal(ok(await api.get(hooks(), chimpy.as)).body, {webhooks: []}, 'nothing was created');
  });

  s('webhook field types and references are checked as Grist checks them (issue 15)', async () => {
    const {api, chimpy} = world();
    const post = (f: Record<string, unknown>) =>
      api.post(
        hooks(),
        {webhooks: [{fields: {tableId: 'Table1', eventTypes: ['add'], url: 'https://example.com', ...f}}]},
        chimpy.as,
      );
    fails(await post({enabled: 'yes'}), 400, /webhooks\[0]\.fields\.enabled is not a boolean/);
    fails(await post({name: 5}), 400, /webhooks\[0]\.fields\.name is not a string/);
    fails(await post({memo: false}), 400, /webhooks\[0]\.fields\.memo is not a string/);
    fails(await post({watchedColIds: 'A'}), 400, /webhooks\[0]\.fields\.watchedColIds is not an array/);
    fails(await post({eventTypes: ['add', 'delete']}), 400, /eventTypes\[1] is none of "add", "update"/);
    fails(await post({url: 5}), 400, /webhooks\[0]\.fields\.url is not a string/);
    fails(await post({tableId: 'Nope'}), 404, /Table not found "Nope"/);
    fails(await post({isReadyColumn: 'Nope'}), 404, /Column not found "Nope"/);
    // Grist only looks the ready column up: any existing column is accepted, Bool or not.
    const created = ok(await post({isReadyColumn: 'A', name: 'n', memo: 'm', enabled: false})).body.webhooks;
    const listed = ok(await api.get(hooks(), chimpy.as)).body.webhooks.find((w: any) => w.id === created[0].id);
    assert.equal(
      [listed.fields.isReadyColumn, listed.fields.name, listed.fields.memo, listed.fields.enabled],
      ['A', 'n', 'm', false],
    );
    const patch = (body: unknown) => api.patch(`${hooks()}/${created[0].id}`, body, chimpy.as);
    fails(await patch({enabled: 1}), 400, /enabled is not a boolean/);
    fails(await patch({memo: []}), 400, /memo is not a string/);
    fails(await patch({url: 'ftp://example.com'}), 403, /Provided url is forbidden/);
    fails(await patch({tableId: 'Nope'}), 404, /Table not found "Nope"/);
    ok(await api.del(`${hooks()}/${created[0].id}`, chimpy.as));
  });

  s('POST /webhooks adds several at once; GET lists them; DELETE removes (item 22)', async () => {
    const {api, chimpy} = world();
    const res = ok(
      await api.post(
        hooks(),
        {
          webhooks: [
            {fields: {tableId: 'Table1', eventTypes: ['add'], url: 'https://example.com'}},
            {fields: {tableId: 'Table1', eventTypes: ['add'], url: 'https://example.com/2'}},
            {fields: {tableId: '1', eventTypes: ['add'], url: 'https://sub.example.com/3'}},
          ],
        },
        chimpy.as,
      ),
    ).body;
    assert.is(res.webhooks.length, 3);
    for (const w of res.webhooks) assert.match(w.id, UUID);
    const list = ok(await api.get(hooks(), chimpy.as)).body.webhooks;
    assert.equal(
      list.map((w: any) => [w.id, w.fields.url, w.fields.tableId]),
      [
        [res.webhooks[0].id, 'https://example.com', 'Table1'],
        [res.webhooks[1].id, 'https://example.com/2', 'Table1'],
        [res.webhooks[2].id, 'https://sub.example.com/3', 'Table1'],
      ],
    );
    for (const w of res.webhooks)
      assert.equal(ok(await api.del(`${hooks()}/${w.id}`, chimpy.as)).body, {success: true});
    assert.equal(ok(await api.get(hooks(), chimpy.as)).body, {webhooks: []});
    fails(
      await api.del(`${hooks()}/${res.webhooks[0].id}`, chimpy.as),
      404,
      new RegExp(`Webhook not found "${res.webhooks[0].id}"`),
    );
    fails(await api.del(`${hooks()}/foo`, chimpy.as), 404, /Webhook not found "foo"/);
    isError(await api.del(`${hooks()}/`, chimpy.as), 404, `not found: ${hooks()}/`);
  });

  s('GET /webhooks: exact fields and usage; PATCH; DELETE; owners only (item 23)', async () => {
    const {api, chimpy, kiwi} = world();
    ok(await api.post(`/api/docs/${doc}/tables`, {tables: [{id: 'Table2', columns: [{id: 'X'}]}]}, chimpy.as));
    const url = `${base}/200`;
    const created = ok(
      await api.post(
        hooks(),
        {
          webhooks: [1, 2].map(() => ({
            fields: {url, eventTypes: ['add', 'update'], tableId: 'Table1', isReadyColumn: 'B'},
          })),
        },
        chimpy.as,
      ),
    ).body.webhooks;
    const list = ok(await api.get(hooks(), chimpy.as)).body.webhooks;
    assert.equal(
      list.map((w: any) => w.id),
      created.map((w: any) => w.id),
    );
    for (const w of list) {
      assert.match(w.fields.unsubscribeKey, UUID);
      assert.equal(w, {
        id: w.id,
        fields: {
          url,
          authorization: '',
          unsubscribeKey: w.fields.unsubscribeKey,
          eventTypes: ['add', 'update'],
          enabled: true,
          isReadyColumn: 'B',
          tableId: 'Table1',
          name: '',
          memo: '',
          watchedColIds: [],
        },
        usage: {status: 'idle', numWaiting: 0, lastEventBatch: null},
      });
    }
    assert.is.not(list[0].fields.unsubscribeKey, list[1].fields.unsubscribeKey);
    const id = created[0].id;
    const fieldsOf = async () =>
      ok(await api.get(hooks(), chimpy.as)).body.webhooks.find((w: any) => w.id === id).fields;
    const patch = (body: unknown, as = chimpy.as) => api.patch(`${hooks()}/${id}`, body, as);
    assert.equal(ok(await patch({tableId: 'Table2'})).body, {success: true});
    let f = await fieldsOf();
    assert.equal([f.tableId, f.isReadyColumn, f.watchedColIds], ['Table2', null, []]);
    isError(await patch({tableId: 'Santa'}), 404, 'Table not found "Santa"');
    ok(await patch({isReadyColumn: null}));
    ok(await patch({tableId: 'Table1', isReadyColumn: 'B', watchedColIds: ['A']}));
    f = await fieldsOf();
    assert.equal(
      [f.tableId, f.isReadyColumn, f.watchedColIds],
      ['Table1', 'B', []],
      'moving to another table clears the watched columns',
    );
    ok(
      await patch({
        tableId: 'Table1',
        isReadyColumn: 'B',
        watchedColIds: ['A', '$B', ' '],
        name: 'Hook',
        memo: 'notes',
        enabled: false,
      }),
    );
    f = await fieldsOf();
    assert.equal(
      [f.tableId, f.isReadyColumn, f.watchedColIds, f.name, f.memo, f.enabled],
      ['Table1', 'B', ['A', 'B'], 'Hook', 'notes', false],
    );
    ok(await patch({watchedColIds: ['C']}));
    assert.equal((await fieldsOf()).watchedColIds, ['A', 'B'], 'watchedColIds is ignored without tableId (quirk)');
    isError(await patch({isReadyColumn: 'nope'}), 404, 'Column not found "nope"');
    isErrorLike(await patch({url: 'https://evil.com'}), 403, /^Provided url is forbidden \(/);
    fails(await patch({eventTypes: []}), 400, /eventTypes must be a non-empty array/);
    fails(await patch({eventTypes: ['nope']}), 400, /eventTypes\[0] is none of "add", "update"/);
    ok(await patch({authorization: 'Bearer fake-token'}));
    // Decision 2: the authorization is never echoed back in clear.
    const auth = (await fieldsOf()).authorization;
    assert.type(auth, 'string');
    assert.ok(auth !== 'Bearer fake-token' && auth.length > 0 && !auth.includes('fake-token'), `masked: ${auth}`);
    isError(await api.patch(`${hooks()}/foo`, {enabled: true}, chimpy.as), 404, 'Webhook not found "foo"');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    isError(await api.get(hooks(), kiwi.as), 403, 'No owner access');
    isError(await api.post(hooks(), {webhooks: []}, kiwi.as), 403, 'No owner access');
    isError(await patch({enabled: true}, kiwi.as), 403, 'No owner access');
    isError(await api.del(`${hooks()}/${id}`, kiwi.as), 403, 'No owner access');
    isError(await api.del(`${hooks()}/queue`, kiwi.as), 403, 'No owner access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    isError(await api.get(hooks(), kiwi.as), 403, 'No view access');
    for (const w of created) ok(await api.del(`${hooks()}/${w.id}`, chimpy.as));
  });

  s('_unsubscribe: owners need no key; editors need the right one (item 24)', async () => {
    const {api, chimpy, kiwi} = world();
    const subscribe = async () => {
      const res = ok(
        await api.post(`${tablePath(doc)}/_subscribe`, {eventTypes: ['add'], url: 'https://example.com'}, chimpy.as),
      ).body;
      assert.equal(Object.keys(res).sort(), ['triggerId', 'unsubscribeKey', 'webhookId']);
      assert.type(res.triggerId, 'number');
      return res as {webhookId: string; unsubscribeKey: string};
    };
    const unsub = (body: unknown, as = chimpy.as) => api.post(`${tablePath(doc)}/_unsubscribe`, body, as);
    let {webhookId} = await subscribe();
    isError(await unsub({webhookId: 'foo'}), 404, 'Webhook not found "foo"');
    isError(await unsub({}), 404, 'Webhook not found ""');
    assert.equal(ok(await unsub({webhookId})).body, {success: true});
    isError(await unsub({webhookId}), 404, `Webhook not found "${webhookId}"`);
    const sub = await subscribe();
    webhookId = sub.webhookId;
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    isError(await unsub({webhookId: 'foo'}, kiwi.as), 404, 'Webhook not found "foo"');
    isError(await unsub({webhookId}, kiwi.as), 400, 'Bad request: unsubscribeKey required');
    isError(await unsub({webhookId, unsubscribeKey: 'foo'}, kiwi.as), 401, 'Wrong unsubscribeKey');
    assert.equal(ok(await unsub({webhookId, unsubscribeKey: sub.unsubscribeKey}, kiwi.as)).body, {success: true});
    isError(
      await unsub({webhookId, unsubscribeKey: sub.unsubscribeKey}, kiwi.as),
      404,
      `Webhook not found "${webhookId}"`,
    );
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    isError(
      await api.post(
        `${tablePath(doc, 'Nope')}/_subscribe`,
        {eventTypes: ['add'], url: 'https://example.com'},
        chimpy.as,
      ),
      404,
      'Table not found "Nope"',
    );
    assert.equal(ok(await api.get(hooks(), chimpy.as)).body, {webhooks: []});
  });

  s("deliveries: Grist's sequence of adds, updates, renames and batches (item 24)", async () => {
    const {api, chimpy} = world();
    deliveries.length = 0;
    const d = await newDoc('testdoc');
    const subs = [];
    for (const eventTypes of [['add'], ['update'], ['add', 'update']]) {
      subs.push(
        ok(
          await api.post(
            `${tablePath(d)}/_subscribe`,
            {eventTypes, url: `${base}/${eventTypes}`, isReadyColumn: 'B'},
            chimpy.as,
          ),
        ).body,
      );
    }
    const data = `${tablePath(d)}/data`;
    ok(await api.post(data, {A: [1, 2], B: [true, false]}, chimpy.as));
    for (const [A, B] of [[3], [4, true], [5, false], [6], [7, true], [8]] as Array<[number, boolean?]>) {
      ok(await api.patch(data, B === undefined ? {id: [2], A: [A]} : {id: [2], A: [A], B: [B]}, chimpy.as));
    }
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['BulkAddRecord', 'Table1', [3, 4, 5, 6], {A: [9, 10, 11, 12], B: [true, true, false, false]}],
          [
            'BulkUpdateRecord',
            'Table1',
            [1, 2, 3, 4, 5, 6],
            {A: [101, 102, 13, 14, 15, 16], B: [true, false, true, false, true, false]},
          ],
          ['RenameColumn', 'Table1', 'A', 'A3'],
          ['RenameColumn', 'Table1', 'B', 'B3'],
          ['RenameTable', 'Table1', 'Table12'],
          ['RemoveColumn', 'Table12', 'C'],
        ],
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddRecord', 'Table12', 7, {A3: 17, B3: false}],
          ['UpdateRecord', 'Table12', 7, {A3: 18, B3: true}],
          ['AddRecord', 'Table12', 8, {A3: 19, B3: true}],
          ['UpdateRecord', 'Table12', 8, {A3: 20, B3: false}],
          ['AddRecord', 'Table12', 9, {A3: 20, B3: true}],
          ['RemoveRecord', 'Table12', 9],
        ],
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${tablePath(d, 'Table12')}/data`,
        {A3: Array.from({length: 200}, (_, i) => 200 + i), B3: Array(200).fill(true)},
        chimpy.as,
      ),
    );
    const range = (from: number, a3: number) =>
      Array.from({length: 100}, (_, i) => ({id: from + i, manualSort: from + i, A3: a3 + i, B3: true}));
    const expected: Record<string, unknown[][]> = {
      add: [
        [{id: 1, A: 1, B: true, C: null, manualSort: 1}],
        [{id: 2, A: 4, B: true, C: null, manualSort: 2}],
        [{id: 2, A: 7, B: true, C: null, manualSort: 2}],
        [
          {id: 3, A3: 13, B3: true, manualSort: 3},
          {id: 5, A3: 15, B3: true, manualSort: 5},
        ],
        [{id: 7, A3: 18, B3: true, manualSort: 7}],
        range(9, 200),
        range(109, 300),
      ],
      update: [[{id: 2, A: 8, B: true, C: null, manualSort: 2}], [{id: 1, A3: 101, B3: true, manualSort: 1}]],
      'add,update': [
        [{id: 1, A: 1, B: true, C: null, manualSort: 1}],
        [{id: 2, A: 4, B: true, C: null, manualSort: 2}],
        [{id: 2, A: 7, B: true, C: null, manualSort: 2}],
        [{id: 2, A: 8, B: true, C: null, manualSort: 2}],
        [
          {id: 1, A3: 101, B3: true, manualSort: 1},
          {id: 3, A3: 13, B3: true, manualSort: 3},
          {id: 5, A3: 15, B3: true, manualSort: 5},
        ],
        [{id: 7, A3: 18, B3: true, manualSort: 7}],
        range(9, 200),
        range(109, 300),
      ],
    };
    const total = Object.values(expected).reduce((n, batches) => n + batches.length, 0);
    await waitFor('every expected batch', () => deliveries.length >= total);
    for (const sub of subs)
      assert.equal(ok(await api.post(`${tablePath(d, 'Table12')}/_unsubscribe`, sub, chimpy.as)).body, {success: true});
    ok(await api.post(`${tablePath(d, 'Table12')}/data`, {A3: [88, 99], B3: [true, false]}, chimpy.as));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal({add: at('/add'), update: at('/update'), 'add,update': at('/add,update')}, expected);
    assert.is(deliveries.length, total, 'nothing after unsubscribing');
    for (const dl of deliveries) assert.match(String(dl.headers['content-type']), /^application\/json/);
  });

  s('deliveries carry formula results; a row changed only through a reference is an update (issue 14)', async () => {
    const {api, chimpy} = world();
    deliveries.length = 0;
    const d = await newDoc('formulas');
    ok(
      await api.post(
        `/api/docs/${d}/tables`,
        {tables: [{id: 'Rates', columns: [{id: 'Rate', fields: {type: 'Numeric'}}]}]},
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddRecord', 'Rates', null, {Rate: 2}],
          ['AddColumn', 'Table1', 'R', {type: 'Ref:Rates', isFormula: false}],
          ['AddColumn', 'Table1', 'F', {isFormula: true, formula: '$A * $R.Rate'}],
        ],
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${tablePath(d)}/_subscribe`,
        {eventTypes: ['add', 'update'], url: `${base}/fx`, isReadyColumn: 'B'},
        chimpy.as,
      ),
    );
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 3, B: true, R: 1}}]}, chimpy.as));
    await waitFor('the add', () => at('/fx').length >= 1);
    ok(await api.patch(`${tablePath(d, 'Rates')}/records`, {records: [{id: 1, fields: {Rate: 5}}]}, chimpy.as));
    await waitFor('the update', () => at('/fx').length >= 2);
    assert.equal(at('/fx'), [
      [{id: 1, manualSort: 1, A: 3, B: true, C: null, R: 1, F: 6}],
      [{id: 1, manualSort: 1, A: 3, B: true, C: null, R: 1, F: 15}],
    ]);
  });

  s('deliveries name the document API key behind a write (beyond Grist, issue 30)', async () => {
    const {api, chimpy} = world();
    const keyed = await newDoc('Keyed');
    const path = '/by-key';
    ok(
      await api.post(
        `/api/docs/${keyed}/webhooks`,
        {webhooks: [{fields: {tableId: 'Table1', eventTypes: ['add'], url: `${base}${path}`}}]},
        chimpy.as,
      ),
    );
    const made = ok(await api.post(`/api/docs/${keyed}/apikeys`, {name: 'etl', access: 'editors'}, chimpy.as)).body;
    const rows = `${tablePath(keyed)}/records`;
    ok(await api.post(rows, {records: [{fields: {A: 'by key'}}]}, {key: made.key}));
    await waitFor('the keyed delivery', () => at(path).length === 1);
    ok(await api.post(rows, {records: [{fields: {A: 'by chimpy'}}]}, chimpy.as));
    await waitFor('the second delivery', () => at(path).length === 2);
    const got = deliveries.filter((d) => d.path === path);
    assert.equal(
      got.map((d) => [(d.body as {A: string}[])[0].A, d.headers['x-gristlite-api-key-id'] ?? null]),
      [
        ['by key', String(made.id)],
        ['by chimpy', null],
      ],
    );
  });

  s(
    'includePrevious (beyond Grist, D105): update rows carry _previous; off by default; listed, patched, checked',
    async () => {
      const {api, chimpy} = world();
      const d = await newDoc('Previous');
      ok(
        await api.post(
          `/api/docs/${d}/apply`,
          [['AddColumn', 'Table1', 'F', {isFormula: true, formula: '$A * 2'}]],
          chimpy.as,
        ),
      );
      const post = (fields: Record<string, unknown>) =>
        api.post(
          `/api/docs/${d}/webhooks`,
          {webhooks: [{fields: {tableId: 'Table1', eventTypes: ['add', 'update'], ...fields}}]},
          chimpy.as,
        );
      isInvalidPayload(
        await post({url: `${base}/prev-bad`, includePrevious: 'yes'}),
        'Error: value.webhooks[0] is not a Webhook; value.webhooks[0].fields is not a WebhookFields; value.webhooks[0].fields.includePrevious is not a boolean',
      );
      const withPrev = ok(await post({url: `${base}/prev-on`, includePrevious: true})).body.webhooks[0].id;
      const plain = ok(await post({url: `${base}/prev-off`})).body.webhooks[0].id;
      const listed = ok(await api.get(`/api/docs/${d}/webhooks`, chimpy.as)).body.webhooks;
      assert.is(listed.find((w: any) => w.id === withPrev).fields.includePrevious, true);
      assert.not.ok(
        'includePrevious' in listed.find((w: any) => w.id === plain).fields,
        "a webhook as Grist's lists as Grist's",
      );
      const rows = `${tablePath(d)}/records`;
      ok(await api.post(rows, {records: [{fields: {A: 1, C: 'keep'}}]}, chimpy.as));
      await waitFor('the adds', () => at('/prev-on').length === 1 && at('/prev-off').length === 1);
      ok(await api.patch(rows, {records: [{id: 1, fields: {A: 5, C: 'keep'}}]}, chimpy.as));
      await waitFor('the updates', () => at('/prev-on').length === 2 && at('/prev-off').length === 2);
      // Only the columns whose value changed (formula results included), as they were before.
      assert.equal(at('/prev-on'), [
        [{id: 1, manualSort: 1, A: 1, B: false, C: 'keep', F: 2}],
        [{id: 1, manualSort: 1, A: 5, B: false, C: 'keep', F: 10, _previous: {A: 1, F: 2}}],
      ]);
      assert.equal(at('/prev-off')[1], [{id: 1, manualSort: 1, A: 5, B: false, C: 'keep', F: 10}]);
      // PATCH turns it off (and on).
      ok(await api.patch(`/api/docs/${d}/webhooks/${withPrev}`, {includePrevious: false}, chimpy.as));
      ok(await api.patch(`/api/docs/${d}/webhooks/${plain}`, {includePrevious: true}, chimpy.as));
      ok(await api.patch(rows, {records: [{id: 1, fields: {C: 'changed'}}]}, chimpy.as));
      await waitFor('the next updates', () => at('/prev-on').length === 3 && at('/prev-off').length === 3);
      assert.not.ok('_previous' in at('/prev-on')[2][0]);
      assert.equal(at('/prev-off')[2][0]._previous, {C: 'keep'});
      isInvalidPayload(
        await api.patch(`/api/docs/${d}/webhooks/${plain}`, {includePrevious: 1}, chimpy.as),
        'Error: value.includePrevious is not a boolean',
      );
    },
  );

  s('deliveries: authorization header, retries until 2xx, usage, disabled hooks, deletions', async () => {
    const {api, chimpy} = world();
    deliveries.length = 0;
    const d = await newDoc('usage');
    const h = `/api/docs/${d}/webhooks`;
    failures.set('/flaky', 2);
    const [flaky, authed] = ok(
      await api.post(
        h,
        {
          webhooks: [
            {fields: {url: `${base}/flaky`, eventTypes: ['add'], tableId: 'Table1'}},
            {
              fields: {
                url: `${base}/authed`,
                eventTypes: ['add', 'update'],
                tableId: 'Table1',
                authorization: 'Bearer xyz',
              },
            },
          ],
        },
        chimpy.as,
      ),
    ).body.webhooks;
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'a', B: true}}]}, chimpy.as));
    await waitFor('the flaky delivery', () => at('/flaky').length === 1 && at('/authed').length === 1);
    assert.equal(at('/flaky'), [[{id: 1, manualSort: 1, A: 'a', B: true, C: null}]]);
    assert.is(deliveries.find((x) => x.path === '/authed')!.headers.authorization, 'Bearer xyz');
    assert.is(deliveries.find((x) => x.path === '/flaky')!.headers.authorization, undefined);
    const readUsage = async (id: string) =>
      ok(await api.get(h, chimpy.as)).body.webhooks.find((w: any) => w.id === id).usage;
    /** Reads the usage until `done` holds (or 5 s pass). */
    const pollUsage = async (id: string, done: (u: any) => boolean) => {
      const end = Date.now() + 5000;
      let u = await readUsage(id);
      while (!done(u) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 10));
        u = await readUsage(id);
      }
      return u;
    };
    let usage = await pollUsage(flaky.id, (u) => u.status === 'idle' && u.numWaiting === 0);
    assert.equal([usage.status, usage.numWaiting, usage.lastHttpStatus], ['idle', 0, 200]);
    assert.equal(usage.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 1, attempts: 3});
    assert.type(usage.updatedTime, 'number');
    assert.type(usage.lastSuccessTime, 'number');
    assert.type(usage.lastFailureTime, 'number');
    assert.match(usage.lastErrorMessage, /failing on purpose/);
    // Updates fire `update` for rows that existed; deletions never fire; a disabled hook is silent.
    ok(await api.patch(`${h}/${flaky.id}`, {enabled: false}, chimpy.as));
    ok(await api.patch(`${tablePath(d)}/records`, {records: [{id: 1, fields: {A: 'b'}}]}, chimpy.as));
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'c'}}]}, chimpy.as));
    ok(await api.post(`${tablePath(d)}/records/delete`, [1], chimpy.as));
    // Events of back-to-back writes may share a POST: compare the rows delivered.
    await waitFor('the updates', () => at('/authed').flat().length === 3);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(at('/authed').flat().slice(1), [
      {id: 1, manualSort: 1, A: 'b', B: true, C: null},
      {id: 2, manualSort: 2, A: 'c', B: false, C: null},
    ]);
    assert.is(at('/flaky').length, 1, 'the disabled hook got nothing');
    // A receiver that always fails keeps events waiting until the queue is cleared.
    failures.set('/down', -1);
    ok(await api.patch(`${h}/${flaky.id}`, {url: `${base}/down`, enabled: true}, chimpy.as));
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'd'}}]}, chimpy.as));
    usage = await pollUsage(flaky.id, (u) => u.lastHttpStatus === 500);
    assert.is(usage.lastHttpStatus, 500);
    assert.ok(usage.numWaiting >= 1, `events wait: ${JSON.stringify(usage)}`);
    assert.ok(['sending', 'retrying', 'postponed'].includes(usage.status), usage.status);
    assert.equal(ok(await api.del(`${h}/queue`, chimpy.as)).body, {success: true});
    usage = await readUsage(flaky.id);
    assert.equal([usage.numWaiting, usage.lastEventBatch], [0, null]);
    assert.equal(ok(await api.del(`${h}/queue/${authed.id}`, chimpy.as)).body, {success: true});
    failures.delete('/down');
    // A downloaded copy has its triggers disabled.
    const file = await api.get(`/api/docs/${d}/download`, chimpy.as);
    const dir = mkdtempSync(join(tmpdir(), 'gl-conf-wh-'));
    try {
      writeFileSync(join(dir, 'copy.grist'), ok(file).raw);
      const db = new Database(join(dir, 'copy.grist'), {readonly: true});
      try {
        assert.equal(
          (db.prepare('SELECT enabled FROM _grist_Triggers ORDER BY id').all() as any[]).map((r) => r.enabled),
          [0, 0],
        );
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  });

  s.run();
}
