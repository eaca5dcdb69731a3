/** Access lists: GET and PATCH `.../access` on orgs, workspaces and docs (SPEC §2.5-2.6). */
import {can, inheritable, strongest, weakest} from '../access/index.js';
import {BadRequest, Forbidden} from '../base/index.js';
import type {HomeParts} from './parts.js';
import {ANON_EMAIL, EVERYONE_EMAIL, type OrgContext, type Principal} from './principal.js';
import type {AclChange, AclEntry, BasicRole, ResourceKind, Role} from './types.js';
import {parseAccessDelta} from './validate.js';

/**
 * One user of an access list, with the fields Grist's UserAccessData has: `access` (the role on
 * this resource itself), `parentAccess` (what it inherits, before this resource's
 * maxInheritedRole) and `isMember` (a role on the org other than guests).
 */
interface Entry {
  id: number;
  access: Role | null;
  parentAccess?: BasicRole | null;
  isMember: boolean;
}

/**
 * The org's ACL (every share inside it), read once per access list and indexed, so that a list
 * costs one pass over the org's shares rather than one per user.
 */
class OrgShares {
  private readonly roles = new Map<string, Role>();
  /** Every user with a share in the org, with the docs shared with them directly. */
  private readonly docs = new Map<number, Set<string>>();

  constructor(all: readonly AclEntry[]) {
    for (const e of all) {
      const key = `${e.kind}:${e.resourceId}:${e.userId}`;
      this.roles.set(key, strongest(this.roles.get(key) ?? null, e.role)!);
      if (!this.docs.has(e.userId)) this.docs.set(e.userId, new Set());
      if (e.kind === 'doc') this.docs.get(e.userId)!.add(e.resourceId);
    }
  }

  /** Everyone with any role in the org, each once: Grist lists all of the org's users. */
  userIds(): number[] {
    return [...this.docs.keys()];
  }

  direct(kind: ResourceKind, resourceId: string, userId: number): Role | null {
    return this.roles.get(`${kind}:${resourceId}:${userId}`) ?? null;
  }

  /** The org role counting guests: anyone with a share inside the org is at least a guest. */
  orgRole(orgId: number, userId: number): Role | null {
    return this.direct('org', String(orgId), userId) ?? (this.docs.has(userId) ? 'guests' : null);
  }

  /** The workspace role counting guests (a share on one of its docs). */
  wsRole(wsId: number, docIds: ReadonlySet<string>, userId: number): Role | null {
    const own = this.direct('ws', String(wsId), userId);
    return own ?? ([...(this.docs.get(userId) ?? [])].some((d) => docIds.has(d)) ? 'guests' : null);
  }
}

function isMemberRole(orgRole: Role | null): boolean {
  return orgRole !== null && orgRole !== 'guests';
}

/** Grist's getRealAccess: the stronger of the own role and the inherited one capped by maxInheritedRole. */
function realAccess(e: Entry, maxInheritedRole: BasicRole | null): Role | null {
  return strongest(e.access, weakest(e.parentAccess ?? null, maxInheritedRole));
}

async function answer(h: HomeParts, entries: Entry[], extra: Record<string, unknown>) {
  const users = await h.shapes.usersById(entries.map((e) => e.id));
  return {
    ...extra,
    users: entries.filter((e) => users.has(e.id)).map(({id, ...fields}) => h.shapes.userAccess(users.get(id)!, fields)),
  };
}

/** The caller's own entry (none for the anonymous caller, or one let in by public shares only). */
function own(entries: Entry[], p: Principal): Entry | undefined {
  return p.anonymous ? undefined : entries.find((e) => e.id === p.user.id);
}

/**
 * Org and workspace lists (Grist's _filterAccessData): owners see everyone; anyone else sees
 * their own entry only, `public` when they hold no role of their own.
 */
async function ownersSeeAll(
  h: HomeParts,
  p: Principal,
  entries: Entry[],
  maxInheritedRole: BasicRole | null,
  extra: Record<string, unknown>,
) {
  const me = own(entries, p);
  const real = me ? realAccess(me, maxInheritedRole) : null;
  if (real === 'owners') return answer(h, entries, extra);
  return answer(h, me ? [me] : [], {personal: true, public: !real, ...extra});
}

export async function getOrgAccess(h: HomeParts, key: string, p: Principal, ctx: OrgContext) {
  const {org} = await h.access.orgFor(key, p, ctx, 'view');
  const shares = new OrgShares(await h.store.getAclInOrg(org.id, null));
  const entries = shares.userIds().map((id) => {
    const access = shares.orgRole(org.id, id);
    return {id, access, isMember: isMemberRole(access)};
  });
  return ownersSeeAll(h, p, entries, null, {});
}

