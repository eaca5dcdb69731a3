// End-to-end delivery against a real HTTP receiver on loopback.
import Database from 'better-sqlite3';
import {createHmac} from 'node:crypto';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  addWebhook,
  clearWebhookQueue,
  listWebhooks,
  queueSize,
  startWebhookDelivery,
  updateWebhook,
  webhookUsage,
  WebhookEventsDropped,
  type DeliveryOptions,
  type LookupAll,
  type WebhookDelivery,
  type WebhookUrlPolicy,
} from '../src/webhooks/index.js';
import {addRows, deliverFrom, newDoc, Receiver, removeRows, updateRows, waitFor} from './webhooks-helpers.js';

interface Ctx {
  db: Database.Database;
  path: string;
  receiver: Receiver;
  policy: WebhookUrlPolicy;
  delivery?: WebhookDelivery;
}

async function setup(): Promise<Ctx> {
  const receiver = await new Receiver().start();
  const {db, path} = newDoc();
  return {db, path, receiver, policy: {entries: [`127.0.0.1:${receiver.port}`]}};
}

function start(ctx: Ctx, opts: Partial<DeliveryOptions> = {}): WebhookDelivery {
  ctx.delivery = deliverFrom(
    ctx.db,
    startWebhookDelivery(ctx.db, {
      policy: ctx.policy,
      waitDelayMs: 5,
      onError: (e) => {
        throw e;
      },
      ...opts,
    }),
  );
  return ctx.delivery;
}

/** An onError that keeps the messages of dropped events and throws anything else. */
function dropsInto(drops: string[]): (e: unknown) => void {
  return (e) => {
    if (!(e instanceof WebhookEventsDropped)) throw e;
    drops.push(e.message);
  };
}

async function teardown(ctx: Ctx): Promise<void> {
  await ctx.delivery?.stop();
  await ctx.receiver.close();
  if (ctx.db.open) ctx.db.close();
}

async function hook(ctx: Ctx, fields: Record<string, unknown> = {}): Promise<string> {
  return (
    await addWebhook(
      ctx.db,
      {url: ctx.receiver.url(), eventTypes: ['add', 'update'], tableId: 'Table1', ...fields},
      ctx.policy,
    )
  ).webhookId;
}

test("delivers Grist's request: POST, JSON array of full rows, Content-Type and Authorization", async () => {
  const ctx = await setup();
  try {
    await hook(ctx, {authorization: 'Bearer xyz'});
    start(ctx);
    addRows(ctx.db, [
      {A: 13, B: true},
      {A: 'x', B: false, C: 2.5},
    ]);
    await waitFor(() => ctx.receiver.requests.length === 1);
    const r = ctx.receiver.requests[0];
    assert.is(r.path, '/hook');
    assert.is(r.headers['content-type'], 'application/json');
    assert.is(r.headers.authorization, 'Bearer xyz');
    assert.is(r.headers['x-gristlite-signature'], undefined);
    assert.is(
      r.body,
      '[{"id":1,"manualSort":1,"A":13,"B":true,"C":null},{"id":2,"manualSort":2,"A":"x","B":false,"C":2.5}]',
    );
    await waitFor(() => queueSize(ctx.db) === 0);
    const usage = webhookUsage(ctx.db, listWebhooks(ctx.db).webhooks[0].id);
    assert.is(usage.status, 'idle');
    assert.is(usage.numWaiting, 0);
    assert.is(usage.lastHttpStatus, 200);
    assert.is(usage.lastFailureTime, null);
    assert.is(usage.lastErrorMessage, null);
    assert.ok(typeof usage.lastSuccessTime === 'number');
    assert.equal(usage.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 2, attempts: 1});
  } finally {
    await teardown(ctx);
  }
});

test('batches of at most 100, in order, across writes; any 2xx is delivered', async () => {
  const ctx = await setup();
  try {
    ctx.receiver.respond = () => ({status: 204});
    await hook(ctx);
    addRows(
      ctx.db,
      Array.from({length: 230}, (_, i) => ({A: i})),
    );
    updateRows(ctx.db, [{id: 5, A: 'five'}]);
    addRows(ctx.db, [{A: 'last'}]);
    start(ctx);
    await waitFor(() => queueSize(ctx.db) === 0, 5000, 'empty outbox');
    const bodies = ctx.receiver.bodies() as {id: number; A: unknown}[][];
    assert.equal(
      bodies.map((b) => b.length),
      [100, 100, 32],
    );
    const ids = bodies.flat().map((r) => r.id);
    assert.equal(ids, [...Array.from({length: 230}, (_, i) => i + 1), 5, 231]);
    assert.is(bodies[2][30].A, 'five');
  } finally {
    await teardown(ctx);
  }
});

