/**
 * The shapes a document's API takes and returns (records, tables, columns, queries, writes), in
 * a file of their own so that the modules `GristDoc` uses can name them without importing it.
 */
import type {HistorySettings} from './history/index.js';
import type {BudgetSettings} from '@gristlite/formula';
import type {ReadCache} from './readcache.js';
import type {TableChange, WriteActor} from './changes.js';
import type {WriteOptions} from './storage-source.js';
import type {CellValue} from './types.js';
import type {RowReader} from './guard.js';
import type {WriterRole} from './metarules.js';

/** Filter, sort, limit and form of a record read, as `/records` reads them from the query string. */
export interface RecordQuery {
  /** `{colId: [allowed values]}`; every value list must be an array. */
  filter?: Record<string, unknown> | null;
  /** `"A,-B:naturalSort"` or `["A", "-B"]`. */
  sort?: string | string[];
  /** 0 or undefined: no limit; negative: drop that many rows from the end (Grist's quirk). */
  limit?: number;
  /** Include manualSort and gristHelper_* columns (records form only; /data has them always). */
  hidden?: boolean;
  cellFormat?: 'normal' | 'typed';
  /**
   * Beyond Grist (issue 40 §4, D88): each record gains `display`, the text Grist shows for each
   * cell whose text says more than its value (formatted numbers and dates, references by their
   * shown column, lists, errors).
   */
  display?: boolean;
  /**
   * Beyond Grist: only the rows after this position in the query's order (keyset pagination): the
   * stored values of the last row of the previous page in the columns that order it (`query.ts`
   * sortColumns), by column id.
   */
  after?: Readonly<Record<string, unknown>>;
  /**
   * Beyond Grist (issue 40 §1, docs/queries.md): a condition in Grist's formula language; only the
   * rows for which a formula column holding it would be truthy are read.
   */
  where?: string;
  /** `where` resolved for this read (doc/where/): its rows as a SQL condition. @internal */
  whereSql?: {readonly sql: string; readonly params: readonly unknown[]};
}

/** Where a limited read stopped (`next`: the position after its last row), or null: no rows beyond. */
export interface PageEnd {
  next: Record<string, unknown> | null;
}

/** A record as `/records` answers it: id, fields, and the error type of each error cell. */
export interface ApiRecord {
  id: number;
  fields: Record<string, CellValue>;
  errors?: Record<string, string>;
  /** With `display`: the text Grist shows for cells whose text is not their value as JSON writes it. */
  display?: Record<string, string>;
}

/** A table as `GET /tables` lists it. */
export interface TableInfo {
  id: string;
  fields: {
    tableRef: number;
    primaryViewId: number;
    summarySourceTable: number;
    onDemand: boolean;
    rawViewSectionRef: number;
    recordCardViewSectionRef: number;
  };
}

/** A column as `GET /columns` lists it: id and its metadata fields. */
export interface ColumnInfo {
  id: string;
  fields: Record<string, CellValue>;
}

/** A column to add: an optional id (normalised as Grist does) and metadata fields. */
export interface ColumnSpec {
  id?: string | null;
  fields?: Record<string, CellValue>;
}

/** A table to add: an optional id (normalised as Grist does) and its columns. */
export interface TableSpec {
  id?: string | null;
  columns: ColumnSpec[];
}

/** One add-or-update: the values that find the record (`require`) and those to set (`fields`). */
export interface UpsertRecord {
  require: Record<string, CellValue>;
  fields?: Record<string, CellValue>;
}

/** Options of a write: parsing, and the caller's role (metadata rules; in-process callers default to owners). */
export interface WriteAs extends Partial<WriteOptions> {
  role?: WriterRole;
}

/** Options of add-or-update (`PUT /records`): `onmany`, `noadd`, `noupdate`, `allow_empty_require`. */
export interface UpsertOptions extends WriteAs {
  onmany?: 'first' | 'none' | 'all';
  noadd?: boolean;
  noupdate?: boolean;
  allowEmptyRequire?: boolean;
}

/** Which records an add-or-update found, added and updated. */
export interface UpsertResult {
  recordIds: number[][];
  addRecordIds: number[];
  updateRecordIds: number[][];
}

/** What `/apply` answers: the action's number and hash, each action's return value. */
export interface ApplyResult {
  actionNum: number;
  actionHash: string;
  retValues: unknown[];
  isModification: boolean;
}

/** Options of `GristDoc.open`. */
export interface OpenOptions {
  readonly?: boolean;
  /**
   * Where answers of recent record reads are kept (readcache.ts): the engine shares one, bounded
   * in bytes, between its open documents. Default: one of 8 MB for this document alone.
   * @internal
   */
  readCache?: ReadCache;
  /** Formula budgets over the defaults (`DEFAULT_BUDGET`, 30 s a recalculation): docs/formulas.md. */
  formulaBudget?: Partial<BudgetSettings>;
  /**
   * Bounds of `where` conditions (docs/queries.md): longest text, most rows a write by condition
   * touches, most groups an aggregate answers.
   */
  where?: {maxChars?: number; maxRows?: number; maxGroups?: number; maxMs?: number};
  /** How writes are recorded in the action history (default: recorded, Grist's limits): docs/operations.md. */
  history?: HistorySettings;
}

/**
 * `writeSeq` numbers the write, so that state kept between the two hooks can be matched up;
 * `actor` is who made it (`GristDoc.as`), null for a write made without one.
 */
export type ChangeListener = (change: TableChange & {writeSeq: number; actor: WriteActor | null}) => void;

/** One write as a whole, as `onWrite` listeners see it inside its transaction. */
export interface WriteSummary {
  writeSeq: number;
  actor: WriteActor | null;
  /** Per table touched (metadata tables included), rows added, updated and removed. */
  changes: TableChange[];
  /** Reads rows as the write leaves them (inside its transaction): all columns, or those named. */
  read: RowReader;
}

/**
 * Called inside a write's transaction once it is complete (rows readable as they will commit);
 * the function it may return runs after the COMMIT succeeded, never when the write rolled back.
 */
export type WriteListener = (write: WriteSummary) => (() => void) | undefined;
/**
 * Called inside a write before user rows are updated or removed; `read` reads them as they still
 * are.
 */
export type BeforeRowsListener = (tableId: string, rowIds: number[], writeSeq: number, read: RowReader) => void;
