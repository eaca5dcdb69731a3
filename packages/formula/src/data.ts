/**
 * Record actions (BulkAddRecord, BulkUpdateRecord, BulkRemoveRecord, ReplaceTableData) mirrored
 * into the engine's tables, marking what they affect dirty; and the whole-document invalidations
 * (recomputeAll, the clock).
 */
import {raise} from './values.js';
import {defaultCell, sameCell} from './convert.js';
import {type ColValues, RecalcWhen} from './engine-types.js';
import {POINT_READS_BEFORE_LOAD} from './tables.js';
import {
  clearCellSources,
  clearSources,
  dirtyCallers,
  indexBeforeChange,
  invalidateReaders,
  markDirty,
  rowsAppearedOrVanished,
  updateIndexes,
} from './deps.js';
import {type EngineState, getTable} from './state.js';

/**
 * The document is about to change rows in SQLite, before it tells the engine: lazy columns read
 * the cells' current values first (the engine compares old and new), and indexes that need old
 * keys are built. `rowIds` null: every row; `colIds` null: rows are being added or removed.
 */
export function beforeChange(s: EngineState, tableId: string, rowIds: number[] | null, colIds: string[] | null): void {
  const t = s.tables.get(tableId);
  if (!t) return;
  if (!colIds) void t.rowIds; // rows come or go: the table's row ids are read while they are the old ones
  indexBeforeChange(s, t, colIds);
  if (!colIds) return;
  for (const colId of colIds) {
    const c = t.cols.get(colId);
    if (!c?.isLazy) continue;
    if (!rowIds || rowIds.length > POINT_READS_BEFORE_LOAD) {
      void c.values;
      continue;
    }
    for (const r of rowIds) {
      const slot = t.index.get(r);
      if (slot !== undefined) c.get(slot);
    }
  }
}

/** BulkAddRecord (and AddRecord with one row). */
export function addRecords(
  s: EngineState,
  tableId: string,
  rowIds: number[],
  values: ColValues,
  opts: {load?: boolean} = {},
): void {
  const t = getTable(s, tableId);
  if (!opts.load) indexBeforeChange(s, t, null);
  const given = new Set(Object.keys(values));
  const cols = [...t.cols.values()];
  const srcs = cols.map((c) => (Object.hasOwn(values, c.id) ? values[c.id] : undefined));
  const dflts = cols.map((c) => defaultCell(c.type));
  for (let i = 0; i < rowIds.length; i++) {
    const rowId = rowIds[i];
    if (t.index.has(rowId)) raise('ValueError', `row ${rowId} exists in ${tableId}`);
    const slot = t.free.length ? t.free.pop()! : t.rowIds.length;
    t.rowIds[slot] = rowId;
    t.index.set(rowId, slot);
    for (let j = 0; j < cols.length; j++) {
      const vs = srcs[j];
      cols[j].set(slot, vs && i < vs.length ? vs[i] : dflts[j]);
    }
  }
  t.sortedCache = null;
  t.rowsVersion++;
  if (opts.load) {
    // Loaded formula values are Grist's own; nothing is dirty until something changes.
    return;
  }
  rowsAppearedOrVanished(s, t, rowIds);
  for (const c of t.cols.values()) {
    if (c.isFormula) markDirty(s, c, rowIds);
    else if (c.isTrigger) {
      const when = c.spec.recalcWhen ?? 0;
      if (when === RecalcWhen.NEVER) continue;
      if (given.has(c.id) && !c.readsSelf) continue;
      markDirty(s, c, rowIds);
    }
  }
  // Every column, formula ones included: a new row's formula cell that computes to the value it
  // was given (or its default) is never stored again, so the index must hold that value now.
  for (const c of t.cols.values()) updateIndexes(s, c, rowIds, true);
}

/** BulkUpdateRecord (and UpdateRecord). */
export function updateRecords(s: EngineState, tableId: string, rowIds: number[], values: ColValues): void {
  const t = getTable(s, tableId);
  const updated = Object.keys(values);
  indexBeforeChange(s, t, updated);
  for (const colId of updated) {
    const c = t.cols.get(colId);
    if (!c) continue;
    const vs = values[colId];
    const changed: number[] = [];
    for (let i = 0; i < rowIds.length; i++) {
      const slot = t.index.get(rowIds[i]);
      if (slot === undefined) continue;
      if (!sameCell(c.get(slot), vs[i])) changed.push(rowIds[i]);
      c.set(slot, vs[i]);
    }
    c.version++;
    if (c.isFormula) continue; // formula values are the engine's own; a write is recomputed below
    if (changed.length) {
      invalidateReaders(s, c, changed);
      updateIndexes(s, c, changed, false);
    }
  }
  // Trigger formulas.
  for (const c of t.cols.values()) {
    if (!c.isTrigger) continue;
    const when = c.spec.recalcWhen ?? 0;
    if (when === RecalcWhen.NEVER) continue;
    if (updated.includes(c.id) && !c.readsSelf) continue;
    let fire = false;
    if (when === RecalcWhen.MANUAL_UPDATES) fire = updated.some((u) => u !== c.id || c.readsSelf);
    else fire = (c.spec.recalcDeps ?? []).some((d) => updated.includes(d));
    if (fire)
      markDirty(
        s,
        c,
        rowIds.filter((r) => t.index.has(r)),
      );
  }
  // A write to a formula column is overwritten by the formula, as in Grist.
  for (const colId of updated) {
    const c = t.cols.get(colId);
    if (c?.isFormula) markDirty(s, c, rowIds);
  }
}

/** BulkRemoveRecord (and RemoveRecord). */
export function removeRecords(s: EngineState, tableId: string, rowIds: number[]): void {
  const t = getTable(s, tableId);
  indexBeforeChange(s, t, null);
  const present = rowIds.filter((r) => t.index.has(r));
  // Dependents of the vanishing rows, computed before the rows go.
  rowsAppearedOrVanished(s, t, present);
  for (const c of t.cols.values()) {
    for (const r of present) {
      c.dirty.delete(r);
      c.errorMessages.delete(r);
      clearCellSources(c, r);
    }
  }
  for (const idx of t.indexes.values()) {
    for (const r of present) {
      const keys = idx.remove(r);
      if (keys) for (const key of keys) dirtyCallers(s, idx, key);
    }
  }
  for (const r of present) {
    const slot = t.index.get(r)!;
    t.index.delete(r);
    t.rowIds[slot] = -1;
    t.free.push(slot);
  }
  t.sortedCache = null;
  t.rowsVersion++;
}

/** ReplaceTableData: every row replaced. */
export function replaceTableData(s: EngineState, tableId: string, rowIds: number[], values: ColValues): void {
  const t = getTable(s, tableId);
  removeRecords(s, tableId, t.sortedRowIds().slice());
  t.rowIds = [];
  t.index.clear();
  t.free = [];
  for (const c of t.cols.values()) c.values = [];
  addRecords(s, tableId, rowIds, values);
}

/** Marks every formula cell of the document dirty (what opening or importing a document does in Grist). */
export function recomputeAll(s: EngineState): void {
  for (const t of s.tables.values()) {
    for (const c of t.cols.values()) {
      if (c.isFormula) {
        clearSources(c);
        markDirty(s, c, t.sortedRowIds());
      }
    }
  }
}

/** The clock moved (Grist refreshes NOW()/TODAY() hourly): volatile formulas recompute. */
export function invalidateClock(s: EngineState): void {
  for (const t of s.tables.values())
    for (const c of t.cols.values()) if (c.isFormula && c.volatile) markDirty(s, c, t.sortedRowIds());
}