test('retries after a failing receiver, with usage as Grist keeps it', async () => {
  const ctx = await setup();
  try {
    ctx.receiver.respond = (_r, n) => (n < 2 ? {status: 500, body: `down ${n}`} : {status: 200});
    const id = await hook(ctx);
    const unit = 100;
    start(ctx, {waitDelayMs: unit});
    addRows(ctx.db, [{A: 1}]);
    await waitFor(() => ctx.receiver.requests.length === 1);
    await waitFor(() => webhookUsage(ctx.db, id).lastEventBatch?.status === 'failure');
    let usage = webhookUsage(ctx.db, id);
    assert.is(usage.status, 'sending');
    assert.is(usage.numWaiting, 1);
    assert.equal(usage.lastEventBatch, {
      status: 'failure',
      httpStatus: 500,
      errorMessage: 'down 0',
      size: 1,
      attempts: 1,
    });
    await waitFor(() => queueSize(ctx.db) === 0, 5000);
    usage = webhookUsage(ctx.db, id);
    assert.is(ctx.receiver.requests.length, 3);
    assert.ok(ctx.receiver.requests.every((r) => r.body === ctx.receiver.requests[0].body));
    assert.is(usage.status, 'idle');
    assert.is(usage.lastErrorMessage, 'down 1');
    assert.is(usage.lastHttpStatus, 200);
    assert.ok(usage.lastFailureTime! <= usage.lastSuccessTime!);
    assert.equal(usage.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 1, attempts: 3});
    // The wait between attempts grows: 1 unit, then 2 units. Lower bounds only: a timer never
    // fires early, and a loaded machine only makes the gaps longer.
    const [first, second, third] = ctx.receiver.requests.map((r) => r.at);
    assert.ok(second - first >= unit - 2, `first wait ${second - first} ms, unit ${unit} ms`);
    assert.ok(third - second >= 2 * unit - 2, `second wait ${third - second} ms, twice the unit expected`);
    assert.equal(listWebhooks(ctx.db).webhooks[0].usage.status, 'idle');
  } finally {
    await teardown(ctx);
  }
});

test('a failing webhook keeps its order and does not hold up another one', async () => {
  const ctx = await setup();
  try {
    let badCalls = 0;
    ctx.receiver.respond = (r) => {
      if (r.path !== '/bad') return {status: 200};
      badCalls++;
      return badCalls <= 3 ? {status: 503, delayMs: 30} : {status: 200, delayMs: 30};
    };
    const bad = await hook(ctx, {url: ctx.receiver.url('/bad')});
    await hook(ctx, {url: ctx.receiver.url('/good')});
    start(ctx, {maxAttempts: 2, batchSize: 1});
    addRows(ctx.db, [{A: 1}]);
    addRows(ctx.db, [{A: 2}]);
    await waitFor(() => queueSize(ctx.db) === 0, 5000);
    const paths = ctx.receiver.requests.map((r) => r.path);
    const A = (r: {body: string}) => (JSON.parse(r.body) as {A: number}[]).map((x) => x.A);
    // /good was served while /bad was still failing.
    assert.ok(paths.lastIndexOf('/good') < paths.indexOf('/bad') + 3, paths.join(' '));
    assert.equal(ctx.receiver.requests.filter((r) => r.path === '/good').map(A), [[1], [2]]);
    // /bad: 2 attempts, postponed, then the same batch again: order kept.
    assert.equal(ctx.receiver.requests.filter((r) => r.path === '/bad').map(A), [[1], [1], [1], [1], [2]]);
    const usage = webhookUsage(ctx.db, bad);
    assert.equal([usage.status, usage.lastErrorMessage, usage.lastHttpStatus], ['idle', null, 200]);
  } finally {
    await teardown(ctx);
  }
});

