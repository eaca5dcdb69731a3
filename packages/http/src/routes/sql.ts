/** Read-only SQL (SPEC §14): runs in the engine's sandboxed worker pool. */
import * as v from 'valibot';
import {BadRequest, Forbidden} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import type {RequestContext} from '../types.js';
import {validate} from '../validate.js';
import {openDocFor} from './doc-common.js';

/** The body of `POST /sql` (the MCP `run_sql` tool checks its input with it too). */
export const SqlPost = v.looseObject({
  sql: v.string(),
  args: v.optional(v.union([v.array(v.unknown()), v.null()], 'is none of any[], null')),
  timeout: v.optional(v.number()),
});

/** Whose share of the SQL pool a request uses: its user (all anonymous callers share one). */
export function sqlCaller(ctx: RequestContext) {
  return {user: ctx.principal.anonymous ? 'anonymous' : String(ctx.principal.user.id)};
}

/**
 * The document's record, opened here (with several machines its holder has the file, else the
 * request is forwarded there). Under access rules SQL sees everything, so only those who may copy
 * everything run it (Grist: 403 `insufficient document access`).
 */
export async function sqlDoc(ctx: RequestContext) {
  const found = await openDocFor(ctx, 'viewers');
  if (found.access && !found.access.canCopyEverything()) throw new Forbidden('insufficient document access');
  return found;
}

export const sqlRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api/docs/:docId/sql',
    tag: 'sql',
    summary: 'Run a read-only SELECT',
    query: ['q'],
    handler: async (ctx) => {
      const {meta} = await sqlDoc(ctx);
      const q = ctx.query.get('q');
      if (q === null) throw new BadRequest('q parameter is required');
      return ctx.engine.runSql(meta.id, q, null, undefined, sqlCaller(ctx));
    },
  },
  {
    method: 'POST',
    path: '/api/docs/:docId/sql',
    tag: 'sql',
    summary: 'Run a read-only SELECT with arguments and a timeout',
    body: SqlPost,
    handler: async (ctx) => {
      const {meta} = await sqlDoc(ctx);
      const body = validate(SqlPost, await ctx.json());
      return ctx.engine.runSql(meta.id, body.sql, body.args ?? null, body.timeout, sqlCaller(ctx));
    },
  },
];
