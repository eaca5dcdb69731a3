import type {WriteActor} from '../doc/changes.js';
import type {User} from './types.js';

/** The email of Grist's anonymous user (shares with it make documents public). */
export const ANON_EMAIL = 'anon@getgrist.com';
/** The email of Grist's everyone@ user (shares with every signed-in user). */
export const EVERYONE_EMAIL = 'everyone@getgrist.com';

/** Who is calling, and which user ids count for them. */
export interface Principal {
  user: User;
  anonymous: boolean;
  /** Explicit credentials (an API key) were presented; exempts the caller from the CSRF rule. */
  viaApiKey: boolean;
  /** Ids whose roles grant access: the user, everyone@, and anon@ for the anonymous caller. */
  accessIds: number[];
  /** Ids whose roles make things listed: the user itself (everyone@ shares are not listed). */
  listIds: number[];
  /**
   * Beyond Grist: the caller showed a document API key (issue 30). `user` is the key's creator;
   * only `docId` is reachable, with at most `access` and never more than the creator has now.
   */
  docKey?: {id: number; docId: string; name: string; access: 'viewers' | 'editors'};
}

/** The org named by the request (subdomain or `/o/<domain>/`), or null for none. */
export type OrgContext = string | null;

/** Who a caller's writes are made by, as document change listeners (webhooks, change feeds) see it. */
export function actorOf(p: Principal): WriteActor {
  return {
    userId: p.user.id,
    email: p.user.email,
    name: p.user.name,
    ...(p.docKey ? {apiKeyId: p.docKey.id} : {}),
  };
}
