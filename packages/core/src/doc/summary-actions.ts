/**
 * Summary tables made and regrouped by user actions, as Grist's summary.py and useractions.py do:
 * `CreateViewSection` (a plain section, or a summary section grouped by source columns) and
 * `UpdateSummaryViewSection` (the same section, grouped differently). A summary table is named
 * `<Source>_summary_<sorted colIds>`, holds the group-by columns, `group`, `count` and a SUM per
 * numeric source column, and is shared by every section with the same grouping; it goes when no
 * section but its raw one shows it (`removeUnusedSummaries`). Runs inside GristDoc's write.
 */
import {engineError} from '../base/index.js';
import {escapeRegExp, isVisibleColumn, pyJsonDumps, summaryTableName, withoutRulesOptions} from './migrations/db.js';
import {setDisplayFormula} from './display.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import type {ColInfo, DocStorage} from './storage.js';
import {fillSummary} from './summary.js';
import type {CellValue} from './types.js';
import {addSection, addView, removeSections} from './views.js';

/** A column of a summary table to have (Grist's summary.ColInfo). */
interface SumColInfo {
  colId: string;
  type: string;
  isFormula: boolean;
  formula: string;
  widgetOptions?: string;
  label?: string;
}

export interface ViewSectionResult {
  tableRef: number;
  viewRef: number;
  sectionRef: number;
}

/** Columns of a table in their position order (Grist's `table.columns`). */
function byPosition(table: TableMeta): ColumnMeta[] {
  return [...table.columns].sort((a, b) => Number(a.fields.parentPos) - Number(b.fields.parentPos));
}

/** summary_groupby_col_type: a list column is grouped by its items. */
function groupByType(sourceType: string): string {
  return sourceType === 'ChoiceList' ? 'Choice' : sourceType.replace('RefList:', 'Ref:');
}

function colInfoOf(c: ColumnMeta): SumColInfo {
  return {
    colId: c.colId,
    type: c.type,
    isFormula: c.isFormula,
    formula: c.formula,
    widgetOptions: String(c.fields.widgetOptions ?? ''),
    label: String(c.fields.label ?? ''),
  };
}

function groupColInfo(source: TableMeta): SumColInfo {
  return {
    colId: 'group',
    type: `RefList:${source.tableId}`,
    isFormula: true,
    formula: 'table.getSummarySourceGroup(rec)',
  };
}

/** The summary tables of a source, in `_grist_Tables` order. */
function summariesOf(s: DocStorage, source: TableMeta): TableMeta[] {
  return s.meta.userTables.filter((t) => Number(t.fields.summarySourceTable) === source.tableRef);
}

/** Grist's summaryKey: the sorted source column refs a summary groups by. */
function summaryKey(t: TableMeta): string {
  return t.columns
    .map((c) => Number(c.fields.summarySourceCol) || 0)
    .filter(Boolean)
    .sort((a, b) => a - b)
    .join(',');
}

/** _append_sister_column_if_any: a same-named formula column of another summary, else a SUM of a numeric column. */
function sisterOrSum(s: DocStorage, source: TableMeta, col: ColumnMeta | undefined, out: SumColInfo[]): void {
  if (!col) {
    return;
  }
  for (const t of summariesOf(s, source)) {
    const sister = t.columns.find((c) => c.colId === col.colId && c.isFormula);
    if (sister) {
      out.push(colInfoOf(sister));
      return;
    }
  }
  if (col.type === 'Int' || col.type === 'Numeric') {
    out.push({...colInfoOf(col), isFormula: true, formula: `SUM($group.${col.colId})`});
  }
}

/** _create_summary_colinfo: group, count, then a column per numeric (or sister) source column. */
function newSummaryColInfo(s: DocStorage, source: TableMeta, groupBy: ColumnMeta[]): SumColInfo[] {
  const out = [groupColInfo(source)];
  const groupIds = new Set(groupBy.map((c) => c.colId));
  for (const col of byPosition(source)) {
    if (groupIds.has(col.colId) || col.colId === 'group' || !isVisibleColumn(col.colId)) {
      continue;
    }
    sisterOrSum(s, source, col, out);
  }
  if (!out.some((c) => c.colId === 'count')) {
    out.splice(1, 0, {colId: 'count', type: 'Int', isFormula: true, formula: 'len($group)'});
  }
  return out;
}

function addColInfo(ci: SumColInfo): {id: string} & ColInfo {
  const info: {id: string} & ColInfo = {id: ci.colId, type: ci.type, isFormula: ci.isFormula, formula: ci.formula};
  if (ci.widgetOptions !== undefined) {
    info.widgetOptions = ci.widgetOptions;
  }
  if (ci.label !== undefined) {
    info.label = ci.label;
  }
  return info;
}

