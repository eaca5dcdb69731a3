/**
 * `where` conditions written in Grist's formula language (issue 40 §1, docs/queries.md): the rows
 * of a table for which a formula column holding the condition would be truthy, under the caller's
 * access rules, as one SQL condition a record query ANDs into its WHERE clause.
 *
 * The condition is parsed by the formula package's one front end (cached per text and schema
 * version), checked against the schema (check.ts), and translated into SQL where that keeps
 * Python's semantics exactly (translate.ts). Rows SQL cannot decide (what it does not translate,
 * narrowed by what it does) are evaluated by the formula engine, compiled as a formula column of
 * the table would be, reading cells as stored, under the formula time budget; the condition
 * handed back is then SQL's part or the ids the engine found. This folder imports nothing of
 * reads.ts, so whole formula columns may later be run through the same translator.
 */
import type Database from 'better-sqlite3';
import {type BudgetSettings, PyException, setClock} from '@gristlite/formula';
import type {ColumnClasses} from '../colstats.js';
import {loadFormulaEngine, useDocTimezone} from '../formulas.js';
import type {DocGuard, RowReader} from '../guard.js';
import {quoteIdent} from '../identifiers.js';
import type {DocMeta, TableMeta} from '../meta.js';
import {andScope, type RowScope} from '../rowscope.js';
import {BUDGET_ERRORS} from '@gristlite/formula/internal';
import {type ParsedWhere, type WhereState, checkWhere, whereError} from './check.js';
import {GuardedHost} from './host.js';
import {FALSE, type Sql, type Tri, UNKNOWN, or, sql} from './sql.js';
import {Translator} from './translate.js';

export {DEFAULT_WHERE_MAX_CHARS, type ParsedWhere, WhereState, whereError} from './check.js';
export {CensoredValue} from './host.js';
export type {Sql, Tri} from './sql.js';
export {FALSE, TRUE, and, not, or, sql} from './sql.js';

/** Most rows one update or removal by condition may touch (`GRISTLITE_WHERE_MAX_ROWS`). */
export const DEFAULT_WHERE_MAX_ROWS = 50_000;

/** Bounds of conditions (engine settings). */
export interface WhereSettings {
  /** Longest condition, in characters. */
  maxChars: number;
  /** Most rows a write by condition may touch. */
  maxRows: number;
  /** Most groups an aggregate answers (`GRISTLITE_AGGREGATE_MAX_GROUPS`, doc/aggregate/). */
  maxGroups: number;
  /**
   * Most time the formula engine spends on one request's condition, over all its rows
   * (`GRISTLITE_WHERE_MAX_MSEC`): it runs on the event loop, so it gets far less than a
   * recalculation's 30 s; the lower of this and the formula budget applies.
   */
  maxMs: number;
}

/** Default of `WhereSettings.maxMs`: a condition holds the event loop at most this long. */
export const DEFAULT_WHERE_MAX_MSEC = 1000;

/** What resolving a condition needs of its document. */
export interface WhereSource {
  readonly db: Database.Database;
  readonly meta: DocMeta;
  readonly classes: ColumnClasses;
  /** The caller's access rules, or null. */
  readonly guard: DocGuard | null;
  readonly state: WhereState;
  readonly settings: WhereSettings;
  /** Formula budgets (the engine's settings): a pass over rows is one recalculation's worth. */
  readonly budget: Partial<BudgetSettings>;
  /** Rows by id, decoded (what row rules read). */
  readonly readRows: RowReader;
  /** What changes whenever the data may have (colstats.ts DataStamp), as text. */
  stamp(): string;
}

/** A condition resolved for one read or write. */
export interface ResolvedWhere {
  /** The matching rows, as a condition on the table (quoted as `"Table"."col"`). */
  sql: Sql;
  /** Whether the answer may change with the clock alone (not to be cached with the data). */
  volatile: boolean;
  /** Rows the formula engine evaluated (those SQL could not decide). */
  evaluated: number;
}

export interface ResolveOptions {
  /** Let the engine evaluate every row (tests compare both paths). */
  forceEngine?: boolean;
}

