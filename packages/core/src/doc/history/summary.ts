/**
 * Grist's ActionSummary: the net effect of a stretch of history, per table (rows added, removed and
 * updated, cells before and after, tables and columns added, removed and renamed), as `/compare`
 * answers it with `detail=1`. One bundle is summarised from its stored actions (new values) and its
 * undo actions (old values); summaries of consecutive bundles compose, keyed by the names tables and
 * columns have at the end (a removed one as `-name`). Bulk changes of a user table keep the cells of
 * at most `maxRows` rows (Grist's maximumInlineRows, 10 by default: the first `maxRows - 1` and the
 * last), marked `mayBeIncomplete`; metadata tables keep every cell.
 */
import type {CellValue} from '../types.js';
import type {DocActionTuple} from './format.js';

/** One side of a cell's change: `null` when the cell did not exist, `'?'` when its value was not kept, else `[value]`. */
export type CellSide = null | '?' | [CellValue];
/** A cell before and after. */
export type CellDelta = [CellSide, CellSide];
/** A name before and after: `[null, name]` an addition, `[name, null]` a removal. */
export type LabelDelta = [string | null, string | null];

/** Changes within one table. */
export interface TableDelta {
  updateRows: number[];
  removeRows: number[];
  addRows: number[];
  columnDeltas: Record<string, Record<number, CellDelta>>;
  columnRenames: LabelDelta[];
  /** Set when a bulk change left some cells out (see the module comment). */
  mayBeIncomplete?: true;
}

/** Changes of a stretch of history. */
export interface ActionSummary {
  tableRenames: LabelDelta[];
  tableDeltas: Record<string, TableDelta>;
}

/** Grist's default number of rows of one bulk change whose cells are kept. */
export const DEFAULT_INLINE_ROWS = 10;

/** A summary of no change. */
export function emptySummary(): ActionSummary {
  return {tableRenames: [], tableDeltas: {}};
}

function emptyTable(): TableDelta {
  return {updateRows: [], removeRows: [], addRows: [], columnDeltas: {}, columnRenames: []};
}

const removedName = (name: string) => `-${name}`;

/** Builds one bundle's summary (stored actions forward, undo actions backward). */
class BundleSummary {
  readonly summary = emptySummary();
  constructor(private readonly maxRows: number) {}

  private table(tableId: string): TableDelta {
    let t = this.summary.tableDeltas[tableId];
    if (!t) {
      t = emptyTable();
      this.summary.tableDeltas[tableId] = t;
    }
    return t;
  }

  private cell(t: TableDelta, rowId: number, colId: string): CellDelta {
    const col = (t.columnDeltas[colId] ??= {});
    let c = col[rowId];
    if (!c) {
      c = [null, null];
      col[rowId] = c;
    }
    return c;
  }

  private rename(list: LabelDelta[], pair: LabelDelta): void {
    if (!list.some((p) => p[0] === pair[0] && p[1] === pair[1])) list.push(pair);
  }

  private oneRow(t: TableDelta, rowId: number, values: Record<string, CellValue>, side: 0 | 1): void {
    for (const [colId, v] of Object.entries(values)) this.cell(t, rowId, colId)[side] = [v];
  }

  private bulk(tableId: string, t: TableDelta, rowIds: number[], cols: Record<string, CellValue[]>, side: 0 | 1): void {
    let kept: number[] = rowIds.map((_, i) => i);
    if (rowIds.length > this.maxRows && !tableId.startsWith('_grist_')) {
      // Examples: the first rows and the last one.
      kept = [...kept.slice(0, Math.max(0, this.maxRows - 1)), rowIds.length - 1];
      t.mayBeIncomplete = true;
    }
    for (const [colId, values] of Object.entries(cols)) {
      for (const i of kept) this.cell(t, rowIds[i], colId)[side] = [values[i]];
    }
  }

  /** A bulk action's rows (updates as updated, others as `rows`) and cells, on `side`. */
  private bulkAction(a: DocActionTuple, rows: 'addRows' | 'removeRows', side: 0 | 1): void {
    const tableId = a[1] as string;
    const t = this.table(tableId);
    const ids = a[2] as number[];
    const list = a[0] === 'BulkUpdateRecord' ? t.updateRows : t[rows];
    for (const id of ids) list.push(id);
    this.bulk(tableId, t, ids, a[3] as Record<string, CellValue[]>, side);
  }

  forward(a: DocActionTuple): void {
    const [name, tableId] = a as [string, string, ...unknown[]];
    switch (name) {
      case 'AddTable': {
        this.summary.tableRenames.push([null, tableId]);
        const t = this.table(tableId);
        for (const c of a[2] as Array<{id: string}>) t.columnRenames.push([null, c.id]);
        break;
      }
      case 'RenameTable':
        this.rename(this.summary.tableRenames, [tableId, a[2] as string]);
        break;
      case 'RenameColumn':
        this.rename(this.table(tableId).columnRenames, [a[2] as string, a[3] as string]);
        break;
      case 'AddColumn':
        this.table(tableId).columnRenames.push([null, a[2] as string]);
        break;
      case 'RemoveColumn':
        this.table(tableId).columnRenames.push([a[2] as string, null]);
        break;
      case 'AddRecord':
      case 'UpdateRecord': {
        const t = this.table(tableId);
        (name === 'AddRecord' ? t.addRows : t.updateRows).push(a[2] as number);
        this.oneRow(t, a[2] as number, a[3] as Record<string, CellValue>, 1);
        break;
      }
      case 'BulkAddRecord':
      case 'ReplaceTableData':
      case 'BulkUpdateRecord':
        this.bulkAction(a, 'addRows', 1);
        break;
    }
  }

