/**
 * A feed event as one subscriber may see it: the document's access rules (`DocGuard`) decide,
 * as they decide reads. Hidden tables and columns are left out, rows the subscriber may not read
 * are never delivered, and cells read as `["C"]` where rules censor them. A row that an update
 * makes readable arrives as added (whole), one it hides as removed; a removed row is announced
 * only to those who could read it.
 */
import type {DocGuard, RowValues, TableReadFilter} from '../doc/guard.js';
import type {CellValue} from '../doc/types.js';
import type {ChangedRow, DocChange, TableChanges} from './types.js';

/** A committed write as the feed keeps it: the unfiltered event and, under rules, whole rows. */
export interface StoredChange {
  seq: number;
  change: DocChange;
  /** Its JSON (what an owner's SSE stream sends), made once. */
  json: string;
  /** Under access rules: per table, updated rows whole as the write left them. */
  after: Map<string, Map<number, RowValues>> | null;
  /** Under access rules: per table, updated and removed rows as they were before the write. */
  before: Map<string, Map<number, RowValues>> | null;
}

/** Columns `GET /records` leaves out unless `hidden` is asked for. */
export function isHiddenColumn(colId: string): boolean {
  return colId === 'manualSort' || colId.startsWith('gristHelper_');
}

/** The cells of a row that a feed sends (whole rows from storage carry hidden columns). */
export function publicFields(row: RowValues): Record<string, CellValue> {
  const out: Record<string, CellValue> = {};
  for (const [k, v] of Object.entries(row)) if (k !== 'id' && !isHiddenColumn(k)) out[k] = v;
  return out;
}

const CENSORED: CellValue = ['C'];

/** The event for a subscriber under `guard` (null: no rules, everything); null when nothing is left. */
export function filterChange(stored: StoredChange, guard: DocGuard | null): DocChange | null {
  const change = stored.change;
  if (!guard || guard.canReadEverything()) return change;
  const tables: TableChanges[] = [];
  for (const t of change.tables) {
    let filter: TableReadFilter;
    try {
      filter = guard.readTable(t.tableId);
    } catch {
      continue; // A table the subscriber may not read at all.
    }
    const out = filter.row
      ? rowsFor(t, filter, stored.after?.get(t.tableId), stored.before?.get(t.tableId))
      : withoutColumns(t, filter.hiddenCols);
    if (out.added.length || out.updated.length || out.removed.length || out.truncated) tables.push(out);
  }
  if (!tables.length && !change.schemaChanged) return null;
  return {...change, tables};
}

function visible(cols: ReadonlySet<string>, fields: Record<string, CellValue>, censored?: ReadonlySet<string>) {
  const out: Record<string, CellValue> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (!cols.has(k)) out[k] = censored?.has(k) ? CENSORED : v;
  }
  return out;
}

function withoutColumns(t: TableChanges, hidden: ReadonlySet<string>): TableChanges {
  if (!hidden.size) return t;
  const strip = (rows: ChangedRow[]) =>
    rows.map((r) =>
      r.previous
        ? {id: r.id, fields: visible(hidden, r.fields), previous: visible(hidden, r.previous)}
        : {id: r.id, fields: visible(hidden, r.fields)},
    );
  return {
    ...t,
    added: strip(t.added),
    updated: strip(t.updated),
    columns: t.columns ? t.columns.filter((c) => !hidden.has(c)) : null,
  };
}

function rowsFor(
  t: TableChanges,
  filter: TableReadFilter,
  after: Map<number, RowValues> | undefined,
  before: Map<number, RowValues> | undefined,
): TableChanges {
  const hidden = filter.hiddenCols;
  const columns = t.columns ? t.columns.filter((c) => !hidden.has(c)) : null;
  // Too many rows to carry values: nothing row by row can be checked, and counts would tell how
  // many rows the subscriber cannot read, so only that the table changed goes.
  if (t.truncated) return {...t, columns, truncated: {added: null, updated: null, removed: null}};
  const rowRule = filter.row!;
  const readable = (row: RowValues | undefined, id: number) => (row ? rowRule({...row, id}) : null);
  const added: ChangedRow[] = [];
  const updated: ChangedRow[] = [];
  const removed: number[] = [];
  for (const r of t.added) {
    const censored = readable(r.fields, r.id);
    if (censored) added.push({id: r.id, fields: visible(hidden, r.fields, censored)});
  }
  for (const r of t.updated) {
    const whole = after?.get(r.id);
    const now = readable(whole, r.id);
    const then = readable(before?.get(r.id), r.id);
    if (!now) {
      if (then) removed.push(r.id);
    } else if (!then) {
      added.push({id: r.id, fields: visible(hidden, publicFields(whole!), now)});
    } else {
      // Readable before and after: the old values are censored as the old row was (D106).
      const row: ChangedRow = {id: r.id, fields: visible(hidden, r.fields, now)};
      if (r.previous) row.previous = visible(hidden, r.previous, then);
      updated.push(row);
    }
  }
  for (const id of t.removed) if (readable(before?.get(id), id)) removed.push(id);
  return {tableId: t.tableId, added, updated, removed, columns};
}
