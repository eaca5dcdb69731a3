/** Rows and cells as the history records them: read by id, grouped by what changed, compared. */
import type Database from 'better-sqlite3';
import {quoteIdent} from '../identifiers.js';
import type {TableMeta} from '../meta.js';
import type {CellValue} from '../types.js';

/**
 * Above this many rows, a read goes column by column: better-sqlite3 builds an array per row of a
 * multi-column result, and 100k of them took 150-350 ms where the same cells plucked one column
 * at a time took 20-80 ms (one 100k-row formula column's history, measured).
 */
export const COLUMNAR_ROWS = 2000;

/** Rows by id, decoded with their columns' decoders (all columns, or `colIds`), in the order of `ids`. */
export function readRows(
  prepare: (sql: string) => Database.Statement,
  table: TableMeta,
  ids: readonly number[],
  colIds?: readonly string[],
): Array<Record<string, CellValue>> {
  const cols = (colIds ?? table.columns.map((c) => c.colId)).filter((c) => table.byId.has(c));
  // Ascending consecutive ids (rows just added, or one row: a one-cell write's) are a range; others
  // a list (a `json_each` of one id took longer than the rest of the read).
  const range = ids.length > 0 && ids.every((id, i) => i === 0 || id === ids[i - 1] + 1);
  const from = quoteIdent(table.tableId);
  const decoders = cols.map((c) => table.byId.get(c)!.decode);
  const byId = new Map<number, Record<string, CellValue>>();
  if (ids.length > COLUMNAR_ROWS) {
    const read = readColumns(prepare, table, ids, cols);
    const rows: Array<Record<string, CellValue>> = new Array(read.ids.length);
    for (let i = 0; i < rows.length; i++) rows[i] = {id: read.ids[i]};
    for (let j = 0; j < cols.length; j++) {
      const colId = cols[j];
      const cells = read.cells[j];
      for (let i = 0; i < rows.length; i++) rows[i][colId] = cells[i];
    }
    if (read.ascending) return rows;
    for (const row of rows) byId.set(row.id as number, row);
  } else {
    const select = ['id', ...cols].map(quoteIdent).join(', ');
    const raw = (
      range
        ? prepare(`SELECT ${select} FROM ${from} WHERE id BETWEEN ? AND ?`)
            .raw(true)
            .all(ids[0], ids[ids.length - 1])
        : prepare(`SELECT ${select} FROM ${from} WHERE id IN (SELECT value FROM json_each(?))`)
            .raw(true)
            .all(JSON.stringify(ids))
    ) as unknown[][];
    for (const r of raw) {
      const row: Record<string, CellValue> = {id: r[0] as number};
      for (let j = 0; j < cols.length; j++) row[cols[j]] = decoders[j](r[j + 1] as never) as CellValue;
      byId.set(r[0] as number, row);
    }
  }
  return ids.map((id) => byId.get(id)).filter((r): r is Record<string, CellValue> => r !== undefined);
}

/**
 * The cells of `ids` column by column (of `cols`, all known to `table`), decoded: the rows found,
 * in ascending id order, and one array per column. `ascending`: whether `ids` was (then the rows
 * found are `ids` less any missing).
 */
export function readColumns(
  prepare: (sql: string) => Database.Statement,
  table: TableMeta,
  ids: readonly number[],
  cols: readonly string[],
): {ids: number[]; cells: CellValue[][]; ascending: boolean} {
  const from = quoteIdent(table.tableId);
  // Ascending ids covering most of their range (a formula's changed cells): the range read
  // and filtered here, faster than SQLite's lookup of each id in a 100k-id json_each list.
  let lo = Infinity;
  let hi = -Infinity;
  let ascending = true;
  let range = ids.length > 0;
  for (let i = 0; i < ids.length; i++) {
    if (i && ids[i] <= ids[i - 1]) ascending = false;
    if (i && ids[i] !== ids[i - 1] + 1) range = false;
    if (ids[i] < lo) lo = ids[i];
    if (ids[i] > hi) hi = ids[i];
  }
  const asRange = range || (ascending && ids.length * 2 >= hi - lo + 1);
  const where = asRange ? 'id BETWEEN ? AND ?' : 'id IN (SELECT value FROM json_each(?))';
  const params = asRange ? [lo, hi] : [JSON.stringify(ids)];
  const found = prepare(`SELECT id FROM ${from} WHERE ${where} ORDER BY id`)
    .pluck()
    .all(...params) as number[];
  let keep: Uint8Array | null = null;
  if (asRange && !range) {
    keep = new Uint8Array(hi - lo + 1);
    for (const id of ids) keep[id - lo] = 1;
  }
  const kept: number[] = [];
  const slots: number[] = [];
  for (let i = 0; i < found.length; i++) {
    if (keep && !keep[found[i] - lo]) continue;
    kept.push(found[i]);
    slots.push(i);
  }
  const whole = slots.length === found.length;
  const cells = cols.map((colId) => {
    const raw = prepare(`SELECT ${quoteIdent(colId)} FROM ${from} WHERE ${where} ORDER BY id`)
      .pluck()
      .all(...params) as unknown[];
    const decode = table.byId.get(colId)!.decode;
    const out = new Array<CellValue>(kept.length);
    for (let i = 0; i < kept.length; i++) out[i] = decode((whole ? raw[i] : raw[slots[i]]) as never) as CellValue;
    return out;
  });
  return {ids: kept, cells, ascending};
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
  return groupChangedAt(colIds, rows.length, (j, i) => changed(rows[i], colIds[j], i)).map(([at, cols]) => [
    new Set(at.map((i) => rows[i].id as number)),
    cols,
  ]);
}

/**
 * `groupChanged` over `n` rows held as columns: each group's row positions (ascending) and its
 * columns. `changed(j, i)`: whether row `i`'s cell of column `colIds[j]` changed.
 */
export function groupChangedAt(
  colIds: readonly string[],
  n: number,
  changed: (col: number, index: number) => boolean,
): Array<[number[], string[]]> {
  // Columns whose changed rows are the same list share a group (in the order groups first appear):
  // compared as lists, found by count and ends (joining 99,900 of 100k ids into a key made a
  // 700 kB string per column).
  const groups: Array<[number[], string[]]> = [];
  const byKey = new Map<string, number[]>();
  for (let j = 0; j < colIds.length; j++) {
    const c = colIds[j];
    const at: number[] = [];
    for (let i = 0; i < n; i++) if (changed(j, i)) at.push(i);
    if (!at.length) continue;
    const key = `${at.length}:${at[0]}:${at[at.length - 1]}`;
    const candidates = byKey.get(key) ?? [];
    const same = candidates.find((g) => groups[g][0].every((p, i) => p === at[i]));
    if (same !== undefined) {
      groups[same][1].push(c);
    } else {
      candidates.push(groups.push([at, [c]]) - 1);
      byKey.set(key, candidates);
    }
  }
  return groups;
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
