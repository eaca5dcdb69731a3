/** Home operations on orgs (SPEC §3.1-3.5). */
import {asViewer, can, directRole} from '../access/index.js';
import {BadRequest, Forbidden} from '../errors.js';
import {requireUser} from './authn.js';
import type {HomeParts} from './parts.js';
import type {OrgContext, Principal} from './principal.js';
import {Conflict} from './types.js';
import {checkDomain, checkKeys} from './validate.js';

export async function listOrgs(h: HomeParts, p: Principal, ctx: OrgContext, merged: boolean) {
  const orgs = p.anonymous ? [] : await h.store.listOrgsForUsers(p.listIds);
  const ctxOrg = await h.access.contextOrg(p, ctx);
  if (ctxOrg && !orgs.some((o) => o.id === ctxOrg.id)) {
    const acl = await h.store.getAcl('org', [String(ctxOrg.id)]);
    if (h.shapes.isPublic(acl)) orgs.push(ctxOrg);
  }
  const out = [];
  for (const org of orgs) {
    const role = await h.access.orgRole(org, p);
    if (!role) continue;
    const acl = await h.store.getAcl('org', [String(org.id)]);
    const owner = org.ownerId !== null ? await h.store.getUser(org.ownerId) : null;
    out.push({org, role, isPublic: h.shapes.isPublic(acl), ownerName: owner?.name ?? ''});
  }
  out.sort((a, b) => {
    const mineA = a.org.ownerId === p.user.id ? 0 : 1;
    const mineB = b.org.ownerId === p.user.id ? 0 : 1;
    return mineA - mineB || a.ownerName.localeCompare(b.ownerName) || a.org.name.localeCompare(b.org.name);
  });
  let result = [];
  for (const o of out) result.push(await h.shapes.org(o.org, asViewer(o.role), o.isPublic ? {public: true} : {}));
  if (merged) {
    const personal = result.filter((o) => o.owner !== null);
    const own = personal.find((o) => o.owner!.id === p.user.id) ?? personal[0];
    result = [...(own ? [{...own, id: 0, domain: 'docs'}] : []), ...result.filter((o) => o.owner === null)];
  }
  return result;
}

export async function getOrg(h: HomeParts, key: string, p: Principal, ctx: OrgContext) {
  if (key === 'docs' && p.anonymous) return h.shapes.anonymousOrg();
  const {org, merged, role} = await h.access.orgFor(key, p, ctx, 'view');
  // Grist's billing manager is the org's creator; gristlite keeps no creator, so its owners (decision H1).
  const isManager = !p.anonymous && directRole(await h.store.getAcl('org', [String(org.id)]), p.listIds) === 'owners';
  const extra: Record<string, unknown> = {billingAccount: h.shapes.billingAccount(org, {isManager})};
  if (org.orgPrefs) extra.orgPrefs = org.orgPrefs;
  if (!p.anonymous) {
    const userOrgPrefs = await h.store.getPrefs(org.id, p.user.id);
    if (userOrgPrefs) extra.userOrgPrefs = userOrgPrefs;
  }
  const out = await h.shapes.org(org, asViewer(role), extra);
  return merged ? {...out, id: 0, domain: 'docs'} : out;
}

export async function createOrg(h: HomeParts, p: Principal, body: {name?: unknown; domain?: unknown}) {
  requireUser(p);
  if (typeof body.name !== 'string' || !body.name) throw new BadRequest('Bad request: name required');
  const domain = body.domain === undefined || body.domain === null ? null : body.domain;
  if (domain !== null && typeof domain !== 'string') throw new BadRequest('Domain is not permitted: must be a string');
  if (domain !== null) checkDomain(domain);
  try {
    const org = await h.store.createOrg({name: body.name, domain, ownerUserId: p.user.id, personal: false});
    return org.id;
  } catch (e) {
    if (e instanceof Conflict) throw new BadRequest('Domain already in use');
    throw e;
  }
}

export async function updateOrg(
  h: HomeParts,
  key: string,
  p: Principal,
  ctx: OrgContext,
  body: Record<string, unknown>,
) {
  checkKeys(body, ['name', 'domain', 'orgPrefs', 'userOrgPrefs', 'userPrefs', 'createdAt', 'updatedAt']);
  const structural = ['name', 'domain', 'orgPrefs'].some((k) => k in body);
  const {org} = await h.access.orgFor(key, p, ctx, structural ? 'schemaEdit' : 'view');
  if ('name' in body && typeof body.name !== 'string') throw new BadRequest('Bad request: name must be a string');
  if ('domain' in body) {
    if (org.ownerId !== null) throw new BadRequest('Cannot set a domain for a personal organization');
    if (typeof body.domain !== 'string') throw new BadRequest('Domain is not permitted: must be a string');
    checkDomain(body.domain);
  }
  for (const k of ['orgPrefs', 'userOrgPrefs', 'userPrefs']) {
    if (k in body && (typeof body[k] !== 'object' || Array.isArray(body[k])))
      throw new BadRequest(`${k} must be an object`);
  }
  try {
    if (structural) {
      await h.store.updateOrg(org.id, {
        ...(body.name !== undefined ? {name: body.name as string} : {}),
        ...(body.domain !== undefined ? {domain: body.domain as string} : {}),
        ...(body.orgPrefs !== undefined ? {orgPrefs: body.orgPrefs as Record<string, unknown> | null} : {}),
      });
    }
  } catch (e) {
    if (e instanceof Conflict) throw new BadRequest('Domain already in use');
    throw e;
  }
  if (!p.anonymous && body.userOrgPrefs !== undefined) {
    await h.store.setPrefs(org.id, p.user.id, body.userOrgPrefs as Record<string, unknown> | null);
  }
  return null;
}

export async function deleteOrg(
  h: HomeParts,
  key: string,
  name: string,
  p: Principal,
  ctx: OrgContext,
): Promise<{id: number; docIds: string[]}> {
  const {org, role} = await h.access.orgFor(key, p, ctx, 'view');
  if (name !== 'force-delete' && name !== org.domain && name !== org.name) {
    throw new BadRequest('Name does not match organization');
  }
  if (!can(role, 'remove') || !can(role, 'schemaEdit')) throw new Forbidden('access denied');
  const {docIds} = await h.store.deleteOrg(org.id);
  return {id: org.id, docIds};
}
