/**
 * Beyond Grist (issue 30 §3): `Idempotency-Key` on writes to a document. The first request with a
 * key is applied and its answer kept in the document; a repeat of the same request answers those
 * bytes again without applying anything; the same key on another route, body or user is 422; the
 * key outlives its 24 hours only as a new key; keys are bounded per document and private.
 */
import * as assert from 'uvu/assert';
import {IDEMPOTENCY_TABLE} from '@gristlite/core/internal';
import Database from 'better-sqlite3';
import type {ApiResponse, CallOptions} from './client.js';
import {tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, ok, useWorld, type Target, type TestUser} from './world.js';

/** At most this many keys a document: small, so the bound is seen. */
const MAX_KEYS = 5;

export function idempotencySuite(target: Target): void {
  const s = areaSuite(target, 'idempotency');
  const world = useWorld(s, target, {
    GRISTLITE_IDEMPOTENCY_MAX_KEYS: String(MAX_KEYS),
    GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: 'example.com',
  });
  let doc = '';
  let t = '';
  const keyed = (u: TestUser, key: string, extra: CallOptions = {}): CallOptions => ({
    ...u.as,
    ...extra,
    headers: {'Idempotency-Key': key, ...(extra.headers ?? {})},
  });
  const count = async () => ok(await world().api.get(`${t}/records`, world().chimpy.as)).body.records.length;
  /** The same answer, byte for byte, marked as replayed. */
  const sameAnswer = (again: ApiResponse, first: ApiResponse, what: string) => {
    assert.is(again.status, first.status, what);
    assert.equal(again.raw, first.raw, `${what}: the same bytes`);
    assert.is(again.headers['idempotent-replayed'], 'true', `${what}: replayed`);
    assert.is(first.headers['idempotent-replayed'], undefined, `${what}: the first is not`);
  };

  s('a repeat answers the first answer byte for byte and applies nothing', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Keys');
    t = tablePath(doc);
    const body = {records: [{fields: {A: 'one'}}, {fields: {A: 'two'}}]};
    const first = ok(await api.call('POST', `${t}/records`, keyed(chimpy, 'add-1', {json: body})));
    assert.equal(first.body, {records: [{id: 1}, {id: 2}]});
    for (let i = 0; i < 3; i++)
      sameAnswer(await api.call('POST', `${t}/records`, keyed(chimpy, 'add-1', {json: body})), first, 'POST');
    assert.is(await count(), 2, 'applied once');
    // Every kind of document write: records, /data, /apply, schema, webhooks (written outside the record pipeline).
    const writes: Array<[string, string, unknown]> = [
      ['PATCH', `${t}/records`, {records: [{id: 1, fields: {A: 'uno'}}]}],
      ['PUT', `${t}/records`, {records: [{require: {A: 'three'}}]}],
      ['POST', `${t}/data`, {A: ['four']}],
      ['PATCH', `${t}/data`, {id: [2], A: ['dos']}],
      ['POST', `/api/docs/${doc}/apply`, [['AddRecord', 'Table1', null, {A: 'five'}]]],
      ['POST', `${t}/records/delete`, [4]],
      ['POST', `${t}/columns`, {columns: [{id: 'Extra'}]}],
      ['DELETE', `${t}/columns/Extra`, undefined],
      [
        'POST',
        `/api/docs/${doc}/webhooks`,
        {webhooks: [{fields: {url: 'https://example.com/hook', eventTypes: ['add'], tableId: 'Table1'}}]},
      ],
    ];
    for (const [i, [method, path, json]] of writes.entries()) {
      const opts = keyed(chimpy, `write-${i}`, json === undefined ? {} : {json});
      const before = ok(await api.get(`/api/docs/${doc}/download`, chimpy.as)).raw.length;
      const answer = await api.call(method, path, opts);
      assert.is(answer.status, 200, `${method} ${path}: ${answer.text}`);
      const rows = await count();
      const hooks = ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body.webhooks.length;
      sameAnswer(await api.call(method, path, opts), answer, `${method} ${path}`);
      assert.is(await count(), rows, `${method} ${path}: no row changed by the repeat`);
      assert.is(ok(await api.get(`/api/docs/${doc}/webhooks`, chimpy.as)).body.webhooks.length, hooks);
      assert.ok(before > 0);
    }
    assert.equal(
      ok(await api.get(`${t}/records`, chimpy.as)).body.records.map((r: {fields: {A: string}}) => r.fields.A),
      ['uno', 'dos', 'three', 'five'],
    );
  });

  s('the same key for another route, body or user is 422; a failed request keeps nothing', async () => {
    const {api, chimpy, kiwi} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    const body = {records: [{fields: {A: 'six'}}]};
    ok(await api.call('POST', `${t}/records`, keyed(chimpy, 'k-422', {json: body})));
    const rows = await count();
    const reused = /^This Idempotency-Key was used for another request/;
    isErrorLike(
      await api.call('POST', `${t}/records`, keyed(chimpy, 'k-422', {json: {records: [{fields: {A: 'x'}}]}})),
      422,
      reused,
    );
    isErrorLike(await api.call('POST', `${t}/records?noparse=1`, keyed(chimpy, 'k-422', {json: body})), 422, reused);
    isErrorLike(await api.call('POST', `${t}/data`, keyed(chimpy, 'k-422', {json: {A: ['six']}})), 422, reused);
    isErrorLike(await api.call('POST', `${t}/records`, keyed(kiwi, 'k-422', {json: body})), 422, reused);
    assert.is(await count(), rows, 'nothing applied');
    // A refused write applies nothing and keeps nothing: the key is free for the corrected request.
    isError(
      await api.call('POST', `${t}/records`, keyed(chimpy, 'k-fix', {json: {records: [{fields: {Nope: 1}}]}})),
      400,
      'Invalid column "Nope"',
    );
    ok(await api.call('POST', `${t}/records`, keyed(chimpy, 'k-fix', {json: body})));
    assert.is(await count(), rows + 1);
    // No access, no answer: a stranger's repeat is refused before any key is looked at.
    isError(
      await api.call('POST', `${t}/records`, keyed(world().charon, 'k-fix', {json: body})),
      403,
      'No view access',
    );
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
  });

  s('keys: 1-255 printable characters; home writes and uploads refuse one; reads ignore it', async () => {
    const {api, chimpy} = world();
    const body = {records: [{}]};
    for (const bad of ['x'.repeat(256), '']) {
      isError(
        await api.call('POST', `${t}/records`, keyed(chimpy, bad, {json: body})),
        400,
        'Invalid Idempotency-Key: 1 to 255 printable ASCII characters',
      );
    }
    ok(await api.call('POST', `${t}/records`, keyed(chimpy, `${'~'.repeat(254)} `, {json: body})));
    isError(
      await api.call('PATCH', `/api/docs/${doc}`, keyed(chimpy, 'home', {json: {name: 'Renamed'}})),
      400,
      "Idempotency-Key is accepted only on writes to a document's contents",
    );
    isError(
      await api.call(
        'POST',
        `/api/docs/${doc}/attachments`,
        keyed(chimpy, 'up', {headers: {'content-type': 'multipart/form-data; boundary=x'}, body: '--x--\r\n'}),
      ),
      400,
      'Idempotency-Key is not accepted on uploads',
    );
    ok(await api.call('GET', `${t}/records`, keyed(chimpy, 'read')));
    ok(await api.call('POST', `${t}/records/list`, keyed(chimpy, 'read', {json: {}})));
    ok(await api.call('POST', `/api/docs/${doc}/sql`, keyed(chimpy, 'read', {json: {sql: 'select 1'}})));
  });

  s('keys are private: not a table, not readable by SQL, not in downloads', async () => {
    const {api, chimpy} = world();
    const tables = ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body.tables.map((x: {id: string}) => x.id);
    assert.not.ok(tables.some((x: string) => x.startsWith('_gristlite')));
    isErrorLike(
      await api.post(`/api/docs/${doc}/sql`, {sql: `select * from ${IDEMPOTENCY_TABLE}`}, chimpy.as),
      400,
      /./,
    );
    const file = ok(await api.get(`/api/docs/${doc}/download`, chimpy.as)).raw;
    const {mkdtempSync, writeFileSync, rmSync} = await import('node:fs');
    const {join} = await import('node:path');
    const {tmpdir} = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'gl-idem-'));
    try {
      writeFileSync(join(dir, 'd.grist'), file);
      const db = new Database(join(dir, 'd.grist'), {readonly: true});
      const names = db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE '%idempotency%'`).pluck().all();
      db.close();
      assert.equal(names, []);
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
    // While the document itself keeps them.
    const live = new Database(world().docPath(doc), {readonly: true});
    assert.ok((live.prepare(`SELECT count(*) FROM ${IDEMPOTENCY_TABLE}`).pluck().get() as number) > 0);
    live.close();
  });

  s('keys are bounded per document and expire after 24 hours', async () => {
    const {api, chimpy} = world();
    const kept = () => {
      const db = new Database(world().docPath(doc), {readonly: true});
      try {
        return db.prepare(`SELECT key FROM ${IDEMPOTENCY_TABLE} ORDER BY createdAt, rowid`).pluck().all() as string[];
      } finally {
        db.close();
      }
    };
    for (let i = 0; i < MAX_KEYS + 2; i++) {
      ok(await api.call('POST', `${t}/records`, keyed(chimpy, `bound-${i}`, {json: {records: [{}]}})));
    }
    assert.is(kept().length, MAX_KEYS);
    assert.not.ok(kept().includes('bound-0'), 'the oldest went first');
    // A key 24 hours old is gone: the same request is a new one, applied again.
    const rows = await count();
    const db = new Database(world().docPath(doc));
    db.prepare(`UPDATE ${IDEMPOTENCY_TABLE} SET createdAt = createdAt - 86400000 WHERE key = ?`).run(
      `bound-${MAX_KEYS + 1}`,
    );
    db.close();
    const again = await api.call(
      'POST',
      `${t}/records`,
      keyed(chimpy, `bound-${MAX_KEYS + 1}`, {json: {records: [{}]}}),
    );
    ok(again);
    assert.is(again.headers['idempotent-replayed'], undefined);
    assert.is(await count(), rows + 1);
  });

  s('a repeat while the first request runs answers 409', async () => {
    const {engine} = world();
    const {chimpy} = world();
    // The first request holds its claim (as while it runs); the repeat arrives meanwhile.
    const open = engine.openDoc(doc);
    const body = {records: [{}]};
    let during: ApiResponse | undefined;
    const fp = (await import('@gristlite/core/internal')).requestFingerprint(
      chimpy.id,
      'POST',
      `/api/docs/${doc}/tables/Table1/records?`,
      body,
    );
    await engine.idempotency.run('busy', async () => {
      engine.claimIdempotent(open, fp);
      during = await world().api.call('POST', `${t}/records`, keyed(chimpy, 'busy', {json: body}));
    });
    isErrorLike(during!, 409, /^A request with this Idempotency-Key is still running/);
  });

  s.run();
}
