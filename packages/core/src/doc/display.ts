/**
 * Display helper columns (`gristHelper_Display*`): the hidden `Any` formula columns that hold what
 * a Ref column (or a field showing it) displays, e.g. `$Customer.Name`. Grist's data engine makes
 * them only through the `SetDisplayFormula` user action (its client sends one after setting a
 * column's `visibleCol`; its REST API never adds one by itself), shares one between users with the
 * same formula, and removes a helper once no column or field uses it. The formula engine computes
 * them like any formula column, so they follow every change of the referenced rows.
 */
import {engineError} from '../base/index.js';
import type {DocStorage} from './storage.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import type {CellValue} from './types.js';

const DISPLAY_PREFIX = 'gristHelper_Display';

/** How many columns and fields use each column as their display column (Grist's numDisplayColUsers). */
function displayColUsers(doc: DocStorage): Map<number, number> {
  const users = new Map<number, number>();
  const count = (ref: CellValue) => {
    const r = Number(ref) || 0;
    if (r) {
      users.set(r, (users.get(r) ?? 0) + 1);
    }
  };
  for (const {col} of doc.meta.colsByRef.values()) {
    count(col.fields.displayCol);
  }
  for (const f of doc.metaRows('_grist_Views_section_field')) {
    count(f.displayCol);
  }
  return users;
}

/**
 * The helper column a display formula should use: the current one updated in place when nothing
 * else uses it, else an existing helper of the table with that formula, else a new one. Null when
 * the current helper was updated (the user's displayCol stays), 0 for an empty formula.
 */
function helperFor(doc: DocStorage, table: TableMeta, current: number, formula: string): number | null {
  if (!formula) {
    return 0;
  }
  const users = displayColUsers(doc);
  const existing = current ? doc.meta.colsByRef.get(current) : undefined;
  if (existing && users.get(current) === 1) {
    doc.updateColumns(existing.table, [{colId: existing.col.colId, values: {formula}}]);
    return null;
  }
  const shared = table.columns.find((c) => c.colId.startsWith(DISPLAY_PREFIX) && c.isFormula && c.formula === formula);
  if (shared) {
    return shared.colRef;
  }
  return doc.addColumn(table, DISPLAY_PREFIX, {type: 'Any', isFormula: true, formula}, {visible: false, fields: false})
    .colRef;
}

/**
 * `["SetDisplayFormula", tableId, fieldRef, colRef, formula]`: sets the display formula of a
 * section field (fieldRef) or of a column (colRef, a row id of `_grist_Tables_column` or a colId).
 */
export function setDisplayFormula(
  doc: DocStorage,
  tableId: string,
  fieldRef: CellValue,
  colRef: CellValue,
  formula: CellValue,
): void {
  if (fieldRef && colRef) {
    throw engineError('ValueError', 'SetDisplayFormula: set either a field or a column display formula, not both');
  }
  if (typeof formula !== 'string') {
    throw engineError('TypeError', 'SetDisplayFormula: the formula must be a string');
  }
  const table = doc.getTable(tableId);
  if (fieldRef) {
    const field = doc.metaRows('_grist_Views_section_field').find((f) => Number(f.id) === fieldRef);
    if (!field) {
      throw engineError('KeyError', `SetDisplayFormula: no field ${JSON.stringify(fieldRef)}`);
    }
    // Grist refuses to change fields of raw data widgets (useractions' BulkUpdateRecord check).
    if (doc.meta.userTables.some((t) => Number(t.fields.rawViewSectionRef) === Number(field.parentId))) {
      throw engineError('ValueError', 'Cannot modify raw view section fields');
    }
    const ref = helperFor(doc, table, Number(field.displayCol) || 0, formula);
    if (ref !== null) {
      doc.metaUpdate('_grist_Views_section_field', Number(fieldRef), {displayCol: ref});
    }
  }
  if (colRef) {
    const col = columnOf(doc, table, colRef);
    const ref = helperFor(doc, table, Number(col.fields.displayCol) || 0, formula);
    if (ref !== null) {
      doc.updateColumns(doc.getTable(tableId), [{colId: col.colId, values: {displayCol: ref}}]);
    }
  }
}

function columnOf(doc: DocStorage, table: TableMeta, colRef: CellValue): ColumnMeta {
  // A column by id or by row ref; anything else (a list, an object) names no column.
  const col =
    typeof colRef === 'string'
      ? table.byId.get(colRef)
      : typeof colRef === 'number'
        ? doc.meta.colsByRef.get(colRef)?.col
        : undefined;
  if (!col) {
    throw engineError('KeyError', `SetDisplayFormula: no column ${JSON.stringify(colRef)} in ${table.tableId}`);
  }
  return col;
}

/**
 * Removes display helpers no column or field uses any more (after a type change cleared a
 * displayCol, an empty display formula, a removed field): Grist's auto-removal at the end of a
 * user action. Returns whether any column was removed.
 */
export function removeUnusedDisplayCols(doc: DocStorage): boolean {
  const users = displayColUsers(doc);
  const unused: number[] = [];
  for (const table of doc.meta.userTables) {
    for (const c of table.columns) {
      if (c.colId.startsWith(DISPLAY_PREFIX) && !users.get(c.colRef)) {
        unused.push(c.colRef);
      }
    }
  }
  if (unused.length) {
    doc.removeColumns(unused);
  }
  return unused.length > 0;
}
