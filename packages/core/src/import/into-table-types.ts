/** The types of an import into a table (into-table.ts reads the file, into-table-write.ts writes the rows). */
import type {CellValue} from '../doc/index.js';
import type {ImportFormat, ParseOptions} from './sources.js';

/** How the file's rows meet the table's. */
export type ImportMode = 'append' | 'upsert' | 'replace';
/** The modes of an import into a table. */
export const IMPORT_MODES: readonly ImportMode[] = ['append', 'upsert', 'replace'];

/** What an import into a table is asked to do. */
export interface TableImportOptions {
  /** append (default): add every row; upsert: add-or-update on `keys`; replace: remove every row first. */
  mode?: ImportMode;
  /** upsert: the target columns whose values find a row (as `require` in `PUT /records`). */
  keys?: string[];
  /**
   * Source column (header, or letter where the file has none) -> target column id, or null to
   * skip it. When given it is the whole mapping; otherwise columns are matched by id or label.
   */
  mapping?: Record<string, string | null> | null;
  parseOptions?: ParseOptions;
  /** Answer what would happen, and write nothing. */
  dryRun?: boolean;
}

/** A column's values that did not convert to its type (kept as alt-text, as Grist keeps them). */
export interface ColumnProblems {
  count: number;
  /** The first few: the data row (1 = the first row after the header) and the value kept. */
  examples: Array<{row: number; value: CellValue}>;
}

/** What an import into a table did (or, for a dry run, would do). */
export interface TableImportResult {
  tableId: string;
  dryRun: boolean;
  mode: ImportMode;
  /** Data rows read from the file. */
  rows: number;
  added: number;
  updated: number;
  /** upsert: rows whose key found a row that already held every value. */
  unchanged: number;
  /** replace: rows the table held before. */
  removed: number;
  /** Source column -> target column, as imported. */
  columns: Array<{source: string; target: string}>;
  /** Source columns not imported. */
  skipped: string[];
  /** By target column: values that did not convert to its type. */
  problems: Record<string, ColumnProblems>;
}

/** The uploaded file of an import. */
export interface ImportFile {
  path: string;
  fileName: string;
  format: ImportFormat;
}

/** A source column as it is imported: its target column and that column's type. */
export interface Target {
  source: string;
  index: number;
  colId: string;
  type: string;
  isText: boolean;
}
