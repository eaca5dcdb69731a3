/**
 * Beyond Grist (issue 40 §2, docs/queries.md, D116): a table's rows grouped by columns, with
 * `count`, `sum`, `avg`, `min`, `max` and `count_distinct` of columns per group, `having` over
 * the aggregates (having.ts), sorted and limited: one SQLite query with bound parameters.
 *
 * Aggregates follow Grist's functions, which is what a Grist user would write in a summary
 * table's formula: `sum` and `avg` take the numbers only (SUM and AVERAGE skip text, booleans and
 * None), `sum` of nothing is 0; `min`/`max` take numbers (and dates) of numeric and date columns,
 * texts of Text and Choice columns, None when there are none (Grist's MIN answers 0 there, which
 * cannot be told from a real 0). Groups are formed by Python's equality as SQLite's is the same
 * for stored values (`1 == 1.0`, None with None, a number never a text).
 *
 * The rows taken are given by the reader: a SQL condition (`where`, access rules' row condition),
 * or, when rules check rows one by one, the ids they allow and the cells they censor; a censored
 * cell forms its own group (`["C"]`, as `/records` shows it) and is left out of aggregates.
 */
import type Database from 'better-sqlite3';
import {BadRequest} from '../../base/index.js';
import {cellDisplay} from '../cell-display.js';
import {type ColumnClasses, NULL_CLASS, NUM_CLASS, TEXT_CLASS} from '../colstats.js';
import {quoteIdent} from '../identifiers.js';
import type {ColumnMeta, DocMeta, TableMeta} from '../meta.js';
import type {CellValue} from '../types.js';
import {type Sql, sql} from '../where/index.js';
import {type HavingTerm, havingSql} from './having.js';

export {havingError} from './having.js';

/** Most groups one aggregate answers (`GRISTLITE_AGGREGATE_MAX_GROUPS`). */
export const DEFAULT_AGGREGATE_MAX_GROUPS = 10_000;

/** Most group columns plus aggregates one request names (each is one SQL expression). */
export const MAX_AGGREGATE_TERMS = 64;

/** The aggregate functions, by name. */
export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max', 'count_distinct'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

/** An aggregate read (`GET /aggregate`). */
export interface AggregateQuery {
  /** Columns to group by (none: one group of every row). */
  groupBy?: string[];
  /** Aggregates: `count`, or `fn:Col` (`sum:Amount`); default `count`. */
  agg?: string[];
  /** The rows taken: a condition in Grist's formula language (as `GET /records?where=`). */
  where?: string;
  /** The groups kept: a Python condition over the aggregates' names (`count > 2 and sum_Amount > 10`). */
  having?: string;
  /** Group columns or aggregates' names, `-` for descending; default the group columns. */
  sort?: string[];
  /** Most groups answered (at most the maximum number of groups). */
  limit?: number;
}

/** One group of an aggregate answer: the group columns' values and the aggregates, by name. */
export interface AggregateRecord {
  fields: Record<string, CellValue>;
  /** Reference group columns' values as Grist shows them (their visible column's text). */
  display?: Record<string, string>;
}

/** What the rows of an aggregate are. */
export type AggregateRows =
  /** A condition on the table (empty: every row). */
  | {kind: 'sql'; where: Sql}
  /** Rows allowed one by one by access rules, and per column the rows whose cell they censor. */
  | {kind: 'ids'; ids: number[]; censored: ReadonlyMap<string, number[]>};

/** What an aggregate needs of its document. */
export interface AggregateSource {
  readonly db: Database.Database;
  readonly meta: DocMeta;
  readonly classes: ColumnClasses;
  /** Columns the caller cannot read (they do not exist for them). */
  readonly hiddenCols: ReadonlySet<string>;
  readonly maxGroups: number;
  /** Longest having condition (`GRISTLITE_WHERE_MAX_CHARS`). */
  readonly maxChars: number;
}

interface AggTerm {
  name: string;
  fn: AggregateFunction;
  col: ColumnMeta | null;
}

/** An aggregate checked against its table (every malformed part refused before any row is read). */
export interface AggregatePlan {
  readonly table: TableMeta;
  readonly groups: ColumnMeta[];
  /** Aggregates answered, then those only `having` or `sort` name. */
  readonly aggs: AggTerm[];
  readonly shown: number;
  readonly having: string | null;
  readonly sort: Array<{name: string; desc: boolean}>;
  readonly limit: number | null;
}

