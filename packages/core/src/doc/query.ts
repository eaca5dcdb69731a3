/**
 * Filter, sort and limit of record fetches, compiled to SQL with bound parameters. Identifiers
 * come from the document's metadata (validated, then quoted), values are always parameters.
 *
 * Filters: Grist compares the stored values with Python equality (`1 == 1.0 == True`). Here each
 * wanted value becomes the set of ways Grist could have stored an equal value: raw, marshalled
 * (strings in numeric columns, numbers and booleans in text and Any columns), numbers and booleans
 * for each other. The column is written `+"col"` so that SQLite applies no type affinity to the
 * comparison (Python's "1" != 1).
 *
 * Sort: Grist sorts in Node with a "typed compare": booleans < numbers < null < lists < strings,
 * strings by an en-US collator. The SQL approximation ranks values by their storage class the same
 * way and compares strings case-insensitively first (NOCASE), lowercase first on ties. Where it
 * differs from Grist: strings are not ICU-collated (accents sort by code point, and ASCII
 * punctuation between '9' and 'A' sorts after digits); marshalled booleans (Any and Text
 * columns) rank first as in Grist, but numbers stored marshalled rank with lists; lists compare by
 * their stored bytes.
 *
 * Both take the storage classes each column holds (colstats.ts): a typed column usually holds one
 * class, and then the rank CASE, the stored forms of other classes and the case tie-breaker of
 * non-text columns are left out, giving the plain WHERE and ORDER BY that SQLite runs at the speed
 * of a hand-written query, with the same result.
 */
import type Database from 'better-sqlite3';
import {BadRequest, engineError} from '../base/index.js';
import {dumps} from '@gristlite/formula';
import type {ColumnMeta, TableMeta} from './meta.js';
import {ANY_CLASS, BLOB_CLASS, classOf, type ColumnClasses, NULL_CLASS, NUM_CLASS, TEXT_CLASS} from './colstats.js';
import type {RecordQuery} from './api-types.js';
import {quoteIdent} from './identifiers.js';
import {andScope, type RowScope} from './rowscope.js';
import type {CellValue} from './types.js';

export {quoteIdent} from './identifiers.js';

/** Above this many stored forms, a filter's values are bound as JSON arrays rather than one by one. */
const MAX_INLINE_VALUES = 500;

/**
 * Sort keys a query may have, after repeats are dropped (a repeated column cannot change the
 * order). Each key becomes up to four ORDER BY terms, and SQLite allows 2000 (issue 11: 2000 keys
 * failed with "too many terms in ORDER BY clause").
 */
export const MAX_SORT_KEYS = 200;

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

function floatBytes(n: number): Buffer {
  const b = Buffer.alloc(9);
  b[0] = 'g'.charCodeAt(0);
  b.writeDoubleLE(n, 1);
  return b;
}

/** The stored forms of values equal (in Python) to `v`. */
function storedCandidates(v: CellValue): unknown[] {
  const out: unknown[] = [];
  if (typeof v === 'boolean') {
    const n = v ? 1 : 0;
    out.push(n, dumps(v), dumps(n), floatBytes(n));
  } else if (typeof v === 'number') {
    out.push(v, dumps(v));
    if (Number.isInteger(v)) {
      out.push(floatBytes(v));
    }
    if (v === 0 || v === 1) {
      out.push(dumps(v === 1));
    }
  } else if (typeof v === 'string') {
    out.push(v, dumps(v));
  } else if (v !== null) {
    out.push(dumps(v));
  }
  return out;
}

/**
 * SQL for "column equals one of `values`" (Python equality on stored values). `classes` are the
 * storage classes the column may hold (colstats.ts): stored forms of other classes cannot match and
 * are left out, which keeps the usual case a single `+col = ?` or `+col IN (...)` SQLite runs fast.
 */
