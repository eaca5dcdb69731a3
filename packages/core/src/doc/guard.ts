/**
 * What a document's reads and writes ask of access rules, as interfaces, so that `doc/` does not
 * depend on how rules are evaluated (`access/rules/` implements them). A `GristDoc` seen through
 * a guard (`GristDoc.as(guard)`) filters what it reads and checks what it writes, inside the
 * write's transaction.
 */
import type {CellValue} from './types.js';

/** A row's cells by column id (stored values decoded, lists as Grist encodes them). */
export type RowValues = Record<string, CellValue>;

/**
 * Reads rows by id inside the current transaction (what a write guard compares): the columns
 * named, or every column.
 */
export type RowReader = (
  tableId: string,
  ids: readonly number[],
  cols?: ReadonlySet<string> | null,
) => Map<number, RowValues>;

/** What a write check may read of the document, inside the write's transaction. */
export interface WriteRows {
  read: RowReader;
  /** A column's Grist type and whether it is a formula (undefined: no such column). */
  column(tableId: string, colId: string): {type: string; isFormula: boolean} | undefined;
  /** Whether any of these rows fails a SQL condition over the table (access/rules/sql.ts). */
  anyOutside(tableId: string, ids: readonly number[], cond: {sql: string; params: unknown[]}): boolean;
}

/** How one table reads for this user. */
export interface TableReadFilter {
  /** Columns left out entirely (denied for every row). */
  hiddenCols: ReadonlySet<string>;
  /**
   * Per row, when rules depend on rows: null drops the row, else the columns whose cells read
   * as `["C"]` (censored). Absent when every row reads alike.
   */
  row?: (row: RowValues & {id: number}) => ReadonlySet<string> | null;
  /** Columns whose cells `row` may censor (hidden in some rows). */
  censoredCols?: ReadonlySet<string>;
  /**
   * The rows that may be read, as a WHERE clause over the table, when rules allow it (then `row`
   * is absent and no cell is censored).
   */
  sql?: {sql: string; params: unknown[]};
}

/** The access-rules stage of a document's read and write pipelines (implemented by `AccessContext`). */
export interface DocGuard {
  /**
   * The read filter of a table; throws (403) when the table cannot be read at all. With
   * `colType` (a column's Grist type), row rules may come back as SQL.
   */
  readTable(tableId: string, colType?: (colId: string) => string | undefined): TableReadFilter;
  /** Throws (403, with memos) unless every row and column of a table reads in full (add-or-update needs it). */
  requireWholeRead(tableId: string): void;
  /** Whether a table is listed (`/tables`, exports); a hidden one is as if absent. */
  tableVisible(tableId: string): boolean;
  /** Whether the user may read metadata about the rules themselves (`_grist_ACL*` tables). */
  canReadRules(): boolean;
  /** Whether every table, column and row reads in full for the user. */
  canReadEverything(): boolean;
  /** A write begins: the document can be read through `rows` until it ends. */
  beginWrite(rows: WriteRows): void;
  /** Rows about to be updated (their old values still readable) with the columns given. */
  updating(tableId: string, ids: readonly number[], colIds: readonly string[]): void;
  /** Rows about to be removed. */
  removing(tableId: string, ids: readonly number[]): void;
  /** Rows just added, with the columns given. */
  added(tableId: string, ids: readonly number[], colIds: readonly string[]): void;
  /**
   * After the write's actions and recalculation, still inside its transaction: throws (403) to
   * refuse the whole write; `schemaTouched` names the metadata tables it changed directly, and
   * `formulas` says the write may change column formulas (Grist's "full structure" check).
   */
  finishWrite(schemaTouched: readonly string[], formulas?: boolean): void;
  /** The write ended (committed or rolled back). */
  endWrite(): void;
}