function bad(what: string, message: string): BadRequest {
  return new BadRequest(`Invalid ${what}: ${message}`);
}

const NUMERIC = new Set(['Numeric', 'Int', 'Any']);
const DATES = new Set(['Date', 'DateTime']);
const TEXTS = new Set(['Text', 'Choice']);

/** Checks an aggregate's parts against `table` as the caller sees it: 400 for anything malformed. */
export function planAggregate(src: AggregateSource, table: TableMeta, q: AggregateQuery): AggregatePlan {
  const column = (what: string, colId: string): ColumnMeta => {
    const col = table.byId.get(colId);
    // A column the caller cannot read is unknown, in the same words (as for where).
    if (!col || src.hiddenCols.has(colId)) {
      throw bad(what, `Table '${table.tableId}' has no column '${colId}'`);
    }
    return col;
  };
  const groupIds = q.groupBy ?? [];
  const aggTexts = q.agg?.length ? q.agg : ['count'];
  if (groupIds.length + aggTexts.length > MAX_AGGREGATE_TERMS) {
    throw new BadRequest(`An aggregate names at most ${MAX_AGGREGATE_TERMS} group columns and aggregates`);
  }
  const groups: ColumnMeta[] = [];
  for (const colId of groupIds) {
    if (!colId) throw bad('group_by', 'an empty column name (group_by=A,B lists column ids)');
    const col = column('group_by', colId);
    if (groups.includes(col)) throw bad('group_by', `column '${colId}' is named twice`);
    groups.push(col);
  }
  const names = new Set(groups.map((g) => g.colId));
  const aggs: AggTerm[] = [];
  const termOf = (what: string, fn: string, colId: string | null): AggTerm => {
    if (!(AGGREGATE_FUNCTIONS as readonly string[]).includes(fn)) {
      throw bad(what, `unknown function '${fn}' (one of ${AGGREGATE_FUNCTIONS.join(', ')})`);
    }
    const f = fn as AggregateFunction;
    if (f === 'count') {
      if (colId !== null) throw bad(what, "count takes no column (count_distinct:Col counts a column's values)");
      return {name: 'count', fn: f, col: null};
    }
    if (!colId) throw bad(what, `${fn} needs a column (${fn}:Col)`);
    const col = column(what, colId);
    checkFunction(what, f, col);
    return {name: `${f}_${col.colId}`, fn: f, col};
  };
  for (const text of aggTexts) {
    const m = /^([a-z_]+)(?::(.*))?$/.exec(text);
    if (!m) throw bad('agg', `'${text}' is not fn or fn:Col (count, sum:Amount, ...)`);
    const term = termOf('agg', m[1], m[2] ?? null);
    if (names.has(term.name)) throw bad('agg', `'${term.name}' is named twice (as a group column or an aggregate)`);
    names.add(term.name);
    aggs.push(term);
  }
  const shown = aggs.length;
  /** An aggregate's name in having or sort (`sum_Amount`), added to those computed. */
  const byName = (what: string, name: string): AggTerm | null => {
    const found = aggs.find((a) => a.name === name);
    if (found) return found;
    if (name === 'count') {
      const count = termOf(what, 'count', null);
      aggs.push(count);
      return count;
    }
    // The longest function name first: count_distinct_X is not count of distinct_X.
    const fn = [...AGGREGATE_FUNCTIONS].sort((a, b) => b.length - a.length).find((f) => name.startsWith(`${f}_`));
    if (!fn || fn === 'count') return null;
    const term = termOf(what, fn, name.slice(fn.length + 1));
    aggs.push(term);
    return term;
  };
  const sort: AggregatePlan['sort'] = [];
  for (const spec of q.sort ?? []) {
    const desc = spec.startsWith('-');
    const name = desc ? spec.slice(1) : spec;
    if (!groups.some((g) => g.colId === name) && !byName('sort', name)) {
      throw bad('sort', `no group column or aggregate named '${name}'`);
    }
    sort.push({name, desc});
  }
  if (q.limit !== undefined) {
    if (!Number.isInteger(q.limit) || q.limit < 1) throw bad('limit', 'a positive integer');
    if (q.limit > src.maxGroups) {
      throw bad('limit', `at most ${src.maxGroups} groups (GRISTLITE_AGGREGATE_MAX_GROUPS)`);
    }
  }
  const plan: AggregatePlan = {
    table,
    groups,
    aggs,
    shown,
    having: q.having?.trim() ? q.having : null,
    sort,
    limit: q.limit ?? null,
  };
  // Checks the having condition now (its names may add aggregates), before any row is read.
  if (plan.having) havingSql(plan.having, src.maxChars, (name) => havingTerm(src, plan, byName, name, noCensor));
  return plan;
}