export function equalityCondition(colSql: string, values: CellValue[], classes = ANY_CLASS): SqlFragment {
  const params: unknown[] = [];
  const seen = new Set<string>();
  let hasNull = false;
  for (const v of values) {
    if (v === null) {
      hasNull = true;
      continue;
    }
    for (const c of storedCandidates(v)) {
      if (!(classOf(c) & classes)) {
        continue;
      }
      const key = Buffer.isBuffer(c) ? 'b' + c.toString('hex') : typeof c + String(c);
      if (!seen.has(key)) {
        seen.add(key);
        params.push(c);
      }
    }
  }
  // `+` keeps SQLite from applying the column's affinity ("1" would equal 1). The id column holds
  // only integers and no candidate of another class is left, so it may use its index.
  const lhs = colSql === '"id"' && classes === NUM_CLASS ? colSql : `+${colSql}`;
  const parts: string[] = [];
  if (params.length > MAX_INLINE_VALUES) {
    // A long list (Grist accepts any length) is bound as JSON arrays, one per storage class, so
    // that it never meets SQLite's limit on bound variables (issue 11: 40,000 values failed).
    const plain = params.filter((p) => typeof p === 'number' || typeof p === 'string');
    const blobs = params.filter((p): p is Buffer => Buffer.isBuffer(p)).map((b) => b.toString('hex'));
    const lists: string[] = [];
    if (plain.length) {
      lists.push('SELECT value FROM json_each(?)');
    }
    if (blobs.length) {
      lists.push('SELECT unhex(value) FROM json_each(?)');
    }
    parts.push(`${lhs} IN (${lists.join(' UNION ALL ')})`);
    params.length = 0;
    if (plain.length) {
      params.push(JSON.stringify(plain));
    }
    if (blobs.length) {
      params.push(JSON.stringify(blobs));
    }
  } else if (params.length === 1) {
    parts.push(`${lhs} = ?`);
  } else if (params.length) {
    parts.push(`${lhs} IN (${params.map(() => '?').join(',')})`);
  }
  if (hasNull && classes & NULL_CLASS) {
    parts.push(`${colSql} IS NULL`);
  }
  if (!parts.length) {
    return {sql: '0', params};
  }
  return {sql: parts.length === 1 ? parts[0] : `(${parts.join(' OR ')})`, params};
}

/** The storage classes of a table's column (ANY_CLASS when unknown). */
export type ClassesOf = (colId: string) => number;

const anyClasses: ClassesOf = () => ANY_CLASS;

export function compileFilter(table: TableMeta, filter: Record<string, unknown>, classesOf = anyClasses): SqlFragment {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [colId, values] of Object.entries(filter)) {
    if (!Array.isArray(values)) {
      throw new BadRequest('Invalid query: filter values must be arrays');
    }
    if (colId !== 'id' && !table.byId.has(colId)) {
      throw engineError('KeyError', `'${colId}'`);
    }
    const f = equalityCondition(
      quoteIdent(colId),
      values as CellValue[],
      colId === 'id' ? NUM_CLASS : classesOf(colId),
    );
    parts.push(f.sql);
    for (const p of f.params) {
      params.push(p);
    }
  }
  return {sql: parts.join(' AND '), params};
}

const SORT_FLAGS = new Set(['naturalSort', 'emptyLast', 'orderByChoice']);

/** Name of the SQL function giving a natural-sort key (registered on every open document). */
export const NATURAL_KEY_FN = 'gristlite_natural_key';

/** Digit runs become length-prefixed, so that "a2" < "a11" in plain string order. */
export function naturalKey(v: unknown): unknown {
  if (typeof v !== 'string') {
    return v;
  }
  return v.toLowerCase().replace(/\d+/g, (d) => {
    const digits = d.replace(/^0+(?=\d)/, '');
    return '\u0001' + String(digits.length).padStart(4, '0') + digits;
  });
}

/**
 * Whether SQLite's own order of storage classes (NULL < numbers < text < blob, with NULLs movable
 * to the end) matches Grist's rank order for the classes a column holds. When it does, the rank
 * key (a CASE per row) is left out of the ORDER BY. Returns null when a rank key is needed, else
 * whether NULLs must be moved last (ascending) or first (descending).
 */
function nativeClassOrder(classes: number, isList: boolean): {nullsLast: boolean} | null {
  const has = (c: number) => (classes & c) !== 0;
  const hasNull = has(NULL_CLASS);
  const hasNum = has(NUM_CLASS);
  // Grist ranks null after numbers but before text and blobs.
  if (hasNull && hasNum && (has(TEXT_CLASS) || has(BLOB_CLASS))) {
    return null;
  }
  // Grist ranks blobs (lists) before strings, SQLite after; list columns rank their JSON text with
  // lists, compared by bytes, where SQLite's order between text and blob holds.
  if (has(TEXT_CLASS) && has(BLOB_CLASS) && !isList) {
    return null;
  }
  return {nullsLast: hasNull && hasNum};
}

