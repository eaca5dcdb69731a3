/**
 * Checking an uploaded `.grist` file: a SQLite database carrying Grist's metadata. Documents of
 * older schema versions are accepted (the import upgrades its copy, doc/migrations), newer ones
 * too (served read-only).
 */
import Database from 'better-sqlite3';
import {closeSync, openSync, readSync} from 'node:fs';
import {BadRequest} from '../base/index.js';
import {loadMeta} from '../doc/meta.js';
import {readVersions} from '../doc/migrations/index.js';

const SQLITE_MAGIC = 'SQLite format 3\u0000';
/** gristlite's private tables (webhook secrets, outbox, stats) and their indexes. */
const PRIVATE = /^_gristlite_/i;

function invalid(reason: string): BadRequest {
  return new BadRequest(`Invalid Grist document: ${reason}`);
}

function hasSqliteHeader(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(16);
    return readSync(fd, buf, 0, 16, 0) === 16 && buf.toString('latin1') === SQLITE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** Columns each metadata table must have for gristlite (and Grist) to read the document. */
const REQUIRED: Record<string, string[]> = {
  _grist_DocInfo: [], // schemaVersion may be missing: Grist reads that as version 0 (migration 1 adds it).
  _grist_Tables: ['tableId'],
  _grist_Tables_column: ['parentId', 'colId', 'type'],
};

/**
 * Opens `path` read-only after checking it is a sound Grist document; throws 400 otherwise.
 * The caller closes the returned connection.
 */
export function openGristUpload(path: string): Database.Database {
  if (!hasSqliteHeader(path)) throw invalid('the file is not a SQLite database');
  let db: Database.Database;
  try {
    db = new Database(path, {readonly: true, fileMustExist: true});
  } catch (e) {
    throw invalid((e as Error).message);
  }
  try {
    db.pragma('trusted_schema = OFF');
    let check: unknown;
    try {
      check = db.pragma('quick_check', {simple: true});
    } catch (e) {
      throw invalid((e as Error).message);
    }
    if (check !== 'ok') throw invalid(`the database is damaged (${String(check)})`);
    const objects = db.prepare(`SELECT type, name FROM sqlite_master`).all() as Array<{type: string; name: string}>;
    if (objects.some((o) => o.type === 'trigger'))
      throw invalid('it contains SQL triggers, which Grist documents never have');
    const tables = new Set(objects.filter((o) => o.type === 'table').map((o) => o.name));
    for (const [table, cols] of Object.entries(REQUIRED)) {
      if (!tables.has(table)) throw invalid(`it has no ${table} table`);
      const have = new Set(
        (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as Array<{name: string}>).map((r) => r.name),
      );
      for (const c of cols) if (!have.has(c)) throw invalid(`${table} has no ${c} column`);
    }
    const {schema: version} = readVersions(db);
    if (!Number.isInteger(version) || version < 0) throw invalid('_grist_DocInfo has no valid schema version');
    const userTables = db.prepare('SELECT tableId FROM _grist_Tables').pluck().all() as unknown[];
    for (const t of userTables) {
      if (typeof t !== 'string' || !tables.has(t))
        throw invalid(`table ${String(t)} is listed in _grist_Tables but missing`);
      if (PRIVATE.test(t)) throw invalid(`table ${t} has a name reserved for gristlite's own tables`);
    }
    try {
      loadMeta(db);
    } catch (e) {
      throw invalid(`its metadata cannot be read (${(e as Error).message})`);
    }
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Drops every `_gristlite_*` table, view and index from an imported copy: gristlite's private state
 * never comes in with a file (downloads drop it too), so a partial or foreign set of these tables
 * cannot break later writes. The tables are recreated when first needed.
 */
export function dropPrivateObjects(db: Database.Database): void {
  const objects = db
    .prepare(`SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'index')
    AND name LIKE '\\_gristlite\\_%' ESCAPE '\\' ORDER BY type = 'table', type = 'view'`)
    .all() as Array<{type: string; name: string}>;
  db.transaction(() => {
    for (const {type, name} of objects) {
      db.exec(`DROP ${type.toUpperCase()} IF EXISTS "${name.replace(/"/g, '""')}"`);
    }
  })();
}
