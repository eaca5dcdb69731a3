/**
 * Which rows of a table a read may return under the caller's access rules. Every SQL query that
 * reads a table's rows for an answer (`buildRecordQuery`, the batches of a streamed read, the
 * ordered ids of a paged or column-wise stream) takes one and puts its condition in its WHERE
 * clause, and none can be built without it: a read path that builds its own FROM cannot exist by
 * accident. Issue 37: a streamed read of a whole table built `FROM t WHERE id > ?` on its own and
 * returned every row a row rule hid; the only way to such a query now is through a scope.
 *
 * Scopes are made by `DocReads.scope` (doc/reads.ts), from the `DocGuard` of the call: the one
 * place that turns rules into rows.
 */

import type {RowValues} from './guard.js';

/** A condition in SQL with its bound parameters. */
export interface SqlCondition {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** The rows of one table one caller may read (see the top of this file). */
export class RowScope {
  /** A hand-made object cannot pass for a scope: the types refuse it, and so does `checkRowScope`. */
  readonly #brand = true;

  private constructor(
    /** The rules' condition on the table's rows; null: none that SQL tests. */
    readonly where: SqlCondition | null,
    /**
     * Rows SQL returns must still pass the rules row by row (`TableReadFilter.row`), so a limit
     * counts rows after that, not in SQL, and a read cannot stream rows SQLite joins itself.
     */
    readonly inJs: boolean,
  ) {
    Object.freeze(this);
  }

  /** A scope (for `DocReads.scope` only: every other reader receives theirs from it). */
  static make(where: SqlCondition | null, inJs: boolean): RowScope {
    return new RowScope(where, inJs);
  }

  /** Whether `value` is a scope `make` made. */
  static is(value: unknown): value is RowScope {
    return typeof value === 'object' && value !== null && #brand in value;
  }
}

/** Throws on anything but a scope `RowScope.make` made (a read built around the rules). */
export function checkRowScope(scope: RowScope): void {
  if (!RowScope.is(scope)) throw new Error('a read of rows needs the RowScope of its caller (DocReads.scope)');
}

/** The scope's condition ANDed with another (either may be empty: `sql` ''). */
export function andScope(scope: RowScope, other: {sql: string; params: unknown[]}): {sql: string; params: unknown[]} {
  checkRowScope(scope);
  const w = scope.where;
  if (!w) return other;
  if (!other.sql) return {sql: w.sql, params: [...w.params]};
  return {sql: `(${other.sql}) AND ${w.sql}`, params: [...other.params, ...w.params]};
}

/** The scope as the WHERE clause of a whole-table read (` WHERE ...`, or '' for every row). */
export function scopeWhere(scope: RowScope): {sql: string; params: unknown[]} {
  const w = andScope(scope, {sql: '', params: []});
  return w.sql ? {sql: ` WHERE ${w.sql}`, params: w.params} : w;
}

/**
 * How one caller reads a user table, for a read on a connection of its own (an export on its
 * snapshot): `DocReads.tableAccess`.
 */
export interface TableAccess {
  /** Columns denied outright. */
  hiddenCols: ReadonlySet<string>;
  /** The rows, in SQL where rules allow. */
  scope: RowScope;
  /**
   * When the scope is `inJs`, the check of each row (every column decoded): null drops the row,
   * else the columns whose cells read as censored in it. Null otherwise.
   */
  row: ((values: RowValues & {id: number}) => ReadonlySet<string> | null) | null;
}
