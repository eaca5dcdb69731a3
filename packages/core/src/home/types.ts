/** Data kept in the home database: who exists, what exists, and who may reach it. */

/** Roles in strength order. `members` exists on orgs only; `guests` is derived, never stored. */
export type Role = 'owners' | 'editors' | 'viewers' | 'members' | 'guests';
/** Roles that can be inherited and capped by `maxInheritedRole`. */
export type BasicRole = 'owners' | 'editors' | 'viewers';
/** What an access list belongs to: an org, a workspace or a document. */
export type ResourceKind = 'org' | 'ws' | 'doc';

/** A user of the home database. */
export interface User {
  id: number;
  /** Email as first given (display form); lookups compare lower-cased. */
  email: string;
  name: string;
  ref: string;
  picture: string | null;
  /** First characters of the API key, for the masked display; null when no key. */
  apiKeyPrefix: string | null;
  createdAt: string;
}

/** An org: a team site, or a user's personal org. */
export interface Org {
  id: number;
  name: string;
  /** Stored domain of a team site; null for personal orgs. */
  domain: string | null;
  /** Owner of a personal org; null for team sites. */
  ownerId: number | null;
  host: string | null;
  orgPrefs: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

/** A workspace of an org. */
export interface Workspace {
  id: number;
  orgId: number;
  name: string;
  maxInheritedRole: BasicRole | null;
  createdAt: string;
  updatedAt: string;
  removedAt: string | null;
}

/** A document's home record (its file is `<data>/docs/<id>.grist`). */
export interface Doc {
  id: string;
  workspaceId: number;
  name: string;
  urlId: string | null;
  isPinned: boolean;
  options: Record<string, unknown> | null;
  type: string | null;
  maxInheritedRole: BasicRole | null;
  createdBy: number | null;
  createdAt: string;
  updatedAt: string;
  removedAt: string | null;
}

/** A urlId a document holds or held in an org (Grist's `aliases` table). */
export interface DocAlias {
  orgId: number;
  urlId: string;
  docId: string;
  createdAt: string;
}

/**
 * Beyond Grist (issue 30): an API key that opens one document only, at most with `access`, and
 * never beyond its creator's current access. Only its hash is kept.
 */
export interface DocApiKey {
  id: number;
  docId: string;
  name: string;
  access: 'viewers' | 'editors';
  createdBy: number;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/**
 * A share of a document (Grist's `shares` table, issue 41): the secret `key` that reaches it at
 * `/api/s/<key>/...`, the `linkId` that names it inside the document (`_grist_Shares.linkId`), and
 * its options (`{"publish": true}`), copied from the document when shares are synced.
 */
export interface DocShare {
  id: number;
  key: string;
  linkId: string;
  docId: string;
  options: Record<string, unknown>;
}

/** One entry of an access list: a user's role on an org, workspace or document. */
export interface AclEntry {
  kind: ResourceKind;
  /** Org and workspace ids as decimal strings, doc ids as they are. */
  resourceId: string;
  userId: number;
  role: Role;
}

/** One change to an access list: a user's new role, or null to remove it. */
export interface AclChange {
  userId: number;
  role: Role | null;
}

/** Changes to an org. */
export type OrgPatch = Partial<Pick<Org, 'name' | 'domain' | 'orgPrefs'>>;
/** Changes to a workspace. */
export type WorkspacePatch = Partial<Pick<Workspace, 'name' | 'maxInheritedRole' | 'removedAt'>>;
/** Changes to a document's home record. */
export type DocPatch = Partial<
  Pick<Doc, 'name' | 'urlId' | 'isPinned' | 'options' | 'type' | 'maxInheritedRole' | 'removedAt' | 'workspaceId'>
>;

/** A document home record to create. */
export interface NewDoc {
  id: string;
  workspaceId: number;
  name: string;
  /** Wanted urlId; the store answers Conflict when it is taken in the org. */
  urlId: string | null;
  isPinned?: boolean;
  options?: Record<string, unknown> | null;
  type?: string | null;
  ownerUserId: number;
}

/** Raised by stores when a unique value (email, domain, urlId) is already taken. */
export class Conflict extends Error {
  constructor(readonly what: 'email' | 'domain' | 'urlId' | 'apiKey') {
    super(`${what} already in use`);
  }
}

/**
 * The home store. Asynchronous so that a networked database fits behind it unchanged. Methods that
 * touch several rows are atomic. Stores hold data only: access decisions live in `access/`.
 */
export interface HomeStore {
  // Users
  /** A user by id. */
  getUser(id: number): Promise<User | null>;
  /** Users by id. */
  getUsers(ids: number[]): Promise<User[]>;
  /** A user by email (case-insensitive). */
  getUserByEmail(email: string): Promise<User | null>;
  /** The user whose API key has this hash. */
  getUserByApiKeyHash(hash: string): Promise<User | null>;
  /** Creates a user; with `personalOrg`, also its personal org "Personal" and workspace "Home". */
  createUser(u: {email: string; name: string; personalOrg: boolean}): Promise<User>;
  /** Changes a user. */
  updateUser(id: number, patch: {name?: string}): Promise<void>;
  /** Sets (or clears with null) the API key hash; Conflict('apiKey') if the hash is taken. */
  setApiKey(id: number, hash: string | null, prefix: string | null): Promise<void>;
  /** Deletes the user, their personal org with its workspaces and docs, and every ACL entry. */
  deleteUser(id: number): Promise<{docIds: string[]}>;

