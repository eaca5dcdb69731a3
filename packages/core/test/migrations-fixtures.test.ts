// Every real Grist document of every schema version (fixtures/grist and fixtures/grist-corpus)
// upgrades to schema 46: the same stored cells before and after (except what a migration converts,
// each named below), a write accepted by every user table, a sound file, and Grist 46's metadata.
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc, META_TYPES, SCHEMA_VERSION} from '../src/doc/index.js';
import {sqlDefaultFor, sqlTypeFor} from '@gristlite/formula';
import {copyTo, findFixtureDirs, listFixtures, placeholder, readPragma, storedData} from './migrations-helpers.js';

const found = findFixtureDirs(['grist', 'corpus']);
const fixtures = 'dirs' in found ? listFixtures(found.dirs) : [];

/** Known conversions, by what makes them: see docs/migrations.md. */
function convertedByMigration(
  before: {type: string},
  after: {type: string},
  oldValue: unknown,
  newValue: unknown,
  storage: number,
): boolean {
  // Storage 6: NULLs in columns whose type has a non-NULL default take that default.
  if (storage < 6 && oldValue === null && newValue !== null) {
    return true;
  }
  // Schema 17: Image columns become Attachments, an image id n the list [n].
  if (before.type === 'Image' && after.type === 'Attachments') {
    return true;
  }
  return false;
}

/** SQL defaults compared by value ("" and '' are the same text; 2147483647 was an old position default). */
function defaultValue(db: Database.Database, sql: string | null): unknown {
  const quoted = /^"(.*)"$/s.exec(sql ?? '');
  return db
    .prepare(`SELECT ${quoted ? `'${quoted[1].replace(/'/g, "''")}'` : (sql ?? 'NULL')}`)
    .pluck()
    .get();
}

if ('missing' in found) {
  placeholder(test, 'migrations-fixtures: every fixture and corpus document upgrades to 46', found.missing);
}

for (const {name, path} of fixtures) {
  if (name === 'DownmigrateTest.grist') {
    continue;
  }
  test(`${name}: upgrades to 46 with the same data, writable, sound`, () => {
    const copy = copyTo(path, name);
    const storage = Number(readPragma(copy, 'PRAGMA user_version'));
    const before = storedData(copy);
    const doc = GristDoc.open(copy);
    assert.is(doc.schemaVersion, SCHEMA_VERSION);
    assert.ok(doc.isWritable);
    const tables = doc.listTables().map((t) => t.id);
    doc.close();
    const after = storedData(copy);
    for (const [key, col] of before) {
      const now = after.get(key);
      if (!now) {
        // Schema 7 drops the non-group-by data columns of old-style summary tables (and the
        // helper column of their source table): they are named in that step's focused test.
        assert.match(
          `${col.tableId}.${col.colId}`,
          /^Summary_|\.Summary_/,
          `${name}: ${col.tableId}.${col.colId} is gone`,
        );
        continue;
      }
      for (const [rowId, v] of col.values) {
        const nv = now.values.get(rowId);
        if (JSON.stringify(nv) === JSON.stringify(v)) {
          continue;
        }
        assert.ok(
          convertedByMigration(col, now, v, nv, storage),
          `${name}: ${col.tableId}.${col.colId}[${rowId}] was ${JSON.stringify(v)}, is ${JSON.stringify(nv)}`,
        );
      }
      assert.is(now.values.size, col.values.size, `${name}: ${col.tableId}.${col.colId} row count`);
    }

    // Every metadata table and column of schema 46, with its type's default value.
    const db = new Database(copy, {readonly: true});
    try {
      for (const [table, types] of Object.entries(META_TYPES)) {
        const info = new Map(
          (
            db.prepare(`SELECT name, type, dflt_value FROM pragma_table_info(?)`).all(table) as Array<{
              name: string;
              type: string;
              dflt_value: string | null;
            }>
          ).map((c) => [c.name, c]),
        );
        assert.ok(info.size, `${name}: ${table} exists`);
        for (const [colId, type] of Object.entries(types)) {
          const c = info.get(colId);
          assert.ok(c, `${name}: ${table}.${colId} exists`);
          const want = defaultValue(db, sqlDefaultFor(type));
          const have = defaultValue(db, c!.dflt_value);
          // Text columns of the oldest documents defaulted to "" (the same); positions to 2^31-1
          // where declared REAL before storage 2 (Grist keeps those in BLOB ones too).
          assert.ok(
            have === want || (typeof want === 'number' && want === Infinity && have === 2147483647),
            `${name}: ${table}.${colId} default ${c!.dflt_value} (want ${sqlDefaultFor(type)}, ${sqlTypeFor(type)})`,
          );
        }
      }
      assert.is(db.pragma('integrity_check', {simple: true}), 'ok');
      assert.is(db.pragma('user_version', {simple: true}), 9);
    } finally {
      db.close();
    }

    // A write to each user table (summary tables included), then schema changes.
    const again = GristDoc.open(copy);
    try {
      const count = (t: string) => again.db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get() as number;
      for (const t of tables) {
        const n = count(t);
        const ids = again.addRecords(t, [{}]);
        assert.is(ids.length, 1, `${name}: ${t} write`);
        assert.is(count(t), n + 1, `${name}: ${t} has the new row`);
        assert.is(again.fetchRecords(t, {filter: {id: ids}}).records.length, 1, `${name}: ${t} serves the new row`);
      }
      // Schema writes too: a table, a column and its update, then removing what was added.
      const [{id: added}] = again.addTables([{columns: [{id: 'Note', fields: {type: 'Text'}}]}]);
      again.addRecords(added, [{Note: 'after upgrade'}]);
      const [{id: col}] = again.addColumns(tables[0] ?? added, [{id: 'MigratedNote', fields: {type: 'Text'}}]);
      again.updateColumns(tables[0] ?? added, [{id: col, fields: {description: 'added after the upgrade'}}]);
      assert.is(again.fetchRecords(added).records[0].fields.Note, 'after upgrade');
      again.removeColumn(tables[0] ?? added, col);
      again.removeTable(added);
      assert.is(again.db.pragma('integrity_check', {simple: true}), 'ok');
    } finally {
      again.close();
    }
  });
}

test.run();
