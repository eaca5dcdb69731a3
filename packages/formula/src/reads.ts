import {type Kwargs, type Value, raise} from './values.js';
import {defaultCell, raiseStoredError} from './convert.js';
import {type AheadRows, type Record, RecordSet, type Via} from './records.js';
import {pyCompare, toArray} from './ops.js';
import {type ColData, type SortEntry, type TableData, AllVia, RefVia, refKindOf} from './tables.js';
import {Contains, KeyVia, buildIndex, lookupFromSource, lookupKeyOf} from './indexes.js';
import {type Tracker, noteLookup, noteRead, noteViaRead, pushSource} from './deps.js';
import {CIRCULAR, NeedCompute} from './recalc.js';
import {type EngineState, getTable} from './state.js';

export function readCell(
  s: EngineState,
  tableId: string,
  colId: string,
  rowId: number,
  via?: Via,
  group?: number[],
  ahead?: AheadRows,
): Value {
  let t = s.lastTable;
  if (!t || t.id !== tableId) {
    t = s.tables.get(tableId) ?? null;
    s.lastTable = t;
  }
  const c = t?.cols.get(colId);
  if (!t || !c) return raise('AttributeError', `Table '${tableId}' has no column '${colId}'`);
  const cur = s.cur;
  if (cur) {
    if (cur.col === c && cur.row === rowId) {
      // A trigger formula reading its own cell gets the stored value; a formula column, a cycle.
      if (c.isFormula) throw CIRCULAR;
    } else {
      if (cur.track) {
        if (via === undefined) noteRead(c, rowId, cur);
        else if (cur.lastVia !== via || cur.lastViaCol !== c) noteViaRead(c, via, cur);
      }
      if (c.dirty.size && c.dirty.has(rowId)) {
        // A record of a RecordSet: the set's dirty cells of this column are computed together.
        if (group && group.length > 1)
          throw new NeedCompute(
            c,
            rowId,
            group.filter((r) => c.dirty.has(r) && !(cur.col === c && cur.row === r)),
          );
        if (ahead) throw aheadNeed(c, rowId, ahead, cur);
        throw new NeedCompute(c, rowId);
      }
    }
  }
  const slot = t.index.get(rowId);
  if (slot === undefined) return c.decode(defaultCell(c.type));
  const v = c.get(slot);
  if (c.errorMessages.size && Array.isArray(v) && v[0] === 'E') raiseStoredError(v, c.errorMessages.get(rowId));
  if (cur?.track && cur.row === rowId && cur.col.table === t && cur.col !== c) {
    // A Ref/RefList cell of the reading cell's own row: its records carry the route.
    const kind = (c.refKind ??= refKindOf(c.type));
    if (kind) return c.decode(v, (c.refVia ??= new RefVia(c)));
  }
  return c.decode(v);
}

/**
 * The dirty cells of `c` just before `rowId` in its order (the run ending at the first clean one),
 * to compute first: a PREVIOUS running total then computes each row once, in order, instead of
 * waiting on its predecessor and re-running (F6: 4,000 rows, every row run twice).
 */
function aheadNeed(c: ColData, rowId: number, ahead: AheadRows, cur: Tracker): NeedCompute {
  const {rows, end} = ahead;
  if (rows[end] !== rowId) return new NeedCompute(c, rowId);
  const run: number[] = [];
  for (let i = end; i >= 0; i--) {
    const r = rows[i];
    if (!c.dirty.has(r) || (cur.col === c && cur.row === r)) break;
    run.push(r);
  }
  if (run.length < 2) return new NeedCompute(c, rowId);
  run.reverse();
  return new NeedCompute(c, rowId, run, true);
}