/** Which functions a column's type takes (what Grist's SUM/AVERAGE/MIN/MAX would read there). */
function checkFunction(what: string, fn: AggregateFunction, col: ColumnMeta): void {
  const base = col.ct.base;
  if (fn === 'count_distinct') return;
  if (fn === 'sum' || fn === 'avg') {
    if (NUMERIC.has(base)) return;
    const hint = base === 'Bool' ? " (Grist's SUM skips booleans: count the rows with where=$Col instead)" : '';
    throw bad(what, `${fn}:${col.colId} needs a Numeric, Int or Any column, not ${col.type}${hint}`);
  }
  if (NUMERIC.has(base) || DATES.has(base) || TEXTS.has(base)) return;
  throw bad(
    what,
    `${fn}:${col.colId} needs a Numeric, Int, Any, Date, DateTime, Text or Choice column, not ${col.type}`,
  );
}

/** A column's value as the rows give it: NULL where access rules censor the cell. */
type CensorOf = (col: ColumnMeta) => Sql | null;
const noCensor: CensorOf = () => null;

function cellSql(table: TableMeta, col: ColumnMeta, censorOf: CensorOf): Sql {
  const c = `${quoteIdent(table.tableId)}.${quoteIdent(col.colId)}`;
  const censor = censorOf(col);
  return censor ? sql(`(CASE WHEN ${censor.sql} THEN NULL ELSE ${c} END)`, ...censor.params) : sql(c);
}

/** The SQL of one aggregate over a group. */
function aggSql(src: AggregateSource, table: TableMeta, term: AggTerm, censorOf: CensorOf): Sql {
  if (term.fn === 'count') return sql('count(*)');
  const col = term.col!;
  const cell = cellSql(table, col, censorOf);
  if (term.fn === 'count_distinct') return sql(`count(DISTINCT ${cell.sql})`, ...cell.params);
  // Numbers of numeric and date columns, texts of text columns; plain where the column holds nothing else.
  const texts = TEXTS.has(col.ct.base) && (term.fn === 'min' || term.fn === 'max');
  const only = texts ? TEXT_CLASS : NUM_CLASS;
  const classes = src.classes.of(table.tableId, col.colId);
  const value =
    (classes & ~(only | NULL_CLASS)) === 0
      ? cell
      : sql(
          `(CASE WHEN typeof(${cell.sql}) IN (${texts ? "'text'" : "'integer', 'real'"}) THEN ${cell.sql} END)`,
          ...cell.params,
          ...cell.params,
        );
  // Grist's SUM of no number is 0.
  if (term.fn === 'sum') return sql(`coalesce(sum(${value.sql}), 0)`, ...value.params);
  return sql(`${term.fn}(${value.sql})`, ...value.params);
}

function havingTerm(
  src: AggregateSource,
  plan: AggregatePlan,
  byName: ((what: string, name: string) => AggTerm | null) | null,
  name: string,
  censorOf: CensorOf,
): HavingTerm | null {
  const term = byName ? byName('having', name) : plan.aggs.find((a) => a.name === name);
  if (!term) return null;
  const col = term.col;
  if (col && (term.fn === 'min' || term.fn === 'max') && DATES.has(col.ct.base)) {
    throw new BadRequest(
      `Invalid having condition: TypeError: ${name} is a date, which a having condition cannot compare yet ` +
        '(filter rows by date in where)',
    );
  }
  const text = !!col && TEXTS.has(col.ct.base) && (term.fn === 'min' || term.fn === 'max');
  return {
    sql: aggSql(src, plan.table, term, censorOf),
    kind: text ? 'text' : 'num',
    nullable: term.fn === 'avg' || term.fn === 'min' || term.fn === 'max',
  };
}

