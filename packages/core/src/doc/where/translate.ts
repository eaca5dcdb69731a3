/**
 * A condition's syntax tree as SQL that keeps Python's semantics exactly (docs/queries.md): for
 * each row, whether the formula engine would find the condition truthy, falsy, or raising (`Tri`),
 * or neither when SQL cannot tell, and then the row is the engine's to evaluate. Nothing is
 * guessed: every operation handled here has its answer for every kind of value its operands can
 * take (operands.ts), and any other operation, kind or value leaves the rows undecided.
 *
 * Handled: `and`, `or`, `not`, `x if c else y`, truthiness, comparisons (chained too) of columns
 * with constants and of columns of one kind, `in`/`not in` a tuple of constants, a string or a
 * ChoiceList, `is None`, `is True`/`False`, `str.startswith`/`endswith`, `$Ref.Col` (a join,
 * as deep as wanted) and `$Ref.id`. Constants are any expression that reads no row made of pure
 * functions (`TODAY()`, `DATE(2024, 1, 31)`, `DATEADD(TODAY(), days=-7)`), computed once by the
 * formula engine itself.
 */
import {type Expr, PyException, type Value} from '@gristlite/formula';
import {constantShape, truthy} from '@gristlite/formula/internal';
import type {DocMeta, TableMeta} from '../meta.js';
import {
  type Case,
  type Constant,
  type NumberRange,
  type Operand,
  UNKNOWN_OPERAND,
  UTC_ZONES,
  classOfValue,
  columnCases,
  constantItems,
  constantOperand,
  joinedColumn,
  mainColumn,
} from './operands.js';
import {
  FALSE,
  IS_FALSE,
  IS_TRUE,
  RAISES,
  type Sql,
  TRUE,
  type Tri,
  UNKNOWN,
  and,
  andTri,
  anyOf,
  decided,
  ifTri,
  notTri,
  or,
  orTri,
  sql,
  within,
} from './sql.js';

export interface TranslateContext {
  meta: DocMeta;
  table: TableMeta;
  /** Storage classes a column holds (colstats.ts). */
  classesOf(tableId: string, colId: string): number;
  /** The numbers a column holds (null: not known). */
  rangeOf(tableId: string, colId: string): NumberRange | null;
  /**
   * Whether SQL may read a column for the caller: false when access rules censor some of its
   * cells, or (`joined`) filter the rows of its table; its rows then go to the engine.
   */
  sqlReadable(tableId: string, colId: string, joined: boolean): boolean;
  /** The value of an expression that reads no row, computed by the formula engine (throws its PyException). */
  constant(expr: Expr): Value;
}

/** Functions and module attributes whose value depends only on their arguments (and the clock). */
const PURE = new Set([
  'TODAY',
  'NOW',
  'DATE',
  'DATEADD',
  'DATEVALUE',
  'DATEDIF',
  'DTIME',
  'EDATE',
  'EOMONTH',
  'YEAR',
  'MONTH',
  'DAY',
  'WEEKDAY',
  'HOUR',
  'MINUTE',
  'SECOND',
  'UPPER',
  'LOWER',
  'TRIM',
  'PROPER',
  'LEN',
  'CONCAT',
  'ROUND',
  'INT',
  'ABS',
  'VALUE',
  'int',
  'float',
  'str',
  'bool',
  'abs',
  'round',
  'min',
  'max',
  'len',
  'tuple',
  'list',
  'datetime.date',
  'datetime.datetime',
  'datetime.timedelta',
  'datetime.time',
  'math.floor',
  'math.ceil',
]);
const MODULES = new Set(['datetime', 'math']);

export class Translator {
  private aliases = 0;

  constructor(private readonly ctx: TranslateContext) {}

