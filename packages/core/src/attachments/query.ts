/**
 * Filter, sort and limit for a metadata table read (GET /attachments), with Grist's semantics
 * (SPEC §10.1): the filter is compiled to SQL with bound parameters; sorting uses Grist's typed
 * compare with an en-US collator (which SQLite cannot do), then the limit is applied.
 */
import { BadRequest } from '../errors.js';

export interface TableQuery {
  /** `{colId: [allowed values]}`: a row is kept when every listed column holds one of its values. */
  filter?: Record<string, unknown>;
  /** Column ids, `-` for descending, optional `:flag;flag` suffix (`naturalSort`, `emptyLast`). */
  sort?: readonly string[];
  /** 0 or absent: no limit. Negative: drops rows off the end (Grist's `Array.splice` quirk). */
  limit?: number;
}

type SqlParam = string | number | bigint | null;

/**
 * SQL `WHERE` clause for a filter (Python equality on stored values: `1` matches `1.0` and `true`,
 * `null` matches NULL; list and object values can never match). Throws 400 for an unknown column
 * or a value that is not an array.
 */
export function compileFilter(
  filter: Record<string, unknown> | undefined,
  columns: ReadonlySet<string>,
): { where: string; params: SqlParam[] } {
  const clauses: string[] = [];
  const params: SqlParam[] = [];
  if (!filter) return { where: '', params };
  const entries = Object.entries(filter);
  if (!entries.every(([, values]) => Array.isArray(values))) {
    throw new BadRequest('Invalid query: filter values must be arrays');
  }
  for (const [colId, values] of entries as [string, unknown[]][]) {
    if (!columns.has(colId)) throw new BadRequest(`Error manipulating data: [Sandbox] KeyError '${colId}'`);
    const ident = `"${colId.replace(/"/g, '""')}"`;
    const alternatives: string[] = [];
    const bound: SqlParam[] = [];
    let matchNull = false;
    for (const value of values) {
      if (value === null) matchNull = true;
      else if (typeof value === 'boolean') bound.push(value ? 1 : 0);
      else if (typeof value === 'number' || typeof value === 'string') bound.push(value);
      // Arrays and objects never equal a stored scalar.
    }
    if (bound.length) {
      alternatives.push(`${ident} IN (${bound.map(() => '?').join(', ')})`);
      params.push(...bound);
    }
    if (matchNull) alternatives.push(`${ident} IS NULL`);
    clauses.push(alternatives.length ? `(${alternatives.join(' OR ')})` : '0');
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
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

interface SortKey {
  colId: string;
  desc: boolean;
  natural: boolean;
  emptyLast: boolean;
}

function parseSortKey(spec: string, columns: ReadonlySet<string>): SortKey {
  const m = /^(-?)([^:]+)(?::(.*))?$/.exec(spec);
  const colId = m?.[2] ?? spec;
  if (!m || !columns.has(colId)) throw new BadRequest(`unknown key ${colId}`);
  const flags = (m[3] ?? '').split(';').filter(Boolean);
  return { colId, desc: m[1] === '-', natural: flags.includes('naturalSort'), emptyLast: flags.includes('emptyLast') };
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
  const keys = (query.sort ?? []).filter((s) => s !== '').map((s) => parseSortKey(s, columns));
  if (keys.length) {
    const indexed = out.map((row, i) => ({ row, i }));
    indexed.sort((x, y) => {
      for (const k of keys) {
        const a = x.row[k.colId];
        const b = y.row[k.colId];
        if (k.emptyLast) {
          const ea = isEmpty(a);
          const eb = isEmpty(b);
          if (ea !== eb) return ea ? 1 : -1;
        }
        const c = k.natural ? naturalCompare(a, b) : typedCompare(a, b);
        if (c) return k.desc ? -c : c;
      }
      return x.i - y.i;
    });
    out = indexed.map((e) => e.row);
  }
  if (query.limit) out = out.slice(0, query.limit);
  return out;
}
