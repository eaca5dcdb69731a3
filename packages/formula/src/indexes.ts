/**
 * Lookup indexes and their keys: key -> rows of a table for `lookupRecords`/`lookupOne`, summary
 * groups and Ref routes, with the cells that asked for each key.
 */
import type {CellValue} from './cells/types.js';
import {type PyObject, PyTuple, type Value, hashKey, repr} from './values.js';
import {Record, RecordSet} from './records.js';
import type {ColData, TableData} from './tables.js';
import {type Kwargs, raise} from './values.js';
import {type RefVia, refKindOf} from './tables.js';
import {type EngineState, getTable} from './state.js';

/** Separates a lookup key from a column id in `LookupIndex.colReaders`. */
export const KEY_COL = '\u0001';

/** Reads through a lookup key: the rows of that key, in whatever order. */
export class KeyVia {
  constructor(
    readonly index: LookupIndex,
    readonly key: string,
  ) {}
}

/** `CONTAINS(value, match_empty=...)`: a lookup argument matching list cells that contain the value. */
export class Contains implements PyObject {
  readonly pyType = '_Contains';
  constructor(
    readonly value: Value,
    readonly matchEmpty: Value | undefined,
  ) {}
  repr(): string {
    return `CONTAINS(${repr(this.value)}${this.matchEmpty === undefined ? '' : `, match_empty=${repr(this.matchEmpty)}`})`;
  }
  hashKey(): string {
    return `C(${lookupKey(this.value)})`;
  }
}

export interface KeySpec {
  colId: string;
  contains: boolean;
  matchEmpty?: Value;
}

/** Lookups an index answers from its column's source (a scan each) before it is built instead. */
export const SOURCE_LOOKUPS_BEFORE_BUILD = 4;

/**
 * An index on some columns of a table: key -> rows, and key -> the cells that looked it up. With
 * CONTAINS a row has one key per item of its list cell (Grist's ContainsLookupMapping).
 */
export class LookupIndex {
  /** row id -> its key, or its keys (CONTAINS); an array by row id, as RowIndex. */
  keyOf: Array<string | string[] | undefined> = [];
  /** key -> its rows (ascending unless the key is in `unsorted`). */
  rowsByKey = new Map<string, number[]>();
  private unsorted = new Set<string>();
  /** Keys whose row array was handed out: copied before the next change. */
  private shared = new Set<string>();
  callers = new Map<string, Map<ColData, Set<number>>>();
  /** Columns read through a key: key + KEY_COL + colId -> dependent cells. */
  colReaders = new Map<string, Map<ColData, Set<number>>>();
  /** colId -> how many keys of `colReaders` name it: a column nobody reads through this index is skipped. */
  readCols = new Map<string, number>();
  vias = new Map<string, KeyVia>();
  built = false;
  /** Lookups answered from the key column's source while the index was not built. */
  sourceLookups = 0;
  readonly colIds: string[];
  constructor(
    readonly table: TableData,
    readonly name: string,
    readonly specs: KeySpec[],
  ) {
    this.colIds = specs.map((s) => s.colId);
  }
  add(row: number, keys: string | string[]): void {
    this.keyOf[row] = keys;
    if (typeof keys === 'string') this.addKey(row, keys);
    else for (const key of keys) this.addKey(row, key);
  }
  private addKey(row: number, key: string): void {
    let a = this.rowsByKey.get(key);
    if (!a) {
      this.rowsByKey.set(key, [row]);
      return;
    }
    if (this.shared.has(key)) {
      a = a.slice();
      this.rowsByKey.set(key, a);
      this.shared.delete(key);
    }
    if (a.length && a[a.length - 1] > row) this.unsorted.add(key);
    a.push(row);
  }
  remove(row: number): string[] | undefined {
    const k = this.keyOf[row];
    if (k === undefined) return undefined;
    this.keyOf[row] = undefined;
    const keys = typeof k === 'string' ? [k] : k;
    for (const key of keys) this.removeKey(row, key);
    return keys;
  }
  /**
   * Gives a row its new key(s) (null: none), returning the old ones. A long list of keys (a
   * summary's `group` of a thousand source rows) changes only the keys that differ.
   */
  update(row: number, keys: string | string[] | null): string[] | undefined {
    const k = this.keyOf[row];
    if (k === undefined || keys === null || typeof k === 'string' || typeof keys === 'string' || k.length <= 16) {
      const old = this.remove(row);
      if (keys !== null) this.add(row, keys);
      return old;
    }
    const before = new Set(k);
    const after = new Set(keys);
    for (const key of k) if (!after.has(key)) this.removeKey(row, key);
    for (const key of keys) if (!before.has(key)) this.addKey(row, key);
    this.keyOf[row] = keys;
    return k;
  }
  private removeKey(row: number, key: string): void {
    let a = this.rowsByKey.get(key);
    if (!a) return;
    const i = a.indexOf(row);
    if (i < 0) return;
    if (a.length === 1) {
      this.rowsByKey.delete(key);
      this.unsorted.delete(key);
      this.shared.delete(key);
      return;
    }
    if (this.shared.has(key)) {
      a = a.slice();
      this.rowsByKey.set(key, a);
      this.shared.delete(key);
    }
    a.splice(i, 1);
  }
  /** The rows of a key, ascending (not to be modified). */
  rows(key: string): number[] {
    const a = this.rowsByKey.get(key);
    if (!a) return EMPTY_ROWS;
    if (this.unsorted.size && this.unsorted.has(key)) {
      a.sort((x, y) => x - y);
      this.unsorted.delete(key);
    }
    this.shared.add(key);
    return a;
  }
  via(key: string): KeyVia {
    let v = this.vias.get(key);
    if (!v) {
      v = new KeyVia(this, key);
      this.vias.set(key, v);
    }
    return v;
  }
}

