/**
 * `GET /api/docs/{doc}/forms/{vsId}` (Grist 1.7.17, issue 29): what a form widget asks for, read
 * as the caller may read it. The section's metadata, its fields and their columns are read through
 * the access rules (metadata about tables and columns the caller cannot read is left out), so a
 * form on a hidden table is not found and a hidden column is not asked; Reference choices are the
 * rows the caller may read. Shares (`/s/{key}/forms/...`, published forms) are not supported (D58).
 */
import {ApiError, NotFound, type ApiRecord, type CellValue, type GristDoc} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {docRoute} from './doc-common.js';
import {integerParam} from './lifecycle.js';

/** Grist's first fields of a form with no layout of its own (app/common/Forms.ts). */
const INITIAL_FIELDS_COUNT = 9;

function formNotFound(): NotFound {
  return new NotFound('Form not found', {code: 'FormNotFound'});
}

function parseOptions(text: CellValue | undefined): Record<string, unknown> {
  if (typeof text !== 'string' || !text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function isBlank(v: CellValue | undefined): boolean {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
}

function byId(records: ApiRecord[]): Map<number, Record<string, CellValue>> {
  return new Map(records.map((r) => [r.id, r.fields]));
}

/** The form of one section, as Grist's DocApi answers it. */
function formOf(grist: GristDoc, sectionId: number) {
  const meta = (t: string) => grist.fetchRecords(t).records;
  const sections = byId(meta('_grist_Views_section'));
  const section = sections.get(sectionId);
  if (!section?.tableRef || section.parentKey !== 'form') throw formNotFound();
  const tables = byId(meta('_grist_Tables'));
  const table = tables.get(section.tableRef as number);
  if (!table) throw formNotFound();
  const columns = byId(meta('_grist_Tables_column'));
  // Formula columns are not asked (Grist: "currently unsupported").
  const fields = meta('_grist_Views_section_field')
    .filter((f) => f.fields.parentId === sectionId)
    .sort((a, b) => (a.fields.parentPos as number) - (b.fields.parentPos as number) || a.id - b.id)
    .filter((f) => {
      const col = columns.get(f.fields.colRef as number);
      return col && !(col.isFormula && col.formula);
    });
  let layout = section.layoutSpec;
  if (typeof layout !== 'string' || !layout) {
    layout = JSON.stringify({
      type: 'Layout',
      children: [
        {type: 'Label'},
        {type: 'Label'},
        {
          type: 'Section',
          children: [
            {type: 'Label'},
            {type: 'Label'},
            ...fields.slice(0, INITIAL_FIELDS_COUNT).map((f) => ({type: 'Field', leaf: f.id})),
          ],
        },
      ],
    });
  }
  const readCache = new Map<string, ApiRecord[]>();
  const rowsOf = (tableId: string) => {
    let rows = readCache.get(tableId);
    if (!rows) {
      try {
        rows = grist.fetchRecords(tableId).records;
      } catch (e) {
        // A table the caller cannot read (or one gone) offers no choices; anything else is a bug.
        if (!(e instanceof ApiError)) throw e;
        rows = [];
      }
      readCache.set(tableId, rows);
    }
    return rows;
  };
  const formFieldsById: Record<number, unknown> = {};
  for (const f of fields) {
    const col = columns.get(f.fields.colRef as number)!;
    const fieldOptions = parseOptions(f.fields.widgetOptions);
    const options = {...parseOptions(col.widgetOptions), ...fieldOptions};
    const fullType = String(col.type ?? 'Any');
    const colId = String(col.colId);
    let refValues: Array<[number, CellValue]> | null = null;
    const ref = /^(?:Ref|RefList):(.+)$/.exec(fullType);
    if (ref) {
      // Choices show the visible column; without one (or one the caller cannot read), Grist's
      // lookup of `id` among the fields finds nothing, so there are none.
      const shown = col.visibleCol ? columns.get(col.visibleCol as number) : undefined;
      const shownId = shown ? String(shown.colId) : null;
      refValues = shownId
        ? rowsOf(ref[1])
            .map((r): [number, CellValue] => [r.id, r.fields[shownId]])
            .filter(([, v]) => !isBlank(v))
        : [];
    }
    formFieldsById[f.id] = {
      colId,
      description: fieldOptions.description || col.description,
      question: options.question || col.label || colId,
      options,
      type: fullType.split(':')[0],
      refValues,
    };
  }
  const formTableId = String(table.tableId);
  const rawSection = table.rawViewSectionRef ? sections.get(table.rawViewSectionRef as number) : undefined;
  const formTitle = section.title || rawSection?.title || formTableId;
  return {formFieldsById, formLayoutSpec: layout, formTableId, formTitle};
}

export const formRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/forms/:vsId',
    tag: 'docs',
    summary: "A form widget's fields, layout, table and title, as the caller may read them (viewers)",
    need: 'viewers',
    handler: async (ctx, {grist}) => formOf(grist, integerParam(ctx.params.vsId, 'vsId')),
  }),
];