  // Orgs
  /** Creates an org with workspace "Home"; the owner gets `owners` on the org. */
  createOrg(o: {name: string; domain: string | null; ownerUserId: number; personal: boolean}): Promise<Org>;
  /** An org by id. */
  getOrg(id: number): Promise<Org | null>;
  /** A team site by domain. */
  getOrgByDomain(domain: string): Promise<Org | null>;
  /** A user's personal org. */
  getPersonalOrg(userId: number): Promise<Org | null>;
  /** Changes an org. */
  updateOrg(id: number, patch: OrgPatch): Promise<void>;
  /** Deletes an org with its workspaces and documents; returns the document ids. */
  deleteOrg(id: number): Promise<{docIds: string[]}>;
  /** Orgs in which any of the users has an ACL entry on the org or on anything inside it. */
  listOrgsForUsers(userIds: number[]): Promise<Org[]>;
  /** Stored preferences of a user in an org. */
  getPrefs(orgId: number, userId: number | null): Promise<Record<string, unknown> | null>;
  /** Stores preferences of a user in an org. */
  setPrefs(orgId: number, userId: number | null, prefs: Record<string, unknown> | null): Promise<void>;

  // Workspaces
  /** Creates a workspace. */
  createWorkspace(w: {orgId: number; name: string; ownerUserId: number}): Promise<Workspace>;
  /** A workspace by id. */
  getWorkspace(id: number): Promise<Workspace | null>;
  /** An org's workspaces. */
  listWorkspaces(orgId: number): Promise<Workspace[]>;
  /** Changes a workspace. */
  updateWorkspace(id: number, patch: WorkspacePatch): Promise<void>;
  /** Deletes a workspace with its documents; returns the document ids. */
  deleteWorkspace(id: number): Promise<{docIds: string[]}>;

  // Docs
  /** Creates a document record (Conflict when the urlId is taken). */
  createDoc(d: NewDoc): Promise<Doc>;
  /** A document by id. */
  getDoc(id: string): Promise<Doc | null>;
  /**
   * Resolves a urlId (current or former alias) within an org; with orgId null, among personal orgs
   * (Grist's merged `docs` org), the oldest alias first.
   */
  getDocByUrlId(urlId: string, orgId: number | null): Promise<Doc | null>;
  /** A document's aliases (current and former urlIds), oldest first. */
  listAliases(docId: string): Promise<DocAlias[]>;
  /** Every document holding `urlId` (current or former alias) in its own org, in any org. */
  listDocsByUrlId(urlId: string): Promise<Doc[]>;
  /** A workspace's documents. */
  listDocs(workspaceIds: number[]): Promise<Doc[]>;
  /**
   * Updates a doc. Setting `urlId` records an alias; Conflict('urlId') when another doc holds it
   * (current or former alias) in the same team site, or in any personal org for a personal org's doc.
   */
  updateDoc(id: string, patch: DocPatch): Promise<void>;
  /** Moves a doc to another workspace; across orgs its urlId and aliases are dropped. */
  moveDoc(id: string, workspaceId: number): Promise<void>;
  /** Deletes a document record. */
  deleteDoc(id: string): Promise<void>;

  // Document API keys (beyond Grist)
  /** Stores a document API key by its hash. */
  createDocApiKey(k: Omit<DocApiKey, 'id' | 'createdAt' | 'lastUsedAt'> & {keyHash: string}): Promise<DocApiKey>;
  /** A document's keys, oldest first. */
  listDocApiKeys(docId: string): Promise<DocApiKey[]>;
  /** The key with this hash (expired ones included). */
  getDocApiKeyByHash(hash: string): Promise<DocApiKey | null>;
  /** Deletes a key of a document; false when the document has no such key. */
  deleteDocApiKey(docId: string, id: number): Promise<boolean>;
  /** Records when a key was last used. */
  touchDocApiKey(id: number, at: string): Promise<void>;

  // Shares (issue 41, Grist's HomeDBManager.syncShares)
  /**
   * Makes a document's shares those listed, atomically: a linkId not yet known gets a new row with
   * a key from `makeKey`; a known one keeps its key and takes the options; the others are deleted.
   */
  syncShares(
    docId: string,
    shares: Array<{linkId: string; options: Record<string, unknown>}>,
    makeKey: () => string,
  ): Promise<void>;
  /** The share with this key, or null. */
  getShareByKey(key: string): Promise<DocShare | null>;
  /** A document's shares, by id. */
  listShares(docId: string): Promise<DocShare[]>;

  // Access lists
  /** A resource's access list. */
  getAcl(kind: ResourceKind, resourceIds: string[]): Promise<AclEntry[]>;
  /** All entries of the users on an org and on every workspace and doc inside it. */
  getAclInOrg(orgId: number, userIds: number[] | null): Promise<AclEntry[]>;
  /**
   * Applies role changes (null removes) atomically. With `cascade`, removing a user from an org
   * also removes them from every workspace and doc in it.
   */
  updateAcl(kind: ResourceKind, resourceId: string, changes: AclChange[], opts?: {cascade?: boolean}): Promise<void>;

  /** Closes the store. */
  close(): Promise<void>;
}
