/**
 * Grist's user actions as TypeScript types, for callers that build them (`DocTransaction.apply`).
 * The document checks every action whatever its type says; these only let a compiler catch a
 * misspelt name or a misplaced argument. Grist's reference: its `useractions.py` signatures.
 */
import type {CellValue} from './types.js';

/** A row id, or null to let the document pick one (negative ids name rows added earlier in the bundle). */
export type ActionRowId = number | null;
/** Cells of one row, by column id. */
export type ActionColValues = Record<string, CellValue>;
/** Cells of several rows, by column id (one list per column, in row order). */
export type ActionBulkColValues = Record<string, CellValue[]>;
/** A column's fields as `AddColumn` and `ModifyColumn` take them (`type`, `isFormula`, `formula`, `label`, `widgetOptions`, ...). */
export type ActionColInfo = Record<string, CellValue | undefined>;
/** Options of `AddOrUpdateRecord` (`on_many`, `update`, `add`, `allow_empty_require`). */
export interface ActionUpsertOptions {
  on_many?: 'first' | 'none' | 'all';
  update?: boolean;
  add?: boolean;
  allow_empty_require?: boolean;
}

/** One of the user actions gristlite applies (`POST /apply` accepts the same, untyped). */
export type UserAction =
  | ['AddRecord', string, ActionRowId, ActionColValues]
  | ['BulkAddRecord', string, ActionRowId[], ActionBulkColValues]
  | ['ReplaceTableData', string, number[], ActionBulkColValues]
  | ['UpdateRecord', string, number, ActionColValues]
  | ['BulkUpdateRecord', string, number[], ActionBulkColValues]
  | ['RemoveRecord', string, number]
  | ['BulkRemoveRecord', string, number[]]
  | ['AddOrUpdateRecord', string, ActionColValues, ActionColValues, ActionUpsertOptions?]
  | ['BulkAddOrUpdateRecord', string, ActionBulkColValues, ActionBulkColValues, ActionUpsertOptions?]
  | ['AddTable', string, Array<ActionColInfo & {id: string}>]
  | ['AddEmptyTable', string | null]
  | ['RemoveTable', string]
  | ['RenameTable', string, string]
  | ['AddColumn', string, string | null, ActionColInfo]
  | ['AddVisibleColumn', string, string | null, ActionColInfo]
  | ['AddHiddenColumn', string, string | null, ActionColInfo]
  | ['RemoveColumn', string, string]
  | ['RenameColumn', string, string, string]
  | ['ModifyColumn', string, string, ActionColInfo]
  | ['SetDisplayFormula', string, number | null, number | null, string];