/**
 * _get_or_create_summary: the summary of `source` grouped by `groupBy` (made, with its rows, when
 * none exists), with the columns asked for (a missing one, or one whose formula differs, is added).
 */
function getOrCreateSummary(
  s: DocStorage,
  source: TableMeta,
  groupBy: ColumnMeta[],
  formulaInfo: SumColInfo[],
): {table: TableMeta; groupCols: ColumnMeta[]; formulaCols: ColumnMeta[]} {
  const key = groupBy
    .map((c) => c.colRef)
    .sort((a, b) => a - b)
    .join(',');
  const groupInfo = groupBy.map(
    (c): SumColInfo => ({
      colId: c.colId,
      type: groupByType(c.type),
      isFormula: false,
      formula: '',
      widgetOptions: withoutRulesOptions(String(c.fields.widgetOptions ?? '')) as string,
      label: String(c.fields.label ?? ''),
    }),
  );
  let table = summariesOf(s, source).find((t) => summaryKey(t) === key);
  let created = false;
  if (!table) {
    const cols = [
      ...groupInfo.map((ci, i) => ({
        ...addColInfo(ci),
        summarySourceCol: groupBy[i].colRef,
        visibleCol: Number(groupBy[i].fields.visibleCol) || 0,
      })),
      ...formulaInfo.map(addColInfo),
    ];
    const res = s.addTable(
      summaryTableName(
        source.tableId,
        groupInfo.map((c) => c.colId),
      ),
      cols,
      {primaryView: false, summarySourceTable: source.tableRef},
    );
    table = s.getTable(res.table_id);
    created = true;
  }
  const getOrAdd = (infos: SumColInfo[]): ColumnMeta[] =>
    infos.map((ci) => {
      const prior = s.getTable(table!.tableId).byId.get(ci.colId);
      if (prior && prior.formula === ci.formula) {
        return prior;
      }
      const {id, ...info} = addColInfo(ci);
      const added = s.addColumn(s.getTable(table!.tableId), id, info, {visible: false, fields: false});
      return s.meta.colsByRef.get(added.colRef)!.col;
    });
  const groupCols = getOrAdd(groupInfo);
  const formulaCols = getOrAdd(formulaInfo);
  if (created) {
    // maybe_copy_display_formula: a group-by column shows what its source column shows.
    groupCols.forEach((col, i) => {
      const display = s.meta.colsByRef.get(Number(groupBy[i].fields.displayCol) || 0);
      if (display) {
        const formula = display.col.formula.replace(
          new RegExp(`\\$${escapeRegExp(groupBy[i].colId)}\\b`, 'g'),
          `$${col.colId}`,
        );
        setDisplayFormula(s, table!.tableId, null, col.colRef, formula);
      }
    });
    fillSummary(s, s.getTable(table.tableId));
  }
  const current = s.getTable(table.tableId);
  const fresh = (cols: ColumnMeta[]) => cols.map((c) => current.byId.get(c.colId) ?? c);
  return {table: current, groupCols: fresh(groupCols), formulaCols: fresh(formulaCols)};
}

/** _fetch_table_col_recs: group-by column refs, each of `tableRef`. */
function groupByColumns(s: DocStorage, tableRef: number, refs: unknown): ColumnMeta[] {
  if (!Array.isArray(refs)) {
    throw engineError('TypeError', 'groupby_colrefs must be a list of column refs');
  }
  const seen = new Set<number>();
  return refs.map((ref) => {
    const found = typeof ref === 'number' ? s.meta.colsByRef.get(ref) : undefined;
    if (!found) {
      throw engineError('ValueError', 'Invalid column requested');
    }
    if (found.table.tableRef !== tableRef) {
      throw engineError('ValueError', 'Invalid column requested (wrong table)');
    }
    if (seen.has(found.col.colRef)) {
      throw engineError('ValueError', `Column ${found.col.colId} requested twice`);
    }
    seen.add(found.col.colRef);
    return found.col;
  });
}

function rowRef(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw engineError('TypeError', `${what} must be a row id`);
  }
  return v;
}

/** The fields of a section, in position order. */
function sectionFields(s: DocStorage, sectionRef: number): Array<Record<string, CellValue>> {
  return s
    .metaRows('_grist_Views_section_field')
    .filter((f) => Number(f.parentId) === sectionRef)
    .sort((a, b) => Number(a.parentPos) - Number(b.parentPos));
}

