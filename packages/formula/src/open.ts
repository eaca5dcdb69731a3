/**
 * Opening a document without evaluating it (issue 26 §2): tables whose cells stay in their source
 * until needed, and static plans (static-deps.ts) registered as the dependencies evaluation would
 * have recorded, so stored formula values are trusted.
 */
import type {CellValue} from './cells/types.js';
import {type Kwargs, PyException} from './values.js';
import {defaultCell} from './convert.js';
import {type StaticPlan, staticPlan} from './static-deps.js';
import type {TableSpec} from './engine-types.js';
import {type ColData, type ColumnSource, type LazyRows, RefVia} from './tables.js';
import {refTarget} from './cells/types.js';
import {type LookupIndex, lookupIndexFor, lookupKeyFor} from './indexes.js';
import {
  NO_SOURCES,
  type Tracker,
  addRefReader,
  clearSources,
  edge,
  markDirty,
  noteLookup,
  noteViaRead,
} from './deps.js';
import {readCell} from './reads.js';
import {addTable} from './schema.js';
import {type EngineState, getTable} from './state.js';

/**
 * Adds a table whose cells stay in `sources` (by column id; a column without one is read now
 * from `values`) until formulas or changes need them: an open document's engine reads only
 * what its writes touch (issue 26 §2).
 */
export function loadLazyTable(
  s: EngineState,
  spec: TableSpec,
  rows: LazyRows,
  sources: (colId: string) => ColumnSource | null,
): void {
  addTable(s, spec);
  const t = getTable(s, spec.tableId);
  t.setLazyRows(rows.max, rows.exists, rows.ids);
  t.sortedCache = null;
  t.rowsVersion++;
  t.sourceRowsVersion = t.rowsVersion;
  for (const c of t.cols.values()) {
    const src = sources(c.id);
    if (src) c.setSource(src);
    else c.values = new Array<CellValue>(t.rowIds.length).fill(defaultCell(c.type));
  }
}

/** Reads every lazy column whole (before the document changes the shape of its tables). */
export function loadAllColumns(s: EngineState): void {
  for (const t of s.tables.values()) for (const c of t.cols.values()) if (c.isLazy) void c.values;
}

/**
 * Like recomputeAll, for loaded formula values known to be current (gristlite computed them and
 * kept them so): a formula whose dependencies follow from its text (static-deps.ts) gets them
 * registered without being evaluated; the others are marked for computing, as recomputeAll does.
 * Returns how many formula columns went each way.
 */
export function trustStored(s: EngineState): {static: number; computed: number} {
  const schema = {
    colType: (tableId: string, colId: string) => s.tables.get(tableId)?.cols.get(colId)?.type,
    isTable: (name: string) => s.tables.has(name),
  };
  const dynamic: ColData[] = [];
  let statics = 0;
  for (const t of s.tables.values()) {
    for (const c of t.cols.values()) {
      if (!c.isFormula) continue;
      const plan = t.summarySource || c.volatile ? null : staticPlan(c.spec.formula ?? '', t.id, c.id, schema);
      if (plan) {
        // Loading marked formulas naming each loaded table dirty (schemaNameChanged): the
        // stored values are current.
        c.dirty.clear();
        clearSources(c);
        registerPlan(s, c, plan);
        statics++;
      } else dynamic.push(c);
    }
  }
  // After the static edges: a static formula reading a recomputed one follows it.
  for (const c of dynamic) {
    clearSources(c);
    markDirty(s, c, c.table.sortedRowIds());
  }
  return {static: statics, computed: dynamic.length};
}

/** Registers what evaluation of every cell of `c` would, from its static plan and the stored values. */
export function registerPlan(s: EngineState, c: ColData, plan: StaticPlan): void {
  const t = c.table;
  for (const colId of plan.cols) {
    const src = t.cols.get(colId);
    if (src) edge(src, c).identity = true;
  }
  for (const {ref, col} of plan.refs) {
    const refCol = t.cols.get(ref);
    const target = refCol && s.tables.get(refTarget(refCol.type) ?? '')?.cols.get(col);
    if (target) addRefReader(target, (refCol.refVia ??= new RefVia(refCol)), c);
  }
  if (!plan.lookups.length) return;
  // Each lookup's index, once (static keys are never CONTAINS, so the key columns decide it); a
  // missing key column raises KeyError in every cell, which registers nothing.
  const lookups: Array<{lk: StaticPlan['lookups'][number]; idx: LookupIndex; colIds: string[]; cols: ColData[]}> = [];
  for (const lk of plan.lookups) {
    const target = s.tables.get(lk.table);
    if (!target) continue;
    const colIds = lk.keys.map((k) => k.key).sort();
    try {
      const idx = lookupIndexFor(s, lk.table, colIds, Object.create(null));
      const cols = lk.cols.map((colId) => target.cols.get(colId)).filter((col): col is ColData => Boolean(col));
      lookups.push({lk, idx, colIds, cols});
    } catch (e) {
      if (!(e instanceof PyException)) throw e;
    }
  }
  const prev = s.cur;
  s.cur = null;
  try {
    for (const r of t.sortedRowIds()) {
      const tracker: Tracker = {
        col: c,
        row: r,
        sources: NO_SOURCES,
        track: true,
        lastVia: undefined,
        lastViaCol: null,
      };
      for (const {lk, idx, colIds, cols} of lookups) {
        const kwargs: Kwargs = Object.create(null);
        try {
          for (const k of lk.keys)
            kwargs[k.key] =
              'value' in k.from
                ? k.from.value
                : k.from.col === 'id' || k.from.col === '_row_id'
                  ? BigInt(r)
                  : readCell(s, t.id, k.from.col, r);
        } catch (e) {
          // An error cell as a key: evaluation stops there too.
          if (!(e instanceof PyException)) throw e;
          continue;
        }
        // What lookup() records, without building the index (it is built when first needed).
        const key = lookupKeyFor(colIds, kwargs);
        noteLookup(idx, key, tracker);
        const via = idx.via(key);
        for (const col of cols) noteViaRead(col, via, tracker);
      }
      if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
    }
  } finally {
    s.cur = prev;
  }
}
