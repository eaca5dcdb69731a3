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
 * The loop itself is recalc.ts's `computeColumn` (it stores through `store`, evaluate's errors).
 */
import type {Value} from './values.js';
import {raiseStoredError} from './convert.js';
import {type Tracker, edge} from './deps.js';
import {Record, type RecordHost} from './records.js';
import {staticPlan} from './static-deps.js';
import {type ColData, RefVia, refKindOf} from './tables.js';
import type {EngineState} from './state.js';

/**
 * Fewest dirty cells for the loop: below, the per-cell path (the loop's set-up is not worth it
 * for a handful of cells).
 */
export const COLUMN_LOOP_MIN = 64;

/**
 * Whether a column's formula is static (static-deps.ts), kept by column for the text it had: one
 * analysis took 50-200 us, more than 64 evaluations of a short formula. The answer may go stale
 * when another column's type changes (a record reached through a Ref may then escape), but the
 * loop needs only that `rec` itself never escapes, which the text alone decides.
 */
export function isStatic(s: EngineState, c: ColData): boolean {
  const formula = c.spec.formula ?? '';
  const known = c.loopStatic;
  if (known && known.formula === formula) return known.ok;
  const schema = {
    colType: (tableId: string, colId: string) => s.tables.get(tableId)?.cols.get(colId)?.type,
    isTable: (name: string) => s.tables.has(name),
  };
  const ok = staticPlan(formula, c.table.id, c.id, schema) !== null;
  c.loopStatic = {formula, ok};
  return ok;
}

/** What the records of one loop share: the columns of their table they read directly. */
export interface Loop {
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
export class LoopRecord extends Record {
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