/** One ORDER BY term: an expression (with its own bound values), its direction and where NULLs go. */
export interface SortTerm {
  expr: string;
  params: unknown[];
  desc: boolean;
  /** NULLs come before every other value in the output order (SQLite's default for ASC). */
  nullsFirst: boolean;
}

export function compileSort(table: TableMeta, specs: string[], classesOf = anyClasses): SqlFragment {
  return termsSql(sortTerms(table, specs, classesOf));
}

/** ORDER BY text of `terms`. */
function termsSql(terms: SortTerm[]): SqlFragment {
  const params: unknown[] = [];
  const sql = terms.map((t) => {
    params.push(...t.params);
    const dir = t.desc ? 'DESC' : 'ASC';
    // SQLite's defaults: NULLs first ascending, last descending; anything else is spelled out.
    const nulls = t.nullsFirst === !t.desc ? '' : t.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST';
    return `${t.expr} ${dir}${nulls}`;
  });
  return {sql: sql.join(', '), params};
}

/** The ORDER BY terms of sort specs (the row order of a record query: id last, so it is total). */
export function sortTerms(table: TableMeta, specs: string[], classesOf = anyClasses): SortTerm[] {
  if (!specs.length) return [{expr: '"id"', params: [], desc: false, nullsFirst: true}];
  const terms: SortTerm[] = [];
  const seen = new Set<string>();
  for (const spec of specs) {
    if (typeof spec !== 'string') {
      throw new BadRequest(`Invalid sort: ${JSON.stringify(spec)}`);
    }
    const name = /^-?([^:]*)/.exec(spec)![1];
    if (seen.has(name)) {
      continue;
    }
    seen.add(name);
    if (seen.size > MAX_SORT_KEYS) {
      throw new BadRequest(`Invalid sort: more than ${MAX_SORT_KEYS} columns`);
    }
    const m = /^(-?)([^:]+)(?::(.*))?$/.exec(spec);
    if (!m) {
      throw new BadRequest(`Invalid sort: ${JSON.stringify(spec)}`);
    }
    const [, minus, colId, flagText] = m;
    const col: ColumnMeta | undefined = table.byId.get(colId);
    if (colId !== 'id' && !col) {
      throw new BadRequest(`Invalid sort: unknown column "${colId}"`);
    }
    // Grist looks for the flags it knows and ignores any other (`Age:emptyFirst` sorts by Age).
    const flags = new Set(flagText ? flagText.split(';').filter((f) => SORT_FLAGS.has(f)) : []);
    const desc = Boolean(minus);
    const plain = (expr: string, params: unknown[] = []): SortTerm => ({expr, params, desc, nullsFirst: !desc});
    const c = quoteIdent(colId);
    const isBool = col?.type === 'Bool';
    const isList = Boolean(col?.ct.isList);
    const classes = colId === 'id' ? NUM_CLASS : classesOf(colId);
    if (flags.has('emptyLast')) {
      // Empty means falsy and not a number: "", null, false (raw in Bool columns, else marshalled).
      terms.push({
        ...plain(
          `(CASE WHEN ${c} IS NULL OR +${c} = '' OR +${c} = X'46'${isBool ? ` OR +${c} = 0` : ''} THEN 1 ELSE 0 END)`,
        ),
        desc: false,
        nullsFirst: true,
      });
    }
    if (flags.has('orderByChoice') && col && ['Choice', 'ChoiceList'].includes(col.ct.base)) {
      const choices = choicesOf(col);
      if (choices.length) {
        terms.push(
          plain(`(CASE +${c} ${choices.map((_, i) => `WHEN ? THEN ${i}`).join(' ')} ELSE ${choices.length} END)`, [
            ...choices,
          ]),
        );
      }
    }
    // Booleans outside Bool columns (Any, alt-text) are stored marshalled, X'46' (False) and X'54'
    // (True): Grist's typedCompare ranks them first, False before True (as their bytes compare).
    const marshalledBools = !isList && (classes & BLOB_CLASS) !== 0;
    const native = marshalledBools ? null : nativeClassOrder(classes, isList);
    if (!native) {
      terms.push(
        plain(
          `(CASE WHEN ${c} IS NULL THEN 2 ${marshalledBools ? `WHEN +${c} IN (X'46', X'54') THEN 0 ` : ''}` +
            `WHEN typeof(${c}) IN ('integer','real') THEN ${isBool ? 0 : 1} ` +
            `WHEN typeof(${c}) = 'text' THEN ${isList ? 3 : 4} ELSE 3 END)`,
        ),
      );
    }
    // Grist's descending order is its ascending order reversed, so NULLs go first there.
    const nullsFirst = native?.nullsLast ? desc : !desc;
    if (flags.has('naturalSort')) {
      terms.push({...plain(`${NATURAL_KEY_FN}(${c})`), nullsFirst});
    } else if (classes & TEXT_CLASS) {
      // Case-insensitive first, lowercase first on ties; the collation affects only text.
      terms.push({...plain(`+${c} COLLATE NOCASE`), nullsFirst}, {...plain(`+${c}`), desc: !desc, nullsFirst: desc});
    } else {
      terms.push({...plain(`+${c}`), nullsFirst});
    }
  }
  if (table.hasManualSort) {
    terms.push({expr: '"manualSort"', params: [], desc: false, nullsFirst: true});
  }
  terms.push({expr: '"id"', params: [], desc: false, nullsFirst: true});
  return terms;
}

