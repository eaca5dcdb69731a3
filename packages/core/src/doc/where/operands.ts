/**
 * The values a condition's operands take, row by row, as SQL sees them: each operand is a list of
 * exclusive cases, one per storage class its cells may have (colstats.ts says which ones a column
 * holds), each with the Python kind the formula engine reads from it (`@gristlite/formula`'s cell
 * decoders: a Numeric cell holding text reads as AltText, an empty Ref as the empty record, a
 * Date as a `date` of the day its seconds fall in) and the SQL of the stored value. A case whose
 * kind SQL cannot follow (a marshalled value, a number out of a date's range) is `unknown`: its
 * rows go to the formula engine.
 */
import type {Value} from '@gristlite/formula';
import {constantShape} from '@gristlite/formula/internal';
import {BLOB_CLASS, NULL_CLASS, NUM_CLASS, type NumberRange, TEXT_CLASS} from '../colstats.js';
import type {ColumnMeta, TableMeta} from '../meta.js';
import {quoteIdent} from '../identifiers.js';
import {FALSE, type Sql, TRUE, and, not, or, sql} from './sql.js';

export type Kind =
  | {k: 'none'}
  /** int, float or bool (`bool`: the value is a Python bool, for `is True`). */
  | {k: 'num'; bool?: boolean}
  | {k: 'str'}
  /** AltText: a value stored where the column's type wanted another (`text`: the stored value is its text). */
  | {k: 'alt'; text?: false}
  /** A `date`: the stored value is seconds, the date is the day they fall in. */
  | {k: 'date'}
  /** An aware `datetime` in zone `zone` (the stored value is whole seconds). */
  | {k: 'datetime'; zone: string}
  /** A record of `table`: the stored value is its row id (0: the empty record). */
  | {k: 'record'; table: string}
  /** A tuple of strings (a ChoiceList): the stored value is its JSON text. */
  | {k: 'tuple'}
  | {k: 'unknown'}
  | {k: 'error'};

export interface Case {
  /** Where this case holds (cases of one operand are exclusive). */
  when: Sql;
  kind: Kind;
  /** The stored value, in SQL (numbers for num/date/datetime/record, text for str/alt/tuple). */
  v: Sql;
}

/** A value known before reading any row (a constant, or an expression of constants computed once). */
export interface Constant {
  value: Value;
  /** The expression raised when computed: every row raises. */
  raises?: boolean;
}

export interface Operand {
  cases: Case[];
  /** Set for constants: the value itself (some operations look at it). */
  constant?: Constant;
}

export const UNKNOWN_OPERAND: Operand = {cases: [{when: TRUE, kind: {k: 'unknown'}, v: FALSE}]};

/** The days a `date` can hold (years 1 to 9999), as the seconds of Date cells: beyond, reading raises. */
const DATE_MIN = -719162 * 86400;
const DATE_END = 2932897 * 86400;
/** DateTime cells read exactly when whole seconds well inside the years 1 to 9999. */
const DATETIME_MIN = DATE_MIN + 2 * 86400;
const DATETIME_END = DATE_END - 2 * 86400;

/** Zones whose wall time is the UTC instant (Python compares datetimes of one tzinfo by wall time). */
export const UTC_ZONES = new Set([
  'UTC',
  'Etc/UTC',
  'GMT',
  'Etc/GMT',
  'Zulu',
  'Etc/Zulu',
  'Universal',
  'Etc/Universal',
]);

/** The operand of a constant. */
export function constantOperand(c: Constant): Operand {
  const one = (kind: Kind, v: Sql): Operand => ({cases: [{when: TRUE, kind, v}], constant: c});
  if (c.raises) return one({k: 'error'}, FALSE);
  const v = c.value;
  if (v === null) return one({k: 'none'}, sql('NULL'));
  if (typeof v === 'boolean') return one({k: 'num', bool: true}, sql(v ? '1' : '0'));
  if (typeof v === 'bigint') {
    const n = v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    return one({k: 'num'}, sql('?', n));
  }
  if (typeof v === 'number') return one({k: 'num'}, Number.isNaN(v) ? sql('NULL') : sql('?', v));
  if (typeof v === 'string') return one({k: 'str'}, sql('?', v));
  const shape = constantShape(v);
  if (shape.kind === 'datetime') {
    // A naive datetime is left to the engine (unequal to aware ones, unordered with them).
    if (shape.zone === null) return one({k: 'unknown'}, FALSE);
    return one({k: 'datetime', zone: shape.zone}, sql('?', shape.seconds));
  }
  if (shape.kind === 'date') return one({k: 'date'}, sql('?', shape.days * 86400));
  return one({k: 'unknown'}, FALSE);
}

