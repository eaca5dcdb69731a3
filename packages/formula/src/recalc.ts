/** Recalculation: dirty cells computed from an explicit work stack, their values stored, changes kept. */
import {PyException} from './values.js';
import type {ColData} from './tables.js';
import type {CellValue} from './cells/types.js';
import {setCurrentBudget} from './budget.js';
import {convertResult, errorCell, sameCell} from './convert.js';
import type {RecalcResult} from './engine-types.js';
import {Record, UserTable} from './records.js';
import {
  NO_SOURCES,
  type Tracker,
  clearCellSources,
  depTriggers,
  indexBeforeChange,
  invalidateReaders,
  markDirty,
  updateIndexes,
} from './deps.js';
import type {EngineState} from './state.js';
import {COLUMN_LOOP_MIN, type Loop, LoopRecord, isStatic} from './column-loop.js';

export class NeedCompute {
  /**
   * `rows`: every one of these cells of the column is needed (a lookup's key column, a column read
   * from a RecordSet), computed in one go rather than one per re-run of the waiting cell.
   */
  constructor(
    readonly col: ColData,
    readonly row: number,
    readonly rows?: number[],
    /** The cells of `rows` other than `row` are computed ahead, not known to be needed (PREVIOUS). */
    readonly ahead = false,
  ) {}
}

export const CIRCULAR = new PyException('CircularRefError', 'Circular Reference');

/** Brings every dirty cell up to date; returns the changed cells. */
export function recalc(s: EngineState): RecalcResult {
  const prevBudget = setCurrentBudget(s.budget);
  s.budget.startRecalc();
  s.evaluations = 0;
  s.sorts = 0;
  try {
    for (;;) {
      let col: ColData | null = null;
      for (const c of s.dirtyCols) {
        if (c.dirty.size) {
          col = c;
          break;
        }
        s.dirtyCols.delete(c);
      }
      if (!col) break;
      // The dirty list grows while computing (visited too); emptied, it restarts (picked up above).
      const dirty = col.dirty,
        list = dirty.list;
      // Many cells of a formula with static reads: one loop (column-loop.ts), then this one.
      let i = computeColumn(s, col, list, 0);
      if (dirty.list !== list) continue;
      for (; i < list.length; i++) {
        const r = list[i];
        if (dirty.has(r)) computeFrom(s, col, r);
        if (dirty.list !== list) break;
      }
    }
  } finally {
    s.budget.endRecalc();
    setCurrentBudget(prevBudget);
  }
  return takeChanges(s);
}

export function takeChanges(s: EngineState): RecalcResult {
  const result: RecalcResult = {
    changes: {},
    rowsChanged: {},
    previous: {},
    evaluations: s.evaluations,
    sorts: s.sorts,
  };
  const rowsByTable = new Map<string, number[][]>();
  for (const [c, ch] of s.changes) {
    if (!ch.n || !s.tables.has(c.table.id) || c.table.cols.get(c.id) !== c) continue;
    let {rows: rowIds, values, olds} = ch;
    if (rowIds.length !== ch.n) {
      rowIds.length = ch.n;
      values.length = ch.n;
      olds.length = ch.n;
    }
    let ascending = true;
    for (let i = 1; i < rowIds.length; i++)
      if (rowIds[i] <= rowIds[i - 1]) {
        ascending = false;
        break;
      }
    if (!ascending) {
      // A cell changed more than once: its last value, and its value before the first change.
      const last = new Map<number, CellValue>();
      const first = new Map<number, CellValue>();
      for (let i = 0; i < rowIds.length; i++) {
        last.set(rowIds[i], values[i]);
        if (!first.has(rowIds[i])) first.set(rowIds[i], olds[i]);
      }
      rowIds = [...last.keys()].filter((r) => c.table.index.has(r)).sort((a, b) => a - b);
      values = rowIds.map((r) => last.get(r)!);
      olds = rowIds.map((r) => first.get(r)!);
    }
    if (!rowIds.length) continue;
    const tableChanges = (result.changes[c.table.id] ??= {});
    tableChanges[c.id] = {rowIds, values};
    (result.previous[c.table.id] ??= {})[c.id] = olds;
    let lists = rowsByTable.get(c.table.id);
    if (!lists) {
      lists = [];
      rowsByTable.set(c.table.id, lists);
    }
    lists.push(rowIds);
  }
  for (const [t, lists] of rowsByTable) {
    // One column, or columns changed on the same rows: its (ascending) list; else the union.
    const first = lists[0];
    const same = lists.every((l) => l === first || (l.length === first.length && l.every((r, i) => r === first[i])));
    result.rowsChanged[t] = same ? first.slice() : [...new Set(lists.flat())].sort((a, b) => a - b);
  }
  s.changes.clear();
  return result;
}

