/**
 * The one place that decides who may do what. Effective access follows SPEC §2: a direct role on a
 * resource, or the parent's inheritable role capped by the resource's `maxInheritedRole`.
 */
import type {AclEntry, BasicRole, Role} from '../home/types.js';

const STRENGTH: Record<Role, number> = {owners: 5, editors: 4, viewers: 3, members: 2, guests: 1};

/** What a principal may want to do to a resource; each role allows a set of them (SPEC §2.1). */
export type Action = 'view' | 'update' | 'add' | 'remove' | 'schemaEdit' | 'aclEdit';

/** Permission bits per role (SPEC §2.1). */
const ALLOWED: Record<Role, ReadonlySet<Action>> = {
  owners: new Set(['view', 'update', 'add', 'remove', 'schemaEdit', 'aclEdit']),
  editors: new Set(['view', 'update', 'add', 'remove']),
  viewers: new Set(['view']),
  members: new Set(['view']),
  guests: new Set(['view']),
};

/** Whether a role allows an action. */
export function can(role: Role | null, action: Action): boolean {
  return role !== null && ALLOWED[role].has(action);
}

/** The stronger of two roles (null counts as none). */
export function strongest(a: Role | null, b: Role | null): Role | null {
  if (a === null) return b;
  if (b === null) return a;
  return STRENGTH[a] >= STRENGTH[b] ? a : b;
}

/** The weaker of two roles (null counts as none). */
export function weakest(a: Role | null, b: Role | null): Role | null {
  if (a === null || b === null) return null;
  return STRENGTH[a] <= STRENGTH[b] ? a : b;
}

/** The part of a role that flows to children: members and guests inherit nothing. */
export function inheritable(role: Role | null): BasicRole | null {
  return role === 'owners' || role === 'editors' || role === 'viewers' ? role : null;
}

/**
 * The role a caller acts with, and the `access` every answer but the access lists shows: members
 * and guests hold only the view permission, so they act as viewers on a document, and Grist, which
 * names a role from its permission bits, shows `viewers` for them on orgs, workspaces and docs.
 */
export function asViewer(role: Role | null): Role | null {
  return role === 'members' || role === 'guests' ? 'viewers' : role;
}

/** Whether `role` is at least `min` (owners > editors > viewers). */
export function isRoleAtLeast(role: Role | null, wanted: Role): boolean {
  return role !== null && STRENGTH[role] >= STRENGTH[wanted];
}

/** Strongest direct role any of `userIds` holds in `acl` (entries of one resource). */
export function directRole(acl: readonly AclEntry[], userIds: readonly number[]): Role | null {
  let best: Role | null = null;
  for (const e of acl) if (userIds.includes(e.userId)) best = strongest(best, e.role);
  return best;
}

/** What one resource contributes to the computation. */
export interface ResourceAcl {
  acl: readonly AclEntry[];
  /** Workspaces and docs only; `undefined` on orgs. */
  maxInheritedRole?: BasicRole | null;
  /** True when the principal has a direct role on something inside (makes it a guest here). */
  hasInnerShare?: boolean;
}

/**
 * Effective role at each level of an org -> workspace -> doc chain for a set of user ids (a user plus
 * the public pseudo-users that apply to them). Returns one entry per level given, plus `parent`:
 * the inheritable role of the level above the last one (what `/access` calls parentAccess).
 */
export function effectiveRoles(
  chain: readonly ResourceAcl[],
  userIds: readonly number[],
): {roles: (Role | null)[]; parent: BasicRole | null} {
  const roles: (Role | null)[] = [];
  let parent: BasicRole | null = null;
  for (let i = 0; i < chain.length; i++) {
    const level = chain[i];
    const inherited = i === 0 ? null : weakest(parent, level.maxInheritedRole ?? null);
    let role = strongest(directRole(level.acl, userIds), inherited);
    if (role === null && level.hasInnerShare) role = 'guests';
    roles.push(role);
    if (i < chain.length - 1) parent = inheritable(role);
  }
  return {roles, parent: chain.length > 1 ? parent : null};
}
