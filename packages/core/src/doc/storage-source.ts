/**
 * What the parts of `DocStorage` (storage.ts) need of it: its connection, metadata, hooks and
 * metadata-table operations, as one source interface that `DocStorage` builds of itself and hands
 * to each part (records, tables, columns, renames). Also the types and constants they share. The
 * parts import no class of storage.ts, so imports point one way: storage.ts -> parts -> this file.
 */
import type Database from 'better-sqlite3';
import type {FormulaEngine} from '@gristlite/formula';
import type {Rename} from '@gristlite/formula';
import type {BeforeRowsHook, CellsHook, ChangeSet} from './changes.js';
import type {ColumnClasses} from './colstats.js';
import type {DocGuard} from './guard.js';
import type {ColumnMeta, DocMeta, TableMeta} from './meta.js';
import type {CellValue} from './types.js';

/** Column properties accepted by AddTable / AddColumn. */
export interface ColInfo {
  type?: string;
  isFormula?: boolean;
  formula?: string;
  label?: string;
  widgetOptions?: string;
  [field: string]: CellValue | undefined;
}

export interface AddTableResult {
  id: number;
  table_id: string;
  columns: string[];
  views?: Array<{id: number; sections: number[]}>;
}

/** How AddTable makes a table: with a primary view (page), or as a summary of a source table. */
export interface AddTableOptions {
  primaryView: boolean;
  /** A summary table of this source table: no manualSort, no record card, an untitled raw section. */
  summarySourceTable?: number;
}

export interface WriteOptions {
  /** Parse strings by column type and format (false = Grist's `noparse`). */
  parse: boolean;
}

/**
 * Columns a table may hold, id and manualSort included: SQLite's SQLITE_MAX_COLUMN (2000), which
 * bounds Grist's own documents too ("too many columns on ..." beyond it).
 */
export const MAX_TABLE_COLUMNS = 2000;
/** Columns of one table dropped with DROP COLUMN each; more are dropped by one copy of the table. */
export const DROP_ONE_BY_ONE = 4;
const CHUNK = 500;

export function chunks<T>(arr: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < arr.length; i += size) {
    out.push(arr.slice(i, i + size));
  }
  return out;
}

/** The column ids of RefList metadata values, e.g. `["L", 2, 3]` or JSON text. */
export function refListIds(v: CellValue): number[] {
  if (Array.isArray(v) && v[0] === 'L') {
    return v.slice(1).filter((x): x is number => typeof x === 'number');
  }
  return [];
}

/** Rows of the `_grist_*` metadata tables (storage.ts), written with the change set and formula engine in step. */
export interface MetaTables {
  readonly meta: DocMeta;
  /** The next free position (`parentPos`, `tabPos`, `pagePos`) in a metadata table. */
  nextPos(tableId: string, colId: string): number;
  metaAdd(tableId: string, rows: Array<Record<string, CellValue>>): number[];
  metaUpdate(tableId: string, id: number, values: Record<string, CellValue>): void;
  metaRemove(tableId: string, ids: number[]): void;
  metaRows(tableId: string): Array<Record<string, CellValue>>;
}

/** Called after rows are inserted: their ids, and per column given, their cells in that order. */
export type InsertHook = (
  tableId: string,
  ids: readonly number[],
  cols: readonly string[],
  values: readonly CellValue[][],
) => void;

/**
 * Called before user columns are dropped (`colIds`), or a whole table (`colIds` null), while the
 * metadata still describes them: the action history keeps their cells for undo (D124).
 */
export type DropHook = (tableId: string, colIds: readonly string[] | null) => void;

/** Called after a user column was added to a table (its cells all hold the type's default). */
export type AddColumnHook = (tableId: string, colRef: number) => void;

/** What every part of `DocStorage` reads and writes of it (the fields keep their meaning there). */
export interface StorageSource extends MetaTables {
  readonly db: Database.Database;
  readonly classes: ColumnClasses;
  readonly guard: DocGuard | null;
  readonly beforeRows: BeforeRowsHook | null;
  /** Told of the rows an insert wrote, with the cells as stored (the action history keeps them: D120). */
  readonly afterInsert: InsertHook | null;
  readonly beforeDrop: DropHook | null;
  readonly afterAddColumn: AddColumnHook | null;
  readonly afterCells: CellsHook | null;
  readonly formulas: FormulaEngine | null;
  /** The change set of the current write (throws outside of one). */
  changeSet(): ChangeSet;
  /** A prepared statement, reused while the metadata stays the same. */
  stmt(sql: string): Database.Statement;
  /** Forgets the prepared statements (a table's SQL schema changed). */
  clearStatements(): void;
  /** Reads the formula engine's lazy columns before a table's SQL columns are renamed or dropped. */
  settleFormulaData(): void;
  reloadMeta(): void;
  getTable(tableId: string): TableMeta;
  getColumn(table: TableMeta, colId: string): ColumnMeta;
  /** The highest row id of a table (0 when it is empty). */
  maxId(tableId: string): number;
}

/** What record writes need besides (storage-records.ts): column changes of a column that takes data. */
export interface RecordsSource extends StorageSource {
  updateColumns(table: TableMeta, updates: Array<{colId: string; values: Record<string, CellValue>}>): void;
  columnValues(table: TableMeta, col: ColumnMeta): Array<[number, CellValue, unknown]>;
}

/** What table operations need besides (storage-tables.ts). */
export interface TablesSource extends StorageSource {
  formulaEdits(rename: Rename): Map<number, string>;
  removeColumns(colRefs: number[]): void;
  updateColumns(table: TableMeta, updates: Array<{colId: string; values: Record<string, CellValue>}>): void;
  columnValues(table: TableMeta, col: ColumnMeta): Array<[number, CellValue, unknown]>;
  updateRecords(table: TableMeta, rowIds: number[], colValues: Map<string, CellValue[]>, opts: WriteOptions): void;
}

/** What column operations need besides (storage-columns.ts). */
export interface ColumnsSource extends StorageSource {
  /** Columns added by addColumn in the current write. */
  columnsAdded: number;
  /** Set when metadata the formula engine does not follow changed. */
  formulasStale: boolean;
  renameSqlColumn(table: TableMeta, from: string, to: string, batch?: Map<string, string> | null): void;
}
