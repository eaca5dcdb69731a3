/**
 * Summary tables kept current: after a write changed a summary's source table, the summary gains a
 * row for each new group and loses the rows of groups left empty (what Grist's summary actions
 * do). The formula engine computes `group` (getSummarySourceGroup) and the summary's formulas.
 */
import type {ChangeSet, DocStorage} from './storage.js';
import type {ColumnMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {CellValue} from './types.js';

/**
 * Adds and removes summary rows for the summaries of tables this write changed; with
 * `formulaGroupBy`, only summaries grouped by a formula column (whose values a recalc may have
 * changed). Returns whether any summary row was added or removed.
 */
export function syncSummaries(doc: DocStorage, changes: ChangeSet, formulaGroupBy = false): boolean {
  const meta = doc.meta;
  let changed = false;
  for (const summary of meta.userTables) {
    const srcRef = Number(summary.fields.summarySourceTable);
    const source = srcRef ? meta.byRef.get(srcRef) : undefined;
    if (!source || !changes.touched(source.tableId)) {
      continue;
    }
    const groupBy: Array<{col: ColumnMeta; src: ColumnMeta}> = [];
    for (const col of summary.columns) {
      const ref = Number(col.fields.summarySourceCol);
      if (!ref) {
        continue;
      }
      const src = meta.colsByRef.get(ref);
      if (src && src.table === source) {
        groupBy.push({col, src: src.col});
      }
    }
    if (!groupBy.length || (formulaGroupBy && !groupBy.some((g) => g.src.isFormula))) {
      continue;
    }

    // The source's groups, by the JSON of their group-by values: a ChoiceList/RefList source
    // column puts a row in one group per item (an empty list under ''/0), as Grist's summaries do.
    const srcRows = doc.db
      .prepare(`SELECT ${groupBy.map((g) => quoteIdent(g.src.colId)).join(', ')}
      FROM ${quoteIdent(source.tableId)}`)
      .raw(true)
      .all() as unknown[][];
    const groups = new Map<string, CellValue[]>();
    for (const row of srcRows) {
      let combos: CellValue[][] = [[]];
      groupBy.forEach((g, j) => {
        const v = g.src.decode(row[j]);
        const items = g.src.type === 'ChoiceList' || g.src.type.startsWith('RefList:') ? listItems(v, g.src.type) : [v];
        combos = combos.flatMap((c) => items.map((item) => [...c, item]));
      });
      for (const values of combos) {
        groups.set(JSON.stringify(values), values);
      }
    }
    const sumRows = doc.db
      .prepare(`SELECT id${groupBy.map((g) => ', ' + quoteIdent(g.col.colId)).join('')}
      FROM ${quoteIdent(summary.tableId)} ORDER BY id`)
      .raw(true)
      .all() as unknown[][];
    const removed: number[] = [];
    const seen = new Set<string>();
    for (const row of sumRows) {
      const key = JSON.stringify(groupBy.map((g, j) => g.col.decode(row[j + 1])));
      if (!groups.has(key) || seen.has(key)) {
        removed.push(Number(row[0]));
      } else {
        seen.add(key);
      }
    }
    const added = [...groups].filter(([key]) => !seen.has(key)).map(([, values]) => values);
    changed ||= removed.length > 0 || added.length > 0;
    if (removed.length) {
      doc.removeRecords(summary, removed);
    }
    if (added.length) {
      const cols = new Map<string, CellValue[]>(groupBy.map((g, j) => [g.col.colId, added.map((a) => a[j])]));
      doc.addRecords(
        doc.getTable(summary.tableId),
        added.map(() => null),
        cols,
        {parse: false},
      );
    }
  }
  return changed;
}

/** The items a list cell puts in groups: its elements, or the empty value for an empty list. */
function listItems(v: CellValue, type: string): CellValue[] {
  const empty = type === 'ChoiceList' ? '' : 0;
  if (Array.isArray(v) && v[0] === 'L') {
    return v.length > 1 ? v.slice(1) : [empty];
  }
  return v === null || v === '' ? [empty] : [v];
}
