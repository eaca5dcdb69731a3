/**
 * The dependency graph: edges between columns (same row, or row maps source row -> dependent
 * rows), what each computed cell read (its sources), and the trackers of cells being computed.
 */
import type {ColData, TableData} from './tables.js';
import {RecalcWhen} from './engine-types.js';
import {AllVia, RefVia} from './tables.js';
import {KEY_COL, KeyVia, type LookupIndex, buildIndex, refIndex, rowKey} from './indexes.js';
import type {Via} from './records.js';
import {Edge, type EngineState, type Source, type Tracker} from './state.js';

export {Edge, type Source, type Tracker} from './state.js';

export const NO_SOURCES: Source[] = [];
export function pushSource(cur: Tracker, s: Source): void {
  if (cur.sources === NO_SOURCES) cur.sources = [s];
  else cur.sources.push(s);
}

/** colId -> trigger columns (recalcWhen DEFAULT) listing it in recalcDeps; cached per table. */
export function depTriggers(t: TableData): Map<string, ColData[]> {
  if (t.depTriggers) return t.depTriggers;
  const m = new Map<string, ColData[]>();
  for (const c of t.cols.values()) {
    if (!c.isTrigger || (c.spec.recalcWhen ?? 0) !== RecalcWhen.DEFAULT) continue;
    for (const d of c.spec.recalcDeps ?? []) {
      let l = m.get(d);
      if (!l) {
        l = [];
        m.set(d, l);
      }
      l.push(c);
    }
  }
  t.depTriggers = m;
  return m;
}

/** Marks cells of a computed column dirty, and everything that depends on them. */
export function markDirty(s: EngineState, col: ColData, rows: Iterable<number>): void {
  const work: Array<[ColData, Iterable<number>]> = [[col, rows]];
  while (work.length) {
    const [c, rs] = work.pop()!;
    if (!c.isFormula && !c.isTrigger) continue;
    let fresh: number[];
    if (Array.isArray(rs)) {
      const index = c.table.index;
      fresh = c.dirty.addAll(rs, (r) => index.has(r));
    } else {
      fresh = [];
      for (const r of rs) {
        if (!c.dirty.has(r) && c.table.index.has(r)) {
          c.dirty.add(r);
          fresh.push(r);
        }
      }
    }
    if (!fresh.length) continue;
    s.dirtyCols.add(c);
    collectReaders(s, c, fresh, work);
  }
}

export function collectReaders(
  s: EngineState,
  c: ColData,
  rows: number[],
  work: Array<[ColData, Iterable<number>]>,
): void {
  for (const [dst, edge] of c.readers) {
    if (!dst.isFormula) continue;
    if (edge.identity) work.push([dst, rows]);
    if (edge.rowMap) {
      const out: number[] = [];
      for (const r of rows) {
        const dsts = edge.rowMap.get(r);
        if (dsts) for (const x of dsts) out.push(x);
      }
      if (out.length) work.push([dst, out]);
    }
  }
  const t = c.table;
  if (t.indexes.size) {
    for (const idx of t.indexes.values()) {
      const isKey = idx.colIds.includes(c.id);
      const readThrough = idx.readCols.has(c.id);
      if (!isKey && !readThrough) continue;
      if (!idx.built && !idx.callers.size && !idx.colReaders.size) continue;
      for (const r of rows) {
        // An index not built yet (its callers registered from static plans): the row's key now,
        // which is its key before this change (key columns are indexed before they change).
        const k = idx.built ? idx.keyOf[r] : (rowKey(t, idx, r) ?? undefined);
        if (k === undefined) continue;
        for (const key of typeof k === 'string' ? [k] : k) {
          if (isKey) {
            const callers = idx.callers.get(key);
            if (callers) for (const [cc, rs] of callers) work.push([cc, [...rs]]);
          }
          if (!readThrough) continue;
          const readers = idx.colReaders.get(key + KEY_COL + c.id);
          if (readers) for (const [cc, rs] of readers) work.push([cc, [...rs]]);
        }
      }
    }
  }
  if (t.allColReaders.size) {
    const readers = t.allColReaders.get(c.id);
    if (readers) for (const [cc, rs] of readers) work.push([cc, [...rs]]);
  }
  if (c.refReaders?.size) collectRefReaders(s, c, rows, work);
}

/** Readers of column c through Ref/RefList columns: the rows referring to the given rows of c. */
export function collectRefReaders(
  s: EngineState,
  c: ColData,
  rows: number[],
  work: Array<[ColData, Iterable<number>]>,
): void {
  for (const [via, dsts] of c.refReaders!) {
    if (!dsts.size) continue;
    const idx = refIndex(s, via);
    if (!idx) {
      c.refReaders!.delete(via);
      continue;
    }
    const out: number[] = [];
    for (const k of rows) {
      const rs = idx.rowsByKey.get('n' + k);
      if (rs) for (const r of rs) out.push(r);
    }
    if (out.length) for (const d of dsts) if (d.isFormula) work.push([d, out]);
  }
}