/**
 * The columns whose values place a row in the order of `specs` (what a cursor records of the last
 * row of a page): the sort columns, then manualSort when it breaks ties, then id.
 */
export function sortColumns(table: TableMeta, specs: string[]): string[] {
  const cols = new Set<string>();
  for (const spec of specs) if (typeof spec === 'string') cols.add(/^-?([^:]*)/.exec(spec)![1]);
  if (specs.length && table.hasManualSort) cols.add('manualSort');
  cols.add('id');
  return [...cols];
}

/**
 * Each term's value for a row whose columns hold `position` (stored values by column id). Terms
 * are computed now, from the stored values, so a cursor stays valid when the statistics that shape
 * the terms (colstats.ts) change between pages.
 */
function termValues(
  db: Database.Database,
  table: TableMeta,
  specs: string[],
  terms: SortTerm[],
  position: Readonly<Record<string, unknown>>,
): unknown[] {
  const cols = sortColumns(table, specs);
  if (terms.length > MAX_CURSOR_TERMS || cols.some((c) => !Object.hasOwn(position, c))) {
    throw new BadRequest('Invalid cursor: it does not fit this query');
  }
  const sql =
    `SELECT ${terms.map((t) => t.expr).join(', ')} ` +
    `FROM (SELECT ${cols.map((c) => `? AS ${quoteIdent(c)}`).join(', ')})`;
  return db
    .prepare(sql)
    .raw(true)
    .get([...terms.flatMap((t) => t.params), ...cols.map((c) => position[c])]) as unknown[];
}

/**
 * Above this many ORDER BY terms a query gets no cursor: the keyset condition nests one level a
 * term, and SQLite refuses expressions deeper than 1000.
 */
export const MAX_CURSOR_TERMS = 120;

/**
 * "The row comes after `position` in the order of `terms`" (keyset pagination): `position` holds
 * each term's value for the last row returned. Nested as t1 > v1 OR (t1 = v1 AND (t2 > v2 OR ...)),
 * with each term's own direction, NULL placement and collation (`=` and `<` use the term's COLLATE).
 */
export function keysetCondition(terms: SortTerm[], position: readonly unknown[]): SqlFragment {
  if (position.length !== terms.length) throw new BadRequest('Invalid cursor: it does not fit this query');
  let sql = '';
  const params: unknown[] = [];
  for (let i = terms.length - 1; i >= 0; i--) {
    const t = terms[i];
    const v = position[i];
    let after: string;
    const afterParams: unknown[] = [];
    if (v === null) {
      after = t.nullsFirst ? `${t.expr} IS NOT NULL` : '0';
      afterParams.push(...(t.nullsFirst ? t.params : []));
    } else {
      after = `${t.expr} ${t.desc ? '<' : '>'} ?`;
      afterParams.push(...t.params, v);
      if (!t.nullsFirst) {
        after = `(${after} OR ${t.expr} IS NULL)`;
        afterParams.push(...t.params);
      }
    }
    if (!sql) {
      sql = after;
      params.push(...afterParams);
      continue;
    }
    const equal = v === null ? `${t.expr} IS NULL` : `${t.expr} = ?`;
    const equalParams = v === null ? [...t.params] : [...t.params, v];
    sql = `(${after} OR (${equal} AND ${sql}))`;
    params.unshift(...afterParams, ...equalParams);
  }
  return {sql, params};
}