  /** An undo action: what it restores is what the bundle removed or overwrote. */
  backward(a: DocActionTuple): void {
    const [name, tableId] = a as [string, string, ...unknown[]];
    switch (name) {
      case 'AddTable': {
        this.summary.tableRenames.push([tableId, null]);
        const t = this.table(tableId);
        for (const c of a[2] as Array<{id: string}>) t.columnRenames.push([c.id, null]);
        break;
      }
      case 'AddRecord': {
        const t = this.table(tableId);
        t.removeRows.push(a[2] as number);
        this.oneRow(t, a[2] as number, a[3] as Record<string, CellValue>, 0);
        break;
      }
      case 'UpdateRecord':
        this.oneRow(this.table(tableId), a[2] as number, a[3] as Record<string, CellValue>, 0);
        break;
      case 'BulkAddRecord':
      case 'ReplaceTableData':
      case 'BulkUpdateRecord':
        this.bulkAction(a, 'removeRows', 0);
        break;
      case 'RenameTable':
        this.rename(this.summary.tableRenames, [a[2] as string, tableId]);
        break;
      case 'RenameColumn':
        this.rename(this.table(tableId).columnRenames, [a[3] as string, a[2] as string]);
        break;
    }
  }

  /** Keys tables and columns by their final names, and drops repeated row ids. */
  finish(): ActionSummary {
    rekey(this.summary.tableDeltas, this.summary.tableRenames);
    for (const t of Object.values(this.summary.tableDeltas)) {
      rekey(t.columnDeltas, t.columnRenames);
      t.addRows = [...new Set(t.addRows)];
      t.updateRows = [...new Set(t.updateRows)];
      t.removeRows = [...new Set(t.removeRows)];
    }
    return this.summary;
  }
}

function rekey<T>(entries: Record<string, T>, renames: LabelDelta[]): void {
  for (const [before, after] of renames) {
    if (before === null) continue;
    const to = after ?? removedName(before);
    if (entries[before]) {
      entries[to] = entries[before];
      delete entries[before];
    }
  }
}

/** The summary of one bundle's stored and undo actions (`maxRows` null: every cell kept). */
export function summarizeBundle(
  stored: DocActionTuple[],
  undo: DocActionTuple[],
  maxRows: number | null = DEFAULT_INLINE_ROWS,
): ActionSummary {
  const s = new BundleSummary(maxRows ?? Number.POSITIVE_INFINITY);
  for (const a of stored) s.forward(a);
  for (let i = undo.length - 1; i >= 0; i--) s.backward(undo[i]);
  return s.finish();
}

/** How names of two consecutive summaries line up (tables, or the columns of one table). */
interface NamePlan {
  /** Names whose entries go: in the first part, in the second. */
  drop1: Set<string>;
  drop2: Set<string>;
  /** Entries of the first part to move to their final name. */
  move1: Map<string, string>;
  /** The composed renames, sorted. */
  renames: LabelDelta[];
}

