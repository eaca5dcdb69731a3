/** What every `/api/docs/:docId/...` data route shares: the access check and the open document. */
import type {Doc, OpenDocument, Role} from '@gristlite/core';
import {ForwardTo} from '../forward.js';
import type {RequestContext} from '../types.js';

export type Need = 'viewers' | 'editors' | 'owners';

/** Checks the caller's access to the document (SPEC §1.5 wording) and returns its home record. */
export async function docFor(ctx: RequestContext, need: Need): Promise<{meta: Doc; role: Role}> {
  const {doc, role} = await ctx.engine.docAccess(ctx.params.docId, ctx.principal, ctx.org, need);
  return {meta: doc, role: role!};
}

/** A document a request may use: the open document, its home record, and the caller's role. */
export interface DocForRequest {
  doc: OpenDocument;
  meta: Doc;
  role: Role;
}

/**
 * Access check, then the open document (kept open by the engine). When another process holds the
 * document's lease, the request is forwarded there instead.
 */
export async function openDocFor(ctx: RequestContext, need: Need): Promise<DocForRequest> {
  const {meta, role} = await docFor(ctx, need);
  const holder = await ctx.engine.claimDoc(meta.id);
  if (holder) throw new ForwardTo(holder);
  return {doc: ctx.engine.openDoc(meta.id), meta, role};
}
