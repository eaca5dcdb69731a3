/**
 * The home API: orgs, workspaces, document metadata, access lists, users and keys. Every method
 * takes the calling principal and goes through `access/` for its decision.
 */
import { createHash } from 'node:crypto';
import { can, directRole, effectiveRoles, inheritable, strongest, type Action, type ResourceAcl } from '../access/index.js';
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../errors.js';
import { makeApiKey, makeId, nowIso } from '../ids.js';
import { ANON_EMAIL, EVERYONE_EMAIL, type OrgContext, type Principal } from './principal.js';
import {
  Conflict,
  type AclChange,
  type AclEntry,
  type BasicRole,
  type Doc,
  type HomeStore,
  type Org,
  type ResourceKind,
  type Role,
  type User,
  type Workspace,
} from './types.js';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const BASIC_ROLES = ['owners', 'editors', 'viewers'] as const;
const DOMAIN_BLOCKLIST = new Set([
  'admin', 'api', 'blog', 'current', 'dev', 'docs', 'documentation', 'grist', 'help', 'login', 'logout',
  'static', 'support', 'test', 'www', 'signin', 'signup', 'billing', 'status', 'new', 'app', 'mail',
]);
const DOMAIN_PREFIXES = ['docs-', 'o-', 'doc-worker-', '_', 'v1-'];
// A pragmatic RFC 5322 subset: no spaces or control characters, one @, a dotted domain.
const EMAIL_RE = /^[^\s@"()<>,;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const URL_ID_RE = /^[-a-z0-9]+$/i;

export function isValidEmail(email: string): boolean {
  return EMAIL_RE.test(email);
}

export function checkDomain(domain: string): void {
  const reason = !/^[a-z0-9][-a-z0-9]*$/.test(domain)
    ? 'invalid characters'
    : domain.length < 3 || domain.length > 63
      ? 'length must be between 3 and 63'
      : DOMAIN_PREFIXES.some((p) => domain.startsWith(p))
        ? 'reserved prefix'
        : DOMAIN_BLOCKLIST.has(domain)
          ? 'reserved name'
          : null;
  if (reason) throw new BadRequest(`Domain is not permitted: ${reason}`);
}

function sortedAlpha<T>(items: T[], key: (t: T) => string): T[] {
  return items.sort((a, b) => key(a).localeCompare(key(b)));
}

interface DocChain {
  org: Org;
  ws: Workspace;
  doc: Doc;
  chain: ResourceAcl[];
}

export interface AccessDelta {
  users?: Record<string, string | null>;
  maxInheritedRole?: string | null;
}

export class HomeService {
  private constructor(
    readonly store: HomeStore,
    readonly anon: User,
    readonly everyone: User,
  ) {}

  static async create(store: HomeStore): Promise<HomeService> {
    const anon = await ensureSpecial(store, ANON_EMAIL, 'Anonymous');
    const everyone = await ensureSpecial(store, EVERYONE_EMAIL, 'Everyone');
    return new HomeService(store, anon, everyone);
  }

  // ---------------------------------------------------------------- identity

  principalFor(user: User, viaApiKey: boolean): Principal {
    const anonymous = user.id === this.anon.id;
    return {
      user,
      anonymous,
      viaApiKey,
      accessIds: anonymous ? [user.id, this.everyone.id] : [user.id, this.everyone.id],
      listIds: [user.id],
    };
  }

  anonymousPrincipal(): Principal {
    return this.principalFor(this.anon, false);
  }

  /** Resolves an `Authorization` header value (or undefined) to a principal, as SPEC §1.2 says. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (authorization === undefined) return this.anonymousPrincipal();
    const m = /^(\S+)(?:\s+(.*))?$/.exec(authorization.trim());
    if (!m || m[1].toLowerCase() !== 'bearer') {
      throw new Unauthorized("Bad request: unsupported Authorization scheme, expected 'Bearer'");
    }
    const key = (m[2] ?? '').trim();
    const user = key ? await this.store.getUserByApiKeyHash(hashApiKey(key)) : null;
    if (!user || user.id === this.anon.id) throw new Unauthorized('Bad request: invalid API key');
    return this.principalFor(user, true);
  }

  /** Finds or creates a real user (with a personal org), as a login or an invitation does. */
  async ensureUser(email: string, name = ''): Promise<User> {
    const existing = await this.store.getUserByEmail(email);
    if (existing) return existing;
    try {
      return await this.store.createUser({ email, name, personalOrg: true });
    } catch (e) {
      if (e instanceof Conflict) return (await this.store.getUserByEmail(email))!;
      throw e;
    }
  }

  /** Sets a user's API key (a given one, or a new one) and returns it; only its hash is kept. */
  async setApiKey(userId: number, key: string = makeApiKey()): Promise<string> {
    await this.store.setApiKey(userId, hashApiKey(key), key.slice(0, 4));
    return key;
  }

  // ---------------------------------------------------------------- output shapes

  private userRef(u: User | null) {
    return u ? { id: u.id, ref: u.ref, name: u.name, picture: u.picture, type: 'login' } : null;
  }

  private orgDomain(org: Org): string {
    if (org.ownerId !== null) return `docs-${org.ownerId}`;
    return org.domain ?? `o-${org.id}`;
  }

  private async orgOut(org: Org, access: Role | null, extra: Record<string, unknown> = {}) {
    const owner = org.ownerId !== null ? await this.store.getUser(org.ownerId) : null;
    return {
      id: org.id,
      name: org.name,
      domain: this.orgDomain(org),
      host: org.host,
      access,
      owner: this.userRef(owner),
      createdAt: org.createdAt,
      updatedAt: org.updatedAt,
      ...extra,
    };
  }

  private docOut(doc: Doc, access: Role | null, isPublic: boolean) {
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

  private isPublic(acl: readonly AclEntry[]): boolean {
    return acl.some((e) => e.userId === this.everyone.id || e.userId === this.anon.id);
  }

  // ---------------------------------------------------------------- resolution

  /** Resolves an org key from a path (SPEC §1.1 table). `docs` gives the caller's personal org. */
  async resolveOrg(key: string, p: Principal, ctx: OrgContext): Promise<{ org: Org; merged: boolean }> {
    if (key === 'current') {
      if (ctx === null) throw new BadRequest('No organization chosen');
      key = ctx;
    }
    let org: Org | null = null;
    let merged = false;
    if (/^\d+$/.test(key)) org = await this.store.getOrg(Number(key));
    else if (key === 'docs') {
      merged = true;
      if (p.anonymous) throw new NotFound('organization not found');
      org = await this.store.getPersonalOrg(p.user.id);
    } else if (/^docs-\d+$/.test(key)) org = await this.store.getPersonalOrg(Number(key.slice(5)));
    else if (/^o-\d+$/.test(key)) org = await this.store.getOrg(Number(key.slice(2)));
    else org = await this.store.getOrgByDomain(key);
    if (!org) throw new NotFound('organization not found');
    return { org, merged };
  }

  private async orgChainLevel(org: Org, p: Principal): Promise<ResourceAcl> {
    const acl = await this.store.getAcl('org', [String(org.id)]);
    // Guest status (a share inside the org) matters only to callers with no role on the org itself,
    // so the org-wide ACL scan is skipped on the common path (every document request).
    if (directRole(acl, p.accessIds) !== null) return { acl };
    const inner = await this.store.getAclInOrg(org.id, p.accessIds);
    return { acl, hasInnerShare: inner.some((e) => e.kind !== 'org') };
  }

  async orgRole(org: Org, p: Principal): Promise<Role | null> {
    return effectiveRoles([await this.orgChainLevel(org, p)], p.accessIds).roles[0];
  }

  private async wsChain(ws: Workspace, p: Principal): Promise<{ org: Org; chain: ResourceAcl[] }> {
    const org = (await this.store.getOrg(ws.orgId))!;
    const [orgLevel, wsAcl, docs] = await Promise.all([
      this.orgChainLevel(org, p),
      this.store.getAcl('ws', [String(ws.id)]),
      this.store.listDocs([ws.id]),
    ]);
    const docAcl = await this.store.getAcl('doc', docs.map((d) => d.id));
    const wsLevel: ResourceAcl = {
      acl: wsAcl,
      maxInheritedRole: ws.maxInheritedRole,
      hasInnerShare: docAcl.some((e) => p.accessIds.includes(e.userId)),
    };
    return { org, chain: [orgLevel, wsLevel] };
  }

  async workspaceFor(wid: number, p: Principal, action: Action) {
    const ws = await this.store.getWorkspace(wid);
    if (!ws) throw new NotFound('workspace not found');
    const { org, chain } = await this.wsChain(ws, p);
    const role = effectiveRoles(chain, p.accessIds).roles[1];
    if (!can(role, action)) throw new Forbidden('access denied');
    return { ws, org, chain, role };
  }

  /** Finds a doc by id or urlId within the request's org context (SPEC §1.1 "Document ids"). */
  async findDoc(key: string, p: Principal, ctx: OrgContext): Promise<Doc> {
    let ctxOrg: Org | null = null;
    let merged = false;
    if (ctx !== null) {
      try {
        ({ org: ctxOrg, merged } = await this.resolveOrg(ctx, p, ctx));
      } catch (e) {
        if (e instanceof NotFound) throw new NotFound('document not found');
        throw e;
      }
    }
    let doc = await this.store.getDoc(key);
    if (!doc && URL_ID_RE.test(key)) {
      if (merged) {
        doc = await this.store.getDocByUrlId(key, null);
        if (doc && (await this.orgOfDoc(doc)).ownerId === null) doc = null;
      } else doc = await this.store.getDocByUrlId(key, ctxOrg ? ctxOrg.id : null);
    }
    if (!doc) throw new NotFound('document not found');
    if (ctxOrg && !merged && (await this.orgOfDoc(doc)).id !== ctxOrg.id) throw new NotFound('document not found');
    return doc;
  }

  private async orgOfDoc(doc: Doc): Promise<Org> {
    const ws = (await this.store.getWorkspace(doc.workspaceId))!;
    return (await this.store.getOrg(ws.orgId))!;
  }

  async docChain(doc: Doc, p: Principal): Promise<DocChain> {
    const ws = (await this.store.getWorkspace(doc.workspaceId))!;
    const org = (await this.store.getOrg(ws.orgId))!;
    const [orgLevel, wsAcl, docAcl] = await Promise.all([
      this.orgChainLevel(org, p),
      this.store.getAcl('ws', [String(ws.id)]),
      this.store.getAcl('doc', [doc.id]),
    ]);
    return {
      org,
      ws,
      doc,
      chain: [orgLevel, { acl: wsAcl, maxInheritedRole: ws.maxInheritedRole }, { acl: docAcl, maxInheritedRole: doc.maxInheritedRole }],
    };
  }

  /** The caller's effective role on a doc; members and guests count as viewers there. */
  async docRole(doc: Doc, p: Principal): Promise<Role | null> {
    const { chain } = await this.docChain(doc, p);
    const role = effectiveRoles(chain, p.accessIds).roles[2];
    return role === 'members' || role === 'guests' ? 'viewers' : role;
  }

  // ---------------------------------------------------------------- orgs

  async listOrgs(p: Principal, ctx: OrgContext, merged: boolean) {
    const orgs = p.anonymous ? [] : await this.store.listOrgsForUsers(p.listIds);
    let ctxOrg: Org | null = null;
    if (ctx !== null) {
      try {
        ctxOrg = (await this.resolveOrg(ctx, p, ctx)).org;
      } catch {
        ctxOrg = null;
      }
    }
    if (ctxOrg && !orgs.some((o) => o.id === ctxOrg!.id)) {
      const acl = await this.store.getAcl('org', [String(ctxOrg.id)]);
      if (this.isPublic(acl)) orgs.push(ctxOrg);
    }
    const out = [];
    for (const org of orgs) {
      const role = await this.orgRole(org, p);
      if (!role) continue;
      const acl = await this.store.getAcl('org', [String(org.id)]);
      const owner = org.ownerId !== null ? await this.store.getUser(org.ownerId) : null;
      out.push({ org, role, isPublic: this.isPublic(acl), ownerName: owner?.name ?? '' });
    }
    out.sort((a, b) => {
      const mineA = a.org.ownerId === p.user.id ? 0 : 1;
      const mineB = b.org.ownerId === p.user.id ? 0 : 1;
      return mineA - mineB || a.ownerName.localeCompare(b.ownerName) || a.org.name.localeCompare(b.org.name);
    });
    let result = [];
    for (const o of out) result.push(await this.orgOut(o.org, o.role, o.isPublic ? { public: true } : {}));
    if (merged) {
      const personal = result.filter((o) => o.owner !== null);
      const own = personal.find((o) => o.owner!.id === p.user.id) ?? personal[0];
      result = [...(own ? [{ ...own, id: 0, domain: 'docs' }] : []), ...result.filter((o) => o.owner === null)];
    }
    return result;
  }

  async getOrg(key: string, p: Principal, ctx: OrgContext) {
    if (key === 'docs' && p.anonymous) {
      return { id: 0, name: 'Anonymous', domain: 'docs', host: null, access: 'viewers', owner: null };
    }
    const { org, merged } = await this.resolveOrg(key, p, ctx);
    const role = await this.orgRole(org, p);
    if (!can(role, 'view')) throw new Forbidden('access denied');
    const extra: Record<string, unknown> = {};
    if (org.orgPrefs) extra.orgPrefs = org.orgPrefs;
    if (!p.anonymous) {
      const userOrgPrefs = await this.store.getPrefs(org.id, p.user.id);
      if (userOrgPrefs) extra.userOrgPrefs = userOrgPrefs;
    }
    const out = await this.orgOut(org, role, extra);
    return merged ? { ...out, id: 0, domain: 'docs' } : out;
  }

  async createOrg(p: Principal, body: { name?: unknown; domain?: unknown }) {
    if (p.anonymous) throw new Unauthorized('user not authorized');
    if (typeof body.name !== 'string' || !body.name) throw new BadRequest('Bad request: name required');
    const domain = body.domain === undefined || body.domain === null ? null : String(body.domain);
    if (domain !== null) checkDomain(domain);
    try {
      const org = await this.store.createOrg({ name: body.name, domain, ownerUserId: p.user.id, personal: false });
      return org.id;
    } catch (e) {
      if (e instanceof Conflict) throw new BadRequest('Domain already in use');
      throw e;
    }
  }

  async updateOrg(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    const allowed = ['name', 'domain', 'orgPrefs', 'userOrgPrefs', 'userPrefs', 'createdAt', 'updatedAt'];
    for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new BadRequest(`unrecognized property ${k}`);
    const { org } = await this.resolveOrg(key, p, ctx);
    const role = await this.orgRole(org, p);
    const structural = ['name', 'domain', 'orgPrefs'].some((k) => k in body);
    if (!can(role, structural ? 'schemaEdit' : 'view')) throw new Forbidden('access denied');
    if ('name' in body && typeof body.name !== 'string') throw new BadRequest('Bad request: name must be a string');
    if ('domain' in body) {
      if (org.ownerId !== null) throw new BadRequest('Cannot set a domain for a personal organization');
      if (typeof body.domain !== 'string') throw new BadRequest('Domain is not permitted: must be a string');
      checkDomain(body.domain);
    }
    for (const k of ['orgPrefs', 'userOrgPrefs', 'userPrefs']) {
      if (k in body && (typeof body[k] !== 'object' || Array.isArray(body[k]))) throw new BadRequest(`${k} must be an object`);
    }
    try {
      if (structural) {
        await this.store.updateOrg(org.id, {
          ...(body.name !== undefined ? { name: body.name as string } : {}),
          ...(body.domain !== undefined ? { domain: body.domain as string } : {}),
          ...(body.orgPrefs !== undefined ? { orgPrefs: body.orgPrefs as Record<string, unknown> | null } : {}),
        });
      }
    } catch (e) {
      if (e instanceof Conflict) throw new BadRequest('Domain already in use');
      throw e;
    }
    if (!p.anonymous && body.userOrgPrefs !== undefined) {
      await this.store.setPrefs(org.id, p.user.id, body.userOrgPrefs as Record<string, unknown> | null);
    }
    return null;
  }

  async deleteOrg(key: string, name: string, p: Principal, ctx: OrgContext): Promise<{ id: number; docIds: string[] }> {
    const { org } = await this.resolveOrg(key, p, ctx);
    const role = await this.orgRole(org, p);
    if (!can(role, 'view')) throw new Forbidden('access denied');
    if (name !== 'force-delete' && name !== org.domain && name !== org.name) {
      throw new BadRequest('Name does not match organization');
    }
    if (!can(role, 'remove') || !can(role, 'schemaEdit')) throw new Forbidden('access denied');
    const { docIds } = await this.store.deleteOrg(org.id);
    return { id: org.id, docIds };
  }

  // ---------------------------------------------------------------- workspaces

  /** Workspaces of an org visible to the caller, each with its visible docs (SPEC §3.8). */
  async listWorkspaces(key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
    const { org, merged } = await this.resolveOrg(key, p, ctx);
    const orgs = merged ? (await this.store.listOrgsForUsers(p.listIds)).filter((o) => o.ownerId !== null) : [org];
    const orgRole = await this.orgRole(org, p);
    if (!can(orgRole, 'view')) throw new Forbidden('access denied');
    const result = [];
    for (const o of orgs) result.push(...(await this.workspacesOf(o, p, showRemoved)));
    return sortedAlpha(result, (w) => w.name);
  }

  private async workspacesOf(org: Org, p: Principal, showRemoved: boolean) {
    const orgLevel = await this.orgChainLevel(org, p);
    const workspaces = await this.store.listWorkspaces(org.id);
    const docs = await this.store.listDocs(workspaces.map((w) => w.id));
    const [wsAcl, docAcl] = await Promise.all([
      this.store.getAcl('ws', workspaces.map((w) => String(w.id))),
      this.store.getAcl('doc', docs.map((d) => d.id)),
    ]);
    const owner = org.ownerId !== null ? this.userRef(await this.store.getUser(org.ownerId)) : null;
    const out = [];
    for (const ws of workspaces) {
      const wsDocs = docs.filter((d) => d.workspaceId === ws.id);
      const wsLevel: ResourceAcl = {
        acl: wsAcl.filter((e) => e.resourceId === String(ws.id)),
        maxInheritedRole: ws.maxInheritedRole,
        hasInnerShare: docAcl.some((e) => p.listIds.includes(e.userId) && wsDocs.some((d) => d.id === e.resourceId)),
      };
      const listed = this.listedRole([orgLevel, wsLevel], p, 1);
      if (!listed || Boolean(ws.removedAt) !== showRemoved) {
        if (!(showRemoved && listed && wsDocs.some((d) => d.removedAt))) continue;
      }
      const docsOut = [];
      for (const doc of wsDocs) {
        if (Boolean(doc.removedAt) !== showRemoved && !(showRemoved && ws.removedAt)) continue;
        const acl = docAcl.filter((e) => e.resourceId === doc.id);
        const role = this.listedRole([orgLevel, wsLevel, { acl, maxInheritedRole: doc.maxInheritedRole }], p, 2);
        if (!role) continue;
        docsOut.push(this.docOut(doc, role === 'members' || role === 'guests' ? 'viewers' : role, this.isPublic(acl)));
      }
      out.push({
        id: ws.id,
        name: ws.name,
        access: listed,
        isSupportWorkspace: false,
        owner,
        orgDomain: this.orgDomain(org),
        createdAt: ws.createdAt,
        updatedAt: ws.updatedAt,
        ...(ws.removedAt ? { removedAt: ws.removedAt } : {}),
        docs: docsOut,
      });
    }
    return out;
  }

  /** Role that makes a resource listed: computed from the caller's own shares only (not everyone@). */
  private listedRole(chain: ResourceAcl[], p: Principal, level: number): Role | null {
    const listed = effectiveRoles(chain, p.listIds).roles[level];
    if (!listed) return null;
    // The access shown is the effective one (public shares can raise it).
    return effectiveRoles(chain, p.accessIds).roles[level] ?? listed;
  }

  async createWorkspace(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    const { org } = await this.resolveOrg(key, p, ctx);
    const role = await this.orgRole(org, p);
    if (!can(role, 'view')) throw new Forbidden('access denied');
    if (typeof body.name !== 'string' || !body.name) throw new BadRequest('Bad request: name required');
    for (const k of Object.keys(body)) if (!['name', 'createdAt', 'updatedAt'].includes(k)) throw new BadRequest(`unrecognized property ${k}`);
    if (!can(role, 'add')) throw new Forbidden('access denied');
    const ws = await this.store.createWorkspace({ orgId: org.id, name: body.name, ownerUserId: p.user.id });
    return ws.id;
  }

  async getWorkspace(wid: number, p: Principal, showRemoved: boolean) {
    const { ws, org, role } = await this.workspaceFor(wid, p, 'view');
    // A soft-deleted workspace exists only for showRemoved, which shows a live one only if it
    // holds soft-deleted docs (SPEC §4.1, Grist's removedAt test).
    const hasRemoved = showRemoved && !ws.removedAt && (await this.store.listDocs([ws.id])).some((d) => d.removedAt);
    if (Boolean(ws.removedAt) !== showRemoved && !hasRemoved) throw new NotFound('workspace not found');
    const all = await this.workspacesOf(org, p, showRemoved);
    const listed = all.find((w) => w.id === ws.id);
    const owner = org.ownerId !== null ? this.userRef(await this.store.getUser(org.ownerId)) : null;
    return {
      id: ws.id,
      name: ws.name,
      access: role,
      createdAt: ws.createdAt,
      updatedAt: ws.updatedAt,
      isSupportWorkspace: false,
      docs: listed?.docs ?? [],
      org: {
        id: org.id,
        name: org.name,
        domain: this.orgDomain(org),
        host: org.host,
        owner,
        createdAt: org.createdAt,
        updatedAt: org.updatedAt,
      },
    };
  }

  async updateWorkspace(wid: number, p: Principal, body: Record<string, unknown>) {
    for (const k of Object.keys(body)) if (!['name', 'createdAt', 'updatedAt'].includes(k)) throw new BadRequest(`unrecognized property ${k}`);
    // Grist lets editors rename workspaces (UPDATE, not SCHEMA_EDIT; see its ApiServerAccess test).
    await this.workspaceFor(wid, p, 'update');
    if ('name' in body) {
      if (typeof body.name !== 'string' || !body.name) throw new BadRequest('Bad request: name required');
      await this.store.updateWorkspace(wid, { name: body.name });
    }
    return wid;
  }

  async deleteWorkspace(wid: number, p: Principal): Promise<{ id: number; docIds: string[] }> {
    const { role } = await this.workspaceFor(wid, p, 'view');
    if (!can(role, 'remove') || !can(role, 'schemaEdit')) throw new Forbidden('access denied');
    const { docIds } = await this.store.deleteWorkspace(wid);
    return { id: wid, docIds };
  }

  async setWorkspaceRemoved(wid: number, p: Principal, removed: boolean) {
    const { role } = await this.workspaceFor(wid, p, 'view');
    if (!can(role, 'remove') || !can(role, 'schemaEdit')) throw new Forbidden('access denied');
    await this.store.updateWorkspace(wid, { removedAt: removed ? nowIso() : null });
    return null;
  }

  // ---------------------------------------------------------------- docs

  private checkUrlId(urlId: unknown): string {
    if (typeof urlId !== 'string' || !URL_ID_RE.test(urlId) || urlId.toLowerCase() === 'new') throw new BadRequest('invalid urlId');
    return urlId;
  }

  /** Creates the doc's home record. The caller (Engine) then creates the file. */
  async createDoc(wid: number, p: Principal, body: Record<string, unknown>): Promise<Doc> {
    const { ws, org, role } = await this.workspaceFor(wid, p, 'view');
    const allowed = ['name', 'urlId', 'isPinned', 'options', 'type', 'createdAt', 'updatedAt'];
    if (typeof body.name !== 'string' || !body.name) throw new BadRequest('Bad request: name required');
    for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new BadRequest(`unrecognized property ${k}`);
    if (!can(role, 'add')) throw new Forbidden('access denied');
    if (ws.removedAt) throw new BadRequest('Cannot add document to a deleted workspace');
    const id = makeId();
    // An explicit urlId, or Grist's default: the first 12 characters of the id, longer while that
    // prefix is taken (the store decides what "taken" means: see HomeStore.updateDoc).
    const candidates: string[] = [];
    if (body.urlId !== undefined && body.urlId !== null) {
      const urlId = this.checkUrlId(body.urlId);
      if (await this.store.getDoc(urlId)) throw new BadRequest('urlId already in use as document id');
      candidates.push(urlId);
    } else {
      for (let n = 12; n <= id.length; n++) {
        const candidate = id.slice(0, n);
        if (!(await this.store.getDocByUrlId(candidate, org.id))) candidates.push(candidate);
      }
    }
    const type = this.checkDocType(body);
    for (let i = 0; ; i++) {
      try {
        return await this.store.createDoc({
          id,
          workspaceId: ws.id,
          name: body.name,
          urlId: candidates[i] ?? null,
          isPinned: body.isPinned === true,
          options: this.mergeOptions(null, body.options),
          type,
          ownerUserId: p.user.id,
        });
      } catch (e) {
        if (!(e instanceof Conflict)) throw e;
        if (body.urlId !== undefined && body.urlId !== null) throw new BadRequest('urlId already in use');
        if (i >= candidates.length) throw e;
      }
    }
  }

  private checkDocType(body: Record<string, unknown>): string | null {
    if (!('type' in body) || body.type === null || body.type === undefined) return null;
    if (body.type !== 'template' && body.type !== 'tutorial') {
      throw new BadRequest("Bad Request. 'type' key authorized values : 'template', 'tutorial' or null");
    }
    return body.type;
  }

  private mergeOptions(current: Record<string, unknown> | null, patch: unknown): Record<string, unknown> | null {
    if (patch === undefined) return current;
    if (patch === null) return null;
    if (typeof patch !== 'object' || Array.isArray(patch)) throw new BadRequest('options must be an object');
    const out: Record<string, unknown> = { ...(current ?? {}) };
    for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
      if (!['description', 'icon', 'openMode', 'externalId', 'tutorial', 'appearance', 'allowIndex', 'proposedChanges'].includes(k)) {
        throw new BadRequest(`unrecognized property options.${k}`);
      }
      if (k === 'openMode' && v !== null && !['default', 'fork', 'view'].includes(v as string)) throw new BadRequest('invalid openMode');
      if (k === 'icon' && v !== null && (typeof v !== 'string' || !/^https:\/\/grist-static\.com\//.test(v))) {
        throw new BadRequest('icon must be a grist-static URL');
      }
      if (v === null) delete out[k];
      else if ((k === 'tutorial' || k === 'appearance') && typeof v === 'object' && typeof out[k] === 'object') {
        out[k] = { ...(out[k] as object), ...(v as object) };
      } else out[k] = v;
    }
    return Object.keys(out).length ? out : null;
  }

  /** Access to a doc for doc-level endpoints, with Grist's doc-API error wording (SPEC §1.5). */
  async docAccess(key: string, p: Principal, ctx: OrgContext, need: 'viewers' | 'editors' | 'owners', opts: { allowRemoved?: boolean } = {}) {
    const doc = await this.findDoc(key, p, ctx);
    const role = await this.docRole(doc, p);
    const removed = doc.removedAt || (await this.store.getWorkspace(doc.workspaceId))?.removedAt;
    if (removed && !opts.allowRemoved) throw new NotFound('Document is deleted');
    if (!role) throw new Forbidden('No view access');
    if (need !== 'viewers' && role === 'viewers') throw new Forbidden('No write access');
    if (need === 'owners' && role !== 'owners') throw new Forbidden('No owner access');
    return { doc, role };
  }

  async getDoc(key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
    const doc = await this.findDoc(key, p, ctx);
    const { org, ws, chain } = await this.docChain(doc, p);
    // A doc in a soft-deleted workspace counts as removed too.
    if (Boolean(doc.removedAt || ws.removedAt) !== showRemoved) throw new NotFound('document not found');
    const roles = effectiveRoles(chain, p.accessIds).roles;
    const role = roles[2] === 'members' || roles[2] === 'guests' ? 'viewers' : roles[2];
    if (!role) throw new Forbidden('access denied');
    const owner = org.ownerId !== null ? this.userRef(await this.store.getUser(org.ownerId)) : null;
    return {
      ...this.docOut(doc, role, this.isPublic(chain[2].acl)),
      workspace: {
        id: ws.id,
        name: ws.name,
        createdAt: ws.createdAt,
        updatedAt: ws.updatedAt,
        isSupportWorkspace: false,
        owner,
        org: {
          id: org.id,
          name: org.name,
          domain: this.orgDomain(org),
          host: org.host,
          owner,
          createdAt: org.createdAt,
          updatedAt: org.updatedAt,
        },
      },
    };
  }

  private async docForHomeAction(key: string, p: Principal, ctx: OrgContext, actions: Action[]) {
    const doc = await this.findDoc(key, p, ctx);
    const { chain, org, ws } = await this.docChain(doc, p);
    const role = effectiveRoles(chain, p.accessIds).roles[2];
    if (!actions.every((a) => can(role, a))) throw new Forbidden('access denied');
    return { doc, org, ws, role };
  }

  async updateDoc(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    const type = this.checkDocType(body);
    const allowed = ['name', 'urlId', 'isPinned', 'type', 'options', 'createdAt', 'updatedAt', 'appearance'];
    for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new BadRequest(`unrecognized property ${k}`);
    const { doc } = await this.docForHomeAction(key, p, ctx, ['schemaEdit']);
    if ('name' in body && (typeof body.name !== 'string' || !body.name)) throw new BadRequest('Bad request: name required');
    if ('isPinned' in body && typeof body.isPinned !== 'boolean') throw new BadRequest('isPinned must be a boolean');
    const urlId = body.urlId === undefined ? undefined : body.urlId === null ? null : this.checkUrlId(body.urlId);
    if (urlId) {
      const other = await this.store.getDoc(urlId);
      if (other && other.id !== doc.id) throw new BadRequest('urlId already in use as document id');
    }
    try {
      await this.store.updateDoc(doc.id, {
        ...(body.name !== undefined ? { name: body.name as string } : {}),
        ...(urlId !== undefined ? { urlId } : {}),
        ...(body.isPinned !== undefined ? { isPinned: body.isPinned as boolean } : {}),
        ...('type' in body ? { type } : {}),
        ...(body.options !== undefined ? { options: this.mergeOptions(doc.options, body.options) } : {}),
      });
    } catch (e) {
      if (e instanceof Conflict) throw new BadRequest('urlId already in use');
      throw e;
    }
    return doc.id;
  }

  /** Hard delete of the home record; returns the id so that the caller removes the file. */
  async deleteDoc(key: string, p: Principal, ctx: OrgContext): Promise<string> {
    const { doc } = await this.docAccess(key, p, ctx, 'editors', { allowRemoved: true });
    await this.docForHomeAction(doc.id, p, null, ['remove', 'schemaEdit']);
    await this.store.deleteDoc(doc.id);
    return doc.id;
  }

  async setDocRemoved(key: string, p: Principal, ctx: OrgContext, removed: boolean) {
    const doc = await this.findDoc(key, p, ctx);
    await this.docForHomeAction(doc.id, p, null, ['remove', 'schemaEdit']);
    await this.store.updateDoc(doc.id, { removedAt: removed ? nowIso() : null });
    return null;
  }

  async setDocPinned(key: string, p: Principal, ctx: OrgContext, pinned: boolean) {
    const doc = await this.findDoc(key, p, ctx);
    const org = await this.orgOfDoc(doc);
    if (!can(await this.orgRole(org, p), 'update')) throw new Forbidden('access denied');
    await this.store.updateDoc(doc.id, { isPinned: pinned });
    return null;
  }

  async moveDoc(key: string, p: Principal, ctx: OrgContext, workspace: unknown) {
    const wid = typeof workspace === 'number' ? workspace : typeof workspace === 'string' && /^\d+$/.test(workspace) ? Number(workspace) : NaN;
    if (!Number.isInteger(wid)) throw new BadRequest(`workspace parameter cannot be understood as an integer: ${workspace}`);
    const { doc, role } = await this.docForHomeAction(key, p, ctx, ['view']);
    if (role !== 'owners') throw new Forbidden('access denied');
    const dest = await this.store.getWorkspace(wid);
    if (!dest) throw new NotFound('workspace not found');
    if (dest.id === doc.workspaceId) throw new BadRequest('Bad request: doc is already in destination workspace');
    await this.workspaceFor(wid, p, 'add');
    await this.store.moveDoc(doc.id, wid);
    return doc.id;
  }

  // ---------------------------------------------------------------- access lists

  private async usersOut(ids: number[]) {
    return new Map((await this.store.getUsers(ids)).map((u) => [u.id, u]));
  }

  private userAccessOut(u: User, extra: Record<string, unknown>) {
    return {
      id: u.id,
      name: u.name,
      email: u.email,
      ref: u.ref,
      picture: u.picture,
      ...(u.id === this.anon.id ? { anonymous: true } : {}),
      ...extra,
    };
  }

  async getOrgAccess(key: string, p: Principal, ctx: OrgContext) {
    const { org } = await this.resolveOrg(key, p, ctx);
    const role = await this.orgRole(org, p);
    if (!can(role, 'view')) throw new Forbidden('access denied');
    if (!can(role, 'aclEdit')) return this.personalView(p, undefined, role, (await this.orgRole(org, this.own(p))) === null);
    const all = await this.store.getAclInOrg(org.id, null);
    const direct = new Map<number, Role>();
    for (const e of all) if (e.kind === 'org') direct.set(e.userId, e.role);
    for (const e of all) if (!direct.has(e.userId)) direct.set(e.userId, 'guests');
    const users = await this.usersOut([...direct.keys()]);
    return {
      users: [...direct.entries()]
        .filter(([id]) => users.has(id))
        .map(([id, r]) => this.userAccessOut(users.get(id)!, { access: r, isMember: r !== 'guests' })),
    };
  }

  /** The caller without public shares: tells whether their access is only public. */
  private own(p: Principal): Principal {
    return { ...p, accessIds: p.listIds };
  }

  /** What non-owners get from GET .../access: themselves only; `public` when only public shares let them in. */
  private async personalView(p: Principal, maxInheritedRole: BasicRole | null | undefined, role: Role | null, onlyPublic: boolean) {
    const direct = p.anonymous ? [] : [p.user];
    return {
      personal: true,
      public: p.anonymous || onlyPublic,
      ...(maxInheritedRole !== undefined ? { maxInheritedRole } : {}),
      users: direct.map((u) => this.userAccessOut(u, { access: role, isMember: false })),
    };
  }

  async getWorkspaceAccess(wid: number, p: Principal) {
    const { ws, org, chain, role } = await this.workspaceFor(wid, p, 'view');
    if (!can(role, 'aclEdit')) {
      const own = effectiveRoles((await this.wsChain(ws, this.own(p))).chain, p.listIds).roles[1];
      return this.personalView(p, ws.maxInheritedRole, role, own === null);
    }
    const all = await this.store.getAclInOrg(org.id, null);
    const docs = new Set((await this.store.listDocs([ws.id])).map((d) => d.id));
    const ids = new Set<number>();
    for (const e of all) {
      if (e.kind === 'org' || (e.kind === 'ws' && e.resourceId === String(ws.id)) || (e.kind === 'doc' && docs.has(e.resourceId))) ids.add(e.userId);
    }
    const users = await this.usersOut([...ids]);
    const orgAcl = chain[0].acl;
    return {
      maxInheritedRole: ws.maxInheritedRole,
      users: [...ids]
        .filter((id) => users.has(id))
        .map((id) => {
          const own = chain[1].acl.find((e) => e.userId === id)?.role ?? null;
          const orgRole = orgAcl.find((e) => e.userId === id)?.role ?? null;
          const guestHere = own === null && all.some((e) => e.userId === id && e.kind === 'doc' && docs.has(e.resourceId));
          return this.userAccessOut(users.get(id)!, {
            access: own ?? (guestHere ? 'guests' : null),
            parentAccess: inheritable(orgRole),
            isMember: orgRole !== null && orgRole !== 'guests',
          });
        }),
    };
  }

  async getDocAccess(key: string, p: Principal, ctx: OrgContext) {
    const doc = await this.findDoc(key, p, ctx);
    const { chain, org, ws } = await this.docChain(doc, p);
    const { roles } = effectiveRoles(chain, p.accessIds);
    const role = roles[2];
    if (!can(role, 'view')) throw new Forbidden('access denied');
    if (!can(role, 'aclEdit')) {
      const own = effectiveRoles((await this.docChain(doc, this.own(p))).chain, p.listIds).roles[2];
      return this.personalView(p, doc.maxInheritedRole, role === 'members' || role === 'guests' ? 'viewers' : role, own === null);
    }
    const all = await this.store.getAclInOrg(org.id, null);
    const ids = new Set<number>();
    for (const e of all) {
      if (e.kind === 'org' || (e.kind === 'ws' && e.resourceId === String(ws.id)) || (e.kind === 'doc' && e.resourceId === doc.id)) ids.add(e.userId);
    }
    const users = await this.usersOut([...ids]);
    return {
      maxInheritedRole: doc.maxInheritedRole,
      users: [...ids]
        .filter((id) => users.has(id))
        .map((id) => {
          const r = effectiveRoles(chain.slice(0, 2), [id]).roles[1];
          const orgRole = chain[0].acl.find((e) => e.userId === id)?.role ?? null;
          return this.userAccessOut(users.get(id)!, {
            access: chain[2].acl.find((e) => e.userId === id)?.role ?? null,
            parentAccess: inheritable(r),
            isMember: orgRole !== null && orgRole !== 'guests',
          });
        }),
    };
  }

  /** PATCH .../access for any resource kind (SPEC §2.6). */
  async updateAccess(kind: ResourceKind, target: { org?: string; wid?: number; doc?: string }, p: Principal, ctx: OrgContext, body: unknown) {
    const delta = (body as { delta?: AccessDelta } | null)?.delta;
    if (delta === undefined || delta === null) throw new BadRequest('Bad request: missing permission delta');
    if (typeof delta !== 'object' || Array.isArray(delta)) throw new BadRequest('Bad request: invalid permission delta');
    const hasUsers = delta.users !== undefined;
    const hasMax = 'maxInheritedRole' in delta;
    if (kind === 'org' ? !hasUsers || hasMax : !hasUsers && !hasMax) throw new BadRequest('Bad request: invalid permission delta');
    if (hasUsers && (typeof delta.users !== 'object' || delta.users === null || Array.isArray(delta.users))) {
      throw new BadRequest('Bad request: invalid permission delta');
    }
    const validRoles: readonly string[] = kind === 'org' ? [...BASIC_ROLES, 'members'] : BASIC_ROLES;
    // Merge case-insensitive duplicates: the strongest role wins, the first sorted spelling is kept.
    const merged = new Map<string, { email: string; role: Role | null }>();
    for (const email of Object.keys(delta.users ?? {}).sort()) {
      const role = (delta.users as Record<string, unknown>)[email];
      if (role !== null && (typeof role !== 'string' || !validRoles.includes(role))) throw new BadRequest(`Invalid user role ${role}`);
      if (role !== null && !isValidEmail(email)) throw new BadRequest('Invalid email address included');
      const norm = email.toLowerCase();
      const prev = merged.get(norm);
      const r = role as Role | null;
      merged.set(norm, { email: prev?.email ?? email, role: prev ? strongest(prev.role, r) : r });
    }
    if (hasMax && delta.maxInheritedRole !== null && !(BASIC_ROLES as readonly unknown[]).includes(delta.maxInheritedRole)) {
      throw new BadRequest(`Invalid maxInheritedRole ${delta.maxInheritedRole}`);
    }
    if ([...merged.keys()].some((e) => e === EVERYONE_EMAIL) && [...merged.keys()].some((e) => e === ANON_EMAIL)) {
      throw new BadRequest('this user cannot share with everyone and anonymous');
    }

    // The caller's role on the resource decides what they may change.
    let role: Role | null;
    let resourceId: string;
    if (kind === 'org') {
      const { org } = await this.resolveOrg(target.org!, p, ctx);
      role = await this.orgRole(org, p);
      resourceId = String(org.id);
      const everyone = merged.get(EVERYONE_EMAIL);
      if (everyone && everyone.role !== null) throw new Forbidden('This user cannot share with everyone at top level');
    } else if (kind === 'ws') {
      ({ role } = await this.workspaceFor(target.wid!, p, 'view'));
      resourceId = String(target.wid);
    } else {
      const doc = await this.findDoc(target.doc!, p, ctx);
      const { chain } = await this.docChain(doc, p);
      role = effectiveRoles(chain, p.accessIds).roles[2];
      resourceId = doc.id;
    }
    if (!can(role, 'view')) throw new Forbidden('access denied');
    const self = p.user.email.toLowerCase();
    if (can(role, 'aclEdit')) {
      if (merged.has(self)) throw new BadRequest('Bad request: cannot update own permissions');
    } else {
      const onlySelfRemoval = !hasMax && merged.size === 1 && merged.has(self) && merged.get(self)!.role === null;
      if (!onlySelfRemoval) throw new Forbidden('access denied');
    }

    const changes: AclChange[] = [];
    for (const [norm, { email, role: r }] of merged) {
      if (r === null) {
        const u = await this.store.getUserByEmail(norm);
        if (u) changes.push({ userId: u.id, role: null });
      } else {
        const special = norm === EVERYONE_EMAIL ? this.everyone : norm === ANON_EMAIL ? this.anon : null;
        const u = special ?? (await this.ensureUser(email));
        changes.push({ userId: u.id, role: r });
      }
    }
    if (hasMax) {
      const max = delta.maxInheritedRole as BasicRole | null;
      if (max !== 'owners') changes.push({ userId: p.user.id, role: 'owners' });
      if (kind === 'ws') await this.store.updateWorkspace(Number(resourceId), { maxInheritedRole: max });
      else await this.store.updateDoc(resourceId, { maxInheritedRole: max });
    }
    await this.store.updateAcl(kind, resourceId, changes, { cascade: kind === 'org' });
    return null;
  }

  // ---------------------------------------------------------------- users

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

  async updateName(p: Principal, name: unknown) {
    if (p.anonymous) throw new Unauthorized('user not authorized');
    if (typeof name !== 'string') throw new BadRequest('Name expected in the body');
    await this.store.updateUser(p.user.id, { name });
  }

  /** GET apikey: a masked form only (decision 2); `""` when there is no key. */
  async getApiKey(p: Principal): Promise<string> {
    if (p.anonymous) throw new Unauthorized('user not authorized');
    const u = await this.store.getUser(p.user.id);
    return u?.apiKeyPrefix ? `${u.apiKeyPrefix}...` : '';
  }

  async createApiKey(p: Principal, force: boolean): Promise<string> {
    if (p.anonymous) throw new Unauthorized('user not authorized');
    const u = await this.store.getUser(p.user.id);
    if (u?.apiKeyPrefix && !force) throw new BadRequest('An apikey is already set, use `{force: true}` to override it.');
    return this.setApiKey(p.user.id);
  }

  async deleteApiKey(p: Principal) {
    if (p.anonymous) throw new Unauthorized('user not authorized');
    await this.store.setApiKey(p.user.id, null, null);
  }

  async deleteUser(userId: number, p: Principal, body: unknown): Promise<{ docIds: string[] }> {
    const name = (body as { name?: unknown } | null)?.name;
    if (name === undefined || name === null) throw new BadRequest('to confirm deletion of a user, provide their name');
    const user = await this.store.getUser(userId);
    if (!user || user.id === this.anon.id || user.id === this.everyone.id) throw new NotFound('user not found');
    if (p.anonymous || p.user.id !== userId) throw new Forbidden('not permitted to delete this user');
    if (name && name !== user.name) throw new BadRequest(`user name did not match ('${name}' vs '${user.name}')`);
    return this.store.deleteUser(userId);
  }
}

async function ensureSpecial(store: HomeStore, email: string, name: string): Promise<User> {
  const found = await store.getUserByEmail(email);
  if (found) return found;
  try {
    return await store.createUser({ email, name, personalOrg: false });
  } catch (e) {
    if (e instanceof Conflict) return (await store.getUserByEmail(email))!;
    throw e;
  }
}
