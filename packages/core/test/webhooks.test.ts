import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError} from '../src/base/errors.js';
import {
  addWebhook,
  addWebhooks,
  BeforeCapture,
  checkWebhookUrl,
  readsPrivateTables,
  recordEvents,
  classifyUrl,
  dropPrivateTables,
  isPrivateAddress,
  listWebhooks,
  removeWebhook,
  unsubscribeWebhook,
  updateWebhook,
  webhookPolicyFromEnv,
  type LookupAll,
  type WebhookUrlPolicy,
} from '../src/webhooks/index.js';
import {GristDoc} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';
import {addRows, newDoc, outbox, removeRows, updateRows, write} from './webhooks-helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// No test resolves real names: every lookup answers "not found" at once.
const noDns: LookupAll = (_h, cb) => cb(Object.assign(new Error('ENOTFOUND'), {code: 'ENOTFOUND'}), []);
const policy: WebhookUrlPolicy = {entries: ['example.com', 'localhost:34365'], lookup: noDns};

async function rejects(p: Promise<unknown> | (() => unknown), status: number, message: RegExp): Promise<void> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    assert.instance(e, ApiError, String(e));
    assert.is((e as ApiError).status, status, (e as ApiError).message);
    assert.match((e as ApiError).message, message);
    return;
  }
  assert.unreachable('expected an error');
}

// ------------------------------------------------------------------ URL rules

test("allow-list: Grist's host and https rules", () => {
  const p = policy;
  assert.is(classifyUrl('https://example.com', p), 'explicit');
  assert.is(classifyUrl('https://sub.example.com/x', p), 'public');
  assert.is(classifyUrl('http://localhost:34365/200', p), 'explicit');
  assert.is(classifyUrl('http://example.com', p), 'forbidden');
  assert.is(classifyUrl('https://evil.com', p), 'forbidden');
  assert.is(classifyUrl('https://example.com:8443/', p), 'forbidden');
  assert.is(classifyUrl('http://localhost:34366/', p), 'forbidden');
  assert.is(classifyUrl('ftp://example.com/', p), 'forbidden');
  assert.is(classifyUrl('not a url', p), 'forbidden');
  assert.is(classifyUrl('https://example.com', {entries: []}), 'forbidden');
  // `*`: every public host, http too, but no loopback or private address unless named.
  const star = {entries: ['*']};
  assert.is(classifyUrl('http://anything.org:81/x', star), 'public');
  assert.is(classifyUrl('http://127.0.0.1:8080/', star), 'forbidden');
  assert.is(classifyUrl('http://localhost/', star), 'forbidden');
  assert.is(classifyUrl('https://10.1.2.3/', star), 'forbidden');
  assert.is(classifyUrl('http://[::1]:8080/', star), 'forbidden');
  const starLoop = {entries: ['*', '127.0.0.1']};
  assert.is(classifyUrl('http://127.0.0.1:8080/', starLoop), 'explicit');
  assert.is(classifyUrl('http://127.0.0.2:8080/', starLoop), 'forbidden');
  // A loopback address named with its port; http allowed for it.
  assert.is(classifyUrl('http://127.0.0.1:5000/h', {entries: ['127.0.0.1:5000']}), 'explicit');
  assert.is(classifyUrl('http://127.0.0.1:5001/h', {entries: ['127.0.0.1:5000']}), 'forbidden');
});

test('allow-list: environment variables', () => {
  assert.equal(webhookPolicyFromEnv({ALLOWED_WEBHOOK_DOMAINS: 'Example.com, ,localhost:1'}).entries, [
    'example.com',
    'localhost:1',
  ]);
  assert.equal(
    webhookPolicyFromEnv({GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: '*', ALLOWED_WEBHOOK_DOMAINS: 'x.com'}).entries,
    ['*'],
  );
  assert.equal(webhookPolicyFromEnv({}).entries, []);
});

test('private addresses', () => {
  for (const a of [
    '127.0.0.1',
    '127.9.9.9',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::7f00:1',
  ]) {
    assert.ok(isPrivateAddress(a), a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '172.32.0.1', 'example.com'])
    assert.not.ok(isPrivateAddress(a), a);
});

