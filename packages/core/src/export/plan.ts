/**
 * What an export of one table shows (Grist's Export.ts `doExportTable`): its visible columns in
 * `parentPos` order, each with the text Grist shows for its cells (doc/cell-display.ts).
 */
import type Database from 'better-sqlite3';
import {NotFound} from '../base/index.js';
import {cellDisplay} from '../doc/cell-display.js';
import {type ColumnMeta, type DocMeta, loadMeta} from '../doc/meta.js';
import type {RowValues} from '../doc/guard.js';
import {quoteIdent} from '../doc/query.js';
import {andScope, type RowScope, type TableAccess} from '../doc/rowscope.js';

/** Whether an export names columns by label (Grist's default) or by column id. */
export type ExportHeader = 'label' | 'colId';

/** A column of a table export, with its formatter. */
export interface ExportColumn {
  colRef: number;
  colId: string;
  label: string;
  description: string;
  /** The column's Grist type. */
  type: string;
  /** Its parsed widgetOptions. */
  options: Record<string, unknown>;
  /** Formats the column's raw SQLite value as Grist displays it. */
  format(raw: unknown): string;
}

/** How to export a table: its visible columns in order and the SQL that reads them. */
export interface ExportPlan {
  tableId: string;
  tableRef: number;
  /** The name of the table's raw view (its page) if it has one, else the tableId. */
  title: string;
  columns: ExportColumn[];
  settings: DocMeta['settings'];
  /** The result columns of its rows (`"id", <columns>` in `columns` order; `exportRows` reads them). */
  select: string;
}

/**
 * What one user may export of a table under access rules: columns left out, and (when rules depend
 * on rows) which rows, decided on the rows the export itself reads from its snapshot (so that no
 * write between the check and the read can slip a row through): in SQL by the caller's `scope`,
 * and row by row by `row` (null drops the row, else the columns whose cells print `CENSORED`).
 */
export interface ExportRestriction {
  /** Columns left out. */
  hiddenCols: ReadonlySet<string>;
  /** The rows the user may read, in SQL where rules allow (absent: every row). */
  scope?: RowScope;
  /** The check of each row the scope leaves to JS: null drops it, else the columns censored in it. */
  row?: TableAccess['row'];
  /** Beyond Grist (issue 40): the rows a `where` condition names, resolved for the user (doc/where/). */
  where?: {sql: string; params: unknown[]};
}

/**
 * The rows of a table's export as `plan.select` reads them (`plan` before `restrictPlan`), each
 * with the columns to print censored, limited to what `r` lets the user read, from `db` (the
 * export's snapshot).
 */
export function* exportRows(
  db: Database.Database,
  plan: ExportPlan,
  r: ExportRestriction | undefined,
): Generator<[unknown[], ReadonlySet<string> | null]> {
  const t = quoteIdent(plan.tableId);
  const named = r?.where ?? {sql: '', params: []};
  const both = r?.scope ? andScope(r.scope, named) : named;
  const where = both.sql ? {sql: ` WHERE ${both.sql}`, params: both.params} : both;
  const check = r?.row ?? null;
  // Rules read any column of the row (hidden ones too): for a check row by row, every column is
  // read after the plan's own and decoded for it.
  const all = check ? loadMeta(db).tables.get(plan.tableId)!.columns : [];
  const n = plan.columns.length + 1;
  const extra = all.map((c) => `, ${t}.${quoteIdent(c.colId)}`).join('');
  const sql = `SELECT ${plan.select}${extra} FROM ${t}${where.sql} ORDER BY "id"`;
  for (const row of db.prepare(sql).raw(true).iterate(where.params) as IterableIterator<unknown[]>) {
    if (!check) {
      yield [row, null];
      continue;
    }
    const values: RowValues & {id: number} = {id: row[0] as number};
    for (let j = 0; j < all.length; j++) values[all[j].colId] = all[j].decode(row[n + j]);
    const censored = check(values);
    if (censored) yield [row.slice(0, n), censored];
  }
}

/** A plan without the columns a restriction hides; the SQL still selects them (values are by index). */
export function restrictPlan(plan: ExportPlan, r: ExportRestriction | undefined): {plan: ExportPlan; keep: number[]} {
  const keep = plan.columns.map((_, i) => i).filter((i) => !r?.hiddenCols.has(plan.columns[i].colId));
  return {plan: {...plan, columns: keep.map((i) => plan.columns[i])}, keep};
}

/** How Grist exports a cell the user may not read. */
export const CENSORED = 'CENSORED';

function exportColumn(db: Database.Database, meta: DocMeta, col: ColumnMeta): ExportColumn {
  const show = cellDisplay(() => db, meta, col);
  const decode = col.decode;
  return {
    colRef: col.colRef,
    colId: col.colId,
    label: String(col.fields.label ?? ''),
    description: String(col.fields.description ?? ''),
    type: col.type,
    options: col.options,
    format: (raw) => show(decode(raw)),
  };
}

/**
 * Plans the export of a user table. Throws 404 `Table X not found.` (Grist's wording for
 * downloads) for an unknown table. `meta` may be passed when already loaded from `db`.
 */
export function planTableExport(db: Database.Database, tableId: string, meta: DocMeta = loadMeta(db)): ExportPlan {
  const table = meta.tables.get(tableId);
  if (!table || table.isMeta) throw new NotFound(`Table ${tableId} not found.`);
  const cols = table.columns
    .filter((c) => !c.hidden)
    .sort((a, b) => Number(a.fields.parentPos) - Number(b.fields.parentPos) || a.colRef - b.colRef);
  const columns = cols.map((c) => exportColumn(db, meta, c));
  let title = table.tableId;
  const viewId = Number(table.fields.primaryViewId) || 0;
  if (viewId && meta.tables.has('_grist_Views')) {
    const row = db.prepare('SELECT name FROM _grist_Views WHERE id = ?').get(viewId) as {name: unknown} | undefined;
    if (row && typeof row.name === 'string') title = row.name;
  }
  const select = ['"id"', ...cols.map((c) => quoteIdent(c.colId))].join(', ');
  return {
    tableId: table.tableId,
    tableRef: table.tableRef,
    title,
    columns,
    settings: meta.settings,
    select,
  };
}

/** The header of a column: its label (default) or its colId. */
export function columnHeader(col: ExportColumn, header: ExportHeader = 'label'): string {
  return header === 'colId' ? col.colId : col.label;
}
