/**
 * Authentication: who a request is. Turns an `Authorization` header into a principal, and creates
 * the users and API keys that later requests present.
 */
import {createHash} from 'node:crypto';
import {Unauthorized} from '../base/index.js';
import {makeApiKey} from '../base/index.js';
import {ANON_EMAIL, EVERYONE_EMAIL, type Principal} from './principal.js';
import type {OrgSettings} from './settings.js';
import {Conflict, type HomeStore, type User} from './types.js';

/** Only this hash of an API key is stored, so a leaked home database gives no usable keys. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Operations on one's own account refuse the anonymous caller. */
export function requireUser(p: Principal): void {
  if (p.anonymous) throw new Unauthorized('user not authorized');
}

/** Grist's pseudo-users that public shares name. */
export interface SpecialUsers {
  anon: User;
  everyone: User;
}

/** API keys whose hash `Authenticator` keeps at once: a process serves a few clients' keys. */
const MAX_KEY_HASHES = 256;

export class Authenticator {
  /**
   * Hashes of keys recently presented: every request presents its key, and the sha256 was 3% of a
   * 304's server CPU (issue 43 §2). Emptied when full; the hash of a key never changes, so a key
   * revoked meanwhile is still refused by the store's lookup of its hash.
   */
  private readonly keyHashes = new Map<string, string>();

  constructor(
    private readonly store: HomeStore,
    private readonly special: SpecialUsers,
    private readonly settings: OrgSettings,
  ) {}

  /** Whether the principal is the install admin (Grist's SimpleInstallAdmin: by login email). */
  isInstallAdmin(p: Principal): boolean {
    // A document API key opens its document only, so it never acts as the admin.
    return !p.anonymous && !p.docKey && p.user.email.toLowerCase() === this.settings.adminEmail;
  }

  /** Finds or creates anon@ and everyone@ (each a user without a personal org). */
  static async specialUsers(store: HomeStore): Promise<SpecialUsers> {
    return {
      anon: await findOrCreate(store, ANON_EMAIL, 'Anonymous', false),
      everyone: await findOrCreate(store, EVERYONE_EMAIL, 'Everyone', false),
    };
  }

  principalFor(user: User, viaApiKey: boolean): Principal {
    return {
      user,
      anonymous: user.id === this.special.anon.id,
      viaApiKey,
      accessIds: [user.id, this.special.everyone.id],
      listIds: [user.id],
    };
  }

  anonymousPrincipal(): Principal {
    return this.principalFor(this.special.anon, false);
  }

  /** Resolves an `Authorization` header value (or undefined) to a principal, as SPEC §1.2 says. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (authorization === undefined) return this.anonymousPrincipal();
    const m = /^(\S+)(?:\s+(.*))?$/.exec(authorization.trim());
    if (m?.[1].toLowerCase() !== 'bearer') {
      throw new Unauthorized("Bad request: unsupported Authorization scheme, expected 'Bearer'");
    }
    const key = (m[2] ?? '').trim();
    const hash = key ? this.keyHash(key) : null;
    const user = hash ? await this.store.getUserByApiKeyHash(hash) : null;
    if (user && user.id !== this.special.anon.id) return this.principalFor(user, true);
    const docKey = hash ? await this.docKey(hash) : null;
    if (!docKey) throw new Unauthorized('Bad request: invalid API key');
    return docKey;
  }

  private keyHash(key: string): string {
    let hash = this.keyHashes.get(key);
    if (hash === undefined) {
      if (this.keyHashes.size >= MAX_KEY_HASHES) this.keyHashes.clear();
      hash = hashApiKey(key);
      this.keyHashes.set(key, hash);
    }
    return hash;
  }

  /** The principal of a live document API key (issue 30): its creator, held to its document and access. */
  private async docKey(hash: string): Promise<Principal | null> {
    const k = await this.store.getDocApiKeyByHash(hash);
    const now = Date.now();
    if (!k || (k.expiresAt !== null && Date.parse(k.expiresAt) <= now)) return null;
    const creator = await this.store.getUser(k.createdBy);
    if (!creator) return null;
    // Last use to the minute: a write per request would make every read a home-database write.
    if (k.lastUsedAt === null || Date.parse(k.lastUsedAt) < now - 60_000) {
      await this.store.touchDocApiKey(k.id, new Date(now).toISOString()).catch(() => {});
    }
    return {
      ...this.principalFor(creator, true),
      docKey: {id: k.id, docId: k.docId, name: k.name, access: k.access},
    };
  }

  /**
   * Finds or creates a real user, as a login or an invitation does: with a personal org unless
   * GRIST_PERSONAL_ORGS=false (Grist's UsersManager.getUserByLogin).
   */
  ensureUser(email: string, name = ''): Promise<User> {
    return findOrCreate(this.store, email, name, this.settings.personalOrgs);
  }

  /** Sets a user's API key (a given one, or a new one) and returns it; only its hash is kept. */
  async setApiKey(userId: number, key: string = makeApiKey()): Promise<string> {
    await this.store.setApiKey(userId, hashApiKey(key), key.slice(0, 4));
    return key;
  }
}

/** A concurrent creator may win the race: its user is the one returned. */
async function findOrCreate(store: HomeStore, email: string, name: string, personalOrg: boolean): Promise<User> {
  const existing = await store.getUserByEmail(email);
  if (existing) return existing;
  try {
    const user = await store.createUser({email, name, personalOrg});
    const personal = personalOrg ? await store.getPersonalOrg(user.id) : null;
    // Grist marks a new personal org for its new user's tour (`userOrgPrefs`, shown on the org).
    if (personal) await store.setPrefs(personal.id, user.id, {showGristTour: true});
    return user;
  } catch (e) {
    if (e instanceof Conflict) return (await store.getUserByEmail(email))!;
    throw e;
  }
}