/** A column of several rows (a RecordSet's attribute): dirty cells among them are computed together first. */
export function readColumn(s: EngineState, tableId: string, colId: string, rowIds: number[], via?: Via): Value[] {
  const c = s.tables.get(tableId)?.cols.get(colId);
  const cur = s.cur;
  if (c && cur && c.dirty.size && rowIds.length > 1) {
    let rows: number[] | null = null;
    for (const r of rowIds) {
      if (c.dirty.has(r) && !(cur.col === c && cur.row === r)) (rows ??= []).push(r);
    }
    if (rows && rows.length > 1) {
      if (cur.track) {
        if (via === undefined) noteRead(c, rows[0], cur);
        else noteViaRead(c, via, cur);
      }
      throw new NeedCompute(c, rows[0], rows);
    }
  }
  const out: Value[] = new Array(rowIds.length);
  for (let i = 0; i < rowIds.length; i++) out[i] = readCell(s, tableId, colId, rowIds[i], via);
  return out;
}

export function allRows(s: EngineState, tableId: string): {rows: number[]; via: Via} {
  const t = getTable(s, tableId);
  const cur = s.cur;
  if (cur?.track) {
    let rows = t.allCallers.get(cur.col);
    if (!rows) {
      rows = new Set();
      t.allCallers.set(cur.col, rows);
    }
    if (!rows.has(cur.row)) {
      rows.add(cur.row);
      pushSource(cur, {kind: 2, table: t});
    }
  }
  return {rows: t.sortedRowIds(), via: t.allVia};
}

/**
 * Grist's getSummarySourceGroup: the source rows whose group-by values are this summary row's
 * (list columns of the source match by CONTAINS, an empty list under the empty value).
 */
export function summaryGroup(s: EngineState, tableId: string, rowId: number): RecordSet | null {
  const t = getTable(s, tableId);
  const src = t.summarySource ? s.tables.get(t.summarySource) : undefined;
  if (!src) return null;
  const groupBy = t.groupBy.length
    ? t.groupBy
    : [...t.cols.values()].filter((c) => !c.isFormula && c.id !== 'manualSort' && src.cols.has(c.id)).map((c) => c.id);
  const kw: Kwargs = Object.create(null);
  for (const colId of groupBy) {
    const v = readCell(s, tableId, colId, rowId);
    const srcType = src.cols.get(colId)?.type ?? '';
    if (srcType === 'ChoiceList') kw[colId] = new Contains(v, '');
    else if (srcType.startsWith('RefList:')) kw[colId] = new Contains(v, 0n);
    else kw[colId] = v;
  }
  const {rows, via} = groupBy.length ? lookup(s, src.id, kw, null) : allRows(s, src.id);
  return new RecordSet(s.host, src.id, rows, kw, null, via);
}

export function lookup(s: EngineState, tableId: string, kwargs: Kwargs, orderBy: Value): {rows: number[]; via: Via} {
  const {t, idx, key, colIds} = lookupKeyOf(s, tableId, kwargs);
  // Key columns computed by formulas must be current before the index answers.
  for (const colId of colIds) {
    const c = t.cols.get(colId);
    if (c?.dirty.size) {
      const list = c.dirty.list,
        rows: number[] = [];
      for (let i = 0; i < list.length; i++) {
        const r = list[i];
        if (!c.dirty.has(r) || (s.cur && s.cur.col === c && s.cur.row === r)) continue;
        rows.push(r);
      }
      if (rows.length) throw new NeedCompute(c, rows[0], rows);
    }
  }
  const cur = s.cur;
  if (cur?.track) noteLookup(idx, key, cur);
  const via = idx.via(key);
  let rows = idx.built ? undefined : lookupFromSource(t, idx, kwargs);
  if (!rows) {
    buildIndex(idx);
    rows = idx.rows(key);
  }
  if (orderBy !== null && orderBy !== undefined) rows = sortRows(s, tableId, rows, orderBy, via);
  return {rows, via};
}

export function sortRows(s: EngineState, tableId: string, rows: number[], orderBy: Value, via?: Via): number[] {
  return sortRowsEntry(s, tableId, rows, orderBy, via).rows;
}

