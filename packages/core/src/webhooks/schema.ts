/**
 * gristlite's private tables for webhooks, kept inside the document (docs/decisions-webhooks.md).
 * Grist keeps webhook secrets in its home database and its queue in memory (or Redis); gristlite
 * keeps both in the document so that they travel with it and commit with the changes that cause
 * events. Every private table is named `_gristlite_*`; exports drop them (`dropPrivateTables`).
 */
import type Database from 'better-sqlite3';

export const SECRETS_TABLE = '_gristlite_webhook_secrets';
export const OUTBOX_TABLE = '_gristlite_webhook_outbox';
export const STATS_TABLE = '_gristlite_webhook_stats';

const DDL = [
  `CREATE TABLE IF NOT EXISTS ${SECRETS_TABLE} (
     webhookId TEXT PRIMARY KEY,
     url TEXT NOT NULL,
     authorization TEXT NOT NULL DEFAULT '',
     unsubscribeKey TEXT NOT NULL,
     signingSecret TEXT,
     includePrevious INTEGER NOT NULL DEFAULT 0
   )`,
  // One row per event, in the order the events happened. Rows of one webhook are delivered in id
  // order; a delivered (or dropped) batch is deleted.
  `CREATE TABLE IF NOT EXISTS ${OUTBOX_TABLE} (
     id INTEGER PRIMARY KEY,
     webhookId TEXT NOT NULL,
     eventType TEXT NOT NULL,
     payload TEXT NOT NULL,
     createdAt INTEGER NOT NULL,
     apiKeyId INTEGER
   )`,
  `CREATE INDEX IF NOT EXISTS ${OUTBOX_TABLE}_webhook ON ${OUTBOX_TABLE} (webhookId, id)`,
  // The usage fields of GET /webhooks, persisted so that they survive a restart.
  `CREATE TABLE IF NOT EXISTS ${STATS_TABLE} (
     webhookId TEXT PRIMARY KEY,
     status TEXT,
     updatedTime INTEGER,
     lastSuccessTime INTEGER,
     lastFailureTime INTEGER,
     lastErrorMessage TEXT,
     lastHttpStatus INTEGER,
     batchStatus TEXT,
     batchHttpStatus INTEGER,
     batchErrorMessage TEXT,
     batchSize INTEGER,
     batchAttempts INTEGER
   )`,
];

const ensured = new WeakSet<Database.Database>();

/** Creates the private webhook tables if they are missing (idempotent, cheap after the first call). */
export function ensureWebhookTables(db: Database.Database): void {
  if (ensured.has(db) && hasTable(db, OUTBOX_TABLE)) return;
  db.transaction(() => {
    for (const sql of DDL) db.exec(sql);
    upgradeOutbox(db);
    upgradeSecrets(db);
  })();
  ensured.add(db);
}

const upgraded = new WeakSet<Database.Database>();

/**
 * Gives an outbox made before deliveries named the document API key behind a write (issue 30)
 * its `apiKeyId` column; cheap after the first call per connection. Whoever records or reads
 * events calls it first, since an old document's outbox exists before anything ensures tables.
 */
export function upgradeOutbox(db: Database.Database): void {
  if (upgraded.has(db)) return;
  const cols = db.prepare(`SELECT name FROM pragma_table_info('${OUTBOX_TABLE}')`).pluck().all();
  if (cols.length && !cols.includes('apiKeyId')) db.exec(`ALTER TABLE ${OUTBOX_TABLE} ADD COLUMN apiKeyId INTEGER`);
  upgraded.add(db);
}

const secretsUpgraded = new WeakSet<Database.Database>();

/**
 * Gives a secrets table made before webhooks could send previous values (issue 42, D105) its
 * `includePrevious` column; cheap after the first call per connection.
 */
export function upgradeSecrets(db: Database.Database): void {
  if (secretsUpgraded.has(db)) return;
  const cols = db.prepare(`SELECT name FROM pragma_table_info('${SECRETS_TABLE}')`).pluck().all();
  if (cols.length && !cols.includes('includePrevious')) {
    db.exec(`ALTER TABLE ${SECRETS_TABLE} ADD COLUMN includePrevious INTEGER NOT NULL DEFAULT 0`);
  }
  secretsUpgraded.add(db);
}

export function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

/**
 * True when a statement would read a private `_gristlite_*` table (or one of its indexes): the
 * read-only SQL endpoint must refuse those, since the secrets table holds webhook URLs and
 * credentials that only owners may see. Checked on the compiled program (`EXPLAIN`), so views,
 * CTEs, subqueries and `main.`-qualified names are all caught.
 */
export function readsPrivateTables(db: Database.Database, sql: string, params: readonly unknown[] = []): boolean {
  const privatePages = new Set(
    db
      .prepare(`SELECT rootpage FROM sqlite_master WHERE rootpage > 0 AND tbl_name LIKE '\\_gristlite\\_%' ESCAPE '\\'`)
      .pluck()
      .all() as number[],
  );
  if (!privatePages.size) return false;
  const program = db.prepare(`EXPLAIN ${sql}`).all(...params) as {opcode: string; p2: number; p3: number}[];
  return program.some(
    (op) => (op.opcode === 'OpenRead' || op.opcode === 'OpenWrite') && op.p3 === 0 && privatePages.has(op.p2),
  );
}

/**
 * Drops every private `_gristlite_*` table (and their indexes) from a document: call it on the
 * copy made for a `.grist` download, so that webhook URLs, credentials and queued events never
 * leave with an exported file.
 */
export function dropPrivateTables(db: Database.Database): void {
  const names = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_gristlite\\_%' ESCAPE '\\'`)
    .pluck()
    .all() as string[];
  if (!names.length) return;
  db.transaction(() => {
    for (const name of names) db.exec(`DROP TABLE IF EXISTS "${name.replace(/"/g, '""')}"`);
  })();
}
