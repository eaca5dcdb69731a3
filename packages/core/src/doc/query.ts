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
 * punctuation between '9' and 'A' sorts after digits); booleans or numbers stored marshalled
 * (in Any or Text columns) rank with lists; lists compare by their stored bytes.
 */
import {BadRequest, engineError} from '../errors.js';
import {dumps} from './marshal.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {baseType, type CellValue, isListType} from './types.js';

export function quoteIdent(ident: string): string {
  return `"${ident.replace(/"/g, '""')}"`;
}

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
    if (Number.isInteger(v)) { out.push(floatBytes(v)); }
    if (v === 0 || v === 1) { out.push(dumps(v === 1)); }
  } else if (typeof v === 'string') {
    out.push(v, dumps(v));
  } else if (v !== null) {
    out.push(dumps(v));
  }
  return out;
}

/** SQL for "column equals one of `values`" (Python equality on stored values). */
export function equalityCondition(colSql: string, values: CellValue[]): SqlFragment {
  const params: unknown[] = [];
  const seen = new Set<string>();
  let hasNull = false;
  for (const v of values) {
    if (v === null) {
      hasNull = true;
      continue;
    }
    for (const c of storedCandidates(v)) {
      const key = Buffer.isBuffer(c) ? 'b' + c.toString('hex') : typeof c + String(c);
      if (!seen.has(key)) {
        seen.add(key);
        params.push(c);
      }
    }
  }
  const parts: string[] = [];
  if (params.length) { parts.push(`+${colSql} IN (${params.map(() => '?').join(',')})`); }
  if (hasNull) { parts.push(`${colSql} IS NULL`); }
  return {sql: parts.length ? `(${parts.join(' OR ')})` : '0', params};
}

export function compileFilter(table: TableMeta, filter: Record<string, unknown>): SqlFragment {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [colId, values] of Object.entries(filter)) {
    if (!Array.isArray(values)) { throw new BadRequest('Invalid query: filter values must be arrays'); }
    if (colId !== 'id' && !table.byId.has(colId)) { throw engineError('KeyError', `'${colId}'`); }
    const f = equalityCondition(quoteIdent(colId), values as CellValue[]);
    parts.push(f.sql);
    params.push(...f.params);
  }
  return {sql: parts.join(' AND '), params};
}

const SORT_FLAGS = new Set(['naturalSort', 'emptyLast', 'orderByChoice']);

/** Name of the SQL function giving a natural-sort key (registered on every open document). */
export const NATURAL_KEY_FN = 'gristlite_natural_key';

/** Digit runs become length-prefixed, so that "a2" < "a11" in plain string order. */
export function naturalKey(v: unknown): unknown {
  if (typeof v !== 'string') { return v; }
  return v.toLowerCase().replace(/\d+/g, (d) => {
    const digits = d.replace(/^0+(?=\d)/, '');
    return '\u0001' + String(digits.length).padStart(4, '0') + digits;
  });
}

export function compileSort(table: TableMeta, specs: string[]): SqlFragment {
  const keys: string[] = [];
  const params: unknown[] = [];
  for (const spec of specs) {
    const m = /^(-?)([^:]+)(?::(.*))?$/.exec(spec);
    if (!m) { throw new BadRequest(`Invalid sort: ${JSON.stringify(spec)}`); }
    const [, minus, colId, flagText] = m;
    const col: ColumnMeta | undefined = table.byId.get(colId);
    if (colId !== 'id' && !col) { throw new BadRequest(`Invalid sort: unknown column "${colId}"`); }
    const flags = new Set(flagText ? flagText.split(';') : []);
    for (const f of flags) {
      if (!SORT_FLAGS.has(f)) { throw new BadRequest(`Invalid sort: unknown flag "${f}" in ${JSON.stringify(spec)}`); }
    }
    const dir = minus ? 'DESC' : 'ASC';
    const rdir = minus ? 'ASC' : 'DESC';
    const c = quoteIdent(colId);
    const isBool = col?.type === 'Bool';
    if (flags.has('emptyLast')) {
      // Empty means falsy and not a number: "", null, false (raw in Bool columns, else marshalled).
      keys.push(`(CASE WHEN ${c} IS NULL OR +${c} = '' OR +${c} = X'46'${isBool ? ` OR +${c} = 0` : ''} THEN 1 ELSE 0 END) ASC`);
    }
    if (flags.has('orderByChoice') && col && ['Choice', 'ChoiceList'].includes(baseType(col.type))) {
      const choices = choicesOf(col);
      if (choices.length) {
        keys.push(`(CASE +${c} ${choices.map((_, i) => `WHEN ? THEN ${i}`).join(' ')} ELSE ${choices.length} END) ${dir}`);
        params.push(...choices);
      }
    }
    const textRank = col && isListType(col.type) ? 3 : 4;
    keys.push(`(CASE WHEN ${c} IS NULL THEN 2 WHEN typeof(${c}) IN ('integer','real') THEN ${isBool ? 0 : 1} ` +
      `WHEN typeof(${c}) = 'text' THEN ${textRank} ELSE 3 END) ${dir}`);
    if (flags.has('naturalSort')) {
      keys.push(`${NATURAL_KEY_FN}(${c}) ${dir}`);
    } else {
      keys.push(`+${c} COLLATE NOCASE ${dir}`, `+${c} ${rdir}`);
    }
  }
  if (table.hasManualSort) { keys.push('"manualSort" ASC'); }
  keys.push('"id" ASC');
  return {sql: keys.join(', '), params};
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
  if (sort === undefined || sort === '') { return []; }
  return Array.isArray(sort) ? sort : sort.split(',');
}