/**
 * CreateViewSection(tableRef, viewRef, sectionType, groupbyColRefs, tableId): a section of a new
 * page (viewRef 0) or an existing one; of a new empty table (tableRef 0); plain (groupbyColRefs
 * null) or a summary grouped by those columns of the table.
 */
export function createViewSection(s: DocStorage, args: unknown[]): ViewSectionResult {
  let tableRef = rowRef(args[0], 'CreateViewSection: table_ref');
  let viewRef = rowRef(args[1], 'CreateViewSection: view_ref');
  const sectionType = args[2];
  if (typeof sectionType !== 'string') {
    throw engineError('TypeError', 'CreateViewSection: section_type must be a string');
  }
  const refs = args[3];
  const groupBy = refs === null || refs === undefined ? null : groupByColumns(s, tableRef, refs);
  if (!tableRef) {
    const tableId = args[4];
    if (tableId !== null && tableId !== undefined && typeof tableId !== 'string') {
      throw engineError('TypeError', 'CreateViewSection: table_id must be a string');
    }
    const cols = [0, 1, 2].map(() => ({id: null, isFormula: true}));
    tableRef = s.addTable(tableId ?? null, cols, {primaryView: false}).id;
  }
  const table = s.meta.byRef.get(tableRef);
  if (!table) {
    throw engineError('KeyError', `Table ${tableRef} not found`);
  }
  if (!viewRef) {
    viewRef = addView(s, table.tableId, 'New page', 'empty');
  } else if (!s.metaRows('_grist_Views').some((v) => Number(v.id) === viewRef)) {
    throw engineError('KeyError', `View ${viewRef} not found`);
  }
  let sectionRef: number;
  if (groupBy) {
    const {
      table: summary,
      groupCols,
      formulaCols,
    } = getOrCreateSummary(s, table, groupBy, newSummaryColInfo(s, table, groupBy));
    [sectionRef] = s.metaAdd('_grist_Views_section', [
      {tableRef: summary.tableRef, parentId: viewRef, parentKey: sectionType, borderWidth: 1, defaultWidth: 100},
    ]);
    let pos = s.nextPos('_grist_Views_section_field', 'parentPos');
    s.metaAdd(
      '_grist_Views_section_field',
      [...groupCols, ...formulaCols]
        .filter((c) => c.colId !== 'group')
        .map((c) => ({parentId: sectionRef, parentPos: pos++, colRef: c.colRef})),
    );
  } else {
    sectionRef = plainSection(s, table, viewRef, sectionType);
  }
  s.reloadMeta();
  return {tableRef, viewRef, sectionRef};
}

/**
 * create_plain_view_section: a card section (detail, single) takes the fields and settings of
 * the table's record card unless it is disabled; any other, a field per visible column.
 */
function plainSection(s: DocStorage, table: TableMeta, viewRef: number, sectionType: string): number {
  const cardRef = Number(table.fields.recordCardViewSectionRef) || 0;
  const card = cardRef ? s.metaRows('_grist_Views_section').find((r) => Number(r.id) === cardRef) : undefined;
  let disabled = false;
  try {
    disabled = Boolean(JSON.parse(String(card?.options || '{}'))?.disabled);
  } catch {
    // Unreadable options leave the record card enabled, as Grist does.
  }
  if (!card || disabled || (sectionType !== 'single' && sectionType !== 'detail')) {
    return addSection(s, table.tableRef, viewRef, sectionType, '');
  }
  const [section] = s.metaAdd('_grist_Views_section', [
    {tableRef: table.tableRef, parentId: viewRef, parentKey: sectionType, title: '', borderWidth: 1, defaultWidth: 100},
  ]);
  const cardFields = sectionFields(s, cardRef);
  let pos = s.nextPos('_grist_Views_section_field', 'parentPos');
  const copied = s.metaAdd(
    '_grist_Views_section_field',
    cardFields.map((f) => ({parentId: section, parentPos: pos++, colRef: f.colRef})),
  );
  // _copy_record_card_settings: field widgetOptions and the layout (its field refs mapped).
  const fieldMap = new Map(cardFields.map((f, i) => [Number(f.id), copied[i]]));
  cardFields.forEach((f, i) => {
    if (f.widgetOptions) {
      s.metaUpdate('_grist_Views_section_field', copied[i], {widgetOptions: f.widgetOptions});
    }
  });
  let layoutSpec = '';
  try {
    const spec = JSON.parse(String(card.layoutSpec ?? ''));
    const patch = (v: unknown): void => {
      if (Array.isArray(v)) {
        v.forEach(patch);
      } else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        for (const [k, x] of Object.entries(o)) {
          if (k === 'leaf' && typeof x === 'number' && fieldMap.has(x)) {
            o[k] = fieldMap.get(x);
          }
          patch(x);
        }
      }
    };
    patch(spec);
    layoutSpec = pyJsonDumps(spec);
  } catch {
    layoutSpec = '';
  }
  s.metaUpdate('_grist_Views_section', section, {
    options: card.options ?? '',
    layoutSpec,
    theme: card.theme ?? '',
  });
  return section;
}

