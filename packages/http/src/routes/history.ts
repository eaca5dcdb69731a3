/**
 * Beyond Grist (issue 42 §1, D122): a table's, or one record's, recorded changes, newest first,
 * under the caller's access rules, a page at a time (`limit`, and `cursor` from the previous
 * page's `next`).
 */
import {BadRequest, historyPage} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import type {RequestContext} from '../types.js';
import {docRoute} from './doc-common.js';

const TABLE = '/api/docs/:docId/tables/:tableId';

/** A positive integer query parameter, or undefined when absent; 400 otherwise. */
function intParam(ctx: RequestContext, name: string): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null) return undefined;
  if (!/^[0-9]{1,15}$/.test(raw))
    throw new BadRequest(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** The path's row id: a positive integer, 400 otherwise. */
function rowParam(raw: string): number {
  if (!/^[0-9]{1,15}$/.test(raw) || Number(raw) < 1) throw new BadRequest(`Invalid row id ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** A history route: the table's (no `:rowId`) or one record's. */
function historyRoute(path: string, summary: string, record: boolean): Route {
  return docRoute({
    method: 'GET',
    path,
    tag: 'records',
    summary,
    query: ['limit', 'cursor'],
    need: 'viewers',
    handler: async (ctx, {grist, meta}) =>
      historyPage(ctx.engine.cursors, meta.id, grist, ctx.params.tableId, {
        ...(record ? {rowId: rowParam(ctx.params.rowId)} : {}),
        limit: intParam(ctx, 'limit'),
        cursor: ctx.query.get('cursor') ?? undefined,
      }),
  });
}

export const historyRoutes: Route[] = [
  historyRoute(
    `${TABLE}/history`,
    "The table's recorded changes, newest first, one entry per changed row (beyond Grist)",
    false,
  ),
  historyRoute(`${TABLE}/records/:rowId/history`, "One record's recorded changes, newest first (beyond Grist)", true),
];
