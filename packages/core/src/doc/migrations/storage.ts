/**
 * Storage migrations: how a document is laid out in SQLite (`PRAGMA user_version`, 1 to 9), which
 * Grist's DocStorage upgrades when it opens a file, before any schema migration. One entry per
 * storage version; their effect is pinned by Grist's BlobMigrationV1..V9 and DefaultValuesV5..V9
 * fixtures (a document upgraded from any of them dumps the same SQL as the V9 one).
 */
import {createHash} from 'node:crypto';
import {quoteIdent} from '../identifiers.js';
import {dumps} from '@gristlite/formula';
import {sqlDefaultFor} from '../types.js';
import {colSpec, type MigrationDb} from './db.js';

export interface StorageStep {
  version: number;
  summary: string;
  run: (m: MigrationDb) => void;
}

/** The `_grist_Tables_column` types of user tables, by `tableId.colId`. */
function userColumnTypes(m: MigrationDb, where = ''): Array<{tableId: string; colId: string; type: string}> {
  return m.db
    .prepare(`SELECT t.tableId AS tableId, c.colId AS colId, c.type AS type
    FROM _grist_Tables_column c JOIN _grist_Tables t ON c.parentId = t.id ${where} ORDER BY c.id`)
    .all() as Array<{tableId: string; colId: string; type: string}>;
}

/** Grist's marshaller writes dict keys sorted. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) {
    return v.map(sortedKeys);
  }
  if (v && typeof v === 'object' && !(v instanceof Uint8Array)) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** Storage v3: the old action log becomes the shared branch of ActionHistory, one bundle per action. */
function translateActionLog(m: MigrationDb): void {
  const actions = m.db.prepare(`SELECT * FROM _gristsys_Action ORDER BY actionNum`).all() as Array<
    Record<string, unknown>
  >;
  const steps = new Map<unknown, Array<Record<string, unknown>>>();
  for (const s of m.db.prepare(`SELECT * FROM _gristsys_Action_step ORDER BY id`).all() as Array<
    Record<string, unknown>
  >) {
    const list = steps.get(s.parentId) ?? [];
    list.push(s);
    steps.set(s.parentId, list);
  }
  const branch = m.db
    .prepare(`SELECT b.actionRef AS ref, h.actionHash AS hash, h.actionNum AS num
    FROM _gristsys_ActionHistoryBranch b LEFT JOIN _gristsys_ActionHistory h ON h.id = b.actionRef
    WHERE b.name = 'shared'`)
    .get() as {ref: number | null; hash: string | null; num: number | null} | undefined;
  let parentRef = branch?.ref ?? null;
  let parentHash = branch?.hash ?? null;
  let actionNum = (branch?.num ?? 0) + 1;
  const insert = m.db.prepare(
    `INSERT INTO _gristsys_ActionHistory (actionHash, parentRef, actionNum, body) VALUES (?, ?, ?, ?)`,
  );
  const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
  for (const a of actions) {
    const json = JSON.parse(String(a.json));
    const info = [
      0,
      sortedKeys({
        time: num(a.time),
        user: a.user,
        inst: '',
        desc: a.desc,
        otherId: num(a.otherId),
        linkId: num(a.linkId),
      }),
    ];
    const stored = sortedKeys([[0, json]]);
    const hash = createHash('sha256')
      .update(Buffer.concat([dumps(actionNum), dumps(parentHash), dumps(info), dumps(stored)]))
      .digest('hex');
    const body = dumps(
      sortedKeys({
        actionNum,
        actionHash: hash,
        parentActionHash: parentHash,
        envelopes: [],
        info,
        stored,
        calc: [],
        userActions: [json],
        undo: (steps.get(a.actionNum) ?? []).map((s) => JSON.parse(String(s.json))),
      }),
    );
    parentRef = Number(insert.run(hash, parentRef, actionNum, body).lastInsertRowid);
    parentHash = hash;
    actionNum++;
  }
  if (actions.length) {
    m.db.prepare(`UPDATE _gristsys_ActionHistoryBranch SET actionRef = ?`).run(parentRef);
  }
  m.db.exec(`DELETE FROM _gristsys_Action_step`);
  m.db.exec(`DELETE FROM _gristsys_Action`);
}

const OLD_MAX_POS_DEFAULT = String(2 ** 31 - 1);

