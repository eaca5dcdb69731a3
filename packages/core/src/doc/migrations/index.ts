/**
 * Upgrading a document to the current storage (9) and metadata schema (46) versions, as Grist does
 * when it opens an older document: storage migrations first (DocStorage), then every schema
 * migration after the document's version, then a last step making sure every metadata table and
 * column of schema 46 exists. All of it runs in one SQLite transaction: a failure leaves the file
 * as it was and names the version and step that failed.
 */
import Database from 'better-sqlite3';
import {BadRequest} from '../../base/index.js';
import {META_TYPES, SCHEMA_VERSION, STORAGE_VERSION} from '../schema.js';
import {MigrationDb} from './db.js';
import {applyChange, SCHEMA_STEPS} from './schema-steps.js';
import {STORAGE_STEPS} from './storage.js';

export {SCHEMA_STEPS} from './schema-steps.js';
export {STORAGE_STEPS} from './storage.js';

export interface DocVersions {
  /** `PRAGMA user_version`. */
  storage: number;
  /** `_grist_DocInfo.schemaVersion` (0 when the column does not exist yet, as in Grist). */
  schema: number;
}

/** A failed upgrade: 400, naming the version the document had and the step that failed. */
export class MigrationError extends BadRequest {
  constructor(
    readonly kind: 'storage' | 'schema',
    readonly version: number,
    readonly step: string,
    readonly from: DocVersions,
    cause: Error,
  ) {
    super(
      `Upgrading the document from schema version ${from.schema} failed at ${kind} version ${version} ` +
        `(${step}): ${cause.message}`,
    );
  }
}

export function readVersions(db: Database.Database): DocVersions {
  const storage = Number(db.pragma('user_version', {simple: true}));
  const m = new MigrationDb(db);
  let schema = 0;
  if (m.hasTable('_grist_DocInfo') && m.hasColumn('_grist_DocInfo', 'schemaVersion')) {
    const row = db.prepare(`SELECT schemaVersion FROM _grist_DocInfo ORDER BY id LIMIT 1`).get() as
      | {schemaVersion: unknown}
      | undefined;
    const v = Number(row?.schemaVersion ?? 0);
    schema = Number.isFinite(v) ? v : 0;
  }
  return {storage, schema};
}

/** Whether the file looks like a Grist document at all (others are left alone, and refused elsewhere). */
export function isGristDocument(db: Database.Database): boolean {
  const m = new MigrationDb(db);
  return ['_grist_DocInfo', '_grist_Tables', '_grist_Tables_column'].every((t) => m.hasTable(t));
}

export function needsUpgrade(v: DocVersions): boolean {
  return v.schema < SCHEMA_VERSION || v.storage < STORAGE_VERSION;
}

/** The last step: every table and column of the current metadata schema, with its default. */
export function ensureCurrentSchema(m: MigrationDb): void {
  for (const [table, types] of Object.entries(META_TYPES)) {
    const cols = Object.entries(types);
    if (!m.hasTable(table)) {
      applyChange(m, {table, cols});
      continue;
    }
    for (const [colId, type] of cols) {
      m.addColumn(table, colId, type);
    }
  }
  m.db.exec(`CREATE INDEX IF NOT EXISTS _grist_Attachments_fileIdent ON _grist_Attachments(fileIdent)`);
}

export interface UpgradeResult {
  from: DocVersions;
  to: DocVersions;
  /** `storage N` / `schema N` for every step run, in order. */
  steps: string[];
}

/**
 * Runs the steps that bring the document from `from` up to `to` (the current versions unless
 * given: tests stop earlier). Must be called inside a transaction (see upgradeDocument).
 */
export function runSteps(db: Database.Database, to: Partial<DocVersions> = {}): UpgradeResult {
  const from = readVersions(db);
  const target = {storage: to.storage ?? STORAGE_VERSION, schema: to.schema ?? SCHEMA_VERSION};
  const m = new MigrationDb(db);
  const steps: string[] = [];
  for (const step of STORAGE_STEPS) {
    if (step.version <= from.storage || step.version > target.storage) {
      continue;
    }
    try {
      step.run(m);
    } catch (e) {
      throw new MigrationError('storage', step.version, step.summary, from, e as Error);
    }
    steps.push(`storage ${step.version}`);
  }
  if (target.storage > from.storage) {
    db.pragma(`user_version = ${target.storage}`);
  }
  if (from.schema < target.schema) {
    for (const step of SCHEMA_STEPS) {
      if (step.version <= from.schema || step.version > target.schema) {
        continue;
      }
      try {
        for (const ch of step.add ?? []) {
          applyChange(m, ch);
        }
        step.run?.(m);
      } catch (e) {
        throw new MigrationError('schema', step.version, step.summary, from, e as Error);
      }
      steps.push(`schema ${step.version}`);
    }
    if (target.schema === SCHEMA_VERSION) {
      try {
        ensureCurrentSchema(m);
      } catch (e) {
        throw new MigrationError(
          'schema',
          SCHEMA_VERSION,
          'every table and column of the current schema',
          from,
          e as Error,
        );
      }
    }
    m.update('_grist_DocInfo', 1, {schemaVersion: target.schema});
  }
  return {from, to: readVersions(db), steps};
}

/** Upgrades the document in one transaction (rolled back whole on failure). */
export function upgradeDocument(db: Database.Database): UpgradeResult {
  return db.transaction(() => runSteps(db))();
}

/**
 * Upgrades the document file at `path` if it is older than the current versions (a newer one is
 * left alone). Returns what was done, or null when nothing was needed.
 */
export function upgradeDocFile(path: string): UpgradeResult | null {
  const db = new Database(path, {fileMustExist: true});
  try {
    db.pragma('trusted_schema = OFF');
    const versions = readVersions(db);
    if (versions.schema > SCHEMA_VERSION || !needsUpgrade(versions) || !isGristDocument(db)) {
      return null;
    }
    return upgradeDocument(db);
  } finally {
    db.close();
  }
}