test('delivery resumes after a restart, with the usage kept in the document', async () => {
  const ctx = await setup();
  try {
    ctx.receiver.respond = () => ({status: 500, body: 'not yet'});
    const id = await hook(ctx);
    start(ctx, {waitDelayMs: 10_000});
    addRows(ctx.db, [{A: 'first'}]);
    addRows(ctx.db, [{A: 'second'}]);
    await waitFor(() => ctx.receiver.requests.length === 1);
    await waitFor(() => webhookUsage(ctx.db, id).lastEventBatch?.status === 'failure');
    // "Crash": stop the loop, close the connection; events recorded meanwhile are on disk too.
    await ctx.delivery!.stop();
    ctx.delivery = undefined;
    ctx.db.close();
    ctx.receiver.respond = () => ({status: 200});
    ctx.db = new Database(ctx.path);
    assert.is(queueSize(ctx.db), 2);
    const before = webhookUsage(ctx.db, id);
    assert.is(before.lastErrorMessage, 'not yet');
    assert.is(before.lastHttpStatus, 500);
    start(ctx);
    await waitFor(() => queueSize(ctx.db) === 0, 5000);
    const bodies = ctx.receiver.bodies() as {A: string}[][];
    assert.equal(
      bodies
        .slice(1)
        .flat()
        .map((r) => r.A),
      ['first', 'second'],
    );
    const after = webhookUsage(ctx.db, id);
    assert.is(after.lastErrorMessage, 'not yet');
    assert.is(after.lastFailureTime, before.lastFailureTime);
    assert.ok(typeof after.lastSuccessTime === 'number');
  } finally {
    await teardown(ctx);
  }
});

test('no delivery for a write that rolled back', async () => {
  const ctx = await setup();
  try {
    await hook(ctx);
    start(ctx);
    try {
      ctx.db.transaction(() => {
        addRows(ctx.db, [{A: 'ghost'}]);
        throw new Error('rollback');
      })();
    } catch {
      // expected
    }
    addRows(ctx.db, [{A: 'real'}]);
    // Everything recorded is delivered in order: a ghost event would be in the first batch or
    // one before it.
    await waitFor(() => queueSize(ctx.db) === 0);
    assert.equal(
      (ctx.receiver.bodies() as {A: string}[][]).flat().map((r) => r.A),
      ['real'],
    );
  } finally {
    await teardown(ctx);
  }
});

test('clearing the queue drops waiting events, aborts the request in flight and resets usage', async () => {
  const ctx = await setup();
  try {
    // Never answered while the test runs: only an abort ends this request.
    ctx.receiver.respond = () => ({status: 200, delayMs: 600_000});
    const id = await hook(ctx);
    start(ctx);
    addRows(ctx.db, [{A: 1}]);
    addRows(ctx.db, [{A: 2}]);
    await waitFor(() => ctx.receiver.requests.length === 1);
    assert.is(webhookUsage(ctx.db, id).status, 'sending');
    assert.is(webhookUsage(ctx.db, id).numWaiting, 2);
    clearWebhookQueue(ctx.db, undefined, ctx.delivery);
    assert.equal(webhookUsage(ctx.db, id), {status: 'idle', numWaiting: 0, lastEventBatch: null});
    await waitFor(() => ctx.receiver.aborted === 1, undefined, 'the request in flight to be aborted');
    // Delivery goes on for new events, and only for them: the cleared ones come back neither
    // before them (a lane delivers in order) nor with them.
    ctx.receiver.respond = () => ({status: 200});
    addRows(ctx.db, [{A: 3}]);
    await waitFor(() => queueSize(ctx.db) === 0);
    assert.equal(
      ctx.receiver.bodies().map((b) => (b as {A: number}[]).map((r) => r.A)),
      [[1, 2], [3]],
    );
    assert.equal(webhookUsage(ctx.db, id).numWaiting, 0);
  } finally {
    await teardown(ctx);
  }
});

test('disabling a webhook clears its queue; a URL no longer allowed drops its events as sent', async () => {
  const ctx = await setup();
  try {
    ctx.receiver.respond = () => ({status: 500});
    const id = await hook(ctx);
    addRows(ctx.db, [{A: 1}]);
    assert.is(queueSize(ctx.db, id), 1);
    await updateWebhook(ctx.db, id, {enabled: false}, ctx.policy, ctx.delivery);
    assert.is(queueSize(ctx.db, id), 0);
    addRows(ctx.db, [{A: 2}]);
    assert.is(queueSize(ctx.db, id), 0);
    await updateWebhook(ctx.db, id, {enabled: true}, ctx.policy);
    addRows(ctx.db, [{A: 3}]);
    assert.is(queueSize(ctx.db, id), 1);
    const drops: string[] = [];
    start(ctx, {policy: {entries: ['example.com']}, onError: dropsInto(drops)});
    await waitFor(() => queueSize(ctx.db) === 0);
    assert.is(ctx.receiver.requests.length, 0);
    // Dropped, but never silently (issue 37 §6).
    assert.equal(drops, [
      `1 webhook event(s) of webhook ${id} dropped: its URL is not allowed by GRISTLITE_ALLOWED_WEBHOOK_DOMAINS in this process`,
    ]);
  } finally {
    await teardown(ctx);
  }
});

