/**
 * Beyond Grist (issue 42 §1, D122): the recorded changes to one table, or one record, newest
 * first, one entry per row an action changed, with who, when, and each cell before and after,
 * read through the caller's access rules: a table they cannot read is refused as `/records`
 * refuses it, hidden columns are left out, a row appears only where each of its states (before and
 * after the change, the cells the history does not hold taken from the row as it is now) passes the
 * row rules, and cells those rules censor read `["C"]`. Helper columns (manualSort, display
 * helpers) are left out as `/records` leaves them out. Columns and tables are named as they are
 * now (renames followed back through the history); cells of columns since removed are left out.
 */
import type Database from 'better-sqlite3';
import {BadRequest} from '../../base/index.js';
import type {DocGuard, RowValues} from '../guard.js';
import type {TableMeta} from '../meta.js';
import type {CellValue} from '../types.js';
import {decodeBundle} from './format.js';
import {readRows} from './rows.js';
import {summarizeBundle, type CellSide} from './summary.js';

/** One row changed by one action. */
export interface HistoryEntry {
  actionNum: number;
  actionHash: string;
  /** When, as ISO 8601 (the action's time). */
  time: string;
  /** Who: the email Grist or gristlite recorded ("" when none, `grist` for the document's own actions). */
  user: string;
  rowId: number;
  type: 'add' | 'update' | 'remove';
  /** Per column (its current id): the value before (absent for an added row) and after (absent for a removed one). */
  cells: Record<string, {before?: CellValue; after?: CellValue}>;
}

/** Where a page ended: the action and the row of its last entry. */
export interface HistoryPosition {
  n: number;
  r: number;
}

/** Options of a history read. */
export interface HistoryQuery {
  /** Only this record. */
  rowId?: number;
  /** Entries per page (1 to `MAX_HISTORY_LIMIT`; default `DEFAULT_HISTORY_LIMIT`). */
  limit?: number;
  /** Continue after this position (from the previous page's `next`). */
  after?: HistoryPosition;
}

/** Entries of a history page when `limit` is not given. */
export const DEFAULT_HISTORY_LIMIT = 100;
/** Most entries a history page may ask for (a page is built whole). */
export const MAX_HISTORY_LIMIT = 1000;
const CENSORED: CellValue = ['C'];

interface ChainRow {
  actionNum: number;
  actionHash: string;
  body: Buffer;
}

const unwrap = (side: CellSide): CellValue | undefined => (Array.isArray(side) ? side[0] : undefined);

