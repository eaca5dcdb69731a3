/**
 * Access decisions for the home API: resolves org, workspace and document keys to records and
 * computes the caller's role on them through `access/`. No output shapes and no writes here.
 */
import {asViewer, can, directRole, effectiveRoles, type Action, type ResourceAcl} from '../access/index.js';
import {BadRequest, Forbidden, NotFound} from '../base/index.js';
import type {SpecialUsers} from './authn.js';
import type {OrgContext, Principal} from './principal.js';
import type {OrgSettings} from './settings.js';
import type {AclEntry, Doc, HomeStore, Org, Role, Workspace} from './types.js';

/** Grist's urlId alphabet (SPEC §1.1 "Document ids"). */
export const URL_ID_RE = /^[-a-z0-9]+$/i;

/** Whether an org key names Grist's merged personal org: `docs`, or id 0 (HomeDBManager.isMergedOrg). */
export function isMergedOrgKey(key: string): boolean {
  return key === 'docs' || /^0+$/.test(key);
}

export interface DocChain {
  org: Org;
  ws: Workspace;
  doc: Doc;
  chain: ResourceAcl[];
}

/** Levels of an org -> workspace -> doc chain, as indexes into `effectiveRoles(...).roles`. */
export const ORG = 0;
export const WS = 1;
export const DOC = 2;

export class HomeAccess {
  constructor(
    private readonly store: HomeStore,
    private readonly special: SpecialUsers,
    private readonly settings: OrgSettings,
  ) {}

  /** Whether an org is listed and addressable: with GRIST_PERSONAL_ORGS=false, personal orgs are not. */
  shown(org: Org): boolean {
    return this.settings.personalOrgs || org.ownerId === null;
  }

  /**
   * Whether shares inside a workspace or org (`inner`, entries of any users) make the caller its
   * guest. As Grist's guest groups (`_repairOrgGuests`, `_repairWorkspaceGuests` through
   * `filterEveryone`): an everyone@ share makes no guests unless anon@ is shared there too.
   */
  private guestOf(inner: readonly AclEntry[], p: Principal): boolean {
    const everyone = this.special.everyone.id;
    const withEveryone = inner.some((e) => e.userId === this.special.anon.id);
    return inner.some((e) => p.accessIds.includes(e.userId) && (e.userId !== everyone || withEveryone));
  }

  /**
   * Resolves an org key from a path (SPEC §1.1 table). `docs` gives the caller's personal org.
   * With GRIST_PERSONAL_ORGS=false a personal org is not found (Grist's `_orgs` filter), unless
   * `anyOrg`: a document's org context, which Grist's document lookup does not filter.
   */
  async resolveOrg(key: string, p: Principal, ctx: OrgContext, anyOrg = false): Promise<{org: Org; merged: boolean}> {
    if (key === 'current') {
      if (ctx === null) throw new BadRequest('No organization chosen');
      key = ctx;
    }
    let org: Org | null = null;
    let merged = false;
    if (isMergedOrgKey(key)) {
      merged = true;
      if (p.anonymous) throw new NotFound('organization not found');
      if (!this.settings.personalOrgs && !anyOrg) throw new NotFound('organization not found');
      org = await this.store.getPersonalOrg(p.user.id);
    } else if (/^\d+$/.test(key)) org = await this.store.getOrg(Number(key));
    else if (/^docs-\d+$/.test(key)) org = await this.store.getPersonalOrg(Number(key.slice(5)));
    else if (/^o-\d+$/.test(key)) org = await this.store.getOrg(Number(key.slice(2)));
    else org = await this.store.getOrgByDomain(key);
    if (!org || !(anyOrg || this.shown(org))) throw new NotFound('organization not found');
    return {org, merged};
  }

  /** The org named by the request context, or null when there is none or it does not resolve. */
  async contextOrg(p: Principal, ctx: OrgContext): Promise<Org | null> {
    if (ctx === null) return null;
    try {
      return (await this.resolveOrg(ctx, p, ctx)).org;
    } catch {
      return null;
    }
  }

  async orgChainLevel(org: Org, p: Principal): Promise<ResourceAcl> {
    const acl = await this.store.getAcl('org', [String(org.id)]);
    // Guest status (a share inside the org) matters only to callers with no role on the org itself,
    // so the org-wide ACL scan is skipped on the common path (every document request).
    if (directRole(acl, p.accessIds) !== null) return {acl};
    const inner = await this.store.getAclInOrg(org.id, [...p.accessIds, this.special.anon.id]);
    return {
      acl,
      hasInnerShare: this.guestOf(
        inner.filter((e) => e.kind !== 'org'),
        p,
      ),
    };
  }

  async orgRole(org: Org, p: Principal): Promise<Role | null> {
    return effectiveRoles([await this.orgChainLevel(org, p)], p.accessIds).roles[ORG];
  }

  /** The org's role for the caller, which must allow `action`. */
  async orgFor(key: string, p: Principal, ctx: OrgContext, action: Action) {
    const {org, merged} = await this.resolveOrg(key, p, ctx);
    const role = await this.orgRole(org, p);
    if (!can(role, action)) throw new Forbidden('access denied');
    return {org, merged, role};
  }

  async wsChain(ws: Workspace, p: Principal): Promise<{org: Org; chain: ResourceAcl[]}> {
    const org = (await this.store.getOrg(ws.orgId))!;
    const [orgLevel, wsAcl, docs] = await Promise.all([
      this.orgChainLevel(org, p),
      this.store.getAcl('ws', [String(ws.id)]),
      this.store.listDocs([ws.id]),
    ]);
    const docAcl = await this.store.getAcl(
      'doc',
      docs.map((d) => d.id),
    );
    const wsLevel: ResourceAcl = {
      acl: wsAcl,
      maxInheritedRole: ws.maxInheritedRole,
      hasInnerShare: this.guestOf(docAcl, p),
    };
    return {org, chain: [orgLevel, wsLevel]};
  }

