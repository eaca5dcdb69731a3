// The home store's read cache (D177): its bounds (time-to-live, entries) on both sides, and its
// invalidation: at once in the process that changes the home, through LISTEN/NOTIFY in another
// one on the same PostgreSQL, and off while its LISTEN connection is down.
import {Forbidden} from '@gristlite/core';
import {HomeService} from '@gristlite/core/internal';
import pg from 'pg';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {HomeReadCache} from '../src/cache.js';
import {PostgresHomeStore} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loader that counts its calls and answers what `value` holds now. */
function source<T>(value: T) {
  const s = {value, calls: 0, load: async () => (s.calls++, s.value)};
  return s;
}

const unit = suite('home read cache');

unit('an answer is used until its time-to-live, and asked again after it', async () => {
  const cache = new HomeReadCache({ttlMs: 150, maxEntries: 10});
  cache.setListening(true);
  const src = source({n: 1});
  assert.equal(await cache.get('k', src.load, () => true), {n: 1});
  src.value = {n: 2};
  await sleep(50);
  assert.equal(await cache.get('k', src.load, () => true), {n: 1}, 'inside the TTL: the kept answer');
  assert.is(src.calls, 1);
  await sleep(150);
  assert.equal(await cache.get('k', src.load, () => true), {n: 2}, 'past the TTL: asked again');
  assert.is(src.calls, 2);
});

unit('at most maxEntries answers are kept, the oldest going first', async () => {
  const cache = new HomeReadCache({ttlMs: 60_000, maxEntries: 3});
  cache.setListening(true);
  const srcs = [0, 1, 2, 3].map((i) => source(i));
  for (let i = 0; i < 3; i++) await cache.get(`k${i}`, srcs[i].load, () => true);
  assert.is(cache.size, 3);
  for (let i = 0; i < 3; i++) await cache.get(`k${i}`, srcs[i].load, () => true);
  assert.equal(
    srcs.map((s) => s.calls),
    [1, 1, 1, 0],
    'at the bound: all three kept',
  );
  await cache.get('k3', srcs[3].load, () => true);
  assert.is(cache.size, 3, 'one past the bound: still three');
  await cache.get('k0', srcs[0].load, () => true);
  assert.is(srcs[0].calls, 2, 'the oldest was dropped');
  await cache.get('k3', srcs[3].load, () => true);
  assert.is(srcs[3].calls, 1, 'the newest was kept');
});

unit('an invalidation drops what is kept and what is being loaded', async () => {
  const cache = new HomeReadCache({ttlMs: 60_000, maxEntries: 10});
  cache.setListening(true);
  const src = source('old');
  await cache.get('a', src.load, () => true);
  cache.invalidate();
  src.value = 'new';
  assert.is(await cache.get('a', src.load, () => true), 'new');
  // A load under way when the change comes: its (older) answer is returned, not kept.
  let release!: () => void;
  const slow = cache.get(
    'b',
    () => new Promise<string>((r) => (release = () => r('before the change'))),
    () => true,
  );
  await sleep(0);
  cache.invalidate();
  release();
  assert.is(await slow, 'before the change');
  const after = source('after the change');
  assert.is(await cache.get('b', after.load, () => true), 'after the change');
  assert.is(after.calls, 1);
});

unit('nothing is kept while not listening, with a TTL of 0, or when `keep` refuses', async () => {
  const off = new HomeReadCache({ttlMs: 60_000, maxEntries: 10});
  const src = source(1);
  await off.get('k', src.load, () => true);
  await off.get('k', src.load, () => true);
  assert.is(src.calls, 2, 'not listening');
  const zero = new HomeReadCache({ttlMs: 0, maxEntries: 10});
  zero.setListening(true);
  await zero.get('k', src.load, () => true);
  await zero.get('k', src.load, () => true);
  assert.is(src.calls, 4, 'TTL 0');
  const on = new HomeReadCache({ttlMs: 60_000, maxEntries: 10});
  on.setListening(true);
  const none = source<null>(null);
  await on.get('k', none.load, (v) => v !== null);
  await on.get('k', none.load, (v) => v !== null);
  assert.is(none.calls, 2, 'absent rows are not kept');
  await on.get('j', src.load, () => true);
  on.setListening(false);
  await on.get('j', src.load, () => true);
  assert.is(src.calls, 6, 'a lost LISTEN connection drops what was kept');
});

