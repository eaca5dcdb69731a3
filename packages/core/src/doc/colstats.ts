/**
 * Which SQLite storage classes each column of a user table holds right now. A column's Grist type
 * makes its usual storage form known (numbers in Int/Numeric/Bool/Date columns, text in Text
 * columns), but alt-text, marshalled values and nulls can appear in any column. Knowing that they
 * are absent lets query.ts emit the plain ORDER BY and WHERE that SQLite runs fast, and keep the
 * exact (slower) typed-compare SQL for the columns that need it.
 *
 * A column's classes are found by one scan (`SELECT DISTINCT typeof(col)`) the first time a query
 * needs them, and kept until the data may have changed behind our back. Validity is a stamp of
 * `total_changes()` (every row this connection changed, by any code path), `data_version` (commits
 * by other connections) and `schema_version` (DDL by anyone): when it moves, everything is
 * forgotten. The engine's own record writes keep the cache instead: they check the stamp before
 * writing, merge the classes of the values they stored, and re-take the stamp after (see `track`).
 */
import type Database from 'better-sqlite3';
import {quoteIdent} from './identifiers.js';

export const NULL_CLASS = 1;
export const NUM_CLASS = 2;
export const TEXT_CLASS = 4;
export const BLOB_CLASS = 8;
/** Every class: what to assume about a column that cannot be scanned. */
export const ANY_CLASS = NULL_CLASS | NUM_CLASS | TEXT_CLASS | BLOB_CLASS;

/** The storage class of a value bound to (or read from) SQLite. */
export function classOf(v: unknown): number {
  switch (typeof v) {
    case 'number': case 'bigint': case 'boolean': return NUM_CLASS;
    case 'string': return TEXT_CLASS;
  }
  return v === null || v === undefined ? NULL_CLASS : BLOB_CLASS;
}

const TYPEOF_CLASS: Record<string, number> = {
  null: NULL_CLASS, integer: NUM_CLASS, real: NUM_CLASS, text: TEXT_CLASS, blob: BLOB_CLASS,
};

/** A write in progress: `done()` merges what was written, if nothing else changed meanwhile. */
export interface TrackedWrite {
  /** Call right after the statements ran: the classes stored per column, and the rows changed. */
  done(written: Map<string, number>, rowsChanged: number): void;
}

/**
 * What moves whenever a document's data may have changed: rows changed through this connection
 * (by any code), commits by other connections, and schema changes by anyone.
 */
export class DataStamp {
  private readonly stmt: Database.Statement;

  constructor(db: Database.Database) {
    this.stmt = db.prepare(`SELECT total_changes(), (SELECT data_version FROM pragma_data_version),
      (SELECT schema_version FROM pragma_schema_version)`).raw(true);
  }

  /** [rows changed here, data version, schema version]. */
  now(): [number, number, number] {
    return this.stmt.get() as [number, number, number];
  }
}

export class ColumnClasses {
  private readonly dataStamp: DataStamp;
  private stamp: number[] = [];
  private readonly byTable = new Map<string, Map<string, number>>();

  constructor(private readonly db: Database.Database) {
    this.dataStamp = new DataStamp(db);
  }

  clear(): void {
    this.byTable.clear();
    this.stamp = [];
  }

  /** Forgets everything if the data may have changed since the cache was last known valid. */
  private validate(): void {
    const now = this.dataStamp.now();
    if (!(now.length === this.stamp.length && now.every((v, i) => v === this.stamp[i]))) {
      this.byTable.clear();
      this.stamp = now;
    }
  }

  /** The classes held by a column (a bit set of the *_CLASS constants). */
  of(tableId: string, colId: string): number {
    if (colId === 'id') { return NUM_CLASS; }
    this.validate();
    let cols = this.byTable.get(tableId);
    if (!cols) {
      cols = new Map();
      this.byTable.set(tableId, cols);
    }
    let mask = cols.get(colId);
    if (mask === undefined) {
      mask = 0;
      const rows = this.db.prepare(`SELECT DISTINCT typeof(${quoteIdent(colId)}) FROM ${quoteIdent(tableId)}`)
        .raw(true).all() as Array<[string]>;
      for (const [t] of rows) { mask |= TYPEOF_CLASS[t] ?? ANY_CLASS; }
      cols.set(colId, mask);
    }
    return mask;
  }

  /**
   * Starts a record write to `tableId` by the engine, to be called just before its statements.
   * If the cache was valid then and the write changed exactly `rowsChanged` rows and nothing else,
   * the columns in `written` gain the classes stored and columns of the table not listed are
   * forgotten with `forgetOthers` (an insert stores their SQL default). Otherwise the cache is
   * cleared at the next use.
   */
  track(tableId: string, opts: {forgetOthers: boolean}): TrackedWrite {
    this.validate();
    const before = this.stamp;
    return {
      done: (written, rowsChanged) => {
        const now = this.dataStamp.now();
        if (now[0] !== before[0] + rowsChanged || now[1] !== before[1] || now[2] !== before[2]) { return; }
        const cols = this.byTable.get(tableId);
        if (cols) {
          for (const colId of [...cols.keys()]) {
            const add = written.get(colId);
            if (add !== undefined) {
              cols.set(colId, cols.get(colId)! | add);
            } else if (opts.forgetOthers) {
              cols.delete(colId);
            }
          }
        }
        this.stamp = now;
      },
    };
  }
}