function planNames(first: LabelDelta[], second: LabelDelta[]): NamePlan {
  const plan: NamePlan = {drop1: new Set(), drop2: new Set(), move1: new Map(), renames: []};
  const secondFrom = new Map<string, LabelDelta>();
  for (const p of second) if (p[0] !== null) secondFrom.set(p[0], p);
  const firstTo = new Set<string>();
  for (const [before, after] of first) {
    if (after === null) {
      // Removed in the first part.
      plan.drop1.add(before!);
      plan.renames.push([before, null]);
      continue;
    }
    firstTo.add(after);
    const next = secondFrom.get(after);
    if (!next) {
      plan.renames.push([before, after]);
    } else if (next[1] === null) {
      // Removed in the second part: an old name shows as removed, a new one vanishes.
      plan.drop2.add(after);
      if (before !== null) {
        plan.drop1.add(before);
        plan.renames.push([before, null]);
      } else {
        plan.drop1.add(after);
        plan.drop2.add(removedName(after));
      }
    } else {
      plan.move1.set(after, next[1]);
      plan.renames.push([before, next[1]]);
    }
  }
  for (const [before, after] of second) {
    if (before !== null && firstTo.has(before)) continue;
    plan.renames.push([before, after]);
    if (before !== null && after !== null) plan.move1.set(before, after);
  }
  plan.renames.sort((a, b) => compareNames(a[0] ?? '', b[0] ?? '') || compareNames(a[1] ?? '', b[1] ?? ''));
  return plan;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A copy of `entries` without the dropped names and with moved ones under their new names (swaps allowed). */
function applyNames<T>(entries: Record<string, T>, drop: Set<string>, move: Map<string, string>): Record<string, T> {
  if (!drop.size && !move.size) return entries;
  const out = {...entries};
  for (const k of drop) delete out[k];
  const moving = new Map<string, T>();
  for (const k of move.keys()) {
    if (out[k]) {
      moving.set(k, out[k]);
      delete out[k];
    }
  }
  for (const [k, to] of move) {
    const v = moving.get(k);
    if (v) out[to] = v;
  }
  return out;
}

interface RowState {
  added: boolean;
  removed: boolean;
  updated: boolean;
}

function rowStates(t: TableDelta): Map<number, RowState> {
  const out = new Map<number, RowState>();
  const get = (id: number) => {
    let s = out.get(id);
    if (!s) {
      s = {added: false, removed: false, updated: false};
      out.set(id, s);
    }
    return s;
  };
  for (const id of t.addRows) get(id).added = true;
  for (const id of t.removeRows) get(id).removed = true;
  for (const id of t.updateRows) get(id).updated = true;
  return out;
}

/** The cell a row's change implies when its values were not kept. */
function unknownCell(s: RowState | undefined): CellDelta | undefined {
  if (!s) return undefined;
  return [s.removed || s.updated ? '?' : null, s.added || s.updated ? '?' : null];
}

function composeColumn(
  rows1: Map<number, RowState>,
  rows2: Map<number, RowState>,
  partial1: boolean,
  partial2: boolean,
  c1: Record<number, CellDelta>,
  c2In: Record<number, CellDelta>,
): Record<number, CellDelta> {
  const c2 = {...c2In};
  for (const [id, s1] of rows1) {
    const known1 = c1[id];
    const known2 = c2[id];
    if (!known1 && !known2) continue;
    if (s1.added && rows2.get(id)?.removed) {
      delete c2[id];
      continue;
    }
    const v1 = known1 ?? unknownCell(s1)!;
    const v2 = known2 ?? unknownCell(rows2.get(id));
    if (!v2) {
      c2[id] = known1!;
      continue;
    }
    if (!v1[1]) {
      // Removed in the first part, added again in the second (a reused row id): both sides kept.
      if (s1.removed && v2[1]) c2[id] = [v1[0], v2[1]];
      continue;
    }
    // An untouched side of a complete summary lends its value in place of an unknown one.
    const before = !known1 && !partial1 && v1[0] === '?' ? v2[0] : v1[0];
    const after = !known2 && !partial2 && v2[1] === '?' ? v1[1] : v2[1];
    c2[id] = [before, after];
  }
  return c2;
}

const sortedUnique = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);

function composeTable(t1: TableDelta, t2: TableDelta): TableDelta {
  const names = planNames(t1.columnRenames, t2.columnRenames);
  const cols1 = applyNames(t1.columnDeltas, names.drop1, names.move1);
  const cols2 = applyNames(t2.columnDeltas, names.drop2, new Map());
  const rows1 = rowStates(t1);
  const rows2 = rowStates(t2);
  const columnDeltas = {...cols2};
  for (const [colId, c1] of Object.entries(cols1)) {
    const c2 = cols2[colId];
    columnDeltas[colId] = c2
      ? composeColumn(rows1, rows2, Boolean(t1.mayBeIncomplete), Boolean(t2.mayBeIncomplete), c1, c2)
      : c1;
  }
  const added1 = new Set(t1.addRows);
  const removed2 = new Set(t2.removeRows);
  // Rows added then removed leave no trace.
  const transient = t1.addRows.filter((id) => removed2.has(id));
  if (transient.length) {
    for (const [colId, col] of Object.entries(columnDeltas)) {
      if (transient.some((id) => id in col)) {
        const copy = {...col};
        for (const id of transient) delete copy[id];
        columnDeltas[colId] = copy;
      }
    }
  }
  const out: TableDelta = {
    updateRows: sortedUnique([
      ...t1.updateRows.filter((id) => !removed2.has(id)),
      ...t2.updateRows.filter((id) => !added1.has(id)),
    ]),
    removeRows: sortedUnique([...t2.removeRows.filter((id) => !added1.has(id)), ...t1.removeRows]),
    addRows: sortedUnique([...t2.addRows, ...t1.addRows.filter((id) => !removed2.has(id))]),
    columnDeltas,
    columnRenames: names.renames,
  };
  if (t1.mayBeIncomplete || t2.mayBeIncomplete) out.mayBeIncomplete = true;
  return out;
}

/** The summary of two consecutive stretches of history, the first before the second. */
export function composeSummaries(s1: ActionSummary, s2: ActionSummary): ActionSummary {
  const names = planNames(s1.tableRenames, s2.tableRenames);
  const t1 = applyNames(s1.tableDeltas, names.drop1, names.move1);
  const tableDeltas = applyNames(s2.tableDeltas, names.drop2, new Map());
  for (const [tableId, d1] of Object.entries(t1)) {
    const d2 = tableDeltas[tableId];
    tableDeltas[tableId] = d2 ? composeTable(d1, d2) : d1;
  }
  return {tableRenames: names.renames, tableDeltas};
}
