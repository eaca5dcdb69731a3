/**
 * Conditions over a table's rows (a `where` condition of the records API): a formula compiled as a
 * column of the table would compile it (the engine's globals: tables, builtins, Grist's functions,
 * auto-imported modules), evaluated for rows outside any recalculation: nothing is recorded as a
 * dependency and cells read as they are stored, so the answer is that of a formula column holding
 * the condition, over the data as it is. Rows whose evaluation raises do not match (a formula
 * cell holding an error is not true); running out of the time or size budget ends the whole pass.
 */
import {Budget, type BudgetSettings, setCurrentBudget} from './budget.js';
import {compileFunctionBody} from './compiler.js';
import type {Expr, Stmt} from './syntax/index.js';
import {type RecordHost, Record, UserTable} from './records.js';
import {importModule, resolveGlobal} from './globals.js';
import type {EngineState} from './state.js';
import {PyException, PyTuple, type Value, truthy} from './values.js';
import {PyDate, PyDateTime} from './datetime.js';

/** How a condition reads the document. */
export interface ConditionOptions {
  /**
   * What `rec` and `table` read through (default: the engine itself). A host may hide or
   * censor what the caller cannot read; it must then also answer for tables (`resolve`).
   */
  host?: RecordHost;
  /** Names resolved before the engine's own (tables through `host`, refused functions). */
  resolve?: (name: string) => Value | undefined;
  /** The budget of one pass (`match`): its maxRecalcMs bounds the pass, maxCellMs each row. */
  budget?: Partial<BudgetSettings>;
}

/** A compiled condition (`FormulaEngine.condition`). */
export interface RowCondition {
  /**
   * The rows of `rowIds` (in their order) whose value is truthy. A row whose evaluation raises
   * does not match, except for the budget's TimeoutError and MemoryError, which end the pass
   * (thrown as they are).
   */
  match(rowIds: Iterable<number>): number[];
  /** The condition's value for one row (throws the row's exception). */
  evaluate(rowId: number): Value;
}

/** The exceptions of a budget: they end a pass instead of failing one row (as IFERROR lets them through). */
export const BUDGET_ERRORS: ReadonlySet<string> = new Set(['TimeoutError', 'MemoryError']);

function globalsOf(s: EngineState, resolve: ConditionOptions['resolve']) {
  return {
    vars: new Map<string, Value>(),
    resolve: (name: string) => resolve?.(name) ?? resolveGlobal(s, name),
    importModule: (name: string) => importModule(s, name),
  };
}

export function compileCondition(
  s: EngineState,
  tableId: string,
  body: Stmt[],
  opts: ConditionOptions = {},
): RowCondition {
  const host = opts.host ?? s.host;
  const compiled = compileFunctionBody(body, ['rec', 'table'], globalsOf(s, opts.resolve));
  const table = new UserTable(host, tableId);
  const run = (rowId: number) => compiled.run([new Record(host, tableId, rowId), table]);
  const settings = {...s.budget.settings, ...opts.budget};
  return {
    evaluate(rowId) {
      return withBudget(new Budget(settings), (b) => {
        b.startCell();
        return run(rowId);
      });
    },
    match(rowIds) {
      return withBudget(new Budget(settings), (b) => {
        const out: number[] = [];
        for (const r of rowIds) {
          b.startCell();
          let ok: boolean;
          try {
            ok = truthy(run(r));
          } catch (e) {
            if (e instanceof PyException) {
              if (BUDGET_ERRORS.has(e.type)) throw e;
              ok = false;
            } else if (e instanceof RangeError && /call stack/i.test(e.message)) {
              ok = false; // RecursionError
            } else throw e;
          }
          if (ok) out.push(r);
        }
        return out;
      });
    },
  };
}

/** A value computed once from an expression that reads no row (`rec` and `table` are None). */
export function evaluateConstant(s: EngineState, expr: Expr, opts: ConditionOptions = {}): Value {
  const compiled = compileFunctionBody([{k: 'return', v: expr, line: 1}], ['rec', 'table'], globalsOf(s, opts.resolve));
  return withBudget(new Budget({...s.budget.settings, ...opts.budget}), (b) => {
    b.startCell();
    return compiled.run([null, null]);
  });
}

function withBudget<T>(b: Budget, fn: (b: Budget) => T): T {
  const prev = setCurrentBudget(b);
  b.startRecalc();
  try {
    return fn(b);
  } finally {
    b.endRecalc();
    setCurrentBudget(prev);
  }
}

/**
 * What a condition's SQL translation needs to know of a value computed once (a constant): a
 * `date` as its days since 1970-01-01; a `datetime` as its instant in seconds and its zone's name
 * (null when naive); a tuple or list as its items; anything else as itself (`other`).
 */
export type ConstantShape =
  | {kind: 'date'; days: number}
  | {kind: 'datetime'; seconds: number; zone: string | null}
  | {kind: 'items'; items: Value[]; tuple: boolean}
  | {kind: 'other'};

export function constantShape(v: Value): ConstantShape {
  if (v instanceof PyDateTime) {
    const tz = v.tzinfo as {name?: unknown} | null;
    const [days, us] = v.utcPair();
    const zone = tz ? (typeof tz.name === 'string' ? tz.name : `?${String(tz)}`) : null;
    return {kind: 'datetime', seconds: days * 86400 + us / 1e6, zone};
  }
  if (v instanceof PyDate) return {kind: 'date', days: v.epochDays()};
  if (v instanceof PyTuple) return {kind: 'items', items: v.items as Value[], tuple: true};
  if (Array.isArray(v)) return {kind: 'items', items: v as Value[], tuple: false};
  return {kind: 'other'};
}