export const STORAGE_STEPS: readonly StorageStep[] = [
  {
    version: 2,
    summary: 'every column of Grist tables declared BLOB; _gristsys_Files and _gristsys_Action.linkId created',
    run(m) {
      m.db.exec(`CREATE TABLE IF NOT EXISTS _gristsys_Files (
          id INTEGER PRIMARY KEY,
          ident TEXT UNIQUE,
          data BLOB
         )`);
      if (m.hasTable('_gristsys_Action') && !m.hasColumn('_gristsys_Action', 'linkId')) {
        m.db.exec(`ALTER TABLE _gristsys_Action ADD COLUMN linkId INTEGER`);
      }
      for (const name of m.tableNames()) {
        if (!(name.startsWith('_grist_') || !name.startsWith('_') || name.startsWith('_gristsys_Action'))) {
          continue;
        }
        const info = m.columnInfo(name);
        const specs = info.map((c) => {
          if (c.name === 'id') {
            return 'id INTEGER PRIMARY KEY';
          }
          // Old position columns defaulted to 2^31-1, and some defaults were the string "undefined".
          const dflt =
            c.type === 'REAL' && c.dflt_value === OLD_MAX_POS_DEFAULT
              ? '1e999'
              : c.dflt_value === 'undefined'
                ? 'NULL'
                : c.dflt_value;
          return colSpec({name: c.name, type: 'BLOB', dflt_value: dflt});
        });
        m.rebuild(
          name,
          specs,
          info.map((c) => quoteIdent(c.name)),
        );
      }
    },
  },
  {
    version: 3,
    summary: '_gristsys_ActionHistory replaces the _gristsys_Action log',
    run(m) {
      m.db.exec(`CREATE TABLE IF NOT EXISTS _gristsys_ActionHistory (
          id INTEGER PRIMARY KEY,
          actionHash TEXT UNIQUE,
          parentRef INTEGER,
          actionNum INTEGER,
          body BLOB
        )`);
      m.db.exec(`CREATE TABLE IF NOT EXISTS _gristsys_ActionHistoryBranch (
          id INTEGER PRIMARY KEY,
          name TEXT UNIQUE,
          actionRef INTEGER
        )`);
      for (const name of ['shared', 'local_sent', 'local_unsent']) {
        m.db.prepare(`INSERT OR IGNORE INTO _gristsys_ActionHistoryBranch(name) VALUES(?)`).run(name);
      }
      if (m.hasTable('_gristsys_Action') && m.hasTable('_gristsys_Action_step')) {
        translateActionLog(m);
      }
    },
  },
  {
    version: 4,
    summary: '_gristsys_FileInfo (docId, ownerInstanceId)',
    run(m) {
      if (m.hasTable('_gristsys_FileInfo')) {
        return;
      }
      m.db.exec(`CREATE TABLE _gristsys_FileInfo (
          id INTEGER PRIMARY KEY CHECK (id = 0),
          docId TEXT DEFAULT '',
          ownerInstanceId TEXT DEFAULT ''
        )`);
      m.db.exec(`INSERT INTO _gristsys_FileInfo (id) VALUES (0)`);
    },
  },
  {
    version: 5,
    summary: '_gristsys_PluginData',
    run(m) {
      if (!m.hasTable('_gristsys_PluginData')) {
        m.db.exec(`CREATE TABLE _gristsys_PluginData (
          id INTEGER PRIMARY KEY,
          pluginId TEXT NOT NULL,
          key TEXT NOT NULL,
          value BLOB DEFAULT ''
          )`);
      }
      m.db.exec(
        `CREATE UNIQUE INDEX IF NOT EXISTS _gristsys_PluginData_unique_key on _gristsys_PluginData(pluginId, key)`,
      );
    },
  },
  {
    version: 6,
    summary: "user columns whose DEFAULT is NULL get their type's default, and their NULLs that value",
    run(m) {
      const types = new Map(userColumnTypes(m).map((c) => [`${c.tableId}.${c.colId}`, c.type]));
      for (const name of m.tableNames()) {
        if (name.startsWith('_')) {
          continue;
        }
        const info = m.columnInfo(name);
        let changed = false;
        const specs: string[] = [];
        const values: string[] = [];
        for (const c of info) {
          const q = quoteIdent(c.name);
          const type = types.get(`${name}.${c.name}`);
          const dflt = type ? sqlDefaultFor(type) : 'NULL';
          if (c.name !== 'id' && type && c.dflt_value === 'NULL' && dflt !== 'NULL') {
            changed = true;
            specs.push(colSpec({...c, dflt_value: dflt}));
            values.push(`IFNULL(${q}, ${dflt}) as ${q}`);
          } else {
            specs.push(c.name === 'id' ? 'id INTEGER PRIMARY KEY' : colSpec(c));
            values.push(q);
          }
        }
        if (changed) {
          m.rebuild(name, specs, values);
        }
      }
    },
  },
  {
    version: 7,
    summary: 'formula columns stored: added as BLOB columns holding Pending (computed on open)',
    run(m) {
      const pending = dumps(['P']);
      const byTable = new Map<string, Array<{colId: string; type: string}>>();
      for (const c of userColumnTypes(m, 'WHERE c.isFormula')) {
        const list = byTable.get(c.tableId) ?? [];
        list.push(c);
        byTable.set(c.tableId, list);
      }
      for (const [tableId, cols] of byTable) {
        if (!m.hasTable(tableId)) {
          continue;
        }
        const present = new Set(m.columnInfo(tableId).map((c) => c.name));
        const added = cols.filter((c) => !present.has(c.colId));
        if (!added.length) {
          continue;
        }
        for (const c of added) {
          m.db.exec(
            `ALTER TABLE ${quoteIdent(tableId)} ADD COLUMN ${quoteIdent(c.colId)} BLOB DEFAULT ${sqlDefaultFor(c.type)}`,
          );
        }
        m.db
          .prepare(`UPDATE ${quoteIdent(tableId)} SET ${added.map((c) => `${quoteIdent(c.colId)}=?`).join(', ')}`)
          .run(...added.map(() => pending));
      }
    },
  },
  {
    version: 8,
    summary: 'index on _grist_Attachments.fileIdent',
    run(m) {
      if (m.hasTable('_grist_Attachments')) {
        m.db.exec(`CREATE INDEX IF NOT EXISTS _grist_Attachments_fileIdent ON _grist_Attachments(fileIdent)`);
      }
    },
  },
  {
    version: 9,
    summary: '_gristsys_Files.storageId (external attachment stores)',
    run(m) {
      if (!m.hasColumn('_gristsys_Files', 'storageId')) {
        m.db.exec(`ALTER TABLE _gristsys_Files ADD COLUMN storageId TEXT`);
      }
    },
  },
];