export async function getWorkspaceAccess(h: HomeParts, wid: number, p: Principal) {
  const {ws, org} = await h.access.workspaceFor(wid, p, 'view');
  const shares = new OrgShares(await h.store.getAclInOrg(org.id, null));
  const docIds = new Set((await h.store.listDocs([ws.id])).map((d) => d.id));
  const entries = shares.userIds().map((id) => ({
    id,
    access: shares.wsRole(ws.id, docIds, id),
    parentAccess: inheritable(shares.direct('org', String(org.id), id)),
    isMember: isMemberRole(shares.orgRole(org.id, id)),
  }));
  return ownersSeeAll(h, p, entries, ws.maxInheritedRole, {maxInheritedRole: ws.maxInheritedRole});
}

/**
 * A document's list follows Grist's getDocAccess: editors and owners see the users who can view
 * the doc (an owner of the workspace also those who can view the workspace; an owner of the org
 * everyone), `personal` unless they may change access; viewers and public callers see themselves.
 */
export async function getDocAccess(h: HomeParts, key: string, p: Principal, ctx: OrgContext) {
  const doc = await h.access.findDoc(key, p, ctx);
  const {chain, org, ws} = await h.access.docChain(doc, p);
  if (!can(h.access.rawDocRole(chain, p), 'view')) throw new Forbidden('access denied');
  const shares = new OrgShares(await h.store.getAclInOrg(org.id, null));
  const docIds = new Set((await h.store.listDocs([ws.id])).map((d) => d.id));
  const orgBasic = (id: number) => inheritable(shares.direct('org', String(org.id), id));
  const entries: Entry[] = shares.userIds().map((id) => ({
    id,
    access: shares.direct('doc', doc.id, id),
    parentAccess: inheritable(
      strongest(inheritable(shares.direct('ws', String(ws.id), id)), weakest(orgBasic(id), ws.maxInheritedRole)),
    ),
    isMember: isMemberRole(shares.orgRole(org.id, id)),
  }));
  const max = doc.maxInheritedRole;
  const me = own(entries, p);
  const real = me ? realAccess(me, max) : null;
  const canViewDoc = (e: Entry) => realAccess(e, max) !== null;
  const canViewWs = (e: Entry) =>
    realAccess(
      {id: e.id, access: shares.wsRole(ws.id, docIds, e.id), parentAccess: orgBasic(e.id), isMember: e.isMember},
      ws.maxInheritedRole,
    ) !== null;
  if (!me || !(real === 'owners' || real === 'editors')) {
    return answer(h, me ? [me] : [], {personal: true, public: !real, maxInheritedRole: max});
  }
  const listed =
    orgBasic(me.id) === 'owners'
      ? entries
      : me.parentAccess === 'owners'
        ? entries.filter((e) => canViewDoc(e) || canViewWs(e))
        : entries.filter(canViewDoc);
  return answer(h, listed, {...(real === 'owners' ? {} : {personal: true, public: false}), maxInheritedRole: max});
}

/** PATCH .../access for any resource kind (SPEC §2.6). */
export async function updateAccess(
  h: HomeParts,
  kind: ResourceKind,
  target: {org?: string; wid?: number; doc?: string},
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
    const {org} = await h.access.resolveOrg(target.org!, p, ctx);
    role = await h.access.orgRole(org, p);
    resourceId = String(org.id);
    const everyone = delta.users.get(EVERYONE_EMAIL);
    if (everyone && everyone.role !== null) throw new Forbidden('This user cannot share with everyone at top level');
  } else if (kind === 'ws') {
    ({role} = await h.access.workspaceFor(target.wid!, p, 'view'));
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
  for (const [norm, {email, role: r}] of delta.users) {
    if (r === null) {
      const u = await h.store.getUserByEmail(norm);
      if (u) changes.push({userId: u.id, role: null});
    } else {
      const special = norm === EVERYONE_EMAIL ? h.special.everyone : norm === ANON_EMAIL ? h.special.anon : null;
      const u = special ?? (await h.auth.ensureUser(email));
      changes.push({userId: u.id, role: r});
    }
  }
  if (hasMax) {
    const max = delta.maxInheritedRole!;
    if (max !== 'owners') changes.push({userId: p.user.id, role: 'owners'});
    if (kind === 'ws') await h.store.updateWorkspace(Number(resourceId), {maxInheritedRole: max});
    else await h.store.updateDoc(resourceId, {maxInheritedRole: max});
  }
  await h.store.updateAcl(kind, resourceId, changes, {cascade: kind === 'org'});
  return null;
}
