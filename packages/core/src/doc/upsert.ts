/**
 * Add-or-update (`PUT /records`, `BulkAddOrUpdateRecord`) as Grist's data engine does it: find each
 * record by its `require` values (one SQL query per group of keys, with Python equality), update the
 * matches, add the rest (with their `require` values), all inside the caller's write.
 */
import type Database from 'better-sqlite3';
import {BadRequest, engineError} from '../base/index.js';
import {findMatches} from './lookup.js';
import type {CellValue} from './types.js';
import type {TableMeta} from './meta.js';
import type {DocStorage, WriteOptions} from './storage.js';
import type {UpsertOptions, UpsertRecord} from './api-types.js';

/** What add-or-update needs of the document (GristDoc's own, bound to it). */
export interface UpsertTarget {
  readonly storage: DocStorage;
  readonly db: Database.Database;
  /** A table by id (404 when there is none). */
  table(tableId: string): TableMeta;
  /** The write options with their defaults. */
  opts(o: Partial<WriteOptions> | undefined): WriteOptions;
}

/** One BulkAddOrUpdateRecord: which record each input found or added, the ids added and updated. */
export function bulkAddOrUpdate(
  doc: UpsertTarget,
  tableId: string,
  records: UpsertRecord[],
  options: UpsertOptions,
): {recordIds: Array<number[] | undefined>; added: number[]; updated: number[][]} {
  const opts = doc.opts(options);
  let table = doc.table(tableId);
  if (table.isMeta) {
    throw new BadRequest(`Add-or-update is not supported on metadata table ${tableId}`);
  }
  const requireCols = Object.keys(records[0].require);
  const fieldCols = Object.keys(records[0].fields ?? {});
  if (!requireCols.length && !options.allowEmptyRequire) {
    throw engineError('ValueError', "require is empty but allow_empty_require isn't set");
  }
  for (const c of [...requireCols, ...fieldCols]) {
    if (c !== 'id') {
      doc.storage.getColumn(table, c);
    }
  }
  const recordIds: Array<number[] | undefined> = new Array(records.length);
  if (!requireCols.length && !fieldCols.length) {
    return {recordIds, added: [], updated: []};
  }

  // Require values are parsed and converted like written values, then matched with equality.
  const requireValues = new Map<string, CellValue[]>();
  for (const c of requireCols) {
    const values = records.map((r) => r.require[c]);
    requireValues.set(c, c === 'id' ? values : doc.storage.convertColumnValues(table.byId.get(c)!, values, opts));
  }
  const seen = new Set<string>();
  for (let i = 0; i < records.length; i++) {
    const key = JSON.stringify(requireCols.map((c) => requireValues.get(c)![i]));
    if (seen.has(key)) {
      throw engineError('ValueError', 'require values must be unique');
    }
    seen.add(key);
  }
  const onmany = options.onmany ?? 'first';
  const addIdx: number[] = [];
  const addIds: Array<number | null> = [];
  const updates: Array<{index: number; rows: number[]}> = [];
  // One pass over the table finds the matches of every record (ascending ids, so the first is
  // the lowest), against the table as it was before this group.
  // Keyed on one column at the start of a write: the column's kept index (keyindex.ts).
  const kept =
    requireCols.length === 1 && requireCols[0] !== 'id' && !doc.storage.changes?.touched(tableId)
      ? doc.storage.keyIndexes.column(table, requireCols[0])
      : null;
  const allMatches = findMatches(
    doc.db,
    table,
    requireCols,
    records.map((_, i) => requireCols.map((c) => requireValues.get(c)![i])),
    kept,
  );
  for (let i = 0; i < records.length; i++) {
    const matches = allMatches[i];
    if (matches.length) {
      if (options.noupdate || (onmany === 'none' && matches.length > 1)) {
        recordIds[i] = [];
        continue;
      }
      const rows = onmany === 'all' ? matches : matches.slice(0, 1);
      updates.push({index: i, rows});
      recordIds[i] = rows;
    } else if (options.noadd) {
      recordIds[i] = [];
    } else {
      addIdx.push(i);
      const id = requireValues.get('id')?.[i];
      addIds.push(typeof id === 'number' ? id : null);
    }
  }
  const updated: number[][] = [];
  if (fieldCols.length && updates.length) {
    const rowIds = updates.flatMap((u) => u.rows);
    const colValues = new Map(
      fieldCols.map((c) => [c, updates.flatMap((u) => u.rows.map(() => records[u.index].fields![c]))]),
    );
    doc.storage.updateRecords(table, rowIds, colValues, opts);
    table = doc.table(tableId);
  }
  for (const u of updates) {
    updated.push(u.rows);
  }
  let added: number[] = [];
  if (addIdx.length) {
    // New rows take the require values (except formula columns, used only to match), then fields.
    const colValues = new Map<string, CellValue[]>();
    for (const c of requireCols) {
      const col = table.byId.get(c);
      if (c === 'id' || fieldCols.includes(c) || (col?.isFormula && col.formula)) {
        continue;
      }
      colValues.set(
        c,
        addIdx.map((i) => records[i].require[c]),
      );
    }
    for (const c of fieldCols) {
      colValues.set(
        c,
        addIdx.map((i) => records[i].fields![c]),
      );
    }
    added = doc.storage.addRecords(table, addIds, colValues, opts);
    addIdx.forEach((i, j) => {
      recordIds[i] = [added[j]];
    });
  }
  return {recordIds, added, updated};
}
