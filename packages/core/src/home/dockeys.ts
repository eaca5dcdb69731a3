/**
 * Beyond Grist (issue 30 §2): document API keys. A key opens one document only, for a script or
 * an integration, with viewers' or editors' access, never more than its creator has at the time
 * of each request (access.ts `rawDocRole`), and stops when revoked, expired, or when its creator
 * loses access. Only its hash is kept (authn.ts).
 */
import {BadRequest, Forbidden, NotFound} from '../base/index.js';
import {makeApiKey} from '../base/index.js';
import {hashApiKey, requireUser} from './authn.js';
import type {HomeParts} from './parts.js';
import type {OrgContext, Principal} from './principal.js';
import type {DocApiKey} from './types.js';

/** Most keys one document holds (a new one beyond is 400): each is a standing credential to review. */
export const MAX_DOC_API_KEYS = 100;
const MAX_NAME = 255;
/** Keys a document API key has, so that they are told from users' keys in logs: `gld_` + 40 hex. */
const PREFIX = 'gld_';

function refuseKeyHolder(p: Principal): void {
  if (p.docKey) throw new Forbidden('A document API key cannot manage API keys');
}

/** POST /api/docs/{doc}/apikeys: owners and editors, up to their own role; the secret is shown once. */
export async function createDocApiKey(
  h: HomeParts,
  key: string,
  p: Principal,
  ctx: OrgContext,
  body: unknown,
): Promise<{id: number; key: string}> {
  requireUser(p);
  refuseKeyHolder(p);
  const {doc} = await h.access.docAccess(key, p, ctx, 'editors');
  const b = (body ?? {}) as {name?: unknown; access?: unknown; expiresAt?: unknown};
  if (typeof b.name !== 'string' || !b.name.trim() || b.name.length > MAX_NAME) {
    throw new BadRequest(`name must be a non-empty string of at most ${MAX_NAME} characters`);
  }
  // Editors and owners get here (docAccess); no key is an owner's.
  if (b.access === 'owners') throw new Forbidden(`A key cannot have owners' access (at most editors)`);
  if (b.access !== 'viewers' && b.access !== 'editors') {
    throw new BadRequest('access must be "viewers" or "editors"');
  }
  let expiresAt: string | null = null;
  if (b.expiresAt !== undefined && b.expiresAt !== null) {
    const at = typeof b.expiresAt === 'string' ? Date.parse(b.expiresAt) : NaN;
    if (!/^\d{4}-\d\d-\d\dT/.test(String(b.expiresAt)) || Number.isNaN(at)) {
      throw new BadRequest('expiresAt must be an ISO 8601 date and time');
    }
    if (at <= Date.now()) throw new BadRequest('expiresAt must be in the future');
    expiresAt = new Date(at).toISOString();
  }
  if ((await h.store.listDocApiKeys(doc.id)).length >= MAX_DOC_API_KEYS) {
    throw new BadRequest(`A document holds at most ${MAX_DOC_API_KEYS} API keys; delete one first`);
  }
  const secret = PREFIX + makeApiKey();
  const created = await h.store.createDocApiKey({
    docId: doc.id,
    name: b.name,
    access: b.access,
    createdBy: p.user.id,
    expiresAt,
    keyHash: hashApiKey(secret),
  });
  return {id: created.id, key: secret};
}

/** GET /api/docs/{doc}/apikeys: owners only, never the secrets. */
export async function listDocApiKeys(
  h: HomeParts,
  key: string,
  p: Principal,
  ctx: OrgContext,
): Promise<{apikeys: Omit<DocApiKey, 'docId'>[]}> {
  refuseKeyHolder(p);
  const {doc} = await h.access.docAccess(key, p, ctx, 'owners');
  const keys = await h.store.listDocApiKeys(doc.id);
  return {
    apikeys: keys.map((k) => ({
      id: k.id,
      name: k.name,
      access: k.access,
      createdBy: k.createdBy,
      createdAt: k.createdAt,
      expiresAt: k.expiresAt,
      lastUsedAt: k.lastUsedAt,
    })),
  };
}

/** DELETE /api/docs/{doc}/apikeys/{id}: owners, or the key's creator; revoked at once. */
export async function deleteDocApiKey(h: HomeParts, key: string, p: Principal, ctx: OrgContext, id: number) {
  requireUser(p);
  refuseKeyHolder(p);
  const {doc, role} = await h.access.docAccess(key, p, ctx, 'viewers');
  const found = (await h.store.listDocApiKeys(doc.id)).find((k) => k.id === id);
  if (!found) throw new NotFound('API key not found');
  if (role !== 'owners' && found.createdBy !== p.user.id) {
    throw new Forbidden('Only owners and its creator may delete an API key');
  }
  await h.store.deleteDocApiKey(doc.id, id);
}
