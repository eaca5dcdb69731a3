/** The engine's public shapes: table and column specs, bulk values, recalc results, options. */
import type {CellValue} from './cells/types.js';
import type {BudgetSettings} from './budget.js';
import type {FormulaLibrary} from './library.js';

/** Grist's recalcWhen values for trigger formulas. */
export const RecalcWhen = {DEFAULT: 0, NEVER: 1, MANUAL_UPDATES: 2} as const;

/** A column as the engine sees it: id, Grist type, and its formula if any. */
export interface ColumnSpec {
  colId: string;
  /** Grist type, e.g. 'Numeric', 'Ref:Customers', 'DateTime:America/New_York'. */
  type: string;
  isFormula: boolean;
  formula: string;
  /** Trigger formulas (data columns with a formula). */
  recalcWhen?: number;
  /** colIds of the same table whose changes recompute a trigger formula (recalcWhen 0). */
  recalcDeps?: string[] | null;
}

/** A table as the engine sees it: id, columns, and for summary tables their source and group-by columns. */
export interface TableSpec {
  tableId: string;
  columns: ColumnSpec[];
  /** Summary tables: the source table; group-by columns are the columns of this table that exist in the source. */
  summarySourceTable?: string | null;
  /** Summary tables: the group-by columns (Grist's summarySourceCol), same colIds as in the source. */
  summaryGroupBy?: string[];
}

/** Column values of a bulk action: colId -> one value per row id. */
export type ColValues = {[colId: string]: CellValue[]};

/** One column's changed cells: row ids and their new values, in the same order. */
export interface ColumnChanges {
  rowIds: number[];
  values: CellValue[];
}

/** What `recalc()` changed. */
export interface RecalcResult {
  /** Changed cells only: tableId -> colId -> row ids and new values. */
  changes: {[tableId: string]: {[colId: string]: ColumnChanges}};
  /** Row ids whose cells changed, per table (sorted), for webhooks and change hooks. */
  rowsChanged: {[tableId: string]: number[]};
  /**
   * The changed cells' values before the recalc, as the engine held them, aligned with each
   * column's `changes` row ids: what a caller keeping previous values (an action history) can take
   * instead of reading them.
   */
  previous: {[tableId: string]: {[colId: string]: CellValue[]}};
  /** Number of formula cells evaluated (for tests and measurements). */
  evaluations: number;
  /** Number of order_by sorts done, not answered from the sort cache (for tests and measurements). */
  sorts: number;
}

/** A function library other than the default one, and evaluation budgets. */
export interface EngineOptions {
  library?: FormulaLibrary;
  budget?: Partial<BudgetSettings>;
}
