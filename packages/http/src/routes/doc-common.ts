/** What every `/api/docs/:docId/...` data route shares: the access check and the open document. */
import type { Doc, OpenDoc, Role } from '@gristlite/core';
import { ForwardTo } from '../forward.js';
import type { RequestContext } from '../types.js';

export type Need = 'viewers' | 'editors' | 'owners';

/** Checks the caller's access to the document (SPEC §1.5 wording) and returns its home record. */
export async function docFor(ctx: RequestContext, need: Need): Promise<{ meta: Doc; role: Role }> {
  const { doc, role } = await ctx.engine.docAccess(ctx.params.docId, ctx.principal, ctx.org, need);
  return { meta: doc, role: role! };
}

/**
 * Access check, then the open document (its connection is cached by the engine). When another
 * process holds the document's lease, the request is forwarded there instead.
 */
export async function openDocFor(ctx: RequestContext, need: Need): Promise<OpenDoc & { meta: Doc; role: Role }> {
  const { meta, role } = await docFor(ctx, need);
  const holder = await ctx.engine.claimDoc(meta.id);
  if (holder) throw new ForwardTo(holder);
  return { ...ctx.engine.openDoc(meta.id), meta, role };
}
