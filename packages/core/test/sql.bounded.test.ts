// Statements SQLite proves bounded run on the document's connection, without the pool's process
// hop (issue 28, sql/bounded.ts); everything else still goes to the pool and its deadline.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/internal.js';
import {BoundedStatements} from '../src/sql/bounded.js';
import {selectText} from '../src/sql/statement.js';

const caps = {maxRows: 1000, maxBytes: 1 << 20};

function scratch(): Database.Database {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE T (id INTEGER PRIMARY KEY, Name TEXT, Qty INTEGER);
    CREATE INDEX T_Qty ON T (Qty);
    INSERT INTO T (Name, Qty) VALUES ('a', 1), ('b', 2), ('c', 3);
    CREATE TABLE _gristlite_secrets (id INTEGER PRIMARY KEY, secret TEXT);
    CREATE TEMP TABLE scratch (x);`);
  return db;
}

const BOUNDED = [
  'select 1',
  "select 1 as a, 'x' as b, 2 * 3.5 as c, null as d",
  'select id, Name from T where id = 2',
  'select * from T where id = ?',
  'select Name from T where rowid = 1 and Qty > 0',
  'select upper(Name) as u, length(Name) as n, coalesce(Qty, 0) as q from T where id = 3',
  'select (select Name from T where id = 1) as a, (select Name from T where id = 2) as b',
  'select * from (select id from T where id = 1)',
  'select CASE WHEN 1 > 0 THEN 1 ELSE 2 END',
  // One row at most: SQLite drops the ORDER BY.
  'select * from T where id = 1 order by Name',
];

const UNBOUNDED: Array<[string, string]> = [
  ['select * from T', 'a scan'],
  ['select Name from T where Qty = 2', 'an index range'],
  ['select count(*) from T', 'Count walks the table'],
  ['select a from (select 2 as a union all select 1) order by a', 'a sort'],
  ['select * from T limit 1', 'a scan with a limit counter: the WHERE could skip every row'],
  ['with recursive c(x) as (select 1 union all select x + 1 from c) select max(x) from c', 'a runaway'],
  ['select randomblob(1000000000)', 'a function of unbounded cost'],
  ["select replace('a', 'a', 'b')", 'a function not on the list'],
  ["select instr(Name, 'a') from T where id = 1", 'quadratic in two large cells'],
  ['select Name || Name from T where id = 1', '|| can double a value at each step'],
  [`select ${Array.from({length: 300}, (_, i) => `Name as n${i}`).join(', ')} from T where id = 1`, 'a long program'],
  ["select trim(Name, 'ab') from T where id = 1", 'quadratic in two large cells'],
  ['select * from temp.scratch', "the connection's own temp tables"],
  ['select secret from _gristlite_secrets where id = 1', 'a private table'],
  ["select * from json_each('[1,2]')", 'a virtual table'],
  ['select * from T where id in (1, 2)', 'a loop over the IN list'],
  ['select sum(Qty) from T where id = 1', 'an aggregate'],
];

test('bounded programs are recognised; scans, sorts, functions, temp and private tables are not', () => {
  const db = scratch();
  const bounded = new BoundedStatements(db);
  for (const sql of BOUNDED) {
    const text = selectText(sql);
    const args = text.includes('?') ? [2] : [];
    assert.type(bounded.run(text, args, caps), 'string', sql);
  }
  for (const [sql, why] of UNBOUNDED) {
    assert.is(bounded.run(selectText(sql), [], caps), undefined, `${sql}: ${why}`);
  }
  db.close();
});

test('the answer is what the pool would give: rows, caps and SQLite errors', () => {
  const db = scratch();
  const bounded = new BoundedStatements(db);
  assert.equal(JSON.parse(bounded.run(selectText('select id, Name from T where id = ?'), [2], caps)!), [
    {fields: {id: 2, Name: 'b'}},
  ]);
  assert.equal(JSON.parse(bounded.run(selectText('select id from T where id = 99'), [], caps)!), []);
  assert.throws(
    () => bounded.run(selectText("select 'x' as a, 'y' as b"), [], {maxRows: 1000, maxBytes: 10}),
    /larger than 10 bytes/,
  );
  // Missing arguments bind NULL (as the pool binds them); extra ones are refused as SQLite does.
  assert.equal(JSON.parse(bounded.run(selectText('select * from T where id = ?'), [], caps)!), []);
  assert.throws(() => bounded.run(selectText('select * from T where id = ?'), [1, 2], caps), /SQLITE_RANGE/);
  // A statement that does not compile is left to the pool, which reports it.
  assert.is(bounded.run(selectText('select nope from T where id = 1'), [], caps), undefined);
  db.close();
});

test('a verdict follows the schema: a table replaced by a view of a scan is no longer bounded', () => {
  const db = scratch();
  const bounded = new BoundedStatements(db);
  db.exec('CREATE TABLE V (id INTEGER PRIMARY KEY, x)');
  const text = selectText('select * from V where id = 1');
  assert.type(bounded.run(text, [], caps), 'string');
  db.exec('DROP TABLE V; CREATE VIEW V AS SELECT count(*) AS id FROM T');
  assert.is(bounded.run(text, [], caps), undefined);
  db.close();
});

async function rejects(p: Promise<unknown>, message: RegExp): Promise<void> {
  const e = await p.then(
    () => null,
    (err: Error) => err,
  );
  assert.ok(e, 'expected a rejection');
  assert.is((e as {status?: number}).status, 400);
  assert.match(e!.message, message);
}

async function withEngine(env: Record<string, string>, fn: (e: Engine, docId: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'gl-bounded-'));
  const engine = await Engine.open({dataDir: dir, env});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'X'});
    const doc = await ada.doc(docId);
    await doc.addTables([{id: 'Items', columns: [{id: 'Name', fields: {type: 'Text'}}]}]);
    await doc.addRecords('Items', [{Name: 'lamp'}, {Name: 'desk'}]);
    await fn(engine, docId);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

test('engine: a bounded statement on an open document never starts the pool; others do', async () => {
  await withEngine({}, async (engine, docId) => {
    const ada = await engine.forUser('ada@example.com');
    const doc = await ada.doc(docId);
    assert.equal(await doc.runSql('select Name from Items where id = ?', {args: [2]}), {
      statement: 'select Name from Items where id = ?',
      records: [{fields: {Name: 'desk'}}],
    });
    assert.equal(engine.sqlWorkers, {ready: 0, spare: false}, 'no worker was forked');
    // The same errors as through the pool (Grist's checks come first).
    await rejects(doc.runSql('delete from Items'), /only select statements are supported/);
    // Known bounded (with its arguments), then called with one too many: SQLite's error, inline.
    await doc.runSql('select * from Items where id = ?', {args: [1]});
    await rejects(doc.runSql('select * from Items where id = ?', {args: [1, 2]}), /SQLITE_RANGE/);
    assert.is(engine.sqlWorkers.ready, 0);
    // A scan goes to the pool, with its answer unchanged.
    assert.equal((await doc.runSql('select Name from Items order by Name')).records, [
      {fields: {Name: 'desk'}},
      {fields: {Name: 'lamp'}},
    ]);
    assert.ok(engine.sqlWorkers.ready > 0, 'the pool ran the scan');
  });
});

test('engine: GRISTLITE_SQL_INLINE=0 sends every statement to the pool', async () => {
  await withEngine({GRISTLITE_SQL_INLINE: '0'}, async (engine, docId) => {
    const doc = await (await engine.forUser('ada@example.com')).doc(docId);
    assert.equal((await doc.runSql('select Name from Items where id = 1')).records, [{fields: {Name: 'lamp'}}]);
    assert.ok(engine.sqlWorkers.ready > 0);
  });
});

test.run();
