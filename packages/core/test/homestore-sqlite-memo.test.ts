// The SQLite home store remembers its reads between changes (issue 28): a change made through the
// same store is seen at once, one made by another process (another connection) from the next turn
// of the event loop.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {SqliteHomeStore} from '../src/home/sqlite.js';

const nextTurn = () => new Promise((r) => setImmediate(r));

test("another connection's change is seen from the next turn; the store's own at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-home-memo-'));
  const path = join(dir, 'home.sqlite3');
  const a = new SqliteHomeStore(path);
  const b = new SqliteHomeStore(path);
  try {
    const user = await a.createUser({email: 'ada@example.com', name: 'Ada', personalOrg: false});
    await nextTurn();
    assert.is((await a.getUser(user.id))!.name, 'Ada');
    assert.is((await b.getUser(user.id))!.name, 'Ada');
    await b.updateUser(user.id, {name: 'Ada L'});
    assert.is((await b.getUser(user.id))!.name, 'Ada L', 'the writer sees its change at once');
    await nextTurn();
    assert.is((await a.getUser(user.id))!.name, 'Ada L', "another connection's commit empties the memo");
    await a.updateUser(user.id, {name: 'Ada Lovelace'});
    assert.is((await a.getUser(user.id))!.name, 'Ada Lovelace');
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('remembered reads are kept apart by their arguments: one value, several, an array', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-home-memo-'));
  const a = new SqliteHomeStore(join(dir, 'home.sqlite3'));
  try {
    const ada = await a.createUser({email: 'ada@example.com', name: 'Ada', personalOrg: false});
    const bob = await a.createUser({email: 'bob@example.com', name: 'Bob', personalOrg: false});
    await nextTurn();
    for (let round = 0; round < 2; round++) {
      // One plain argument (a number, a string), then a JSON array of ids (several, as text).
      assert.is((await a.getUser(ada.id))!.name, 'Ada');
      assert.is((await a.getUser(bob.id))!.name, 'Bob');
      assert.is((await a.getUserByEmail('bob@example.com'))!.name, 'Bob');
      assert.is(await a.getUserByEmail('nobody@example.com'), null);
      assert.equal(
        (await a.getUsers([bob.id])).map((u) => u.name),
        ['Bob'],
      );
      assert.equal((await a.getUsers([ada.id, bob.id])).map((u) => u.name).sort(), ['Ada', 'Bob']);
    }
  } finally {
    await a.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
