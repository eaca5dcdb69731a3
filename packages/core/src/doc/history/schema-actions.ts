/**
 * The schema part of a recorded write (D120): doc actions read from the metadata rows the write
 * changed, with their inverses as Grist's docactions.py appends them (removed tables and columns
 * restored with their cells, D124).
 */
import type Database from 'better-sqlite3';
import type {TableChange} from '../changes.js';
import type {DocMeta} from '../meta.js';
import type {CellValue} from '../types.js';
import type {DocActionTuple} from './format.js';
import {readRows, sameCell} from './rows.js';

/** Cells of a removed table or column, as they were (by row id, per column). */
export interface Dropped {
  ids: number[];
  cells: Record<string, CellValue[]>;
}

/** What the schema actions read of the recorder. */
export interface SchemaSource {
  meta: DocMeta;
  /** Metadata rows as they were before the write first touched them, by table id. */
  before(
    tableId: string,
  ):
    | {get(id: number): Record<string, CellValue> | undefined; values(): Iterable<Record<string, CellValue>>}
    | undefined;
  /** Cells of removed tables (by tableRef) and columns (`tableRef:colId`); null: too many to keep. */
  dropped: ReadonlyMap<string, Dropped | null>;
  stmt(sql: string): Database.Statement;
}

/**
 * Schema doc actions read from the metadata rows the write changed: tables added, removed and
 * renamed, columns added, removed, renamed and modified (type, formula, isFormula).
 */
export function schemaActions(
  src: SchemaSource,
  byTable: Map<string, TableChange>,
  push: (a: DocActionTuple, ...inverses: Array<DocActionTuple | null>) => void,
): void {
  const tables = byTable.get('_grist_Tables');
  const columns = byTable.get('_grist_Tables_column');
  if (!tables && !columns) return;
  const oldTables = src.before('_grist_Tables');
  const oldCols = src.before('_grist_Tables_column');
  const tableIdOfRef = (ref: CellValue) => src.meta.byRef.get(ref as number)?.tableId;
  const oldTableIdOfRef = (ref: CellValue) => (oldTables?.get(ref as number)?.tableId as string) ?? tableIdOfRef(ref);
  const colInfo = (c: Record<string, CellValue>) => ({
    type: c.type,
    isFormula: c.isFormula,
    formula: c.formula,
  });
  const addedTables = new Set(tables?.added ?? []);
  const newCols =
    columns && (columns.added.length || columns.updated.length)
      ? new Map(
          readRows(src.stmt, src.meta.tables.get('_grist_Tables_column')!, [...columns.added, ...columns.updated]).map(
            (r) => [r.id as number, r],
          ),
        )
      : new Map<number, Record<string, CellValue>>();
  for (const ref of tables?.removed ?? []) {
    const old = oldTables?.get(ref);
    if (!old) continue;
    const tableId = String(old.tableId);
    const cols = [...(oldCols?.values() ?? [])].filter((c) => c.parentId === ref);
    push(['RemoveTable', tableId], simplified('BulkAddRecord', tableId, src.dropped.get(String(ref))), [
      'AddTable',
      tableId,
      cols.map((c) => ({id: c.colId, ...colInfo(c)})),
    ]);
  }
  for (const ref of tables?.added ?? []) {
    const tableId = tableIdOfRef(ref);
    if (!tableId) continue;
    const cols = [...newCols.values()].filter((c) => c.parentId === ref);
    push(['AddTable', tableId, cols.map((c) => ({id: c.colId, ...colInfo(c)}))], ['RemoveTable', tableId]);
  }
  for (const ref of tables?.updated ?? []) {
    const before = oldTables?.get(ref)?.tableId;
    const after = tableIdOfRef(ref);
    if (typeof before === 'string' && after && before !== after) {
      push(['RenameTable', before, after], ['RenameTable', after, before]);
    }
  }
  const removedTables = new Set(tables?.removed ?? []);
  for (const ref of columns?.removed ?? []) {
    const old = oldCols?.get(ref);
    if (!old || removedTables.has(old.parentId as number)) continue;
    const tableId = oldTableIdOfRef(old.parentId);
    if (!tableId) continue;
    push(
      ['RemoveColumn', tableId, String(old.colId)],
      simplified('BulkUpdateRecord', tableId, src.dropped.get(`${old.parentId}:${old.colId}`)),
      ['AddColumn', tableId, String(old.colId), colInfo(old)],
    );
  }
  for (const ref of columns?.added ?? []) {
    const c = newCols.get(ref);
    if (!c || addedTables.has(c.parentId as number)) continue;
    const tableId = tableIdOfRef(c.parentId);
    if (!tableId) continue;
    push(['AddColumn', tableId, String(c.colId), colInfo(c)], ['RemoveColumn', tableId, String(c.colId)]);
  }
  for (const ref of columns?.updated ?? []) {
    const old = oldCols?.get(ref);
    const c = newCols.get(ref);
    if (!old || !c) continue;
    const tableId = tableIdOfRef(c.parentId);
    if (!tableId) continue;
    if (old.colId !== c.colId) {
      push(
        ['RenameColumn', tableId, String(old.colId), String(c.colId)],
        ['RenameColumn', tableId, String(c.colId), String(old.colId)],
      );
    }
    const fields = (['type', 'isFormula', 'formula'] as const).filter((f) => !sameCell(old[f], c[f]));
    if (fields.length) {
      push(
        ['ModifyColumn', tableId, String(c.colId), Object.fromEntries(fields.map((f) => [f, c[f]]))],
        ['ModifyColumn', tableId, String(c.colId), Object.fromEntries(fields.map((f) => [f, old[f]]))],
      );
    }
  }
}

/** A bulk action of kept cells (null when there are none). */
function simplified(
  kind: 'BulkAddRecord' | 'BulkUpdateRecord',
  tableId: string,
  data: Dropped | null | undefined,
): DocActionTuple | null {
  return data?.ids.length ? [kind, tableId, data.ids, data.cells] : null;
}

const SINGLE: Record<string, string> = {
  BulkAddRecord: 'AddRecord',
  BulkRemoveRecord: 'RemoveRecord',
  BulkUpdateRecord: 'UpdateRecord',
};

/**
 * An undo action as Grist's `simplify()` leaves it (actions.py): a bulk action of one row in its
 * single form, of no rows nothing; other actions as they are.
 */
export function simplify(a: DocActionTuple): DocActionTuple | null {
  const single = SINGLE[a[0] as string];
  if (!single) return a;
  const ids = a[2] as number[];
  if (ids.length !== 1) return ids.length ? a : null;
  if (single === 'RemoveRecord') return [single, a[1], ids[0]];
  const cells = a[3] as Record<string, CellValue[]>;
  return [single, a[1], ids[0], Object.fromEntries(Object.entries(cells).map(([c, v]) => [c, v[0]]))];
}