/** Data cells changed (rows null: the whole column): their readers become dirty. */
export function invalidateReaders(s: EngineState, c: ColData, rows: number[] | null): void {
  if (rows === null) {
    const all: Array<[ColData, Iterable<number>]> = [];
    for (const dst of c.readers.keys()) if (dst.isFormula) all.push([dst, dst.table.sortedRowIds()]);
    for (const [dst, rs] of all) markDirty(s, dst, rs);
    for (const idx of c.table.indexes.values()) {
      if (idx.colIds.includes(c.id))
        for (const callers of idx.callers.values()) for (const [cc, rs] of callers) markDirty(s, cc, [...rs]);
      const suffix = KEY_COL + c.id;
      for (const [ck, readers] of idx.colReaders) {
        if (ck.endsWith(suffix)) for (const [cc, rs] of readers) markDirty(s, cc, [...rs]);
      }
    }
    const readers = c.table.allColReaders.get(c.id);
    if (readers) for (const [cc, rs] of readers) markDirty(s, cc, [...rs]);
    return;
  }
  const work: Array<[ColData, Iterable<number>]> = [];
  collectReaders(s, c, rows, work);
  for (const [dst, rs] of work) markDirty(s, dst, rs);
}

/** Rows added or removed: whoever read those row ids, looked up their keys, or read Table.all. */
export function rowsAppearedOrVanished(s: EngineState, t: TableData, rowIds: number[]): void {
  if (!rowIds.length) return;
  for (const c of t.cols.values()) {
    const work: Array<[ColData, Iterable<number>]> = [];
    for (const [dst, edge] of c.readers) {
      if (!edge.rowMap || !dst.isFormula) continue;
      const out: number[] = [];
      for (const r of rowIds) {
        const dsts = edge.rowMap.get(r);
        if (dsts) out.push(...dsts);
      }
      if (out.length) work.push([dst, out]);
    }
    if (c.refReaders?.size) collectRefReaders(s, c, rowIds, work);
    for (const [dst, rs] of work) markDirty(s, dst, rs);
  }
  for (const [cc, rs] of t.allCallers) markDirty(s, cc, [...rs]);
}

export function dirtyCallers(s: EngineState, idx: LookupIndex, key: string): void {
  const callers = idx.callers.get(key);
  if (callers) for (const [cc, rs] of callers) markDirty(s, cc, [...rs]);
}

/** Membership in a list of keys: a scan for a few, a set for many. */
function setOrList(keys: string[]): (k: string) => boolean {
  if (keys.length <= 16) return (k) => keys.includes(k);
  const set = new Set(keys);
  return (k) => set.has(k);
}

/** Keeps lookup indexes on a column current after its values changed. */
export function updateIndexes(s: EngineState, c: ColData, rows: number[], added: boolean): void {
  const t = c.table;
  if (!t.indexes.size) return;
  for (const idx of t.indexes.values()) {
    if (!idx.colIds.includes(c.id) || !idx.built) continue;
    for (const r of rows) {
      const keys = rowKey(t, idx, r);
      const old = idx.update(r, keys);
      const now = keys === null ? [] : typeof keys === 'string' ? [keys] : keys;
      // Callers of keys the row left or joined. A long list cell (a summary's `group` of a
      // thousand rows) is compared through sets, not in quadratic time.
      const nowHas = setOrList(now);
      const oldHas = setOrList(old ?? []);
      if (old) for (const k of old) if (!nowHas(k)) dirtyCallers(s, idx, k);
      for (const k of now) if (!oldHas(k)) dirtyCallers(s, idx, k);
    }
    void added;
  }
}

/**
 * Builds the indexes of `t` that have callers but were not built (static plans register without
 * building), before rows or key cells change: their old keys are needed to find who to dirty.
 */
export function indexBeforeChange(_s: EngineState, t: TableData, colIds: string[] | null): void {
  if (!t.indexes.size) return;
  for (const idx of t.indexes.values()) {
    if (idx.built || (!idx.callers.size && !idx.colReaders.size)) continue;
    if (colIds && !idx.colIds.some((c) => colIds.includes(c))) continue;
    buildIndex(idx);
  }
}

export function clearSources(c: ColData): void {
  for (const e of c.refEdges) e.target.refReaders?.get(e.via)?.delete(c);
  c.refEdges = [];
  for (const r of [...c.cellSources.keys()]) clearCellSources(c, r);
  for (const e of c.sourceEdges) e.src.readers.delete(c);
  c.sourceEdges.clear();
}

