/** Home operations on orgs (SPEC §3.1-3.5). */
import {asViewer, can, directRole} from '../access/index.js';
import {BadRequest, Forbidden, NotFound} from '../base/index.js';
import {isMergedOrgKey} from './access.js';
import {requireUser} from './authn.js';
import type {HomeParts} from './parts.js';
import type {OrgContext, Principal} from './principal.js';
import {Conflict, type Org, type Role} from './types.js';
import {checkDomain, checkKeys} from './validate.js';

export async function listOrgs(h: HomeParts, p: Principal, ctx: OrgContext, merged: boolean) {
  const orgs = p.anonymous ? [] : (await h.store.listOrgsForUsers(p.listIds)).filter((o) => h.access.shown(o));
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
  if (isMergedOrgKey(key) && p.anonymous) return h.shapes.anonymousOrg();
  // Grist's getOrg names the reason; its other org lookups just find nothing.
  if (isMergedOrgKey(key) && !h.settings.personalOrgs) throw new NotFound('Personal orgs are disabled');
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
  // Grist checks this first, so an anonymous caller hears 403 here too (ApiServer's POST /api/orgs).
  if (!h.settings.orgCreationAnyone && !h.auth.isInstallAdmin(p)) {
    throw new Forbidden('Only admins can create new teams');
  }
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

/** Grist's permission bits of each role (app/gen-server/lib/Permissions.ts); guests and members view. */
const ROLE_PERMS: Record<Role, number> = {owners: 63, editors: 15, viewers: 1, guests: 1, members: 1};

/**
 * `GET /api/session/access/all`: the caller's profile and every org they belong to, through a role
 * of their own on the org or on something in it (everyone@ shares do not count), each with
 * `accessOptions` per user instead of `access`; their personal org first as the merged `docs`
 * org (id 0), others' personal orgs left out, team sites by name. The anonymous caller gets at most
 * the org of the request's site. gristlite has one user per session, so one profile.
 */
export async function sessionAccessAll(h: HomeParts, p: Principal, ctx: OrgContext) {
  const u = p.user;
  const user = {id: u.id, email: u.email, name: u.name, picture: u.picture, anonymous: p.anonymous};
  let found = (await h.store.listOrgsForUsers(p.listIds)).filter((o) => h.access.shown(o));
  if (p.anonymous) {
    const ctxOrg = ctx === null || isMergedOrgKey(ctx) ? null : await h.access.contextOrg(p, ctx);
    found = found.filter((o) => o.id === ctxOrg?.id);
  }
  const options: {org: Org; role: Role}[] = [];
  for (const org of found) {
    if (org.ownerId !== null && org.ownerId !== u.id) continue;
    const acl = await h.store.getAcl('org', [String(org.id)]);
    const inner = async () => (await h.store.getAclInOrg(org.id, p.listIds)).some((e) => e.kind !== 'org');
    const role = directRole(acl, p.listIds) ?? ((await inner()) ? 'guests' : null);
    if (role) options.push({org, role});
  }
  options.sort(
    (a, b) => (a.org.ownerId === null ? 1 : 0) - (b.org.ownerId === null ? 1 : 0) || cmp(a.org.name, b.org.name),
  );
  const orgs = [];
  for (const {org, role} of options) {
    const {access, ...shape} = await h.shapes.org(org, null);
    const accessOptions = [{access: asViewer(role), id: u.id, email: u.email, perms: ROLE_PERMS[role], name: u.name}];
    orgs.push({...shape, ...(org.ownerId !== null ? {id: 0, domain: 'docs'} : {}), accessOptions});
  }
  return {users: [user], orgs};
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The live documents (neither they nor their workspace soft-deleted) of an org whose usage its
 * owner asks for (`GET /api/orgs/{org}/usage`; Grist's getOrgUsageSummary needs OWNER). The
 * merged `docs` org is the caller's personal org.
 */
export async function usageDocs(h: HomeParts, key: string, p: Principal, ctx: OrgContext): Promise<string[]> {
  const {org, role} = await h.access.orgFor(key, p, ctx, 'view');
  if (role !== 'owners') throw new Forbidden('access denied');
  const live = (await h.store.listWorkspaces(org.id)).filter((w) => !w.removedAt).map((w) => w.id);
  return (await h.store.listDocs(live)).filter((d) => !d.removedAt).map((d) => d.id);
}
