/**
 * A `having` condition (docs/queries.md): a Python expression over a group's aggregates, named as
 * the answer names them (`count > 2 and sum_Amount > 10`), translated into a SQLite HAVING clause
 * that keeps Python's semantics: a group matches when the expression is truthy, and, as for
 * `where`, not when it raises (`None > 2`, `"a" < 1`, division by zero). Each part is translated
 * to two conditions, "raises" (`e`) and "is truthy assuming it does not raise" (`t`), composed
 * with Python's left-to-right short-circuit, so `count > 5 or avg_X > 1` raises only where
 * `count > 5` is false and `avg_X` is None. What it cannot translate exactly is refused (400).
 */
import {type Expr, PyException, PySyntaxError} from '@gristlite/formula';
import {parseFormulaBody} from '@gristlite/formula/internal';
import {BadRequest} from '../../base/index.js';
import {FALSE, type Sql, TRUE, and, not, or, sql} from '../where/index.js';

/** An aggregate a condition may name: its SQL, and the kind of value it holds. */
export interface HavingTerm {
  sql: Sql;
  /** `num`: a number; `text`: a string (min/max of text). */
  kind: 'num' | 'text';
  /** Whether it may be None (avg, min, max of no value). */
  nullable: boolean;
}

/** A 400 for a having condition, in the formula's words. */
export function havingError(type: string, message: string, details?: Record<string, unknown>): BadRequest {
  return new BadRequest(`Invalid having condition: ${type}: ${message}`, {type, ...details});
}

/** A value: its SQL, its kind (`none` for None), whether it may be NULL, and when computing it raises. */
interface Val {
  v: Sql;
  kind: 'num' | 'text' | 'none';
  nullable: boolean;
  e: Sql;
}

/** A condition: when it raises, and whether it is truthy where it does not. */
interface Cond {
  e: Sql;
  t: Sql;
}

/**
 * The HAVING clause of `text`, its names resolved by `term` (null: no such aggregate). Throws 400
 * for a syntax error, an unknown name, or a construct it does not translate.
 */
export function havingSql(text: string, maxChars: number, term: (name: string) => HavingTerm | null): Sql {
  if (text.length > maxChars) {
    throw havingError(
      'ValueError',
      `the condition is ${text.length} characters long, more than ${maxChars} (GRISTLITE_WHERE_MAX_CHARS)`,
    );
  }
  let expr: Expr;
  try {
    const body = parseFormulaBody(text);
    const last = body[body.length - 1];
    if (body.length !== 1 || last.k !== 'return' || !last.v) {
      throw havingError('SyntaxError', 'the condition must be one expression');
    }
    expr = last.v;
  } catch (e) {
    if (e instanceof PySyntaxError) {
      const at = e.line === null || e.bare ? '' : ` on line ${e.line} col ${e.col ?? 'None'}`;
      throw havingError(e.type, `${e.msg}${at}`, {line: e.line, col: e.col});
    }
    if (e instanceof PyException) throw havingError(e.type, e.message);
    throw e;
  }
  if (depth(expr) > MAX_DEPTH) {
    throw havingError('SyntaxError', `the condition nests more than ${MAX_DEPTH} levels deep`);
  }
  const c = new HavingTranslator(term).cond(expr);
  const size = c.e.sql.length + c.t.sql.length;
  const params = c.e.params.length + c.t.params.length;
  // Short-circuits repeat a condition's left part in the SQL of what follows it: bounded here.
  if (size > MAX_SQL_CHARS || params > MAX_PARAMS) {
    throw havingError('ValueError', 'the condition is too complex to translate (fewer and/or parts)');
  }
  // Every comparison's NULL is covered by `e`, so coalescing only settles SQL's unknowns there.
  return and(not(sql(`coalesce(${c.e.sql}, 0)`, ...c.e.params)), sql(`coalesce(${c.t.sql}, 0)`, ...c.t.params));
}

/** Deepest expression translated (SQLite's own limit is 1000 levels of its expression tree). */
const MAX_DEPTH = 50;
/** Largest translation, in SQL characters and bound parameters (SQLite allows 32766 parameters). */
const MAX_SQL_CHARS = 1_000_000;
const MAX_PARAMS = 10_000;

