// The `.grist` download copy: consistent under concurrent writes, filtered as Grist filters it.
import Database from 'better-sqlite3';
import {existsSync, readdirSync} from 'node:fs';
import {createRequire} from 'node:module';
import {dirname} from 'node:path';
import {Worker} from 'node:worker_threads';
import {test} from 'uvu';
import {checkActionHistory} from '../src/doc/history/chain.js';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/gristdoc.js';
import {backupDoc} from '../src/export/backup.js';
import {copyFixture, FIXTURE_NAMES, tempPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

const count = (db: Database.Database, table: string) =>
  db.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number;

const gristSchema = (db: Database.Database) =>
  db.prepare(`SELECT type, name, sql FROM sqlite_master WHERE name LIKE '\\_grist%' ESCAPE '\\' ORDER BY name`).all();

const userTables = (db: Database.Database) => db.prepare('SELECT tableId FROM _grist_Tables').pluck().all() as string[];

/** Every table of the file but gristlite's private ones (a copy drops those). */
const sharedTables = (db: Database.Database) =>
  db
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_gristlite\\_%' ESCAPE '\\'
       AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
    )
    .pluck()
    .all() as string[];

const rowsOf = (db: Database.Database, table: string) =>
  db.prepare(`SELECT * FROM "${table.replace(/"/g, '""')}" ORDER BY rowid`).all() as Record<string, unknown>[];

/**
 * The rows a plain copy of `src` must hold in `table`: the same, but for what Grist's
 * filterDocumentInPlace changes: the base action in the document settings, triggers disabled,
 * the FullCopies special rule removed.
 */
function expectedRows(src: Database.Database, table: string): Record<string, unknown>[] {
  const rows = rowsOf(src, table);
  const fullCopies = new Set(
    table.startsWith('_grist_ACL')
      ? (src
          .prepare(`SELECT id FROM _grist_ACLResources WHERE tableId = '*SPECIAL' AND colIds = 'FullCopies'`)
          .pluck()
          .all() as number[])
      : [],
  );
  switch (table) {
    case '_grist_Triggers':
      return 'enabled' in (rows[0] ?? {enabled: 0}) ? rows.map((r) => ({...r, enabled: 0})) : [];
    case '_grist_ACLResources':
      return rows.filter((r) => !fullCopies.has(r.id as number));
    case '_grist_ACLRules':
      return rows.filter((r) => !fullCopies.has(r.resource as number));
    default:
      return rows;
  }
}

/** documentSettings without the base action a copy records (compared on its own). */
const withoutBase = (rows: Record<string, unknown>[]) =>
  rows.map((r) => {
    const {baseAction: _, ...settings} = JSON.parse(String(r.documentSettings || '{}'));
    return {...r, documentSettings: settings};
  });

/** A copy of World.grist in WAL mode, grown so that the backup takes many steps. */
function bigWorld(): {path: string; cities: number; countries: number} {
  const path = copyFixture('World.grist');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`INSERT INTO City (Name) SELECT printf('%.*c', 1000, 'x') FROM
           (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT x FROM c)`);
  const sizes = {path, cities: count(db, 'City'), countries: count(db, 'Country')};
  db.close();
  return sizes;
}

/** Commits (one City row + one Country row) per transaction on its own thread until stopped. */
function startWriter(path: string): {stop: () => Promise<number>; commits: () => number} {
  const shared = new Int32Array(new SharedArrayBuffer(8)); // [stop flag, commits]
  const worker = new Worker(
    `
    const {workerData: {path, shared, driver}} = require('node:worker_threads');
    const db = new (require(driver))(path);
    db.pragma('busy_timeout = 5000');
    const write = db.transaction(() => {
      db.prepare("INSERT INTO City (Name) VALUES ('w')").run();
      db.prepare("INSERT INTO Country (Name) VALUES ('w')").run();
    });
    while (Atomics.load(shared, 0) === 0) { write(); Atomics.add(shared, 1, 1); }
    db.close();`,
    {eval: true, workerData: {path, shared, driver: createRequire(import.meta.url).resolve('better-sqlite3')}},
  );
  const done = new Promise((resolve, reject) => {
    worker.once('exit', resolve);
    worker.once('error', reject);
  });
  return {
    commits: () => Atomics.load(shared, 1),
    stop: async () => {
      Atomics.store(shared, 0, 1);
      await done;
      return Atomics.load(shared, 1);
    },
  };
}

function checkCopy(path: string): Database.Database {
  assert.equal(
    readdirSync(dirname(path)).filter((f) => f.startsWith('copy')),
    ['copy.grist'],
  );
  const db = new Database(path, {readonly: true, fileMustExist: true});
  assert.is(db.pragma('integrity_check', {simple: true}), 'ok');
  assert.is(db.pragma('journal_mode', {simple: true}), 'delete');
  return db;
}

