/** Access lists: GET and PATCH `.../access` on orgs, workspaces and docs (SPEC §2.5-2.6). */
import { asDocRole, can, effectiveRoles, inheritable } from '../access/index.js';
import { BadRequest, Forbidden } from '../errors.js';
import { DOC, ORG, WS, withoutPublic } from './access.js';
import type { HomeParts } from './parts.js';
import { ANON_EMAIL, EVERYONE_EMAIL, type OrgContext, type Principal } from './principal.js';
import type { AclChange, AclEntry, BasicRole, ResourceKind, Role } from './types.js';
import { parseAccessDelta } from './validate.js';

/** What non-owners get from GET .../access: themselves only; `public` when only public shares let them in. */
function personalView(h: HomeParts, p: Principal, maxInheritedRole: BasicRole | null | undefined, role: Role | null, onlyPublic: boolean) {
  const direct = p.anonymous ? [] : [p.user];
  return {
    personal: true,
    public: p.anonymous || onlyPublic,
    ...(maxInheritedRole !== undefined ? { maxInheritedRole } : {}),
    users: direct.map((u) => h.shapes.userAccess(u, { access: role, isMember: false })),
  };
}

/** An org member holds a role on the org itself other than `guests`. */
function isMember(orgAcl: readonly AclEntry[], userId: number): boolean {
  const role = orgAcl.find((e) => e.userId === userId)?.role ?? null;
  return role !== null && role !== 'guests';
}

export async function getOrgAccess(h: HomeParts, key: string, p: Principal, ctx: OrgContext) {
  const { org, role } = await h.access.orgFor(key, p, ctx, 'view');
  if (!can(role, 'aclEdit')) return personalView(h, p, undefined, role, (await h.access.orgRole(org, withoutPublic(p))) === null);
  const all = await h.store.getAclInOrg(org.id, null);
  const direct = new Map<number, Role>();
  for (const e of all) if (e.kind === 'org') direct.set(e.userId, e.role);
  for (const e of all) if (!direct.has(e.userId)) direct.set(e.userId, 'guests');
  const users = await h.shapes.usersById([...direct.keys()]);
  return {
    users: [...direct.entries()]
      .filter(([id]) => users.has(id))
      .map(([id, r]) => h.shapes.userAccess(users.get(id)!, { access: r, isMember: r !== 'guests' })),
  };
}

export async function getWorkspaceAccess(h: HomeParts, wid: number, p: Principal) {
  const { ws, org, chain, role } = await h.access.workspaceFor(wid, p, 'view');
  if (!can(role, 'aclEdit')) {
    const own = effectiveRoles((await h.access.wsChain(ws, withoutPublic(p))).chain, p.listIds).roles[WS];
    return personalView(h, p, ws.maxInheritedRole, role, own === null);
  }
  const all = await h.store.getAclInOrg(org.id, null);
  const docs = new Set((await h.store.listDocs([ws.id])).map((d) => d.id));
  const ids = new Set<number>();
  for (const e of all) {
    if (e.kind === 'org' || (e.kind === 'ws' && e.resourceId === String(ws.id)) || (e.kind === 'doc' && docs.has(e.resourceId))) ids.add(e.userId);
  }
  const users = await h.shapes.usersById([...ids]);
  const orgAcl = chain[ORG].acl;
  return {
    maxInheritedRole: ws.maxInheritedRole,
    users: [...ids]
      .filter((id) => users.has(id))
      .map((id) => {
        const own = chain[WS].acl.find((e) => e.userId === id)?.role ?? null;
        const orgRole = orgAcl.find((e) => e.userId === id)?.role ?? null;
        const guestHere = own === null && all.some((e) => e.userId === id && e.kind === 'doc' && docs.has(e.resourceId));
        return h.shapes.userAccess(users.get(id)!, {
          access: own ?? (guestHere ? 'guests' : null),
          parentAccess: inheritable(orgRole),
          isMember: isMember(orgAcl, id),
        });
      }),
  };
}