/** The groups of `plan` over `rows`, as `{"records": [{"fields": ...}]}` answers them. */
export function runAggregate(src: AggregateSource, plan: AggregatePlan, rows: AggregateRows): AggregateRecord[] {
  const {table, groups} = plan;
  const t = quoteIdent(table.tableId);
  const censored = rows.kind === 'ids' ? rows.censored : null;
  const censorOf: CensorOf = (col) => {
    const ids = censored?.get(col.colId);
    return ids?.length ? sql(`${t}."id" IN (SELECT value FROM json_each(?))`, JSON.stringify(ids)) : null;
  };
  const select: Sql[] = [];
  const groupBy: string[] = [];
  const order: Record<string, string[]> = {};
  groups.forEach((g, i) => {
    select.push(cellSql(table, g, censorOf));
    groupBy.push(`"g${i}"`);
    order[g.colId] = [`"g${i}"`];
    const censor = censorOf(g);
    if (censor) {
      // Censored cells make one group of their own, sorted after the others.
      select.push(sql(`(${censor.sql})`, ...censor.params));
      groupBy.push(`"c${i}"`);
      order[g.colId].unshift(`"c${i}"`);
    }
  });
  plan.aggs.forEach((a, i) => {
    select.push(aggSql(src, table, a, censorOf));
    order[a.name] = [`"a${i}"`];
  });
  const aliases = [
    ...groups.flatMap((g, i) => (censorOf(g) ? [`"g${i}"`, `"c${i}"`] : [`"g${i}"`])),
    ...plan.aggs.map((_, i) => `"a${i}"`),
  ];
  const where =
    rows.kind === 'sql' ? rows.where : sql(`${t}."id" IN (SELECT value FROM json_each(?))`, JSON.stringify(rows.ids));
  const having = plan.having
    ? havingSql(plan.having, src.maxChars, (name) => havingTerm(src, plan, null, name, censorOf))
    : null;
  const sortTerms = [...plan.sort];
  for (const g of groups) if (!sortTerms.some((s) => s.name === g.colId)) sortTerms.push({name: g.colId, desc: false});
  const orderBy = sortTerms.flatMap((s) => order[s.name].map((o) => `${o}${s.desc ? ' DESC' : ''}`));
  // Beyond the maximum without a limit, one more group tells that there are too many.
  const limit = plan.limit ?? src.maxGroups + 1;
  const text =
    `SELECT ${select.map((s, i) => `${s.sql} AS ${aliases[i]}`).join(', ')} FROM ${t}` +
    (where.sql ? ` WHERE ${where.sql}` : '') +
    (groupBy.length ? ` GROUP BY ${groupBy.join(', ')}` : '') +
    (having ? ` HAVING ${having.sql}` : '') +
    (orderBy.length ? ` ORDER BY ${orderBy.join(', ')}` : '') +
    ' LIMIT ?';
  const params = [...select.flatMap((s) => s.params), ...where.params, ...(having?.params ?? []), limit];
  let out: unknown[][];
  try {
    out = src.db.prepare(text).raw(true).all(params) as unknown[][];
  } catch (e) {
    // SQLite's sum of integers beyond 64 bits; Python's ints have no bound, so no answer is exact.
    if (e instanceof Error && /integer overflow/.test(e.message)) {
      throw new BadRequest('Invalid agg: a sum overflows 64-bit integers');
    }
    // SQLite's own bounds on a statement (having.ts keeps well within them).
    if (
      e instanceof Error &&
      /Expression tree is too large|too many SQL variables|parser stack overflow/.test(e.message)
    ) {
      throw new BadRequest(`Invalid having condition: ValueError: the condition is too complex (${e.message})`);
    }
    throw e;
  }
  if (plan.limit === null && out.length > src.maxGroups) {
    throw new BadRequest(
      `The aggregate has more than ${src.maxGroups} groups (GRISTLITE_AGGREGATE_MAX_GROUPS): ` +
        'narrow it with where or having, or ask for fewer with limit',
    );
  }
  const shows = groups.map((g) => (g.ct.displayTarget === null ? null : cellDisplay(() => src.db, src.meta, g)));
  return out.map((row) => {
    const fields: Record<string, CellValue> = {};
    let display: Record<string, string> | undefined;
    let j = 0;
    groups.forEach((g, i) => {
      const raw = row[j++];
      const isCensored = censorOf(g) ? row[j++] === 1 : false;
      const v: CellValue = isCensored ? ['C'] : g.decode(raw);
      fields[g.colId] = v;
      const show = shows[i];
      if (show && !isCensored) (display ??= {})[g.colId] = String(show(v));
    });
    for (let i = 0; i < plan.shown; i++) fields[plan.aggs[i].name] = row[j++] as CellValue;
    return display ? {fields, display} : {fields};
  });
}
