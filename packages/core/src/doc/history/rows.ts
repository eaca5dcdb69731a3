/** Rows and cells as the history records them: read by id, grouped by what changed, compared. */
import type Database from 'better-sqlite3';
import {quoteIdent} from '../identifiers.js';
import type {TableMeta} from '../meta.js';
import type {CellValue} from '../types.js';

/** Rows by id, decoded with their columns' decoders (all columns, or `colIds`), in the order of `ids`. */
export function readRows(
  prepare: (sql: string) => Database.Statement,
  table: TableMeta,
  ids: readonly number[],
  colIds?: readonly string[],
): Array<Record<string, CellValue>> {
  const cols = (colIds ?? table.columns.map((c) => c.colId)).filter((c) => table.byId.has(c));
  const select = ['id', ...cols].map(quoteIdent).join(', ');
  // Ascending consecutive ids (rows just added) are a range; others a list.
  const range = ids.length > 1 && ids.every((id, i) => i === 0 || id === ids[i - 1] + 1);
  const from = quoteIdent(table.tableId);
  const raw = (
    range
      ? prepare(`SELECT ${select} FROM ${from} WHERE id BETWEEN ? AND ?`)
          .raw(true)
          .all(ids[0], ids[ids.length - 1])
      : prepare(`SELECT ${select} FROM ${from} WHERE id IN (SELECT value FROM json_each(?))`)
          .raw(true)
          .all(JSON.stringify(ids))
  ) as unknown[][];
  const decoders = cols.map((c) => table.byId.get(c)!.decode);
  const byId = new Map<number, Record<string, CellValue>>();
  for (const r of raw) {
    const row: Record<string, CellValue> = {id: r[0] as number};
    for (let j = 0; j < cols.length; j++) row[cols[j]] = decoders[j](r[j + 1] as never) as CellValue;
    byId.set(r[0] as number, row);
  }
  return ids.map((id) => byId.get(id)).filter((r): r is Record<string, CellValue> => r !== undefined);
}

/**
 * Columns grouped by the rows whose cells `changed` (in row order): one entry per distinct set of
 * rows, its columns in the order given.
 */
export function groupChanged(
  colIds: readonly string[],
  rows: Array<Record<string, CellValue>>,
  changed: (row: Record<string, CellValue>, colId: string, index: number) => boolean,
): Array<[Set<number>, string[]]> {
  const groups = new Map<string, [Set<number>, string[]]>();
  for (const c of colIds) {
    const ids: number[] = [];
    rows.forEach((r, i) => {
      if (changed(r, c, i)) ids.push(r.id as number);
    });
    if (!ids.length) continue;
    const key = ids.join(',');
    const g = groups.get(key);
    if (g) g[1].push(c);
    else groups.set(key, [new Set(ids), [c]]);
  }
  return [...groups.values()];
}

/** The cells of `rows` as bulk column values, for the columns `cols`. */
export function columnsOf(
  cols: readonly string[],
  rows: Array<Record<string, CellValue>>,
): Record<string, CellValue[]> {
  const out: Record<string, CellValue[]> = {};
  for (const c of cols) out[c] = rows.map((r) => r[c] ?? null);
  return out;
}

/** Whether two cells hold the same value (lists and objects compared by their JSON). */
export function sameCell(a: CellValue | undefined, b: CellValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
