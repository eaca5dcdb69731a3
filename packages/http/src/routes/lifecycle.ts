/**
 * Document lifecycle endpoints of today's Grist (1.7.17 `DocApi`, issue 29): force-reload, the
 * action history's states, snapshots, assign and replace. Grist answers `null` to the writes
 * (`true`/`false` to assign); gristlite answers the same.
 */
import {BadRequest, Forbidden, NotFound, compareStates} from '@gristlite/core/internal';
import * as v from 'valibot';
import {ForwardTo} from '../forward.js';
import {flag, type Route} from '../route.js';
import type {RequestContext} from '../types.js';
import {docFor, docRoute, openDocFor} from './doc-common.js';

/** Grist's `integerParam`: a number (floored) or a numeric string, else 400. */
export function integerParam(value: unknown, name: string): number {
  const n = typeof value === 'number' ? Math.floor(value) : typeof value === 'string' ? parseInt(value, 10) : NaN;
  if (Number.isNaN(n)) throw new BadRequest(`${name} parameter cannot be understood as an integer: ${String(value)}`);
  return n;
}

/**
 * The snapshot ids of a document: with one document store, only its current state (`current`,
 * as Grist answers without external storage). Decision D52.
 */
function snapshots(docId: string): {snapshotId: string; lastModified: string; docId: string}[] {
  return [{snapshotId: 'current', lastModified: new Date().toISOString(), docId}];
}

const ReplaceBody = v.looseObject(
  {sourceDocId: v.optional(v.unknown()), snapshotId: v.optional(v.unknown())},
  'is not an object',
);

/** POST /replace: the target's owner, read access to all of the source (Grist's rules). */
async function replaceDoc(ctx: RequestContext): Promise<null> {
  const target = await openDocFor(ctx, 'editors', {
    ownersDespiteBrokenRules: true,
  });
  if (target.role !== 'owners') throw new Forbidden('Only owners can replace a document');
  const body = (await ctx.json()) as v.InferOutput<typeof ReplaceBody>;
  if (!v.is(ReplaceBody, body)) throw new BadRequest('Invalid payload');
  if (body.sourceDocId) {
    const {engine} = ctx;
    const source = await otherDoc(ctx, String(body.sourceDocId));
    const holder = await engine.claimDoc(source.doc.id);
    if (holder) throw new ForwardTo(holder);
    // As the source's `download?dryrun=1` would answer: the copy holds everything.
    const access = engine.openDoc(source.doc.id).accessFor(ctx.principal, source.role!);
    if (access && source.role !== 'owners' && !access.canCopyEverything()) {
      throw new Forbidden('not authorized to download this document');
    }
    await engine.replaceDocContent(target.doc, source.doc.id);
    return null;
  }
  if (body.snapshotId !== undefined && body.snapshotId !== null && body.snapshotId !== '') {
    const id = String(body.snapshotId);
    // The one snapshot is the current state: replacing the document with it changes nothing.
    if (!snapshots(target.meta.id).some((s) => s.snapshotId === id)) throw new NotFound(`Snapshot not found: ${id}`);
    return null;
  }
  throw new BadRequest('sourceDocId or snapshotId is required');
}

/** Grist's check of another document read for this request: view access, in its home API's words. */
async function otherDoc(ctx: RequestContext, key: string) {
  try {
    return await ctx.engine.docAccess(key, ctx.principal, ctx.org, 'viewers');
  } catch (e) {
    if (e instanceof Forbidden) throw new Forbidden('access denied');
    throw e;
  }
}

export const lifecycleRoutes: Route[] = [
  {
    method: 'POST',
    path: '/api/docs/:docId/force-reload',
    tag: 'docs',
    summary:
      'Close the document (removing attachments unused for 7 days, as Grist does); it reopens afresh on its next use',
    handler: async (ctx) => {
      const {meta, role} = await docFor(ctx, 'editors');
      // The process holding the document reloads it.
      const holder = await ctx.engine.claimDoc(meta.id);
      if (holder) throw new ForwardTo(holder, {id: meta.id, meta, role});
      // Grist removes attachments unused for 7 days when it closes a document: done here, in this
      // request (held open by it, so the write is logged before the answer), then closed.
      const doc = ctx.engine.openDoc(meta.id);
      if (doc.grist.isWritable) {
        doc.replica?.checkWritable();
        await doc.removeUnusedAttachments({expiredOnly: true});
      }
      await ctx.engine.reloadDoc(meta.id);
      return null;
    },
  },
  {
    method: 'POST',
    path: '/api/docs/:docId/assign',
    tag: 'docs',
    summary: 'Free the document for reassignment to another worker group: false (gristlite has no groups; D52)',
    handler: async (ctx) => {
      await docFor(ctx, 'editors');
      return false;
    },
  },
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/snapshots',
    tag: 'docs',
    summary: "The document's snapshots: its current state (D52)",
    need: 'viewers',
    handler: async (_ctx, {meta, access}) => {
      // A snapshot holds everything: Grist lists them only to those the rules hide nothing from.
      if (access && !access.canCopyEverything()) {
        throw new Forbidden('cannot confirm access to snapshots because of access rules');
      }
      return {snapshots: snapshots(meta.id)};
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/states',
    tag: 'docs',
    summary: "The states of the document's action history, newest first (as Grist recorded them; D39)",
    need: 'viewers',
    handler: async (_ctx, {doc}) => doc.states(),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/states/remove',
    tag: 'docs',
    summary: 'Truncate the action history to its newest `keep` actions',
    need: 'owners',
    handler: async (ctx, {doc}) => {
      const body = (await ctx.json()) as {keep?: unknown};
      doc.removeStates(integerParam(body?.keep, 'keep'));
      return null;
    },
  }),
  {
    method: 'POST',
    path: '/api/docs/:docId/replace',
    tag: 'docs',
    body: ReplaceBody,
    summary: "Replace the document's content with another document's (sourceDocId) or a snapshot's (snapshotId)",
    handler: replaceDoc,
  },
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/compare/:otherDocId',
    tag: 'docs',
    summary: 'Compare two documents by their histories (and contents: D54); detail is not supported',
    query: ['detail', 'maxRows'],
    need: 'viewers',
    handler: async (ctx, {doc, access}) => {
      if (access && !access.canCopyEverything()) throw new Forbidden('insufficient access');
      const maxRows = ctx.query.get('maxRows');
      if (maxRows !== null && maxRows !== 'null' && !(integerParam(maxRows, 'maxRows') > 0)) {
        throw new BadRequest(`maxRows parameter is invalid: ${maxRows}`);
      }
      if (flag(ctx.query, 'detail')) {
        throw new BadRequest('detail parameter is not supported: gristlite does not summarise actions (D54)');
      }
      const other = await otherDoc(ctx, ctx.params.otherDocId);
      const holder = await ctx.engine.claimDoc(other.doc.id);
      if (holder) throw new ForwardTo(holder);
      const right = ctx.engine.openDoc(other.doc.id);
      // The content digest reads everything: the rules must hide nothing there either.
      const rightAccess = right.accessFor(ctx.principal, other.role!);
      if (rightAccess && other.role !== 'owners' && !rightAccess.canCopyEverything()) {
        throw new Forbidden('insufficient access');
      }
      return compareStates(
        doc.states().states,
        right.states().states,
        () => doc.contentDigest() === right.contentDigest(),
      );
    },
  }),
];
