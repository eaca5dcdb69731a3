/**
 * A condition's text parsed (once per text and schema version: `WhereState`) and checked against
 * the table it filters before any row is read: what would fail on every row whatever its data is
 * refused with a 400 in the formula's own words (CPython's syntax errors, an unknown column, an
 * unknown name), rather than matching nothing.
 */
import {BoundedMap, type Expr, FormulaEngine, PyException, PySyntaxError} from '@gristlite/formula';
import {parseFormulaBody, type Stmt} from '@gristlite/formula/internal';
import {BadRequest} from '../../base/index.js';
import type {DocMeta, TableMeta} from '../meta.js';
import {UNGUARDED_FUNCTIONS, unknownColumn} from './host.js';
import {allExprs, boundNames} from './walk.js';

/** Longest condition accepted, in characters (`GRISTLITE_WHERE_MAX_CHARS`). */
export const DEFAULT_WHERE_MAX_CHARS = 4096;

/** A condition as parsed: its body, and its expression when it is one. */
export interface ParsedWhere {
  body: Stmt[];
  /** The condition when it is a single expression (what SQL may translate). */
  expr: Expr | null;
  /** Whether its value may change with the clock alone (NOW(), TODAY(), random numbers). */
  volatile: boolean;
}

/** Names whose value changes from one evaluation to the next without the data changing. */
const VOLATILE = new Set(['NOW', 'TODAY', 'random', 'RANDBETWEEN', 'RAND', 'UUID', 'now', 'today', 'utcnow']);

/** A 400 for a condition, in the formula's words. */
export function whereError(type: string, message: string, details?: Record<string, unknown>): BadRequest {
  return new BadRequest(`Invalid where condition: ${type}: ${message}`, {type, ...details});
}

/** What a document keeps for its conditions: parsed texts, and an engine that knows the global names. */
export class WhereState {
  private readonly parsed = new BoundedMap<string, ParsedWhere | BadRequest>(256);
  /** Conditions resolved wholly in SQL, those that needed the engine, and the rows it evaluated (measurements). */
  readonly counts = {sql: 0, engine: 0, engineRows: 0};
  private namesEngine: FormulaEngine | null = null;

  /** An engine without tables: the names formulas see, and constants computed once. */
  get names(): FormulaEngine {
    return (this.namesEngine ??= new FormulaEngine());
  }

  parse(text: string, schemaVersion: number, maxChars: number): ParsedWhere {
    if (text.length > maxChars) {
      throw whereError(
        'ValueError',
        `the condition is ${text.length} characters long, more than ${maxChars} (GRISTLITE_WHERE_MAX_CHARS)`,
      );
    }
    const key = `${schemaVersion}\0${text}`;
    let p = this.parsed.get(key);
    if (!p) {
      p = parseWhere(text);
      this.parsed.set(key, p);
    }
    if (p instanceof BadRequest) throw p;
    return p;
  }
}

function parseWhere(text: string): ParsedWhere | BadRequest {
  let body: Stmt[];
  try {
    body = parseFormulaBody(text);
  } catch (e) {
    if (e instanceof PySyntaxError) {
      const at = e.line === null || e.bare ? '' : ` on line ${e.line} col ${e.col ?? 'None'}`;
      return whereError(e.type, `${e.msg}${at}`, {line: e.line, col: e.col});
    }
    if (e instanceof PyException) return whereError(e.type, e.message);
    throw e;
  }
  if (!body.length) return whereError('SyntaxError', 'the condition is empty');
  const last = body[body.length - 1];
  const expr = body.length === 1 && last.k === 'return' ? last.v : null;
  let volatile = false;
  for (const e of allExprs(body)) if (e.k === 'name' && VOLATILE.has(e.id)) volatile = true;
  return {body, expr, volatile};
}

/** How the caller sees the document, for the checks. */
export interface CheckView {
  meta: DocMeta;
  /** Columns of a table the caller cannot read (null: the table itself). */
  hiddenCols(tableId: string): ReadonlySet<string> | null;
  /** Whether access rules apply to the caller (some functions are then refused). */
  guarded: boolean;
  /** Whether a formula sees a global of this name (not a table). */
  resolvesName(name: string): boolean;
}

/** Record attributes that are not columns. */
const RECORD_ATTRS = new Set(['id', '_row_id', '_table']);

/**
 * Refuses (400) a condition naming a column that does not exist or that the caller cannot read,
 * through `$` / `rec.` or through references followed (`$Ref.Col`), or a name a formula would not
 * find (NameError), or, under access rules, a function that reads past them.
 */
export function checkWhere(p: ParsedWhere, table: TableMeta, view: CheckView): void {
  const columnOf = (tableId: string, colId: string) => {
    if (RECORD_ATTRS.has(colId)) return null;
    const t = view.meta.tables.get(tableId);
    const hidden = view.hiddenCols(tableId);
    const col = t?.byId.get(colId);
    if (!col || !hidden || hidden.has(colId)) {
      const e = unknownColumn(tableId, colId);
      throw whereError(e.type, e.message);
    }
    return col;
  };
  /** The table of records an expression evaluates to, when known from the schema. */
  const recordsOf = (e: Expr): string | null => {
    if (e.k === 'name' && e.id === 'rec') return table.tableId;
    if (e.k !== 'attr') return null;
    const of = recordsOf(e.obj);
    if (of === null) return null;
    const col = columnOf(of, e.name);
    return col && col.ct.base === 'Ref' ? col.ct.target : null;
  };
  const bound = boundNames(p.body);
  for (const e of allExprs(p.body)) {
    if (e.k === 'attr') recordsOf(e);
    if (e.k !== 'name' || bound.has(e.id) || e.id === 'rec' || e.id === 'table') continue;
    const isTable = view.meta.userTables.some((t) => t.tableId === e.id);
    if (isTable ? view.hiddenCols(e.id) === null : !view.resolvesName(e.id)) {
      throw whereError('NameError', `name '${e.id}' is not defined`);
    }
    if (view.guarded && UNGUARDED_FUNCTIONS.has(e.id)) {
      throw whereError('NameError', `${e.id}() is not available in a where condition under access rules`);
    }
  }
}