/** How deep an expression nests (its syntax tree's height). */
function depth(e: Expr): number {
  switch (e.k) {
    case 'and':
    case 'or':
      return 1 + Math.max(...e.vals.map(depth));
    case 'cmp':
      return 1 + Math.max(...e.vals.map(depth));
    case 'not':
    case 'unary':
      return 1 + depth(e.v);
    case 'bin':
      return 1 + Math.max(depth(e.l), depth(e.r));
    case 'tuple':
    case 'list':
    case 'set':
      return 1 + Math.max(0, ...e.elts.map(depth));
    default:
      return 1;
  }
}

const UNSUPPORTED =
  'a having condition may use the aggregates (count, sum_Col, avg_Col, min_Col, max_Col, count_distinct_Col), ' +
  'constants, + - * /, comparisons, in, is None, and, or, not';

class HavingTranslator {
  constructor(private readonly term: (name: string) => HavingTerm | null) {}

  cond(e: Expr): Cond {
    switch (e.k) {
      case 'and':
      case 'or': {
        // Python evaluates left to right and stops at the first falsy (and) or truthy (or) part.
        let acc = this.cond(e.vals[0]);
        for (const next of e.vals.slice(1)) {
          const c = this.cond(next);
          const goesOn = e.k === 'and' ? acc.t : not(acc.t);
          acc = {
            e: or(acc.e, and(goesOn, c.e)),
            t: e.k === 'and' ? and(acc.t, c.t) : or(acc.t, c.t),
          };
        }
        return acc;
      }
      case 'not': {
        const c = this.cond(e.v);
        return {e: c.e, t: not(c.t)};
      }
      case 'cmp':
        return this.compare(e.ops, e.vals);
      default:
        return this.truthy(this.value(e));
    }
  }

  /** Python's truthiness: None, 0 and "" are falsy. */
  private truthy(v: Val): Cond {
    if (v.kind === 'none') return {e: v.e, t: FALSE};
    const zero = v.kind === 'num' ? '0' : "''";
    return {e: v.e, t: sql(`(${v.v.sql} IS NOT NULL AND ${v.v.sql} <> ${zero})`, ...v.v.params, ...v.v.params)};
  }

