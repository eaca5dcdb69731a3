import pg from 'pg';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {MIGRATIONS, PostgresHomeStore, connectionConfig, homeStoreFromUrl, migrate} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

const config = suite('store-postgres: connection config');

config('the schema query parameter is ours: removed from the URL and set as search_path', () => {
  const {connectionString, schema} = connectionConfig('postgres://u@h:5432/db?schema=home_1&sslmode=disable');
  assert.is(schema, 'home_1');
  const u = new URL(connectionString);
  assert.is(u.searchParams.get('schema'), null);
  assert.is(u.searchParams.get('sslmode'), 'disable');
  assert.is(u.searchParams.get('options'), '-c search_path=home_1');
});

config('the schema option wins over the URL; the default is public; existing options are kept', () => {
  assert.is(connectionConfig('postgres://h/db?schema=a', 'b').schema, 'b');
  assert.is(connectionConfig('postgres://h/db').schema, 'public');
  const u = new URL(connectionConfig('postgres://h/db?options=-c%20statement_timeout%3D5000', 'x').connectionString);
  assert.is(u.searchParams.get('options'), '-c statement_timeout=5000 -c search_path=x');
});

config('schema names that would need quoting are refused', () => {
  for (const bad of ['Upper', 'has space', 'semi;colon', '1starts', '', 'a'.repeat(64)]) {
    assert.throws(() => connectionConfig('postgres://h/db', bad), /invalid schema/, bad);
  }
});

config('homeStoreFromUrl refuses URLs that are not PostgreSQL, without echoing a password', async () => {
  try {
    await homeStoreFromUrl('mysql://user:secret@host/db');
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.match((e as Error).message, /unsupported home store URL/);
    assert.not.match((e as Error).message, /secret/);
  }
});

config.run();

if (await pgAvailable('migrations')) {
  const mig = suite('store-postgres: migrations');
  const schemas: string[] = [];
  const schemaFor = () => {
    const s = freshSchema('gl_mig');
    schemas.push(s);
    return s;
  };
  mig.after(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  async function versions(schema: string): Promise<number[]> {
    const c = new pg.Client({connectionString: PG_URL});
    await c.connect();
    try {
      return (
        await c.query(`SELECT version FROM ${pg.escapeIdentifier(schema)}.gristlite_migrations ORDER BY version`)
      ).rows.map((r) => r.version);
    } finally {
      await c.end();
    }
  }

  mig('processes connecting at once migrate once; the schema is created and recorded', async () => {
    const schema = schemaFor();
    const stores = await Promise.all([1, 2, 3, 4, 5].map(() => PostgresHomeStore.connect(PG_URL, {schema, max: 2})));
    try {
      assert.equal(
        await versions(schema),
        MIGRATIONS.map((_, i) => i + 1),
      );
      const u = await stores[0].createUser({email: 'x@example.com', name: 'X', personalOrg: true});
      assert.is((await stores[4].getUser(u.id))?.email, 'x@example.com', 'all stores see one schema');
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  mig('migrate on an up-to-date schema applies nothing and keeps the data', async () => {
    const schema = schemaFor();
    const first = await PostgresHomeStore.connect(PG_URL, {schema});
    await first.createUser({email: 'keep@example.com', name: '', personalOrg: false});
    assert.is(await migrate(first.pool, schema), 0);
    await first.close();
    const second = await PostgresHomeStore.connect(PG_URL, {schema});
    try {
      assert.ok(await second.getUserByEmail('keep@example.com'));
      assert.equal(
        await versions(schema),
        MIGRATIONS.map((_, i) => i + 1),
      );
    } finally {
      await second.close();
    }
  });

  mig('a schema migrated by a newer gristlite is refused', async () => {
    const schema = schemaFor();
    const s = await PostgresHomeStore.connect(PG_URL, {schema});
    await s.pool.query(`INSERT INTO gristlite_migrations (version, name) VALUES ($1, 'from the future')`, [
      MIGRATIONS.length + 1,
    ]);
    await s.close();
    try {
      await PostgresHomeStore.connect(PG_URL, {schema});
      assert.unreachable('should have refused');
    } catch (e) {
      assert.match((e as Error).message, /newer than this gristlite/);
    }
  });

  mig('stores in different schemas do not see each other', async () => {
    const a = await PostgresHomeStore.connect(PG_URL, {schema: schemaFor()});
    const b = await PostgresHomeStore.connect(PG_URL, {schema: schemaFor()});
    try {
      await a.createUser({email: 'only-a@example.com', name: '', personalOrg: false});
      assert.is(await b.getUserByEmail('only-a@example.com'), null);
      await b.createUser({email: 'only-a@example.com', name: '', personalOrg: false});
    } finally {
      await a.close();
      await b.close();
    }
  });

  mig('homeStoreFromUrl opens the schema named in the URL', async () => {
    const schema = schemaFor();
    const store = await homeStoreFromUrl(`${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`);
    try {
      await store.createUser({email: 'url@example.com', name: '', personalOrg: false});
      assert.is((await versions(schema)).length, MIGRATIONS.length);
    } finally {
      await store.close();
    }
  });

  mig.run();
}
