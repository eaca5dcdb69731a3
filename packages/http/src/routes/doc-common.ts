/** What every `/api/docs/:docId/...` data route shares: the access check and the open document. */
import {
  type AccessContext,
  actorOf,
  type Doc,
  type GristDoc,
  type Org,
  type OpenDocument,
  type Role,
  requestFingerprint,
} from '@gristlite/core/internal';
import type * as v from 'valibot';
import {ForwardTo} from '../forward.js';
import type {Route} from '../route.js';
import type {HandlerResult, RequestContext} from '../types.js';
import {type TypeNames, validate} from '../validate.js';
import {revalidate} from './revalidate.js';

export type Need = 'viewers' | 'editors' | 'owners';

/**
 * Checks the caller's access to the document (SPEC §1.5 wording) and returns its home record (and
 * its org, unless another worker checked the access).
 */
export async function docFor(
  ctx: RequestContext,
  need: Need,
): Promise<{meta: Doc; role: Role; org?: Org; share?: {linkId: string}}> {
  // Through a share link (`/api/s/<key>/...`, rewritten to `/api/docs/s.<key>/...` as Grist
  // does): the share's document, editors' access limited inside it by the share (issue 41).
  const shareKey = shareKeyOf(ctx.params.docId);
  if (shareKey !== null) {
    const {doc, role, org, linkId} = await ctx.engine.shareAccess(shareKey);
    return {meta: doc, role, org, share: {linkId}};
  }
  // Checked already by the worker that forwarded the request here (same route, same need).
  const v = ctx.vouched;
  if (v?.meta && v.role && (v.meta.id === ctx.params.docId || v.meta.urlId === ctx.params.docId)) {
    return {meta: v.meta, role: v.role};
  }
  const {doc, role, org} = await ctx.engine.docAccess(ctx.params.docId, ctx.principal, ctx.org, need);
  return {meta: doc, role: role!, org};
}

/** Grist's prefix of a share key used as a document id (`SHARE_KEY_PREFIX`). */
export const SHARE_KEY_PREFIX = 's.';

/** The share key of a document id written `s.<key>`, else null. */
export function shareKeyOf(docId: string | undefined): string | null {
  return docId?.startsWith(SHARE_KEY_PREFIX) ? docId.slice(SHARE_KEY_PREFIX.length) : null;
}

/** The scheme and host a request came with (behind a proxy, the ones it forwarded), as `https://host:port`. */
export function requestOrigin(ctx: RequestContext): string {
  const proto = (ctx.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() || 'http';
  const host = (ctx.headers['x-forwarded-host'] ?? '').split(',')[0].trim() || ctx.headers.host || 'localhost';
  return `${proto}://${host}`;
}

/** A document a request may use: the open document, its home record, and the caller's role. */
export interface DocForRequest {
  doc: OpenDocument;
  /** The document as the caller sees it under its access rules (reads filtered, writes checked). */
  grist: GristDoc;
  /** The caller's access rules context, or null when the document has none. */
  access: AccessContext | null;
  meta: Doc;
  role: Role;
  /** Set when the caller came through a share link: the share's linkId inside the document. */
  share?: {linkId: string};
}

/** Query parameters ending in `_`: Grist's link keys, which rules read as `user.LinkKey`. */
export function linkKeys(ctx: RequestContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of ctx.query) if (k.endsWith('_')) out[k.slice(0, -1)] = v;
  return out;
}

/**
 * Access check, then the open document (kept open by the engine). When another process holds the
 * document's lease, the request is forwarded there instead.
 */