  /** `a < b < c` is `a < b and b < c`, b computed once (its SQL twice). */
  private compare(ops: string[], exprs: Expr[]): Cond {
    let left = this.value(exprs[0]);
    let acc: Cond = {e: left.e, t: TRUE};
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      const rightExpr = exprs[i + 1];
      let pair: Cond;
      let right: Val | null = null;
      if (op === 'in' || op === 'not in') {
        pair = this.membership(left, rightExpr, op === 'not in');
      } else {
        right = this.value(rightExpr);
        pair = this.pair(left, op, right);
      }
      acc = {e: or(acc.e, and(acc.t, pair.e)), t: and(acc.t, pair.t)};
      if (right) left = right;
    }
    return acc;
  }

  private pair(l: Val, op: string, r: Val): Cond {
    const e = or(l.e, r.e);
    switch (op) {
      case '==':
      case '!=':
      case 'is':
      case 'is not': {
        if ((op === 'is' || op === 'is not') && r.kind !== 'none' && l.kind !== 'none') {
          throw havingError('SyntaxError', `'${op}' compares with None only (use == to compare values)`);
        }
        // IS is NULL-safe equality: None == None, 1 == 1.0; SQLite's expressions carry no affinity,
        // so a number never equals a text, as in Python.
        const eq = sql(`(${l.v.sql} IS ${r.v.sql})`, ...l.v.params, ...r.v.params);
        return {e, t: op === '==' || op === 'is' ? eq : not(eq)};
      }
      case '<':
      case '<=':
      case '>':
      case '>=': {
        // Ordering None, or a number with a text, raises TypeError in Python.
        if (l.kind !== r.kind || l.kind === 'none') return {e: or(e, TRUE), t: FALSE};
        const nulls = [l, r].filter((x) => x.nullable).map((x) => sql(`${x.v.sql} IS NULL`, ...x.v.params));
        return {
          e: or(e, ...nulls),
          t: sql(`(${l.v.sql} ${op} ${r.v.sql})`, ...l.v.params, ...r.v.params),
        };
      }
      default:
        throw havingError('SyntaxError', `'${op}' is not supported: ${UNSUPPORTED}`);
    }
  }

  /** `x in (1, 2)`: Python's membership by ==, so None is in a tuple holding None and no other. */
  private membership(l: Val, right: Expr, negate: boolean): Cond {
    if (right.k !== 'tuple' && right.k !== 'list' && right.k !== 'set') {
      throw havingError('SyntaxError', `'in' takes a tuple of constants here: ${UNSUPPORTED}`);
    }
    const items = right.elts.map((x) => this.value(x));
    if (items.some((x) => x.e.sql !== '0' || x.v.params.length > 1 || !/^(\?|NULL)$/.test(x.v.sql))) {
      throw havingError('SyntaxError', `'in' takes a tuple of constants here: ${UNSUPPORTED}`);
    }
    const t = or(...items.map((x) => sql(`(${l.v.sql} IS ${x.v.sql})`, ...l.v.params, ...x.v.params)));
    return {e: l.e, t: negate ? not(t) : t};
  }

  private value(e: Expr): Val {
    switch (e.k) {
      case 'const': {
        const c = e.value;
        if (e.lit) break;
        if (c === null) return {v: sql('NULL'), kind: 'none', nullable: true, e: FALSE};
        if (typeof c === 'string') return {v: sql('?', c), kind: 'text', nullable: false, e: FALSE};
        // True and False are the numbers 1 and 0 (bool is int in Python).
        if (typeof c === 'boolean') return {v: sql('?', c ? 1 : 0), kind: 'num', nullable: false, e: FALSE};
        return {v: sql('?', c), kind: 'num', nullable: false, e: FALSE};
      }
      case 'name': {
        if (e.id === 'None') return {v: sql('NULL'), kind: 'none', nullable: true, e: FALSE};
        if (e.id === 'True' || e.id === 'False') {
          return {v: sql('?', e.id === 'True' ? 1 : 0), kind: 'num', nullable: false, e: FALSE};
        }
        const term = this.term(e.id);
        if (!term) {
          throw havingError(
            'NameError',
            `name '${e.id}' is not defined (a having condition names aggregates: count, sum_Col, ...; ` +
              'conditions on rows or group columns go in where)',
          );
        }
        return {v: term.sql, kind: term.kind, nullable: term.nullable, e: FALSE};
      }
      case 'unary': {
        const v = this.value(e.v);
        if (e.op === '~') break;
        if (v.kind !== 'num') return {...v, kind: 'num', nullable: true, e: or(v.e, TRUE)};
        const nulls = v.nullable ? sql(`${v.v.sql} IS NULL`, ...v.v.params) : FALSE;
        return {v: sql(`(${e.op}${v.v.sql})`, ...v.v.params), kind: 'num', nullable: v.nullable, e: or(v.e, nulls)};
      }
      case 'bin':
        return this.arithmetic(e.op, this.value(e.l), this.value(e.r));
      case 'attr':
        if (e.dollar) {
          throw havingError(
            'NameError',
            `$${e.name} names a row's column: conditions on rows or group columns go in where, ` +
              'a having condition names aggregates (count, sum_Col, ...)',
          );
        }
        break;
    }
    throw havingError('SyntaxError', `this expression is not supported: ${UNSUPPORTED}`);
  }

  private arithmetic(op: string, l: Val, r: Val): Val {
    if (!['+', '-', '*', '/'].includes(op)) {
      throw havingError('SyntaxError', `'${op}' is not supported: ${UNSUPPORTED}`);
    }
    let e = or(l.e, r.e);
    const nulls = [l, r].filter((x) => x.nullable).map((x) => sql(`${x.v.sql} IS NULL`, ...x.v.params));
    e = or(e, ...nulls);
    if (l.kind === 'text' && r.kind === 'text' && op === '+') {
      return {v: sql(`(${l.v.sql} || ${r.v.sql})`, ...l.v.params, ...r.v.params), kind: 'text', nullable: true, e};
    }
    // An int times a text repeats it in Python (a float times it raises): not translated.
    if (op === '*' && (l.kind === 'text') !== (r.kind === 'text') && l.kind !== 'none' && r.kind !== 'none') {
      throw havingError('SyntaxError', `repeating a text with * is not supported: ${UNSUPPORTED}`);
    }
    // Anything else but numbers raises TypeError in Python.
    if (l.kind !== 'num' || r.kind !== 'num') return {v: sql('NULL'), kind: 'num', nullable: true, e: or(e, TRUE)};
    if (op === '/') {
      // Python's / is true division, and raises ZeroDivisionError on 0.
      e = or(e, sql(`${r.v.sql} = 0`, ...r.v.params));
      return {
        v: sql(`(CAST(${l.v.sql} AS REAL) / ${r.v.sql})`, ...l.v.params, ...r.v.params),
        kind: 'num',
        nullable: true,
        e,
      };
    }
    return {v: sql(`(${l.v.sql} ${op} ${r.v.sql})`, ...l.v.params, ...r.v.params), kind: 'num', nullable: true, e};
  }
}