ftest('a backup taken while another connection writes is one consistent state', async () => {
  const {path, cities, countries} = bigWorld();
  const src = new Database(path);
  const writer = startWriter(path);
  try {
    while (writer.commits() < 20) {
      await new Promise((r) => setTimeout(r, 1));
    }
    const dest = tempPath('copy.grist');
    const before = writer.commits();
    await backupDoc(src, dest, {});
    const after = writer.commits();
    assert.ok(after > before, 'the writer kept committing during the backup');
    const copy = checkCopy(dest);
    const written = count(copy, 'City') - cities;
    assert.ok(written >= before && written <= after, `copy holds ${written} commits of ${before}..${after}`);
    assert.is(count(copy, 'Country') - countries, written);
    copy.close();
  } finally {
    const total = await writer.stop();
    assert.is(count(src, 'City') - cities, total);
    src.close();
  }
});

ftest('a backup stays consistent when its own connection writes between steps', async () => {
  const {path, cities, countries} = bigWorld();
  const src = new Database(path);
  const write = src.transaction(() => {
    src.prepare("INSERT INTO City (Name) VALUES ('s')").run();
    src.prepare("INSERT INTO Country (Name) VALUES ('s')").run();
  });
  let writing = true;
  let writes = 0;
  const loop = (async () => {
    while (writing) {
      write();
      writes++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  const dest = tempPath('copy.grist');
  let atEnd: typeof writes;
  try {
    await backupDoc(src, dest, {});
    atEnd = writes;
  } finally {
    writing = false;
    await loop;
  }
  assert.ok(atEnd > 5, `${atEnd} writes during the backup`);
  const copy = checkCopy(dest);
  // Writes through the source connection are carried into the copy up to its last step.
  assert.is(count(copy, 'City') - cities, count(copy, 'Country') - countries);
  const carried = count(copy, 'City') - cities;
  assert.ok(carried >= atEnd - 1 && carried <= atEnd, `${carried} of ${atEnd} writes in the copy`);
  copy.close();
  src.close();
});

ftest('every fixture: same _grist_* schema and data, triggers off, one self-contained file', async () => {
  for (const name of FIXTURE_NAMES) {
    const src = new Database(copyFixture(name));
    src.pragma('journal_mode = WAL');
    // Schema 39 added `enabled`; older triggers have no flag and must not survive at all.
    const flagged = src.prepare(`SELECT 1 FROM pragma_table_info('_grist_Triggers') WHERE name = 'enabled'`).get();
    src.exec(`INSERT INTO _grist_Triggers (tableRef, eventTypes${flagged ? ', enabled' : ''})
              VALUES (1, '["add"]'${flagged ? ', 1' : ''})`);
    const active = flagged
      ? 'SELECT count(*) FROM _grist_Triggers WHERE enabled'
      : 'SELECT count(*) FROM _grist_Triggers';
    const dest = tempPath('copy.grist');
    await backupDoc(src, dest, {});
    assert.not.ok(existsSync(`${dest}-wal`) || existsSync(`${dest}-shm`) || existsSync(`${dest}-journal`), name);
    const copy = checkCopy(dest);
    assert.equal(gristSchema(copy), gristSchema(src), name);
    // Every row of every table (metadata, user tables, history, files) as it was, but for what
    // a copy changes on purpose.
    assert.equal(sharedTables(copy), sharedTables(src), `${name}: the same tables`);
    assert.ok(userTables(src).length > 0 && userTables(src).every((t) => sharedTables(copy).includes(t)), name);
    for (const table of sharedTables(src)) {
      const want = expectedRows(src, table);
      const got = rowsOf(copy, table);
      if (table === '_grist_DocInfo') assert.equal(withoutBase(got), withoutBase(want), `${name} ${table}`);
      else assert.equal(got, want, `${name} ${table}`);
    }
    assert.is(copy.prepare(active).pluck().get(), 0, name);
    assert.is(count(copy, '_grist_Triggers'), flagged ? 1 : 0, name);
    assert.is(count(copy, '_gristsys_ActionHistory'), count(src, '_gristsys_ActionHistory'), name);
    copy.close();
    src.close();
  }
});

ftest('nohistory keeps only the newest action and records it as the base; FullCopies goes', async () => {
  const src = new Database(copyFixture('Hello.grist'));
  src.exec(`INSERT INTO _grist_ACLResources (id, tableId, colIds) VALUES (7, '*SPECIAL', 'FullCopies');
            INSERT INTO _grist_ACLRules (resource, aclFormula, permissionsText) VALUES (7, 'user.Access == OWNER', '+R');`);
  const tip = src
    .prepare(`SELECT h.id, actionNum AS n, actionHash AS h FROM _gristsys_ActionHistory h
    JOIN _gristsys_ActionHistoryBranch b ON b.actionRef = h.id WHERE b.name = 'local_unsent'`)
    .get() as {id: number; n: number; h: string};
  assert.is(count(src, '_gristsys_ActionHistory'), 12);
  const dest = tempPath('copy.grist');
  await backupDoc(src, dest, {nohistory: true});
  const copy = checkCopy(dest);
  assert.equal(copy.prepare('SELECT id FROM _gristsys_ActionHistory').pluck().all(), [tip.id]);
  assert.equal(
    copy.prepare('SELECT name, actionRef FROM _gristsys_ActionHistoryBranch ORDER BY id').all(),
    ['shared', 'local_sent', 'local_unsent'].map((name) => ({name, actionRef: tip.id})),
  );
  const settings = JSON.parse(copy.prepare('SELECT documentSettings FROM _grist_DocInfo').pluck().get() as string);
  assert.equal(settings, {locale: 'en-US', baseAction: {n: tip.n, h: tip.h}});
  assert.is(copy.prepare("SELECT count(*) FROM _grist_ACLResources WHERE colIds = 'FullCopies'").pluck().get(), 0);
  assert.is(copy.prepare('SELECT count(*) FROM _grist_ACLRules WHERE resource = 7').pluck().get(), 0);
  assert.is(count(copy, '_grist_ACLRules'), count(src, '_grist_ACLRules') - 1);
  assert.is(count(copy, 'Table1'), 4);
  assert.is(count(src, '_gristsys_ActionHistory'), 12, 'the source is untouched');
  copy.close();
  src.close();
});

ftest("gristlite's writes continue Grist's action history; a download keeps it and names the last action", async () => {
  // D120 (replacing D39): each write appends one bundle to Grist's chain.
  const path = copyFixture('Hello.grist');
  const before = new Database(path, {readonly: true});
  const history = before.prepare('SELECT * FROM _gristsys_ActionHistory ORDER BY id').all() as Array<{id: number}>;
  before.close();
  const grists = history.length;
  const doc = GristDoc.open(path);
  doc.addRecords('Table1', [{A: 'from gristlite'}]);
  const applied = doc.applyUserActions([['UpdateRecord', 'Table1', 1, {A: 'changed'}]]);
  assert.is(applied.actionNum, 14, 'numbered after the last action Grist recorded (12) and the record write (13)');
  const dest = tempPath('copy.grist');
  await backupDoc(doc.db, dest, {});
  doc.close();
  const copy = new Database(dest, {readonly: true});
  const rows = copy.prepare('SELECT * FROM _gristsys_ActionHistory ORDER BY id').all() as Array<
    Record<string, unknown>
  >;
  assert.equal(rows.slice(0, grists), history, "Grist's actions are kept as they were");
  assert.equal(
    rows.slice(grists).map((r) => [r.actionNum, r.parentRef]),
    [
      [13, history[grists - 1].id],
      [14, rows[grists].id],
    ],
  );
  assert.equal(checkActionHistory(copy).problems, []);
  const tips = copy.prepare('SELECT DISTINCT actionRef FROM _gristsys_ActionHistoryBranch').pluck().all();
  assert.equal(tips, [rows[grists + 1].id], 'all three branches at the new tip');
  const settings = JSON.parse(copy.prepare('SELECT documentSettings FROM _grist_DocInfo').pluck().get() as string);
  assert.equal(settings.baseAction, {n: 14, h: applied.actionHash});
  assert.is(copy.prepare('SELECT A FROM Table1 WHERE id = 1').pluck().get(), 'changed');
  copy.close();
});

ftest('template drops data, attachments and history but keeps the structure', async () => {
  const src = new Database(copyFixture('TypeEncoding.grist'));
  assert.ok(count(src, '_grist_Attachments') > 0 && count(src, '_gristsys_Files') > 0);
  const dest = tempPath('copy.grist');
  await backupDoc(src, dest, {template: true});
  const copy = checkCopy(dest);
  assert.equal(userTables(copy), ['Types']);
  assert.is(count(copy, 'Types'), 0);
  assert.is(count(copy, '_grist_Attachments'), 0);
  assert.is(count(copy, '_gristsys_Files'), 0);
  assert.ok(count(copy, '_gristsys_ActionHistory') <= 1);
  assert.equal(gristSchema(copy), gristSchema(src));
  assert.is(count(copy, '_grist_Tables_column'), count(src, '_grist_Tables_column'));
  assert.ok(count(src, 'Types') > 0, 'the source is untouched');
  copy.close();
  src.close();
});

test.run();