test('bounded queue: while draining, a failing batch gets 5 attempts and is dropped', async () => {
  const ctx = await setup();
  try {
    let seenAtSixth: unknown = null;
    let id = '';
    ctx.receiver.respond = (_r, n) => {
      if (n === 5) seenAtSixth = webhookUsage(ctx.db, id);
      return n < 5 ? {status: 500, body: 'nope'} : {status: 200};
    };
    id = await hook(ctx);
    const drops: string[] = [];
    const delivery = start(ctx, {maxQueueSize: 3, batchSize: 1, onError: dropsInto(drops)});
    for (const A of [1, 2, 3, 4]) addRows(ctx.db, [{A}]);
    assert.ok(delivery.draining);
    await waitFor(() => queueSize(ctx.db) === 0, 5000);
    const A = ctx.receiver.requests.map((r) => (JSON.parse(r.body) as {A: number}[])[0].A);
    assert.equal(A, [1, 1, 1, 1, 1, 2, 3, 4]);
    assert.equal(drops, [
      `1 webhook event(s) of webhook ${id} dropped: delivery failed 5 times while the outbox held 3 events or more (GRIST_MAX_QUEUE_SIZE)`,
    ]);
    const usage = seenAtSixth as {status: string; numWaiting: number; lastEventBatch: unknown};
    // The next batch is being sent; the dropped one shows as the last batch, rejected.
    assert.is(usage.status, 'sending');
    assert.is(usage.numWaiting, 3);
    assert.equal(usage.lastEventBatch, {status: 'rejected', httpStatus: 500, errorMessage: null, size: 1, attempts: 5});
    assert.not.ok(delivery.draining);
    await delivery.waitForCapacity();
  } finally {
    await teardown(ctx);
  }
});

test('a failing batch that brings the outbox to exactly its limit is postponed, not dropped', async () => {
  const ctx = await setup();
  try {
    let seenAtSixth: {status: string; lastEventBatch: unknown} | null = null;
    let id = '';
    ctx.receiver.respond = (_r, n) => {
      if (n === 5) seenAtSixth = webhookUsage(ctx.db, id);
      return n < 5 ? {status: 500, body: 'nope'} : {status: 200};
    };
    id = await hook(ctx);
    start(ctx, {maxQueueSize: 3, batchSize: 1});
    for (const A of [1, 2, 3]) addRows(ctx.db, [{A}]);
    await waitFor(() => queueSize(ctx.db) === 0, 5000);
    // Grist counts the queue without the failed batch (2 < 3): the batch is kept and sent again.
    const A = ctx.receiver.requests.map((r) => (JSON.parse(r.body) as {A: number}[])[0].A);
    assert.equal(A, [1, 1, 1, 1, 1, 1, 2, 3]);
    assert.is(seenAtSixth!.status, 'sending');
    assert.equal(seenAtSixth!.lastEventBatch, {
      status: 'failure',
      httpStatus: 500,
      errorMessage: null,
      size: 1,
      attempts: 5,
    });
  } finally {
    await teardown(ctx);
  }
});

test('after its last attempt a batch is postponed: usage says so and its events keep waiting', async () => {
  const ctx = await setup();
  try {
    ctx.receiver.respond = () => ({status: 502, body: 'bad gateway'});
    const id = await hook(ctx);
    // One attempt, then a long pause before the batch starts over.
    start(ctx, {maxAttempts: 1, waitDelayMs: 600_000});
    addRows(ctx.db, [{A: 1}]);
    addRows(ctx.db, [{A: 2}]);
    await waitFor(() => webhookUsage(ctx.db, id).status === 'postponed', 5000);
    const usage = webhookUsage(ctx.db, id);
    assert.is(usage.numWaiting, 2);
    assert.is(usage.lastHttpStatus, 502);
    assert.is(usage.lastErrorMessage, 'bad gateway');
    assert.equal(usage.lastEventBatch, {
      status: 'failure',
      httpStatus: 502,
      errorMessage: 'bad gateway',
      size: 2,
      attempts: 1,
    });
    assert.is(ctx.receiver.requests.length, 1);
  } finally {
    await teardown(ctx);
  }
});

