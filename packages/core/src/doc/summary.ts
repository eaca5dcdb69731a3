/**
 * Summary tables kept current: after a write changed a summary's source table, the summary gains a
 * row for each new group and loses the rows of groups left empty (what Grist's summary actions
 * do). The formula engine computes `group` (getSummarySourceGroup) and the summary's formulas.
 *
 * A write costs what it changed (issue 26 §3): the groups of the source rows it added or updated
 * are looked up in an index of each summary's rows by group (`SummarySync`, kept across writes),
 * and a group left empty is found by its `group` cell, which the recalculation recomputed to an
 * empty list (as Grist removes a summary row whose group became empty).
 */
import type {RecalcResult} from '@gristlite/formula';
import type {ChangeSet, DocStorage} from './storage.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {CellValue} from './types.js';

/** A summary's index: the JSON of each group's values -> its row, valid for one metadata version. */
interface GroupIndex {
  version: number;
  rows: Map<string, number>;
}

/**
 * Keeps summaries in step with their sources at the cost of the rows a write changed. One per
 * open document (DocRecalc's); `forget()` after a rolled-back write.
 */
export class SummarySync {
  private readonly indexes = new Map<string, GroupIndex>();
  /** Each summary's link (source and group-by refs) by table ref, as of the last write. */
  private links: Map<number, string> | null = null;
  /** The user tables at the start of the current write. */
  private tablesBefore = new Set<number>();

  forget(): void {
    this.indexes.clear();
    this.links = null;
  }

  /** At the start of a write: the links the document's summaries have before it. */
  start(doc: DocStorage): void {
    this.links ??= linkSignatures(doc);
    this.tablesBefore = new Set(doc.meta.userTables.map((t) => t.tableRef));
  }

  /**
   * Before the write's recalculation: for summaries grouped by data columns only, a row for each
   * group of the source rows added or updated that has none yet. Returns whether any was added.
   */
  beforeRecalc(doc: DocStorage, changes: ChangeSet): boolean {
    let changed = false;
    let listed: Map<string, number[]> | null = null;
    // A table newly linked to a source, or regrouped through metadata: all of its rows follow.
    if (changes.touched('_grist_Tables') || changes.touched('_grist_Tables_column')) {
      const links = linkSignatures(doc);
      for (const [ref, link] of links) {
        const summary = doc.meta.byRef.get(ref)!;
        const known = summaryLink(doc, summary);
        if (this.links?.get(ref) !== link && known) {
          this.indexes.delete(summary.tableId);
          // A summary made by this write (CreateViewSection) was filled as it was made.
          const filled = !this.tablesBefore.has(ref) && hasRows(doc, summary);
          if (!filled) {
            changed = syncSummary(doc, summary, known) || changed;
          }
        }
      }
      this.links = links;
    }
    for (const summary of doc.meta.userTables) {
      const link = summaryLink(doc, summary);
      if (!link || !changes.touched(link.source.tableId)) {
        continue;
      }
      // Rows written by the write's own actions (not by this class): the index is read again.
      if (changes.touched(summary.tableId)) {
        this.indexes.delete(summary.tableId);
      }
      if (link.groupBy.some((g) => g.src.isFormula)) {
        continue;
      }
      listed ??= changedRows(changes);
      const rows = listed.get(link.source.tableId);
      if (rows?.length) {
        changed = this.addGroups(doc, summary, link, rows) || changed;
      }
    }
    return changed;
  }

  /**
   * After a recalculation: removes the summary rows whose `group` it left empty and, for summaries
   * grouped by a formula column, adds the groups of source rows whose group-by values changed
   * (with `first`, also of the rows the write's actions added or updated). Returns whether any
   * summary row was added or removed (the caller recalculates again).
   */
  afterRecalc(doc: DocStorage, changes: ChangeSet, result: RecalcResult, first: boolean): boolean {
    let changed = false;
    let listed: Map<string, number[]> | null = null;
    for (const summary of doc.meta.userTables) {
      const link = summaryLink(doc, summary);
      if (!link) {
        continue;
      }
      const groupCells = result.changes[summary.tableId]?.group;
      if (groupCells && summary.byId.get('group')?.isFormula) {
        const empty = groupCells.rowIds.filter((_, i) => isEmptyList(groupCells.values[i]));
        if (empty.length) {
          doc.removeRecords(summary, empty);
          const index = this.indexes.get(summary.tableId);
          if (index) {
            const gone = new Set(empty);
            for (const [key, id] of index.rows) {
              if (gone.has(id)) index.rows.delete(key);
            }
          }
          changed = true;
        }
      }
      const formulaCols = link.groupBy.filter((g) => g.src.isFormula);
      if (!formulaCols.length) {
        continue;
      }
      const rows = new Set<number>();
      if (first && changes.touched(link.source.tableId)) {
        listed ??= changedRows(changes);
        for (const r of listed.get(link.source.tableId) ?? []) rows.add(r);
      }
      for (const g of formulaCols) {
        for (const r of result.changes[link.source.tableId]?.[g.src.colId]?.rowIds ?? []) rows.add(r);
      }
      if (rows.size) {
        changed = this.addGroups(doc, summary, link, [...rows]) || changed;
      }
    }
    return changed;
  }