function choicesOf(col: ColumnMeta): string[] {
  try {
    const opts = JSON.parse(String(col.fields.widgetOptions || '{}'));
    return Array.isArray(opts.choices) ? opts.choices.filter((c: unknown) => typeof c === 'string') : [];
  } catch {
    return [];
  }
}

/** Sort specs from `sort=A,-B` (or an array already split). */
export function parseSortParam(sort: string | string[] | undefined): string[] {
  if (sort === undefined || sort === '') {
    return [];
  }
  return Array.isArray(sort) ? sort : sort.split(',');
}

/**
 * The rows a record query reads, as a WHERE condition ('' for every row): its filter, its
 * resolved `where`, and the rows `scope` lets the caller read.
 */
export function recordCondition(
  classes: ColumnClasses,
  table: TableMeta,
  q: RecordQuery,
  scope: RowScope,
): {sql: string; params: unknown[]} {
  const classesOf = (colId: string) => classes.of(table.tableId, colId);
  let where: {sql: string; params: unknown[]} = {sql: '', params: []};
  if (q.filter !== undefined && q.filter !== null) {
    if (typeof q.filter !== 'object' || Array.isArray(q.filter)) {
      throw new BadRequest('Invalid query: filter must be an object');
    }
    where = compileFilter(table, q.filter, classesOf);
  }
  // A `where` condition, resolved by the reader (doc/where/).
  if (q.whereSql) {
    const w = q.whereSql;
    where = where.sql
      ? {sql: `(${where.sql}) AND ${w.sql}`, params: [...where.params, ...w.params]}
      : {sql: w.sql, params: [...w.params]};
  }
  // Access rules' row condition (rowscope.ts), ANDed with the caller's filter.
  return andScope(scope, where);
}

/**
 * The SELECT of `select` (SQL of result columns) for a record query: filter, sort, limit, over the
 * rows `scope` lets the caller read.
 */
export function buildRecordQuery(
  db: Database.Database,
  classes: ColumnClasses,
  table: TableMeta,
  select: string,
  q: RecordQuery,
  scope: RowScope,
): {sql: string; params: unknown[]} {
  const classesOf = (colId: string) => classes.of(table.tableId, colId);
  let where = recordCondition(classes, table, q, scope);
  const specs = parseSortParam(q.sort);
  const terms = sortTerms(table, specs, classesOf);
  // Beyond Grist: the rows after a cursor's position (keyset pagination, cursor.ts).
  if (q.after) {
    const keyset = keysetCondition(terms, termValues(db, table, specs, terms, q.after));
    where = where.sql ? {sql: `(${where.sql}) AND ${keyset.sql}`, params: [...where.params, ...keyset.params]} : keyset;
  }
  const from = ` FROM ${quoteIdent(table.tableId)}${where.sql ? ` WHERE ${where.sql}` : ''}`;
  const sort = termsSql(terms);
  const n = q.limit ?? 0;
  if (!Number.isInteger(n)) {
    throw new BadRequest(`Invalid limit: ${String(q.limit)}`);
  }
  // Beyond 2^53 a limit no longer binds as an integer ("datatype mismatch"); no table is that long.
  let limit: number | null = n > 0 && n <= Number.MAX_SAFE_INTEGER ? n : null;
  if (n < 0) {
    // Array.splice(limit) semantics: a negative limit drops rows from the end.
    const {c} = db.prepare(`SELECT count(*) AS c${from}`).get(where.params) as {c: number};
    limit = Math.max(0, c + n);
  }
  const order = ` ORDER BY ${sort.sql}`;
  if (limit === null) {
    return {sql: `SELECT ${select}${from}${order}`, params: [...where.params, ...sort.params]};
  }
  if (!specs.length) {
    return {sql: `SELECT ${select}${from}${order} LIMIT ?`, params: [...where.params, limit]};
  }
  // Sorted and limited: the rows are picked first, and `select` computed for those alone (else
  // SQLite computes it for every row it sorts, which costs where `select` builds JSON text).
  return {
    sql: `SELECT ${select} FROM (SELECT *${from}${order} LIMIT ?)${order}`,
    params: [...where.params, ...sort.params, limit, ...sort.params],
  };
}