/** One page of a table's (or a record's) history, and where the next starts (null: none). */
export function tableHistory(
  db: Database.Database,
  guard: DocGuard | null,
  table: TableMeta,
  q: HistoryQuery,
): {changes: HistoryEntry[]; next: HistoryPosition | null} {
  const limit = q.limit ?? DEFAULT_HISTORY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) {
    throw new BadRequest(`limit must be an integer from 1 to ${MAX_HISTORY_LIMIT}`);
  }
  if (q.rowId !== undefined && (!Number.isSafeInteger(q.rowId) || q.rowId < 1)) {
    throw new BadRequest(`Invalid row id ${q.rowId}`);
  }
  // Refuses a table the caller cannot read at all (403, as /records).
  const filter = guard?.readTable(table.tableId) ?? null;
  // As /records: helper columns (manualSort, gristHelper_*) and columns the rules deny left out.
  const visible = (colId: string) => {
    const col = table.byId.get(colId);
    return col !== undefined && !col.hidden && !filter?.hiddenCols.has(colId);
  };
  const chain = db
    .prepare(
      `WITH RECURSIVE actions(id) AS (
         SELECT actionRef FROM _gristsys_ActionHistoryBranch WHERE name = 'local_unsent' AND actionRef IS NOT NULL
         UNION ALL
         SELECT parentRef FROM _gristsys_ActionHistory h, actions WHERE h.id = actions.id AND parentRef IS NOT NULL)
       SELECT h.actionNum, h.actionHash FROM actions JOIN _gristsys_ActionHistory h ON h.id = actions.id
       ORDER BY h.actionNum DESC`,
    )
    .all() as Array<Omit<ChainRow, 'body'>>;
  const body = db.prepare('SELECT body FROM _gristsys_ActionHistory WHERE actionHash = ?').pluck();
  // The table's and its columns' names as of the action being read (followed back through renames).
  let tableName = table.tableId;
  const colNow = new Map(table.columns.map((c) => [c.colId, c.colId])); // name then -> name now
  const current = new Map<number, RowValues>();
  const currentRow = (rowId: number): RowValues | undefined => {
    if (!current.has(rowId)) current.set(rowId, readRows((sql) => db.prepare(sql), table, [rowId])[0]);
    return current.get(rowId);
  };
  const changes: HistoryEntry[] = [];
  for (const link of chain) {
    const raw = body.get(link.actionHash) as Buffer | undefined;
    if (!raw) continue;
    const b = decodeBundle(raw);
    const summary = summarizeBundle(
      (b.stored ?? []).map((e) => e[1]),
      b.undo ?? [],
      null,
    );
    const delta = summary.tableDeltas[tableName];
    // Actions newer than the cursor were on earlier pages: read only for their renames.
    if (delta && (q.after === undefined || link.actionNum <= q.after.n)) {
      const info = b.info?.[1];
      const rows = [...new Set([...delta.addRows, ...delta.updateRows, ...delta.removeRows])]
        .filter((r) => q.rowId === undefined || r === q.rowId)
        .filter((r) => q.after === undefined || link.actionNum < q.after.n || r > q.after.r)
        .sort((x, y) => x - y);
      const added = new Set(delta.addRows);
      const removed = new Set(delta.removeRows);
      for (const rowId of rows) {
        const cells: HistoryEntry['cells'] = {};
        const before: RowValues = {};
        const after: RowValues = {};
        for (const [colThen, perRow] of Object.entries(delta.columnDeltas)) {
          const cell = perRow[rowId];
          const col = colNow.get(colThen);
          if (!cell || !col || !visible(col)) continue;
          const was = unwrap(cell[0]);
          const is = unwrap(cell[1]);
          if (was !== undefined) before[col] = was;
          if (is !== undefined) after[col] = is;
          cells[col] = {...(was !== undefined ? {before: was} : {}), ...(is !== undefined ? {after: is} : {})};
        }
        const type =
          added.has(rowId) && !removed.has(rowId)
            ? 'add'
            : removed.has(rowId) && !added.has(rowId)
              ? 'remove'
              : 'update';
        if (filter?.row) {
          const now = currentRow(rowId) ?? {};
          const states = [
            ...(type !== 'add' ? [{...now, ...before}] : []),
            ...(type !== 'remove' ? [{...now, ...after}] : []),
          ];
          let hidden = false;
          const censored = new Set<string>();
          for (const state of states) {
            const verdict = filter.row({...state, id: rowId});
            if (verdict === null) hidden = true;
            else for (const c of verdict) censored.add(c);
          }
          if (hidden) continue;
          for (const c of censored) {
            if (!cells[c]) continue;
            cells[c] = {
              ...('before' in cells[c] ? {before: CENSORED} : {}),
              ...('after' in cells[c] ? {after: CENSORED} : {}),
            };
          }
        }
        changes.push({
          actionNum: link.actionNum,
          actionHash: link.actionHash,
          time: new Date(typeof info?.time === 'number' ? info.time : 0).toISOString(),
          user: typeof info?.user === 'string' ? info.user : '',
          rowId,
          type,
          cells,
        });
        if (changes.length === limit) return {changes, next: {n: link.actionNum, r: rowId}};
      }
    }
    // Older actions name the table and columns as they were before this one's renames.
    const renamed = summary.tableRenames.find(([, to]) => to === tableName);
    if (renamed) {
      if (renamed[0] === null) break; // The table was added here: older actions are about another.
      tableName = renamed[0];
    }
    const cols = delta?.columnRenames ?? [];
    for (const [from, to] of cols) {
      if (to === null) continue;
      const now = colNow.get(to);
      colNow.delete(to);
      if (now !== undefined && from !== null) colNow.set(from, now);
    }
  }
  return {changes, next: null};
}
