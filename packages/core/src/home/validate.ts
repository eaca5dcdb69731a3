/**
 * Body validation for the home API (names, domains, urlIds, doc options, access deltas), with
 * Grist's error wording. Pure functions: no store, no access decisions.
 */
import {strongest} from '../access/index.js';
import {BadRequest, shownValue} from '../base/index.js';
import {URL_ID_RE} from './access.js';
import {ANON_EMAIL, EVERYONE_EMAIL} from './principal.js';
import type {BasicRole, ResourceKind, Role} from './types.js';

export const BASIC_ROLES = ['owners', 'editors', 'viewers'] as const;
/** Names Grist refuses as team-site domains (its `checkSubdomainValidity`: `Invalid domain value.`). */
const DOMAIN_BLOCKLIST = new Set(
  [
    'aws gristlogin issues metrics phab releases test vpn www w ww wwww wwwww docs api static',
    'ftp imap pop smtp mail git blog wiki support kb help forum admin store dev beta community try wpx',
    'telemetry google apple microsoft ms facebook fb twitter youtube yt current staging prod login',
    'login-dev login-s 1ogin 1ogin-dev 1ogin-s',
  ]
    .join(' ')
    .split(' '),
);
const DOMAIN_PREFIXES = ['docs-', 'o-', 'doc-worker-', '_', 'v1-'];
// A pragmatic RFC 5322 subset: no spaces or control characters, one @, a dotted domain.
const EMAIL_RE =
  /^[^\s@"()<>,;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const DOC_OPTIONS = [
  'description',
  'icon',
  'openMode',
  'externalId',
  'tutorial',
  'appearance',
  'allowIndex',
  'proposedChanges',
];

/** Whether a string is an email Grist would accept. */
export function isValidEmail(email: string): boolean {
  return EMAIL_RE.test(email);
}

/** Throws 400 unless `domain` is a valid team-site domain: Grist's checks, in its order and words. */
export function checkDomain(domain: string): void {
  const prefix = DOMAIN_PREFIXES.find((p) => domain.startsWith(p));
  const reason = !/^[a-z0-9][-a-z0-9]*$/.test(domain)
    ? 'Domain must include lower-case letters, numbers, and dashes only.'
    : prefix
      ? `Domain cannot use reserved prefix "${prefix}".`
      : domain.length > 63
        ? 'Domain must contain less than 64 characters.'
        : domain.length <= 2
          ? 'Domain must contain more than 2 characters.'
          : DOMAIN_BLOCKLIST.has(domain)
            ? 'Invalid domain value.'
            : null;
  if (reason) throw new BadRequest(`Domain is not permitted: ${reason}`);
}

/** Refuses any key of `body` outside `allowed`, as Grist's `unrecognized property` check does. */
export function checkKeys(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new BadRequest(`unrecognized property ${k}`);
}

/**
 * A document name from a body. Grist stores whatever truthy value it is given in a text column,
 * so a number becomes its decimal text; an empty name, and any other type, is refused (decision H2).
 */
export function docName(v: unknown): string {
  if ((typeof v === 'string' && v) || (typeof v === 'number' && Number.isFinite(v) && v !== 0)) return String(v);
  throw new BadRequest('Bad request: name required');
}

export function checkUrlId(urlId: unknown): string {
  if (typeof urlId !== 'string' || !URL_ID_RE.test(urlId) || urlId.toLowerCase() === 'new')
    throw new BadRequest('invalid urlId');
  return urlId;
}

export function checkDocType(body: Record<string, unknown>): string | null {
  if (!('type' in body) || body.type === null || body.type === undefined) return null;
  if (body.type !== 'template' && body.type !== 'tutorial') {
    throw new BadRequest("Bad Request. 'type' key authorized values : 'template', 'tutorial' or null");
  }
  return body.type;
}

