/**
 * The history of updates of many rows, kept in columns end to end (D146): the new cells handed over
 * by the writer or read column by column, the old ones from the snapshot's columns, compared column
 * by column, making the same BulkUpdateRecord actions and undo as the row-wise path in recorder.ts.
 */
import type Database from 'better-sqlite3';
import type {TableChange} from '../changes.js';
import type {ColumnMeta, DocMeta, TableMeta} from '../meta.js';
import {affinityOf, type CellValue} from '../types.js';
import type {DocActionTuple} from './format.js';
import {groupChangedAt, readColumns, sameCell} from './rows.js';
import {MISSING, type Snapshot} from './snapshot.js';

/** Cells a write stored in one column (as bound to SQLite), for rows `ids`, at a schema version. */
export interface HandedCells {
  ids: readonly number[];
  cells: readonly unknown[];
  version: number;
}

/**
 * Cells the current write stored in a column of many rows (a recalc's, a bulk update's), as bound
 * to SQLite, per table and column: the bundle takes them rather than reading them back (reading a
 * 100k-row column back was ~15% of adding a formula column). A column's cells are forgotten when
 * rows of its table are captured for a change of that column (or of whole rows) after, or rows
 * are inserted into the table; they are used only at the schema version they were stored at.
 */
export class HandedOver {
  private readonly byTable = new Map<string, Map<string, HandedCells>>();

  /** Called after rows `ids` of a column were set to `cells` (as bound), at schema `version`. */
  set(version: number, tableId: string, colId: string, ids: readonly number[], cells: readonly unknown[]): void {
    let cols = this.byTable.get(tableId);
    if (!cols) {
      cols = new Map();
      this.byTable.set(tableId, cols);
    }
    cols.set(colId, {ids, cells, version});
  }

  /** Cells of these columns (of every column: `colIds` undefined) may be written over now. */
  forget(tableId: string, colIds?: readonly string[]): void {
    const cols = this.byTable.get(tableId);
    if (cols && colIds) for (const c of colIds) cols.delete(c);
    else if (cols) this.byTable.delete(tableId);
  }

  /** The cells kept for a table's columns, by column id. */
  of(tableId: string): ReadonlyMap<string, HandedCells> | undefined {
    return this.byTable.get(tableId);
  }

  /** Forgets every table's (a write starts or ended). */
  clear(): void {
    this.byTable.clear();
  }
}

/**
 * The BulkUpdateRecord actions (and their undo) of the rows `change` updated: only the cells that
 * changed, an action per set of rows, as Grist's engine leaves unchanged cells out. The new cells
 * are those handed over where they are the file's (`cellsNow`), else read.
 */
export function updatesAsColumns(
  table: TableMeta,
  snap: Snapshot | undefined,
  change: TableChange,
  handed: HandedOver,
  version: number,
  prepare: (sql: string) => Database.Statement,
  push: (a: DocActionTuple, ...inverses: Array<DocActionTuple | null>) => void,
): void {
  const colIds = (change.columns ?? table.columns.map((c) => c.colId)).filter((c) => table.byId.has(c));
  if (!colIds.length) return;
  const sorted = change.updated.slice().sort((a, b) => a - b);
  const {ids, cells: news} = cellsNow(table, sorted, colIds, handed.of(table.tableId), version, prepare);
  const n = ids.length;
  const {held, cells: olds} = snap ? snap.columns(ids, colIds) : {held: new Uint8Array(n), cells: null};
  // As the row-wise path: a row never captured counts as changed; a row captured without a
  // column was not changed in it (every change captures its columns first).
  const groups = groupChangedAt(colIds, n, (j, i) => {
    if (held && !held[i]) return true;
    const old = olds![j][i];
    return old !== MISSING && !sameCell(news[j][i], old);
  });
  // Every row: the arrays as they are (a column is in one group; `news` and `ids` are this call's own).
  const pick = <T>(column: readonly T[], at: number[] | null): readonly T[] => (at ? at.map((i) => column[i]) : column);
  for (const [at, cols] of groups) {
    // Every row (a formula column recomputed whole): no selection to make.
    const sel = at.length === n ? null : at;
    const rowIds = pick(ids, sel) as number[];
    const newCells: Record<string, CellValue[]> = {};
    const oldCells: Record<string, CellValue[]> = {};
    const undoable = !held || (sel ? sel.every((i) => held[i]) : held.every(Boolean));
    for (const c of cols) {
      const j = colIds.indexOf(c);
      newCells[c] = nullish(pick(news[j], sel));
      // A row in a group was captured with the group's columns: no MISSING among these.
      if (undoable) oldCells[c] = nullish(pick(olds![j], sel) as CellValue[]);
    }
    push(
      ['BulkUpdateRecord', table.tableId, rowIds, newCells],
      undoable ? ['BulkUpdateRecord', table.tableId, rowIds, oldCells] : null,
    );
  }
}

/**
 * The cells of `ids` (ascending) for `colIds` as the file holds them now, and the rows found: from
 * what the writer handed over (`handed`, by column) where that covers exactly these rows, at this
 * schema `version`, and is what SQLite returns for it; else read.
 */