/** sortRows, with the cache entry holding the order when it is cached. */
function sortRowsEntry(
  s: EngineState,
  tableId: string,
  rows: number[],
  orderBy: Value,
  via?: Via,
): {rows: number[]; entry: SortEntry | null} {
  if (typeof orderBy === 'string' && plainSpec(orderBy) && (via instanceof KeyVia || via instanceof AllVia)) {
    // Every row of a PREVIOUS/NEXT/RANK column asks for the same order: its entry is also kept
    // under the plain string, checked without parsing the spec again.
    const t = getTable(s, tableId);
    const hit = t.sortCache.get(via)?.get(orderBy);
    if (
      hit &&
      hit.rowsVersion === t.rowsVersion &&
      hit.cols.length === hit.nSpecs + (via instanceof KeyVia ? via.index.colIds.length : 0) &&
      hit.cols.every((c, i) => t.cols.get(c.id) === c && hit.vers[i] === c.version)
    )
      return {rows: cacheHit(s, hit, rows, via), entry: hit};
  }
  const t = getTable(s, tableId);
  const specs = sortSpec(t, orderBy);
  // The order of a lookup key's rows (or Table.all) by a spec is cached while its columns and rows
  // are unchanged (PREVIOUS/NEXT/RANK and sorted lookups ask for it from every row).
  const cacheable = via instanceof KeyVia || via instanceof AllVia;
  const specKey = specs.map((sp) => (sp.desc ? '-' : '+') + sp.col).join(',');
  const cols: ColData[] = [];
  if (cacheable) {
    for (const sp of specs) {
      const c = t.cols.get(sp.col);
      if (c) cols.push(c);
    }
    if (via instanceof KeyVia)
      for (const k of via.index.colIds) {
        const c = t.cols.get(k);
        if (c) cols.push(c);
      }
    const hit =
      cols.length === specs.length + (via instanceof KeyVia ? via.index.colIds.filter((k) => t.cols.has(k)).length : 0)
        ? t.sortCache.get(via)?.get(specKey)
        : undefined;
    if (
      hit &&
      hit.rowsVersion === t.rowsVersion &&
      hit.cols.length === cols.length &&
      hit.cols.every((c, i) => c === cols[i] && hit.vers[i] === c.version)
    ) {
      return {rows: cacheHit(s, hit, rows, via), entry: hit};
    }
  }
  // 'id' is the row id itself (`-id`: descending; a plain 'id' ended the spec above).
  const keys = rows.map((r) => specs.map((sp) => (sp.col === 'id' ? r : readCell(s, tableId, sp.col, r, via, rows))));
  s.sorts++;
  const idx = rows.map((_, i) => i);
  idx.sort((a, b) => {
    for (let k = 0; k < specs.length; k++) {
      const c = sortCompare(keys[a][k], keys[b][k]);
      if (c) return specs[k].desc ? -c : c;
    }
    return rows[a] - rows[b];
  });
  const sorted = idx.map((i) => rows[i]);
  if (cacheable && cols.length) {
    let m = t.sortCache.get(via);
    if (!m) {
      m = new Map();
      t.sortCache.set(via, m);
    }
    const entry: SortEntry = {
      rows: sorted,
      cols,
      vers: cols.map((c) => c.version),
      rowsVersion: t.rowsVersion,
      nSpecs: specs.length,
      pos: null,
    };
    m.set(specKey, entry);
    if (typeof orderBy === 'string' && plainSpec(orderBy)) m.set(orderBy, entry);
    return {rows: sorted, entry};
  }
  return {rows: sorted, entry: null};
}

/**
 * The columns an order_by sorts by, as Grist's make_sort_spec reads it: a spec naming 'id' ends
 * there (the row id is the last key anyway, and unique); otherwise a table with manualSort sorts
 * by it after the named columns (unless named), so that ties keep the order rows have in views.
 * `order_by=None` arrives as an empty spec: manualSort alone.
 */
