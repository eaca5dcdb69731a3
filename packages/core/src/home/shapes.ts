/**
 * Output shapes: the JSON objects the home API answers with, shaped as Grist's (SPEC §3). Reads the
 * store only to fill in related records (an org's owner); decides nothing about access.
 */
import type { SpecialUsers } from './authn.js';
import type { Principal } from './principal.js';
import type { AclEntry, Doc, HomeStore, Org, Role, User, Workspace } from './types.js';

export class HomeShapes {
  constructor(
    private readonly store: HomeStore,
    private readonly special: SpecialUsers,
  ) {}

  userRef(u: User | null) {
    return u ? { id: u.id, ref: u.ref, name: u.name, picture: u.picture, type: 'login' } : null;
  }

  /** A personal org's domain is `docs-<owner id>`; an org without a domain is `o-<id>`. */
  orgDomain(org: Org): string {
    if (org.ownerId !== null) return `docs-${org.ownerId}`;
    return org.domain ?? `o-${org.id}`;
  }

  async orgOwner(org: Org) {
    return org.ownerId !== null ? this.userRef(await this.store.getUser(org.ownerId)) : null;
  }

  /** An org as listed or fetched on its own. */
  async org(org: Org, access: Role | null, extra: Record<string, unknown> = {}) {
    return {
      id: org.id,
      name: org.name,
      domain: this.orgDomain(org),
      host: org.host,
      access,
      owner: await this.orgOwner(org),
      createdAt: org.createdAt,
      updatedAt: org.updatedAt,
      ...extra,
    };
  }

  /** An org embedded in a workspace or doc answer (no `access`). */
  embeddedOrg(org: Org, owner: ReturnType<HomeShapes['userRef']>) {
    return {
      id: org.id,
      name: org.name,
      domain: this.orgDomain(org),
      host: org.host,
      owner,
      createdAt: org.createdAt,
      updatedAt: org.updatedAt,
    };
  }

  /** A workspace as listed in an org's workspace list. */
  listedWorkspace<D>(ws: Workspace, org: Org, access: Role | null, owner: ReturnType<HomeShapes['userRef']>, docs: D[]) {
    return {
      id: ws.id,
      name: ws.name,
      access,
      isSupportWorkspace: false,
      owner,
      orgDomain: this.orgDomain(org),
      createdAt: ws.createdAt,
      updatedAt: ws.updatedAt,
      ...(ws.removedAt ? { removedAt: ws.removedAt } : {}),
      docs,
    };
  }

  doc(doc: Doc, access: Role | null, isPublic: boolean) {
    return {
      id: doc.id,
      name: doc.name,
      access,
      isPinned: doc.isPinned,
      urlId: doc.urlId,
      trunkId: null,
      type: doc.type,
      createdAt: doc.createdAt,
      updatedAt: doc.updatedAt,
      ...(doc.removedAt ? { removedAt: doc.removedAt } : {}),
      ...(doc.options ? { options: doc.options } : {}),
      ...(isPublic ? { public: true } : {}),
      forks: [],
    };
  }

  /** A resource is public when everyone@ or anon@ holds a role on it. */
  isPublic(acl: readonly AclEntry[]): boolean {
    return acl.some((e) => e.userId === this.special.everyone.id || e.userId === this.special.anon.id);
  }

  /** One user of an access list. */
  userAccess<E extends Record<string, unknown>>(u: User, extra: E) {
    return {
      id: u.id,
      name: u.name,
      email: u.email,
      ref: u.ref,
      picture: u.picture,
      ...(u.id === this.special.anon.id ? { anonymous: true } : {}),
      ...extra,
    };
  }

  async usersById(ids: number[]): Promise<Map<number, User>> {
    return new Map((await this.store.getUsers(ids)).map((u) => [u.id, u]));
  }

  profile(p: Principal) {
    const u = p.user;
    return {
      id: u.id,
      email: u.email,
      name: u.name,
      picture: u.picture,
      ref: u.ref,
      ...(p.anonymous ? { anonymous: true } : { allowGoogleLogin: true }),
    };
  }
}