export function computeFrom(s: EngineState, col: ColData, row: number): void {
  // Fast path: the cell needs nothing dirty.
  const first = evaluate(s, col, row);
  if (!first) {
    col.dirty.delete(row);
    return;
  }
  // Cells waiting for another are in `computing`; reading one of those is a cycle. `roots[i]`: for
  // a cell computed ahead (NeedCompute.ahead) or for one it waits for, the stack index of the cell
  // computed ahead; -1 for a needed cell. A cycle met from a cell computed ahead is not stored (the
  // cell may not be needed at all): the cells from that root up are left dirty, to be computed when
  // needed, where a real cycle is found again.
  const stack: Array<[ColData, number]> = [[col, row]];
  const roots: number[] = [-1];
  col.computing.add(row);
  let need: NeedCompute | null = first;
  while (stack.length) {
    if (need) {
      const top = stack.length - 1;
      const [c, r] = stack[top];
      const root = roots[top];
      if (need.col.computing.has(need.row) || (need.col === c && need.row === r)) {
        if (root >= 0) {
          while (stack.length > root) {
            const [dc, dr] = stack.pop()!;
            roots.pop();
            dc.computing.delete(dr);
          }
        } else {
          c.errorMessages.set(r, CIRCULAR.message);
          store(s, c, r, errorCell(CIRCULAR));
          c.dirty.delete(r);
          c.computing.delete(r);
          stack.pop();
          roots.pop();
        }
      } else if (need.rows) {
        c.computing.add(r);
        const nc = need.col,
          rows = need.rows;
        for (let i = rows.length - 1; i >= 0; i--) {
          const x = rows[i];
          if (nc.dirty.has(x) && !nc.computing.has(x) && !(nc === c && x === r)) {
            roots.push(root >= 0 ? root : need.ahead && x !== need.row ? stack.length : -1);
            stack.push([nc, x]);
          }
        }
      } else {
        c.computing.add(r);
        roots.push(root);
        stack.push([need.col, need.row]);
      }
      need = null;
    }
    if (!stack.length) break;
    const [c, r] = stack[stack.length - 1];
    if (!c.dirty.has(r)) {
      c.computing.delete(r);
      stack.pop();
      roots.pop();
      continue;
    }
    need = evaluate(s, c, r);
    if (!need) {
      c.dirty.delete(r);
      c.computing.delete(r);
      stack.pop();
      roots.pop();
    }
  }
}

/** Evaluates one cell and stores its value; returns the dirty cell it must wait for, if any. */
export function evaluate(s: EngineState, c: ColData, r: number): NeedCompute | null {
  const t = c.table;
  const slot = t.index.get(r);
  if (slot === undefined) {
    c.dirty.delete(r);
    return null;
  }
  clearCellSources(c, r);
  const tracker: Tracker = {
    col: c,
    row: r,
    sources: NO_SOURCES,
    track: c.isFormula,
    lastVia: undefined,
    lastViaCol: null,
  };
  return runCell(s, c, r, slot, tracker, new Record(s.host, t.id, r));
}