function sortSpec(t: TableData, orderBy: Value): Array<{col: string; desc: boolean}> {
  const named = (typeof orderBy === 'string' ? [orderBy] : toArray(orderBy)).map((spec) => {
    if (typeof spec !== 'string') raise('TypeError', 'order_by must be a column id or a tuple of column ids');
    return spec as string;
  });
  const idAt = named.indexOf('id');
  const spec = idAt >= 0 ? named.slice(0, idAt) : named;
  if (idAt < 0 && t.cols.has('manualSort') && !named.includes('manualSort')) spec.push('manualSort');
  return spec.map((c) => (c.startsWith('-') ? {col: c.slice(1), desc: true} : {col: c, desc: false}));
}

/** Rows of rec's group (group_by columns equal to rec's) in order_by order. */
export function groupRows(s: EngineState, rec: Record, groupBy: Value, orderBy: Value): number[] {
  const cols = groupBy === null ? [] : typeof groupBy === 'string' ? [groupBy] : toArray(groupBy).map(String);
  const kw: Kwargs = Object.create(null);
  for (const c of cols) kw[c] = rec.getattr(c);
  if (cols.length) return lookup(s, rec.tableId, kw, orderBy).rows;
  const {rows, via} = allRows(s, rec.tableId);
  return orderBy === null ? rows : sortRows(s, rec.tableId, rows, orderBy, via);
}

/**
 * An order_by string that can be a key of the sort cache as it is: never one of its spec keys
 * ('+K', '-K,+A') with another meaning ('-K' means what its spec key means).
 */
function plainSpec(orderBy: string): boolean {
  return orderBy.charCodeAt(0) !== 43 && !orderBy.includes(',');
}

/** A valid cached order: the same dependencies and waits as reading its sort columns. */
function cacheHit(s: EngineState, hit: SortEntry, rows: number[], via: Via): number[] {
  const cur = s.cur;
  for (let i = 0; i < hit.nSpecs; i++) {
    const c = hit.cols[i];
    if (cur?.track && (cur.lastVia !== via || cur.lastViaCol !== c)) noteViaRead(c, via, cur);
    if (c.dirty.size) {
      const dirty = rows.filter((r) => c.dirty.has(r) && !(cur && cur.col === c && cur.row === r));
      if (dirty.length) throw new NeedCompute(c, dirty[0], dirty);
    }
  }
  return hit.rows;
}

/**
 * rec's group in order (as groupRows) and rec's index in it (-1 when absent). PREVIOUS/NEXT/RANK
 * ask from every row of the group: a cached order also keeps each row's index (built on the first
 * ask), so each asks in O(1) instead of scanning the group (F6: 4,000 rows, 8M comparisons).
 */
export function groupPosition(
  s: EngineState,
  rec: Record,
  groupBy: Value,
  orderBy: Value,
): {rows: number[]; index: number} {
  if (orderBy === null || orderBy === undefined) {
    const rows = groupRows(s, rec, groupBy, orderBy);
    return {rows, index: rows.indexOf(rec.rowId)};
  }
  const cols = groupBy === null ? [] : typeof groupBy === 'string' ? [groupBy] : toArray(groupBy).map(String);
  let found: {rows: number[]; entry: SortEntry | null};
  if (cols.length) {
    const kw: Kwargs = Object.create(null);
    for (const c of cols) kw[c] = rec.getattr(c);
    const {rows, via} = lookup(s, rec.tableId, kw, null);
    found = sortRowsEntry(s, rec.tableId, rows, orderBy, via);
  } else {
    const {rows, via} = allRows(s, rec.tableId);
    found = sortRowsEntry(s, rec.tableId, rows, orderBy, via);
  }
  const {rows, entry} = found;
  if (!entry) return {rows, index: rows.indexOf(rec.rowId)};
  let pos = entry.pos;
  if (!pos) {
    pos = new Map();
    for (let i = 0; i < rows.length; i++) pos.set(rows[i], i);
    entry.pos = pos;
  }
  return {rows, index: pos.get(rec.rowId) ?? -1};
}

/** Sort comparison for order_by: None first, mixed types by type name (never throws). */
function sortCompare(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  try {
    const c = pyCompare(a, b);
    return Number.isNaN(c) ? 0 : c;
  } catch {
    const ta = typeof a,
      tb = typeof b;
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  }
}
