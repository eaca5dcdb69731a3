// Importing `.grist` files as new documents: every fixture, rejection of anything that is not a
// sound Grist document (leaving nothing behind), the upgrade to schema 46, and the download round trip.
import Database from 'better-sqlite3';
import {copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/engine/engine.js';
import type {Principal} from '../src/home/principal.js';
import {GristDoc} from '../src/doc/index.js';
import {backupDoc} from '../src/export/backup.js';
import {copyDoc, createEmptyDoc, importUpload} from '../src/import/index.js';
import {createDocFile} from '../src/doc/create.js';
import {addWebhook, listWebhooks} from '../src/webhooks/api.js';
import {FIXTURE_NAMES, fixturePath, tempPath, withFixtures} from './doc-helpers.js';

const test = suite('import-grist');
const ftest = withFixtures(test);
let dir = '';
let engine: Engine;
let owner: Principal;
let stranger: Principal;
let wid = 0;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-import-'));
  engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
  owner = await engine.home.authenticate(`Bearer ${await engine.home.setApiKey(user.id)}`);
  const kiwi = await engine.home.ensureUser('kiwi@getgrist.com', 'Kiwi');
  stranger = await engine.home.authenticate(`Bearer ${await engine.home.setApiKey(kiwi.id)}`);
  const ws = (await engine.home.listWorkspaces(`docs-${user.id}`, owner, null, false)) as Array<{
    id: number;
    name: string;
  }>;
  wid = ws.find((w) => w.name === 'Home')!.id;
});

test.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

async function docCount(): Promise<number> {
  const ws = (await engine.home.getWorkspace(wid, owner, false)) as {docs: unknown[]};
  return ws.docs.length;
}

/**
 * Formula cells of TypeEncoding.grist that the formula engine does not reproduce yet, and that an
 * import (which recomputes every formula) therefore changes: `isinstance($Reference, table.Record)`
 * and `RECORD(rec)` of a row that holds that formula (formula/README.md lists what is left).
 */
const ENGINE_GAPS: Record<string, string[]> = {Types: ['AnyRef', 'AnyRefList', 'RECORD']};

/** Everything a document holds that the API shows: tables, columns (hidden too), records. */
function contents(doc: GristDoc): unknown {
  return doc.listTables().map((t) => ({
    id: t.id,
    columns: doc
      .listColumns(t.id, {hidden: true})
      .map((c) => ({id: c.id, type: c.fields.type, formula: c.fields.formula})),
    records: doc.fetchRecords(t.id, {hidden: true}).records.map((r) => {
      const fields = {...r.fields};
      const errors = r.errors ? {...r.errors} : undefined;
      for (const c of ENGINE_GAPS[t.id] ?? []) {
        delete fields[c];
        if (errors) {
          delete errors[c];
        }
      }
      return errors && Object.keys(errors).length ? {id: r.id, fields, errors} : {id: r.id, fields};
    }),
  }));
}

function openFixture(name: string): GristDoc {
  return GristDoc.open(fixturePath(name), {readonly: true});
}

ftest('every fixture imports with all its tables, columns and values (formulas recomputed as Grist stored them)', async () => {
  for (const name of FIXTURE_NAMES) {
    const data = readFileSync(fixturePath(name));
    const res = await importUpload(engine, wid, owner, {fileName: name, data});
    assert.is(res.title, name.replace(/\.grist$/, ''));
    const imported = engine.openDoc(res.id).grist;
    const original = openFixture(name);
    assert.equal(contents(imported), contents(original), name);
    assert.is(imported.schemaVersion, 46, `${name}: upgraded`);
    original.close();
  }
});

ftest('documentName names the document; an old schema is upgraded and writable', async () => {
  const data = readFileSync(fixturePath('Favorite_Films.grist'));
  const res = await importUpload(engine, wid, owner, {fileName: 'x.grist', data}, {documentName: 'Films'});
  assert.is(res.title, 'Films');
  const doc = engine.openDoc(res.id).grist;
  assert.is(doc.schemaVersion, 46);
  assert.ok(doc.isWritable);
  assert.is(doc.fetchRecords('Films').records[0].fields.Title, 'Toy Story');
});