/** The items of a constant sequence (tuple or list), or null. */
export function constantItems(c: Constant | undefined): Value[] | null {
  if (!c || c.raises) return null;
  const shape = constantShape(c.value);
  return shape.kind === 'items' ? shape.items : null;
}

/** How cells of a column read, given the storage classes it holds. */
export interface ColumnReading {
  /** SQL of the stored value (already free of affinity: `+col`). */
  value: Sql;
  type: string;
  /** Storage classes its values may have (colstats.ts). */
  classes: number;
  /** A DateTime column's zone (its type's, New York for a bare DateTime, as the formula engine reads it). */
  zone?: string;
  /** What its numbers are (null: unknown): cases it proves empty are left out. */
  range?: NumberRange | null;
}

/** The numbers a column holds (colstats.ts). */
export type {NumberRange};

/**
 * The cases of a column's cells, following the cell decoders of `@gristlite/formula`
 * (convert.ts `makeCellDecoder`) over what the storage decoder gives for each storage class.
 */
export function columnCases(r: ColumnReading): Case[] {
  const x = r.value;
  const classes = r.classes;
  const has = (c: number) => (classes & c) !== 0;
  const nonNull = [NUM_CLASS, TEXT_CLASS, BLOB_CLASS].filter(has);
  // A guard per class: none needed when it is the only one, IS NULL / IS NOT NULL when NULL is the other.
  const guard = (cls: number): Sql => {
    if (cls === NULL_CLASS) return nonNull.length ? sql(`(${x.sql} IS NULL)`, ...x.params) : TRUE;
    if (nonNull.length === 1) return has(NULL_CLASS) ? sql(`(${x.sql} IS NOT NULL)`, ...x.params) : TRUE;
    const name = cls === NUM_CLASS ? `IN ('integer', 'real')` : cls === TEXT_CLASS ? `= 'text'` : `= 'blob'`;
    return sql(`(typeof(${x.sql}) ${name})`, ...x.params);
  };
  const out: Case[] = [];
  const add = (cls: number, kind: Kind, extra: Sql = TRUE, v: Sql = x) => {
    if (has(cls)) out.push({when: and(guard(cls), extra), kind, v});
  };
  /**
   * Numbers split by a condition: `kind` where it holds, `otherwise` elsewhere; when the column's
   * range proves it for every number (`proven`), no split.
   */
  const range = r.range;
  const numbers = (kind: Kind, cond: Sql, proven: boolean, otherwise: Kind = {k: 'unknown'}) => {
    if (proven) return add(NUM_CLASS, kind);
    add(NUM_CLASS, kind, cond);
    add(NUM_CLASS, otherwise, not(cond));
  };
  const integral = sql(`(${x.sql} = round(${x.sql}))`, ...x.params, ...x.params);
  const within = (lo: number, end: number) =>
    !!range && (range.min === null || (range.min >= lo && (range.max as number) < end));
  const unknown: Kind = {k: 'unknown'};
  const base = r.type.split(':')[0];
  switch (base) {
    case 'Id':
      add(NUM_CLASS, {k: 'num'});
      break;
    case 'Text':
    case 'Choice':
      add(NULL_CLASS, {k: 'none'});
      add(TEXT_CLASS, {k: 'str'});
      add(NUM_CLASS, unknown);
      add(BLOB_CLASS, unknown);
      break;
    case 'Numeric':
      add(NULL_CLASS, {k: 'none'});
      add(NUM_CLASS, {k: 'num'});
      add(TEXT_CLASS, {k: 'alt'});
      add(BLOB_CLASS, unknown);
      break;
    case 'Int':
      add(NULL_CLASS, {k: 'none'});
      // A fraction in an Int column reads as AltText.
      numbers({k: 'num'}, integral, !!range?.integral, {k: 'alt', text: false});
      add(TEXT_CLASS, {k: 'alt'});
      add(BLOB_CLASS, unknown);
      break;
    case 'Bool':
      add(NULL_CLASS, {k: 'none'});
      // Other numbers in a Bool column read as AltText.
      numbers({k: 'num', bool: true}, sql(`(${x.sql} IN (0, 1))`, ...x.params), !!range?.integral && within(0, 2), {
        k: 'alt',
        text: false,
      });
      add(TEXT_CLASS, {k: 'alt'});
      add(BLOB_CLASS, unknown);
      break;
    case 'Date':
      add(NULL_CLASS, {k: 'none'});
      numbers(
        {k: 'date'},
        sql(`(${x.sql} >= ? AND ${x.sql} < ?)`, ...x.params, DATE_MIN, ...x.params, DATE_END),
        within(DATE_MIN, DATE_END),
      );
      add(TEXT_CLASS, {k: 'alt'});
      add(BLOB_CLASS, unknown);
      break;
    case 'DateTime': {
      add(NULL_CLASS, {k: 'none'});
      const zone = r.zone || 'UTC';
      numbers(
        {k: 'datetime', zone},
        sql(
          `(${x.sql} >= ? AND ${x.sql} < ? AND ${x.sql} = round(${x.sql}))`,
          ...x.params,
          DATETIME_MIN,
          ...x.params,
          DATETIME_END,
          ...x.params,
          ...x.params,
        ),
        !!range?.integral && within(DATETIME_MIN, DATETIME_END),
      );
      add(TEXT_CLASS, {k: 'alt'});
      add(BLOB_CLASS, unknown);
      break;
    }
    case 'Ref': {
      const table = r.type.slice('Ref:'.length);
      // An empty cell is the empty record (row id 0).
      add(NULL_CLASS, {k: 'record', table}, TRUE, sql('0'));
      numbers({k: 'record', table}, integral, !!range?.integral);
      add(TEXT_CLASS, {k: 'alt'});
      add(BLOB_CLASS, unknown);
      break;
    }
    case 'ChoiceList': {
      // An empty cell is the empty tuple; text is a list when it is a JSON array of strings.
      add(NULL_CLASS, {k: 'tuple'}, TRUE, sql(`'[]'`));
      // CASE: json_each must never see text that is not JSON (it raises), whatever order SQLite tests in.
      const list = sql(
        `(CASE WHEN substr(${x.sql}, 1, 1) = '[' AND json_valid(${x.sql}) ` +
          `THEN NOT EXISTS (SELECT 1 FROM json_each(${x.sql}) WHERE type <> 'text') ELSE 0 END)`,
        ...x.params,
        ...x.params,
        ...x.params,
      );
      add(TEXT_CLASS, {k: 'tuple'}, list);
      add(TEXT_CLASS, {k: 'alt'}, not(list));
      add(NUM_CLASS, unknown);
      add(BLOB_CLASS, unknown);
      break;
    }
    case 'Any':
      add(NULL_CLASS, {k: 'none'});
      add(NUM_CLASS, {k: 'num'});
      add(TEXT_CLASS, {k: 'str'});
      // Booleans are stored marshalled: X'54' True, X'46' False.
      add(
        BLOB_CLASS,
        {k: 'num', bool: true},
        sql(`(${x.sql} IN (X'54', X'46'))`, ...x.params),
        sql(`(${x.sql} = X'54')`, ...x.params),
      );
      add(BLOB_CLASS, unknown, sql(`(${x.sql} NOT IN (X'54', X'46'))`, ...x.params));
      break;
    default:
      out.length = 0;
      out.push({when: TRUE, kind: unknown, v: FALSE});
  }
  if (!out.length) out.push({when: FALSE, kind: unknown, v: FALSE});
  return out;
}

