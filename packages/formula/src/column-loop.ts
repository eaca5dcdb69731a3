/**
 * Many dirty cells of one formula column computed in one loop (issue 43 §1, D180). Each cell is
 * still its formula run on its own record, its result converted and stored as `evaluate` and
 * `store` do; what the loop saves is the per-cell machinery around that: one tracker reused, and
 * the record's reads of its own row's columns answered from the column (what `readCell` does for
 * them, without looking up the table and column and noting the same identity edge again).
 *
 * Only formulas whose reads follow from their text (static-deps.ts: `rec` never escapes into a
 * function or a value) take it, so a record of the loop is only ever read while its own cell is
 * computed. A cell that needs a dirty cell stops the loop: the per-cell path takes over there.
 */
import type {Value} from './values.js';
import type {CellValue} from './cells/types.js';
import {convertResult, raiseStoredError} from './convert.js';
import {NO_SOURCES, type Tracker, clearCellSources, edge} from './deps.js';
import {NeedCompute, errorFor, store} from './recalc.js';
import {Record, type RecordHost, UserTable} from './records.js';
import {staticPlan} from './static-deps.js';
import {type ColData, RefVia, refKindOf} from './tables.js';
import type {EngineState} from './state.js';

/**
 * Fewest dirty cells for the loop: below, the per-cell path (the loop's set-up, the formula's
 * static analysis once per formula text, is not worth it for a handful of cells).
 */
export const COLUMN_LOOP_MIN = 64;

/** Whether a column's formula text is static (static-deps.ts), by column, for the text it had. */
const staticByCol = new WeakMap<ColData, {formula: string; ok: boolean}>();

function isStatic(s: EngineState, c: ColData): boolean {
  const formula = c.spec.formula ?? '';
  const known = staticByCol.get(c);
  if (known && known.formula === formula) return known.ok;
  const schema = {
    colType: (tableId: string, colId: string) => s.tables.get(tableId)?.cols.get(colId)?.type,
    isTable: (name: string) => s.tables.has(name),
  };
  const ok = staticPlan(formula, c.table.id, c.id, schema) !== null;
  staticByCol.set(c, {formula, ok});
  return ok;
}

/** What the records of one loop share: the columns of their table they read directly. */
interface Loop {
  s: EngineState;
  /** The tracker of the cell being computed (`s.cur` while the formula runs). */
  tracker: Tracker;
  self: ColData;
  cols: Map<string, ColData>;
  /** Columns whose identity edge to `self` is registered (once per loop, as noteRead would). */
  noted: Set<ColData>;
}

/**
 * The record of the cell the loop computes, moved from row to row (the formula's text lets `rec`
 * escape nowhere, so no cell keeps it); reads of its own row's columns skip readCell's lookups.
 */
class LoopRecord extends Record {
  slot = 0;
  constructor(
    host: RecordHost,
    tableId: string,
    private readonly loop: Loop,
  ) {
    super(host, tableId, 0);
  }
  moveTo(rowId: number, slot: number): void {
    (this as {rowId: number}).rowId = rowId;
    this.slot = slot;
  }
  override getattr(name: string): Value {
    const loop = this.loop;
    const src = loop.cols.get(name);
    // Not a column, read outside the loop's cell, or a dirty cell (readCell raises NeedCompute):
    // the general path.
    if (src === undefined || loop.s.cur !== loop.tracker || (src.dirty.size && src.dirty.has(this.rowId)))
      return super.getattr(name);
    // PEEK() reads untracked: no edge, and a Ref cell's records without the route (as readCell).
    const track = loop.tracker.track;
    if (track && !loop.noted.has(src)) {
      // What noteRead records for a read of the reading cell's own row.
      const e = edge(src, loop.self);
      e.identity = true;
      src.lastEdge = e;
      loop.noted.add(src);
    }
    const v = src.get(this.slot);
    if (src.errorMessages.size && Array.isArray(v) && v[0] === 'E')
      raiseStoredError(v, src.errorMessages.get(this.rowId));
    // A Ref/RefList cell of the own row: its records carry the route (readCell's RefVia).
    const kind = track ? (src.refKind ??= refKindOf(src.type)) : 0;
    if (kind) return src.decode(v, (src.refVia ??= new RefVia(src)));
    return src.decode(v);
  }
}

/**
 * Computes the dirty cells of `c` listed in `list` (the column's dirty list) from index `from`, in
 * order, while they need no dirty cell; returns the index where the per-cell path takes over
 * (`list.length` when done). Returns `from` at once when the column does not qualify.
 */
export function computeColumn(s: EngineState, c: ColData, list: number[], from: number): number {
  const t = c.table;
  if (
    list.length - from < COLUMN_LOOP_MIN ||
    !c.isFormula ||
    !c.compiled ||
    c.volatile ||
    t.summarySource ||
    !isStatic(s, c)
  )
    return from;
  const cols = new Map<string, ColData>();
  for (const [id, col] of t.cols) if (col !== c) cols.set(id, col);
  const tracker: Tracker = {col: c, row: 0, sources: NO_SOURCES, track: true, lastVia: undefined, lastViaCol: null};
  const loop: Loop = {s, tracker, self: c, cols, noted: new Set()};
  const dirty = c.dirty;
  const run = c.compiled.run;
  const userTable = (t.userTable ??= new UserTable(s.host, t.id));
  const rec = new LoopRecord(s.host, t.id, loop);
  const prev = s.cur;
  for (let i = from; i < list.length; i++) {
    const r = list[i];
    if (!dirty.has(r)) continue;
    const slot = t.index.get(r);
    if (slot === undefined) {
      dirty.delete(r);
      continue;
    }
    if (c.cellSources.size) clearCellSources(c, r);
    tracker.row = r;
    tracker.track = true;
    tracker.sources = NO_SOURCES;
    tracker.lastVia = undefined;
    tracker.lastViaCol = null;
    s.cur = tracker;
    s.evaluations++;
    let cell: CellValue;
    try {
      s.budget.startCell();
      rec.moveTo(r, slot);
      cell = convertResult(run(rec, userTable), c.type);
    } catch (e) {
      if (e instanceof NeedCompute) {
        // As evaluate() leaves it; the per-cell path evaluates the cell again from the start,
        // counted once as there.
        if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
        s.evaluations--;
        return i;
      }
      cell = errorFor(e, c, slot);
    } finally {
      s.cur = prev;
    }
    if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
    store(s, c, r, cell);
    dirty.delete(r);
    if (dirty.list !== list) return i + 1;
  }
  return list.length;
}
