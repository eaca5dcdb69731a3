/**
 * Document lifecycle endpoints of today's Grist (1.7.17 `DocApi`, issue 29): force-reload, the
 * action history's states, snapshots, assign and replace. Grist answers `null` to the writes
 * (`true`/`false` to assign); gristlite answers the same.
 */
import {
  BadRequest,
  Forbidden,
  NotFound,
  Unauthorized,
  compareDocs,
  versionChanges,
  docSnapshots,
  forceReloadDoc,
  integerParam,
  replaceDoc,
} from '@gristlite/core/internal';
import * as v from 'valibot';
import {ForwardTo} from '../forward.js';
import {flag, type Route} from '../route.js';
import type {RequestContext} from '../types.js';
import {docFor, docRoute, openDocFor} from './doc-common.js';

const RecoverBody = v.looseObject({recoveryMode: v.optional(v.unknown())}, 'is not an object');

const ReplaceBody = v.looseObject(
  {sourceDocId: v.optional(v.unknown()), snapshotId: v.optional(v.unknown())},
  'is not an object',
);

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
      await forceReloadDoc(ctx.engine, meta.id);
      return null;
    },
  },
  {
    // Grist's DocApi (DocApi.ts:886-895): editors reach it, owners only may switch; the answer is
    // the mode now. Without `recoveryMode` it is switched on, as Grist's `recoveryMode ?? true`.
    method: 'POST',
    path: '/api/docs/:docId/recover',
    tag: 'docs',
    body: RecoverBody,
    summary:
      'Switch recovery mode (owners): rules Grist refuses give way to owners-only access, and rule writes are not checked',
    handler: async (ctx) => {
      const {meta, role} = await docFor(ctx, 'editors');
      if (role !== 'owners') throw new Forbidden('Only owners can control recovery mode');
      const raw = ((await ctx.json()) as {recoveryMode?: unknown}).recoveryMode;
      if (raw !== undefined && typeof raw !== 'boolean') throw new BadRequest('recoveryMode must be a boolean');
      const holder = await ctx.engine.claimDoc(meta.id);
      if (holder) throw new ForwardTo(holder, {id: meta.id, meta, role});
      ctx.engine.setRecoveryMode(meta.id, raw ?? true);
      return {recoveryMode: raw ?? true};
    },
  },
  {
    // Grist's Housekeeper (app/gen-server/lib/Housekeeper.ts:403-409, 436-443): the support user
    // reloads any document, whatever its access; everyone else is refused.
    method: 'POST',
    path: '/api/housekeeping/docs/:docId/force-reload',
    tag: 'docs',
    summary: 'Reload a document as the support user (GRIST_SUPPORT_EMAIL); 403 for anyone else',
    handler: async (ctx) => {
      const meta = await supportDoc(ctx);
      const holder = await ctx.engine.claimDoc(meta.id);
      if (holder) throw new ForwardTo(holder, {id: meta.id});
      await forceReloadDoc(ctx.engine, meta.id);
      return null;
    },
  },
  {
    // Housekeeper.ts:411-425: the support user moves any document to its assigned worker,
    // optionally into a worker `group` first. gristlite has no groups and places documents on its
    // own (D52), so nothing moves (`group` is ignored): `false`, as the document's own /assign answers.
    method: 'POST',
    path: '/api/housekeeping/docs/:docId/assign',
    tag: 'docs',
    summary: 'Move a document to its assigned worker as the support user: false (gristlite has no groups; D52)',
    handler: async (ctx) => {
      await supportDoc(ctx);
      return false;
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
    handler: async (_ctx, {meta, access}) => docSnapshots(meta.id, access),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/snapshots/remove',
    tag: 'docs',
    summary:
      'Remove snapshots (`snapshotIds`, or `select`: `unlisted` or `past`): none can be, since gristlite keeps only the current state (D52)',
    need: 'owners',
    handler: async (ctx) => {
      const body = (await ctx.json()) as {snapshotIds?: unknown; select?: unknown} | null;
      const ids = body?.snapshotIds;
      if (ids !== undefined && ids !== null) {
        if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
          throw new BadRequest('snapshotIds must be a list of strings');
        }
        // Grist answers the ids it was asked to remove; with no past snapshots there is nothing to do.
        return {snapshotIds: ids};
      }
      if (body?.select === 'unlisted' || body?.select === 'past') return {snapshotIds: []};
      throw new BadRequest('please specify snapshotIds to remove');
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/flush',
    tag: 'docs',
    summary: 'Write the open document to disk: true (every gristlite write is on disk when it is answered; D52)',
    need: 'editors',
    handler: async () => true,
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/timing',
    tag: 'docs',
    summary:
      'Whether formula timing is on: `{"status": "disabled"}` (gristlite does not time formulas per column; D52)',
    need: 'owners',
    handler: async () => ({status: 'disabled'}),
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/states',
    tag: 'docs',
    summary: "The states of the document's action history, newest first (every write recorded: D120)",
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
    handler: async (ctx) => {
      const target = await openDocFor(ctx, 'editors', {ownersDespiteBrokenRules: true});
      return replaceDoc(ctx.engine, {...target, open: target.doc}, ctx.principal, ctx.org, () => ctx.json());
    },
  },
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/compare/:otherDocId',
    tag: 'docs',
    summary: 'Compare two documents by their histories (and contents: D54); detail=1 adds what changed on each side',
    query: ['detail', 'maxRows'],
    need: 'viewers',
    handler: async (ctx, {doc, access}) =>
      compareDocs(ctx.engine, {open: doc, access}, ctx.principal, ctx.org, ctx.params.otherDocId, {
        maxRows: ctx.query.get('maxRows') ?? undefined,
        detail: flag(ctx.query, 'detail'),
      }),
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/compare',
    tag: 'docs',
    summary: 'What changed between two states of the document (left, right: HEAD, a state hash, ~n, ^)',
    query: ['left', 'right', 'maxRows'],
    need: 'viewers',
    handler: async (ctx, {doc, access}) =>
      versionChanges(doc, access, {
        left: ctx.query.get('left'),
        right: ctx.query.get('right'),
        maxRows: ctx.query.get('maxRows') ?? undefined,
      }),
  }),
];

/** The document of a housekeeping route, for the support user only (Housekeeper's `_withSupport`). */
async function supportDoc(ctx: RequestContext) {
  if (ctx.principal.anonymous) throw new Unauthorized('user not authorized');
  const support = ctx.options.supportEmail ?? 'support@getgrist.com';
  if (ctx.principal.user.email.toLowerCase() !== support) throw new Forbidden('access denied');
  const meta = await ctx.engine.store.getDoc(ctx.params.docId);
  if (!meta) throw new NotFound('document not found');
  return meta;
}
