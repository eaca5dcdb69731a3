/**
 * The home API: orgs, workspaces, document metadata, access lists, users and keys. Every method
 * takes the calling principal and goes through `access/` for its decision. This class only wires
 * the parts together; each concern lives in its own file:
 *   authn.ts (who is calling), access.ts (what they may do), validate.ts (bodies),
 *   shapes.ts (answers), and the operations in orgs.ts, workspaces.ts, docs.ts, acl.ts, users.ts.
 */
import type {Action} from '../access/index.js';
import {HomeAccess} from './access.js';
import * as acl from './acl.js';
import {Authenticator, type SpecialUsers} from './authn.js';
import * as docs from './docs.js';
import * as docKeys from './dockeys.js';
import * as orgs from './orgs.js';
import type {HomeParts} from './parts.js';
import type {OrgContext, Principal} from './principal.js';
import {DEFAULT_ORG_SETTINGS, type OrgSettings} from './settings.js';
import {HomeShapes} from './shapes.js';
import type {Doc, HomeStore, ResourceKind, User} from './types.js';
import * as users from './users.js';
import * as workspaces from './workspaces.js';

export {hashApiKey} from './authn.js';
export {checkDomain, isValidEmail, type AccessDelta} from './validate.js';
export {orgSettingsFromEnv, type OrgSettings} from './settings.js';

/** Home operations as Grist's API has them (orgs, workspaces, documents, access lists, users, API keys); every method takes the acting principal and checks access. */
export class HomeService implements HomeParts {
  /** @internal */
  readonly auth: Authenticator;
  /** @internal */
  readonly access: HomeAccess;
  /** @internal */
  readonly shapes: HomeShapes;

  private constructor(
    /** The home store it works on. */
    readonly store: HomeStore,
    /** @internal */
    readonly special: SpecialUsers,
    /** Install-wide org settings (personal orgs, who creates team sites, the install admin). */
    readonly settings: OrgSettings,
  ) {
    this.auth = new Authenticator(store, special, settings);
    this.access = new HomeAccess(store, special, settings);
    this.shapes = new HomeShapes(store, special);
  }

  /** A service over a home store (creating anon@ and everyone@ if needed). */
  static async create(store: HomeStore, settings: OrgSettings = DEFAULT_ORG_SETTINGS): Promise<HomeService> {
    return new HomeService(store, await Authenticator.specialUsers(store), settings);
  }

  // ---------------------------------------------------------------- identity (authn.ts)

  /** The principal of a user (`viaApiKey`: they showed a key). */
  principalFor(user: User, viaApiKey: boolean): Principal {
    return this.auth.principalFor(user, viaApiKey);
  }

  /** The principal of a request with no credentials. */
  anonymousPrincipal(): Principal {
    return this.auth.anonymousPrincipal();
  }

  /** Resolves an `Authorization` header value (or undefined) to a principal, as SPEC §1.2 says. */
  authenticate(authorization: string | undefined): Promise<Principal> {
    return this.auth.authenticate(authorization);
  }

  /** Finds or creates a real user (with a personal org unless GRIST_PERSONAL_ORGS=false), as a login or an invitation does. */
  ensureUser(email: string, name = ''): Promise<User> {
    return this.auth.ensureUser(email, name);
  }

  /** Sets a user's API key (a given one, or a new one) and returns it; only its hash is kept. */
  setApiKey(userId: number, key?: string): Promise<string> {
    return this.auth.setApiKey(userId, key);
  }

  // ---------------------------------------------------------------- access decisions (access.ts)

  /** A workspace, its org and the principal's role there, if the principal may do `action`. */
  workspaceFor(wid: number, p: Principal, action: Action) {
    return this.access.workspaceFor(wid, p, action);
  }

  /** Access to a doc for doc-level endpoints, with Grist's doc-API error wording (SPEC §1.5). */
  docAccess(
    key: string,
    p: Principal,
    ctx: OrgContext,
    need: 'viewers' | 'editors' | 'owners',
    opts: {allowRemoved?: boolean} = {},
  ) {
    return this.access.docAccess(key, p, ctx, need, opts);
  }

  // ---------------------------------------------------------------- orgs (orgs.ts)

  /** The orgs the principal can see, as `GET /api/orgs` answers. */
  listOrgs(p: Principal, ctx: OrgContext, merged: boolean) {
    return orgs.listOrgs(this, p, ctx, merged);
  }

  /** An org as `GET /api/orgs/{org}` answers. */
  getOrg(key: string, p: Principal, ctx: OrgContext) {
    return orgs.getOrg(this, key, p, ctx);
  }

  /** The caller's profile and orgs with their access, as `GET /api/session/access/all` answers. */
  sessionAccessAll(p: Principal, ctx: OrgContext) {
    return orgs.sessionAccessAll(this, p, ctx);
  }

  /** The live documents of an org whose usage its owner asks for. */
  usageDocs(key: string, p: Principal, ctx: OrgContext): Promise<string[]> {
    return orgs.usageDocs(this, key, p, ctx);
  }

  /** Creates a team site owned by the principal. */
  createOrg(p: Principal, body: {name?: unknown; domain?: unknown}) {
    return orgs.createOrg(this, p, body);
  }

  /** Changes an org's name, domain or prefs. */
  updateOrg(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    return orgs.updateOrg(this, key, p, ctx, body);
  }

  /** Deletes an org (owners; `name` must match). */
  deleteOrg(key: string, name: string, p: Principal, ctx: OrgContext) {
    return orgs.deleteOrg(this, key, name, p, ctx);
  }

