import Database from 'better-sqlite3';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {MIGRATIONS, SqliteHomeStore} from '../src/home/sqlite.js';

test('a version-1 home database upgrades in place: data kept, foreign keys and cascades intact, ids not reused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gristlite-home-v1-'));
  const path = join(dir, 'home.sqlite3');
  try {
    const v1 = new Database(path);
    v1.pragma('foreign_keys = ON');
    v1.exec(MIGRATIONS[0]);
    v1.pragma('user_version = 1');
    const t = '2024-01-01T00:00:00.000Z';
    v1.prepare(`INSERT INTO users (id, email, email_norm, name, ref, api_key_hash, api_key_prefix, created_at) VALUES
      (1, 'A@x.com', 'a@x.com', 'A', 'ra', 'h1', 'p1', ?), (2, 'b@x.com', 'b@x.com', 'B', 'rb', NULL, NULL, ?)`).run(
      t,
      t,
    );
    v1.prepare(
      `INSERT INTO orgs (id, name, domain, owner_id, created_at, updated_at) VALUES (1, 'Personal', NULL, 1, ?, ?), (2, 'Team', 'team', NULL, ?, ?)`,
    ).run(t, t, t, t);
    v1.prepare(
      `INSERT INTO workspaces (id, org_id, name, created_at, updated_at) VALUES (1, 1, 'Home', ?, ?), (2, 2, 'Home', ?, ?)`,
    ).run(t, t, t, t);
    v1.prepare(
      `INSERT INTO docs (id, workspace_id, name, url_id, created_by, created_at, updated_at) VALUES ('d1', 2, 'Doc', 'u1', 2, ?, ?)`,
    ).run(t, t);
    v1.prepare(`INSERT INTO aliases (org_id, url_id, doc_id, created_at) VALUES (2, 'u1', 'd1', ?)`).run(t);
    v1.prepare(
      `INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('org', '1', 1, 'owners'), ('org', '2', 2, 'owners'), ('doc', 'd1', 2, 'owners')`,
    ).run();
    v1.close();

    const store = new SqliteHomeStore(path);
    try {
      assert.is((await store.getUserByApiKeyHash('h1'))?.email, 'A@x.com');
      assert.is((await store.getPersonalOrg(1))?.id, 1);
      assert.is((await store.getOrgByDomain('team'))?.id, 2);
      assert.equal(
        (await store.listDocs([2])).map((d) => d.id),
        ['d1'],
      );
      assert.is((await store.getDocByUrlId('u1', 2))?.id, 'd1');
      assert.equal((await store.getAclInOrg(2, null)).length, 2);

      const db = new Database(path, {readonly: true});
      try {
        assert.is(db.pragma('user_version', {simple: true}), MIGRATIONS.length);
        assert.equal(db.pragma('foreign_key_check'), []);
        const fks = (table: string) =>
          (db.pragma(`foreign_key_list(${table})`) as {table: string}[]).map((r) => r.table).sort();
        assert.equal(fks('orgs'), ['users']);
        assert.equal(fks('workspaces'), ['orgs']);
        assert.equal(fks('docs'), ['workspaces']);
        assert.equal(fks('acl'), ['users']);
        assert.equal(db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE '%_new'`).all(), []);
      } finally {
        db.close();
      }

      // Cascades still work through the rebuilt tables.
      assert.equal((await store.deleteUser(1)).docIds, []);
      assert.is(await store.getOrg(1), null);
      assert.equal(await store.listWorkspaces(1), []);
      assert.equal((await store.deleteOrg(2)).docIds, ['d1']);
      assert.is(await store.getWorkspace(2), null);
      assert.is(await store.getDoc('d1'), null);
      // Id 2 was the newest user; after deleting it, a new user gets a fresh id.
      await store.deleteUser(2);
      const c = await store.createUser({email: 'c@x.com', name: 'C', personalOrg: true});
      assert.ok(c.id > 2, `new user id ${c.id}`);
      assert.ok((await store.getPersonalOrg(c.id))!.id > 2);
    } finally {
      await store.close();
    }

    // Reopening an up-to-date database changes nothing.
    const again = new SqliteHomeStore(path);
    assert.is((await again.getUserByEmail('c@x.com'))?.name, 'C');
    await again.close();
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
