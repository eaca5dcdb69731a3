/**
 * Summary tables kept current: after a write changed a summary's source table, the summary gains a
 * row for each new group, loses the rows of groups left empty, and its `group` cells list the
 * source rows of each group (what Grist's summary actions and `getSummarySourceGroup` maintain).
 * Formula columns of the summary (`count`, `SUM($group.X)`) then recompute like any other.
 */
import type {ChangeSet, DocEngine} from './engine.js';
import type {ColumnMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {CellValue} from './types.js';

export function syncSummaries(doc: DocEngine, changes: ChangeSet): void {
  const meta = doc.meta;
  for (const summary of meta.userTables) {
    const srcRef = Number(summary.fields.summarySourceTable);
    const source = srcRef ? meta.byRef.get(srcRef) : undefined;
    const groupCol = summary.byId.get('group');
    if (!source || !groupCol || !changes.touched(source.tableId)) { continue; }
    const groupBy: Array<{col: ColumnMeta, src: ColumnMeta}> = [];
    for (const col of summary.columns) {
      const ref = Number(col.fields.summarySourceCol);
      if (!ref) { continue; }
      const src = meta.colsByRef.get(ref);
      if (src && src.table === source) { groupBy.push({col, src: src.col}); }
    }
    if (groupBy.some((g) => !g)) { continue; }

    // The source's groups, by the JSON of their group-by values, with their rows (ascending ids).
    const srcRows = doc.db.prepare(`SELECT id${groupBy.map((g) => ', ' + quoteIdent(g.src.colId)).join('')}
      FROM ${quoteIdent(source.tableId)} ORDER BY id`).raw(true).all() as unknown[][];
    const groups = new Map<string, {values: CellValue[], ids: number[]}>();
    for (const row of srcRows) {
      const values = groupBy.map((g, j) => g.src.decode(row[j + 1]));
      const key = JSON.stringify(values);
      let g = groups.get(key);
      if (!g) {
        g = {values, ids: []};
        groups.set(key, g);
      }
      g.ids.push(Number(row[0]));
    }
    const sumRows = doc.db.prepare(`SELECT id, ${quoteIdent('group')}${groupBy.map((g) => ', ' + quoteIdent(g.col.colId)).join('')}
      FROM ${quoteIdent(summary.tableId)} ORDER BY id`).raw(true).all() as unknown[][];
    const removed: number[] = [];
    const updIds: number[] = [];
    const updGroups: CellValue[] = [];
    const seen = new Set<string>();
    for (const row of sumRows) {
      const key = JSON.stringify(groupBy.map((g, j) => g.col.decode(row[j + 2])));
      const g = groups.get(key);
      if (!g || seen.has(key)) {
        removed.push(Number(row[0]));
        continue;
      }
      seen.add(key);
      const want: CellValue = ['L', ...g.ids];
      if (JSON.stringify(groupCol.decode(row[1])) !== JSON.stringify(want)) {
        updIds.push(Number(row[0]));
        updGroups.push(want);
      }
    }
    const added = [...groups].filter(([key]) => !seen.has(key)).map(([, g]) => g);
    if (!removed.length && !updIds.length && !added.length) { continue; }
    doc.internalWrite = true;
    try {
      const opts = {parse: false};
      if (removed.length) { doc.removeRecords(summary, removed); }
      if (updIds.length) { doc.updateRecords(doc.getTable(summary.tableId), updIds, new Map([['group', updGroups]]), opts); }
      if (added.length) {
        const cols = new Map<string, CellValue[]>(groupBy.map((g, j) => [g.col.colId, added.map((a) => a.values[j])]));
        cols.set('group', added.map((a) => ['L', ...a.ids]));
        doc.addRecords(doc.getTable(summary.tableId), added.map(() => null), cols, opts);
      }
    } finally {
      doc.internalWrite = false;
    }
  }
}
