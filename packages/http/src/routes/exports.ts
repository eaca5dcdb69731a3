/** Table downloads (SPEC §6.2-6.3): CSV, TSV, DSV (streamed) and the table schema. */
import {BadRequest, exportFileBase, type DsvFormat, type ExportHeader} from '@gristlite/core';
import {oneOf, type Route} from '../route.js';
import {RawResponse, type RequestContext} from '../types.js';
import {docRoute} from './doc-common.js';
import {contentDisposition} from './download.js';

const EXPORT_QUERY = ['tableId', 'header', 'title'];

/** Grist's widget-level export options, which gristlite does not implement (it exports tables). */
const UNSUPPORTED = ['viewSection', 'activeSortSpec', 'filters', 'linkingFilter'];

function exportParams(ctx: RequestContext): {tableId: string; header: ExportHeader} {
  for (const name of UNSUPPORTED) {
    if (ctx.query.has(name)) {
      throw new BadRequest(`${name} parameter is not supported: gristlite exports whole tables (use tableId)`);
    }
  }
  const tableId = ctx.query.get('tableId');
  if (!tableId) throw new BadRequest('tableId parameter is required');
  const header = oneOf<ExportHeader>('header', ctx.query.get('header'), ['label', 'colId'], 'label');
  return {tableId, header};
}

function dsvRoute(format: DsvFormat, what: string): Route {
  return docRoute({
    method: 'GET',
    path: `/api/docs/:docId/download/${format}`,
    tag: 'downloads',
    query: EXPORT_QUERY,
    summary: `Download a table as ${what}, values formatted as Grist shows them (streamed)`,
    need: 'viewers',
    revalidate: true,
    handler: async (ctx, {doc, meta, access}) => {
      const {tableId, header} = exportParams(ctx);
      const exp = doc.exportDsv(tableId, {format, header}, access);
      const filename = exportFileBase(meta.name, tableId, ctx.query.get('title')) + exp.extension;
      return new RawResponse(200, exp.body, {
        'Content-Type': exp.contentType,
        'Content-Disposition': contentDisposition(filename),
      });
    },
  });
}

/** The API URL of the document as this request reached it (Grist's `getResourceUrl(doc, 'api')`). */
function docApiUrl(ctx: RequestContext, docKey: string): string {
  const proto = (ctx.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() || 'http';
  const host = ctx.headers['x-forwarded-host'] ?? ctx.headers.host ?? 'localhost';
  const org = /^\/o\/[^/]+/.exec(ctx.originalUrl)?.[0] ?? '';
  return `${proto}://${host}${org}/api/docs/${encodeURIComponent(docKey)}`;
}

export const exportRoutes: Route[] = [
  dsvRoute('csv', 'CSV'),
  dsvRoute('tsv', 'tab-separated values'),
  dsvRoute('dsv', 'values separated by "💩"'),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/download/xlsx',
    tag: 'downloads',
    query: EXPORT_QUERY,
    summary:
      'Download the whole document as an Excel workbook, one sheet per table (or one table with tableId); streamed',
    need: 'viewers',
    handler: async (ctx, {doc, meta, access}) => {
      // Grist: no query, or only `title`, exports every table; any other query is a table export.
      const whole = [...ctx.query.keys()].every((k) => k === 'title');
      const title = ctx.query.get('title');
      let tables: string[] | null,
        header: ExportHeader = 'label',
        filename: string;
      if (whole) {
        tables = null;
        filename = title || meta.name || 'document';
      } else {
        const p = exportParams(ctx);
        tables = [p.tableId];
        header = p.header;
        filename = exportFileBase(meta.name, p.tableId, title);
      }
      return new RawResponse(200, doc.exportXlsx(tables, header, access), {
        'Content-Type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'Content-Disposition': contentDisposition(`${filename}.xlsx`),
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
      const {tableId, header} = exportParams(ctx);
      const csvPath = `${docApiUrl(ctx, meta.urlId || meta.id)}/download/csv?${ctx.query.toString()}`;
      return doc.tableSchema(tableId, {header, csvPath}, access);
    },
  }),
];
