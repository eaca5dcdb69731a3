/**
 * Cursor pagination (beyond Grist, issue 30): a limited read that stops before the last matching
 * row answers `Link: <same path and query, plus cursor=...>; rel="next"` (RFC 8288); its body is
 * Grist's, so Grist clients see no difference. Cursors are sealed by the engine (core cursor.ts)
 * and bound to the document, the table and the query's filter and sort.
 */
import {BadRequest, cursorBinding, type PageEnd} from '@gristlite/core/internal';
import type {RequestContext} from './types.js';

/** Longest cursor put in a Link: with the path it stays under the 16 KB of headers Node's clients accept. */
const MAX_LINK_CURSOR = 8 * 1024;

/** What a paginated read is: where its cursor belongs and the query it refines. */
export interface PageQuery {
  docId: string;
  tableId: string;
  filter?: unknown;
  sort?: unknown;
}

/** The position `?cursor=` holds (undefined without one); 400 when it is not this query's. */
export function cursorParam(ctx: RequestContext, q: PageQuery): Record<string, unknown> | undefined {
  const cursor = ctx.query.get('cursor');
  if (cursor === null) return undefined;
  if (cursor === '') throw new BadRequest('Invalid cursor: it is empty');
  return ctx.engine.cursors.open(cursorBinding(q.docId, q.tableId, q.filter, q.sort), cursor);
}

/**
 * The `Link` header to the next page, or none (the last page, or an order a cursor cannot carry:
 * decision D55). The query is the request's, `limit` and `sort` included when they came as the
 * X-Limit and X-Sort headers, so the link alone is the next request.
 */
export function nextLink(ctx: RequestContext, q: PageQuery, page: PageEnd): Record<string, string> {
  if (!page.next) return {};
  const cursor = ctx.engine.cursors.seal(cursorBinding(q.docId, q.tableId, q.filter, q.sort), page.next);
  if (cursor.length > MAX_LINK_CURSOR) return {};
  const url = new URL(ctx.originalUrl, 'http://localhost');
  const params = new URLSearchParams(url.search);
  params.delete('cursor');
  for (const name of ['limit', 'sort']) {
    const header = ctx.headers[`x-${name}`];
    if (!params.has(name) && header) params.set(name, header);
  }
  params.set('cursor', cursor);
  return {Link: `<${url.pathname}?${params.toString()}>; rel="next"`};
}
