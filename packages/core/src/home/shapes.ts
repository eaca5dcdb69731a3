/**
 * Output shapes: the JSON objects the home API answers with, shaped as Grist's (SPEC §3). Reads the
 * store only to fill in related records (an org's owner); decides nothing about access.
 */
import type {SpecialUsers} from './authn.js';
import type {Principal} from './principal.js';
import type {AclEntry, Doc, HomeStore, Org, Role, User, Workspace} from './types.js';

/**
 * The product self-hosted Grist gives every site: its server sets GRIST_DEFAULT_PRODUCT=Free, and
 * the first migration creates that product first (id 1); its features are Grist's `freeAllFeatures`.
 */
export const FREE_PRODUCT = {id: 1, name: 'Free', features: {workspaces: true, vanityDomain: true}} as const;

/** Grist's answer for the anonymous caller's `docs` org: a virtual billing account on the `anonymous` plan (its personalFree features). */
const ANONYMOUS_BILLING = {
  id: 0,
  individual: true,
  product: {
    name: 'anonymous',
    features: {
      workspaces: true,
      maxSharesPerWorkspace: 0,
      maxSharesPerDoc: 2,
      snapshotWindow: {count: 30, unit: 'days'},
      baseMaxRowsPerDocument: 5000,
      baseMaxApiUnitsPerDocumentPerDay: 5000,
      baseMaxDataSizePerDocument: 5000 * 2 * 1024,
      baseMaxAttachmentsBytesPerDocument: 1024 * 1024 * 1024,
      maxAttachmentsBytesPerOrg: 50 * 1024 * 1024 * 1024,
      gracePeriodDays: 14,
      baseMaxAssistantCalls: 100,
    },
  },
  stripePlanId: '',
  isManager: false,
  inGoodStanding: true,
  features: {},
};

export class HomeShapes {
  constructor(
    private readonly store: HomeStore,
    private readonly special: SpecialUsers,
  ) {}

  /** A user as Grist embeds one (an org's owner): its entity's columns, `createdAt` included. */
  userRef(u: User | null) {
    return u ? {id: u.id, ref: u.ref, name: u.name, picture: u.picture, type: 'login', createdAt: u.createdAt} : null;
  }

  /**
   * An org's billing account as self-hosted Grist has it: one per org (created with it, so its id
   * is the org's here), on the Free product, never paid. `forCaller` adds what Grist computes for
   * the caller on `GET /api/orgs/{org}`: `isManager` (decision H1) and `paid`.
   */
  billingAccount(org: Org, forCaller?: {isManager: boolean}) {
    return {
      id: org.id,
      individual: org.ownerId !== null,
      inGoodStanding: true,
      status: null,
      externalId: null,
      externalOptions: null,
      paymentLink: null,
      ...(forCaller ? {isManager: forCaller.isManager, paid: false} : {}),
      features: null,
      stripePlanId: null,
      product: FREE_PRODUCT,
    };
  }

  /** The anonymous caller's `docs` org, which no store holds (Grist builds it the same way). */
  anonymousOrg() {
    const anon = this.special.anon;
    const now = new Date().toISOString();
    return {
      id: 0,
      createdAt: now,
      updatedAt: now,
      domain: 'docs',
      name: 'Anonymous',
      owner: {id: anon.id, email: anon.email, name: anon.name, picture: anon.picture, ref: anon.ref, anonymous: true},
      access: 'viewers',
      billingAccount: ANONYMOUS_BILLING,
      host: null,
    };
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

  /**
   * An org embedded in a workspace or doc answer. A doc's carries the caller's `access` to the org
   * and its billing account (Grist's document query computes both); a workspace's neither.
   */
  embeddedOrg(org: Org, owner: ReturnType<HomeShapes['userRef']>, doc?: {access: Role | null; withBilling: boolean}) {
    return {
      id: org.id,
      name: org.name,
      domain: this.orgDomain(org),
      host: org.host,
      ...(doc ? {access: doc.access} : {}),
      owner,
      createdAt: org.createdAt,
      updatedAt: org.updatedAt,
      ...(doc?.withBilling ? {billingAccount: this.billingAccount(org)} : {}),
    };
  }

  /** A workspace as listed in an org's workspace list. */
  listedWorkspace<D>(
    ws: Workspace,
    org: Org,
    access: Role | null,
    owner: ReturnType<HomeShapes['userRef']>,
    docs: D[],
  ) {
    return {
      id: ws.id,
      name: ws.name,
      access,
      isSupportWorkspace: false,
      owner,
      orgDomain: this.orgDomain(org),
      createdAt: ws.createdAt,
      updatedAt: ws.updatedAt,
      ...(ws.removedAt ? {removedAt: ws.removedAt} : {}),
      docs,
    };
  }

  /**
   * A doc as listed or fetched. `withForks`: Grist joins the caller's forks (`forks: []` here, as
   * gristlite makes none) on `GET /api/docs/{doc}` and org workspace lists, for signed-in callers
   * only; `GET /api/workspaces/{wid}` lists docs without the key.
   */
  doc(doc: Doc, access: Role | null, isPublic: boolean, withForks: boolean) {
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
      ...(doc.removedAt ? {removedAt: doc.removedAt} : {}),
      ...(doc.options ? {options: doc.options} : {}),
      ...(isPublic ? {public: true} : {}),
      ...(withForks ? {forks: []} : {}),
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
      ...(u.id === this.special.anon.id ? {anonymous: true} : {}),
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
      // Grist adds allowGoogleLogin (true unless a user option says otherwise) for everyone.
      ...(p.anonymous ? {anonymous: true} : {}),
      allowGoogleLogin: true,
    };
  }
}