  // ---------------------------------------------------------------- workspaces (workspaces.ts)

  /** Workspaces of an org visible to the caller, each with its visible docs (SPEC §3.8). */
  listWorkspaces(key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
    return workspaces.listWorkspaces(this, key, p, ctx, showRemoved);
  }

  /** Creates a workspace in an org. */
  createWorkspace(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    return workspaces.createWorkspace(this, key, p, ctx, body);
  }

  /** A workspace with its documents, as `GET /api/workspaces/{wid}` answers. */
  getWorkspace(wid: number, p: Principal, showRemoved: boolean) {
    return workspaces.getWorkspace(this, wid, p, showRemoved);
  }

  /** Changes a workspace's name. */
  updateWorkspace(wid: number, p: Principal, body: Record<string, unknown>) {
    return workspaces.updateWorkspace(this, wid, p, body);
  }

  /** Deletes a workspace; returns its documents to remove. */
  deleteWorkspace(wid: number, p: Principal) {
    return workspaces.deleteWorkspace(this, wid, p);
  }

  /** Moves a workspace to the trash or back. */
  setWorkspaceRemoved(wid: number, p: Principal, removed: boolean) {
    return workspaces.setWorkspaceRemoved(this, wid, p, removed);
  }

  // ---------------------------------------------------------------- docs (docs.ts)

  /** Creates the doc's home record. The caller (Engine) then creates the file. */
  createDoc(wid: number, p: Principal, body: Record<string, unknown>): Promise<Doc> {
    return docs.createDoc(this, wid, p, body);
  }

  /** A document as `GET /api/docs/{doc}` answers. */
  getDoc(key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
    return docs.getDoc(this, key, p, ctx, showRemoved);
  }

  /** Changes a document's name, urlId, options. */
  updateDoc(key: string, p: Principal, ctx: OrgContext, body: Record<string, unknown>) {
    return docs.updateDoc(this, key, p, ctx, body);
  }

  /** Hard delete of the home record; returns the id so that the caller removes the file. */
  deleteDoc(key: string, p: Principal, ctx: OrgContext): Promise<string> {
    return docs.deleteDoc(this, key, p, ctx);
  }

  /** Moves a document to the trash or back. */
  setDocRemoved(key: string, p: Principal, ctx: OrgContext, removed: boolean) {
    return docs.setDocRemoved(this, key, p, ctx, removed);
  }

  /** Pins or unpins a document. */
  setDocPinned(key: string, p: Principal, ctx: OrgContext, pinned: boolean) {
    return docs.setDocPinned(this, key, p, ctx, pinned);
  }

  /** Moves a document to another workspace of the same org. */
  moveDoc(key: string, p: Principal, ctx: OrgContext, workspace: unknown) {
    return docs.moveDoc(this, key, p, ctx, workspace);
  }

  // ---------------------------------------------------------------- document API keys (dockeys.ts)

  /** Beyond Grist: creates a key that opens this document only; answers its secret once. */
  createDocApiKey(key: string, p: Principal, ctx: OrgContext, body: unknown) {
    return docKeys.createDocApiKey(this, key, p, ctx, body);
  }

  /** Beyond Grist: a document's keys (owners), without their secrets. */
  listDocApiKeys(key: string, p: Principal, ctx: OrgContext) {
    return docKeys.listDocApiKeys(this, key, p, ctx);
  }

  /** Beyond Grist: revokes a document's key (owners, or its creator). */
  deleteDocApiKey(key: string, p: Principal, ctx: OrgContext, id: number) {
    return docKeys.deleteDocApiKey(this, key, p, ctx, id);
  }

  // ---------------------------------------------------------------- access lists (acl.ts)

  /** An org's access list. */
  getOrgAccess(key: string, p: Principal, ctx: OrgContext) {
    return acl.getOrgAccess(this, key, p, ctx);
  }

  /** A workspace's access list. */
  getWorkspaceAccess(wid: number, p: Principal) {
    return acl.getWorkspaceAccess(this, wid, p);
  }

  /** A document's access list as `GET .../access` answers. */
  getDocAccess(key: string, p: Principal, ctx: OrgContext) {
    return acl.getDocAccess(this, key, p, ctx);
  }

  /** PATCH .../access for any resource kind (SPEC §2.6). */
  updateAccess(
    kind: ResourceKind,
    target: {org?: string; wid?: number; doc?: string},
    p: Principal,
    ctx: OrgContext,
    body: unknown,
  ) {
    return acl.updateAccess(this, kind, target, p, ctx, body);
  }

  // ---------------------------------------------------------------- users (users.ts)

  /** The principal's profile, as `GET /api/profile/user` answers. */
  profile(p: Principal) {
    return this.shapes.profile(p);
  }

  /** Changes the principal's name. */
  updateName(p: Principal, name: unknown) {
    return users.updateName(this, p, name);
  }

  /** GET apikey: a masked form only (decision 2); `""` when there is no key. */
  getApiKey(p: Principal): Promise<string> {
    return users.getApiKey(this, p);
  }

  /** Creates the principal's API key (`force` replaces an existing one). */
  createApiKey(p: Principal, force: boolean): Promise<string> {
    return users.createApiKey(this, p, force);
  }

  /** Deletes the principal's API key. */
  deleteApiKey(p: Principal) {
    return users.deleteApiKey(this, p);
  }

  /** Deletes a user (themselves only; `name` must match); returns their documents to remove. */
  deleteUser(userId: number, p: Principal, body: unknown): Promise<{docIds: string[]}> {
    return users.deleteUser(this, userId, p, body);
  }
}