export async function getDocAccess(h: HomeParts, key: string, p: Principal, ctx: OrgContext) {
  const doc = await h.access.findDoc(key, p, ctx);
  const { chain, org, ws } = await h.access.docChain(doc, p);
  const role = h.access.rawDocRole(chain, p);
  if (!can(role, 'view')) throw new Forbidden('access denied');
  if (!can(role, 'aclEdit')) {
    const own = effectiveRoles((await h.access.docChain(doc, withoutPublic(p))).chain, p.listIds).roles[DOC];
    return personalView(h, p, doc.maxInheritedRole, asDocRole(role), own === null);
  }
  const all = await h.store.getAclInOrg(org.id, null);
  const ids = new Set<number>();
  for (const e of all) {
    if (e.kind === 'org' || (e.kind === 'ws' && e.resourceId === String(ws.id)) || (e.kind === 'doc' && e.resourceId === doc.id)) ids.add(e.userId);
  }
  const users = await h.shapes.usersById([...ids]);
  return {
    maxInheritedRole: doc.maxInheritedRole,
    users: [...ids]
      .filter((id) => users.has(id))
      .map((id) => {
        const r = effectiveRoles(chain.slice(0, 2), [id]).roles[WS];
        return h.shapes.userAccess(users.get(id)!, {
          access: chain[DOC].acl.find((e) => e.userId === id)?.role ?? null,
          parentAccess: inheritable(r),
          isMember: isMember(chain[ORG].acl, id),
        });
      }),
  };
}

/** PATCH .../access for any resource kind (SPEC §2.6). */
export async function updateAccess(
  h: HomeParts,
  kind: ResourceKind,
  target: { org?: string; wid?: number; doc?: string },
  p: Principal,
  ctx: OrgContext,
  body: unknown,
) {
  const delta = parseAccessDelta(kind, body);
  const hasMax = 'maxInheritedRole' in delta;

  // The caller's role on the resource decides what they may change.
  let role: Role | null;
  let resourceId: string;
  if (kind === 'org') {
    const { org } = await h.access.resolveOrg(target.org!, p, ctx);
    role = await h.access.orgRole(org, p);
    resourceId = String(org.id);
    const everyone = delta.users.get(EVERYONE_EMAIL);
    if (everyone && everyone.role !== null) throw new Forbidden('This user cannot share with everyone at top level');
  } else if (kind === 'ws') {
    ({ role } = await h.access.workspaceFor(target.wid!, p, 'view'));
    resourceId = String(target.wid);
  } else {
    const doc = await h.access.findDoc(target.doc!, p, ctx);
    role = h.access.rawDocRole((await h.access.docChain(doc, p)).chain, p);
    resourceId = doc.id;
  }
  if (!can(role, 'view')) throw new Forbidden('access denied');
  const self = p.user.email.toLowerCase();
  if (can(role, 'aclEdit')) {
    if (delta.users.has(self)) throw new BadRequest('Bad request: cannot update own permissions');
  } else {
    const onlySelfRemoval = !hasMax && delta.users.size === 1 && delta.users.get(self)?.role === null;
    if (!onlySelfRemoval) throw new Forbidden('access denied');
  }

  const changes: AclChange[] = [];
  for (const [norm, { email, role: r }] of delta.users) {
    if (r === null) {
      const u = await h.store.getUserByEmail(norm);
      if (u) changes.push({ userId: u.id, role: null });
    } else {
      const special = norm === EVERYONE_EMAIL ? h.special.everyone : norm === ANON_EMAIL ? h.special.anon : null;
      const u = special ?? (await h.auth.ensureUser(email));
      changes.push({ userId: u.id, role: r });
    }
  }
  if (hasMax) {
    const max = delta.maxInheritedRole!;
    if (max !== 'owners') changes.push({ userId: p.user.id, role: 'owners' });
    if (kind === 'ws') await h.store.updateWorkspace(Number(resourceId), { maxInheritedRole: max });
    else await h.store.updateDoc(resourceId, { maxInheritedRole: max });
  }
  await h.store.updateAcl(kind, resourceId, changes, { cascade: kind === 'org' });
  return null;
}