test('a request aborted by clearing the queue leaves no usage behind', async () => {
  const ctx = await setup();
  try {
    // The answer's headers come at once, its body never: the abort falls while the body is read.
    ctx.receiver.respond = () => ({status: 500, body: 'never read', bodyDelayMs: 600_000});
    const id = await hook(ctx);
    start(ctx);
    addRows(ctx.db, [{A: 1}]);
    await waitFor(() => ctx.receiver.headersSent === 1);
    clearWebhookQueue(ctx.db, undefined, ctx.delivery);
    await waitFor(() => ctx.receiver.aborted === 1, undefined, 'the request in flight to be aborted');
    // Delivery goes on: the next event's first attempt shows no failure from before the clear.
    let seen: unknown = null;
    ctx.receiver.respond = () => {
      seen = webhookUsage(ctx.db, id);
      return {status: 200};
    };
    addRows(ctx.db, [{A: 2}]);
    await waitFor(() => queueSize(ctx.db) === 0 && seen !== null);
    assert.equal(seen, {
      status: 'sending',
      numWaiting: 1,
      updatedTime: (seen as {updatedTime: number}).updatedTime,
      lastEventBatch: null,
      lastSuccessTime: null,
      lastFailureTime: null,
      lastErrorMessage: null,
      lastHttpStatus: null,
    });
  } finally {
    await teardown(ctx);
  }
});

test('waitForCapacity waits while the outbox is full', async () => {
  const ctx = await setup();
  try {
    ctx.receiver.respond = () => ({status: 200, delayMs: 50});
    await hook(ctx);
    addRows(ctx.db, [{A: 1}]);
    addRows(ctx.db, [{A: 2}]);
    const delivery = start(ctx, {maxQueueSize: 2, batchSize: 1});
    assert.ok(delivery.draining);
    // It returns only once a delivery made room (the receiver answers after 50 ms).
    await delivery.waitForCapacity();
    assert.ok(ctx.receiver.requests.length >= 1, 'a batch was sent before it returned');
    assert.ok(queueSize(ctx.db) < 2);
  } finally {
    await teardown(ctx);
  }
});

test('signed deliveries (beyond Grist): HMAC-SHA256 of timestamp and body', async () => {
  const ctx = await setup();
  try {
    const id = await hook(ctx, {secret: 's3cret'});
    assert.is(listWebhooks(ctx.db).webhooks[0].fields.secret, 's3cr...');
    start(ctx);
    addRows(ctx.db, [{A: 1}]);
    await waitFor(() => ctx.receiver.requests.length === 1);
    const r = ctx.receiver.requests[0];
    const ts = String(r.headers['x-gristlite-timestamp']);
    assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60);
    const expected = createHmac('sha256', 's3cret').update(`${ts}.${r.body}`).digest('hex');
    assert.is(r.headers['x-gristlite-signature'], `sha256=${expected}`);
    await updateWebhook(ctx.db, id, {secret: null}, ctx.policy);
    addRows(ctx.db, [{A: 2}]);
    await waitFor(() => ctx.receiver.requests.length === 2);
    assert.is(ctx.receiver.requests[1].headers['x-gristlite-signature'], undefined);
  } finally {
    await teardown(ctx);
  }
});

test('remove events (beyond Grist) go in their own batches, marked by a header', async () => {
  const ctx = await setup();
  try {
    await hook(ctx, {eventTypes: ['add', 'remove']});
    addRows(ctx.db, [{A: 1}, {A: 2}]);
    removeRows(ctx.db, [1]);
    addRows(ctx.db, [{A: 3}]);
    start(ctx);
    await waitFor(() => ctx.receiver.requests.length === 3);
    const rs = ctx.receiver.requests;
    assert.equal(
      rs.map((r) => r.headers['x-gristlite-event'] ?? null),
      [null, 'remove', null],
    );
    assert.equal(
      rs.map((r) => (JSON.parse(r.body) as {A: number}[]).map((x) => x.A)),
      [[1, 2], [1], [3]],
    );
    assert.is(rs[1].body, '[{"id":1,"manualSort":1,"A":1,"B":null,"C":null}]');
  } finally {
    await teardown(ctx);
  }
});