test('URL check resolves names: a public name resolving to loopback is refused unless named', async () => {
  const lookup: LookupAll = (host, cb) => {
    if (host === 'rebind.example.org')
      return cb(null, [
        {address: '93.184.216.34', family: 4},
        {address: '127.0.0.1', family: 4},
      ]);
    if (host === 'internal.corp') return cb(null, [{address: '10.0.0.7', family: 4}]);
    if (host === 'good.example.org') return cb(null, [{address: '93.184.216.34', family: 4}]);
    const e: NodeJS.ErrnoException = new Error('ENOTFOUND');
    e.code = 'ENOTFOUND';
    cb(e, []);
  };
  const star = {entries: ['*'], lookup};
  await checkWebhookUrl('https://good.example.org/x', star);
  await checkWebhookUrl('https://unresolvable.example.org/x', star);
  await rejects(checkWebhookUrl('https://rebind.example.org/x', star), 403, /^Provided url is forbidden \(/);
  await rejects(checkWebhookUrl('https://internal.corp/x', star), 403, /^Provided url is forbidden \(/);
  await checkWebhookUrl('https://internal.corp/x', {entries: ['*', 'internal.corp'], lookup});
  await rejects(
    checkWebhookUrl('https://x.internal.corp/x', {
      entries: ['internal.corp'],
      lookup: (_h, cb) => lookup('internal.corp', cb),
    }),
    403,
    /forbidden/,
  );
  await rejects(checkWebhookUrl('http://127.0.0.1:9/', star), 403, /forbidden/);
});

// ------------------------------------------------------------------ CRUD

test("create: validation in Grist's order and wording", async () => {
  const {db} = newDoc();
  const base = {url: 'https://example.com/hook', eventTypes: ['add'], tableId: 'Table1'};
  await rejects(addWebhook(db, {...base, tableId: 'Santa'}, policy), 404, /^Table not found "Santa"$/);
  await rejects(addWebhook(db, {...base, url: 'https://evil.com'}, policy), 403, /^Provided url is forbidden \(/);
  await rejects(addWebhook(db, {...base, url: 'http://example.com'}, policy), 403, /^Provided url is forbidden \(/);
  await rejects(addWebhook(db, {...base, url: ''}, policy), 403, /^Provided url is forbidden \(/);
  await rejects(addWebhook(db, {...base, eventTypes: []}, policy), 400, /^eventTypes must be a non-empty array$/);
  await rejects(addWebhook(db, {...base, isReadyColumn: 'bar'}, policy), 404, /^Column not found "bar"$/);
  await rejects(
    addWebhook(db, {...base, watchedColIds: ['A', 'notExisting']}, policy),
    404,
    /^Column not found "notExisting"$/,
  );
  assert.is(db.prepare('SELECT count(*) FROM _grist_Triggers').pluck().get(), 0);
  const res = await addWebhooks(
    db,
    [base, {...base, url: 'https://sub.example.com/2'}, {...base, tableId: 1 as unknown as string}],
    policy,
  );
  assert.is(res.webhooks.length, 3);
  assert.ok(res.webhooks.every((w) => UUID.test(w.id)));
  assert.is(listWebhooks(db).webhooks.length, 3);
  db.close();
});

test("create then list: Grist's exact shape, stored as Grist stores triggers", async () => {
  const {db} = newDoc();
  const {webhookId, unsubscribeKey, triggerId} = await addWebhook(
    db,
    {
      url: 'http://localhost:34365/200',
      eventTypes: ['add', 'update'],
      tableId: 'Table1',
      isReadyColumn: 'B',
    },
    policy,
  );
  assert.ok(UUID.test(unsubscribeKey));
  assert.is(triggerId, 1);
  assert.equal(listWebhooks(db).webhooks, [
    {
      id: webhookId,
      fields: {
        url: 'http://localhost:34365/200',
        authorization: '',
        unsubscribeKey,
        eventTypes: ['add', 'update'],
        isReadyColumn: 'B',
        watchedColIds: [],
        tableId: 'Table1',
        enabled: true,
        name: '',
        memo: '',
      },
      usage: {status: 'idle', numWaiting: 0, lastEventBatch: null},
    },
  ]);
  const row = db.prepare('SELECT * FROM _grist_Triggers').get() as Record<string, unknown>;
  assert.equal(row, {
    id: 1,
    tableRef: 1,
    eventTypes: '["add","update"]',
    isReadyColRef: 3,
    actions: JSON.stringify([{type: 'webhook', id: webhookId}]),
    memo: '',
    label: '',
    enabled: 1,
    watchedColRefList: '[]',
    options: '',
    condition: '',
  });
  // The secret is in the private table, not in the trigger.
  assert.equal(db.prepare('SELECT url, authorization, unsubscribeKey FROM _gristlite_webhook_secrets').get(), {
    url: 'http://localhost:34365/200',
    authorization: '',
    unsubscribeKey,
  });
  db.close();
});

test("update: Grist's PATCH semantics; authorization masked in listings", async () => {
  const {db} = newDoc();
  db.exec(`CREATE TABLE "Table2" (id INTEGER PRIMARY KEY, "manualSort" NUMERIC DEFAULT 1e999, "X" BLOB DEFAULT NULL)`);
  db.exec(`INSERT INTO _grist_Tables (id, tableId) VALUES (2, 'Table2')`);
  db.exec(
    `INSERT INTO _grist_Tables_column (id, parentId, colId, type) VALUES (10, 2, 'manualSort', 'ManualSortPos'), (11, 2, 'X', 'Bool')`,
  );
  const {webhookId} = await addWebhook(
    db,
    {
      url: 'https://example.com/a',
      eventTypes: ['add'],
      tableId: 'Table1',
      isReadyColumn: 'B',
      watchedColIds: ['A', ' $C ', ''],
      name: 'first',
    },
    policy,
  );
  const fields = () => listWebhooks(db).webhooks[0].fields;
  assert.equal(fields().watchedColIds, ['A', 'C']);
  assert.is(fields().name, 'first');
  // watchedColIds is only looked at together with tableId.
  assert.equal(await updateWebhook(db, webhookId, {watchedColIds: ['B']}, policy), {success: true});
  assert.equal(fields().watchedColIds, ['A', 'C']);
  await updateWebhook(db, webhookId, {tableId: 'Table1', watchedColIds: ['B']}, policy);
  assert.equal([fields().watchedColIds, fields().isReadyColumn], [['B'], null]);
  await updateWebhook(db, webhookId, {isReadyColumn: 'B'}, policy);
  await updateWebhook(db, webhookId, {tableId: 'Table2', watchedColIds: ['X']}, policy);
  assert.equal([fields().tableId, fields().isReadyColumn, fields().watchedColIds], ['Table2', null, []]);
  await rejects(updateWebhook(db, webhookId, {tableId: 'Santa'}, policy), 404, /^Table not found "Santa"$/);
  await rejects(updateWebhook(db, webhookId, {isReadyColumn: 'B'}, policy), 404, /^Column not found "B"$/);
  await updateWebhook(db, webhookId, {isReadyColumn: 'X'}, policy);
  assert.is(fields().isReadyColumn, 'X');
  await updateWebhook(db, webhookId, {isReadyColumn: null}, policy);
  assert.is(fields().isReadyColumn, null);
  await rejects(updateWebhook(db, webhookId, {url: 'https://evil.com'}, policy), 403, /forbidden/);
  await rejects(updateWebhook(db, webhookId, {eventTypes: []}, policy), 400, /non-empty/);
  await rejects(updateWebhook(db, 'foo', {name: 'x'}, policy), 404, /^Webhook not found "foo"$/);
  await updateWebhook(
    db,
    webhookId,
    {authorization: 'Bearer fake-token', name: '', memo: 'notes', eventTypes: ['update'], url: 'https://example.com/b'},
    policy,
  );
  assert.equal(
    [fields().authorization, fields().name, fields().memo, fields().eventTypes, fields().url],
    ['Bearer fake...', 'first', 'notes', ['update'], 'https://example.com/b'],
  );
  assert.is(db.prepare('SELECT authorization FROM _gristlite_webhook_secrets').pluck().get(), 'Bearer fake-token');
  await updateWebhook(db, webhookId, {enabled: false}, policy);
  assert.is(fields().enabled, false);
  db.close();
});

test('delete and unsubscribe', async () => {
  const {db} = newDoc();
  const a = await addWebhook(db, {url: 'https://example.com/a', eventTypes: ['add'], tableId: 'Table1'}, policy);
  const b = await addWebhook(db, {url: 'https://example.com/b', eventTypes: ['add'], tableId: 'Table1'}, policy);
  await rejects(() => removeWebhook(db, 'foo'), 404, /^Webhook not found "foo"$/);
  assert.equal(removeWebhook(db, a.webhookId), {success: true});
  assert.equal(
    listWebhooks(db).webhooks.map((w) => w.id),
    [b.webhookId],
  );
  assert.is(db.prepare('SELECT count(*) FROM _gristlite_webhook_secrets').pluck().get(), 1);
  await rejects(() => unsubscribeWebhook(db, '', undefined, false), 404, /^Webhook not found ""$/);
  await rejects(
    () => unsubscribeWebhook(db, b.webhookId, undefined, false),
    400,
    /^Bad request: unsubscribeKey required$/,
  );
  await rejects(() => unsubscribeWebhook(db, b.webhookId, 'wrong', false), 401, /^Wrong unsubscribeKey$/);
  assert.equal(unsubscribeWebhook(db, b.webhookId, b.unsubscribeKey, false), {success: true});
  await rejects(
    () => unsubscribeWebhook(db, b.webhookId, b.unsubscribeKey, false),
    404,
    new RegExp(`Webhook not found "${b.webhookId}"`),
  );
  const c = await addWebhook(db, {url: 'https://example.com/c', eventTypes: ['add'], tableId: 'Table1'}, policy);
  assert.equal(unsubscribeWebhook(db, c.webhookId, undefined, true), {success: true});
  assert.is(db.prepare('SELECT count(*) FROM _grist_Triggers').pluck().get(), 0);
  db.close();
});

test('SQL readers can be kept away from the private tables', async () => {
  const {db} = newDoc();
  assert.not.ok(readsPrivateTables(db, 'select * from Table1'));
  await addWebhook(
    db,
    {url: 'https://example.com/a', eventTypes: ['add'], tableId: 'Table1', authorization: 'Bearer x'},
    policy,
  );
  for (const sql of [
    'select * from _gristlite_webhook_secrets',
    'select * from (select url from main._gristlite_webhook_secrets)',
    'with s as (select authorization from _gristlite_webhook_secrets) select * from s',
    'select count(*) from _gristlite_webhook_outbox where webhookId = ?',
    'select * from Table1 where A in (select url from "_GRISTLITE_WEBHOOK_SECRETS")',
  ]) {
    assert.ok(readsPrivateTables(db, sql, sql.includes('?') ? ['x'] : []), sql);
  }
  assert.not.ok(readsPrivateTables(db, 'select * from Table1 where A = ?', [1]));
  assert.not.ok(readsPrivateTables(db, "select name from sqlite_master where name like '_gristlite%'"));
  db.close();
});

test('exports can drop the private tables', async () => {
  const {db} = newDoc();
  await addWebhook(db, {url: 'https://example.com/a', eventTypes: ['add'], tableId: 'Table1'}, policy);
  addRows(db, [{A: 1}]);
  dropPrivateTables(db);
  assert.equal(db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE '%gristlite%'`).all(), []);
  assert.is(db.prepare('SELECT count(*) FROM _grist_Triggers').pluck().get(), 1);
  // Without its secret the trigger is inert: no listing, no events.
  assert.equal(listWebhooks(db).webhooks, []);
  addRows(db, [{A: 2}]);
  db.close();
});

// ------------------------------------------------------------------ events

test("events: the ready-column sequence of Grist's tests", async () => {
  const {db} = newDoc();
  const hook = async (eventTypes: string[]) =>
    (await addWebhook(db, {url: 'https://example.com/x', eventTypes, tableId: 'Table1', isReadyColumn: 'B'}, policy))
      .webhookId;
  const add = await hook(['add']);
  const upd = await hook(['update']);
  await hook(['add', 'update']);
  const seen: [string, string, unknown][] = [];
  let last = 0;
  const step = () => {
    const all = outbox(db);
    for (const e of all.slice(last))
      seen.push([e.webhookId === add ? 'add' : e.webhookId === upd ? 'upd' : 'both', e.eventType, e.row.A]);
    last = all.length;
    const out = seen.splice(0);
    return out;
  };
  addRows(db, [
    {A: 1, B: true},
    {A: 2, B: false},
  ]);
  assert.equal(step(), [
    ['add', 'add', 1],
    ['both', 'add', 1],
  ]);
  assert.equal(outbox(db)[0].row, {id: 1, manualSort: 1, A: 1, B: true, C: null});
  updateRows(db, [{id: 2, A: 3}]);
  assert.equal(step(), []);
  updateRows(db, [{id: 2, A: 4, B: true}]);
  assert.equal(step(), [
    ['add', 'add', 4],
    ['both', 'add', 4],
  ]);
  updateRows(db, [{id: 2, A: 5, B: false}]);
  assert.equal(step(), []);
  updateRows(db, [{id: 2, A: 6}]);
  assert.equal(step(), []);
  updateRows(db, [{id: 2, A: 7, B: true}]);
  assert.equal(step(), [
    ['add', 'add', 7],
    ['both', 'add', 7],
  ]);
  updateRows(db, [{id: 2, A: 8}]);
  assert.equal(step(), [
    ['upd', 'update', 8],
    ['both', 'update', 8],
  ]);
  assert.equal(outbox(db).at(-1)!.row, {id: 2, manualSort: 2, A: 8, B: true, C: null});
  db.close();
});

test('events: rows of one write together in row order; watched columns; disabled webhooks', async () => {
  const {db} = newDoc();
  const all = (
    await addWebhook(db, {url: 'https://example.com/x', eventTypes: ['add', 'update'], tableId: 'Table1'}, policy)
  ).webhookId;
  const watched = (
    await addWebhook(
      db,
      {url: 'https://example.com/y', eventTypes: ['update'], tableId: 'Table1', watchedColIds: ['C']},
      policy,
    )
  ).webhookId;
  const off = (
    await addWebhook(db, {url: 'https://example.com/z', eventTypes: ['add'], tableId: 'Table1', enabled: false}, policy)
  ).webhookId;
  addRows(db, [{A: 'x'}, {A: 'y'}, {A: 'z'}]);
  assert.equal(
    outbox(db).map((e) => [e.webhookId === all, e.eventType, e.row.id]),
    [
      [true, 'add', 1],
      [true, 'add', 2],
      [true, 'add', 3],
    ],
  );
  db.exec('DELETE FROM _gristlite_webhook_outbox');
  updateRows(db, [
    {id: 3, A: 'zz'},
    {id: 1, A: 'xx'},
  ]);
  assert.equal(
    outbox(db).map((e) => [e.webhookId === all, e.eventType, e.row.id]),
    [
      [true, 'update', 1],
      [true, 'update', 3],
    ],
  );
  db.exec('DELETE FROM _gristlite_webhook_outbox');
  updateRows(db, [{id: 2, C: 'c'}]);
  assert.equal(
    outbox(db).map((e) => [e.webhookId, e.eventType, e.row.C]),
    [
      [all, 'update', 'c'],
      [watched, 'update', 'c'],
    ],
  );
  db.exec('DELETE FROM _gristlite_webhook_outbox');
  // Setting the same value again is no change of a watched column.
  updateRows(db, [{id: 2, C: 'c', A: 'again'}]);
  assert.equal(
    outbox(db).map((e) => e.webhookId),
    [all],
  );
  assert.ok(!outbox(db).some((e) => e.webhookId === off));
  db.close();
});

test('events: remove (beyond Grist), and rows added then removed in one write', async () => {
  const {db} = newDoc();
  const rm = (await addWebhook(db, {url: 'https://example.com/x', eventTypes: ['remove'], tableId: 'Table1'}, policy))
    .webhookId;
  const ready = (
    await addWebhook(
      db,
      {url: 'https://example.com/y', eventTypes: ['add', 'remove'], tableId: 'Table1', isReadyColumn: 'B'},
      policy,
    )
  ).webhookId;
  addRows(db, [
    {A: 1, B: true},
    {A: 2, B: false},
    {A: 3, B: true},
  ]);
  db.exec('DELETE FROM _gristlite_webhook_outbox');
  removeRows(db, [2, 1]);
  assert.equal(
    outbox(db).map((e) => [e.webhookId === rm ? 'rm' : 'ready', e.eventType, e.row]),
    [
      ['rm', 'remove', {id: 1, manualSort: 1, A: 1, B: true, C: null}],
      ['rm', 'remove', {id: 2, manualSort: 2, A: 2, B: false, C: null}],
      // A row that never became ready was never announced, so its removal is not either.
      ['ready', 'remove', {id: 1, manualSort: 1, A: 1, B: true, C: null}],
    ],
  );
  db.exec('DELETE FROM _gristlite_webhook_outbox');
  write(db, () => {
    const id = Number(db.prepare('INSERT INTO Table1 (A, B) VALUES (9, 1)').run().lastInsertRowid);
    db.prepare('DELETE FROM Table1 WHERE id = ?').run(id);
    return {tableId: 'Table1', added: [id], removed: [id]};
  });
  assert.equal(outbox(db), []);
  // Added not ready, then made ready, in the same write: an add.
  write(db, () => {
    const id = Number(db.prepare('INSERT INTO Table1 (A, B) VALUES (10, 0)').run().lastInsertRowid);
    db.prepare('UPDATE Table1 SET B = 1 WHERE id = ?').run(id);
    return {tableId: 'Table1', added: [id], updated: [id]};
  });
  assert.equal(
    outbox(db).map((e) => [e.webhookId === ready, e.eventType, e.row.A]),
    [[true, 'add', 10]],
  );
  db.close();
});

test('events: nothing is recorded for a write that rolls back', async () => {
  const {db} = newDoc();
  await addWebhook(db, {url: 'https://example.com/x', eventTypes: ['add'], tableId: 'Table1'}, policy);
  try {
    db.transaction(() => {
      addRows(db, [{A: 1}]);
      assert.is(outbox(db).length, 1); // Visible inside the transaction...
      throw new Error('rollback');
    })();
  } catch (e) {
    assert.is((e as Error).message, 'rollback');
  }
  assert.equal(outbox(db), []); // ...and gone with it.
  assert.is(db.prepare('SELECT count(*) FROM Table1').pluck().get(), 0);
  db.close();
});

test('events: a table without webhooks costs nothing and records nothing', () => {
  const {db} = newDoc();
  addRows(db, [{A: 1}]);
  updateRows(db, [{id: 1, A: 2}]);
  assert.equal(db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE '_gristlite%'`).all(), []);
  db.close();
});

test('events: BeforeCapture keeps the row as it was when a multi-step write began', async () => {
  const {db} = newDoc();
  const id = (
    await addWebhook(
      db,
      {url: 'https://example.com/x', eventTypes: ['add', 'update'], tableId: 'Table1', isReadyColumn: 'B'},
      policy,
    )
  ).webhookId;
  addRows(db, [{A: 1, B: true}]);
  db.exec('DELETE FROM _gristlite_webhook_outbox');
  db.transaction(() => {
    const capture = new BeforeCapture(db);
    capture.capture('Table1', [1]);
    db.prepare('UPDATE Table1 SET B = 0 WHERE id = 1').run();
    capture.capture('Table1', [1]);
    db.prepare('UPDATE Table1 SET B = 1, A = 2 WHERE id = 1').run();
    capture.capture('Table2', [1]); // a table without webhooks (not even existing) is ignored
    recordEvents(db, {tableId: 'Table1', updated: [1], before: capture.get('Table1')});
  })();
  // Ready before the write and ready after it: an update, not an add.
  assert.equal(
    outbox(db).map((e) => [e.webhookId === id, e.eventType, e.row.A]),
    [[true, 'update', 2]],
  );
  db.close();
});

test("events: wired to GristDoc's onChange, inside its write transactions", async () => {
  const doc = GristDoc.create(tempPath());
  try {
    doc.onChange((change) => recordEvents(doc.db, change));
    const id = (
      await addWebhook(doc.db, {url: 'https://example.com/x', eventTypes: ['add', 'update'], tableId: 'Table1'}, policy)
    ).webhookId;
    const [r1, r2] = doc.addRecords('Table1', [{A: 'one'}, {A: 'two'}]);
    doc.updateRecords('Table1', [{id: r2, fields: {B: 'bee'}}]);
    doc.removeRecords('Table1', [r1]);
    const events = outbox(doc.db);
    assert.ok(events.every((e) => e.webhookId === id));
    assert.equal(
      events.map((e) => [e.eventType, e.row.id, e.row.A, e.row.B]),
      [
        ['add', r1, 'one', null],
        ['add', r2, 'two', null],
        ['update', r2, 'two', 'bee'],
      ],
    );
    assert.equal(Object.keys(events[0].row), ['id', 'manualSort', 'A', 'B', 'C']);
  } finally {
    doc.close();
  }
});

test.run();
