/** Home operations on the calling user: profile, name, API key, account deletion (SPEC §3.13). */
import {BadRequest, Forbidden, NotFound, shownValue} from '../base/index.js';
import {requireUser} from './authn.js';
import type {HomeParts} from './parts.js';
import type {Principal} from './principal.js';

export async function updateName(h: HomeParts, p: Principal, name: unknown) {
  requireUser(p);
  if (typeof name !== 'string') throw new BadRequest('Name expected in the body');
  await h.store.updateUser(p.user.id, {name});
}

/** GET apikey: a masked form only (decision 2); `""` when there is no key. */
export async function getApiKey(h: HomeParts, p: Principal): Promise<string> {
  requireUser(p);
  const u = await h.store.getUser(p.user.id);
  return u?.apiKeyPrefix ? `${u.apiKeyPrefix}...` : '';
}

export async function createApiKey(h: HomeParts, p: Principal, force: boolean): Promise<string> {
  requireUser(p);
  const u = await h.store.getUser(p.user.id);
  if (u?.apiKeyPrefix && !force) throw new BadRequest('An apikey is already set, use `{force: true}` to override it.');
  return h.auth.setApiKey(p.user.id);
}

export async function deleteApiKey(h: HomeParts, p: Principal) {
  requireUser(p);
  await h.store.setApiKey(p.user.id, null, null);
}

/**
 * Deletes the caller's own account. As Grist: the name must be present (null or "" skip the
 * check), and any id but the caller's own (unknown, already deleted, or not a number: NaN) is 403.
 */
export async function deleteUser(
  h: HomeParts,
  userId: number,
  p: Principal,
  body: unknown,
): Promise<{docIds: string[]}> {
  const name = (body as {name?: unknown} | null)?.name;
  if (name === undefined) throw new BadRequest('to confirm deletion of a user, provide their name');
  if (p.anonymous || p.user.id !== userId) throw new Forbidden('not permitted to delete this user');
  const user = await h.store.getUser(userId);
  if (!user) throw new NotFound('user not found');
  if (name && name !== user.name) {
    throw new BadRequest(`user name did not match ('${shownValue(name)}' vs '${user.name}')`);
  }
  return h.store.deleteUser(userId);
}