/**
 * Runs `c`'s formula on `rec` (row `r`, at `slot`) with `tracker` as the cell being computed, and
 * stores the result or the error; returns the dirty cell it must wait for instead, if any (its
 * reads so far kept). Shared by `evaluate` and the column loop (`computeColumn`).
 */
function runCell(
  s: EngineState,
  c: ColData,
  r: number,
  slot: number,
  tracker: Tracker,
  rec: Record,
): NeedCompute | null {
  const t = c.table;
  const prev = s.cur;
  s.cur = tracker;
  s.evaluations++;
  let cell: CellValue;
  try {
    s.budget.startCell();
    cell = convertResult(c.compiled!.run(rec, (t.userTable ??= new UserTable(s.host, t.id))), c.type);
  } catch (e) {
    if (e instanceof NeedCompute) {
      if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
      return e;
    }
    cell = errorFor(e, c, slot);
  } finally {
    s.cur = prev;
  }
  if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
  store(s, c, r, cell);
  return null;
}

export function errorFor(e: unknown, c: ColData, slot: number): CellValue {
  let pe: PyException;
  if (e instanceof PyException) pe = e;
  else if (e instanceof RangeError && /call stack/i.test(e.message))
    pe = new PyException('RecursionError', 'maximum recursion depth exceeded');
  else pe = new PyException('UnsupportedError', `internal error: ${e instanceof Error ? e.message : String(e)}`);
  c.errorMessages.set(c.table.rowIds[slot], pe.message);
  if (c.isTrigger) {
    // Grist keeps the previous value of a trigger formula's cell inside the error.
    const prev = c.get(slot);
    return errorCell(
      pe,
      Array.isArray(prev) && prev[0] === 'E' ? ((prev[4] as {u?: CellValue} | undefined)?.u ?? null) : prev,
    );
  }
  return errorCell(pe);
}

export function store(s: EngineState, c: ColData, r: number, cell: CellValue): void {
  const t = c.table;
  const slot = t.index.get(r);
  if (slot === undefined) return;
  if (c.errorMessages.size && !(Array.isArray(cell) && cell[0] === 'E')) c.errorMessages.delete(r);
  const old = c.get(slot);
  if (sameCell(old, cell) && typeof old === typeof cell) return;
  if (t.indexes.size) indexBeforeChange(s, t, [c.id]);
  c.set(slot, cell);
  c.version++;
  let m = s.changes.get(c);
  if (!m) {
    const size = c.dirty.size;
    m = {rows: new Array<number>(size), values: new Array<CellValue>(size), olds: new Array<CellValue>(size), n: 0};
    s.changes.set(c, m);
  }
  m.rows[m.n] = r;
  m.values[m.n] = cell;
  m.olds[m.n] = old;
  m.n++;
  // Trigger formulas (recalcWhen DEFAULT) whose recalcDeps include this formula column fire.
  if (c.isFormula) {
    const triggers = depTriggers(t).get(c.id);
    if (triggers) for (const tc of triggers) markDirty(s, tc, [r]);
  }
  if (c.isTrigger) {
    // A trigger cell is data: its readers recompute.
    invalidateReaders(s, c, [r]);
  }
  if (t.indexes.size) updateIndexes(s, c, [r], false);
}

/**
 * Computes many dirty cells of a static formula column in one loop (column-loop.ts, D180): the
 * dirty cells of `c` listed in `list` (the column's dirty list) from index `from`, in
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
  const rec = new LoopRecord(s.host, t.id, loop);
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
    rec.moveTo(r, slot);
    if (runCell(s, c, r, slot, tracker, rec)) {
      // As evaluate() leaves it; the per-cell path evaluates the cell again from the start,
      // counted once as there.
      s.evaluations--;
      return i;
    }
    dirty.delete(r);
    if (dirty.list !== list) return i + 1;
  }
  return list.length;
}