  /** The condition in a Boolean context. */
  condition(e: Expr): Tri {
    if (this.foldable(e)) return truthOf(this.constantOperand(e));
    switch (e.k) {
      case 'not':
        return notTri(this.condition(e.v));
      case 'and':
        return andTri(e.vals.map((v) => this.condition(v)));
      case 'or':
        return orTri(e.vals.map((v) => this.condition(v)));
      case 'ifexp':
        return ifTri(this.condition(e.test), this.condition(e.body), this.condition(e.orelse));
      case 'cmp': {
        const ops = e.vals.map((v) => this.operand(v));
        return andTri(e.ops.map((op, i) => compare(op, ops[i], ops[i + 1])));
      }
      case 'call': {
        const fn = e.fn;
        if (fn.k === 'attr' && (fn.name === 'startswith' || fn.name === 'endswith') && !fn.dollar) {
          return this.affix(fn.name, fn.obj, e.args);
        }
        break;
      }
    }
    return truthOf(this.operand(e));
  }

  /** `obj.startswith(arg)` / `obj.endswith(arg)`. */
  private affix(method: 'startswith' | 'endswith', objExpr: Expr, args: Extract<Expr, {k: 'call'}>['args']): Tri {
    if (args.length !== 1 || args[0].kind !== 'pos' || !this.foldable(args[0].value)) return UNKNOWN;
    const obj = this.operand(objExpr);
    const arg = this.constantOf(args[0].value);
    if (arg.raises) return anyOf(obj.cases.map((c) => within(c.when, c.kind.k === 'unknown' ? UNKNOWN : RAISES)));
    const v = arg.value;
    const shape = constantShape(v);
    const affixes = typeof v === 'string' ? [v] : shape.kind === 'items' && shape.tuple ? shape.items : null;
    return anyOf(
      obj.cases.map((c) => {
        let tri: Tri;
        switch (c.kind.k) {
          case 'str':
            if (affixes === null) tri = RAISES;
            else if (!affixes.every((a) => typeof a === 'string')) tri = UNKNOWN;
            else tri = decided(or(...(affixes as string[]).map((a) => affixSql(method, c.v, a))));
            break;
          case 'unknown':
          case 'record':
            tri = UNKNOWN;
            break;
          default:
            tri = RAISES;
        }
        return within(c.when, tri);
      }),
    );
  }

  /** The values an expression takes, row by row. */
  operand(e: Expr): Operand {
    if (this.foldable(e)) return this.constantOperand(e);
    if (e.k !== 'attr') return UNKNOWN_OPERAND;
    const {table} = this.ctx;
    if (e.obj.k === 'name' && e.obj.id === 'rec') {
      const colId = e.name;
      const col = table.byId.get(colId);
      if (colId === 'id') {
        return {cases: columnCases({value: mainColumn(table, 'id'), type: 'Id', classes: 2})};
      }
      if (!col || !this.ctx.sqlReadable(table.tableId, colId, false)) return UNKNOWN_OPERAND;
      return {
        cases: columnCases({
          value: mainColumn(table, colId),
          type: col.type,
          classes: this.ctx.classesOf(table.tableId, colId),
          zone: col.ct.tz ?? undefined,
          range: this.ctx.rangeOf(table.tableId, colId),
        }),
      };
    }
    // An attribute of records: a column of the referenced row (a join).
    const base = this.operand(e.obj);
    const cases: Case[] = [];
    for (const c of base.cases) {
      switch (c.kind.k) {
        case 'record': {
          const target = this.ctx.meta.tables.get(c.kind.table);
          if (!target) return UNKNOWN_OPERAND;
          if (e.name === 'id') {
            cases.push({when: c.when, kind: {k: 'num'}, v: c.v});
            break;
          }
          const col = target.byId.get(e.name);
          if (!col || !this.ctx.sqlReadable(target.tableId, e.name, true)) return UNKNOWN_OPERAND;
          const alias = `gristlite where ${++this.aliases}`;
          const value = joinedColumn(target, col, c.v, alias);
          const classes = this.ctx.classesOf(target.tableId, col.colId) | classOfValue(col.encode(col.ct.defaultValue));
          const range = this.ctx.rangeOf(target.tableId, col.colId);
          const dflt = col.ct.defaultValue;
          // A missing row reads as the column's default, which joins the numbers.
          const withDefault =
            range && typeof dflt === 'number'
              ? {
                  min: Math.min(range.min ?? dflt, dflt),
                  max: Math.max(range.max ?? dflt, dflt),
                  integral: range.integral && Number.isInteger(dflt),
                }
              : range;
          for (const j of columnCases({
            value,
            type: col.type,
            classes,
            zone: col.ct.tz ?? undefined,
            range: withDefault,
          })) {
            cases.push({when: and(c.when, j.when), kind: j.kind, v: j.v});
          }
          break;
        }
        case 'alt': // InvalidTypedValue
        case 'none': // AttributeError
        case 'error':
          cases.push({when: c.when, kind: {k: 'error'}, v: FALSE});
          break;
        default:
          cases.push({when: c.when, kind: {k: 'unknown'}, v: FALSE});
      }
    }
    return {cases};
  }

