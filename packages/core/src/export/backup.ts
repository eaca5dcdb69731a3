import Database from 'better-sqlite3';
import {dropPrivateTables} from '../webhooks/schema.js';
import {rmSync} from 'node:fs';

/** Options of a `.grist` download (`?nohistory`, `?template`). */
export interface BackupOptions {
  /** Drop action history (keeping the newest action, as Grist does). */
  nohistory?: boolean;
  /** Drop all user data and attachments as well as history. */
  template?: boolean;
}

/**
 * Writes a consistent, self-contained copy of a document to `destPath` for download (SPEC §6.1),
 * filtered as Grist's `filterDocumentInPlace` does: the base action recorded, triggers disabled,
 * the FullCopies special rule removed, and data and/or history dropped on request. The copy is
 * vacuumed and left in rollback-journal mode, so it is one file with nothing beside it.
 */
export async function backupDoc(srcDb: Database.Database, destPath: string, opts: BackupOptions = {}): Promise<void> {
  await onlineBackup(srcDb, destPath);
  try {
    const db = new Database(destPath, {fileMustExist: true});
    try {
      db.pragma('journal_mode = DELETE');
      db.transaction(() => {
        markBaseAction(db);
        if (opts.template) {
          removeData(db);
        }
        if (opts.template || opts.nohistory) {
          removeHistory(db);
        }
        removeFullCopiesRule(db);
        dropPrivateTables(db);
        disableTriggers(db);
      })();
      db.exec('VACUUM');
    } finally {
      db.close();
    }
  } catch (e) {
    rmSync(destPath, {force: true});
    throw e;
  }
}

/**
 * SQLite's online backup, in steps that yield to the event loop. A write through another
 * connection restarts the copy; after the first step that makes no progress, the rest is copied
 * in one step (one read transaction), so that a busy writer cannot starve the backup.
 */
async function onlineBackup(srcDb: Database.Database, destPath: string): Promise<void> {
  let remaining = Infinity;
  let allAtOnce = false;
  await srcDb.backup(destPath, {
    progress({remainingPages}) {
      if (remainingPages >= remaining) {
        allAtOnce = true;
      }
      remaining = remainingPages;
      return allAtOnce ? 0x7fffffff : 100;
    },
  });
}

/** Records the newest action as the copy's base (Grist's `markAction`). */
function markBaseAction(db: Database.Database): void {
  const tip = db
    .prepare(
      `SELECT h.actionNum AS n, h.actionHash AS h FROM _gristsys_ActionHistoryBranch b
     JOIN _gristsys_ActionHistory h ON h.id = b.actionRef WHERE b.name = 'local_unsent'`,
    )
    .get() as {n: number; h: string} | undefined;
  if (!tip) {
    return;
  }
  // Documents older than the documentSettings column (schema < 29) have nowhere to record it.
  if (!db.prepare(`SELECT 1 FROM pragma_table_info('_grist_DocInfo') WHERE name = 'documentSettings'`).get()) {
    return;
  }
  const info = db.prepare('SELECT documentSettings FROM _grist_DocInfo').get() as
    | {documentSettings: string}
    | undefined;
  let settings: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(info?.documentSettings ?? '');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      settings = parsed as Record<string, unknown>;
    }
  } catch {
    // Grist ignores unreadable settings here too.
  }
  settings.baseAction = {n: tip.n, h: tip.h};
  db.prepare('UPDATE _grist_DocInfo SET documentSettings = ?').run(JSON.stringify(settings));
}

/** Empties every table that is not Grist's own metadata, and the attachments. */
function removeData(db: Database.Database): void {
  const tables = db
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_grist%' ESCAPE '\\'
     AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
    )
    .pluck()
    .all() as string[];
  for (const name of tables) {
    db.exec(`DELETE FROM ${quoteIdent(name)}`);
  }
  for (const name of ['_grist_Attachments', '_gristsys_Files']) {
    if (hasTable(db, name)) {
      db.exec(`DELETE FROM ${name}`);
    }
  }
}

/**
 * Grist's `deleteActions(1)`: keeps the newest action so that the copy still names its state,
 * deletes the rest, and clears branch tips that pointed at deleted actions. The branch rows stay:
 * Grist moves a branch tip by name, and without the rows the copy would record no new history.
 */
function removeHistory(db: Database.Database): void {
  db.exec(`
    DELETE FROM _gristsys_ActionHistory WHERE id IS NOT
      (SELECT actionRef FROM _gristsys_ActionHistoryBranch WHERE name = 'local_unsent');
    UPDATE _gristsys_ActionHistoryBranch SET actionRef = NULL
      WHERE actionRef NOT IN (SELECT id FROM _gristsys_ActionHistory);
  `);
  // Tables of the obsolete action log.
  for (const name of ['_gristsys_Action', '_gristsys_Action_step']) {
    if (hasTable(db, name)) {
      db.exec(`DELETE FROM ${name}`);
    }
  }
}

/** The FullCopies special permission must not travel with a copy. */
function removeFullCopiesRule(db: Database.Database): void {
  if (!hasTable(db, '_grist_ACLResources')) {
    return;
  }
  db.exec(`
    DELETE FROM _grist_ACLRules WHERE resource IN
      (SELECT id FROM _grist_ACLResources WHERE tableId = '*SPECIAL' AND colIds = 'FullCopies');
    DELETE FROM _grist_ACLResources WHERE tableId = '*SPECIAL' AND colIds = 'FullCopies';
  `);
}

/**
 * Webhooks must not fire from a copy. Before schema 39 triggers had no `enabled` flag, and Grist's
 * migration 39 enables every existing trigger, so an old document's triggers are removed instead.
 */
function disableTriggers(db: Database.Database): void {
  if (!hasTable(db, '_grist_Triggers')) {
    return;
  }
  const hasFlag = db.prepare(`SELECT 1 FROM pragma_table_info('_grist_Triggers') WHERE name = 'enabled'`).get();
  db.exec(hasFlag ? 'UPDATE _grist_Triggers SET enabled = 0' : 'DELETE FROM _grist_Triggers');
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