/** The column of the main table, as SQL reads it in a record query (`"T"."col"`, free of affinity). */
export function mainColumn(table: TableMeta, colId: string): Sql {
  const c = `${quoteIdent(table.tableId)}.${quoteIdent(colId)}`;
  return sql(colId === 'id' ? c : `+${c}`);
}

/**
 * A column of the row `id` of another table (a reference followed): the stored value when the row
 * exists, else what a missing row reads as (the column's default, as the formula engine reads it).
 */
export function joinedColumn(target: TableMeta, col: ColumnMeta | 'id', id: Sql, alias: string): Sql {
  const t = quoteIdent(target.tableId);
  const a = quoteIdent(alias);
  if (col === 'id') return id;
  const c = quoteIdent(col.colId);
  const dflt = col.encode(col.ct.defaultValue);
  return {
    sql:
      `(CASE WHEN EXISTS (SELECT 1 FROM ${t} AS ${a} WHERE ${a}."id" = ${id.sql}) ` +
      `THEN (SELECT +${a}.${c} FROM ${t} AS ${a} WHERE ${a}."id" = ${id.sql}) ELSE ? END)`,
    params: [...id.params, ...id.params, dflt],
  };
}

/** The storage class of a value bound as a parameter. */
export function classOfValue(v: unknown): number {
  if (v === null || v === undefined) return NULL_CLASS;
  if (typeof v === 'number' || typeof v === 'bigint') return NUM_CLASS;
  if (typeof v === 'string') return TEXT_CLASS;
  return BLOB_CLASS;
}

export {or};