export const EMPTY_ROWS: number[] = [];

/**
 * The lookup key of a stored cell without decoding it, for the column types where that is the
 * same as lookupKey(decoded): numbers (Ref ids, Int, Numeric) and text. Else undefined.
 */
export function rawKey(kind: number, v: CellValue): string | undefined {
  if (typeof v === 'number') {
    if (kind === 2) return undefined;
    if (Number.isInteger(v)) return Number.isSafeInteger(v) && !Object.is(v, -0) ? 'n' + v : undefined;
    return 'f' + v;
  }
  if (typeof v === 'string') return kind === 2 ? 's' + v : undefined;
  if (v === null && kind === 1) return 'n0';
  return undefined;
}

/** 1: Ref/Int/Numeric (numbers; a null Ref is row 0), 2: Text/Choice, 0: decode. */
export function rawKeyKind(type: string): number {
  if (type.startsWith('Ref:')) return 1;
  if (type === 'Int' || type === 'Numeric') return 3;
  if (type === 'Text' || type === 'Choice') return 2;
  return 0;
}

/** A lookup key of a value: records by id, everything else by Python equality. */
export function lookupKey(v: Value): string {
  if (v instanceof Record) return hashKey(BigInt(v.rowId));
  if (Array.isArray(v)) return 'L' + v.map(lookupKey).join(',');
  try {
    return hashKey(v);
  } catch {
    return 'U' + String(v);
  }
}

/** Keys of a list cell looked up with CONTAINS: its distinct items; a string has none (Grist). */
export function containsKeys(v: Value, matchEmpty: Value | undefined): string[] {
  let items: Value[];
  if (v instanceof RecordSet) items = v.rowIds.map((r) => BigInt(r));
  else if (Array.isArray(v)) items = v;
  else if (v instanceof PyTuple) items = [...v.items];
  else items = [];
  if (!items.length && matchEmpty !== undefined && !(typeof v === 'string')) items = [matchEmpty];
  const out = new Set<string>();
  for (const x of items) out.add(lookupKey(x));
  return [...out];
}

/** The key of a row in an index, or its keys for a CONTAINS index; null for a missing row. */
export function rowKey(t: TableData, idx: LookupIndex, row: number): string | string[] | null {
  const slot = t.index.get(row);
  if (slot === undefined) return null;
  if (idx.specs.length === 1 && !idx.specs[0].contains && idx.specs[0].colId !== 'id') {
    // One plain key column (the common lookup): no arrays.
    const c = t.cols.get(idx.specs[0].colId)!;
    const kind = (c.rawKeyKind ??= rawKeyKind(c.type));
    const fast = kind ? rawKey(kind, c.get(slot)) : undefined;
    if (fast !== undefined) return fast;
  }
  let parts: string[] | null = [];
  let groups: string[][] | null = null;
  for (let i = 0; i < idx.specs.length; i++) {
    const spec = idx.specs[i];
    let v: Value;
    if (spec.colId === 'id') v = BigInt(row);
    else {
      const c = t.cols.get(spec.colId)!;
      if (!spec.contains) {
        const kind = (c.rawKeyKind ??= rawKeyKind(c.type));
        const fast = kind ? rawKey(kind, c.get(slot)) : undefined;
        if (fast !== undefined) {
          parts?.push(fast);
          groups?.push([fast]);
          continue;
        }
      }
      try {
        v = c.decode(c.get(slot));
      } catch {
        v = `\0err:${JSON.stringify(c.get(slot))}`;
      }
    }
    if (!spec.contains) {
      parts?.push(lookupKey(v));
      groups?.push([lookupKey(v)]);
      continue;
    }
    if (!groups) {
      groups = parts!.map((p) => [p]);
      parts = null;
    }
    groups.push(containsKeys(v, spec.matchEmpty));
  }
  if (parts) return parts.join('\0');
  // Every combination of the items of the CONTAINS columns.
  let keys: string[] = [''];
  groups!.forEach((g, i) => {
    const next: string[] = [];
    for (const k of keys) for (const x of g) next.push(i ? k + '\0' + x : x);
    keys = next;
  });
  return keys;
}

