/**
 * Webhook usage statistics and the queue endpoints, from the cases of Grist's webhook tests
 * (DocApiWebhooks: "should return statistics", "should monitor failures", "should clear the
 * outgoing queue", "should not call to a deleted webhook"), with Grist's test settings: 4
 * attempts per batch, a queue of 10 events. A receiver on loopback holds each request until the
 * test answers it, so every state is read while it holds, never after a fixed sleep.
 *
 * Where gristlite differs on purpose (decision D71): each webhook has its own lane, so a webhook
 * that fails or hangs delays only itself, and a postponed or rejected batch is followed at once
 * by its webhook's next one (Grist serves the other webhooks' events first).
 */
import {createServer, type Server, type ServerResponse} from 'node:http';
import type {AddressInfo} from 'node:net';
import * as assert from 'uvu/assert';
import {tablePath} from './docdata.js';
import {areaSuite, ok, useWorld, type Target} from './world.js';

/** A request the receiver got: its path, the rows' `A` values, and how to answer it. */
interface Held {
  path: string;
  A: unknown[];
  answered: boolean;
  /** The client closed the connection before an answer (an aborted request). */
  aborted: boolean;
  answer(status: number, body?: string): void;
}

/** Grist's `usage` of a webhook with no statistics (new, or after the queue was cleared). */
const FRESH = {status: 'idle', numWaiting: 0, lastEventBatch: null};

