/**
 * What a condition evaluated by the formula engine reads, under the caller's access rules: the
 * engine's cells (as stored), except that a column the caller cannot read does not exist (the
 * error of an unknown column), a cell censored for the caller, or any cell of a row they cannot
 * read, is a `CensoredValue`, and lookups and `Table.all` see only the rows they can read. Every
 * record reached through it (references, lookups, lists) reads through it too.
 */
import {type FormulaEngine, type Kwargs, PyException, type Value} from '@gristlite/formula';
import {PyTuple, Record, type RecordHost, RecordSet, UserTable} from '@gristlite/formula/internal';
import type {DocGuard, RowReader, TableReadFilter} from '../guard.js';
import {quoteIdent} from '../identifiers.js';
import type Database from 'better-sqlite3';

/** A cell the caller's access rules hide: equal to nothing (itself included), truthy, without order. */
export class CensoredValue {
  readonly pyType = 'CensoredValue';
  repr(): string {
    return 'CensoredValue';
  }
  eq(): boolean {
    return false;
  }
  hashKey(): string {
    return `C:${Math.random()}`;
  }
  getattr(name: string): Value {
    throw new PyException('AttributeError', `'CensoredValue' object has no attribute '${name}'`);
  }
}

/** The error of a column that does not exist, or that the caller cannot read (the same words). */
export function unknownColumn(tableId: string, colId: string): PyException {
  return new PyException('AttributeError', `Table '${tableId}' has no column '${colId}'`);
}

/** Functions that read records past the host (the engine's own state): refused under access rules. */
export const UNGUARDED_FUNCTIONS = new Set(['RECORD', 'PREVIOUS', 'NEXT', 'RANK']);

export class GuardedHost implements RecordHost {
  private readonly filters = new Map<string, TableReadFilter | null>();
  /** Per table, per row: null when the row cannot be read, else the columns censored in it. */
  private readonly rows = new Map<string, Map<number, ReadonlySet<string> | null>>();

  constructor(
    private readonly engine: FormulaEngine,
    private readonly guard: DocGuard,
    private readonly db: Database.Database,
    private readonly readRows: RowReader,
  ) {}

  /** The read filter of a table, or null when the caller cannot read it at all. */
  private filter(tableId: string): TableReadFilter | null {
    let f = this.filters.get(tableId);
    if (f === undefined) {
      try {
        f = this.guard.tableVisible(tableId) ? this.guard.readTable(tableId) : null;
      } catch {
        f = null;
      }
      this.filters.set(tableId, f);
    }
    return f;
  }

  /** null: the row cannot be read; else the columns censored in it. */
  private rowAccess(tableId: string, rowId: number): ReadonlySet<string> | null {
    const f = this.filter(tableId);
    if (!f) return null;
    if (!f.row && !f.sql) return EMPTY;
    let byRow = this.rows.get(tableId);
    if (!byRow) this.rows.set(tableId, (byRow = new Map()));
    let access = byRow.get(rowId);
    if (access === undefined) {
      access = EMPTY;
      if (rowId && this.engine.rowExists(tableId, rowId)) {
        if (f.sql) {
          const ok = this.db
            .prepare(`SELECT 1 FROM ${quoteIdent(tableId)} WHERE id = ? AND (${f.sql.sql})`)
            .get(rowId, ...f.sql.params);
          if (!ok) access = null;
        }
        if (access && f.row) {
          const values = this.readRows(tableId, [rowId]).get(rowId);
          access = values ? f.row({...values, id: rowId}) : null;
        }
      }
      byRow.set(rowId, access);
    }
    return access;
  }

  /** Whether the caller can read a row. */
  readable(tableId: string, rowId: number): boolean {
    return this.rowAccess(tableId, rowId) !== null;
  }

  private checkColumn(tableId: string, colId: string): void {
    const f = this.filter(tableId);
    if (!f || f.hiddenCols.has(colId)) throw unknownColumn(tableId, colId);
  }

  /** A value read from the engine, its records made to read through this host. */
  private wrap(v: Value): Value {
    if (v instanceof Record) return v.host === this ? v : new Record(this, v.tableId, v.rowId);
    if (v instanceof RecordSet) return v.host === this ? v : new RecordSet(this, v.tableId, v.rowIds);
    if (v instanceof PyTuple) return new PyTuple(v.items.map((x) => this.wrap(x)));
    if (Array.isArray(v)) return v.map((x) => this.wrap(x));
    return v;
  }

  readCell(tableId: string, colId: string, rowId: number): Value {
    this.checkColumn(tableId, colId);
    const access = this.rowAccess(tableId, rowId);
    if (access === null || access.has(colId)) return new CensoredValue();
    return this.wrap(this.engine.readCell(tableId, colId, rowId));
  }

  readColumn(tableId: string, colId: string, rowIds: number[]): Value[] {
    return rowIds.map((r) => this.readCell(tableId, colId, r));
  }

  hasColumn(tableId: string, colId: string): boolean {
    const f = this.filter(tableId);
    return !!f && !f.hiddenCols.has(colId) && this.engine.hasColumn(tableId, colId);
  }

  rowExists(tableId: string, rowId: number): boolean {
    return this.engine.rowExists(tableId, rowId);
  }

  lookup(tableId: string, kwargs: Kwargs, orderBy: Value): {rows: number[]} {
    const f = this.filter(tableId);
    const named = [...Object.keys(kwargs), ...orderNames(orderBy)];
    for (const colId of named) {
      if (colId === 'id') continue;
      this.checkColumn(tableId, colId);
      if (f?.censoredCols?.has(colId)) {
        throw new PyException(
          'AttributeError',
          `Cannot look up by column '${colId}' of table '${tableId}': access rules hide some of its cells`,
        );
      }
    }
    const {rows} = this.engine.lookup(tableId, kwargs, orderBy);
    return {rows: rows.filter((r) => this.readable(tableId, r))};
  }

  allRows(tableId: string): {rows: number[]} {
    if (!this.filter(tableId)) throw new PyException('KeyError', `no table ${tableId}`);
    return {rows: this.engine.allRows(tableId).rows.filter((r) => this.readable(tableId, r))};
  }

  summaryGroup(tableId: string, rowId: number): RecordSet | null {
    const g = this.engine.summaryGroup(tableId, rowId);
    return g
      ? new RecordSet(
          this,
          g.tableId,
          g.rowIds.filter((r) => this.readable(g.tableId, r)),
        )
      : null;
  }

  /** What a condition's global names resolve to before the engine's: tables through this host. */
  resolve(name: string): Value | undefined {
    if (this.engine.tableIds().includes(name)) {
      return this.filter(name) ? new UserTable(this, name) : undefined;
    }
    return undefined;
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/** The column names of a lookup's `order_by` (a name or a tuple of names, `-` for descending). */
function orderNames(orderBy: Value): string[] {
  const names = orderBy instanceof PyTuple ? orderBy.items : [orderBy];
  return names.filter((n): n is string => typeof n === 'string').map((n) => n.replace(/^-/, ''));
}
