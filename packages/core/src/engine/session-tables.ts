/**
 * Typed rows and transactions for embedders (issue 23 §2). `SessionDoc.table<Task>('Tasks')` is a
 * table whose records carry `Task` fields, as Kysely types tables; `SessionDoc.transaction(fn)`
 * runs `fn` synchronously inside one SQLite transaction with a `DocTransaction`, whose methods are
 * the record calls of `SessionDoc` without `await` (the document is synchronous; better-sqlite3
 * does the same). Types are a compile-time promise only: the document checks every value.
 */
import type {UserAction} from '../doc/action-types.js';
import type {ApiRecord, ApplyResult, RecordQuery, UpsertOptions, UpsertResult} from '../doc/api-types.js';
import {checkRecords} from '../doc/bodies.js';
import type {GristDoc} from '../doc/gristdoc.js';
import type {CellValue} from '../doc/types.js';

/** Row fields as an interface of cell values (`interface Task {Title: string; Hours: number}`). */
export type RowShape<R> = {[K in keyof R]: CellValue};

/** A record of a typed table. */
export interface TypedRecord<R> {
  id: number;
  fields: R;
}

/** Add-or-update of a typed table: `require` finds the record, `fields` are set. */
export interface TypedUpsert<R> {
  require: Partial<R>;
  fields?: Partial<R>;
}

/** A table of a document, its records typed `R` (`SessionDoc.table`). */
export interface DocTable<R extends RowShape<R>> {
  readonly tableId: string;
  /** Records, as `GET /records` (filter, sort, limit). */
  fetch(query?: RecordQuery): Promise<TypedRecord<R>[]>;
  /** Adds records (editors); returns their ids. */
  add(rows: Partial<R>[]): Promise<number[]>;
  /** Updates records by id (editors); every record must name the same fields. */
  update(rows: Array<{id: number; fields: Partial<R>}>): Promise<void>;
  /** Add-or-update keyed on `require` (editors), as `PUT /records`. */
  upsert(rows: TypedUpsert<R>[], opts?: Omit<UpsertOptions, 'role'>): Promise<UpsertResult>;
  /** Removes records by id (editors). */
  remove(ids: number[]): Promise<void>;
}

/** A table inside a transaction: the same calls, synchronous. */
export interface TxTable<R extends RowShape<R>> {
  readonly tableId: string;
  /** Records, as `GET /records`, the transaction's own writes included. */
  fetch(query?: RecordQuery): TypedRecord<R>[];
  /** Adds records; returns their ids. */
  add(rows: Partial<R>[]): number[];
  /** Updates records by id (every record naming the same fields). */
  update(rows: Array<{id: number; fields: Partial<R>}>): void;
  /** Add-or-update keyed on `require`. */
  upsert(rows: TypedUpsert<R>[], opts?: Omit<UpsertOptions, 'role'>): UpsertResult;
  /** Removes records by id. */
  remove(ids: number[]): void;
}

/**
 * The document inside `SessionDoc.transaction`: reads see the transaction's own writes, and
 * everything written commits when the function returns, or nothing when it throws.
 */
export class DocTransaction {
  /** @internal */
  constructor(
    private readonly grist: GristDoc,
    private readonly role: 'owners' | 'editors',
  ) {}

  /** Records, as `GET /records`, formulas computed for what the transaction wrote so far. */
  fetchRecords(tableId: string, query: RecordQuery = {}): ApiRecord[] {
    this.grist.settleFormulas();
    return this.grist.fetchRecords(tableId, query).records;
  }

  /** Adds records; returns their ids. */
  addRecords(tableId: string, records: Array<Record<string, CellValue>>): number[] {
    checkRecords('NewRecord', Array.isArray(records) ? records.map((fields) => ({fields})) : records, 'records');
    return this.grist.addRecords(tableId, records, {role: this.role});
  }

  /** Updates records by id (every record naming the same fields). */
  updateRecords(tableId: string, records: Array<{id: number; fields: Record<string, CellValue>}>): void {
    checkRecords('Record', records, 'records');
    this.grist.updateRecords(tableId, records, {role: this.role});
  }

  /** Add-or-update keyed on `require`. */
  upsertRecords(
    tableId: string,
    records: Array<{require: Record<string, CellValue>; fields?: Record<string, CellValue>}>,
    opts: Omit<UpsertOptions, 'role'> = {},
  ): UpsertResult {
    checkRecords('AddOrUpdateRecord', records, 'records');
    return this.grist.upsertRecords(tableId, records, {...opts, role: this.role});
  }

  /** Removes records by id. */
  removeRecords(tableId: string, ids: number[]): void {
    this.grist.removeRecords(tableId, ids, {role: this.role});
  }

  /** Applies typed user actions (as `POST /apply`), inside this transaction. */
  apply(actions: UserAction[]): ApplyResult {
    return this.grist.applyUserActions(actions, {role: this.role});
  }

  /** A table whose records are typed `R`. */
  table<R extends RowShape<R>>(tableId: string): TxTable<R> {
    return {
      tableId,
      fetch: (query) => this.fetchRecords(tableId, query) as TypedRecord<R>[],
      add: (rows) => this.addRecords(tableId, rows as Array<Record<string, CellValue>>),
      update: (rows) => this.updateRecords(tableId, rows as Array<{id: number; fields: Record<string, CellValue>}>),
      upsert: (rows, opts) =>
        this.upsertRecords(
          tableId,
          rows as Array<{require: Record<string, CellValue>; fields?: Record<string, CellValue>}>,
          opts,
        ),
      remove: (ids) => this.removeRecords(tableId, ids),
    };
  }
}
