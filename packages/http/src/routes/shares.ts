/**
 * Shares and published forms (issue 41, `docs/forms-and-shares.md`).
 *
 * - Which routes a caller through a share link (`/api/s/<key>/...`) reaches (D98): the form's
 *   description, the record routes and the uploads (D101) a form's page uses; the rest answer 403.
 * - How many requests one share key may make (D99: `GRISTLITE_SHARE_RATE_LIMIT` a minute, and
 *   bodies of at most `GRISTLITE_SHARE_MAX_BODY_BYTES`).
 * - `GET /api/docs/{doc}/shares` (beyond Grist, D95): a document's shares with their keys and
 *   public URLs, for its owners; Grist gives the key to its own web client over its websocket.
 */
import {Forbidden, type OpenDoc, orgUrlName, TooManyRequests} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {docRoute, requestOrigin} from './doc-common.js';

/** The routes a share link reaches (`METHOD path`); the rest answer 403 through a share. */
const SHARE_ROUTES = new Set([
  'GET /api/docs/:docId/forms/:vsId',
  'GET /api/docs/:docId/tables',
  'GET /api/docs/:docId/tables/:tableId/columns',
  'GET /api/docs/:docId/tables/:tableId/records',
  'POST /api/docs/:docId/tables/:tableId/records',
  'GET /api/docs/:docId/tables/:tableId/data',
  'POST /api/docs/:docId/tables/:tableId/data',
  // The files of a form's Attachments field (Grist's form page uploads them first; D101).
  'POST /api/docs/:docId/attachments',
]);

/**
 * Refuses a route a share link does not reach (D98), and writes to metadata tables through the
 * ones it does (cell comments, attachments' rows: the share's rules govern user tables only).
 */
export function checkShareRoute(method: string, path: string, tableId: string | undefined): void {
  if (!SHARE_ROUTES.has(`${method} ${path}`) || (method !== 'GET' && tableId?.startsWith('_grist'))) {
    throw new Forbidden('This endpoint is not available through a share link');
  }
}

/**
 * An upload through a share (D101): only a share whose published forms ask for an Attachments
 * column takes files. Grist takes them through any share.
 */
export function checkShareUpload(doc: OpenDoc, linkId: string): void {
  const rules = doc.shareRules();
  const row = rules?.shares.find((r) => r.linkId === linkId);
  if (!row || !rules?.takesAttachments.has(row.id)) {
    throw new Forbidden('Blocked by share: the published form asks for no attachments');
  }
}

/** The largest upload through a share: its setting, never above the server's. */
export function shareUploadLimit(opts: {maxUploadBytes: number; shareMaxUploadBytes?: number}): number {
  return Math.min(opts.maxUploadBytes, opts.shareMaxUploadBytes ?? SHARE_MAX_UPLOAD_BYTES);
}

/** Default requests a minute through one share key (GRISTLITE_SHARE_RATE_LIMIT). */
export const SHARE_RATE_LIMIT = 60;
/** Default largest body through a share key (GRISTLITE_SHARE_MAX_BODY_BYTES): 256 KiB. */
export const SHARE_MAX_BODY_BYTES = 256 * 1024;
/** Default largest upload through a share key (GRISTLITE_SHARE_MAX_UPLOAD_BYTES): 10 MiB. */
export const SHARE_MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Share keys whose buckets are kept at once (the oldest dropped beyond). */
const MAX_BUCKETS = 10_000;

/**
 * A token bucket per share key: `perMinute` requests a minute, in bursts of at most `perMinute`.
 * Every request through a key takes a token, reads included (an anonymous caller's reads cost as
 * much as anyone's); none left answers 429. Kept per process, for at most MAX_BUCKETS keys.
 */
export class ShareRateLimiter {
  private readonly buckets = new Map<string, {tokens: number; at: number}>();
  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): void {
    if (this.perMinute <= 0) return;
    const now = this.now();
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key); // re-inserted as the most recent
      b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
      b.at = now;
    } else {
      b = {tokens: this.perMinute, at: now};
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(key, b);
    if (b.tokens < 1) {
      throw new TooManyRequests('Too many requests through this share link - try again later');
    }
    b.tokens -= 1;
  }
}

/** One share as the owners' listing shows it. */
interface ShareListing {
  linkId: string;
  key: string;
  options: Record<string, unknown>;
  /** The share's API root: `<base>/o/<org>/api/s/<key>`. */
  url: string;
  /** The forms the share publishes: each section, with Grist's public form page and its API description. */
  forms: Array<{sectionId: number; url: string; apiUrl: string}>;
}

export const shareRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/shares',
    tag: 'docs',
    summary: "Beyond Grist: the document's shares, with their keys and public URLs (owners)",
    need: 'owners',
    handler: async (ctx, {doc, meta}): Promise<{shares: ShareListing[]}> => {
      // The home store's copy is made current first (as after a write to _grist_Shares).
      await ctx.engine.syncShares(doc);
      const stored = await ctx.engine.home.store.listShares(meta.id);
      const org = await ctx.engine.home.access.orgOfDoc(meta);
      const base = `${ctx.engine.publicUrl ?? requestOrigin(ctx)}/o/${orgUrlName(org)}`;
      const rules = doc.shareRules();
      const rows = new Map((rules?.shares ?? []).map((r) => [r.linkId, r.id]));
      return {
        shares: stored.map((s) => {
          const ref = rows.get(s.linkId);
          const sections = ref !== undefined ? [...(rules?.formSections.get(ref) ?? [])].sort((a, b) => a - b) : [];
          const api = `${base}/api/s/${encodeURIComponent(s.key)}`;
          return {
            linkId: s.linkId,
            key: s.key,
            options: s.options,
            url: api,
            forms: sections.map((id) => ({
              sectionId: id,
              url: `${base}/forms/${encodeURIComponent(s.key)}/${id}`,
              apiUrl: `${api}/forms/${id}`,
            })),
          };
        }),
      };
    },
  }),
];