/** Applies a doc `options` patch: null removes a key; `tutorial` and `appearance` merge one level. */
export function mergeOptions(current: Record<string, unknown> | null, patch: unknown): Record<string, unknown> | null {
  if (patch === undefined) return current;
  if (patch === null) return null;
  if (typeof patch !== 'object' || Array.isArray(patch)) throw new BadRequest('options must be an object');
  const out: Record<string, unknown> = {...(current ?? {})};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (!DOC_OPTIONS.includes(k)) throw new BadRequest(`unrecognized property options.${k}`);
    if (k === 'openMode' && v !== null && !['default', 'fork', 'view'].includes(v as string))
      throw new BadRequest('invalid openMode');
    if (k === 'icon' && v !== null && (typeof v !== 'string' || !/^https:\/\/grist-static\.com\//.test(v))) {
      throw new BadRequest('icon must be a grist-static URL');
    }
    if (v === null) delete out[k];
    else if ((k === 'tutorial' || k === 'appearance') && typeof v === 'object' && typeof out[k] === 'object') {
      out[k] = {...(out[k] as object), ...(v as object)};
    } else out[k] = v;
  }
  return Object.keys(out).length ? out : null;
}

/** The body of `PATCH .../access`: roles by email, and the resource's `maxInheritedRole`. */
export interface AccessDelta {
  users?: Record<string, string | null>;
  maxInheritedRole?: string | null;
}

/** A validated permission delta: users keyed by lower-cased email. */
export interface ParsedDelta {
  users: Map<string, {email: string; role: Role | null}>;
  /** Present only when the delta names `maxInheritedRole`. */
  maxInheritedRole?: BasicRole | null;
}

/** Checks a PATCH .../access body (SPEC §2.6) for a resource kind. */
export function parseAccessDelta(kind: ResourceKind, body: unknown): ParsedDelta {
  const delta = (body as {delta?: AccessDelta} | null)?.delta;
  if (delta === undefined || delta === null) throw new BadRequest('Bad request: missing permission delta');
  if (typeof delta !== 'object' || Array.isArray(delta)) throw new BadRequest('Bad request: invalid permission delta');
  const hasUsers = delta.users !== undefined;
  const hasMax = 'maxInheritedRole' in delta;
  if (kind === 'org' ? !hasUsers || hasMax : !hasUsers && !hasMax)
    throw new BadRequest('Bad request: invalid permission delta');
  if (hasUsers && (typeof delta.users !== 'object' || delta.users === null || Array.isArray(delta.users))) {
    throw new BadRequest('Bad request: invalid permission delta');
  }
  const validRoles: readonly string[] = kind === 'org' ? [...BASIC_ROLES, 'members'] : BASIC_ROLES;
  // Merge case-insensitive duplicates: the strongest role wins, the first sorted spelling is kept.
  const users = new Map<string, {email: string; role: Role | null}>();
  for (const email of Object.keys(delta.users ?? {}).sort()) {
    const role = (delta.users as Record<string, unknown>)[email];
    if (role !== null && (typeof role !== 'string' || !validRoles.includes(role)))
      throw new BadRequest(`Invalid user role ${shownValue(role)}`);
    if (role !== null && !isValidEmail(email)) throw new BadRequest('Invalid email address included');
    const norm = email.toLowerCase();
    const prev = users.get(norm);
    const r = role as Role | null;
    users.set(norm, {email: prev?.email ?? email, role: prev ? strongest(prev.role, r) : r});
  }
  if (
    hasMax &&
    delta.maxInheritedRole !== null &&
    !(BASIC_ROLES as readonly unknown[]).includes(delta.maxInheritedRole)
  ) {
    throw new BadRequest(`Invalid maxInheritedRole ${shownValue(delta.maxInheritedRole)}`);
  }
  if (users.has(EVERYONE_EMAIL) && users.has(ANON_EMAIL)) {
    throw new BadRequest('this user cannot share with everyone and anonymous');
  }
  return {users, ...(hasMax ? {maxInheritedRole: delta.maxInheritedRole as BasicRole | null} : {})};
}
