/** Table downloads (SPEC §6.2-6.3): CSV, TSV, DSV (streamed) and the table schema. */
import {
  type AccessContext,
  BadRequest,
  type Doc,
  exportFileBase,
  type DsvFormat,
  type ExportHeader,
  type OpenDocument,
  orgUrlName,
} from '@gristlite/core/internal';
import {oneOf, type Route} from '../route.js';
import {RawResponse, type RequestContext} from '../types.js';
import {docRoute, requestOrigin} from './doc-common.js';
import {contentDisposition} from './download.js';

const EXPORT_QUERY = ['tableId', 'header', 'title', 'viewSection'];
/** Beyond Grist (issue 40): the downloads of a table's rows also take a `where` condition. */
const ROWS_QUERY = [...EXPORT_QUERY, 'where'];

/** Grist's widget-level export options, which gristlite does not implement (it exports tables). */
const UNSUPPORTED = ['viewSection', 'activeSortSpec', 'filters', 'linkingFilter'];

/**
 * The export's table (null: none named) and header. A widget (`viewSection`) is checked as Grist
 * checks it, so an unknown one answers Grist's 404, before its export is refused as unsupported.
 */
function exportParams(ctx: RequestContext, doc: OpenDocument, access: AccessContext | null): ExportParams {
  const section = ctx.query.get('viewSection');
  // Grist's integerParam: parseInt, and 0 is no widget.
  const sectionId = section === null ? 0 : Number.parseInt(section, 10);
  if (Number.isNaN(sectionId)) {
    throw new BadRequest(`viewSection parameter cannot be understood as an integer: ${section}`);
  }
  if (sectionId) doc.exportSectionTable(sectionId, access);
  for (const name of UNSUPPORTED) {
    if (ctx.query.has(name) && !(name === 'viewSection' && !sectionId)) {
      throw new BadRequest(`${name} parameter is not supported: gristlite exports whole tables (use tableId)`);
    }
  }
  const header = oneOf<ExportHeader>('header', ctx.query.get('header'), ['label', 'colId'], 'label');
  return {tableId: ctx.query.get('tableId') || null, header};
}

interface ExportParams {
  tableId: string | null;
  header: ExportHeader;
}

/** `exportParams` for the downloads of one table (all but XLSX): Grist's 400 without `tableId`. */
function tableParams(ctx: RequestContext, doc: OpenDocument, access: AccessContext | null) {
  const {tableId, header} = exportParams(ctx, doc, access);
  if (!tableId) throw new BadRequest('tableId parameter is required');
  return {tableId, header};
}

function dsvRoute(format: DsvFormat, what: string): Route {
  return docRoute({
    method: 'GET',
    path: `/api/docs/:docId/download/${format}`,
    tag: 'downloads',
    query: ROWS_QUERY,
    summary: `Download a table as ${what}, values formatted as Grist shows them (streamed)`,
    need: 'viewers',
    revalidate: true,
    handler: async (ctx, {doc, meta, access}) => {
      const {tableId, header} = tableParams(ctx, doc, access);
      const exp = doc.exportDsv(tableId, {format, header, where: ctx.query.get('where') || undefined}, access);
      const filename = exportFileBase(meta.name, tableId, ctx.query.get('title')) + exp.extension;
      return new RawResponse(200, exp.body, {
        'Content-Type': exp.contentType,
        'Content-Disposition': contentDisposition(filename),
      });
    },
  });
}

/**
 * The API URL of the document (Grist's `getResourceUrl(doc, 'api')`): on the public URL when one
 * is set, else as this request reached it.
 */
/**
 * The document's API URL as Grist's `getResourceUrl(doc, {purpose: "api"})` writes it: the doc's
 * org always in the path (`/o/docs` for personal sites), whatever path the request came by.
 */
async function docApiUrl(ctx: RequestContext, meta: Doc): Promise<string> {
  const org = await ctx.engine.home.access.orgOfDoc(meta);
  const base = ctx.engine.publicUrl ?? requestOrigin(ctx);
  return `${base}/o/${orgUrlName(org)}/api/docs/${encodeURIComponent(meta.urlId || meta.id)}`;
}

export const exportRoutes: Route[] = [
  dsvRoute('csv', 'CSV'),
  dsvRoute('tsv', 'tab-separated values'),
  dsvRoute('dsv', 'values separated by "💩"'),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/download/xlsx',
    tag: 'downloads',
    query: ROWS_QUERY,
    summary:
      'Download the whole document as an Excel workbook, one sheet per table (or one table with tableId); streamed',
    need: 'viewers',
    handler: async (ctx, {doc, meta, access}) => {
      // Grist: no query, or only `title`, exports every table with labels as headers; otherwise
      // its export options are read, and without tableId (or widget) that is every table too.
      const whole = [...ctx.query.keys()].every((k) => k === 'title');
      const title = ctx.query.get('title');
      const p: ExportParams = whole ? {tableId: null, header: 'label'} : exportParams(ctx, doc, access);
      const tables = p.tableId === null ? null : [p.tableId];
      const filename =
        p.tableId === null ? title || meta.name || 'document' : exportFileBase(meta.name, p.tableId, title);
      const header = p.header;
      const where = ctx.query.get('where') || undefined;
      return new RawResponse(200, doc.exportXlsx(tables, header, access, where), {
        'Content-Type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'Content-Disposition': contentDisposition(`${filename}.xlsx`),
      });
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/download/json',
    tag: 'downloads',
    query: ['title'],
    summary:
      'Download the whole document as JSON: every table you may see with its columns and records (gristlite only); streamed',
    need: 'viewers',
    handler: async (ctx, {doc, meta, access}) => {
      const filename = ctx.query.get('title') || meta.name || 'document';
      return new RawResponse(200, doc.exportJson(access), {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Disposition': contentDisposition(`${filename}.json`),
      });
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/download/table-schema',
    tag: 'downloads',
    query: EXPORT_QUERY,
    summary: "The Frictionless table schema of a table's CSV download",
    need: 'viewers',
    revalidate: true,
    handler: async (ctx, {doc, meta, access}) => {
      const {tableId, header} = tableParams(ctx, doc, access);
      const csvPath = `${await docApiUrl(ctx, meta)}/download/csv?${ctx.query.toString()}`;
      return doc.tableSchema(tableId, {header, csvPath}, access);
    },
  }),
];