/** _update_sort_spec: a section's sort, its column refs moved to the same colIds of the new table. */
function moveSortSpec(sortColRefs: string, oldTable: TableMeta, newTable: TableMeta): string {
  const oldIds = new Map(oldTable.columns.map((c) => [c.colRef, c.colId]));
  try {
    const spec = JSON.parse(sortColRefs) as unknown[];
    if (!Array.isArray(spec)) {
      return '';
    }
    const moved: unknown[] = [];
    for (const item of spec) {
      const text = String(item);
      const [head, ...flags] = text.split(':');
      const n = Number(head);
      if (!Number.isInteger(n)) {
        return '';
      }
      const colId = oldIds.get(Math.abs(n));
      const ref = colId !== undefined ? (newTable.byId.get(colId)?.colRef ?? 0) : 0;
      if (!ref) {
        continue;
      }
      // A '-0' string keeps its descending sign only through the text form.
      const signed = (head.startsWith('-') ? -1 : 1) * ref;
      moved.push(typeof item === 'number' ? signed : [String(signed), ...flags].join(':'));
    }
    return JSON.stringify(moved);
  } catch {
    return '';
  }
}

/**
 * UpdateSummaryViewSection(sectionRef, groupbyColRefs): the section shows the summary of the same
 * source grouped by these columns (made or reused); its fields follow the columns they showed, new
 * group-by columns get fields after the kept ones; a summary no section uses any more goes at the
 * end of the write.
 */