  async workspaceFor(wid: number, p: Principal, action: Action) {
    const ws = await this.store.getWorkspace(wid);
    if (!ws) throw new NotFound('workspace not found');
    const {org, chain} = await this.wsChain(ws, p);
    const role = effectiveRoles(chain, p.accessIds).roles[WS];
    if (!can(role, action)) throw new Forbidden('access denied');
    return {ws, org, chain, role};
  }

  /** Finds a doc by id or urlId within the request's org context (SPEC §1.1 "Document ids"). */
  async findDoc(key: string, p: Principal, ctx: OrgContext): Promise<Doc> {
    let ctxOrg: Org | null = null;
    let merged = false;
    if (ctx !== null) {
      try {
        ({org: ctxOrg, merged} = await this.resolveOrg(ctx, p, ctx, true));
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
      } else if (ctxOrg) doc = await this.store.getDocByUrlId(key, ctxOrg.id);
      else doc = (await this.reachableByUrlId(key, p)) ?? (await this.store.getDocByUrlId(key, null));
    }
    if (!doc) throw new NotFound('document not found');
    if (ctxOrg && !merged && (await this.orgOfDoc(doc)).id !== ctxOrg.id) throw new NotFound('document not found');
    if (p.docKey && p.docKey.docId !== doc.id) throw new Forbidden('This API key opens another document');
    return doc;
  }

  /**
   * With no org context, Grist looks a urlId up among the documents the caller can reach, in any
   * org (400 when several answer). Decision D48: documents shared with the caller themselves come
   * before those reachable only through a public share, so nobody's public document can stand in
   * for (or make ambiguous) a urlId the caller already uses.
   */
  private async reachableByUrlId(key: string, p: Principal): Promise<Doc | null> {
    const found = await this.store.listDocsByUrlId(key);
    if (found.length === 0) return null;
    const own: Doc[] = [];
    const open: Doc[] = [];
    for (const doc of found) {
      const {chain} = await this.docChain(doc, p);
      if (effectiveRoles(chain, p.listIds).roles[DOC]) own.push(doc);
      else if (this.rawDocRole(chain, p)) open.push(doc);
    }
    const pick = own.length > 0 ? own : open;
    if (pick.length > 1) throw new BadRequest('ambiguous document request');
    return pick[0] ?? null;
  }

  async orgOfDoc(doc: Doc): Promise<Org> {
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
      chain: [
        orgLevel,
        {acl: wsAcl, maxInheritedRole: ws.maxInheritedRole},
        {acl: docAcl, maxInheritedRole: doc.maxInheritedRole},
      ],
    };
  }

  /** The caller's raw role on a doc (members and guests not yet mapped to viewers). */
  rawDocRole(chain: readonly ResourceAcl[], p: Principal): Role | null {
    const role = effectiveRoles(chain, p.accessIds).roles[DOC];
    // A document API key: the lesser of its access and its creator's current role.
    if (p.docKey && role) {
      if (p.docKey.access === 'viewers' && (role === 'owners' || role === 'editors')) return 'viewers';
      if (p.docKey.access === 'editors' && role === 'owners') return 'editors';
    }
    return role;
  }

  /** The caller's effective role on a doc; members and guests count as viewers there. */
  async docRole(doc: Doc, p: Principal): Promise<Role | null> {
    const {chain} = await this.docChain(doc, p);
    return asViewer(this.rawDocRole(chain, p));
  }

  /** Access to a doc for doc-level endpoints, with Grist's doc-API error wording (SPEC §1.5). */
  async docAccess(
    key: string,
    p: Principal,
    ctx: OrgContext,
    need: 'viewers' | 'editors' | 'owners',
    opts: {allowRemoved?: boolean} = {},
  ) {
    const doc = await this.findDoc(key, p, ctx);
    const {org, ws, chain} = await this.docChain(doc, p);
    const role = asViewer(this.rawDocRole(chain, p));
    const removed = doc.removedAt || ws.removedAt;
    if (removed && !opts.allowRemoved) throw new NotFound('Document is deleted');
    if (!role) throw new Forbidden('No view access');
    // Grist's assertAccess: the editor check only where editors are needed, so a viewer on an
    // owners' endpoint hears "No owner access".
    if (need === 'editors' && role === 'viewers') throw new Forbidden('No write access');
    if (need === 'owners' && role !== 'owners') throw new Forbidden('No owner access');
    return {doc, role, org};
  }

  /** A doc whose raw role allows every one of `actions`, with home-API wording (`access denied`). */
  async docFor(key: string, p: Principal, ctx: OrgContext, actions: Action[]) {
    const doc = await this.findDoc(key, p, ctx);
    const {chain, org, ws} = await this.docChain(doc, p);
    const role = this.rawDocRole(chain, p);
    if (!actions.every((a) => can(role, a))) throw new Forbidden('access denied');
    return {doc, org, ws, chain, role};
  }

  /** Role that makes a resource listed: computed from the caller's own shares only (not everyone@). */
  listedRole(chain: ResourceAcl[], p: Principal, level: number): Role | null {
    const listed = effectiveRoles(chain, p.listIds).roles[level];
    if (!listed) return null;
    // The access shown is the effective one (public shares can raise it).
    return effectiveRoles(chain, p.accessIds).roles[level] ?? listed;
  }
}