export function getIndex(t: TableData, specs: KeySpec[]): LookupIndex {
  const name = specs
    .map((s) => (s.contains ? `${s.colId}\u0002${s.matchEmpty === undefined ? '' : lookupKey(s.matchEmpty)}` : s.colId))
    .join('\0');
  let idx = t.indexes.get(name);
  if (!idx) {
    idx = new LookupIndex(t, name, specs);
    t.indexes.set(name, idx);
  }
  return idx;
}

export function buildIndex(idx: LookupIndex): void {
  if (idx.built) return;
  const t = idx.table;
  // Every row's key: lazy key columns are read whole at once.
  for (const colId of idx.colIds) void t.cols.get(colId)?.values;
  for (const r of t.sortedRowIds()) {
    const key = rowKey(t, idx, r);
    if (key !== null) idx.add(r, key);
  }
  idx.built = true;
}

/** The index on a Ref column (CONTAINS for RefList) that a RefVia route reads through; null if the column is gone. */
export function refIndex(s: EngineState, via: RefVia): LookupIndex | null {
  const c = via.col;
  const t = c.table;
  if (s.tables.get(t.id) !== t || t.cols.get(c.id) !== c) return null;
  const kind = (c.refKind ??= refKindOf(c.type));
  if (!kind) return null;
  const idx = getIndex(t, [kind === 2 ? {colId: c.id, contains: true} : {colId: c.id, contains: false}]);
  buildIndex(idx);
  return idx;
}

/** The index a lookup with these arguments reads, and the key it reads. */
export function lookupKeyOf(
  s: EngineState,
  tableId: string,
  kwargs: Kwargs,
): {t: TableData; idx: LookupIndex; key: string; colIds: string[]} {
  const colIds = Object.keys(kwargs).sort();
  const idx = lookupIndexFor(s, tableId, colIds, kwargs);
  return {t: idx.table, idx, key: lookupKeyFor(colIds, kwargs), colIds};
}

/** The index of a lookup on `colIds` (sorted), CONTAINS where `kwargs` says so; KeyError for a missing column. */
export function lookupIndexFor(s: EngineState, tableId: string, colIds: string[], kwargs: Kwargs): LookupIndex {
  const t = getTable(s, tableId);
  const specs: KeySpec[] = [];
  for (const colId of colIds) {
    if (!t.cols.has(colId) && colId !== 'id') raise('KeyError', `Table '${tableId}' has no column '${colId}'`);
    const v = kwargs[colId];
    specs.push(v instanceof Contains ? {colId, contains: true, matchEmpty: v.matchEmpty} : {colId, contains: false});
  }
  return getIndex(t, specs);
}

/** The key a lookup with these arguments reads (`colIds` sorted). */
export function lookupKeyFor(colIds: string[], kwargs: Kwargs): string {
  return colIds
    .map((k) => {
      const v = kwargs[k];
      return lookupKey(v instanceof Contains ? v.value : v);
    })
    .join('\0');
}

/**
 * The rows of a lookup on one lazy Ref data column (`Items.lookupRecords(Customer=$id)`) read from
 * the column's source, while few were asked: the first write to a document just opened need not
 * read the whole column to build its index. Undefined when the index must answer.
 */
export function lookupFromSource(t: TableData, idx: LookupIndex, kwargs: Kwargs): number[] | undefined {
  if (idx.specs.length !== 1 || idx.specs[0].contains || idx.sourceLookups >= SOURCE_LOOKUPS_BEFORE_BUILD) return;
  const c = t.cols.get(idx.specs[0].colId);
  if (!c || c.isFormula || c.isTrigger || (c.refKind ??= refKindOf(c.type)) !== 1) return;
  const v = kwargs[c.id];
  const id = v instanceof Record ? v.rowId : typeof v === 'bigint' ? Number(v) : NaN;
  // Row 0 is also the key of empty (null) cells, which the source's equality would not find.
  if (!Number.isSafeInteger(id) || id <= 0) return;
  const rows = c.rowsReferring(id);
  if (!rows) return;
  idx.sourceLookups++;
  return rows.filter((r) => t.index.has(r));
}
