/**
 * Summary tables kept current: after a write changed a summary's source table, the summary gains a
 * row for each new group and loses the rows of groups left empty (what Grist's summary actions
 * do). The formula engine computes `group` (getSummarySourceGroup) and the summary's formulas.
 */
import type {ChangeSet, DocStorage} from './storage.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {CellValue} from './types.js';

/**
 * Adds and removes summary rows for the summaries of tables this write changed; with
 * `formulaGroupBy`, only summaries grouped by a formula column (whose values a recalc may have
 * changed). Returns whether any summary row was added or removed.
 */
export function syncSummaries(doc: DocStorage, changes: ChangeSet, formulaGroupBy = false): boolean {
  let changed = false;
  for (const summary of doc.meta.userTables) {
    const link = summaryLink(doc, summary);
    if (!link || !changes.touched(link.source.tableId)) {
      continue;
    }
    if (!link.groupBy.length || (formulaGroupBy && !link.groupBy.some((g) => g.src.isFormula))) {
      continue;
    }
    changed = syncSummary(doc, summary, link) || changed;
  }
  return changed;
}

/** A summary's source table and its group-by columns, each with the source column it follows. */
interface SummaryLink {
  source: TableMeta;
  groupBy: Array<{col: ColumnMeta; src: ColumnMeta}>;
}

function summaryLink(doc: DocStorage, summary: TableMeta): SummaryLink | null {
  const meta = doc.meta;
  const srcRef = Number(summary.fields.summarySourceTable);
  const source = srcRef ? meta.byRef.get(srcRef) : undefined;
  if (!source) {
    return null;
  }
  const groupBy: SummaryLink['groupBy'] = [];
  for (const col of summary.columns) {
    const ref = Number(col.fields.summarySourceCol);
    const src = ref ? meta.colsByRef.get(ref) : undefined;
    if (src && src.table === source) {
      groupBy.push({col, src: src.col});
    }
  }
  return {source, groupBy};
}

/**
 * The rows of a new summary table (CreateViewSection): one per group of its source, in the order
 * of each group's first source row, as Grist adds them.
 */
export function fillSummary(doc: DocStorage, summary: TableMeta): void {
  const link = summaryLink(doc, summary);
  if (link) {
    syncSummary(doc, summary, link);
  }
}

/** Adds the summary rows of groups the source has and removes those of groups it lost; returns whether any. */
function syncSummary(doc: DocStorage, summary: TableMeta, {source, groupBy}: SummaryLink): boolean {
  {
    // The source's groups, by the JSON of their group-by values: a ChoiceList/RefList source
    // column puts a row in one group per item (an empty list under ''/0), as Grist's summaries do.
    const srcRows = doc.db
      .prepare(`SELECT ${groupBy.map((g) => quoteIdent(g.src.colId)).join(', ') || 'id'}
      FROM ${quoteIdent(source.tableId)} ORDER BY id`)
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
    return removed.length > 0 || added.length > 0;
  }
}

/** The items a list cell puts in groups: its elements, or the empty value for an empty list. */
function listItems(v: CellValue, type: string): CellValue[] {
  const empty = type === 'ChoiceList' ? '' : 0;
  if (Array.isArray(v) && v[0] === 'L') {
    return v.length > 1 ? v.slice(1) : [empty];
  }
  return v === null || v === '' ? [empty] : [v];
}
