/**
 * Forms (Grist 1.7.17, issue 29): what a form widget asks for, read as the caller may read it. The
 * HTTP route (`GET /api/docs/{doc}/forms/{vsId}`) and `SessionDoc.form` both answer with `formOf`.
 */
import {type ShareRules, parseObject as parseOptions} from '../access/rules/shares.js';
import {ApiError, NotFound} from '../base/index.js';
import type {ApiRecord} from '../doc/api-types.js';
import type {GristDoc} from '../doc/gristdoc.js';
import type {CellValue} from '../doc/types.js';

/** Grist's first fields of a form with no layout of its own (app/common/Forms.ts). */
const INITIAL_FIELDS_COUNT = 9;

function formNotFound(): NotFound {
  return new NotFound('Form not found', {code: 'FormNotFound'});
}

function isBlank(v: CellValue | undefined): boolean {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
}

function byId(records: ApiRecord[]): Map<number, Record<string, CellValue>> {
  return new Map(records.map((r) => [r.id, r.fields]));
}

/** A form widget's fields, layout, table and title, as `GET /forms/{viewSectionId}` answers. */
export interface FormAnswer {
  /** Each field asked, by its `_grist_Views_section_field` id. */
  formFieldsById: Record<number, FormField>;
  /** The form's layout (JSON text): the section's own, else Grist's default of its first fields. */
  formLayoutSpec: string;
  /** The table the form adds records to. */
  formTableId: string;
  /** The section's title, else its table's raw section's, else the table id. */
  formTitle: string;
}

/** One field of a form (`FormAnswer.formFieldsById`). */
export interface FormField {
  /** The column it fills. */
  colId: string;
  /** The field's description, else the column's. */
  description: unknown;
  /** The question shown: the `question` option, else the column's label, else its id. */
  question: unknown;
  /** The column's widget options with the field's over them. */
  options: Record<string, unknown>;
  /** The column's type without its argument (`Ref`, not `Ref:People`). */
  type: string;
  /** For Ref and RefList: the rows the caller may read, as [row id, shown value]; else null. */
  refValues: Array<[number, CellValue]> | null;
}

/**
 * The form of one section (Grist 1.7.17's `GET /forms/{vsId}`), read through `grist` (the document
 * as the caller sees it): metadata of tables and columns the caller cannot read is left out, so a
 * form on a hidden table is not found and a hidden column is not asked; Reference choices are the
 * rows the caller may read. 404 `Form not found` for a section that is no form.
 */
export function formOf(grist: GristDoc, sectionId: number): FormAnswer {
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
  const formFieldsById: Record<number, FormField> = {};
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
      options: options as Record<string, unknown>,
      type: fullType.split(':')[0],
      refValues,
    };
  }
  const formTableId = String(table.tableId);
  const rawSection = table.rawViewSectionRef ? sections.get(table.rawViewSectionRef as number) : undefined;
  // `title` is a Text column of the metadata schema.
  const formTitle = (section.title || rawSection?.title || formTableId) as string;
  return {formFieldsById, formLayoutSpec: layout, formTableId, formTitle};
}

/**
 * Through a share (`/api/s/<key>/forms/{vsId}`), the form must be one the share publishes
 * (Grist 1.7.17's `_assertIsPublishedForm`, pinned by test/server/lib/docapi/DocApiForms.ts
 * "GET /s/{key}/forms/{vsid}"): the section exists and its `shareOptions` say `form`, its page's
 * share is the one the key names, else 404 `Form not found` (`FormNotFound`); and both the section
 * and the share are published, else 404 `Form not published` (`FormNotPublished`). Read from the
 * stored metadata (the document's compiled share rules), as Grist reads its unfiltered DocData.
 */
export function checkPublishedForm(shares: ShareRules | null, linkId: string, sectionId: number): void {
  const section = shares?.sections.get(sectionId);
  if (!shares || !section) throw formNotFound();
  if (!section.options.form) throw formNotFound();
  const shareRef = shares.pageShare.get(section.parentId);
  if (shareRef === undefined) throw formNotFound();
  const share = shares.shares.find((r) => r.id === shareRef);
  if (!share || share.linkId !== linkId) throw formNotFound();
  if (!section.options.publish || !share.options.publish) {
    throw new NotFound('Form not published', {code: 'FormNotPublished'});
  }
}
