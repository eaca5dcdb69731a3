/**
 * Views, pages, sections and fields of a document's metadata: what Grist creates with a table (its
 * raw data view, record card) and removes with it. Runs inside GristDoc's write transaction.
 */
import type {MetaTables} from './storage-source.js';

/** A table's raw data view: the view, its tab and page (unless hidden), and its record section. */
export function addRawView(
  s: MetaTables,
  tableRef: number,
  tableId: string,
  name: string,
): {id: number; sections: number[]} {
  const viewRef = addView(s, tableId, name, 'raw_data');
  const section = addSection(s, tableRef, viewRef, 'record', '', '[]');
  return {id: viewRef, sections: [section]};
}

/** A view (page) with its tab (unless the table is hidden) and page at the end (Grist's AddView). */
export function addView(s: MetaTables, tableId: string, name: string, type: 'raw_data' | 'empty'): number {
  const [viewRef] = s.metaAdd('_grist_Views', [{name, type}]);
  if (!tableId.startsWith('GristHidden_')) {
    s.metaAdd('_grist_TabBar', [{viewRef, tabPos: s.nextPos('_grist_TabBar', 'tabPos')}]);
  }
  s.metaAdd('_grist_Pages', [{viewRef, indentation: 0, pagePos: s.nextPos('_grist_Pages', 'pagePos')}]);
  return viewRef;
}

/** A section of a view (or a table's raw/record-card section with parentId 0) with fields for its columns. */
export function addSection(
  s: MetaTables,
  tableRef: number,
  parentId: number,
  parentKey: string,
  title: string,
  sortColRefs?: string,
): number {
  const [section] = s.metaAdd('_grist_Views_section', [
    {
      tableRef,
      parentId,
      parentKey,
      title,
      borderWidth: 1,
      defaultWidth: 100,
      ...(sortColRefs !== undefined ? {sortColRefs} : {}),
    },
  ]);
  addSectionFields(s, tableRef, section, parentKey);
  return section;
}

/**
 * Fields for every visible column of the table, in column order (_RebuildViewFields, which leaves
 * out any column named `group`, so that a summary's group never shows). A chart gets the first
 * two; a form the first nine that are neither formulas nor attachments.
 */
export function addSectionFields(s: MetaTables, tableRef: number, section: number, sectionType = 'record'): void {
  const table = s.meta.byRef.get(tableRef)!;
  let cols = table.columns
    .filter((c) => !c.hidden && !c.colId.startsWith('#') && c.colId !== 'group')
    .sort((a, b) => Number(a.fields.parentPos) - Number(b.fields.parentPos));
  if (sectionType === 'chart') {
    cols = cols.slice(0, 2);
  } else if (sectionType === 'form') {
    cols = cols.filter((c) => c.type !== 'Attachments' && !(c.isFormula && c.formula)).slice(0, 9);
  }
  let pos = s.nextPos('_grist_Views_section_field', 'parentPos');
  s.metaAdd(
    '_grist_Views_section_field',
    cols.map((c) => ({parentId: section, parentPos: pos++, colRef: c.colRef})),
  );
}

/** Removes sections with their fields. */
export function removeSections(s: MetaTables, sectionIds: number[]): void {
  const set = new Set(sectionIds);
  const fields = s.metaRows('_grist_Views_section_field').filter((f) => set.has(Number(f.parentId)));
  s.metaRemove(
    '_grist_Views_section_field',
    fields.map((f) => Number(f.id)),
  );
  s.metaRemove('_grist_Views_section', sectionIds);
}

/** Removes views with their tabs, sections and pages; a removed page's children move up a level. */
export function removeViews(s: MetaTables, viewIds: number[]): void {
  if (!viewIds.length) {
    return;
  }
  const set = new Set(viewIds);
  s.metaRemove(
    '_grist_TabBar',
    s
      .metaRows('_grist_TabBar')
      .filter((r) => set.has(Number(r.viewRef)))
      .map((r) => Number(r.id)),
  );
  removeSections(
    s,
    s
      .metaRows('_grist_Views_section')
      .filter((s) => set.has(Number(s.parentId)))
      .map((s) => Number(s.id)),
  );
  // Removing a page promotes its children one level up (treeview.fix_indents, simplified).
  const pages = s.metaRows('_grist_Pages').sort((a, b) => Number(a.pagePos) - Number(b.pagePos));
  const removedPages: number[] = [];
  for (let i = 0; i < pages.length; i++) {
    if (!set.has(Number(pages[i].viewRef))) {
      continue;
    }
    removedPages.push(Number(pages[i].id));
    const indent = Number(pages[i].indentation);
    for (let j = i + 1; j < pages.length && Number(pages[j].indentation) > indent; j++) {
      if (set.has(Number(pages[j].viewRef))) {
        continue;
      }
      const newIndent = Math.max(0, Number(pages[j].indentation) - 1);
      pages[j].indentation = newIndent;
      s.metaUpdate('_grist_Pages', Number(pages[j].id), {indentation: newIndent});
    }
  }
  s.metaRemove('_grist_Pages', removedPages);
  s.metaRemove('_grist_Views', viewIds);
}