/** Removes `row` from the set at `key`, and the set once empty; true when the key went. */
function dropRow<K>(map: Map<K, Set<number>> | null | undefined, key: K, row: number): boolean {
  const set = map?.get(key);
  if (!set) return false;
  set.delete(row);
  if (set.size) return false;
  map!.delete(key);
  return true;
}

/** `dropRow` one level down (`outer[k1][k2]`), removing `outer[k1]` once empty; true when it went. */
function dropRow2<K1, K2>(outer: Map<K1, Map<K2, Set<number>>>, k1: K1, k2: K2, row: number): boolean {
  const inner = outer.get(k1);
  if (!inner || !dropRow(inner, k2, row) || inner.size) return false;
  outer.delete(k1);
  return true;
}

export function clearCellSources(c: ColData, row: number): void {
  const srcs = c.cellSources.get(row);
  if (!srcs) return;
  c.cellSources.delete(row);
  for (const s of srcs) {
    if (s.kind === 0) dropRow(s.edge.rowMap, s.row, row);
    else if (s.kind === 1) dropRow2(s.index.callers, s.key, c, row);
    else if (s.kind === 2) dropRow(s.table.allCallers, c, row);
    else if (s.kind === 3) {
      if (dropRow2(s.index.colReaders, s.ckey, c, row)) {
        const n = (s.index.readCols.get(s.colId) ?? 1) - 1;
        if (n) s.index.readCols.set(s.colId, n);
        else s.index.readCols.delete(s.colId);
      }
    } else dropRow2(s.table.allColReaders, s.colId, c, row);
  }
}

export function edge(src: ColData, dst: ColData): Edge {
  let e = src.readers.get(dst);
  if (!e) {
    e = new Edge(src, dst);
    src.readers.set(dst, e);
    dst.sourceEdges.add(e);
  }
  return e;
}

export function noteRead(col: ColData, row: number, cur: Tracker): void {
  let e = col.lastEdge;
  if (!e || e.dst !== cur.col || !col.readers.has(cur.col)) {
    e = edge(col, cur.col);
    col.lastEdge = e;
  }
  if (row === cur.row && col.table === cur.col.table) {
    e.identity = true;
    return;
  }
  if (!e.rowMap) e.rowMap = new Map();
  let s = e.rowMap.get(row);
  if (!s) {
    s = new Set();
    e.rowMap.set(row, s);
  }
  if (!s.has(cur.row)) {
    s.add(cur.row);
    pushSource(cur, {kind: 0, edge: e, row});
  }
}

/** Records a column read through a lookup key or Table.all, once per (route, column) per cell. */
export function noteViaRead(c: ColData, via: Via, cur: Tracker): void {
  cur.lastVia = via;
  cur.lastViaCol = c;
  let m: Map<ColData, Set<number>> | undefined;
  let src: Source;
  if (via instanceof KeyVia) {
    const ckey = via.key + KEY_COL + c.id;
    const map = via.index.colReaders;
    m = map.get(ckey);
    if (!m) {
      m = new Map();
      map.set(ckey, m);
      via.index.readCols.set(c.id, (via.index.readCols.get(c.id) ?? 0) + 1);
    }
    src = {kind: 3, index: via.index, ckey, colId: c.id};
  } else if (via instanceof RefVia) {
    addRefReader(c, via, cur.col);
    return;
  } else if (via instanceof AllVia) {
    const map = via.table.allColReaders;
    m = map.get(c.id);
    if (!m) {
      m = new Map();
      map.set(c.id, m);
    }
    src = {kind: 4, table: via.table, colId: c.id};
  } else {
    return;
  }
  let s = m.get(cur.col);
  if (!s) {
    s = new Set();
    m.set(cur.col, s);
  }
  if (!s.has(cur.row)) {
    s.add(cur.row);
    pushSource(cur, src);
  }
}

/** Column `dst` reads column `c` through the Ref/RefList column of `via` (of dst's own row). */
export function addRefReader(c: ColData, via: RefVia, dst: ColData): void {
  const readers = (c.refReaders ??= new Map());
  let dsts = readers.get(via);
  if (!dsts) {
    dsts = new Set();
    readers.set(via, dsts);
  }
  if (!dsts.has(dst)) {
    dsts.add(dst);
    dst.refEdges.push({target: c, via});
  }
}

/** The cell being computed looked up `key`: a change to the key's rows dirties it. */
export function noteLookup(idx: LookupIndex, key: string, cur: Tracker): void {
  let m = idx.callers.get(key);
  if (!m) {
    m = new Map();
    idx.callers.set(key, m);
  }
  let s = m.get(cur.col);
  if (!s) {
    s = new Set();
    m.set(cur.col, s);
  }
  if (!s.has(cur.row)) {
    s.add(cur.row);
    pushSource(cur, {kind: 1, index: idx, key});
  }
}
