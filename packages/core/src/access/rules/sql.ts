/**
 * Row rules as SQL: when every rule deciding a bit for a table's rows is built from comparisons of
 * `rec` columns with values known before reading (constants, `user.X`, a user attribute's fields),
 * joined by and/or/not, the decision becomes a WHERE clause and SQLite filters the rows (issue 27:
 * `rec.Owner == user.Email` reads as fast as no rule). Anything else (other operators, columns of
 * types whose stored form is not the value rules compare) gives null, and rows are checked one by
 * one in JavaScript with the same result.
 *
 * Equality is JavaScript's `===` on decoded cells: a string matches only a TEXT value, a number
 * only an INTEGER or REAL one, null only NULL, so each comparison checks the stored type as well.
 */
import {quoteIdent} from '../../doc/query.js';
import {isNeedRowData, type PredicateInput, type RowView} from './evaluate.js';
import type {Bit} from './permissions.js';
import type {Rule} from './ruleset.js';

/** A WHERE clause with its bound values. */
export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/** Column types whose stored values are the values rules compare (strings and numbers). */
const PLAIN_TYPES = new Set(['Text', 'Choice', 'Int', 'Numeric', 'Ref', 'Date', 'DateTime', 'Any']);

type Operand = {kind: 'col'; colId: string} | {kind: 'value'; value: unknown};
type ColumnType = (colId: string) => string | undefined;

class NotPushable extends Error {}

function fail(): never {
  throw new NotPushable();
}

/** What a user-side expression evaluates to (it reads no row). */
function userValue(node: unknown[], user: Record<string, unknown>): unknown {
  if (node[0] === 'Attr' && Array.isArray(node[1])) {
    const inner = node[1] as unknown[];
    if (inner[0] === 'Name' && inner[1] === 'user') {
      const name = String(node[2]);
      return Object.hasOwn(user, name) ? user[name] : undefined;
    }
    const base = userValue(inner, user);
    if (base && typeof (base as RowView).get === 'function') return (base as RowView).get(String(node[2]));
  }
  return fail();
}

function operand(node: unknown, user: Record<string, unknown>, colType: ColumnType): Operand {
  if (!Array.isArray(node)) fail();
  const [op, a, b] = node as unknown[];
  if (op === 'Const') return {kind: 'value', value: a};
  if (op === 'Name') {
    const names: Record<string, string> = {EDITOR: 'editors', OWNER: 'owners', VIEWER: 'viewers'};
    if (typeof a === 'string' && Object.hasOwn(names, a)) return {kind: 'value', value: names[a]};
    fail();
  }
  if (op === 'Attr' && Array.isArray(a) && (a as unknown[])[0] === 'Name' && (a as unknown[])[1] === 'rec') {
    const colId = String(b);
    const type = colId === 'id' ? 'Int' : colType(colId)?.split(':')[0];
    if (!type || !PLAIN_TYPES.has(type)) fail();
    return {kind: 'col', colId};
  }
  const value = userValue(node as unknown[], user);
  return {kind: 'value', value};
}

/** `col === value`, in SQL. */
function equals(colId: string, value: unknown): SqlCondition {
  const c = quoteIdent(colId);
  if (value === null) return {sql: `(${c} IS NULL)`, params: []};
  if (typeof value === 'string') return {sql: `(typeof(${c}) = 'text' AND ${c} = ?)`, params: [value]};
  if (typeof value === 'number' && Number.isFinite(value)) {
    return {sql: `(typeof(${c}) IN ('integer', 'real') AND ${c} = ?)`, params: [value]};
  }
  if (value === undefined) return {sql: '0', params: []}; // A cell is never undefined.
  return fail();
}

function not(c: SqlCondition): SqlCondition {
  return {sql: `(NOT ${c.sql})`, params: c.params};
}

function join(op: 'AND' | 'OR', parts: SqlCondition[]): SqlCondition {
  return {sql: `(${parts.map((p) => p.sql).join(` ${op} `)})`, params: parts.flatMap((p) => p.params)};
}

function condition(node: unknown, user: Record<string, unknown>, colType: ColumnType): SqlCondition {
  if (!Array.isArray(node)) fail();
  const [op, ...args] = node as unknown[];
  switch (op) {
    case 'Comment':
      return condition(args[0], user, colType);
    case 'And':
    case 'Or':
      return join(
        op === 'And' ? 'AND' : 'OR',
        args.map((a) => condition(a, user, colType)),
      );
    case 'Not':
      return not(condition(args[0], user, colType));
    case 'Eq':
    case 'Is':
    case 'NotEq':
    case 'IsNot': {
      const l = operand(args[0], user, colType);
      const r = operand(args[1], user, colType);
      let c: SqlCondition;
      if (l.kind === 'col' && r.kind === 'value') c = equals(l.colId, r.value);
      else if (l.kind === 'value' && r.kind === 'col') c = equals(r.colId, l.value);
      else if (l.kind === 'value' && r.kind === 'value') c = {sql: l.value === r.value ? '1' : '0', params: []};
      else fail();
      return op === 'Eq' || op === 'Is' ? c : not(c);
    }
    case 'In':
    case 'NotIn': {
      const l = operand(args[0], user, colType);
      const list = args[1] as unknown[];
      if (l.kind !== 'col' || !Array.isArray(list) || list[0] !== 'List') fail();
      const items = list.slice(1).map((n) => operand(n, user, colType));
      if (items.some((i) => i.kind !== 'value')) fail();
      const c = items.length
        ? join(
            'OR',
            items.map((i) => equals(l.colId, (i as {value: unknown}).value)),
          )
        : {sql: '0', params: []};
      return op === 'In' ? c : not(c);
    }
    default:
      return fail();
  }
}

/**
 * The rows for which `bit` is allowed under `chain` (the table's rules then the document's), as a
 * WHERE clause, or null when a rule cannot be expressed in SQL. Rules that read no row are
 * decided here, for this user.
 */
export function rowRuleSql(
  chain: readonly Rule[][],
  bit: Bit,
  user: Record<string, unknown>,
  colType: ColumnType,
): SqlCondition | null {
  // CASE WHEN <rule matches> THEN <its answer> ... : the first rule that matches and sets the bit.
  const whens: SqlCondition[] = [];
  try {
    for (const rules of chain) {
      for (const rule of rules) {
        const allow = rule.perms.allow.has(bit);
        if (!allow && !rule.perms.deny.has(bit)) continue;
        const answer = allow ? '1' : '0';
        if (rule.match === null) return finish(whens, answer);
        let known: boolean | null;
        try {
          known = Boolean(rule.match({user} as PredicateInput));
        } catch (e) {
          if (!isNeedRowData(e)) return null; // An erroring rule: decided row by row.
          known = null;
        }
        if (known === true) return finish(whens, answer);
        if (known === false) continue;
        const c = condition(rule.parsed, user, colType);
        whens.push({sql: `WHEN ${c.sql} THEN ${answer}`, params: c.params});
      }
    }
  } catch (e) {
    if (e instanceof NotPushable) return null;
    throw e;
  }
  return finish(whens, '0');
}

function finish(whens: SqlCondition[], otherwise: string): SqlCondition {
  if (!whens.length) return {sql: otherwise, params: []};
  return {
    sql: `(CASE ${whens.map((w) => w.sql).join(' ')} ELSE ${otherwise} END) = 1`,
    params: whens.flatMap((w) => w.params),
  };
}