export function updateSummaryViewSection(s: DocStorage, args: unknown[]): null {
  const sectionRef = rowRef(args[0], 'UpdateSummaryViewSection: section_ref');
  const section = s.metaRows('_grist_Views_section').find((r) => Number(r.id) === sectionRef);
  if (!section) {
    throw engineError('KeyError', `View section ${sectionRef} not found`);
  }
  const oldTable = s.meta.byRef.get(Number(section.tableRef));
  const source = oldTable && s.meta.byRef.get(Number(oldTable.fields.summarySourceTable) || 0);
  if (!oldTable || !source) {
    throw engineError('ValueError', `UpdateSummaryViewSection: section ${sectionRef} is not a summary section`);
  }
  const groupBy = groupByColumns(s, source.tableRef, args[1]);
  const groupSet = new Set(groupBy.map((c) => c.colRef));
  const groupIds = new Set(groupBy.map((c) => c.colId));

  // Which columns of the old summary carry over (update_summary_section).
  const prevGroupCols: ColumnMeta[] = [];
  const formulaInfo: SumColInfo[] = [];
  for (const col of byPosition(oldTable)) {
    const srcRef = Number(col.fields.summarySourceCol) || 0;
    if (groupSet.has(srcRef)) {
      prevGroupCols.push(col);
    } else if (col.isFormula && !groupIds.has(col.colId)) {
      formulaInfo.push(colInfoOf(col));
    } else {
      // A column no longer grouped by comes back as its sum (or a sister column).
      sisterOrSum(s, source, s.meta.colsByRef.get(srcRef)?.col, formulaInfo);
    }
  }
  const keep = new Set([...prevGroupCols.map((c) => c.colId), ...formulaInfo.map((c) => c.colId)]);
  const fieldsBefore = sectionFields(s, sectionRef);
  const colIdOfField = (f: Record<string, CellValue>) => s.meta.colsByRef.get(Number(f.colRef) || 0)?.col.colId ?? '';
  const dropFields = fieldsBefore.filter((f) => !keep.has(colIdOfField(f))).map((f) => Number(f.id));
  const hadGroup = formulaInfo.some((c) => c.colId === 'group');
  if (!hadGroup) {
    formulaInfo.push(groupColInfo(source));
  }
  const {table: newTable, groupCols, formulaCols} = getOrCreateSummary(s, source, groupBy, formulaInfo);
  if (!hadGroup) {
    formulaCols.pop();
  }

  s.metaRemove('_grist_Views_section_field', dropFields);
  const fields = fieldsBefore.filter((f) => !dropFields.includes(Number(f.id)));
  const fieldByColId = new Map(fields.map((f) => [colIdOfField(f), f]));
  const prevGroupFields = prevGroupCols.filter((c) => fieldByColId.has(c.colId)).map((c) => fieldByColId.get(c.colId)!);
  const bySource = new Map(groupBy.map((c, i) => [c.colRef, groupCols[i]]));
  const prevGroupColumns = prevGroupFields.map(
    (f) => bySource.get(Number(s.meta.colsByRef.get(Number(f.colRef))!.col.fields.summarySourceCol))!,
  );
  const visibleFormulaCols = formulaCols.filter((c) => fieldByColId.has(c.colId));
  const moved: Array<[Record<string, CellValue>, ColumnMeta]> = [
    ...visibleFormulaCols.map((c) => [fieldByColId.get(c.colId)!, c] as [Record<string, CellValue>, ColumnMeta]),
    ...prevGroupFields.map((f, i) => [f, prevGroupColumns[i]] as [Record<string, CellValue>, ColumnMeta]),
  ];
  for (const [f, c] of moved) {
    s.metaUpdate('_grist_Views_section_field', Number(f.id), {colRef: c.colRef});
  }

  // New group-by columns get fields after the last kept group-by field (first when none is kept).
  const newGroupCols = groupCols.filter((c) => !prevGroupColumns.includes(c));
  const positions = fields.map((f) => Number(f.parentPos));
  const after = prevGroupFields.length ? Number(prevGroupFields[prevGroupFields.length - 1].parentPos) : null;
  const next = positions.find((p) => (after === null ? true : p > after));
  const lo = after ?? (next !== undefined ? next - 1 : s.nextPos('_grist_Views_section_field', 'parentPos') - 1);
  const hi = next ?? lo + 1;
  const step = (hi - lo) / (newGroupCols.length + 1);
  const newIds = s.metaAdd(
    '_grist_Views_section_field',
    newGroupCols.map((c, i) => ({parentId: sectionRef, parentPos: lo + step * (i + 1), colRef: c.colRef})),
  );
  // The group-by fields in the order asked for.
  const groupFieldOf = new Map<number, {id: number; pos: number}>();
  prevGroupFields.forEach((f, i) =>
    groupFieldOf.set(prevGroupColumns[i].colRef, {id: Number(f.id), pos: Number(f.parentPos)}),
  );
  newGroupCols.forEach((c, i) => groupFieldOf.set(c.colRef, {id: newIds[i], pos: lo + step * (i + 1)}));
  const ordered = groupCols.map((c) => groupFieldOf.get(c.colRef)!);
  const sorted = ordered.map((g) => g.pos).sort((a, b) => a - b);
  if (ordered.some((g, i) => g.pos !== sorted[i])) {
    ordered.forEach((g, i) => s.metaUpdate('_grist_Views_section_field', g.id, {parentPos: sorted[i]}));
  }

  const update: Record<string, CellValue> = {tableRef: newTable.tableRef};
  if (section.sortColRefs) {
    update.sortColRefs = moveSortSpec(String(section.sortColRefs), oldTable, newTable);
  }
  s.metaUpdate('_grist_Views_section', sectionRef, update);
  s.reloadMeta();
  return null;
}

/** Whether a section may be removed by a user: not a table's raw or record card section (Grist). */
export function checkRemovableSections(s: DocStorage, sectionIds: number[]): void {
  const ids = new Set(sectionIds);
  for (const t of s.meta.userTables) {
    if (ids.has(Number(t.fields.rawViewSectionRef) || 0)) {
      throw engineError('ValueError', 'Cannot remove raw view section');
    }
    if (ids.has(Number(t.fields.recordCardViewSectionRef) || 0)) {
      throw engineError('ValueError', 'Cannot remove record card view section');
    }
  }
}

/** Removes view sections (with their fields), as RemoveViewSection; their summaries follow at the end of the write. */
export function removeViewSections(s: DocStorage, sectionIds: number[]): void {
  checkRemovableSections(s, sectionIds);
  removeSections(s, sectionIds);
}

/**
 * Grist's auto-removal of summary tables: one that no section shows but its raw one (or whose
 * source is gone) is removed. Returns whether any was.
 */
export function removeUnusedSummaries(s: DocStorage): boolean {
  const shown = new Set<number>();
  const raw = new Set(s.meta.userTables.map((t) => Number(t.fields.rawViewSectionRef) || 0));
  for (const r of s.metaRows('_grist_Views_section')) {
    if (!raw.has(Number(r.id))) {
      shown.add(Number(r.tableRef));
    }
  }
  const unused = s.meta.userTables
    .filter((t) => Number(t.fields.summarySourceTable) && !shown.has(t.tableRef))
    .map((t) => t.tableRef);
  if (unused.length) {
    s.removeTables(unused);
  }
  return unused.length > 0;
}