test('writes made with a document API key (beyond Grist) are delivered in their own batches, naming the key', async () => {
  const ctx = await setup();
  try {
    await hook(ctx);
    addRows(ctx.db, [{A: 1}, {A: 2}]);
    addRows(ctx.db, [{A: 3}], 'Table1', {apiKeyId: 7});
    addRows(ctx.db, [{A: 4}], 'Table1', {apiKeyId: 7});
    addRows(ctx.db, [{A: 5}], 'Table1', {apiKeyId: 9});
    addRows(ctx.db, [{A: 6}]);
    start(ctx);
    await waitFor(() => ctx.receiver.requests.length === 4);
    const rs = ctx.receiver.requests;
    assert.equal(
      rs.map((r) => r.headers['x-gristlite-api-key-id'] ?? null),
      [null, '7', '9', null],
    );
    assert.equal(
      rs.map((r) => (JSON.parse(r.body) as {A: number}[]).map((x) => x.A)),
      [[1, 2], [3, 4], [5], [6]],
    );
  } finally {
    await teardown(ctx);
  }
});

test('an outbox made before deliveries named keys gains the column when opened', async () => {
  const ctx = await setup();
  try {
    await hook(ctx);
    ctx.db.exec('DROP TABLE _gristlite_webhook_outbox');
    ctx.db.exec(
      'CREATE TABLE _gristlite_webhook_outbox (id INTEGER PRIMARY KEY, webhookId TEXT NOT NULL, eventType TEXT NOT NULL, payload TEXT NOT NULL, createdAt INTEGER NOT NULL)',
    );
    // Opened again, as an old document is: the outbox gains apiKeyId.
    ctx.db.close();
    ctx.db = new Database(ctx.path);
    start(ctx);
    addRows(ctx.db, [{A: 1}], 'Table1', {apiKeyId: 3});
    await waitFor(() => ctx.receiver.requests.length === 1);
    assert.is(ctx.receiver.requests[0].headers['x-gristlite-api-key-id'], '3');
  } finally {
    await teardown(ctx);
  }
});

test('a receiver that cannot be reached is a failure with the error message', async () => {
  const ctx = await setup();
  try {
    const port = ctx.receiver.port;
    await ctx.receiver.close();
    const id = (
      await addWebhook(
        ctx.db,
        {url: `http://127.0.0.1:${port}/gone`, eventTypes: ['add'], tableId: 'Table1'},
        ctx.policy,
      )
    ).webhookId;
    start(ctx, {maxAttempts: 2});
    addRows(ctx.db, [{A: 1}]);
    await waitFor(() => webhookUsage(ctx.db, id).lastEventBatch?.attempts === 2, 5000);
    const usage = webhookUsage(ctx.db, id);
    assert.match(String(usage.lastErrorMessage), /ECONNREFUSED/);
    assert.is(usage.lastEventBatch!.httpStatus, null);
    assert.is(usage.numWaiting, 1);
    ctx.receiver = await new Receiver().start(); // for teardown
  } finally {
    await teardown(ctx);
  }
});

test('a name allowed as public that resolves to loopback when connecting is refused', async () => {
  const ctx = await setup();
  try {
    const publicLookup = {
      entries: ['*'],
      lookup: ((_h, cb) => cb(null, [{address: '93.184.216.34', family: 4}])) as LookupAll,
    };
    const url = `http://rebind.test:${ctx.receiver.port}/hook`;
    const id = (await addWebhook(ctx.db, {url, eventTypes: ['add'], tableId: 'Table1'}, publicLookup)).webhookId;
    // By the time of delivery the name points at 127.0.0.1.
    const rebound = {entries: ['*'], lookup: ((_h, cb) => cb(null, [{address: '127.0.0.1', family: 4}])) as LookupAll};
    start(ctx, {policy: rebound, maxAttempts: 1});
    addRows(ctx.db, [{A: 1}]);
    await waitFor(() => webhookUsage(ctx.db, id).lastEventBatch?.status === 'failure');
    assert.is(webhookUsage(ctx.db, id).lastErrorMessage, 'Provided url is forbidden');
    assert.is(ctx.receiver.requests.length, 0);
    // Named explicitly, the same loopback receiver is fine.
    await ctx.delivery!.stop();
    start(ctx, {policy: {entries: ['*', 'rebind.test'], lookup: rebound.lookup}});
    await waitFor(() => queueSize(ctx.db) === 0);
    assert.is(ctx.receiver.requests.length, 1);
  } finally {
    await teardown(ctx);
  }
});

test.run();