async function rejected(fileName: string, data: Uint8Array, message: RegExp, p = owner, status = 400): Promise<void> {
  const before = await docCount();
  const files = readdirSync(join(dir, 'docs')).length;
  try {
    await importUpload(engine, wid, p, {fileName, data});
    assert.unreachable(`${fileName} was accepted`);
  } catch (e: any) {
    assert.is(e.status, status, `${fileName}: ${e.message}`);
    assert.match(e.message, message);
  }
  assert.is(await docCount(), before, 'no document record left behind');
  assert.is(readdirSync(join(dir, 'docs')).length, files, 'no document file left behind');
  assert.equal(readdirSync(join(dir, 'tmp')), [], 'no temporary file left behind');
}

ftest('anything that is not a sound Grist document is refused with 400, leaving nothing behind', async () => {
  await rejected('junk.grist', Buffer.from('this is not a database at all, just text'), /not a SQLite database/);
  await rejected('empty.grist', Buffer.alloc(0), /not a SQLite database/);
  // A SQLite database without Grist's metadata.
  const plain = tempPath('plain.sqlite');
  const db = new Database(plain);
  db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
  db.close();
  await rejected('plain.grist', readFileSync(plain), /no _grist_DocInfo table/);
  // A truncated Grist document.
  const world = readFileSync(fixturePath('World.grist'));
  await rejected('cut.grist', world.subarray(0, Math.floor(world.length / 2)), /Invalid Grist document/);
  // A damaged one: a page of the middle overwritten.
  const damaged = Buffer.from(world);
  damaged.fill(0x5a, 8192, 16384);
  await rejected('damaged.grist', damaged, /Invalid Grist document/);
  // A Grist document carrying SQL triggers (Grist never makes any).
  const trig = tempPath('trig.grist');
  copyFileSync(fixturePath('Hello.grist'), trig);
  const t = new Database(trig);
  t.exec("CREATE TRIGGER evil AFTER INSERT ON Table1 BEGIN UPDATE Table1 SET A = 'pwned'; END");
  t.close();
  await rejected('trig.grist', readFileSync(trig), /triggers/);
  // A table listed in the metadata but missing.
  const missing = tempPath('missing.grist');
  copyFileSync(fixturePath('Hello.grist'), missing);
  const m = new Database(missing);
  m.exec('DROP TABLE Table1');
  m.close();
  await rejected('missing.grist', readFileSync(missing), /Table1 is listed in _grist_Tables but missing/);
  // Other file types.
  await rejected('notes.docx', Buffer.from('PK...'), /Unsupported file type/);
});

ftest('the workspace must accept new documents: strangers get 403, unknown workspaces 404', async () => {
  const data = readFileSync(fixturePath('Hello.grist'));
  await rejected('Hello.grist', data, /access denied/, stranger, 403);
  try {
    await importUpload(engine, 99999, owner, {fileName: 'Hello.grist', data});
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.status, 404);
  }
});

ftest('download then import: every table, column and value comes back', async () => {
  const src = await importUpload(engine, wid, owner, {
    fileName: 'World.grist',
    data: readFileSync(fixturePath('TypeEncoding.grist')),
  });
  const doc = engine.openDoc(src.id).grist;
  doc.addRecords('Types', [{Text: 'added after import', Numeric: 1.5, Bool: true}]);
  const file = tempPath('download.grist');
  await backupDoc(doc.db, file, {});
  const back = await importUpload(engine, wid, owner, {fileName: 'download.grist', data: readFileSync(file)});
  assert.equal(contents(engine.openDoc(back.id).grist), contents(doc));
  // The re-imported copy is a separate, writable document.
  engine.openDoc(back.id).grist.addRecords('Types', [{Text: 'only in the copy'}]);
  assert.is(
    doc.fetchRecords('Types').records.length + 1,
    engine.openDoc(back.id).grist.fetchRecords('Types').records.length,
  );
});