export function webhooksStatsSuite(target: Target): void {
  const s = areaSuite(target, 'webhooks-stats');
  let receiver: Server;
  let base = '';
  /** Every request, in arrival order. */
  const received: Held[] = [];
  /** Paths answered at once with this status (Grist's `/200` and `/404` endpoints). */
  const auto = new Map<string, number>();
  s.before(async () => {
    receiver = createServer((req, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rows = JSON.parse(Buffer.concat(chunks).toString() || '[]') as {A: unknown}[];
        const held: Held = {
          path: req.url ?? '',
          A: rows.map((r) => r.A),
          answered: false,
          aborted: false,
          answer(status, body = '') {
            this.answered = true;
            if (!res.destroyed) res.writeHead(status).end(body);
          },
        };
        res.on('close', () => {
          if (!res.writableFinished) held.aborted = true;
        });
        received.push(held);
        const status = auto.get(held.path);
        if (status !== undefined) held.answer(status);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  const world = useWorld(s, target, () => ({
    GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: new URL(base).host,
    GRIST_TRIGGER_WAIT_DELAY: '20',
    GRIST_TRIGGER_MAX_ATTEMPTS: '4',
    GRIST_MAX_QUEUE_SIZE: '10',
  }));
  s.after(async () => {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
  });

  const waitFor = async (what: string, cond: () => boolean | Promise<boolean>, ms = 20_000) => {
    const end = Date.now() + ms;
    while (!(await cond())) {
      if (Date.now() > end) {
        const seen = received.map((h) => `${h.path} ${JSON.stringify(h.A)}${h.answered ? '' : ' (held)'}`);
        throw new Error(`timed out waiting for ${what}; received: ${seen.join(', ')}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  /** The `n`th request (from 1) to `path`, once it has arrived. */
  const request = async (path: string, n: number): Promise<Held> => {
    let found: Held | undefined;
    await waitFor(`request ${n} to ${path}`, () => {
      found = received.filter((h) => h.path === path)[n - 1];
      return found !== undefined;
    });
    return found!;
  };
  const atPath = (path: string) => received.filter((h) => h.path === path).map((h) => h.A);

  let doc = '';
  const hooks = () => `/api/docs/${doc}/webhooks`;
  /** A new doc whose Table1.B is Bool (the ready column), as Grist's tests set it up. */
  const newDoc = async (name: string) => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), name);
    ok(await api.post(`/api/docs/${doc}/apply`, [['ModifyColumn', 'Table1', 'B', {type: 'Bool'}]], chimpy.as));
  };
  /** Grist's `_subscribe` in its tests: add and update, ready column B. Returns the webhook id. */
  const subscribe = async (path: string): Promise<string> => {
    const {api, chimpy} = world();
    const res = await api.post(
      `/api/docs/${doc}/tables/Table1/_subscribe`,
      {eventTypes: ['add', 'update'], url: `${base}${path}`, isReadyColumn: 'B'},
      chimpy.as,
    );
    return ok(res).body.webhookId;
  };
  const addRow = async (A: number) => {
    const {api, chimpy} = world();
    ok(await api.post(`${tablePath(doc)}/records`, {records: [{fields: {A, B: true}}]}, chimpy.as));
  };
  const list = async (): Promise<{id: string; usage: any}[]> => {
    const {api, chimpy} = world();
    return ok(await api.get(hooks(), chimpy.as)).body.webhooks;
  };
  const usage = async (id: string) => (await list()).find((w) => w.id === id)!.usage;
  const del = async (path: string) => {
    const {api, chimpy} = world();
    assert.equal(ok(await api.del(path, chimpy.as)).body, {success: true});
  };
  /** Reads the usage until `done` holds. */
  const usageWhen = async (id: string, what: string, done: (u: any) => boolean) => {
    let u: any;
    await waitFor(what, async () => done((u = await usage(id))));
    return u;
  };

  s('usage of a batch: sending, success, failures while retrying, success on the third attempt', async () => {
    await newDoc('stats');
    const {api, chimpy} = world();
    const first = await subscribe('/200');
    const second = await subscribe('/404');
    const hooksNow = await list();
    assert.equal(
      hooksNow.map((w) => [w.id, w.usage]),
      [
        [first, FRESH],
        [second, FRESH],
      ],
    );
    ok(await api.del(`${hooks()}/${first}`, chimpy.as));
    ok(await api.del(`${hooks()}/${second}`, chimpy.as));
    assert.equal(await list(), []);

    const id = await subscribe('/probe');
    let before = Date.now();
    await addRow(1);
    let req = await request('/probe', 1);
    let u = await usage(id);
    // Sending: nothing known yet but the time of the change.
    assert.ok(u.updatedTime >= before, `updatedTime ${u.updatedTime} >= ${before}`);
    assert.equal(u, {
      status: 'sending',
      numWaiting: 1,
      updatedTime: u.updatedTime,
      lastEventBatch: null,
      lastSuccessTime: null,
      lastFailureTime: null,
      lastErrorMessage: null,
      lastHttpStatus: null,
    });
    req.answer(200, 'OK');
    u = await usageWhen(id, 'the batch delivered', (x) => x.numWaiting === 0);
    assert.is(u.status, 'idle');
    assert.ok(u.updatedTime >= before && u.lastSuccessTime >= before);
    assert.equal([u.lastFailureTime, u.lastErrorMessage, u.lastHttpStatus], [null, null, 200]);
    assert.equal(u.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 1, attempts: 1});
    const firstSuccess = u.lastSuccessTime;

    // A 404 with an empty body, then a 500 with a message, then a 200.
    before = Date.now();
    await addRow(2);
    (await request('/probe', 2)).answer(404);
    req = await request('/probe', 3);
    u = await usage(id);
    assert.is(u.status, 'retrying');
    assert.is(u.numWaiting, 1);
    assert.is(u.lastErrorMessage, null, 'an empty answer is no message');
    assert.ok(u.lastFailureTime >= before);
    assert.is(u.lastSuccessTime, firstSuccess);
    assert.is(u.lastHttpStatus, 404);
    assert.equal(u.lastEventBatch, {status: 'failure', httpStatus: 404, errorMessage: null, size: 1, attempts: 1});
    req.answer(500, 'Some error');
    req = await request('/probe', 4);
    u = await usage(id);
    assert.equal([u.status, u.numWaiting, u.lastHttpStatus, u.lastErrorMessage], ['retrying', 1, 500, 'Some error']);
    assert.equal(u.lastEventBatch, {
      status: 'failure',
      httpStatus: 500,
      errorMessage: 'Some error',
      size: 1,
      attempts: 2,
    });
    req.answer(200);
    u = await usageWhen(id, 'the retried batch delivered', (x) => x.numWaiting === 0);
    assert.equal([u.status, u.lastHttpStatus, u.lastErrorMessage], ['idle', 200, 'Some error']);
    assert.ok(u.lastFailureTime >= before && u.lastSuccessTime >= before);
    assert.equal(u.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 1, attempts: 3});
    assert.equal(atPath('/probe'), [[1], [2], [2], [2]], 'each attempt sends the same batch');

    // Clearing the queue resets the usage, as if the webhook were new.
    await del(`${hooks()}/queue`);
    assert.equal(await usage(id), FRESH);
  });

  s('two webhooks: each sends its own events in order, its usage counting only them', async () => {
    // Grist's test adds a second webhook to the same receiver; here each has its own path.
    const {api, chimpy} = world();
    const one = (await list())[0].id;
    const two = await subscribe('/probe2');
    await addRow(3);
    await addRow(4);
    await addRow(5);
    const held = [await request('/probe', 5), await request('/probe2', 1)];
    // Grist sends one request at a time for the whole document; gristlite one per webhook.
    const both = await list();
    assert.equal(
      both.map((w) => [w.usage.status, w.usage.numWaiting, w.usage.lastEventBatch]),
      [
        ['sending', 3, null],
        ['sending', 3, null],
      ],
    );
    assert.equal(
      held.map((h) => h.A),
      [[3], [3]],
    );
    for (const [path, n] of [
      ['/probe', 6],
      ['/probe', 7],
    ] as const) {
      held[0].answer(200);
      held[0] = await request(path, n);
      assert.is((await usage(one)).numWaiting, 8 - n);
    }
    held[0].answer(200);
    await usageWhen(one, 'the first webhook done', (u) => u.numWaiting === 0);
    // The second webhook still waits for its first answer, its count untouched.
    assert.equal([(await usage(two)).status, (await usage(two)).numWaiting], ['sending', 3]);
    for (let n = 2; n <= 4; n++) {
      held[1].answer(200);
      if (n < 4) held[1] = await request('/probe2', n);
    }
    await usageWhen(two, 'the second webhook done', (u) => u.numWaiting === 0 && u.status === 'idle');
    assert.equal(atPath('/probe').slice(4), [[3], [4], [5]]);
    assert.equal(atPath('/probe2'), [[3], [4], [5]]);
    ok(await api.del(`${hooks()}/${one}`, chimpy.as));
    ok(await api.del(`${hooks()}/${two}`, chimpy.as));
  });

  s('failures: postponed after the last attempt; over the queue limit, error and a rejected batch', async () => {
    const {api, chimpy} = world();
    await newDoc('monitor');
    const w3 = await subscribe('/p3');
    const w4 = await subscribe('/p4');
    await addRow(5);
    // /p4 holds its first request while /p3 fails all 4 attempts (509 "fail").
    const p4 = await request('/p4', 1);
    for (let n = 1; n <= 4; n++) (await request('/p3', n)).answer(509, 'fail');
    // Postponed, then the same batch starts over: its attempts count from 1 again.
    let p3 = await request('/p3', 5);
    assert.equal(p3.A, [5]);
    let u = await usage(w3);
    assert.equal([u.status, u.numWaiting, u.lastErrorMessage, u.lastHttpStatus], ['sending', 1, 'fail', 509]);
    assert.equal(u.lastEventBatch, {status: 'failure', httpStatus: 509, errorMessage: null, size: 1, attempts: 4});
    u = await usage(w4);
    assert.equal([u.status, u.numWaiting, u.lastErrorMessage, u.lastEventBatch], ['sending', 1, null, null]);
    p3.answer(509, 'fail');
    p3 = await request('/p3', 6);
    assert.is((await usage(w3)).lastEventBatch.attempts, 1);

    // 5 more rows: 10 more events, 12 in all, over the limit of 10.
    ok(
      await api.post(
        `${tablePath(doc)}/records`,
        {records: [1, 2, 3, 4, 5].map(() => ({fields: {A: 100, B: true}}))},
        chimpy.as,
      ),
    );
    await waitFor('12 events waiting', async () => (await list()).reduce((n, w) => n + w.usage.numWaiting, 0) === 12);
    // /p4's batch fails its 4 attempts (429) while the queue is over its limit: it is dropped.
    p4.answer(429, 'fail');
    for (let n = 2; n <= 4; n++) (await request('/p4', n)).answer(429, 'fail');
    const next = await request('/p4', 5);
    assert.equal(next.A, [100, 100, 100, 100, 100], "the next batch: the dropped one's row 5 is gone");
    u = await usage(w4);
    // Grist: `error` until the webhook's next batch starts; here it starts at once.
    assert.equal([u.status, u.numWaiting], ['sending', 5]);
    assert.equal(u.lastEventBatch, {status: 'rejected', httpStatus: 429, errorMessage: null, size: 1, attempts: 4});
    assert.equal([u.lastHttpStatus, u.lastErrorMessage], [429, 'fail']);
    u = await usage(w3);
    assert.equal([u.status, u.numWaiting, u.lastHttpStatus, u.lastErrorMessage], ['retrying', 6, 509, 'fail']);

    // Everything answered: all delivered, both idle.
    p3.answer(200);
    next.answer(200);
    (await request('/p3', 7)).answer(200);
    await waitFor('the queue empty', async () => {
      const all = await list();
      return all.every((w) => w.usage.numWaiting === 0 && w.usage.status === 'idle');
    });
    assert.equal(atPath('/p3').slice(6), [[100, 100, 100, 100, 100]]);
    assert.is((await usage(w4)).lastEventBatch.status, 'success');
  });

  s('DELETE /webhooks/queue: waiting events dropped, request in flight aborted, all usage reset', async () => {
    await newDoc('clear');
    auto.set('/200', 200);
    const healthy = await subscribe('/200');
    const failing = await subscribe('/f');
    await addRow(1);
    (await request('/f', 1)).answer(404);
    const retry = await request('/f', 2); // Held: the failing webhook's second attempt at row 1.
    await addRow(2);
    await request('/200', 2);
    assert.equal(atPath('/200'), [[1], [2]], 'the other webhook is not held up by the failing one');
    await usageWhen(healthy, 'row 2 delivered', (u) => u.numWaiting === 0 && u.status === 'idle');
    let u = await usage(failing);
    assert.equal([u.status, u.numWaiting, u.lastHttpStatus], ['retrying', 2, 404]);
    await del(`${hooks()}/queue`);
    assert.equal(
      (await list()).map((w) => [w.id, w.usage]),
      [
        [healthy, FRESH],
        [failing, FRESH],
      ],
    );
    await waitFor('the request in flight aborted', () => retry.aborted);
    // Rows 1 and 2 are gone for good: the next request to /f is row 3's.
    await addRow(3);
    const next = await request('/f', 3);
    assert.equal(next.A, [3]);
    next.answer(200);
    assert.equal((await request('/200', 3)).A, [3]);
    u = await usageWhen(failing, 'row 3 delivered', (x) => x.numWaiting === 0);
    assert.equal([u.status, u.lastFailureTime, u.lastHttpStatus], ['idle', null, 200]);
    assert.equal(u.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 1, attempts: 1});
    auto.delete('/200');
  });

  s("DELETE /webhooks/queue/{id}: that webhook's events only; every webhook's usage reset", async () => {
    await newDoc('clear-one');
    const a = await subscribe('/a');
    const b = await subscribe('/b');
    await addRow(1);
    await addRow(2);
    const heldA = await request('/a', 1);
    (await request('/b', 1)).answer(200);
    await request('/b', 2);
    let u = await usage(b);
    assert.equal([u.status, u.numWaiting, u.lastEventBatch?.status], ['sending', 1, 'success']);
    await del(`${hooks()}/queue/${a}`);
    await waitFor("a's request aborted", () => heldA.aborted);
    assert.equal(await usage(a), FRESH);
    // Grist clears the statistics of every webhook; b's waiting event stays.
    u = await usage(b);
    assert.equal(u, {...FRESH, numWaiting: 1});
    (await request('/b', 2)).answer(200);
    await usageWhen(b, "b's row 2 delivered", (x) => x.numWaiting === 0 && x.status === 'idle');
    // An id that names no webhook: nothing to clear, and success (as Grist answers).
    await del(`${hooks()}/queue/no-such-webhook`);
    await addRow(3);
    assert.equal((await request('/a', 2)).A, [3], "a's rows 1 and 2 were dropped");
    (await request('/a', 2)).answer(200);
    (await request('/b', 3)).answer(200);
  });

  s('disabling a webhook clears its queue and usage; enabled again, it counts afresh', async () => {
    const {api, chimpy} = world();
    await newDoc('disable');
    const id = await subscribe('/d');
    await addRow(1);
    (await request('/d', 1)).answer(500, 'down');
    const held = await request('/d', 2);
    await addRow(2);
    let u = await usage(id);
    assert.equal([u.status, u.numWaiting, u.lastHttpStatus], ['retrying', 2, 500]);
    ok(await api.patch(`${hooks()}/${id}`, {enabled: false}, chimpy.as));
    await waitFor('the request in flight aborted', () => held.aborted);
    assert.equal(await usage(id), FRESH);
    await addRow(3);
    assert.equal(await usage(id), FRESH, 'a disabled webhook queues nothing');
    ok(await api.patch(`${hooks()}/${id}`, {enabled: true}, chimpy.as));
    assert.equal(await usage(id), FRESH);
    await addRow(4);
    const req = await request('/d', 3);
    assert.equal(req.A, [4]);
    req.answer(200);
    u = await usageWhen(id, 'row 4 delivered', (x) => x.numWaiting === 0);
    assert.equal([u.status, u.lastFailureTime, u.lastErrorMessage], ['idle', null, null]);
    assert.equal(u.lastEventBatch, {status: 'success', httpStatus: 200, errorMessage: null, size: 1, attempts: 1});
  });

  s('a deleted webhook: its request in flight is aborted and its waiting events are never sent', async () => {
    const {api, chimpy} = world();
    await newDoc('deleted');
    const gone = await subscribe('/gone');
    await addRow(1);
    const held = await request('/gone', 1);
    await addRow(2);
    ok(await api.del(`${hooks()}/${gone}`, chimpy.as));
    await waitFor('the request in flight aborted', () => held.aborted);
    // A new webhook on the same receiver gets only what happens after it.
    const again = await subscribe('/gone');
    await addRow(3);
    const req = await request('/gone', 2);
    assert.equal(req.A, [3]);
    req.answer(200);
    await usageWhen(again, 'row 3 delivered', (u) => u.numWaiting === 0);
    assert.equal(atPath('/gone'), [[1], [3]]);
  });

  s('a request in flight does not hold up reloading the document or writing to it (Grist gh #799)', async () => {
    const {api, chimpy} = world();
    await newDoc('reload');
    // NOW() is computed when the document loads, as in Grist's test.
    ok(
      await api.post(
        `/api/docs/${doc}/apply`,
        [['ModifyColumn', 'Table1', 'C', {isFormula: true, formula: 'NOW()'}]],
        chimpy.as,
      ),
    );
    const id = await subscribe('/r');
    await addRow(1);
    await request('/r', 1);
    ok(await api.post(`/api/docs/${doc}/force-reload`, null, chimpy.as));
    await addRow(2);
    // Delivery goes on (row 1 perhaps again: at least once); answer whatever comes until done.
    await waitFor('rows 1 and 2 delivered', async () => {
      for (const h of received) if (h.path === '/r' && !h.answered && !h.aborted) h.answer(200);
      return (await usage(id)).numWaiting === 0;
    });
    const delivered = received.filter((h) => h.path === '/r' && h.answered && !h.aborted).flatMap((h) => h.A);
    assert.ok(delivered.includes(1) && delivered.includes(2), JSON.stringify(delivered));
  });

  s.run();
}
