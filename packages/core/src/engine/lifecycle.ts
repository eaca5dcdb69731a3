/**
 * Document lifecycle operations of today's Grist (issue 29): the action history's states and
 * their truncation (`GET /states`, `POST /states/remove`), and replacing a document's content
 * with another file's (`POST /replace`). The history is Grist's `_gristsys_ActionHistory`, a chain
 * of actions linked by `parentRef` from the `local_unsent` branch tip, which every write extends (D120).
 */
import {createHash} from 'node:crypto';
import type Database from 'better-sqlite3';
import {quoteIdent as quote} from '../doc/identifiers.js';
import {IDEMPOTENCY_TABLE} from '../doc/idempotency.js';
import {hasTable} from '../webhooks/schema.js';
import {
  composeSummaries,
  decodeBundle,
  emptySummary,
  summarizeBundle,
  type ActionSummary,
} from '../doc/history/index.js';
import {BadRequest} from '../base/index.js';

/** One state of the document: an action's number and hash (Grist's `DocState`). */
export interface DocState {
  n: number;
  h: string;
}

/** The actions of the `local_unsent` chain, newest first (Grist's `_fetchParts` from the branch tip). */
function chain(db: Database.Database): {id: number; actionNum: number; actionHash: string}[] {
  if (!hasTable(db, '_gristsys_ActionHistory') || !hasTable(db, '_gristsys_ActionHistoryBranch')) return [];
  return db
    .prepare(
      `WITH RECURSIVE actions(id) AS (
         SELECT actionRef FROM _gristsys_ActionHistoryBranch WHERE name = 'local_unsent' AND actionRef IS NOT NULL
         UNION ALL
         SELECT parentRef FROM _gristsys_ActionHistory h, actions WHERE h.id = actions.id AND parentRef IS NOT NULL
       )
       SELECT h.id, h.actionNum, h.actionHash FROM actions JOIN _gristsys_ActionHistory h ON h.id = actions.id
       ORDER BY h.actionNum DESC`,
    )
    .all() as {id: number; actionNum: number; actionHash: string}[];
}

/** `GET /states`: the document's states, newest first. */
export function docStates(db: Database.Database): {states: DocState[]} {
  return {
    states: chain(db).map((r) => ({n: r.actionNum, h: r.actionHash})),
  };
}

/**
 * `POST /states/remove`: keeps the newest `keep` actions of the history and deletes the rest, in
 * one transaction; branch tips that pointed at a deleted action become empty. As in Grist, a
 * `keep` of 0 or less keeps everything (its query then has no LIMIT).
 */
export function removeStates(db: Database.Database, keep: number): void {
  // Nothing to keep or no history to truncate (both tables are needed: a file with one only would
  // fail half-way, answering 500).
  if (keep <= 0 || !hasTable(db, '_gristsys_ActionHistory') || !hasTable(db, '_gristsys_ActionHistoryBranch')) return;
  db.transaction(() => {
    const kept = chain(db)
      .slice(0, keep)
      .map((r) => r.id);
    const ids = JSON.stringify(kept);
    db.prepare('DELETE FROM _gristsys_ActionHistory WHERE id NOT IN (SELECT value FROM json_each(?))').run(ids);
    db.prepare(
      'UPDATE _gristsys_ActionHistoryBranch SET actionRef = NULL WHERE actionRef NOT IN (SELECT value FROM json_each(?))',
    ).run(ids);
  })();
}

/**
 * `POST /replace`: makes the document's content that of the file at `sourcePath` (a copy prepared
 * as a download is, so without private tables), in one transaction on the document's own
 * connection, so that it is logged and acknowledged as any write is. Every table, index and view
 * is replaced except the document's idempotency keys, which stay (D56: a key never applies twice).
 * The caller must reopen the document afterwards: what the engine keeps in memory is outdated.
 */
export function replaceContent(db: Database.Database, sourcePath: string): void {
  db.prepare('ATTACH DATABASE ? AS replacement').run(sourcePath);
  try {
    db.transaction(() => {
      const own = db
        .prepare(
          `SELECT type, name FROM main.sqlite_master
           WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name != ?`,
        )
        .all(IDEMPOTENCY_TABLE) as {type: string; name: string}[];
      for (const {type, name} of own)
        db.exec(`DROP ${type === 'view' ? 'VIEW' : 'TABLE'} IF EXISTS main.${quote(name)}`);
      const theirs = db
        .prepare(
          `SELECT type, name, sql FROM replacement.sqlite_master
           WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name != ?
           ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid`,
        )
        .all(IDEMPOTENCY_TABLE) as {
        type: string;
        name: string;
        sql: string;
      }[];
      for (const {type, name, sql} of theirs) {
        db.exec(sql);
        if (type === 'table') db.exec(`INSERT INTO main.${quote(name)} SELECT * FROM replacement.${quote(name)}`);
      }
    })();
  } finally {
    db.exec('DETACH DATABASE replacement');
  }
}

/** Grist's comparison of two documents by their histories (`GET /compare/{doc2}`). */
export interface DocStateComparison {
  left: DocState;
  right: DocState;
  parent: DocState | null;
  summary: 'same' | 'left' | 'right' | 'both' | 'unrelated';
  /** With `detail=1`: what changed on each side since `parent` (Grist's ActionSummary). */
  details?: {leftChanges: ActionSummary; rightChanges: ActionSummary};
}

