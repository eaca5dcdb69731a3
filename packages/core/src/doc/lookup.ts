/**
 * Finding rows by value, as the data engine's lookups do (add-or-update's `require`, display-value
 * references): a row matches when its decoded values equal the wanted ones with Python equality
 * (`1 == 1.0 == True`, `"1" != 1`, lists element by element, NaN equal to nothing). A whole batch
 * of wanted values is matched in one pass over the table, through a Map keyed on the values,
 * instead of one query (a table scan, as user columns have no index) per value.
 */
import type Database from 'better-sqlite3';
import {NULL_CLASS, NUM_CLASS, TEXT_CLASS} from './colstats.js';
import {quoteIdent} from './identifiers.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {equalityCondition, type SqlFragment} from './query.js';
import type {CellValue} from './types.js';

/** Rows read per statement while scanning (bounds memory on large tables). */
const PAGE = 10000;
/** Ids per `IN (...)` when matching on the id column. */
const ID_CHUNK = 500;
/** Up to this many wanted tuples, SQLite first narrows the rows to those that may match. */
const NARROW_MAX = 32;

const NULL_KEY = Symbol('null');

/** JSON of a list or dict value, the same for Python-equal values; undefined if it holds NaN. */
function canonicalJson(v: CellValue): string | undefined {
  let hasNaN = false;
  const norm = (x: CellValue): unknown => {
    if (typeof x === 'boolean') {
      return x ? 1 : 0;
    }
    if (typeof x === 'number') {
      if (Number.isNaN(x)) {
        hasNaN = true;
      }
      return Number.isFinite(x) ? x : {n: String(x)}; // JSON would make infinities null.
    }
    if (Array.isArray(x)) {
      return x.map(norm);
    }
    if (x !== null && typeof x === 'object') {
      return {
        d: Object.keys(x)
          .sort()
          .map((k) => [k, norm(x[k])]),
      };
    }
    return x;
  };
  const json = JSON.stringify(norm(v));
  return hasNaN ? undefined : json;
}

/** One column's rows by key, the same keys `findMatches` uses for a single column. */
export interface ColumnKeys {
  /** key -> the id (one row) or ids (ascending) holding a value with that key. */
  rows: Map<unknown, number | number[]>;
  /** Canonical JSON of list and dict values -> the symbol that is their key. */
  interned: Map<string, symbol>;
}

/**
 * The key of one cell value under Python equality: strings and numbers themselves (`True` is 1),
 * null a symbol, lists and dicts a symbol per canonical JSON (created when `create`), NaN none.
 */
export function singleKeyer(interned: Map<string, symbol>): (v: CellValue, create: boolean) => unknown {
  return (v, create) => {
    switch (typeof v) {
      case 'string':
        return v;
      case 'number':
        return Number.isNaN(v) ? undefined : v;
      case 'boolean':
        return v ? 1 : 0;
    }
    if (v === null || v === undefined) {
      return NULL_KEY;
    }
    const json = canonicalJson(v);
    if (json === undefined) {
      return undefined;
    }
    let sym = interned.get(json);
    if (!sym && create) {
      sym = Symbol(json);
      interned.set(json, sym);
    }
    return sym;
  };
}

/** A tuple's key: the JSON of its parts, or undefined when a part can equal nothing (NaN). */
function tupleKey(values: CellValue[]): string | undefined {
  const parts = values.map(partOf);
  return parts.includes(undefined) ? undefined : JSON.stringify(parts);
}

function partOf(v: CellValue): unknown {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return Number.isNaN(v) ? undefined : Number.isFinite(v) ? v : {n: String(v)};
    case 'boolean':
      return v ? 1 : 0;
  }
  if (v === null || v === undefined) {
    return null;
  }
  const json = canonicalJson(v);
  return json === undefined ? undefined : {c: json};
}

/**
 * Every row of some columns, a page at a time, each page read with pluck() (better-sqlite3 builds
 * no array per row then, several times faster than reading rows): `visit(ids, rawValues)`.
 */
export function scanColumns(
  db: Database.Database,
  tableSql: string,
  colSqls: Array<string | null>,
  visit: (ids: number[], raw: Array<unknown[] | null>) => void,
): void {
  const pageIds = db.prepare(`SELECT id FROM ${tableSql} WHERE id > ? ORDER BY id LIMIT ${PAGE}`).pluck();
  const pageCols = colSqls.map(
    (c) => c && db.prepare(`SELECT ${c} FROM ${tableSql} WHERE id > ? AND id <= ? ORDER BY id`).pluck(),
  );
  for (let after = -Infinity; ; ) {
    const ids = pageIds.all(after) as number[];
    if (!ids.length) {
      break;
    }
    const last = ids[ids.length - 1];
    visit(
      ids,
      pageCols.map((st) => (st ? st.all(after, last) : null)),
    );
    if (ids.length < PAGE) {
      break;
    }
    after = last;
  }
}

/**
 * Matches each wanted tuple (values of `colIds`, in that order; `id` allowed) to the ids of the
 * rows holding equal values, in ascending id order. With no columns, every row matches. `cached`:
 * the kept index of the one (non-id) column, current with the table (keyindex.ts).
 */