ftest('empty documents (with a timezone) and copies (as template too)', async () => {
  const empty = await createEmptyDoc(engine, wid, owner, {timezone: 'Europe/Paris'});
  assert.is(empty.title, 'Untitled document');
  const e = engine.openDoc(empty.id).grist;
  assert.is(e.timezone, 'Europe/Paris');
  assert.equal(
    e.listColumns('Table1').map((c) => c.id),
    ['A', 'B', 'C'],
  );
  const world = await importUpload(engine, wid, owner, {
    fileName: 'World.grist',
    data: readFileSync(fixturePath('World.grist')),
  });
  const copy = await copyDoc(engine, world.id, owner, null, wid, {name: 'World copy'});
  assert.is(copy.title, 'World copy');
  assert.equal(contents(engine.openDoc(copy.id).grist), contents(engine.openDoc(world.id).grist));
  const template = await copyDoc(engine, world.id, owner, null, wid, {asTemplate: true});
  assert.is(template.title, 'World');
  const t = engine.openDoc(template.id).grist;
  assert.equal(
    t.listTables().map((x) => x.id),
    engine
      .openDoc(world.id)
      .grist.listTables()
      .map((x) => x.id),
  );
  assert.is(t.fetchRecords('City').records.length, 0);
  try {
    await copyDoc(engine, world.id, stranger, null, wid);
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.status, 403);
  }
});

test("gristlite's private tables never come in with a file: a partial, foreign set does not break writes", async () => {
  const path = tempPath('private.grist');
  createDocFile(path);
  const db = new Database(path);
  // What another gristlite (or a hand-edited file) might carry: secrets of a webhook but no outbox,
  // a stats table of the wrong shape, an index and a view under the reserved prefix.
  db.exec(`CREATE TABLE _gristlite_webhook_secrets (webhookId TEXT PRIMARY KEY, url TEXT NOT NULL, authorization TEXT NOT NULL DEFAULT '',
             unsubscribeKey TEXT NOT NULL, signingSecret TEXT);
           INSERT INTO _gristlite_webhook_secrets VALUES ('w1', 'https://attacker.example/steal', 'Bearer secret', 'k', NULL);
           CREATE TABLE _gristlite_webhook_stats (junk TEXT);
           CREATE INDEX _gristlite_junk ON Table1 (A);
           CREATE VIEW _gristlite_view AS SELECT 1;`);
  db.close();
  const res = await importUpload(engine, wid, owner, {fileName: 'private.grist', path});
  const doc = engine.openDoc(res.id);
  const privateObjects = () =>
    doc.db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE '\\_gristlite\\_%' ESCAPE '\\'`).pluck().all();
  // Only the mark of gristlite's own recomputation at import (docs/decisions.md).
  assert.equal(privateObjects(), ['_gristlite_formulas'], 'the copy starts with no private state');
  doc.grist.addRecords('Table1', [{A: 'x'}]);
  const hook = await addWebhook(
    doc.db,
    {url: 'https://example.com/hook', eventTypes: ['add'], tableId: 'Table1'},
    {entries: ['*'], lookup: (_h, cb) => cb(null, [{address: '93.184.216.34', family: 4}])},
  );
  doc.grist.addRecords('Table1', [{A: 'y'}]);
  assert.equal(
    listWebhooks(doc.db).webhooks.map((w) => [w.id, w.fields.url]),
    [[hook.webhookId, 'https://example.com/hook']],
  );
  assert.equal(doc.grist.fetchColumns('Table1').A, ['x', 'y']);
  // The source file is read, never changed.
  const src = new Database(path, {readonly: true});
  assert.is(
    src.prepare(`SELECT count(*) FROM sqlite_master WHERE name LIKE '\\_gristlite\\_%' ESCAPE '\\'`).pluck().get(),
    4,
  );
  src.close();
});

test("a file that lists a table named like gristlite's own is refused", async () => {
  const path = tempPath('reserved.grist');
  createDocFile(path);
  const db = new Database(path);
  db.exec(
    `CREATE TABLE _gristlite_mine (id INTEGER PRIMARY KEY); UPDATE _grist_Tables SET tableId = '_gristlite_mine' WHERE tableId = 'Table1'`,
  );
  db.close();
  await rejected(
    'reserved.grist',
    readFileSync(path),
    /Invalid Grist document: table _gristlite_mine has a name reserved for gristlite's own tables/,
  );
});

test.run();