unit('answers are copies: a caller changing one does not change the next', async () => {
  const cache = new HomeReadCache({ttlMs: 60_000, maxEntries: 10});
  cache.setListening(true);
  const src = source({roles: ['owners']});
  const first = await cache.get('k', src.load, () => true);
  first.roles.push('x');
  assert.equal(await cache.get('k', src.load, () => true), {roles: ['owners']});
});

unit.run();

if (await pgAvailable('home cache')) {
  const two = suite('home cache across two stores on one PostgreSQL');

  /** Two stores on one fresh schema, as two workers have; a user, an org, a workspace, a document. */
  async function setup(ttlMs: number) {
    const schema = freshSchema('gl_cache');
    const a = await PostgresHomeStore.connect(PG_URL, {schema, max: 3, cache: {ttlMs}});
    const b = await PostgresHomeStore.connect(PG_URL, {schema, max: 3, cache: {ttlMs}});
    const owner = await a.createUser({email: 'owner@example.com', name: 'Owner', personalOrg: false});
    const guest = await a.createUser({email: 'guest@example.com', name: 'Guest', personalOrg: false});
    const org = await a.createOrg({name: 'Team', domain: 'team', ownerUserId: owner.id, personal: false});
    const ws = (await a.listWorkspaces(org.id))[0];
    const doc = await a.createDoc({id: 'doc1', workspaceId: ws.id, name: 'D', urlId: null, ownerUserId: owner.id});
    await a.updateAcl('doc', doc.id, [{userId: guest.id, role: 'editors'}]);
    return {
      schema,
      a,
      b,
      guest,
      doc,
      async done() {
        await a.close();
        await b.close();
        await dropSchema(schema);
      },
    };
  }

  /** ms until `cond()` holds, checking every 5 ms; NaN after `limit` ms. */
  async function within(limit: number, cond: () => Promise<boolean>): Promise<number> {
    const t0 = performance.now();
    while (performance.now() - t0 < limit) {
      if (await cond()) return performance.now() - t0;
      await sleep(5);
    }
    return Number.NaN;
  }

  const guestRole = async (s: PostgresHomeStore, guest: number, doc: string) =>
    (await s.getAcl('doc', [doc])).find((e) => e.userId === guest)?.role ?? null;

  two(
    'a user removed through one store loses access in the other at the notification, long before the TTL',
    async () => {
      const t = await setup(60_000);
      try {
        const svcB = await HomeService.create(t.b);
        const guestKey = await svcB.setApiKey(t.guest.id);
        // B serves the guest: the key's user and the document's access are now kept in B.
        for (let i = 0; i < 2; i++) {
          const p = await svcB.authenticate(`Bearer ${guestKey}`);
          assert.is((await svcB.docAccess(t.doc.id, p, null, 'editors')).role, 'editors');
        }
        const hits = t.b.cache.hits;
        const p = await svcB.authenticate(`Bearer ${guestKey}`);
        await svcB.docAccess(t.doc.id, p, null, 'editors');
        assert.ok(t.b.cache.hits > hits, 'B answers from its cache');
        // A removes the guest from the document.
        await t.a.updateAcl('doc', t.doc.id, [{userId: t.guest.id, role: null}]);
        const ms = await within(2000, async () => {
          try {
            await svcB.docAccess(t.doc.id, await svcB.authenticate(`Bearer ${guestKey}`), null, 'viewers');
            return false;
          } catch (e) {
            if (e instanceof Forbidden) return true;
            throw e;
          }
        });
        assert.ok(ms < 2000, `B refused the guest after ${ms} ms (TTL 60 s)`);
        // And A (which made the change) at once.
        assert.is(await guestRole(t.a, t.guest.id, t.doc.id), null);
      } finally {
        await t.done();
      }
    },
  );

  two('a new API key through one store: the old one stops working in the other', async () => {
    const t = await setup(60_000);
    try {
      const svcA = await HomeService.create(t.a);
      const svcB = await HomeService.create(t.b);
      const old = await svcA.setApiKey(t.guest.id);
      assert.is((await svcB.authenticate(`Bearer ${old}`)).user.id, t.guest.id);
      assert.is((await svcB.authenticate(`Bearer ${old}`)).user.id, t.guest.id);
      await svcA.setApiKey(t.guest.id);
      const ms = await within(2000, () =>
        svcB.authenticate(`Bearer ${old}`).then(
          () => false,
          () => true,
        ),
      );
      assert.ok(ms < 2000, `the old key refused after ${ms} ms`);
    } finally {
      await t.done();
    }
  });

  two('a change made behind the stores (no notification) is seen after the TTL, not before', async () => {
    const t = await setup(400);
    const admin = new pg.Client({connectionString: PG_URL});
    await admin.connect();
    try {
      assert.is(await guestRole(t.b, t.guest.id, t.doc.id), 'editors');
      await admin.query(
        `UPDATE ${pg.escapeIdentifier(t.schema)}.acl SET role = 'viewers' WHERE kind = 'doc' AND resource_id = $1 AND user_id = $2`,
        [t.doc.id, t.guest.id],
      );
      assert.is(await guestRole(t.b, t.guest.id, t.doc.id), 'editors', 'inside the TTL: the kept answer');
      await sleep(450);
      assert.is(await guestRole(t.b, t.guest.id, t.doc.id), 'viewers', 'past the TTL: asked again');
    } finally {
      await admin.end();
      await t.done();
    }
  });

  two('with its LISTEN connection cut a store caches nothing, and caches again once it listens anew', async () => {
    const t = await setup(60_000);
    const admin = new pg.Client({connectionString: PG_URL});
    await admin.connect();
    try {
      assert.ok(t.b.cache.active);
      await guestRole(t.b, t.guest.id, t.doc.id);
      // Both stores' listeners: B's is the one whose backend listens with this schema's pool aside;
      // cutting every LISTEN backend of the test database on our channel cuts both.
      const {rows} = await admin.query(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN gristlite_home'`,
      );
      assert.ok(rows.length >= 2);
      for (const r of rows) await admin.query('SELECT pg_terminate_backend($1)', [r.pid]);
      assert.ok(await within(2000, async () => !t.b.cache.active), 'caching off once the connection is gone');
      // A change now, whose notification nobody hears: B must still see it.
      await t.a.updateAcl('doc', t.doc.id, [{userId: t.guest.id, role: 'viewers'}]);
      assert.is(await guestRole(t.b, t.guest.id, t.doc.id), 'viewers');
      assert.ok(await within(5000, async () => t.b.cache.active), 'listening again');
      assert.is(await guestRole(t.b, t.guest.id, t.doc.id), 'viewers');
    } finally {
      await admin.end();
      await t.done();
    }
  });

  two('a store changing the home drops its own cache at once', async () => {
    const t = await setup(60_000);
    try {
      assert.is(await guestRole(t.a, t.guest.id, t.doc.id), 'editors');
      assert.is((await t.a.getDoc(t.doc.id))!.name, 'D');
      await t.a.updateAcl('doc', t.doc.id, [{userId: t.guest.id, role: 'viewers'}]);
      await t.a.updateDoc(t.doc.id, {name: 'E'});
      assert.is(await guestRole(t.a, t.guest.id, t.doc.id), 'viewers');
      assert.is((await t.a.getDoc(t.doc.id))!.name, 'E');
      await t.a.deleteUser(t.guest.id);
      assert.is(await t.a.getUser(t.guest.id), null);
    } finally {
      await t.done();
    }
  });

  two.run();
}