  private constantOf(e: Expr): Constant {
    try {
      return {value: this.ctx.constant(e)};
    } catch (err) {
      if (err instanceof PyException) return {value: null, raises: true};
      throw err;
    }
  }

  private constantOperand(e: Expr): Operand {
    return constantOperand(this.constantOf(e));
  }

  /** Whether an expression reads no row and calls only pure functions (computed once). */
  foldable(e: Expr): boolean {
    switch (e.k) {
      case 'const':
        return !e.lit;
      case 'name':
        return MODULES.has(e.id) && !this.ctx.meta.tables.has(e.id);
      case 'attr':
        if (e.dollar) return false;
        if (e.obj.k === 'name' && MODULES.has(e.obj.id))
          return this.foldable(e.obj) && PURE.has(`${e.obj.id}.${e.name}`);
        return this.foldable(e.obj);
      case 'call': {
        if (!e.args.every((a) => (a.kind === 'pos' || a.kind === 'kw') && this.foldable(a.value))) return false;
        const fn = e.fn;
        if (fn.k === 'name') return PURE.has(fn.id) && !this.ctx.meta.tables.has(fn.id);
        return fn.k === 'attr' && this.foldable(fn);
      }
      case 'unary':
      case 'not':
        return this.foldable(e.v);
      case 'bin':
        return this.foldable(e.l) && this.foldable(e.r);
      case 'and':
      case 'or':
      case 'cmp':
        return e.vals.every((v) => this.foldable(v));
      case 'ifexp':
        return this.foldable(e.test) && this.foldable(e.body) && this.foldable(e.orelse);
      case 'tuple':
      case 'list':
        return e.elts.every((v) => v.k !== 'star' && this.foldable(v));
      case 'sub':
        return this.foldable(e.obj) && this.foldable(e.index);
      default:
        return false;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Operations on the cases of operands

/** Python's truthiness of an operand. */
export function truthOf(o: Operand): Tri {
  if (o.constant) return o.constant.raises ? RAISES : truthy(o.constant.value) ? IS_TRUE : IS_FALSE;
  return anyOf(
    o.cases.map((c) => {
      const x = c.v;
      let tri: Tri;
      switch (c.kind.k) {
        case 'none':
          tri = IS_FALSE;
          break;
        case 'num':
        case 'record':
          tri = decided(sql(`(${x.sql} <> 0)`, ...x.params));
          break;
        case 'str':
          tri = decided(sql(`(${x.sql} <> '')`, ...x.params));
          break;
        case 'alt':
        case 'date':
        case 'datetime':
          tri = IS_TRUE;
          break;
        case 'tuple':
          tri = decided(
            sql(
              `(CASE WHEN json_valid(${x.sql}) THEN json_array_length(${x.sql}) > 0 ELSE 0 END)`,
              ...x.params,
              ...x.params,
            ),
          );
          break;
        case 'error':
          tri = RAISES;
          break;
        default:
          tri = UNKNOWN;
      }
      return within(c.when, tri);
    }),
  );
}

const SQL_OPS: Record<string, string> = {'==': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>='};
const FLIPPED: Record<string, string> = {'==': '==', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<='};

/** `l op r` for one comparison of a chain. */
export function compare(op: string, l: Operand, r: Operand): Tri {
  if (op === 'in' || op === 'not in') {
    const t = contains(l, r);
    return op === 'in' ? t : notTri(t);
  }
  if (op === 'is' || op === 'is not') {
    const t = l.constant && !r.constant ? identity(r, l) : identity(l, r);
    return op === 'is' ? t : notTri(t);
  }
  return pairs(l, r, (a, b) => compareCases(op, a, b, l.constant, r.constant));
}

/** Every pair of cases of two operands, each answered by `fn`. */
function pairs(l: Operand, r: Operand, fn: (a: Case, b: Case) => Tri): Tri {
  const parts: Tri[] = [];
  for (const a of l.cases) {
    for (const b of r.cases) {
      const when = and(a.when, b.when);
      if (when.sql === '0') continue;
      if (a.kind.k === 'error' || b.kind.k === 'error') parts.push(within(when, RAISES));
      else if (a.kind.k === 'unknown' || b.kind.k === 'unknown') parts.push(within(when, UNKNOWN));
      else parts.push(within(when, fn(a, b)));
    }
  }
  return anyOf(parts);
}

function isNaNConstant(c: Constant | undefined): boolean {
  return !!c && !c.raises && typeof c.value === 'number' && Number.isNaN(c.value);
}

function compareCases(op: string, a: Case, b: Case, ca?: Constant, cb?: Constant): Tri {
  // The engine's `!=` is `not ==` for every value (compareOp), and `==` never raises.
  if (op === '!=') return notTri(compareCases('==', a, b, ca, cb));
  const ka = a.kind;
  const kb = b.kind;
  const eq = op === '==';
  let t: Sql | boolean | 'raises' | null;
  if (ka.k === 'none' || kb.k === 'none') t = eq ? ka.k === kb.k : 'raises';
  else if (ka.k !== kb.k) t = eq ? false : 'raises';
  else {
    switch (ka.k) {
      case 'num':
        // NaN equals nothing and orders with nothing, without raising.
        t = isNaNConstant(ca) || isNaNConstant(cb) ? false : cmpSql(op, a.v, b.v);
        break;
      case 'str':
        t = cmpSql(op, a.v, b.v);
        break;
      case 'alt':
        t = !eq ? 'raises' : ka.text === false || (kb as {text?: false}).text === false ? null : cmpSql(op, a.v, b.v);
        break;
      case 'record':
        t = ka.table === (kb as {table: string}).table ? cmpSql(op, a.v, b.v) : eq ? false : 'raises';
        break;
      case 'date':
        t = dateCmp(op, a, b, ca, cb);
        break;
      case 'datetime':
        // One tzinfo on both sides compares wall times (ambiguous around a DST change): left to the engine.
        t =
          (ca || cb) && (ka.zone !== (kb as {zone: string}).zone || UTC_ZONES.has(ka.zone))
            ? cmpSql(op, a.v, b.v)
            : null;
        break;
      default:
        t = null;
    }
  }
  if (t === null) return UNKNOWN;
  if (t === 'raises') return RAISES;
  if (t === true) return IS_TRUE;
  if (t === false) return IS_FALSE;
  return decided(t);
}

function cmpSql(op: string, a: Sql, b: Sql): Sql {
  return {sql: `(${a.sql} ${SQL_OPS[op]} ${b.sql})`, params: [...a.params, ...b.params]};
}

/** Dates: the column's seconds fall in the constant's day, or before or after it. */
function dateCmp(op: string, a: Case, b: Case, ca?: Constant, cb?: Constant): Sql | null {
  if (!!ca === !!cb) return null;
  const [col, constant, o] = ca ? [b, a, FLIPPED[op]] : [a, b, op];
  const day = constant.v.params[0] as number;
  const next = day + 86400;
  const x = col.v;
  const lt = (n: number) => sql(`(${x.sql} < ?)`, ...x.params, n);
  const ge = (n: number) => sql(`(${x.sql} >= ?)`, ...x.params, n);
  switch (o) {
    case '<':
      return lt(day);
    case '<=':
      return lt(next);
    case '>':
      return ge(next);
    case '>=':
      return ge(day);
    case '==':
      return and(ge(day), lt(next));
  }
  return null;
}

/** `item in container`. */
function contains(item: Operand, container: Operand): Tri {
  const items = constantItems(container.constant);
  if (items) {
    // `x in (a, b, ...)`: x == a or x == b ... (an equality never raises here).
    if (!items.length)
      return anyOf(
        item.cases.map((c) =>
          within(c.when, c.kind.k === 'error' ? RAISES : c.kind.k === 'unknown' ? UNKNOWN : IS_FALSE),
        ),
      );
    return orTri(items.map((v) => compare('==', item, constantOperand({value: v}))));
  }
  return pairs(item, container, (a, b) => {
    switch (b.kind.k) {
      case 'str':
        if (a.kind.k !== 'str') return RAISES; // 'in <string>' requires string as left operand
        return decided(item.constant ? instrSql(b.v, item.constant.value as string) : instrColumn(b.v, a.v));
      case 'tuple':
        // The items of a ChoiceList are strings: only a string can be one of them.
        if (a.kind.k !== 'str') return IS_FALSE;
        return decided(
          sql(
            `(CASE WHEN json_valid(${b.v.sql}) THEN EXISTS (SELECT 1 FROM json_each(${b.v.sql}) WHERE type = 'text' AND value = ${a.v.sql}) ELSE 0 END)`,
            ...b.v.params,
            ...b.v.params,
            ...a.v.params,
          ),
        );
      case 'record':
        return UNKNOWN;
      default:
        return RAISES; // not iterable
    }
  });
}

/** `x is None`, `x is True`, `x is False`. */
function identity(x: Operand, other: Operand): Tri {
  const c = other.constant;
  if (!c || c.raises || !(c.value === null || typeof c.value === 'boolean')) return UNKNOWN;
  const want = c.value;
  return anyOf(
    x.cases.map((k) => {
      let tri: Tri;
      if (k.kind.k === 'error') tri = RAISES;
      else if (k.kind.k === 'unknown') tri = UNKNOWN;
      else if (want === null) tri = k.kind.k === 'none' ? IS_TRUE : IS_FALSE;
      else if (k.kind.k === 'num' && k.kind.bool) tri = decided(sql(`(${k.v.sql} = ${want ? 1 : 0})`, ...k.v.params));
      else tri = IS_FALSE;
      return within(k.when, tri);
    }),
  );
}

/** A text's UTF-8 bytes starting or ending with `affix` (byte order is code point order in UTF-8). */
function affixSql(method: 'startswith' | 'endswith', x: Sql, affix: string): Sql {
  const bytes = Buffer.from(affix, 'utf8');
  if (!bytes.length) return TRUE;
  const b = `CAST(${x.sql} AS BLOB)`;
  // The length first: substr() of an empty blob is NULL.
  if (method === 'startswith')
    return sql(
      `(length(${b}) >= ? AND substr(${b}, 1, ?) = ?)`,
      ...x.params,
      bytes.length,
      ...x.params,
      bytes.length,
      bytes,
    );
  return sql(
    `(length(${b}) >= ? AND substr(${b}, -?) = ?)`,
    ...x.params,
    bytes.length,
    ...x.params,
    bytes.length,
    bytes,
  );
}

/** `needle in x` for a constant needle. */
function instrSql(x: Sql, needle: string): Sql {
  const bytes = Buffer.from(needle, 'utf8');
  if (!bytes.length) return TRUE;
  return sql(`(instr(CAST(${x.sql} AS BLOB), ?) > 0)`, ...x.params, bytes);
}

/** `needle in hay` for a column's needle. */
function instrColumn(hay: Sql, needle: Sql): Sql {
  return or(
    sql(`(${needle.sql} = '')`, ...needle.params),
    sql(`(instr(CAST(${hay.sql} AS BLOB), CAST(${needle.sql} AS BLOB)) > 0)`, ...hay.params, ...needle.params),
  );
}

export type {DocMeta};