export async function openDocFor(
  ctx: RequestContext,
  need: Need,
  opts: {ownersDespiteBrokenRules?: boolean} = {},
): Promise<DocForRequest> {
  const {meta, role, org, share} = await docFor(ctx, need);
  // Formulas this request computes (its writes, and all of them when opening the document
  // computes every formula) see the document's URL (SELF_HYPERLINK), made only then. A read
  // another worker forwarded here (no org at hand) is not worth two more home lookups.
  // Without a public URL the URL is built on the request's host, which the client names (Host,
  // X-Forwarded-Host): only a caller who may edit the document (and so could write any URL into
  // its cells) has it stored; a viewer's read that first opens the document gets the public URL
  // or None.
  const writes = ctx.method !== 'GET' && ctx.method !== 'HEAD';
  const docOrg = org ?? (writes ? await ctx.engine.home.access.orgOfDoc(meta) : null);
  // A caller through a share is anonymous: never one whose host is kept (Grist's SELF_HYPERLINK
  // never names the share either, DocApiMisc "SELF_HYPERLINK uses correct URL when doc first
  // opened via share link").
  const mayEdit = !share && (role === 'owners' || role === 'editors');
  const docUrl = docOrg ? () => ctx.engine.docPageUrl(meta, docOrg, mayEdit ? requestOrigin(ctx) : null) : null;
  const holder = await ctx.engine.claimDoc(meta.id);
  if (holder) throw new ForwardTo(holder, {id: meta.id, meta, role});
  const doc = ctx.engine.openDoc(meta.id, {docUrl});
  const access = doc.accessFor(ctx.principal, role, {
    linkKey: linkKeys(ctx),
    ownersDespiteBrokenRules: opts.ownersDespiteBrokenRules,
    share,
  });
  if (need !== 'viewers' && ctx.method !== 'GET' && ctx.method !== 'HEAD') doc.replica?.checkWritable();
  if (doc.replica && ctx.engine.cluster) {
    // Which worker answered, under which epoch: what a client (or the fault tests) can check;
    // set before a replay of an Idempotency-Key is answered, which carries them too.
    ctx.responseHeaders['X-Gristlite-Worker'] = ctx.engine.cluster.placement.self;
    ctx.responseHeaders['X-Gristlite-Epoch'] = String(doc.replica.epoch);
  }
  if (ctx.engine.idempotency.active) {
    // Beyond Grist: a repeat of a write with an Idempotency-Key answers what the first did (server.ts).
    const p = ctx.principal;
    const who = p.anonymous ? null : p.docKey ? `${p.user.id}/${p.docKey.id}` : p.user.id;
    const body = await ctx.json();
    ctx.engine.claimIdempotent(doc, requestFingerprint(who, ctx.method, `${ctx.path}?${ctx.query}`, body));
  }
  return {doc, grist: doc.grist.as(access, actorOf(ctx.principal), {docUrl}), access, meta, role, share};
}

/** A body schema with how Grist names its failures (see validate.ts). */
export interface BodySpec<S extends v.GenericSchema> {
  schema: S;
  /** Where paths start in messages: Grist's doc API says `body`, its webhook checks `value`. */
  prefix?: 'body' | 'value';
  names?: TypeNames;
}

type DocRouteSpec<S extends v.GenericSchema | undefined> = Omit<Route, 'handler' | 'body'> & {
  /** The access the caller needs; checked, then the document opened, before anything else. */
  need: Need;
  /** Owners reach the route although the document's access rules are broken (to repair them). */
  ownersDespiteBrokenRules?: boolean;
  /** The JSON body, checked after the access check (as Grist's middleware order has it). */
  body?: S extends v.GenericSchema ? BodySpec<S> : undefined;
  handler(
    ctx: RequestContext,
    doc: DocForRequest,
    body: S extends v.GenericSchema ? v.InferOutput<S> : undefined,
  ): Promise<HandlerResult>;
};

/**
 * A `/api/docs/:docId/...` route that declares what it needs: the pipeline checks the caller's
 * access, opens the document, checks the body against the declared schema (in Grist's words),
 * and hands the handler the open document and the typed body.
 */
export function docRoute<S extends v.GenericSchema | undefined = undefined>(spec: DocRouteSpec<S>): Route {
  const {need, body, handler, ownersDespiteBrokenRules, ...route} = spec;
  const check = body as BodySpec<v.GenericSchema> | undefined;
  return {
    ...route,
    ...(check ? {body: check.schema} : {}),
    handler: async (ctx) => {
      const doc = await openDocFor(ctx, need, {ownersDespiteBrokenRules});
      const current = route.revalidate ? revalidate(ctx, doc) : null;
      if (current) return current;
      const parsed = check ? validate(check.schema, await ctx.json(), check.prefix, check.names) : undefined;
      return handler(ctx, doc, parsed as S extends v.GenericSchema ? v.InferOutput<S> : undefined);
    },
  };
}
