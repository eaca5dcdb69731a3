/**
 * A feed event as one subscriber may see it: the document's access rules (`DocGuard`) decide,
 * as they decide reads. Hidden tables and columns are left out, rows the subscriber may not read
 * are never delivered, and cells read as `["C"]` where rules censor them. A row that an update
 * makes readable arrives as added (whole), one it hides as removed; a removed row is announced
 * only to those who could read it. A subscription to one table with a `where` condition
 * (conditions.ts) sees that table's rows the same way: a row entering the condition arrives as
 * added, one leaving it as removed.
 */
import type {CellValue, DocGuard, RowValues, TableReadFilter} from '../doc/index.js';
import type {ConditionMatches} from './conditions.js';
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
  /** Per condition (its key) on a table the write changed: the rows it held for (conditions.ts). */
  matched: Map<string, ConditionMatches> | null;
  /** Conditions that could not be evaluated at this write, with why. */
  failed: Map<string, string> | null;
}

/** What one subscription asked for: one table's changes, and with `key`, its condition's rows. */
export interface FeedSelection {
  tableId: string;
  /** The condition's key (`FeedCondition.key`), or null for the table's every row. */
  key: string | null;
}

/** Whether an event changed rows of a table that it carries (not only counted as truncated). */
export function carriesRows(change: DocChange, tableId: string): boolean {
  return change.tables.some(
    (t) =>
      t.tableId === tableId && !t.truncated && (t.added.length > 0 || t.updated.length > 0 || t.removed.length > 0),
  );
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
const NONE: ReadonlySet<string> = new Set();

/**
 * Whether a row is sent, as it was before the write or as the write left it: null when not,
 * else the cells censored in it. Row rules read the row's values; a condition, what it held for.
 */
type RowCheck = (id: number, when: keyof ConditionMatches, row: RowValues | undefined) => ReadonlySet<string> | null;

function rowCheck(rowRule: TableReadFilter['row'] | undefined, matches: ConditionMatches | undefined): RowCheck {
  return (id, when, row) => {
    if (matches && !matches[when].has(id)) return null;
    if (!rowRule) return NONE;
    return row ? rowRule({...row, id}) : null;
  };
}

/**
 * The event for a subscriber under `guard` (null: no rules, everything) and its `select`ion
 * (null: every table); null when nothing is left. A selection's condition must have been
 * evaluated for the event (`matched` holds its key) where the event carries its table's rows.
 */
export function filterChange(
  stored: StoredChange,
  guard: DocGuard | null,
  select: FeedSelection | null = null,
): DocChange | null {
  const change = stored.change;
  const ruled = guard !== null && !guard.canReadEverything();
  if (!ruled && !select) return change;
  const matches = select?.key ? stored.matched?.get(select.key) : undefined;
  const tables: TableChanges[] = [];
  for (const t of change.tables) {
    if (select && t.tableId !== select.tableId) continue;
    let filter: TableReadFilter | null = null;
    try {
      if (ruled) filter = guard.readTable(t.tableId);
    } catch {
      continue; // A table the subscriber may not read at all.
    }
    const hidden = filter?.hiddenCols ?? NONE;
    const out =
      filter?.row || matches
        ? rowsFor(
            t,
            hidden,
            rowCheck(filter?.row, matches),
            stored.after?.get(t.tableId),
            stored.before?.get(t.tableId),
          )
        : withoutColumns(t, hidden);
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
  hidden: ReadonlySet<string>,
  check: RowCheck,
  after: Map<number, RowValues> | undefined,
  before: Map<number, RowValues> | undefined,
): TableChanges {
  const columns = t.columns ? t.columns.filter((c) => !hidden.has(c)) : null;
  // Too many rows to carry values: nothing row by row can be checked, and counts would tell how
  // many rows the subscriber cannot read, so only that the table changed goes.
  if (t.truncated) return {...t, columns, truncated: {added: null, updated: null, removed: null}};
  const added: ChangedRow[] = [];
  const updated: ChangedRow[] = [];
  const removed: number[] = [];
  for (const r of t.added) {
    const censored = check(r.id, 'after', r.fields);
    if (censored) added.push({id: r.id, fields: visible(hidden, r.fields, censored)});
  }
  for (const r of t.updated) {
    const whole = after?.get(r.id);
    const now = check(r.id, 'after', whole);
    const then = check(r.id, 'before', before?.get(r.id));
    if (!now) {
      if (then) removed.push(r.id);
    } else if (!then) {
      added.push({id: r.id, fields: visible(hidden, whole ? publicFields(whole) : r.fields, now)});
    } else {
      // Readable before and after: the old values are censored as the old row was (D106).
      const row: ChangedRow = {id: r.id, fields: visible(hidden, r.fields, now)};
      if (r.previous) row.previous = visible(hidden, r.previous, then);
      updated.push(row);
    }
  }
  for (const id of t.removed) if (check(id, 'before', before?.get(id))) removed.push(id);
  return {tableId: t.tableId, added, updated, removed, columns};
}