export function cellsNow(
  table: TableMeta,
  ids: number[],
  colIds: string[],
  handed: ReadonlyMap<string, HandedCells> | undefined,
  version: number,
  prepare: (sql: string) => Database.Statement,
): {ids: number[]; cells: CellValue[][]} {
  const cells: Array<CellValue[] | null> = colIds.map((c) => {
    const w = handed?.get(c);
    if (!w || w.version !== version || w.ids.length !== ids.length) return null;
    for (let i = 0; i < ids.length; i++) if (w.ids[i] !== ids[i]) return null;
    return asRead(table.byId.get(c)!, w.cells);
  });
  const toRead = colIds.filter((_, j) => cells[j] === null);
  if (!toRead.length) return {ids, cells: cells as CellValue[][]};
  const read = readColumns(prepare, table, ids, toRead);
  if (read.ids.length !== ids.length) {
    // Rows gone since (handed cells are forgotten then): every column read, for the rows found.
    return {
      ids: read.ids,
      cells: toRead.length === colIds.length ? read.cells : readColumns(prepare, table, ids, colIds).cells,
    };
  }
  let k = 0;
  return {ids, cells: cells.map((c) => c ?? read.cells[k++])};
}

/** Cells with `undefined` as null (as `columnsOf` gives them): `cells` itself when none is. */
function nullish(cells: ReadonlyArray<CellValue | undefined>): CellValue[] {
  return (cells.includes(undefined) ? cells.map((v) => v ?? null) : cells) as CellValue[];
}

/**
 * Cells as bound to SQLite, decoded as a read of them gives them; null when SQLite may store one
 * otherwise than bound (the column's declared affinity converts it: a file whose declared types
 * are not its columns' types'), so that the column is read instead.
 */
export function asRead(col: ColumnMeta, bound: readonly unknown[]): CellValue[] | null {
  const affinity = affinityOf(col.declType);
  const numeric = affinity === 'INTEGER' || affinity === 'NUMERIC' || affinity === 'REAL';
  const out = new Array<CellValue>(bound.length);
  for (let i = 0; i < bound.length; i++) {
    let v = bound[i];
    switch (typeof v) {
      case 'number':
        // TEXT stores a number as text; NaN is stored as NULL; -0 may come back as 0 (REAL
        // affinity writes integral values as integers).
        if (affinity === 'TEXT' || Number.isNaN(v) || Object.is(v, -0)) return null;
        break;
      case 'bigint':
        // Read back as a number (the connection does not use safe integers).
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) return null;
        v = Number(v);
        break;
      case 'string':
        // A numeric affinity stores a text that reads as a number as that number.
        if (numeric) return null;
        break;
      case 'object':
        if (v !== null && !(v instanceof Uint8Array)) return null;
        break;
      default:
        return null;
    }
    out[i] = col.decode(v as never) as CellValue;
  }
  return out;
}

/**
 * The cells of formula columns `colIds` for rows `ids` (ascending), given as the formula engine
 * holds them (`cells[j][i]`), as a read of the file would give them: the engine's values are what
 * it read from the file or what the recalc wrote there (its encoding of them), so each is encoded
 * and decoded as `asRead` does. Null, to read instead, for a column that is not a formula's (data
 * columns are written by others too), for an error cell (the file keeps a recomputed error as it
 * was, `writeRecalc`), and where `asRead` refuses.
 */
export function engineCells(
  table: TableMeta,
  colIds: readonly string[],
  ids: readonly number[],
  cells: ReadonlyArray<readonly CellValue[]>,
): CellValue[][] | null {
  if (cells.length !== colIds.length) return null;
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return null;
  const out: CellValue[][] = [];
  for (let j = 0; j < colIds.length; j++) {
    const col = table.byId.get(colIds[j]);
    const given = cells[j];
    if (!col?.isFormula || col.formula === '' || given.length !== ids.length) return null;
    const bound = new Array<unknown>(given.length);
    for (let i = 0; i < given.length; i++) {
      const v = given[i];
      if (Array.isArray(v) && v[0] === 'E') return null;
      bound[i] = col.encode(v);
    }
    const read = asRead(col, bound);
    if (!read) return null;
    out.push(read);
  }
  return out;
}

/** What an insert of many rows stored (recorder.ts `insertedRows`). */
export interface InsertedRows {
  ids: readonly number[];
  cols: readonly string[];
  values: readonly CellValue[][];
  version: number;
}

/**
 * The added rows' BulkAddRecord cells from what the insert stored (`ins`), when that is the whole
 * story: one insert of exactly these rows, in ascending order, nothing else touching the table, the
 * schema unchanged since, and no formula column (whose results come after). Else null.
 */
export function insertedAsStored(
  ins: InsertedRows | undefined,
  meta: DocMeta,
  table: TableMeta,
  added: readonly number[],
): {ids: number[]; cells: Record<string, CellValue[]>} | null {
  if (!ins || ins.version !== meta.version || ins.ids.length !== added.length) return null;
  if (table.columns.some((c) => c.isFormula && c.formula !== '')) return null;
  const ids = added.slice().sort((a, b) => a - b);
  for (let i = 0; i < ids.length; i++) if (ins.ids[i] !== ids[i]) return null;
  const cells: Record<string, CellValue[]> = {};
  // As the read-back path: manualSort, and the columns given that hold anything but their default.
  const order = table.columns.map((c) => c.colId).filter((c) => ins.cols.includes(c));
  for (const colId of order) {
    const col = table.byId.get(colId)!;
    const values = ins.values[ins.cols.indexOf(colId)];
    if (colId === 'manualSort' || values.some((v) => !sameCell(v, col.ct.defaultValue))) cells[colId] = values.slice();
  }
  return {ids, cells};
}