/**
 * A digest of what a document holds for its users: its tables and columns and every row of its
 * user tables: whether two documents whose histories end alike still hold the same thing (a write
 * made with history recording off, or behind gristlite's back).
 */
export function contentDigest(db: Database.Database): string {
  const hash = createHash('sha256');
  const dump = (sql: string) => {
    for (const row of db.prepare(sql).raw().all() as unknown[][]) {
      for (const v of row) {
        // Type-tagged, so that 1, 1.0 stored as REAL, '1' and a blob of '1' differ.
        if (v === null) hash.update('n;');
        else if (Buffer.isBuffer(v)) hash.update(`b${v.length}:`).update(v);
        else if (typeof v === 'string') hash.update(`s${Buffer.byteLength(v)}:${v}`);
        else hash.update(`${typeof v}:${String(v)};`);
      }
      hash.update('\n');
    }
  };
  dump('SELECT id, tableId FROM _grist_Tables ORDER BY id');
  dump('SELECT id, parentId, colId, type, isFormula, formula FROM _grist_Tables_column ORDER BY id');
  const tables = db.prepare('SELECT tableId FROM _grist_Tables ORDER BY id').pluck().all() as string[];
  for (const t of tables) {
    if (!hasTable(db, t)) continue;
    hash.update(`table ${t}\n`);
    dump(`SELECT * FROM ${quote(t)} ORDER BY id`);
  }
  return hash.digest('hex');
}

/**
 * Grist's `_compareDoc`: the newest state of each, their newest common state, and which side moved
 * on since. When the histories end alike but the contents differ (changes made through gristlite,
 * which records none), both sides are said to have changed since that state: which one did is
 * not known (D54). A document with no history (every document gristlite created) stands at the
 * empty state `{n: 0, h: ""}` (Grist's own empty comparison), so two of them compare by content.
 * `sameContent` reads both documents whole: it is asked only when the histories say `same`.
 */
export function compareStates(
  leftStates: DocState[],
  rightStates: DocState[],
  sameContent: () => boolean,
): DocStateComparison {
  const none = [{n: 0, h: ''}];
  const left = leftStates.length ? leftStates : none;
  const right = rightStates.length ? rightStates : none;
  const rightHashes = new Set(right.map((s) => s.h));
  const parent = left.find((s) => rightHashes.has(s.h)) ?? null;
  const leftChanged = parent !== null && parent.h !== left[0].h;
  const rightChanged = parent !== null && parent.h !== right[0].h;
  let summary: DocStateComparison['summary'] = leftChanged
    ? rightChanged
      ? 'both'
      : 'left'
    : rightChanged
      ? 'right'
      : parent
        ? 'same'
        : 'unrelated';
  if (summary === 'same' && !sameContent()) summary = 'both';
  return {left: left[0], right: right[0], parent, summary};
}

/**
 * The offset in `states` (newest first) of a git-style reference as Grist's HashUtil reads it: a
 * state hash or `HEAD`, then any of `^`, `^1` (the parent) and `~n` (n back). An unknown hash or
 * a reference past the oldest kept state is 400 (Grist: 500 `Cannot read hash`).
 */
export function stateOffset(states: DocState[], ref: string): number {
  const parts = ref.split(/([~^][0-9]*)/);
  const head = parts.shift() ?? '';
  let offset = head === 'HEAD' ? 0 : states.findIndex((s) => s.h === head);
  if (offset < 0) throw new BadRequest('Cannot read hash');
  for (const part of parts) {
    if (part === '^' || part === '^1') offset++;
    else if (part.startsWith('~')) offset += Number.parseInt(part.slice(1) || '1', 10);
    else if (part !== '') throw new BadRequest('cannot parse hash');
  }
  if (!Number.isSafeInteger(offset) || offset >= states.length) throw new BadRequest('Cannot read hash');
  return offset;
}

/**
 * Grist's `GET /compare?left=&right=` within one document: the summary of the actions after `left`
 * up to `right` (`left` must be `right` or before it: 400 otherwise, Grist's message). `maxRows`:
 * cells kept per bulk change (null: all).
 */
export function historyChanges(
  db: Database.Database,
  leftRef: string,
  rightRef: string,
  maxRows: number | null | undefined,
): DocStateComparison {
  const {states} = docStates(db);
  const left = stateOffset(states, leftRef);
  const right = stateOffset(states, rightRef);
  if (right > left) throw new BadRequest('Comparisons currently require left to be an ancestor of right');
  let total = emptySummary();
  const body = db.prepare('SELECT body FROM _gristsys_ActionHistory WHERE actionHash = ?').pluck();
  // Oldest first, one bundle decoded at a time.
  for (const state of states.slice(right, left).reverse()) {
    const raw = body.get(state.h) as Buffer | undefined;
    if (!raw) continue;
    const b = decodeBundle(raw);
    const stored = (Array.isArray(b.stored) ? b.stored : []).map((e) => e[1]);
    total = composeSummaries(
      total,
      summarizeBundle(stored, Array.isArray(b.undo) ? b.undo : [], maxRows === undefined ? 10 : maxRows),
    );
  }
  return {
    left: states[left],
    right: states[right],
    parent: states[left],
    summary: left === right ? 'same' : 'right',
    details: {leftChanges: emptySummary(), rightChanges: total},
  };
}