export function findMatches(
  db: Database.Database,
  table: TableMeta,
  colIds: string[],
  wanted: CellValue[][],
  cached?: ColumnKeys | null,
): number[][] {
  const out = wanted.map((): number[] => []);
  const t = quoteIdent(table.tableId);
  if (!colIds.length) {
    const all = db.prepare(`SELECT id FROM ${t} ORDER BY id`).pluck().all() as number[];
    return out.map(() => all.slice());
  }

  // Keys: a single column's value is its own key (lists and dicts interned as symbols); a tuple's
  // key is the JSON of its parts, where strings, numbers, null and lists stay distinguishable.
  const single = colIds.length === 1;
  const cellKey = singleKeyer(cached?.interned ?? new Map());
  const keyOf = (values: CellValue[], create: boolean): unknown =>
    single ? cellKey(values[0], create) : tupleKey(values);

  if (cached) {
    // A kept index of the column (keyindex.ts): no scan at all.
    wanted.forEach((values, i) => {
      const key = keyOf(values, false);
      const hits = key === undefined ? undefined : cached.rows.get(key);
      if (hits !== undefined) out[i] = typeof hits === 'number' ? [hits] : hits.slice();
    });
    return out;
  }

  const index = new Map<unknown, number[]>();
  wanted.forEach((values, i) => {
    const key = keyOf(values, true);
    if (key === undefined) {
      return;
    }
    const list = index.get(key);
    if (list) {
      list.push(i);
    } else {
      index.set(key, [i]);
    }
  });
  if (!index.size) {
    return out;
  }

  const cols: Array<ColumnMeta | null> = colIds.map((c) => (c === 'id' ? null : table.byId.get(c)!));
  const idPos = colIds.indexOf('id');
  const values = new Array<CellValue>(colIds.length);
  /** Matches rows given as their ids and, per require column, their raw values (null for id). */
  const visit = (ids: number[], raw: Array<unknown[] | null>) => {
    for (let r = 0; r < ids.length; r++) {
      for (let j = 0; j < values.length; j++) {
        values[j] = j === idPos ? ids[r] : cols[j]!.decode(raw[j]![r]);
      }
      const key = keyOf(values, false);
      const hits = key === undefined ? undefined : index.get(key);
      if (hits) {
        for (const i of hits) {
          out[i].push(ids[r]);
        }
      }
    }
  };

  const where = idPos < 0 ? narrowingCondition(cols, wanted) : null;
  if (idPos >= 0) {
    // Only the wanted ids can match: look them up by primary key.
    const ids = [...new Set(wanted.map((v) => v[idPos]).filter((id): id is number => Number.isInteger(id)))].sort(
      (a, b) => a - b,
    );
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const part = ids.slice(i, i + ID_CHUNK);
      visitRows(
        db
          .prepare(`${select(cols, t)} WHERE id IN (${part.map(() => '?').join(',')}) ORDER BY id`)
          .raw(true)
          .all(...part) as unknown[][],
      );
    }
  } else if (where) {
    visitRows(
      db
        .prepare(`${select(cols, t)} WHERE ${where.sql} ORDER BY id`)
        .raw(true)
        .all(...where.params) as unknown[][],
    );
  } else {
    scanColumns(
      db,
      t,
      cols.map((c) => (c ? quoteIdent(c.colId) : null)),
      visit,
    );
  }
  return out;

  /** Rows of `SELECT id, <require columns other than id>`. */
  function visitRows(rows: unknown[][]): void {
    let pos = 0;
    const columns = cols.map((c) => {
      if (!c) {
        return null;
      }
      const k = ++pos;
      return rows.map((r) => r[k]);
    });
    visit(
      rows.map((r) => r[0] as number),
      columns,
    );
  }
}

function select(cols: Array<ColumnMeta | null>, t: string): string {
  return `SELECT id${cols.map((c) => (c ? ', ' + quoteIdent(c.colId) : '')).join('')} FROM ${t}`;
}

/**
 * For a few wanted tuples, SQL that lets SQLite skip the rows that cannot match: per column, the
 * stored forms of the wanted values (query.ts), and any blob (marshalled values are decoded and
 * compared here, whatever their encoding). Null when it would not narrow soundly or cheaply: many
 * tuples, list columns (their JSON text decodes to lists) or list and dict values.
 */
function narrowingCondition(cols: Array<ColumnMeta | null>, wanted: CellValue[][]): SqlFragment | null {
  if (wanted.length > NARROW_MAX) {
    return null;
  }
  const parts: string[] = [];
  const params: unknown[] = [];
  cols.forEach((col, j) => {
    if (!col || col.ct.isList) {
      return;
    }
    const values = wanted.map((w) => w[j]);
    if (values.some((v) => v !== null && typeof v === 'object')) {
      return;
    }
    const c = quoteIdent(col.colId);
    const e = equalityCondition(c, values, NULL_CLASS | NUM_CLASS | TEXT_CLASS);
    parts.push(`(${e.sql} OR typeof(${c}) = 'blob')`);
    params.push(...e.params);
  });
  return parts.length ? {sql: parts.join(' AND '), params} : null;
}
