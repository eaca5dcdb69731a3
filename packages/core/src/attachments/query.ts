/**
 * Filter, sort and limit for a metadata table read (GET /attachments), with Grist's semantics
 * (SPEC §10.1): the filter is compiled to SQL with bound parameters (the document engine's
 * equality); sorting uses Grist's exact typed compare with an en-US collator in JS (the metadata
 * table is small, and SQLite cannot collate as Intl does), then the limit is applied.
 */
import {BadRequest, engineError} from '../base/index.js';
import {equalityCondition, quoteIdent} from '../doc/query.js';
import type {CellValue} from '../doc/types.js';

/** Filter, sort and limit of a listing (`GET /attachments`), as `/records` reads them. */
export interface TableQuery {
  /** `{colId: [allowed values]}`: a row is kept when every listed column holds one of its values. */
  filter?: Record<string, unknown>;
  /** Column ids, `-` for descending, optional `:flag;flag` suffix (`naturalSort`, `emptyLast`). */
  sort?: readonly string[];
  /** 0 or absent: no limit. Negative: drops rows off the end (Grist's `Array.splice` quirk). */
  limit?: number;
}

/**
 * SQL `WHERE` clause for a filter, with the document engine's Python-equality matching (`1`
 * matches `1.0` and `true`, `null` matches NULL). Throws 400 for an unknown column or a value
 * that is not an array, worded as for GET /records.
 */
export function compileFilter(
  filter: Record<string, unknown> | undefined,
  columns: ReadonlySet<string>,
): {where: string; params: unknown[]} {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (!filter) return {where: '', params};
  const entries = Object.entries(filter);
  if (!entries.every(([, values]) => Array.isArray(values))) {
    throw new BadRequest('Invalid query: filter values must be arrays');
  }
  for (const [colId, values] of entries) {
    if (!columns.has(colId)) throw engineError('KeyError', `'${colId}'`);
    const f = equalityCondition(quoteIdent(colId), values as CellValue[]);
    clauses.push(f.sql);
    for (const p of f.params) params.push(p);
  }
  return {where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params};
}

const collator = new Intl.Collator('en-US');

/** Grist's `typedCompare`: values of different types ordered by type name, lists element-wise. */
export function typedCompare(a: unknown, b: unknown): number {
  const ta = typeof a;
  const tb = typeof b;
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (ta === 'object') {
    if (a === null) return b === null ? 0 : -1;
    if (b === null) return 1;
    const aa = Array.isArray(a);
    const ab = Array.isArray(b);
    if (aa !== ab) return aa ? 1 : -1;
    if (aa) {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < la.length && i < lb.length; i++) {
        const c = typedCompare(la[i], lb[i]);
        if (c) return c;
      }
      return la.length - lb.length;
    }
  }
  if (ta === 'string') return collator.compare(a as string, b as string);
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

/** Compares strings with digit runs compared as numbers (`a2` < `a11`). */
function naturalCompare(a: unknown, b: unknown): number {
  if (typeof a !== 'string' || typeof b !== 'string') return typedCompare(a, b);
  const split = (s: string) => s.match(/\d+|\D+/g) ?? [];
  const pa = split(a);
  const pb = split(b);
  for (let i = 0; i < pa.length && i < pb.length; i++) {
    const da = /^\d/.test(pa[i]);
    const db = /^\d/.test(pb[i]);
    const c = da && db ? Number(pa[i]) - Number(pb[i]) : collator.compare(pa[i], pb[i]);
    if (c) return c;
  }
  return pa.length - pb.length;
}

const isEmpty = (v: unknown) => v === '' || v === null || v === false || v === undefined;

const SORT_FLAGS = new Set(['naturalSort', 'emptyLast', 'orderByChoice']);

interface SortKey {
  colId: string;
  desc: boolean;
  natural: boolean;
  emptyLast: boolean;
}

function parseSortKey(spec: string, columns: ReadonlySet<string>): SortKey {
  const m = /^(-?)([^:]+)(?::(.*))?$/.exec(spec);
  if (!m) throw new BadRequest(`Invalid sort: ${JSON.stringify(spec)}`);
  const colId = m[2];
  if (!columns.has(colId)) throw new BadRequest(`Invalid sort: unknown column "${colId}"`);
  // As for records (Grist applies the same query parameters to both): flags it does not know are ignored.
  const flags = (m[3] ?? '').split(';').filter((f) => SORT_FLAGS.has(f));
  return {colId, desc: m[1] === '-', natural: flags.includes('naturalSort'), emptyLast: flags.includes('emptyLast')};
}

/**
 * The order of Grist's sort specs as a comparison of two rows (0 when the specs tie them; rows in
 * fetch order break ties). `columns` lists the sortable column ids (`id` included).
 */
export function rowComparator(
  query: TableQuery,
  columns: ReadonlySet<string>,
): ((x: Record<string, unknown>, y: Record<string, unknown>) => number) | null {
  const keys = (query.sort ?? []).filter((s) => s !== '').map((s) => parseSortKey(s, columns));
  if (!keys.length) return null;
  return (x, y) => {
    for (const k of keys) {
      const a = x[k.colId];
      const b = y[k.colId];
      if (k.emptyLast) {
        const ea = isEmpty(a);
        const eb = isEmpty(b);
        if (ea !== eb) return ea ? 1 : -1;
      }
      const c = k.natural ? naturalCompare(a, b) : typedCompare(a, b);
      if (c) return k.desc ? -c : c;
    }
    return 0;
  };
}

/**
 * Sorts rows (already in fetch order, which breaks ties) by Grist's sort specs, then applies the
 * limit. `columns` lists the sortable column ids (`id` included).
 */
export function sortAndLimit<R extends Record<string, unknown>>(
  rows: R[],
  query: TableQuery,
  columns: ReadonlySet<string>,
): R[] {
  let out = rows;
  const compare = rowComparator(query, columns);
  if (compare) {
    const indexed = out.map((row, i) => ({row, i}));
    indexed.sort((x, y) => compare(x.row, y.row) || x.i - y.i);
    out = indexed.map((e) => e.row);
  }
  if (query.limit) out = out.slice(0, query.limit);
  return out;
}
