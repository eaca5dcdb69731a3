/**
 * The home API: orgs, workspaces, document metadata, access lists, users and keys. Every method
 * takes the calling principal and goes through `access/` for its decision. This class only wires
 * the parts together; each concern lives in its own file:
 *   authn.ts (who is calling), access.ts (what they may do), validate.ts (bodies),
 *   shapes.ts (answers), and the operations in orgs.ts, workspaces.ts, docs.ts, acl.ts, users.ts.
 */
import type { Action } from '../access/index.js';
import { HomeAccess } from './access.js';
import * as acl from './acl.js';
import { Authenticator, type SpecialUsers } from './authn.js';
import * as docs from './docs.js';
import * as orgs from './orgs.js';
import type { HomeParts } from './parts.js';
import type { OrgContext, Principal } from './principal.js';
import { HomeShapes } from './shapes.js';
import type { Doc, HomeStore, ResourceKind, User } from './types.js';
import * as users from './users.js';
import * as workspaces from './workspaces.js';

export { hashApiKey } from './authn.js';
export { checkDomain, isValidEmail, type AccessDelta } from './validate.js';

export class HomeService implements HomeParts {
  readonly auth: Authenticator;
  readonly access: HomeAccess;
  readonly shapes: HomeShapes;

  private constructor(
    readonly store: HomeStore,
    readonly special: SpecialUsers,
  ) {
    this.auth = new Authenticator(store, special);
    this.access = new HomeAccess(store);
    this.shapes = new HomeShapes(store, special);
  }

  static async create(store: HomeStore): Promise<HomeService> {
    return new HomeService(store, await Authenticator.specialUsers(store));
  }

  // ---------------------------------------------------------------- identity (authn.ts)

  principalFor(user: User, viaApiKey: boolean): Principal {
    return this.auth.principalFor(user, viaApiKey);
  }

  anonymousPrincipal(): Principal {
    return this.auth.anonymousPrincipal();
  }

  /** Resolves an `Authorization` header value (or undefined) to a principal, as SPEC §1.2 says. */
  authenticate(authorization: string | undefined): Promise<Principal> {
    return this.auth.authenticate(authorization);
  }

  /** Finds or creates a real user (with a personal org), as a login or an invitation does. */
  ensureUser(email: string, name = ''): Promise<User> {
    return this.auth.ensureUser(email, name);
  }

  /** Sets a user's API key (a given one, or a new one) and returns it; only its hash is kept. */
  setApiKey(userId: number, key?: string): Promise<string> {
    return this.auth.setApiKey(userId, key);
  }

  // ---------------------------------------------------------------- access decisions (access.ts)



  workspaceFor(wid: number, p: Principal, action: Action) {
    return this.access.workspaceFor(wid, p, action);
  }




  /** Access to a doc for doc-level endpoints, with Grist's doc-API error wording (SPEC §1.5). */
  docAccess(key: string, p: Principal, ctx: OrgContext, need: 'viewers' | 'editors' | 'owners', opts: { allowRemoved?: boolean } = {}) {
    return this.access.docAccess(key, p, ctx, need, opts);
  }

  // ---------------------------------------------------------------- orgs (orgs.ts)

  listOrgs(p: Principal, ctx: OrgContext, merged: boolean) {
    return orgs.listOrgs(this, p, ctx, merged);
  }

  getOrg(key: string, p: Principal, ctx: OrgContext) {
    return orgs.getOrg(this, key, p, ctx);
  }

  createOrg(p: Principal, body: { name?: unknown; domain?: unknown }) {
    return orgs.createOrg(this, p, body);
  }

  updateOrg(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    return orgs.updateOrg(this, key, p, ctx, body);
  }

  deleteOrg(key: string, name: string, p: Principal, ctx: OrgContext) {
    return orgs.deleteOrg(this, key, name, p, ctx);
  }

  // ---------------------------------------------------------------- workspaces (workspaces.ts)

  /** Workspaces of an org visible to the caller, each with its visible docs (SPEC §3.8). */
  listWorkspaces(key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
    return workspaces.listWorkspaces(this, key, p, ctx, showRemoved);
  }

  createWorkspace(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    return workspaces.createWorkspace(this, key, p, ctx, body);
  }

  getWorkspace(wid: number, p: Principal, showRemoved: boolean) {
    return workspaces.getWorkspace(this, wid, p, showRemoved);
  }

  updateWorkspace(wid: number, p: Principal, body: Record<string, unknown>) {
    return workspaces.updateWorkspace(this, wid, p, body);
  }

  deleteWorkspace(wid: number, p: Principal) {
    return workspaces.deleteWorkspace(this, wid, p);
  }

  setWorkspaceRemoved(wid: number, p: Principal, removed: boolean) {
    return workspaces.setWorkspaceRemoved(this, wid, p, removed);
  }

  // ---------------------------------------------------------------- docs (docs.ts)

  /** Creates the doc's home record. The caller (Engine) then creates the file. */
  createDoc(wid: number, p: Principal, body: Record<string, unknown>): Promise<Doc> {
    return docs.createDoc(this, wid, p, body);
  }

  getDoc(key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
    return docs.getDoc(this, key, p, ctx, showRemoved);
  }

  updateDoc(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    return docs.updateDoc(this, key, p, ctx, body);
  }

  /** Hard delete of the home record; returns the id so that the caller removes the file. */
  deleteDoc(key: string, p: Principal, ctx: OrgContext): Promise<string> {
    return docs.deleteDoc(this, key, p, ctx);
  }

  setDocRemoved(key: string, p: Principal, ctx: OrgContext, removed: boolean) {
    return docs.setDocRemoved(this, key, p, ctx, removed);
  }

  setDocPinned(key: string, p: Principal, ctx: OrgContext, pinned: boolean) {
    return docs.setDocPinned(this, key, p, ctx, pinned);
  }

  moveDoc(key: string, p: Principal, ctx: OrgContext, workspace: unknown) {
    return docs.moveDoc(this, key, p, ctx, workspace);
  }

  // ---------------------------------------------------------------- access lists (acl.ts)

  getOrgAccess(key: string, p: Principal, ctx: OrgContext) {
    return acl.getOrgAccess(this, key, p, ctx);
  }

  getWorkspaceAccess(wid: number, p: Principal) {
    return acl.getWorkspaceAccess(this, wid, p);
  }

  getDocAccess(key: string, p: Principal, ctx: OrgContext) {
    return acl.getDocAccess(this, key, p, ctx);
  }

  /** PATCH .../access for any resource kind (SPEC §2.6). */
  updateAccess(kind: ResourceKind, target: { org?: string; wid?: number; doc?: string }, p: Principal, ctx: OrgContext, body: unknown) {
    return acl.updateAccess(this, kind, target, p, ctx, body);
  }

  // ---------------------------------------------------------------- users (users.ts)

  profile(p: Principal) {
    return this.shapes.profile(p);
  }

  updateName(p: Principal, name: unknown) {
    return users.updateName(this, p, name);
  }

  /** GET apikey: a masked form only (decision 2); `""` when there is no key. */
  getApiKey(p: Principal): Promise<string> {
    return users.getApiKey(this, p);
  }

  createApiKey(p: Principal, force: boolean): Promise<string> {
    return users.createApiKey(this, p, force);
  }

  deleteApiKey(p: Principal) {
    return users.deleteApiKey(this, p);
  }

  deleteUser(userId: number, p: Principal, body: unknown): Promise<{ docIds: string[] }> {
    return users.deleteUser(this, userId, p, body);
  }
}
