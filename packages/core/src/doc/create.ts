import Database from 'better-sqlite3';
import {existsSync} from 'node:fs';
import {ChangeSet, DocStorage} from './storage.js';
import {META_DDL, SCHEMA_VERSION, STORAGE_VERSION} from './schema.js';

/** Options of a new document file (its time zone, Grist's starter table). */
export interface CreateDocOptions {
  /** Document timezone (`_grist_DocInfo.timezone`). Grist's default for API-created docs: UTC. */
  timezone?: string;
  /** Locale stored in `_grist_DocInfo.documentSettings`. Default `en-US`. */
  locale?: string;
  /** Stored in `_gristsys_FileInfo.docId` (Grist leaves it empty in fixtures). */
  docId?: string;
}

/**
 * Writes a new document as Grist's "new document" does: the metadata schema, the initial rows
 * of InitNewDoc (DocInfo, the obsolete-but-kept ACL rows) and the starter table `Table1` made by
 * AddEmptyTable, i.e. empty columns A, B, C (Any, formula ""), a hidden `manualSort`, a page with
 * its view, tab bar item and record section, the raw data section and the record-card section.
 * Throws if the file exists.
 */
export function createDocFile(path: string, options: CreateDocOptions = {}): void {
  if (existsSync(path)) {
    throw new Error(`createDocFile: ${path} already exists`);
  }
  const db = new Database(path);
  try {
    db.transaction(() => {
      for (const sql of META_DDL) {
        db.exec(sql);
      }
      writeInitialRows(db, options);
      db.pragma(`user_version = ${STORAGE_VERSION}`);
      // Table1, as AddEmptyTable makes it.
      const engine = new DocStorage(db);
      engine.changes = new ChangeSet();
      engine.addTable(
        null,
        [1, 2, 3].map(() => ({id: null, isFormula: true})),
      );
    })();
  } finally {
    db.close();
  }
}

function writeInitialRows(db: Database.Database, options: CreateDocOptions): void {
  // better-sqlite3 binds every JS number as REAL; these columns are declared BLOB, where SQLite
  // keeps what it is given, so integers are bound as BigInt to be stored as INTEGER like Grist does.
  const run = (sql: string, ...params: unknown[]) =>
    db.prepare(sql).run(...params.map((p) => (Number.isInteger(p) ? BigInt(p as number) : p)));
  const settings = JSON.stringify({locale: options.locale ?? 'en-US'});
  run(
    `INSERT INTO _grist_DocInfo (id, docId, peers, schemaVersion, basketId, timezone, documentSettings)
       VALUES (1, '', '', ?, '', ?, ?)`,
    SCHEMA_VERSION,
    options.timezone ?? 'UTC',
    settings,
  );
  run(`INSERT INTO _gristsys_FileInfo (id, docId, ownerInstanceId) VALUES (0, ?, '')`, options.docId ?? '');
  for (const name of ['shared', 'local_sent', 'local_unsent']) {
    run(`INSERT INTO _gristsys_ActionHistoryBranch (name) VALUES (?)`, name);
  }
  const groups = ['Owners', 'Admins', 'Editors', 'Viewers'];
  groups.forEach((g, i) =>
    run(
      `INSERT INTO _grist_ACLPrincipals (id, userName, groupName, userEmail, instanceId, type)
     VALUES (?, '', ?, '', '', 'group')`,
      i + 1,
      g,
    ),
  );
  run(`INSERT INTO _grist_ACLResources (id, colIds, tableId) VALUES (1, '', '')`);
  run(`INSERT INTO _grist_ACLRules (id, aclFormula, principals, resource, aclColumn, permissions,
       aclFormulaParsed, permissionsText, rulePos, userAttributes, memo)
       VALUES (1, '', '[1]', 1, 0, 63, '', '', 1e999, '', '')`);
}