/** Parses and checks a condition (400 on a malformed one), without reading rows. */
export function parseWhere(src: WhereSource, table: TableMeta, text: string): ParsedWhere {
  const parsed = src.state.parse(text, src.meta.version, src.settings.maxChars);
  const guard = src.guard;
  checkWhere(parsed, table, {
    meta: src.meta,
    hiddenCols: (tableId) => {
      if (!guard) return NONE;
      try {
        return guard.tableVisible(tableId) ? guard.readTable(tableId).hiddenCols : null;
      } catch {
        return null;
      }
    },
    guarded: !!guard && !guard.canReadEverything(),
    resolvesName: (name) => src.state.names.resolvesName(name),
  });
  return parsed;
}

/**
 * The rows of `table` within `scope` (the caller's readable rows) for which `text` holds, as a
 * condition on the table. Throws 400 for a malformed condition, and for one that runs out of the
 * formula time budget.
 */
export function resolveWhere(
  src: WhereSource,
  table: TableMeta,
  text: string,
  scope: RowScope,
  opts: ResolveOptions = {},
): ResolvedWhere {
  const restoreZone = useDocTimezone(src.meta);
  const now = Date.now();
  const restoreClock = setClock(() => now);
  try {
    const parsed = parseWhere(src, table, text);
    const tri = opts.forceEngine || !parsed.expr ? UNKNOWN : translate(src, table, parsed);
    const rest = tri.u;
    if (rest.sql === '0') {
      src.state.counts.sql++;
      return {sql: tri.t, volatile: parsed.volatile, evaluated: 0};
    }
    src.state.counts.engine++;
    const matched = evaluate(src, table, parsed, scope, rest);
    const ids = matched.length
      ? sql(`${quoteIdent(table.tableId)}."id" IN (SELECT value FROM json_each(?))`, JSON.stringify(matched))
      : FALSE;
    return {sql: or(tri.t, ids), volatile: parsed.volatile, evaluated: matched.length};
  } finally {
    setClock(restoreClock);
    restoreZone();
  }
}

function translate(src: WhereSource, table: TableMeta, parsed: ParsedWhere): Tri {
  const guard = src.guard;
  const filter = (tableId: string) => (guard ? guard.readTable(tableId) : null);
  return new Translator({
    meta: src.meta,
    table,
    classesOf: (tableId, colId) => src.classes.of(tableId, colId),
    rangeOf: (tableId, colId) => (colId === 'id' ? null : src.classes.range(tableId, colId)),
    sqlReadable: (tableId, colId, joined) => {
      const f = filter(tableId);
      if (!f) return true;
      if (f.censoredCols?.has(colId) || f.hiddenCols.has(colId)) return false;
      return !joined || (!f.row && !f.sql);
    },
    constant: (expr) => src.state.names.evaluateConstant(expr, {budget: src.budget}),
  }).condition(parsed.expr!);
}

/** The rows SQL left undecided (`rest`), within the caller's scope, that the engine finds truthy. */
function evaluate(src: WhereSource, table: TableMeta, parsed: ParsedWhere, scope: RowScope, rest: Sql): number[] {
  const t = quoteIdent(table.tableId);
  const where = andScope(scope, {sql: rest.sql, params: [...rest.params]});
  let candidates = (
    src.db
      .prepare(`SELECT ${t}."id" FROM ${t} WHERE ${where.sql} ORDER BY ${t}."id"`)
      .pluck()
      .all(where.params) as Array<number | bigint>
  ).map(Number);
  if (!candidates.length) return [];
  src.state.counts.engineRows += candidates.length;
  const engine = loadFormulaEngine(src.db, src.meta, src.budget);
  const guard = src.guard;
  const host = guard && !guard.canReadEverything() ? new GuardedHost(engine, guard, src.db, src.readRows) : null;
  // Rows the caller cannot read never match (a scope checked row by row leaves them to the read).
  if (host && scope.inJs) candidates = candidates.filter((id) => host.readable(table.tableId, id));
  const condition = engine.condition(table.tableId, parsed.body, {
    host: host ?? undefined,
    resolve: host ? (name) => host.resolve(name) : undefined,
    budget: src.budget,
  });
  try {
    return condition.match(candidates);
  } catch (e) {
    if (e instanceof PyException && BUDGET_ERRORS.has(e.type)) {
      throw whereError(
        e.type,
        `${e.message} (the time a condition may take: GRISTLITE_FORMULA_CELL_MSEC a row, GRISTLITE_WHERE_MAX_MSEC in all)`,
      );
    }
    throw e;
  }
}

const NONE: ReadonlySet<string> = new Set();