  /** Adds a summary row for each group of these source rows that has none (in the rows' order). */
  private addGroups(doc: DocStorage, summary: TableMeta, link: SummaryLink, rowIds: number[]): boolean {
    const index = this.index(doc, summary, link);
    const {source, groupBy} = link;
    const added = new Map<string, CellValue[]>();
    const cols = groupBy.map((g) => quoteIdent(g.src.colId)).join(', ');
    const stmt = doc.stmt(
      `SELECT id${cols ? ', ' + cols : ''} FROM ${quoteIdent(source.tableId)}
       WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
    );
    for (const chunk of chunksOf(rowIds, 10_000)) {
      for (const row of stmt.raw(true).all(JSON.stringify(chunk)) as unknown[][]) {
        for (const values of groupsOf(groupBy, row.slice(1))) {
          const key = JSON.stringify(values);
          if (!index.rows.has(key) && !added.has(key)) {
            added.set(key, values);
          }
        }
      }
    }
    if (!added.size) {
      return false;
    }
    const values = [...added.values()];
    const ids = doc.addRecords(
      doc.getTable(summary.tableId),
      values.map(() => null),
      new Map(groupBy.map((g, j) => [g.col.colId, values.map((a) => a[j])])),
      {parse: false},
    );
    [...added.keys()].forEach((key, i) => index.rows.set(key, ids[i]));
    return true;
  }

  /** The summary's index, read from its rows when missing or made for older metadata. */
  private index(doc: DocStorage, summary: TableMeta, {groupBy}: SummaryLink): GroupIndex {
    let index = this.indexes.get(summary.tableId);
    if (index && index.version === doc.meta.version) {
      return index;
    }
    index = {version: doc.meta.version, rows: new Map()};
    const rows = doc
      .stmt(
        `SELECT id${groupBy.map((g) => ', ' + quoteIdent(g.col.colId)).join('')}
        FROM ${quoteIdent(summary.tableId)} ORDER BY id`,
      )
      .raw(true)
      .all() as unknown[][];
    for (const row of rows) {
      const key = JSON.stringify(groupBy.map((g, j) => g.col.decode(row[j + 1])));
      if (!index.rows.has(key)) {
        index.rows.set(key, Number(row[0]));
      }
    }
    this.indexes.set(summary.tableId, index);
    return index;
  }
}

function hasRows(doc: DocStorage, table: TableMeta): boolean {
  return doc.stmt(`SELECT 1 FROM ${quoteIdent(table.tableId)} LIMIT 1`).get() !== undefined;
}

/** Each summary's source and sorted group-by column refs, by table ref. */
function linkSignatures(doc: DocStorage): Map<number, string> {
  const out = new Map<number, string>();
  for (const t of doc.meta.userTables) {
    const src = Number(t.fields.summarySourceTable) || 0;
    if (src) {
      const refs = t.columns.map((c) => Number(c.fields.summarySourceCol) || 0).filter(Boolean);
      out.set(t.tableRef, `${src}:${refs.sort((a, b) => a - b).join(',')}`);
    }
  }
  return out;
}

/** The rows each table's write added or updated (what may have joined a group). */
function changedRows(changes: ChangeSet): Map<string, number[]> {
  return new Map(changes.list().map((c) => [c.tableId, [...c.added, ...c.updated]]));
}

function chunksOf<T>(arr: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < arr.length; i += size) out.push(arr.slice(i, i + size));
  return out;
}

function isEmptyList(v: CellValue): boolean {
  return v === null || (Array.isArray(v) && v[0] === 'L' && v.length === 1);
}

/**
 * The groups a source row is in, as the values of the summary's group-by columns: a ChoiceList or
 * RefList column puts it in one group per item (an empty list under ''/0), as Grist's summaries do.
 */
function groupsOf(groupBy: SummaryLink['groupBy'], cells: unknown[]): CellValue[][] {
  let combos: CellValue[][] = [[]];
  groupBy.forEach((g, j) => {
    const v = g.src.decode(cells[j]);
    const items = g.src.type === 'ChoiceList' || g.src.type.startsWith('RefList:') ? listItems(v, g.src.type) : [v];
    combos = combos.flatMap((c) => items.map((item) => [...c, item]));
  });
  return combos;
}

/**
 * Adds and removes summary rows for the summaries of tables this write changed, reading every row
 * of the source (what a summary without a formula `group` column needs); with
 * `formulaGroupBy`, only summaries grouped by a formula column (whose values a recalc may have
 * changed). Returns whether any summary row was added or removed.
 */
export function syncSummaries(doc: DocStorage, changes: ChangeSet, formulaGroupBy = false): boolean {
  let changed = false;
  for (const summary of doc.meta.userTables) {
    const link = summaryLink(doc, summary);
    if (!link || !changes.touched(link.source.tableId) || summary.byId.get('group')?.isFormula) {
      continue;
    }
    if (formulaGroupBy && !link.groupBy.some((g) => g.src.isFormula)) {
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
  // The source's groups, by the JSON of their group-by values: a ChoiceList/RefList source
  // column puts a row in one group per item (an empty list under ''/0), as Grist's summaries do.
  const srcRows = doc
    .stmt(`SELECT ${groupBy.map((g) => quoteIdent(g.src.colId)).join(', ') || 'id'}
    FROM ${quoteIdent(source.tableId)} ORDER BY id`)
    .raw(true)
    .all() as unknown[][];
  const groups = new Map<string, CellValue[]>();
  for (const row of srcRows) {
    for (const values of groupsOf(groupBy, groupBy.length ? row : [])) {
      groups.set(JSON.stringify(values), values);
    }
  }
  const sumRows = doc
    .stmt(`SELECT id${groupBy.map((g) => ', ' + quoteIdent(g.col.colId)).join('')}
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

/** The items a list cell puts in groups: its elements, or the empty value for an empty list. */
function listItems(v: CellValue, type: string): CellValue[] {
  const empty = type === 'ChoiceList' ? '' : 0;
  if (Array.isArray(v) && v[0] === 'L') {
    return v.length > 1 ? v.slice(1) : [empty];
  }
  return v === null || v === '' ? [empty] : [v];
}
